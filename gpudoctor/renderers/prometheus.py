"""The node_exporter textfile-collector format (Prometheus text exposition format 0.0.4).

Metric families, each with its `# HELP` and `# TYPE` lines:

- `gpudoctor_check_status{id,slug,layer,status}`: one series per check and status (pass,
  warn, note, fail, skip), 1 for the status the check has, 0 for the others, so an alert is
  `gpudoctor_check_status{status="fail"} == 1` and a dashboard can count by status;
- `gpudoctor_checks{status}`: how many checks have each status;
- `gpudoctor_info{gpudoctor_version,driver_version,driver_cuda,torch_version,torch_cuda,
  cudnn_version}` = 1: the versions as labels (an unknown one is "");
- `gpudoctor_gpu_info{index,name,uuid,compute_capability}` = 1, and
  `gpudoctor_gpu_memory_total_bytes{index}`: one per GPU the driver shows;
- `gpudoctor_last_run_timestamp_seconds`: when the facts were gathered (Unix time), so a
  stale file (a cron job that stopped) can be alerted on.

Label values are escaped as the format asks (`\\`, `\"`, `\n`); other control characters are
shown escaped (`\\x1b`) like everywhere else.
"""

from __future__ import annotations

from datetime import datetime

from gpudoctor import __version__
from gpudoctor import views as V
from gpudoctor.model import GpuFacts, NvmlFacts, Report, Result, TorchFacts
from gpudoctor.policy import Verdict, verdict
from gpudoctor.renderers.interface import clean
from gpudoctor.versions import format_cudnn_version

STATUSES = ("pass", "warn", "note", "fail", "skip")


def label_value(text: str) -> str:
    """A label value escaped for the text format: backslash, double quote, line feed."""
    return (clean(text, newlines=True).replace("\\", "\\\\").replace('"', '\\"')
            .replace("\n", "\\n"))


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{label_value(v)}"' for k, v in labels.items()) + "}"


def status_of(r: Result) -> str:
    """pass, warn, note (a WARN of an INFO check), fail or skip."""
    return _WORDS[verdict(r)]


_WORDS = {Verdict.PASS: "pass", Verdict.NOTE: "note", Verdict.WARNING: "warn",
          Verdict.FAILURE: "fail", Verdict.SKIP: "skip"}


def _family(name: str, help_text: str, samples: list[str]) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} gauge", *samples]


def _versions(report: Report) -> dict[str, str]:
    env = report.environment
    cuda = V.reported_driver_cuda(env)
    rt = V.torch_runtime(env)
    cudnn = (format_cudnn_version(rt.cudnn_version)
             if rt is not None and isinstance(rt.cudnn_version, int) else "")
    return {
        "gpudoctor_version": __version__,
        "driver_version": V.driver_version(env) or "",
        "driver_cuda": cuda[0] if cuda else "",
        "torch_version": (V.torch_version(env) or "") if isinstance(env.torch, TorchFacts)
        else "",
        "torch_cuda": V.torch_cuda(env) or "",
        "cudnn_version": cudnn,
    }


def _timestamp(created: str) -> str:
    try:
        return f"{datetime.fromisoformat(created).timestamp():.0f}"
    except ValueError:
        return "NaN"  # a snapshot with an unreadable time: the sample stays well-formed


class PrometheusRenderer:
    """The report as a node_exporter textfile (`-o /var/lib/node_exporter/gpudoctor.prom`)."""

    def render(self, report: Report) -> str:
        """Every metric family, in a fixed order, ending in a newline."""
        env = report.environment
        checks = []
        for r in report.results:
            status = status_of(r)
            checks += [f"gpudoctor_check_status"
                       f"{_labels(id=r.check_id, slug=r.slug, layer=r.layer.value, status=s)} "
                       f"{int(s == status)}" for s in STATUSES]
        counts = {s: sum(1 for r in report.results if status_of(r) == s) for s in STATUSES}
        gpus = [g for g in env.nvml.gpus if isinstance(g, GpuFacts)] if isinstance(
            env.nvml, NvmlFacts) else []
        info = [f"gpudoctor_gpu_info{_gpu_labels(g)} 1" for g in gpus]
        memory = [f"gpudoctor_gpu_memory_total_bytes{_labels(index=str(g.index))} "
                  f"{g.memory_total}" for g in gpus if isinstance(g.memory_total, int)]
        lines = [
            *_family("gpudoctor_check_status", "Status of each gpudoctor check: 1 for the "
                     "status it has (pass, warn, note, fail, skip), 0 for the others.", checks),
            *_family("gpudoctor_checks", "Number of gpudoctor checks with each status.",
                     [f"gpudoctor_checks{_labels(status=s)} {n}" for s, n in counts.items()]),
            *_family("gpudoctor_info", "Versions of the NVIDIA stack gpudoctor found "
                     "(empty when unknown).", [f"gpudoctor_info{_labels(**_versions(report))} 1"]),
            *_family("gpudoctor_gpu_info", "Each GPU the NVIDIA driver shows.", info),
            *_family("gpudoctor_gpu_memory_total_bytes", "Total memory of each GPU, in bytes.",
                     memory),
            *_family("gpudoctor_last_run_timestamp_seconds", "When gpudoctor gathered the "
                     "facts, in seconds since the Unix epoch.",
                     [f"gpudoctor_last_run_timestamp_seconds {_timestamp(env.created)}"]),
        ]
        return "\n".join(lines) + "\n"


def _gpu_labels(g: GpuFacts) -> str:
    def text(value: object) -> str:
        return value if isinstance(value, str) else ""

    return _labels(index=str(g.index), name=g.name, uuid=text(g.uuid),
                   compute_capability=text(g.compute_capability))


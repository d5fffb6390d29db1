"""Readers of pasted reports: the same `Environment` the probes fill, from text someone pasted.

`reports.read.read_inputs(items, tables)` is the one entry every command reads a saved
snapshot or a pasted report through: `read_reports` and the rules after it (`possible`,
`credible_driver_cuda`).

`read_reports([(name, text), ...])` accepts, detected from the content: a gpudoctor snapshot or
`check --format json` report; the output of `python -m torch.utils.collect_env` (its top may
be cut off); `nvidia-smi` (every banner layout), `nvidia-smi -L`, `nvidia-smi -q` and
`nvidia-smi -q -x`, or nvidia-smi's error instead of them (a driver's, or one GPU's); the
environment reports of detectron2, OpenMMLab, SGLang, Lightning and nnDetection, and `nvcc
--version`
(`gpudoctor.reports.env_tools`); a Markdown list of versions (PyTorch's issue template,
`transformers-cli env`, "- **PyTorch:** 2.9.1+cu130") where no block states torch
(`gpudoctor.reports.env_list`), else torch's own prints of `torch.__version__`,
`torch.version.cuda` and `torch.cuda.is_available()` (`gpudoctor.reports.torch_prints`); and
any text that contains them — a GitHub issue body, a log
(`gpudoctor.reports.issue_body`). torch's own messages quoted anywhere (its arch warnings, "driver
too old (found version 11040)", "Found no NVIDIA driver", its CUDA initialisation errors) are
read too (`gpudoctor.reports.torch_messages`), and so are the kernel module's messages that
have one meaning (a GPU fallen off the bus, "NVRM: API mismatch", Secure Boot refusing the
module: `gpudoctor.reports.kernel_log`), and what `ls -l /dev/nvidia*` and `lspci -k` (or
nouveau's kernel lines) say of the device nodes and the driver bound to each GPU
(`gpudoctor.reports.system`), and the toolkit a build log ran nvcc from, by its release
folder (`gpudoctor.reports.build_log`): a paste with only those is a partial report. The
blocks of every input merge into one Environment: an issue's collect_env gives torch's side and
its nvidia-smi table the driver's. A fact no block states is
`Unavailable(Reason.NOT_REPORTED)`, never a guess, and `Environment.sources` names the blocks
read ("collect_env in issue-123.md").

The package itself imports nothing: a check that needs one message's grammar
(`reports.torch_messages`) loads that module alone, not every reader (`gpudoctor check`'s
start-up, issue 22 item 6).
"""

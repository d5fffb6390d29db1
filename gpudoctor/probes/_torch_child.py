"""Child-process half of the PyTorch probe. Runs under the interpreter being diagnosed.

It is executed as source (`python -c`), not imported: it must not need gpudoctor, and it must
run on old interpreters (3.8+), so it uses the standard library only and no new syntax.

Protocol: one JSON line per stage on stdout, each prefixed with `GPUDOCTOR:`:
`static` (before torch is imported, so a crash or hang still leaves it) then `runtime`.
"""

import json
import os
import re
import sys

PREFIX = "GPUDOCTOR:"
LIB_PATTERN = re.compile(r"/(libcudart|libcudnn|libcublas|libcuda\.so|libnvrtc|libnccl)[^/]*$")


def emit(kind, payload):
    sys.stdout.write(PREFIX + json.dumps({"kind": kind, "data": payload}) + "\n")
    sys.stdout.flush()


def static_facts():
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return {"error": "importlib.metadata is not available in Python %s" % sys.version[:5]}
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError) as e:
        spec = None
        find_error = repr(e)
    else:
        find_error = None
    try:
        dist = metadata.distribution("torch")
    except metadata.PackageNotFoundError:
        dist = None
    if spec is None and dist is None:
        return {"missing": True, "error": find_error}
    location = ""
    version_py = []
    if spec is not None and spec.origin:
        location = os.path.dirname(spec.origin)
        version_py = read_version_py(os.path.join(location, "version.py"))
    version = None
    # the metadata describes the torch that is imported only when it sits in the same place: a
    # torch directory on PYTHONPATH shadows the installed one and has a version of its own
    if dist is not None and (not location or same_file(dist.locate_file("torch"), location)):
        version = dist.version
    if version is None:
        version = dict(version_py).get("__version__", "unknown (no package metadata)")
    return {
        "version": version,
        "location": location,
        "version_py": version_py,
        "nvidia_wheels": sorted(cuda_wheels()),
        "distributions": installed_torches(metadata, location),
        "cwd": working_directory(),
        "companions": companions(metadata),
    }


COMPANIONS = ("torchvision", "torchaudio")


def companions(metadata):
    """(name, version) of torchvision / torchaudio, from their distribution metadata: an
    install line for torch must pin them to the matching release. Never imported."""
    found = []
    for name in COMPANIONS:
        try:
            version = metadata.version(name)
        except Exception:  # noqa: BLE001 - not installed, or unreadable metadata: left out
            continue
        if version:
            found.append([name, str(version)])
    return found


def working_directory():
    try:
        return os.getcwd()
    except OSError:  # the working directory was deleted
        return None


def installed_torches(metadata, location):
    """[version, torch package directory] of every installed torch distribution on sys.path,
    in path order. A directory that is the imported one is written as `location`, so the two
    compare as strings; an editable install's directory comes from its direct_url.json."""
    found = []
    seen = set()
    try:
        dists = list(metadata.distributions(name="torch"))
    except Exception:  # noqa: BLE001 - a broken dist-info is not worth a failed probe
        return found
    for dist in dists:
        folder = str(dist.locate_file("torch"))
        editable = editable_dir(dist)
        if editable:
            folder = os.path.join(editable, "torch")
        key = os.path.realpath(folder)
        if key in seen:
            continue
        seen.add(key)
        if location and same_file(folder, location):
            folder = location
        found.append([str(dist.version), folder])
    return found


def editable_dir(dist):
    """The source directory of an editable install (PEP 610 direct_url.json), else None."""
    try:
        text = dist.read_text("direct_url.json")
        data = json.loads(text) if text else {}
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    url, info = data.get("url", ""), data.get("dir_info", {})
    if isinstance(info, dict) and info.get("editable") and url.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return unquote(urlparse(url).path)
    return None


WHEEL_DIR = re.compile(r"^(nvidia[_-][\w.]+?|triton|cuda[_-]toolkit)-(\d[^-]*)\.dist-info$", re.I)


def cuda_wheels():
    """(name, version) of the nvidia-* / triton / cuda-toolkit wheels on sys.path.

    Read from the dist-info folder names (`nvidia_cudnn_cu12-9.1.0.70.dist-info`): listing a
    few directories costs a millisecond, where importlib.metadata.distributions() reads every
    installed package's METADATA.
    """
    found = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            m = WHEEL_DIR.match(name)
            if m:
                found.add((m.group(1).lower().replace("_", "-"), m.group(2)))
    return found


def same_file(a, b):
    try:
        return os.path.samefile(str(a), str(b))
    except OSError:
        return False


def read_version_py(path):
    pairs = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return pairs
    for m in re.finditer(r"^(\w+)\s*(?::\s*[^=]+)?=\s*(.+)$", text, re.MULTILINE):
        name = m.group(1)
        if name.startswith("__") and name != "__version__":
            continue
        pairs.append([name, m.group(2).strip().strip("'\"")])
    return pairs


def mapped_libraries():
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if LIB_PATTERN.search(path) and path not in found:
                        found.append(path)
    except OSError:
        pass
    return sorted(found)


def runtime_facts(location):
    import torch

    file = getattr(torch, "__file__", None)
    if file and location and same_file(os.path.dirname(file), location):
        file = os.path.join(location, os.path.basename(file))

    cuda = getattr(torch.version, "cuda", None)
    hip = getattr(torch.version, "hip", None)
    try:
        cudnn_version = torch.backends.cudnn.version()
    except Exception as e:  # noqa: BLE001 - reported, not raised  # a broken libcudnn raises here
        cudnn_version = None
        sys.stderr.write("cudnn.version(): %r\n" % (e,))
    available = bool(torch.cuda.is_available())
    init_error = None
    if not available:
        try:
            torch.cuda.init()
        except Exception as e:  # noqa: BLE001 - reported, not raised
            init_error = "%s: %s" % (type(e).__name__, e)
    count = torch.cuda.device_count() if available else 0
    try:
        arch_list = list(torch.cuda.get_arch_list())
    except Exception:  # noqa: BLE001 - an old torch without it
        arch_list = []
    devices = []
    for i in range(count):
        p = torch.cuda.get_device_properties(i)
        devices.append(
            {
                "index": i,
                "name": p.name,
                "capability": "%d.%d" % (p.major, p.minor),
                "total_memory": int(p.total_memory),
            }
        )
    conv = "not-run: CUDA is not available"
    if available:
        try:
            x = torch.randn(1, 3, 16, 16, device="cuda")
            w = torch.randn(4, 3, 3, 3, device="cuda")
            torch.nn.functional.conv2d(x, w).sum().item()
            torch.cuda.synchronize()
            conv = "ok"
        except Exception as e:  # noqa: BLE001 - reported, not raised
            conv = "error: %s: %s" % (type(e).__name__, e)
    return {
        "version": str(torch.__version__),
        "cuda": cuda,
        "hip": hip,
        "cudnn_version": cudnn_version,
        "cuda_available": available,
        "cuda_init_error": init_error,
        "device_count": count,
        "arch_list": arch_list,
        "devices": devices,
        "cudnn_conv": conv,
        "mapped_libraries": mapped_libraries(),
        "file": file,
    }


def main():
    static = static_facts()
    # the interpreter's own version, torch or not: the install line needs wheels for it
    static["python_version"] = "%d.%d.%d" % tuple(sys.version_info[:3])
    emit("static", static)
    if static.get("missing"):
        return
    emit("runtime", runtime_facts(static.get("location")))


main()

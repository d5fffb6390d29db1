"""torch's own import failing, as a pasted traceback shows it: `import torch` raised while
torch/__init__.py loaded its libraries, so nothing of torch ran.

torch/__init__.py loads its shared libraries first (`_load_global_deps`: libtorch_global_deps
and, in the pip wheels, the nvidia-* libraries beside it) and then its extension (`from
torch._C import *`, on Windows after adding torch\\lib to the DLL search path). A traceback
with a frame in torch/__init__.py that ends in the loader's error is that failure:

    File ".../site-packages/torch/__init__.py", line 229, in <module>
      from torch._C import *  # noqa: F403
    ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory

and likewise "undefined symbol: __nvJitLinkComplete_12_4, version libnvJitLink.so.12",
"symbol cublasLtGetStatusString, version libcublasLt.so.11 not defined in file
libcublasLt.so.11 with link time reference", "[WinError 126] … Error loading
"…\\torch\\lib\\c10.dll" or one of its dependencies", "DLL load failed while importing _C".
IPython prints the frame as `File ~/…/torch/__init__.py:168, in _load_global_deps()`.

The loader's error alone is this too where it names a library in torch's own lib directory
(".../site-packages/torch/lib/../../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol").

Read: torch did not import, with the error's last line (its reason, for GD401's message and
fix) and the traceback's tail; nothing else of torch. It stands in for collect_env's
"PyTorch version: N/A", which says only that the import failed. A traceback of an extension
(a frame in its own package, not torch's __init__) is not this.
"""

from __future__ import annotations

import re

from gpudoctor.model import Reason, TorchFacts, Unavailable
from gpudoctor.reports.interface import Partial, not_reported

LONGEST = 200_000  # a paste longer than this is searched in its first part only
# a frame in torch's own __init__.py, as Python and as IPython print it
# (a paste may begin inside the frame's line: "venv/…/torch/__init__.py", line 427, in <module>")
FRAME = re.compile(r"""(?:[/\\]torch[/\\]__init__\.py", line \d{1,5}"""
                   r"""|File [^\n]{0,400}[/\\]torch[/\\]__init__\.py:\d{1,5}, in )""")
# the loader's error that ends it: a library not found, a symbol it lacks, Windows' DLL errors
ERROR = re.compile(
    r"^[ \t]{0,8}(?:ImportError|OSError|FileNotFoundError): (?P<why>[^\n]{0,600}?(?:"
    r"cannot open shared object file|undefined symbol: |with link time reference"
    r"|DLL load failed|\[WinError (?:126|127|193|1114)\]|Error loading \"[^\"\n]{0,300}"
    r"[/\\]torch[/\\]lib[/\\])[^\n]{0,600})$", re.MULTILINE)
SPAN = 3000  # the error follows the frame within this many characters
# a path in torch's lib directory, or the pip wheels' nvidia/ libraries beside it
OWN_LIB = re.compile(r"site-packages[/\\]torch[/\\]lib[/\\]")


def parse(text: str) -> Partial | None:
    """torch's import failure in `text`; None where no traceback shows one."""
    text = text[:LONGEST].replace("\r\n", "\n")
    hit = _failure(text)
    if hit is None:
        return None
    start, error = hit
    why = " ".join(error["why"].split())
    tail = text[max(0, start - 200):error.end()].strip()
    return Partial(kind="torch's import error", rank=1, torch=TorchFacts(
        python=not_reported("the interpreter's path is not in the report"),
        static=not_reported("torch's package metadata is not in the report"),
        runtime=Unavailable(Reason.ERROR, f"import torch failed: {why}", tail[-1500:]),
        seconds=not_reported("no probe ran: the facts are torch's import error"),
    ))


def _failure(text: str) -> tuple[int, re.Match[str]] | None:
    """(where it starts, the loader's error) of the first import failure: after a frame in
    torch/__init__.py, else without its traceback for a library in torch's own lib directory."""
    for frame in FRAME.finditer(text):
        if (error := ERROR.search(text, frame.end(), frame.end() + SPAN)) is not None:
            return frame.start(), error
    return next(((e.start(), e) for e in ERROR.finditer(text) if OWN_LIB.search(e["why"])),
                None)

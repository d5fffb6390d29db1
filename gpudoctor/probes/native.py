"""Read a version integer from a native library in a child process.

Loading libcuda, libcudart or libcudnn can abort the process that loads it (a cuDNN 8 with no
libcublas on the loader path does), so the `dlopen` happens in a short-lived child of our own
interpreter, never in gpudoctor's process.

Mapping: the library cannot be loaded → NOT_INSTALLED (with the loader's message); the symbol
is missing → NOT_SUPPORTED; the call returns an error status → ERROR; the child dies from a
signal → CRASHED; it runs past the timeout → TIMEOUT.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping

from gpudoctor import childproc
from gpudoctor.model import Reason, Unavailable

# The child writes its one JSON line by hand: `import json` (re, enum, functools) is ~11 ms
# of a ~20 ms child, and there are three of these per `check`. `_json`'s encoder is the one
# `json.dumps` uses, so the line is the one `json.dumps` would write, byte for byte.
_CHILD = r"""
import ctypes, sys
try:
    from _json import encode_basestring_ascii as text
except ImportError:  # an interpreter without json's C half
    from json import dumps as text
lib_name, symbol, style = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    lib = ctypes.CDLL(lib_name)
except OSError as e:
    print('{"load_error": %s}' % text(str(e))); sys.exit(0)
try:
    fn = getattr(lib, symbol)
except AttributeError:
    print('{"no_symbol": %s}' % text(symbol)); sys.exit(0)
if style == "size_t":
    fn.restype = ctypes.c_size_t
    print('{"value": %d}' % int(fn()))
else:
    out = ctypes.c_int(0)
    status = fn(ctypes.byref(out))
    print('{"value": %d, "status": %d}' % (out.value, status))
"""


def read_version(
    library: str,
    symbol: str,
    *,
    returns_size_t: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = 10.0,
) -> int | Unavailable:
    """Call `symbol` of `library` (a path or a SONAME) and return the integer it gives.

    `returns_size_t`: the function returns the version (`cudnnGetVersion`); otherwise it takes
    an `int*` and returns a status (`cuDriverGetVersion`, `cudaRuntimeGetVersion`).
    """
    argv = [sys.executable, "-I", "-S", "-c", _CHILD, library, symbol,
            "size_t" if returns_size_t else "intptr"]
    try:
        result = childproc.run(argv, timeout, env)
    except childproc.ChildTimeout:
        return Unavailable(Reason.TIMEOUT, f"{library} did not answer within {timeout:g} s "
                           f"({symbol} or loading it hung)")
    if result.returncode < 0:
        return Unavailable(
            Reason.CRASHED,
            f"loading {library} crashed the process that loaded it (signal {-result.returncode})",
            detail=result.stderr.strip()[-2000:],
        )
    try:
        data = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Unavailable(
            Reason.ERROR, f"reading {symbol} from {library} failed",
            detail=result.stderr.strip()[-2000:],
        )
    if "load_error" in data:
        return Unavailable(Reason.NOT_INSTALLED, f"{library} cannot be loaded",
                           detail=data["load_error"])
    if "no_symbol" in data:
        return Unavailable(Reason.NOT_SUPPORTED, f"{library} has no {symbol}")
    if data.get("status", 0) != 0:
        return Unavailable(Reason.ERROR, f"{symbol} returned error {data['status']}")
    return int(data["value"])


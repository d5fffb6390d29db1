"""The one child-process runner: every process gpudoctor starts goes through `start` / `run`.

A child gets an argv list (never a shell) and a session of its own, so its own process group
(pgid = its pid): a terminal's Ctrl-C reaches gpudoctor only, and gpudoctor kills the whole
group, grandchildren included. It gets a deadline: past it the group is killed (SIGKILL) and
`ChildTimeout` carries what the child printed until then. Its output is captured up to `limit`
bytes per stream: the first and last halves are kept, the middle is dropped with a marker line
and a note in `Completed.notes`, and the pipes are read to their end, so a child that floods
them is never blocked and memory stays bounded. Optional: stdin text, and a callback that gets
each stdout line as it arrives (the smoke test's progress), in the thread that waits. A child
is in the table of live children until reaped; when it exits, what is left of its group is
killed too: nothing gpudoctor starts outlives the call that started it.

Signals: `install_signal_handlers()` (the entry point calls it first thing) makes SIGINT,
SIGTERM and SIGHUP kill every live group at once and raise `Interrupted`, a KeyboardInterrupt,
in the main thread, so cleanup (an install's rollback) still runs; `settle()` then gives the
entry point the exit status (128 + the signal: 130, 143, 129) and the line to print.

A leaf module: the standard library only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType

from gpudoctor.childargv import by_stdin, feed_now

DEFAULT_LIMIT = 4 * 2**20  # bytes kept of each stream
_CHUNK = 65536
_POLL = 0.1  # seconds between checks that the child itself is still there
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

LineCallback = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Completed:
    """A child that ran to its end (or, inside `ChildTimeout`, until it was killed)."""

    argv: tuple[str, ...]
    returncode: int  # negative: killed by that signal (-9 after a deadline or an interrupt)
    stdout: str
    stderr: str
    notes: tuple[str, ...] = ()  # "stdout cut: 91.4 MiB of 95.4 MiB dropped (limit 4 MiB)"
    seconds: float = 0.0


class ChildTimeout(Exception):
    """A child ran past its deadline; its process group was killed."""

    def __init__(self, result: Completed, timeout: float) -> None:
        super().__init__(f"{result.argv[0]} did not finish within {timeout:g} s")
        self.result = result  # what it printed before it was killed
        self.timeout = timeout


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived; every live child's group has been killed.

    `message` is the line the entry point prints after "gpudoctor: "; `exit_code` its exit
    status (default 128 + the signal). Code that must say more (an install that had already
    committed) raises `interrupt_with(...)` instead. The one raised last is recorded: Typer
    turns a KeyboardInterrupt into a bare exit code, and `settle()` reads the record.
    """

    def __init__(self, signum: int, message: str | None = None,
                 exit_code: int | None = None) -> None:
        self.signum = signum
        self.message = message or ("interrupted" if signum == signal.SIGINT
                                   else f"interrupted by {signal.Signals(signum).name}")
        self.exit_code = exit_code if exit_code is not None else 128 + signum
        super().__init__(self.message)


class _State:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.live: dict[int, Child] = {}
        self.closing = False  # after a signal: a child started now is killed at once
        self.main_spawning = False  # the main thread is between Popen and registration
        self.exiting = False  # the command is done: a signal now just ends the process
        self.latest: Interrupted | None = None


_STATE = _State()


class _Capture:
    """One stream: the first and the last `limit // 2` bytes, and how much was dropped."""

    def __init__(self, limit: int) -> None:
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail: deque[bytes] = deque()
        self.tail_len = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.half - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data)
        self.tail_len += len(data)
        while self.tail and self.tail_len - len(self.tail[0]) >= self.half:
            self.tail_len -= len(self.tail.popleft())

    def text(self) -> tuple[str, str | None]:
        """The kept text, and a note when the middle was dropped."""
        tail = b"".join(self.tail)[-self.half:] if self.tail else b""
        dropped = self.total - len(self.head) - len(tail)
        if dropped <= 0:
            return (bytes(self.head) + tail).decode("utf-8", "replace"), None
        note = (f"cut: {_size(dropped)} of {_size(self.total)} dropped from the middle "
                f"(limit {_size(2 * self.half)})")
        marker = f"\n[gpudoctor: output {note}]\n".encode()
        return (bytes(self.head) + marker + tail).decode("utf-8", "replace"), note


class _Lines:
    """Splits a stream into lines for a callback; a line longer than `limit` is dropped."""

    def __init__(self, callback: LineCallback, limit: int) -> None:
        self.callback = callback
        self.limit = limit
        self.pending = bytearray()
        self.skipping = False

    def add(self, data: bytes) -> None:
        self.pending += data
        while (end := self.pending.find(b"\n")) >= 0:
            line = bytes(self.pending[:end])
            del self.pending[:end + 1]
            if self.skipping or len(line) > self.limit:
                self.skipping = False
                continue
            self.callback(line.decode("utf-8", "replace").rstrip("\r"))
        if len(self.pending) > self.limit:
            self.pending.clear()
            self.skipping = True

    def close(self) -> None:
        if self.pending and not self.skipping:
            self.callback(bytes(self.pending).decode("utf-8", "replace").rstrip("\r"))
        self.pending.clear()


class Child:
    """A started child process in its own process group; `finish` waits for it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None,
                 stdin: str | None, limit: int, on_line: LineCallback | None) -> None:
        self.argv = tuple(argv)
        self.limit = limit
        self.on_line = on_line
        run, stdin = by_stdin(argv, stdin)  # `-c SOURCE` on stdin, not in `ps` (childargv)
        self._input = stdin.encode("utf-8", "surrogateescape") if stdin is not None else b""
        self._proc = subprocess.Popen(
            run,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            start_new_session=True,
        )
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._stdout, self._stderr = self._proc.stdout, self._proc.stderr
        self.pid = self._proc.pid
        self.started = time.monotonic()
        self._reaped = False
        if self._proc.stdin is not None:  # now: a child started early runs before `finish`
            self._input = feed_now(self._proc.stdin, self._input)

    @property
    def elapsed(self) -> float:
        """Seconds since it was started."""
        return time.monotonic() - self.started

    def finish(self, timeout: float) -> Completed:
        """Wait up to `timeout` s for the child; then kill its group and raise `ChildTimeout`.

        Whatever interrupts the wait (Ctrl-C) kills the group before it propagates.
        """
        deadline = time.monotonic() + timeout
        out, err = _Capture(self.limit), _Capture(self.limit)
        lines = _Lines(self.on_line, self.limit) if self.on_line else None
        try:
            timed_out = self._pump(deadline, out, err, lines)
            if timed_out:
                self.kill()
                self._drain(out, err, lines, time.monotonic() + 1.0)
            self.kill()  # what the child left behind in its group
            self._reap(1.0 if timed_out else max(deadline - time.monotonic(), 1.0))
        except BaseException:
            self.kill()
            self._reap(0.5)
            self._close()
            raise
        self._close()
        if lines is not None:
            lines.close()
        result = self._result(out, err)
        raise_if_interrupted()  # killed by a signal whose exception Python swallowed
        if timed_out:
            raise ChildTimeout(result, timeout)
        return result

    def kill(self) -> None:
        """SIGKILL the child's whole process group (nothing happens if it is gone)."""
        if self._reaped:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(OSError):
                self._proc.kill()

    # ---------------------------------------------------------------- internals

    def _pump(self, deadline: float, out: _Capture, err: _Capture,
              lines: _Lines | None) -> bool:
        """Read both pipes (and feed stdin) until they close and the child exits; True when
        the deadline passed first."""
        offset = 0
        with self._selector(out, err, feed=True) as sel:
            while sel.get_map():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                events = sel.select(min(remaining, _POLL))
                if not events:
                    if self._exited():  # a grandchild still holds the pipes: stop reading
                        break
                    continue
                for key, _ in events:
                    if key.fileobj is self._proc.stdin:
                        offset = self._write(sel, offset)
                    else:
                        self._read(sel, key, lines)
        return not self._wait_exit(deadline)

    def _selector(self, out: _Capture, err: _Capture, feed: bool) -> selectors.BaseSelector:
        sel = selectors.DefaultSelector()
        sel.register(self._stdout, selectors.EVENT_READ, out)
        sel.register(self._stderr, selectors.EVENT_READ, err)
        if feed and self._proc.stdin is not None and not self._proc.stdin.closed:
            if self._input:
                sel.register(self._proc.stdin, selectors.EVENT_WRITE)
            else:
                self._proc.stdin.close()
        return sel

    def _write(self, sel: selectors.BaseSelector, offset: int) -> int:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            offset += os.write(stdin.fileno(), self._input[offset:offset + select.PIPE_BUF])
        except BrokenPipeError:
            offset = len(self._input)  # the child stopped reading: that is its business
        if offset >= len(self._input):
            sel.unregister(stdin)
            stdin.close()
        return offset

    def _read(self, sel: selectors.BaseSelector, key: selectors.SelectorKey,
              lines: _Lines | None) -> None:
        data = os.read(key.fd, _CHUNK)
        if not data:
            sel.unregister(key.fileobj)
            return
        key.data.add(data)
        if lines is not None and key.fileobj is self._stdout:
            lines.add(data)

    def _drain(self, out: _Capture, err: _Capture, lines: _Lines | None,
               until: float) -> None:
        """After a kill: what is still in the pipes, for at most until - now seconds."""
        with self._selector(out, err, feed=False) as sel:
            while sel.get_map() and (remaining := until - time.monotonic()) > 0:
                for key, _ in sel.select(min(remaining, _POLL)):
                    self._read(sel, key, lines)

    def _exited(self) -> bool:
        """Whether the child has exited, without reaping it (its pid, and so its process
        group id, stay reserved until `_reap`: killpg cannot hit a stranger)."""
        if self._reaped:
            return True
        try:
            return os.waitid(os.P_PID, self.pid,
                             os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def _wait_exit(self, deadline: float) -> bool:
        delay = 0.0005
        while not self._exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.05)
        return True

    def _reap(self, within: float) -> None:
        """Collect the exit status; a child stuck in the kernel (state D) may outlive a
        SIGKILL for a while: it is then left for the system to reap."""
        if self._reaped or not self._wait_exit(time.monotonic() + within):
            return
        self._proc.wait()
        self._reaped = True
        with _STATE.lock:
            _STATE.live.pop(self.pid, None)

    def _close(self) -> None:
        for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if f is not None:
                with contextlib.suppress(OSError):
                    f.close()

    def _result(self, out: _Capture, err: _Capture) -> Completed:
        stdout, out_note = out.text()
        stderr, err_note = err.text()
        notes = tuple(f"{name} {note}" for name, note in (("stdout", out_note),
                                                           ("stderr", err_note)) if note)
        code = self._proc.returncode if self._proc.returncode is not None else -signal.SIGKILL
        return Completed(self.argv, code, stdout, stderr, notes, round(self.elapsed, 3))


def start(
    argv: Sequence[str],
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    on_line: LineCallback | None = None,
) -> Child:
    """Start argv in its own process group and register it; `Child.finish` collects it.

    Raises `FileNotFoundError` / `PermissionError` (an `OSError`) when argv[0] cannot be run.
    """
    main = threading.current_thread() is threading.main_thread()
    if main:
        _STATE.main_spawning = True
    try:
        child = Child(argv, env, stdin, limit, on_line)
        with _STATE.lock:
            _STATE.live[child.pid] = child
            if _STATE.closing:
                child.kill()
    finally:
        if main:
            _STATE.main_spawning = False
    raise_if_interrupted()  # a signal the handler deferred until the child was registered
    return child


def run(
    argv: Sequence[str],
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    *,
    limit: int = DEFAULT_LIMIT,
    on_line: LineCallback | None = None,
) -> Completed:
    """Run argv to its end: `start`, then `finish(timeout)` (which raises `ChildTimeout`)."""
    return start(argv, env, stdin, limit=limit, on_line=on_line).finish(timeout)


def live() -> tuple[int, ...]:
    """The pids (= process group ids) of the children started and not yet reaped."""
    with _STATE.lock:
        return tuple(_STATE.live)


def stop_all(reap_within: float = 0.0) -> None:
    """Kill every live child's process group; from now on a new child is killed at once.
    With `reap_within`, also wait that long for them to be reaped."""
    with _STATE.lock:
        _STATE.closing = True
        children = list(_STATE.live.values())
    for child in children:
        child.kill()
    if reap_within <= 0:  # the signal handler: reaping could wait on a lock it interrupted
        return
    until = time.monotonic() + reap_within
    for child in children:
        child._reap(max(until - time.monotonic(), 0.0))


def install_signal_handlers() -> None:
    """SIGINT, SIGTERM and SIGHUP: kill every live group, then raise `Interrupted` in the main
    thread. Call it from the main thread (elsewhere it does nothing), before any child starts."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    stop_all()
    if _STATE.exiting:
        os._exit(128 + signum)
    exc = signal_received(signum)
    # raising now would be lost (Python prints "Exception ignored" and carries on) or would
    # orphan a child: the next wait raises it instead (`raise_if_interrupted`)
    if not _STATE.main_spawning and not _swallowed_at(frame):
        raise exc


def _swallowed_at(frame: FrameType | None) -> bool:
    """Whether an exception raised at `frame` would be swallowed: inside a finalizer
    (`__del__`) or importlib's module-lock weakref callback."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or (code.co_name == "cb"
                                         and "importlib" in code.co_filename):
            return True
        frame = frame.f_back
    return False


def finishing() -> None:
    """The command's output is complete: from now on a signal kills the children and ends
    the process at once with 128 + the signal (nothing is left to unwind)."""
    _STATE.exiting = True


def signal_received(signum: int) -> Interrupted:
    """Record that `signum` arrived (the handler does; so does an entry point whose own early
    handler caught it) and return the exception to raise."""
    return _record(Interrupted(signum))


def raise_if_interrupted() -> None:
    """In the main thread, raise the recorded interruption again. Python swallows an
    exception raised where it cannot propagate (a weakref callback, `__del__`), so an
    interrupt could be lost; the runner and `probes.collect` call this after waiting."""
    if _STATE.latest is not None and threading.current_thread() is threading.main_thread():
        raise _STATE.latest


def _record(exc: Interrupted) -> Interrupted:
    _STATE.latest = exc
    return exc


def interrupt_with(cause: KeyboardInterrupt, message: str, exit_code: int | None = None
                   ) -> Interrupted:
    """The interruption `cause`, retold: what the entry point prints (after "gpudoctor: ") and
    exits with. `raise interrupt_with(e, "…") from e`."""
    signum = cause.signum if isinstance(cause, Interrupted) else signal.SIGINT
    return _record(Interrupted(signum, message, exit_code))


def settle(exc: BaseException | None = None) -> tuple[int, str]:
    """After an interrupt: ignore further signals, kill and reap every live child, and return
    the exit status and the message for the entry point to print and exit with.

    The latest `Interrupted` decides (see its docstring); a bare KeyboardInterrupt (no handler
    installed) is Ctrl-C: 130, "interrupted".
    """
    if threading.current_thread() is threading.main_thread():
        for signum in SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
    stop_all(reap_within=0.5)
    while _STATE.latest is None and exc is not None:  # found in Click's Abort, say
        if isinstance(exc, Interrupted):
            _STATE.latest = exc
        exc = exc.__cause__ or exc.__context__
    found = _STATE.latest or Interrupted(signal.SIGINT)
    return found.exit_code, found.message


def interrupted() -> Interrupted | None:
    """The latest interruption, if any arrived."""
    return _STATE.latest


def _size(n: int) -> str:
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n} bytes"


atexit.register(stop_all)

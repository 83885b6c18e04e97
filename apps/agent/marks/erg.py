"""erg — phase marks for erg's energy measurements.

A workload says where its phases begin and end, and when a step is done; erg then reports the
energy of each phase and per step. Each mark is ONE line appended, in one ``os.write`` with
O_APPEND, to ``$ERG_MARKS_DIR/<hostname>.marks`` on the node (the line format is
packages/spec/src/marks.ts: ``<kind> TAB <name> TAB <wall_ns> TAB <mono_ns> TAB py LF``); the erg
agent on the node tails that file. A mark never makes a network call and costs a few µs.

Outside erg (``ERG_MARKS_DIR`` unset or empty) every call does nothing, so the same training
script runs anywhere. A mark that cannot be written warns once (``RuntimeWarning``) and never
raises into the workload; a bad name (not 1-64 characters of ``A-Z a-z 0-9 _ . : / -``) raises
``ValueError`` at the call, as it is the author's bug. No dependencies; Python 3.6+.

A PyTorch training loop::

    import erg

    @erg.phase("load")
    def load_model():
        ...

    model = load_model()
    for epoch in range(epochs):
        with erg.phase("epoch"):
            for batch in loader:                  # DataLoader workers fork: erg is fork-safe
                with erg.phase("forward"):
                    loss = model(batch).loss
                with erg.phase("backward"):
                    loss.backward()
                with erg.phase("optimizer"):
                    optimizer.step()
                    optimizer.zero_grad()
                erg.step()                        # one `step` mark per batch
        with erg.phase("eval"):
            evaluate(model)

DeepSpeed, where the engine does backward and step::

    for batch in loader:
        with erg.phase("forward"):
            loss = engine(batch)
        with erg.phase("backward"):
            engine.backward(loss)
        with erg.phase("optimizer"):
            engine.step()
        erg.step("micro_batch")

Phases nest and an exception inside ``with erg.phase(...)`` still writes its end mark (the
exception propagates). CUDA runs asynchronously: for a phase to bracket the GPU's work rather
than its launch, synchronise (``torch.cuda.synchronize()``) before it ends, where that matters.
``erg.begin(name)`` / ``erg.end(name)`` mark a phase that does not fit a block.
"""

import os
import re
import threading
import time
import warnings

__all__ = ["phase", "begin", "end", "step", "enabled", "MARKS_DIR_ENV", "DEFAULT_STEP_NAME"]

#: The environment variable erg's job script sets to the folder ``<hostname>.marks`` is in.
MARKS_DIR_ENV = "ERG_MARKS_DIR"
#: The name of a step mark when the workload gives none.
DEFAULT_STEP_NAME = "step"

# packages/spec/src/marks.ts MARK_NAME; re.ASCII so that only ASCII letters and digits match.
_NAME = re.compile(r"[A-Za-z0-9_.:/-]{1,64}", re.ASCII)

try:
    _wall_ns = time.time_ns
    _mono_ns = time.monotonic_ns
except AttributeError:  # Python 3.6

    def _wall_ns():
        return int(time.time() * 1e9)

    def _mono_ns():
        return int(time.monotonic() * 1e9)


# The writer's state (module globals: the fastest lookups on the hot path).
#   _fd: None = not opened yet in this process; -1 = off (ERG_MARKS_DIR unset, or open failed).
_fd = None
_pid = os.getpid()
_warned = False
_open_lock = threading.Lock()
# Python 3.6 has no fork hook: each mark compares os.getpid() (one syscall) instead.
_CHECK_PID = not hasattr(os, "register_at_fork")
# Pre-encoded line heads per name: b"begin\t<name>\t", b"end\t<name>\t", b"step\t<name>\t".
_heads = {}


def enabled():
    """True when marks are written: ``ERG_MARKS_DIR`` is set and not empty (under erg)."""
    return bool(os.environ.get(MARKS_DIR_ENV))


def _heads_of(name):
    """The three pre-encoded line heads of a name, validated once and cached."""
    try:
        heads = _heads.get(name)
    except TypeError:  # unhashable: not a name
        heads = None
    if heads is None:
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise ValueError(
                "erg: bad mark name %r: 1-64 characters of A-Z a-z 0-9 _ . : / -" % (name,)
            )
        raw = name.encode("ascii")
        heads = (b"begin\t" + raw + b"\t", b"end\t" + raw + b"\t", b"step\t" + raw + b"\t")
        _heads[name] = heads
    return heads


def _warn_once(what, err, stacklevel):
    global _warned
    if not _warned:
        _warned = True
        warnings.warn("erg: %s (%s); the workload goes on without them" % (what, err), RuntimeWarning, stacklevel=stacklevel)


def _open():
    """Opens <ERG_MARKS_DIR>/<hostname>.marks for appending; -1 when marks are off. Never raises."""
    global _fd
    with _open_lock:
        if _fd is not None:
            return _fd
        folder = os.environ.get(MARKS_DIR_ENV)
        fd = -1
        if folder:
            path = folder
            try:
                import socket  # only under erg: the same host name as Node's os.hostname()

                path = os.path.join(folder, socket.gethostname() + ".marks")
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
            except Exception as err:  # never into the workload
                _warn_once("cannot open %s for phase marks" % path, err, 5)
                fd = -1
        _fd = fd
        return fd


def _after_fork():
    # In the child: the inherited descriptor would work (O_APPEND), but the child opens its own so
    # that nothing of the parent's state is shared; it is closed here, on the child's side only.
    global _fd, _pid, _warned, _open_lock
    fd = _fd
    _fd = None
    _pid = os.getpid()
    _warned = False
    _open_lock = threading.Lock()  # another thread of the parent may have held it at fork
    if fd is not None and fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


if not _CHECK_PID:
    os.register_at_fork(after_in_child=_after_fork)


def _write(head):
    fd = _fd
    if _CHECK_PID and _pid != os.getpid():
        _after_fork()
        fd = None
    if fd is None:
        fd = _open()
    if fd < 0:
        return
    line = b"%b%d\t%d\tpy\n" % (head, _wall_ns(), _mono_ns())
    try:
        if os.write(fd, line) != len(line):
            raise OSError("short write")
    except Exception as err:  # never into the workload; the next mark tries again
        _warn_once("cannot write phase marks", err, 4)


def begin(name):
    """Marks the beginning of phase ``name`` (end it with ``end(name)``; phases nest)."""
    _write(_heads_of(name)[0])


def end(name):
    """Marks the end of phase ``name``."""
    _write(_heads_of(name)[1])


def step(name=DEFAULT_STEP_NAME):
    """Marks one step (one unit of work: a batch, an iteration) of counter ``name``."""
    _write(_heads_of(name)[2])


class _Phase(object):
    """A phase: ``with`` it, or decorate a function with it. Holds no per-use state (reentrant)."""

    __slots__ = ("name", "_begin", "_end")

    def __init__(self, name):
        self.name = name
        heads = _heads_of(name)
        self._begin = heads[0]
        self._end = heads[1]

    def __enter__(self):
        _write(self._begin)
        return self

    def __exit__(self, exc_type, exc, tb):
        _write(self._end)
        return False  # an exception propagates

    def __call__(self, func):
        import functools
        import inspect

        begin_head, end_head = self._begin, self._end
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def run_coroutine(*args, **kwargs):
                _write(begin_head)
                try:
                    return await func(*args, **kwargs)
                finally:
                    _write(end_head)

            return run_coroutine
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def run_generator(*args, **kwargs):
                _write(begin_head)
                try:
                    return (yield from func(*args, **kwargs))
                finally:
                    _write(end_head)

            return run_generator

        @functools.wraps(func)
        def run(*args, **kwargs):
            _write(begin_head)
            try:
                return func(*args, **kwargs)
            finally:
                _write(end_head)

        return run

    def __repr__(self):
        return "erg.phase(%r)" % (self.name,)


_phases = {}


def phase(name):
    """Phase ``name``, as a context manager (``with erg.phase("forward"): ...``) or a decorator
    (``@erg.phase("optimizer")``): a begin mark on entry, an end mark on exit, exception or not.
    """
    try:
        p = _phases.get(name)
    except TypeError:  # unhashable: _Phase says why
        p = None
    if p is None:
        p = _Phase(name)  # validates the name: ValueError
        _phases[name] = p
    return p

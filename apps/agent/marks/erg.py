"""erg — phase marks for erg's energy measurements.

A workload says where its phases begin and end, and when a step is done; erg then reports the
energy of each phase and per step. Each mark is ONE line appended, in one ``os.write`` with
O_APPEND, to ``$ERG_MARKS_DIR/<hostname>.marks`` on the node (the line format is
packages/spec/src/marks.ts: ``<kind> TAB <name> TAB <wall_ns> TAB <mono_ns> TAB py LF``); the erg
agent on the node tails that file. A mark never makes a network call and costs a few µs.

Outside erg (``ERG_MARKS_DIR`` unset or empty) every call does nothing, so the same training
script runs anywhere. A mark that cannot be written warns once (``RuntimeWarning``) and never
raises into the workload; a bad name (not 1-64 characters of ``A-Z a-z 0-9 _ . : / -``) raises
``ValueError`` at the call, as it is the author's bug. erg keeps at most ``ERG_MAX_PHASE_NAMES``
distinct names a run (256 unless the site changed it; erg's job script exports it): past that
many, marks of new names are not written (a ``RuntimeWarning`` once), as erg would not store
them. Name phases by what they do (``forward``), never by a counter (``step_123``): count steps
with ``erg.step()``. No dependencies; Python 3.6+.

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

The same module reads a campaign's evidence bundle (``erg export CAMPAIGN``), so a notebook starts
from one line::

    b = erg.open_bundle("erg-evidence-<campaign>.tar")   # checks every file's sha256
    b.runs          # one row per run: configuration, repetition, state, time, energy, ...
    b.samples()     # every sample: run, node, sensor, t (Unix ms), v; b.samples(run, node) for one
    b.marks()       # every phase mark; b.results, b.manifest, b.campaign: the JSON as stored

Tables are pandas DataFrames where pandas is installed (``pandas=False``: lists of dicts). The
reader imports nothing until it is called: marks cost what they cost without it.
"""

import os
import re
import threading
import time
import warnings

__all__ = ["phase", "begin", "end", "step", "enabled", "MARKS_DIR_ENV", "DEFAULT_STEP_NAME", "MAX_PHASE_NAMES_ENV", "DEFAULT_MAX_PHASE_NAMES", "open_bundle", "Bundle", "BundleError", "BUNDLE_FORMAT"]

#: The environment variable erg's job script sets to the folder ``<hostname>.marks`` is in.
MARKS_DIR_ENV = "ERG_MARKS_DIR"
#: The name of a step mark when the workload gives none.
DEFAULT_STEP_NAME = "step"
#: The environment variable erg's job script sets to the run's cap on distinct mark names.
MAX_PHASE_NAMES_ENV = "ERG_MAX_PHASE_NAMES"
#: The cap where it is not set: packages/spec/src/marks.ts DEFAULT_MAX_PHASE_NAMES.
DEFAULT_MAX_PHASE_NAMES = 256

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
# At most _max_names() of them: a name past the cap gets _SKIPPED (its marks are not written).
_heads = {}
_SKIPPED = (None, None, None)
_max_names_cached = None
_warned_names = False


def _max_names():
    """The cap on distinct names (ERG_MAX_PHASE_NAMES, else the default), read once."""
    global _max_names_cached
    if _max_names_cached is None:
        try:
            n = int(os.environ.get(MAX_PHASE_NAMES_ENV, ""))
        except ValueError:
            n = 0
        _max_names_cached = n if n > 0 else DEFAULT_MAX_PHASE_NAMES
    return _max_names_cached


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
        if len(_heads) >= _max_names():
            _warn_names_once(name)
            return _SKIPPED
        raw = name.encode("ascii")
        heads = (b"begin\t" + raw + b"\t", b"end\t" + raw + b"\t", b"step\t" + raw + b"\t")
        _heads[name] = heads
    return heads


def _warn_names_once(name):
    global _warned_names
    if not _warned_names:
        _warned_names = True
        warnings.warn(
            "erg: more than %d distinct phase names (%s): marks of %r and of any other new name are not written; "
            "name phases by what they do and count steps with erg.step()" % (_max_names(), MAX_PHASE_NAMES_ENV, name),
            RuntimeWarning,
            stacklevel=4,
        )


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
    if head is None:  # a name past the cap on distinct names
        return
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


# --- Evidence bundles ------------------------------------------------------------------------------
# The layout is packages/evidence/src/layout.ts's (a test holds these names equal to it).

#: The bundle format this reader knows (manifest.json ``format``).
BUNDLE_FORMAT = "erg-evidence/1"
_MANIFEST = "manifest.json"
_CAMPAIGN = "campaign.json"
_SPEC_SUBMITTED = "spec-submitted.txt"
_SPEC_STORED = "spec.json"
_RESULTS = "results.json"
_RUN_FILE = "runs/%s/run.json"
_INPUTS_FILE = "runs/%s/inputs.json"
_ENERGY_FILE = "runs/%s/energy.json"
_MARKS_FILE = "runs/%s/marks.csv.gz"
_SAMPLES_FILE = "runs/%s/samples/%s.csv.gz"
_SAMPLES_PREFIX = "runs/%s/samples/"
# What the runs table takes from run.json and energy.json, in its column order.
_RUN_COLUMNS = ("position", "configurationKey", "repetition", "state", "slurmJobId", "nodeList")
_FIGURE_COLUMNS = ("timeS", "energyJ", "edpJs", "avgPowerW", "method", "coverage")


class BundleError(ValueError):
    """A file that is not an erg evidence bundle, or one whose files do not match its manifest."""


def open_bundle(path, pandas=None, check=True):
    """The evidence bundle at ``path`` (``erg export`` writes one; .tar or .tar.gz).

    ``pandas``: True for DataFrames (pandas must be installed), False for lists of dicts, None
    (default) for DataFrames where pandas can be imported. ``check``: read every file once and
    compare its sha256 with the manifest (``BundleError`` on any difference). The figures are
    rechecked by ``erg verify``, which recomputes them.
    """
    return Bundle(path, pandas=pandas, check=check)


class Bundle(object):
    """An evidence bundle, opened: ``manifest``, ``campaign``, ``spec``, ``spec_submitted``,
    ``results`` (dicts, as stored), ``runs`` and ``configurations`` (tables), ``samples()`` and
    ``marks()`` (tables), ``run(id)``, ``energy(id)`` and ``inputs(id)`` (dicts)."""

    def __init__(self, path, pandas=None, check=True):
        import tarfile

        self.path = path
        self._pd = _pandas(pandas)
        try:
            self._tar = tarfile.open(path, "r:*")
        except (OSError, tarfile.TarError) as err:
            raise BundleError("%s is not a tar archive erg can read: %s" % (path, err))
        # Archives packed again from a folder (tar -cf b.tar -C dir .) name their members ./<path>.
        self._members = dict((_member_path(m.name), m) for m in self._tar.getmembers() if m.isfile())
        self.manifest = self._json(_MANIFEST)
        if not isinstance(self.manifest, dict) or self.manifest.get("format") != BUNDLE_FORMAT:
            raise BundleError("%s: no %s of format %s: not an erg evidence bundle this reader knows" % (path, _MANIFEST, BUNDLE_FORMAT))
        if check:
            self._check()
        self.campaign = self._json(_CAMPAIGN)
        self.spec = self._json(_SPEC_STORED)
        self.spec_submitted = self._text(_SPEC_SUBMITTED)
        self.results = self._json(_RESULTS)
        self.run_ids = list(self.manifest["runs"])

    def close(self):
        self._tar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return "erg.Bundle(%r: campaign %s, %d runs)" % (self.path, self.manifest.get("campaignId"), len(self.run_ids))

    # Files -----------------------------------------------------------------------------------
    def _bytes(self, name):
        member = self._members.get(name)
        if member is None:
            return None
        f = self._tar.extractfile(member)
        try:
            return f.read()
        finally:
            f.close()

    def _text(self, name):
        data = self._bytes(name)
        return None if data is None else data.decode("utf-8")

    def _json(self, name):
        import json

        text = self._text(name)
        return None if text is None else json.loads(text)

    def _check(self):
        import hashlib

        listed = set()
        for f in self.manifest["files"]:
            listed.add(f["path"])
            member = self._members.get(f["path"])
            if member is None:
                raise BundleError("%s: %s is in the manifest but not in the archive" % (self.path, f["path"]))
            digest = hashlib.sha256()
            stream = self._tar.extractfile(member)
            try:
                for chunk in iter(lambda: stream.read(1 << 20), b""):
                    digest.update(chunk)
            finally:
                stream.close()
            if digest.hexdigest() != f["sha256"]:
                raise BundleError("%s: %s does not match its sha256 in the manifest" % (self.path, f["path"]))
        extra = sorted(set(self._members) - listed - set([_MANIFEST]))
        if extra:
            raise BundleError("%s: %s is not in the manifest" % (self.path, extra[0]))

    # Per run ---------------------------------------------------------------------------------
    def run(self, run_id):
        """The run as GET /v1/runs/:id shows it, with its ``position`` and ``events``."""
        return self._json(_RUN_FILE % run_id)

    def energy(self, run_id):
        """The run's stored figures (GET /v1/runs/:id/energy); None when it has none."""
        return self._json(_ENERGY_FILE % run_id)

    def inputs(self, run_id):
        """What the run's figures are computed from, but the samples (exact JSON, read as plain JSON)."""
        return self._json(_INPUTS_FILE % run_id)

    def nodes(self, run_id):
        """The nodes the run has samples of."""
        prefix = _SAMPLES_PREFIX % run_id
        return sorted(n[len(prefix):-len(".csv.gz")] for n in self._members if n.startswith(prefix) and n.endswith(".csv.gz"))

    # Tables ----------------------------------------------------------------------------------
    @property
    def runs(self):
        """One row per run, in the run order: runId, position, configurationKey, repetition,
        state, slurmJobId, nodeList, and its stored timeS, energyJ, edpJs, avgPowerW, method,
        coverage (None without figures)."""
        rows = []
        for run_id in self.run_ids:
            run = self.run(run_id) or {}
            energy = self.energy(run_id) or {}
            row = {"runId": run_id}
            for k in _RUN_COLUMNS:
                row[k] = run.get(k)
            for k in _FIGURE_COLUMNS:
                row[k] = energy.get(k)
            rows.append(row)
        return self._table(rows, ("runId",) + _RUN_COLUMNS + _FIGURE_COLUMNS)

    @property
    def configurations(self):
        """One row per configuration of the results: its key and parameters' text, and n, mean,
        std, ci95 of each figure as ``<figure>.<statistic>`` (``energyJ.mean``)."""
        rows = []
        for c in (self.results or {}).get("configurations", []):
            row = {}
            for k, v in c.items():
                if isinstance(v, dict) and "mean" in v:
                    for stat, x in v.items():
                        if not isinstance(x, (dict, list)):
                            row["%s.%s" % (k, stat)] = x
                elif not isinstance(v, (dict, list)):
                    row[k] = v
            rows.append(row)
        return self._table(rows, None)

    def samples(self, run_id=None, node=None):
        """Samples: run, node, sensor, t (Unix ms), v (in the sensor's unit); every run's, or one
        run's, or one run's on one node. Every value is the double erg stored."""
        runs = self.run_ids if run_id is None else [run_id]
        parts = []
        for r in runs:
            for n in self.nodes(r) if node is None else [node]:
                data = self._bytes(_SAMPLES_FILE % (r, n))
                if data is None:
                    raise BundleError("%s: no samples of run %s on node %s" % (self.path, r, n))
                parts.append((r, n, data))
        if self._pd is not None:
            return self._sample_frames(parts)
        rows = []
        for r, n, data in parts:
            for sensor, t, v in _csv_rows(data):
                rows.append({"run": r, "node": n, "sensor": sensor, "t": float(t), "v": float(v)})
        return rows

    def _sample_frames(self, parts):
        import io

        pd = self._pd
        columns = ["run", "node", "sensor", "t", "v"]
        frames = []
        for r, n, data in parts:
            # round_trip: every value parses to the double written (pandas' default parser may not).
            frame = pd.read_csv(io.BytesIO(data), compression="gzip", dtype={"sensor": str, "t": "float64", "v": "float64"}, float_precision="round_trip")
            frame.insert(0, "node", n)
            frame.insert(0, "run", r)
            frames.append(frame)
        if not frames:
            return pd.DataFrame({c: [] for c in columns})
        return pd.concat(frames, ignore_index=True)[columns]

    def marks(self, run_id=None):
        """Phase marks: run, node, offset, kind (begin, end, step), name, t (Unix ms), clock, writer."""
        rows = []
        for r in self.run_ids if run_id is None else [run_id]:
            data = self._bytes(_MARKS_FILE % r)
            if data is None:
                continue
            for node, offset, kind, name, t, clock, writer in _csv_rows(data):
                rows.append({"run": r, "node": node, "offset": int(offset), "kind": kind, "name": name, "t": float(t), "clock": clock, "writer": writer})
        return self._table(rows, ("run", "node", "offset", "kind", "name", "t", "clock", "writer"))

    def _table(self, rows, columns):
        if self._pd is None:
            return rows
        if columns is None:
            return self._pd.DataFrame(rows)
        return self._pd.DataFrame(rows, columns=list(columns))


def _pandas(wanted):
    """pandas, or None for plain lists (``wanted`` False, or None and pandas not installed)."""
    if wanted is False:
        return None
    try:
        import pandas
    except ImportError:
        if wanted:
            raise
        return None
    return pandas


def _member_path(name):
    while name.startswith("./"):
        name = name[2:]
    return name


def _csv_rows(data):
    """The rows of a gzip'd CSV file of the bundle, without its header."""
    import csv
    import gzip
    import io

    reader = csv.reader(io.StringIO(gzip.decompress(data).decode("utf-8")))
    next(reader, None)
    return list(reader)

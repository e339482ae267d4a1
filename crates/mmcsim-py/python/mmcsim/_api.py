"""run, replay, compare and sweep: the simctl subcommands as functions."""

import json
import os
import tempfile

from . import _mmcsim
from ._elevator import resolve
from ._results import Result, Results, locate


def _sets(set):
    """``set`` (a dict or a list of ``"KEY=VALUE"`` / ``(key, value)``)
    as ``[(key, value)]`` in order, values as text (``True`` → ``true``)."""
    if not set:
        return []
    items = set.items() if isinstance(set, dict) else set
    out = []
    for item in items:
        if isinstance(item, str):
            if "=" not in item:
                raise ValueError(f"set: `{item}` is not KEY=VALUE")
            k, v = item.split("=", 1)
        else:
            k, v = item
        if isinstance(v, bool):
            v = "true" if v else "false"
        out.append((str(k).strip(), str(v).strip()))
    return out


def _workload(w):
    """``(path or name, JSON of a dict)`` of a workload argument."""
    if isinstance(w, dict):
        return None, json.dumps(w)
    if isinstance(w, os.PathLike):
        w = os.fspath(w)
    if not isinstance(w, str):
        raise TypeError(f"workload must be a path, a bundled name or a dict, not {type(w).__name__}")
    return w, None


def _spec(kind, workload, phone, device, scheduler, factory, tunables, set, seed, log):
    w, wj = _workload(workload)
    if isinstance(device, dict):
        d, dj = None, json.dumps(device)
    else:
        d, dj = (os.fspath(device) if device is not None else None), None
    return {
        "kind": kind,
        "workload": w,
        "scenario_json": wj,
        "phone": os.fspath(phone) if phone is not None else None,
        "device": d,
        "device_json": dj,
        "scheduler": scheduler if factory is None else None,
        "elevator": (scheduler, factory) if factory is not None else None,
        "tunables": tunables,
        "seed": seed,
        "sets": _sets(set),
        "log": bool(log),
    }


def _call(f, *args):
    """``f(*args)`` with an :class:`MmcsimError` given its location."""
    try:
        return f(*args)
    except _mmcsim.SchedulerError:
        raise
    except _mmcsim.MmcsimError as e:
        locate(e)
        raise


def run(scenario, phone=None, device=None, scheduler=None, set=None, seed=None, log=True):
    """Runs a scenario (``simctl run``): a scenario TOML or fio job file by
    path, a bundled name (``"rand16-128m"``, ``"androbench-3.4"``), or the
    scenario as a dict.

    ``phone``: a phone by name or file (``"motog-2013"``); ``device``: a
    device profile by path, bundled name or dict; ``scheduler``: a
    scheduler name (built-in or registered) or a Python
    :class:`Elevator` (instance, subclass or factory); ``set``: overrides
    as a dict ``{"iosched.fifo_batch": 4}`` or ``["KEY=VALUE", ...]``
    (``--set``), applied last; ``seed``: the seed of every random stream
    (``None``: the scenario's own, 1 unless it says otherwise); ``log``:
    keep the per-request log for :meth:`Result.requests`.
    Returns a :class:`Result`."""
    name, factory = resolve(scheduler, 1)
    spec = _spec("scenario", scenario, phone, device, name, factory, [], set, seed, log)
    return Result(*_call(_mmcsim.simulate, spec))


def replay(trace, phone=None, device=None, scheduler=None, set=None, seed=None, log=True):
    """Replays a block trace (``simctl replay``) in any supported format
    (detected): native CSV, blkparse, ftrace, fio iolog, MSR, SPC, ...
    Replay options are overrides: ``set={"trace.mode": "closed"}``
    (``trace.scale``, ``trace.rebase``, ...). Other arguments as
    :func:`run`. Returns a :class:`Result`."""
    name, factory = resolve(scheduler, 1)
    spec = _spec("trace", os.fspath(trace), phone, device, name, factory, [], set, seed, log)
    return Result(*_call(_mmcsim.simulate, spec))


def _entry(s, runs):
    """``(label, name, factory, tunables)`` of one compare entry: a name
    with its own tunables (``"cfq:slice_idle=0"``), a Python scheduler
    (labelled ``python:NAME``), or ``(label, scheduler)``."""
    if isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str):
        label, s = s
    else:
        label = None
    if isinstance(s, str):
        name, *kvs = [p.strip() for p in s.split(":")]
        tunables = []
        for kv in kvs:
            if "=" not in kv:
                raise ValueError(f"schedulers: `{kv}` in `{s}` is not TUNABLE=VALUE (e.g. cfq:slice_idle=0)")
            k, v = kv.split("=", 1)
            tunables.append((k.strip(), v.strip()))
        return label or s.strip(), name, None, tunables
    name, factory = resolve(s, runs)
    return label or f"python:{name}", name, factory, []


def compare(workload, schedulers=("noop", "deadline"), seeds=1, phone=None, device=None,
            set=None, jobs=None, log=True):
    """One workload (a scenario, fio job file or trace; path, bundled name
    or dict) under several schedulers side by side (``simctl compare``),
    once per seed. ``schedulers``: ``"all"`` or a list of entries — a
    name, a name with tunables (``"cfq:slice_idle=0"``), a Python
    :class:`Elevator` (labelled ``python:NAME``), or ``(label,
    scheduler)``. ``seeds``: a count N (seeds 1..N) or a list of seeds.
    Runs go in parallel on ``jobs`` threads (default one per core); the
    results are in the order seed by seed, entry by entry, whatever the
    threads. Returns :class:`Results`."""
    if isinstance(schedulers, str):
        schedulers = _mmcsim.scheduler_names() if schedulers.strip() == "all" else schedulers.split(",")
    seed_list = list(range(1, seeds + 1)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("seeds: at least one seed")
    entries = [_entry(s, len(seed_list)) for s in schedulers]
    if not entries:
        raise ValueError("schedulers: no scheduler given")
    labels = [e[0] for e in entries]
    if len(set_of(labels)) != len(labels):
        raise ValueError(f"schedulers: an entry is listed twice: {labels}")
    kind = "scenario"
    w, _ = _workload(workload)
    if w is not None and _is_trace(w):
        kind = "trace"
    specs, run_labels = [], []
    for seed in seed_list:
        for label, name, factory, tunables in entries:
            specs.append(_spec(kind, workload, phone, device, name, factory, tunables, set, seed, log))
            run_labels.append(label)
    outs = _call(_mmcsim.simulate_many, specs, run_labels, jobs)
    shown = workload if isinstance(workload, str) else "<dict>"
    return Results([Result(*o, label=l) for o, l in zip(outs, run_labels)], workload=shown)


def set_of(xs):
    return {x for x in xs}


def _is_trace(w):
    """True when ``w`` names a trace file rather than a scenario or fio
    job (by name or content, as ``simctl compare`` decides)."""
    if not os.path.isfile(w):
        return False
    if w.endswith(".toml") or w.endswith(".fio"):
        return False
    with open(w, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace")
    for line in head.splitlines():
        t = line.strip()
        if not t or t.startswith("#") or t.startswith(";"):
            continue
        # A TOML table or key, or an fio job section: not a trace.
        return not (t.startswith("[") or ("=" in t and "," not in t))
    return True


def sweep(grid, jobs=None, out=None):
    """Runs a parameter grid (``simctl sweep``): a grid TOML by path, or
    the grid as a dict (relative paths then resolve against the current
    directory). Cells run on ``jobs`` threads; ``out`` keeps the sweep's
    directory (``sweep.json``, ``cells/``, ``results.csv``; a second call
    with the same grid resumes), else a temporary one is used and
    removed. A Python scheduler in a grid must be registered
    (:func:`register_scheduler`). Returns :class:`Results`, one per cell
    in cell order, each labelled with its scheduler entry; a failed cell
    raises :class:`MmcsimError` naming it."""
    if isinstance(grid, dict):
        text = _toml(grid)
        path = os.path.join(os.getcwd(), "<grid>.toml")
    else:
        path = os.fspath(grid)
        with open(path, encoding="utf-8") as f:
            text = f.read()
    if out is None:
        with tempfile.TemporaryDirectory(prefix="mmcsim-sweep-") as d:
            return _sweep(text, path, d, jobs)
    return _sweep(text, path, os.fspath(out), jobs)


def _sweep(text, path, out, jobs):
    cells, reports, rows, failed = _call(_mmcsim.sweep, text, path, out, jobs)
    cells = json.loads(cells)
    if failed:
        lines = "; ".join(f"cell {cells[i]['id']} ({cells[i]['scheduler']}, {cells[i]['workload']}): {m}" for i, m in failed)
        raise _mmcsim.MmcsimError(f"{len(failed)} of {len(cells)} sweep cells failed: {lines}")
    results = []
    for c, rep, r in zip(cells, reports, rows):
        results.append(Result(rep, None, r, label=c["scheduler"], cell=c))
    return Results(results, workload=path)


def _toml(d, prefix=""):
    """A small TOML writer for a grid dict (lists of strings, numbers and
    lists of lists; nested tables)."""
    lines, tables = [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{k} = {json.dumps(v)}")
    for k, v in tables:
        name = f"{prefix}{k}"
        lines.append(f"\n[{name}]")
        lines.append(_toml(v, name + "."))
    return "\n".join(lines) + "\n"

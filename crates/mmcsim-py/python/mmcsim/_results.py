"""Results of runs as the JSON report and as pandas DataFrames."""

import io
import json
import re

SUMMARY_COLUMNS = ["run", "scenario", "scheduler", "seed", "metric", "value", "unit"]


def _pd():
    import pandas

    return pandas


def locate(e):
    """Fills ``file``, ``line`` and ``field`` of an :class:`MmcsimError`
    from its message where the error did not carry them (``path:LINE:``,
    ``at line N``, ``field `NAME```, ``key.name: ...``)."""
    msg = str(e)
    if getattr(e, "file", None) is None:
        m = re.match(r"(?:[\w.\-]+: )?([^\s:`]+\.(?:toml|fio|csv|txt|log|trace|ascii|gz))\b", msg)
        if m:
            e.file = m.group(1)
    if getattr(e, "line", None) is None:
        m = re.search(r"\.(?:toml|fio|csv|txt|log|trace|ascii|gz):(\d+)", msg) or re.search(r"\bline (\d+)", msg)
        e.line = int(m.group(1)) if m else None
    if getattr(e, "field", None) is None:
        m = re.search(r"field `([^`]+)`", msg) or re.match(r"(?:--set )?([a-z_]+(?:\.[a-z_0-9]+)+)[:=]", msg)
        e.field = m.group(1) if m else None
    for k in ("file", "line", "field"):
        if not hasattr(e, k):
            setattr(e, k, None)
    return e


class Result:
    """One run: its JSON report (:meth:`to_dict`, :meth:`to_json`) and its
    tables as pandas DataFrames (:meth:`summary`, :meth:`threads`,
    :meth:`requests`, :meth:`timeline`)."""

    def __init__(self, report_json, log_csv, rows, label=None, cell=None):
        self._json = report_json
        self._log = log_csv
        self._rows = rows
        self._dict = None
        self.label = label if label is not None else self.to_dict()["scheduler"]["name"]
        #: The sweep cell's coordinates (``id``, ``scheduler``, ``workload``,
        #: ``device``, ``seed``, ``sets``, ...), for a sweep's results.
        self.cell = cell

    def __repr__(self):
        d = self.to_dict()
        return (
            f"<mmcsim.Result {d['run']['name']} scheduler={self.label} seed={d['run']['seed']} "
            f"requests={d['requests']['count']}>"
        )

    def to_json(self):
        """The JSON report, byte for byte as ``simctl run --json`` writes it."""
        return self._json

    def to_dict(self):
        """The JSON report as a dict (a fresh copy each call)."""
        if self._dict is None:
            self._dict = json.loads(self._json)
        return json.loads(self._json) if self._dict is None else _copy(self._dict)

    def summary(self, run=0):
        """One row per metric, the ``--csv`` shape: columns ``run,
        scenario, scheduler, seed, metric, value, unit``; ``value`` as a
        float, ``unit`` empty for counts and ratios."""
        d = self.to_dict()
        name, seed = d["run"]["name"], d["run"]["seed"]
        rows = [(run, name, self.label, seed, m, float(v), u) for m, v, u in self._rows]
        return _pd().DataFrame(rows, columns=SUMMARY_COLUMNS)

    def threads(self):
        """One row per workload thread: id, name, pid, requests, iops,
        MB/s and latency statistics (µs), nested keys joined with dots
        (``latency_us.p99``)."""
        t = self.to_dict().get("threads") or []
        return _pd().json_normalize(t)

    def requests(self):
        """The per-request log (``simctl --log``): one row per request with
        ``submit_ns, dispatch_ns, device_start_ns, complete_ns, sector,
        sectors, op, thread`` and the derived ``latency_ns`` (submit to
        complete), ``queue_ns`` (submit to dispatch) and ``device_ns``
        (device start to complete). Needs ``log=True`` (the default)."""
        if self._log is None:
            raise ValueError("this run kept no request log: run it with log=True")
        df = _pd().read_csv(io.BytesIO(bytes(self._log)))
        df["latency_ns"] = df["complete_ns"] - df["submit_ns"]
        df["queue_ns"] = df["dispatch_ns"] - df["submit_ns"]
        df["device_ns"] = df["complete_ns"] - df["device_start_ns"]
        return df

    def timeline(self, bin_ms=100):
        """Throughput and latency over simulated time, from the request
        log: one row per ``bin_ms`` interval of completion time with
        ``t_s`` (the interval's start, s), ``requests``, ``iops``,
        ``mb_per_s`` (MB = 10^6 bytes) and ``mean_latency_us``."""
        pd = _pd()
        r = self.requests()
        if r.empty:
            return pd.DataFrame(columns=["t_s", "requests", "iops", "mb_per_s", "mean_latency_us"])
        bin_ns = int(bin_ms * 1_000_000)
        b = r["complete_ns"] // bin_ns
        g = r.assign(bin=b, bytes=r["sectors"] * 512).groupby("bin")
        out = pd.DataFrame(
            {
                "requests": g.size(),
                "bytes": g["bytes"].sum(),
                "mean_latency_us": g["latency_ns"].mean() / 1000.0,
            }
        )
        full = range(int(b.min()), int(b.max()) + 1)
        out = out.reindex(full, fill_value=0)
        out.index.name = None
        sec = bin_ns / 1e9
        out.insert(0, "t_s", [i * sec for i in full])
        out["iops"] = out["requests"] / sec
        out["mb_per_s"] = out["bytes"] / sec / 1e6
        return out[["t_s", "requests", "iops", "mb_per_s", "mean_latency_us"]].reset_index(drop=True)


class Results:
    """Several runs (``compare``, ``sweep``): a list of :class:`Result`
    with the same tables, each row tagged with its run (position),
    scheduler entry and seed."""

    def __init__(self, results, workload=""):
        self.results = list(results)
        self.workload = workload

    def __len__(self):
        return len(self.results)

    def __getitem__(self, i):
        return self.results[i]

    def __iter__(self):
        return iter(self.results)

    def __repr__(self):
        return f"<mmcsim.Results {len(self.results)} runs of {self.workload}>"

    def to_dict(self):
        """The comparison as ``simctl compare --json`` writes it:
        ``schema``, ``workload``, and ``reports`` (``label``, ``report``)."""
        return {
            "schema": "mmcsim-compare/1",
            "workload": self.workload,
            "reports": [{"label": r.label, "report": r.to_dict()} for r in self.results],
        }

    def summary(self):
        """Every run's :meth:`Result.summary`, ``run`` numbering the runs."""
        pd = _pd()
        return pd.concat([r.summary(run=i) for i, r in enumerate(self.results)], ignore_index=True)

    def _tagged(self, f):
        pd = _pd()
        frames = []
        for i, r in enumerate(self.results):
            df = f(r)
            d = r.to_dict()["run"]
            df.insert(0, "seed", d["seed"])
            df.insert(0, "scheduler", r.label)
            df.insert(0, "run", i)
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def threads(self):
        """Every run's :meth:`Result.threads` with ``run, scheduler, seed``."""
        return self._tagged(Result.threads)

    def requests(self):
        """Every run's :meth:`Result.requests` with ``run, scheduler, seed``."""
        return self._tagged(Result.requests)

    def timeline(self, bin_ms=100):
        """Every run's :meth:`Result.timeline` with ``run, scheduler, seed``."""
        return self._tagged(lambda r: r.timeline(bin_ms))


def _copy(d):
    return json.loads(json.dumps(d))

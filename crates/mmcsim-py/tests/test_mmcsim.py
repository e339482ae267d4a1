"""The checks of the Python package: runs and tables, byte-identical
Python ports of noop and deadline, and clear errors from broken
schedulers (no hang, no panic)."""

import json
import os
import subprocess

import pytest

import mmcsim
import deadline
import noop

from conftest import ROOT

SAMPLE = os.path.join(ROOT, "traces", "sample.csv")


def test_run_by_bundled_name_gives_the_summary_table():
    r = mmcsim.run("rand16-128m", scheduler="deadline")
    s = r.summary()
    assert list(s.columns) == ["run", "scenario", "scheduler", "seed", "metric", "value", "unit"]
    assert r.to_dict()["requests"]["count"] == 8000
    row = s[s.metric == "latency_us.p99"].iloc[0]
    assert row.unit == "us" and row.scheduler == "deadline" and row.scenario == "rand16-128m"
    assert len(r.threads()) == 16
    req = r.requests()
    # One row per block request (bios merged into one request share it).
    assert 7000 < len(req) <= 8000 and (req.latency_ns > 0).all()
    t = r.timeline(bin_ms=100)
    assert t.requests.sum() == len(req)


def test_the_json_is_simctls_byte_for_byte(tmp_path):
    simctl = os.path.join(ROOT, "target", "debug", "simctl")
    if not os.path.exists(simctl):
        pytest.skip("target/debug/simctl is not built")
    out = tmp_path / "r.json"
    subprocess.run([simctl, "run", "rand16-128m", "--scheduler", "noop", "--json", str(out), "--quiet"], check=True)
    assert mmcsim.run("rand16-128m", scheduler="noop").to_json() == out.read_text()


@pytest.mark.parametrize("workload", ["rand16-128m", "androbench-3.4", SAMPLE])
@pytest.mark.parametrize("name,port", [("noop", noop.Noop), ("deadline", deadline.Deadline)])
def test_python_ports_give_the_built_in_report_byte_for_byte(workload, name, port):
    f = mmcsim.replay if workload == SAMPLE else mmcsim.run
    assert f(workload, scheduler=port()).to_json() == f(workload, scheduler=name).to_json()


def test_tunables_reach_the_python_port_by_sysfs_name():
    sets = {"iosched.fifo_batch": 4, "iosched.read_expire": 125}
    a = mmcsim.run("rand16-128m", scheduler="deadline", set=sets)
    b = mmcsim.run("rand16-128m", scheduler=deadline.Deadline(), set=sets)
    assert a.to_json() == b.to_json()
    t = {x["name"]: x["value"] for x in b.to_dict()["scheduler"]["tunables"]}
    assert t["fifo_batch"] == "4" and t["read_expire"] == "125"
    with pytest.raises(mmcsim.MmcsimError, match="fifo_batch"):
        mmcsim.run("rand16-128m", scheduler=deadline.Deadline(), set={"iosched.fifo_batch": "many"})
    with pytest.raises(mmcsim.MmcsimError, match="valid: read_expire"):
        mmcsim.run("rand16-128m", scheduler=deadline.Deadline(), set={"iosched.bogus": 1})


def test_determinism_same_inputs_same_report():
    a = mmcsim.run("rand16-128m", scheduler=deadline.Deadline(), seed=3)
    b = mmcsim.run("rand16-128m", scheduler=deadline.Deadline(), seed=3)
    assert a.to_json() == b.to_json()


def test_compare_registered_and_python_schedulers_over_seeds():
    mmcsim.register_scheduler("pynoop", lambda: _Renamed())
    assert "pynoop" in mmcsim.schedulers()
    c = mmcsim.compare("rand16-128m", schedulers=["noop", "deadline:fifo_batch=1", "pynoop", deadline.Deadline()],
                       seeds=2, jobs=2)
    assert [r.label for r in c][:4] == ["noop", "deadline:fifo_batch=1", "pynoop", "python:deadline"]
    assert len(c) == 8
    s = c.summary()
    assert sorted(s.run.unique()) == list(range(8)) and sorted(s.seed.unique()) == [1, 2]
    d = c.to_dict()
    assert d["schema"] == "mmcsim-compare/1" and len(d["reports"]) == 8
    assert c[3].to_dict()["requests"]["count"] == 8000
    assert set(c.threads().scheduler) == {"noop", "deadline:fifo_batch=1", "pynoop", "python:deadline"}


class _Renamed(noop.Noop):
    name = "pynoop"


def test_scenario_and_device_as_dicts():
    sc = {
        "name": "tiny",
        "device": {"profile": os.path.join(ROOT, "configs", "devices", "generic-emmc.toml")},
        "files": [{"name": "f", "size_mib": 64}],
        "jobs": [{"name": "r", "file": "f", "op": "read", "pattern": "random", "request_bytes": 4096,
                  "threads": 2, "requests": 50, "direct": True}],
    }
    r = mmcsim.run(sc, scheduler="noop")
    assert r.to_dict()["requests"]["count"] == 100
    r2 = mmcsim.run(sc, scheduler="noop", device="generic-emmc")
    assert r2.to_dict()["requests"]["count"] == 100


def test_bad_input_is_a_located_exception(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[[jobs]]\nname = 'a'\nbogus_key = 3\n")
    with pytest.raises(mmcsim.MmcsimError) as e:
        mmcsim.run(str(bad))
    assert e.value.file and e.value.file.endswith("bad.toml")
    assert e.value.field == "bogus_key"
    trace = tmp_path / "t.csv"
    trace.write_text("time_us,pid,process,op,sector,sectors,sync\n1,1,a,R,0,8,1\n2,1,a,Q,8,8,1\n")
    with pytest.raises(mmcsim.MmcsimError) as e:
        mmcsim.replay(str(trace))
    assert e.value.line == 3, str(e.value)
    with pytest.raises(mmcsim.MmcsimError, match="no-such-scenario"):
        mmcsim.run("no-such-scenario")


class Raises(noop.Noop):
    name = "raises"

    def dispatch(self, ctx, force):
        if ctx.now_ns > 50_000_000:
            raise ZeroDivisionError("deliberate")
        return super().dispatch(ctx, force)


class UnknownId(noop.Noop):
    name = "unknown"

    def dispatch(self, ctx, force):
        return 987654 if self.queue else None


class NeverDispatches(noop.Noop):
    name = "never"
    none_is_stable = False

    def dispatch(self, ctx, force):
        return None


class WrongType(noop.Noop):
    name = "wrongtype"

    def dispatch(self, ctx, force):
        return "first" if self.queue else None


class NoDispatch(mmcsim.Elevator):
    def add_request(self, ctx, rq):
        pass

    def has_work(self):
        return False


@pytest.mark.parametrize(
    "elv,words",
    [
        (Raises(), ["raises", "dispatch", "ZeroDivisionError", "deliberate"]),
        (UnknownId(), ["unknown", "987654", "does not hold"]),
        (NeverDispatches(), ["never dispatched", "held"]),
        (WrongType(), ["dispatch returned 'first'", "expected a request id"]),
        (NoDispatch(), ["required hook"]),
    ],
)
def test_a_broken_python_scheduler_is_a_clear_error(elv, words):
    with pytest.raises(mmcsim.SchedulerError) as e:
        mmcsim.run("rand16-128m", scheduler=elv)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_sweep_over_a_grid_dict():
    grid = {
        "schedulers": ["noop", "deadline"],
        "workloads": [os.path.join(ROOT, "configs", "scenarios", "rand16-128m.toml")],
        "seeds": [1],
    }
    res = mmcsim.sweep(grid, jobs=2)
    assert [r.label for r in res] == ["noop", "deadline"]
    assert res[1].to_json() == mmcsim.run("rand16-128m", scheduler="deadline", seed=1).to_json()
    assert len(res.summary()) > 100


def test_the_gil_is_released_while_simulating():
    import threading
    import time

    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    mmcsim.run("androbench-3.4", scheduler="deadline", log=False)
    stop.set()
    t.join()
    assert len(ticks) > 5

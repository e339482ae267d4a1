"""Speed of a Python scheduler: the per-hook overhead, and a 100 k-request
trace replay under the Python deadline vs the built-in one.

    python examples/python/bench.py [--repeat 5]

Prints medians with (min..max) over the repeats. The hook overhead is
measured with a Python noop whose hooks do nothing but keep the FIFO:
(its run time - the built-in noop's) / hook calls."""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

import mmcsim  # noqa: E402
from deadline import Deadline  # noqa: E402
from noop import Noop  # noqa: E402


class CountingNoop(Noop):
    """noop that counts its hook calls."""

    calls = 0

    def add_request(self, ctx, rq):
        CountingNoop.calls += 1
        super().add_request(ctx, rq)

    def dispatch(self, ctx, force):
        CountingNoop.calls += 1
        return super().dispatch(ctx, force)

    def has_work(self):
        CountingNoop.calls += 1
        return super().has_work()

    def merge_requests(self, ctx, rq, next):
        CountingNoop.calls += 1
        super().merge_requests(ctx, rq, next)

    def former(self, ctx, rq):
        CountingNoop.calls += 1
        return super().former(ctx, rq)

    def latter(self, ctx, rq):
        CountingNoop.calls += 1
        return super().latter(ctx, rq)


def trace(path, n):
    """`n` random 4 KiB reads and writes, 8 processes, one every 200 µs."""
    rng = random.Random(1)
    with open(path, "w") as f:
        f.write("time_us,pid,process,op,sector,sectors,sync\n")
        for i in range(n):
            op = "R" if rng.random() < 0.7 else "W"
            f.write(f"{i * 200},{100 + i % 8},p{i % 8},{op},{rng.randrange(0, 1 << 20) * 8},8,{int(op == 'R')}\n")


def timed(f, repeat):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return ts


def show(name, ts):
    print(f"{name:34s} median {statistics.median(ts):7.2f} s  ({min(ts):.2f}..{max(ts):.2f}) over {len(ts)}")
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--requests", type=int, default=100_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        t = os.path.join(d, "bench.csv")
        trace(t, a.requests)
        run = lambda s: mmcsim.replay(t, scheduler=s, log=False)  # noqa: E731
        b = show("built-in deadline", timed(lambda: run("deadline"), a.repeat))
        p = show("Python deadline", timed(lambda: run(Deadline()), a.repeat))
        print(f"ratio Python/built-in deadline: {p / b:.2f}x")
        bn = show("built-in noop", timed(lambda: run("noop"), a.repeat))
        CountingNoop.calls = 0
        pn = show("Python noop (counting hooks)", timed(lambda: run(CountingNoop()), a.repeat))
        calls = CountingNoop.calls / a.repeat
        print(f"hook calls per run: {calls:.0f}; overhead per hook call: {(pn - bn) / calls * 1e6:.2f} us")


if __name__ == "__main__":
    main()

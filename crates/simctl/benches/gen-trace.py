#!/usr/bin/env python3
"""Writes a native CSV trace for the README's speed figures:
python3 crates/simctl/benches/gen-trace.py N INTERVAL_US OUT — N records, one every
INTERVAL_US (integer), 70 % reads / 30 % writes of 4 KiB at random
4 KiB-aligned sectors of the first 4 GiB, one process (pid 100), seed 42.
Write OUT to /tmp, not into the repository (10 M records are 280 MB)."""
import random
import sys

n, iv, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = random.Random(42)
with open(out, "w", buffering=1 << 20) as f:
    f.write("time_us,op,sector,sectors,pid\n")
    buf = []
    for i in range(n):
        op = "R" if r.random() < 0.7 else "W"
        buf.append(f"{i * iv},{op},{r.randrange(1 << 20) * 8},8,100\n")
        if len(buf) >= 100000:
            f.write("".join(buf))
            buf = []
    f.write("".join(buf))

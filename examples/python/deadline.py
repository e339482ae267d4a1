"""deadline in Python: a port of the built-in legacy `deadline`
(deadline-iosched.c, Linux 3.4/3.10), hook for hook, that gives the
built-in's report byte for byte.

Per direction (READ = 0, WRITE = 1; discards and flushes count as
writes) a sector-sorted list and a FIFO whose deadline (`fifo_time`) is
`jiffies + expire`. Dispatch:

1. continue the batch: `next_rq[WRITE]`, else `next_rq[READ]`, while
   `batching < fifo_batch`, without looking at deadlines;
2. else choose a direction: reads win unless writes are queued and
   `starved++ >= writes_starved` (the increment happens whenever writes
   are queued); choosing WRITE resets `starved`;
3. take the FIFO head if it has expired (compared in jiffies) or there is
   no sweep position, else `next_rq[dir]`; `batching = 0`;
4. `batching++`; `next_rq` becomes the sector successor in that
   direction only.

Tunables by their sysfs names and units (`queue/iosched/<name>`), held in
jiffies at the queue's `HZ` like the kernel: `read_expire` (ms, HZ/2),
`write_expire` (ms, 5*HZ), `writes_starved` (batches, 2), `front_merges`
(bool, 1), `fifo_batch` (requests, 16).

    import mmcsim, deadline
    mmcsim.run("rand16-128m", scheduler=deadline.Deadline())
"""

import bisect

import mmcsim

READ, WRITE = 0, 1
INT_MAX = 2**31 - 1
NS_PER_S = 1_000_000_000


class SortList:
    """The `sort_list` red-black tree: request ids by start sector, equal
    sectors in insertion order (`elv_rb_add` sends equal keys right)."""

    def __init__(self):
        self.entries = []  # (sector, seq, rq), sorted
        self.key = {}  # rq -> (sector, seq)
        self.seq = 0

    def insert(self, sector, rq):
        self.seq += 1
        k = (sector, self.seq)
        self.key[rq] = k
        bisect.insort(self.entries, (sector, self.seq, rq))

    def _index(self, rq):
        s, q = self.key[rq]
        return bisect.bisect_left(self.entries, (s, q, -1))

    def remove(self, rq):
        if rq in self.key:
            del self.entries[self._index(rq)]
            del self.key[rq]

    def successor(self, rq):
        if rq not in self.key:
            return None
        i = self._index(rq) + 1
        return self.entries[i][2] if i < len(self.entries) else None

    def predecessor(self, rq):
        if rq not in self.key:
            return None
        i = self._index(rq)
        return self.entries[i - 1][2] if i > 0 else None

    def find(self, sector):
        """The first request whose start sector is `sector` (`elv_rb_find`)."""
        i = bisect.bisect_left(self.entries, (sector, -1, -1))
        if i < len(self.entries) and self.entries[i][0] == sector:
            return self.entries[i][2]
        return None


class Deadline(mmcsim.Elevator):
    name = "deadline"
    # `None` only when nothing is queued: asking again changes nothing.
    none_is_stable = True

    def __init__(self):
        self.init_queue(mmcsim.SchedParams())

    def init_queue(self, params):
        self.p = params
        hz = params.hz
        self.defaults = {
            "read_expire": hz // 2,  # jiffies
            "write_expire": 5 * hz,  # jiffies
            "writes_starved": 2,
            "front_merges": True,
            "fifo_batch": 16,
        }
        self.tun = dict(self.defaults)
        self.sort_list = [SortList(), SortList()]
        self.fifo_list = [[], []]
        self.next_rq = [None, None]
        self.batching = 0
        self.starved = 0

    # -- jiffies -----------------------------------------------------------

    def jiffy_start_ns(self, j):
        """First nanosecond of jiffy `j` (so jiffies(t) >= j <=> t >= it)."""
        return -((-j * NS_PER_S) // self.p.hz)

    def fifo_expired(self, ctx, d):
        fifo = self.fifo_list[d]
        if not fifo:
            return False
        return self.p.jiffies(ctx.now_ns) >= self.p.jiffies(ctx.rq(fifo[0]).fifo_time)

    # -- hooks -------------------------------------------------------------

    def add_request(self, ctx, rq):
        r = ctx.rq(rq)
        d = r.dir
        self.sort_list[d].insert(r.sector, rq)
        expire = self.tun["read_expire"] if d == READ else self.tun["write_expire"]
        deadline = self.p.jiffies(ctx.now_ns) + expire
        ctx.set_fifo_time(rq, self.jiffy_start_ns(deadline))
        self.fifo_list[d].append(rq)

    def merge_lookup(self, ctx, bio):
        if not self.tun["front_merges"]:
            return None
        return self.sort_list[bio.dir].find(bio.end)

    def merged(self, ctx, rq, kind):
        if kind == "front":
            r = ctx.rq(rq)
            self.sort_list[r.dir].remove(rq)
            self.sort_list[r.dir].insert(r.sector, rq)

    def merge_requests(self, ctx, rq, next):
        n, r = ctx.rq(next), ctx.rq(rq)
        d, rd = n.dir, r.dir
        if (
            rq in self.fifo_list[rd]
            and next in self.fifo_list[d]
            and self.p.jiffies(n.fifo_time) < self.p.jiffies(r.fifo_time)
        ):
            # list_move(rq, next): rq takes next's place and deadline.
            self.fifo_list[rd].remove(rq)
            fifo = self.fifo_list[d]
            fifo.insert(fifo.index(next) + 1, rq)
            ctx.set_fifo_time(rq, n.fifo_time)
        self.remove_request(next, d)

    def remove_request(self, rq, d):
        self.fifo_list[d].remove(rq)
        if self.next_rq[d] == rq:
            self.next_rq[d] = self.sort_list[d].successor(rq)
        self.sort_list[d].remove(rq)

    def former(self, ctx, rq):
        return self.sort_list[ctx.rq(rq).dir].predecessor(rq)

    def latter(self, ctx, rq):
        return self.sort_list[ctx.rq(rq).dir].successor(rq)

    def dispatch(self, ctx, force):
        reads, writes = bool(self.fifo_list[READ]), bool(self.fifo_list[WRITE])
        if not reads and not writes and self.next_rq == [None, None]:
            return None
        cont = self.next_rq[WRITE] if self.next_rq[WRITE] is not None else self.next_rq[READ]
        if cont is not None and self.batching < self.tun["fifo_batch"]:
            rq = cont
        else:
            d = self.choose_direction(reads, writes)
            if d is None:
                return None
            nxt = self.next_rq[d]
            if nxt is not None and not self.fifo_expired(ctx, d):
                rq = nxt
            else:
                rq = self.fifo_list[d][0]
            self.batching = 0
        # deadline_move_request
        d = ctx.rq(rq).dir
        self.batching += 1
        self.next_rq = [None, None]
        self.fifo_list[d].remove(rq)
        self.next_rq[d] = self.sort_list[d].successor(rq)
        self.sort_list[d].remove(rq)
        return rq

    def choose_direction(self, reads, writes):
        if reads:
            starve = False
            if writes:
                starve = self.starved >= self.tun["writes_starved"]
                self.starved += 1
            if not starve:
                return READ
        elif not writes:
            return None
        self.starved = 0
        return WRITE

    def has_work(self):
        return bool(self.fifo_list[READ]) or bool(self.fifo_list[WRITE])

    # -- tunables (sysfs names and units) -----------------------------------

    def tunables(self):
        ms = lambda j: str(self.p.jiffies_to_ms(j))  # noqa: E731
        t, d = self.tun, self.defaults
        return [
            dict(name="read_expire", value=ms(t["read_expire"]), default=ms(d["read_expire"]),
                 unit="ms", help="deadline of a read, from its arrival (HZ/2)"),
            dict(name="write_expire", value=ms(t["write_expire"]), default=ms(d["write_expire"]),
                 unit="ms", help="deadline of a write, from its arrival (5*HZ)"),
            dict(name="writes_starved", value=str(t["writes_starved"]), default=str(d["writes_starved"]),
                 unit="batches", help="read batches that may pass over waiting writes"),
            dict(name="front_merges", value=str(int(t["front_merges"])), default=str(int(d["front_merges"])),
                 unit="bool", help="look up front merges in the sector tree"),
            dict(name="fifo_batch", value=str(t["fifo_batch"]), default=str(d["fifo_batch"]),
                 unit="requests", help="requests dispatched per batch before deadlines are checked"),
        ]

    def set_tunable(self, name, value):
        if name not in self.tun:
            raise KeyError(name)
        if name == "front_merges":
            v = value.strip()
            if v not in ("0", "1"):
                raise ValueError(f"`{v}` is not 0 or 1")
            self.tun[name] = v == "1"
            return
        try:
            n = int(value.strip())
        except ValueError:
            raise ValueError(f"`{value}` is not a whole number (expected 0..={INT_MAX})") from None
        if not 0 <= n <= INT_MAX:
            raise ValueError(f"{n} is out of range (expected 0..={INT_MAX})")
        if name in ("read_expire", "write_expire"):
            n = self.p.ms_to_jiffies(n)
        self.tun[name] = n

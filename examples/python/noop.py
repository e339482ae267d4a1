"""noop in Python: a port of the built-in `noop` (noop-iosched.c), hook for
hook, that gives the built-in's report byte for byte.

One FIFO in insertion order, merging only: the block layer's generic back
merges and the one-hit `last_merge` front merges; request-request merges
look at the FIFO neighbours (`former` / `latter`). Dispatched requests
go through the dispatch list's one-way elevator insertion
(`dispatch_sort`). No tunables.

    import mmcsim, noop
    mmcsim.run("rand16-128m", scheduler=noop.Noop())
"""

import mmcsim


class Noop(mmcsim.Elevator):
    name = "noop"
    dispatch_sort = True
    # `None` only when nothing is queued: asking again changes nothing.
    none_is_stable = True

    def __init__(self):
        self.queue = []  # request ids in insertion order

    def add_request(self, ctx, rq):
        self.queue.append(rq)

    def merge_requests(self, ctx, rq, next):
        self.queue.remove(next)

    def former(self, ctx, rq):
        i = self.queue.index(rq)
        return self.queue[i - 1] if i > 0 else None

    def latter(self, ctx, rq):
        i = self.queue.index(rq)
        return self.queue[i + 1] if i + 1 < len(self.queue) else None

    def dispatch(self, ctx, force):
        return self.queue.pop(0) if self.queue else None

    def has_work(self):
        return bool(self.queue)

"""The base class of I/O schedulers written in Python, and the registry
of those known by name."""

import copy
import copyreg

from . import _mmcsim

# SchedParams is immutable: copies (deepcopy of a scheduler for each run of
# a comparison) rebuild it from its fields.
copyreg.pickle(_mmcsim.SchedParams, lambda p: (_mmcsim.SchedParams, (p.hz, p.nonrot)))


class Elevator:
    """An I/O scheduler ("elevator") written in Python.

    Subclass it and implement the hooks of the Rust ``Elevator`` trait
    (the Linux ``elevator_ops``), in snake case. Required:

    * ``add_request(self, ctx, rq)``: request id ``rq`` enters the
      scheduler;
    * ``dispatch(self, ctx, force)``: the id of the next request for the
      driver (removed from the scheduler), or ``None`` (nothing now: empty,
      or waiting with the timer armed by ``ctx.set_timer``);
    * ``has_work(self)``: True while the scheduler holds requests.

    Optional (left out, the block layer does what the kernel does
    without them): ``merge_lookup(ctx, bio)`` (a request whose start
    sector is ``bio.end``, for a front merge), ``allow_merge(ctx, rq,
    bio)``, ``merged(ctx, rq, kind)`` (``kind`` is ``"back"`` or
    ``"front"``), ``merge_requests(ctx, rq, next)`` (``next`` was merged
    into ``rq``: forget it), ``former(ctx, rq)``, ``latter(ctx, rq)``,
    ``activate(ctx, rq)``, ``completed(ctx, rq)``, ``on_timer(ctx)``,
    ``tunables()`` (dicts with ``name``, ``value``, ``default``, ``unit``,
    ``help``; values as sysfs text), ``set_tunable(name, value)`` (value
    as sysfs text; raise ``KeyError`` for an unknown name, ``ValueError``
    for a bad value), and ``init_queue(params)`` (called once, before
    any request, with the queue's :class:`SchedParams`: ``hz`` and the
    jiffies arithmetic).

    ``ctx`` (a :class:`SchedCtx`) is valid only during the hook call:
    ``ctx.now_ns`` is the simulated clock, ``ctx.rq(id)`` a read-only
    view of a request (``sector``, ``sectors``, ``op``, ``dir``,
    ``sync``, ``pid``, ``ioprio``, ``arrival_ns``, ``fifo_time``, ...),
    and ``ctx.set_fifo_time``, ``ctx.set_elv_priv``, ``ctx.set_urgent``,
    ``ctx.set_timer``, ``ctx.cancel_timer`` write what a scheduler owns.

    Class attributes: ``name`` (the kernel name the report shows; by
    default the class name in lower case), ``dispatch_sort`` (dispatched
    requests go through the dispatch list's one-way elevator insertion,
    ``elv_dispatch_sort``, as noop, CFQ, BFQ and ROW do), ``none_is_stable``
    (a ``None`` from ``dispatch`` stays ``None`` until the next
    ``add_request``, timer or tunable change, so the block layer need not
    ask again), ``blk_mq`` (informational).
    """

    name = None
    dispatch_sort = False
    none_is_stable = False
    blk_mq = False

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if cls.__dict__.get("name") is None:
            cls.name = cls.__name__.lower()

    def add_request(self, ctx, rq):
        raise NotImplementedError("add_request is a required hook")

    def dispatch(self, ctx, force):
        raise NotImplementedError("dispatch is a required hook")

    def has_work(self):
        raise NotImplementedError("has_work is a required hook")

    def merge_lookup(self, ctx, bio):
        return None

    def allow_merge(self, ctx, rq, bio):
        return True

    def merged(self, ctx, rq, kind):
        pass

    def merge_requests(self, ctx, rq, next):
        pass

    def former(self, ctx, rq):
        return None

    def latter(self, ctx, rq):
        return None

    def activate(self, ctx, rq):
        pass

    def completed(self, ctx, rq):
        pass

    def on_timer(self, ctx):
        pass

    def tunables(self):
        return []

    def set_tunable(self, name, value):
        raise KeyError(name)


_mmcsim._set_base(Elevator)


def register_scheduler(name, factory, description=""):
    """Registers a Python scheduler under ``name``: ``factory`` (an
    :class:`Elevator` subclass, or any callable returning an instance) is
    called once per simulated queue. The name is then accepted wherever a
    built-in scheduler's is (``run(..., scheduler=name)``, ``compare``
    entries, sweep grids, a scenario's ``[scheduler] name``); registering
    a built-in's name replaces it in this process's runs."""
    if not callable(factory):
        raise TypeError("factory must be an Elevator subclass or a callable returning an Elevator")
    _mmcsim.register_scheduler(str(name), _checked(factory), str(description))


def schedulers():
    """Every scheduler name a run accepts: the built-in ones, then those
    registered from Python."""
    return _mmcsim.scheduler_names()


def _checked(factory):
    """``factory`` wrapped to check that it returns an :class:`Elevator`."""

    def make():
        e = factory()
        if not isinstance(e, Elevator):
            raise TypeError(f"{factory!r} returned {type(e).__name__}, not an mmcsim.Elevator")
        return e

    make.__repr__ = lambda: repr(factory)
    return make


def resolve(s, runs):
    """``(name, factory)`` for the scheduler argument ``s``: a name gives
    ``(name, None)``; an :class:`Elevator` instance is used as is for a
    single run and deep-copied for each of several (``runs`` > 1); a
    subclass or a factory is called once per run."""
    if s is None or isinstance(s, str):
        return s, None
    if isinstance(s, Elevator):
        if runs == 1:
            return s.name, (lambda: s)
        return s.name, (lambda: copy.deepcopy(s))
    if isinstance(s, type) and issubclass(s, Elevator):
        return s.name, s
    if callable(s):
        probe = s()
        if not isinstance(probe, Elevator):
            raise TypeError(f"scheduler factory {s!r} returned {type(probe).__name__}, not an mmcsim.Elevator")
        return probe.name, _checked(s)
    raise TypeError(
        f"scheduler must be a name, an mmcsim.Elevator (instance or subclass) or a factory, not {type(s).__name__}"
    )

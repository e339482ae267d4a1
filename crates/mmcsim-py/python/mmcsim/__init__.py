"""mmcsim from Python: simulations of an Android phone's storage path
(threads, page cache, block layer, I/O scheduler, MMC driver, eMMC) whose
results come back as pandas DataFrames, and I/O schedulers written in
Python that plug into the same elevator hooks as the 13 built-in ones.

    >>> import mmcsim
    >>> r = mmcsim.run("rand16-128m", scheduler="deadline")
    >>> r.summary().head()          # run, scenario, scheduler, seed, metric, value, unit
    >>> r.to_dict()["requests"]["count"]
    8000

Functions: :func:`run`, :func:`replay`, :func:`compare`, :func:`sweep`,
:func:`register_scheduler`, :func:`schedulers`. A scheduler written in
Python subclasses :class:`Elevator`. Errors are :class:`MmcsimError`
(with ``file``, ``line`` and ``field`` where the input names them) and
:class:`SchedulerError` (a Python scheduler raised or broke the hook
contract). The simulation runs with the GIL released; a Python scheduler
takes it only while one of its hooks runs.
"""

from ._mmcsim import (  # noqa: F401
    Bio,
    MmcsimError,
    Request,
    SchedCtx,
    SchedParams,
    SchedulerError,
    __version__,
)
from ._elevator import Elevator, register_scheduler, schedulers
from ._results import Result, Results
from ._api import compare, replay, run, sweep

__all__ = [
    "Bio",
    "Elevator",
    "MmcsimError",
    "Request",
    "Result",
    "Results",
    "SchedCtx",
    "SchedParams",
    "SchedulerError",
    "compare",
    "register_scheduler",
    "replay",
    "run",
    "schedulers",
    "sweep",
]

"""memplan: static memory planning.

A compiler or runtime knows every buffer in advance: its size and its
lifetime in logical time. memplan gives each buffer an offset so that buffers
alive at the same time never share an address, and keeps the peak address
(the makespan) small, or within a hard capacity. The lower bound on any
makespan is the max load: the most bytes alive at one instant.

    >>> import memplan
    >>> r = memplan.solve([8, 8, 8], [0, 2, 5], [4, 6, 9])
    >>> r.offsets.tolist(), r.makespan, r.optimal
    ([0, 8, 0], 16, True)

Zero-size buffers are accepted: they occupy no address range, get offset 0
(or their fixed offset) and count for nothing in the max load.

The ExecuTorch memory-planning algorithm is in :mod:`memplan.executorch`
(ExecuTorch is imported only when that module is).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from ._errors import Error, InputError, InternalError, InvalidPlan, NotFound, PoolsNotFound
from ._memplan import (
    FITS,
    KINDS,
    LIFETIMES,
    ORDERS,
    PREORDERS,
    SOLVERS,
    STRATEGIES,
    Plan,
    PlanStats,
    PoolResult,
    Problem,
    ProblemStats,
    Result,
    __version__,
    generate,
)

__all__ = [
    "Error",
    "InputError",
    "InternalError",
    "InvalidPlan",
    "NotFound",
    "Plan",
    "PlanStats",
    "PoolResult",
    "PoolsNotFound",
    "Problem",
    "ProblemStats",
    "Result",
    "FITS",
    "KINDS",
    "LIFETIMES",
    "ORDERS",
    "PREORDERS",
    "SOLVERS",
    "STRATEGIES",
    "generate",
    "solve",
    "solve_pools",
    "__version__",
]

# The names each option takes (SOLVERS: ``auto``, the portfolio and the
# default, ``greedy``, ``search`` (MiniMalloc), ``boxing`` (idealloc),
# ``tela`` (TelaMalloc)), read from the library's one registry of names.
SOLVERS = tuple(SOLVERS)
ORDERS = tuple(ORDERS)
FITS = tuple(FITS)
PREORDERS = tuple(PREORDERS)
LIFETIMES = tuple(LIFETIMES)
STRATEGIES = tuple(STRATEGIES)
KINDS = tuple(KINDS)

IntArray = Union[Sequence[int], Any]  # a sequence of ints or a NumPy array


def solve(
    sizes: IntArray,
    starts: IntArray,
    ends: IntArray,
    *,
    alignments: Union[int, IntArray, None] = None,
    offsets: Optional[Union[Sequence[Optional[int]], Any]] = None,
    ids: Optional[Sequence[str]] = None,
    capacity: Optional[int] = None,
    lifetimes: Optional[str] = None,
    gaps: Optional[Sequence[Any]] = None,
    hints: Optional[Union[Sequence[Optional[int]], Any]] = None,
    solver: Optional[str] = None,
    time_limit: Optional[float] = None,
    seed: Optional[int] = None,
    **options: Any,
) -> Result:
    """Plans buffers given as parallel arrays; returns a :class:`Result`.

    Args:
        sizes: bytes of each buffer (0 allowed: an empty buffer).
        starts, ends: lifetimes, read per ``lifetimes``: ``"half-open"``
            ``[start, end)`` (default, ``None``), ``"inclusive"`` ``[start, end]``
            (ExecuTorch, XLA), ``"exclusive"`` ``(start, end)``.
        alignments: one alignment for all buffers, or one per buffer
            (default 1).
        offsets: fixed (pre-placed) offsets: ``None`` or a negative value
            for a free buffer.
        ids: names used in messages and CSV files (default: the index).
        hints: preferred offsets (MiniMalloc's ``hint`` column): ``None``
            or a negative value for none. Every solver tries a buffer's
            hint first (``ignore_hints=True``: not); ``stable=True`` keeps
            as many as possible at the best makespan found (or within
            ``stable_makespan``). :attr:`Result.hints_kept` counts them.
        capacity: the plan must fit in this many bytes; without it the
            makespan is minimised. :class:`NotFound` when no plan fits.
        gaps: idle stretches inside lifetimes (MiniMalloc's ``gaps``), one
            item per buffer: ``None``, a string in the CSV column's syntax
            (``"3-5 7-9@0:4"``), or a list of ``(lo, hi)`` (the buffer
            occupies no address) and ``(lo, hi, wlo, whi)`` (only
            ``[offset + wlo, offset + whi)``) tuples, times read per
            ``lifetimes``. Buffers conflict only when, at some instant,
            what they occupy intersects.
        solver: one of :data:`SOLVERS` (``None``: ``auto``), or a greedy
            variant ``"greedy/ORDER/FIT"``.
        time_limit: seconds (``None``, the default: no limit; ``auto`` then
            uses a 30 s safety cap; ``0`` with ``auto``: the greedy variants
            only). The defaults are the command line's and the C API's.
            With an ``effort`` (``auto`` always has one: without ``effort``,
            1 per second of the limit) only a safety cap:
            :attr:`Result.stopped` says when it cut the solve short.
        seed: seed of every random choice (``None``: 0; same seed, same
            plan unless a solver is cut short by the clock).
        **options: the command line's other options: ``order``, ``fit``
            (greedy), ``step_limit``, ``learned_backtracking``,
            ``learned_jump``, ``learned_threshold``,
            ``learned_depth_weight`` (tela: the command line's
            ``--learned-backtracking``, ``--learned-jump``, and its
            threshold, in tenths of a point, and depth weighting, in
            percent),
            ``iterations``,
            ``target_fragmentation``, ``size_classes`` (boxing),
            ``effort`` (a work budget, a multiple of the default: the same
            plan whatever the machine's load), ``preorders``,
            ``round_robin``, ``rerank_parts``, ``canonical``,
            ``section_inference``, ``effective_height``, ``dominance``,
            ``dynamic_order``, ``decompose``, ``hatless``, ``exact_fill``
            (search), ``head_start`` (auto: ``False`` is the command
            line's ``--no-head-start``),
            ``ignore_hints``, ``stable``, ``stable_makespan`` (hints).
            See :meth:`Problem.solve`. ``None`` (the default of each)
            leaves the library's default.

    Lists and NumPy integer arrays are both accepted; NumPy arrays are read
    in place. The GIL is released while solving, and Ctrl-C
    (``KeyboardInterrupt``) stops the solve.

    Raises:
        InputError: bad input, naming the buffer index and field.
        NotFound: no plan within ``capacity``.
    """
    problem = Problem(
        sizes,
        starts,
        ends,
        alignments=alignments,
        offsets=offsets,
        ids=ids,
        capacity=capacity,
        lifetimes=lifetimes,
        gaps=gaps,
        hints=hints,
    )
    return problem.solve(solver=solver, time_limit=time_limit, seed=seed, **options)


def solve_pools(
    sizes: IntArray,
    starts: IntArray,
    ends: IntArray,
    pools: Sequence[Union[Tuple[str, int], Tuple[str, int, int]]],
    *,
    pins: Optional[Sequence[Optional[str]]] = None,
    alignments: Union[int, IntArray, None] = None,
    offsets: Optional[Union[Sequence[Optional[int]], Any]] = None,
    ids: Optional[Sequence[str]] = None,
    lifetimes: Optional[str] = None,
    strategy: Optional[str] = None,
    time_limit: Optional[float] = None,
    effort: Optional[float] = None,
    seed: Optional[int] = None,
    ignore_hints: Optional[bool] = None,
) -> PoolResult:
    """Plans buffers given as parallel arrays into several memories; returns
    a :class:`PoolResult`.

    Args:
        pools: ``(name, capacity)`` or ``(name, capacity, alignment)``,
            fastest first.
        pins: one pool name per buffer (``None`` or ``""``: any pool). A
            fixed buffer (``offsets``) must be pinned when there are several
            pools.
        strategy: ``"guided"`` (default: never worse than the baseline) or
            ``"fastest-first"`` (ExecuTorch's banked planning).
        time_limit: the guided strategy's budget in seconds (``None``: a
            30 s safety cap).

    The other arguments are those of :func:`solve`. The objective: every
    buffer placed, then the fewest bytes × time outside the first pool, then
    outside the first two, and so on (:attr:`PoolResult.spill`).

    Raises:
        InputError: bad input, naming the argument and index.
        PoolsNotFound: the buffers cannot all be placed (or none found).
    """
    problem = Problem(
        sizes,
        starts,
        ends,
        alignments=alignments,
        offsets=offsets,
        ids=ids,
        lifetimes=lifetimes,
    )
    return problem.solve_pools(
        pools,
        pins=pins,
        strategy=strategy,
        time_limit=time_limit,
        effort=effort,
        seed=seed,
        ignore_hints=ignore_hints,
    )

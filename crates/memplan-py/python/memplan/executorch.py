"""memplan as an ExecuTorch memory-planning algorithm.

ExecuTorch's ``MemoryPlanningPass`` runs a ``MemoryPlanningAlgorithmSuite``
whose algorithms are called as ``algo(alignment, specs, graph_module,
graph_signature, extra_padding)`` and return a ``MemoryAlgoResult`` (an
offset, arena and shared-object id per ``TensorSpec``, and the size of each
arena). :func:`memplan_algorithm` is such an algorithm; :func:`algorithm`
makes one with memplan's options::

    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    from executorch.exir.passes import MemoryPlanningPass
    import memplan.executorch

    suite = MemoryPlanningAlgorithmSuite(algo_list=[memplan.executorch.memplan_algorithm])
    program = to_edge(torch.export.export(model, inputs)).to_executorch(
        ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(memory_planning_algo=suite))
    )

or simply ``memory_planning_pass=memplan.executorch.memory_planning_pass()``.

It honours what ExecuTorch's own ``greedy`` honours:

- lifetimes are inclusive ``[first, last]`` node indices;
- one problem per arena (``spec.mem_id``; unspecified means arena 1, as in
  ``greedy``), each starting at the arena's ``input_mem_buffer_sizes``
  entry when the graph module has one (space kept for control-flow
  submodules);
- ``spec.realign(alignment)``: every tensor takes ``allocated_memory``
  bytes (its size rounded up to the alignment) at an offset that is a
  multiple of the alignment;
- tensors that share storage (``spec.storage_base``) are not planned
  themselves: they are placed at their base's offset plus
  ``storage_base_offset``, in the base's arena;
- ``bufsizes`` has one entry per arena up to the highest used (index 0,
  constants, stays 0; ``[0, 0]`` when nothing is planned), each the arena's
  start plus the plan's makespan plus ``extra_padding``;
- ``mem_obj_id`` groups tensors whose address ranges overlap (the
  connected components of the plan's address intervals), so that tensors
  sharing storage share an id, as ExecuTorch's ``Verifier`` expects.

Zero-size tensors (ExecuTorch emits them) are planned at the arena start.

Training graphs (``torch.export.experimental._export_forward_backward``)
are planned like any other. One kernel of ExecuTorch's portable library,
``max_pool2d_with_indices_backward``, adds into its output instead of
overwriting it, so its result depends on what its memory held before: wrong
with any plan that shares memory, and from the second run on even with
none. No plan can fix that; the algorithm warns
(:class:`AccumulatingKernelWarning`) when it plans such a graph, and
``docs/executorch-training.md`` gives the cause, a reproduction and the
fix (decompose the op before lowering).

With ``algorithm(pools=[(mem_id, capacity), ...])`` (fastest first), the
arenas are memories with capacities, as in ExecuTorch's banked planning:
every tensor goes into one arena, those with a ``spec.mem_id`` stay in it
(it must be one of the pools), the others go where memplan's pool
strategies put them (:meth:`memplan.Problem.solve_pools`: the fewest bytes
× lifetime outside the first arena, then outside the first two...). Each
arena's start and ``extra_padding`` count against its capacity, and
:class:`memplan.PoolsNotFound` is raised when the tensors cannot all be
placed.
ExecuTorch is imported only when an algorithm runs, so ``import memplan``
works without it.
"""

from __future__ import annotations

import warnings
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import memplan

__all__ = [
    "ACCUMULATING_KERNELS",
    "AccumulatingKernelWarning",
    "ArenaReport",
    "algorithm",
    "memory_planning_pass",
    "memplan_algorithm",
]


#: Operators whose ExecuTorch portable kernel adds into its output tensor
#: without zeroing it first (as measured: not read from its source), so that the result depends
#: on what the memory held before the kernel ran: the bytes of an earlier
#: tensor when a plan shares them, the previous run's result when it does
#: not. Measured with ExecuTorch 1.5.1 (docs/executorch-training.md).
ACCUMULATING_KERNELS = ("aten::max_pool2d_with_indices_backward",)


class AccumulatingKernelWarning(UserWarning):
    """The graph being planned calls a kernel of
    :data:`ACCUMULATING_KERNELS`: its results will be wrong with any plan
    that shares the kernel's output memory (ExecuTorch's greedy included),
    and from the second run on with any plan at all (naive included),
    unless the op is decomposed before lowering, e.g. ``exported.run_decompositions(
    torch._decomp.get_decompositions([torch.ops.aten.max_pool2d_with_indices_backward]))``.
    Turn it into an error with ``warnings.simplefilter("error",
    AccumulatingKernelWarning)``."""


def _warn_accumulating_kernels(graph_module: Any) -> None:
    """Warns once per graph that calls a kernel of ACCUMULATING_KERNELS."""
    graph = getattr(graph_module, "graph", None)
    found = set()
    for node in getattr(graph, "nodes", ()):
        schema = getattr(getattr(node, "target", None), "_schema", None)
        name = getattr(schema, "name", None)
        if name in ACCUMULATING_KERNELS:
            found.add(name)
    if found:
        warnings.warn(
            f"the graph calls {', '.join(sorted(found))}, whose ExecuTorch kernel adds into "
            "its output without zeroing it: its results depend on the memory's previous "
            "contents whatever the memory plan (wrong gradients in training). Decompose it "
            "before lowering: exported.run_decompositions(torch._decomp.get_decompositions("
            "[torch.ops.aten.max_pool2d_with_indices_backward])); see "
            "docs/executorch-training.md",
            AccumulatingKernelWarning,
            stacklevel=2,
        )


@dataclass
class ArenaReport:
    """What one arena's planning found (kept in ``algorithm.reports``)."""

    #: The arena (``mem_id``).
    mem_id: int
    #: Tensors planned in it (storage-sharing aliases not counted).
    tensors: int
    #: Bytes used by the plan: its makespan (without the arena's start and
    #: ``extra_padding``).
    makespan: int
    #: The max load: the most bytes alive at one node; no plan can be
    #: smaller.
    max_load: int
    #: True when the makespan is proven optimal.
    optimal: bool
    #: The memplan solver that found the plan.
    solver: str
    #: Seconds spent solving.
    seconds: float


@dataclass
class _Options:
    solver: str = "auto"
    time_limit: Optional[float] = 1.0
    seed: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)
    pools: Optional[List[Tuple[int, int]]] = None
    pool_strategy: str = "guided"


def _storage_objects(offsets: Sequence[int], sizes: Sequence[int]) -> List[int]:
    """Shared-object ids: the connected components of the address
    intervals ``[offset, offset + size)``, numbered in address order;
    zero-size tensors, which share no address, get an id each."""
    ids = [0] * len(offsets)
    order = sorted(range(len(offsets)), key=lambda i: offsets[i])
    next_id = 0
    component = -1
    reach = 0
    for i in order:
        start, end = int(offsets[i]), int(offsets[i]) + int(sizes[i])
        if start == end:
            ids[i] = next_id
            next_id += 1
            continue
        if component < 0 or start >= reach:
            component = next_id
            next_id += 1
            reach = end
        else:
            reach = max(reach, end)
        ids[i] = component
    return ids


def _lifetime(spec: Any, index: int) -> List[int]:
    lifetime = getattr(spec, "lifetime", None)
    if lifetime is None or lifetime[0] is None or lifetime[1] is None:
        raise memplan.InputError(
            f"specs[{index}]: TensorSpec has no lifetime (run ExecuTorch's "
            "update_all_tensors_lifetime first)",
            index=index,
            field="lifetime",
        )
    return [int(lifetime[0]), int(lifetime[1])]


def _plan(
    options: _Options,
    reports: "deque[List[ArenaReport]]",
    alignment: int,
    specs: Iterable[Any],
    graph_module: Any,
    graph_signature: Any,
    extra_padding: int = 0,
) -> Any:
    from executorch.exir.memory_planning import MemoryAlgoResult, SpecAllocResult

    _warn_accumulating_kernels(graph_module)
    result = MemoryAlgoResult({}, [])
    arenas: Dict[int, List[Any]] = defaultdict(list)
    lifetimes: Dict[int, List[List[int]]] = defaultdict(list)
    aliases: List[Any] = []
    for index, spec in enumerate(specs):
        mem_id = 1 if spec.mem_id is None else int(spec.mem_id)
        result.spec_dict[spec] = SpecAllocResult(mem_id, 0, 0)
        spec.realign(alignment)
        if spec.storage_base is not None:
            aliases.append(spec)
            continue
        arenas[mem_id].append(spec)
        lifetimes[mem_id].append(_lifetime(spec, index))
    if not arenas:
        result.bufsizes = [0, 0]
        reports.append([])
        return result

    arena_starts = getattr(graph_module, "input_mem_buffer_sizes", None) or []
    if options.pools is not None:
        found_reports: List[ArenaReport] = []
        result.bufsizes = _plan_pools(
            options, found_reports, arenas, lifetimes, alignment, arena_starts, extra_padding, result
        )
        _place_aliases(aliases, result)
        reports.append(found_reports)
        return result
    bufsizes = [0] * (max(arenas) + 1)
    found: List[ArenaReport] = []
    for mem_id in sorted(arenas):
        tensors = arenas[mem_id]
        start = int(arena_starts[mem_id]) if len(arena_starts) > mem_id else 0
        sizes = [int(t.allocated_memory) for t in tensors]
        solved = memplan.solve(
            sizes,
            [lt[0] for lt in lifetimes[mem_id]],
            [lt[1] for lt in lifetimes[mem_id]],
            alignments=alignment,
            lifetimes="inclusive",
            solver=options.solver,
            time_limit=options.time_limit,
            seed=options.seed,
            **options.extra,
        )
        offsets = solved.offsets.tolist()
        objects = _storage_objects(offsets, sizes)
        for tensor, offset, obj in zip(tensors, offsets, objects):
            alloc = result.spec_dict[tensor]
            alloc.mem_offset = start + offset
            alloc.mem_obj_id = obj
        bufsizes[mem_id] = start + solved.makespan + extra_padding
        found.append(
            ArenaReport(
                mem_id=mem_id,
                tensors=len(tensors),
                makespan=solved.makespan,
                max_load=solved.max_load,
                optimal=solved.optimal,
                solver=solved.solver,
                seconds=solved.seconds,
            )
        )
    _place_aliases(aliases, result)
    result.bufsizes = bufsizes
    reports.append(found)
    return result


def _plan_pools(
    options: _Options,
    found: List[ArenaReport],
    arenas: Dict[int, List[Any]],
    lifetimes: Dict[int, List[List[int]]],
    alignment: int,
    arena_starts: Sequence[int],
    extra_padding: int,
    result: Any,
) -> List[int]:
    """Plans every tensor of ``arenas`` into the pools of ``options``
    (tensors whose spec had a ``mem_id`` pinned to it; the ones without,
    gathered under arena 1 by ``_plan``, free); returns ``bufsizes``."""
    assert options.pools is not None
    pool_ids = [mem_id for mem_id, _ in options.pools]
    tensors: List[Any] = []
    spans: List[List[int]] = []
    for mem_id in sorted(arenas):
        tensors.extend(arenas[mem_id])
        spans.extend(lifetimes[mem_id])
    pins: List[Optional[str]] = []
    for t in tensors:
        if t.mem_id is None:
            pins.append(None)
        elif int(t.mem_id) in pool_ids:
            pins.append(str(int(t.mem_id)))
        else:
            raise memplan.InputError(
                f"a TensorSpec has mem_id {t.mem_id}, which is not among the pools {pool_ids}",
                field="mem_id",
            )
    pools = []
    for mem_id, capacity in options.pools:
        start = int(arena_starts[mem_id]) if len(arena_starts) > mem_id else 0
        room = int(capacity) - start - extra_padding
        if room <= 0:
            raise memplan.InputError(
                f"arena {mem_id}: capacity {capacity} leaves no room after its start "
                f"{start} and extra_padding {extra_padding}",
                field="pools",
            )
        pools.append((str(mem_id), room, alignment))
    sizes = [int(t.allocated_memory) for t in tensors]
    problem = memplan.Problem(
        sizes,
        [lt[0] for lt in spans],
        [lt[1] for lt in spans],
        alignments=alignment,
        lifetimes="inclusive",
    )
    solved = problem.solve_pools(
        pools,
        pins=pins,
        strategy=options.pool_strategy,
        time_limit=options.time_limit,
        seed=options.seed,
    )
    where = solved.pools.tolist()
    offsets = solved.offsets.tolist()
    bufsizes = [0] * (max(pool_ids) + 1)
    for k, (mem_id, _) in enumerate(options.pools):
        start = int(arena_starts[mem_id]) if len(arena_starts) > mem_id else 0
        members = [i for i, p in enumerate(where) if p == k]
        usage = solved.usage[k]
        objects = _storage_objects([offsets[i] for i in members], [sizes[i] for i in members])
        for i, obj in zip(members, objects):
            alloc = result.spec_dict[tensors[i]]
            alloc.mem_id = mem_id
            alloc.mem_offset = start + offsets[i]
            alloc.mem_obj_id = obj
        if members:
            bufsizes[mem_id] = start + usage["makespan"] + extra_padding
            arena = memplan.Problem(
                [sizes[i] for i in members],
                [spans[i][0] for i in members],
                [spans[i][1] for i in members],
                lifetimes="inclusive",
            )
            found.append(
                ArenaReport(
                    mem_id=mem_id,
                    tensors=len(members),
                    makespan=usage["makespan"],
                    max_load=arena.max_load,
                    optimal=usage["makespan"] == arena.max_load,
                    solver=f"pools/{solved.strategy}",
                    seconds=solved.seconds,
                )
            )
    if len(bufsizes) < 2:
        bufsizes.append(0)
    return bufsizes


def _place_aliases(aliases: List[Any], result: Any) -> None:
    """Places each storage-sharing tensor at its base's offset plus
    ``storage_base_offset``, in its base's arena (bases first, in chains)."""
    placed = {spec for spec in result.spec_dict if spec.storage_base is None}
    remaining = aliases
    while remaining:
        waiting = []
        for spec in remaining:
            base = spec.storage_base
            if base not in placed:
                waiting.append(spec)
                continue
            if base not in result.spec_dict:
                raise memplan.InputError(
                    "a TensorSpec's storage_base is not among the specs planned",
                    field="storage_base",
                )
            base_alloc = result.spec_dict[base]
            alloc = result.spec_dict[spec]
            offset = int(spec.storage_base_offset)
            if offset < 0 or offset + spec.allocated_memory > base.allocated_memory:
                raise memplan.InputError(
                    f"storage_base_offset {offset} + {spec.allocated_memory} bytes does "
                    f"not fit in its storage_base of {base.allocated_memory} bytes",
                    field="storage_base_offset",
                )
            if (base_alloc.mem_offset + offset) % spec.alignment != 0:
                raise memplan.InputError(
                    f"storage_base_offset {offset} misaligns the tensor (alignment "
                    f"{spec.alignment})",
                    field="storage_base_offset",
                )
            alloc.mem_id = base_alloc.mem_id
            alloc.mem_offset = base_alloc.mem_offset + offset
            alloc.mem_obj_id = base_alloc.mem_obj_id
            placed.add(spec)
        if len(waiting) == len(remaining):
            raise memplan.InputError(
                "circular or unresolvable storage_base chain among "
                f"{len(waiting)} TensorSpecs",
                field="storage_base",
            )
        remaining = waiting


def algorithm(
    *,
    solver: str = "auto",
    time_limit: Optional[float] = 1.0,
    seed: int = 0,
    pools: Optional[Sequence[Tuple[int, int]]] = None,
    pool_strategy: str = "guided",
    **options: Any,
) -> Callable[..., Any]:
    """An ExecuTorch memory-planning algorithm that plans with memplan.

    Args:
        solver, time_limit, seed, **options: as in :func:`memplan.solve`
            (``time_limit`` applies to each arena of each graph).
        pools: ``(mem_id, capacity)`` arenas with capacities, fastest
            first: the tensors are shared out among them (see the module
            notes); ``solver`` and ``**options`` are then not used.
        pool_strategy: ``"guided"`` or ``"fastest-first"`` (with
            ``pools``).

    Returns:
        ``algo(alignment, specs, graph_module, graph_signature,
        extra_padding=0) -> MemoryAlgoResult``, named ``memplan``, for
        ``MemoryPlanningAlgorithmSuite(algo_list=[...])``. Its attribute
        ``reports`` lists, for each of the latest 256 calls, an
        :class:`ArenaReport` per arena.
    """
    # Refuse bad options now rather than in the middle of a compilation.
    memplan.solve([1], [0], [1], solver=solver, time_limit=0.0, seed=seed, **options)
    if pools is not None:
        pools = [(int(m), int(c)) for m, c in pools]
        if not pools or any(m < 1 for m, _ in pools):
            raise memplan.InputError(
                "pools: expected (mem_id, capacity) pairs with mem_id >= 1 (0 holds constants)",
                field="pools",
            )
        # Refuse bad pools and strategies now too.
        memplan.solve_pools([1], [0], [1], [(str(m), c) for m, c in pools], strategy=pool_strategy, time_limit=0.0)
    settings = _Options(
        solver=solver,
        time_limit=time_limit,
        seed=seed,
        extra=options,
        pools=None if pools is None else list(pools),
        pool_strategy=pool_strategy,
    )
    # The latest calls' reports (a compiler may plan many graphs).
    reports: "deque[List[ArenaReport]]" = deque(maxlen=256)

    def memplan_algorithm(
        alignment: int,
        specs: Iterable[Any],
        graph_module: Any,
        graph_signature: Any,
        extra_padding: int = 0,
    ) -> Any:
        return _plan(
            settings,
            reports,
            alignment,
            specs,
            graph_module,
            graph_signature,
            extra_padding,
        )

    memplan_algorithm.__name__ = "memplan"
    memplan_algorithm.__qualname__ = "memplan"
    memplan_algorithm.reports = reports  # type: ignore[attr-defined]
    return memplan_algorithm


#: The algorithm with memplan's defaults (``auto``, 1 s per arena).
memplan_algorithm = algorithm()


def memory_planning_pass(
    algo: Optional[Callable[..., Any]] = None, **pass_options: Any
) -> Any:
    """ExecuTorch's ``MemoryPlanningPass`` running ``algo`` (default:
    :data:`memplan_algorithm`) in a ``MemoryPlanningAlgorithmSuite``;
    ``pass_options`` go to the pass (``alloc_graph_input``...)."""
    from executorch.exir.memory_planning import MemoryPlanningAlgorithmSuite
    from executorch.exir.passes import MemoryPlanningPass

    suite = MemoryPlanningAlgorithmSuite(algo_list=[algo or memplan_algorithm])
    return MemoryPlanningPass(memory_planning_algo=suite, **pass_options)

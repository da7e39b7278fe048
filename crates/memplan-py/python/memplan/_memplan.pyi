"""Type stubs of memplan's native module (re-exported by ``memplan``)."""

from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

__version__: str
__all__ = [
    "__version__",
    "Problem",
    "ProblemStats",
    "Plan",
    "PlanStats",
    "PoolResult",
    "Result",
    "generate",
]

_IntArray = Union[Sequence[int], npt.NDArray[np.integer[Any]]]
_Path = Union[str, PathLike[str]]

SOLVERS: List[str]
ORDERS: List[str]
FITS: List[str]
PREORDERS: List[str]
LIFETIMES: List[str]
STRATEGIES: List[str]
KINDS: List[str]

@final
class ProblemStats:
    """Statistics of a problem, as ``memplan stats`` prints them."""

    @property
    def buffers(self) -> int: ...
    @property
    def max_load(self) -> int: ...
    @property
    def total_size(self) -> int: ...
    @property
    def min_size(self) -> int: ...
    @property
    def max_size(self) -> int: ...
    @property
    def time_start(self) -> int: ...
    @property
    def time_end(self) -> int: ...
    @property
    def fixed(self) -> int: ...
    @property
    def aligned(self) -> int: ...
    @property
    def zero_size(self) -> int: ...
    @property
    def gaps(self) -> int: ...

@final
class PlanStats:
    """How far a plan is from the max load."""

    @property
    def buffers(self) -> int: ...
    @property
    def max_load(self) -> int: ...
    @property
    def makespan(self) -> int: ...
    @property
    def fragmentation(self) -> int: ...
    @property
    def fragmentation_percent(self) -> float: ...

@final
class Problem:
    """Buffers (sizes, lifetimes, alignments, fixed offsets) and an optional
    capacity. Immutable."""

    def __new__(
        cls,
        sizes: _IntArray,
        starts: _IntArray,
        ends: _IntArray,
        *,
        alignments: Union[int, _IntArray, None] = None,
        offsets: Union[Sequence[Optional[int]], npt.NDArray[np.integer[Any]], None] = None,
        ids: Optional[Sequence[str]] = None,
        capacity: Optional[int] = None,
        lifetimes: Optional[str] = None,
        gaps: Optional[Sequence[Any]] = None,
        hints: Union[Sequence[Optional[int]], npt.NDArray[np.integer[Any]], None] = None,
    ) -> Problem: ...
    @staticmethod
    def from_csv(
        path: _Path, *, lifetimes: Optional[str] = None, capacity: Optional[int] = None
    ) -> Problem: ...
    def to_csv(self, path: _Path) -> None: ...
    def with_capacity(self, capacity: Optional[int]) -> Problem: ...
    def solve(
        self,
        *,
        solver: Optional[str] = None,
        time_limit: Optional[float] = None,
        effort: Optional[float] = None,
        seed: Optional[int] = None,
        order: Optional[str] = None,
        fit: Optional[str] = None,
        step_limit: Optional[int] = None,
        learned_backtracking: Optional[bool] = None,
        learned_jump: Optional[bool] = None,
        learned_threshold: Optional[int] = None,
        learned_depth_weight: Optional[int] = None,
        iterations: Optional[int] = None,
        target_fragmentation: Optional[float] = None,
        size_classes: Optional[bool] = None,
        preorders: Optional[Sequence[str]] = None,
        round_robin: Optional[bool] = None,
        rerank_parts: Optional[bool] = None,
        canonical: Optional[bool] = None,
        section_inference: Optional[bool] = None,
        effective_height: Optional[bool] = None,
        dominance: Optional[bool] = None,
        dynamic_order: Optional[bool] = None,
        decompose: Optional[bool] = None,
        hatless: Optional[bool] = None,
        exact_fill: Optional[bool] = None,
        head_start: Optional[bool] = None,
        ignore_hints: Optional[bool] = None,
        stable: Optional[bool] = None,
        stable_makespan: Optional[int] = None,
    ) -> Result: ...
    def solve_pools(
        self,
        pools: Sequence[Union[Tuple[str, int], Tuple[str, int, int]]],
        *,
        pins: Optional[Sequence[Optional[str]]] = None,
        strategy: Optional[str] = None,
        time_limit: Optional[float] = None,
        effort: Optional[float] = None,
        seed: Optional[int] = None,
        ignore_hints: Optional[bool] = None,
    ) -> PoolResult: ...
    def validate(self, offsets: _IntArray) -> None: ...
    def stats(self) -> ProblemStats: ...
    def __len__(self) -> int: ...
    @property
    def capacity(self) -> Optional[int]: ...
    @property
    def lifetimes(self) -> str: ...
    @property
    def ids(self) -> List[str]: ...
    @property
    def sizes(self) -> npt.NDArray[np.uint64]: ...
    @property
    def hints(self) -> Optional[npt.NDArray[np.int64]]: ...
    @property
    def starts(self) -> npt.NDArray[np.uint64]: ...
    @property
    def ends(self) -> npt.NDArray[np.uint64]: ...
    @property
    def alignments(self) -> npt.NDArray[np.uint64]: ...
    @property
    def fixed_offsets(self) -> List[Optional[int]]: ...
    @property
    def gaps(self) -> List[List[Tuple[int, ...]]]: ...
    @property
    def max_load(self) -> int: ...

@final
class Plan:
    """An offset for every buffer of a problem."""

    def __new__(cls, problem: Problem, offsets: _IntArray) -> Plan: ...
    @staticmethod
    def from_csv(problem: Problem, path: _Path) -> Plan: ...
    def to_csv(self, path: _Path, *, start_address: int = 0) -> None: ...
    def validate(self) -> None: ...
    def stats(self) -> PlanStats: ...
    def __len__(self) -> int: ...
    @property
    def offsets(self) -> npt.NDArray[np.uint64]: ...
    @property
    def makespan(self) -> int: ...
    @property
    def problem(self) -> Problem: ...

@final
class Result:
    """The outcome of a solve."""

    @property
    def offsets(self) -> npt.NDArray[np.uint64]: ...
    @property
    def makespan(self) -> int: ...
    @property
    def max_load(self) -> int: ...
    @property
    def lower_bound(self) -> int: ...
    @property
    def optimal(self) -> bool: ...
    @property
    def fragmentation(self) -> int: ...
    @property
    def solver(self) -> str: ...
    @property
    def seconds(self) -> float: ...
    @property
    def timed_out(self) -> bool: ...
    @property
    def stopped(self) -> Optional[str]: ...
    @property
    def counters(self) -> Dict[str, int]: ...
    @property
    def capacity(self) -> Optional[int]: ...
    @property
    def hints(self) -> int: ...
    @property
    def hints_kept(self) -> int: ...
    @property
    def plan(self) -> Plan: ...
    def to_json(self) -> str: ...

@final
class PoolResult:
    """The outcome of :meth:`Problem.solve_pools`."""

    @property
    def pools(self) -> npt.NDArray[np.uint32]: ...
    @property
    def pool_names(self) -> List[str]: ...
    @property
    def offsets(self) -> npt.NDArray[np.uint64]: ...
    @property
    def spill(self) -> List[int]: ...
    @property
    def spill_bound(self) -> List[int]: ...
    @property
    def usage(self) -> List[Dict[str, Any]]: ...
    @property
    def strategy(self) -> str: ...
    @property
    def stopped(self) -> Optional[str]: ...
    @property
    def seconds(self) -> float: ...
    @property
    def counters(self) -> Dict[str, int]: ...
    def to_json(self) -> str: ...

def generate(kind: str, buffers: int, *, seed: int = 0) -> Problem: ...

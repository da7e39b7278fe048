"""Exceptions raised by memplan (defined in Python so that they can subclass
``ValueError``; the extension module raises them)."""

from __future__ import annotations

from typing import Dict, Optional, Tuple


class Error(Exception):
    """Base class of every memplan exception."""


class InputError(Error, ValueError):
    """A problem or plan refused: names the buffer index (array input) or the
    file and line (CSV input), and the field.

    Attributes:
        index: 0-based buffer index, for array input (else ``None``).
        field: the field (``"size"``, ``"end"``, ``"offset"``...) or CSV
            column at fault, if any.
        path: the file, for CSV input (else ``None``).
        line: 1-based line in ``path`` (the header is line 1), if any.
    """

    def __init__(
        self,
        message: str,
        *,
        index: Optional[int] = None,
        field: Optional[str] = None,
        path: Optional[str] = None,
        line: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.index = index
        self.field = field
        self.path = path
        self.line = line


class InvalidPlan(Error, ValueError):
    """A plan that breaks the problem: two live buffers share an address, an
    offset is misaligned, a fixed buffer moved, or a buffer ends past the
    capacity.

    Attributes:
        buffers: the 0-based indices of the buffers at fault (one, or the
            overlapping pair).
    """

    def __init__(self, message: str, *, buffers: Tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.buffers = buffers


class NotFound(Error):
    """No plan within the capacity was found.

    Attributes:
        capacity: the capacity asked for.
        proven_infeasible: True when no plan can fit (e.g. the max load
            exceeds the capacity); False when a plan may still exist (time or
            step limit, or a heuristic's plan did not fit).
        reason: the reason in words.
        best_makespan: the lowest makespan of a plan seen (above the
            capacity), if any.
        max_load: the problem's max load.
        solver: the solver that ran.
        seconds: time spent.
        counters: the solver's effort counters.
        report: the report as one JSON object, the same as ``memplan solve
            --json`` prints (``"status": "not_found"``).
    """

    def __init__(
        self,
        message: str,
        *,
        capacity: int,
        proven_infeasible: bool,
        reason: str,
        best_makespan: Optional[int],
        max_load: int,
        solver: str,
        seconds: float,
        counters: Dict[str, int],
        report: str = "{}",
    ) -> None:
        super().__init__(message)
        self.report = report
        self.capacity = capacity
        self.proven_infeasible = proven_infeasible
        self.reason = reason
        self.best_makespan = best_makespan
        self.max_load = max_load
        self.solver = solver
        self.seconds = seconds
        self.counters = counters


class PoolsNotFound(Error):
    """The buffers could not all be placed in the pools
    (:meth:`Problem.solve_pools`).

    Attributes:
        proven_infeasible: True when no assignment exists (e.g. a pinned
            buffer larger than its pool); False when one may exist.
        reason: the reason in words.
    """

    def __init__(self, message: str, *, proven_infeasible: bool, reason: str) -> None:
        super().__init__(message)
        self.proven_infeasible = proven_infeasible
        self.reason = reason


class InternalError(Error, RuntimeError):
    """A bug in memplan: a solver panicked or returned a plan the validator
    refused. Please report it."""

"""memplan's plans inside TensorFlow Lite Micro models.

TensorFlow Lite Micro (TFLM) plans its tensor arena with its own greedy
planner, but honours offsets planned offline and stored in the model: a
metadata entry named ``OfflineMemoryAllocation`` whose buffer holds
little-endian 32-bit integers ``[version (1), subgraph (0), number of
tensors, offset of tensor 0, offset of tensor 1, ...]``, -1 leaving a tensor
to the online planner. :func:`plan_model` rewrites a ``.tflite`` model so:

    import memplan.tflite

    planned, report = memplan.tflite.plan_model(open("model.tflite", "rb").read())
    open("model.planned.tflite", "wb").write(planned)
    print(report.region_before, "->", report.region_after)

or from the shell::

    python -m memplan.tflite model.tflite -o model.planned.tflite [--json]

How the tensors are read (rules checked against TFLM's interpreter: the
planned region that TFLM's greedy planner makes from them equals, to the
byte, the "Arena allocation head" it reports, on every model tested):

- planned: every tensor of the subgraph without data in the model (not a
  constant), not a variable (TFLM keeps variables in the persistent part of
  the arena) and not empty, which the operators or the graph use;
- its size is its bytes rounded up to 16, and offsets are multiples of 16
  (TFLM's buffer alignment);
- its lifetime is ``[first, last]`` in operator indices, both inclusive:
  graph inputs are created at operator 0; an operator's outputs are created
  at that operator; a tensor is used until the last operator that reads it;
  graph outputs live until the last operator.

Kernels' scratch buffers (asked for in ``Prepare``) are planned by TFLM in
the same region, online, after the offline tensors. memplan measures them:
it runs each operator alone, as a one-operator model, in TFLM's interpreter,
and takes the planned region beyond that operator's tensors. Each
operator's scratch bytes are planned with the tensors as one buffer alive
during that operator, and left out of the offline plan: the room memplan
keeps for them is a gap, at that operator, at least as large as what it
needs, which TFLM's first-fit placement of the online buffers finds (it
places each at the lowest gap that fits). Persistent allocations (operator
data, tensor structs, variables) come from the other end of the arena and
do not depend on the plan.

The rewritten model is never worse than TFLM's own plan: when memplan's
region (measured in TFLM) is larger, :func:`plan_model` writes TFLM's greedy
plan, replayed (largest first, equal sizes the later buffer first), instead.

:func:`plan_model` runs the models in TFLM's interpreter (to check that TFLM
can run them, measure the scratch buffers and the regions), so it needs the
``tflite-micro`` package (``pip install 'memplan[tflite]'``), which also
ships TFLite's flatbuffer schema that this module reads and writes with; it
is imported only when this module's functions run. The interpreter always
runs in a child process: a broken model or a too-small arena can abort the
process that holds it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import warnings
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import memplan

__all__ = [
    "METADATA_NAME",
    "ALIGNMENT",
    "Lifetime",
    "Report",
    "UnsupportedModel",
    "lifetimes",
    "main",
    "offline_offsets",
    "plan_model",
    "run",
    "smallest_arena",
]

#: The metadata entry TFLM reads offline offsets from.
METADATA_NAME = "OfflineMemoryAllocation"
#: TFLM's arena buffer alignment: sizes are rounded up to it and offsets
#: are multiples of it.
ALIGNMENT = 16

# Bytes per element of the tensor types memplan plans (TFLite's
# ``TensorType`` values).
_ELEMENT_BYTES = {
    0: 4,  # FLOAT32
    1: 2,  # FLOAT16
    2: 4,  # INT32
    3: 1,  # UINT8
    4: 8,  # INT64
    6: 1,  # BOOL
    7: 2,  # INT16
    8: 8,  # COMPLEX64
    9: 1,  # INT8
    10: 8,  # FLOAT64
    11: 16,  # COMPLEX128
    12: 8,  # UINT64
    15: 4,  # UINT32
    16: 2,  # UINT16
    18: 2,  # BFLOAT16
}


class UnsupportedModel(memplan.InputError):
    """A model :func:`plan_model` refuses (several subgraphs, one TFLM cannot
    run, one with an offline plan already, not a TFLite model...); the
    message says what is wrong."""


@dataclass
class Lifetime:
    """A planned tensor."""

    #: Index of the tensor in the subgraph.
    tensor: int
    #: Its name in the model.
    name: str
    #: Bytes in the arena: its size rounded up to :data:`ALIGNMENT`.
    size: int
    #: First and last operator index during which it is alive (inclusive).
    first: int
    last: int


@dataclass
class Report:
    """What :func:`plan_model` did (``asdict`` gives the ``--json`` object)."""

    #: Tensors given an offline offset.
    tensors: int
    #: Operators of the subgraph.
    operators: int
    #: Scratch bytes each operator asked TFLM for (operator index: bytes;
    #: operators with none left out), measured by running it alone.
    scratch: Dict[int, int]
    #: TFLM's planned region ("Arena allocation head") for the input model.
    region_before: int
    #: The same for the rewritten model.
    region_after: int
    #: TFLM's greedy planner replayed by memplan on the lifetimes it read:
    #: equals ``region_before`` when those lifetimes are TFLM's (for an
    #: input model without an offline plan).
    greedy_region: int
    #: The most bytes of tensors and scratch alive during one operator: no
    #: plan can be smaller.
    max_load: int
    #: memplan's plan of the tensors and the scratch room.
    makespan: int
    #: True when ``makespan`` is proven optimal (it is the max load, or the
    #: search proved it).
    optimal: bool
    #: The memplan solver that found the plan.
    solver: str
    #: Seconds spent by memplan's solver.
    seconds: float
    #: True when the input's offline plan was replaced (``replace=True``).
    replaced: bool
    #: The offline offset of every tensor (-1: TFLM plans it, or it needs
    #: no arena).
    offsets: List[int] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        data["scratch"] = {str(k): v for k, v in self.scratch.items()}
        return data


def _schema() -> Any:
    try:
        from tflite_micro.tensorflow.lite.micro.python import schema_py_generated
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "memplan.tflite needs the tflite-micro package (TFLM's interpreter and "
            "TFLite's flatbuffer schema): pip install 'memplan[tflite]'"
        ) from exc
    return schema_py_generated


def _read(model: bytes) -> Any:
    """The model as TFLite's object API (``ModelT``)."""
    fb = _schema()
    if not isinstance(model, (bytes, bytearray, memoryview)):
        raise TypeError(f"model: expected bytes, got {type(model).__name__}")
    data = bytes(model)
    if len(data) < 8 or data[4:8] != b"TFL3":
        raise UnsupportedModel(
            "not a TFLite model: the flatbuffer's file identifier is not 'TFL3'", field="model"
        )
    try:
        return fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(data, 0))
    except Exception as exc:
        raise UnsupportedModel(f"not a readable TFLite flatbuffer: {exc}", field="model") from exc


class _AlignedBuilder:
    """Makes flatbuffers' Builder put every byte vector (buffers' data) at a
    multiple of 16, as TFLite's converter does (kernels may read weights
    as wider words)."""

    @staticmethod
    def make() -> Any:
        import flatbuffers

        class Builder(flatbuffers.Builder):  # type: ignore[misc]
            def CreateNumpyVector(self, x: Any) -> int:
                if x.dtype.itemsize != 1:
                    return super().CreateNumpyVector(x)
                payload = x.tobytes(order="C")
                self.StartVector(1, len(payload), ALIGNMENT)
                self.head = self.head - len(payload)
                self.Bytes[self.head : self.head + len(payload)] = payload
                self.vectorNumElems = len(payload)
                return self.EndVector()

        return Builder(1024)


def _write(model: Any) -> bytes:
    builder = _AlignedBuilder.make()
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _has_data(model: Any, tensor: Any) -> bool:
    buffer = model.buffers[tensor.buffer] if 0 <= tensor.buffer < len(model.buffers) else None
    if buffer is None:
        return False
    return (buffer.data is not None and len(buffer.data) > 0) or bool(buffer.size)


def _tensor_bytes(tensor: Any, index: int) -> int:
    shape = [] if tensor.shape is None else [int(d) for d in tensor.shape]
    if any(d < 0 for d in shape):
        raise UnsupportedModel(
            f"tensor {index} ({_name(tensor)}) has a dynamic shape {shape}; TFLM needs static shapes",
            index=index,
            field="shape",
        )
    if tensor.type not in _ELEMENT_BYTES:
        raise UnsupportedModel(
            f"tensor {index} ({_name(tensor)}) has type {tensor.type} (TFLite TensorType), "
            "which memplan.tflite does not plan",
            index=index,
            field="type",
        )
    return int(np.prod(shape, dtype=np.int64)) * _ELEMENT_BYTES[tensor.type]


def _name(tensor: Any) -> str:
    name = tensor.name
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)


def _aligned(n: int) -> int:
    return -(-n // ALIGNMENT) * ALIGNMENT


def _metadata_name(entry: Any) -> str:
    name = entry.name
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name or "")


def _check(model: Any, replace: bool) -> None:
    """Refuses what cannot be planned safely (before running anything)."""
    subgraphs = model.subgraphs or []
    if len(subgraphs) != 1:
        raise UnsupportedModel(
            f"the model has {len(subgraphs)} subgraphs; memplan.tflite plans models with one "
            "subgraph only (control flow such as IF or WHILE makes several)",
            field="subgraphs",
        )
    if any(_metadata_name(m) == METADATA_NAME for m in model.metadata or []) and not replace:
        raise UnsupportedModel(
            f"the model already has an offline plan (metadata {METADATA_NAME!r}); "
            "pass replace=True (--replace) to plan it anew",
            field="metadata",
        )
    for index, buffer in enumerate(model.buffers or []):
        if buffer.offset or buffer.size:
            raise UnsupportedModel(
                f"buffer {index} is stored outside the flatbuffer (offset {buffer.offset}); "
                "memplan.tflite rewrites models whose data is inside it",
                index=index,
                field="buffers",
            )
    for k, op in enumerate(subgraphs[0].operators or []):
        if op.intermediates is not None and len(op.intermediates):
            raise UnsupportedModel(
                f"operator {k} has intermediate tensors (as LSTM kernels do), which "
                "memplan.tflite does not plan",
                index=k,
                field="intermediates",
            )


def lifetimes(model: Any) -> List[Lifetime]:
    """The tensors TFLM plans in its arena, with their sizes and lifetimes
    (see the module notes), in tensor order. ``model`` is the ``.tflite``
    bytes or TFLite's ``ModelT``."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        model = _read(bytes(model))
    graph = model.subgraphs[0]
    tensors = graph.tensors or []
    operators = graph.operators or []
    first: Dict[int, int] = {}
    last: Dict[int, int] = {}

    def planned(i: int) -> bool:
        return i >= 0 and not _has_data(model, tensors[i]) and not tensors[i].isVariable

    for i in _indices(graph.inputs):
        if planned(i):
            first[i] = 0
            last[i] = max(last.get(i, 0), 0)
    for k, op in enumerate(operators):
        for i in _indices(op.inputs):
            if planned(i):
                first.setdefault(i, k)
                last[i] = max(last.get(i, k), k)
        for i in _indices(op.outputs):
            if planned(i):
                first.setdefault(i, k)
                last[i] = max(last.get(i, k), k)
    end = max(len(operators) - 1, 0)
    for i in _indices(graph.outputs):
        if planned(i):
            first.setdefault(i, end)
            last[i] = end
    found = []
    for i in sorted(first):
        size = _tensor_bytes(tensors[i], i)
        if size == 0:
            continue
        found.append(Lifetime(i, _name(tensors[i]), _aligned(size), first[i], last[i]))
    return found


def _greedy_plan(sizes: Sequence[int], firsts: Sequence[int], lasts: Sequence[int]) -> Tuple[List[int], int]:
    """TFLM's greedy planner on buffers without offline offsets: by size,
    largest first, equal sizes the later buffer first (the tensors in index
    order, then the scratch buffers), each at the lowest offset where it
    overlaps no placed buffer alive at the same time. Returns the offsets
    and the top (the planned region).

    The order of equal sizes was found by experiment: taken in index order
    instead, the replay misses TFLM's planned region of MobileNetV1 0.25 by
    9,216 bytes; taken later first, it equals TFLM's on every model of the
    tests and of ``bench/tflm_models.py``."""
    order = sorted(range(len(sizes)), key=lambda j: (-sizes[j], -j))
    placed: List[Tuple[int, int, int, int]] = []  # offset, size, first, last
    offsets = [0] * len(sizes)
    top = 0
    for j in order:
        size, lo, hi = sizes[j], firsts[j], lasts[j]
        live = sorted((p for p in placed if not (p[2] > hi or p[3] < lo)), key=lambda p: p[0])
        candidate = 0
        for offset, other, _, _ in live:
            if offset >= candidate + size:
                break
            candidate = max(candidate, offset + other)
        placed.append((candidate, size, lo, hi))
        offsets[j] = candidate
        top = max(top, candidate + size)
    return offsets, top


# --- TFLM's interpreter, in a child process -----------------------------------


def _worker(args: Sequence[str], timeout: Optional[float] = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memplan._tflm_worker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _probe(models: Sequence[bytes], arena: int) -> List[Dict[str, Any]]:
    """Allocates and invokes each model in TFLM (one child process for all,
    a new one after a crash); returns each one's arena figures or error."""
    results: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="memplan-tflm-") as tmp:
        paths = []
        for n, data in enumerate(models):
            path = os.path.join(tmp, f"m{n}.tflite")
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        while len(results) < len(paths):
            done = _worker(["probe", str(arena), *paths[len(results) :]])
            lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
            results.extend(lines)
            if len(results) < len(paths):  # the child died on the next model
                detail = " ".join((done.stderr or "").strip().splitlines()[-3:])
                if done.returncode < 0:
                    try:
                        how = f"was killed by {signal.Signals(-done.returncode).name}"
                    except ValueError:
                        how = f"was killed by signal {-done.returncode}"
                else:
                    how = f"exited with status {done.returncode}"
                results.append(
                    {
                        "ok": False,
                        "error": f"TFLM's interpreter aborted: its process {how} {detail}".strip(),
                        "head": None,
                        "tail": None,
                        "total": None,
                    }
                )
    return results


def _generous_arena(model: Any) -> int:
    """An arena far above what the model needs: 8 times all its non-constant
    tensors (scratch buffers can be a few times a tensor) plus 1 MiB."""
    graph = model.subgraphs[0]
    total = 0
    for i, t in enumerate(graph.tensors or []):
        if not _has_data(model, t) and t.type in _ELEMENT_BYTES:
            shape = [] if t.shape is None else [max(int(d), 1) for d in t.shape]
            total += int(np.prod(shape, dtype=np.int64)) * _ELEMENT_BYTES[t.type]
    return 8 * total + (1 << 20)


def _indices(values: Any) -> List[int]:
    """A flatbuffer index vector (``None``, a list or a NumPy array) as ints."""
    return [] if values is None else [int(v) for v in values]


def _one_operator_model(model: Any, k: int) -> bytes:
    """Operator ``k`` alone: its tensors (and their buffers) only, its
    non-constant inputs as graph inputs and its outputs as graph outputs."""
    fb = _schema()
    graph = model.subgraphs[0]
    op = graph.operators[k]
    inputs, outputs = _indices(op.inputs), _indices(op.outputs)
    used = [i for i in dict.fromkeys([*inputs, *outputs]) if i >= 0]
    remap = {i: j for j, i in enumerate(used)}
    sub = fb.ModelT()
    sub.version = model.version
    sub.operatorCodes = model.operatorCodes
    sub.description = model.description
    sub.buffers = [fb.BufferT()]
    tensors = []
    for i in used:
        t = graph.tensors[i]
        copy = fb.TensorT()
        copy.__dict__.update(t.__dict__)
        if _has_data(model, t):
            sub.buffers.append(model.buffers[t.buffer])
            copy.buffer = len(sub.buffers) - 1
        else:
            copy.buffer = 0
        tensors.append(copy)
    new_op = fb.OperatorT()
    new_op.__dict__.update(op.__dict__)
    new_op.inputs = [remap[i] if i >= 0 else -1 for i in inputs]
    new_op.outputs = [remap[i] for i in outputs if i >= 0]
    g = fb.SubGraphT()
    g.tensors = tensors
    g.operators = [new_op]
    g.inputs = [
        remap[i]
        for i in used
        if i in inputs and not _has_data(model, graph.tensors[i]) and not graph.tensors[i].isVariable
    ]
    g.outputs = list(new_op.outputs)
    g.name = graph.name
    sub.subgraphs = [g]
    return _write(sub)


def _scratch(model: Any, planned: Dict[int, int], arena: int) -> Dict[int, int]:
    """Scratch bytes per operator: the planned region of the operator run
    alone, less its planned tensors (each rounded up to 16)."""
    graph = model.subgraphs[0]
    models = [_one_operator_model(model, k) for k in range(len(graph.operators or []))]
    found: Dict[int, int] = {}
    for k, result in enumerate(_probe(models, arena)):
        if not result["ok"]:
            raise UnsupportedModel(
                f"operator {k} does not run alone in TFLM's interpreter, so its scratch "
                f"buffers cannot be measured: {result['error']}",
                index=k,
                field="operators",
            )
        op = graph.operators[k]
        own = {i for i in [*_indices(op.inputs), *_indices(op.outputs)] if i in planned}
        extra = int(result["head"]) - sum(planned[i] for i in own)
        if extra > 0:
            found[k] = extra
    return found


def offline_offsets(model: bytes) -> Optional[List[int]]:
    """The ``OfflineMemoryAllocation`` offsets of a model (one per tensor,
    -1 for online), or ``None`` when it has none."""
    m = _read(model)
    for entry in m.metadata or []:
        if _metadata_name(entry) == METADATA_NAME:
            data = np.asarray(m.buffers[entry.buffer].data, dtype=np.uint8).tobytes()
            values = np.frombuffer(data, dtype="<i4").tolist()
            return values[3 : 3 + values[2]]
    return None


def _set_offsets(model: Any, offsets: Sequence[int]) -> None:
    fb = _schema()
    values = np.array([1, 0, len(offsets), *offsets], dtype="<i4")
    payload = np.frombuffer(values.tobytes(), dtype=np.uint8).copy()
    for entry in model.metadata or []:
        if _metadata_name(entry) == METADATA_NAME:
            model.buffers[entry.buffer].data = payload
            return
    buffer = fb.BufferT()
    buffer.data = payload
    model.buffers.append(buffer)
    entry = fb.MetadataT()
    entry.name = METADATA_NAME
    entry.buffer = len(model.buffers) - 1
    model.metadata = [*(model.metadata or []), entry]


def _rewrite(model: Any, found: Sequence[Lifetime], plan: Sequence[int], arena: int) -> Tuple[bytes, Dict[str, Any]]:
    """The model with the plan's offsets as its offline plan, and its
    arena figures in TFLM."""
    offsets = [-1] * len(model.subgraphs[0].tensors or [])
    for t, offset in zip(found, plan):
        offsets[t.tensor] = int(offset)
    _set_offsets(model, offsets)
    rewritten = _write(model)
    after = _probe([rewritten], arena)[0]
    if not after["ok"]:  # pragma: no cover - a bug in the rewriting
        raise memplan.InternalError(f"TFLM's interpreter rejects the rewritten model: {after['error']}")
    return rewritten, after


def plan_model(
    model: bytes,
    *,
    solver: str = "auto",
    time_limit: Optional[float] = None,
    seed: int = 0,
    replace: bool = False,
    **options: Any,
) -> Tuple[bytes, Report]:
    """Plans the arena of a TFLite model for TFLM; returns the rewritten
    model (with an ``OfflineMemoryAllocation`` metadata entry) and a
    :class:`Report`.

    Args:
        model: the ``.tflite`` flatbuffer.
        solver, time_limit, seed, **options: as in :func:`memplan.solve`
            (``time_limit=None``: ``auto``'s work budget bounds the solve,
            so the plan does not depend on the machine's load).
        replace: plan a model that already has an offline plan anew (its
            offsets are ignored).

    Raises:
        UnsupportedModel: several subgraphs, a model that already has an
            offline plan (without ``replace``), one TFLM's interpreter
            cannot allocate or run (its message is quoted), an operator
            with intermediate tensors, data stored outside the flatbuffer,
            a dynamic shape or a tensor type memplan does not size.
        ImportError: tflite-micro is not installed.
    """
    parsed = _read(model)
    _check(parsed, replace)
    replaced = any(_metadata_name(m) == METADATA_NAME for m in parsed.metadata or [])
    if replaced:  # measure TFLM's own plan: every tensor online (-1)
        _set_offsets(parsed, [-1] * len(parsed.subgraphs[0].tensors or []))
        original = _write(parsed)
    else:
        original = bytes(model)
    arena = _generous_arena(parsed)
    before = _probe([original], arena)[0]
    if not before["ok"]:
        raise UnsupportedModel(
            f"TFLM's interpreter cannot run the model: {before['error'] or 'no reason given'}",
            field="model",
        )
    found = lifetimes(parsed)
    planned = {t.tensor: t.size for t in found}
    scratch = _scratch(parsed, planned, arena)
    operators = len(parsed.subgraphs[0].operators or [])
    sizes = [t.size for t in found] + [_aligned(s) for s in scratch.values()]
    firsts = [t.first for t in found] + list(scratch)
    lasts = [t.last for t in found] + list(scratch)
    greedy_offsets, greedy_region = _greedy_plan(sizes, firsts, lasts)
    if greedy_region != int(before["head"]):
        warnings.warn(
            f"TFLM's planned region is {before['head']} bytes, but its greedy planner replayed on "
            f"the lifetimes memplan read gives {greedy_region}: the model may hold tensors whose "
            "lifetimes TFLM reads otherwise; check the rewritten model's outputs",
            RuntimeWarning,
            stacklevel=2,
        )
    if sizes:
        result = memplan.solve(
            sizes,
            firsts,
            lasts,
            alignments=ALIGNMENT,
            lifetimes="inclusive",
            solver=solver,
            time_limit=time_limit,
            seed=seed,
            **options,
        )
        plan = result.offsets.tolist()
        makespan, max_load, optimal, used = result.makespan, result.max_load, result.optimal, result.solver
        seconds = result.seconds
    else:
        plan, makespan, max_load, optimal, used, seconds = [], 0, 0, True, solver, 0.0
    rewritten, after = _rewrite(parsed, found, plan, arena)
    if int(after["head"]) > int(before["head"]) or makespan > greedy_region:
        # Never worse than TFLM: its own greedy plan, written offline.
        rewritten, after = _rewrite(parsed, found, greedy_offsets, arena)
        makespan, used = greedy_region, "tflm-greedy (memplan's plan was not smaller)"
        optimal = makespan == max_load
        plan = greedy_offsets
    offsets = [-1] * len(parsed.subgraphs[0].tensors or [])
    for t, offset in zip(found, plan):
        offsets[t.tensor] = int(offset)
    report = Report(
        tensors=len(found),
        operators=operators,
        scratch=scratch,
        region_before=int(before["head"]),
        region_after=int(after["head"]),
        greedy_region=greedy_region,
        max_load=int(max_load),
        makespan=int(makespan),
        optimal=bool(optimal),
        solver=str(used),
        seconds=float(seconds),
        replaced=replaced,
        offsets=offsets,
    )
    return rewritten, report


# --- Running and measuring ----------------------------------------------------


def run(model: bytes, inputs: Optional[Sequence[Any]] = None, *, arena_size: Optional[int] = None) -> List[np.ndarray]:
    """Runs the model once in TFLM's interpreter (in a child process);
    returns its outputs. ``inputs``: one array per graph input (default:
    zeros); ``arena_size``: default a generous one.

    Raises:
        RuntimeError: the model does not allocate or run with that arena.
    """
    with tempfile.TemporaryDirectory(prefix="memplan-tflm-") as tmp:
        path = os.path.join(tmp, "model.tflite")
        with open(path, "wb") as f:
            f.write(model)
        np.savez(os.path.join(tmp, "in.npz"), **{f"in{i}": np.asarray(x) for i, x in enumerate(inputs or [])})
        arena = arena_size if arena_size is not None else _generous_arena(_read(model))
        done = _worker(["run", str(arena), path, os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")])
        lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
        if not lines or not lines[0]["ok"]:
            why = lines[0]["error"] if lines else f"the process ended (exit {done.returncode})"
            raise RuntimeError(f"TFLM could not run the model with a {arena}-byte arena: {why}")
        with np.load(os.path.join(tmp, "out.npz")) as data:
            return [data[f"out{i}"] for i in range(len(data.files))]


def smallest_arena(model: bytes, *, lo: int = 0, hi: Optional[int] = None, isolated: bool = False) -> int:
    """The smallest arena (bytes) with which TFLM's interpreter allocates
    and runs the model (on zero inputs), by bisection; each trial builds a
    fresh interpreter. ``lo``: a size known to fail (default 0); ``hi``: one
    known to work (default: a generous arena, checked).

    ``isolated=True`` runs every trial in a child process of its own (about
    half a second each: Python and TFLM start anew); by default one child
    process runs the trials in turn, and a trial that ends it (an abort)
    counts as a failure and the search goes on in a new one."""
    with tempfile.TemporaryDirectory(prefix="memplan-tflm-") as tmp:
        path = os.path.join(tmp, "model.tflite")
        with open(path, "wb") as f:
            f.write(model)
        if hi is None:
            hi = _generous_arena(_read(model))
            check = _probe([model], hi)[0]
            if not check["ok"]:
                raise RuntimeError(f"TFLM cannot run the model even with {hi} bytes: {check['error']}")
        while hi - lo > 1:
            if isolated:
                mid = (lo + hi) // 2
                done = _worker(["bisect", str(mid - 1), str(mid + 1), path])
                if f"fits {mid}" in done.stdout.splitlines():
                    hi = mid
                else:
                    lo = mid
                continue
            done = _worker(["bisect", str(lo), str(hi), path])
            trying = None
            for line in done.stdout.splitlines():
                word, _, value = line.partition(" ")
                if word == "trying":
                    trying = int(value)
                elif word == "fits":
                    hi, trying = int(value), None
                elif word == "fails":
                    lo, trying = int(value), None
                elif word == "smallest":
                    return int(value)
            if trying is None:
                raise RuntimeError(f"the bisection's process failed: {done.stderr.strip()[-500:]}")
            lo = trying  # the trial ended the process: that arena does not work
        return hi


# --- Command line ---------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m memplan.tflite",
        description=(
            "Plans the tensor arena of a TensorFlow Lite Micro model with memplan and writes "
            f"the offsets into its {METADATA_NAME} metadata. TFLM's interpreter (the "
            "tflite-micro package) checks that the model runs and measures the kernels' "
            "scratch buffers, for which the plan leaves room."
        ),
    )
    parser.add_argument("input", help="the .tflite model")
    parser.add_argument("-o", "--output", required=True, help="the rewritten model (written whole or not at all)")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--replace", action="store_true", help=f"plan a model that already has {METADATA_NAME} anew")
    parser.add_argument("--solver", default="auto", choices=memplan.SOLVERS, help="memplan's solver (default auto)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S", help="seconds (default: auto's work budget)")
    parser.add_argument("--effort", type=float, default=None, metavar="E", help="work budget, a multiple of the default")
    parser.add_argument("--seed", type=int, default=0, help="seed of the solvers' random choices (default 0)")
    return parser


def _write_whole(path: str, data: bytes) -> None:
    """Writes ``data`` to a temporary file beside ``path``, then renames it:
    ``path`` is never left partial."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".memplan-", suffix=".tflite.tmp", dir=directory)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot write {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m memplan.tflite``; returns the exit status (0, or 1 with a
    message on stderr and no output file)."""
    args = _parser().parse_args(argv)
    options: Dict[str, Any] = {}
    if args.effort is not None:
        options["effort"] = args.effort
    try:
        with open(args.input, "rb") as f:
            data = f.read()
        rewritten, report = plan_model(
            data, solver=args.solver, time_limit=args.time_limit, seed=args.seed, replace=args.replace, **options
        )
        _write_whole(args.output, rewritten)
    except (memplan.Error, OSError, ImportError) as exc:
        print(f"error: {args.input}: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_dict()))
    else:
        saved = report.region_before - report.region_after
        print(f"{args.output}: {report.tensors} tensors planned over {report.operators} operators"
              f" ({len(report.scratch)} with scratch buffers, {sum(report.scratch.values())} bytes)")
        print(f"planned region: TFLM {report.region_before} bytes -> memplan {report.region_after} bytes"
              f" ({saved:+d} saved); max load {report.max_load}")
        print(f"memplan: makespan {report.makespan}, optimal {'yes' if report.optimal else 'no'},"
              f" solver {report.solver}, {report.seconds:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""memplan.tflite: TFLM models rewritten with an ``OfflineMemoryAllocation``
plan, checked on TFLM's own interpreter: the lifetimes read reproduce TFLM's
planned region to the byte, the rewritten model runs with outputs
bit-identical to the original's and its smallest arena is never larger,
and what cannot be planned safely is refused with no output file.

Skipped, with the reason, when tflite-micro is not installed; the tests on
Keras-built models also need tensorflow (``.ci/run`` installs both in a venv
of their own from ``.ci/requirements-tflm.txt``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
import warnings
from importlib import resources
from typing import Any, List

import numpy as np
import pytest

pytest.importorskip(
    "tflite_micro", reason="tflite-micro is not installed: `pip install 'memplan[tflite]'`"
)

import memplan  # noqa: E402
import memplan.tflite as mt  # noqa: E402
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb  # noqa: E402

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench")


@pytest.fixture(scope="module")
def sine() -> bytes:
    """The float sine model shipped in the tflite-micro package: three
    FULLY_CONNECTED operators, [1, 1] -> [1, 16] -> [1, 16] -> [1, 1]."""
    return resources.files("tflite_micro.python.tflite_micro").joinpath("sine_float.tflite").read_bytes()


def edit(model: bytes, change: Any) -> bytes:
    """The model with ``change(ModelT)`` applied."""
    m = mt._read(model)
    change(m)
    return mt._write(m)


def overlapping(report: mt.Report, found: List[mt.Lifetime]) -> List[Any]:
    """Pairs of planned tensors alive together whose addresses intersect."""
    bad = []
    for a in found:
        for b in found:
            if a.tensor < b.tensor and not (a.last < b.first or b.last < a.first):
                oa, ob = report.offsets[a.tensor], report.offsets[b.tensor]
                if oa < ob + b.size and ob < oa + a.size:
                    bad.append((a.tensor, b.tensor))
    return bad


# --- The sine model: no TensorFlow needed -------------------------------------


def test_lifetimes_follow_tflm_rules(sine: bytes) -> None:
    found = mt.lifetimes(sine)
    # Graph input created at operator 0, outputs at their operator, used to
    # the last reader, graph output alive to the last operator; weights
    # and biases (constants) are not planned; sizes rounded up to 16.
    assert [(t.tensor, t.size, t.first, t.last) for t in found] == [
        (0, 16, 0, 0),
        (7, 64, 0, 1),
        (8, 64, 1, 2),
        (9, 16, 2, 2),
    ]


def test_variable_tensors_are_not_planned(sine: bytes) -> None:
    # TFLM keeps a variable tensor in the persistent part of the arena
    # ("TfLiteTensor variable buffer data"): marking tensor 8 variable
    # shrinks TFLM's planned region from 128 to 80 bytes, which the replay
    # of the other three tensors gives too.
    def variable(m: Any) -> None:
        m.subgraphs[0].tensors[8].isVariable = True

    model = edit(sine, variable)
    assert [t.tensor for t in mt.lifetimes(model)] == [0, 7, 9]
    planned, report = mt.plan_model(model)
    assert report.greedy_region == report.region_before == 80
    assert report.offsets[8] == -1 and report.tensors == 3
    assert report.region_after == report.max_load == 80


def test_plan_sine_runs_bit_identical(sine: bytes) -> None:
    planned, report = mt.plan_model(sine)
    assert (report.tensors, report.operators, report.scratch) == (4, 3, {})
    # The lifetimes read reproduce TFLM's own planned region.
    assert report.greedy_region == report.region_before == 128
    assert report.max_load == report.makespan == report.region_after == 128
    assert report.optimal and not report.replaced
    assert report.solver.startswith("auto/")
    # The offsets are in the model, one per tensor, -1 for the constants.
    assert mt.offline_offsets(planned) == report.offsets
    assert len(report.offsets) == 10
    found = mt.lifetimes(sine)
    planned_ids = {t.tensor for t in found}
    assert all((o >= 0) == (i in planned_ids) for i, o in enumerate(report.offsets))
    assert all(o % 16 == 0 for o in report.offsets if o >= 0)
    assert overlapping(report, found) == []
    # The weights are unchanged, each buffer at a multiple of 16.
    before, after = mt._read(sine), mt._read(planned)
    for b0, b1 in zip(before.buffers, after.buffers):
        assert np.array_equal(np.asarray(b0.data if b0.data is not None else []), np.asarray(b1.data if b1.data is not None else []))
    assert mt.offline_offsets(sine) is None
    # TFLM runs it: the same outputs, bit for bit, on inputs across the
    # period, at the rewritten model's smallest arena.
    x = [np.array([[v]], dtype=np.float32) for v in (0.0, 1.0, 2.5, 6.0)]
    arena_before = mt.smallest_arena(sine)
    arena_after = mt.smallest_arena(planned, hi=arena_before + 16)
    assert arena_after <= arena_before
    # Each trial in a process of its own: the same answer.
    assert mt.smallest_arena(sine, lo=1024, hi=2048, isolated=True) == arena_before
    for value in x:
        expected = mt.run(sine, [value])
        got = mt.run(planned, [value], arena_size=arena_after)
        assert got[0].dtype == np.float32 and got[0].tobytes() == expected[0].tobytes()
    with pytest.raises(RuntimeError, match="could not run"):
        mt.run(planned, [x[0]], arena_size=arena_after - 1)


def test_buffers_aligned_to_16(sine: bytes) -> None:
    planned, _ = mt.plan_model(sine)
    m = fb.Model.GetRootAsModel(planned, 0)
    for i in range(m.BuffersLength()):
        buffer = m.Buffers(i)
        if buffer.DataLength():
            assert buffer.DataAsNumpy().ctypes.data % 16 == np.frombuffer(planned, np.uint8).ctypes.data % 16


def test_never_worse_than_tflm(sine: bytes, monkeypatch: Any) -> None:
    # A solver whose plan stacks every buffer (160 bytes, above TFLM's 128):
    # plan_model writes TFLM's own greedy plan instead.
    real = memplan.solve

    def stacked(sizes: Any, starts: Any, ends: Any, **kwargs: Any) -> Any:
        solved = real(sizes, starts, ends, **kwargs)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.uint64)
        return types.SimpleNamespace(
            offsets=offsets, makespan=int(sum(sizes)), max_load=solved.max_load,
            optimal=False, solver="stacked", seconds=0.0,
        )

    monkeypatch.setattr(memplan, "solve", stacked)
    planned, report = mt.plan_model(sine)
    assert report.solver.startswith("tflm-greedy")
    assert report.makespan == report.region_after == report.region_before == 128
    # TFLM's greedy order: the two 64-byte tensors first (the later one, 8,
    # at 0), then the 16-byte ones, later first, at the lowest free offset.
    assert [report.offsets[i] for i in (0, 7, 8, 9)] == [0, 64, 0, 64]
    assert mt.run(planned, [np.array([[1.0]], np.float32)])[0].tobytes() == mt.run(
        sine, [np.array([[1.0]], np.float32)]
    )[0].tobytes()


def test_options_reach_the_solver(sine: bytes) -> None:
    _, report = mt.plan_model(sine, solver="search", time_limit=5.0, seed=3)
    assert report.solver.startswith("search") and report.makespan == 128
    with pytest.raises(memplan.InputError):
        mt.plan_model(sine, solver="nope")


def test_greedy_replay_is_not_optimal_on_a_chain() -> None:
    # big -> mid -> mid -> big: TFLM's greedy puts both big tensors at 0,
    # so the two mid ones, alive together, stack above them (200); the max
    # load is 150, and memplan reaches it.
    sizes, firsts, lasts = [100, 50, 50, 100], [0, 1, 2, 3], [1, 2, 3, 4]
    offsets, top = mt._greedy_plan(sizes, firsts, lasts)
    assert (offsets, top) == ([0, 150, 100, 0], 200)
    # Equal sizes: the later buffer is placed first, as TFLM does (the
    # first three operators of MobileNetV1 0.25, in units of 576 bytes:
    # with the earlier one first the top would be 112).
    assert mt._greedy_plan([48, 32, 32, 64], [0, 0, 1, 2], [0, 1, 2, 2]) == ([0, 96, 64, 0], 128)
    r = memplan.solve(sizes, firsts, lasts, lifetimes="inclusive")
    assert (r.max_load, r.makespan) == (150, 150)


# --- Refusals: a clear error, no output -----------------------------------------


def test_refuses_several_subgraphs(sine: bytes) -> None:
    two = edit(sine, lambda m: m.subgraphs.append(m.subgraphs[0]))
    with pytest.raises(mt.UnsupportedModel, match="has 2 subgraphs"):
        mt.plan_model(two)


def test_refuses_a_model_tflm_cannot_run(sine: bytes) -> None:
    def to_tile(m: Any) -> None:
        m.operatorCodes[0].builtinCode = fb.BuiltinOperator.TILE
        m.operatorCodes[0].deprecatedBuiltinCode = fb.BuiltinOperator.TILE

    with pytest.raises(mt.UnsupportedModel, match="TFLM's interpreter cannot run the model: .*TILE"):
        mt.plan_model(edit(sine, to_tile))


def test_refuses_an_existing_plan_unless_replace(sine: bytes) -> None:
    planned, first = mt.plan_model(sine)
    with pytest.raises(mt.UnsupportedModel, match="already has an offline plan.*--replace"):
        mt.plan_model(planned)
    again, report = mt.plan_model(planned, replace=True)
    assert report.replaced and report.offsets == first.offsets
    assert report.region_before == first.region_before
    # The old plan's buffer is reused: one metadata entry, same buffers.
    m = mt._read(again)
    assert [e.name for e in m.metadata].count(b"OfflineMemoryAllocation") == 1
    assert len(m.buffers) == len(mt._read(planned).buffers)


def test_refuses_what_is_not_a_model() -> None:
    with pytest.raises(mt.UnsupportedModel, match="not a TFLite model"):
        mt.plan_model(b"not a flatbuffer at all")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memplan.tflite", *args], capture_output=True, text=True)


def test_cli(sine: bytes, tmp_path: Any) -> None:
    src = tmp_path / "sine.tflite"
    src.write_bytes(sine)
    out = tmp_path / "sine.planned.tflite"
    done = cli(str(src), "-o", str(out), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["region_before"] == report["region_after"] == 128 and report["tensors"] == 4
    assert mt.offline_offsets(out.read_bytes()) == report["offsets"]
    # Planning it again is refused: exit 1, the reason, the output untouched
    # and no temporary file left.
    again = tmp_path / "again.tflite"
    done = cli(str(out), "-o", str(again))
    assert done.returncode == 1 and "already has an offline plan" in done.stderr
    assert not again.exists()
    done = cli(str(out), "-o", str(again), "--replace")
    assert done.returncode == 0 and "planned region: TFLM 128 bytes" in done.stdout
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(edit(sine, lambda m: m.subgraphs.append(m.subgraphs[0])))
    existing = tmp_path / "existing.tflite"
    existing.write_bytes(b"keep me")
    done = cli(str(bad), "-o", str(existing))
    assert done.returncode == 1 and "2 subgraphs" in done.stderr
    assert existing.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "again.tflite", "bad.tflite", "existing.tflite", "sine.planned.tflite", "sine.tflite"
    ]
    assert cli("--help").stdout.startswith("usage: python -m memplan.tflite")


# --- Keras-built models (tensorflow needed) --------------------------------------


@pytest.fixture(scope="module")
def keras_models() -> Any:
    pytest.importorskip("tensorflow", reason="tensorflow is not installed: `pip install tensorflow-cpu`")
    sys.path.insert(0, BENCH)
    try:
        import tflm_models
    finally:
        sys.path.remove(BENCH)
    return tflm_models


@pytest.mark.parametrize(
    "name, sizes",
    [
        # Transposed convolutions: int8 TRANSPOSE_CONV asks for an int32
        # scratch buffer of its output's size, four times its output.
        ("unet", dict(size=16, base=4, levels=2)),
        ("fpn", dict(size=32, base=4, width=8)),
        # A chain of bottleneck blocks: TFLM's greedy is above the max load.
        ("bottleneck", dict(size=16, blocks=2)),
    ],
)
def test_keras_model_runs_bit_identical(keras_models: Any, name: str, sizes: Any) -> None:
    model = keras_models.build(name, **sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the replayed region is TFLM's
        planned, report = mt.plan_model(model)
    found = mt.lifetimes(model)
    assert report.tensors == len(found) > 10
    assert report.greedy_region == report.region_before
    assert report.max_load <= report.makespan <= report.region_after <= report.region_before
    if name == "unet":
        assert len(report.scratch) == 2 and min(report.scratch.values()) > 0
    assert overlapping(report, found) == []
    before = mt.smallest_arena(model)
    after = mt.smallest_arena(planned, hi=before + 16)
    assert after <= before
    if report.region_before > report.max_load and report.makespan < report.region_before:
        assert report.region_after == report.makespan < report.region_before
        assert after < before
    if name == "bottleneck":
        assert report.region_before > report.max_load == report.region_after
    inputs = keras_models.random_inputs(model, seed=1)
    expected = mt.run(model, inputs)
    got = mt.run(planned, inputs, arena_size=after)
    assert len(got) == len(expected) >= 1
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype and e.shape == g.shape and e.tobytes() == g.tobytes()

"""TensorFlow Lite Micro models for memplan.tflite: built with Keras, random
weights, int8 post-training quantisation with a random representative set
(nothing is downloaded).

- ``resnet8``: MLPerf Tiny image classification (CIFAR-10, 32x32x3);
- ``ds_cnn``: MLPerf Tiny keyword spotting (49x10 MFCC);
- ``mobilenet_v1``: MLPerf Tiny visual wake words (MobileNetV1 0.25, 96x96x3);
- ``autoencoder``: MLPerf Tiny anomaly detection (fully connected, 640 inputs);
- ``sine``: the ``sine_float.tflite`` model the tflite-micro package ships;
- ``unet``: an encoder-decoder with skip connections (64x64x3, three levels,
  transposed convolutions), ``unet_bilinear`` the same with bilinear
  upsampling;
- ``fpn``: a feature pyramid (64x64x3 backbone, four levels, a head on each);
- ``mobilenet_v2``: MobileNetV2 0.35 on 96x96x3 (inverted residuals);
- ``bottleneck``: a chain of bottleneck blocks (1x1 to 8 channels, 3x3, 1x1
  back to 32, no residual) on 32x32x3, where TFLM's greedy is not optimal.

``python crates/memplan-py/bench/tflm_models.py OUTDIR [--models a,b]``
writes ``OUTDIR/NAME.tflite``; ``--table`` also plans each with
memplan.tflite and measures it in TFLM's interpreter (see ``table``).
Tests import :func:`build` with small sizes (``unet(size=16, base=4)``...).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from importlib import resources
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _tf() -> Any:
    import tensorflow as tf

    return tf


def quantize(model: Any, seed: int = 0, samples: int = 8) -> bytes:
    """int8 post-training quantisation (int8 inputs and outputs) with a
    random normal representative set."""
    import numpy as np

    tf = _tf()
    rng = np.random.default_rng(seed)
    shapes = [tuple(int(d) for d in t.shape) for t in model.inputs]

    def representative() -> Any:
        for _ in range(samples):
            yield [rng.standard_normal(s).astype(np.float32) for s in shapes]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    with _quiet():
        return bytes(converter.convert())


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Sends what the converter prints on stdout (the saved model's
    signature, hundreds of lines) to stderr, keeping stdout for results."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def calibrate(model: Any, seed: int = 0, batch: int = 16) -> Any:
    """Sets every batch normalisation's moving mean and variance to those of
    its input on one random batch, as training would roughly do: with the
    untrained statistics (mean 0, variance 1) activations shrink layer
    after layer, and MobileNetV1's logits end up within 1e-6 of each other,
    a quantisation scale with which TFLM's int8 softmax aborts."""
    import numpy as np

    tf = _tf()
    norms = [layer for layer in model.layers if isinstance(layer, tf.keras.layers.BatchNormalization)]
    if not norms:
        return model
    rng = np.random.default_rng(seed)
    shapes = [(batch, *(int(d) for d in t.shape[1:])) for t in model.inputs]
    x = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    momenta = [layer.momentum for layer in norms]
    for layer in norms:
        layer.momentum = 0.0
    model(x if len(x) > 1 else x[0], training=True)
    for layer, momentum in zip(norms, momenta):
        layer.momentum = momentum
    return model


def _seed(seed: int) -> None:
    tf = _tf()
    tf.keras.utils.set_random_seed(seed)


def resnet8() -> Any:
    """MLPerf Tiny's ResNet-8 (three stacks of two 3x3 convolutions with
    residual connections, 16/32/64 filters)."""
    L = _tf().keras.layers
    inputs = L.Input((32, 32, 3), batch_size=1)

    def conv(x: Any, filters: int, strides: int = 1, kernel: int = 3) -> Any:
        return L.Conv2D(filters, kernel, strides=strides, padding="same")(x)

    x = L.ReLU()(L.BatchNormalization()(conv(inputs, 16)))
    for filters, strides in ((16, 1), (32, 2), (64, 2)):
        y = L.ReLU()(L.BatchNormalization()(conv(x, filters, strides)))
        y = L.BatchNormalization()(conv(y, filters))
        if strides != 1:
            x = conv(x, filters, strides, kernel=1)
        x = L.ReLU()(L.Add()([x, y]))
    x = L.AveragePooling2D(pool_size=8)(x)
    outputs = L.Dense(10, activation="softmax")(L.Flatten()(x))
    return _tf().keras.Model(inputs, outputs, name="resnet8")


def ds_cnn() -> Any:
    """MLPerf Tiny's DS-CNN for keyword spotting (a 10x4 convolution, four
    depthwise-separable blocks of 64 channels)."""
    L = _tf().keras.layers
    inputs = L.Input((49, 10, 1), batch_size=1)
    x = L.Conv2D(64, (10, 4), strides=2, padding="same")(inputs)
    x = L.ReLU()(L.BatchNormalization()(x))
    for _ in range(4):
        x = L.ReLU()(L.BatchNormalization()(L.DepthwiseConv2D(3, padding="same")(x)))
        x = L.ReLU()(L.BatchNormalization()(L.Conv2D(64, 1, padding="same")(x)))
    x = L.AveragePooling2D(pool_size=(25, 5))(x)
    outputs = L.Dense(12, activation="softmax")(L.Flatten()(x))
    return _tf().keras.Model(inputs, outputs, name="ds_cnn")


def mobilenet_v1(size: int = 96, alpha: float = 0.25) -> Any:
    """MLPerf Tiny's visual wake words model: MobileNetV1 (width 0.25) on
    96x96x3 images, two classes."""
    tf = _tf()
    L = tf.keras.layers
    inputs = L.Input((size, size, 3), batch_size=1)
    base = tf.keras.applications.MobileNet(
        input_tensor=inputs, alpha=alpha, weights=None, include_top=False
    )
    # MLPerf Tiny's head: average pool, flatten, dense with softmax.
    x = L.AveragePooling2D(pool_size=tuple(int(d) for d in base.output.shape[1:3]))(base.output)
    outputs = L.Dense(2, activation="softmax")(L.Flatten()(x))
    return tf.keras.Model(inputs, outputs, name="mobilenet_v1")


def autoencoder(width: int = 640) -> Any:
    """MLPerf Tiny's anomaly-detection autoencoder: dense layers
    640-128-128-128-128-8-128-128-128-128-640 with batch norm and ReLU."""
    L = _tf().keras.layers
    inputs = L.Input((width,), batch_size=1)
    x = inputs
    for units in (128, 128, 128, 128, 8, 128, 128, 128, 128):
        x = L.ReLU()(L.BatchNormalization()(L.Dense(units)(x)))
    outputs = L.Dense(width)(x)
    return _tf().keras.Model(inputs, outputs, name="autoencoder")


def unet(
    size: int = 64,
    base: int = 8,
    levels: int = 3,
    upsample: str = "transpose",
    merge: str = "concat",
    skip_levels: Optional[Sequence[int]] = None,
    growth: int = 2,
    convs: int = 2,
) -> Any:
    """An encoder-decoder with skip connections: ``levels`` times ``convs``
    3x3 convolutions and a 2x2 max pool (channels ``base * growth**level``),
    a bottleneck, then ``levels`` times a 2x2 upsampling (``"transpose"``:
    a transposed convolution; ``"bilinear"`` or ``"nearest"``), the merge
    with the encoder's tensor of that level, which lives across the whole
    middle of the network (``"concat"``, or ``"add"`` after a 1x1
    convolution; only the levels in ``skip_levels`` when given), and
    ``convs`` 3x3 convolutions."""
    L = _tf().keras.layers
    inputs = L.Input((size, size, 3), batch_size=1)

    def block(x: Any, filters: int) -> Any:
        for _ in range(convs):
            x = L.Conv2D(filters, 3, padding="same", activation="relu")(x)
        return x

    def width(level: int) -> int:
        return base * growth**level

    skips = []
    x = inputs
    for level in range(levels):
        x = block(x, width(level))
        skips.append(x)
        x = L.MaxPooling2D()(x)
    x = block(x, width(levels))
    for level in reversed(range(levels)):
        if upsample == "transpose":
            x = L.Conv2DTranspose(width(level), 2, strides=2)(x)
        else:
            x = L.UpSampling2D(interpolation=upsample)(x)
        if skip_levels is not None and level not in skip_levels:
            pass
        elif merge == "concat":
            x = L.Concatenate()([x, skips[level]])
        else:
            x = L.Add()([L.Conv2D(width(level), 1)(x), skips[level]])
        x = block(x, width(level))
    outputs = L.Conv2D(2, 1)(x)
    return _tf().keras.Model(inputs, outputs, name="unet")


def fpn(
    size: int = 64, base: int = 16, width: int = 32, early: bool = False, head: int = 4, late_heads: bool = False
) -> Any:
    """A feature pyramid: a backbone of four stride-2 stages (``base``
    channels doubling), a 1x1 lateral convolution per stage (right after
    its stage with ``early``, else after the backbone, the stages' outputs
    then living across it), a top-down path (bilinear 2x upsampling added
    to the next lateral) and a 3x3 head of ``head`` channels on each level,
    made as soon as the level is (``late_heads``: after the whole top-down
    path, the pyramid's levels living until then), all four being graph
    outputs (alive to the end)."""
    L = _tf().keras.layers
    inputs = L.Input((size, size, 3), batch_size=1)
    x = inputs
    stages, laterals = [], []
    for level in range(4):
        x = L.Conv2D(base << level, 3, strides=2, padding="same", activation="relu")(x)
        x = L.Conv2D(base << level, 3, padding="same", activation="relu")(x)
        stages.append(x)
        if early:
            laterals.append(L.Conv2D(width, 1)(x))
    if not early:
        laterals = [L.Conv2D(width, 1)(s) for s in stages]
    top = laterals[-1]
    levels = [top]
    for lateral in reversed(laterals[:-1]):
        if not late_heads:
            levels[-1] = L.Conv2D(head, 3, padding="same")(levels[-1])
        top = L.Add()([L.UpSampling2D(interpolation="bilinear")(top), lateral])
        levels.append(top)
    heads = [L.Conv2D(head, 3, padding="same")(p) for p in levels] if late_heads else [
        *levels[:-1], L.Conv2D(head, 3, padding="same")(levels[-1])
    ]
    return _tf().keras.Model(inputs, heads[::-1], name="fpn")


def mobilenet_v2(size: int = 96, alpha: float = 0.35) -> Any:
    """MobileNetV2 (width 0.35) on 96x96x3 images, two classes: inverted
    residual blocks, whose inputs live across the wide expanded tensors to
    the residual addition."""
    tf = _tf()
    L = tf.keras.layers
    inputs = L.Input((size, size, 3), batch_size=1)
    base = tf.keras.applications.MobileNetV2(input_tensor=inputs, alpha=alpha, weights=None, include_top=False)
    x = L.AveragePooling2D(pool_size=tuple(int(d) for d in base.output.shape[1:3]))(base.output)
    outputs = L.Dense(2, activation="softmax")(L.Flatten()(x))
    return tf.keras.Model(inputs, outputs, name="mobilenet_v2")


def bottleneck(size: int = 32, wide: int = 32, narrow: int = 8, blocks: int = 3, residual: bool = False) -> Any:
    """Bottleneck blocks: a 1x1 convolution to ``narrow`` channels, a 3x3
    one, a 1x1 back to ``wide`` (plus the block's input with
    ``residual``)."""
    L = _tf().keras.layers
    inputs = L.Input((size, size, 3), batch_size=1)
    x = L.Conv2D(wide, 3, padding="same", activation="relu")(inputs)
    for _ in range(blocks):
        y = L.Conv2D(narrow, 1, activation="relu")(x)
        y = L.Conv2D(narrow, 3, padding="same", activation="relu")(y)
        y = L.Conv2D(wide, 1)(y)
        x = L.ReLU()(L.Add()([x, y]) if residual else y)
    x = L.AveragePooling2D(pool_size=size)(x)
    outputs = L.Dense(10, activation="softmax")(L.Flatten()(x))
    return _tf().keras.Model(inputs, outputs, name="bottleneck")


def sine() -> bytes:
    """The ``sine_float.tflite`` model shipped in the tflite-micro package."""
    return resources.files("tflite_micro.python.tflite_micro").joinpath("sine_float.tflite").read_bytes()


#: name: builder of the Keras model (``sine``: of the bytes).
MODELS: Dict[str, Callable[..., Any]] = {
    "resnet8": resnet8,
    "ds_cnn": ds_cnn,
    "mobilenet_v1": mobilenet_v1,
    "autoencoder": autoencoder,
    "mobilenet_v2": mobilenet_v2,
    "bottleneck": bottleneck,
    "sine": sine,
    "unet": unet,
    "unet_bilinear": lambda: unet(upsample="bilinear"),
    "fpn": fpn,
}


def build(name: str, seed: int = 0, **sizes: Any) -> bytes:
    """The ``.tflite`` bytes of model ``name`` (keyword arguments go to its
    builder, e.g. ``build("unet", size=16, base=4)``)."""
    if name == "sine":
        return sine()
    _seed(seed)
    return quantize(calibrate(MODELS[name](**sizes), seed=seed), seed=seed)


def random_inputs(model: bytes, seed: int = 0) -> List[Any]:
    """One random array per graph input, of its dtype and shape (the whole
    int8 range for int8 inputs)."""
    import numpy as np
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    m = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(model, 0))
    graph = m.subgraphs[0]
    rng = np.random.default_rng(seed)
    arrays = []
    for i in graph.inputs:
        t = graph.tensors[i]
        shape = [int(d) for d in t.shape]
        if t.type == 9:  # INT8
            arrays.append(rng.integers(-128, 128, size=shape, dtype=np.int8))
        elif t.type == 0:  # FLOAT32
            arrays.append(rng.uniform(-3, 3, size=shape).astype(np.float32))
        else:
            raise ValueError(f"input {i}: type {t.type} not generated here")
    return arrays


def table(models: Dict[str, bytes], time_limit: Optional[float] = None) -> str:
    """Plans each model with memplan.tflite, finds the smallest arena of the
    original and of the rewritten model in TFLM's interpreter (bisection,
    each trial in a child process of its own) and checks their outputs on random inputs
    are bit-identical (the rewritten model runs at its smallest arena).
    Returns a Markdown table; raises AssertionError when a check fails."""
    import numpy as np

    import memplan.tflite as mt

    rows = [
        "| model | operators | tensors planned | scratch | TFLM region | memplan region | max load | TFLM smallest arena | memplan smallest arena | saved | planning time |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, data in models.items():
        started = time.perf_counter()
        planned, report = mt.plan_model(data, time_limit=time_limit)
        elapsed = time.perf_counter() - started
        before = mt.smallest_arena(data, isolated=True)
        after = mt.smallest_arena(planned, hi=before + 1, isolated=True)
        inputs = random_inputs(data)
        expected = mt.run(data, inputs)
        got = mt.run(planned, inputs, arena_size=after)
        assert len(expected) == len(got), name
        for e, g in zip(expected, got):
            assert e.dtype == g.dtype and e.shape == g.shape and np.array_equal(e, g), f"{name}: outputs differ"
        assert after <= before, f"{name}: smallest arena {after} > {before}"
        rows.append(
            f"| {name} | {report.operators} | {report.tensors} | {sum(report.scratch.values()):,} | "
            f"{report.region_before:,} | {report.region_after:,} | {report.max_load:,} | {before:,} | {after:,} | "
            f"{before - after:,} | {report.seconds * 1000:.1f} ms (plan_model {elapsed:.1f} s) |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return "\n".join(rows)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", help="where NAME.tflite files are written (and read, when present)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated names (default: all)")
    parser.add_argument("--table", action="store_true", help="plan and measure each model, print a Markdown table")
    parser.add_argument("--time-limit", type=float, default=None, help="memplan's time limit per model")
    args = parser.parse_args(argv)
    os.makedirs(args.outdir, exist_ok=True)
    built: Dict[str, bytes] = {}
    for name in args.models.split(","):
        if name not in MODELS:
            parser.error(f"unknown model {name!r} (known: {', '.join(MODELS)})")
        path = os.path.join(args.outdir, f"{name}.tflite")
        if os.path.exists(path):
            with open(path, "rb") as f:
                built[name] = f.read()
        else:
            started = time.perf_counter()
            built[name] = build(name)
            with open(path, "wb") as f:
                f.write(built[name])
            print(f"{path}: {len(built[name]):,} bytes in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.table:
        print(table(built, time_limit=args.time_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())

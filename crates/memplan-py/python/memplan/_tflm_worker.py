"""Runs TensorFlow Lite Micro's Python interpreter for :mod:`memplan.tflite`
in a process of its own (a too-small arena or a broken model can abort the
process that holds the interpreter).

    python -m memplan._tflm_worker probe ARENA MODEL...
        one JSON line per model: {"ok", "error", "head", "tail", "total"},
        the arena's planned region (head), persistent part (tail) and total
        after allocating the tensors and invoking once on zero inputs.
    python -m memplan._tflm_worker run ARENA MODEL INPUTS.npz OUTPUTS.npz
        invokes the model on the inputs (arrays in0, in1... or none: zeros)
        and saves its outputs as out0, out1...
    python -m memplan._tflm_worker bisect LO HI MODEL
        finds the smallest arena in (LO, HI] with which the model allocates
        and invokes (LO fails, HI works), printing "fits N" or "fails N"
        before each verdict is final, so that a parent can resume after a
        crash; then "smallest N".

Each trial builds a fresh interpreter. TFLM's messages (it writes them to
the C stderr) are captured and returned in "error".
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple


def _interpreter(model: bytes, arena: int) -> Any:
    from tflite_micro.python.tflite_micro import runtime

    return runtime.Interpreter.from_bytes(model, arena_size=arena)


def _captured(call: Any) -> Tuple[Any, str, Optional[BaseException]]:
    """Calls ``call()`` with file descriptor 2 sent to a temporary file;
    returns its result, what it printed there, and its exception."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        result, error = None, None
        try:
            result = call()
        except Exception as exc:  # TFLM raises RuntimeError; keep any
            error = exc
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    return result, text, error


def _zero_inputs(interpreter: Any) -> List[Any]:
    import numpy as np

    inputs = []
    index = 0
    while True:
        try:
            details = interpreter.get_input_details(index)
        except Exception:
            break
        inputs.append(np.zeros(details["shape"], dtype=details["dtype"]))
        index += 1
    return inputs


def _invoke(model: bytes, arena: int, inputs: Optional[List[Any]] = None) -> List[Any]:
    """Allocates and invokes; returns the outputs (copies)."""
    import numpy as np

    interpreter = _interpreter(model, arena)
    if inputs is None:
        inputs = _zero_inputs(interpreter)
    for index, value in enumerate(inputs):
        interpreter.set_input(value, index)
    interpreter.invoke()
    outputs = []
    index = 0
    while True:
        try:
            interpreter.get_output_details(index)
        except Exception:
            break
        outputs.append(np.array(interpreter.get_output(index), copy=True))
        index += 1
    return outputs


def probe(model: bytes, arena: int) -> Dict[str, Any]:
    """Allocates and invokes on zeros; returns the arena figures."""

    def call() -> None:
        interpreter = _interpreter(model, arena)
        for index, value in enumerate(_zero_inputs(interpreter)):
            interpreter.set_input(value, index)
        interpreter.invoke()
        interpreter.print_allocations()

    _, text, error = _captured(call)
    found = {
        key: int(m.group(1)) if m else None
        for key, m in (
            (k, re.search(rf"Arena allocation {k} (\d+)", text)) for k in ("head", "tail", "total")
        )
    }
    message = "\n".join(line for line in text.splitlines() if not line.startswith("[RecordingMicroAllocator]"))
    if error is not None:
        message = (message.strip() + "\n" + f"{type(error).__name__}: {error}").strip()
    return {"ok": error is None and found["head"] is not None, "error": message.strip(), **found}


def fits(model: bytes, arena: int) -> bool:
    _, _, error = _captured(lambda: _invoke(model, arena))
    return error is None


def main(argv: List[str]) -> int:
    command = argv[0]
    if command == "probe":
        arena = int(argv[1])
        for path in argv[2:]:
            with open(path, "rb") as f:
                print(json.dumps(probe(f.read(), arena)), flush=True)
        return 0
    if command == "run":
        import numpy as np

        arena, path, inputs_path, outputs_path = int(argv[1]), argv[2], argv[3], argv[4]
        with open(path, "rb") as f:
            model = f.read()
        with np.load(inputs_path) as data:
            inputs = [data[f"in{i}"] for i in range(len(data.files))] or None
        outputs, text, error = _captured(lambda: _invoke(model, arena, inputs))
        if error is not None:
            print(json.dumps({"ok": False, "error": (text.strip() + f"\n{error}").strip()}), flush=True)
            return 0
        np.savez(outputs_path, **{f"out{i}": out for i, out in enumerate(outputs)})
        print(json.dumps({"ok": True, "error": ""}), flush=True)
        return 0
    if command == "bisect":
        lo, hi, path = int(argv[1]), int(argv[2]), argv[3]
        with open(path, "rb") as f:
            model = f.read()
        while hi - lo > 1:
            mid = (lo + hi) // 2
            print(f"trying {mid}", flush=True)
            if fits(model, mid):
                hi = mid
                print(f"fits {mid}", flush=True)
            else:
                lo = mid
                print(f"fails {mid}", flush=True)
        print(f"smallest {hi}", flush=True)
        return 0
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

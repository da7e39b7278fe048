"""Says at the top of the run whether the ExecuTorch tests will run: without
ExecuTorch (and PyTorch), test_executorch.py and
test_executorch_training.py are skipped."""

from __future__ import annotations

import importlib.metadata
import importlib.util


def pytest_report_header(config: object) -> str:
    missing = [name for name in ("executorch", "torch") if importlib.util.find_spec(name) is None]
    if missing:
        return (
            f"NOTICE: {' and '.join(missing)} not installed: the ExecuTorch tests "
            "(test_executorch.py, test_executorch_training.py) are skipped; "
            "`pip install executorch torch torchvision` to run them"
        )
    versions = ", ".join(
        f"{name} {importlib.metadata.version(name)}" for name in ("executorch", "torch")
    )
    return f"ExecuTorch tests run with {versions}"

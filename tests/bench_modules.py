"""The scripts of bench/ as modules for the tests (bench/ is no package): each loaded once per process and
registered in ``sys.modules``, so that functions sent to worker processes pickle by reference."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` as the module ``name`` (the one already loaded, if any)."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module

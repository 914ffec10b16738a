"""The harness's tests use the product's test helpers (``tests/warc_builder.py``, ``tests/bench_modules.py``,
``tests/repo.py``): that folder goes on ``sys.path``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))

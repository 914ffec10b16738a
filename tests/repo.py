"""Paths of the repository the tests run in: its root, the shared data beside it, the tests' fixtures."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository's root (where ``pyproject.toml`` is)."""
SHARED_DATA = ROOT.parent / "shared" / "data"
"""``../shared/data`` beside the repository (absent on a machine without the shared data sets)."""
FIXTURES = ROOT / "tests" / "fixtures"
"""Small hand-made inputs checked into the repository."""

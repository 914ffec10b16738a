"""Real pages of the shared data sets for the tests that need them (skipped where ``../shared/data`` is absent)."""

from __future__ import annotations

import pytest

from newsclean_eval.datasets import EvalPage, load, shared_data_dir


def shared_pages(dataset: str, n: int, group: str | None = None) -> list[EvalPage]:
    """The first ``n`` pages of ``dataset`` with a body (of neighbour ``group`` when given); the test is skipped
    when the data set's tarball is not beside the repository, and fails when it has fewer such pages."""
    data = shared_data_dir()
    if data is None or not (data / f"{dataset}.tar.gz").exists():
        pytest.skip(f"needs ../shared/data/{dataset}.tar.gz beside the repository (or NEWSCLEAN_SHARED); absent here")
    pages = [p for p in load(dataset) if p.html and (group is None or p.group == group)][:n]
    assert len(pages) == n, f"{dataset} has fewer than {n} pages" + (f" of {group}" if group else "")
    return pages

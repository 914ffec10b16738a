"""The compiled kernel against the Python reference on real pages: the default chain on every shared page, the papers'
chain on a spread sample of the neighbour groups (``python -m newsclean_eval.kernel_identity`` runs every chain on every
page)."""

from __future__ import annotations

import pytest

from newsclean.transforms import kernel
from newsclean_eval.datasets import LOADERS, load, shared_data_dir
from newsclean_eval.kernel_identity import compare_all, main

pytestmark = [pytest.mark.shared_data,
              pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here")]


def _data_or_skip():
    data = shared_data_dir()
    if data is None or not all((data / f"{name}.tar.gz").exists() for name in LOADERS):
        pytest.skip("needs the shared data sets beside the repository (../shared/data)")


def test_kernel_and_python_agree_on_every_shared_page_with_the_default_chain():
    _data_or_skip()
    tally = compare_all(list(LOADERS), ["default"], jobs=2)
    assert tally.pages == sum(len(load(name)) for name in LOADERS) and tally.scores > 100_000
    assert tally.differences == []


def test_kernel_and_python_agree_on_a_sample_with_the_papers_chain():
    _data_or_skip()
    tally = compare_all(list(LOADERS), ["paper"], jobs=2, every=12)
    assert tally.groups >= len(LOADERS) and tally.blocks > 1000
    assert tally.differences == []


def test_command_reports_and_exits_zero(capsys):
    _data_or_skip()
    assert main(["--datasets", "readability-test-pages", "--chains", "default", "--jobs", "1", "--every", "50"]) == 0
    assert "0 differences" in capsys.readouterr().err

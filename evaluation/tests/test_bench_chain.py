"""bench/bench_chain.py's per-stage table: its timers wrap the chain's own functions, so a changed signature there
must not break the bench (a stage-2 predict argument did once)."""

from __future__ import annotations

import pytest
from bench_modules import bench_module

PAGE = ("<html><head><title>Harbour budget</title></head><body><ul>" + "".join(
    f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(6)) + "</ul><div class='story'>" + "".join(
    f"<p>The council voted on the harbour budget for the {i} time, and members said the costs were left out.</p>"
    for i in range(5)) + "</div><div class='footer'>Copyright 2024 The Example.</div></body></html>")


def test_stage_table_times_both_predictions_and_restores_the_chain():
    pytest.importorskip("lightgbm")
    from newsclean.transforms.classifier import model as learned

    bench = bench_module("bench_chain")
    predict = learned.ModelEnsemble.predict
    rows = dict(bench.stage_table({"site/section": [PAGE, PAGE.replace("5 time", "6 time")]}))
    assert rows["stage-1 predict"] > 0 and rows["stage-2 predict"] > 0 and rows["block features"] > 0
    assert rows["total"] >= rows["stage-1 predict"] + rows["stage-2 predict"]
    assert learned.ModelEnsemble.predict is predict  # the timers are taken off again


def test_the_metadata_peer_reads_what_the_default_peer_leaves_out(monkeypatch):
    trafilatura = pytest.importorskip("trafilatura")
    bench = bench_module("bench_chain")
    calls = []
    monkeypatch.setattr(trafilatura, "extract", lambda html, **kwargs: calls.append(kwargs))
    bench.trafilatura_runner()({"site/section": [PAGE]})
    bench.trafilatura_runner(with_metadata=True)({"site/section": [PAGE]})
    assert calls == [{"with_metadata": False}, {"with_metadata": True}]

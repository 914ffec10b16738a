"""The per-page time budget (pipeline/budget.py, ``clean_page``): it holds on a huge flat page in every stage,
compiled ones included, and it charges a page the CPU time of its own thread, so that a loaded machine gives the
rows of a quiet one."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline.budget import RecordTimeout, time_budget

HAS_THREAD_CPU_CLOCK = hasattr(time, "pthread_getcpuclockid")

#: ``python -c`` body: one ``newsclean clean`` run (in one process: the input is small) with the page budget set to
#: argv[1] seconds, started when a line comes on stdin after "ready" (Beam imported); writes each page's
#: (wall-clock, thread CPU) seconds in clean_page to argv[4] as "wall cpu" lines.
RUN_CLEAN = """
import sys, time
import newsclean.pipeline.clean
from newsclean.cli import main
from newsclean.pipeline import stages
stages.RECORD_TIME_BUDGET_S = float(sys.argv[1])
real, times = stages.clean_page, []
def timed(*args, **kwargs):
    wall, cpu = time.monotonic(), time.thread_time()
    try:
        return real(*args, **kwargs)
    finally:
        times.append((time.monotonic() - wall, time.thread_time() - cpu))
stages.clean_page = timed
print("ready", flush=True)
sys.stdin.readline()
status = main(["clean", "--warc", sys.argv[2], "--out", sys.argv[3]])
with open(sys.argv[4], "w") as f:
    f.writelines(f"{w} {c}\\n" for w, c in times)
sys.exit(status)
"""


@contextmanager
def busy_processes(cpu: int, count: int):
    """``count`` processes spinning on core ``cpu`` while the ``with`` body runs (killed after it)."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"],
                             preexec_fn=lambda: os.sched_setaffinity(0, {cpu})) for _ in range(count)]
    try:
        yield
    finally:
        for proc in busy:
            proc.kill()
            proc.wait()


def run_clean(warc: Path, out: Path, budget_s: float, timeout_s: float, load_on: int | None = None) -> list[tuple]:
    """Run ``newsclean clean`` over ``warc`` into ``out`` in a child process, killed after ``timeout_s`` seconds;
    ``load_on``: a core the child is pinned to, with 4 busy processes on it from Beam's import to the run's end.
    Returns each page's (wall-clock, thread CPU) seconds in ``clean_page``."""
    pin = (lambda: os.sched_setaffinity(0, {load_on})) if load_on is not None else None
    times = out.with_suffix(".times")
    proc = subprocess.Popen([sys.executable, "-c", RUN_CLEAN, str(budget_s), str(warc), str(out), str(times)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=pin)
    try:
        assert proc.stdout.readline() == "ready\n", proc.stderr.read()[-3000:]
        with busy_processes(load_on, 4) if load_on is not None else nullcontext():
            _, stderr = proc.communicate("go\n", timeout=timeout_s)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0, stderr[-3000:]
    return [tuple(map(float, line.split())) for line in times.read_text().splitlines()]


def rows(out: Path, name: str) -> list[dict]:
    return sorted(pq.read_table(out / name).to_pylist(), key=lambda r: r["url"])


def flat_page(paragraphs: int) -> bytes:
    return ("<html><body>" + "<p>word word word</p>" * paragraphs).encode()


# --- a huge flat page ---------------------------------------------------------------------------------


@pytest.mark.parametrize("budget_s", [30.0, 1.0])
def test_a_huge_flat_page_does_not_stall_the_run(tmp_path, budget_s):
    """200,000 ``<p>`` (3.4 MB) then a normal page: the run finishes (before: the compiled feature walk counted the
    body's children once per block, quadratic, and the tree models scored 200,000 rows in one uninterruptible
    call: no end in 15 minutes); the huge page is an article or a ``timeout`` reject, the normal page an article.
    With a budget of 1 s of CPU the huge page (about 8 s on a quiet machine) must be the ``timeout`` reject."""
    normal = article_page("alpha", "news", "Council approves the harbour plan", [paragraph(i) for i in range(6)])
    warc = write_warc(tmp_path / "warc" / "alpha" / "news" / "a.warc.gz", "alpha", "news", [
        Response("http://alpha.test/news/huge.html", flat_page(200_000)),
        Response("http://alpha.test/news/ok.html", normal.encode())])
    run_clean(warc, tmp_path / "out", budget_s, timeout_s=300)  # a hang-catching bound, not a speed measure
    articles = {r["url"] for r in rows(tmp_path / "out", "articles")}
    rejects = {r["url"]: r["reason"] for r in rows(tmp_path / "out", "rejects")}
    assert "http://alpha.test/news/ok.html" in articles
    if budget_s < 8:
        assert rejects == {"http://alpha.test/news/huge.html": "timeout"}
    else:
        assert "http://alpha.test/news/huge.html" in articles or rejects == {
            "http://alpha.test/news/huge.html": "timeout"}


def test_an_except_exception_in_the_chain_does_not_swallow_the_timeout():
    """The budget's exception passes an ``except Exception`` of the code it interrupts (htmldate's call in
    transforms/metadata.py has one: a 10 MiB flat page whose budget of 1 s ran out there went on to the end,
    19 s of CPU, and became an article)."""
    with pytest.raises(RecordTimeout):
        with time_budget(0.2):
            try:
                while True:
                    pass
            except Exception:  # noqa: BLE001 - the chain's "a missing date, not a lost page"
                pass


def test_tree_models_score_a_long_page_in_chunks(monkeypatch):
    """No single evaluator call (compiled or LightGBM: neither sees the budget's exception) scores more than
    ``PREDICT_CHUNK_ROWS`` rows, and the chunked scores are the scores of the whole matrix, row for row."""
    from newsclean.transforms.classifier import model as model_module
    from newsclean.transforms.classifier.model import PREDICT_CHUNK_ROWS, LearnedParams, load_model

    ensemble = load_model(str(LearnedParams().model_files()[0]))
    X = np.random.default_rng(7).random((2 * PREDICT_CHUNK_ROWS + 17, len(ensemble.feature_names)))
    real = model_module.ModelEnsemble._predict
    whole = real(ensemble, X, None)  # every row in one evaluator call
    sizes = []

    def spy(self, rows, margin):
        sizes.append(len(rows))
        return real(self, rows, margin)

    monkeypatch.setattr(model_module.ModelEnsemble, "_predict", spy)
    assert np.array_equal(ensemble.predict(X), whole)
    assert sizes == [PREDICT_CHUNK_ROWS, PREDICT_CHUNK_ROWS, 17]


# --- CPU time, not wall-clock time ------------------------------------------------------------------


@pytest.mark.skipif(not HAS_THREAD_CPU_CLOCK, reason="no per-thread CPU clock here: the budget is wall-clock time")
def test_a_waiting_thread_keeps_its_budget_a_busy_one_does_not():
    """A thread that sleeps and waits for another thread (no CPU) for 1.5 s under a budget of 0.3 s is not
    stopped (before: RecordTimeout, the budget counted wall-clock time); one that computes is."""
    event = threading.Event()
    threading.Timer(1.5, event.set).start()
    with time_budget(0.3):
        time.sleep(0.75)
        assert event.wait(30)
    t0 = time.monotonic()
    with pytest.raises(RecordTimeout):
        with time_budget(0.3):
            while time.monotonic() - t0 < 60:  # a budget that never fires ends as "DID NOT RAISE"
                pass


@pytest.mark.skipif(not (HAS_THREAD_CPU_CLOCK and hasattr(os, "sched_setaffinity")),
                    reason="needs Linux's thread CPU clocks and CPU affinity")
def test_a_loaded_machine_gives_the_rows_of_a_quiet_one(tmp_path):
    """The same WARC cleaned with a budget of 2 s of CPU, once on a quiet machine and once pinned to one core
    with four busy processes on it (a fifth of a core: each page then takes ~5x its CPU time in wall-clock
    time, the first page before warm-up more): identical articles and rejects, no ``timeout``. Before, with a
    wall-clock budget (and the model loading charged to the first page), the loaded run timed pages out."""
    pages = [Response(f"http://alpha.test/news/long-{k}.html", article_page(
        "alpha", "news", f"Long report {k}", [paragraph(k * 100_000 + j, 8) for j in range(10_000)]).encode())
        for k in range(1)]
    pages.append(Response("http://alpha.test/news/short.html", article_page(
        "alpha", "news", "Council approves the harbour plan", [paragraph(i) for i in range(6)]).encode()))
    warc = write_warc(tmp_path / "warc" / "alpha" / "news" / "a.warc.gz", "alpha", "news", pages)
    quiet_times = run_clean(warc, tmp_path / "quiet", 2.0, timeout_s=600)
    loaded_times = run_clean(warc, tmp_path / "loaded", 2.0, timeout_s=900, load_on=min(os.sched_getaffinity(0)))
    assert rows(tmp_path / "loaded", "rejects") == rows(tmp_path / "quiet", "rejects") == []
    assert rows(tmp_path / "loaded", "articles") == rows(tmp_path / "quiet", "articles")
    assert len(quiet_times) == len(loaded_times) == 2
    wall, cpu_s = (sum(t[i] for t in loaded_times) for i in (0, 1))
    assert wall > 2 * cpu_s, loaded_times  # the load took effect: a wall-clock budget saw the pages 2x longer

"""The output folder of ``newsclean clean`` opens as it is in pandas, DuckDB, pyarrow.dataset and HF datasets;
it is replaced only by a run that succeeded (pipeline/output.py); progress, --version, -v after the subcommand."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from repo import FIXTURES as REPO_FIXTURES
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import hoist_global_flags, main
from newsclean.pipeline.output import partition_articles
from newsclean.pipeline.summary import RunSummary, top_sites

FIXTURES = REPO_FIXTURES / "metadata"


def _write_input(root: Path) -> None:
    alpha = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i in range(3)]
    alpha.append(Response("http://alpha.test/politics/gone.html", b"<html><body>gone</body></html>", status=404))
    write_warc(root / "alpha" / "politics" / "alpha.warc.gz", "alpha", "politics", alpha)
    beta = [Response(f"https://courier.example.co.uk/news/{name}", (FIXTURES / name).read_bytes(),
                     date=datetime(2024, 5, 3, 9, 0, tzinfo=UTC))
            for name in ("news-jsonld.html", "og-only.html", "graph-yoast.html")]
    write_warc(root / "beta" / "news" / "beta.warc.gz", "beta", "news", beta)


def _clean(tmp: Path, out: Path, *extra: str) -> int:
    return main(["clean", "--warc", str(tmp / "warc"), "--out", str(out), "--chain", "paper", "--neighbour-sample", "2",
                 *extra])


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("outfolder")
    _write_input(tmp / "warc")
    out = tmp / "out"
    (out / "articles").mkdir(parents=True)  # what a killed earlier run may leave behind
    (out / "summary.json").write_text("{}")
    stale = out / "_staging-0123456789ab" / "articles" / "beam-temp-part-1"
    stale.mkdir(parents=True)
    (stale / "x.parquet").write_bytes(b"PAR1 partial")
    # The console entry point in a child process: its stderr is checked for noise below.
    proc = subprocess.run([sys.executable, "-m", "newsclean.cli", "clean", "--warc", str(tmp / "warc"),
                           "--out", str(out), "--chain", "paper", "--neighbour-sample", "2"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONWARNINGS": "default"})
    assert proc.returncode == 0, proc.stderr
    (tmp / "stderr.txt").write_text(proc.stderr)
    return tmp, out


def test_layout_has_no_stray_file(fresh):
    _, out = fresh
    names = sorted(p.name for p in out.iterdir())
    assert {"_index", "_manifest"} <= set(names)  # incremental-run state (pipeline/incremental.py)
    names = [n for n in names if n not in ("_index", "_manifest", ".clean.lock")]  # the lock: pipeline/output.py
    assert names == ["README.md", "_counts", "_summary.json", "articles", "duplicates", "rejects"] or \
        names == ["README.md", "_counts", "_summary.json", "articles", "rejects"]
    assert not list(out.rglob("beam-temp*")) and not list(out.glob("_staging-*"))
    assert json.loads((out / "_summary.json").read_text())["balanced"] is True


def test_pandas_duckdb_and_pyarrow_open_it(fresh):
    import duckdb
    import pandas as pd
    import pyarrow.dataset as ds

    _, out = fresh
    summary = json.loads((out / "_summary.json").read_text())
    n = summary["articles_written"]
    assert n >= 4
    assert len(pd.read_parquet(out / "articles")) == n
    assert len(pd.read_parquet(out / "rejects")) == summary["rejects_total"] >= 1
    assert ds.dataset(out / "articles", format="parquet").count_rows() == n
    con = duckdb.connect()
    assert con.execute(f"select count(*) from read_parquet('{out}/articles/*.parquet')").fetchone()[0] == n
    rows = con.execute(f"select authors, domain, language, declared_language from read_parquet('{out}/articles/*.parquet') "
                       "where url like '%news-jsonld.html'").fetchall()
    assert rows == [(["Ann Lee", "Bo Chen"], "example.co.uk", "en", "en-gb")]


def test_columns_are_described_in_the_files(fresh):
    _, out = fresh
    schema = pq.read_schema(next((out / "articles").glob("*.parquet")))
    assert schema.field("language_score").metadata[b"description"].startswith(b"py3langid")
    assert schema.metadata[b"newsclean.schema_version"] == b"4"


def test_hf_datasets_loads_both_configs(fresh, tmp_path):
    datasets = pytest.importorskip("datasets")
    _, out = fresh
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "\nconfigs:\n- config_name: articles" in card and "| `authors` |" in card
    summary = json.loads((out / "_summary.json").read_text())
    articles = datasets.load_dataset(str(out), "articles", split="train", cache_dir=str(tmp_path / "hf"))
    rejects = datasets.load_dataset(str(out), "rejects", split="train", cache_dir=str(tmp_path / "hf"))
    assert articles.num_rows == summary["articles_written"] and rejects.num_rows == summary["rejects_total"]
    assert "reason" in rejects.column_names and "authors" in articles.column_names


@pytest.mark.parametrize("key", ["crawl_date", "site"])
def test_hive_partitioning(fresh, tmp_path, key):
    import duckdb
    import pandas as pd

    _, out = fresh
    articles = tmp_path / "articles"
    shutil.copytree(out / "articles", articles)
    n = len(pd.read_parquet(articles))
    partition_articles(str(articles), key)
    folders = sorted(p.name for p in articles.iterdir())
    assert folders == (["crawl_date=2024-05-01", "crawl_date=2024-05-03"] if key == "crawl_date"
                       else ["site=alpha", "site=beta"])
    df = pd.read_parquet(articles)
    assert len(df) == n and set(df[key].astype(str)) == {f.split("=")[1] for f in folders}
    got = duckdb.connect().execute(
        f"select {key}, count(*) from read_parquet('{articles}/**/*.parquet', hive_partitioning=true) "
        f"group by 1 order by 1").fetchall()
    assert sum(c for _, c in got) == n


def test_summary_counts_sites_from_partition_folders(fresh, tmp_path):
    from newsclean.cli import build_parser
    from newsclean.pipeline.summary import dataset_card, summarize_output

    _, out0 = fresh
    out = tmp_path / "part"
    shutil.copytree(out0, out)
    partition_articles(str(out / "articles"), "site")
    summary = summarize_output(str(out))
    assert summary.balanced and summary.to_dict()["articles_by_site"] == \
        json.loads((out0 / "_summary.json").read_text())["articles_by_site"]
    assert "articles/**/*.parquet" in dataset_card(summary, "site")
    args = build_parser().parse_args(["clean", "--warc", "w", "--out", "o", "--partition-by", "crawl_date"])
    assert args.partition_by == "crawl_date"


def test_failed_run_leaves_the_earlier_output(fresh, tmp_path, monkeypatch):
    import newsclean.pipeline.clean as clean
    from newsclean.pipeline.errors import NewscleanError

    tmp, out0 = fresh
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))

    def boom(config, *args, **kwargs):
        (Path(config.out) / "articles").mkdir(parents=True)
        (Path(config.out) / "articles" / "part-0.parquet").write_bytes(b"half")
        raise NewscleanError("pipeline failed: boom")

    monkeypatch.setattr(clean, "_run_staged", boom)
    assert _clean(tmp, out) == 1
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before  # staging removed, nothing replaced


def test_out_naming_a_file_is_a_one_line_usage_error(fresh, tmp_path, capsys):
    tmp, _ = fresh
    target = tmp_path / "file.txt"
    target.write_text("keep me")
    assert _clean(tmp, target) == 2
    err = capsys.readouterr().err
    assert f"newsclean: error: --out '{target}' is a file, not a directory" in err and "Traceback" not in err
    assert target.read_text() == "keep me"


def test_ctrl_c_exits_130_without_a_traceback_and_keeps_the_output(fresh, tmp_path):
    tmp, out0 = fresh
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    summary_before = (out / "_summary.json").read_text()
    # SIGINT's default action in the child: a test run started in the background by a shell ignores SIGINT, the
    # child would inherit that and finish its run (the skip below), leaving the interrupt path unchecked.
    proc = subprocess.Popen([sys.executable, "-m", "newsclean.cli", "clean", "--warc", str(tmp / "warc"),
                             "--out", str(out), "--chain", "paper"], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not list(out.glob("_staging-*")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().endswith("newsclean: interrupted")
    assert (out / "_summary.json").read_text() == summary_before
    assert not list(out.glob("_staging-*")) and not list(out.rglob("beam-temp*"))


# --- Ctrl-C during an incremental run: the corpus as it was, or the run published whole ---------------------


def _published(out: Path) -> dict:
    """What a corpus holds: its rows (sorted, every column), the files its manifest lists and its run count."""
    import pyarrow.dataset as ds

    def rows(name):
        if not (out / name).exists():
            return []
        table = ds.dataset(out / name, format="parquet").to_table()
        return sorted(table.to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))

    manifest = out / "_manifest"
    return {"articles": rows("articles"), "rejects": rows("rejects"), "duplicates": rows("duplicates"),
            "files": sorted(json.loads(line)["path"] for line in (manifest / "files.jsonl").read_text().splitlines()),
            "runs": len((manifest / "runs.jsonl").read_text().splitlines()),
            "records_read": json.loads((out / "_summary.json").read_text())["records_read"]}


@pytest.fixture(scope="module")
def appended(fresh, tmp_path_factory):
    """A new WARC file (``more/warc``) for an incremental run into a copy of ``fresh``'s corpus, and what the
    corpus holds before that run and after it ran uninterrupted."""
    tmp, out0 = fresh
    root = tmp_path_factory.mktemp("appended")
    more = root / "more"
    pages = [Response(f"http://alpha.test/politics/new-{i}.html",
                      article_page("alpha", "politics", f"New {i}", [paragraph(500 + 10 * i + j) for j in range(3)])
                      .encode()) for i in range(4)]
    write_warc(more / "warc" / "alpha" / "politics" / "new.warc.gz", "alpha", "politics", pages)
    reference = root / "reference"
    shutil.copytree(out0, reference)
    before = _published(reference)
    assert _clean(more, reference, "--incremental") == 0
    after = _published(reference)
    assert after["runs"] == before["runs"] + 1 and len(after["articles"]) == len(before["articles"]) + 4
    return more, before, after


def _incremental_argv(more: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "newsclean.cli", "clean", "--incremental", "--warc", str(more / "warc"), "--out", str(out),
            "--chain", "paper", "--neighbour-sample", "2"]


@pytest.mark.parametrize("when", ["staging", "publishing"])
def test_ctrl_c_to_the_process_group_of_an_incremental_run_publishes_all_or_nothing(fresh, appended, tmp_path,
                                                                                      when):
    """SIGINT to the run's process group once its staging folder appears, or once its first file is published:
    exit status 130, and the corpus holds what it held before or the whole run (before: rows published without
    their manifest entry, so that the rerun cleaned the file again and counted its rows as duplicates)."""
    _, out0 = fresh
    more, before, after = appended
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    # A session of its own (its process group, as a terminal's Ctrl-C reaches it) and SIGINT's default action.
    proc = subprocess.Popen(_incremental_argv(more, out), stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    started = (lambda: list(out.glob("_staging-*"))) if when == "staging" else \
        (lambda: list((out / "articles").glob("run-*")))
    deadline = time.monotonic() + 240  # only a hang reaches it
    while not started() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.005)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    now = _published(out)
    if proc.returncode == 0:
        assert now == after, err
        pytest.skip("the run finished before the interrupt arrived")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().endswith("newsclean: interrupted"), err
    assert now in (before, after), {k: (len(v) if isinstance(v, list) else v) for k, v in now.items()}
    assert not list(out.glob("_staging-*")) and not list(out.rglob("beam-temp*"))
    assert _clean(more, out, "--incremental") == 0  # the rerun: cleans the file, or finds it cleaned
    assert _published(out)["articles"] == after["articles"] and _published(out)["files"] == after["files"]


def test_a_sigint_while_publishing_is_acted_on_once_the_run_is_published(fresh, appended, tmp_path, monkeypatch):
    """The signal lands between the move of the run's files and the manifest entry (before: the run stopped
    there, rows published and the file not recorded as cleaned)."""
    import newsclean.pipeline.incremental as incremental

    _, out0 = fresh
    more, _, after = appended
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    real = incremental.summarize_output

    def signalled(folder, *args, **kwargs):
        if Path(folder) == out:  # the corpus after the append (the staging folder's is read first)
            os.kill(os.getpid(), signal.SIGINT)
        return real(folder, *args, **kwargs)

    monkeypatch.setattr(incremental, "summarize_output", signalled)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, also under nohup
    try:
        rc = _clean(more, out, "--incremental")
    finally:
        signal.signal(signal.SIGINT, previous)
        logging.disable(logging.NOTSET)  # the CLI's interrupt path silences logging for the rest of the process
    assert rc == 130
    assert _published(out) == after
    monkeypatch.setattr(incremental, "summarize_output", real)
    assert _clean(more, out, "--incremental") == 0 and _published(out)["articles"] == after["articles"]


def test_top_sites_line_is_short():
    by_site = {f"site{i:03d}": i for i in range(681)}
    line = top_sites(by_site)
    assert line.startswith("site680 680, site679 679") and line.count(",") == 9
    assert line.endswith(f"and 671 others ({sum(range(671))} articles; all in _summary.json)")
    s = RunSummary(records_read=1, articles_written=1, rejects={}, duplicates_dropped=0, articles_by_site=by_site)
    assert len(s.format()) < 1000 and len(s.to_dict()["articles_by_site"]) == 681


def test_global_flags_after_the_subcommand(capsys):
    assert hoist_global_flags(["clean", "--warc", "w", "-v", "--out", "o"]) == ["-v", "clean", "--warc", "w", "--out", "o"]
    assert hoist_global_flags(["eval", "--", "-v"]) == ["eval", "--", "-v"]
    assert main(["clean", "--version"]) == 0
    assert capsys.readouterr().out.startswith("newsclean ")


def test_progress_lines_on_a_pipe(monkeypatch):
    import io

    import newsclean.pipeline.progress as progress

    tally = progress.ProgressTally()
    tally.enabled = True
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    stream = io.StringIO()
    tally.add("read", 5, stream=stream)
    tally.add("articles", 3, stream=stream)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and "\r" not in stream.getvalue()
    assert lines[-1].startswith("newsclean: progress: 5 records read, 3 articles") and "pages/s" in lines[-1]


def _progress_counts(tmp_path, monkeypatch, capsys) -> tuple[list[str], list[tuple[int, ...]]]:
    """Clean ``tmp_path/warc`` (chain ``paper``) with a progress line at every count: the progress lines and their
    (records read, articles, rejects)."""
    import re

    import newsclean.pipeline.progress as progress
    from newsclean.pipeline.clean import run_clean
    from newsclean.pipeline.options import CleanConfig

    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)  # a line at every count
    run_clean(CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out"), chain="paper"),
              ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"], progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(progress.PREFIX)]
    counts = [tuple(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:records read|articles|rejects)", line))
              for line in lines]
    return lines, counts


def test_progress_lines_of_a_run_never_count_more_articles_than_records_read(tmp_path, monkeypatch, capsys):
    """Each record is counted as read before it is cleaned (before: "252 records read, 253 articles")."""
    _write_input(tmp_path / "warc")
    lines, counts = _progress_counts(tmp_path, monkeypatch, capsys)
    assert counts and counts[-1] == (7, 6, 1), lines[-1]
    assert all(articles + rejects <= read for read, articles, rejects in counts), [
        line for line, (r, a, j) in zip(lines, counts, strict=True) if a + j > r][:3]


def test_progress_counts_rejects_as_they_happen(tmp_path, monkeypatch, capsys):
    """A reject is counted when its record is rejected, not after the last record was read (before: "24 records
    read, 12 articles, 0 rejects" until the reading ended, then the rejects all at once)."""
    pages = []
    for i in range(6):
        pages.append(Response(f"http://alpha.test/politics/{i}.html",
                              article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)])
                              .encode()))
        pages.append(Response(f"http://alpha.test/politics/gone-{i}.html", b"<html><body>gone</body></html>",
                              status=404))
    write_warc(tmp_path / "warc" / "alpha" / "politics" / "a.warc.gz", "alpha", "politics", pages)
    lines, counts = _progress_counts(tmp_path, monkeypatch, capsys)
    assert counts[-1] == (12, 6, 6), lines[-1]
    all_read = next(c for c in counts if c[0] == 12)  # the first line after the last record was read
    assert all_read[2] >= 5, lines  # each 404 counted right after its read (the last one may follow this line)


def test_progress_interval_from_the_environment(monkeypatch):
    import io

    import newsclean.pipeline.progress as progress

    tally = progress.ProgressTally()
    tally.enabled = True
    stream = io.StringIO()
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")
    tally.add("read", 1, stream=stream)
    tally.add("read", 1, stream=stream)
    assert len(stream.getvalue().splitlines()) == 2  # a line at every count
    for value in ("inf", "3600"):  # no line (tests of one-line stderr set it so)
        monkeypatch.setenv(progress.INTERVAL_ENV, value)
        tally.add("read", 1, stream=stream)
    assert len(stream.getvalue().splitlines()) == 2
    for value in ("soon", "-1", "nan"):
        monkeypatch.setenv(progress.INTERVAL_ENV, value)
        assert progress.interval_s() == progress.INTERVAL_S


def test_progress_is_one_line_redrawn_on_a_terminal(monkeypatch):
    import io

    import newsclean.pipeline.progress as progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tally = progress.ProgressTally()
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    terminal = Terminal()
    tally.add("read", 5, stream=terminal)
    tally.finish()
    assert terminal.getvalue() == ""  # not enabled (library use): counts, prints nothing
    tally.enabled = True
    tally.add("read", 2, stream=terminal)
    tally.add("rejects", 1, stream=terminal)
    tally.finish()
    shown = terminal.getvalue()
    assert shown.endswith("\n") and shown.count("\n") == 1  # one status line, ended once
    assert shown.rstrip().rsplit("\r", 1)[-1].startswith("newsclean: progress: 7 records read, 0 articles")
    assert "1 rejects" in shown.rsplit("\r", 1)[-1]


def test_no_dateutil_or_beam_noise_on_stderr(fresh):
    tmp, _ = fresh
    err = (tmp / "stderr.txt").read_text()
    assert "UnknownTimezoneWarning" not in err and "Discarding unparseable args" not in err
    assert "Warning" not in err and "Traceback" not in err, err

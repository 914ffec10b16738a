"""What ``newsclean clean`` and ``newsclean summarize`` end with: one run per output folder, an exit status that
says whether anything was read, one-line errors, and a summary that counts every record of the input."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import main
from newsclean.pipeline.progress import PREFIX as PROGRESS_PREFIX

RUNNER = ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"]


def _crawl(root: Path, n: int = 3) -> Path:
    pages = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i in range(n)]
    write_warc(root / "alpha" / "politics" / "a.warc.gz", "alpha", "politics", pages)
    return root


def _err(capsys) -> list[str]:
    """The lines on stderr, without Beam's apitools warning and the progress lines that a run slower than the
    progress interval prints before its outcome (their prefix: pipeline/progress.py)."""
    return [line for line in capsys.readouterr().err.splitlines()
            if line.strip() and "apitools" not in line and not line.startswith(PROGRESS_PREFIX)]


# --- one run per output folder ---------------------------------------------------------------------

_HOLD = """
import fcntl, json, os, sys, time
try:
    from newsclean.pipeline.output import output_lock
except ImportError:  # a version without the lock: hold nothing
    import contextlib
    output_lock = lambda out: contextlib.nullcontext()
os.makedirs(sys.argv[1], exist_ok=True)
with output_lock(sys.argv[1]):
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def _holder(out: Path, seconds: float) -> subprocess.Popen:
    """Another process that holds ``out``'s lock for ``seconds`` (returns once it holds it)."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(out), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def test_a_second_run_into_the_same_folder_refuses_and_leaves_the_first_alone(tmp_path, capsys):
    out = tmp_path / "out"
    live = out / "_staging-0123456789ab" / "articles"  # the first run's staging folder, being written
    live.mkdir(parents=True)
    holder = _holder(out, 60)
    try:
        rc = main(["clean", "--warc", str(_crawl(tmp_path / "warc")), "--out", str(out), *RUNNER])
        lines = _err(capsys)
    finally:
        holder.kill()
        holder.wait()
    assert rc == 1 and live.exists()  # before: the second run deleted it and ran
    assert len(lines) == 1 and f"pid {holder.pid}" in lines[0] and "--wait-for-lock" in lines[0], lines


def test_wait_for_lock_waits_and_a_killed_holder_is_taken_over(tmp_path, caplog):
    from newsclean.pipeline.output import LOCK_FILE, OutputLockedError, output_lock

    out = tmp_path / "out"
    out.mkdir()
    holder = _holder(out, 1.5)
    t0 = time.monotonic()
    with output_lock(str(out), wait=True):
        assert time.monotonic() - t0 > 0.5  # it waited for the holder to end
        assert json.loads((out / LOCK_FILE).read_text())["pid"] == os.getpid()
    holder.wait()
    with pytest.raises(OutputLockedError):  # a lock held elsewhere, not waited for
        blocker = _holder(out, 30)
        try:
            with output_lock(str(out)):
                pass
        finally:
            blocker.kill()
            blocker.wait()
    # the killed holder left its record in the file; the kernel released its lock: taken over, and said so
    assert json.loads((out / LOCK_FILE).read_text())["pid"] == blocker.pid
    with caplog.at_level("WARNING"), output_lock(str(out)):
        pass
    assert f"pid {blocker.pid}" in caplog.text and "taking over" in caplog.text


# --- exit status -----------------------------------------------------------------------------------


def test_input_with_no_readable_record_exits_1(tmp_path, capsys):
    warc = tmp_path / "warc" / "s" / "c"
    warc.mkdir(parents=True)
    for i in range(2):
        (warc / f"junk{i}.warc.gz").write_bytes(os.urandom(2000))
    out = tmp_path / "out"
    assert main(["clean", "--warc", str(tmp_path / "warc"), "--out", str(out), *RUNNER]) == 1  # before: 0
    lines = _err(capsys)
    assert len(lines) == 1 and "no WARC record could be read" in lines[0] and "not_warc 2" in lines[0], lines
    assert json.loads((out / "_summary.json").read_text())["rejects"] == {"not_warc": 2}  # the rejects are kept


def test_summarize_refuses_a_folder_with_no_run(tmp_path, capsys):
    typo = tmp_path / "ouy"
    assert main(["summarize", str(typo)]) == 1  # before: 0, an all-zero summary
    lines = _err(capsys)
    assert len(lines) == 1 and "holds no newsclean run" in lines[0]
    assert not typo.exists()  # before: created, with _summary.json


# --- one-line errors -------------------------------------------------------------------------------


def test_unknown_runner_is_a_one_line_usage_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["clean", "--warc", str(_crawl(tmp_path / "warc")), "--out", str(out), "--runner", "Nope"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "newsclean: error: --runner Nope: Unexpected pipeline runner" in err
    assert not out.exists()  # checked before anything is written


@pytest.mark.parametrize("failure", ["enospc_card", "read_only_out"])
def test_os_errors_are_one_line_and_keep_the_earlier_output(tmp_path, capsys, monkeypatch, failure):
    import newsclean.pipeline.incremental as incremental
    import newsclean.pipeline.output as output

    out = tmp_path / "out"
    if failure == "enospc_card":
        def full_disk(*args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "README.md"))

        monkeypatch.setattr(incremental, "write_dataset_card", full_disk)
        expected = f"newsclean: error: {out}/README.md: No space left on device"
    else:  # root may write anywhere, so a read-only folder is simulated where the run first writes into it
        real = output.os.makedirs

        def read_only(path, *args, **kwargs):
            if str(path).startswith(str(out / "_staging-")):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(output.os, "makedirs", read_only)
        expected = "Permission denied"
    rc = main(["clean", "--warc", str(_crawl(tmp_path / "warc")), "--out", str(out), *RUNNER])
    err = _err(capsys)
    assert rc == 1 and len(err) == 1 and "Traceback" not in err[0], err  # before: a traceback
    assert err[0].startswith("newsclean: error: ") and expected in err[0], err
    assert not list(out.glob("_staging-*")) and not (out / "articles").exists()


# --- the summary counts every record ----------------------------------------------------------------


def test_summary_counts_skipped_types_and_the_independent_count(tmp_path, capsys):
    root = tmp_path / "warc"
    pages = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode(),
                      metadata=[("role", "article")]) for i in range(3)]
    write_warc(root / "alpha" / "politics" / "a.warc.gz", "alpha", "politics", pages)
    out = tmp_path / "out"
    assert main(["clean", "--warc", str(root), "--out", str(out), *RUNNER]) == 0
    stdout = capsys.readouterr().out
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["skipped"] == {"metadata": 3, "request": 3}
    assert summary["records_found"] == 3 and summary["records_missed"] == 0
    assert "skipped: metadata 3, request 3 (not response records)" in stdout  # before: only in _counts/
    assert "vs 3 read: ok (3 response records found by a second pass over the files, 0 of them not read)" in stdout


def test_records_outside_hosts_are_named_as_such_in_the_summary_and_the_error(tmp_path, capsys):
    root = tmp_path / "warc"
    pages = [Response(f"http://{host}/politics/{i}.html",
                      article_page("x", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i, host in enumerate(["alpha.test", "alpha.test", "beta.test"])]
    write_warc(root / "a.warc.gz", "x", "politics", pages, newsclean_headers="none")
    assert main(["clean", "--warc", str(root), "--out", str(tmp_path / "out"), "--hosts", "alpha.test",
                 "--neighbour-sample", "2", *RUNNER]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if "skipped" in line)
    # by hand: the builder writes one request record per response; beta.test's one response is outside --hosts
    assert line.strip() == "skipped: request 3 (not response records); outside_hosts 1 (response records outside --hosts)"
    assert main(["clean", "--warc", str(root), "--out", str(tmp_path / "none"), "--hosts", "gamma.test", *RUNNER]) == 1
    err = [line for line in capsys.readouterr().err.splitlines()
           if line.startswith("newsclean:") and not line.startswith("newsclean: progress:")]  # progress: by the clock
    assert len(err) == 1 and "outside_hosts 3 (response records outside --hosts)" in err[0], err
    assert "records of other types" not in err[0]


# --- runs a user can reproduce ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """One clean run (default chain) into ``out``, with an exact duplicate among its pages."""
    tmp = tmp_path_factory.mktemp("settings")
    pages = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i in range(3)]
    pages.append(Response("http://alpha.test/politics/copy.html", pages[0].body))
    write_warc(tmp / "warc" / "alpha" / "politics" / "a.warc.gz", "alpha", "politics", pages)
    out = tmp / "out"
    assert main(["clean", "--warc", str(tmp / "warc"), "--out", str(out), *RUNNER]) == 0
    return tmp, out


def _file_settings(files) -> list[dict]:
    """The run settings in the metadata of each Parquet file of ``files`` (a folder: its files, sorted)."""
    import pyarrow.parquet as pq

    from newsclean.pipeline.stages import SETTINGS_METADATA_KEY

    files = sorted(files.glob("*.parquet")) if isinstance(files, Path) else files
    return [json.loads(pq.read_schema(p).metadata[SETTINGS_METADATA_KEY]) for p in files]


def test_run_settings_are_recorded_everywhere(corpus):
    import apache_beam

    from newsclean.transforms.chain import CONFIGS

    _, out = corpus
    settings = json.loads((out / "_summary.json").read_text())["settings"]  # before: none anywhere
    assert {k: settings[k] for k in ("chain", "min_words", "neighbour_sample", "text_includes", "keep_listings")} == {
        "chain": "default", "min_words": 10, "neighbour_sample": 10, "text_includes": list(
            CONFIGS["default"].text_includes), "keep_listings": False}
    assert sorted(settings["models"]) == sorted(p.name for p in CONFIGS["default"].model_files())
    assert all(v.startswith("sha256:") and len(v) == 71 for v in settings["models"].values())
    assert settings["apache_beam"] == apache_beam.__version__ and settings["newsclean"]
    runs = [json.loads(line) for line in (out / "_manifest" / "runs.jsonl").read_text().splitlines()]
    assert runs[-1]["settings"] == settings
    for folder in ("articles", "rejects", "duplicates"):
        assert _file_settings(out / folder) and all(s == settings for s in _file_settings(out / folder)), folder
    card = (out / "README.md").read_text()
    assert "## Run settings" in card and "| `chain` | default |" in card and settings["models"][
        "block_classifier.txt.gz"] in card


def test_incremental_into_a_corpus_of_other_settings_refuses_unless_allowed(corpus, tmp_path, capsys):
    import shutil

    tmp, out0 = corpus
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    more = tmp_path / "more"
    write_warc(more / "alpha" / "politics" / "b.warc.gz", "alpha", "politics",
               [Response("http://alpha.test/politics/new.html",
                         article_page("alpha", "politics", "New", [paragraph(900 + j) for j in range(4)]).encode())])
    argv = ["clean", "--incremental", "--warc", str(more), "--out", str(out), "--min-words", "20", *RUNNER]
    capsys.readouterr()
    assert main(argv) == 1  # before: appended rows made with --min-words 20 to a corpus made with 10
    err = _err(capsys)
    assert len(err) == 1 and "min_words 10 there, 20 now" in err[0] and "--allow-mixed-settings" in err[0], err
    assert main([*argv, "--allow-mixed-settings"]) == 0
    runs = [json.loads(line) for line in (out / "_manifest" / "runs.jsonl").read_text().splitlines()]
    assert [r["settings"]["min_words"] for r in runs] == [10, 20]
    files = sorted((out / "articles").glob("*.parquet"), key=lambda p: p.name.startswith("run-"))
    assert [s["min_words"] for s in _file_settings(files)] == [10, 20]  # each run's rows keep their settings


def test_card_and_summary_hold_no_local_path_and_describe_the_data(corpus):
    tmp, out = corpus
    card = (out / "README.md").read_text()
    summary = (out / "_summary.json").read_text()
    assert str(tmp) not in card and str(tmp) not in summary  # before: the run's absolute paths
    assert json.loads(summary)["warc"] == "../warc"
    header = card.split("---")[1]
    assert "config_name: duplicates" in header and "license: other" in header and "language:\n- en" in header
    assert "set `license` in the YAML header" in card


def test_a_license_the_user_set_is_kept(corpus, tmp_path):
    import shutil

    tmp, out0 = corpus
    out = tmp_path / "out"
    shutil.copytree(out0, out)
    card = out / "README.md"
    card.write_text(card.read_text().replace("license: other", "license: cc-by-4.0"))
    assert main(["clean", "--warc", str(tmp / "warc"), "--out", str(out), *RUNNER]) == 0
    assert "license: cc-by-4.0" in (out / "README.md").read_text()

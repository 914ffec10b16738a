"""A full disk under the output folder: one line and nothing published, or a complete, verified output.

The filesystems are small tmpfs mounts made by the test (root only: where ``mount`` is refused, the tests skip
and say so). Runs go through the console script, so what is asserted is what a user's terminal shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import main

NEWSCLEAN = Path(sys.executable).with_name("newsclean")


@pytest.fixture
def small_fs(tmp_path):
    """A function ``mount(kib) -> Path`` giving a fresh tmpfs of ``kib`` KiB; unmounted at the end."""
    mounts: list[Path] = []

    def mount(kib: int) -> Path:
        point = tmp_path / f"fs{len(mounts)}"
        point.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(point)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a small tmpfs here (needs root): {proc.stderr.strip()}")
        mounts.append(point)
        return point

    yield mount
    for point in mounts:
        subprocess.run(["umount", "-l", str(point)], check=False)


def _corpus(root: Path, sites: int, pages: int, words: int) -> Path:
    for s in range(sites):
        responses = [Response(f"http://s{s}.test/news/{i}.html",
                              article_page(f"s{s}", "news", f"Story {s} {i}",
                                           [paragraph(1000 * s + 10 * i + j, words) for j in range(6)]).encode())
                     for i in range(pages)]
        write_warc(root / f"s{s}" / "news" / f"s{s}-news-20240501T100000Z-00000.warc.gz", f"s{s}", "news", responses)
    return root


def _fill(fs: Path, leave_kib: int) -> None:
    """Leave about ``leave_kib`` KiB free on ``fs``."""
    free = shutil.disk_usage(fs).free
    with open(fs / "fill", "wb") as f:
        f.truncate(0)
        os.posix_fallocate(f.fileno(), 0, max(0, free - leave_kib * 1024))


def _clean(warc: Path, out: Path) -> subprocess.CompletedProcess:
    if not NEWSCLEAN.exists():
        pytest.skip("console script not installed (pip install -e .)")
    return subprocess.run([str(NEWSCLEAN), "clean", "--warc", str(warc), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)


def _error_lines(stderr: str) -> list[str]:
    """stderr without the progress lines a long run prints first."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("newsclean: progress")]


def test_a_full_disk_is_one_line_and_publishes_nothing(tmp_path, small_fs):
    warc = _corpus(tmp_path / "warc", sites=3, pages=60, words=120)
    fs = small_fs(300)
    proc = _clean(warc, fs / "out")
    assert proc.returncode == 1
    lines = _error_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("newsclean: error: ") and "No space left on device" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in (fs / "out").iterdir()) == [".clean.lock"]


def test_a_nearly_full_disk_gives_a_complete_output_or_one_line(tmp_path, small_fs):
    """With 188 KiB free, the run either publishes every row (read back here) or fails in one line with the
    earlier output untouched."""
    warc = _corpus(tmp_path / "warc", sites=1, pages=12, words=45)
    fs = small_fs(4096)
    out = fs / "out"
    _fill(fs, 188)
    proc = _clean(warc, out)
    if proc.returncode == 0:
        rows = sum(ds.dataset(out / name).count_rows() for name in ("articles", "rejects")
                   if (out / name).exists() and any((out / name).iterdir()))
        assert rows == 12
        assert "vs 12 read: ok" in proc.stdout
    else:
        assert proc.returncode == 1
        assert len(_error_lines(proc.stderr)) == 1, proc.stderr
        assert not (out / "articles").exists()


def test_rows_lost_between_writing_and_publishing_fail_the_run_and_publish_nothing(tmp_path, monkeypatch, capsys):
    """A staged Parquet file that is gone when the run reads its output back (a write that failed without an
    error): the accounting check runs before publishing, so the earlier output stays."""
    import newsclean.pipeline.summary as summary

    warc = _corpus(tmp_path / "warc", sites=1, pages=6, words=45)
    out = tmp_path / "out"
    assert main(["clean", "--warc", str(warc), "--out", str(out)]) == 0
    before = sorted(p.name for p in (out / "articles").iterdir())
    capsys.readouterr()
    real = summary.summarize_output

    def losing_one_file(folder, warc=""):
        if "_staging-" in str(folder):
            next(Path(folder, "articles").glob("*.parquet")).unlink()
        return real(folder, warc=warc)

    monkeypatch.setattr(summary, "summarize_output", losing_one_file)
    assert main(["clean", "--warc", str(warc), "--out", str(out)]) == 1
    lines = _error_lines(capsys.readouterr().err)
    assert len(lines) == 1 and "accounting mismatch" in lines[0] and lines[0].endswith("nothing published"), lines
    assert sorted(p.name for p in (out / "articles").iterdir()) == before
    assert ds.dataset(out / "articles").count_rows() == 6

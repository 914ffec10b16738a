"""The progress line's share of the WARC bytes read and its ETA (pipeline/progress.py): the figures of fixed
numbers, the bytes the reader advances (pipeline/warc_reader.py), and a whole run's lines ending at 100 %."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from warc_builder import Response, article_page, paragraph, write_warc

import newsclean.pipeline.progress as progress
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.progress import PROGRESS, ProgressTally, share_and_eta
from newsclean.pipeline.warc_reader import ReadWarcFileFn, item_offset, iter_warc_file

IN_MEMORY = ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"]
SHARE = re.compile(r"(\d+) % of ([\d,.]+) MiB read, ETA (\S+)$")


def _pages(site: str, n: int, seed: int) -> list[Response]:
    return [Response(f"http://{site}.test/news/story-{i}.html",
                     article_page(site, "news", f"Story {i}", [paragraph(seed + i * 10 + j) for j in range(4)]).encode())
            for i in range(n)]


def test_share_and_eta_of_fixed_numbers():
    # 3 of 12 MiB in 60 s: 9 MiB left at 3 MiB a minute is 3 minutes
    assert share_and_eta(3 << 20, 12 << 20, 60.0) == "25 % of 12.0 MiB read, ETA 03:00"
    # 1 of 3 bytes in 1,800 s: 2 bytes left take an hour (tqdm's H:MM:SS from an hour on)
    assert share_and_eta(1, 3, 1800.0) == "33 % of 0.0 MiB read, ETA 1:00:00"
    assert share_and_eta(999, 1000, 5.0).startswith("99 % ")  # rounded down: 100 % only at the end
    assert share_and_eta(0, 5 << 20, 5.0) == "0 % of 5.0 MiB read, ETA ?"  # no rate before the first byte
    assert share_and_eta(5 << 20, 5 << 20, 7.0) == "100 % of 5.0 MiB read, ETA 00:00"
    assert share_and_eta(0, 0, 1.0) == "100 % of 0.0 MiB read, ETA ?"


def test_a_line_with_a_total_carries_the_share_and_the_eta(monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    tally = ProgressTally()
    tally.enabled = True
    tally.reset(total_bytes=4 << 20)
    stream = io.StringIO()
    tally.add("read", 2, stream=stream)
    tally.add("bytes", 1 << 20, stream=stream)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith(", 0 % of 4.0 MiB read, ETA ?")
    assert lines[1].startswith(progress.PREFIX + "2 records read, 0 articles")
    assert SHARE.search(lines[1]).group(1, 2) == ("25", "4.0")
    tally.skip_bytes(2 << 20)  # half the input cleaned by an earlier run: 1 of the 2 MiB left is read
    tally.add("bytes", 0, stream=stream)
    assert SHARE.search(stream.getvalue().splitlines()[-1]).group(1, 2) == ("50", "2.0")


def test_a_line_without_a_total_has_no_share(monkeypatch):
    """A cluster's worker, whose tally the driver never set: its own counts only, as before."""
    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)
    tally = ProgressTally()
    tally.enabled = True
    stream = io.StringIO()
    tally.add("bytes", 1 << 20, stream=stream)
    assert " % " not in stream.getvalue() and stream.getvalue().rstrip().endswith("pages/s")


@pytest.mark.parametrize("from_second_record", [False, True])
def test_the_reader_advances_every_byte_it_reads_in_order(tmp_path, monkeypatch, from_second_record):
    """The bytes counted go up as reading reaches each record and add up to the bytes from the offset reading
    starts at (a grown file's old end) to the file's end."""
    path = write_warc(tmp_path / "a.warc.gz", "alpha", "news", _pages("alpha", 3, 0))
    size = path.stat().st_size
    start = sorted({item_offset(item) for item in iter_warc_file(str(path))})[1] if from_second_record else 0
    assert 0 <= start < size
    advanced = []
    monkeypatch.setattr(PROGRESS, "add", lambda what, n=1, stream=None: advanced.append(n) if what == "bytes" else None)
    fn = ReadWarcFileFn({str(path): start} if start else None)
    fn.setup()
    list(fn.process(str(path)))
    assert sum(advanced) == size - start
    assert len(advanced) >= 3 - from_second_record and all(n > 0 for n in advanced)


def test_the_last_line_of_a_run_says_every_byte_was_read(tmp_path, monkeypatch, capsys):
    warc = tmp_path / "warc"
    files = [write_warc(warc / site / "news" / f"{site}-news-20240501T100000Z-00000.warc.gz", site, "news",
                        _pages(site, n, seed)) for site, n, seed in (("alpha", 3, 0), ("beta", 2, 500))]
    total = sum(f.stat().st_size for f in files)
    monkeypatch.setenv(progress.INTERVAL_ENV, "0")  # a line at every count
    run_clean(CleanConfig(warc=str(warc), out=str(tmp_path / "out")), IN_MEMORY, progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith(progress.PREFIX)]
    shares = [SHARE.search(line) for line in lines]
    assert shares and all(shares)
    assert {m.group(2) for m in shares} == {f"{total / 2**20:,.1f}"}
    percents = [int(m.group(1)) for m in shares]
    assert percents == sorted(percents) and percents[0] < 100
    assert percents[-1] == 100 and shares[-1].group(3) == "00:00"
    assert Path(tmp_path / "out" / "_summary.json").exists()

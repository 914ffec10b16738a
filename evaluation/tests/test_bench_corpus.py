"""bench/bench_corpus.py's generated corpus: the same records whether one process or several write it."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

from bench_modules import bench_module
from fastwarc.warc import ArchiveIterator, WarcRecordType

bench_corpus = bench_module("bench_corpus")


def _page(i: int, html: bytes | None = None) -> SimpleNamespace:
    body = f"<p>story {i} the council met on tuesday to vote on the new budget for the town</p>"
    html = f"<html><body>{body}</body></html>".encode() if html is None else html
    return SimpleNamespace(url=f"http://s{i % 3}.test/a/{i}.html", html=html)


def _records(root: Path) -> list[tuple[str, str, str, str]]:
    out = []
    for path in sorted(root.rglob("*.warc.gz")):
        with open(path, "rb") as f:
            for record in ArchiveIterator(f, record_types=WarcRecordType.response):
                out.append((str(path.relative_to(root)), record.headers.get("WARC-Target-URI"),
                            record.headers.get("WARC-Newsclean-Site"),
                            hashlib.sha1(record.reader.read()).hexdigest()))
    return out


def test_generate_jobs_write_the_records_of_one_process(tmp_path):
    # an empty page does not parse: it is in copy 0 (the page itself) and in no shuffled copy
    groups = {("s0", "d1"): [_page(0), _page(3), _page(6, html=b"")], ("s1", "d1"): [_page(1), _page(4)],
              ("s2", "d2"): [_page(2)]}
    one = bench_corpus._generate(groups, tmp_path / "one", 13, jobs=1)
    two = bench_corpus._generate(groups, tmp_path / "two", 13, jobs=2)
    assert one == two == (13, 3)  # 6 pages in copy 0, 5 in copy 1, 2 of copy 2
    records = _records(tmp_path / "one")
    assert records == _records(tmp_path / "two")
    assert len(records) == 13
    assert [uri for _, uri, _, _ in records if "/6.html" in uri] == ["http://s0.test/a/6.html"]
    assert {site for _, _, site, _ in records} == {"s0", "s1", "s2", "s0-v1", "s1-v1", "s2-v1", "s0-v2"}
    # a shuffled copy has the page's words in another order: distinct text, same length
    by_uri = {uri: digest for _, uri, _, digest in records}
    assert by_uri["http://s1.test/a/1.html"] != by_uri["http://s1.test/a/1.html?v=1"]

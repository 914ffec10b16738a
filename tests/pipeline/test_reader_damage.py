"""Damaged WARC files are read to the end: damage costs its own bytes, never the intact records after it.

The reader resumes at the next intact gzip member (``.warc.gz``) or ``WARC/1.`` header (``.warc``) after damage,
the damaged bytes become one reject with their byte range, a record ends where its gzip member ends, and the
run's accounting is checked against a second, independent count of the records in the file.
"""

from __future__ import annotations

import gzip
import io
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from warc_builder import Response, article_page, paragraph, write_warc
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from newsclean.pipeline import warc_reader
from newsclean.pipeline.warc_reader import ReadStats, ReadWarcFileFn, iter_warc_file
from newsclean.schemas.records import Page, Reject

N = 10


def _records(data: bytes) -> list[tuple[int, int, str]]:
    """Each record of WARC ``data`` (warcio): ``(start, end, URL of a response or the record type)``."""
    it = WarcioIterator(io.BytesIO(data))
    records = []
    for rec in it:
        start = it.get_record_offset()
        url = rec.rec_headers.get_header("WARC-Target-URI") if rec.rec_type == "response" else rec.rec_type
        records.append((start, start + it.get_record_length(), url))
    return records


def _ten(tmp_path: Path) -> tuple[bytes, list[tuple[int, int, str]]]:
    """A per-record ``.warc.gz`` of 10 pages: its bytes and its records (:func:`_records`)."""
    path = write_warc(tmp_path / "s" / "c" / "ten.warc.gz", "s", "c",
                      [Response(f"http://s.test/c/{i}.html",
                                article_page("s", "c", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
                       for i in range(N)])
    data = path.read_bytes()
    return data, _records(data)


def _plain(data: bytes) -> tuple[bytes, list[tuple[int, int, str]]]:
    """The uncompressed form of a per-record ``.warc.gz`` and its records."""
    plain = b"".join(gzip.decompress(data[s:e]) for s, e, _ in _records(data))
    return plain, _records(plain)


def _read(data: bytes, name: str) -> tuple[list, ReadStats]:
    stats = ReadStats()
    items = list(iter_warc_file(name, io.BytesIO(data), stats))
    return items, stats


def _responses(records):
    return [(s, e, url) for s, e, url in records if url.startswith("http")]


# --- a damaged gzip member in the middle ---------------------------------------------------


@pytest.mark.parametrize("damage", ["flipped_bytes", "bad_magic", "bad_crc"])
def test_a_damaged_member_costs_only_itself(tmp_path, damage):
    data, records = _ten(tmp_path)
    start, end, url = _responses(records)[6]  # the 7th of 10 response members
    buf = bytearray(data)
    if damage == "flipped_bytes":
        for i in range(start + (end - start) // 2, start + (end - start) // 2 + 16):
            buf[i] ^= 0xFF
    elif damage == "bad_magic":
        buf[start] = 0x00
    else:
        buf[end - 8] ^= 0xFF  # the CRC-32 in the member's trailer (RFC 1952 §2.3.1)
    items, stats = _read(bytes(buf), "ten.warc.gz")
    pages = [i for i in items if isinstance(i, Page)]
    rejects = [i for i in items if isinstance(i, Reject)]
    assert [p.url for p in pages] == [u for _, _, u in _responses(records) if u != url]  # before: the first 6
    assert len(rejects) == 1 and rejects[0].reason == "not_warc" and rejects[0].warc_offset == start
    assert f"bytes {start}-{end} " in rejects[0].message, rejects[0].message  # the damaged span, to the next member
    assert stats == ReadStats(records_read=N, pages=N - 1, rejects=1)


def test_an_uncompressed_file_resumes_at_the_next_header(tmp_path):
    data, _ = _ten(tmp_path)
    plain, records = _plain(data)
    start, end, url = _responses(records)[6]
    damaged = plain[:start] + b"WARX/1.1 garbled" + plain[start + 16:]  # the 7th response's header line
    items, stats = _read(damaged, "ten.warc")
    pages = [i for i in items if isinstance(i, Page)]
    assert [p.url for p in pages] == [u for _, _, u in _responses(records) if u != url]
    assert stats.records_read == stats.pages + stats.rejects == len(items) and stats.rejects == 1


# --- a Content-Length past the end of its gzip member --------------------------------------


def test_a_record_ends_where_its_member_ends(tmp_path):
    data, records = _ten(tmp_path)
    start, end, url = _responses(records)[4]
    record = gzip.decompress(data[start:end])
    head, sep, rest = record.partition(b"\r\n\r\n")
    length = int([line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")][0].split(b":")[1])
    longer = head.replace(b"Content-Length: %d" % length, b"Content-Length: %d" % (length + 5000)) + sep + rest
    damaged = data[:start] + gzip.compress(longer) + data[end:]
    items, stats = _read(damaged, "ten.warc.gz")
    by_url = {getattr(i, "url", None): i for i in items}
    assert isinstance(by_url[url], Reject) and by_url[url].reason == "truncated_record"
    assert sum(isinstance(i, Page) for i in items) == N - 1  # before: 4 pages and 1 reject
    assert stats == ReadStats(records_read=N, pages=N - 1, rejects=1)


def test_a_content_length_past_the_end_of_an_uncompressed_file_hides_no_record(tmp_path):
    """A ``.warc`` whose first record declares 10**9 bytes: FastWARC reads the rest of the file as its block; the
    records after it are read all the same (found by a bench/fuzz_clean.py run: the second pass counted them)."""
    data, _ = _ten(tmp_path)
    plain, records = _plain(data)
    start, end, _ = _responses(records)[0]
    head, sep, rest = plain[start:end].partition(b"\r\n\r\n")
    length = re.search(rb"Content-Length: (\d+)", head).group(1)
    damaged = plain[:start] + head.replace(b"Content-Length: " + length, b"Content-Length: 1000000000") + sep + rest \
        + plain[end:]
    items, stats = _read(damaged, "ten.warc")
    assert sum(isinstance(i, Page) for i in items) == N - 1  # before: 0 pages
    assert stats.records_read == stats.pages + stats.rejects == len(items)


# --- the independent count -----------------------------------------------------------------


def _damaged(data: bytes, offset: int, kind: str, rng: random.Random) -> tuple[bytes, tuple[int, int]]:
    """``data`` damaged at ``offset``: the new bytes and the ``[start, end)`` range of the original bytes touched
    (an insertion touches the two bytes around it)."""
    if kind == "flip":
        buf = bytearray(data)
        for i in range(offset, min(offset + 4, len(buf))):
            buf[i] ^= 1 << rng.randrange(8)
        return bytes(buf), (offset, offset + 4)
    if kind == "overwrite":
        return data[:offset] + rng.randbytes(24) + data[offset + 24:], (offset, offset + 24)
    if kind == "insert":
        return data[:offset] + rng.randbytes(40) + data[offset:], (offset - 1, offset + 1)
    return data[:offset] + data[offset + 30:], (offset, offset + 30)  # delete


@pytest.mark.parametrize("gz", [True, False], ids=["warc.gz", "warc"])
def test_damage_at_many_offsets_loses_no_intact_record(tmp_path, gz):
    """Damage at ~100 offsets of each kind: every response record whose bytes the damage did not touch comes out as
    a page, the reader's counts balance, and the independent count finds nothing the reader missed."""
    data, records = _ten(tmp_path)
    if not gz:
        data, records = _plain(data)
    rng = random.Random(7)
    name = "f.warc.gz" if gz else "f.warc"
    lost = []
    for kind in ("flip", "overwrite", "insert", "delete"):
        for offset in sorted(rng.sample(range(1, len(data) - 1), 100)):
            damaged, (a, b) = _damaged(data, offset, kind, rng)
            intact = {url for s, e, url in _responses(records) if e <= a or s >= b}
            stats = ReadStats()
            items = list(iter_warc_file(name, io.BytesIO(damaged), stats))
            rows = Counter(warc_reader.item_offset(i) for i in items)
            warc_reader.check_read(name, stats, rows, io.BytesIO(damaged))
            got = {i.url for i in items if isinstance(i, Page)}
            if intact - got:
                lost.append((kind, offset, sorted(intact - got)))
            assert stats.records_read == stats.pages + stats.rejects == len(items), (kind, offset, stats)
            assert stats.missed == 0, (kind, offset, stats)
            assert stats.found >= len(intact), (kind, offset, stats)
    assert not lost, f"{len(lost)} damaged files lost intact records, e.g. {lost[:3]}"


def test_a_reader_that_stops_early_fails_the_accounting(tmp_path, monkeypatch):
    """The run's records_read comes from a second pass over the file, not from the reader: a reader that gives up
    after 3 records (as FastWARC's iterator did at the first damage) leaves 7 records unaccounted for."""
    data, _ = _ten(tmp_path)
    path = tmp_path / "ten.warc.gz"
    path.write_bytes(data)
    real = warc_reader.iter_warc_file

    def gives_up(p, stream=None, stats=None, **kwargs):
        for n, item in enumerate(real(p, stream, stats, **kwargs)):
            if n == 3:
                return
            yield item

    monkeypatch.setattr(warc_reader, "iter_warc_file", gives_up)
    fn = ReadWarcFileFn()
    fn.setup()
    outputs = list(fn.process(str(path)))
    counts = dict(o.value for o in outputs if getattr(o, "tag", None) == "counts")
    rows = sum(1 for o in outputs if getattr(o, "tag", None) != "counts")
    assert rows == 3 and counts["records_read"] == N  # before: 3 read, 3 rows, "balanced"
    assert counts["records_found"] == N and counts["records_missed"] == N - 3


def test_a_damaged_span_covers_the_record_it_starts_at_even_when_empty():
    """A span ``[start, end)`` accounts for the first found record in it, or for the one at ``start`` when it is
    empty (the reader's span after a header that did not parse can end where it starts); one span covers at most
    one record, and a record before or after an empty span is not covered by it."""
    from newsclean.pipeline.warc_framing import missed_records

    assert missed_records(Counter({100: 1}), Counter(), [(100, 100)]) == {}  # before: {100: 1}
    assert missed_records(Counter({100: 2}), Counter(), [(100, 100)]) == {100: 1}
    assert missed_records(Counter({100: 1, 200: 1}), Counter(), [(150, 150), (100, 300)]) == {200: 1}
    assert missed_records(Counter({100: 1, 200: 1}), Counter(), [(100, 300)]) == {200: 1}


# --- many damaged spans in one file --------------------------------------------------------


def _interleaved(tmp_path: Path, n: int) -> tuple[bytes, list[str]]:
    """A per-record ``.warc.gz`` of ``n`` small pages with a damaged span after each response member (random
    bytes, or a gzip member whose deflate data is random): its bytes and the response URLs, in order."""
    urls = [f"http://s.test/c/{i}.html" for i in range(n)]
    path = write_warc(tmp_path / "s" / "c" / "many.warc.gz", "s", "c",
                      [Response(u, b"<html><body><p>page %d</p></body></html>" % i) for i, u in enumerate(urls)])
    data = path.read_bytes()
    rng = random.Random(3)
    parts, pos = [], 0
    for i, (_, end, _) in enumerate(_responses(_records(data))):
        junk = rng.randbytes(rng.randint(20, 80))
        parts += [data[pos:end], b"\x1f\x8b\x08\x00" + junk if i % 2 else junk]
        pos = end
    return b"".join(parts) + data[pos:], urls


def test_every_intact_record_is_read_whatever_the_number_of_damaged_spans(tmp_path):
    """1,200 intact response records, each followed by a damaged span: every record is a page, every span one
    reject, and the independent count finds the 1,200 records (the reader once gave up after 1,000 spans, the rest
    of the file one span, and the second pass stopped there too: 1,001 pages, and the accounting balanced)."""
    n = 1200
    data, urls = _interleaved(tmp_path, n)
    path = tmp_path / "many.warc.gz"
    path.write_bytes(data)
    fn = ReadWarcFileFn()
    fn.setup()
    outputs = list(fn.process(str(path)))
    counts = dict(o.value for o in outputs if getattr(o, "tag", None) == "counts")
    pages = [o for o in outputs if isinstance(o, Page)]
    rejects = [o.value for o in outputs if getattr(o, "tag", None) == "rejects"]
    assert [p.url for p in pages] == urls  # before: the first 1,001
    assert len(rejects) == n and {r.reason for r in rejects} == {"not_warc"}
    assert counts["records_found"] == n and counts["records_missed"] == 0  # before: 1,001 found
    assert counts["records_read"] == len(pages) + len(rejects) == 2 * n


def _nested(depth: int) -> tuple[bytes, list[int]]:
    """``depth`` damaged gzip members nested inside each other: each a stored deflate block (RFC 1951 §3.2.4)
    holding ``WARC/1.1`` and the next member, then a wrong CRC-32. Returns the bytes and each member's offset."""
    member = b"WARC/1.1\r\n" + b"x" * 30
    for _ in range(depth):
        payload = b"WARC/1.1\r\n" + member
        member = (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\x01" + len(payload).to_bytes(2, "little")
                  + (len(payload) ^ 0xFFFF).to_bytes(2, "little") + payload + b"\x00" * 4
                  + len(payload).to_bytes(4, "little"))
    return member, [25 * k for k in range(depth)]  # gzip header, block header, WARC/1.1 line: 25 bytes a level


def _reread_bound(monkeypatch, bound: str) -> None:
    """``"spent"``: no byte may be read again (the re-reading bound of ``warc_framing`` is 0); ``"default"``: as
    shipped."""
    from newsclean.pipeline import warc_framing

    if bound == "spent":
        monkeypatch.setattr(warc_framing, "REREAD_BYTES", 0)
        monkeypatch.setattr(warc_framing, "REREAD_PER_FILE_BYTE", 1)


@pytest.mark.parametrize("bound", ["default", "spent"])
def test_nested_damaged_members_cost_a_bounded_rereading_and_are_named(tmp_path, monkeypatch, bound):
    """1,200 damaged members nested inside each other, between two intact records: each damaged member is one
    reject, or (once the bytes read again pass the bound) named in the reject of the span that skipped it; the
    records after them are read either way (the reader once gave up after 1,000 spans, losing them)."""
    _reread_bound(monkeypatch, bound)
    data, records = _ten(tmp_path)
    first, _, _ = _responses(records)[5]
    depth = 1200
    nested, starts = _nested(depth)
    damaged = data[:first] + nested + data[first:]
    items, stats = _read(damaged, "nested.warc.gz")
    rejects = [i for i in items if isinstance(i, Reject)]
    assert sum(isinstance(i, Page) for i in items) == N  # before: 5
    assert stats.records_read == stats.pages + stats.rejects == len(items)
    skipped = [int(m.group(1)) for r in rejects
               for m in [re.search(r"; (\d+) gzip members starting a WARC record in bytes", r.message)] if m]
    at_starts = sum(r.warc_offset - first in set(starts) for r in rejects)
    assert at_starts + sum(skipped) == depth, (at_starts, skipped)
    assert bool(skipped) == (bound == "spent")
    rows = Counter(warc_reader.item_offset(i) for i in items)
    warc_reader.check_read("nested.warc.gz", stats, rows, io.BytesIO(damaged))
    assert stats.missed == 0 and stats.found == N


def _long_blocks(depth: int) -> tuple[bytes, list[int]]:
    """``depth`` response headers in a row, each declaring a ``Content-Length`` of 10**9 bytes, so that each
    record's block runs past the end of the file and holds the records after it. Returns the bytes and each
    record's offset."""
    heads = [b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://s.test/c/long%04d.html\r\n"
             b"Content-Length: 1000000000\r\n\r\n" % k for k in range(depth)]
    return b"".join(heads), [sum(map(len, heads[:k])) for k in range(depth)]


@pytest.mark.parametrize("bound", ["default", "spent"])
def test_nested_long_blocks_cost_a_bounded_rereading_and_are_named(tmp_path, monkeypatch, bound):
    """The uncompressed form of the test above: 50 records whose ``Content-Length`` runs past the end of the file,
    between intact records. Each is one reject, or (once the bytes read again pass the bound) named in the reject
    of the span that skipped it; the records after them are read either way, and the independent count skips
    what the reader skipped (the reader once took the whole rest of the file for read well once the bound was
    spent: 5 pages, the rest reported as a reader bug)."""
    _reread_bound(monkeypatch, bound)
    plain, records = _plain(_ten(tmp_path)[0])
    first, _, _ = _responses(records)[5]
    depth = 50
    nested, starts = _long_blocks(depth)
    damaged = plain[:first] + nested + plain[first:]
    items, stats = _read(damaged, "nested.warc")
    rejects = [i for i in items if isinstance(i, Reject)]
    assert sum(isinstance(i, Page) for i in items) == N  # before, with the bound spent: 5
    assert stats.records_read == stats.pages + stats.rejects == len(items)
    named = {id(r): int(m.group(1)) for r in rejects
             for m in [re.search(r"; (\d+) WARC/1\. lines in bytes", r.message)] if m}
    skipped = list(named.values())  # a reject naming them starts where a record's header ends: the next one's start
    at_starts = sum(r.warc_offset - first in set(starts) for r in rejects if id(r) not in named)
    assert at_starts + sum(skipped) == depth, (at_starts, skipped)
    assert bool(skipped) == (bound == "spent")
    rows = Counter(warc_reader.item_offset(i) for i in items)
    warc_reader.check_read("nested.warc", stats, rows, io.BytesIO(damaged))
    assert stats.missed == 0 and stats.found == N + at_starts  # before, with the bound spent: 5 missed

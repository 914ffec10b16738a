"""Where the records of a WARC file lie, found without a WARC parser: gzip members, record headers, damage.

The reader (:mod:`newsclean.pipeline.warc_reader`) parses records with FastWARC, which stops at the first
damaged byte of a file. This module finds the places to resume at and the independent count the accounting
checks the reader against:

* **gzip members** (RFC 1952 §2.2): a ``.warc.gz`` holds one member per record (WARC 1.1 annex D.2), so a member
  is a record's frame. :class:`MemberInflater` inflates one member, stopping at its end, and tells where it ended
  or why it is damaged (corrupt data, a bad CRC, the file ending inside it); :func:`find_warc_member` finds the
  next intact member that inflates to a ``WARC/1.`` record after damage.
* **record headers** in an uncompressed ``.warc`` (WARC 1.1 §4): :func:`find_warc_header` finds the next
  ``WARC/1.`` line, :func:`record_bounds` where a record's header and block end (``Content-Length``).
* **the independent count** (:func:`scan_responses`): a second pass over the file, with its own loop and header
  parsing (no FastWARC), that lists where each response record it can find starts; :func:`missed_records`
  compares it with what the reader made of the file.

Every read is bounded: :data:`READ_CHUNK` bytes of the file and :data:`INFLATE_STEP` inflated bytes at a time,
a record header of at most :data:`MAX_HEADER_BYTES`. Reading goes on after any number of damaged spans; what
damage may cost in bytes read again is bounded instead (:class:`Rereading`), so a hostile file costs time linear in
its size and memory of a few MiB besides one entry per record and span.
"""

from __future__ import annotations

import bisect
import io
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

#: Start of every gzip member: ID1, ID2 and CM = 8 (deflate), RFC 1952 §2.3.1.
GZIP_MAGIC = b"\x1f\x8b\x08"
#: Start of every WARC record (WARC 1.1 §4: ``WARC/1.1``; WARC/1.0 files too).
WARC_MAGIC = b"WARC/1."
#: Bytes of the file read at once.
READ_CHUNK = 64 * 1024
#: Compressed bytes given to zlib at once (:class:`MemberInflater`).
INFLATE_INPUT = 4 * 1024
#: Inflated bytes produced by one zlib call (what inflating holds at once).
INFLATE_STEP = 1 << 20
#: Longest WARC record header read, in bytes (FastWARC's ``max_header_len`` is 32 KiB).
MAX_HEADER_BYTES = 64 * 1024
#: Compressed bytes tried when deciding whether a gzip magic number starts a WARC member.
MEMBER_TRIAL_BYTES = 4 * 1024
#: Bytes that reading after damage may read again, on top of :data:`REREAD_PER_FILE_BYTE` per byte of the file
#: (:class:`Rereading`). Real damage reads again a few bytes a span, at most a record's.
REREAD_BYTES = 64 << 20
#: Bytes that reading after damage may read again per byte of the file, on top of :data:`REREAD_BYTES`.
REREAD_PER_FILE_BYTE = 4
#: Bytes that may pad a file after its last record (NUL, whitespace): no damage.
PADDING = b"\x00\r\n\t "

_CONTENT_LENGTH = re.compile(rb"(?im)^content-length:[ \t]*(\d{1,18})[ \t]*\r?$")
_WARC_TYPE = re.compile(rb"(?im)^warc-type:[ \t]*([!-~]+)")


class _Reader(io.RawIOBase):
    """A read-only raw file object whose ``read`` does the work (``readinto`` reads through it)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


class ByteRange(_Reader):
    """A read-only file object over bytes ``[start, end)`` of ``stream``; ``tell()`` is the offset in ``stream``.

    Each read seeks ``stream`` first, so other code may read ``stream`` between two reads (FastWARC reads a
    member through one while the framing inflates the next).
    """

    def __init__(self, stream: BinaryIO, start: int, end: int):
        super().__init__()
        self.stream, self.start, self.end, self.pos = stream, start, end, start

    def read(self, size: int = -1) -> bytes:
        n = self.end - self.pos if size is None or size < 0 else min(size, self.end - self.pos)
        if n <= 0:
            return b""
        self.stream.seek(self.pos)
        data = self.stream.read(n)
        self.pos += len(data)
        return data

    def tell(self) -> int:
        return self.pos


def stream_size(stream: BinaryIO) -> int | None:
    """Bytes in ``stream`` (seeks to its end and back), or None when it cannot seek."""
    try:
        if not stream.seekable():
            return None
        here = stream.tell()
        size = stream.seek(0, io.SEEK_END)
        stream.seek(here)
        return size
    except (OSError, ValueError):
        return None


def read_at(stream: BinaryIO, offset: int, n: int) -> bytes:
    """At most ``n`` bytes of ``stream`` from byte ``offset``."""
    stream.seek(offset)
    return stream.read(n)


def is_padding(stream: BinaryIO, start: int, end: int) -> bool:
    """Whether bytes ``[start, end)`` of ``stream`` are all :data:`PADDING` (read in chunks)."""
    pos = start
    while pos < end:
        chunk = read_at(stream, pos, min(READ_CHUNK, end - pos))
        if not chunk:
            return True
        if chunk.strip(PADDING):
            return False
        pos += len(chunk)
    return True


# --------------------------------------------------------------------------------------------
# gzip members
# --------------------------------------------------------------------------------------------


class MemberInflater(_Reader):
    """The inflated data of the one gzip member at byte ``start`` of ``stream`` (file bytes up to ``end``).

    ``read(n)`` gives the member's data and ``b""`` at its end. Once :meth:`finish` (or reading to the end) has
    run: :attr:`end` is the byte after the member when it is intact, :attr:`error` is None for an intact member
    (deflate data and CRC-32 checked by zlib) or says why it is damaged, :attr:`cut` is True when the file ends
    inside the member. :attr:`head` keeps the first :data:`MAX_HEADER_BYTES` inflated bytes. zlib is given
    :data:`INFLATE_INPUT` bytes at a time: a damaged member's damage lies between :attr:`checked_to` (the byte after
    the last one zlib took in without error) and :attr:`fed_to` (after the last one given to it).
    """

    def __init__(self, stream: BinaryIO, start: int, end: int):
        super().__init__()
        self.stream, self.start, self.file_end = stream, start, end
        self.end: int | None = None
        self.error: str | None = None
        self.cut = False
        self.head = b""
        self.checked_to = start
        self._pos = start  # the next file byte to feed
        self._tail = b""  # fed bytes zlib has not consumed yet (its output limit stopped it)
        self._out = b""  # inflated bytes not read yet
        self._done = False
        self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        first = read_at(stream, start, len(GZIP_MAGIC))
        if first != GZIP_MAGIC:
            self._fail("no gzip member starts here", cut=GZIP_MAGIC.startswith(first) and start + len(first) >= end)

    def _fail(self, error: str, cut: bool = False) -> None:
        self.error, self.cut, self._done = error, cut, True

    def _inflate(self) -> bytes:
        """The next inflated bytes (at most :data:`INFLATE_STEP`), ``b""`` at the member's end or damage."""
        while not self._done:
            data = self._tail
            if not data:
                data = read_at(self.stream, self._pos, min(INFLATE_INPUT, self.file_end - self._pos))
                if not data:
                    self._fail("the file ends inside the gzip member", cut=True)
                    return b""
                self._pos += len(data)
            try:
                out = self._d.decompress(data, INFLATE_STEP)
            except zlib.error as exc:
                self._fail(f"corrupt gzip member: {exc}")
                return b""
            self._tail = self._d.unconsumed_tail
            self.checked_to = self._pos - len(self._tail)
            if self._d.eof:
                self.end = self._pos - len(self._d.unused_data)  # unconsumed_tail repeats unused_data at eof
                self._done = True
            if len(self.head) < MAX_HEADER_BYTES:
                self.head += out[:MAX_HEADER_BYTES - len(self.head)]
            if out:
                return out
        return b""

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            size = INFLATE_STEP
        while len(self._out) < size and not self._done:
            self._out += self._inflate()
        data, self._out = self._out[:size], self._out[size:]
        return data

    def finish(self) -> MemberInflater:
        """Inflate (and drop) the rest of the member, so that :attr:`end` and :attr:`error` are known; returns self."""
        self._out = b""
        while not self._done:
            self._inflate()
        return self

    @property
    def fed_to(self) -> int:
        """The byte of the file after the last one given to zlib (so far)."""
        return self._pos

    @property
    def intact(self) -> bool:
        """Whether the member inflated to its end without error (after :meth:`finish`)."""
        return self._done and self.error is None

    @property
    def is_warc(self) -> bool:
        """Whether the member's data starts a WARC record (its first bytes, after :meth:`finish` or a read)."""
        return self.head.startswith(WARC_MAGIC)


def starts_warc_member(stream: BinaryIO, offset: int) -> bool:
    """Whether an intact-looking gzip member starting at ``offset`` inflates to ``WARC/1.``: its header and
    first deflate bytes (at most :data:`MEMBER_TRIAL_BYTES`) are inflated, nothing more."""
    raw = read_at(stream, offset, MEMBER_TRIAL_BYTES)
    if not raw.startswith(GZIP_MAGIC):
        return False
    try:
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, len(WARC_MAGIC))
    except zlib.error:
        return False
    return out == WARC_MAGIC


def find_all(stream: BinaryIO, needle: bytes, start: int, end: int) -> Iterator[int]:
    """The offsets of ``needle`` in bytes ``[start, end)`` of ``stream``, in order, read in :data:`READ_CHUNK`
    pieces (overlapping by ``len(needle) - 1`` bytes, so that none is missed at a piece's edge)."""
    pos = start
    while pos < end:
        chunk = read_at(stream, pos, min(READ_CHUNK + len(needle) - 1, end - pos))
        if len(chunk) < len(needle):
            return
        i = chunk.find(needle)
        while i >= 0:
            yield pos + i
            i = chunk.find(needle, i + 1)
        pos += len(chunk) - len(needle) + 1


def find_warc_member(stream: BinaryIO, start: int, end: int) -> int | None:
    """The offset of the first gzip member at or after ``start`` (before ``end``) that inflates to a WARC record
    (:func:`starts_warc_member`), or None."""
    return next((pos for pos in find_all(stream, GZIP_MAGIC, start, end) if starts_warc_member(stream, pos)), None)


def is_gzip(stream: BinaryIO, offset: int, name: str) -> bool:
    """Whether the WARC data at ``offset`` is gzipped: its first bytes are a gzip member; for bytes that are
    neither gzip nor ``WARC/1.`` (damage at the start), the file name's ``.gz`` decides."""
    first = read_at(stream, offset, len(GZIP_MAGIC))
    if first == GZIP_MAGIC:
        return True
    if read_at(stream, offset, MAX_HEADER_BYTES).lstrip(PADDING).startswith(WARC_MAGIC):
        return False
    return name.endswith(".gz")


# --------------------------------------------------------------------------------------------
# Uncompressed records
# --------------------------------------------------------------------------------------------


def find_warc_header(stream: BinaryIO, start: int, end: int) -> int | None:
    """The offset of the first ``WARC/1.`` at the start of a line, at or after ``start`` (before ``end``), or
    None. A line starts at ``start`` itself only when ``start`` is 0 or follows a line feed."""
    if start == 0 or read_at(stream, start - 1, 1) == b"\n":
        if read_at(stream, start, len(WARC_MAGIC)) == WARC_MAGIC:
            return start
    return next((pos + 1 for pos in find_all(stream, b"\n" + WARC_MAGIC, start, end)), None)


@dataclass(frozen=True)
class RecordBounds:
    """Where one uncompressed WARC record lies: its header ends at ``header_end`` (after the blank line), its
    block at ``block_end`` (``header_end`` + ``Content-Length``); ``warc_type`` is its ``WARC-Type`` value,
    lower-cased (``b""`` when absent)."""

    start: int
    header_end: int
    block_end: int
    warc_type: bytes


def parse_record_header(data: bytes, start: int) -> RecordBounds | None:
    """:class:`RecordBounds` of the record whose header starts ``data`` (``data`` is the file from byte ``start``,
    at least the header), or None when ``data`` does not start with a whole ``WARC/1.`` header with a
    ``Content-Length``."""
    if not data.startswith(WARC_MAGIC):
        return None
    end = data.find(b"\r\n\r\n", 0, MAX_HEADER_BYTES)
    if end < 0:
        return None
    header = data[:end + 2]
    length = _CONTENT_LENGTH.search(header)
    if length is None:
        return None
    kind = _WARC_TYPE.search(header)
    header_end = start + end + 4
    return RecordBounds(start, header_end, header_end + int(length.group(1)),
                        kind.group(1).lower() if kind else b"")


def record_bounds(stream: BinaryIO, offset: int) -> RecordBounds | None:
    """:func:`parse_record_header` of the record at byte ``offset`` of an uncompressed ``stream``."""
    return parse_record_header(read_at(stream, offset, MAX_HEADER_BYTES), offset)


def skip_padding(stream: BinaryIO, pos: int, end: int) -> int:
    """The first byte at or after ``pos`` that is not :data:`PADDING` (``end`` when there is none)."""
    while pos < end:
        chunk = read_at(stream, pos, min(READ_CHUNK, end - pos))
        if not chunk:
            return end
        rest = chunk.lstrip(PADDING)
        if rest:
            return pos + len(chunk) - len(rest)
        pos += len(chunk)
    return end


def resume_after(stream: BinaryIO, failed: int, resume: int, end: int) -> int | None:
    """Where reading an uncompressed WARC goes on after the record header expected at ``failed`` did not parse:
    the first ``WARC/1.`` line at or after ``resume`` (the end of the last header that parsed, so that a header
    hidden by a ``Content-Length`` too long is found) other than ``failed`` itself; None when there is none.
    The reader and :func:`scan_responses` both resume here."""
    nxt = find_warc_header(stream, resume, end)
    if nxt == failed:
        nxt = find_warc_header(stream, failed + 1, end)
    return nxt


# --------------------------------------------------------------------------------------------
# Reading again after damage
# --------------------------------------------------------------------------------------------


class Rereading:
    """The bound on the bytes of a file that reading after damage reads a second time.

    After damage reading resumes before the furthest byte already read: at the next WARC member after a damaged
    member's start (its damage may hide where it ended), or at the next ``WARC/1.`` line after the last header that
    parsed. Damaged members (or records) nested inside each other, each hiding the next, would so cost a file its
    size squared. :meth:`charge` counts the bytes read again; while fewer than :data:`REREAD_BYTES` +
    :data:`REREAD_PER_FILE_BYTE` × ``size`` (bytes of the file) are, :meth:`search_from` lets the search start
    where it asks; past that, after the furthest byte that damaged data read well up to (and past the headers
    whose ``Content-Length`` runs past the end: :func:`after_long_block`; the reader names what it
    skipped: :func:`members_between`, :func:`headers_between`). Real damage reads a few bytes again, and never gets
    there.
    """

    def __init__(self, size: int):
        self.left = REREAD_BYTES + REREAD_PER_FILE_BYTE * size
        self.read_to = 0  # the byte after the furthest one read
        self.good_to = 0  # the byte after the furthest one read without error

    def charge(self, start: int, reached: int, good: int | None = None) -> None:
        """Reading went from byte ``start`` to byte ``reached``, without error up to byte ``good`` (``reached`` when
        None): counts the bytes before :attr:`read_to` as read again."""
        if start < self.read_to:
            self.left -= min(reached, self.read_to) - start
        self.read_to = max(self.read_to, reached)
        self.good_to = max(self.good_to, reached if good is None else good)

    def search_from(self, pos: int) -> int:
        """Where the search for the next record after damage starts: ``pos``, or :attr:`good_to` once the bound is
        spent."""
        return pos if self.left > 0 else max(pos, self.good_to)


def after_long_block(stream: BinaryIO, header_end: int, end: int, rereading: Rereading) -> int:
    """Where the search for the next record of an uncompressed ``stream`` (``end`` bytes) starts after a record
    whose header ends at byte ``header_end`` and whose ``Content-Length`` runs past ``end``: its block may hide
    records, so at :meth:`Rereading.search_from`; once the bound is spent, past the ``WARC/1.`` lines whose own
    ``Content-Length`` runs past ``end`` too (each would hide the rest again: read, they cost the file its size
    squared), at the first header that does not (``end`` when there is none). The reader and
    :func:`scan_responses` both resume here."""
    search = rereading.search_from(header_end)
    if rereading.left > 0:
        return search
    pos = find_warc_header(stream, search, end)
    while pos is not None:
        bounds = record_bounds(stream, pos)
        if bounds is None or bounds.block_end <= end:
            return pos
        pos = find_warc_header(stream, bounds.header_end, end)
    return end


def starts_in(stream: BinaryIO, needle: bytes, start: int, end: int) -> Iterator[int]:
    """The offsets in ``[start, end)`` at which ``needle`` starts in ``stream`` (it may end after ``end``)."""
    return (pos for pos in find_all(stream, needle, start, end + len(needle) - 1) if pos < end)


def members_between(stream: BinaryIO, start: int, end: int) -> int:
    """Gzip members that start a WARC record (:func:`starts_warc_member`) at byte offsets in ``[start, end)``."""
    return sum(starts_warc_member(stream, pos) for pos in starts_in(stream, GZIP_MAGIC, start, end))


def headers_between(stream: BinaryIO, start: int, end: int) -> int:
    """``WARC/1.`` lines starting at byte offsets in ``[start, end)`` of an uncompressed ``stream`` (after a line
    feed)."""
    return sum(1 for _ in starts_in(stream, b"\n" + WARC_MAGIC, max(start - 1, 0), max(end - 1, 0)))


# --------------------------------------------------------------------------------------------
# The independent count
# --------------------------------------------------------------------------------------------


def _responses_in(data: io.RawIOBase) -> int:
    """Response records in an inflated gzip member, walked header by header (``Content-Length``), streaming."""
    n = 0
    buf = b""
    while True:
        buf = buf.lstrip(PADDING)
        while len(buf) < MAX_HEADER_BYTES:
            more = data.read(MAX_HEADER_BYTES)
            if not more:
                break
            buf += more
            buf = buf.lstrip(PADDING)
        bounds = parse_record_header(buf, 0)
        if bounds is None:
            return n
        n += bounds.warc_type == b"response"
        skip = bounds.block_end - len(buf)
        if skip <= 0:
            buf = buf[bounds.block_end:]
            continue
        buf = b""
        while skip > 0:
            chunk = data.read(min(skip, INFLATE_STEP))
            if not chunk:
                return n
            skip -= len(chunk)


def scan_responses(stream: BinaryIO, start: int = 0, name: str = "") -> Counter[int] | None:
    """The independent count: ``{offset: response records starting there}`` of the WARC data from byte ``start``
    of ``stream`` to its end, found without FastWARC.

    A ``.warc.gz`` is walked member by member (:class:`MemberInflater`); an intact member that inflates to WARC
    records counts the response records in it, all at the member's offset (one per member in a per-record file);
    after a damaged member the walk goes on at the next WARC member (:func:`find_warc_member`; its own
    :class:`Rereading` bounds the bytes inflated again, the one bound it shares with the reader: a
    time bound, which skips only bytes already inflated once). An uncompressed
    file is walked header by header (:func:`record_bounds`), and after a header that does not parse goes on at
    the next ``WARC/1.`` line after the last good header (:func:`find_warc_header`): a ``Content-Length`` too
    long or too short hides no record; it charges a :class:`Rereading` as the reader's passes do, and past the
    bound skips what the reader skips (:func:`after_long_block`). A record cut by the end of the file counts (the reader rejects it).
    It goes on after any number of damaged spans. Returns None when ``stream`` cannot seek (nothing to compare).
    """
    end = stream_size(stream)
    if end is None:
        return None
    found: Counter[int] = Counter()
    gz = is_gzip(stream, start, name)
    pos, resume, rereading = start, start, Rereading(end)
    read_from = start  # where the reader's FastWARC pass starts: it charges the rereading from there
    while pos < end:
        if gz:
            member = MemberInflater(stream, pos, end)
            n = _responses_in(member)
            member.finish()
            if member.intact:
                if member.is_warc and n:
                    found[pos] += n
                pos = member.end
                continue
            rereading.charge(pos, member.fed_to, member.checked_to)
            nxt = find_warc_member(stream, rereading.search_from(pos + 1), end)
        else:
            pos = skip_padding(stream, pos, end)
            if pos >= end:
                break
            bounds = record_bounds(stream, pos)
            if bounds is not None:
                found[pos] += bounds.warc_type == b"response"
                resume, pos = bounds.header_end, bounds.block_end
                if pos > end:  # cut, or a Content-Length too long: a header inside the block is read too
                    rereading.charge(read_from, end, resume)
                    nxt = find_warc_header(stream, after_long_block(stream, resume, end, rereading), end)
                    if nxt is None:
                        break
                    read_from = resume = pos = nxt
                continue
            rereading.charge(read_from, pos)
            nxt = resume_after(stream, pos, rereading.search_from(resume), end)
            read_from = resume = nxt if nxt is not None else end
        if nxt is None:
            break
        pos = nxt
    return +found


def missed_records(found: Counter[int], rows: Counter[int], spans: list[tuple[int, int]]) -> dict[int, int]:
    """Response records the independent count found that the reader did not account for: ``{offset: n}``.

    ``found``: :func:`scan_responses`; ``rows``: the reader's pages and rejects by offset; ``spans``: the
    ``[start, end)`` byte ranges the reader gave up as damaged (one reject each). A found record is accounted for
    by a row at its offset, or by a damaged span that starts at it or whose first found record it is (the reader
    may take bytes for damage that the count reads as a record; one span stands for at most one such record, so
    a reader that gives up on the rest of a file does not hide the records it skipped).
    """
    covered = Counter(rows)
    offsets = sorted(found)
    for start, end in spans:  # a binary search each: a file of many spans and records costs n log n
        i = bisect.bisect_left(offsets, start)
        if i < len(offsets) and (offsets[i] < end or offsets[i] == start):  # an empty span covers its start
            covered[offsets[i]] += 1
    return {o: n - covered[o] for o, n in sorted(found.items()) if n > covered[o]}

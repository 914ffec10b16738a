"""Fuzz ``newsclean clean`` with mutated news pages and mutated WARC byte streams.

Two kinds of input, drawn from one seeded generator (also used, at a small scale, by
``tests/pipeline/test_fuzz.py``):

* a **mutated page**: one well-framed WARC response record whose HTTP body is hostile (deep
  nesting, nested tables, a huge attribute, binary data, broken or lying encodings, gzip and brotli
  bombs, a cut gzip body, chunked transfer coding with wrong sizes, bit flips, ...);
* a **mutated WARC stream**: a small ``.warc.gz`` (or ``.warc``) file of a few records whose
  *bytes* are damaged (truncated at a random offset, bit flips, a wrong ``Content-Length``, a
  gzip member cut in the middle, random bytes, garbage between members);
* now and then (``--heavy-share``) a **heavy input**: a huge flat page (:func:`huge_flat_page`, 200,000 ``<p>``
  elements, ~2.6 MiB) or a file of many damaged spans (:func:`many_damaged_spans`, 1,200 records each followed by
  damage: more spans than the reader once read past).

Pass = no crash (the CLI exits 0 and prints a summary), no hang (each batch within its time
limit), and every record accounted for: ``articles + rejects + duplicates = records read`` in the
run summary, and ``records read`` equal to what the reader counts in the same files by itself.

Usage::

    nice .venv/bin/python bench/fuzz_clean.py --inputs 10000 --seed 1 [--batch 1000] [--timeout 900] [--heavy-share 0.002]

Prints one line per batch and a total; exit status 1 when any batch crashed, hung or did not balance.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

WORDS = ("council budget river harbour election minister village school winter festival museum railway "
         "hospital farmers bridge report committee teachers storm league coach season market prices "
         "energy court judge witness students library forest mayor ferry drought vaccine scientists").split()
SITES = ("alpha", "beta", "gamma")
CATEGORIES = ("politics", "sports")
HTML_CT = ("Content-Type", "text/html; charset=utf-8")

# --------------------------------------------------------------------------------------------
# Pages
# --------------------------------------------------------------------------------------------


def sentence_text(rng: random.Random, n_words: int) -> str:
    """``n_words`` words drawn from :data:`WORDS`, cut into sentences of 9 words."""
    words = [rng.choice(WORDS) for _ in range(n_words)]
    return " ".join(" ".join(words[i:i + 9]).capitalize() + "." for i in range(0, n_words, 9))


def article_html(rng: random.Random, site: str, category: str, n_paragraphs: int = 4) -> str:
    """A news article page with navigation, share bar, related links, footer and a body of ``n_paragraphs``."""
    title = sentence_text(rng, 6)
    nav = "".join(f'<li><a href="/{c}/">{c.title()}</a></li>' for c in ("politics", "sports", "world"))
    body = "".join(f"<p>{sentence_text(rng, 40)}</p>" for _ in range(n_paragraphs))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head><body>'
            f'<header><div class="logo">{site.title()} Daily</div><nav><ul>{nav}</ul></nav></header>'
            f"<main><article><h1>{title}</h1>{body}</article></main>"
            f"<footer><p>Copyright 2024 {site.title()} Media.</p><a href=\"/about\">About</a></footer></body></html>")


def _flip_bits(data: bytes, rng: random.Random, n: int) -> bytes:
    buf = bytearray(data)
    for _ in range(n if buf else 0):
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    return bytes(buf)


def _chunked(body: bytes, rng: random.Random, lie: bool) -> bytes:
    out, i = [], 0
    while i < len(body):
        n = rng.randint(1, 4000)
        part = body[i:i + n]
        size = len(part) + (rng.randint(-50, 50) if lie else 0)
        out.append(b"%x\r\n%s\r\n" % (max(size, 0), part))
        i += n
    return b"".join(out) + (b"" if lie and rng.random() < 0.5 else b"0\r\n\r\n")


_BOMBS: dict[str, bytes] = {}


def _bomb(kind: str) -> bytes:
    """A small body that inflates to 12 MiB of zeros (over the reader's 10 MiB cap), built once."""
    if kind not in _BOMBS:
        zeros = b"\0" * (12 * 1024 * 1024)
        if kind == "br":
            import brotli

            _BOMBS[kind] = brotli.compress(zeros, quality=1)
        else:
            _BOMBS[kind] = gzip.compress(zeros, compresslevel=1)
    return _BOMBS[kind]


@dataclass
class PageInput:
    """One mutated page: the HTTP body, its headers and the mutation's name."""

    mutation: str
    body: bytes
    headers: list[tuple[str, str]] = field(default_factory=lambda: [HTML_CT])
    status: int = 200


def _m_plain(rng, html):
    return PageInput("plain", html.encode())


def _m_deep_divs(rng, html):
    n = rng.choice((300, 600, 2000, 6000))
    return PageInput("deep_nesting", (html.replace("<article>", "<article>" + "<div>" * n)).encode())


def _m_unclosed(rng, html):
    tag = rng.choice(("font", "b", "span", "i"))
    paras = "".join(f"<{tag}><p>{sentence_text(rng, 12)}</p>" for _ in range(rng.choice((300, 1000))))
    return PageInput("unclosed_tags", f"<html><body>{paras}</body></html>".encode())


def _m_tables(rng, html):
    n = rng.choice((50, 200, 800))
    inner = "<table><tr><td>" * n + sentence_text(rng, 30) + "</td></tr></table>" * n
    return PageInput("nested_tables", html.replace("</article>", inner + "</article>").encode())


def _m_huge_attribute(rng, html):
    value = "x" * rng.choice((100_000, 1_000_000, 3_000_000))
    return PageInput("huge_attribute", html.replace("<article>", f'<article data-x="{value}">').encode())


def _m_many_attributes(rng, html):
    attrs = " ".join(f"a{i}=v{i}" for i in range(rng.choice((1000, 20000))))
    return PageInput("many_attributes", html.replace("<main>", f"<main {attrs}>").encode())


def _m_binary(rng, html):
    head = rng.choice((b"", b"\x89PNG\r\n\x1a\n", b"%PDF-1.4\n", b"\xff\xd8\xff\xe0"))
    return PageInput("binary", head + rng.randbytes(rng.randint(1, 50_000)))


def _m_broken_encoding(rng, html):
    raw = html.encode()
    kind = rng.randrange(4)
    if kind == 0:  # random invalid bytes sprinkled in
        buf = bytearray(raw)
        for _ in range(rng.randint(1, 200)):
            buf.insert(rng.randrange(len(buf)), rng.choice((0x80, 0xC3, 0xFF, 0xFE, 0xE2)))
        return PageInput("broken_encoding", bytes(buf))
    if kind == 1:  # declared charset lies
        cs = rng.choice(("utf-16", "shift_jis", "bogus-charset", "utf-7", "iso-2022-jp"))
        return PageInput("lying_charset", raw, [("Content-Type", f"text/html; charset={cs}")])
    if kind == 2:  # utf-16 without BOM, declared utf-8
        return PageInput("utf16_no_bom", html.encode("utf-16-le"))
    return PageInput("latin1_as_utf8", (html + "caf\xe9 na\xefve").encode("latin-1", "replace"))


def _m_gzip_bomb(rng, html):
    return PageInput("gzip_bomb", _bomb("gzip"), [HTML_CT, ("Content-Encoding", "gzip")])


def _m_brotli_bomb(rng, html):
    return PageInput("brotli_bomb", _bomb("br"), [HTML_CT, ("Content-Encoding", "br")])


def _m_bad_coding(rng, html):
    raw = html.encode()
    kind = rng.randrange(4)
    if kind == 0:
        return PageInput("gzip_cut", gzip.compress(raw)[: rng.randint(1, 200)], [HTML_CT, ("Content-Encoding", "gzip")])
    if kind == 1:
        return PageInput("deflate_garbage", rng.randbytes(500), [HTML_CT, ("Content-Encoding", "deflate")])
    if kind == 2:
        return PageInput("unknown_coding", zlib.compress(raw), [HTML_CT, ("Content-Encoding", "zstd, x-foo")])
    return PageInput("double_gzip", gzip.compress(gzip.compress(raw)),
                     [HTML_CT, ("Content-Encoding", "gzip, gzip")])


def _m_chunked(rng, html):
    lie = rng.random() < 0.5
    headers = [HTML_CT, ("Transfer-Encoding", "chunked")]
    body = html.encode()
    if rng.random() < 0.3:
        body = gzip.compress(body)
        headers.append(("Content-Encoding", "gzip"))
    return PageInput("chunked_lying" if lie else "chunked", _chunked(body, rng, lie), headers)


def _m_bit_flips(rng, html):
    return PageInput("html_bit_flips", _flip_bits(html.encode(), rng, rng.randint(1, 100)))


def _m_truncated_html(rng, html):
    raw = html.encode()
    return PageInput("truncated_html", raw[: rng.randrange(len(raw))])


def _m_markup_soup(rng, html):
    junk = rng.choice(("<!--" * 5000, "<![CDATA[" * 2000, "<script>" + "x" * 200_000, "<<<>>>" * 20000,
                       "<p>" * 20000, "&#x110000;&#0;&amp" * 5000, "<svg><math>" * 3000))
    return PageInput("markup_soup", html.replace("<main>", "<main>" + junk).encode())


def _m_odd_headers(rng, html):
    ct = rng.choice(("", "text/html; charset=", "TEXT/HTML", "application/octet-stream", "text/html;;;"))
    headers = [("Content-Type", ct)] if ct else []
    return PageInput("odd_headers", html.encode(), headers, status=rng.choice((200, 200, 404, 500, 301)))


def _m_empty(rng, html):
    return PageInput("empty", rng.choice((b"", b"   \r\n\t ", b"<html></html>", b"<p></p>")))


PAGE_MUTATIONS: tuple[Callable[[random.Random, str], PageInput], ...] = (
    _m_plain, _m_deep_divs, _m_unclosed, _m_tables, _m_huge_attribute, _m_many_attributes, _m_binary,
    _m_broken_encoding, _m_gzip_bomb, _m_brotli_bomb, _m_bad_coding, _m_chunked, _m_bit_flips,
    _m_truncated_html, _m_markup_soup, _m_odd_headers, _m_empty,
)


def huge_flat_page(rng: random.Random, n_paragraphs: int = 200_000) -> PageInput:
    """A huge flat page: ``n_paragraphs`` sibling ``<p>`` elements of one word each under one ``<article>``
    (200,000: ~2.6 MiB, under the reader's 10 MiB body limit, so it reaches the chain): the cost of every
    per-element step at its widest."""
    body = "".join(f"<p>{rng.choice(WORDS)}</p>" for _ in range(n_paragraphs))
    page = f"<!DOCTYPE html><html><head><title>Flat</title></head><body><article>{body}</article></body></html>"
    return PageInput("huge_flat_page", page.encode())


def mutated_page(rng: random.Random, site: str, category: str) -> PageInput:
    """One page with one mutation from :data:`PAGE_MUTATIONS`, chosen by ``rng``."""
    return rng.choice(PAGE_MUTATIONS)(rng, article_html(rng, site, category))


# --------------------------------------------------------------------------------------------
# WARC records and byte streams
# --------------------------------------------------------------------------------------------


def warc_record(rng: random.Random, url: str, http_block: bytes, *, warc_type: str = "response",
                length_error: int = 0, extra: dict[str, str] | None = None) -> bytes:
    """One uncompressed WARC/1.1 record (ISO 28500 §4); ``Content-Length`` off by ``length_error`` bytes."""
    head = ["WARC/1.1", f"WARC-Type: {warc_type}", f"WARC-Record-ID: <urn:uuid:{rng.getrandbits(128):032x}>",
            "WARC-Date: 2024-05-01T12:00:00Z", f"WARC-Target-URI: {url}",
            f"Content-Type: application/http; msgtype={'request' if warc_type == 'request' else 'response'}",
            f"Content-Length: {max(len(http_block) + length_error, 0)}"]
    head += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + http_block + b"\r\n\r\n"


def http_response(page: PageInput) -> bytes:
    """The HTTP/1.1 response block of ``page`` (status line, headers, body)."""
    lines = [f"HTTP/1.1 {page.status} X"] + [f"{k}: {v}" for k, v in page.headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + page.body


def page_record(rng: random.Random, page: PageInput, site: str, category: str, n: int) -> bytes:
    """A gzip member holding a well-framed response record of ``page`` with the newsclean site headers."""
    url = f"http://{site}.test/{category}/{n}.html"
    extra = {"WARC-Newsclean-Site": site, "WARC-Newsclean-Category": category}
    return gzip.compress(warc_record(rng, url, http_response(page), extra=extra), compresslevel=1)


def _clean_stream(rng: random.Random, n_records: int, gz: bool) -> tuple[bytes, list[int]]:
    """A small WARC of ``n_records`` request+response pairs; returns the bytes and the member boundaries."""
    site, category = rng.choice(SITES), rng.choice(CATEGORIES)
    parts = [warc_record(rng, "", b"software: fuzz\r\n", warc_type="warcinfo")]
    for i in range(n_records):
        url = f"http://{site}.test/{category}/w{rng.getrandbits(32)}-{i}.html"
        parts.append(warc_record(rng, url, f"GET {url} HTTP/1.1\r\n\r\n".encode(), warc_type="request"))
        body = PageInput("plain", article_html(rng, site, category, 2).encode())
        parts.append(warc_record(rng, url, http_response(body)))
    if gz:
        parts = [gzip.compress(p, compresslevel=1) for p in parts]
    bounds, off = [], 0
    for p in parts:
        bounds.append(off)
        off += len(p)
    return b"".join(parts), bounds


def mutated_warc(rng: random.Random) -> tuple[str, bytes]:
    """One mutated WARC byte stream: ``(mutation name, bytes)``; the file suffix follows the name's ``gz``."""
    kind = rng.choice(("truncate", "bit_flips", "wrong_length", "member_cut", "random_bytes",
                       "garbage_between", "truncate_plain", "flip_plain", "wrong_length_plain"))
    gz = not kind.endswith("_plain")
    n = rng.randint(1, 5)
    if kind.startswith("wrong_length"):
        site, category = rng.choice(SITES), rng.choice(CATEGORIES)
        parts = []
        for i in range(n):
            page = PageInput("plain", article_html(rng, site, category, 2).encode())
            err = rng.choice((0, 0, rng.randint(-400, -1), rng.randint(1, 400), 10**9))
            rec = warc_record(rng, f"http://{site}.test/{category}/l{i}.html", http_response(page), length_error=err)
            parts.append(gzip.compress(rec, compresslevel=1) if gz else rec)
        return kind, b"".join(parts)
    if kind == "random_bytes":
        data = rng.randbytes(rng.randint(1, 20_000))
        return kind, gzip.compress(data) if rng.random() < 0.5 else data
    data, bounds = _clean_stream(rng, n, gz)
    if kind.startswith("truncate"):
        return kind, data[: rng.randrange(len(data))]
    if kind.startswith("bit_flips") or kind.startswith("flip"):
        return kind, _flip_bits(data, rng, rng.randint(1, 30))
    if kind == "member_cut":
        i = rng.randrange(len(data))
        return kind, data[:i] + data[i + rng.randint(1, 500):]
    at = rng.choice(bounds)  # garbage_between
    return kind, data[:at] + rng.randbytes(rng.randint(1, 300)) + data[at:]


def many_damaged_spans(rng: random.Random, n_records: int = 1200) -> tuple[str, bytes]:
    """A ``.warc.gz`` of ``n_records`` response records, each gzip member followed by a damaged span (random bytes,
    or a gzip header before random deflate data): ``("many_damaged_spans", bytes)``. 1,200 spans: more than the
    1,000 the reader once read past before it gave up the rest of the file."""
    site, category = rng.choice(SITES), rng.choice(CATEGORIES)
    parts = []
    for i in range(n_records):
        page = PageInput("plain", article_html(rng, site, category, 1).encode())
        url = f"http://{site}.test/{category}/d{i}.html"
        parts.append(gzip.compress(warc_record(rng, url, http_response(page)), compresslevel=1))
        junk = rng.randbytes(rng.randint(8, 200))
        parts.append(b"\x1f\x8b\x08\x00" + junk if rng.random() < 0.5 else junk)
    return "many_damaged_spans", b"".join(parts)


@dataclass
class Batch:
    """The WARC files of one batch: ``{relative path: bytes}`` and the number of inputs in it."""

    files: dict[str, bytes]
    inputs: int
    page_mutations: dict[str, int] = field(default_factory=dict)
    warc_mutations: dict[str, int] = field(default_factory=dict)


def make_batch(seed: int, n_inputs: int, pages_per_file: int = 250, page_share: float = 0.6,
               heavy_share: float = 0.0) -> Batch:
    """``n_inputs`` inputs: about ``page_share`` mutated pages (packed ``pages_per_file`` to a WARC file)
    and the rest mutated WARC streams (one file each), laid out as ``<site>/<category>/<name>``; about
    ``heavy_share`` of each are heavy: a :func:`huge_flat_page`, a :func:`many_damaged_spans` file."""
    rng = random.Random(seed)
    files: dict[str, bytes] = {}
    pm: dict[str, int] = {}
    wm: dict[str, int] = {}
    n_pages = round(n_inputs * page_share)
    members: dict[tuple[str, str], list[bytes]] = {}
    done: list[tuple[str, str, PageInput]] = []
    for i in range(n_pages):
        site, category = rng.choice(SITES), rng.choice(CATEGORIES)
        if done and rng.random() < 0.05:  # the same page fetched again under another URL: a duplicate
            site, category, page = rng.choice(done)
        else:
            heavy = heavy_share and rng.random() < heavy_share
            page = huge_flat_page(rng) if heavy else mutated_page(rng, site, category)
            done.append((site, category, page))
        pm[page.mutation] = pm.get(page.mutation, 0) + 1
        members.setdefault((site, category), []).append(page_record(rng, page, site, category, i))
    for (site, category), recs in members.items():
        for j in range(0, len(recs), pages_per_file):
            files[f"{site}/{category}/pages-{j // pages_per_file}.warc.gz"] = b"".join(recs[j:j + pages_per_file])
    for i in range(n_inputs - n_pages):
        kind, data = many_damaged_spans(rng) if heavy_share and rng.random() < heavy_share else mutated_warc(rng)
        wm[kind] = wm.get(kind, 0) + 1
        suffix = ".warc" if kind.endswith("_plain") else ".warc.gz"
        files[f"{rng.choice(SITES)}/{rng.choice(CATEGORIES)}/w{i}-{kind}{suffix}"] = data
    return Batch(files, n_inputs, pm, wm)


def write_batch(batch: Batch, root: Path) -> Path:
    """Write ``batch`` under ``root`` (created); returns ``root``."""
    for rel, data in batch.files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def reader_count(root: Path) -> int:
    """Records read in every WARC file under ``root``, counted by the reader alone (no Beam)."""
    from newsclean.pipeline.warc_reader import ReadStats, iter_warc_file

    total = 0
    for path in sorted(list(root.rglob("*.warc.gz")) + list(root.rglob("*.warc"))):
        stats = ReadStats()
        for _ in iter_warc_file(str(path), stream=io.BytesIO(path.read_bytes()), stats=stats):
            pass
        total += stats.records_read
    return total


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------


def run_batch(index: int, seed: int, n_inputs: int, timeout: float, workdir: Path, heavy_share: float = 0.0) -> dict:
    """Generate, write and clean one batch with ``newsclean clean``; returns its figures."""
    batch = make_batch(seed * 1_000_003 + index, n_inputs, heavy_share=heavy_share)
    warc = write_batch(batch, workdir / f"b{index}" / "warc")
    out = workdir / f"b{index}" / "out"
    expected = reader_count(warc)
    cmd = [sys.executable, "-m", "newsclean.cli", "clean", "--warc", f"{warc}/**/*.warc*", "--out", str(out)]
    t0 = time.monotonic()
    row = {"batch": index, "inputs": n_inputs, "files": len(batch.files), "reader_records": expected,
           "crash": 0, "hang": 0}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        row.update(hang=1, seconds=round(time.monotonic() - t0, 1))
        return row
    row["seconds"] = round(time.monotonic() - t0, 1)
    summary_path = out / "_summary.json"
    if proc.returncode != 0 or not summary_path.exists():
        row.update(crash=1, rc=proc.returncode, tail=(proc.stderr or proc.stdout)[-1500:])
        return row
    s = json.loads(summary_path.read_text())
    row.update(records=s["records_read"], articles=s["articles_written"], rejects=s["rejects_total"],
               duplicates=s["duplicates_dropped"], balanced=s["balanced"], reject_reasons=s["rejects"])
    return row


def main(argv: list[str] | None = None) -> int:
    """Run the fuzz: ``--inputs N`` in batches of ``--batch``; prints per-batch and total figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1000, help="inputs per newsclean clean run")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds one batch may take before it is a hang")
    ap.add_argument("--heavy-share", type=float, default=0.002,
                    help="share of inputs that are heavy: huge flat pages, files of many damaged spans")
    ap.add_argument("--keep", type=Path, default=None, help="keep the WARC files and outputs under this folder")
    args = ap.parse_args(argv)
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="newsclean-fuzz-"))
    workdir.mkdir(parents=True, exist_ok=True)
    totals = dict(inputs=0, records=0, reader_records=0, articles=0, rejects=0, duplicates=0, crashes=0, hangs=0,
                  unbalanced=0)
    reasons: dict[str, int] = {}
    index, left = 0, args.inputs
    t_all = time.monotonic()
    while left > 0:
        n = min(args.batch, left)
        row = run_batch(index, args.seed, n, args.timeout, workdir, args.heavy_share)
        totals["inputs"] += n
        totals["reader_records"] += row["reader_records"]
        totals["crashes"] += row["crash"]
        totals["hangs"] += row["hang"]
        if "records" in row:
            for k in ("records", "articles", "rejects", "duplicates"):
                totals[k] += row[k]
            ok = row["balanced"] and row["records"] == row["reader_records"]
            totals["unbalanced"] += not ok
            for r, c in row["reject_reasons"].items():
                reasons[r] = reasons.get(r, 0) + c
            print(f"batch {index}: inputs {n}, files {row['files']}, records {row['records']} "
                  f"(reader alone {row['reader_records']}), articles {row['articles']} + rejects {row['rejects']} "
                  f"+ duplicates {row['duplicates']} = {row['articles'] + row['rejects'] + row['duplicates']} "
                  f"{'ok' if ok else 'MISMATCH'}, {row['seconds']} s", flush=True)
        else:
            print(f"batch {index}: inputs {n}, CRASH={row['crash']} HANG={row['hang']} rc={row.get('rc')} "
                  f"{row.get('tail', '')}", flush=True)
        index += 1
        left -= n
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    acc = totals["articles"] + totals["rejects"] + totals["duplicates"]
    print(f"total: inputs {totals['inputs']}, batches {index}, records {totals['records']} "
          f"(reader alone {totals['reader_records']}), articles {totals['articles']} + rejects {totals['rejects']} "
          f"+ duplicates {totals['duplicates']} = {acc} {'ok' if acc == totals['records'] else 'MISMATCH'}, "
          f"unbalanced batches {totals['unbalanced']}, crashes {totals['crashes']}, hangs {totals['hangs']}, "
          f"peak RSS of a child {rss_mib:.0f} MiB, {time.monotonic() - t_all:.0f} s")
    print("reject reasons: " + ", ".join(f"{r} {c}" for r, c in sorted(reasons.items())))
    print(f"work folder: {workdir}")
    bad = totals["crashes"] or totals["hangs"] or totals["unbalanced"] or acc != totals["records"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

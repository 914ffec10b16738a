"""Corpus-scale cost of ``newsclean clean`` against a one-process script a user would write (run by hand).

    python bench/bench_corpus.py [--datasets all] [--pages N] [--rounds 1] [--workers N] [--near-copies] [--keep DIR]

Packs the shared data sets' pages into WARC files by (site, data set) (untimed), then runs, each in a child
process so that its peak RSS is its own (``ru_maxrss`` of the child from ``wait4``; with
``multi_processing`` the SDK worker processes are grandchildren and are *not* included):

- ``baseline``: FastWARC -> ``trafilatura.extract`` -> exact dedup (SHA-1 of the text) -> pyarrow Parquet,
  one process (the script of issue 15);
- ``newsclean``: ``newsclean clean`` with its defaults (DirectRunner, in-memory);
- ``newsclean-mp``: the same with ``--direct_running_mode multi_processing --direct_num_workers N``.

Rounds interleave the systems so they share the machine's load; the median round is printed: wall seconds,
pages/s (WARC response records / wall), peak RSS, the ratio of the baseline's wall to each system's (> 1:
faster than the script), and newsclean's article / duplicate counts, near-duplicates included.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean_eval.datasets import LOADERS, load  # noqa: E402

T0 = "2024-05-01T12:00:00Z"


def near_copy(html: bytes, gold: str, stamp: str) -> bytes | None:
    """``html`` with three words of its longest paragraph that is in the gold text changed and a timestamp
    line before it (the near-duplicate of issue 15); None when no such paragraph has 20 words."""
    import lxml.html

    try:
        doc = lxml.html.document_fromstring(html)
    except Exception:  # noqa: BLE001 - an unparsable page gets no copy
        return None
    gold = " ".join(gold.split())
    paras = [e for e in doc.iter("p") if len(e.text_content().split()) >= 20
             and " ".join(e.text_content().split()) in gold]
    if not paras:
        return None
    p = max(paras, key=lambda e: len(e.text_content()))
    words = p.text_content().split()
    for i in (3, len(words) // 2, len(words) - 4):
        words[i] = "edited"
    for child in list(p):
        p.remove(child)
    p.text = " ".join(words)
    stamp_p = lxml.html.Element("p")
    stamp_p.text = f"Updated {stamp}"
    p.addprevious(stamp_p)
    return lxml.html.tostring(doc, encoding="utf-8")


def pack_warcs(datasets: list[str], root: Path, limit: int | None, near_copies: bool = False) -> tuple[int, int]:
    """Write the pages of ``datasets`` as ``root/<site>/<dataset>/<site>-<dataset>.warc.gz``, and with
    ``near_copies`` a near-duplicate of each page that has a gold paragraph under ``root/wire-<site>/``.
    Returns ``(pages, near copies)``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    groups: dict[tuple[str, str], list] = {}
    n = 0
    for name in datasets:
        for page in load(name):
            if limit is not None and n >= limit:
                break
            site = re.sub(r"[^A-Za-z0-9_.-]+", "_", page.site or page.group)[:60] or "site"
            groups.setdefault((site, name), []).append(page)
            n += 1
    copies = 0
    for (site, cat), pages in groups.items():
        variants = [(site, T0, [(p.url, p.html) for p in pages])]
        if near_copies:
            made = [(None, near_copy(p.html, p.gold or "", "2017-06-02 10:05 UTC")) for p in pages]
            made = [(u, h) for u, h in made if h is not None]
            copies += len(made)
            variants.append((f"wire-{site}", "2024-05-02T12:00:00Z", made))
        for name, date, items in variants:
            path = root / name / cat / f"{name}-{cat}-20240501T120000Z-00000.warc.gz"
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                writer = WARCWriter(f, gzip=True)
                for i, (url, html) in enumerate(items):
                    url = url or f"http://{name}.bench/{cat}/{i}.html"
                    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
                    headers = {"WARC-Date": date, "WARC-Newsclean-Site": name, "WARC-Newsclean-Category": cat}
                    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(html),
                                                                  length=len(html), http_headers=http,
                                                                  warc_headers_dict=headers))
    return n, copies


def baseline(warc_dir: str, out: str) -> None:
    """The one-process script: FastWARC -> trafilatura -> exact dedup -> pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import trafilatura
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    rows, seen, n = [], set(), 0
    for path in sorted(Path(warc_dir).rglob("*.warc.gz")):
        with open(path, "rb") as f:
            for record in ArchiveIterator(f, record_types=WarcRecordType.response):
                n += 1
                html = record.reader.read().decode("utf-8", errors="replace")
                text = trafilatura.extract(html) or ""
                key = hashlib.sha1(text.encode()).hexdigest()
                if text and key not in seen:
                    seen.add(key)
                    rows.append({"url": record.headers.get("WARC-Target-URI"), "text": text})
    os.makedirs(out, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), os.path.join(out, "articles.parquet"))
    print(json.dumps({"records": n, "articles": len(rows)}))


def _measure(cmd: list[str]) -> tuple[float, int, str]:
    """Run ``cmd`` as a child and read its own peak RSS with ``wait4``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} ... failed")
    return wall, usage.ru_maxrss * 1024, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="all", help="comma-separated data sets, or all")
    parser.add_argument("--pages", type=int, default=None, help="at most N pages (default: all)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help="multi_processing workers")
    parser.add_argument("--keep", type=Path, default=None, help="write the WARC files and outputs here")
    parser.add_argument("--near-copies", action="store_true",
                        help="add a near-duplicate copy (3 words changed, a timestamp line, another URL) of each page")
    parser.add_argument("--baseline", nargs=2, metavar=("WARC_DIR", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        baseline(*args.baseline)
        return 0
    names = sorted(LOADERS) if args.datasets == "all" else args.datasets.split(",")
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    warc = root / "warc"
    pages, copies = pack_warcs(names, warc, args.pages, args.near_copies)
    print(f"{pages} pages from {', '.join(names)} + {copies} near-duplicate copies packed into {warc}; "
          f"{os.cpu_count()} cores")
    pages += copies
    py = sys.executable
    systems = {
        "baseline": lambda out: [py, __file__, "--baseline", str(warc), out],
        "newsclean": lambda out: [py, "-m", "newsclean.pipeline.cli", "clean", "--warc", str(warc), "--out", out],
        "newsclean-mp": lambda out: [py, "-m", "newsclean.pipeline.cli", "clean", "--warc", str(warc), "--out", out,
                                     "--direct_running_mode", "multi_processing",
                                     "--direct_num_workers", str(args.workers)],
    }
    results: dict[str, list[tuple[float, int]]] = {s: [] for s in systems}
    counts: dict[str, str] = {}
    for r in range(args.rounds):
        for name, cmd in systems.items():
            out = str(root / f"out-{name}-{r}")
            wall, rss, stdout = _measure(cmd(out))
            results[name].append((wall, rss))
            if name.startswith("newsclean"):
                summary = json.loads(Path(out, "_summary.json").read_text())
                counts[name] = (f"articles {summary['articles_written']}, duplicates {summary['duplicates']}, "
                                f"read {summary['records_read']}")
            print(f"  round {r + 1} {name}: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MiB", flush=True)
    base = statistics.median(w for w, _ in results["baseline"])
    print(f"\n{'system':<14} {'wall s':>8} {'pages/s':>8} {'peak RSS MiB':>13} {'baseline/this':>14}")
    for name, runs in results.items():
        wall = statistics.median(w for w, _ in runs)
        rss = statistics.median(m for _, m in runs)
        print(f"{name:<14} {wall:>8.1f} {pages / wall:>8.1f} {rss / 2**20:>13.0f} {base / wall:>14.2f}")
    for name, line in counts.items():
        print(f"{name}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

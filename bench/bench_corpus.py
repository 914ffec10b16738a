"""Corpus-scale cost of ``newsclean clean`` against a one-process script a user would write (run by hand).

    python bench/bench_corpus.py [--datasets all] [--pages N] [--generate N [--jobs J]] [--rounds 1]
                                 [--workers N[,N...]] [--systems baseline,newsclean-1,newsclean-all]
                                 [--near-copies] [--keep DIR] [--warc DIR]

Packs the shared data sets' pages into WARC files by (site, data set) (not in the timings; its wall time is
printed). ``--generate N`` packs N pages instead, made from the real ones: copy 0 is the page itself, copy
k >= 1 the page with the words of each text node shuffled, seeded by k and the node's text
(:func:`distinct_variant`: the same DOM, words and lengths, text distinct from every other copy's, boilerplate
still shared within the copy's (site, category) group, which is ``<site>-v<k>``; ``--jobs J`` forked processes
write the same records as one, :func:`_generate`); ``--warc DIR`` skips packing and cleans the WARC files of an
earlier run's ``--keep DIR/warc`` (one call generates, the next measures). Then runs each system in a child process:

- ``baseline``: FastWARC -> ``trafilatura.extract`` -> exact dedup (SHA-1 of the text) -> pyarrow Parquet,
  one process (the reference every newsclean run is compared with);
- ``newsclean-1``: ``newsclean clean --direct_running_mode in_memory`` (one core);
- ``newsclean-all``: ``newsclean clean --direct_running_mode multi_processing --direct_num_workers N``
  (N = ``--workers``, default all cores; a list ``1,2,4`` runs it once per N, named ``newsclean-xN``: pages/s
  against cores);
- ``newsclean``: ``newsclean clean`` with its defaults (whichever of the two the CLI picks).

Peak RSS is the largest sum of RSS over the child and all its descendants (the ``multi_processing`` SDK
workers included), sampled every 0.1 s with psutil (``pip install -e .[bench]``); peak PSS likewise every
0.5 s (shared pages, such as the libraries every worker maps, counted once in all: what the machine holds).
Rounds interleave the systems so they share the machine's load (printed: 1-minute load average before and
after each run, and the run's counts, so a run cut short keeps them); the median round is printed: wall
seconds, pages/s (WARC response records / wall), peak RSS and PSS, the ratio of the baseline's wall to each
system's (> 1: faster than the script), each system's peak RSS over the baseline's, and newsclean's article /
exact / near-duplicate counts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from newsclean_eval.datasets import LOADERS, load  # noqa: E402
from newsclean_eval.main_job import safe_name, write_warc  # noqa: E402

T0 = "2024-05-01T12:00:00Z"


def near_copy(html: bytes, gold: str, stamp: str) -> bytes | None:
    """``html`` with three words of its longest paragraph that is in the gold text changed and a timestamp
    line before it (a near-duplicate as a wire copy or an updated version makes one); None when no such paragraph has 20 words."""
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


def _shuffled(text: str | None, k: int) -> str | None:
    """``text`` with its words in an order seeded by ``k`` and the text (whitespace at both ends kept)."""
    if not text:
        return text
    words = text.split()
    if len(words) < 2:
        return text
    random.Random(f"{k}\0{text}").shuffle(words)
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()):]
    return lead + " ".join(words) + trail


def distinct_variant(html: bytes, k: int) -> bytes | None:
    """Copy ``k`` (>= 1) of a page: the words of each text node (element text and tail, not inside ``script`` or
    ``style``) shuffled, seeded by ``k`` and the node's text, so equal nodes stay equal within copy ``k`` (shared
    boilerplate stays static noise) while word 5-grams differ from the original's. None when it does not parse."""
    import lxml.html

    try:
        doc = lxml.html.document_fromstring(html)
    except Exception:  # noqa: BLE001 - an unparsable page gets no copy
        return None
    for el in doc.iter():
        try:  # a node with control characters (lxml refuses to set them) stays as it is
            if isinstance(el.tag, str) and el.tag not in ("script", "style"):
                el.text = _shuffled(el.text, k)
            el.tail = _shuffled(el.tail, k)
        except ValueError:
            continue
    return lxml.html.tostring(doc, encoding="utf-8", doctype=doc.getroottree().docinfo.doctype or None)


def _write_warc(path: Path, name: str, cat: str, date: str, items: list[tuple[str | None, bytes]]) -> None:
    """``items`` (URL or None, HTML) as one WARC file (:func:`newsclean_eval.main_job.write_warc`); a page without
    a URL gets ``http://<name>.bench/<cat>/<i>.html``."""
    rows = [(url or f"http://{name}.bench/{cat}/{i}.html", html, None) for i, (url, html) in enumerate(items)]
    write_warc(path, name, cat, rows, date)


def _parses(html: bytes) -> bool:
    """Whether lxml parses ``html`` (:func:`distinct_variant` returns None exactly where it does not)."""
    import lxml.html

    try:
        lxml.html.document_fromstring(html)
    except Exception:  # noqa: BLE001 - the same catch as distinct_variant's
        return False
    return True


#: (site, data set) -> pages, set by :func:`_generate` before its worker processes fork (they read it from there).
_GROUPS: dict[tuple[str, str], list] = {}


def _write_copy(root: Path, k: int, site: str, cat: str, indices: list[int]) -> None:
    """Write copy ``k`` of the pages ``indices`` of group ``(site, cat)`` of :data:`_GROUPS` as one WARC file."""
    pages = [_GROUPS[site, cat][i] for i in indices]
    items = [((f"{p.url}{'&' if '?' in p.url else '?'}v={k}" if p.url and k else p.url),
              p.html if k == 0 else distinct_variant(p.html, k)) for p in pages]
    name = site if k == 0 else f"{site}-v{k}"
    _write_warc(root / name / cat / f"{name}-{cat}-20240501T120000Z-00000.warc.gz", name, cat, T0, items)


def _generate(groups: dict[tuple[str, str], list], root: Path, generate: int, jobs: int = 1) -> tuple[int, int]:
    """Write ``generate`` pages: copy k = 0, 1, ... of each group in turn (copy 0 the pages themselves, k >= 1
    :func:`distinct_variant`, skipping pages that do not parse) until ``generate`` pages are written; one WARC
    file per (copy, group). The plan is made first (which pages go in which file), so ``jobs`` > 1 processes
    (forked) write the same records as one. Returns ``(pages written, copies)``."""
    parses = {key: [_parses(p.html) for p in pages] for key, pages in groups.items()}
    plan, made, k = [], 0, 0
    while made < generate:
        before = made
        for (site, cat), pages in groups.items():
            take = range(min(len(pages), max(0, generate - made)))
            if not take:
                break
            indices = [i for i in take if k == 0 or parses[site, cat][i]]
            if indices:
                plan.append((root, k, site, cat, indices))
                made += len(indices)
        k += 1
        if made == before:
            raise SystemExit(f"--generate {generate}: no page could be copied (copy {k - 1})")
    _GROUPS.clear()
    _GROUPS.update(groups)
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pool.starmap(_write_copy, plan, chunksize=max(1, len(plan) // (jobs * 8)))
    else:
        for task in plan:
            _write_copy(*task)
    _GROUPS.clear()
    return made, k


def pack_warcs(datasets: list[str], root: Path, limit: int | None, near_copies: bool = False,
               generate: int | None = None, jobs: int = 1) -> tuple[int, int]:
    """Write the pages of ``datasets`` as ``root/<site>/<dataset>/<site>-<dataset>.warc.gz``, and with
    ``near_copies`` a near-duplicate of each page that has a gold paragraph under ``root/wire-<site>/``.
    ``generate``: N pages in all, copies k = 0, 1, ... of the real pages (:func:`distinct_variant`) under
    ``root/<site>-v<k>/`` (URLs get ``?v=k``), written by ``jobs`` processes (:func:`_generate`). Returns
    ``(pages, near copies)``."""
    groups: dict[tuple[str, str], list] = {}
    n = 0
    for name in datasets:
        for page in load(name):
            if limit is not None and n >= limit:
                break
            site = safe_name(page.site or page.group)
            groups.setdefault((site, name), []).append(page)
            n += 1
    if generate is not None:
        made, k = _generate(groups, root, generate, jobs)
        print(f"generated {made} pages from {n} real pages ({k} copies, {jobs} jobs)")
        return made, 0
    copies = 0
    for (site, cat), pages in groups.items():
        variants = [(site, T0, [(p.url, p.html) for p in pages])]
        if near_copies:
            made = [(None, near_copy(p.html, p.gold or "", "2017-06-02 10:05 UTC")) for p in pages]
            made = [(u, h) for u, h in made if h is not None]
            copies += len(made)
            variants.append((f"wire-{site}", "2024-05-02T12:00:00Z", made))
        for name, date, items in variants:
            _write_warc(root / name / cat / f"{name}-{cat}-20240501T120000Z-00000.warc.gz", name, cat, date, items)
    return n, copies


def count_records(warc_dir: Path) -> int:
    """Response records in the ``*.warc.gz`` files under ``warc_dir``."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    n = 0
    for path in warc_dir.rglob("*.warc.gz"):
        with open(path, "rb") as f:
            n += sum(1 for _ in ArchiveIterator(f, record_types=WarcRecordType.response, parse_http=False))
    return n


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


def _tree_rss(proc) -> int:
    """RSS in bytes of ``proc`` (a psutil.Process) and all its descendants now."""
    import psutil

    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


def _tree_pss(proc) -> int:
    """PSS in bytes (proportional set size: pages shared between processes, such as the libraries every worker
    maps, divided among them) of ``proc`` and all its descendants now; 0 where the platform has none."""
    import psutil

    total = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            total += getattr(p.memory_full_info(), "pss", 0)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return total


#: Peak PSS of the last :func:`_measure` call, in bytes (sampled every 0.5 s; reading it costs more than RSS).
LAST_PEAK_PSS = [0]


def _measure(cmd: list[str]) -> tuple[float, int, str]:
    """Run ``cmd`` as a child; returns (wall s, peak RSS of its process tree in bytes, stdout). The peak PSS of the
    tree is left in :data:`LAST_PEAK_PSS`."""
    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watched, peak, done = psutil.Process(proc.pid), [0], threading.Event()
    LAST_PEAK_PSS[0] = 0

    def sample():
        n = 0
        while not done.is_set():
            try:
                peak[0] = max(peak[0], _tree_rss(watched))
                if n % 5 == 0:
                    LAST_PEAK_PSS[0] = max(LAST_PEAK_PSS[0], _tree_pss(watched))
            except psutil.NoSuchProcess:
                return
            n += 1
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} ... failed")
    return wall, max(peak[0], usage.ru_maxrss * 1024), out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="all", help="comma-separated data sets, or all")
    parser.add_argument("--pages", type=int, default=None, help="at most N real pages (default: all)")
    parser.add_argument("--generate", type=int, default=None, metavar="N",
                        help="N pages made from the real ones with distinct text (see distinct_variant)")
    parser.add_argument("--jobs", type=int, default=1, help="processes writing the --generate pages (same records)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", default=str(os.cpu_count() or 2),
                        help="multi_processing workers of newsclean-all; a comma-separated list runs it once per N")
    parser.add_argument("--systems", default="baseline,newsclean-1,newsclean-all",
                        help="comma-separated: baseline, newsclean (defaults), newsclean-1, newsclean-all; '' packs only")
    parser.add_argument("--keep", type=Path, default=None, help="write the WARC files and outputs here")
    parser.add_argument("--near-copies", action="store_true",
                        help="add a near-duplicate copy (3 words changed, a timestamp line, another URL) of each page")
    parser.add_argument("--warc", type=Path, default=None,
                        help="clean the WARC files under this folder (an earlier --keep DIR/warc) instead of packing")
    parser.add_argument("--baseline", nargs=2, metavar=("WARC_DIR", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        baseline(*args.baseline)
        return 0
    names = sorted(LOADERS) if args.datasets == "all" else args.datasets.split(",")
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    warc = args.warc or root / "warc"
    start = time.perf_counter()
    if args.warc:
        pages, copies, names = count_records(warc), 0, ["an earlier run"]
    else:
        pages, copies = pack_warcs(names, warc, args.pages, args.near_copies, args.generate, args.jobs)
    size = sum(f.stat().st_size for f in warc.rglob("*.warc.gz"))
    print(f"{pages} pages from {', '.join(names)} + {copies} near-duplicate copies packed into {warc} "
          f"({len(list(warc.rglob('*.warc.gz')))} files, {size / 2**20:.0f} MiB) in "
          f"{time.perf_counter() - start:.0f} s; {os.cpu_count()} cores", flush=True)
    pages += copies
    py = sys.executable
    clean = [py, "-m", "newsclean.cli", "clean", "--warc", str(warc)]
    every = {
        "baseline": lambda out: [py, __file__, "--baseline", str(warc), out],
        "newsclean": lambda out: [*clean, "--out", out],
        "newsclean-1": lambda out: [*clean, "--out", out, "--direct_running_mode", "in_memory"],
    }
    workers = [int(w) for w in args.workers.split(",")]
    for w in workers:
        every["newsclean-all" if len(workers) == 1 else f"newsclean-x{w}"] = (
            lambda out, w=w: [*clean, "--out", out, "--direct_running_mode", "multi_processing",
                              "--direct_num_workers", str(w)])
    chosen = [n for s in args.systems.split(",") if s  # --systems '': pack only (for a later --warc)
              for n in ([f"newsclean-x{w}" for w in workers] if s == "newsclean-all" and len(workers) > 1 else [s])]
    systems = {name: every[name] for name in chosen}
    results: dict[str, list[tuple[float, int, int]]] = {s: [] for s in systems}
    counts: dict[str, str] = {}
    for r in range(args.rounds):
        for name, cmd in systems.items():
            out = str(root / f"out-{name}-{r}")
            load1 = os.getloadavg()[0]
            wall, rss, stdout = _measure(cmd(out))
            results[name].append((wall, rss, LAST_PEAK_PSS[0]))
            if name.startswith("newsclean"):
                summary = json.loads(Path(out, "_summary.json").read_text())
                dup = summary.get("duplicates", {})
                counts[name] = (f"read {summary['records_read']}, articles {summary['articles_written']}, "
                                f"exact duplicates {dup.get('exact_duplicate', 0)}, "
                                f"near-duplicates {dup.get('near_duplicate', 0)}, rejects {summary['rejects_total']}")
            else:
                counts[name] = stdout.strip()
            print(f"  round {r + 1} {name}: {wall:.1f} s, peak RSS {rss / 2**20:.0f} MiB, peak PSS "
                  f"{LAST_PEAK_PSS[0] / 2**20:.0f} MiB (1-minute load before {load1:.1f}, after "
                  f"{os.getloadavg()[0]:.1f}); {counts[name]}", flush=True)
    base = statistics.median(w for w, _, _ in results["baseline"]) if "baseline" in results else None
    base_rss = statistics.median(m for _, m, _ in results["baseline"]) if "baseline" in results else None
    print(f"\n{'system':<14} {'wall s':>8} {'pages/s':>8} {'peak RSS MiB':>13} {'peak PSS MiB':>13} "
          f"{'baseline/this':>14} {'RSS/baseline':>13}")
    for name, runs in results.items():
        wall = statistics.median(w for w, _, _ in runs)
        rss = statistics.median(m for _, m, _ in runs)
        pss = statistics.median(m for _, _, m in runs)
        ratio = f"{base / wall:>14.2f}" if base else f"{'-':>14}"
        mem = f"{rss / base_rss:>13.2f}" if base_rss else f"{'-':>13}"
        print(f"{name:<14} {wall:>8.1f} {pages / wall:>8.1f} {rss / 2**20:>13.0f} {pss / 2**20:>13.0f} {ratio} {mem}")
    for name, line in counts.items():
        print(f"{name}: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

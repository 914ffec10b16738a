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
- ``newsclean``: ``newsclean clean`` with its defaults (whichever of the two the CLI picks);
- ``prism``: ``newsclean clean --runner PrismRunner`` (Beam's Go runner, ``make prism``; the SDK harness in the
  launching process, LOOPBACK);
- ``prism-external``: the same with ``--environment_type EXTERNAL`` against Beam's SDK worker pool, which this
  script starts as a child beside the launcher (:func:`pool_run`), so its processes count in the peak.

Peak RSS is the largest sum of RSS over the child and all its descendants (the ``multi_processing`` SDK
workers included), sampled every 0.1 s with psutil (``pip install -e .[bench]``); peak PSS likewise every
0.5 s (shared pages, such as the libraries every worker maps, counted once in all: what the machine holds),
and the peak RSS of the largest single process (what ``/usr/bin/time -v`` reports for a command).
Rounds interleave the systems so they share the machine's load (printed: 1-minute load average before and
after each run, and the run's counts, so a run cut short keeps them); the median round is printed: wall
seconds, pages/s (WARC response records / wall), peak RSS, PSS and largest process, the ratio of the baseline's
wall to each system's (> 1: faster than the script), each system's three memory figures over the baseline's (the
script is one process: its tree's RSS is its largest process's), and newsclean's article /
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


def pool_run(cmd: list[str]) -> int:
    """Start Beam's SDK worker pool (``worker_pool_main``) on a free 127.0.0.1 port, run ``cmd`` with
    ``--environment_config 127.0.0.1:PORT`` appended, stop the pool and its workers; returns ``cmd``'s exit status."""
    import signal
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    pool = subprocess.Popen([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main", "--service_port",
                             str(port)], env=env, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        while True:  # until the pool listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if pool.poll() is not None:
                    raise RuntimeError(f"the SDK worker pool exited with {pool.returncode}") from None
                time.sleep(0.2)
        return subprocess.run([*cmd, "--environment_config", f"127.0.0.1:{port}"], env=env).returncode
    finally:
        os.killpg(pool.pid, signal.SIGTERM)
        pool.wait()


#: The stages of :func:`stage_costs`, in the order of a record's walk through the job, with the passes the job makes
#: of each (the neighbour refs and the cleaning each read every record; the independent count is a third pass).
STAGES = (
    ("start-up: imports, models, warm-up", "one process; the job pays it in each worker"),
    ("WARC reading and decompression", "x2 in the job: neighbour refs, cleaning"),
    ("independent count (second pass)", "x1"),
    ("neighbour sampling: re-read N pages per key", "x1"),
    ("site-evidence learning (StaDyNoT 3.1)", "x1"),
    ("the chain: decode, parse, blocks, classifier, metadata", "x1"),
    ("  of which language identification", "x1"),
    ("MinHash signatures (shingles, datasketch)", "x1"),
    ("exact + near dedup decisions (LSH bands)", "x1"),
    ("spill: articles to Parquet and back", "x1"),
    ("Parquet writing: articles, rejects", "x1"),
)


def stage_costs(warc_dir: str, neighbour_sample: int = 10) -> dict[str, float]:
    """CPU seconds of each of :data:`STAGES` over the WARC files under ``warc_dir``, in this one process, without
    Beam: the product's own functions for each stage, called as the job calls them (the sample: the
    ``neighbour_sample`` pages of smallest URL hash per (site, category), as ``LearnSiteEvidence`` picks them).
    ``"records"``: the response records cleaned. The start-up's figure is this process's CPU from its start to
    the end of the chain's warm-up (:func:`~newsclean.pipeline.stages.warm_up`), as a worker's would be."""
    t = 0.0  # time.process_time() counts from the process's start
    costs: dict[str, float] = {}

    def lap(name: str) -> None:
        nonlocal t
        now = time.process_time()
        costs[name] = costs.get(name, 0.0) + now - t
        t = now

    import pyarrow as pa
    import pyarrow.parquet as pq

    from newsclean.pipeline import dedup_decisions as dd
    from newsclean.pipeline.stages import (
        classify_response,
        clean_page,
        evidence_for_key,
        read_sample,
        sample_ref,
        site_key,
        warm_up,
    )
    from newsclean.pipeline.warc_framing import scan_responses
    from newsclean.pipeline.warc_reader import iter_warc_file
    from newsclean.schemas.records import (
        ARTICLE_SCHEMA,
        REJECT_SCHEMA,
        SPILL_SCHEMA,
        SPILL_SIGNATURE,
        Article,
        Page,
        to_row,
    )
    from newsclean.transforms.chain import DEFAULT_CONFIG
    from newsclean.transforms.metadata import identify_language

    warm_up(DEFAULT_CONFIG)
    lap(STAGES[0][0])
    files = sorted(str(f) for f in Path(warc_dir).rglob("*.warc.gz"))
    pages = [p for f in files for p in iter_warc_file(f) if isinstance(p, Page) and classify_response(p) is None]
    lap(STAGES[1][0])
    for f in files:
        with open(f, "rb") as stream:
            scan_responses(stream, name=f)
    lap(STAGES[2][0])
    refs: dict = {}
    for p in pages:
        key, ref = sample_ref(p)
        refs.setdefault(key, []).append(ref)
    samples = {key: read_sample(sorted(r)[:neighbour_sample]) if len(r) > 1 else [] for key, r in refs.items()}
    lap(STAGES[3][0])
    evidence = dict(evidence_for_key(key, sample, DEFAULT_CONFIG) for key, sample in samples.items())
    lap(STAGES[4][0])
    cleaned = [clean_page(p, evidence.get(site_key(p)), DEFAULT_CONFIG) for p in pages]
    lap(STAGES[5][0])
    articles = [a for a in cleaned if isinstance(a, Article)]
    for a in articles:
        identify_language(a.text)
    lap(STAGES[6][0])
    keyed = [dd.keyed_article(a) for a in articles]
    lap(STAGES[7][0])
    kept = {}
    for _, key in keyed:
        kept[key.content_hash] = dd.pick_winner(kept[key.content_hash], key) if key.content_hash in kept else key
    buckets: dict = {}
    sigs = {key.near.article_id: key.near.values() for key in kept.values()}
    for key in kept.values():
        for band in dd.band_keys(sigs[key.near.article_id]):
            buckets.setdefault(band, []).append(dd.member(key.near))
    for members in buckets.values():
        for a, head in dd.bucket_pairs(members):
            dd.is_near_duplicate(sigs[a[0]], sigs[head[0]], dd.NearDupParams().threshold)
    lap(STAGES[8][0])
    with tempfile.TemporaryDirectory() as tmp:
        spill = [{**to_row(a), SPILL_SIGNATURE: k.near.signature} for a, k in keyed]
        pq.write_table(pa.Table.from_pylist(spill, schema=SPILL_SCHEMA), f"{tmp}/spill.parquet")
        pq.read_table(f"{tmp}/spill.parquet").to_pylist()
        lap(STAGES[9][0])
        rejects = [to_row(r) for r in cleaned if not isinstance(r, Article)]
        pq.write_table(pa.Table.from_pylist([to_row(a) for a in articles], schema=ARTICLE_SCHEMA), f"{tmp}/a.parquet")
        pq.write_table(pa.Table.from_pylist(rejects, schema=REJECT_SCHEMA), f"{tmp}/r.parquet")
        lap(STAGES[10][0])
    return {**costs, "records": float(len(pages))}


def print_stage_table(costs: dict[str, float], job: tuple[float, float, int] | None,
                      baseline_cpu: float | None) -> None:
    """The per-stage table of :func:`stage_costs`, beside the job's own CPU and wall (``job``: wall s, CPU s of its
    process tree, workers) and the reference script's CPU: what the stages leave of the job's CPU is Beam's own
    overhead (start-up of its processes, serialisation between stages, bundles, the runner) and the stages' extra
    passes."""
    n = costs["records"]
    print(f"\nper-stage CPU, one process without Beam, {n:.0f} records (1-minute load {os.getloadavg()[0]:.1f}):")
    print(f"{'stage':<58} {'CPU s':>7} {'ms/record':>10}  passes in the job")
    total = 0.0
    for name, passes in STAGES:
        cpu = costs.get(name, 0.0)
        if not name.startswith("  "):
            total += cpu * (2 if passes.startswith("x2") else 1)
        print(f"{name:<58} {cpu:>7.1f} {cpu / n * 1e3:>10.2f}  {passes}")
    print(f"{'the stages, with the passes of the job':<58} {total:>7.1f} {total / n * 1e3:>10.2f}")
    if job:
        wall, cpu, workers = job
        startup = costs.get(STAGES[0][0], 0.0) * workers
        print(f"{'newsclean (defaults): CPU of its process tree':<58} {cpu:>7.1f} {cpu / n * 1e3:>10.2f}  "
              f"wall {wall:.1f} s, {cpu / wall:.2f} cores busy on average")
        print(f"{'  Beam and processes: the rest (start-up of ' + str(workers) + ' more: ' + f'{startup:.1f} s)':<58} "
              f"{cpu - total:>7.1f} {(cpu - total) / n * 1e3:>10.2f}")
    if baseline_cpu:
        print(f"{'reference script (FastWARC + trafilatura + pyarrow)':<58} {baseline_cpu:>7.1f} "
              f"{baseline_cpu / n * 1e3:>10.2f}")


def _tree_rss(proc) -> tuple[int, int]:
    """RSS in bytes of ``proc`` (a psutil.Process) and all its descendants now: their sum, and the largest one's."""
    import psutil

    total = largest = 0
    for p in [proc, *proc.children(recursive=True)]:
        try:
            rss = p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        total, largest = total + rss, max(largest, rss)
    return total, largest


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
#: Peak RSS of the largest single process of the last :func:`_measure` call's tree, in bytes (what ``/usr/bin/time
#: -v`` calls the maximum resident set size; a one-process script's is its tree's).
LAST_PEAK_PROCESS = [0]
#: CPU seconds (user + system) of the last :func:`_measure` call's child and the descendants it waited for.
LAST_CPU = [0.0]


def _measure(cmd: list[str]) -> tuple[float, int, str]:
    """Run ``cmd`` as a child; returns (wall s, peak RSS of its process tree in bytes, stdout). The peak PSS of the
    tree is left in :data:`LAST_PEAK_PSS`."""
    import psutil

    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    watched, peak, done = psutil.Process(proc.pid), [0], threading.Event()
    LAST_PEAK_PSS[0] = LAST_PEAK_PROCESS[0] = 0

    def sample():
        n = 0
        while not done.is_set():
            try:
                total, largest = _tree_rss(watched)
                peak[0], LAST_PEAK_PROCESS[0] = max(peak[0], total), max(LAST_PEAK_PROCESS[0], largest)
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
    LAST_CPU[0] = usage.ru_utime + usage.ru_stime
    LAST_PEAK_PROCESS[0] = max(LAST_PEAK_PROCESS[0], usage.ru_maxrss * 1024)
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
                        help="comma-separated: baseline, newsclean (defaults), newsclean-1, newsclean-all, prism, "
                             "prism-external; '' packs only")
    parser.add_argument("--keep", type=Path, default=None, help="write the WARC files and outputs here")
    parser.add_argument("--near-copies", action="store_true",
                        help="add a near-duplicate copy (3 words changed, a timestamp line, another URL) of each page")
    parser.add_argument("--warc", type=Path, default=None,
                        help="clean the WARC files under this folder (an earlier --keep DIR/warc) instead of packing")
    parser.add_argument("--stages", action="store_true",
                        help="after the rounds, the per-stage CPU table (stage_costs: the job's stages in one process, "
                             "without Beam) beside the newsclean run's CPU and the reference script's")
    parser.add_argument("--baseline", nargs=2, metavar=("WARC_DIR", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--stage-costs", metavar="WARC_DIR", help=argparse.SUPPRESS)
    parser.add_argument("--pool-run", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline:
        baseline(*args.baseline)
        return 0
    if args.pool_run:
        return pool_run(args.pool_run)
    if args.stage_costs:
        print(json.dumps(stage_costs(args.stage_costs)))
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
    cache = Path(os.environ.get("NEWSCLEAN_INFRA_CACHE") or Path.home() / ".cache" / "newsclean-infra")
    prism = ["--runner", "PrismRunner", "--prism_location", str(cache / "bin" / "prism"), "--job_server_timeout", "86400"]
    every = {
        "baseline": lambda out: [py, __file__, "--baseline", str(warc), out],
        "newsclean": lambda out: [*clean, "--out", out],
        "newsclean-1": lambda out: [*clean, "--out", out, "--direct_running_mode", "in_memory"],
        "prism": lambda out: [*clean, "--out", out, *prism],
        "prism-external": lambda out: [py, __file__, "--pool-run", *clean, "--out", out, *prism,
                                       "--environment_type", "EXTERNAL"],
    }
    workers = [int(w) for w in args.workers.split(",")]
    for w in workers:
        every["newsclean-all" if len(workers) == 1 else f"newsclean-x{w}"] = (
            lambda out, w=w: [*clean, "--out", out, "--direct_running_mode", "multi_processing",
                              "--direct_num_workers", str(w)])
    chosen = [n for s in args.systems.split(",") if s  # --systems '': pack only (for a later --warc)
              for n in ([f"newsclean-x{w}" for w in workers] if s == "newsclean-all" and len(workers) > 1 else [s])]
    systems = {name: every[name] for name in chosen}
    results: dict[str, list[tuple[float, int, int, int]]] = {s: [] for s in systems}  # wall, RSS, PSS, largest
    cpus: dict[str, list[float]] = {s: [] for s in systems}
    counts: dict[str, str] = {}
    for r in range(args.rounds):
        for name, cmd in systems.items():
            out = str(root / f"out-{name}-{r}")
            load1 = os.getloadavg()[0]
            wall, rss, stdout = _measure(cmd(out))
            results[name].append((wall, rss, LAST_PEAK_PSS[0], LAST_PEAK_PROCESS[0]))
            cpus[name].append(LAST_CPU[0])
            if name.startswith(("newsclean", "prism")):
                summary = json.loads(Path(out, "_summary.json").read_text())
                dup = summary.get("duplicates", {})
                counts[name] = (f"read {summary['records_read']}, articles {summary['articles_written']}, "
                                f"exact duplicates {dup.get('exact_duplicate', 0)}, "
                                f"near-duplicates {dup.get('near_duplicate', 0)}, rejects {summary['rejects_total']}")
            else:
                counts[name] = stdout.strip()
            print(f"  round {r + 1} {name}: {wall:.1f} s, CPU {LAST_CPU[0]:.1f} s, peak RSS {rss / 2**20:.0f} MiB, peak PSS "
                  f"{LAST_PEAK_PSS[0] / 2**20:.0f} MiB, largest process {LAST_PEAK_PROCESS[0] / 2**20:.0f} MiB "
                  f"(1-minute load before {load1:.1f}, after "
                  f"{os.getloadavg()[0]:.1f}); {counts[name]}", flush=True)
    medians = {name: [statistics.median(run[i] for run in runs) for i in range(4)] for name, runs in results.items()}
    base = medians.get("baseline")
    print(f"\n{'system':<14} {'wall s':>8} {'pages/s':>8} {'peak RSS MiB':>13} {'peak PSS MiB':>13} "
          f"{'largest MiB':>12} {'baseline/this':>14} {'RSS/baseline':>13} {'PSS/baseline':>13} {'largest/base':>13}")
    for name, (wall, rss, pss, largest) in medians.items():
        ratio = f"{base[0] / wall:>14.2f}" if base else f"{'-':>14}"
        mem = ("".join(f"{this / of:>14.2f}" for this, of in zip((rss, pss, largest), base[1:], strict=True))
               if base else f"{'-':>14}" * 3)
        print(f"{name:<14} {wall:>8.1f} {pages / wall:>8.1f} {rss / 2**20:>13.0f} {pss / 2**20:>13.0f} "
              f"{largest / 2**20:>12.0f} {ratio}{mem}")
    for name, line in counts.items():
        print(f"{name}: {line}")
    if args.stages:
        print_stages(warc, results, cpus)
    return 0


def print_stages(warc: Path, results: dict, cpus: dict) -> None:
    """Run :func:`stage_costs` in a child (a fresh process, as a worker is) and print :func:`print_stage_table`
    beside the median round of ``newsclean`` (its workers: ``_summary.json`` does not say, so the CLI's choice,
    :func:`~newsclean.pipeline.runner.local_workers`, is asked again) and of the baseline."""
    from newsclean.pipeline.runner import available_memory, local_workers

    _, _, stdout = _measure([sys.executable, __file__, "--stage-costs", str(warc)])
    costs = json.loads(stdout.strip().splitlines()[-1])
    job = None
    if "newsclean" in results:
        size = sum(f.stat().st_size for f in warc.rglob("*.warc*"))
        workers = local_workers(len(os.sched_getaffinity(0)), size, available_memory())
        job = (statistics.median(w for w, *_ in results["newsclean"]), statistics.median(cpus["newsclean"]),
               workers if workers > 1 else 0)
    base = statistics.median(cpus["baseline"]) if "baseline" in cpus else None
    print_stage_table(costs, job, base)


if __name__ == "__main__":
    sys.exit(main())

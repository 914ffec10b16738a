"""The pipeline path: score the main job (``newsclean clean``) on the shared data sets, as the owners measure.

Each data set's pages are packed as WARC response records (:func:`pack_pages`: one file per neighbour group, the
group as ``WARC-Newsclean-Site`` and the data set as ``WARC-Newsclean-Category``, so neighbour pages are learnt
as in a crawl), by default **without** the crawler's ``WARC-Newsclean-Page-Type`` header (a foreign WARC: Common
Crawl, CC-NEWS, another crawler's files), then cleaned by :func:`~newsclean.pipeline.clean.run_clean` with the
chain under test, the same call ``newsclean clean`` makes with its default flags. The output rows are joined back
to the pages by URL (:func:`page_texts`): an article row scores its ``text``; a duplicate row scores the text of
its cluster's kept article; a reject or a missing row scores the empty text (0 F1 against a non-empty gold).
Per-page scores are :class:`~newsclean_eval.runner.PageResult` rows of system ``main-job:<id>``, so every table
of ``newsclean eval`` (per set, per era, LODO) has the main job's row beside the API path's.

Page types (:func:`page_type_counts`): the share of gold articles kept as article rows, and of the gold
listings and collections (wcxb-dev's labels) that are not typed ``article``, per data set.
"""

from __future__ import annotations

import io
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from newsclean.demo.scoring import tokens
from newsclean_eval.datasets import EvalPage, page_era, page_year
from newsclean_eval.runner import PageResult, decode_page, era_of, score_text

#: Prefix of the system id of a chain scored through the main job.
MAIN_JOB = "main-job:"
WARC_DATE = "2024-05-01T12:00:00Z"
#: wcxb-dev page types that are lists of other pages: a corpus must not type them ``article``.
LIST_TYPES = frozenset({"listing", "collection"})


@dataclass(frozen=True)
class PackedPage:
    """A page as packed: its URL in the WARC file (unique in the run) and the page."""

    url: str
    page: EvalPage


@dataclass
class MainJobRun:
    """One data set through the main job: per-page ``results``, each page's ``outcome`` (``article``,
    ``duplicate``, a reject reason or ``missing``) and row page type (None without a row), the run's counts."""

    dataset: str
    system: str
    results: list[PageResult] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)  # page id -> outcome
    row_types: dict[str, str | None] = field(default_factory=dict)  # page id -> page_type of its row
    counts: dict[str, int] = field(default_factory=dict)


def safe_name(name: str) -> str:
    """``name`` as a site, category or file name: runs of characters other than ASCII letters, digits, ``_``,
    ``.`` and ``-`` replaced by ``_``, at most 60 characters; ``site`` when nothing is left."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "site"


def page_url(page: EvalPage, taken: set[str]) -> str:
    """The URL ``page`` is packed under: its own where it has one not yet ``taken`` in this run, else one made
    from its data set and page id (``http://<dataset>.eval/<page id>``); added to ``taken``."""
    url = page.url or f"http://{safe_name(page.dataset)}.eval/{safe_name(page.page_id)}"
    if url in taken:
        url = f"{url}{'&' if '?' in url else '?'}eval-page={safe_name(page.page_id)}"
    taken.add(url)
    return url


def write_warc(path: Path, site: str, category: str, items: Sequence[tuple[str, bytes, str | None]],
               date: str = WARC_DATE) -> None:
    """Write ``items`` (URL, HTML bytes, crawler page type or None) as gzipped WARC/1.0 response records
    (HTTP 200, ``text/html``) at ``path``, each with ``WARC-Newsclean-Site``/``-Category`` headers and, where a
    page type is given, ``WARC-Newsclean-Page-Type``."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        for url, html, page_type in items:
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            headers = {"WARC-Date": date, "WARC-Newsclean-Site": site, "WARC-Newsclean-Category": category}
            if page_type:
                headers["WARC-Newsclean-Page-Type"] = page_type
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(html),
                                                          length=len(html), http_headers=http,
                                                          warc_headers_dict=headers))


def crawler_page_type(page: EvalPage) -> str:
    """The ``WARC-Newsclean-Page-Type`` a crawler that knew the page would record: ``article`` for a gold
    article, ``listing`` for a listing or collection, ``other`` for any other labelled type."""
    if page.page_type == "article":
        return "article"
    return "listing" if page.page_type in LIST_TYPES else "other"


def pack_pages(pages: Sequence[EvalPage], root: Path, page_type_header: bool = False) -> list[PackedPage]:
    """Write ``pages`` under ``root`` as ``<group>/<dataset>/<group>.warc.gz``, one file per neighbour group
    (:func:`write_warc`), with :func:`crawler_page_type` headers only when ``page_type_header``. Returns the
    pages with the URLs they were packed under (:func:`page_url`), in input order."""
    taken: set[str] = set()
    packed = [PackedPage(page_url(p, taken), p) for p in pages]
    groups: dict[str, list[PackedPage]] = {}
    for item in packed:
        groups.setdefault(item.page.group, []).append(item)
    for group, items in groups.items():
        site, category = safe_name(group), safe_name(items[0].page.dataset)
        rows = [(i.url, i.page.html, crawler_page_type(i.page) if page_type_header else None) for i in items]
        write_warc(root / site / category / f"{site}.warc.gz", site, category, rows)
    return packed


def clean_folder(warc: Path, out: Path, chain) -> None:
    """Run the main job over ``warc`` into ``out`` with ``chain`` (a name or a ``ChainConfig``) and the defaults
    of ``newsclean clean`` otherwise (the local runner it picks, batches, dedup, the corpus filter)."""
    from newsclean.pipeline.clean import run_clean
    from newsclean.pipeline.options import CleanConfig

    run_clean(CleanConfig(warc=str(warc), out=str(out), chain=chain))


def _rows(out: Path, table: str) -> list[dict]:
    from newsclean.pipeline.formats import read_rows, row_files

    return [r for path in row_files(str(out / table)) for r in read_rows(path)]


@dataclass(frozen=True)
class RowOutcome:
    """What the main job made of one URL: ``outcome`` (``article``, ``duplicate``, a reject reason or
    ``missing``), the text scored (the kept cluster member's for a duplicate) and the row's page type."""

    outcome: str
    text: str = ""
    page_type: str | None = None


def page_texts(out: Path) -> dict[str, RowOutcome]:
    """URL -> :class:`RowOutcome` of a ``newsclean clean`` output folder ``out`` (articles, duplicates, rejects;
    a URL with no row is absent)."""
    articles = _rows(out, "articles")
    by_id = {a["article_id"]: a for a in articles}
    found = {a["url"]: RowOutcome("article", a["text"], a.get("page_type")) for a in articles}
    for d in _rows(out, "duplicates"):
        kept = by_id.get(d["cluster_id"])
        found.setdefault(d["url"], RowOutcome("duplicate", kept["text"] if kept else "",
                                              kept.get("page_type") if kept else None))
    for r in _rows(out, "rejects"):
        if r.get("url"):
            found.setdefault(r["url"], RowOutcome(r["reason"]))
    return found


def score_main_job(packed: Sequence[PackedPage], found: dict[str, RowOutcome], system: str,
                   scored: Callable[[EvalPage], bool] = lambda page: True,
                   eras: dict[str, str] | None = None) -> MainJobRun:
    """Score every packed page that ``scored(page)`` keeps against its gold from the joined rows ``found``
    (:func:`page_texts`); the run records every packed page's outcome. ``eras``: page id -> era where the API
    path's rows already give it (else :func:`_era` finds it)."""
    run = MainJobRun(packed[0].page.dataset if packed else "", system)
    for item in packed:
        row = found.get(item.url, RowOutcome("missing"))
        run.outcomes[item.page.page_id], run.row_types[item.page.page_id] = row.outcome, row.page_type
        run.counts[row.outcome] = run.counts.get(row.outcome, 0) + 1
        if not scored(item.page) or (item.page.gold is None and not item.page.must_contain):
            continue
        gold = None if item.page.gold is None else tokens(item.page.gold)
        p, r, f1, n_pred, snippets = score_text(item.page, row.text, gold)
        era = (eras or {}).get(item.page.page_id) or _era(item.page)
        run.results.append(PageResult(
            item.page.dataset, item.page.group, item.page.page_id, item.page.split, system, p, r, f1, n_pred,
            len(gold or ()), 0.0, "" if row.outcome in ("article", "duplicate") else row.outcome, snippets, era))
    return run


def _era(page: EvalPage) -> str:
    """The page's era as the API path's rows give it (:func:`~newsclean_eval.runner.era_of`)."""
    return page_era(page) if page_year(page) is not None else era_of(page, decode_page(page))


def run_main_job(pages: Sequence[EvalPage], system_id: str, chain, page_type_header: bool = False,
                 workdir: Path | None = None, eras: dict[str, str] | None = None) -> MainJobRun:
    """Pack ``pages`` (:func:`pack_pages`), clean them with ``chain`` (:func:`clean_folder`) and score the gold
    articles among them (:func:`score_main_job`, ``eras`` passed on) as system ``main-job:<system_id>``.
    ``workdir``: where the WARC files and the output go (a temporary folder, removed after, when None)."""
    with tempfile.TemporaryDirectory(prefix="newsclean-main-job-", dir=workdir) as tmp:
        root = Path(tmp)
        packed = pack_pages(pages, root / "warc", page_type_header)
        clean_folder(root / "warc", root / "out", chain)
        found = page_texts(root / "out")
    return score_main_job(packed, found, MAIN_JOB + system_id, lambda page: page.page_type == "article", eras)


def page_type_counts(run: MainJobRun, pages: Sequence[EvalPage]) -> dict[str, tuple[int, int]]:
    """``{"articles kept": (kept, gold articles), "lists not typed article": (not article, gold lists)}`` of
    ``run``: a gold article (a page of type ``article`` whose gold holds a word or a must-contain snippet: an
    empty gold marks an error page or a hub) is kept when it has an article or duplicate row; a gold listing or
    collection (:data:`LIST_TYPES`) is not typed article when it has no row or its row's page type is not
    ``article``."""
    articles = [p for p in pages if p.page_type == "article" and (tokens(p.gold or "") or p.must_contain)]
    lists = [p for p in pages if p.page_type in LIST_TYPES]
    kept = sum(run.outcomes.get(p.page_id) in ("article", "duplicate") for p in articles)
    untyped = sum(run.row_types.get(p.page_id) != "article" for p in lists)
    return {"articles kept": (kept, len(articles)), "lists not typed article": (untyped, len(lists))}


def confusion(run: MainJobRun, pages: Sequence[EvalPage]) -> Counter:
    """``(gold page type, outcome)`` -> pages, where the outcome is the row's page type for a row and the reject
    reason (or ``missing``) otherwise."""
    table: Counter = Counter()
    for p in pages:
        outcome = run.outcomes.get(p.page_id, "missing")
        shown = run.row_types.get(p.page_id) or "?" if outcome in ("article", "duplicate") else outcome
        table[p.page_type, shown] += 1
    return table

"""``newsclean report OUT``: one self-contained HTML page describing a corpus written by ``newsclean clean``.

The page holds the totals of ``newsclean summarize`` (records read, articles, rejects, duplicates: the same
:func:`~newsclean.pipeline.summary.summarize_output` accounting) and seven plots drawn with matplotlib: articles per
site (the :data:`~newsclean.pipeline.summary.TOP_SITES` sites with most), articles per UTC day (``published_at``,
else the day the page was fetched), words per article (``word_count``, a histogram), languages, page types, reject
reasons and the sizes of the duplicate clusters (a kept article plus the ``duplicates/`` rows naming it as their
``cluster_id``). Each plot is an SVG image in a ``data:`` URI (RFC 2397), followed by its numbers as a table, so the
file references nothing outside itself. The tables are read from either ``--format`` (Parquet or JSON Lines) with
the summary's readers, through Beam's ``FileSystems`` (local folders, ``s3://...`` or ``gs://...``, reached with the
command's Beam flags: :func:`~newsclean.pipeline.output.use_filesystem_options`).
"""

from __future__ import annotations

import base64
import collections
import html
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from matplotlib.ticker import MaxNLocator

from newsclean.pipeline.dedup import DUPLICATES_DIR
from newsclean.pipeline.errors import NewscleanError, NoRunError, first_line
from newsclean.pipeline.formats import SUFFIXES, iter_jsonl, open_part, row_files
from newsclean.pipeline.output import is_url, use_filesystem_options
from newsclean.pipeline.stages import ARTICLES_DIR
from newsclean.pipeline.summary import (
    SUMMARY_FILE,
    TOP_SITES,
    RunSummary,
    read_counts,
    summarize_output,
    table_counts,
)
from newsclean.schemas.records import PIPELINE_VERSION

#: File name of the report inside the corpus folder when ``--html`` is not given.
REPORT_FILE = "report.html"
#: Bins of the words-per-article histogram (fewer when the corpus has fewer distinct word counts).
WORD_BINS = 30
#: Languages and page types plotted one by one, most articles first (the rest are counted in the table's last row).
TOP_LABELS = 20
#: Shown for a missing (null or empty) value.
NONE_LABEL = "(none)"


@dataclass(frozen=True)
class CorpusFigures:
    """What the report plots, counted from a corpus folder.

    Attributes:
        summary: the folder's :class:`~newsclean.pipeline.summary.RunSummary` (totals, sites, languages, rejects).
        page_types: articles by ``page_type``.
        words: articles by ``word_count`` (words per article).
        days: UTC day (``YYYY-MM-DD``) -> ``(articles dated by published_at, articles with no published_at dated by
            fetched_at)``.
        cluster_sizes: duplicate-cluster size (articles: the kept one and its dropped duplicates, >= 2) -> clusters.
    """

    summary: RunSummary
    page_types: dict[str, int]
    words: dict[int, int]
    days: dict[str, tuple[int, int]]
    cluster_sizes: dict[int, int]

    @property
    def single_clusters(self) -> int:
        """Articles without any duplicate (clusters of one)."""
        return self.summary.articles_written - sum(self.cluster_sizes.values())


def check_corpus(out: str) -> None:
    """Refuse a folder that is no corpus of ``newsclean clean``.

    Raises:
        NoRunError: ``out`` is a local path that is no folder, or it holds neither ``_summary.json`` nor
            ``_counts/`` (as :func:`~newsclean.pipeline.launch.summarize_out` refuses it).
    """
    if not is_url(out) and not os.path.isdir(out):
        raise NoRunError(f"{out}: {'not a folder' if os.path.exists(out) else 'no such folder'}")
    if not FileSystems.exists(FileSystems.join(out, SUMMARY_FILE)) and not read_counts(out):
        raise NoRunError(f"{out} holds no newsclean corpus (no {SUMMARY_FILE} or _counts/): nothing to report")


def read_figures(out: str) -> CorpusFigures:
    """The :class:`CorpusFigures` of the corpus folder ``out``.

    Raises:
        NoRunError: ``out`` is no corpus (:func:`check_corpus`).
        NewscleanError: a part file cannot be read (a cut file, not Parquet or JSON Lines).
    """
    check_corpus(out)
    try:
        summary = summarize_output(out)
        counts = table_counts(out, ARTICLES_DIR, "page_type", "word_count")[1]
        clusters = table_counts(out, DUPLICATES_DIR, "cluster_id")[1]["cluster_id"]
        days = day_counts(row_files(FileSystems.join(out, ARTICLES_DIR)))
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError, BeamIOError an OSError
        raise NewscleanError(f"{out}: the corpus cannot be read ({first_line(exc)})") from exc
    return CorpusFigures(
        summary=summary,
        page_types={label(k): n for k, n in counts["page_type"].items()},
        words={int(k): n for k, n in counts["word_count"].items() if k is not None},
        days=days,
        cluster_sizes=dict(collections.Counter(n + 1 for n in clusters.values())))


def _utc_day(value) -> str | None:
    """``YYYY-MM-DD`` of a stored UTC timestamp: a ``datetime`` (Parquet) or an ISO 8601 UTC string (JSON Lines)."""
    if value is None:
        return None
    return value[:10] if isinstance(value, str) else value.date().isoformat()


def day_counts(paths: list[str]) -> dict[str, tuple[int, int]]:
    """Articles per UTC day of the article part files ``paths`` (either format): ``{day: (dated by published_at,
    dated by fetched_at for want of a published_at)}``, days in order. Raises ``OSError``/``ValueError`` as the
    readers do."""
    published, fetched = collections.Counter(), collections.Counter()
    for path in paths:
        if path.endswith(SUFFIXES["jsonl"]):
            pairs = ((row.get("published_at"), row.get("fetched_at")) for row in iter_jsonl(path))
        else:
            with open_part(path) as f:
                table = pq.read_table(f, columns=["published_at", "fetched_at"], use_threads=False)
            pairs = zip(table.column("published_at").to_pylist(), table.column("fetched_at").to_pylist())
        for pub, fetch in pairs:
            if pub is not None:
                published[_utc_day(pub)] += 1
            elif fetch is not None:
                fetched[_utc_day(fetch)] += 1
    return {day: (published[day], fetched[day]) for day in sorted(published.keys() | fetched.keys())}


def label(value) -> str:
    """A category's label: the value as text, :data:`NONE_LABEL` for null or empty."""
    return NONE_LABEL if value is None or value == "" else str(value)


def ranked(counts: dict, top: int) -> list[tuple[str, int]]:
    """The ``top`` most frequent ``(label, count)`` pairs (ties by label), then one ``("N others", sum)`` pair for the
    rest, if any."""
    items = sorted(((label(k), n) for k, n in counts.items()), key=lambda kv: (-kv[1], kv[0]))
    rest = items[top:]
    return items[:top] + ([(f"{len(rest)} others", sum(n for _, n in rest))] if rest else [])


# ------------------------------------------------------------------------------------------------
# Plots: matplotlib Figure objects (no pyplot, no global state), saved as SVG
# ------------------------------------------------------------------------------------------------


def _figure(rows: int = 0):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.5, max(2.6, 0.9 + 0.28 * rows)), layout="constrained")
    return fig, fig.add_subplot()


def svg_data_uri(fig) -> str:
    """A matplotlib ``Figure`` as an SVG ``data:`` URI (RFC 2397; text as paths, no date, so the same corpus gives the
    same bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def bar_plot(items: list[tuple[str, int]], xlabel: str) -> str:
    """Horizontal bars of ``(label, count)`` pairs, first on top, each bar labelled with its count; a data URI."""
    fig, ax = _figure(len(items))
    bars = ax.barh([k for k, _ in items], [n for _, n in items], color="#3b6ea5")
    ax.bar_label(bars, padding=3)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.margins(x=0.12)
    return svg_data_uri(fig)


def words_plot(words: dict[int, int]) -> tuple[str, list[tuple[str, int]]]:
    """The histogram of words per article (:data:`WORD_BINS` equal bins from the least to the most words): a data URI
    and the bins as ``("lo-hi", articles)`` rows."""
    values, weights = zip(*sorted(words.items()))
    low, high = values[0], values[-1] + 1  # bins over [low, high): each holds at least one whole word count
    counts, edges = np.histogram(values, bins=min(WORD_BINS, high - low), range=(low, high), weights=weights)
    fig, ax = _figure()
    ax.stairs(counts, edges, fill=True, color="#3b6ea5")
    ax.set_xlabel("words per article")
    ax.set_ylabel("articles")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(MaxNLocator(integer=True))
    firsts = [int(np.ceil(e)) for e in edges]
    bins = [f"{lo}-{hi - 1}" if hi - 1 > lo else str(lo) for lo, hi in zip(firsts[:-1], firsts[1:])]
    return svg_data_uri(fig), [(b, int(n)) for b, n in zip(bins, counts) if n]


def days_plot(days: dict[str, tuple[int, int]]) -> str:
    """Articles per UTC day, stacked: dated by ``published_at``, then by fetch day; a data URI."""
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, DayLocator

    when = [date.fromisoformat(d) for d in days]
    published, fetched = [p for p, _ in days.values()], [f for _, f in days.values()]
    fig, ax = _figure()
    ax.bar(when, published, width=0.9, color="#3b6ea5", label="published_at")
    ax.bar(when, fetched, width=0.9, bottom=published, color="#e39b3b", label="fetched (no published_at)")
    # whole days on the axis: a corpus of a few days would otherwise get hourly ticks
    locator = DayLocator() if (when[-1] - when[0]).days < 10 else AutoDateLocator()
    ax.set_xlim(when[0] - timedelta(days=1), when[-1] + timedelta(days=1))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
    ax.set_ylabel("articles")
    ax.legend(loc="upper left", frameon=False)
    return svg_data_uri(fig)


# ------------------------------------------------------------------------------------------------
# The page
# ------------------------------------------------------------------------------------------------

_STYLE = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:60em;color:#222;background:#fff}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.15em .8em;text-align:left;border-bottom:1px solid #eee}
td.n{text-align:right;font-variant-numeric:tabular-nums}img{max-width:100%;display:block}.note{color:#666}"""


def _table(rows: list[tuple[str, object]], head: tuple[str, str], css_id: str) -> str:
    body = "".join(f"<tr><td>{html.escape(str(k))}</td><td class=n>{v}</td></tr>" for k, v in rows)
    return (f"<details><summary>numbers</summary><table id={css_id}><tr><th>{head[0]}</th><th>{head[1]}</th></tr>"
            f"{body}</table></details>")


def _section(title: str, css_id: str, uri: str | None, rows: list[tuple[str, object]], head: tuple[str, str],
             note: str = "") -> str:
    """One plot with its numbers; ``uri`` None (no rows): a line saying so instead of the plot."""
    note_html = f"<p class=note>{html.escape(note)}</p>" if note else ""
    if uri is None:
        return f"<section><h2>{html.escape(title)}</h2><p class=note>No rows.</p>{note_html}</section>"
    return (f"<section><h2>{html.escape(title)}</h2><img id={css_id}-plot alt=\"{html.escape(title)}\" src=\"{uri}\">"
            f"{note_html}{_table(rows, head, css_id)}</section>")


def _totals(s: RunSummary) -> str:
    rows = [("WARC response records read", s.records_read), ("articles written", s.articles_written),
            ("rejects", s.rejects_total), ("duplicates dropped", s.duplicates_dropped)]
    rows += [(f"\u2003{reason}", n) for reason, n in sorted(s.duplicates.items()) if n]
    check = "ok" if s.balanced else "MISMATCH"
    body = "".join(f"<tr><td>{html.escape(k)}</td><td class=n>{v}</td></tr>" for k, v in rows)
    return (f"<table id=totals>{body}</table><p id=check>check: {s.articles_written} + {s.rejects_total} + "
            f"{s.duplicates_dropped} = {s.accounted} vs {s.records_read} read: {check}</p>")


def _bars(title: str, css_id: str, counts: dict, top: int, what: str) -> str:
    items = ranked(counts, top)
    return _section(title, css_id, bar_plot(items, what) if items else None, items, ("value", what))


def render_report(figures: CorpusFigures, title: str = "", top: int = TOP_SITES) -> str:
    """The report page (HTML5 text) of ``figures``; ``title`` names the corpus; ``top``: sites plotted one by one."""
    s = figures.summary
    words_uri, word_rows = words_plot(figures.words) if figures.words else (None, [])
    day_rows = [(d, f"{p} + {f}") for d, (p, f) in figures.days.items()]
    clusters = sorted(figures.cluster_sizes.items())
    parts = [
        f"<h1>newsclean corpus report: {html.escape(title)}</h1>",
        f"<p class=note>newsclean {PIPELINE_VERSION}; the accounting of <code>newsclean summarize</code>.</p>",
        _totals(s),
        _bars("Articles per site", "sites", s.articles_by_site, top, "articles"),
        _section("Articles per day (UTC)", "days", days_plot(figures.days) if figures.days else None, day_rows,
                 ("day", "published_at + fetched"), "Dated by published_at; articles without one by the day they "
                 "were fetched."),
        _section("Words per article", "words", words_uri, word_rows, ("words", "articles")),
        _bars("Languages", "languages", s.articles_by_language, TOP_LABELS, "articles"),
        _bars("Page types", "page-types", figures.page_types, TOP_LABELS, "articles"),
        _bars("Reject reasons", "rejects", s.rejects, len(s.rejects), "rejects"),
        _section("Duplicate clusters", "clusters",
                 bar_plot([(f"{k} articles", n) for k, n in clusters], "clusters") if clusters else None,
                 [(f"{k} articles", n) for k, n in clusters], ("cluster size", "clusters"),
                 f"{figures.single_clusters} articles have no duplicate; a cluster is a kept article and the "
                 "duplicates dropped for it."),
    ]
    return ("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>"
            f"<title>newsclean report: {html.escape(title)}</title><style>{_STYLE}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def write_report(out: str, html_path: str | None = None, *,
                 beam_args: Sequence[str] | PipelineOptions | None = None) -> str:
    """Write the report of the corpus folder ``out`` to ``html_path`` (default ``OUT/report.html``); returns the path.
    ``beam_args``: the Beam flags that reach ``out`` (``--s3_endpoint_url ...`` for an ``s3://`` folder), as
    ``newsclean summarize`` takes them (:func:`~newsclean.pipeline.output.use_filesystem_options`).

    Raises:
        NoRunError: ``out`` is no corpus folder (:func:`check_corpus`).
        NewscleanError: a part file cannot be read.
        OSError: the report cannot be written.
    """
    use_filesystem_options(beam_args)
    out = out.rstrip("/") or "/"
    text = render_report(read_figures(out), title=out)
    path = html_path or FileSystems.join(out, REPORT_FILE)
    with FileSystems.create(path, mime_type="text/html", compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write(text.encode("utf-8"))
    return path

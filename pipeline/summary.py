"""The run summary of a cleaning job, computed from its outputs (not from runner metrics).

Runner metrics are not available on every runner (or arrive late), so the summary is read
back from what the job wrote: row counts of ``OUT/articles/*.parquet``, reject reasons of
``OUT/rejects/*.parquet`` (or their ``*.jsonl.gz`` JSON Lines, ``--format jsonl``) and the ``records_read`` / ``duplicates_dropped`` totals of
``OUT/_counts/counts.jsonl``. The summary goes to ``OUT/_summary.json``: a name that Spark, pandas,
``pyarrow.dataset``, DuckDB and HF ``datasets`` skip (they ignore names starting with ``_`` or ``.``), so
``OUT`` opens as a dataset; :func:`write_dataset_card` adds ``OUT/README.md`` (YAML ``configs:`` for the
``articles`` and ``rejects`` configs, read by ``datasets.load_dataset(OUT)`` and the Hub viewer). All I/O goes through Beam's ``FileSystems``, so ``OUT`` may be a
``gs://`` URL as well as a local directory.

The accounting check: ``articles_written + sum(rejects) + duplicates_dropped == records_read``, where
``records_read`` counts the reader's pages and rejects plus every intact response record that a second,
independent pass over each file found and the reader did not read (:func:`newsclean.pipeline.warc_reader.check_read`),
so that a reader bug fails the check instead of hiding the records it lost.
"""

from __future__ import annotations

import collections
import json
import os
from dataclasses import dataclass, field
from urllib.parse import unquote

import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.errors import AccountingError, NewscleanError, NothingReadError, first_line
from newsclean.pipeline.formats import SUFFIXES, iter_jsonl, open_part, row_files, stored_format
from newsclean.pipeline.output import is_url
from newsclean.pipeline.stages import ARTICLES_DIR, COUNTS_DIR, REJECTS_DIR
from newsclean.pipeline.warc_reader import OUTSIDE_HOSTS, SKIPPED_PREFIX
from newsclean.schemas.records import PIPELINE_VERSION, SCHEMA_VERSION, RejectReason

SUMMARY_FILE = "_summary.json"
#: Name of the summary before schema version 2 (deleted from an output folder when found there).
LEGACY_SUMMARY_FILE = "summary.json"
#: Name of the dataset card in the output folder (Hugging Face dataset card conventions).
CARD_FILE = "README.md"
#: Sites named one by one on the console ("articles by site"); the rest are counted as "N others".
TOP_SITES = 10


@dataclass
class RunSummary:
    """Counts of one cleaning run.

    Attributes:
        records_read: WARC response records read (plus one per stretch of unreadable bytes, plus the intact
            records the independent count found and the reader missed).
        articles_written: rows of ``articles/*.parquet``.
        rejects: rows of ``rejects/*.parquet`` by reason code.
        duplicates_dropped: articles dropped as exact or near duplicates of a kept one.
        articles_by_site: rows of ``articles/*.parquet`` by site.
        warc: the ``--warc`` argument; out: the output directory.
        records_found: intact response records the independent count found in the files (None: not counted,
            an output of an older version); records_missed: those the reader did not read (a reader bug).
        skipped: WARC records read and skipped, not part of the accounting, by kind: records that are not
            responses by type (``request``, ``metadata``, ``revisit``, ...), and response records outside
            ``--hosts`` as ``outside_hosts`` (:data:`~newsclean.pipeline.warc_reader.OUTSIDE_HOSTS`).
        articles_by_language: rows of ``articles/*.parquet`` by identified language (``""``: none).
        settings: the run's settings (``pipeline.incremental.run_settings``: chain, ``--min-words``,
            ``--neighbour-sample``, model digests, versions); ``{}`` when unknown.
    """

    records_read: int
    articles_written: int
    rejects: dict[str, int]
    duplicates_dropped: int
    articles_by_site: dict[str, int] = field(default_factory=dict)
    warc: str = ""
    #: ``duplicates_dropped`` by reason: ``exact_duplicate`` (same content hash), ``near_duplicate`` (MinHash LSH).
    duplicates: dict[str, int] = field(default_factory=dict)
    out: str = ""
    records_found: int | None = None
    records_missed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    articles_by_language: dict[str, int] = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    @property
    def rejects_total(self) -> int:
        """All reject rows."""
        return sum(self.rejects.values())

    @property
    def accounted(self) -> int:
        """Articles + rejects + duplicates: must equal :attr:`records_read`."""
        return self.articles_written + self.rejects_total + self.duplicates_dropped

    @property
    def balanced(self) -> bool:
        """Whether every record read ended as exactly one article, reject or duplicate."""
        return self.accounted == self.records_read

    def to_dict(self) -> dict:
        """The JSON object written to ``_summary.json`` (``articles_by_site``: every site, most articles first).
        No path of the machine that ran: ``warc`` is relative to the output folder (:func:`relative_to`)."""
        return {
            "records_read": self.records_read,
            "articles_written": self.articles_written,
            "rejects": dict(sorted(self.rejects.items())),
            "rejects_total": self.rejects_total,
            "duplicates_dropped": self.duplicates_dropped,
            "duplicates": dict(sorted(self.duplicates.items())),
            "accounted": self.accounted,
            "balanced": self.balanced,
            "records_found": self.records_found,
            "records_missed": self.records_missed,
            "skipped": dict(sorted(self.skipped.items())),
            "articles_by_site": dict(sorted(self.articles_by_site.items(), key=lambda kv: (-kv[1], kv[0]))),
            "articles_by_language": dict(sorted(self.articles_by_language.items(), key=lambda kv: (-kv[1], kv[0]))),
            "warc": relative_to(self.warc, self.out),
            "settings": self.settings,
            "pipeline_version": PIPELINE_VERSION,
            "schema_version": SCHEMA_VERSION,
        }

    def format(self) -> str:
        """A human-readable multi-line summary."""
        width = max([len(r) for r in self.rejects] + [18])
        lines = [
            f"newsclean clean: {self.records_read} WARC response records read from {self.warc}",
            f"  {'articles written':<{width + 2}} {self.articles_written:>7}",
            f"  {'duplicates dropped':<{width + 2}} {self.duplicates_dropped:>7}",
            f"  {'rejects':<{width + 2}} {self.rejects_total:>7}",
        ]
        lines[3:3] = [f"    {reason:<{width}} {n:>7}" for reason, n in sorted(self.duplicates.items()) if n]
        lines += [f"    {reason:<{width}} {n:>7}" for reason, n in sorted(self.rejects.items())]
        if self.skipped:
            lines.append("  skipped: " + skipped_text(self.skipped))
        if self.articles_by_site:
            lines.append("  articles by site: " + top_sites(self.articles_by_site))
        mark = "ok" if self.balanced else "MISMATCH"
        scan = ""
        if self.records_found is not None:
            scan = (f" ({self.records_found} response records found by a second pass over the files, "
                    f"{self.records_missed} of them not read)")
        lines.append(f"  check: {self.articles_written} + {self.rejects_total} + {self.duplicates_dropped} = "
                     f"{self.accounted} vs {self.records_read} read: {mark}{scan}")
        lines.append(f"  output: {FileSystems.join(self.out, ARTICLES_DIR)}/, "
                     f"{FileSystems.join(self.out, REJECTS_DIR)}/, {FileSystems.join(self.out, SUMMARY_FILE)}")
        return "\n".join(lines)


def relative_to(path: str, out: str) -> str:
    """``path`` (a ``--warc`` argument: a file, folder or glob) relative to the output folder ``out``, so that
    ``_summary.json`` and the dataset card hold no path of the machine that ran; a URL (``gs://...``), or a path
    when ``out`` is a URL, is returned as it is."""
    if not path or not out or is_url(path) or is_url(out):
        return path
    return os.path.relpath(os.path.abspath(os.path.expanduser(path)), os.path.abspath(out))


def check_balanced(summary: RunSummary) -> None:
    """Check the accounting of ``summary`` (:attr:`RunSummary.balanced`).

    Raises:
        AccountingError: articles + rejects + duplicates != records read (a bug: every record must end as one).
    """
    if not summary.balanced:
        missed = (f" ({summary.records_missed} intact records found by a second pass over the files were not read)"
                  if summary.records_missed else "")
        raise AccountingError(
            f"accounting mismatch: {summary.articles_written} articles + {summary.rejects_total} rejects + "
            f"{summary.duplicates_dropped} duplicates = {summary.accounted} != {summary.records_read} records read"
            f"{missed}")


def read_staged_summary(staging: str, warc: str = "") -> RunSummary:
    """The :class:`RunSummary` of a finished job's staging folder, checked before anything is published.

    A write that failed without an error (a file cut short by a full disk, a lost file) shows here: every staged
    Parquet file's footer is read and its rows must account for every record read.

    Raises:
        NewscleanError: a staged file cannot be read back.
        AccountingError: the staged rows do not account for every record read (:func:`check_balanced`).
        Both messages say that nothing was published.
    """
    try:
        run = summarize_output(staging, warc=warc)
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError, BeamIOError an OSError
        raise NewscleanError(f"the written output cannot be read back ({first_line(exc)}): nothing published") from exc
    try:
        check_balanced(run)
    except AccountingError as exc:
        raise AccountingError(f"{exc}: nothing published") from None
    return run


def skipped_text(skipped: dict[str, int]) -> str:
    """The skipped records (:attr:`RunSummary.skipped`) in words, each kind named:
    ``metadata 3, request 3 (not response records); outside_hosts 14 (response records outside --hosts)``."""
    other = ", ".join(f"{kind} {n}" for kind, n in sorted(skipped.items()) if kind != OUTSIDE_HOSTS)
    parts = [f"{other} (not response records)"] if other else []
    if skipped.get(OUTSIDE_HOSTS):
        parts.append(f"{OUTSIDE_HOSTS} {skipped[OUTSIDE_HOSTS]} (response records outside --hosts)")
    return "; ".join(parts)


#: Reject reasons of bytes that are not (whole) WARC records.
UNREADABLE_REASONS = frozenset({RejectReason.NOT_WARC.value, RejectReason.TRUNCATED_RECORD.value})


def check_something_read(summary: RunSummary) -> None:
    """Check that the run read at least one WARC response record: a run whose every record is a ``not_warc`` or
    ``truncated_record`` reject (or that found no response record at all) read no WARC file.

    Raises:
        NothingReadError: no article, no duplicate and no reject other than unreadable bytes.
    """
    unreadable = sum(n for reason, n in summary.rejects.items() if reason in UNREADABLE_REASONS)
    if summary.records_read > unreadable:
        return
    where = f" from {summary.warc}" if summary.warc else ""
    if summary.records_read == 0:
        skipped = f" (skipped: {skipped_text(summary.skipped)})" if summary.skipped else ""
        raise NothingReadError(f"no WARC response record{where}{skipped}")
    raise NothingReadError(f"no WARC record could be read{where}: all {summary.records_read} records read are "
                           f"unreadable bytes ({', '.join(f'{r} {n}' for r, n in sorted(summary.rejects.items()))}; "
                           f"see {FileSystems.join(summary.out, REJECTS_DIR)}/)")


def top_sites(by_site: dict[str, int], top: int = TOP_SITES) -> str:
    """``"a 12, b 7, ... and N others (M articles)"``: the ``top`` sites with most articles (ties by name),
    then how many sites and articles the line leaves out (their counts are in ``_summary.json``)."""
    ranked = sorted(by_site.items(), key=lambda kv: (-kv[1], kv[0]))
    line = ", ".join(f"{s} {n}" for s, n in ranked[:top])
    rest = ranked[top:]
    if rest:
        line += f" and {len(rest)} others ({sum(n for _, n in rest)} articles; all in {SUMMARY_FILE})"
    return line


def _files(out: str, name: str, *suffixes: str) -> list[str]:
    """Paths of ``OUT/<name>/*<suffix>`` and of Hive partitions ``OUT/<name>/<key>=<value>/*<suffix>`` for each of
    ``suffixes`` (default: every ``--format``'s, :data:`~newsclean.pipeline.formats.SUFFIXES`), sorted."""
    return row_files(FileSystems.join(out, name), suffixes or tuple(SUFFIXES.values()))


def _partition_value(path: str, column: str) -> str | None:
    """The value of ``column`` in a Hive partition path (``.../site=bbc/part-0.parquet`` -> ``bbc``)."""
    for part in path.replace("\\", "/").split("/")[:-1]:
        key, eq, value = part.partition("=")
        if eq and key == column:
            return unquote(value)
    return None


def _column_counts(paths: list[str], *columns: str) -> tuple[int, dict[str, collections.Counter]]:
    """Total rows of the Parquet files ``paths`` and the value counts of each of ``columns`` (read from the
    partition path where the files are partitioned by it; a file without the column counts its rows under None),
    in one read of each file."""
    rows, counts = 0, {column: collections.Counter() for column in columns}
    for path in paths:
        if path.endswith(SUFFIXES["jsonl"]):
            rows += _jsonl_column_counts(path, columns, counts)
            continue
        with open_part(path) as f:
            n = pq.read_metadata(f).num_rows
            f.seek(0)
            names = set(pq.read_schema(f).names)
            f.seek(0)
            stored = [c for c in columns if _partition_value(path, c) is None and c in names]
            # use_threads=False: Arrow's thread pool after reading a Python file object aborts the
            # interpreter at exit now and then (exit 134, apache/arrow#34314)
            table = pq.read_table(f, columns=stored, use_threads=False) if stored else None
        rows += n
        for column in columns:
            value = _partition_value(path, column)
            if column in stored:
                counts[column].update(table.column(column).to_pylist())
            else:
                counts[column][value] += n
    return rows, counts


def table_counts(out: str, table: str, *columns: str) -> tuple[int, dict[str, collections.Counter]]:
    """Rows of the table ``OUT/<table>`` (either ``--format``, Hive partitions included) and the value counts of
    each of ``columns``, as the summary counts them. Raises what reading a part file raises (``OSError``,
    ``ValueError``)."""
    return _column_counts(_files(out, table), *columns)


def _jsonl_column_counts(path: str, columns: tuple[str, ...], counts: dict[str, collections.Counter]) -> int:
    """Add the value counts of ``columns`` in the JSON Lines file ``path`` to ``counts`` (a Hive partition's value
    where the path holds one); returns its rows."""
    n = 0
    fixed = {column: _partition_value(path, column) for column in columns}
    for row in iter_jsonl(path):
        n += 1
        for column in columns:
            counts[column][fixed[column] if fixed[column] is not None else row.get(column)] += 1
    return n


def read_counts(out: str) -> dict[str, int]:
    """The ``{name: value}`` totals of ``OUT/_counts/*.jsonl`` (empty when none were written)."""
    totals: dict[str, int] = collections.Counter()
    for path in _files(out, COUNTS_DIR, ".jsonl"):
        with open_part(path) as f:
            for line in f.read().decode("utf-8").splitlines():
                if line.strip():
                    obj = json.loads(line)
                    totals[obj["name"]] += int(obj["value"])
    return dict(totals)


def summarize_output(out: str, warc: str = "") -> RunSummary:
    """Compute the :class:`RunSummary` of the outputs under ``out``.

    Raises ``OSError``/``BeamIOError`` when the outputs cannot be read, ``ValueError`` on a
    malformed counts file.
    """
    n_articles, by = _column_counts(_files(out, ARTICLES_DIR), "site", "language")
    by_site, by_language = by["site"], by["language"]
    reasons = _column_counts(_files(out, REJECTS_DIR), "reason")[1]["reason"]
    counts = read_counts(out)
    near = counts.get("near_duplicates_dropped", 0)
    skipped = {name.removeprefix(SKIPPED_PREFIX): n for name, n in counts.items() if name.startswith(SKIPPED_PREFIX)}
    return RunSummary(
        records_found=counts.get("records_found"),
        records_missed=counts.get("records_missed", 0),
        skipped=skipped,
        duplicates={"exact_duplicate": counts.get("duplicates_dropped", 0) - near, "near_duplicate": near},
        records_read=counts.get("records_read", 0),
        articles_written=n_articles,
        rejects=dict(reasons),
        duplicates_dropped=counts.get("duplicates_dropped", 0),
        articles_by_site=dict(by_site),
        articles_by_language={lang or "": n for lang, n in by_language.items()},
        warc=warc,
        out=out,
    )


def write_summary(summary: RunSummary, folder: str | None = None) -> str:
    """Write ``summary`` as JSON to ``FOLDER/_summary.json`` (``folder``: default ``summary.out``; a run writes
    into its staging folder while the summary names the output it is published to); returns that path."""
    path = FileSystems.join(folder or summary.out, SUMMARY_FILE)
    with FileSystems.create(path, mime_type="application/json",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write((json.dumps(summary.to_dict(), indent=2) + "\n").encode("utf-8"))
    return path


#: The card's ``license`` until the user sets one (Hugging Face's value for "a license not in the list").
DEFAULT_LICENSE = "other"
#: Languages named in the card's ``language`` field, most articles first.
CARD_LANGUAGES = 50


#: How the card says to open each ``--format``'s tables (DuckDB: ``read_parquet``, ``read_json``).
OPEN_WITH = {
    "parquet": "`pandas.read_parquet(\"articles\")`, `pyarrow.dataset.dataset(\"articles\")` or DuckDB "
               "`read_parquet('articles/**/*.parquet')`",
    "jsonl": "`pandas.read_json(\"articles/<file>.jsonl.gz\", lines=True)` or DuckDB "
             "`read_json('articles/**/*.jsonl.gz')` (gzip-compressed JSON Lines, one row a line)",
}


def dataset_card(summary: RunSummary, partition_by: str | None = None, license_id: str = DEFAULT_LICENSE,
                 output_format: str = "parquet") -> str:
    """The text of ``OUT/README.md``: a Hugging Face dataset card (``huggingface_hub.DatasetCard``) whose YAML
    header (``DatasetCardData``) declares the configs ``articles`` (default), ``rejects`` and ``duplicates``
    (Hugging Face Hub docs, "Manual configuration"), the ``license`` (``license_id``: ``other`` until the user sets
    it, said in a sentence) and the ``language`` codes of the articles, then the run's counts and settings and the
    columns of the tables with their descriptions (the Arrow field metadata). No path of the machine that ran
    (:func:`relative_to`). Made offline: nothing is fetched from the Hub. ``output_format``: the tables' files,
    ``parquet`` (``*.parquet``) or ``jsonl`` (``*.jsonl.gz``)."""
    from huggingface_hub import DatasetCard, DatasetCardData

    from newsclean.pipeline.dedup import DUPLICATE_SCHEMA, DUPLICATES_DIR
    from newsclean.schemas.records import ARTICLE_SCHEMA, REJECT_SCHEMA

    suffix = SUFFIXES[output_format]
    glob = f"**/*{suffix}" if partition_by else f"*{suffix}"
    languages = [lang for lang, _ in sorted(summary.articles_by_language.items(), key=lambda kv: (-kv[1], kv[0]))
                 if lang][:CARD_LANGUAGES]
    data = DatasetCardData(configs=[
        {"config_name": "articles", "data_files": f"{ARTICLES_DIR}/{glob}", "default": True},
        {"config_name": "rejects", "data_files": f"{REJECTS_DIR}/*{suffix}"},
        {"config_name": "duplicates", "data_files": f"{DUPLICATES_DIR}/*{suffix}"},
    ], license=license_id, language=languages or None, tags=["newsclean"])
    warc = relative_to(summary.warc, summary.out)
    lines = [
        "# newsclean output",
        "",
        f"Cleaned news articles written by newsclean {PIPELINE_VERSION} (schema version {SCHEMA_VERSION}) from "
        f"`{warc}`: {summary.articles_written} articles, {summary.rejects_total} rejects, "
        f"{summary.duplicates_dropped} duplicates dropped, {summary.records_read} WARC response records read.",
        "",
        f"Open it with `datasets.load_dataset(\"<this folder>\", \"articles\")`, {OPEN_WITH[output_format]}. "
        "Run counts are in `_summary.json`.",
        "",
        f"License: `{license_id}`. " + ("The articles' text belongs to their publishers: set `license` in the YAML "
                                         "header above to the terms under which you may share them (it is kept when "
                                         "a later run rewrites this card)." if license_id == DEFAULT_LICENSE else
                                         "Set by the owner of this folder."),
    ]
    if partition_by:
        lines += ["", f"`articles/` is Hive-partitioned by `{partition_by}` (folders `{partition_by}=<value>/`)."]
    if summary.settings:
        lines += ["", "## Run settings", "", "| setting | value |", "|---|---|"]
        for name, value in summary.settings.items():
            shown = ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else value
            lines.append(f"| `{name}` | {shown if shown != '' else '(none)'} |")
    for title, schema in (("articles", ARTICLE_SCHEMA), ("rejects", REJECT_SCHEMA), ("duplicates", DUPLICATE_SCHEMA)):
        lines += ["", f"## `{title}` columns", "", "| column | type | description |", "|---|---|---|"]
        for f in schema:
            desc = (f.metadata or {}).get(b"description", b"").decode()
            lines.append(f"| `{f.name}` | {f.type} | {desc.replace('|', '/')} |")
    return str(DatasetCard(f"---\n{data.to_yaml()}\n---\n\n" + "\n".join(lines) + "\n"))


def card_license(path: str) -> str:
    """The ``license`` of the dataset card at ``path`` (the user may have set it), :data:`DEFAULT_LICENSE` when
    there is no card or it names none."""
    from huggingface_hub import DatasetCard

    if not FileSystems.exists(path):
        return DEFAULT_LICENSE
    try:
        with open_part(path) as f:
            card = DatasetCard(f.read().decode("utf-8"))
    except Exception:  # noqa: BLE001 - a card the user broke: fall back, the run still writes a new one
        return DEFAULT_LICENSE
    value = card.data.license
    return (value[0] if isinstance(value, list) and value else value) or DEFAULT_LICENSE


def write_dataset_card(summary: RunSummary, partition_by: str | None = None, folder: str | None = None) -> str:
    """Write :func:`dataset_card` to ``FOLDER/README.md`` (``folder``: default ``summary.out``, as for
    :func:`write_summary`), keeping the ``license`` of the card already published in ``summary.out``
    (:func:`card_license`), for the format the tables in ``FOLDER`` are stored in
    (:func:`~newsclean.pipeline.formats.stored_format`); returns that path."""
    path = FileSystems.join(folder or summary.out, CARD_FILE)
    text = dataset_card(summary, partition_by, card_license(FileSystems.join(summary.out, CARD_FILE)),
                        stored_format(folder or summary.out))
    with FileSystems.create(path, mime_type="text/markdown",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write(text.encode("utf-8"))
    return path

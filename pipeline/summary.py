"""The run summary of a cleaning job, computed from its outputs (not from runner metrics).

Runner metrics are not available on every runner (or arrive late), so the summary is read
back from what the job wrote: row counts of ``OUT/articles/*.parquet``, reject reasons of
``OUT/rejects/*.parquet`` and the ``records_read`` / ``duplicates_dropped`` totals of
``OUT/_counts/counts.jsonl``. All I/O goes through Beam's ``FileSystems``, so ``OUT`` may be a
``gs://`` URL as well as a local directory.

The accounting check: ``articles_written + sum(rejects) + duplicates_dropped == records_read``.
"""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field

import pyarrow.parquet as pq
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.stages import ARTICLES_DIR, COUNTS_DIR, PARQUET_SUFFIX, REJECTS_DIR
from newsclean.schemas.records import PIPELINE_VERSION, SCHEMA_VERSION

SUMMARY_FILE = "summary.json"


@dataclass
class RunSummary:
    """Counts of one cleaning run.

    Attributes:
        records_read: WARC response records read (plus one per unreadable file remainder).
        articles_written: rows of ``articles/*.parquet``.
        rejects: rows of ``rejects/*.parquet`` by reason code.
        duplicates_dropped: articles dropped as exact duplicates of a kept one.
        articles_by_site: rows of ``articles/*.parquet`` by site.
        warc: the ``--warc`` argument; out: the output directory.
    """

    records_read: int
    articles_written: int
    rejects: dict[str, int]
    duplicates_dropped: int
    articles_by_site: dict[str, int] = field(default_factory=dict)
    warc: str = ""
    out: str = ""

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
        """The JSON object written to ``summary.json``."""
        return {
            "records_read": self.records_read,
            "articles_written": self.articles_written,
            "rejects": dict(sorted(self.rejects.items())),
            "rejects_total": self.rejects_total,
            "duplicates_dropped": self.duplicates_dropped,
            "accounted": self.accounted,
            "balanced": self.balanced,
            "articles_by_site": dict(sorted(self.articles_by_site.items())),
            "warc": self.warc,
            "out": self.out,
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
        lines += [f"    {reason:<{width}} {n:>7}" for reason, n in sorted(self.rejects.items())]
        if self.articles_by_site:
            lines.append("  articles by site: " + ", ".join(f"{s} {n}" for s, n in sorted(self.articles_by_site.items())))
        mark = "ok" if self.balanced else "MISMATCH"
        lines.append(f"  check: {self.articles_written} + {self.rejects_total} + {self.duplicates_dropped} = "
                     f"{self.accounted} vs {self.records_read} read: {mark}")
        lines.append(f"  output: {FileSystems.join(self.out, ARTICLES_DIR)}/, "
                     f"{FileSystems.join(self.out, REJECTS_DIR)}/, {FileSystems.join(self.out, SUMMARY_FILE)}")
        return "\n".join(lines)


def _files(out: str, name: str, suffix: str) -> list[str]:
    """Paths of ``OUT/<name>/*<suffix>``, sorted."""
    pattern = FileSystems.join(out, name, "*" + suffix)
    return sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)


def _open(path: str):
    return FileSystems.open(path, mime_type="application/octet-stream",
                            compression_type=CompressionTypes.UNCOMPRESSED)


def _column_counts(paths: list[str], column: str) -> tuple[int, collections.Counter]:
    """Total rows of the Parquet files ``paths`` and the value counts of ``column``."""
    rows, counts = 0, collections.Counter()
    for path in paths:
        with _open(path) as f:
            table = pq.read_table(f, columns=[column])
        rows += table.num_rows
        counts.update(table.column(column).to_pylist())
    return rows, counts


def read_counts(out: str) -> dict[str, int]:
    """The ``{name: value}`` totals of ``OUT/_counts/*.jsonl`` (empty when none were written)."""
    totals: dict[str, int] = collections.Counter()
    for path in _files(out, COUNTS_DIR, ".jsonl"):
        with _open(path) as f:
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
    n_articles, by_site = _column_counts(_files(out, ARTICLES_DIR, PARQUET_SUFFIX), "site")
    _, reasons = _column_counts(_files(out, REJECTS_DIR, PARQUET_SUFFIX), "reason")
    counts = read_counts(out)
    return RunSummary(
        records_read=counts.get("records_read", 0),
        articles_written=n_articles,
        rejects=dict(reasons),
        duplicates_dropped=counts.get("duplicates_dropped", 0),
        articles_by_site=dict(by_site),
        warc=warc,
        out=out,
    )


def write_summary(summary: RunSummary) -> str:
    """Write ``summary`` as JSON to ``OUT/summary.json``; returns that path."""
    path = FileSystems.join(summary.out, SUMMARY_FILE)
    with FileSystems.create(path, mime_type="application/json",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write((json.dumps(summary.to_dict(), indent=2) + "\n").encode("utf-8"))
    return path

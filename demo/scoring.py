"""Bag-of-words scoring of extracted article text against gold text (docs/CONTRACTS.md, "Scoring").

Tokens are ``re.findall(r"\\w+", unicodedata.normalize("NFC", text).lower())``. For one page,
with ``overlap`` the size of the multiset intersection of predicted and gold tokens:

* ``P = overlap / |pred|``, ``R = overlap / |gold|``, ``F1 = 2PR / (P + R)`` (0 when P + R = 0).
* Empty cases (defined here, not by the papers): both token lists empty -> P = R = F1 = 1 (nothing to
  find, nothing found); exactly one of them empty -> P = R = F1 = 0. A gold page missing from the
  output (no article row: rejected, dropped or never crawled) is scored as an empty prediction, so 0.

Aggregates are *macro* averages: the mean of the per-page P, R and F1 (F1 is averaged per page, not
recomputed from the mean P and R). :func:`by_site` groups pages per site; the overall row of
:func:`markdown_table` is the macro average over all pages (every page weighs the same, whatever its
site), which equals the mean of the site rows when sites have equally many pages, as in msv-big9.

Also here: readers of the pipeline's Parquet output (:func:`read_articles`, :func:`read_reject_urls`).
Gold files are decoded by :func:`newsclean_eval.datasets.decode_gold` (the one gold decoder); ``newsclean eval``
(:mod:`newsclean_eval`) scores with :func:`tokens` and :func:`prf` from here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from newsclean.transforms.text import scoring_tokens


def tokens(text: str | None) -> list[str]:
    """Scoring tokens of ``text``: ``\\w+`` runs of the NFC-normalised, lowercased text ([] for None;
    :func:`newsclean.transforms.text.scoring_tokens`)."""
    return scoring_tokens(text) if text else []


class PagePair(NamedTuple):
    """One page to score: ``key`` (usually the URL), ``site``, ``predicted`` text (None = missing) and ``gold`` text."""

    key: str
    site: str
    predicted: str | None
    gold: str


@dataclass(frozen=True)
class PageScore:
    """Score of one page. ``precision``, ``recall``, ``f1`` lie in [0, 1]; token counts are multiset sizes.

    ``missing`` is True when the page had no prediction at all (scored as an empty prediction).
    """

    key: str
    site: str
    precision: float
    recall: float
    f1: float
    pred_tokens: int
    gold_tokens: int
    overlap: int
    missing: bool = False


@dataclass(frozen=True)
class Summary:
    """Macro average over ``pages`` page scores (all 0.0 when ``pages`` is 0); ``missing`` counts missing pages."""

    pages: int
    precision: float
    recall: float
    f1: float
    missing: int = 0


def prf(pred: list[str], gold: list[str]) -> tuple[float, float, float, int]:
    """``(P, R, F1, overlap)`` of two token lists, with the empty cases described in the module docstring."""
    if not pred and not gold:
        return 1.0, 1.0, 1.0, 0
    if not pred or not gold:
        return 0.0, 0.0, 0.0, 0
    overlap = sum((Counter(pred) & Counter(gold)).values())
    p, r = overlap / len(pred), overlap / len(gold)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f1, overlap


def score_page(pair: PagePair | tuple) -> PageScore:
    """Score one :class:`PagePair` (a plain ``(key, site, predicted, gold)`` tuple works too)."""
    key, site, predicted, gold = pair
    pred_t, gold_t = tokens(predicted), tokens(gold)
    p, r, f1, overlap = prf(pred_t, gold_t)
    return PageScore(key, site, p, r, f1, len(pred_t), len(gold_t), overlap, missing=predicted is None)


def score_pages(pairs: Iterable[PagePair | tuple]) -> list[PageScore]:
    """Score every pair, in input order."""
    return [score_page(pair) for pair in pairs]


def macro(scores: Iterable[PageScore]) -> Summary:
    """Macro average (mean of per-page P, R, F1) of ``scores``; an empty input gives zeros."""
    scores = list(scores)
    n = len(scores)
    if n == 0:
        return Summary(0, 0.0, 0.0, 0.0, 0)
    return Summary(
        n,
        sum(s.precision for s in scores) / n,
        sum(s.recall for s in scores) / n,
        sum(s.f1 for s in scores) / n,
        sum(s.missing for s in scores),
    )


def by_site(scores: Iterable[PageScore]) -> dict[str, Summary]:
    """Macro average per site, keys sorted by site name."""
    groups: dict[str, list[PageScore]] = defaultdict(list)
    for s in scores:
        groups[s.site].append(s)
    return {site: macro(groups[site]) for site in sorted(groups)}


def markdown_table(scores: Iterable[PageScore], overall_label: str = "**all (macro)**") -> str:
    """A Markdown table with one row per site and an overall macro row.

    Columns: site, pages, missing (pages with no article row), P, R, F1 (3 decimals). Ends with a newline.
    """
    scores = list(scores)
    lines = ["| site | pages | missing | P | R | F1 |", "|---|---:|---:|---:|---:|---:|"]
    rows = list(by_site(scores).items()) + [(overall_label, macro(scores))]
    for site, s in rows:
        lines.append(f"| {site} | {s.pages} | {s.missing} | {s.precision:.3f} | {s.recall:.3f} | {s.f1:.3f} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------- predictions


def normalize_url(url: str) -> str:
    """``url`` as used to match output rows to gold pages: lowercased scheme and host, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def _read_parquet_dir(folder: Path, columns: list[str]):
    import pyarrow.parquet as pq

    files = sorted(Path(folder).glob("*.parquet"))
    tables = [pq.read_table(f, columns=columns) for f in files if pq.read_metadata(f).num_rows > 0]
    return [row for table in tables for row in table.to_pylist()]


def read_articles(clean_out: Path | str) -> dict[str, dict]:
    """Rows of ``clean_out/articles/*.parquet`` keyed by :func:`normalize_url` of their url.

    Each value holds ``url``, ``site``, ``category``, ``title`` and ``text``. An absent folder gives {}.
    When a URL occurs twice (should not happen), the first row in file order wins.
    """
    rows = _read_parquet_dir(Path(clean_out) / "articles", ["url", "site", "category", "title", "text"])
    out: dict[str, dict] = {}
    for row in rows:
        out.setdefault(normalize_url(row["url"]), row)
    return out


def read_reject_urls(clean_out: Path | str) -> dict[str, str]:
    """Map :func:`normalize_url` -> reject reason for ``clean_out/rejects/*.parquet`` ({} when absent)."""
    rows = _read_parquet_dir(Path(clean_out) / "rejects", ["url", "reason"])
    return {normalize_url(r["url"]): r["reason"] for r in rows}


def pair_with_gold(gold: dict[str, tuple[str, str]], articles: dict[str, dict]) -> list[PagePair]:
    """Pairs for :func:`score_pages`: ``gold`` maps full URL -> (site, gold text); ``articles`` as from
    :func:`read_articles`. A gold URL without an article row gets ``predicted=None`` (scored 0)."""
    pairs = []
    for url, (site, text) in sorted(gold.items()):
        row = articles.get(normalize_url(url))
        pairs.append(PagePair(url, site, row["text"] if row else None, text))
    return pairs

"""Duplicate removal, exact and near, with one configuration (:class:`NearDupParams`) and every stage here.

    articles ─► ArticleKeys (MinHash once) ─┬─► SpillArticles: full rows + MinHash to OUT/_spill
                                            └─► DedupExact: small keys only ─► losers (side input)
    spill ─► ReadSpilled (drops the exact losers) ─► [incremental: NotInCorpus] ─► NearDedup ─► kept articles
                                                                                          └─► duplicates rows

What :func:`deduplicate` adds to the cleaning graph, stage by stage:

1. **Keys** (:func:`keyed_article`): each cleaned article gets an :class:`ArticleKey`: its content hash, its
   exact-dedup rank and its near-dedup :class:`SignatureEntry` (id, keep rank, MinHash signature). The MinHash
   is computed here, once; it goes both into the key and into the spilled row.
2. **Spill** (:class:`SpillArticles`, :class:`ReadSpilled`): the articles wait in ``OUT/_spill/`` (inside the
   run's staging folder) while dedup decides on their keys, so no article text crosses a shuffle or a side
   input; they are read back streaming and filtered by the decisions (side inputs holding only the dropped ones).
3. **Exact** (:class:`DedupExact`): articles with the same ``content_hash`` (normalised text): the earliest
   fetch wins, then the smallest URL (:func:`pick_winner`), so the result does not depend on the runner's order.
4. **Corpus** (:func:`dedup_against_corpus`, incremental runs): a new article whose text the corpus built by
   earlier runs already holds is dropped; a new text at a URL of the corpus continues that URL's versions.
5. **Near** (:class:`NearDedup`): MinHash LSH over word 5-gram shingles. Two articles are near-duplicates when
   their signatures share an LSH band and the estimated Jaccard similarity of their shingle sets reaches
   ``threshold`` (0.8, as datatrove and FineWeb use). Within a band bucket each member is compared with the
   bucket's best-ranked member only (O(n) per bucket, not O(n²)); clusters are the connected components of those
   edges; one member per cluster is kept and the others become ``OUT/duplicates`` rows (:class:`WriteDuplicates`).

**MinHash** (Broder 1997, "On the resemblance and containment of documents", §2-3; Leskovec, Rajaraman &
Ullman, *Mining of Massive Datasets*, 3rd ed., §3.4 "Locality-sensitive hashing for documents"): the text is
normalised as for the exact-duplicate hash (:func:`~newsclean.transforms.text.normalize_for_hash`: NFC,
lowercased, whitespace collapsed) and cut into :func:`~newsclean.transforms.text.words`; its *shingles* are the
distinct word n-grams (n = 5); a signature of ``num_perm`` permutations (datasketch's ``MinHash``) estimates the
Jaccard similarity of two shingle sets; the signature is cut into ``b`` bands of ``r`` rows (datasketch's
``MinHashLSH`` picks ``b, r`` that minimise the weighted false positive + false negative probability for the
threshold). datasketch is imported where a signature or band is first computed, not with this module: it
imports scipy (for ``MinHashLSH``'s parameter search), about 45 MiB of RSS that the process which only builds
the pipeline (the runner's, with ``multi_processing`` workers) does not need.

**Which near-duplicate is kept** (:func:`keep_rank`, smallest first): an article already in the corpus before
this run (incremental runs: the corpus is append-only, so its rows win); then the earliest date known for the
text (``published_at``, else ``fetched_at``); then the earliest ``fetched_at``; then the longest text (words,
then characters); then the smallest URL and article id. Every kept row gets ``cluster_id`` = the article id of
its cluster's kept member (its own id; an article with no near-duplicate is a cluster of one).

**Memory.** A runner holds what crosses a shuffle or feeds a side input. Exact dedup groups the keys with a
``GroupByKey``, not a combiner (:class:`KeepFirstFetched`). Each article contributes ``b`` band records to one
GroupByKey (9 at the defaults), each only ``((band index, band hash), packed (article id, keep rank))``: 182
bytes in Beam's coder with a 60-character URL; the member is one ``bytes`` value (:func:`packed_member`)
because a local runner holds a grouping's values decoded until the group is read (~3.7 KB an article for the 9
records against ~6.9 KB as tuples). The signature (``4 * num_perm`` bytes, 512 at the defaults) crosses one
more GroupByKey once, keyed by the member (708 bytes), to be joined to the candidate pairs it is in, then twice
per candidate pair (once per side): 9 × 182 + 708 = 2,346 bytes an article, against 9 × 783 = 7,047 when every
band record carried the signature, with the same pairs compared on the same signatures (:func:`bucket_edges` is
the in-memory equivalent). The cluster map holds one entry per article that has a near-duplicate.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pickle
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.stages import ARTICLES_DIR, PARQUET_SUFFIX, with_settings
from newsclean.pipeline.warc_reader import COUNTS_TAG, inc_counter
from newsclean.schemas.records import SPILL_SCHEMA, SPILL_SIGNATURE, Article, from_row, to_row
from newsclean.transforms.text import normalize_for_hash, words

# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------

#: Jaccard similarity of 5-gram shingle sets above which two texts are near-duplicates (datatrove/FineWeb: 0.8).
DEFAULT_THRESHOLD = 0.8
#: Words per shingle.
DEFAULT_SHINGLE_WORDS = 5
#: MinHash permutations (signature length).
DEFAULT_NUM_PERM = 128


@dataclass(frozen=True)
class NearDupParams:
    """Parameters of near-duplicate detection.

    Attributes:
        threshold: Jaccard similarity in [0, 1] of the shingle sets at or above which two texts are
            near-duplicates (0.8: datatrove's and FineWeb's MinHash deduplication).
        shingle_words: words per shingle (n of the word n-grams), >= 1.
        num_perm: MinHash permutations, >= 2; more is a finer estimate (standard error about
            ``sqrt(J(1-J)/num_perm)``) and a longer signature (4 bytes each).
        seed: seed of datasketch's permutations; signatures compare only under the same seed.

    Raises:
        ValueError: a value out of range.
    """

    threshold: float = DEFAULT_THRESHOLD
    shingle_words: int = DEFAULT_SHINGLE_WORDS
    num_perm: int = DEFAULT_NUM_PERM
    seed: int = 1

    def __post_init__(self):
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if self.shingle_words < 1:
            raise ValueError(f"shingle_words must be >= 1, got {self.shingle_words}")
        if self.num_perm < 2:
            raise ValueError(f"num_perm must be >= 2, got {self.num_perm}")


#: Reason recorded for an article dropped as a near-duplicate of a kept one.
NEAR_DUPLICATE = "near_duplicate"
#: Reason recorded for an article dropped because a kept one (or one of the corpus) has the same normalised text.
EXACT_DUPLICATE = "exact_duplicate"
#: Count names in ``OUT/_counts``: every dropped article is part of ``duplicates_dropped`` (the accounting total);
#: near-duplicates and articles already in the corpus are also counted on their own.
DUPLICATES_DROPPED, NEAR_DUPLICATES_DROPPED = "duplicates_dropped", "near_duplicates_dropped"
CORPUS_DUPLICATES = "corpus_duplicates_dropped"
#: Output folder of the dropped near-duplicates under ``--out``.
DUPLICATES_DIR = "duplicates"
DUPLICATE_TAG = "duplicates"
#: Tag of :class:`DedupExact`'s output of dropped records ``((warc_file, offset), True)``.
LOSERS_TAG = "losers"
#: Tag of :class:`DedupExact`'s output of ``(dropped ArticleKey, the kept article's id)`` pairs.
DROPPED_TAG = "dropped"
#: Folder under ``--out`` (the run's staging folder) where cleaned articles wait for the dedup decisions.
SPILL_DIR = "_spill"
#: Parquet row group of the spill, in bytes: what :class:`ReadSpilled` turns into Python rows at once.
SPILL_ROW_GROUP_BYTES = 4 << 20

#: One row of ``OUT/duplicates/*.parquet``: a dropped article and the kept member of its cluster.
DUPLICATE_SCHEMA = pa.schema(
    [
        pa.field("article_id", pa.string(), nullable=False),
        pa.field("url", pa.string(), nullable=False),
        pa.field("cluster_id", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("content_hash", pa.string(), nullable=False),
        pa.field("warc_file", pa.string(), nullable=False),
        pa.field("warc_offset", pa.int64(), nullable=False),
    ],
    metadata={b"newsclean.record": b"duplicate", b"newsclean.schema_version": b"1"},
)

# --------------------------------------------------------------------------------------------
# MinHash: shingles, signatures, LSH bands (pure functions, no Beam)
# --------------------------------------------------------------------------------------------


def shingles(text: str, n: int = DEFAULT_SHINGLE_WORDS) -> set[str]:
    """The distinct word n-grams of ``text`` after normalisation, each joined by one space.

    A text of fewer than ``n`` words (but at least one) has one shingle, its whole word
    sequence, so that short texts still compare; an empty text has none.
    """
    tokens = words(normalize_for_hash(text))
    if not tokens:
        return set()
    if len(tokens) < n:
        return {" ".join(tokens)}
    return {" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def signature(text: str, params: NearDupParams = NearDupParams()) -> np.ndarray:
    """MinHash signature of the shingles of ``text``: ``uint`` array of ``params.num_perm`` values.

    An empty text gets datasketch's empty signature (all maximal values), which matches
    only other empty texts.
    """
    from datasketch import MinHash  # here, not at import: datasketch imports scipy (module docstring)

    m = MinHash(num_perm=params.num_perm, seed=params.seed)
    m.update_batch([s.encode("utf-8") for s in shingles(text, params.shingle_words)])
    return m.hashvalues


def estimated_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Fraction in [0, 1] of signature positions where ``a`` and ``b`` agree (MinHash's Jaccard estimate).

    Raises:
        ValueError: the signatures differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"signatures of different lengths: {len(a)} != {len(b)}")
    return float(np.count_nonzero(np.asarray(a) == np.asarray(b))) / len(a)


@lru_cache(maxsize=32)
def band_ranges(threshold: float, num_perm: int) -> tuple[tuple[int, int], ...]:
    """The ``(start, end)`` signature slices of the LSH bands datasketch's ``MinHashLSH`` picks for
    ``threshold`` and ``num_perm`` (for 0.8 and 128: 9 bands of 13 rows)."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    return tuple((int(s), int(e)) for s, e in lsh.hashranges)


def band_keys(sig: np.ndarray, params: NearDupParams = NearDupParams()) -> list[tuple[int, str]]:
    """``(band index, hex SHA-1 of the band's values)`` for each LSH band of ``sig`` (16 hex digits).

    Two signatures share a key exactly when they agree on every row of that band (up to the
    negligible chance of a 64-bit hash collision).
    """
    values = np.asarray(sig, dtype=np.uint64)
    return [(i, hashlib.sha1(values[s:e].tobytes()).hexdigest()[:16])
            for i, (s, e) in enumerate(band_ranges(params.threshold, params.num_perm))]


# --------------------------------------------------------------------------------------------
# What dedup knows of an article: ranks, signature entries, keys
# --------------------------------------------------------------------------------------------

#: ``(existing, first date, fetched, -words, -characters, url, article id)``: see the module docstring.
Rank = tuple


def _epoch(dt: datetime | None) -> float:
    return dt.timestamp() if dt is not None else float("inf")


def keep_rank(article: Article, existing: bool = False) -> Rank:
    """Sort key of the member kept in a near-duplicate cluster (smallest wins; module docstring).

    Times are POSIX seconds (UTC); ``existing`` marks a row of the corpus built by earlier runs.
    """
    first = article.published_at if article.published_at is not None else article.fetched_at
    return (0 if existing else 1, _epoch(first), _epoch(article.fetched_at), -article.word_count,
            -len(article.text), article.url, article.article_id)


@dataclass(frozen=True)
class SignatureEntry:
    """What near-dedup knows of one article: id, :func:`keep_rank` and MinHash signature (``uint32`` bytes)."""

    article_id: str
    rank: Rank
    signature: bytes

    def values(self) -> np.ndarray:
        """The signature as a ``uint32`` array."""
        return np.frombuffer(self.signature, dtype=np.uint32)


def signature_entry(article: Article, params: NearDupParams, existing: bool = False) -> SignatureEntry:
    """The :class:`SignatureEntry` of ``article`` (MinHash of its text's shingles)."""
    sig = np.asarray(signature(article.text, params), dtype=np.uint32)
    return SignatureEntry(article.article_id, keep_rank(article, existing), sig.tobytes())


#: An article with its MinHash signature (:attr:`SignatureEntry.signature`, computed once where the article was
#: cleaned and carried in the spill): what :class:`NearDedup` takes and gives.
SignedArticle = tuple[Article, bytes]


def signed_entry(signed: SignedArticle) -> SignatureEntry:
    """The :class:`SignatureEntry` of a new article from the signature it carries (no MinHash computed)."""
    article, sig = signed
    return SignatureEntry(article.article_id, keep_rank(article), sig)


def article_of(signed: SignedArticle) -> Article:
    """The article of a :data:`SignedArticle`, without its signature."""
    return signed[0]


@dataclass(frozen=True)
class ArticleKey:
    """What dedup needs of one article, without its text or HTML (~1.1 KB in Beam's coder, ~2.1 KB as Python
    objects, at the defaults).

    Attributes:
        record: ``(warc_file, warc_offset)``: the WARC record the article came from (unique in a run).
        content_hash: :func:`~newsclean.transforms.text.content_hash` of the text (exact dedup's key).
        rank: the exact-dedup winner's sort key (:func:`fetch_rank`: fetch time, URL, file, offset).
        near: the near-dedup entry (:func:`signature_entry`: id, keep rank, MinHash).
    """

    record: tuple[str, int]
    content_hash: str
    rank: tuple
    near: SignatureEntry


def fetch_rank(item: Article | ArticleKey) -> tuple:
    """Sort key of the winner among exact duplicates: earliest fetch, then smallest URL (then provenance)."""
    if isinstance(item, ArticleKey):
        return item.rank
    return item.fetched_at, item.url, item.warc_file, item.warc_offset


def article_key(article: Article, params: NearDupParams = NearDupParams()) -> ArticleKey:
    """The :class:`ArticleKey` of ``article`` (its MinHash over ``params``' shingles is computed here)."""
    return ArticleKey((article.warc_file, article.warc_offset), article.content_hash, fetch_rank(article),
                      signature_entry(article, params))


#: A cleaned article and its :class:`ArticleKey` (:func:`keyed_article`): what :class:`SpillArticles` and
#: :class:`DedupExact` take, so that the MinHash is computed once and goes both into the spill and into the key.
KeyedArticle = tuple[Article, ArticleKey]


def keyed_article(article: Article, params: NearDupParams = NearDupParams()) -> KeyedArticle:
    """``(article, its ArticleKey)`` (:func:`article_key`)."""
    return article, article_key(article, params)


def _key_of(keyed: KeyedArticle) -> ArticleKey:
    return keyed[1]


def _near_entry(key: ArticleKey) -> SignatureEntry:
    return key.near


# --------------------------------------------------------------------------------------------
# SpillArticles / ReadSpilled: the articles wait on disk while dedup decides
# --------------------------------------------------------------------------------------------


def spill_row(keyed: KeyedArticle) -> dict:
    """The spill row (:data:`~newsclean.schemas.records.SPILL_SCHEMA`) of ``(article, key)``: the article's row
    and the MinHash signature of its key (``SignatureEntry.signature``)."""
    article, key = keyed
    return {**to_row(article), SPILL_SIGNATURE: key.near.signature}


def spilled_article(row: dict) -> SignedArticle:
    """A spill row -> ``(Article, MinHash signature bytes)``; inverse of :func:`spill_row` (but the key)."""
    row = dict(row)
    sig = row.pop(SPILL_SIGNATURE)
    return from_row(Article, row), sig


def at_epoch(value):
    """``value`` with event time 0 (1970-01-01 UTC), in place of the one it came with.

    Beam's ``WriteToParquet`` emits its file names at the end of time (``MAX_TIMESTAMP``, past the global window's
    last timestamp). Beam's Prism runner (2.77) never schedules such elements into a stage that has side inputs, so
    :class:`ReadSpilled` never ran there; Prism failed with "nothing in progress and no refreshes with non zero pending
    elements". The pipeline is a batch pipeline in the global window, and its output does not depend on event time.
    """
    return beam.window.TimestampedValue(value, 0)


class SpillArticles(beam.PTransform):
    """:data:`KeyedArticle` pairs -> their rows (:func:`spill_row`: the article's row and its MinHash) in
    ``OUT/_spill/articles/part-*.parquet``; output: the finished files' paths, at event time 0 (:func:`at_epoch`).

    The articles wait there, on disk instead of in the runner's memory, while dedup decides on their keys; the
    MinHash comes back with each row, so that the index rows (pipeline/incremental.py) need no join with the
    near-dedup entries. Small row groups (:data:`SPILL_ROW_GROUP_BYTES`) bound what :class:`ReadSpilled` holds at once.
    """

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, articles):
        return (articles | "Rows" >> beam.Map(spill_row)
                | "Write" >> beam.io.WriteToParquet(
                    FileSystems.join(self.out, SPILL_DIR, ARTICLES_DIR, "part"), SPILL_SCHEMA, codec="snappy",
                    file_name_suffix=PARQUET_SUFFIX, row_group_buffer_size=SPILL_ROW_GROUP_BYTES,
                    record_batch_size=100)
                | "PathsAtEpoch" >> beam.Map(at_epoch))


#: Folder of the spilled keys under ``OUT/_spill/`` (the bounded local run: pipeline/batches.py).
KEYS_DIR = "keys"
#: One spilled key: an article's content hash (what :func:`repeated_hashes` reads alone) and its
#: :class:`ArticleKey`, pickled (internal to one run, read back by the same code: :func:`key_of_row`).
KEY_SCHEMA = pa.schema([pa.field("content_hash", pa.string(), nullable=False),
                        pa.field("key", pa.binary(), nullable=False)],
                       metadata={b"newsclean.record": b"article_key", b"newsclean.schema_version": b"1"})


def key_row(keyed: KeyedArticle) -> dict:
    """The spilled key row (:data:`KEY_SCHEMA`) of ``(article, key)``: ~1.2 KB at the defaults (the pickled
    key holds the 512-byte MinHash, the URL twice and the ranks)."""
    key = keyed[1]
    return {"content_hash": key.content_hash, "key": pickle.dumps(key, protocol=5)}


def key_of_row(row: dict) -> ArticleKey:
    """The :class:`ArticleKey` of a spilled key row (:func:`key_row`): the same types and values."""
    return pickle.loads(row["key"])


class SpillKeys(beam.PTransform):
    """:data:`KeyedArticle` pairs -> their keys (:func:`key_row`) in ``OUT/_spill/keys/part-*.parquet``, for
    :func:`dedup_decisions` over the keys of several runs (pipeline/batches.py); output: the files' paths."""

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, keyed):
        return (keyed | "Rows" >> beam.Map(key_row)
                | "Write" >> beam.io.WriteToParquet(
                    FileSystems.join(self.out, SPILL_DIR, KEYS_DIR, "part"), KEY_SCHEMA, codec="snappy",
                    file_name_suffix=PARQUET_SUFFIX, row_group_buffer_size=SPILL_ROW_GROUP_BYTES,
                    record_batch_size=1000))


class KeepWinnersFn(beam.DoFn):
    """Spilled row -> ``(Article, MinHash signature)`` (:func:`spilled_article`), unless its record is among the
    dropped ones (side input ``{(warc_file, offset): True}``; their count was emitted by :class:`DedupExact`)."""

    def process(self, row: dict, losers):
        if (row["warc_file"], row["warc_offset"]) in losers:
            return
        yield spilled_article(row)


class ReadSpilled(beam.PTransform):
    """Spill file paths -> ``(Article, MinHash signature)`` of each article that won exact dedup, read back
    streaming, one row group at a time.

    Args:
        losers: PCollection of ``((warc_file, offset), True)`` from :class:`DedupExact` (a side input holding
            only the dropped articles).
    """

    def __init__(self, losers):
        super().__init__()
        self.losers = losers

    def expand(self, files):
        return (files
                | "Read" >> beam.io.ReadAllFromParquet(desired_bundle_size=SPILL_ROW_GROUP_BYTES)
                | "KeepWinners" >> beam.ParDo(KeepWinnersFn(), beam.pvalue.AsDict(self.losers)))


# --------------------------------------------------------------------------------------------
# DedupExact: the same normalised text
# --------------------------------------------------------------------------------------------


def pick_winner(a, b):
    """The one of ``a`` and ``b`` (articles or :class:`ArticleKey`) that stays when they have the same content
    hash: the smaller :func:`fetch_rank` (None-safe)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if fetch_rank(a) <= fetch_rank(b) else b


def first_fetched(keys) -> tuple[ArticleKey, int, tuple[ArticleKey, ...]]:
    """The :class:`ArticleKey` records of one content hash (any order, at least one) -> ``(winner, number of keys,
    the others' keys)``; the winner is the one :func:`pick_winner` keeps (smallest :func:`fetch_rank`)."""
    best, n, losers = None, 0, []
    for key in keys:
        n += 1
        winner = pick_winner(best, key)
        if best is not None:
            losers.append(key if winner is best else best)
        best = winner
    return best, n, tuple(losers)


def _winner_of_group(digest: str, keys) -> tuple[str, tuple]:
    return digest, first_fetched(keys)


class KeepFirstFetched(beam.PTransform):
    """``(content hash, ArticleKey)`` -> ``(content hash, (winner, n, losers))`` (:func:`first_fetched`), with a
    ``GroupByKey`` and a ``Map``.

    Not a ``CombinePerKey``: a runner lifts a combiner into the stage before the shuffle, where Beam's
    ``PGBKCVOperation`` keeps one accumulator (a decoded :class:`ArticleKey`, ~2.1 KB of Python objects with its
    512-byte MinHash) per distinct hash, up to 100,000, for the whole bundle: in the DirectRunner's ``in_memory``
    mode the reading and cleaning stage is one bundle, so every article's key would stay in memory until the last
    page was cleaned (docs/DECISIONS.md "Local runner and memory at scale"). Nearly every hash occurs once, so
    pre-combining would save no shuffle bytes either; the shuffle carries the same keys, encoded (~1.1 KB).
    """

    def expand(self, keyed):
        return (keyed
                | "GroupByContentHash" >> beam.GroupByKey()
                | "PickWinner" >> beam.MapTuple(_winner_of_group))


def _by_hash(key: ArticleKey):
    return key.content_hash, key


class EmitWinnerFn(beam.DoFn):
    """``(hash, (winner, n, losers))`` -> the winner's key; ``("duplicates_dropped", n - 1)`` on ``COUNTS_TAG``,
    ``(record, True)`` per dropped record on :data:`LOSERS_TAG` and ``(dropped key, winner's article id)`` on
    :data:`DROPPED_TAG`."""

    def process(self, kv):
        _, (winner, n, losers) = kv
        inc_counter("articles")
        yield winner
        if n > 1:
            inc_counter("duplicates", n - 1)
            yield beam.pvalue.TaggedOutput(COUNTS_TAG, (DUPLICATES_DROPPED, n - 1))
            for key in losers:
                yield beam.pvalue.TaggedOutput(LOSERS_TAG, (key.record, True))
                yield beam.pvalue.TaggedOutput(DROPPED_TAG, (key, winner.near.article_id))


class DedupExact(beam.PTransform):
    """Exact duplicates (same normalised text, i.e. same ``content_hash``), decided on :class:`ArticleKey` records.

    Input: :data:`KeyedArticle` pairs (:func:`keyed_article`). Output: ``{"keys": ArticleKey of each winner,
    "losers": ((warc_file, offset), True) of each dropped article, "dropped": (ArticleKey of each dropped article,
    the winner's article id), "counts": ("duplicates_dropped", int)}``. The
    winner is the earliest fetch, then the smallest URL, so the result does not depend on the runner's order. Only
    the keys cross the shuffle; :class:`ReadSpilled` drops the losers' rows.
    """

    def expand(self, keyed):
        out = (
            keyed
            | "Keys" >> beam.Map(_key_of)
            | "KeyByContentHash" >> beam.Map(_by_hash)
            | "KeepFirstFetched" >> KeepFirstFetched()
            | "EmitWinners" >> beam.ParDo(EmitWinnerFn()).with_outputs(COUNTS_TAG, LOSERS_TAG, DROPPED_TAG,
                                                                        main="keys")
        )
        return {"keys": out.keys, "losers": out[LOSERS_TAG], "dropped": out[DROPPED_TAG], "counts": out[COUNTS_TAG]}


def exact_duplicate_row(dropped: tuple[ArticleKey, str], clusters: dict[str, str],
                        corpus_ids: dict[str, str] | None = None) -> dict:
    """The ``OUT/duplicates`` row (:data:`DUPLICATE_SCHEMA`, reason ``exact_duplicate``) of an article dropped by
    exact dedup: ``(its key, the kept article's id)``. ``cluster_id`` is the ``cluster_id`` of the row that stands
    for its text: the kept article's near-duplicate cluster (``clusters``: :class:`NearDedup`'s ``{id: kept id}``),
    or, in an incremental run, the corpus article with the same text (``corpus_ids``: content hash -> article id)."""
    key, winner = dropped
    cluster = (corpus_ids or {}).get(key.content_hash) or clusters.get(winner, winner)
    fetched, url, warc_file, warc_offset = key.rank
    return {"article_id": key.near.article_id, "url": url, "cluster_id": cluster, "reason": EXACT_DUPLICATE,
            "content_hash": key.content_hash, "warc_file": warc_file, "warc_offset": warc_offset}


# --------------------------------------------------------------------------------------------
# Against the corpus built by earlier runs (incremental runs)
# --------------------------------------------------------------------------------------------


def corpus_entry(row: dict) -> SignatureEntry:
    """The near-dedup entry of a corpus index row (``pipeline.incremental.INDEX_SCHEMA``): rank
    ``(0, first seen, ...)`` wins against every new article."""
    first = row["first_seen"].timestamp() if row.get("first_seen") else 0.0
    return SignatureEntry(row["article_id"], (0, first, first, 0, 0, row["url"], row["article_id"]), row["signature"])


def url_history(rows: Iterable[dict]) -> tuple[int, datetime | None]:
    """``(highest version, earliest first_seen)`` of a URL's corpus rows."""
    rows = list(rows)
    firsts = [r["first_seen"] for r in rows if r.get("first_seen") is not None]
    return max(int(r["version"]) for r in rows), (min(firsts) if firsts else None)


#: What dropping one article against the corpus adds to the counts (:func:`filter_by_corpus`).
CORPUS_DROP_COUNTS = ((DUPLICATES_DROPPED, 1), (CORPUS_DUPLICATES, 1))


def filter_by_corpus(signed: SignedArticle, hashes: dict[str, str],
                     history: dict[str, tuple]) -> SignedArticle | dict:
    """A new :data:`SignedArticle` against the corpus built by earlier runs: its ``exact_duplicate`` row
    (:func:`duplicate_row`, ``cluster_id`` the corpus article's id) when the corpus has its text (``hashes``:
    content hash -> corpus article id; the drop adds :data:`CORPUS_DROP_COUNTS`), else the same pair with
    ``version``/``first_seen`` continued from the URL's corpus rows (``history``: URL -> :func:`url_history`)."""
    article, sig = signed
    corpus_id = hashes.get(article.content_hash)
    if corpus_id is not None:
        return duplicate_row(article, corpus_id, EXACT_DUPLICATE)
    past = history.get(article.url)
    if past is not None:
        version, first = past
        article = dataclasses.replace(article, version=version + 1, first_seen=first or article.fetched_at)
    return article, sig


class CorpusFilterFn(beam.DoFn):
    """:func:`filter_by_corpus` in the graph: a kept pair on the main output; a dropped article's row on
    :data:`DUPLICATE_TAG` and its counts on :data:`COUNTS_TAG`. Side inputs: ``hashes`` and ``history``."""

    def process(self, signed: SignedArticle, hashes, history):
        out = filter_by_corpus(signed, hashes, history)
        if isinstance(out, dict):
            yield beam.pvalue.TaggedOutput(DUPLICATE_TAG, out)
            for count in CORPUS_DROP_COUNTS:
                yield beam.pvalue.TaggedOutput(COUNTS_TAG, count)
            return
        yield out


def _hash_id(row: dict) -> tuple[str, str]:
    return row["content_hash"], row["article_id"]


def _by_url(row: dict) -> tuple[str, dict]:
    return row["url"], row


def _url_history_of(url: str, rows) -> tuple[str, tuple]:
    return url, url_history(rows)


def _not_in(key: ArticleKey, hashes) -> bool:
    return key.content_hash not in hashes


def dedup_against_corpus(articles, index, keys):
    """Filter new ``articles`` (:data:`SignedArticle`) against the corpus whose index rows are ``index`` (a
    PCollection of ``pipeline.incremental.INDEX_SCHEMA`` dicts); ``keys``: the articles' :class:`ArticleKey`.

    Returns ``(articles, counts, duplicates, corpus entries, keys, corpus ids)``: the articles whose text is not
    in the corpus (versions continued, :class:`CorpusFilterFn`), their count pairs, the ``duplicates`` rows of the
    others, the corpus's :class:`SignatureEntry` PCollection for near-dedup (:func:`corpus_entry`), the keys of
    the articles left and the ``(content hash, corpus article id)`` pairs.
    """
    hashes = index | "CorpusHashes" >> beam.Map(_hash_id)
    history = (index | "CorpusUrls" >> beam.Map(_by_url)
               | "UrlRows" >> beam.GroupByKey()
               | "UrlHistory" >> beam.MapTuple(_url_history_of))
    out = articles | "NotInCorpus" >> beam.ParDo(
        CorpusFilterFn(), beam.pvalue.AsDict(hashes), beam.pvalue.AsDict(history)).with_outputs(
        COUNTS_TAG, DUPLICATE_TAG, main="articles")
    entries = index | "CorpusEntries" >> beam.Map(corpus_entry)
    keys = keys | "KeysNotInCorpus" >> beam.Filter(_not_in, beam.pvalue.AsDict(hashes))
    return out.articles, out[COUNTS_TAG], out[DUPLICATE_TAG], entries, keys, hashes


# --------------------------------------------------------------------------------------------
# NearDedup: MinHash LSH
# --------------------------------------------------------------------------------------------

#: What an LSH band record carries of an article: ``(article id, keep rank)``, packed (:func:`packed_member`); no
#: signature.
Member = tuple[str, Rank]
#: A candidate pair of one bucket: ``(member, the bucket's best-ranked member)``.
Pair = tuple[Member, Member]


def member(entry: SignatureEntry) -> Member:
    """The :data:`Member` of ``entry``: its article id and :func:`keep_rank`."""
    return entry.article_id, entry.rank


def packed_member(m: Member) -> bytes:
    """``m`` as one ``bytes`` value (pickle, protocol 5; the article id is stored once): what a band record
    carries. A runner holds the values of a grouping decoded until the group is read (Beam's ``GroupingBuffer``);
    one ``bytes`` object is about half the memory of the id-and-rank tuple (docs/DECISIONS.md)."""
    return pickle.dumps(m, protocol=5)


def unpacked_member(data: bytes) -> Member:
    """The :data:`Member` of :func:`packed_member`'s bytes (the same types and values)."""
    return pickle.loads(data)


def band_items(entry: SignatureEntry, params: NearDupParams):
    """``((band index, band hash), packed member)`` for each LSH band of the entry's signature
    (:func:`packed_member` of :func:`member`: id and rank only, so that the band shuffle carries no signature)."""
    m = packed_member(member(entry))
    for key in band_keys(entry.values(), params):
        yield key, m


def bucket_candidates(kv):
    """``(band key, [packed member, ...])`` -> the bucket's candidate pairs (:func:`bucket_pairs`); a bucket of
    one is not unpacked."""
    packed = list(kv[1])
    if len(packed) < 2:
        return
    yield from bucket_pairs([unpacked_member(data) for data in packed])


def bucket_pairs(members: list[Member]):
    """Candidate pairs in one LSH bucket: ``(member, head)`` for each member but the head.

    The head is the bucket's best-ranked member (smallest :func:`keep_rank`, ``member[1]``). A member with
    the head's article id (the same article from two sources) or URL (``rank[5]``: a changed text at the same
    URL is a new version, not a duplicate) gives no pair. Buckets of one give nothing.
    """
    if len(members) < 2:
        return
    members = sorted(members, key=lambda m: m[1])
    head = members[0]
    for m in members[1:]:
        if m[0] == head[0] or m[1][5] == head[1][5]:
            continue
        yield m, head


def bucket_edges(members: list[SignatureEntry], threshold: float):
    """Near-duplicate edges in one LSH bucket of whole entries: ``(member, head)`` pairs of :func:`bucket_pairs`
    whose estimated Jaccard similarity reaches ``threshold``. What :class:`NearDedup` computes, bucket by bucket,
    with the signatures joined to the candidate pairs instead of carried in the bucket."""
    values = {member(e): e.values() for e in members}
    for m, head in bucket_pairs(list(values)):
        if estimated_jaccard(values[m], values[head]) >= threshold:
            yield m, head


def member_signature(entry: SignatureEntry) -> tuple[Member, bytes]:
    """``(member, signature bytes)``: the join side of :func:`signature_to_pairs`."""
    return member(entry), entry.signature


def pair_endpoints(pair: Pair):
    """``(member, pair)`` for both members of a candidate pair (the pair side of :func:`signature_to_pairs`)."""
    yield pair[0], pair
    yield pair[1], pair


def signature_to_pairs(kv):
    """``(member, {"signature": [bytes], "pairs": [pair, ...]})`` -> ``(pair, (side, signature))`` once per
    distinct candidate pair the member is in (``side``: 0 the member, 1 the head). A member in no pair gives
    nothing; one that shares several bands with its head is sent once."""
    m, joined = kv
    signatures = list(joined["signature"])
    if not signatures:
        return
    for pair in set(joined["pairs"]):
        yield pair, (0 if pair[0] == m else 1, signatures[0])


def pair_edge(kv, threshold: float):
    """``(pair, [(side, signature), ...])`` -> the pair as an edge when the estimated Jaccard similarity of the
    two signatures reaches ``threshold``; nothing otherwise."""
    pair, sides = kv
    by_side = dict(sides)
    if 0 in by_side and 1 in by_side:
        a = np.frombuffer(by_side[0], dtype=np.uint32)
        b = np.frombuffer(by_side[1], dtype=np.uint32)
        if estimated_jaccard(a, b) >= threshold:
            yield pair


class ClusterFn(beam.CombineFn):
    """Union-find over near-duplicate edges -> ``{article id: kept member's article id}``.

    The accumulator is ``(parent, rank)`` dicts over the ids that occur in an edge; merging two
    accumulators unions each id with its root in the other. The output maps every member of a
    cluster of two or more (the kept one included, to itself) to the member with the smallest
    :func:`keep_rank`.
    """

    def create_accumulator(self):
        return {}, {}

    @staticmethod
    def _find(parent: dict, x: str) -> str:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def _union(self, acc, a, rank_a, b, rank_b):
        parent, ranks = acc
        for node, rank in ((a, rank_a), (b, rank_b)):
            if node not in parent:
                parent[node], ranks[node] = node, rank
        ra, rb = self._find(parent, a), self._find(parent, b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
        return acc

    def add_input(self, acc, edge):
        (a, rank_a), (b, rank_b) = edge
        return self._union(acc, a, rank_a, b, rank_b)

    def merge_accumulators(self, accumulators):
        merged = self.create_accumulator()
        for parent, ranks in accumulators:
            for node in list(parent):
                root = self._find(parent, node)
                self._union(merged, node, ranks[node], root, ranks[root])
        return merged

    def extract_output(self, acc):
        parent, ranks = acc
        best: dict[str, str] = {}
        for node in parent:
            root = self._find(parent, node)
            if root not in best or ranks[node] < ranks[best[root]]:
                best[root] = node
        return {node: best[self._find(parent, node)] for node in parent}


def duplicate_row(article: Article, cluster_id: str, reason: str = NEAR_DUPLICATE) -> dict:
    """The ``OUT/duplicates`` row (:data:`DUPLICATE_SCHEMA`) of a dropped article."""
    return {"article_id": article.article_id, "url": article.url, "cluster_id": cluster_id, "reason": reason,
            "content_hash": article.content_hash, "warc_file": article.warc_file,
            "warc_offset": article.warc_offset}


#: What dropping one near-duplicate adds to the counts (:func:`assign_cluster`).
NEAR_DROP_COUNTS = ((DUPLICATES_DROPPED, 1), (NEAR_DUPLICATES_DROPPED, 1))


def assign_cluster(signed: SignedArticle, clusters: dict[str, str]) -> SignedArticle | dict:
    """A :data:`SignedArticle` after near-dedup: the same pair with ``cluster_id`` (and ``first_seen``,
    ``last_seen`` where unset: its fetch) when the article is kept, else its ``near_duplicate`` row
    (:func:`duplicate_row`; the drop adds :data:`NEAR_DROP_COUNTS`). ``clusters``: ``{article id: kept member's
    id}`` (:class:`ClusterFn`, :func:`near_clusters`); an article absent from it is a cluster of one."""
    article, sig = signed
    kept = clusters.get(article.article_id, article.article_id)
    if kept == article.article_id:
        return dataclasses.replace(article, cluster_id=kept, first_seen=article.first_seen or article.fetched_at,
                                   last_seen=article.last_seen or article.fetched_at), sig
    return duplicate_row(article, kept)


class AssignClusterFn(beam.DoFn):
    """:func:`assign_cluster` in the graph (side input ``{id: kept id}``): a kept pair on the main output; a
    dropped article's row on :data:`DUPLICATE_TAG` and its counts on :data:`COUNTS_TAG`."""

    def process(self, signed: SignedArticle, clusters):
        out = assign_cluster(signed, clusters)
        if not isinstance(out, dict):
            yield out
            return
        inc_counter("near_duplicates")
        yield beam.pvalue.TaggedOutput(DUPLICATE_TAG, out)
        for count in NEAR_DROP_COUNTS:
            yield beam.pvalue.TaggedOutput(COUNTS_TAG, count)


class NearDedup(beam.PTransform):
    """Drop near-duplicate articles (MinHash LSH), keeping one per cluster by :func:`keep_rank`.

    Input: PCollection of :data:`SignedArticle` (after exact dedup).
    Output: ``{"articles": SignedArticle of each kept article (with cluster_id), "duplicates": duplicates row
    dict, "counts": (name, int), "signatures": SignatureEntry of the kept and dropped new articles, "clusters":
    the one ``{article id: kept member's id}`` dict of :class:`ClusterFn`}``.

    Args:
        params: :class:`NearDupParams` (threshold 0.8, 5-word shingles, 128 permutations).
        existing: optional PCollection of :class:`SignatureEntry` of the corpus built by earlier runs
            (their rank starts with 0, so they win against every new article).
        entries: optional PCollection of the articles' :class:`SignatureEntry`, computed earlier (the
            pipeline carries them in :class:`ArticleKey`, so that the articles themselves are read only
            once, after the clusters are known); made from the signed articles when None (:func:`signed_entry`).
    """

    def __init__(self, params: NearDupParams = NearDupParams(), existing=None, entries=None):
        super().__init__()
        self.params = params
        self.existing = existing
        self.entries = entries

    def expand(self, articles):
        params = self.params
        entries = self.entries
        if entries is None:
            entries = articles | "Signatures" >> beam.Map(signed_entry)
        candidates = entries
        if self.existing is not None:
            candidates = (entries, self.existing) | "WithCorpus" >> beam.Flatten()
        pairs = (
            candidates
            | "Bands" >> beam.FlatMap(band_items, params)
            | "GroupBands" >> beam.GroupByKey()
            | "CandidatePairs" >> beam.FlatMap(bucket_candidates)
            | "PairEndpoints" >> beam.FlatMap(pair_endpoints)
        )
        member_signatures = candidates | "MemberSignatures" >> beam.Map(member_signature)
        clusters = (
            {"signature": member_signatures, "pairs": pairs}
            | "JoinSignatures" >> beam.CoGroupByKey()
            | "SignatureToPairs" >> beam.FlatMap(signature_to_pairs)
            | "PairSignatures" >> beam.GroupByKey()
            | "Edges" >> beam.FlatMap(pair_edge, params.threshold)
            | "Clusters" >> beam.CombineGlobally(ClusterFn())
        )
        out = articles | "AssignClusters" >> beam.ParDo(
            AssignClusterFn(), beam.pvalue.AsSingleton(clusters)).with_outputs(
            DUPLICATE_TAG, COUNTS_TAG, main="articles")
        return {"articles": out.articles, "duplicates": out[DUPLICATE_TAG], "counts": out[COUNTS_TAG],
                "signatures": entries, "clusters": clusters}


class WriteDuplicates(beam.PTransform):
    """Write ``duplicates`` row dicts to ``OUT/duplicates/part-*.parquet`` (:data:`DUPLICATE_SCHEMA`, snappy; the
    run's ``settings`` in the files' metadata, :func:`~newsclean.pipeline.stages.with_settings`)."""

    def __init__(self, out: str, settings: dict | None = None):
        super().__init__()
        self.out = out
        self.settings = settings

    def expand(self, rows):
        return rows | "WriteDuplicates" >> beam.io.WriteToParquet(
            FileSystems.join(self.out, DUPLICATES_DIR, "part"), with_settings(DUPLICATE_SCHEMA, self.settings),
            codec="snappy",
            file_name_suffix=PARQUET_SUFFIX)


# --------------------------------------------------------------------------------------------
# The same decisions in one process, over spilled keys (the bounded local run: pipeline/batches.py)
# --------------------------------------------------------------------------------------------


def near_clusters(entries: list[SignatureEntry], params: NearDupParams = NearDupParams()) -> dict[str, str]:
    """:class:`NearDedup`'s ``{article id: kept member's id}`` map of ``entries``, computed in one process: each
    entry's LSH band keys (:func:`band_keys`), the edges of every bucket of two or more (:func:`bucket_edges`:
    the pairs :func:`bucket_pairs` makes, compared on the same signatures) and their connected components with
    their kept members (:class:`ClusterFn`). Holds 8 bytes per band and entry besides ``entries`` (a band key's
    16 hex digits as one ``uint64``), and one bucket's entries at a time."""
    fn = ClusterFn()
    acc = fn.create_accumulator()
    ranges = band_ranges(params.threshold, params.num_perm)
    bands = np.empty((len(entries), len(ranges)), dtype=np.uint64)
    for i, entry in enumerate(entries):
        bands[i] = [int(digest, 16) for _, digest in band_keys(entry.values(), params)]
    for column in bands.T:
        order = np.argsort(column, kind="stable")
        ordered = column[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(ordered) else np.empty(0, int)
        for start, end in zip(starts, [*starts[1:], len(ordered)], strict=True):
            if end - start >= 2:
                for edge in bucket_edges([entries[i] for i in order[start:end]], params.threshold):
                    acc = fn.add_input(acc, edge)
    return fn.extract_output(acc)


def repeated_hashes(hashes: Iterable[str]) -> set[str]:
    """The content hashes that occur more than once in ``hashes`` (the exact-duplicate groups to hold whole)."""
    seen, repeated = set(), set()
    for digest in hashes:
        (repeated if digest in seen else seen).add(digest)
    return repeated


class CorpusIndex(NamedTuple):
    """What dedup knows of the corpus built by earlier runs (incremental runs), from its ``_index`` rows
    (:func:`corpus_index`): ``ids`` content hash -> article id, ``history`` URL -> :func:`url_history`,
    ``entries`` the rows' :func:`corpus_entry`."""

    ids: dict[str, str]
    history: dict[str, tuple]
    entries: list[SignatureEntry]


def corpus_index(rows: Iterable[dict]) -> CorpusIndex:
    """The :class:`CorpusIndex` of ``_index`` rows (``pipeline.incremental.INDEX_SCHEMA`` dicts): what
    :func:`dedup_against_corpus` makes of them in the graph."""
    ids, by_url, entries = {}, {}, []
    for row in rows:
        digest, article_id = _hash_id(row)
        ids[digest] = article_id
        by_url.setdefault(row["url"], []).append(row)
        entries.append(corpus_entry(row))
    return CorpusIndex(ids, {url: url_history(url_rows) for url, url_rows in by_url.items()}, entries)


@dataclass
class DedupDecisions:
    """The decisions of exact and near dedup over a run's keys (:func:`dedup_decisions`), to apply to its spilled
    articles (:func:`decided`).

    Attributes:
        losers: ``(warc_file, offset)`` of each article dropped by exact dedup within the run.
        clusters: near-dedup's ``{article id: kept member's id}`` (:class:`ClusterFn`), for :func:`assign_cluster`.
        rows: the ``duplicates`` rows of the exact losers (:func:`exact_duplicate_row`).
        counts: ``{count name: n}`` of those drops (``duplicates_dropped``; absent when none, as in the graph).
        corpus: the corpus built by earlier runs (incremental runs), or None.
    """

    losers: set[tuple[str, int]]
    clusters: dict[str, str]
    rows: list[dict]
    counts: dict[str, int]
    corpus: CorpusIndex | None = None


def dedup_decisions(keys: Iterable[ArticleKey], repeated: set[str], params: NearDupParams = NearDupParams(),
                    corpus: CorpusIndex | None = None) -> DedupDecisions:
    """Exact and near dedup of a run's articles from their keys, in one process, with :func:`deduplicate`'s
    decisions: per content hash the :func:`first_fetched` winner; the winners whose text the corpus has
    (``corpus``) left to :func:`filter_by_corpus`; the other winners' and the corpus's entries clustered by
    :func:`near_clusters`; each exact loser's row by :func:`exact_duplicate_row`.

    Args:
        keys: every article's :class:`ArticleKey`, once each, in any order (streamed: only the keys of
            ``repeated`` hashes are held whole, the others' near-dedup entries only, ~1 KB an article).
        repeated: the content hashes more than one key has (:func:`repeated_hashes`).
        params: near-dedup's parameters.
        corpus: the corpus built by earlier runs (incremental runs), or None.
    """
    groups: dict[str, list[ArticleKey]] = {}
    entries: list[SignatureEntry] = []
    losers, dropped, counts = set(), [], {DUPLICATES_DROPPED: 0}
    in_corpus = corpus.ids if corpus is not None else {}

    def keep(group: list[ArticleKey]) -> None:
        winner, n, others = first_fetched(group)
        counts[DUPLICATES_DROPPED] += n - 1
        for key in others:
            losers.add(key.record)
            dropped.append((key, winner.near.article_id))
        if winner.content_hash not in in_corpus:
            entries.append(winner.near)

    for key in keys:
        if key.content_hash in repeated:
            groups.setdefault(key.content_hash, []).append(key)
        else:
            keep([key])
    for group in groups.values():
        keep(group)
    clusters = near_clusters([*entries, *(corpus.entries if corpus is not None else ())], params)
    rows = [exact_duplicate_row(d, clusters, in_corpus or None) for d in dropped]
    return DedupDecisions(losers, clusters, rows, {k: n for k, n in counts.items() if n}, corpus)


def drop_counts(row: dict) -> tuple[tuple[str, int], ...]:
    """What dropping the article of a ``duplicates`` row that :func:`decided` gives adds to the counts:
    :data:`NEAR_DROP_COUNTS` for a near-duplicate, :data:`CORPUS_DROP_COUNTS` for a text the corpus has."""
    return NEAR_DROP_COUNTS if row["reason"] == NEAR_DUPLICATE else CORPUS_DROP_COUNTS


def decided(signed: SignedArticle, decisions: DedupDecisions) -> SignedArticle | dict | None:
    """A spilled article after ``decisions``: None when exact dedup dropped it (its row is among
    ``decisions.rows``), its ``duplicates`` row when the corpus or near-dedup drops it (:func:`filter_by_corpus`,
    :func:`assign_cluster`), else the kept pair, as :class:`ReadSpilled`, :class:`CorpusFilterFn` and
    :class:`AssignClusterFn` give it."""
    article = signed[0]
    if (article.warc_file, article.warc_offset) in decisions.losers:
        return None
    if decisions.corpus is not None:
        signed = filter_by_corpus(signed, decisions.corpus.ids, decisions.corpus.history)
        if isinstance(signed, dict):
            return signed
    return assign_cluster(signed, decisions.clusters)


# --------------------------------------------------------------------------------------------
# All of it, in the cleaning graph
# --------------------------------------------------------------------------------------------


class Deduplicated(NamedTuple):
    """What :func:`deduplicate` gives: ``articles``: the kept :data:`SignedArticle` pairs (``cluster_id`` set);
    ``duplicates``: ``OUT/duplicates`` row dicts, one per dropped article (exact and near duplicates, and new
    articles whose text the corpus holds); ``counts``: the PCollections of ``(name, int)`` count pairs."""

    articles: beam.PCollection
    duplicates: beam.PCollection
    counts: tuple


def deduplicate(articles, out: str, params: NearDupParams = NearDupParams(), corpus_index=None) -> Deduplicated:
    """Add exact and near dedup of the cleaned ``articles`` (PCollection of
    :class:`~newsclean.schemas.records.Article`) to their pipeline; the module docstring has the stages.

    The steps are applied under their own top-level labels (``ArticleKeys``, ``SpillArticles``, ``DedupExact``,
    ``ReadSpilled``, [``NotInCorpus`` ...], ``NearEntries``, ``NearDedup``), which stay stable for a runner's
    update/drain. ``out``: the run's (staging) output folder; the articles wait in ``out/_spill/``.
    ``corpus_index``: the index rows of the corpus built by earlier runs (incremental runs), or None.
    """
    keyed = articles | "ArticleKeys" >> beam.Map(keyed_article, params)  # the MinHash, computed once
    spilled = keyed | "SpillArticles" >> SpillArticles(out)
    exact = keyed | "DedupExact" >> DedupExact()
    kept = spilled | "ReadSpilled" >> ReadSpilled(exact["losers"])
    keys, corpus_counts, corpus_rows, corpus, corpus_ids = exact["keys"], (), (), None, None
    if corpus_index is not None:
        kept, counts, rows, corpus, keys, ids = dedup_against_corpus(kept, corpus_index, keys)
        corpus_counts, corpus_rows, corpus_ids = (counts,), (rows,), beam.pvalue.AsDict(ids)
    entries = keys | "NearEntries" >> beam.Map(_near_entry)
    near = kept | "NearDedup" >> NearDedup(params, existing=corpus, entries=entries)
    exact_rows = exact["dropped"] | "ExactDuplicateRows" >> beam.Map(
        exact_duplicate_row, beam.pvalue.AsSingleton(near["clusters"]), *((corpus_ids,) if corpus_ids else ()))
    duplicates = (near["duplicates"], exact_rows, *corpus_rows) | "DuplicateRows" >> beam.Flatten()
    return Deduplicated(near["articles"], duplicates, (exact["counts"], near["counts"], *corpus_counts))

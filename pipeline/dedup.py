"""Duplicate removal, exact and near, as stages of the cleaning graph: the one composition of the decisions of
:mod:`newsclean.pipeline.dedup_decisions`, whichever executor runs the graph (one Beam run, or the batches of
:mod:`newsclean.pipeline.batches`, whose last run is these same stages over every batch's spill).

    articles ─► ArticleKeys (MinHash once) ─┬─► SpillArticles: full rows + MinHash to OUT/_spill
                                            └─► DedupKeys ─► DedupExact: small keys only ─► losers (side input)
    spill ─► ReadSpilled (drops the exact losers) ─► [incremental: NotInCorpus] ─► NearDedup ─► kept articles
                                                                                          └─► duplicates rows

Stage by stage (:func:`spill_articles`, then :func:`deduplicate`):

1. **Keys** (:func:`~newsclean.pipeline.dedup_decisions.keyed_article`): each cleaned article gets an
   :class:`ArticleKey`: its content hash, its exact-dedup rank and its near-dedup :class:`SignatureEntry` (id,
   keep rank, MinHash signature). The MinHash is computed here, once; it goes both into the key and into the
   spilled row.
2. **Spill** (:class:`SpillArticles`, :class:`ReadSpilled`): the articles wait in ``OUT/_spill/`` (inside the
   run's staging folder) while dedup decides on their keys, so no article text crosses a shuffle or a side
   input; they are read back streaming and filtered by the decisions (side inputs holding only the dropped ones).
3. **Exact** (:class:`DedupExact`): articles with the same ``content_hash`` (normalised text): the earliest
   fetch wins, then the smallest URL (:func:`~newsclean.pipeline.dedup_decisions.first_fetched`), so the result
   does not depend on the runner's order.
4. **Corpus** (:func:`dedup_against_corpus`, incremental runs): a new article whose text the corpus built by
   earlier runs already holds is dropped; a new text at a URL of the corpus continues that URL's versions.
5. **Near** (:class:`NearDedup`): MinHash LSH over word 5-gram shingles. Two articles are near-duplicates when
   their signatures share an LSH band and the estimated Jaccard similarity of their shingle sets reaches
   ``threshold`` (0.8, as datatrove and FineWeb use). Within a band bucket each member is compared with the
   bucket's best-ranked member only (O(n) per bucket, not O(n²)); clusters are the connected components of those
   edges; one member per cluster is kept (:func:`~newsclean.pipeline.dedup_decisions.keep_rank`) and the others
   become ``OUT/duplicates`` rows (:class:`WriteDuplicates`).

**Memory.** A runner holds what crosses a shuffle or feeds a side input. Exact dedup groups the keys with a
``GroupByKey``, not a combiner (:class:`KeepFirstFetched`). Each article contributes ``b`` band records to one
GroupByKey (9 at the defaults), each only ``((band index, band hash), packed (article id, keep rank))``: 182
bytes in Beam's coder with a 60-character URL; the member is one ``bytes`` value (:func:`packed_member`)
because a local runner holds a grouping's values decoded until the group is read (~3.7 KB an article for the 9
records against ~6.9 KB as tuples). The signature (``4 * num_perm`` bytes, 512 at the defaults) crosses one
more GroupByKey once, keyed by the member (708 bytes), to be joined to the candidate pairs it is in, then twice
per candidate pair (once per side): 9 × 182 + 708 = 2,346 bytes an article, against 9 × 783 = 7,047 when every
band record carried the signature, with the same pairs compared on the same signatures. The cluster map holds one entry per article that has a near-duplicate.
"""

from __future__ import annotations

import pickle
from typing import NamedTuple

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems

from newsclean.pipeline.dedup_decisions import (
    ArticleKey,
    Clusters,
    KeyedArticle,
    Member,
    NearDupParams,
    SignatureEntry,
    SignedArticle,
    assign_cluster,
    band_keys,
    bucket_pairs,
    corpus_entry,
    exact_duplicate_row,
    filter_by_corpus,
    first_fetched,
    is_near_duplicate,
    keyed_article,
    member,
    signed_entry,
    url_history,
)
from newsclean.pipeline.formats import write_rows
from newsclean.pipeline.stages import ARTICLES_DIR, PARQUET_SUFFIX, with_settings
from newsclean.pipeline.warc_reader import COUNTS_TAG, inc_counter
from newsclean.schemas.records import SPILL_SCHEMA, SPILL_SIGNATURE, Article, from_row, to_row

# --------------------------------------------------------------------------------------------
# Count names, tags, folders, the duplicates' schema
# --------------------------------------------------------------------------------------------


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


#: Folder of the spilled keys under ``OUT/_spill/`` (a batch of a run in batches: pipeline/batches.py).
KEYS_DIR = "keys"
#: One spilled key: an article's content hash and its :class:`ArticleKey`, pickled (internal to one run, read
#: back by the same code: :func:`key_of_row`).
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
    """:data:`KeyedArticle` pairs -> their keys (:func:`key_row`) in ``OUT/_spill/keys/part-*.parquet``, so that
    one :func:`deduplicate` decides over the keys of several runs (pipeline/batches.py); output: the files' paths."""

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


def spill_articles(articles, out: str, params: NearDupParams = NearDupParams()):
    """Add the keys and the spill of the cleaned ``articles`` (PCollection of
    :class:`~newsclean.schemas.records.Article`) to their graph, under the labels ``ArticleKeys`` (each article's
    MinHash, computed once: :func:`~newsclean.pipeline.dedup_decisions.keyed_article`) and ``SpillArticles``
    (``out/_spill/articles/``). Returns ``(keyed, spilled)``: the :data:`KeyedArticle` pairs and the spill files'
    paths (what :func:`deduplicate` reads back)."""
    keyed = articles | "ArticleKeys" >> beam.Map(keyed_article, params)
    return keyed, keyed | "SpillArticles" >> SpillArticles(out)


def key_of(keyed: KeyedArticle) -> ArticleKey:
    """The :class:`ArticleKey` of a :data:`KeyedArticle` pair (what :class:`DedupExact` decides on)."""
    return keyed[1]


# --------------------------------------------------------------------------------------------
# DedupExact: the same normalised text
# --------------------------------------------------------------------------------------------


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

    Input: :class:`ArticleKey` records (:func:`key_of`). Output: ``{"keys": ArticleKey of each winner,
    "losers": ((warc_file, offset), True) of each dropped article, "dropped": (ArticleKey of each dropped article,
    the winner's article id), "counts": ("duplicates_dropped", int)}``. The
    winner is the earliest fetch, then the smallest URL, so the result does not depend on the runner's order. Only
    the keys cross the shuffle; :class:`ReadSpilled` drops the losers' rows.
    """

    def expand(self, keys):
        out = (
            keys
            | "KeyByContentHash" >> beam.Map(_by_hash)
            | "KeepFirstFetched" >> KeepFirstFetched()
            | "EmitWinners" >> beam.ParDo(EmitWinnerFn()).with_outputs(COUNTS_TAG, LOSERS_TAG, DROPPED_TAG,
                                                                        main="keys")
        )
        return {"keys": out.keys, "losers": out[LOSERS_TAG], "dropped": out[DROPPED_TAG], "counts": out[COUNTS_TAG]}


# --------------------------------------------------------------------------------------------
# Against the corpus built by earlier runs (incremental runs)
# --------------------------------------------------------------------------------------------

#: What dropping one article against the corpus adds to the counts (:class:`CorpusFilterFn`).
CORPUS_DROP_COUNTS = ((DUPLICATES_DROPPED, 1), (CORPUS_DUPLICATES, 1))


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

#: A candidate pair of one bucket: ``(member, the bucket's best-ranked member)``
#: (:func:`~newsclean.pipeline.dedup_decisions.bucket_pairs`).
Pair = tuple[Member, Member]


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
    """``(pair, [(side, signature), ...])`` -> the pair as an edge when its two signatures make one
    (:func:`~newsclean.pipeline.dedup_decisions.is_near_duplicate` at ``threshold``); nothing otherwise."""
    pair, sides = kv
    by_side = dict(sides)
    if 0 in by_side and 1 in by_side:
        a = np.frombuffer(by_side[0], dtype=np.uint32)
        b = np.frombuffer(by_side[1], dtype=np.uint32)
        if is_near_duplicate(a, b, threshold):
            yield pair


class ClusterFn(beam.CombineFn):
    """The near-duplicate edges -> ``{article id: kept member's article id}``: the connected components and their
    kept members of :class:`~newsclean.pipeline.dedup_decisions.Clusters` (the accumulator), as a combiner."""

    def create_accumulator(self) -> Clusters:
        return Clusters()

    def add_input(self, acc: Clusters, edge: Pair) -> Clusters:
        return acc.union(*edge)

    def merge_accumulators(self, accumulators) -> Clusters:
        merged = Clusters()
        for acc in accumulators:
            merged.merge(acc)
        return merged

    def extract_output(self, acc: Clusters) -> dict[str, str]:
        return acc.kept()


#: What dropping one near-duplicate adds to the counts (:func:`assign_cluster`).
NEAR_DROP_COUNTS = ((DUPLICATES_DROPPED, 1), (NEAR_DUPLICATES_DROPPED, 1))


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
    """Drop near-duplicate articles (MinHash LSH), keeping one per cluster by
    :func:`~newsclean.pipeline.dedup_decisions.keep_rank`.

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
            once, after the clusters are known); made from the signed articles when None
            (:func:`~newsclean.pipeline.dedup_decisions.signed_entry`).
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
    run's ``settings`` in the files' metadata, :func:`~newsclean.pipeline.stages.with_settings`), or with
    ``output_format`` ``jsonl`` to ``part-*.jsonl.gz`` (:func:`~newsclean.pipeline.formats.write_rows`)."""

    def __init__(self, out: str, settings: dict | None = None, output_format: str = "parquet"):
        super().__init__()
        self.out = out
        self.settings = settings
        self.output_format = output_format

    def expand(self, rows):
        return write_rows(rows, "WriteDuplicates", FileSystems.join(self.out, DUPLICATES_DIR, "part"),
                          with_settings(DUPLICATE_SCHEMA, self.settings), self.output_format)


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


def deduplicate(keys, spilled, params: NearDupParams = NearDupParams(), corpus_index=None) -> Deduplicated:
    """Add exact and near dedup of a run's cleaned articles to their graph, from their keys and their spill; the
    module docstring has the stages. Every executor runs this one composition (pipeline/clean.py).

    The steps are applied under their own top-level labels (``DedupExact``, ``ReadSpilled``, [``NotInCorpus``
    ...], ``NearEntries``, ``NearDedup``, ``ExactDuplicateRows``, ``DuplicateRows``), which stay stable for a
    runner's update/drain.

    Args:
        keys: PCollection of each article's :class:`ArticleKey`, once each (:func:`key_of` of the pairs of
            :func:`spill_articles`, or the keys the batches of a run spilled: :class:`SpillKeys`).
        spilled: PCollection of the paths of the spill files that hold those articles (:class:`SpillArticles`).
        params: near dedup's :class:`NearDupParams`.
        corpus_index: the index rows of the corpus built by earlier runs (incremental runs), or None.
    """
    exact = keys | "DedupExact" >> DedupExact()
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

"""Near-duplicate removal: MinHash LSH over word 5-gram shingles, after exact dedup.

    articles ─► Signatures (article id, keep rank, MinHash) ─┬─► Bands ─► GroupBands ─► candidate pairs
                                                            │   (band key, member = (id, rank)): no signature
             (corpus already built: index entries) ─────────┤
                        member ─► its signature ────────────┴─► JoinSignatures (by member; each signature once)
                                                                  ─► PairSignatures (by pair) ─► Jaccard ─► edges
    edges ─► Clusters (union-find CombineGlobally: member id -> kept member id; duplicates only)
    articles + clusters (side input) ─► kept articles with ``cluster_id``; dropped ones counted
                                        (``near_duplicate``) and written to ``OUT/duplicates/``

Method: :mod:`newsclean.transforms.minhash` (Broder 1997; *Mining of Massive Datasets* §3.4). Two
articles are near-duplicates when their MinHash signatures share an LSH band and the estimated
Jaccard similarity of their 5-gram shingle sets reaches ``threshold`` (0.8 by default, as datatrove
and FineWeb use). Within a band bucket each member is compared with the bucket's best-ranked member
only (O(n) per bucket, not O(n²)); clusters are the connected components of those edges.

**Which member is kept** (:func:`keep_rank`, smallest first): an article already in the corpus
before this run (incremental runs: the corpus is append-only, so its rows win); then the earliest
date known for the text (``published_at``, else ``fetched_at``); then the earliest ``fetched_at``;
then the longest text (words, then characters); then the smallest URL and article id, so the choice
does not depend on the runner's order. Every kept row gets ``cluster_id`` = the article id of its
cluster's kept member (its own id; an article with no near-duplicate is a cluster of one).

Memory: the HTML never crosses a shuffle here. Each article contributes ``b`` band records to one
GroupByKey (9 at the defaults), each only ``((band index, band hash), packed (article id, keep rank))``: 182
bytes in Beam's coder with a 60-character URL. The member is one ``bytes`` value (:func:`packed_member`)
because a local runner holds a grouping's values decoded until the group is read: ~3.7 KB an article for
the 9 records against ~6.9 KB as tuples. Its MinHash signature (``4 * num_perm`` bytes, 512 at
the defaults) crosses one more GroupByKey once, keyed by the member (708 bytes), to be joined to the
candidate pairs it is in, and then twice per candidate pair (once per side). Before, every band record
carried the signature: 9 × 783 = 7,047 bytes an article against 9 × 182 + 708 = 2,346 now (issue 15).
Which pairs are near-duplicates is unchanged: the same pairs are compared with the same signatures
(:func:`bucket_edges` is the in-memory equivalent). The cluster map holds one entry per article that has
a near-duplicate. The pipeline (``pipeline/clean.py``) passes the entries in (``entries=``, computed
where the article is cleaned), so that the articles are read only once, after the clusters are known,
and never cross a shuffle.
"""

from __future__ import annotations

import dataclasses
import pickle
from datetime import datetime

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from newsclean.pipeline.warc_reader import COUNTS_TAG, METRICS_NAMESPACE
from newsclean.schemas.records import Article
from newsclean.transforms.minhash import NearDupParams, band_keys, estimated_jaccard, signature

#: Reason recorded for an article dropped as a near-duplicate of a kept one.
NEAR_DUPLICATE = "near_duplicate"
#: Count names in ``OUT/_counts``: near-duplicates are part of ``duplicates_dropped`` (the accounting
#: total) and also counted on their own.
DUPLICATES_DROPPED, NEAR_DUPLICATES_DROPPED = "duplicates_dropped", "near_duplicates_dropped"
#: Output folder of the dropped near-duplicates under ``--out``.
DUPLICATES_DIR = "duplicates"
DUPLICATE_TAG = "duplicates"

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


@dataclasses.dataclass(frozen=True)
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
#: cleaned and carried in the spill, pipeline/stages.py): what :class:`NearDedup` takes and gives.
SignedArticle = tuple[Article, bytes]


def signed_entry(signed: SignedArticle) -> SignatureEntry:
    """The :class:`SignatureEntry` of a new article from the signature it carries (no MinHash computed)."""
    article, sig = signed
    return SignatureEntry(article.article_id, keep_rank(article), sig)


def article_of(signed: SignedArticle) -> Article:
    """The article of a :data:`SignedArticle`, without its signature."""
    return signed[0]


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
    one ``bytes`` object is about half the memory of the id-and-rank tuple (issue 15; docs/DECISIONS.md)."""
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
    URL is a new version, not a duplicate; pipeline/incremental.py) gives no pair. Buckets of one give nothing.
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


def _inc(name: str, n: int = 1) -> None:
    Metrics.counter(METRICS_NAMESPACE, name).inc(n)


def duplicate_row(article: Article, cluster_id: str, reason: str = NEAR_DUPLICATE) -> dict:
    """The ``OUT/duplicates`` row (:data:`DUPLICATE_SCHEMA`) of a dropped article."""
    return {"article_id": article.article_id, "url": article.url, "cluster_id": cluster_id, "reason": reason,
            "content_hash": article.content_hash, "warc_file": article.warc_file,
            "warc_offset": article.warc_offset}


class AssignClusterFn(beam.DoFn):
    """:data:`SignedArticle` (+ side input ``{id: kept id}``) -> the same with ``cluster_id`` set when the article
    is kept; else a ``duplicates`` row (:data:`DUPLICATE_TAG`) and two counts (:data:`COUNTS_TAG`)."""

    def process(self, signed: SignedArticle, clusters):
        article, sig = signed
        kept = clusters.get(article.article_id, article.article_id)
        if kept == article.article_id:
            yield dataclasses.replace(article, cluster_id=kept, first_seen=article.first_seen or article.fetched_at,
                                      last_seen=article.last_seen or article.fetched_at), sig
            return
        _inc("near_duplicates")
        yield beam.pvalue.TaggedOutput(DUPLICATE_TAG, duplicate_row(article, kept))
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, (DUPLICATES_DROPPED, 1))
        yield beam.pvalue.TaggedOutput(COUNTS_TAG, (NEAR_DUPLICATES_DROPPED, 1))


class NearDedup(beam.PTransform):
    """Drop near-duplicate articles (MinHash LSH), keeping one per cluster by :func:`keep_rank`.

    Input: PCollection of :data:`SignedArticle` (after exact dedup).
    Output: ``{"articles": SignedArticle of each kept article (with cluster_id), "duplicates": duplicates row
    dict, "counts": (name, int), "signatures": SignatureEntry of the kept and dropped new articles}``.

    Args:
        params: :class:`~newsclean.transforms.minhash.NearDupParams` (threshold 0.8, 5-word shingles, 128 permutations).
        existing: optional PCollection of :class:`SignatureEntry` of the corpus built by earlier runs
            (their rank starts with 0, so they win against every new article).
        entries: optional PCollection of the articles' :class:`SignatureEntry`, computed earlier (the
            pipeline carries them in ``stages.ArticleKey``, so that the articles themselves are read only
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
                "signatures": entries}


class WriteDuplicates(beam.PTransform):
    """Write ``duplicates`` row dicts to ``OUT/duplicates/part-*.parquet`` (:data:`DUPLICATE_SCHEMA`, snappy)."""

    def __init__(self, out: str):
        super().__init__()
        self.out = out

    def expand(self, rows):
        return rows | "WriteDuplicates" >> beam.io.WriteToParquet(
            FileSystems.join(self.out, DUPLICATES_DIR, "part"), DUPLICATE_SCHEMA, codec="snappy",
            file_name_suffix=".parquet")

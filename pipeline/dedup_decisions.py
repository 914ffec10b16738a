"""The deduplication decisions, as pure functions over typed values (no Beam, no I/O): every executor of the
cleaning graph reaches them through the stages of :mod:`newsclean.pipeline.dedup`, the only place that composes them.

- **Keys** (:func:`article_key`): an article's content hash, its exact-dedup rank (:func:`fetch_rank`) and its
  near-dedup :class:`SignatureEntry` (id, :func:`keep_rank`, MinHash signature).
- **Exact** (:func:`first_fetched`): per content hash (normalised text) the earliest fetch wins, then the smallest
  URL (:func:`pick_winner`); the others' rows are :func:`exact_duplicate_row`.
- **Corpus** (:func:`filter_by_corpus`, incremental runs): a new article whose text the corpus built by earlier
  runs holds is dropped; a new text at a URL of the corpus continues that URL's versions (:func:`url_history`);
  the corpus's rows take part in near dedup with a rank that wins (:func:`corpus_entry`).
- **Near** (:func:`bucket_pairs`, :func:`is_near_duplicate`, :class:`Clusters`, :func:`assign_cluster`): the
  candidate pairs of one LSH bucket, the edge test, the connected components and their kept member.

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
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import numpy as np

from newsclean.schemas.records import Article
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


# --------------------------------------------------------------------------------------------
# MinHash: shingles, signatures, LSH bands
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
    return set(map(" ".join, zip(*(tokens[i:] for i in range(n)))))  # the n-grams, joined in one C-level pass


def shingle_hashes(text: str, n: int = DEFAULT_SHINGLE_WORDS) -> list[int]:
    """datasketch's default 32-bit hash of each of :func:`shingles` of ``text`` (``sha1_hash32``: the first 4
    bytes of the SHA-1 of the shingle's UTF-8, read little-endian), in no particular order: ints in [0, 2**32).

    The same values as datasketch computes one shingle at a time, taken in one pass: the digests' first 4 bytes
    joined and read as one little-endian ``uint32`` array (a test checks them against ``sha1_hash32``)."""
    sha1 = hashlib.sha1
    digests = b"".join([sha1(s.encode("utf-8")).digest()[:4] for s in shingles(text, n)])
    return np.frombuffer(digests, dtype="<u4").tolist()


def _same(value):
    """The identity: the hash function of :func:`_empty_minhash`, whose inputs are hashed already."""
    return value


@lru_cache(maxsize=8)
def _empty_minhash(num_perm: int, seed: int):
    """An empty datasketch ``MinHash`` of ``num_perm`` permutations drawn with ``seed``, taking values hashed
    already (:func:`shingle_hashes`): built once per parameters and copied for each text (drawing the
    permutations costs about as much as a short text's signature). Never updated itself."""
    from datasketch import MinHash  # here, not at import: datasketch imports scipy (module docstring)

    return MinHash(num_perm=num_perm, seed=seed, hashfunc=_same)


def signature(text: str, params: NearDupParams = NearDupParams()) -> np.ndarray:
    """MinHash signature of the shingles of ``text``: ``uint`` array of ``params.num_perm`` values.

    The values of ``MinHash(num_perm, seed).update_batch(shingle.encode() for each shingle)`` with datasketch's
    default hash (a test checks them), computed with the permutations drawn once (:func:`_empty_minhash`) and the
    shingles hashed in one pass (:func:`shingle_hashes`). An empty text gets datasketch's empty signature (all
    maximal values), which matches only other empty texts.
    """
    m = _empty_minhash(params.num_perm, params.seed).copy()
    m.update_batch(shingle_hashes(text, params.shingle_words))
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
#: cleaned and carried in the spill): what near dedup (``pipeline/dedup.py``) takes and gives.
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


#: A cleaned article and its :class:`ArticleKey` (:func:`keyed_article`): what the spill and exact dedup
#: (``pipeline/dedup.py``) take, so that the MinHash is computed once and goes both into the spill and into the key.
KeyedArticle = tuple[Article, ArticleKey]


def keyed_article(article: Article, params: NearDupParams = NearDupParams()) -> KeyedArticle:
    """``(article, its ArticleKey)`` (:func:`article_key`)."""
    return article, article_key(article, params)


# --------------------------------------------------------------------------------------------
# Exact duplicates: the same normalised text
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


def exact_duplicate_row(dropped: tuple[ArticleKey, str], clusters: dict[str, str],
                        corpus_ids: dict[str, str] | None = None) -> dict:
    """The ``OUT/duplicates`` row (``dedup.DUPLICATE_SCHEMA``, reason ``exact_duplicate``) of an article dropped by
    exact dedup: ``(its key, the kept article's id)``. ``cluster_id`` is the ``cluster_id`` of the row that stands
    for its text: the kept article's near-duplicate cluster (``clusters``: :meth:`Clusters.kept`, ``{id: kept id}``),
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


def filter_by_corpus(signed: SignedArticle, hashes: dict[str, str],
                     history: dict[str, tuple]) -> SignedArticle | dict:
    """A new :data:`SignedArticle` against the corpus built by earlier runs: its ``exact_duplicate`` row
    (:func:`duplicate_row`, ``cluster_id`` the corpus article's id) when the corpus has its text (``hashes``:
    content hash -> corpus article id), else the same pair with
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


# --------------------------------------------------------------------------------------------
# Near duplicates: MinHash LSH buckets, edges, clusters
# --------------------------------------------------------------------------------------------


#: What an LSH band record carries of an article: ``(article id, keep rank)``, packed in the graph; no
#: signature.
Member = tuple[str, Rank]
#: A candidate pair of one bucket: ``(member, the bucket's best-ranked member)``.
Pair = tuple[Member, Member]


def member(entry: SignatureEntry) -> Member:
    """The :data:`Member` of ``entry``: its article id and :func:`keep_rank`."""
    return entry.article_id, entry.rank


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


def is_near_duplicate(a: np.ndarray, b: np.ndarray, threshold: float) -> bool:
    """Whether two MinHash signatures (``uint32`` arrays of one length) make an edge: their estimated Jaccard
    similarity (:func:`estimated_jaccard`) reaches ``threshold`` (in [0, 1]).

    Raises:
        ValueError: the signatures differ in length.
    """
    return estimated_jaccard(a, b) >= threshold


class Clusters:
    """Union-find over near-duplicate edges (:data:`Pair` ``(member, head)``): the connected components and their
    kept members. Holds a parent and a rank per article id that occurs in an edge."""

    def __init__(self):
        self.parent: dict[str, str] = {}
        self.ranks: dict[str, Rank] = {}

    def _find(self, x: str) -> str:
        parent, root = self.parent, x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a: Member, b: Member) -> Clusters:
        """Join the components of the members ``a`` and ``b`` (each ``(article id, keep rank)``); returns self."""
        for node, rank in (a, b):
            if node not in self.parent:
                self.parent[node], self.ranks[node] = node, rank
        ra, rb = self._find(a[0]), self._find(b[0])
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)
        return self

    def merge(self, other: Clusters) -> Clusters:
        """Join every component of ``other`` into these; returns self."""
        for node in list(other.parent):
            root = other._find(node)
            self.union((node, other.ranks[node]), (root, other.ranks[root]))
        return self

    def kept(self) -> dict[str, str]:
        """``{article id: kept member's article id}`` for every member of a component (the kept one included, to
        itself): the member with the smallest :func:`keep_rank`."""
        best: dict[str, str] = {}
        for node in self.parent:
            root = self._find(node)
            if root not in best or self.ranks[node] < self.ranks[best[root]]:
                best[root] = node
        return {node: best[self._find(node)] for node in self.parent}


def duplicate_row(article: Article, cluster_id: str, reason: str = NEAR_DUPLICATE) -> dict:
    """The ``OUT/duplicates`` row (``dedup.DUPLICATE_SCHEMA``) of a dropped article, with the kept member's
    ``cluster_id`` and the ``reason`` (:data:`NEAR_DUPLICATE`, :data:`EXACT_DUPLICATE`)."""
    return {"article_id": article.article_id, "url": article.url, "cluster_id": cluster_id, "reason": reason,
            "content_hash": article.content_hash, "warc_file": article.warc_file,
            "warc_offset": article.warc_offset}


def assign_cluster(signed: SignedArticle, clusters: dict[str, str]) -> SignedArticle | dict:
    """A :data:`SignedArticle` after near-dedup: the same pair with ``cluster_id`` (and ``first_seen``,
    ``last_seen`` where unset: its fetch) when the article is kept, else its ``near_duplicate`` row
    (:func:`duplicate_row`). ``clusters``: ``{article id: kept member's id}`` (:meth:`Clusters.kept`); an article
    absent from it is a cluster of one."""
    article, sig = signed
    kept = clusters.get(article.article_id, article.article_id)
    if kept == article.article_id:
        return dataclasses.replace(article, cluster_id=kept, first_seen=article.first_seen or article.fetched_at,
                                   last_seen=article.last_seen or article.fetched_at), sig
    return duplicate_row(article, kept)


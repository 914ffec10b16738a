"""Near-duplicate removal: shingles, MinHash, LSH bands, edges, clusters and the kept-member rule
(pipeline/dedup_decisions.py), and the graph's stages that compose them (pipeline/dedup.py; on real pages:
evaluation/tests/test_near_duplicates_real.py)."""

from __future__ import annotations

import ast
import pickle
import random
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from newsclean.pipeline import dedup_decisions
from newsclean.pipeline.dedup import (
    ClusterFn,
    NearDedup,
    band_items,
    bucket_candidates,
    packed_member,
    pair_edge,
    signature_to_pairs,
    unpacked_member,
)
from newsclean.pipeline.dedup_decisions import (
    NearDupParams,
    SignatureEntry,
    band_keys,
    band_ranges,
    bucket_pairs,
    estimated_jaccard,
    is_near_duplicate,
    keep_rank,
    member,
    shingles,
    signature,
    signature_entry,
)
from newsclean.schemas.records import Article

T0 = datetime(2017, 6, 1, 9, 0, tzinfo=UTC)

VOCAB = [f"w{i}" for i in range(5000)]


def _text(seed: int, n: int = 300) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def _change_words(text: str, positions: list[int]) -> str:
    words = text.split()
    for p in positions:
        words[p] = "CHANGED" + str(p)
    return " ".join(words)


def _jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b)


# --- MinHash --------------------------------------------------------------------


def test_shingles_are_normalised_word_5_grams():
    assert shingles("A  b C d e\nF") == {"a b c d e", "b c d e f"}
    assert shingles("Two words") == {"two words"}  # shorter than n: one shingle of all its words
    assert shingles("  ") == set()


def test_signature_estimates_jaccard_of_shingle_sets():
    a = _text(1)
    b = _change_words(a, [50, 150, 250])  # 3 changed words: each removes 5 of 296 shingles, adds 5
    exact = _jaccard(shingles(a), shingles(b))
    assert exact == pytest.approx(281 / 311)  # 296 - 15 shared; 296 + 15 in the union
    est = estimated_jaccard(signature(a), signature(b))
    assert abs(est - exact) < 0.1  # standard error sqrt(J(1-J)/128) ~ 0.026
    assert estimated_jaccard(signature(a), signature(a)) == 1.0
    assert estimated_jaccard(signature(a), signature(_text(2))) < 0.1  # unrelated texts


@pytest.mark.parametrize("params", [NearDupParams(), NearDupParams(num_perm=64, seed=7, shingle_words=3)])
def test_signature_is_datasketchs_minhash_of_the_encoded_shingles(params):
    from datasketch import MinHash
    from datasketch.hashfunc import sha1_hash32

    texts = [_text(1), "Короткий текст о погоде в Москве и в Санкт-Петербурге сегодня утром и вечером",
             "東京の天気は晴れです 大阪も晴れ", "two words", "", _change_words(_text(3), [7])]
    for text in texts:
        encoded = [s.encode("utf-8") for s in shingles(text, params.shingle_words)]
        plain = MinHash(num_perm=params.num_perm, seed=params.seed)
        plain.update_batch(encoded)
        got = signature(text, params)
        assert got.dtype == plain.hashvalues.dtype and got.tolist() == plain.hashvalues.tolist(), text[:20]
        hashes = dedup_decisions.shingle_hashes(text, params.shingle_words)
        assert sorted(hashes) == sorted(sha1_hash32(s) for s in encoded)
    assert signature(texts[0], params).tolist() == signature(texts[0], params).tolist()  # the template stays empty


def test_lsh_bands_partition_the_signature_and_match_for_near_duplicates():
    ranges = band_ranges(0.8, 128)
    covered = [i for s, e in ranges for i in range(s, e)]
    assert len(covered) == len(set(covered)) and max(covered) < 128 and len(ranges) > 1
    a = _text(3)
    ka, kb = band_keys(signature(a)), band_keys(signature(_change_words(a, [10, 100, 200])))
    kc = band_keys(signature(_text(4)))
    assert set(ka) & set(kb), "a 3-word edit of a 300-word text shares at least one band"
    assert not set(ka) & set(kc)


def test_the_decisions_import_no_beam_and_no_io():
    """The decisions are pure functions over typed values: their module imports neither Beam nor pyarrow nor a
    file system, so every executor reaches them through the graph's stages, never through a copy."""
    tree = ast.parse(Path(dedup_decisions.__file__).read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert {m.split(".")[0] for m in imported} <= {"__future__", "dataclasses", "hashlib", "collections", "datetime",
                                                   "functools", "numpy", "newsclean", "datasketch"}
    assert {m for m in imported if m.startswith("newsclean.")} == {"newsclean.schemas.records",
                                                                   "newsclean.transforms.text"}


def test_params_are_checked():
    with pytest.raises(ValueError):
        NearDupParams(threshold=1.5)
    with pytest.raises(ValueError):
        NearDupParams(shingle_words=0)


# --- the decisions (pipeline/dedup_decisions.py) ---------------------------------------------


def _article(aid: str, text: str, fetched: datetime, published: datetime | None = None, url: str | None = None):
    return Article(article_id=aid, url=url or f"http://x.test/{aid}", site="x", category="c", fetched_at=fetched,
                   title=None, published_at=published, language="en", text=text, html="", word_count=len(text.split()),
                   content_hash=aid, static_nodes_removed=0, dynamic_nodes_removed=0, noninformative_nodes_removed=0,
                   blocks_kept=1, blocks_total=1, warc_file="f", warc_record_id="r", warc_offset=0)


def test_keep_rank_earliest_publication_then_fetch_then_longest():
    text = _text(5)
    early_pub = _article("a", text, T0 + timedelta(days=2), published=T0)
    early_fetch = _article("b", text, T0 + timedelta(days=1))
    assert keep_rank(early_pub) < keep_rank(early_fetch)  # published T0 beats fetched T0+1d
    short = _article("c", text, T0)
    longer = _article("d", text + " extra words", T0)
    assert keep_rank(longer) < keep_rank(short)
    assert keep_rank(short, existing=True) < keep_rank(early_pub)  # the corpus already built wins


def _edges(entries: list[SignatureEntry], threshold: float = 0.8) -> list:
    """The near-duplicate edges of one LSH bucket of whole entries: its candidate pairs that make an edge."""
    values = {member(e): e.values() for e in entries}
    return [(m, head) for m, head in bucket_pairs(list(values)) if is_near_duplicate(values[m], values[head], threshold)]


def test_bucket_edges_link_near_duplicates_to_the_best_ranked_member():
    a = _text(6)
    first = signature_entry(_article("first", a, T0), NearDupParams())
    copy = signature_entry(_article("copy", _change_words(a, [5, 6, 7]), T0 + timedelta(hours=1)), NearDupParams())
    other = signature_entry(_article("other", _text(7), T0 - timedelta(hours=1)), NearDupParams())
    edges = _edges([copy, other, first])
    # "other" ranks first in the bucket but is unrelated: no edge to it; "copy" is not linked either.
    assert edges == []
    edges = _edges([copy, first])
    assert [(m[0], k[0]) for m, k in edges] == [("copy", "first")]


def _edge(a: str, ra: int, b: str, rb: int):
    return (a, (ra,)), (b, (rb,))


def test_cluster_fn_connected_components_keep_the_smallest_rank():
    fn = ClusterFn()
    left = fn.create_accumulator()
    for e in (_edge("b", 2, "a", 3), _edge("d", 9, "e", 8)):
        left = fn.add_input(left, e)
    right = fn.add_input(fn.create_accumulator(), _edge("c", 1, "b", 2))  # c-b joins a-b: {a, b, c}
    out = fn.extract_output(fn.merge_accumulators([left, right]))
    assert out == {"a": "c", "b": "c", "c": "c", "d": "e", "e": "e"}


def test_signature_entry_round_trips_the_signature():
    e = signature_entry(_article("a", _text(8), T0), NearDupParams())
    assert isinstance(e, SignatureEntry) and len(e.values()) == 128
    assert list(e.values()) == [int(v) for v in signature(_text(8))]
    assert replace(e, article_id="z").rank == e.rank


# --- the band shuffle carries no signature -----------------------------------------------------


def _crafted_entry(article: Article, base: np.ndarray, agree: list[int], seed: int) -> SignatureEntry:
    """An entry whose signature equals ``base`` at the positions ``agree`` and differs from it everywhere else."""
    values = base.copy()
    others = np.setdiff1d(np.arange(len(base)), agree)
    values[others] = (base[others] + np.uint32(1 + seed)).astype(np.uint32)
    return SignatureEntry(article.article_id, keep_rank(article), values.astype(np.uint32).tobytes())


def test_band_records_hold_ids_and_ranks_but_no_signature():
    entry = signature_entry(_article("a", _text(9), T0), NearDupParams())
    items = list(band_items(entry, NearDupParams()))
    assert len(items) == len(band_ranges(0.8, 128)) == 9
    for _key, value in items:
        assert unpacked_member(value) == (entry.article_id, entry.rank)
        assert entry.signature not in value
    assert len(pickle.dumps(items)) < len(entry.signature) * 2  # before: each of the 9 records held 512 bytes


def test_a_packed_member_keeps_its_types_and_is_smaller_held_than_the_tuple():
    """Infinite dates (no date known) and ints come back as they were, so ranks order as before; the one bytes
    object a runner holds is less than half the deep size of the decoded tuple."""
    article = _article("a", _text(9), T0)
    rank = (1, float("inf"), 1714564800.0, -512, -3100, "https://example.com/" + "x" * 40, article.article_id)
    m = (article.article_id, rank)
    back = unpacked_member(packed_member(m))
    assert back == m and [type(v) for v in back[1]] == [type(v) for v in rank]

    def deep(obj) -> int:
        return sys.getsizeof(obj) + (sum(deep(v) for v in obj) if isinstance(obj, tuple) else 0)

    assert sys.getsizeof(packed_member(m)) * 2 < deep(m)


def test_buckets_give_the_pairs_of_their_unpacked_members():
    members = [signature_entry(_article(n, _text(20 + i), T0 + timedelta(hours=i)), NearDupParams())
               for i, n in enumerate(("head", "b", "c"))]
    packed = [packed_member(member(e)) for e in reversed(members)]
    assert list(bucket_candidates((("k", 0), packed))) == list(bucket_pairs([member(e) for e in members]))
    assert [(m[0], h[0]) for m, h in bucket_candidates(("k", packed))] == [("b", "head"), ("c", "head")]
    assert list(bucket_candidates(("k", packed[:1]))) == []


def test_near_dedup_joins_signatures_to_candidate_pairs_only():
    """Crafted signatures: ``copy`` agrees with ``first`` on 104 of 128 positions (bands 0-7: a near-duplicate,
    estimated Jaccard 0.81); ``shares_a_band`` agrees with both on band 0 only (a candidate, Jaccard 0.10: no
    edge); ``other`` agrees with nobody. Only ``copy`` is dropped, into ``first``'s cluster."""
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    ranges = band_ranges(0.8, 128)
    (s0, e0), e7 = ranges[0], ranges[7][1]
    base = np.random.default_rng(0).integers(1, 2**31, 128, dtype=np.uint32)
    articles = {name: _article(name, _text(20 + i), T0 + timedelta(hours=i))
                for i, name in enumerate(("first", "copy", "shares_a_band", "other"))}
    entries = [
        _crafted_entry(articles["first"], base, list(range(128)), 0),
        _crafted_entry(articles["copy"], base, list(range(s0, e7)), 1),
        _crafted_entry(articles["shares_a_band"], base, list(range(s0, e0)), 2),
        _crafted_entry(articles["other"], base, [], 3),
    ]
    values = {e.article_id: e.values() for e in entries}
    assert estimated_jaccard(values["copy"], values["first"]) == pytest.approx(104 / 128)
    assert estimated_jaccard(values["shares_a_band"], values["first"]) == pytest.approx(13 / 128)
    signed = [(articles[e.article_id], e.signature) for e in entries]  # as read back from the spill
    with TestPipeline(runner="FnApiRunner") as p:  # the DirectRunner would try to fetch Prism first
        out = (p | "Articles" >> beam.Create(signed)) | NearDedup(
            NearDupParams(), entries=p | "Entries" >> beam.Create(entries))
        assert_that(out["articles"] | beam.Map(lambda s: (s[0].article_id, s[0].cluster_id, s[1])),
                    equal_to([(e.article_id, e.article_id, e.signature) for e in entries
                              if e.article_id != "copy"]),  # each kept article keeps its signature
                    label="Kept")
        assert_that(out["duplicates"] | beam.Map(lambda d: (d["article_id"], d["cluster_id"], d["reason"])),
                    equal_to([("copy", "first", "near_duplicate")]), label="Dropped")


def test_signature_join_gives_the_edges_of_whole_buckets():
    """The join (:func:`signature_to_pairs`, :func:`pair_edge`) yields exactly the edges of the same bucket of whole
    entries: a near copy linked to the head, a band-sharing non-duplicate not; a pair met in two bands is sent once."""
    a = _text(30)
    entries = [signature_entry(_article(name, text, T0 + timedelta(hours=i)), NearDupParams())
               for i, (name, text) in enumerate((("head", a), ("copy", _change_words(a, [5, 150, 290])),
                                                 ("other", _text(31))))]
    members = [member(e) for e in entries]
    pairs = list(bucket_pairs(members)) * 2  # the same bucket met in two bands
    assert [(m[0], h[0]) for m, h in pairs[:2]] == [("copy", "head"), ("other", "head")]
    sent = []
    for e in entries:
        touching = [pair for pair in pairs if member(e) in pair]
        sent.extend(signature_to_pairs((member(e), {"signature": [e.signature], "pairs": touching})))
    assert len(sent) == 4  # two distinct pairs, two sides each
    grouped: dict = {}
    for pair, side in sent:
        grouped.setdefault(pair, []).append(side)
    edges = [edge for kv in grouped.items() for edge in pair_edge(kv, 0.8)]
    assert edges == _edges(entries) == [(members[1], members[0])]

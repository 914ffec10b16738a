"""Near-duplicate evidence on article text: word shingles, MinHash signatures and LSH band keys.

Pure functions, no Beam: :mod:`newsclean.pipeline.dedup` wires them into the pipeline.

Method (Broder 1997, "On the resemblance and containment of documents", §2-3; Leskovec, Rajaraman &
Ullman, *Mining of Massive Datasets*, 3rd ed., §3.4 "Locality-sensitive hashing for documents"):

- the text is normalised as for the exact-duplicate hash (:func:`~newsclean.transforms.text.normalize_for_hash`:
  NFC, lowercased, whitespace collapsed) and cut into :func:`~newsclean.transforms.text.words`;
- its *shingles* are the distinct word n-grams (n = 5, as datatrove / FineWeb use);
- a MinHash signature of ``num_perm`` permutations (datasketch's ``MinHash``) estimates the Jaccard
  similarity of two shingle sets;
- the signature is cut into ``b`` bands of ``r`` rows (datasketch's ``MinHashLSH`` picks ``b, r`` that
  minimise the weighted false positive + false negative probability for the threshold); two texts that
  agree on all rows of at least one band are candidates, and a candidate pair is a near-duplicate
  when its estimated Jaccard similarity reaches the threshold.

datasketch is imported where a signature or band is first computed, not with this module: its package
imports scipy (for ``MinHashLSH``'s parameter search), about 45 MiB of RSS that the process which only
builds the pipeline (the runner's, with ``multi_processing`` workers) does not need.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from newsclean.transforms.text import normalize_for_hash, words

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

"""Boilerplate cue words learnt from labelled text blocks: a lexical feature of the block classifier.

Boilerplate has a vocabulary of its own in every language ("photo", "credit", "subscribe",
"newsletter", "lea también", "czytaj też", "à lire aussi", ...). Instead of a hand-written list
(one language at a time), the training script learns, from the labelled blocks of the *tune*
half (``scripts/train_block_classifier.py``), each word's log-odds of occurring in a boilerplate
block rather than a content block, in the manner of a Bernoulli naive Bayes model (Manning,
Raghavan & Schütze 2008, *Introduction to Information Retrieval* §13.3): with ``b(w)`` and
``c(w)`` the numbers of boilerplate and content blocks holding word ``w`` and ``B``, ``C`` the
numbers of such blocks,

    score(w) = log((b(w) + 1) / (B + 2)) - log((c(w) + 1) / (C + 2))

(add-one smoothing). Only words seen in at least :data:`MIN_SITES` distinct sites enter, so that
one site's own names (its brand, its authors) are not learnt as cues. The block features are the
mean and the maximum score over the block's distinct known words (0 when it has none) and the
share of its distinct words that are known (coverage in [0, 1]: near 0 on a page in a language
the lexicon never saw, where the model must rely on the other features). A
*word* here is a lowercased ``\\w+`` run of NFC text that is not all digits (numbers carry no cue).

The lexicon ships as a gzipped TSV (``word<TAB>score``, sorted by word) beside the models.
"""

from __future__ import annotations

import gzip
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from itertools import filterfalse
from pathlib import Path

MIN_SITES = 3
"""A word must occur in labelled blocks of at least this many distinct sites to enter the lexicon."""

_WORD = re.compile(r"\w+")


def block_terms(text: str) -> frozenset[str]:
    """Distinct lowercased ``\\w+`` words of ``text`` (NFC) that are not all digits."""
    lowered = unicodedata.normalize("NFC", text).lower()
    return frozenset(filterfalse(str.isdigit, _WORD.findall(lowered)))


def learn_lexicon(terms: Sequence[frozenset[str]], labels: Sequence[int], sites: Sequence[str],
                  min_sites: int = MIN_SITES) -> dict[str, float]:
    """Word -> boilerplate log-odds (module docstring) from labelled blocks.

    ``terms[i]`` are the :func:`block_terms` of block i, ``labels[i]`` is 1 for content and 0 for
    boilerplate, ``sites[i]`` the block's site. Raises ValueError when the sequences differ in length.
    """
    if not len(terms) == len(labels) == len(sites):
        raise ValueError("terms, labels and sites must have one entry per block")
    boiler, content = Counter(), Counter()
    word_sites: dict[str, set[str]] = {}
    for words, label, site in zip(terms, labels, sites):
        (content if label else boiler).update(words)
        for w in words:
            word_sites.setdefault(w, set()).add(site)
    n_boiler = sum(1 for label in labels if not label)
    n_content = len(labels) - n_boiler
    return {
        w: math.log((boiler[w] + 1) / (n_boiler + 2)) - math.log((content[w] + 1) / (n_content + 2))
        for w, s in word_sites.items() if len(s) >= min_sites
    }


def lexicon_features(terms: Iterable[str], lexicon: Mapping[str, float]) -> list[float]:
    """``[mean, max, coverage]``: boilerplate log-odds over the known words among ``terms`` and the
    share of ``terms`` known, in [0, 1] (``[0, 0, 0]`` when none is known).

    The mean sums with :func:`math.fsum` (correctly rounded, so independent of the order of ``terms``: a
    frozenset of strings iterates in an order that changes with the process's string hash seed, and a plain
    ``sum`` then differed in the last bits between two Beam workers on the same page)."""
    terms = terms if isinstance(terms, (frozenset, set, list, tuple)) else list(terms)  # sized, iterated as given
    scores = [s for s in map(lexicon.get, terms) if s is not None]  # scores are floats, never None
    if not scores:
        return [0.0, 0.0, 0.0]
    return [math.fsum(scores) / len(scores), max(scores), len(scores) / len(terms)]


def save_lexicon(lexicon: Mapping[str, float], path: Path) -> None:
    """Write ``lexicon`` as gzipped TSV sorted by word, scores to 4 decimals (same bytes for the same lexicon)."""
    text = "".join(f"{w}\t{lexicon[w]:.4f}\n" for w in sorted(lexicon))
    with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write(text.encode("utf-8"))


@lru_cache(maxsize=4)
def load_lexicon(path: str) -> dict[str, float]:
    """Read (once per process) a lexicon written by :func:`save_lexicon`.

    Raises FileNotFoundError when missing and ValueError for a malformed line.
    """
    if not Path(path).exists():
        raise FileNotFoundError(f"boilerplate lexicon not found: {path}")
    lexicon = {}
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            word, sep, score = line.rstrip("\n").partition("\t")
            if not sep:
                raise ValueError(f"{path}:{n}: expected 'word<TAB>score'")
            lexicon[word] = float(score)
    return lexicon

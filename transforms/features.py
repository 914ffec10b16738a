"""Block features for the learned block classifier: the papers' signals plus DOM context.

Every text block (Kohlschütter 2010 §3.3 segmentation, inline tags not separating) gets a fixed
vector of :data:`FEATURE_NAMES`:

- shallow text features of the block and of its previous and next block (Kohlschütter §3.3:
  words, link density, text density, average word length, capitalised-word ratio, full stops);
- the papers' decisions as features: inside dynamic noise (StaDyNoT §3.2), Boilerpipe
  Algorithm 1 and 2 decisions, membership of the ancestor filter's winning group
  (Viveros-Jiménez §4) and of its subtree, the group's share of content text;
- DOM context in the manner of Readability/Dragnet: container tag class, enclosing semantic tags
  (nav, footer, aside, ...), positive/negative words in ancestors' class and id, depth;
- page context: relative position, share of the page's words, match with the title;
- the nearest enclosing table: its own cells, nesting, word share, link density, headers, and
  whether it lies in the best content cluster (a data table in an article vs a layout table);
- boilerplate cue words learnt from the training blocks (:mod:`newsclean.transforms.lexicon`) and the share
  of the block's words the lexicon knows.

Static noise is removed before blocks are built (a hard filter: it costs < 1 % recall, see
``newsclean eval``), so it is no feature. All features are floats; booleans are 0/1.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lxml import etree

from newsclean.transforms.ancestor_filter import AncestorFilterParams, ancestor_filter, nth_ancestor, paragraph_of
from newsclean.transforms.blocks import TextBlock
from newsclean.transforms.boilerpipe import BoilerpipeParams, classify_blocks
from newsclean.transforms.lexicon import LEXICON_FEATURE_NAMES, block_terms, lexicon_features
from newsclean.transforms.marks import DYNAMIC, mark_of
from newsclean.transforms.text import words

NEGATIVE_WORDS = (
    "comment", "nav", "footer", "foot", "sidebar", "side", "related", "share", "social", "promo",
    "menu", "breadcrumb", "widget", "subscribe", "newsletter", "copyright", "tag", "advert", "ad-",
    "banner", "popular", "recommend", "more", "login", "signup", "author", "byline", "caption", "disqus",
)
POSITIVE_WORDS = ("article", "content", "story", "body", "post", "entry", "text", "main", "blog", "news")
SEMANTIC_TAGS = ("nav", "footer", "header", "aside", "article", "main", "li", "table", "blockquote", "figure")
CONTAINER_CLASSES = {
    "p": 1, "div": 2, "li": 3, "td": 4, "th": 4, "h1": 5, "h2": 5, "h3": 5, "h4": 6, "h5": 6, "h6": 6,
    "a": 7, "span": 8, "pre": 9, "blockquote": 9, "dd": 10, "dt": 10, "section": 2, "article": 2,
    "font": 8, "b": 8, "strong": 8, "em": 8, "i": 8, "center": 2, "body": 11, "form": 11,
}
BOILERPLATE_PHRASES = (
    "share", "related", "read more", "copyright", "all rights reserved", "sign up", "subscribe",
    "advertisement", "follow us", "newsletter", "comments", "log in", "privacy", "terms of",
    "cookie", "click here", "most popular", "you may also", "recommended", "tags:", "posted by",
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$|[\"'”’)])")
_TOKEN_RE = re.compile(r"[\w-]+")

TABLE_FEATURE_NAMES = (
    "table_cells_log", "table_nesting", "table_word_share", "table_link_density", "table_has_th",
    "table_in_best_cluster",
)
_SHALLOW = ("words_log", "link_density", "text_density", "avg_word_len", "capital_ratio", "stop_ratio")
FEATURE_NAMES = (
    *_SHALLOW,
    *(f"prev_{n}" for n in _SHALLOW),
    *(f"next_{n}" for n in _SHALLOW),
    "comma_ratio", "digit_ratio", "chars_log",
    "dynamic_noise", "bp_alg1", "bp_alg2", "anc_group", "anc_subtree", "anc_group_share",
    "container_class", *(f"in_{t}" for t in SEMANTIC_TAGS),
    "neg_words", "pos_words", "neg_words_near", "pos_words_near", "depth",
    "rel_position", "page_word_share", "title_overlap", "is_title",
    "blocks_log", "has_signature", "para_siblings_log", "para_words_share",
    "boiler_phrases", "cluster_score_parent", "cluster_score_grandparent", "in_best_cluster",
    "prev2_words_log", "prev2_link_density", "next2_words_log", "next2_link_density",
    *TABLE_FEATURE_NAMES,
    *LEXICON_FEATURE_NAMES,
)


@dataclass(frozen=True)
class PageContext:
    """Page-level inputs of the features: the title (or None) and whether static noise was learnt."""

    title: str | None = None
    has_signature: bool = False


def _shallow(block: TextBlock | None, ws: Sequence[str] = ()) -> list[float]:
    """Shallow features of ``block`` (zeros for None); ``ws`` its :func:`words`."""
    if block is None:
        return [0.0] * len(_SHALLOW)
    n = max(1, len(ws))
    return [
        math.log1p(block.num_words), block.link_density, block.text_density,
        sum(map(len, ws)) / n,
        sum(1 for w in ws if w[:1].isupper()) / n,
        len(_SENTENCE_END.findall(block.text + " ")) / n if ws else 0.0,
    ]


def _near(blocks: Sequence[TextBlock], i: int) -> list[float]:
    if 0 <= i < len(blocks):
        return [math.log1p(blocks[i].num_words), blocks[i].link_density]
    return [0.0, 0.0]


def _class_id_words(el: etree._Element) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''}".lower()


class _AncestorCache:
    """Per-container DOM context, computed once per element from its parent's (one walk per page)."""

    _SEMANTIC_BITS = {t: 1 << k for k, t in enumerate(SEMANTIC_TAGS)}

    def __init__(self):
        self._cache: dict[etree._Element, list[float]] = {}
        self._path: dict[etree._Element, tuple[int, int, int, int]] = {}  # tag mask, neg, pos, depth
        self._own: dict[etree._Element, tuple[int, int]] = {}

    def features(self, el: etree._Element) -> list[float]:
        """Container class, enclosing semantic tags (0/1 each), negative/positive class-id words
        on the path to the root and on the element's first 3 levels, depth (elements to the root)."""
        if el not in self._cache:
            mask, neg, pos, depth = self._path_of(el)
            neg_near = pos_near = 0
            node = el
            for _ in range(3):
                if node is None:
                    break
                n_neg, n_pos = self._own_words(node)
                neg_near, pos_near = neg_near + n_neg, pos_near + n_pos
                node = node.getparent()
            self._cache[el] = [
                float(CONTAINER_CLASSES.get(el.tag, 0)),
                *(float(bool(mask & bit)) for bit in self._SEMANTIC_BITS.values()),
                float(neg), float(pos), float(neg_near), float(pos_near), float(depth),
            ]
        return self._cache[el]

    def _own_words(self, el: etree._Element) -> tuple[int, int]:
        """Negative and positive words in ``el``'s own class and id."""
        if el not in self._own:
            names = _class_id_words(el)
            self._own[el] = ((sum(w in names for w in NEGATIVE_WORDS), sum(w in names for w in POSITIVE_WORDS))
                             if names.strip() else (0, 0))
        return self._own[el]

    def _path_of(self, el: etree._Element) -> tuple[int, int, int, int]:
        """(semantic-tag mask, negative words, positive words, depth) of ``el`` and all its ancestors."""
        chain = []
        node = el
        while node is not None and node not in self._path:
            chain.append(node)
            node = node.getparent()
        mask, neg, pos, depth = self._path[node] if node is not None else (0, 0, 0, 0)
        for node in reversed(chain):
            n_neg, n_pos = self._own_words(node)
            tag = node.tag if isinstance(node.tag, str) else ""
            mask, neg, pos, depth = mask | self._SEMANTIC_BITS.get(tag, 0), neg + n_neg, pos + n_pos, depth + 1
            self._path[node] = (mask, neg, pos, depth)
        return self._path[el]


def in_dynamic_noise(block: TextBlock) -> bool:
    """True when the block's first text lies inside an element marked as dynamic noise."""
    el, slot = block.pieces[0]
    node = el if slot == "text" else el.getparent()
    while node is not None:
        if mark_of(node) == DYNAMIC:
            return True
        node = node.getparent()
    return False


def _paper_decisions(blocks: Sequence[TextBlock], dynamic: Sequence[bool]) -> list[list[float]]:
    """Boilerpipe 1/2 and ancestor-filter results on the non-dynamic blocks (as the paper chain sees them)."""
    idx = [i for i, d in enumerate(dynamic) if not d]
    sub = [blocks[i] for i in idx]
    alg1 = classify_blocks(sub, BoilerpipeParams(algorithm=1))
    alg2 = classify_blocks(sub, BoilerpipeParams(algorithm=2))
    anc = ancestor_filter(sub, alg2, AncestorFilterParams())
    groups: dict[etree._Element, int] = {}
    anchor = {}
    for j, b in enumerate(sub):
        if alg2[j]:
            a = nth_ancestor(paragraph_of(b.container), 2)
            anchor[j] = a
            groups[a] = groups.get(a, 0) + len(b.text)
    total = sum(groups.values()) or 1
    best = max(groups, key=groups.__getitem__) if groups else None
    inside = set(best.iter()) if best is not None else set()
    out = [[0.0, 0.0, 0.0, 0.0, 0.0] for _ in blocks]
    for j, i in enumerate(idx):
        share = groups.get(anchor.get(j), 0) / total if j in anchor else 0.0
        out[i] = [float(alg1[j]), float(alg2[j]), float(anc[j]), float(blocks[i].container in inside), share]
    return out


def _title_features(block: TextBlock, title_tokens: set[str], title_text: str) -> list[float]:
    toks = set(_TOKEN_RE.findall(block.text.lower()))
    overlap = len(toks & title_tokens) / len(toks) if toks and title_tokens else 0.0
    text = block.text.strip().lower()
    is_title = float(bool(text) and bool(title_text) and (text == title_text or (len(text) > 15 and text in title_text)))
    return [overlap, is_title]


def _cluster_scores(blocks: Sequence[TextBlock]) -> tuple[dict, dict, list[etree._Element]]:
    """Readability-style content score per element: each block adds 1 + commas + min(chars / 100, 3)
    (non-link blocks only) to its paragraph's parent, and half of it to the grandparent."""
    scores: dict[etree._Element, float] = {}
    parents, grands = [], []
    for b in blocks:
        para = paragraph_of(b.container)
        parent = para.getparent() if para.getparent() is not None else para
        grand = parent.getparent() if parent.getparent() is not None else parent
        parents.append(parent)
        grands.append(grand)
        if b.link_density > 0.5:
            continue
        add = 1 + b.text.count(",") + min(len(b.text) / 100, 3)
        scores[parent] = scores.get(parent, 0.0) + add
        scores[grand] = scores.get(grand, 0.0) + add / 2
    return scores, {"parents": parents, "grands": grands}, [max(scores, key=scores.__getitem__)] if scores else []


_NO_LEXICON = [0.0] * len(LEXICON_FEATURE_NAMES)
_OWN_CELLS = "./tr/td | ./tr/th | ./*/tr/td | ./*/tr/th"  # a table's cells, not those of tables nested in them


def _nearest_table(el: etree._Element) -> etree._Element | None:
    node = el
    while node is not None and node.tag != "table":
        node = node.getparent()
    return node


def _table_features(blocks: Sequence[TextBlock], page_words: int, best_nodes: set) -> list[list[float]]:
    """Per block, its nearest enclosing ``<table>``: log(1 + its own cells), tables enclosing it (layout
    tables nest, data tables seldom do), its share of the page's words in [0, 1], its link density
    in [0, 1], whether it has ``<th>`` headers, whether it lies in the best content cluster;
    all 0 outside tables. Data tables inside an article are content, layout tables hold the page."""
    tables = [_nearest_table(b.container) for b in blocks]
    words_in: dict[etree._Element, list[int]] = {}
    for b, t in zip(blocks, tables):
        if t is not None:
            acc = words_in.setdefault(t, [0, 0])
            acc[0] += b.num_words
            acc[1] += b.num_linked_words
    stats = {}
    for t, (n, linked) in words_in.items():
        own = t.xpath(_OWN_CELLS)
        cells = len(own)
        nesting = sum(1 for _ in t.iterancestors("table"))
        has_th = float(any(c.tag == "th" for c in own))
        stats[t] = [math.log1p(cells), float(nesting), n / page_words, linked / n if n else 0.0, has_th,
                    float(t in best_nodes)]
    empty = [0.0] * len(TABLE_FEATURE_NAMES)
    return [stats[t] if t is not None else empty for t in tables]


def block_features(blocks: Sequence[TextBlock], ctx: PageContext = PageContext(),
                   lexicon: Mapping[str, float] | None = None) -> list[list[float]]:
    """Feature vectors (``len(FEATURE_NAMES)`` floats) for ``blocks`` in document order.

    ``lexicon``: boilerplate cue words (:mod:`newsclean.transforms.lexicon`); None leaves the lexical
    features at 0 (the training script fills them in, out of fold).
    """
    n = len(blocks)
    dynamic = [in_dynamic_noise(b) for b in blocks]
    decisions = _paper_decisions(blocks, dynamic)
    cache = _AncestorCache()
    page_words = sum(b.num_words for b in blocks) or 1
    title_text = (ctx.title or "").strip().lower()
    title_tokens = set(_TOKEN_RE.findall(title_text))
    para_words: dict[etree._Element, int] = {}
    paras = [paragraph_of(b.container).getparent() for b in blocks]
    for b, p in zip(blocks, paras):
        para_words[p] = para_words.get(p, 0) + b.num_words
    scores, owners, best = _cluster_scores(blocks)
    top = max(scores.values(), default=1.0) or 1.0
    best_nodes = set(best[0].iter()) if best else set()
    table = _table_features(blocks, page_words, best_nodes)
    block_words = [words(b.text) for b in blocks]
    shallow = [_shallow(b, ws) for b, ws in zip(blocks, block_words)] + [_shallow(None)]  # -1 and n: the empty block
    rows = []
    for i, b in enumerate(blocks):
        ws = block_words[i]
        lower = b.text.lower()
        nw = max(1, len(ws))
        parent = paras[i]
        rows.append([
            *shallow[i], *shallow[i - 1 if i else -1], *shallow[i + 1 if i + 1 < n else -1],
            b.text.count(",") / nw, sum(map(str.isdigit, b.text)) / max(1, len(b.text)), math.log1p(len(b.text)),
            float(dynamic[i]), *decisions[i],
            *cache.features(b.container),
            i / max(1, n - 1), b.num_words / page_words, *_title_features(b, title_tokens, title_text),
            math.log1p(n), float(ctx.has_signature),
            math.log1p(len(parent) if parent is not None else 0), para_words.get(parent, 0) / page_words,
            float(sum(ph in lower for ph in BOILERPLATE_PHRASES)),
            scores.get(owners["parents"][i], 0.0) / top, scores.get(owners["grands"][i], 0.0) / top,
            float(b.container in best_nodes),
            *_near(blocks, i - 2), *_near(blocks, i + 2),
            *table[i],
            *(lexicon_features(block_terms(b.text), lexicon) if lexicon is not None else _NO_LEXICON),
        ])
    return rows


CONTEXT_FEATURE_NAMES = (
    "p_prev2", "p_prev1", "p_self", "p_next1", "p_next2",
    "p_parent_mean", "p_grand_mean", "p_page_mean", "p_page_max", "p_run_log",
)


def context_groups(blocks: Sequence[TextBlock]) -> list[tuple[int, int]]:
    """Per block, small integer ids of its paragraph's parent and grandparent (shared id = same element)."""
    ids: dict[etree._Element, int] = {}
    out = []
    for b in blocks:
        para = paragraph_of(b.container)
        parent = para.getparent() if para.getparent() is not None else para
        grand = parent.getparent() if parent.getparent() is not None else parent
        out.append((ids.setdefault(parent, len(ids)), ids.setdefault(grand, len(ids))))
    return out


def _weighted_means(p: Sequence[float], keys: Sequence[int], weights: Sequence[float]) -> list[float]:
    num: dict[int, float] = {}
    den: dict[int, float] = {}
    for pi, k, w in zip(p, keys, weights):
        num[k] = num.get(k, 0.0) + pi * w
        den[k] = den.get(k, 0.0) + w
    return [num[k] / den[k] if den[k] else 0.0 for k in keys]


def _runs(p: Sequence[float], threshold: float = 0.5) -> list[float]:
    """log(1 + length of the run of same-side blocks (p >= threshold or not) that holds each block)."""
    out = [0.0] * len(p)
    start = 0
    for i in range(1, len(p) + 1):
        if i == len(p) or (p[i] >= threshold) != (p[start] >= threshold):
            for j in range(start, i):
                out[j] = math.log1p(i - start)
            start = i
    return out


def context_features(p: Sequence[float], groups: Sequence[tuple[int, int]], word_counts: Sequence[int]) -> list[list[float]]:
    """Second-stage features (:data:`CONTEXT_FEATURE_NAMES`) from first-stage content probabilities
    ``p`` in [0, 1] of a page's blocks in document order, their :func:`context_groups` and word counts."""
    n = len(p)
    if not n:
        return []
    weights = [max(1, w) for w in word_counts]
    parent = _weighted_means(p, [g[0] for g in groups], weights)
    grand = _weighted_means(p, [g[1] for g in groups], weights)
    page_mean = sum(pi * w for pi, w in zip(p, weights)) / sum(weights)
    page_max = max(p)
    runs = _runs(p)
    at = lambda i: p[i] if 0 <= i < n else 0.0  # noqa: E731
    return [[at(i - 2), at(i - 1), p[i], at(i + 1), at(i + 2), parent[i], grand[i], page_mean, page_max, runs[i]]
            for i in range(n)]

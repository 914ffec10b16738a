"""Block features for the learned block classifier: the papers' signals plus DOM context.

Every text block (Kohlschütter 2010 §3.3 segmentation, inline tags not separating) gets one row of
:func:`block_features`'s matrix (float64, columns :data:`FEATURE_NAMES`, the order the model files
record). The columns are built by name in the groups of :data:`FEATURE_GROUPS`, one function per
group over the whole page (``_<group>_group``), from what the page's blocks share (:class:`_Page`):

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
- boilerplate cue words learnt from the training blocks (:mod:`newsclean.transforms.classifier.lexicon`) and the share
  of the block's words the lexicon knows.

Static noise is removed before blocks are built (a hard filter: it costs < 1 % recall, see
``newsclean eval``), so it is no feature. All features are floats; booleans are 0/1. Work is linear
in the page's blocks and elements (each element's DOM context and child count computed once).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import AncestorFilterParams, ancestor_groups
from newsclean.transforms.boilerpipe import BoilerpipeParams, classify_blocks
from newsclean.transforms.classifier.lexicon import block_terms, lexicon_features
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import class_id_words, cue_words, paragraph_of, under_any
from newsclean.transforms.marks import mark_of
from newsclean.transforms.site_profile import PathDigests, SiteProfile, content_support, text_digest
from newsclean.transforms.structure import PathMarks, blocks_body_support
from newsclean.transforms.types import TextBlock
from newsclean.transforms.vocab import (
    BOILERPLATE_PHRASES,
    CONTAINER_CLASSES,
    DYNAMIC,
    FEATURE_GROUPS,
    FEATURE_INDEX,
    FEATURE_NAMES,
    LEXICON_FEATURE_NAMES,
    SEMANTIC_TAGS,
    SITE_FEATURE_NAMES,
    STRUCTURE_FEATURE_NAMES,
    TABLE_FEATURE_NAMES,
    TITLE_TOKEN,
)

_SENTENCE_END = re.compile(r"[.!?](?:\s|$|[\"'”’)])")
_first_char = operator.itemgetter(0)

@dataclass
class _Page:
    """What several feature groups share for one page's blocks (computed once)."""

    blocks: Sequence[TextBlock]
    ctx: PageContext
    lexicon: Mapping[str, float] | None
    words: list[list[str]]  # per block, newsclean.transforms.text.words
    paragraphs: list[etree._Element]  # per block, dom.paragraph_of its container
    page_words: int  # words on the page, at least 1

    @property
    def n(self) -> int:
        return len(self.blocks)

    @cached_property
    def clusters(self) -> tuple[dict, list, list, _Subtree]:
        """:func:`_cluster_scores` and the best cluster's subtree (:class:`_Subtree`; empty: none)."""
        scores, parents, grands, best = _cluster_scores(self)
        return scores, parents, grands, _Subtree(best)


class _Subtree:
    """``el in _Subtree(top)`` is ``el in set(top.iter())`` for an element ``el`` (False for every ``el`` when
    ``top`` is None), answered by walking up from ``el``; each element's answer is kept, so that the
    walks of a page's blocks are linear in the elements above them (no proxy for every element below ``top``)."""

    def __init__(self, top: etree._Element | None):
        self.top = top
        self._memo: dict[etree._Element, bool] = {}

    def __contains__(self, el: etree._Element) -> bool:
        if self.top is None:
            return False
        memo, path, node = self._memo, [], el
        while node is not None and node is not self.top and node not in memo:
            path.append(node)
            node = node.getparent()
        answer = node is self.top or (node is not None and memo[node])
        for visited in path:
            memo[visited] = answer
        return answer


def _shallow_row(block: TextBlock, ws: Sequence[str]) -> list[float]:
    """Shallow features (:data:`SHALLOW_FEATURE_NAMES`) of ``block``; ``ws`` its :func:`words`."""
    n = max(1, len(ws))
    return [
        math.log1p(block.num_words), block.link_density, block.text_density,
        sum(map(len, ws)) / n,
        sum(map(str.isupper, map(_first_char, ws))) / n,  # words are never empty
        len(_SENTENCE_END.findall(block.text + " ")) / n if ws else 0.0,
    ]


def _shallow_group(page: _Page) -> np.ndarray:
    """Shallow features of each block, of the previous and of the next one (zeros beyond the ends)."""
    own = np.array([_shallow_row(b, ws) for b, ws in zip(page.blocks, page.words)], dtype=float).reshape(page.n, -1)
    prev, nxt = np.zeros_like(own), np.zeros_like(own)
    prev[1:], nxt[:-1] = own[:-1], own[1:]
    return np.hstack([own, prev, nxt])


_ASCII_DIGITS = b"0123456789"


def _digits(text: str) -> int:
    """Characters of ``text`` for which ``str.isdigit`` holds (ASCII text: its bytes less those with the digits
    deleted, in C: 5x faster than ten counts; tests/transforms/test_chain_speedups.py checks it against the definition)."""
    if text.isascii():
        return len(text) - len(text.encode("ascii").translate(None, _ASCII_DIGITS))
    return sum(map(str.isdigit, text))


def _text_group(page: _Page) -> np.ndarray:
    """Commas per word, digits per character, log(1 + characters), boilerplate phrases held."""
    rows = []
    for b, ws in zip(page.blocks, page.words):
        lower = b.text.lower()
        rows.append([b.text.count(",") / max(1, len(ws)), _digits(b.text) / max(1, len(b.text)),
                     math.log1p(len(b.text)), float(sum(map(lower.__contains__, BOILERPLATE_PHRASES)))])
    return np.array(rows, dtype=float).reshape(page.n, -1)


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
                float(CONTAINER_CLASSES.get(el.tag, 0)), *_mask_flags(mask),
                float(neg), float(pos), float(neg_near), float(pos_near), float(depth),
            ]
        return self._cache[el]

    def _own_words(self, el: etree._Element) -> tuple[int, int]:
        """Negative and positive words in ``el``'s own class and id."""
        if el not in self._own:
            self._own[el] = cue_words(class_id_words(el))
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


@lru_cache(maxsize=1024)
def _mask_flags(mask: int) -> tuple[float, ...]:
    """0/1 per tag of :data:`SEMANTIC_TAGS`: whether ``mask`` (:attr:`_AncestorCache._SEMANTIC_BITS`) holds it."""
    return tuple(float(bool(mask & bit)) for bit in _AncestorCache._SEMANTIC_BITS.values())


def _dom_group(page: _Page) -> np.ndarray:
    """Container tag class, enclosing semantic tags, class/id cue words, depth (:class:`_AncestorCache`)."""
    cache = _AncestorCache()
    return np.array([cache.features(b.container) for b in page.blocks], dtype=float).reshape(page.n, -1)


def in_dynamic_noise(block: TextBlock) -> bool:
    """True when the block's first text lies inside an element marked as dynamic noise."""
    el, slot = block.pieces[0]
    node = el if slot == "text" else el.getparent()
    while node is not None:
        if mark_of(node) == DYNAMIC:
            return True
        node = node.getparent()
    return False


def _dynamic_flags(blocks: Sequence[TextBlock]) -> list[bool]:
    """:func:`in_dynamic_noise` of every block, each element's answer computed once (linear in the tree)."""
    firsts = (el if slot == "text" else el.getparent() for el, slot in (b.pieces[0] for b in blocks))
    return under_any(firsts, lambda node: mark_of(node) == DYNAMIC)


def _papers_group(page: _Page) -> np.ndarray:
    """Inside dynamic noise; on the other blocks, Boilerpipe Algorithm 1 and 2 decisions, the ancestor
    filter's decision on Algorithm 2's blocks, membership of the winning ancestor's subtree and the
    share of content characters of the block's group (:func:`ancestor_groups`), as the paper chain sees them."""
    dynamic = _dynamic_flags(page.blocks)
    idx = [i for i, d in enumerate(dynamic) if not d]
    sub = [page.blocks[i] for i in idx]
    alg1 = classify_blocks(sub, BoilerpipeParams(algorithm=1))
    alg2 = classify_blocks(sub, BoilerpipeParams(algorithm=2))
    groups = ancestor_groups(sub, alg2, AncestorFilterParams())
    inside = _Subtree(groups.best)
    out = np.zeros((page.n, len(FEATURE_GROUPS["papers"])))
    out[:, 0] = dynamic
    if idx:  # one assignment of all rows (a numpy row assignment per block costs more than the row)
        out[idx, 1:] = [[float(alg1[j]), float(alg2[j]), float(bool(alg2[j]) and groups.in_best(j)),
                         float(page.blocks[i].container in inside), groups.share(j)] for j, i in enumerate(idx)]
    return out


def _title_features(block: TextBlock, title_tokens: set[str], title_text: str) -> list[float]:
    """Share of the block's distinct tokens found in the title's, and whether the block is (part of) the title;
    both 0 without a title."""
    if not title_text:  # no title tokens either: both features are 0
        return [0.0, 0.0]
    toks = set(TITLE_TOKEN.findall(block.text.lower())) if title_tokens else None
    overlap = len(toks & title_tokens) / len(toks) if toks else 0.0
    text = block.text.strip().lower()
    is_title = float(bool(text) and (text == title_text or (len(text) > 15 and text in title_text)))
    return [overlap, is_title]


def _page_group(page: _Page) -> np.ndarray:
    """Relative position in [0, 1], share of the page's words, title overlap and match, log(1 + blocks),
    whether static noise was learnt. The per-page and per-position columns are filled as arrays (the same
    float64 divisions as Python's ``/``)."""
    n = page.n
    title_text = (page.ctx.title or "").strip().lower()
    title_tokens = set(TITLE_TOKEN.findall(title_text))
    out = np.empty((n, len(FEATURE_GROUPS["page"])))
    out[:, 0] = np.arange(n) / max(1, n - 1)
    out[:, 1] = np.fromiter((b.num_words for b in page.blocks), dtype=np.int64, count=n) / page.page_words
    if n:
        out[:, 2:4] = [_title_features(b, title_tokens, title_text) for b in page.blocks]
    out[:, 4] = math.log1p(n)
    out[:, 5] = float(page.ctx.has_signature)
    return out


def _cluster_scores(page: _Page) -> tuple[dict, list, list, etree._Element | None]:
    """Readability-style content score per element: each block adds 1 + commas + min(chars / 100, 3)
    (non-link blocks only) to its paragraph's parent, and half of it to the grandparent.
    Returns the scores, each block's parent and grandparent, and the best-scored element (None: none)."""
    scores: dict[etree._Element, float] = {}
    parents, grands = [], []
    for b, para in zip(page.blocks, page.paragraphs):
        parent = para.getparent() if para.getparent() is not None else para
        grand = parent.getparent() if parent.getparent() is not None else parent
        parents.append(parent)
        grands.append(grand)
        if b.link_density > 0.5:
            continue
        add = 1 + b.text.count(",") + min(len(b.text) / 100, 3)
        scores[parent] = scores.get(parent, 0.0) + add
        scores[grand] = scores.get(grand, 0.0) + add / 2
    return scores, parents, grands, max(scores, key=scores.__getitem__) if scores else None


def _cluster_group(page: _Page) -> np.ndarray:
    """log(1 + children of the paragraph's parent), that parent's share of the page's words, the
    cluster scores of parent and grandparent relative to the page's best, inside the best cluster."""
    containers: list[etree._Element | None] = [para.getparent() for para in page.paragraphs]
    para_words: dict[etree._Element | None, int] = {}
    children: dict[etree._Element | None, int] = {}
    for b, p in zip(page.blocks, containers):
        para_words[p] = para_words.get(p, 0) + b.num_words
        if p not in children:
            children[p] = len(p) if p is not None else 0  # len() of an lxml element walks its children: once each
    scores, parents, grands, best_nodes = page.clusters
    top = max(scores.values(), default=1.0) or 1.0
    return np.array([[math.log1p(children[p]), para_words.get(p, 0) / page.page_words,
                      scores.get(parents[i], 0.0) / top, scores.get(grands[i], 0.0) / top,
                      float(b.container in best_nodes)]
                     for i, (b, p) in enumerate(zip(page.blocks, containers))], dtype=float).reshape(page.n, -1)


def _neighbours_group(page: _Page) -> np.ndarray:
    """log(1 + words) and link density of the blocks two before and two after (zeros beyond the ends)."""
    own = np.array([[math.log1p(b.num_words), b.link_density] for b in page.blocks], dtype=float).reshape(page.n, 2)
    before, after = np.zeros_like(own), np.zeros_like(own)
    before[2:], after[:-2] = own[:-2], own[2:]
    return np.hstack([before, after])


_OWN_CELLS = "./tr/td | ./tr/th | ./*/tr/td | ./*/tr/th"  # a table's cells, not those of tables nested in them


def _nearest_table(el: etree._Element) -> etree._Element | None:
    node = el
    while node is not None and node.tag != "table":
        node = node.getparent()
    return node


def _table_group(page: _Page) -> np.ndarray:
    """Per block, its nearest enclosing ``<table>``: log(1 + its own cells), tables enclosing it (layout
    tables nest, data tables seldom do), its share of the page's words in [0, 1], its link density
    in [0, 1], whether it has ``<th>`` headers, whether it lies in the best content cluster;
    all 0 outside tables. Data tables inside an article are content, layout tables hold the page."""
    blocks = page.blocks
    tables = [_nearest_table(b.container) for b in blocks]
    out = np.zeros((page.n, len(TABLE_FEATURE_NAMES)))
    if not any(t is not None for t in tables):
        return out
    best_nodes = page.clusters[3]
    words_in: dict[etree._Element, list[int]] = {}
    for b, t in zip(blocks, tables):
        if t is not None:
            acc = words_in.setdefault(t, [0, 0])
            acc[0] += b.num_words
            acc[1] += b.num_linked_words
    stats = {}
    for t, (n, linked) in words_in.items():
        own = t.xpath(_OWN_CELLS)
        nesting = sum(1 for _ in t.iterancestors("table"))
        has_th = float(any(c.tag == "th" for c in own))
        stats[t] = [math.log1p(len(own)), float(nesting), n / page.page_words, linked / n if n else 0.0, has_th,
                    float(t in best_nodes)]
    for i, t in enumerate(tables):
        if t is not None:
            out[i] = stats[t]
    return out


def _lexicon_group(page: _Page) -> np.ndarray:
    """Boilerplate log-odds mean and max of the block's known words and their share (:mod:`newsclean.transforms.classifier.lexicon`);
    zeros without a lexicon."""
    if page.lexicon is None:
        return np.zeros((page.n, len(LEXICON_FEATURE_NAMES)))
    return np.array([lexicon_features(block_terms(b.text), page.lexicon) for b in page.blocks],
                    dtype=float).reshape(page.n, -1)


def _site_group(page: _Page) -> np.ndarray:
    """Per-site evidence of each block (:func:`newsclean.transforms.site_profile.site_features`); zeros without a profile."""
    return site_features(page.blocks, page.ctx.site)


def _structure_group(page: _Page) -> np.ndarray:
    """Article containers, body class/id names and JSON-LD ``articleBody`` support (:mod:`newsclean.transforms.structure`)."""
    return structure_features(page.blocks, page.ctx.article_body)


def site_features(blocks: Sequence[TextBlock], profile: SiteProfile | None) -> np.ndarray:
    """Per block the :data:`SITE_FEATURE_NAMES` columns, shape ``(len(blocks), 7)``, all ratios in [0, 1]:

    - site_in_content: consensus support of the site's content container around the block (0: outside);
    - site_content_here: share of this page's words inside the site's content containers;
    - site_path_support / _word_share / _text_varies / _link_density: the stats of the block's container path
      (0 when the path recurs on fewer than ``min_support`` neighbours);
    - site_text_support: share of neighbours holding the block's exact text (case and whitespace folded).

    All zeros without a profile. The compiled kernel computes the same where
    :func:`newsclean.transforms.kernel.enabled` holds.
    """
    out = np.zeros((len(blocks), len(SITE_FEATURE_NAMES)))
    if profile is None or not blocks:
        return out
    return _site_columns(blocks, dict(profile.content), profile.structures(), profile.texts())


@kernel.twin("site_columns", adapt=lambda columns, blocks, *profile: columns(list(blocks), *profile))
def _site_columns(blocks: Sequence[TextBlock], content: dict, structures: dict, texts: dict) -> np.ndarray:
    """:func:`site_features` of a page with blocks, given its profile's content containers, structures and texts."""
    out = np.zeros((len(blocks), len(SITE_FEATURE_NAMES)))
    digests = PathDigests()
    memo: dict[etree._Element, float] = {}
    page_words = sum(b.num_words for b in blocks) or 1
    for i, b in enumerate(blocks):
        out[i, 0] = content_support(b.container, digests, content, memo)
        out[i, 2:6] = structures.get(digests(b.container), (0.0, 0.0, 0.0, 0.0))
        out[i, 6] = texts.get(text_digest(b.text), 0.0)
    out[:, 1] = sum(b.num_words for i, b in enumerate(blocks) if out[i, 0] > 0) / page_words
    return out


def structure_features(blocks: Sequence[TextBlock], article_body: str | None = None) -> np.ndarray:
    """The :data:`STRUCTURE_FEATURE_NAMES` of ``blocks`` (one page, document order): shape
    ``(len(blocks), 8)``, float64. ``article_body``: the page's JSON-LD/microdata ``articleBody`` text
    (None or empty: the ``ld_*`` columns are 0). Linear in the blocks and the elements above them. The compiled
    kernel computes the same where :func:`newsclean.transforms.kernel.enabled` holds."""
    out = np.zeros((len(blocks), len(STRUCTURE_FEATURE_NAMES)))
    if not blocks:
        return out
    page_words = sum(b.num_words for b in blocks) or 1
    body = blocks_body_support(blocks, article_body)
    coverage = min(1.0, body.body_words / page_words) if body is not None else 0.0
    return _structure_columns(blocks, body, coverage, page_words)


def _compiled_structure(columns, blocks: Sequence[TextBlock], body, coverage: float, page_words: int) -> np.ndarray:
    return columns(list(blocks), body.support if body is not None else None, coverage)


@kernel.twin("structure_columns", adapt=_compiled_structure)
def _structure_columns(blocks: Sequence[TextBlock], body, coverage: float, page_words: int) -> np.ndarray:
    """:func:`structure_features` of a page with blocks, given its ``articleBody`` support (None: none), the share
    of the page's words that body covers and the page's words (at least 1)."""
    out = np.zeros((len(blocks), len(STRUCTURE_FEATURE_NAMES)))
    marks = PathMarks()
    states = [marks.of(b.container) for b in blocks]
    held: dict[etree._Element, int] = {}
    for b, (_, _, _, nearest) in zip(blocks, states):
        if nearest is not None:
            held[nearest] = held.get(nearest, 0) + b.num_words
    totals = dict(held)  # a container's words include those of the containers nested in it
    for inner, n in held.items():
        for anc in inner.iterancestors():
            if anc in held:
                totals[anc] += n
    has_container = float(bool(held))
    for i, (container, body_prop, body_name, nearest) in enumerate(states):
        out[i] = [
            float(container), float(body_prop), float(body_name),
            totals[nearest] / page_words if nearest is not None else 0.0,
            has_container,
            body.support[i] if body is not None else 0.0,
            float(body is not None), coverage,
        ]
    return out


_GROUP_FUNCTIONS = {
    "shallow": _shallow_group, "text": _text_group, "papers": _papers_group, "dom": _dom_group,
    "page": _page_group, "cluster": _cluster_group, "neighbours": _neighbours_group, "table": _table_group,
    "lexicon": _lexicon_group, "site": _site_group, "structure": _structure_group,
}


def block_features(blocks: Sequence[TextBlock], ctx: PageContext = PageContext(),
                   lexicon: Mapping[str, float] | None = None, names: Sequence[str] = FEATURE_NAMES) -> np.ndarray:
    """Feature matrix of ``blocks`` in document order: shape ``(len(blocks), len(names))``, float64,
    columns ``names`` (default every feature, in :data:`FEATURE_NAMES` order: a model file records
    the names it was trained on). Only the groups of :data:`FEATURE_GROUPS` holding one of ``names``
    are computed, each filling its columns by name.

    ``lexicon``: boilerplate cue words (:mod:`newsclean.transforms.classifier.lexicon`); None leaves the lexical
    features at 0 (the training script fills them in, out of fold).

    Raises:
        KeyError: a name of ``names`` that no group computes.
    """
    feature_columns(names)  # unknown names fail here, before any work
    if not blocks:
        return np.zeros((0, len(names)))
    column = {n: k for k, n in enumerate(names)}
    groups = [group for group, group_names in FEATURE_GROUPS.items() if any(n in column for n in group_names)]
    compiled, done = _compiled_groups(blocks, ctx, lexicon, groups)
    if compiled is not None and all(n in done for n in names):
        return compiled if tuple(names) == FEATURE_NAMES else compiled[:, feature_columns(names)]
    page = None
    X = np.empty((len(blocks), len(names)))
    for group in groups:
        group_names = FEATURE_GROUPS[group]
        wanted = [k for k, n in enumerate(group_names) if n in column]
        if group_names[0] in done:
            X[:, [column[group_names[k]] for k in wanted]] = compiled[:, [FEATURE_INDEX[group_names[k]] for k in wanted]]
            continue
        if page is None:
            ws = [b.words for b in blocks]  # computed once, by the block builder
            page = _Page(blocks, ctx, lexicon, ws, [paragraph_of(b.container) for b in blocks],
                         sum(b.num_words for b in blocks) or 1)
        X[:, [column[group_names[k]] for k in wanted]] = _GROUP_FUNCTIONS[group](page)[:, wanted]
    return X


def _kernel_groups(block_features, kernel_groups: Sequence[str], blocks: Sequence[TextBlock], ctx: PageContext,
                   lexicon: Mapping[str, float] | None, groups: Sequence[str]) -> tuple[np.ndarray, frozenset[str]]:
    if not any(g in kernel_groups for g in groups):
        raise kernel.Unsupported("none of the groups asked for")
    matrix = block_features(list(blocks), ctx, lexicon)
    return matrix, frozenset(n for g in kernel_groups for n in FEATURE_GROUPS[g])


@kernel.twin("block_features", "KERNEL_GROUPS", adapt=_kernel_groups, compare=kernel.CALLER)
def _compiled_groups(blocks: Sequence[TextBlock], ctx: PageContext, lexicon: Mapping[str, float] | None,
                     groups: Sequence[str]) -> tuple[np.ndarray | None, frozenset[str]]:
    """The compiled kernel's matrix of the groups it computes (columns in :data:`FEATURE_NAMES` order) and the
    names of its filled columns; ``(None, frozenset())`` where the kernel is off, computes none of ``groups`` or
    does not read the page (:mod:`newsclean.transforms.kernel`)."""
    return None, frozenset()


def group_feature_names(groups: Sequence[str]) -> tuple[str, ...]:
    """The features of the named groups of :data:`FEATURE_GROUPS`, in :data:`FEATURE_NAMES` order
    (what ``scripts/train_block_classifier.py --feature-groups`` trains on).

    Raises:
        KeyError: a group name :data:`FEATURE_GROUPS` lacks.
    """
    unknown = [g for g in groups if g not in FEATURE_GROUPS]
    if unknown:
        raise KeyError(f"unknown feature group(s) {', '.join(unknown)}; known: {', '.join(FEATURE_GROUPS)}")
    chosen = {n for g in groups for n in FEATURE_GROUPS[g]}
    return tuple(n for n in FEATURE_NAMES if n in chosen)


def feature_columns(names: Sequence[str]) -> list[int]:
    """Column positions of the named features in the full matrix (:data:`FEATURE_NAMES` order). Raises KeyError naming an unknown one."""
    unknown = [n for n in names if n not in FEATURE_INDEX]
    if unknown:
        raise KeyError(f"unknown block features: {', '.join(unknown)}")
    return [FEATURE_INDEX[n] for n in names]


CONTEXT_FEATURE_NAMES = (
    "p_prev2", "p_prev1", "p_self", "p_next1", "p_next2",
    "p_parent_mean", "p_grand_mean", "p_page_mean", "p_page_max", "p_run_log",
)


@kernel.twin("context_groups", adapt=lambda groups, blocks: groups(list(blocks)))
def context_groups(blocks: Sequence[TextBlock]) -> list[tuple[int, int]]:
    """Per block, small integer ids of its paragraph's parent and grandparent (shared id = same element). The compiled
    kernel computes the same where :func:`newsclean.transforms.kernel.enabled` holds."""
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


@kernel.twin("context_features")
def context_features(p: Sequence[float], groups: Sequence[tuple[int, int]], word_counts: Sequence[int]) -> np.ndarray:
    """Second-stage features (:data:`CONTEXT_FEATURE_NAMES`) from first-stage content probabilities
    ``p`` in [0, 1] of a page's blocks in document order, their :func:`context_groups` and word counts:
    shape ``(len(p), 10)``, float64 (neighbours beyond the ends are 0). The compiled kernel computes the same where
    :func:`newsclean.transforms.kernel.enabled` holds."""
    n = len(p)
    out = np.zeros((n, len(CONTEXT_FEATURE_NAMES)))
    if not n:
        return out
    weights = [max(1, w) for w in word_counts]
    probs = np.asarray(p, dtype=float)
    out[2:, 0], out[1:, 1], out[:, 2], out[:-1, 3], out[:-2, 4] = probs[:-2], probs[:-1], probs, probs[1:], probs[2:]
    out[:, 5] = _weighted_means(p, [g[0] for g in groups], weights)
    out[:, 6] = _weighted_means(p, [g[1] for g in groups], weights)
    out[:, 7] = sum(pi * w for pi, w in zip(p, weights)) / sum(weights)  # Python's sum: left to right, as trained
    out[:, 8] = max(p)
    out[:, 9] = _runs(p)
    return out

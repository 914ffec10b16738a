"""The compiled kernel against the Python reference: the same text, HTML, counts, marks, blocks, features and
scores, on generated hostile pages (``kernel_pages``) and on trees holding nodes the kernel hands back to Python.
The shared data sets' pages are compared in ``evaluation/tests/test_kernel_identity.py`` (and all of them by
``python -m newsclean_eval.kernel_identity``)."""

from __future__ import annotations

import copy
import functools
import gzip
import math
import os
import shutil
import subprocess
import sys
import sysconfig
import types
from collections import Counter

import lxml.html
import numpy as np
import pytest
from kernel_pages import HAN_KANA, all_bindings, altered_tree, han_page, han_text, hostile_page, site_pages
from lxml import etree

from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import under_any_named, under_element
from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.byline import BylineParams, _byline_boxes
from newsclean.transforms.chain import CONFIGS, _prune_empty, extract_article, prepare_blocks
from newsclean.transforms.classifier.features import (
    block_features,
    context_features,
    context_groups,
    site_features,
    structure_features,
)
from newsclean.transforms.classifier.lexicon import load_lexicon
from newsclean.transforms.classifier.model import DEFAULT_LEXICON, content_probabilities
from newsclean.transforms.dom import nth_ancestor
from newsclean.transforms.dynamic_noise import DynamicNoiseParams, mark_dynamic_noise
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.marks import strip_marks
from newsclean.transforms.noise_removal import NoiseRemovalParams, remove_non_informative
from newsclean.transforms.page_type import _folded
from newsclean.transforms.parse import parse_html
from newsclean.transforms.refine import region, teaser_cards
from newsclean.transforms.refine.consent import consent_regions
from newsclean.transforms.refine.side_content import SideContentParams, names_side_box
from newsclean.transforms.roles import LEAD, RoleParams, _Boxes
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean.transforms.site_profile import content_supports, summarise_page
from newsclean.transforms.static_noise import StaticNoiseSignature, mark_static_noise, page_keys
from newsclean.transforms.text import count_words, words
from newsclean.transforms.types import BlockParams

needs_kernel = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here")
CHAINS = ("default", "paper", "heuristic", "precision")


def _compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


def test_kernel_is_built_where_a_compiler_is():
    """``pip install`` builds the kernel where a C compiler is found (CI's clean checkout included): a failed build
    would otherwise pass every identity test by comparing Python with itself."""
    if not _compiler():
        pytest.skip("no C compiler: the pure-Python install is the expected one")
    assert kernel.available(), "a C compiler is here but transforms/_kernel was not built (pip install -e . builds it)"


def test_environment_variable_and_context_force_the_python_reference():
    code = "from newsclean.transforms import kernel; print(kernel.enabled())"
    env = {**os.environ, kernel.PURE_PYTHON_ENV: "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    with kernel.python_only():
        assert not kernel.enabled()
    assert kernel.enabled() == kernel.available()


def _paths(root: etree._Element, blocks) -> list:
    tree = root.getroottree()

    def where(el):
        return tree.getpath(el) if isinstance(el.tag, str) else (tree.getpath(el.getparent()), el.getparent().index(el))

    return [(b.text, b.num_words, b.num_linked_words, repr(b.text_density), where(b.container),
             [(where(e), s) for e, s in b.pieces]) for b in blocks]


def _outcome(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - both paths must fail alike
        return f"{type(exc).__name__}: {exc}"


def _both(fn):
    """``fn()`` with the Python reference, then with the kernel."""
    with kernel.python_only():
        reference = _outcome(fn)
    with kernel.python_only(False):
        compiled = _outcome(fn)
    return reference, compiled


def _extraction(html: str, evidence, config):
    try:
        e = extract_article(html, evidence, config)
    except ExtractionError as exc:
        return f"reject {exc.reason}: {exc}"
    return (e.title, e.text, e.html, e.word_count, e.counts, e.metadata, e.published_at, e.language, e.captions,
            e.lead, e.page_type)


def _prepared(html: str, evidence, config):
    """Blocks, both feature matrices and the probabilities of one page (bits compared, not values)."""
    try:
        page = prepare_blocks(html, evidence, config)
    except ExtractionError as exc:
        return f"reject {exc.reason}"
    out = [_paths(page.root, page.blocks), page.dynamic_marked, page.removed, page.non_informative]
    if config.learned and page.blocks:
        ctx = page.context(evidence, html)
        lexicon = load_lexicon(str(DEFAULT_LEXICON))
        out.append(block_features(page.blocks, ctx, lexicon).tobytes())
        out.append(context_groups(page.blocks))
        out.append(np.asarray(content_probabilities(page.blocks, ctx, config.learned)).tobytes())
        probs = [0.25 * (i % 5) for i in range(len(page.blocks))]
        out.append(context_features(probs, context_groups(page.blocks), [b.num_words for b in page.blocks]).tobytes())
    return out


@needs_kernel
@pytest.mark.parametrize("seeds", [range(0, 40), range(40, 80), range(80, 120)])
def test_chains_identical_on_hostile_pages(seeds):
    for seed in seeds:
        html = hostile_page(seed)
        for name in CHAINS:
            reference, compiled = _both(lambda h=html, n=name: _extraction(h, None, CONFIGS[n]))
            assert reference == compiled, (seed, name)
        reference, compiled = _both(lambda h=html: _prepared(h, None, CONFIGS["default"]))
        assert reference == compiled, seed


@needs_kernel
@pytest.mark.parametrize("seed", range(6))
def test_site_evidence_and_chain_with_it_identical(seed):
    pages = site_pages(seed)
    with kernel.python_only():
        reference = learn_site_evidence(pages)
    compiled = learn_site_evidence(pages)
    assert reference == compiled
    assert compiled.static.keys or seed, "the shared template gives static keys"
    trees = [parse_html(p) for p in pages]
    assert learn_site_evidence(trees) == compiled  # trees parsed by the runner: the same evidence
    for html in pages:
        for name in ("default", "paper"):
            reference, compiled_out = _both(lambda h=html, n=name: _extraction(h, compiled, CONFIGS[n]))
            assert reference == compiled_out
        reference, compiled_out = _both(lambda h=html: _prepared(h, compiled, CONFIGS["default"]))
        assert reference == compiled_out


def _tree_steps(root: etree._Element) -> list:
    """Every kernel-dispatched step on copies of ``root``: its result and the tree after it."""
    def run(step):
        tree = copy.deepcopy(root)
        result = _outcome(lambda: step(tree))
        if isinstance(result, list):
            result = _paths(tree, result) if result and hasattr(result[0], "pieces") else result
        return result, etree.tostring(tree)

    body_of = lambda t: t.find("body") if t.find("body") is not None else t  # noqa: E731
    signature = StaticNoiseSignature(frozenset(_outcome(lambda: page_keys(copy.deepcopy(root))) or ()), 2) \
        if not isinstance(_outcome(lambda: page_keys(copy.deepcopy(root))), str) else StaticNoiseSignature()
    return [
        run(lambda t: extract_blocks(t, CONFIGS["default"].blocks)),
        run(lambda t: extract_blocks(t, BlockParams(), detail=False)),
        run(lambda t: sorted(page_keys(t))),
        run(lambda t: mark_static_noise(t, signature)),
        run(lambda t: mark_dynamic_noise(t, DynamicNoiseParams())),
        run(lambda t: remove_non_informative(t, NoiseRemovalParams())),
        run(lambda t: _prune_empty(body_of(t))),
        run(lambda t: strip_marks(t)),
        run(lambda t: summarise_page(t)),
        run(lambda t: context_groups(extract_blocks(t, CONFIGS["default"].blocks))),
        run(lambda t: block_features(extract_blocks(t, CONFIGS["default"].blocks)).tobytes()),
    ]


@needs_kernel
@pytest.mark.parametrize("seed", range(24))
def test_trees_with_entities_and_namespaces_fall_back_to_python(seed):
    root = altered_tree(seed)
    reference, compiled = _both(lambda: _tree_steps(root))
    assert reference == compiled


@needs_kernel
@pytest.mark.parametrize("seed", range(0, 60, 7))
def test_tree_steps_identical_on_parsed_hostile_pages(seed):
    try:
        root = parse_html(hostile_page(seed))
    except ExtractionError:
        pytest.skip("rejected page")
    reference, compiled = _both(lambda: _tree_steps(root))
    assert reference == compiled


def _page_level_reads(html: str) -> list:
    """What the page-level steps read through the kernel, for one page's blocks: the elements' word counts
    (two link settings), the containers under each block's grandparent, the folded text."""
    try:
        page = prepare_blocks(html, None, CONFIGS["default"])
    except ExtractionError as exc:
        return [f"reject {exc.reason}"]
    tree = page.root.getroottree()
    containers = [b.container if i % 3 else None for i, b in enumerate(page.blocks)]
    scopes = [nth_ancestor(b.container, 2) for b in page.blocks[:20]]
    return [
        *([(tree.getpath(el), counts) for el, counts in _element_words(page.blocks, *link).items()]
          for link in ((2, 0.5), (1, 0.0))),
        *(under_element(containers, scope) for scope in scopes),
        _folded(" ".join(b.text for b in page.blocks)),
        [tree.getpath(el) for el in _text_containers(page.blocks)],
        *(_path(tree, region.main_container(page.blocks, keep)) for keep in _keeps(len(page.blocks))),
        *([tree.getpath(el) for el in _byline_boxes(page.blocks, scope, BylineParams())] for scope in scopes[:3]),
        _Boxes(page.blocks, RoleParams()).roles_of([b.container for b in page.blocks] + [page.root]),
        consent_regions(page.blocks),
        under_any_named(containers, lambda el: names_side_box(el, SIDE.tags, frozenset(SIDE.class_words)),
                        set(scopes[:2]), tags=SIDE.tags, class_words=SIDE.class_words),
        *(in_card_groups(page.blocks, containers, params, stop) for params in CARD_SETTINGS
          for stop in ((), set(scopes[:3]))),
    ]


@needs_kernel
def test_box_words_found_in_class_names_as_python_tokenises_them():
    """Roles and byline boxes ask the Python rule only about class names holding one of their words, ASCII letters
    lowercased: ``STANDFIRST`` names a lead box, ``BYLINE-Box`` a byline box; ``\u212aeypoints`` (the Kelvin sign,
    which ``str.lower`` makes an ASCII k) names none, as class tokens are runs of ASCII letters and digits."""
    story = "<p>The council voted on the harbour budget, and members said the costs were left out of it.</p>" * 5
    html = (f"<html><body><div class='story'><div class='STANDFIRST'><p>Three short points about the vote.</p></div>"
            f"<div class='\u212aeypoints'><p>Two more points about the costs.</p></div>"
            f"<p class='BYLINE-Box'>By Jane Doe</p>{story}</div></body></html>")

    def reads():
        page = prepare_blocks(html, None, CONFIGS["default"])
        roles = _Boxes(page.blocks, RoleParams()).roles_of([b.container for b in page.blocks])
        return roles, [el.get("class") for el in _byline_boxes(page.blocks, page.root, BylineParams())]

    reference, compiled = _both(reads)
    assert reference == compiled
    assert reference[0][:3] == [LEAD, None, None] and reference[1] == ["BYLINE-Box"]


HIDDEN = ("<div style='display:none'>  Hidden\tword \r\n text <script>var x = 1;</script>"
          "<noscript><style>p {}</style>no script <b>text</b></noscript><!-- a comment -->\u00e9\u00a0\u00fc "
          "<template>tpl</template>  <span>inner <i>words</i></span> <![CDATA[x]]></div>"
          "<iframe hidden>frame text</iframe><noscript><div hidden>in noscript <script>s</script></div></noscript>")


@needs_kernel
@pytest.mark.parametrize("share", [0.5, 0.95])
def test_hidden_text_share_counted_as_the_reference_counts_it(share):
    """Whether hidden elements hold most of the text (then they are read after all): XPath's normalized string
    length, outermost skipped elements (scripts, styles, noscript, templates, iframes) subtracted, against shown
    text of 1 to 80 characters: the decision flips inside that range, and the kernel flips where Python does."""
    params = BlockParams(skip_hidden=True, max_hidden_share=share)
    outcomes = set()
    for shown in range(1, 81):
        root = lxml.html.document_fromstring(f"<html><body>{HIDDEN}<p>{'x' * shown}</p></body></html>")
        reference, compiled = _both(lambda root=root: [b.text for b in extract_blocks(root, params)])
        assert reference == compiled, shown
        outcomes.add(len(reference))
    assert len(outcomes) == 2  # some pages read their hidden text, the others only the shown paragraph


@needs_kernel
def test_neighbour_summary_identical_where_hidden_text_or_han_blocks_decide():
    """A neighbour page's summary as Python makes it, where the kernel's block records take other paths: hidden
    elements holding most of the text (the blocks are walked again, hidden text read), and Han/Kana blocks (whose
    word units the kernel counts) beside Latin ones, linked and not."""
    han = "<p>東京の議会は予算案を可決した。費用の一部は含まれていない。</p><p><a href='/x'>関連記事を読む</a></p>"
    totals = set()
    for shown in range(1, 401, 8):
        html = f"<html><body>{HIDDEN * 20}<div class='story'><p>{'x' * shown}</p>{han}</div></body></html>"
        root = lxml.html.document_fromstring(html)
        reference, compiled = _both(lambda root=root: summarise_page(root))
        assert reference == compiled, shown
        totals.add(reference.words)
    assert len(totals) == 2  # the hidden text is read on some pages and not on the others


SIDE = SideContentParams(tags=("aside", "figcaption"))
CARD_SETTINGS = (teaser_cards.TeaserCardsParams(),
                 teaser_cards.TeaserCardsParams(min_cards=2, min_card_share=0.5, min_description_words=3, max_card_words=40))


@needs_kernel
@pytest.mark.parametrize("seeds", [range(0, 60), range(60, 120)])
def test_page_level_reads_identical_on_hostile_pages(seeds):
    compared = 0
    for seed in seeds:
        html = hostile_page(seed)
        with kernel.python_only():
            reference = _page_level_reads(html)
        with kernel.python_only(False):
            compiled = _page_level_reads(html)
        assert reference == compiled, seed
        compared += len(reference) > 1 and bool(reference[0])
    assert compared > len(seeds) // 2  # most hostile pages give blocks: the reads were compared, not two rejects


@needs_kernel
@pytest.mark.parametrize("seed", range(6))
def test_site_and_structure_feature_groups_identical(seed):
    """The two groups the shipped model does not read (a model trained with them would): with the site's profile
    from its neighbours and an ``articleBody`` holding part of the page's text."""
    pages = site_pages(seed)
    profile = learn_site_evidence(pages).profile
    assert profile is not None
    for html in pages:
        page = prepare_blocks(html, None, CONFIGS["default"])
        body = " ".join(b.text for b in page.blocks[::2]) + " words of a body the page does not show" * 3

        def groups(blocks=page.blocks, body=body):
            return [site_features(blocks, profile).tobytes(), site_features(blocks, None).tobytes(),
                    content_supports(blocks, dict(profile.content)),
                    structure_features(blocks, body).tobytes(), structure_features(blocks, None).tobytes()]

        reference, compiled = _both(groups)
        assert reference == compiled
        assert np.frombuffer(reference[0]).any() and np.frombuffer(reference[3]).any()  # not all zeros


def _element_words(blocks, min_link_words, min_link_density):
    """``element_words`` with its memo of the last page cleared (each path computes its own answer)."""
    teaser_cards._page_element_words.forget(blocks)
    return teaser_cards.element_words(blocks, min_link_words, min_link_density)


def _keeps(n: int) -> list[list[bool]]:
    """Keep flags of a few kinds for ``n`` blocks: all, none, every other, the first third (and a short list)."""
    return [[True] * n, [False] * n, [i % 2 == 0 for i in range(n)], [i < n // 3 for i in range(n)], [True] * (n // 2)]


def _path(tree, el):
    return None if el is None else tree.getpath(el)


def _text_containers(blocks):
    region.text_containers.forget(blocks)
    return region.text_containers(blocks)


def in_card_groups(blocks, nodes, params, stop):
    teaser_cards._page_element_words.forget(blocks)
    return teaser_cards.in_card_groups(blocks, nodes, params, stop)


@needs_kernel
def test_card_groups_identical_on_a_page_of_cards():
    """Cards in groups and beside them (the hostile pages seldom repeat a card three times)."""
    card = "<li class='{}'><a href='/x{}'>A headline of the story {}</a> <span>{}</span></li>"
    items = "".join(card.format("card big" if i % 2 else "big card", i, i, "a teaser" if i % 4 else "words " * 12)
                    for i in range(10))  # the same signature; every fourth item's text is mostly not linked: no card
    html = (f"<html><body><div id='main'><p>{'Words of the article body, with a full stop. ' * 20}</p></div>"
            f"<ul>{items}</ul><ol><li><a href='/a'>one link only</a></li><li>no link at all in this item</li></ol>"
            "</body></html>")
    page = prepare_blocks(html, None, CONFIGS["default"])
    containers = [b.container for b in page.blocks]
    for params in CARD_SETTINGS:
        for stop in ((), {page.blocks[3].container.getparent()}):
            reference, compiled = _both(lambda p=params, s=stop: in_card_groups(page.blocks, containers, p, s))
            assert reference == compiled
    assert any(in_card_groups(page.blocks, containers, CARD_SETTINGS[0], ())), "the list of cards is a card group"


@needs_kernel
def test_folded_text_identical_on_wide_and_mixed_scripts():
    texts = ["", "_", "Straße ΣΑΣ ǅ İ", "東京都 ひらがな_カタカナ", "١٢٣ ⅷ ² x\u0301", "a\u00adb c\u200bd", "ﬁ ﬀ",
             "".join(map(chr, range(128))), "Hello, World_42! MAY-2024 ZaZ@[`{",
             # few non-ASCII characters, folded one at a time (ß -> ss, ﬃ -> ffi, İ -> i + a combining dot, ͅ -> ι)
             "It’s a Straße, “ﬃ” — İ ΐ \u0345 _x_ " + "plain ASCII words " * 8]
    for text in texts:
        with kernel.python_only():
            reference = _folded(text)
        assert kernel.walks().alnum_casefold(text) == reference, text


@needs_kernel
def test_word_counts_identical():
    texts = ["", " ", "a b", "_ __ _- a_b", "東京都 ひらがな カタカナ", "İstanbul ǅ ⅷ ² ١٢٣", "x\x1cy\u3000z\xa0w",
             *(hostile_page(seed)[:2000] for seed in range(30))]
    for text in texts:
        assert count_words(text) == len(words(text)), text


@needs_kernel
def test_han_and_kana_words_counted_by_the_kernel():
    """The kernel's own count (no hand-back to Python) of text holding Han/Kana is ``len(text.words(text))``: every
    Han ideograph and Hiragana character a word unit, a Katakana run one, the runs between them words where they
    hold a letter or digit (or ``_`` beside another character)."""
    import random

    rng = random.Random(7)
    pieces = [*HAN_KANA, "_", "a", "1", " ", "\u3000", "\xa0", "-", "é", "\u0301", "東", "カ", "ｶ", "ひ"]
    texts = [*HAN_KANA, " ".join(HAN_KANA), "".join(HAN_KANA), *(han_text(rng, 40) for _ in range(50)),
             *("".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(3000))]
    count = kernel.walks().count_words
    assert [count(t) for t in texts] == [len(words(t)) for t in texts]
    # by hand: ー and ・ extend a Katakana run; U+3099 alone is no letter; Ext. B ideographs are words
    assert [count(t) for t in ("ニュー・ヨーク", "・・", "か\u3099", "\u3099", "𠀋𠀍", "ひらがなabc", "_ひ_", "a東b")] \
        == [1, 0, 1, 0, 2, 5, 1, 3]


def _reference_and_compiled(reference, compiled, tree_fn) -> list:
    """``reference(root)`` on the Python path and ``compiled(root)`` (a twin called directly), each on a fresh tree
    from ``tree_fn()``: their outcomes, each with the tree after it."""
    out = []
    for fn, python in ((reference, True), (compiled, False)):
        root = tree_fn()
        with kernel.python_only(python):
            out.append((_outcome(lambda fn=fn, root=root: fn(root)), etree.tostring(root)))
    return out


@needs_kernel
@pytest.mark.parametrize("seed", range(40))
def test_han_kana_blocks_summary_and_noise_counts_computed_by_the_kernel(seed):
    """On Chinese/Japanese pages, the kernel's own block walk, summary and non-informative removal (their twins
    called directly, so a hand-back to Python fails here) give Python's blocks (text, words, linked words, text
    density, container, pieces) at three wrap widths, its summary and its removal (form words against page words);
    the blocks' shallow features (words of ``text.words``, their characters and capitals) are Python's."""
    html = han_page(seed)
    tree = lambda: lxml.html.document_fromstring(html)  # noqa: E731
    for params in (CONFIGS["default"].blocks, BlockParams(), BlockParams(wrap_width=21), BlockParams(wrap_width=3)):
        for detail in (True, False):
            reference = _paths_of(lambda root, p=params, d=detail: _blocks_of(root, p, d), tree)
            compiled = _paths_of(lambda root, p=params, d=detail: kernel.walks().extract_blocks(root, p, d), tree)
            assert reference == compiled, (params, detail)
            assert isinstance(compiled, list) and compiled
    assert _equal(lambda: block_features(extract_blocks(tree(), CONFIGS["default"].blocks)).tobytes())
    reference, compiled = _reference_and_compiled(summarise_page, kernel.walks().summarise_page, tree)
    assert reference == compiled
    assert not isinstance(compiled[0], str), compiled[0]
    for ratio in (0.0, 0.3, 0.9):
        params = NoiseRemovalParams(form_unwrap_ratio=ratio)
        reference, compiled = _reference_and_compiled(
            lambda root, p=params: remove_non_informative(root, p),
            lambda root, p=params: kernel.walks().remove_non_informative(root, p), lambda: parse_html(html))
        assert reference == compiled, ratio
        assert not isinstance(compiled[0], str), compiled[0]


def _blocks_of(root, params, detail):
    with kernel.python_only():
        return extract_blocks(root, params, detail)


def _paths_of(fn, tree_fn):
    root = tree_fn()
    return _outcome(lambda: _paths(root, fn(root)))


@needs_kernel
@pytest.mark.parametrize("chain", CHAINS)
def test_chinese_and_japanese_pages_run_in_the_kernel_without_handing_back(chain):
    """A Chinese and a Japanese article go through every chain with no twin of the binding table raising
    :class:`~newsclean.transforms.kernel.Unsupported` (which hands the call to the Python reference), and give
    Python's extraction."""
    zh = "<p>" + "上海市政府周二宣布，新的公共交通计划将于明年实施，预计每天服务超过两百万名乘客。" * 6 + "</p>"
    ja = "<p>" + "東京都議会は予算案を可決した。コンピューター・システムの費用は含まれていない。" * 6 + "</p>"
    nav = "<ul class='nav'>" + "".join(f"<li><a href='/{i}'>新闻{i}</a></li>" for i in range(6)) + "</ul>"
    handed_back = Counter()
    rows = all_bindings()
    saved = {b: b.resolve() for b in rows}

    def spy(b, compiled, *args):
        try:
            return compiled(*args)
        except kernel.Unsupported:
            handed_back[b.name] += 1
            raise

    try:
        for b, compiled in saved.items():
            b.compiled = functools.partial(spy, b, compiled)
        for body in (zh, ja):
            html = f"<html><head><title>新闻</title></head><body>{nav}<article>{body}</article>" \
                   f"<form><input name='q'>搜索本站</form></body></html>"
            reference, compiled_out = _both(lambda h=html: _extraction(h, None, CONFIGS[chain]))
            assert reference == compiled_out
            assert not isinstance(compiled_out, str), compiled_out
    finally:
        for b, compiled in saved.items():
            b.compiled = compiled
    assert dict(handed_back) == {}


@needs_kernel
def test_dynamic_marks_and_their_order_on_nested_lists():
    html = "<html><body><div>" + "".join(
        f"<ul><li><a href='/{i}'>link {i}</a></li><li><a href='/{i}b'>other {i}</a></li></ul><p>text {i}</p>"
        for i in range(8)) + "<div><a href='/z'>z</a> and some words that are not linked at all here</div></div></body></html>"
    reference, compiled = _both(lambda: (lambda t: (mark_dynamic_noise(t), etree.tostring(t)))(parse_html(html)))
    assert reference == compiled and reference[0] > 0


# --- every row of the binding table ------------------------------------------------------------------------------

def _comparable(value):
    """``value`` as the comparison reads it: an array by shape, dtype and bits, an iterator by its items, a dict by
    its items in order."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.dtype.str, value.tobytes())
    if isinstance(value, types.GeneratorType | list | tuple):
        return [_comparable(v) for v in value]
    if isinstance(value, dict):
        return [(k, _comparable(v)) for k, v in value.items()]
    return value


class _Comparing:
    """Inside the ``with`` block, each row's compiled callable is replaced by one that counts the calls the twin
    answers (without :class:`~newsclean.transforms.kernel.Unsupported`) and runs the reference, on the Python path, on
    the same arguments (``compare`` result) or on a copy of the tree it changes (``compare`` tree, where its first
    argument is an element): a different answer is recorded in ``differences``."""

    def __init__(self, rows):
        self.rows, self.calls, self.differences, self.saved = rows, Counter(), [], {}

    def __enter__(self):
        for b in self.rows:
            self.saved[b] = compiled = b.resolve()
            b.compiled = lambda *args, b=b, compiled=compiled: self.call(b, compiled, args)
        return self

    def __exit__(self, *exc):
        for b, compiled in self.saved.items():
            b.compiled = compiled

    def call(self, b, compiled, args):
        tree = b.compare == kernel.TREE and isinstance(args[0], etree._Element)
        before = copy.deepcopy(args[0]) if tree else None
        result = compiled(*args)
        self.calls[b.name] += 1
        if b.compare == kernel.RESULT:
            with kernel.python_only():
                expected = b.reference(*args)
            if _comparable(expected) != _comparable(result):
                self.differences.append((b.name, "result"))
        elif tree:
            with kernel.python_only():
                expected = b.reference(before, *args[1:])
            if (expected, etree.tostring(before)) != (result, etree.tostring(args[0])):
                self.differences.append((b.name, "tree"))
        return result


def _sample_compared() -> None:
    """The identity comparisons of this file on a sample: whole pages of every chain, without and with a site's
    evidence; the prepared blocks, features and scores; the page-level reads; the tree steps; the site and structure
    feature groups; a page of hidden text, scripts and ``<noscript>``; a page whose text lies in its head."""
    for seed in range(0, 120, 10):
        html = hostile_page(seed)
        for name in CHAINS:
            assert _equal(lambda h=html, n=name: _extraction(h, None, CONFIGS[n])), (seed, name)
        assert _equal(lambda h=html: _prepared(h, None, CONFIGS["default"])), seed
        assert _equal(lambda h=html: _page_level_reads(h)), seed
    for seed in range(2):
        pages = site_pages(seed)
        evidence = learn_site_evidence(pages)
        assert _equal(lambda p=pages: learn_site_evidence(p)), seed
        for html in pages[:2]:
            assert _equal(lambda h=html, e=evidence: _extraction(h, e, CONFIGS["default"])), seed
        blocks = prepare_blocks(pages[0], None, CONFIGS["default"]).blocks
        body = " ".join(b.text for b in blocks[::2])
        assert _equal(lambda blocks=blocks, profile=evidence.profile, body=body: [
            site_features(blocks, profile).tobytes(), structure_features(blocks, body).tobytes()]), seed
    for seed in range(0, 24, 5):
        root = altered_tree(seed)
        assert _equal(lambda r=root: _tree_steps(r)), seed
    story = "<p>The council voted on the harbour budget, and members said the costs were left out of it.</p>" * 4
    assert _equal(lambda: _extraction(f"<html><body>{HIDDEN}{story}</body></html>", None, CONFIGS["default"]))
    # no <body> tag: libxml2 keeps the <section> in the head, and its visible text moves it to the body
    assert _equal(lambda: _extraction(f"<html><head><title>t</title><section>{story}</section>", None,
                                      CONFIGS["default"]))


def _equal(fn) -> bool:
    reference, compiled = _both(fn)
    return reference == compiled


@needs_kernel
def test_every_binding_is_compared_with_its_reference():
    """Each row of the binding table (``kernel.BINDINGS``) answers calls of the sample's comparisons with the kernel
    on, and gives the reference's answer: per call where its twin returns what the reference returns or changes the
    tree as it does, and in the compared whole pages for every row. A row no comparison calls fails here."""
    rows = all_bindings()
    with _Comparing(rows) as seen:
        _sample_compared()
    assert seen.differences == []
    assert [b.name for b in rows if not seen.calls[b.name]] == []


# --- the tree-ensemble evaluator --------------------------------------------------------------------------------

def _rows(rng: np.random.Generator, n: int, columns: int) -> np.ndarray:
    X = rng.normal(size=(n, columns)) * rng.choice([0.01, 1.0, 10.0], size=(n, columns))
    X[rng.random(X.shape) < 0.2] = 0.0
    X[rng.random(X.shape) < 0.03] = 1e-36    # the C API drops |x| <= 1e-35f
    X[rng.random(X.shape) < 0.03] = -0.0
    X[rng.random(X.shape) < 0.03] = np.nan
    X[rng.random(X.shape) < 0.05] = 1.0000000180025095e-35  # a threshold of the shipped models, exactly
    return X


@needs_kernel
@pytest.mark.parametrize("stage", [1, 2])
def test_compiled_forest_equals_lightgbm_bit_for_bit(stage):
    pytest.importorskip("lightgbm")
    from newsclean.transforms.classifier.features import CONTEXT_FEATURE_NAMES
    from newsclean.transforms.classifier.forest import parse_model
    from newsclean.transforms.classifier.model import DEFAULT_CONTEXT_MODEL, DEFAULT_MODEL, booster_predict, load_model
    from newsclean.transforms.vocab import FEATURE_NAMES

    path, known = (DEFAULT_MODEL, FEATURE_NAMES) if stage == 1 else (DEFAULT_CONTEXT_MODEL, FEATURE_NAMES + CONTEXT_FEATURE_NAMES)
    booster = load_model(str(path), known).boosters[0]
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        forest = kernel.trees().CompiledForest(parse_model(fh.read()))
    X = _rows(np.random.default_rng(stage), 3000, len(booster.feature_name()))
    for margin in (None, 10.0, 4.0, 0.5):
        assert np.array_equal(forest.predict(X, margin), booster_predict(booster, X, margin)), margin
    with pytest.raises(ValueError):
        forest.predict(X[:, :-1])


@needs_kernel
@pytest.mark.parametrize("options", [{}, {"zero_as_missing": True}, {"use_missing": False}])
def test_compiled_forest_reads_missing_value_splits(options):
    """Models trained on rows with NaN (missing type NaN), with zeros as missing (type Zero) or without missing
    handling: the evaluator's plain walk (default directions) gives LightGBM's scores."""
    lightgbm = pytest.importorskip("lightgbm")
    from newsclean.transforms.classifier.forest import parse_model

    rng = np.random.default_rng(7)
    X = _rows(rng, 2000, 6)
    y = ((np.nan_to_num(X[:, 0]) > 0) ^ (X[:, 1] == 0)).astype(int)
    booster = lightgbm.train({"objective": "binary", "num_leaves": 15, "verbose": -1, "min_data_in_leaf": 5,
                              **options}, lightgbm.Dataset(X, y), num_boost_round=30)
    forest = kernel.trees().CompiledForest(parse_model(booster.model_to_string()))
    Z = _rows(rng, 2000, 6)
    for margin in (None, 2.0):
        params = {"num_threads": 1} if margin is None else {"num_threads": 1, "pred_early_stop": True,
                                                            "pred_early_stop_freq": 10, "pred_early_stop_margin": margin}
        assert np.array_equal(forest.predict(Z, margin), booster.predict(Z, **params)), (options, margin)


def _chain_tree(leaves: int):
    """One tree of ``leaves`` leaves in a chain: node ``k`` sends ``x <= k`` to leaf ``k`` (value ``k``), the rest on."""
    from array import array

    from newsclean.transforms.classifier.forest import FlatForest

    nodes = leaves - 1
    return FlatForest(
        feature=array("i", [0] * nodes), threshold=array("d", [float(k) for k in range(nodes)]),
        decision=array("B", [0] * nodes), left=array("i", [~k for k in range(nodes)]),
        right=array("i", [k + 1 for k in range(nodes - 1)] + [~nodes]),
        leaf_value=array("d", [float(k) for k in range(leaves)]), node_start=array("i", [0, nodes]),
        leaf_start=array("i", [0, leaves]), sigmoid=1.0, columns=1)


@needs_kernel
def test_compiled_forest_walks_the_largest_tree_it_takes_and_leaves_a_larger_one_to_lightgbm():
    from newsclean.transforms.errors import UnsupportedModel

    forest = kernel.trees().CompiledForest(_chain_tree(32768))  # 65,535 nodes and leaves: the most it takes
    values = np.array([0.0, 1.0, 20000.5, 32766.0, 32766.5, 1e9])
    leaves = [0, 1, 20001, 32766, 32767, 32767]
    assert forest.predict(values.reshape(-1, 1)).tolist() == [1.0 / (1.0 + math.exp(-leaf)) for leaf in leaves]
    with pytest.raises(UnsupportedModel):
        kernel.trees().CompiledForest(_chain_tree(32769))

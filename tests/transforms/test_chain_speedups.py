"""The chain's faster one-walk stages against the plain definitions they replace.

Each reference below is the straightforward form of a stage (per-element ``itertext``, per-line
``count_words``, recursive counting, a walk to the root per anchor, three regex passes); the
optimised code must agree with it on pages built to hit the edge cases (whitespace that is not ASCII,
comments, noise marks, Han text, case-folding characters, control characters).
"""

from __future__ import annotations

import functools
import re

import lxml.html
import pytest
from lxml import etree

from newsclean.transforms import vocab
from newsclean.transforms.ancestor_filter import ancestor_groups
from newsclean.transforms.blocks import extract_blocks, text_density, wrap_lines
from newsclean.transforms.chain import KEEP_EMPTY_TAGS, _prune_empty, _text_holders
from newsclean.transforms.classifier.features import CONTEXT_FEATURE_NAMES, _digits, _Subtree, context_features
from newsclean.transforms.dom import element_token
from newsclean.transforms.dynamic_noise import (
    DynamicNoiseParams,
    TextCounts,
    candidate_nodes,
    is_dynamic_noise,
    mark_dynamic_noise,
)
from newsclean.transforms.marks import is_element, mark, mark_of, own_text, own_texts, strip_marks
from newsclean.transforms.noise_removal import NoiseRemovalParams, remove_non_informative
from newsclean.transforms.parse import (
    _RAW_TEXT_SPAN,
    _word_count,
    prefix_word_counts,
    raw_text_spans,
    repair_markup,
    resolve_noscript,
)
from newsclean.transforms.site_profile import PathDigests, _digest
from newsclean.transforms.static_noise import (
    StaticNoiseParams,
    StaticNoiseSignature,
    is_static,
    key_digest,
    mark_static_noise,
    node_key,
    page_keys,
)
from newsclean.transforms.text import count_words
from newsclean.transforms.types import BlockParams
from newsclean.transforms.vocab import DYNAMIC, STATIC


def _tree(html: str) -> etree._Element:
    return lxml.html.document_fromstring(html)


# --- cleaned HTML: empty elements pruned ------------------------------------------------------------

def _prune_reference(body: etree._Element) -> None:
    for el in reversed([e for e in body.iter() if is_element(e) and e is not body]):
        if el.tag in KEEP_EMPTY_TAGS or el.getparent() is None:
            continue
        if not "".join(el.itertext()).strip():
            el.drop_tree()


PRUNE_PAGES = [
    "<div><p> </p><span>\xa0</span><b>x</b><i><u></u>tail</i><br><hr></div>",
    "<div><div><div><em></em>\u2003</div></div>after<p><a><img></a></p>\n</div>",
    "<section><p>one<span></span>two</p><ul><li><a href='/'></a></li><li>\t</li></ul>end</section>",
    "<div><!-- c --><p><!-- only a comment --></p><p>t<!-- c -->x</p></div>",
    "<table><tr><td></td><td> <b> </b> </td><td>cell</td></tr></table><div><br></div>",
]


@pytest.mark.parametrize("html", PRUNE_PAGES)
def test_prune_empty_matches_the_itertext_definition(html):
    mine, reference = _tree(html), _tree(html)
    _prune_empty(mine.find("body"))
    _prune_reference(reference.find("body"))
    assert etree.tostring(mine) == etree.tostring(reference)


def _text_holders_reference(body: etree._Element) -> set[etree._Element]:
    """Every element of ``body``'s subtree (itself included) whose itertext holds a non-whitespace character."""
    return {el for el in body.iter() if is_element(el) and not "".join(el.itertext()).isspace()
            and "".join(el.itertext())} | {body}


HOLDER_PAGES = [
    *PRUNE_PAGES,
    "<div><p>\xa0<b>\u3000</b>\u2028</p><p><i>\xa0</i>x\xa0</p><!-- c -->\xa0<?pi x?>y<span><!-- c -->\t</span></div>",
    "<div><ul><li><a>\u200b</a></li><li>\u00a0\u1680<em>z</em></li></ul><table><tr><td>\x85</td></tr></table></div>",
]


@pytest.mark.parametrize("html", HOLDER_PAGES)
def test_text_holders_from_text_nodes_match_the_itertext_definition(html):
    body = _tree(html).find("body")
    assert _text_holders(body) == _text_holders_reference(body)


def test_prune_empty_keeps_text_and_breaks_and_drops_whitespace_only_elements():
    root = _tree(PRUNE_PAGES[0])
    _prune_empty(root.find("body"))
    assert lxml.html.tostring(root.find("body"), encoding="unicode") == \
        "<body><div><b>x</b><i>tail</i><br><hr></div></body>"


# --- text density: words per wrapped line ----------------------------------------------------------

def _density_reference(text: str, width: int = 80) -> float:
    lines = wrap_lines(text, width)
    if len(lines) <= 1:
        return float(count_words(text))
    return sum(count_words(" ".join(line)) for line in lines[:-1]) / (len(lines) - 1)


DENSITY_TEXTS = [
    "word " * 50,
    "a " * 3 + "x" * 120 + " b" * 40,  # a token longer than the line
    "-- -- __ ** the quick, brown fox; " * 9,  # tokens without letters or digits
    "_. _x x_ __ 1_ " * 20,
    "東京都の人口は約千四百万人です。" * 12 + " English words here and there " * 3,
    "カタカナのテキスト、ひらがな、漢字 mixed with Latin words and 123 numbers " * 5,
    "Ünïcödé wörds with äccents and em—dashes – here " * 6,
]


@pytest.mark.parametrize("text", DENSITY_TEXTS)
@pytest.mark.parametrize("width", [80, 20])
def test_text_density_matches_per_line_count_words(text, width):
    text = " ".join(text.split())
    assert text_density(text, width) == _density_reference(text, width)


def test_block_words_are_the_words_of_its_text():
    root = _tree("<body><p>Hello, <b>big</b>\n world 42 -- </p><p>東京 の 人口</p></body>")
    blocks = extract_blocks(root, BlockParams(non_separator_tags=("a", "b")))
    assert [b.words for b in blocks] == [["Hello,", "big", "world", "42"], ["東", "京", "の", "人", "口"]]
    assert [b.num_words for b in blocks] == [4, 5]


# --- dynamic noise: counts and candidates ----------------------------------------------------------

def _counts_reference(el, in_link=False, in_noise=False, out=None):
    out = {} if out is None else out
    in_link = in_link or el.tag == "a"
    noisy = in_noise or bool(mark_of(el))
    total = [0, 0]

    def add(text):
        if text and not noisy:
            total[0 if in_link else 1] += len(" ".join(text.split()))

    add(el.text)
    for child in el:
        if is_element(child):
            sub = _counts_reference(child, in_link, noisy, out)[child]
            total[0] += sub[0]
            total[1] += sub[1]
        add(child.tail)
    out[el] = total
    return out


def _candidates_reference(root, protected=("html", "body")):
    def chain(el):
        return [el, *el.iterancestors()]

    anchors = [a for a in root.iter("a") if not any(mark_of(n) for n in chain(a))]
    depth = {}
    for left, right in zip(anchors, anchors[1:]):
        seen = set(chain(left))
        lca = next(n for n in chain(right) if n in seen)
        if lca.tag not in protected and lca not in depth:
            depth[lca] = len(chain(lca))
    return sorted(depth, key=lambda el: -depth[el])


NOISE_PAGE = """<html><body><div id="wrap">
<div id="art"><p>Article text that is long enough to matter, with <a href="/in">one link</a> inside.</p>
<!-- a comment --><p>More text <a href="/2">two</a> and <a href="/3">three</a>.</p></div>
<ul id="rel"><li><a href="/r1">Related one</a></li><li><a href="/r2">Related two</a> tail</li></ul>
<div id="static"><a href="/s1">Static link</a> <a href="/s2">Other</a></div>
<footer><a href="/f">Footer</a><span><a href="/g">Deep</a></span></footer></div></body></html>"""


@pytest.mark.parametrize("marked", [None, "static", "rel"])
def test_text_counts_and_candidates_match_the_plain_walks(marked):
    root = _tree(NOISE_PAGE)
    if marked:
        mark(root.get_element_by_id(marked), STATIC if marked == "static" else DYNAMIC)
    expected = _counts_reference(root)
    counts = TextCounts(root).counts
    assert {id(k): v for k, v in counts.items()} == {id(k): v for k, v in expected.items()}
    assert candidate_nodes(root) == _candidates_reference(root)


def test_candidates_skip_anchors_inside_marked_elements():
    root = _tree(NOISE_PAGE)
    related = root.get_element_by_id("rel")
    assert related in candidate_nodes(root)
    mark(related, STATIC)
    assert related not in candidate_nodes(root)


# --- parse: control characters and <noscript> -------------------------------------------------------

def _noscript_reference(text: str, unwrap_ratio: float = 0.5) -> str:
    inner = [m.group(1) for m in _RAW_TEXT_SPAN.finditer(text) if m.group(1) is not None]
    if not inner:
        return text
    inner_words = sum(_word_count(part) for part in inner)
    unwrap = inner_words > 0 and inner_words >= unwrap_ratio * (inner_words + _word_count(_RAW_TEXT_SPAN.sub(" ", text)))
    return _RAW_TEXT_SPAN.sub(lambda m: m.group(0) if m.group(1) is None else (m.group(1) if unwrap else " "), text)


NOSCRIPT_PAGES = [
    "<p>No such tag here.</p>",
    "<p>Text</p><noscript><img src=x></noscript><script>var s='<noscript>'</script><p>more</p>",
    "<NOSCRIPT>Enable JavaScript to read this whole long article right here</NOSCRIPT><p>short</p>",
    "<no\u017fcript>Long s matches s without case</no\u017fcript><p>x</p>",  # re.I: U+017F matches "s"
    "<noscr\u0131pt>dotless i</noscr\u0131pt><!-- <noscript>in a comment</noscript> --><p>y</p>",
]


@pytest.mark.parametrize("html", NOSCRIPT_PAGES)
def test_noscript_resolution_matches_three_regex_passes(html):
    assert resolve_noscript(html) == _noscript_reference(html)


_SPAN_PIECES = (
    "<script", "<SCRIPT ", "<script>", "</script", "</script>", "</script >", "</scrIpt\n>", "</script\u2003>",
    "<style", "<Style>", "</style>", "</STYLE\t>", "<!--", "<!-->", "-->", "--", "<noscript", "<noscript a=1>",
    "<NoScript>", "</noscript>", "</noscript\u00a0>", "</noscript x>", "<scripts", "<noscripts>", "<stylex", ">",
    "<", "</", "x", " ", "\u00e9", "\u0130", "\u0131", "\u017f", "_", "1", "\u00f1", "\u212a", "\u6771", "\U0001f600",
    "\u0663", "\x0b", "\x1c",
)


@pytest.mark.parametrize("python", [True, False])
def test_raw_text_spans_are_the_regex_matches(python):
    """The spans (Python's scan, or the compiled kernel's where built) are those of the regex, on texts of one, two
    and four bytes a character: ``\b`` after a tag name is no letter, digit (``\u0663``) or underscore."""
    import random

    from newsclean.transforms import kernel

    rng = random.Random(7)
    with kernel.python_only(python):
        for _ in range(4000):
            text = "".join(rng.choice(_SPAN_PIECES) for _ in range(rng.randint(0, 14)))
            assert raw_text_spans(text) == [(m.start(), m.end(), *m.span(1))
                                            for m in _RAW_TEXT_SPAN.finditer(text)], text


def test_long_s_noscript_is_read_like_any_other():
    # its words are most of the page's, so the tags go and the text stays (unwrapped)
    assert resolve_noscript(NOSCRIPT_PAGES[3]) == "Long s matches s without case<p>x</p>"


@pytest.mark.parametrize("text", ["plain <p>text</p>", "a\x00b\x1fc\x0bd\te\nf", "\x0c</body>x</HTML >"])
def test_repair_markup_replaces_control_characters(text):
    expected = re.sub(r"</\s*(?:body|html)\s*>", "", re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", " ", text), flags=re.I)
    assert repair_markup(text) == expected


def test_cdata_sections_after_script_markers_are_those_the_regex_counts():
    """Each ``<![CDATA[`` found from the section backwards: as many follow ``//`` or ``/*`` (then XML spaces) as the
    regex finds, on 20,000 random texts."""
    import random

    from newsclean.transforms.parse import _SCRIPT_CDATA, _all_after_script_markers

    rng = random.Random(3)
    pieces = ("<![CDATA[", "//", "/*", "/", "*", " ", "\n", "\t", "\f", "\r", "\x0b", "x", "]]>", "<", "!", "///")
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        count = text.count("<![CDATA[")
        if count:
            assert _all_after_script_markers(text) == (count == len(_SCRIPT_CDATA.findall(text))), repr(text)


_END_TAG_PIECES = ("</", "<", "/", "body", "BoDy", "html", "HTML", "htm", "bod", ">", " ", "\t", "\u2003", "\x0b", "\x01",
                   "\u00a0", "x", "\u6771", "\U0001f600", "</body>", "</ html\n>")


@pytest.mark.parametrize("python", [True, False])
def test_repair_markup_drops_the_end_tags_the_regex_finds(python):
    """Every ``</body>``/``</html>`` end tag goes (spaces of any kind inside, any case), controls first read as
    spaces; Python's regex or the compiled kernel's scan, on texts of one, two and four bytes a character."""
    import random

    from newsclean.transforms import kernel

    rng = random.Random(11)
    with kernel.python_only(python):
        for _ in range(4000):
            text = "".join(rng.choice(_END_TAG_PIECES) for _ in range(rng.randint(0, 12)))
            expected = re.sub(r"</\s*(?:body|html)\s*>", "", re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", " ", text),
                              flags=re.I)
            assert repair_markup(text) == expected, text


# --- features: the ancestor filter's group share is linear -------------------------------------------

def test_group_share_is_the_groups_characters_over_all_grouped():
    root = _tree("<body>" + "".join(f"<div><div><div><p>{'word ' * (i + 1)}</p></div></div></div>"
                                    for i in range(4)) + "</body>")
    blocks = extract_blocks(root)
    groups = ancestor_groups(blocks, [True, True, False, True])
    total = sum(len(blocks[i].text) for i in (0, 1, 3))
    assert [groups.share(i) for i in range(4)] == [len(blocks[0].text) / total, len(blocks[1].text) / total, 0.0,
                                                 len(blocks[3].text) / total]


def test_strip_marks_removes_every_mark():
    root = _tree(NOISE_PAGE)
    mark(root.get_element_by_id("rel"), DYNAMIC)
    mark(root.get_element_by_id("static"), STATIC)
    strip_marks(root)
    assert not [el for el in root.iter() if is_element(el) and mark_of(el) is not None]


# --- narrow non-ASCII text, empty-block flushes, LCAs in the counting walk -----

NARROW_TEXTS = [
    "Ünïcödé wörds with äccents and em—dashes – here " * 6,
    "Ελληνικά και русский текст вместе, с пунктуацией. " * 5,
    "ｶﾀｶﾅ half-width katakana is narrow but spaceless " * 4,  # falls back to the per-unit wrap
    "emoji 😀 are wide, café is not " * 8,
]


@pytest.mark.parametrize("text", NARROW_TEXTS)
@pytest.mark.parametrize("width", [80, 20])
def test_text_density_of_narrow_non_ascii_text_matches_the_wrap(text, width):
    text = " ".join(text.split())
    assert text_density(text, width) == _density_reference(text, width)


def test_blocks_of_whitespace_only_pieces_are_not_built_and_joined_pieces_still_are():
    root = _tree("<body><div> \n <span>\t</span> </div><p>a<b>b</b> c</p><div>\xa0</div></body>")
    blocks = extract_blocks(root, BlockParams(non_separator_tags=("a", "b")))
    assert [b.text for b in blocks] == ["ab c"]


@pytest.mark.parametrize("marked", [None, "static", "rel"])
def test_pair_depths_of_the_counting_walk_are_the_candidates(marked):
    root = _tree(NOISE_PAGE)
    if marked:
        mark(root.get_element_by_id(marked), STATIC if marked == "static" else DYNAMIC)
    depths = TextCounts(root).pair_depths
    assert sorted(depths, key=lambda el: -depths[el]) == candidate_nodes(root) == _candidates_reference(root)


# --- counting only as far as a comparison needs: prefix word counts --------------------------------

@pytest.mark.parametrize("text", ["word " * 5000, "a" * 9000 + " b", "東京都の人口 " * 2000 + "end", "-- __ " * 3000 + "x"])
def test_prefix_word_counts_grow_to_the_exact_count(text):
    counts = list(prefix_word_counts(text, first=100, growth=2))
    bounds = [n for n, _ in counts]
    assert bounds == sorted(bounds) and [whole for _, whole in counts][-1] is True
    assert bounds[-1] == count_words(text)


def test_prefix_word_counts_of_markup_cut_after_a_tag_end():
    markup = "<div class='a b c d e f g'>one two</div>" * 500
    counts = list(prefix_word_counts(markup, ">", lambda s: re.sub(r"<[^>]*>", " ", s), first=60, growth=3))
    assert counts[-1] == (1000, True)
    assert all(n % 2 == 0 for n, _ in counts)  # a cut tag would add its attribute tokens as words


def _non_informative_reference(root, ratio=0.5):
    """Removes as remove_non_informative (the five tags of the test); returns the elements removed."""
    body_words = max(1, count_words("".join(root.itertext()))) if root.find(".//form") is not None else 1
    for el in list(root.iter(etree.Comment, etree.ProcessingInstruction)):
        el.drop_tree()
    removed = 0
    for el in list(root.iter("img", "script", "form", "input", "noscript")):
        node = el
        while node.getparent() is not None:
            node = node.getparent()
        if node is not root:
            continue
        if el.tag == "form" and count_words("".join(el.itertext())) >= ratio * body_words:
            el.drop_tag()
        else:
            el.drop_tree()
            removed += 1
    return removed


FORM_PAGES = [
    "<html><body><form><input>Search</form>" + "<p>article words here</p>" * 300 + "</body></html>",
    "<html><body><form>" + "<p>article words here</p>" * 300 + "<script>x</script><img></form><p>end</p></body></html>",
    "<html><body><form><form>inner <img> text</form>" + "<p>w</p>" * 5 + "</form><!-- c --><p>tail</p></body></html>",
    "<html><body><noscript><img><script>s</script></noscript><form></form></body></html>",
    # removed elements holding removed ones, next to siblings kept; a form inside a removed element
    "<html><body><div><noscript><div><img><p>x<script>a</script></p></div><form><input></form></noscript>"
    "<img>y</div><form>" + "<p>w w</p>" * 4 + "<noscript><img></noscript></form><script>b</script>z</body></html>",
]


@pytest.mark.parametrize("html", FORM_PAGES)
@pytest.mark.parametrize("ratio", [0.5, 0.0, 1.01])
def test_non_informative_removal_matches_the_whole_page_count(html, ratio):
    mine, reference = _tree(html), _tree(html)
    removed = remove_non_informative(mine, NoiseRemovalParams(("img", "script", "form", "input", "noscript"), ratio))
    assert removed == _non_informative_reference(reference, ratio)
    assert etree.tostring(mine) == etree.tostring(reference)


def test_a_short_noscript_in_a_long_page_is_cut_and_a_page_wide_one_unwrapped():
    long_page = "<p>" + "article text " * 3000 + "</p>"
    html = "<noscript><p>Please enable JavaScript now</p></noscript>" + long_page
    assert resolve_noscript(html) == _noscript_reference(html) == " " + long_page
    wide = "<noscript>" + long_page + "</noscript><p>menu</p>"
    assert resolve_noscript(wide) == _noscript_reference(wide) == long_page + "<p>menu</p>"


def test_subtree_membership_matches_the_set_of_the_subtree():
    root = _tree(NOISE_PAGE)
    top = root.get_element_by_id("art")
    inside = _Subtree(top)
    elements = [el for el in root.iter() if is_element(el)]
    assert [el in inside for el in elements] == [el in set(top.iter()) for el in elements]
    assert not any(el in _Subtree(None) for el in elements)


@pytest.mark.parametrize("text", ["", "no digits here", "12 March 2009, 10:45", "0123456789" * 3, "a1b2 c3 - 99%",
                                  "\u0663\u0664 Arabic-Indic digits 12", "\u00b2 superscript two, \u2460 circled one 7",
                                  "full\uff11width \uff12 and 3"])
def test_digit_count_is_the_count_of_isdigit_characters(text):
    assert _digits(text) == sum(1 for c in text if c.isdigit())


def test_context_features_match_the_per_row_lists():
    p, groups, words = [0.1, 0.9, 0.8, 0.2, 0.7], [(0, 9), (1, 9), (1, 9), (2, 8), (2, 8)], [3, 0, 12, 5, 40]
    weights = [max(1, w) for w in words]

    at = lambda i: p[i] if 0 <= i < 5 else 0.0  # noqa: E731
    parent = {k: sum(p[i] * weights[i] for i in range(5) if groups[i][0] == k) /
              sum(weights[i] for i in range(5) if groups[i][0] == k) for k in (0, 1, 2)}
    rows = context_features(p, groups, words)
    assert rows.shape == (5, len(CONTEXT_FEATURE_NAMES))
    assert [list(r[:5]) for r in rows] == [[at(i - 2), at(i - 1), p[i], at(i + 1), at(i + 2)] for i in range(5)]
    assert list(rows[:, 5]) == pytest.approx([parent[g[0]] for g in groups])
    assert list(rows[:, 8]) == [0.9] * 5


def test_direct_lightgbm_call_predicts_as_booster_predict():
    np = pytest.importorskip("numpy")
    pytest.importorskip("lightgbm")
    from newsclean.transforms.classifier.model import DEFAULT_MODEL, booster_predict, load_model

    booster = load_model(str(DEFAULT_MODEL)).boosters[0]
    X = np.random.default_rng(7).random((37, booster.num_feature())) * 3
    expected = booster.predict(X, num_threads=1)
    assert np.array_equal(booster_predict(booster, X), expected)
    assert np.array_equal(booster_predict(booster, np.asfortranarray(X)), expected)  # the wrapper's path


# --- metadata: extruct's microdata and OpenGraph passes skipped where they cannot add anything ----------

METADATA_PAGES = [
    # an article item nested in a WebPage item (not a top-level item: extruct does not return it alone)
    '<html><head><title>T</title></head><body><div itemscope itemtype="https://schema.org/WebPage">'
    '<div itemprop="mainEntity" itemscope itemtype="https://schema.org/NewsArticle"><h1 itemprop="headline">H</h1>'
    '<span itemprop="author">Ann Lee</span></div></div></body></html>',
    # only items of other types: the microdata pass adds nothing
    '<html><head><title>T</title></head><body><ol itemscope itemtype="http://schema.org/BreadcrumbList">'
    '<li itemprop="itemListElement">News</li></ol><p itemscope itemtype="http://schema.org/Person">'
    '<span itemprop="name">Bo</span></p></body></html>',
    # two types on one item, the article type second, upper case
    '<html><body><article itemscope itemtype="http://schema.org/Thing http://schema.org/NEWSARTICLE">'
    '<meta itemprop="datePublished" content="2020-02-03"><p itemprop="articleBody">Body text.</p></article></body></html>',
    # OpenGraph values that <meta> reading does not keep: blank content, a property with spaces, upper case
    '<html><head><meta property="og:title" content="  "><meta property=" og:site_name" content="Site">'
    '<meta property="OG:Description" content="Desc"><meta property="article:tag" content="a, b"></head>'
    '<body><meta property="og:image" content="/in-body.jpg"><p>x</p></body></html>',
    # every OpenGraph property already read from <meta>: the OpenGraph pass adds nothing
    '<html><head><meta property="og:title" content="OG title"><meta property="og:url" content="http://e.x/a">'
    '</head><body><h1>x</h1></body></html>',
    # JSON-LD in the body after other scripts; a script whose type differs in case (extruct does not read it)
    '<html><head><script>var a=1;</script><script type="application/LD+json">{"@type":"NewsArticle",'
    '"headline":"Not read"}</script><link rel="stylesheet" href="/s.css"><link rel="Canonical" href="javascript:x">'
    '<link rel="alternate canonical" href=" /a/b "></head><body><p>x</p><script type="application/ld+json">'
    '{"@graph":[{"@type":"NewsArticle","headline":"H","datePublished":"2021-03-04T05:06:07Z"},'
    '{"@type":"Organization","name":"Pub"}]}</script></body></html>',
    # a <meta property> without content in <head>, one with empty content; og: keys read from name=
    '<html><head><meta property="og:type"><meta property="og:locale" content=""><meta name="og:title" content="N">'
    '<meta property="og:title" content="P"></head><body><p>x</p></body></html>',
]


@pytest.mark.parametrize("html", METADATA_PAGES)
def test_metadata_without_the_skipped_extruct_passes_is_the_same(html, monkeypatch):
    from newsclean.transforms import metadata as md

    fast = md.read_metadata(_tree(html))
    assert md._structured(_tree(html), md.page_tags(_tree(html)))[0] == md._structured(_tree(html))[0]
    plain = md._structured
    monkeypatch.setattr(md, "_structured", lambda root, tags=None: plain(root))  # every extruct pass runs
    assert fast == md.read_metadata(_tree(html))


def test_item_types_are_those_of_the_elements_with_itemscope():
    from newsclean.transforms import kernel
    from newsclean.transforms.metadata import _ITEM_TYPES, item_types

    pages = [*METADATA_PAGES, '<html><body><div itemtype="http://schema.org/NewsArticle"><p itemscope>x</p>'
             '<p itemscope="" itemtype="a b">y</p></div></body></html>']
    for html in pages:
        root = _tree(html)
        assert _ITEM_TYPES(root) == root.xpath("//*[@itemscope]/@itemtype")
        for python in (True, False):
            with kernel.python_only(python):
                assert item_types(root) == root.xpath("//*[@itemscope]/@itemtype")
    assert _ITEM_TYPES(_tree(pages[-1])) == ["a b"]


_TITLE_AND_HEADING_PAGES = (
    "<html><body><svg><title>Icon</title></svg><h1>One <h1>Two</h1></h1><p>text</p></body></html>",
    "<html><head><title> Harbour\n budget </title></head><body>" + "".join(f"<h1>H {i}</h1>" for i in range(8))
    + "<title>Second</title></body></html>",
    "<html><head><meta name='x' content='y'></head><body><p>No title, no heading.</p></body></html>",
    "<html><head><title></title></head><body><div><h1><span>Nested</span> heading</h1></div></body></html>",
)


@pytest.mark.parametrize("python", [True, False])
def test_page_tags_find_the_first_title_below_the_root_and_the_first_headings(python):
    from newsclean.transforms import kernel
    from newsclean.transforms import metadata as md

    for html in _TITLE_AND_HEADING_PAGES + tuple(METADATA_PAGES):
        root = _tree(html)
        with kernel.python_only(python):
            tags = md.page_tags(root)
        assert tags.title_element is root.find(".//title")
        assert list(tags.headings) == list(root.iter("h1"))[:md.MAX_HEADINGS]
    headings = md.page_tags(_tree(_TITLE_AND_HEADING_PAGES[1])).headings
    assert [h.text for h in headings] == [f"H {i}" for i in range(md.MAX_HEADINGS)]


def test_find_title_from_the_page_tags_is_the_one_from_the_tree():
    from newsclean.transforms import metadata as md

    found = []
    for html in _TITLE_AND_HEADING_PAGES + tuple(METADATA_PAGES):
        root = _tree(html)
        found.append(md.find_title(root, {}, None, md.page_tags(root)))
        assert found[-1] == md.find_title(root, {}, None)
    assert found[:4] == ["Icon", "Harbour budget", None, "Nested heading"]  # <title>, then the first <h1>


def test_page_tags_are_the_plain_walks():
    from newsclean.transforms import metadata as md
    from newsclean.transforms.text import collapse_ws

    for html in METADATA_PAGES:
        root, tags = _tree(html), md.page_tags(_tree(html))
        meta: dict[str, list[str]] = {}
        for m in root.iter("meta"):
            key = (m.get("property") or m.get("name") or m.get("itemprop") or m.get("http-equiv") or "").strip().lower()
            if key and collapse_ws(m.get("content")):
                meta.setdefault(key, []).append(collapse_ws(m.get("content")))
        assert tags.meta == meta
        assert tags.head_properties == root.xpath("//head/meta[@property and @content]/@property")
        links = [ln for ln in root.iter("link") if "canonical" in (ln.get("rel") or "").lower().split()
                 and md._web_url(ln.get("href"))]
        assert tags.canonical_url == (links[0].get("href").strip() if links else None)
    assert md.page_tags(_tree(METADATA_PAGES[5])).canonical_url == "/a/b"


def test_article_microdata_is_found_by_the_precheck():
    from newsclean.transforms.metadata import _has_article_item, read_metadata

    assert _has_article_item(_tree(METADATA_PAGES[2]))
    assert not _has_article_item(_tree(METADATA_PAGES[1]))
    assert read_metadata(_tree(METADATA_PAGES[2])).article_body == "Body text."





def test_block_features_compute_only_the_groups_a_model_names(monkeypatch):
    # a model trained without a group (--drop-groups) costs nothing for it at run time: its function is never called
    import numpy as np

    from newsclean.transforms import kernel
    from newsclean.transforms.classifier import features

    root = lxml.html.document_fromstring(
        "<html><body><div class='nav'><a href='/'>Home</a> | <a href='/w'>World</a></div>"
        "<p>First paragraph, with 3 commas, 2 digits and a phrase: read more.</p><p>Second one.</p></body></html>")
    blocks = extract_blocks(root)
    full = features.block_features(blocks)
    names = [n for n in vocab.FEATURE_NAMES if n not in vocab.FEATURE_GROUPS["text"]]

    def refuse(page):
        raise AssertionError("the text group was computed for a model without it")

    monkeypatch.setitem(features._GROUP_FUNCTIONS, "text", refuse)
    with kernel.python_only():  # the Python reference's group functions (the compiled kernel has its own)
        sub = features.block_features(blocks, names=names)
        assert np.array_equal(sub, full[:, [vocab.FEATURE_NAMES.index(n) for n in names]])
        with pytest.raises(AssertionError, match="text group"):
            features.block_features(blocks, names=["comma_ratio", "words_log"])


# --- lines in C, own texts in one XPath, counts of candidates only -------------

WRAP_TEXTS = [
    *DENSITY_TEXTS, *NARROW_TEXTS,
    "x" * 80 + " y " + "z" * 79 + " end of the line here",  # tokens exactly as wide as the line, and one less
    "a " * 39 + "b" * 81 + " c" * 30,  # a token wider than the line: the per-token wrap
    "one, two; three. four! (five) six's seven-eight " * 7,
]


@pytest.mark.parametrize("text", WRAP_TEXTS)
@pytest.mark.parametrize("width", [80, 20, 7, 1])
def test_text_density_with_counted_words_matches_the_wrap(text, width):
    # the block builder passes its word count and tokens: the lines are then found by one regex when every token
    # is a word; text with doubled or other whitespace is wrapped as its tokens joined by single spaces
    tokens = text.split()
    n = count_words(text)
    expected = _density_reference(" ".join(tokens), width)
    assert text_density(" ".join(tokens), width, n, tokens) == expected
    assert text_density(text, width, n) == expected
    assert text_density(text.replace(" ", " \t "), width, n) == expected


def test_blocks_without_detail_are_the_blocks_without_density_and_pieces():
    root = _tree("<body><div class='nav'><a href='/'>Home</a> | <b>World</b></div><p>" + "A long paragraph, "
                 * 20 + "<a href='/x'>linked words</a> end.</p><ul><li>one</li><li>\xa0</li></ul></body>")
    params = BlockParams(non_separator_tags=("a", "b"))
    full, light = extract_blocks(root, params), extract_blocks(root, params, detail=False)
    assert [(b.text, b.num_words, b.num_linked_words, b.container, b.words) for b in light] == \
        [(b.text, b.num_words, b.num_linked_words, b.container, b.words) for b in full]
    assert all(b.text_density == 0.0 and b.pieces == [] for b in light)
    assert any(b.text_density != 0.0 for b in full)


OWN_TEXT_PAGES = [
    NOISE_PAGE,
    "<html><body><div>\xa0<p>x</p>\xa0</div><div> <!-- c --> after <b>b</b>\u2003tail </div><p>\t</p></body></html>",
    "<html><head><title>T</title></head><body>top<div><div>deep <span>in</span> tail</div>mid</div>end"
    "<div class='a' id='b'><p>same</p></div><div id='b' class='a'><p>same</p></div></body></html>",
]


@pytest.mark.parametrize("html", OWN_TEXT_PAGES)
def test_own_texts_are_the_non_empty_own_text_of_every_element(html):
    root = _tree(html)
    expected = {el: own_text(el) for el in root.iter() if is_element(el) and own_text(el)}
    assert own_texts(root) == expected
    div = root.find("body")
    assert own_texts(div) == {el: t for el, t in expected.items() if el is div or div in el.iterancestors()}


def _mark_static_reference(root, signature, keep_embedded=True):
    # the per-element definition: every element in document order, its parent's answer by is_static
    marked = 0
    for el in [e for e in root.iter() if is_element(e)]:
        if not is_static(el, signature):
            continue
        if keep_embedded and is_static(el.getparent(), signature) is False:
            continue
        mark(el, STATIC)
        marked += 1
    return marked


@pytest.mark.parametrize("html", OWN_TEXT_PAGES)
@pytest.mark.parametrize("keep_embedded", [True, False])
def test_page_keys_and_static_marks_match_the_per_element_definition(html, keep_embedded):
    root = _tree(html)
    assert page_keys(root) == {key_digest(k) for k in map(node_key, filter(is_element, root.iter())) if k is not None}
    other = _tree("<html><body><p>same</p><b>b</b><span>in</span><div>mid</div><a href='/s1'>Static link</a>"
                  "<div>\xa0<p>x</p>\xa0</div></body></html>")
    signature = StaticNoiseSignature(frozenset(page_keys(root) & page_keys(other)), 2)
    params = StaticNoiseParams(keep_embedded=keep_embedded)
    mine, reference = _tree(html), _tree(html)
    assert mark_static_noise(mine, signature, params) == _mark_static_reference(reference, signature, keep_embedded)
    assert etree.tostring(mine) == etree.tostring(reference)


def _path_digest_reference(el):
    value = 0
    for node in reversed([el, *el.iterancestors()]):
        value = _digest(f"{value:x}/{element_token(node)}")
    return value


def test_path_digests_of_siblings_alike_match_the_walk_from_the_root():
    root = _tree("<html><body><div class='x a1'><p>1</p><p class='a'>2</p><p class='a'>3</p><p class=' A '>4</p></div>"
                 "<div class='x a2'><p>5</p><!-- c --><p id='k'>6</p><p id='k9'>7</p></div></body></html>")
    digests = PathDigests()
    elements = [el for el in root.iter() if is_element(el)]
    assert [digests(el) for el in reversed(elements)][::-1] == [_path_digest_reference(el) for el in elements]


@pytest.mark.parametrize("classes", ["", "b a b", "post-4711 story", "x\u00b2 y \u0663z plain", "  Mixed CASE  c2d e "])
def test_element_token_matches_its_definition(classes):
    el = _tree(f"<html><body><div class='{classes}' id=' Main '></div></body></html>").find(".//div")
    names = sorted({c for c in classes.lower().split() if not any(ch.isdigit() for ch in c)})
    assert element_token(el) == ".".join(["div", *names]) + "#main"


@pytest.mark.parametrize("marked", [None, "static", "rel"])
def test_counts_of_candidates_only_are_the_full_counts_and_mark_alike(marked):
    root, full_root = _tree(NOISE_PAGE), _tree(NOISE_PAGE)
    for tree in (root, full_root):
        if marked:
            mark(tree.get_element_by_id(marked), STATIC if marked == "static" else DYNAMIC)
    full, light = TextCounts(root), TextCounts(root, candidates_only=True)
    assert set(light.counts) == set(light.pair_depths) == set(full.pair_depths)
    assert all(light.counts[el] == full.counts[el] for el in light.counts)
    params = DynamicNoiseParams(alpha=40)
    count = mark_dynamic_noise(root, params)
    reference = 0  # mark_dynamic_noise over the counts of every element
    counts = TextCounts(full_root, params.protected_tags)
    for el in sorted(counts.pair_depths, key=lambda el: -counts.pair_depths[el]):
        if el.tag not in params.never_noise_tags and is_dynamic_noise(*counts.counts[el], params):
            mark(el, DYNAMIC)
            counts.remove(el)
            reference += 1
    assert count == reference and etree.tostring(root) == etree.tostring(full_root)


@pytest.mark.parametrize("title", [None, "", "Big news: the title of the page", "x"])
def test_page_group_matches_the_per_row_definition(title):
    import math

    import numpy as np

    from newsclean.transforms.classifier import features

    root = _tree("<body><h1>Big news: the title of the page</h1><p>The title words again, big news.</p><p>x</p>"
                 "<div>Other words here</div></body>")
    blocks = extract_blocks(root, BlockParams(non_separator_tags=("a",)))
    ctx = features.PageContext(title, True)
    page = features._Page(blocks, ctx, None, [b.words for b in blocks], [b.container for b in blocks],
                          sum(b.num_words for b in blocks) or 1)
    n, title_text = len(blocks), (title or "").strip().lower()
    tokens = set(vocab.TITLE_TOKEN.findall(title_text))
    rows = []
    for i, b in enumerate(blocks):
        toks = set(vocab.TITLE_TOKEN.findall(b.text.lower()))
        text = b.text.strip().lower()
        rows.append([i / max(1, n - 1), b.num_words / page.page_words,
                     len(toks & tokens) / len(toks) if toks and tokens else 0.0,
                     float(bool(text) and bool(title_text) and (text == title_text or (len(text) > 15 and text in title_text))),
                     math.log1p(n), 1.0])
    assert np.array_equal(features._page_group(page), np.array(rows))


# --- region recall: blocks under a scope from their ancestors --------------------------------------

@pytest.mark.parametrize("html", HOLDER_PAGES)
def test_words_under_from_ancestors_matches_the_subtree_set(html):
    from newsclean.transforms.refine.region import text_container
    from newsclean.transforms.refine.region_recall import _words_under

    root = _tree(html)
    blocks = extract_blocks(root, BlockParams())
    containers = [text_container(b) for b in blocks]
    for scope in root.iter():
        if not is_element(scope):
            continue
        under = set(scope.iter())
        inside = [c in under for c in containers]
        assert _words_under(scope, blocks, containers) == (inside, sum(b.num_words for b, i in zip(blocks, inside) if i))


# --- marked elements: the marks' parents are the elements a predicate finds ------------------------

def test_marked_elements_from_their_attributes_match_the_predicate():
    from newsclean.transforms.marks import _MARKED
    from newsclean.transforms.vocab import NOISE_ATTR

    root = _tree(NOISE_PAGE + "<div><a href='/x'>y</a><p><a>z</a></p></div>")
    elements = [el for el in root.iter() if is_element(el)]
    for i, el in enumerate(elements):
        if i % 3 == 0:
            mark(el, STATIC if i % 2 else DYNAMIC)
    elements[1].set(NOISE_ATTR, "other")
    assert _MARKED[None](root) == root.xpath(f"descendant-or-self::*[@{NOISE_ATTR}]")
    for stage, xpath in ((STATIC, _MARKED[STATIC]), (DYNAMIC, _MARKED[DYNAMIC])):
        expected = root.xpath(f"descendant-or-self::*[@{NOISE_ATTR} = '{stage}']")
        assert xpath(root) == expected and expected
        assert xpath(elements[3]) == elements[3].xpath(f"descendant-or-self::*[@{NOISE_ATTR} = '{stage}']")


# --- stage 2 with LightGBM's prediction early stopping: only sure rows move, never across a decision -------

EARLY_STOP_PAGE = (
    "<html><head><title>Council approves the new harbour budget</title></head><body>"
    "<ul class='nav'>" + "".join(f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(12)) + "</ul>"
    "<div class='story'><h1>Council approves the new harbour budget</h1>"
    + "".join(f"<p>The council voted {i} times on the harbour budget before the final reading, and the members "
              f"who opposed it said the costs of dredging the channel had been left out of the estimate {i}.</p>"
              for i in range(8))
    + "</div><div class='related'><h3>Related stories</h3>"
    + "".join(f"<p><a href='/r{i}'>Another story about the harbour number {i}</a></p>" for i in range(6))
    + "</div><div class='footer'>Copyright 2024 The Daily Example. All rights reserved. Contact us.</div></body></html>")


def _stage2_probabilities(margin):
    from dataclasses import replace

    from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
    from newsclean.transforms.classifier.model import PageContext, content_probabilities

    page = prepare_blocks(EARLY_STOP_PAGE, None, DEFAULT_CONFIG)
    params = replace(DEFAULT_CONFIG.learned, context_early_stop_margin=margin)
    return content_probabilities(page.blocks, PageContext(page.meta.title, False, None, page.meta.article_body), params)


def test_stage2_early_stopping_moves_only_sure_probabilities():
    np = pytest.importorskip("numpy")
    pytest.importorskip("lightgbm")
    full, stopped = np.array(_stage2_probabilities(None)), np.array(_stage2_probabilities(10.0))
    moved = full != stopped
    assert moved.any()  # the parameter reaches LightGBM: some rows stop before the last tree
    # margin 10 = 2 x |raw score| > 10: a stopped row's probability is past 0.9933 (or below 0.0067)
    assert np.all((stopped[moved] > 0.993) | (stopped[moved] < 0.007))
    assert np.array_equal(full >= 0.5, stopped >= 0.5)


def test_early_stopping_calls_predict_as_booster_predict_with_its_parameters():
    np = pytest.importorskip("numpy")
    pytest.importorskip("lightgbm")
    from newsclean.transforms.classifier.features import CONTEXT_FEATURE_NAMES
    from newsclean.transforms.classifier.model import (
        DEFAULT_CONTEXT_MODEL,
        LearnedParams,
        booster_predict,
        load_model,
        predict_parameters,
    )
    from newsclean.transforms.vocab import FEATURE_NAMES

    booster = load_model(str(DEFAULT_CONTEXT_MODEL), FEATURE_NAMES + CONTEXT_FEATURE_NAMES).boosters[0]
    X = np.random.default_rng(3).random((41, booster.num_feature())) * 3
    expected = booster.predict(X, **predict_parameters(4.0))
    assert np.array_equal(booster_predict(booster, X, 4.0), expected)
    assert np.array_equal(booster_predict(booster, np.asfortranarray(X), 4.0), expected)  # the wrapper's path
    with pytest.raises(ValueError, match="early_stop_margin"):
        predict_parameters(0)
    with pytest.raises(ValueError, match="early_stop_margin"):
        LearnedParams(context_early_stop_margin=-1.0)  # at configuration time, not on the first page


@functools.cache
def _all_whitespace() -> str:
    """Every character the regex ``\\s`` matches in a str (read once, when a test first asks)."""
    return "".join(chr(cp) for cp in range(0x110000) if re.fullmatch(r"\s", chr(cp)))


def test_every_regex_whitespace_character_is_str_whitespace():
    assert len(_all_whitespace()) > 20  # ASCII's six, the separators \x1c-\x1f, NEL, NBSP, the Unicode spaces
    assert all(c.isspace() for c in _all_whitespace())
    assert not [cp for cp in range(0x110000) if chr(cp).isspace() and not re.fullmatch(r"\s", chr(cp))]


def test_collapse_ws_is_the_whitespace_regex_substitution():
    import random

    from newsclean.transforms.text import collapse_ws

    rng = random.Random(7)
    pieces = list(_all_whitespace()) + ["a", "Bb", "\u00e9", "\u4e2d", "\U0001f600", "\u200b", "_", ".", "\ufeff"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert collapse_ws(text) == re.sub(r"\s+", " ", text).strip(), repr(text)
    assert collapse_ws(None) == ""

"""StaDyNoT §3.2 dynamic noise (LCA of anchors, the <p> rule, α and β), on hand-written trees."""

import lxml.html

from newsclean.transforms.dynamic_noise import (
    DynamicNoiseParams,
    candidate_nodes,
    is_dynamic_noise,
    mark_dynamic_noise,
)
from newsclean.transforms.marks import mark
from newsclean.transforms.vocab import DYNAMIC, NOISE_ATTR, STATIC

LONG = "This sentence is plain article prose without any link in it at all, long enough. " * 3


def doc(body: str):
    return lxml.html.document_fromstring(f"<html><head><title>t</title></head><body>{body}</body></html>")


def dynamic(root):
    return [el for el in root.iter() if el.get(NOISE_ATTR) == DYNAMIC]


def test_lca_of_two_links_in_one_list_is_the_list():
    root = doc("<div><ul id='u'><li><a>a</a></li><li><a>b</a></li></ul></div>")
    assert [el.get("id") for el in candidate_nodes(root)] == ["u"]


def test_related_links_list_is_dynamic_noise_and_article_is_not():
    root = doc(
        f"<div id='wrap'><div id='story'><p>{LONG}<a href='/x'>one source</a> and more {LONG}</p>"
        f"<p>{LONG}<a href='/y'>another source</a>.</p></div>"
        "<ul id='related'><li><a href='/1'>Related story one</a></li><li><a href='/2'>Related story two</a></li>"
        "<li><a href='/3'>Related story three</a></li></ul></div>"
    )
    assert mark_dynamic_noise(root) == 1
    assert [el.get("id") for el in dynamic(root)] == ["related"]


def test_p_candidate_is_never_dynamic_noise():
    root = doc("<div><p><a href='/a'>link one</a> <a href='/b'>link two</a></p></div>")
    cands = candidate_nodes(root)
    assert [c.tag for c in cands] == ["p"]
    assert mark_dynamic_noise(root) == 0


def test_same_list_is_noise_when_not_a_p():
    root = doc("<div><div id='d'><a href='/a'>link one</a> <a href='/b'>link two</a></div></div>")
    mark_dynamic_noise(root)
    assert [el.get("id") for el in dynamic(root)] == ["d"]


def test_alpha_counts_non_link_characters_with_spaces():
    params = DynamicNoiseParams(alpha=50, beta=1.0)  # β off: only the α test decides
    assert is_dynamic_noise(link_chars=0, nonlink_chars=49, params=params)
    assert not is_dynamic_noise(link_chars=0, nonlink_chars=50, params=params)


def test_beta_is_a_link_fraction():
    params = DynamicNoiseParams(alpha=0, beta=0.2)
    assert is_dynamic_noise(link_chars=21, nonlink_chars=79, params=params)  # LF 0.21 > 0.2
    assert not is_dynamic_noise(link_chars=20, nonlink_chars=80, params=params)  # LF 0.2, not greater


def test_deepest_first_so_a_wrapper_is_judged_without_its_marked_box():
    # The wrapper holds the article (about 250 non-link characters, 1 short link) and a box of
    # 6 long links (~190 link characters): with the box counted, LF(wrapper) > 0.2.
    box = "".join(f"<li><a href='/{i}'>A long related headline number {i}</a></li>" for i in range(6))
    root = doc(f"<div id='wrapper'><div><a href='/s'>src</a> {LONG}</div><ul id='box'>{box}</ul></div>")
    mark_dynamic_noise(root)
    assert [el.get("id") for el in dynamic(root)] == ["box"]


def test_static_noise_text_is_not_counted():
    # The wrapper's LF would be > 0.2 with the static navigation's 6 long links counted.
    nav = "".join(f"<a href='/{i}'>Navigation section title {i}</a>" for i in range(6))
    root = doc(f"<div id='w'><div id='nav'>{nav}</div><p>{LONG}</p><a href='/1'>z1</a> <a href='/2'>z2</a></div>")
    mark(root.get_element_by_id("nav"), STATIC)
    mark_dynamic_noise(root)
    assert dynamic(root) == []


def test_body_is_never_marked():
    root = doc("<a href='/1'>one</a><div><a href='/2'>two</a></div>")
    mark_dynamic_noise(root)
    assert all(el.tag not in ("html", "body") for el in dynamic(root))

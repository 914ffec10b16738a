"""StaDyNoT §3.1 static noise, on hand-written neighbour pages."""

import lxml.html
import pytest

from newsclean.transforms.noise_removal import remove_noise
from newsclean.transforms.site_evidence import learn_site_evidence
from newsclean.transforms.static_noise import StaticNoiseParams, mark_static_noise, node_key
from newsclean.transforms.vocab import NOISE_ATTR, STATIC


def page(article: str, extra: str = "") -> str:
    return f"""<html><body>
    <div id="nav"><a href="/">Home</a> <a href="/sports">Sports</a></div>
    <div class="story"><p>{article}</p>{extra}</div>
    <div id="foot">© 2013 Cable News Network. All Rights Reserved.</div>
    </body></html>"""


def learn_static(pages, params=StaticNoiseParams()):
    """The §3.1 signature of ``pages`` (the static part of the site evidence learnt from them)."""
    return learn_site_evidence(pages, params).static


ARTICLES = [f"Article number {i} says something different about match {i}." for i in range(4)]


def marked_texts(root):
    return sorted(el.text_content().strip() for el in root.iter() if el.get(NOISE_ATTR) == STATIC)


def test_key_is_tag_attributes_and_own_text():
    el = lxml.html.fragment_fromstring('<a class="x" href="/">Home <b>bold</b> tail</a>')
    assert node_key(el) == "a:class=x;href=/:Home tail"


def test_node_without_own_text_has_no_key():
    el = lxml.html.fragment_fromstring("<div>  <p>text</p>  </div>")
    assert node_key(el) is None


def test_repeated_nodes_are_static_and_article_is_not():
    sig = learn_static([page(a) for a in ARTICLES])
    target = lxml.html.document_fromstring(page("A brand new article about the final."))
    mark_static_noise(target, sig)
    assert marked_texts(target) == ["Home", "Sports", "© 2013 Cable News Network. All Rights Reserved."]


def test_support_needs_every_neighbour_page_by_default():
    pages = [page(a) for a in ARTICLES]
    pages[0] = pages[0].replace("© 2013", "© 2014")
    sig = learn_static(pages)
    target = lxml.html.document_fromstring(page("x"))
    mark_static_noise(target, sig)
    assert "© 2013 Cable News Network. All Rights Reserved." not in marked_texts(target)


def test_support_threshold_is_a_parameter():
    pages = [page(a) for a in ARTICLES]
    pages[0] = pages[0].replace("© 2013", "© 2014")
    sig = learn_static(pages, StaticNoiseParams(min_support=0.75))
    target = lxml.html.document_fromstring(page("x"))
    mark_static_noise(target, sig)
    assert "© 2013 Cable News Network. All Rights Reserved." in marked_texts(target)


def test_support_counts_once_per_page():
    # "Share" twice on one page and absent on the other: support 1 of 2, not 2 of 2.
    one = page("a", extra="<span>Share</span><span>Share</span>")
    two = page("b")
    sig = learn_static([one, two])
    target = lxml.html.document_fromstring(one)
    mark_static_noise(target, sig)
    assert "Share" not in marked_texts(target)


def test_a_single_page_learns_nothing():
    sig = learn_static([page("only one")])
    assert len(sig) == 0 and sig.pages == 1


def test_container_without_own_text_is_never_static_even_if_all_children_are():
    # The same wrapper around different articles: every child of .story differs, .story has no own text.
    sig = learn_static([page(a) for a in ARTICLES])
    target = lxml.html.document_fromstring(page("New text."))
    mark_static_noise(target, sig)
    story = target.find_class("story")[0]
    assert story.get(NOISE_ATTR) is None


def test_container_with_static_label_keeps_its_article_on_removal():
    html = '<html><body><div class="body">Advertisement<p>{}</p></div></body></html>'
    sig = learn_static([html.format(a) for a in ARTICLES])
    target = lxml.html.document_fromstring(html.format("The article that must survive."))
    assert mark_static_noise(target, sig) == 1
    remove_noise(target)
    assert target.text_content().strip() == "The article that must survive."


@pytest.mark.parametrize("support", [0.0, 1.5])
def test_bad_support_is_rejected(support):
    with pytest.raises(ValueError):
        StaticNoiseParams(min_support=support)


def test_node_embedded_in_changing_running_text_is_not_static():
    html = "<html><body><p>Story {} told by <b>WASHINGTON</b> sources today.</p></body></html>"
    sig = learn_static([html.format(i) for i in range(3)])
    target = lxml.html.document_fromstring(html.format(9))
    assert mark_static_noise(target, sig) == 0
    assert mark_static_noise(target, sig, StaticNoiseParams(keep_embedded=False)) == 1


def test_marking_a_container_first_does_not_hide_its_static_children():
    # The nav <div> (own text "|") is marked before its links are visited; the mark must not
    # change its key, or the links would look embedded in non-static text and stay.
    with_bar = [page(a).replace('<div id="nav">', '<div id="nav">| ') for a in ARTICLES]
    target = lxml.html.document_fromstring(page("x").replace('<div id="nav">', '<div id="nav">| '))
    mark_static_noise(target, learn_static(with_bar))
    assert {"Home", "Sports"} <= set(marked_texts(target))

"""``newsclean explain``: one self-contained HTML report of what each stage of the chain did to a page.

The chain runs as usual (:func:`newsclean.transforms.chain.prepare_blocks`); once noise is marked, every
element gets an id and the tree is copied. Every text piece of the copy (an element's text or a
child's tail) is then labelled with the stage that removed it, or ``kept``:

- ``static``: static noise (StaDyNoT §3.1), ``dynamic``: dynamic noise (§3.2),
- ``non_informative``: inside a §3.3 non-informative tag (script, style, form, ...),
- ``boilerplate``: a text block Boilerpipe classified as boilerplate (Kohlschütter 2010),
- ``ancestor``: a content block outside the ancestor filter's winning group (Viveros-Jiménez 2018),
- ``classifier``: a block the learned classifier dropped (learned configurations; a dropped block
  inside dynamic noise is labelled ``dynamic`` there, as the classifier keeps such marks as features),
- ``boilernet``: a text block BoilerNet labelled boilerplate (the ``boilernet`` configuration, Leonhardt 2020),
- ``hidden``: inside an element a browser does not show (inline ``display: none``, ``hidden``, ...), which a
  configuration with ``BlockParams.skip_hidden`` makes no block (:func:`newsclean.transforms.blocks.is_hidden`),
- ``kept``: text in the extracted article.

The report shows the page's own text with each label in its colour, a legend with words per
label, and the chain's per-stage node and block counts. It holds no script, no image and no
live link.
"""

from __future__ import annotations

import copy
import html as htmllib
from dataclasses import dataclass

import lxml.html
from lxml import etree

from newsclean.transforms.blocks import is_hidden
from newsclean.transforms.boilerpipe import boilerpipe
from newsclean.transforms.chain import DEFAULT_CONFIG, ChainConfig, PreparedPage, prepare_blocks, select_blocks
from newsclean.transforms.features import PageContext, in_dynamic_noise
from newsclean.transforms.marks import DYNAMIC, STATIC, is_element, mark_of, strip_marks
from newsclean.transforms.postprocess import NON_INFORMATIVE_TAGS
from newsclean.transforms.static_noise import StaticNoiseSignature
from newsclean.transforms.text import count_words

ID_ATTR = "data-newsclean-id"
LABELS = ("static", "dynamic", "non_informative", "hidden", "boilerplate", "ancestor", "classifier", "boilernet", "kept")
COLOURS = {
    "static": "#f4b6b6", "dynamic": "#f7d19c", "non_informative": "#d9d9d9", "boilerplate": "#c9d8f2",
    "ancestor": "#e0c8f0", "classifier": "#bfe3e0", "boilernet": "#f0e68c", "kept": "#c8f0c0", "hidden": "#eeeeee",
}
DROP_TAGS = ("script", "style", "noscript", "iframe", "object", "embed", "img", "link", "meta", "svg", "canvas", "video", "audio")


@dataclass(frozen=True)
class Explanation:
    """The report (``html``, a whole document) and the words per label (``words``, keys of :data:`LABELS`)."""

    html: str
    words: dict[str, int]


def explain_page(html: str, signature: StaticNoiseSignature | None = None, config: ChainConfig = DEFAULT_CONFIG,
                 source: str = "page") -> Explanation:
    """Run the chain on decoded ``html`` and build the report. Raises what the chain raises on bad input."""
    snapshot: list[etree._Element] = []

    def take_snapshot(root: etree._Element) -> None:
        for n, el in enumerate(e for e in root.iter() if is_element(e)):
            el.set(ID_ATTR, str(n))
        snapshot.append(copy.deepcopy(root))

    page = prepare_blocks(html, signature, config, on_marked=take_snapshot)
    block_labels = label_blocks(page, config, bool(signature), html)
    tree = snapshot[0]
    words = label_text(tree, block_labels, config.blocks.skip_hidden)
    return Explanation(render(tree, page, words, config, source), words)


def label_blocks(page: PreparedPage, config: ChainConfig, has_signature: bool,
                 html: str | None = None) -> dict[tuple[str, str], str]:
    """``(element id, "text"|"tail") -> label`` for every text piece that ended in a block; ``html``, the decoded
    page, lets the peer rescue run as in :func:`~newsclean.transforms.chain.extract_article` (None: it does not)."""
    ctx = PageContext(page.meta.title, has_signature, article_body=page.meta.article_body, html=html)
    keep = select_blocks(page.blocks, config, ctx)
    if config.boilernet:
        dropped = ["boilernet"] * len(page.blocks)
    elif config.learned:  # a dropped block inside dynamic noise is the dynamic stage's evidence at work
        dropped = ["dynamic" if in_dynamic_noise(b) else "classifier" for b in page.blocks]
    else:
        content = boilerpipe(page.blocks, config.boilerpipe, ctx.title) if config.boilerpipe else [True] * len(keep)
        dropped = ["ancestor" if c else "boilerplate" for c in content]
    labels = {}
    for block, kept, why in zip(page.blocks, keep, dropped):
        for el, slot in block.pieces:
            labels[(el.get(ID_ATTR), slot)] = "kept" if kept else why
    return labels


def _noise_label(el: etree._Element, slot: str, skip_hidden: bool = False) -> str | None:
    """Label of a piece no block holds: the noise or non-informative stage that removed it, or ``hidden`` (with
    ``skip_hidden``) when it lies in an element a browser does not show."""
    owner = el if slot == "text" else el.getparent()
    node = owner
    while node is not None:
        if mark_of(node) == DYNAMIC:
            return "dynamic"
        if mark_of(node) == STATIC:
            return "static"
        if node.tag in NON_INFORMATIVE_TAGS:
            return "non_informative"
        if skip_hidden and node.tag not in ("body", "html") and is_hidden(node):
            return "hidden"
        node = node.getparent()
    return None


def label_text(tree: etree._Element, block_labels: dict[tuple[str, str], str],
               skip_hidden: bool = False) -> dict[str, int]:
    """Wrap every non-blank text piece of ``tree``'s body in a ``<span class="nc-LABEL">``; returns words per label.
    ``skip_hidden``: the configuration made hidden elements no block (their text is labelled ``hidden``)."""
    body = tree.find("body")
    body = tree if body is None else body
    pieces = []
    for el in body.iter():
        if not is_element(el) or el.tag in DROP_TAGS:
            continue
        if el.text and el.text.strip():
            pieces.append((el, "text"))
        if el is not body and el.tail and el.tail.strip() and el.getparent() is not None:
            pieces.append((el, "tail"))
    words = dict.fromkeys(LABELS, 0)
    for el, slot in pieces:
        label = block_labels.get((el.get(ID_ATTR), slot)) or _noise_label(el, slot, skip_hidden) or "non_informative"
        text = getattr(el, slot)
        words[label] += count_words(text)
        _wrap(el, slot, text, label)
    return words


def _wrap(el: etree._Element, slot: str, text: str, label: str) -> None:
    span = etree.Element("span", {"class": f"nc-{label}", "title": label})
    span.text = text
    setattr(el, slot, None)
    if slot == "text":
        el.insert(0, span)
    else:
        el.addnext(span)


def _sanitise(body: etree._Element) -> None:
    for el in list(body.iter(etree.Comment, etree.ProcessingInstruction, *DROP_TAGS)):
        if el.getparent() is not None:
            el.drop_tree()
    for el in body.iter():
        if not is_element(el):
            continue
        for attr in [a for a in el.attrib if a.startswith("on") or a in ("href", "src", "style", "action", ID_ATTR)]:
            del el.attrib[attr]
    strip_marks(body)


def render(tree: etree._Element, page: PreparedPage, words: dict[str, int], config: ChainConfig, source: str) -> str:
    """The whole report document: legend, counts, and the labelled page body."""
    body = tree.find("body")
    body = tree if body is None else body
    _sanitise(body)
    body.tag = "div"
    body.attrib.clear()
    body.set("class", "nc-page")
    css = "\n".join(f".nc-{k} {{ background: {v}; }}" for k, v in COLOURS.items())
    legend = "".join(f'<li><span class="nc-{k}">{k.replace("_", " ")}</span> {words[k]} words</li>' for k in LABELS)
    counts = (f"static nodes removed {page.removed.static}; dynamic nodes {'marked' if config.learned else 'removed'} "
              f"{page.dynamic_marked if config.learned else page.removed.dynamic}; non-informative nodes removed "
              f"{page.non_informative}; text blocks {len(page.blocks)}")
    title = htmllib.escape(page.meta.title or source)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>newsclean explain: {title}</title><style>{css}\n"
        "body { font-family: sans-serif; margin: 2em; } .nc-page { border-top: 2px solid #444; margin-top: 1em; }"
        " .nc-legend li { display: inline-block; margin-right: 1.5em; }</style></head><body>"
        f"<h1>newsclean explain</h1><p>{htmllib.escape(source)}: chain <b>{htmllib.escape(config.name)}</b>; {counts}</p>"
        f'<ul class="nc-legend">{legend}</ul>'
        f"{lxml.html.tostring(body, encoding='unicode', method='html')}</body></html>"
    )

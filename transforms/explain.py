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
- ``site``: a block the page alone would keep that the site's neighbour evidence dropped (learned
  configurations with evidence learnt from neighbours: the site check, recurring texts),
- ``boilernet``: a text block BoilerNet labelled boilerplate (the ``boilernet`` configuration, Leonhardt 2020),
- ``hidden``: inside an element a browser does not show (inline ``display: none``, ``hidden``, ...), which a
  configuration with ``BlockParams.skip_hidden`` makes no block (:func:`newsclean.transforms.dom.is_hidden`),
- ``kept``: text in the extracted article.

The report shows the page's own text with each label in its colour, a legend with words per
label, and the chain's per-stage node and block counts. It holds no script, no image and no
live link.
"""

from __future__ import annotations

import copy
import html as htmllib
from dataclasses import dataclass, replace

import lxml.html
from lxml import etree

from newsclean.transforms.boilerpipe import boilerpipe
from newsclean.transforms.chain import DEFAULT_CONFIG, ChainConfig, PreparedPage, prepare_blocks, select_blocks
from newsclean.transforms.classifier.features import in_dynamic_noise
from newsclean.transforms.dom import is_hidden
from newsclean.transforms.marks import is_element, mark_of, strip_marks
from newsclean.transforms.noise_removal import NON_INFORMATIVE_TAGS
from newsclean.transforms.site_evidence import SiteEvidence
from newsclean.transforms.text import count_words
from newsclean.transforms.vocab import DYNAMIC, STATIC

LABELS = ("static", "dynamic", "non_informative", "hidden", "boilerplate", "ancestor", "classifier", "site", "boilernet",
          "kept")
COLOURS = {
    "static": "#f4b6b6", "dynamic": "#f7d19c", "non_informative": "#d9d9d9", "boilerplate": "#c9d8f2",
    "ancestor": "#e0c8f0", "classifier": "#bfe3e0", "boilernet": "#f0e68c", "kept": "#c8f0c0", "hidden": "#eeeeee",
    "site": "#f2c4e4",
}
DROP_TAGS = ("script", "style", "noscript", "iframe", "object", "embed", "img", "link", "meta", "svg", "canvas", "video", "audio")


#: Node (element, comment or processing instruction) -> its position in document order in the tree the chain
#: marked; the report's copy of that tree maps its nodes to the same numbers, so that a text piece of a block
#: (``(node, "text"|"tail")``) finds its twin in the copy. Nodes are held as keys, so lxml keeps their proxies.
NodeIds = dict[etree._Element, int]

#: Elements whose content an HTML parser reads as text (RCDATA and raw text elements not in :data:`DROP_TAGS`): the
#: report renames them ``div``, so that the label spans inside them stay markup.
RAW_TEXT_TAGS = ("textarea", "title", "xmp", "plaintext", "noembed", "noframes")


@dataclass(frozen=True)
class Explanation:
    """The report (``html``, a whole document) and the words per label (``words``, keys of :data:`LABELS`)."""

    html: str
    words: dict[str, int]


def explain_page(html: str, evidence: SiteEvidence | None = None, config: ChainConfig = DEFAULT_CONFIG,
                 source: str = "page") -> Explanation:
    """Run the chain on decoded ``html`` and build the report; ``evidence``, learnt from the page's neighbours
    (:func:`~newsclean.transforms.site_evidence.learn_site_evidence`), brings its site profile along, as in
    :func:`~newsclean.transforms.chain.extract_article`. Raises what the chain raises on bad input."""
    snapshot: list[etree._Element] = []
    ids: NodeIds = {}

    def take_snapshot(root: etree._Element) -> None:
        twin = copy.deepcopy(root)
        for n, (node, copied) in enumerate(zip(root.iter(), twin.iter())):  # comments too: their tails are text
            ids[node] = ids[copied] = n
        snapshot.append(twin)

    page = prepare_blocks(html, evidence, config, on_marked=take_snapshot)
    block_labels = label_blocks(page, config, evidence, ids, html)
    tree = snapshot[0]
    words = label_text(tree, block_labels, ids, config.blocks.skip_hidden, config.removal.non_informative_tags)
    return Explanation(render(tree, page, words, config, source), words)


def label_blocks(page: PreparedPage, config: ChainConfig, evidence: SiteEvidence | None, ids: NodeIds,
                 html: str | None = None) -> dict[tuple[int, str], str]:
    """``(node id, "text"|"tail") -> label`` for every text piece that ended in a block (``ids``: the node ids of
    the marked tree, :data:`NodeIds`), kept as
    :func:`~newsclean.transforms.chain.extract_article` keeps with ``evidence`` (its site profile included);
    ``html``, the decoded page, lets the peer rescue run (None: it does not)."""
    ctx = page.context(evidence, html)
    keep = select_blocks(page.blocks, config, ctx)
    if config.boilernet:
        dropped = ["boilernet"] * len(page.blocks)
    elif config.learned:  # a dropped block inside dynamic noise is the dynamic stage's evidence at work
        alone = select_blocks(page.blocks, config, replace(ctx, site=None)) if ctx.site is not None else keep
        dropped = ["site" if kept_alone else "dynamic" if in_dynamic_noise(b) else "classifier"
                   for b, kept_alone in zip(page.blocks, alone)]
    else:
        content = boilerpipe(page.blocks, config.boilerpipe, ctx.title) if config.boilerpipe else [True] * len(keep)
        dropped = ["ancestor" if c else "boilerplate" for c in content]
    labels = {}
    for block, kept, why in zip(page.blocks, keep, dropped):
        for el, slot in block.pieces:
            labels[(ids.get(el, -1), slot)] = "kept" if kept else why
    return labels


def _noise_label(el: etree._Element, slot: str, skip_hidden: bool = False,
                 removed_tags: tuple[str, ...] = NON_INFORMATIVE_TAGS) -> str | None:
    """Label of a piece no block holds: the noise or non-informative stage (tags ``removed_tags``) that removed it,
    or ``hidden`` (with ``skip_hidden``) when it lies in an element a browser does not show."""
    owner = el if slot == "text" else el.getparent()
    node = owner
    while node is not None:
        if mark_of(node) == DYNAMIC:
            return "dynamic"
        if mark_of(node) == STATIC:
            return "static"
        if node.tag in removed_tags:
            return "non_informative"
        if skip_hidden and node.tag not in ("body", "html") and is_hidden(node):
            return "hidden"
        node = node.getparent()
    return None


def _dropped_keeping_tail(node: etree._Element, removed_tags: tuple[str, ...]) -> bool:
    """Whether the chain removes ``node`` but keeps its tail (``drop_keep_tail``): comments and processing
    instructions, the chain's non-informative tags (``removed_tags``, §3.3's and the chain's own), and static or
    dynamic noise (removed, where a chain removes it)."""
    return not is_element(node) or node.tag in removed_tags or mark_of(node) in (STATIC, DYNAMIC)


def _joined_label(el: etree._Element, slot: str, block_labels: dict[tuple[int, str], str], ids: NodeIds,
                  removed_tags: tuple[str, ...]) -> str | None:
    """The label of the piece a tail joined when the chain removed its node keeping the tail: the tail of the
    nearest previous sibling that has a label, else the parent's text (None: no such piece, or not such a tail)."""
    if slot != "tail" or not _dropped_keeping_tail(el, removed_tags):
        return None
    node = el.getprevious()
    while node is not None:
        label = block_labels.get((ids.get(node, -1), "tail"))
        if label:
            return label
        node = node.getprevious()
    parent = el.getparent()
    return block_labels.get((ids.get(parent, -1), "text")) if parent is not None else None


def label_text(tree: etree._Element, block_labels: dict[tuple[int, str], str], ids: NodeIds,
               skip_hidden: bool = False, removed_tags: tuple[str, ...] = NON_INFORMATIVE_TAGS) -> dict[str, int]:
    """Wrap every non-blank text piece of ``tree``'s body (an element's text, and the tail of an element, a
    comment or a processing instruction; not the text of a :data:`DROP_TAGS` element, which the report leaves
    out) in a ``<span class="nc-LABEL">``; returns words per label. ``ids``: :func:`label_blocks`'; ``skip_hidden``:
    the configuration made hidden elements no block (their text is labelled ``hidden``); ``removed_tags``: the
    configuration's non-informative tags (``NoiseRemovalParams.non_informative_tags``)."""
    body = tree.find("body")
    body = tree if body is None else body
    pieces = []
    for el in body.iter():
        if is_element(el) and el.tag not in DROP_TAGS and el.text and el.text.strip():
            pieces.append((el, "text"))
        if el is not body and el.tail and el.tail.strip() and el.getparent() is not None:
            pieces.append((el, "tail"))
    words = dict.fromkeys(LABELS, 0)
    for el, slot in pieces:
        label = (block_labels.get((ids.get(el, -1), slot)) or _joined_label(el, slot, block_labels, ids, removed_tags)
                 or _noise_label(el, slot, skip_hidden, removed_tags) or "non_informative")
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
        for attr in [a for a in el.attrib if a.startswith("on") or a in ("href", "src", "style", "action")]:
            del el.attrib[attr]
    for el in body.iter(*RAW_TEXT_TAGS):  # their content is text to an HTML parser: the label spans would show as markup
        el.tag = "div"
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

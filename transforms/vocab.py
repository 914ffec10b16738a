"""The vocabularies the chain's stages share with each other and with the compiled kernel: tag sets, word lists,
attribute names and the block classifier's feature names.

Data only (no function reads a tree here): the Python reference modules and ``transforms/_kernel`` read the same
constants, so a list changed here changes both. Sources: the noise marks are StaDyNoT's (Barua et al. 2014 §3) "NOISE"
attribute; the block tags Kohlschütter 2010 §3.3; the paragraph tags Viveros-Jiménez 2018 §4; the cue words,
semantic tags and boilerplate phrases the DOM context of Readability/Dragnet
(:mod:`newsclean.transforms.classifier.features`).
"""

from __future__ import annotations

import re

OWN_ATTR_PREFIX = "data-newsclean-"  # every attribute newsclean adds to a tree starts with this
NOISE_ATTR = OWN_ATTR_PREFIX + "noise"
STATIC = "static"
DYNAMIC = "dynamic"

INLINE_TAGS = (
    "a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "font", "i", "kbd", "mark",
    "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var",
)
#: Elements whose content is no text block: the head, scripts and styles, and the HTML5 raw-text elements whose
#: content a browser never shows (WHATWG HTML "parsing: raw text elements": an ``iframe``'s and a ``noembed``'s
#: inside is fallback markup that libxml2 keeps as text, e.g. ``<iframe><script>document.write(...)``).
SKIP_TAGS = ("head", "script", "style", "noscript", "template", "title", "iframe", "noembed")

PARAGRAPH_TAGS = (
    "div", "table", "ul", "ol", "p", "section", "article",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "body",
)
"""Tags of a *paragraph* (Viveros-Jiménez 2018 §4): the closest ancestor-or-self of a text with one of them."""

BODY_NAME = re.compile(
    r"(?:^|[\s_-])(?:article|story|entry|post|news|blog|td-post|single|main)[_-]?(?:body|content|text|copy)(?:$|[\s_-])"
    r"|articlebody|article__body|story__body|body[_-]?text|bodytext|post__content|rich[_-]?text"
    r"|field-name-body|field--name-body|itemprop-articlebody|c-entry-content|zn-body",
)
"""Class/id names of article bodies (lowercased ``class`` and ``id`` joined by a space)."""

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
TITLE_TOKEN = re.compile(r"[\w-]+")
"""A token of the title match (``title_overlap``): a run of word characters and hyphens."""

LEXICON_FEATURE_NAMES = ("lex_boiler_mean", "lex_boiler_max", "lex_coverage")
TABLE_FEATURE_NAMES = (
    "table_cells_log", "table_nesting", "table_word_share", "table_link_density", "table_has_th",
    "table_in_best_cluster",
)
SITE_FEATURE_NAMES = (
    "site_in_content", "site_content_here",
    "site_path_support", "site_path_word_share", "site_path_text_varies", "site_path_link_density",
    "site_text_support",
)
"""Columns of :func:`~newsclean.transforms.classifier.features.site_features`, by piece of the site profile's evidence
(:mod:`newsclean.transforms.site_profile`: content container, recurring structures, recurring texts)."""
STRUCTURE_FEATURE_NAMES = (
    "in_article_container", "in_article_body_prop", "body_class_id", "container_word_share",
    "page_has_container", "ld_body_share", "ld_body_present", "ld_body_coverage",
)
"""Columns of :func:`~newsclean.transforms.classifier.features.structure_features` (the marks of
:mod:`newsclean.transforms.structure`), all floats:

- ``in_article_container``: 1 inside ``<article>``, ``<main>``, ``[role=main]`` or ``[itemprop/property=articleBody]``;
- ``in_article_body_prop``: 1 inside an element whose ``itemprop`` or ``property`` names ``articleBody``;
- ``body_class_id``: 1 when an ancestor-or-self's class or id is an article-body name (:data:`BODY_NAME`);
- ``container_word_share``: share in [0, 1] of the page's words inside the block's nearest such
  container or body-named element (0 outside one);
- ``page_has_container``: 1 when any block of the page lies in one;
- ``ld_body_share``: share in [0, 1] of the block's word bigrams (a one-word block: its word) that occur
  in the page's ``articleBody`` text, lowercased (0 without one);
- ``ld_body_present``: 1 when the page has an ``articleBody`` of at least :data:`newsclean.transforms.structure.MIN_BODY_WORDS` words;
- ``ld_body_coverage``: the ``articleBody``'s words over the page's block words, capped at 1 (a teaser
  ``articleBody`` covers little of a long article; 0 without one).
"""
SHALLOW_FEATURE_NAMES = ("words_log", "link_density", "text_density", "avg_word_len", "capital_ratio", "stop_ratio")
"""Kohlschütter 2010 §3.3's shallow text features of one block (words, link density, text density, average word
length, capitalised-word ratio, full stops)."""

FEATURE_GROUPS: dict[str, tuple[str, ...]] = {
    "shallow": (*SHALLOW_FEATURE_NAMES, *(f"prev_{n}" for n in SHALLOW_FEATURE_NAMES),
                *(f"next_{n}" for n in SHALLOW_FEATURE_NAMES)),
    "text": ("comma_ratio", "digit_ratio", "chars_log", "boiler_phrases"),
    "papers": ("dynamic_noise", "bp_alg1", "bp_alg2", "anc_group", "anc_subtree", "anc_group_share"),
    "dom": ("container_class", *(f"in_{t}" for t in SEMANTIC_TAGS),
            "neg_words", "pos_words", "neg_words_near", "pos_words_near", "depth"),
    "page": ("rel_position", "page_word_share", "title_overlap", "is_title", "blocks_log", "has_signature"),
    "cluster": ("para_siblings_log", "para_words_share", "cluster_score_parent", "cluster_score_grandparent",
                "in_best_cluster"),
    "neighbours": ("prev2_words_log", "prev2_link_density", "next2_words_log", "next2_link_density"),
    "table": TABLE_FEATURE_NAMES,
    "lexicon": LEXICON_FEATURE_NAMES,
    "site": SITE_FEATURE_NAMES,
    "structure": STRUCTURE_FEATURE_NAMES,
}
"""The block features by group (the function computing each group:
``newsclean.transforms.classifier.features._GROUP_FUNCTIONS``)."""

FEATURE_NAMES = (
    *SHALLOW_FEATURE_NAMES,
    *(f"prev_{n}" for n in SHALLOW_FEATURE_NAMES),
    *(f"next_{n}" for n in SHALLOW_FEATURE_NAMES),
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
    *SITE_FEATURE_NAMES,
    *STRUCTURE_FEATURE_NAMES,
)
"""Column order of the feature matrix, as the shipped models were trained (the model files record it:
:func:`newsclean.transforms.classifier.model.load_model` refuses a model whose names differ)."""

FEATURE_INDEX = {name: k for k, name in enumerate(FEATURE_NAMES)}


def _check_groups() -> None:
    """Raise RuntimeError unless :data:`FEATURE_GROUPS` names every feature of :data:`FEATURE_NAMES` exactly once."""
    grouped = [n for names in FEATURE_GROUPS.values() for n in names]
    if len(set(grouped)) != len(grouped) or set(grouped) != set(FEATURE_NAMES) or len(FEATURE_NAMES) != len(FEATURE_INDEX):
        raise RuntimeError("FEATURE_GROUPS must name every feature of FEATURE_NAMES exactly once")


_check_groups()

"""Generated hostile pages for the compiled kernel's identity tests: markup and text that hit every place where the
kernel's reading of libxml2's nodes could part from lxml's and Python's (wide and spaceless characters, the
whitespace ``str.split`` knows and XPath does not, case-folding letters in class names, hidden elements in their
variants, comments and processing instructions everywhere, deep trees, marks already on the tree), and trees
changed after parsing so that they hold entity references, namespaced elements and attributes (which the kernel
hands back to Python)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
import random

import lxml.html
from lxml import etree

import newsclean.transforms
from newsclean.transforms import kernel

WORDS = ("the", "council", "voted", "harbour", "budget", "Members", "said", "costs", "were", "left", "out", "share",
         "related", "Read", "more", "copyright", "All", "rights", "reserved", "subscribe", "newsletter", "comments",
         "posted", "by", "click", "here", "you", "may", "also", "tags:", "Log", "in", "privacy", "cookie")
ODD_WORDS = (
    "İstanbul", "KELVIN", "ſhare", "straße", "ÉCOLE", "naïve", "Ωμέγα", "Σίσυφος", "ЖУРНАЛ", "مرحبا", "١٢٣",
    "２０２４", "ｆｕｌｌ", "東京都", "ひらがな", "カタカナ", "ｶﾀｶﾅ", "한국어", "😀🎉", "e\u0301", "ﬁ", "_", "__", "_-", "a_b",
    "x" * 90, "1999", "2024", "©", "—", "’s", "”.", "end.", "Why?", "Yes!", "(a)", "3,000", "U.S.", "ǅ", "ⅷ", "²",
)
SPACES = (" ", " ", " ", "\n", "\t", "\xa0", "\u3000", "\u2009", "\x1c", "\x1f", "\u2028", "\r\n", "  ")
CLASS_WORDS = ("article-body", "entry-content", "story", "content", "main", "nav", "footer", "sidebar", "related",
               "share", "comment", "ad-slot-3", "post-4711", "Promo", "widget", "caption", "byline", "İtem", "KEY",
               "menu", "Breadcrumb", "td-post-content", "x1", "", "ſidebar", "postAuthor", "standfirst", "photo-credit",
               "cookie-consent", "\u212aeypoints", "BYLINE-Box", "photoCaption")
BLOCK_TAGS = ("div", "p", "section", "article", "nav", "aside", "footer", "header", "main", "ul", "li", "table",
              "blockquote", "figure", "figcaption", "h1", "h2", "h4", "pre", "center", "form", "dl", "dd", "dt")
INLINE_TAGS = ("a", "a", "span", "b", "em", "strong", "i", "font", "code", "small", "time", "sub")
VOID_TAGS = ("br", "hr", "img", "input", "meta", "link")
STYLES = ("display:none", "DISPLAY : NONE", "color:red", "visibility:\x1chidden", "display: block", "diſplay:none",
          "visibility : hidden ; color: blue", "display\u3000:none", "")


def _text(rng: random.Random, words: int) -> str:
    out = []
    for _ in range(words):
        out.append(rng.choice(ODD_WORDS) if rng.random() < 0.2 else rng.choice(WORDS))
        out.append(rng.choice(SPACES) if rng.random() < 0.3 else " ")
    return "".join(out)


def _attrs(rng: random.Random) -> str:
    parts = []
    if rng.random() < 0.5:
        parts.append(f'class="{" ".join(rng.sample(CLASS_WORDS, rng.randint(1, 3)))}"')
    if rng.random() < 0.2:
        parts.append(f'id="{rng.choice(CLASS_WORDS)}"')
    if rng.random() < 0.15:
        parts.append(f'style="{rng.choice(STYLES)}"')
    if rng.random() < 0.04:
        parts.append("hidden")
    if rng.random() < 0.05:
        parts.append(f'aria-hidden="{rng.choice(("true", " TRUE ", "false", "truе", ""))}"')
    if rng.random() < 0.05:
        parts.append(f'itemprop="{rng.choice(("articleBody", "name", "author"))}"')
    if rng.random() < 0.03:
        parts.append('role="main"')
    if rng.random() < 0.03:
        parts.append('rel="author"')
    if rng.random() < 0.03:
        parts.append(rng.choice(('role="dialog"', 'aria-modal="true"', 'role="alertdialog" aria-modal="false"')))
    if rng.random() < 0.03:
        parts.append(f'data-newsclean-noise="{rng.choice(("dynamic", "static", ""))}"')
    if rng.random() < 0.1:
        parts.append('href="/x"')
    return (" " + " ".join(parts)) if parts else ""


def _node(rng: random.Random, depth: int, budget: list[int]) -> str:
    budget[0] -= 1
    roll = rng.random()
    if depth > 12 or budget[0] <= 0 or roll < 0.25:
        return _text(rng, rng.randint(0, 30))
    if roll < 0.3:
        return rng.choice(("<!-- a comment -->", "<?php echo 1 ?>", "<!---->", "<!-- 2024 -->"))
    if roll < 0.35:
        return f"<{rng.choice(VOID_TAGS)}{_attrs(rng)}>"
    if roll < 0.38:
        return rng.choice(("<script>var x = '<p>no</p>';</script>", "<style>p{}</style>",
                           "<noscript><p>Enable scripts</p></noscript>", "<iframe>fallback text</iframe>",
                           "<select><option>January</option><option>February</option></select>",
                           "<template><p>later</p></template>", "<textarea>typed text</textarea>"))
    if roll < 0.45:
        rows = []
        for _ in range(rng.randint(1, 3)):
            cells = [f"<{cell}>{_text(rng, 5)}</{cell}>" for cell in (rng.choice(("td", "th")) for _ in range(3))]
            rows.append("<tr>" + "".join(cells) + "</tr>")
        table = "".join(rows)
        return f"<table{_attrs(rng)}><tbody>{table}</tbody></table>"
    tag = rng.choice(INLINE_TAGS if roll < 0.65 else BLOCK_TAGS)
    inner = "".join(_node(rng, depth + 1, budget) for _ in range(rng.randint(0, 5)))
    return f"<{tag}{_attrs(rng)}>{inner}</{tag}>"


def hostile_page(seed: int) -> str:
    """One generated page (decoded HTML), the same for the same seed."""
    rng = random.Random(seed)
    budget = [rng.randint(20, 250)]
    body = "".join(_node(rng, 0, budget) for _ in range(rng.randint(1, 8)))
    if seed % 17 == 0:  # a deep tree
        body = "<div>" * 300 + body + "</div>" * 300
    if seed % 13 == 0:  # most of the page hidden
        body = f'<div style="display:none">{body}{body}</div><p>{_text(rng, 5)}</p>'
    title = _text(rng, rng.randint(0, 8)).strip() if seed % 5 else ""
    head = f"<title>{title}</title>" if title else ""
    if seed % 3 == 0:
        head += ('<script type="application/ld+json">{"@type": "NewsArticle", "headline": "x", '
                 f'"articleBody": "{" ".join(rng.choice(WORDS) for _ in range(40))}"}}</script>')
    return f"<html><head>{head}</head><body{_attrs(rng)}>{body}</body></html>"


HAN_KANA = (
    # Katakana runs with the prolonged sound mark and the middle dot, half-width Katakana and its sound marks
    "コンピューター", "ニュー・ヨーク", "・・", "ー", "ｶﾀｶﾅｰ", "ﾊﾞｽ", "ｰ", "･",
    # Han Ext. B (supplementary plane), unassigned code points inside the Han ranges, compatibility ideographs
    "𠀋𠀍𪚲", "\U0002a6e0", "\u9fff", "豈更",
    # Hiragana next to Latin, digits and underscores; the combining (semi-)voiced marks U+3099/U+309A
    "ひらがなabc", "2024年10月", "東京2020", "_ひ_", "__カ", "か\u3099き\u309a", "\u3099\u309a", "_\u3099",
    # mixed scripts within one token
    "テストtest試験", "a東b", "東京タワーへ", "ｱｲｳ漢字", "Ωカ", "한국어漢字", "ＡＢＣ漢", "。", "、「」",
)
HAN_WORDS = ("東京都", "の", "議会", "は", "予算案", "を", "可決", "した。", "費用", "一部", "含まれて", "いない", "記事")


def han_text(rng: random.Random, units: int) -> str:
    """Chinese/Japanese-like text of ``units`` pieces: Han/Kana words, the :data:`HAN_KANA` cases and Latin words,
    mostly without spaces between them."""
    out = []
    for _ in range(units):
        r = rng.random()
        out.append(rng.choice(HAN_KANA) if r < 0.25 else rng.choice(WORDS) if r < 0.35 else rng.choice(HAN_WORDS))
        if rng.random() < 0.15:
            out.append(rng.choice(SPACES))
    return "".join(out)


def han_page(seed: int) -> str:
    """One generated Chinese/Japanese page (decoded HTML), the same for the same seed: paragraphs long and short
    (the 80-column wrap of wide units), links inside and beside Han text, forms and a box of navigation."""
    rng = random.Random(seed)
    parts = []
    for _ in range(rng.randint(2, 9)):
        text = han_text(rng, rng.choice((1, 3, 20, 60, 150)))
        if rng.random() < 0.4:
            text = f"{han_text(rng, 4)}<a href='/x'>{han_text(rng, rng.randint(1, 30))}</a>{text}"
        if rng.random() < 0.2:
            text = f"<em>{text}</em>{han_text(rng, 3)}"
        tag = rng.choice(("p", "div", "li", "h2", "form"))
        parts.append(f"<{tag}{_attrs(rng)}>{text}</{tag}>")
    if seed % 3 == 0:
        parts.append(f"<form><input name='q'>{han_text(rng, 200)}</form>")
    return f"<html><head><title>{han_text(rng, 5)}</title></head><body>{''.join(parts)}</body></html>"


def site_pages(seed: int, n: int = 4) -> list[str]:
    """``n`` generated pages sharing a template (static boxes, a repeated related list): one neighbour group."""
    rng = random.Random(seed)
    header = f"<div class='masthead'>{_text(rng, 6)}</div><ul class='nav'>" + "".join(
        f"<li><a href='/s{i}'>Section {i}</a></li>" for i in range(5)) + "</ul>"
    footer = f"<div class='footer'>Copyright 2024 {_text(rng, 4)}</div>"
    return [hostile_page(seed * 100 + k).replace("<body", "<body data-x='1'", 1).replace(
        "</body>", header + footer + "</body>") for k in range(n)]


def altered_tree(seed: int) -> etree._Element:
    """A parsed generated page changed through lxml's API: entity references, a namespaced element and a
    namespaced attribute somewhere in the body (nodes an HTML parse never makes)."""
    rng = random.Random(seed)
    root = lxml.html.document_fromstring(hostile_page(seed))
    elements = [el for el in root.iter() if isinstance(el.tag, str) and el.tag not in ("html", "head")]
    target = rng.choice(elements)
    kind = seed % 3
    if kind == 0:
        target.append(etree.Entity("nbsp"))
        target[-1].tail = " after the entity"
    elif kind == 1:
        etree.SubElement(target, "{http://example.org/ns}box").text = "namespaced text"
    else:
        target.set("{http://example.org/ns}flag", "1")
    return root


@functools.cache
def all_bindings() -> tuple[kernel.Binding, ...]:
    """Every row of the kernel's binding table, with every module of ``newsclean.transforms`` imported (each module
    adds its own rows when imported)."""
    for info in pkgutil.walk_packages(newsclean.transforms.__path__, "newsclean.transforms."):
        if "._kernel" not in info.name:
            importlib.import_module(info.name)
    return tuple(kernel.BINDINGS)

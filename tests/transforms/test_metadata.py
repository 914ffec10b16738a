"""Article metadata (newsclean.transforms.metadata) on hand-written pages, and its columns in the Article row.

The pages in tests/fixtures/metadata/ were written for these tests; every expected value below was read off
the page source by hand (JSON-LD, microdata, OpenGraph and meta tags), not copied from the code's output.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from repo import FIXTURES as REPO_FIXTURES
from repo import ROOT

from newsclean.schemas.records import Page, Provenance, StageCounts
from newsclean.transforms.metadata import (
    Metadata,
    absolute_url,
    declared_language,
    identify_language,
    language_labels,
    parse_iso_date,
    read_metadata,
    registered_domain,
)
from newsclean.transforms.parse import parse_html

FIXTURES = REPO_FIXTURES / "metadata"


def _meta(name: str) -> Metadata:
    return read_metadata(parse_html((FIXTURES / name).read_text(encoding="utf-8")))


def _utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_news_article_json_ld():
    m = _meta("news-jsonld.html")
    assert m.title == "Council approves new bridge budget"
    assert m.published_at == _utc(2024, 5, 1, 8, 30)  # 10:30+02:00
    assert m.modified_at == _utc(2024, 5, 2, 7, 15)
    assert m.authors == ("Ann Lee", "Bo Chen")  # Person objects; "By " removed
    assert m.description == "The council voted 7 to 2 for a & new bridge over the Wey."  # JSON-LD wins, entity decoded
    assert m.image_url == "/img/bridge.jpg" and m.canonical_url == "/news/2024/05/01/council-bridge-budget"
    assert m.site_name == "The Riverside Courier"  # og:site_name before the publisher's legal name
    assert m.section == "Local politics" and m.tags == ("bridge", "council", "budget")
    assert m.declared_language == "en-gb"


def test_yoast_graph_picks_the_article_node():
    m = _meta("graph-yoast.html")
    assert m.published_at == _utc(2023, 9, 14, 6, 0) and m.modified_at == _utc(2023, 9, 15, 7, 30)
    assert m.authors == ("Jana Müller",)
    assert m.tags == ("Radweg", "Stadtrat", "Verkehr")  # a comma-separated keywords string
    assert m.section == "Lokales"  # first of a list
    assert m.canonical_url == "https://www.stadtblatt.example.de/lokales/radweg-beschlossen/"  # og:url
    assert m.image_url == "https://www.stadtblatt.example.de/wp-content/uploads/radweg.jpg"
    assert m.site_name == "Kieler Stadtblatt" and m.declared_language == "de-de" and m.description is None


def test_opengraph_and_meta_only():
    m = _meta("og-only.html")
    assert m.published_at == _utc(2022, 11, 25, 8, 0)
    assert m.authors == ("Claire Martin", "Luc Bernard")  # "Par ... and ..." split; the profile URL skipped
    assert m.tags == ("Noël", "Strasbourg")  # repeated article:tag
    assert m.section == "Culture" and m.site_name == "Le Journal de Strasbourg"
    assert m.description == "Cent vingt chalets attendent les visiteurs place Kléber."
    assert m.image_url == "//cdn.journal.example.fr/photos/marche.jpg"
    assert m.declared_language is None  # <html lang="utf-8"> is a charset, not a language


def test_microdata_news_article():
    m = _meta("microdata.html")
    assert m.authors == ("Lucía Ortega",)
    assert m.published_at == _utc(2021, 3, 8) and m.modified_at == _utc(2021, 3, 9, 11, 0)
    assert m.title == "La lluvia vuelve a Sevilla tras meses de sequía" and m.declared_language == "es"


def test_partial_dates_are_never_completed_from_today():
    m = _meta("no-date.html")
    assert m.published_at is None and m.modified_at is None  # "2019", "Tuesday", "10:30"
    assert m.authors == () and m.declared_language is None


def test_broken_json_ld_and_implausible_dates():
    m = _meta("broken-jsonld.html")
    assert m.published_at is None  # 2099 is after today
    assert m.authors == ("Sam Ortiz",)  # the trailing comma is tolerated (jstyleson); JSON-LD beats the meta tag
    assert m.canonical_url == "https://www.valleynews.example.com/weather/storm-pass"  # javascript: skipped
    assert m.tags == ("weather", "roads", "storm") and m.declared_language == "en-us"


def test_reading_metadata_leaves_the_tree_alone():
    root = parse_html((FIXTURES / "news-jsonld.html").read_text(encoding="utf-8"))
    before = [el.tag for el in root.iter()]
    read_metadata(root)
    assert [el.tag for el in root.iter()] == before


@pytest.mark.parametrize("value, expected", [
    ("2024-05-01T10:30:00+02:00", _utc(2024, 5, 1, 8, 30)),
    ("2024-05-01T10:30:00Z", _utc(2024, 5, 1, 10, 30)),
    ("2024-05-01", _utc(2024, 5, 1)),
    ("2024-05-01T10:30:00", _utc(2024, 5, 1, 10, 30)),  # no zone: UTC
    ("2019", None), ("Tuesday", None), ("10:30", None), ("", None), (None, None),
    ("1890-07-01", None), ("2999-01-01", None), ("not a date at all", None),
])
def test_parse_iso_date(value, expected):
    assert parse_iso_date(value) == expected


@pytest.mark.parametrize("value, expected", [
    ("en", "en"), ("en_US", "en-us"), ("EN-gb", "en-gb"), ("zh-Hant-TW", "zh-hant-tw"), ("de, en", "de"),
    ("utf-8", None), ("UTF-8", None), ("iso-8859-1", None), ("windows-1252", None), ("", None), (None, None),
    ("English", None),
])
def test_declared_language(value, expected):
    assert declared_language(value) == expected


@pytest.mark.parametrize("text, lang", [
    ("The council approved the budget for a new bridge over the river on Wednesday evening.", "en"),
    ("Der Stadtrat hat am Mittwochabend mit großer Mehrheit den Bau eines neuen Radwegs beschlossen.", "de"),
    ("Le célèbre marché de Noël de Strasbourg a ouvert ses portes vendredi matin sous un ciel gris.", "fr"),
    ("Las primeras lluvias en varios meses llegaron el domingo a Sevilla y dejaron mucha agua.", "es"),
])
def test_identify_language(text, lang):
    code, score = identify_language(text)
    assert code == lang and 0.5 < score <= 1.0


def test_identify_language_without_letters():
    assert identify_language("") == (None, None) and identify_language("12 34 -- !!") == (None, None)


def test_the_installed_identifier_has_the_documented_label_set():
    # py3langid 0.4's model (README "Languages"): 139 languages and zxx; a release with other labels must fail here.
    labels = language_labels()
    assert len(labels) == 140
    two, three = {c for c in labels if len(c) == 2}, {c for c in labels if len(c) == 3}
    assert (len(two), len(three), two | three) == (114, 26, labels)
    assert {"en", "de", "fr", "es", "zh", "ja", "ar", "sw"} <= two
    assert {"ary", "kik", "yue", "wuu", "zxx"} <= three
    assert {"und", "eng", "zh-cn"}.isdisjoint(labels)  # no abstention label, no ISO 639-2 alias, no region
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "its 140 codes" in readme and "140 of them" in language_labels.__doc__
    assert "97 languages" not in readme + identify_language.__doc__
    assert '"py3langid>=0.4,<0.5"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("url, domain", [
    ("https://www.bbc.co.uk/news/world-1", "bbc.co.uk"),
    ("http://news.example.com.au:8080/a", "example.com.au"),
    ("http://127.0.0.1:8000/x.html", "127.0.0.1"),
    ("not a url", None), ("", None),
])
def test_registered_domain(url, domain):
    assert registered_domain(url) == domain


def test_absolute_url():
    base = "https://courier.example.co.uk/news/2024/05/01/x?utm=1"
    assert absolute_url(base, "/img/a.jpg") == "https://courier.example.co.uk/img/a.jpg"
    assert absolute_url(base, "//cdn.example.org/b.jpg") == "https://cdn.example.org/b.jpg"
    assert absolute_url(base, "javascript:void(0)") is None and absolute_url(base, None) is None


def test_article_row_carries_the_metadata():
    from newsclean.pipeline.stages import build_article, page_facts
    from newsclean.transforms.chain import Extraction
    from newsclean.transforms.finish import finish_fields

    url = "https://courier.example.co.uk/news/2024/05/01/council-bridge-budget?utm_source=feed"
    meta = _meta("news-jsonld.html")
    text = "The town council approved the budget for a new bridge over the river on Wednesday evening."

    def extraction(page):  # as the chain finishes it for the page (clean_page)
        return Extraction(text=text, html=f"<p>{text}</p>", word_count=16, counts=StageCounts(), metadata=meta,
                          **finish_fields(text, meta, "article", page_facts(page))._asdict())

    page = Page(url=url, site="courier", category="news", fetched_at=_utc(2024, 5, 3, 12), status=200,
                content_type="text/html", charset="utf-8", html=b"", provenance=Provenance("/w/c.warc.gz", "<urn:1>", 0))
    row = build_article(page, extraction(page))
    assert row.authors == ("Ann Lee", "Bo Chen") and row.tags == ("bridge", "council", "budget")
    assert row.image_url == "https://courier.example.co.uk/img/bridge.jpg"
    assert row.canonical_url == "https://courier.example.co.uk/news/2024/05/01/council-bridge-budget"
    assert row.domain == "example.co.uk" and row.site_name == "The Riverside Courier"
    assert row.published_at == _utc(2024, 5, 1, 8, 30) and row.modified_at == _utc(2024, 5, 2, 7, 15)
    assert row.language == "en" and row.language_score > 0.9 and row.declared_language == "en-gb"
    # A publication date after the fetch (+1 day) is implausible for this row.
    early = Page(**{**page.__dict__, "fetched_at": _utc(2024, 4, 1)})
    assert build_article(early, extraction(early)).published_at is None


def test_the_chain_hands_its_metadata_on():
    from newsclean.transforms.chain import PAPER_CONFIG, extract_article

    html = (FIXTURES / "graph-yoast.html").read_text(encoding="utf-8")
    extraction = extract_article(html, None, PAPER_CONFIG)
    assert extraction.metadata is not None and extraction.metadata.authors == ("Jana Müller",)


# ------------------------------------------------------------------ headline, bylines, page types


def test_reader_title_drops_the_site_name_a_title_adds():
    from newsclean.transforms.metadata import reader_title

    assert reader_title("Apple buys Beats | TechCrunch", ["TechCrunch"]) == "Apple buys Beats"
    assert reader_title("BBC News - Apple buys Beats", ["BBC News"]) == "Apple buys Beats"
    assert reader_title("Apple buys Beats for $3bn - Los Angeles Times", ["latimes"]) == "Apple buys Beats for $3bn"
    assert reader_title("Apple buys Beats – a long review", [], ["Apple buys Beats"]) == "Apple buys Beats"
    assert reader_title("Spider-Man returns - a review of the new film and its cast", []) == \
        "Spider-Man returns - a review of the new film and its cast"  # a long last part is the headline's
    assert reader_title("TechCrunch", ["TechCrunch"]) == "TechCrunch" and reader_title(None) is None


def test_author_names_are_cleaned_and_found_in_the_byline():
    from newsclean.transforms.chain import extract_article
    from newsclean.transforms.metadata import clean_author_names, read_metadata

    assert clean_author_names(["By John Smith, Updated March 5, 2020", "May Jones", "Jane Doe @jdoe"]) == (
        "John Smith", "May Jones", "Jane Doe")
    assert clean_author_names(["John Smith is a reporter covering the city council for the paper", "Thu",
                               "Times Staff Writer", "View Profile"]) == ()
    prose = "The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks. " * 4
    html = ("<html><head><title>T</title><meta property='og:type' content='article'></head><body>"
            "<div class='comments'><p><span class='author'>Troll Person</span> said this.</p></div>"
            f"<article><h1>Bridge to close</h1><div class='byline'>By <a href='/a'>Jane Doe</a> and John Roe</div>"
            f"<p>{prose}</p><p>{prose}</p></article></body></html>")
    meta = read_metadata(parse_html(html))
    assert meta.authors == () and meta.page_types == ("article",) and meta.page_title == "T"
    assert extract_article(html).metadata.authors == ("Jane Doe", "John Roe")  # the byline beside the article


def _paywall_page(jsonld: str) -> str:
    return (f"<html><head><title>T</title><script type='application/ld+json'>{jsonld}</script></head>"
            "<body><p>Text.</p></body></html>")


@pytest.mark.parametrize("value, expected", [
    ("false", False), ("true", True),  # JSON booleans
    ('"False"', False), ('"True"', True), ('"no"', False), ('"yes"', True), ('" FALSE "', False),
    ('"https://schema.org/False"', False), ('"http://schema.org/True"', True),
    ('"maybe"', None), ("0", None), ("null", None),  # no schema.org Boolean: the page does not say
])
def test_is_accessible_for_free_on_the_article_object(value, expected):
    jsonld = f'{{"@context": "https://schema.org", "@type": "NewsArticle", "headline": "H", "isAccessibleForFree": {value}}}'
    assert read_metadata(parse_html(_paywall_page(jsonld))).is_accessible_for_free is expected


def test_is_accessible_for_free_in_a_has_part_web_page_element_and_absent():
    part = ('{"@context": "https://schema.org", "@type": "NewsArticle", "headline": "H", '
            '"hasPart": [{"@type": "WebPageElement", "isAccessibleForFree": "False", "cssSelector": ".paywall"}]}')
    assert read_metadata(parse_html(_paywall_page(part))).is_accessible_for_free is False
    mixed = part.replace('"headline": "H", ', '"headline": "H", "isAccessibleForFree": true, ')
    assert read_metadata(parse_html(_paywall_page(mixed))).is_accessible_for_free is False  # a paywalled part
    in_graph = ('{"@context": "https://schema.org", "@graph": [{"@type": "WebSite", "isAccessibleForFree": false}, '
                '{"@type": "Article", "headline": "H", "isAccessibleForFree": "True"}]}')
    assert read_metadata(parse_html(_paywall_page(in_graph))).is_accessible_for_free is True  # the article's word
    absent = '{"@context": "https://schema.org", "@type": "NewsArticle", "headline": "H"}'
    assert read_metadata(parse_html(_paywall_page(absent))).is_accessible_for_free is None
    assert read_metadata(parse_html("<html><body><p>No structured data.</p></body></html>")).is_accessible_for_free is None


def test_is_accessible_for_free_in_microdata():
    html = ("<html><body><article itemscope itemtype='https://schema.org/NewsArticle'>"
            "<h1 itemprop='headline'>H</h1><meta itemprop='isAccessibleForFree' content='False'>"
            "<p>Text.</p></article></body></html>")
    assert read_metadata(parse_html(html)).is_accessible_for_free is False


def test_extraction_carries_is_accessible_for_free_from_the_page():
    from newsclean.transforms.chain import extract_article

    prose = "The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks. " * 4
    body = f"<article><h1>Bridge to close</h1><p>{prose}</p><p>{prose}</p></article>"
    paywalled = ('<html><head><script type="application/ld+json">{"@context": "https://schema.org", '
                 '"@type": "NewsArticle", "headline": "Bridge to close", "isAccessibleForFree": "False"}</script>'
                 f"</head><body>{body}</body></html>")
    assert extract_article(paywalled).is_accessible_for_free is False
    assert extract_article(f"<html><body>{body}</body></html>").is_accessible_for_free is None


def test_a_date_with_a_time_zone_name_dateutil_does_not_know_leaves_no_warning_on_stderr():
    """htmldate hands "2019-03-01 10:00 PST" to dateutil, which warns about "PST" on stderr (every worker's reaches
    the user's terminal); the date is read all the same and the warning is not shown. In a fresh interpreter, with
    Python's default warning filters, so that no earlier test has shown or silenced it."""
    import subprocess
    import sys

    code = ("import lxml.html\n"
            "from newsclean.transforms.metadata import htmldate_published\n"
            "page = '<html><body><p>x</p><time datetime=\"2019-03-01 10:00 PST\">March 1</time></body></html>'\n"
            "print(htmldate_published(lxml.html.fromstring(page)).date())\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "2019-03-01"
    assert "Warning" not in done.stderr

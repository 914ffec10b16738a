"""Decoding and parsing of pages whose bytes or markup mislead: UTF-16 byte order, a transport charset that
contradicts a UTF-8 body, mojibake, a JSON body served as HTML, CDATA sections and framesets."""

import codecs
import json

import pytest

from newsclean.schemas.records import RejectReason
from newsclean.transforms import parse
from newsclean.transforms.chain import extract_article
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.parse import decode_html, parse_html

EN = "The council approved the new budget on Monday after a long debate about schools and roads."
RU = "Новые правила вступили в силу в понедельник, сообщили в министерстве. Жители города довольны."
FR = "L'été dernier, le ministère a annoncé une réforme de l'économie française, très attendue par les élèves."


def page(paragraph: str, meta: str = "", repeat: int = 12) -> str:
    return (f"<html><head>{meta}<title>Headline</title></head><body><article><h1>Headline</h1>"
            + f"<p>{paragraph}</p>" * repeat + "</article></body></html>")


# --- UTF-16 byte-order marks ------------------------------------------------------------------


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le")])
def test_utf16_bom_gives_the_byte_order(bom, codec):
    html = page(EN)
    text, used = decode_html(bom + html.encode(codec))
    assert (text, used) == (html, codec)


def test_utf16be_page_with_bom_is_an_english_article():
    html = page(EN)
    extraction = extract_article(decode_html(codecs.BOM_UTF16_BE + html.encode("utf-16-be"))[0])
    assert EN in extraction.text


def test_declared_utf16_without_nul_bytes_is_not_utf16():
    # ASCII markup in UTF-16 has a NUL in every character: a body without any is not UTF-16 whatever the
    # header says (it would decode to CJK-looking garbage).
    html = page(EN)
    text, used = decode_html(html.encode("ascii"), http_charset="utf-16")
    assert text == html and used != "utf-16-le"


def test_meta_utf16_means_utf8():
    # WHATWG "prescan": a <meta> naming UTF-16 was read as ASCII bytes, so the page is not UTF-16.
    html = page(FR, meta='<meta charset="utf-16">')
    assert decode_html(html.encode("utf-8")) == (html, "utf-8")


# --- a transport charset that contradicts a UTF-8 body ----------------------------------------


@pytest.mark.parametrize("paragraph, charset", [(RU, "windows-1251"), (FR, "ISO-8859-1"), (FR, "windows-1252")])
def test_utf8_body_under_a_wrong_http_charset_is_utf8(paragraph, charset):
    html = page(paragraph, meta='<meta charset="utf-8">')
    text, used = decode_html(html.encode("utf-8"), http_charset=charset)
    assert (text, used) == (html, "utf-8")


def test_utf8_body_under_a_wrong_meta_charset_is_utf8():
    html = page(RU, meta='<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">')
    assert decode_html(html.encode("utf-8")) == (html, "utf-8")


@pytest.mark.parametrize("paragraph, codec", [(RU, "cp1251"), (FR, "cp1252")])
def test_genuine_single_byte_pages_keep_their_charset(paragraph, codec):
    html = page(paragraph)
    assert decode_html(html.encode(codec), http_charset=codec) == (html, codec)


def test_utf8_russian_under_windows_1251_is_a_russian_article():
    html = page(RU, meta='<meta charset="utf-8">')
    extraction = extract_article(decode_html(html.encode("utf-8"), http_charset="windows-1251")[0])
    assert RU in extraction.text and "Рѕ" not in extraction.text


@pytest.mark.parametrize("paragraph", [FR, EN.replace("approved", "‘approved’")])
def test_text_encoded_twice_is_repaired(paragraph):
    # UTF-8 read as Windows-1252 and written out again as UTF-8: valid UTF-8, mojibake in every reading, and
    # undone whole by ftfy's fix_encoding (a page published that way: "Earthâ€™s" for "Earth’s").
    html = page(paragraph)
    double = html.encode("utf-8").decode("cp1252").encode("utf-8")
    assert double.decode("utf-8") != html and decode_html(double) == (html, "utf-8")


def test_text_that_is_still_mojibake_is_a_decode_error():
    # The same, but the bytes Windows-1252 cannot read were lost on the way: no repair gives the text back.
    double = page(RU).encode("utf-8").decode("cp1252", errors="ignore").encode("utf-8")
    with pytest.raises(ExtractionError) as err:
        decode_html(double)
    assert err.value.reason is RejectReason.DECODE_ERROR


def test_a_few_mojibake_quotes_in_a_long_page_are_not_a_decode_error():
    # Real pages carry a stray "â€™" (msv-big9 "class (1).htm": 22 in 1,526 words): still an article.
    html = page(EN + " It’s done.".encode().decode("cp1252"), repeat=1) + page(EN, repeat=40)
    text, _ = decode_html(html.encode("utf-8"))
    assert text == html


def test_mojibake_per_word_counts_sequences_in_visible_text_only():
    assert parse.mojibake_per_word("<p>plain words only</p>") == 0.0
    moj = "Ã©tÃ©"  # "été" read as Windows-1252
    assert parse.mojibake_per_word(f"<p>one two {moj}</p>") > 0.3
    assert parse.mojibake_per_word(f"<p>one two three</p><script>var s = '{moj}';</script>") == 0.0


# --- JSON served as text/html ---------------------------------------------------------------


JSON_BODY = json.dumps({"articles": [{"title": "Headline", "body": EN * 5, "tags": ["a", "b"]}] * 5})


@pytest.mark.parametrize("body", [JSON_BODY, "  \n" + JSON_BODY, json.dumps([EN] * 20), JSON_BODY.encode("utf-8")])
def test_json_documents_are_recognised(body):
    assert parse.looks_like_json(body)


@pytest.mark.parametrize("body", [page(EN), "{not json} <p>text</p>", "[" * 100_000, "", b"\xff\xfe{}",
                                  '{"a": 1} <html><body><p>trailing page</p></body></html>'])
def test_html_and_broken_json_are_not_json(body):
    assert not parse.looks_like_json(body)


def test_json_served_as_html_is_not_html():
    with pytest.raises(ExtractionError) as err:
        extract_article(decode_html(JSON_BODY.encode("utf-8"), http_charset="utf-8")[0])
    assert err.value.reason is RejectReason.NOT_HTML


# --- CDATA sections and framesets -----------------------------------------------------------


def test_cdata_in_xhtml_is_text():
    xhtml = ('<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body>'
             '<p><![CDATA[Prices rose > 5% & fell < 2% on Monday.]]></p><p>Second paragraph.</p></body></html>')
    paragraphs = [p.text_content() for p in parse_html(xhtml).iter("p")]
    assert paragraphs == ["Prices rose > 5% & fell < 2% on Monday.", "Second paragraph."]


def test_cdata_in_scripts_and_comments_is_left_alone():
    html = ('<html><head><script>//<![CDATA[\nvar a = 1 > 0;\n//]]></script></head><body>'
            '<!-- <![CDATA[ hidden ]]> --><p>Visible.</p></body></html>')
    root = parse_html(html)
    assert root.find(".//script").text == "//<![CDATA[\nvar a = 1 > 0;\n//]]>"
    assert "hidden" not in "".join(root.find("body").itertext())


def test_unterminated_cdata_does_not_swallow_the_page():
    root = parse_html("<html><body><p><![CDATA[broken</p><p>Kept paragraph.</p></body></html>")
    assert "Kept paragraph." in root.text_content()


def test_frameset_page_text_is_its_noframes_content():
    html = ('<html><head><title>Frames</title></head><frameset cols="30%,70%"><frame src="menu.html">'
            f'<frame src="main.html"><noframes><body><h1>Headline</h1>{f"<p>{EN}</p>" * 3}</body></noframes>'
            '</frameset></html>')
    extraction = extract_article(html)
    assert "<p>" not in extraction.text and "<body>" not in extraction.text
    assert EN in extraction.text


def test_noframes_outside_a_frameset_is_not_shown():
    # A browser with frames (every browser) hides <noframes>; its markup must not become text either.
    html = page(EN).replace("<article>", "<noframes><p>This site needs a frames browser.</p></noframes><article>")
    body_text = "".join(parse_html(html).find("body").itertext())
    assert "frames browser" not in body_text and "<p>" not in body_text and EN in body_text


# --- the document's frame: XML declarations, a broken <html> start tag, content left in <head> --------------

BODY = f"<body><article><h1>Headline</h1>{f'<p>{EN}</p>' * 6}</article></body></html>"
XML_DECL = '<?xml version="1.0" encoding="utf-8"?>'


def _article_text(html: str | bytes) -> str:
    """``newsclean.extract``'s text of ``html`` (bytes decoded as the pipeline decodes them)."""
    import newsclean

    return newsclean.extract(html).text


@pytest.mark.parametrize("prefix", [
    XML_DECL.encode(),
    b"\xef\xbb\xbf \n\t" + XML_DECL.encode(),                           # a byte-order mark and whitespace first
    b"<?xml version='1.0' encoding='utf-8'?>\n",                       # single quotes
    b'<?xml version="1.0" encoding="utf-8">',                          # without its "?"
    (XML_DECL + XML_DECL).encode(),                                     # twice (two templates' headers)
    b'<?xml version="1.0" encoding="utf-8" ?>\n<?xml-stylesheet href="a.xsl" encoding="x"?>',
    b"</body>" + XML_DECL.encode(),                                     # behind an end tag the repair drops
])
def test_xml_declaration_before_the_html_keeps_the_text(prefix):
    # lxml refuses a str that starts with a declaration naming an encoding; the page is still an HTML page.
    html = prefix + f"<html><head><title>Headline</title></head>{BODY}".encode()
    assert _article_text(html).count(EN) == 6


@pytest.mark.parametrize("start", [
    "<html lang='en",                                # a quote that never closes: the rest of the page was its value
    '<html xmlns="http://www.w3.org/1999/xhtml',     # ... up to the next double quote, far down the page
    '<html lang="en>',
    '<html lang="en"',                               # no ">": libxml2 reads "<head" as an attribute, harmless
    '<html xmlns="http://www.w3.org/1999/xhtml" <head>',
])
def test_broken_html_start_tag_does_not_swallow_the_page(start):
    html = f'<!DOCTYPE html>\n{start}\n<head><title>Headline</title></head>{BODY}'.replace(
        "</article>", '</article><footer class="site">Copyright</footer>')
    assert _article_text(html.encode()).count(EN) == 6


def test_repaired_html_start_tag_keeps_its_attributes():
    root = parse_html("<html lang='en\n<head><title>t</title></head><body><p>Text.</p></body></html>")
    assert root.get("lang") == "en" and root.find("body").text_content() == "Text."


@pytest.mark.parametrize("html", [
    f"<html><head><title>Headline</title><section><h1>Headline</h1>{f'<p>{EN}</p>' * 6}</section></html>",
    f"<html><head><title>Headline</title><main><article>{f'<p>{EN}</p>' * 6}</article></main></head>"
    "<body><footer>Copyright</footer></body></html>",
    f"<html><head><title>Headline</title><link rel='icon' href='/i.png'>\n<article>{f'<p>{EN}</p>' * 6}</article>",
    f"<head><meta charset='utf-8'><title>Headline</title><my-article>{f'<p>{EN}</p>' * 6}</my-article>",
])
def test_page_without_a_body_tag_keeps_the_text_libxml2_leaves_in_head(html):
    # libxml2 (an HTML 4 parser) keeps an element it does not know in <head> when no <body> came first; an HTML5
    # parser ends the head there (WHATWG HTML "in head" insertion mode)
    assert _article_text(html.encode()).count(EN) == 6


def test_content_moved_out_of_head_keeps_document_order():
    root = parse_html("<html><head><title>t</title><meta name='a' content='b'><section>one</section>two<p>three</p>"
                      "</head></html>")
    assert [el.tag for el in root.find("head")] == ["title", "meta"]  # metadata still finds its <meta> in the head
    assert list(root.find("body").itertext()) == ["one", "two", "three"]

"""``newsclean extract``: one page from a file, standard input or a URL served on 127.0.0.1, printed as text, JSON or
Markdown; pages that are no article exit 3 with one line, pages that cannot be read exit 1."""

from __future__ import annotations

import io
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from newsclean import cli
from newsclean.cli import main

PROSE = ("The council voted on Tuesday to close the old bridge for repairs, after engineers found cracks in two of "
         "its supports, and the mayor said the work would take a year. ")
#: A paywalled news article: JSON-LD says it is not free (in a hasPart WebPageElement), its canonical URL and image
#: are relative, and its text holds non-ASCII letters.
PAGE = ('<html lang="en"><head><meta charset="utf-8"><title>Bridge to close - The Daily Planet</title>'
        '<link rel="canonical" href="/world/bridge.html"><meta property="og:image" content="/img/bridge.jpg">'
        '<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
        '"headline": "Bridge to close", "datePublished": "2024-05-01T10:30:00+02:00", '
        '"hasPart": {"@type": "WebPageElement", "isAccessibleForFree": "False", "cssSelector": ".paywall"}}'
        '</script></head><body><nav><a href="/">Home</a> <a href="/world/">World</a></nav><article>'
        f'<h1>Bridge to close</h1><p>{PROSE * 2}</p><p>Über 300 Bürger kamen — {PROSE}</p>'
        f'<p class="paywall">{PROSE}</p></article><footer>Copyright 2024</footer></body></html>')
LISTING = ("<html><head><title>World news</title></head><body><h1>World news</h1><ul>"
           + "".join(f"<li class='card'><a href='/s{i}'>Headline number {i} of the world section</a>"
                     f"<p>A short description of that story, with more words.</p></li>" for i in range(15))
           + "</ul></body></html>")


def _run(capsysbinary, argv) -> tuple[int, str, list[str]]:
    """``(exit status, stdout decoded as UTF-8, the non-empty stderr lines)`` of ``newsclean *argv``."""
    code = main(argv)
    captured = capsysbinary.readouterr()
    return code, captured.out.decode("utf-8"), [x for x in captured.err.decode("utf-8").splitlines() if x.strip()]


@pytest.fixture
def page_file(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(PAGE, encoding="utf-8")
    return path


def test_text_is_the_article_text_one_paragraph_a_line(page_file, capsysbinary):
    code, out, err = _run(capsysbinary, ["extract", str(page_file)])
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert lines[0] == "Bridge to close" and lines[1] == (PROSE * 2).strip()
    assert lines[2] == f"Über 300 Bürger kamen — {PROSE}".strip()
    assert "Home" not in out and "Copyright" not in out


def test_json_is_the_extractions_to_dict_in_utf8_with_iso_dates(page_file, capsysbinary):
    code, out, err = _run(capsysbinary, ["extract", str(page_file), "--format", "json",
                                         "--url", "https://planet.example/world/1.html"])
    assert (code, err) == (0, [])
    assert "Über 300 Bürger" in out and "\\u00dc" not in out  # ensure_ascii=False
    data = json.loads(out)
    assert data["title"] == "Bridge to close" and data["published_at"] == "2024-05-01T08:30:00+00:00"
    assert data["is_accessible_for_free"] is False and data["metadata"]["is_accessible_for_free"] is False
    assert data["canonical_url"] == "https://planet.example/world/bridge.html"  # resolved against --url
    assert data["image_url"] == "https://planet.example/img/bridge.jpg" and data["domain"] == "planet.example"
    assert data["language"] == "en" and data["word_count"] > 60


def test_markdown_has_the_title_as_heading_and_blank_lines_between_paragraphs(page_file, capsysbinary):
    code, out, _ = _run(capsysbinary, ["extract", str(page_file), "--format", "markdown"])
    assert code == 0
    blocks = out.rstrip("\n").split("\n\n")
    assert blocks[0] == "# Bridge to close"
    assert blocks[1] == (PROSE * 2).strip()  # the <h1> the text starts with is the heading, not a paragraph again
    assert blocks[2] == f"Über 300 Bürger kamen — {PROSE}".strip() and "\n" not in "".join(blocks)


def test_standard_input_is_read_as_bytes_and_decoded_as_the_pipeline_does(monkeypatch, capsysbinary):
    cp1251 = ('<html><head><meta charset="windows-1251"><title>Мост закроют</title></head><body><article>'
              "<h1>Мост закроют</h1>" + "<p>Совет проголосовал во вторник за закрытие старого моста на ремонт, "
              "после того как инженеры нашли трещины в двух опорах.</p>" * 4 + "</article></body></html>")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(cp1251.encode("cp1251"))))
    code, out, err = _run(capsysbinary, ["extract", "-"])
    assert (code, err) == (0, [])
    assert out.splitlines()[1].startswith("Совет проголосовал во вторник")


@pytest.mark.parametrize("html, reason", [
    ("<html><body><p>Too short.</p></body></html>", "too_short"),
    ('{"items": [1, 2, 3]}', "not_html"),
    ("   ", "empty_body"),
    (LISTING, "not_article"),
])
def test_a_page_that_is_no_article_exits_3_with_one_line_naming_the_reason(tmp_path, capsysbinary, html, reason):
    path = tmp_path / "p.html"
    path.write_text(html, encoding="utf-8")
    code, out, err = _run(capsysbinary, ["extract", str(path)])
    assert (code, out, len(err)) == (cli.EXIT_NOT_ARTICLE, "", 1)
    assert err[0].startswith(f"newsclean: error: {path}: no article ({reason}): ")


def test_a_file_that_cannot_be_read_exits_1_and_bad_flags_exit_2(tmp_path, capsysbinary):
    code, _, err = _run(capsysbinary, ["extract", str(tmp_path / "missing.html")])
    assert (code, err) == (1, [f"newsclean: error: cannot read {tmp_path / 'missing.html'}: No such file or directory"])
    code, _, err = _run(capsysbinary, ["extract", str(tmp_path), "--min-words", "-1"])
    assert (code, err) == (2, ["newsclean: error: --min-words -1: give 0 or more"])
    assert main(["extract", "x", "--format", "pdf"]) == 2


def test_the_page_bound_is_the_warc_readers():
    from newsclean.pipeline.warc_reader import MAX_BODY_BYTES

    assert cli.MAX_PAGE_BYTES == MAX_BODY_BYTES


# --- a URL served on 127.0.0.1 ----------------------------------------------------------------------------------

#: path -> (status, headers, body) the test server answers with.
ROUTES = {
    "/world/1.html": (200, [("Content-Type", "text/html; charset=utf-8")], PAGE.encode("utf-8")),
    "/moved": (301, [("Location", "/world/1.html")], b""),
    # the HTTP charset is the only one the page gives; sniffed, its bytes read as windows-1252, where 0xA4 is "¤"
    "/latin9.html": (200, [("Content-Type", "text/html; charset=ISO-8859-15")],
                     ("<html><body><article><h1>Der Preis steigt</h1>" + "<p>Die Fahrkarte kostet ab Montag 5 € "
                      "statt 4 €, sagte der Stadtrat nach einer langen Sitzung am Abend.</p>" * 4
                      + "</article></body></html>").encode("iso-8859-15")),
    "/report.pdf": (200, [("Content-Type", "application/pdf")], b"%PDF-1.7 not a page"),
    "/big.html": (200, [("Content-Type", "text/html")], b"<html><body><p>" + b"x " * (cli.MAX_PAGE_BYTES // 2 + 1)),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        status, headers, body = ROUTES.get(self.path, (404, [("Content-Type", "text/html")], b"<p>gone</p>"))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """requests reads proxies from the environment: the test server is reached directly."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_url_is_fetched_and_its_final_address_is_the_pages(server, capsysbinary):
    code, out, err = _run(capsysbinary, ["extract", f"{server}/moved", "--format", "json"])
    assert (code, err) == (0, [])
    data = json.loads(out)
    assert data["canonical_url"] == f"{server}/world/bridge.html"  # resolved against the URL redirected to
    assert data["domain"] == "127.0.0.1" and data["is_accessible_for_free"] is False


def test_a_urls_http_charset_decodes_it(server, capsysbinary):
    code, out, _ = _run(capsysbinary, ["extract", f"{server}/latin9.html"])
    assert code == 0 and out.splitlines()[1].startswith("Die Fahrkarte kostet ab Montag 5 € statt 4 €, sagte")


@pytest.mark.parametrize("path, reason", [
    ("/gone.html", "http_status"), ("/report.pdf", "not_html"), ("/big.html", "too_large"),
])
def test_a_url_that_gives_no_article_exits_3(server, capsysbinary, path, reason):
    code, out, err = _run(capsysbinary, ["extract", f"{server}{path}"])
    assert (code, out, len(err)) == (cli.EXIT_NOT_ARTICLE, "", 1)
    assert f"no article ({reason}): " in err[0]


def test_a_url_that_cannot_be_fetched_exits_1_with_one_line(capsysbinary):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = _run(capsysbinary, ["extract", f"http://127.0.0.1:{port}/a.html"])
    assert (code, out, len(err)) == (1, "", 1)
    assert err[0].startswith(f"newsclean: error: cannot fetch http://127.0.0.1:{port}/a.html: ")

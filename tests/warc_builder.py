"""Build small WARC files for the pipeline tests with warcio (no crawler, no network).

The layout and headers follow docs/CONTRACTS.md: ``DIR/<site>/<category>/<name>.warc.gz``, a
``warcinfo`` record first, a ``request`` + ``response`` pair per page, and the
``WARC-Newsclean-Site`` / ``-Category`` headers (``newsclean_headers=False`` leaves them out, so
the reader's path fallback can be tested). A response with ``metadata`` fields is followed by a
``metadata`` record (``application/warc-fields``, ``WARC-Concurrent-To`` the response), as the crawler writes.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from newsclean.schemas.contract import CATEGORY_HEADER, SITE_HEADER

REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found", 500: "Internal Server Error"}


@dataclass
class Response:
    """One HTTP response to store as a WARC response record."""

    url: str
    body: bytes
    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=lambda: [("Content-Type", "text/html; charset=utf-8")])
    date: datetime = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    metadata: list[tuple[str, str]] | None = None  # fields of a metadata record after the response


def _warc_date(dt: datetime) -> str:
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_warc(path: Path, site: str, category: str, responses: list[Response], *,
               newsclean_headers: str = "all") -> Path:
    """Write ``responses`` to the gzipped WARC file ``path`` (parents created). Returns ``path``.

    ``newsclean_headers``: ``"all"`` (warcinfo, request and response records carry
    ``WARC-Newsclean-Site/-Category``), ``"warcinfo"`` (only the warcinfo record) or ``"none"``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    ext_headers = {SITE_HEADER: site, CATEGORY_HEADER: category}
    ext = ext_headers if newsclean_headers == "all" else {}
    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        info = {"software": "newsclean-tests", "format": "WARC File Format 1.1"}
        warcinfo = writer.create_warcinfo_record(path.name, info)
        if newsclean_headers in ("all", "warcinfo"):
            for name, value in ext_headers.items():
                warcinfo.rec_headers.add_header(name, value)
        writer.write_record(warcinfo)
        for r in responses:
            warc_headers = {"WARC-Date": _warc_date(r.date), **ext}
            req_http = StatusAndHeaders(f"GET {r.url} HTTP/1.1", [("User-Agent", "tests")], is_http_request=True)
            request = writer.create_warc_record(r.url, "request", http_headers=req_http,
                                                warc_headers_dict=dict(warc_headers))
            http = StatusAndHeaders(f"{r.status} {REASONS.get(r.status, 'Status')}", list(r.headers),
                                    protocol="HTTP/1.1")
            response = writer.create_warc_record(r.url, "response", payload=io.BytesIO(r.body),
                                                 length=len(r.body), http_headers=http,
                                                 warc_headers_dict=dict(warc_headers))
            request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
            writer.write_record(request)
            writer.write_record(response)
            if r.metadata is not None:
                block = "".join(f"{k}: {v}\r\n" for k, v in r.metadata).encode("utf-8")
                meta_headers = {**warc_headers,
                                "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID")}
                writer.write_record(writer.create_warc_record(
                    r.url, "metadata", payload=io.BytesIO(block), length=len(block),
                    warc_content_type="application/warc-fields", warc_headers_dict=meta_headers))
    return path


# --- realistic news pages -------------------------------------------------------------------

_WORDS = (
    "council budget river harbour election minister village school winter festival museum railway "
    "hospital farmers bridge report committee teachers storm league coach season market prices "
    "energy court judge witness students library forest mayor ferry drought vaccine scientists"
).split()


def paragraph(seed: int, n_words: int = 45) -> str:
    """A deterministic pseudo-sentence paragraph of ``n_words`` words, distinct per ``seed``."""
    rng = random.Random(seed)
    words = [rng.choice(_WORDS) for _ in range(n_words)]
    sentences, out = [], []
    for i, w in enumerate(words):
        out.append(w)
        if len(out) >= 9 or i == len(words) - 1:
            sentences.append(" ".join(out).capitalize() + ".")
            out = []
    return f"Story {seed} reports: " + " ".join(sentences)


def article_page(site: str, category: str, title: str, paragraphs: list[str], *, charset_meta: bool = True) -> str:
    """A news article page with navigation, share bar, related links, footer and the article body."""
    nav = "".join(f'<li><a href="/{c}/">{c.title()}</a></li>' for c in ("politics", "sports", "world", "culture"))
    related = "".join(f'<li><a href="/{category}/related-{i}.html">Related headline number {i}</a></li>' for i in range(4))
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    meta = '<meta charset="utf-8">' if charset_meta else ""
    return (
        f"<!DOCTYPE html><html lang=\"en\"><head>{meta}<title>{title} | {site.title()} News</title></head><body>"
        f"<header><div class=\"logo\">{site.title()} Daily</div><nav><ul>{nav}</ul></nav></header>"
        f"<div class=\"share\"><a href=\"/share/fb\">Share</a> <a href=\"/share/tw\">Tweet</a></div>"
        f"<main><article><h1>{title}</h1><div class=\"byline\">By Staff Reporter</div>{body}</article>"
        f"<aside><h3>Related</h3><ul>{related}</ul></aside></main>"
        f"<footer><p>Copyright 2024 {site.title()} Media Group. All rights reserved.</p>"
        f"<a href=\"/about\">About us</a> <a href=\"/contact\">Contact</a></footer></body></html>"
    )

"""Bag-of-words scoring (newsclean.demo.scoring): hand-checked numbers and the defined empty cases."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from newsclean.demo.scoring import (
    PagePair,
    by_site,
    macro,
    markdown_table,
    normalize_url,
    pair_with_gold,
    read_articles,
    read_reject_urls,
    score_pages,
    tokens,
)
from newsclean_eval.datasets import cleaneval_gold_text, decode_gold, html_text, read_text_file, repair_mojibake


def test_tokens_nfc_lowercase_word_runs():
    # "é" decomposed (e + combining acute) becomes one NFC character, so "café" stays one token.
    assert tokens("Café\u0301 NEWS, it's 3.5%!") == ["café", "news", "it", "s", "3", "5"]
    assert tokens("cafe\u0301") == ["café"]
    assert tokens("") == [] and tokens(None) == []


def test_multiset_overlap_hand_checked():
    # pred tokens: a a b c (4); gold: a b b d e (5); overlap = min(2,1)a + min(1,2)b = 2.
    (s,) = score_pages([PagePair("u", "s", "a a b c", "a b b d e")])
    assert s.overlap == 2 and s.pred_tokens == 4 and s.gold_tokens == 5
    assert s.precision == pytest.approx(0.5)
    assert s.recall == pytest.approx(0.4)
    assert s.f1 == pytest.approx(2 * 0.5 * 0.4 / 0.9)  # 0.4444...


def test_perfect_and_disjoint():
    perfect, disjoint = score_pages([("u1", "s", "The cat sat.", "the CAT sat"), ("u2", "s", "dog", "cat")])
    assert (perfect.precision, perfect.recall, perfect.f1) == (1.0, 1.0, 1.0)
    assert (disjoint.precision, disjoint.recall, disjoint.f1) == (0.0, 0.0, 0.0)


def test_empty_cases():
    both, no_pred, no_gold, missing = score_pages(
        [("a", "s", "", "  "), ("b", "s", "", "gold words"), ("c", "s", "some text", ""), ("d", "s", None, "gold")]
    )
    assert (both.precision, both.recall, both.f1) == (1.0, 1.0, 1.0)
    assert (no_pred.precision, no_pred.recall, no_pred.f1) == (0.0, 0.0, 0.0)
    assert (no_gold.precision, no_gold.recall, no_gold.f1) == (0.0, 0.0, 0.0)
    assert missing.f1 == 0.0 and missing.missing and not no_pred.missing


def test_macro_is_mean_of_page_scores():
    scores = score_pages([("u1", "x", "a b", "a b"), ("u2", "x", "a a b c", "a b b d e"), ("u3", "y", None, "z")])
    m = macro(scores)
    assert m.pages == 3 and m.missing == 1
    assert m.precision == pytest.approx((1 + 0.5 + 0) / 3)
    assert m.recall == pytest.approx((1 + 0.4 + 0) / 3)
    assert m.f1 == pytest.approx((1 + 4 / 9 + 0) / 3)
    assert macro([]).pages == 0 and macro([]).f1 == 0.0


def test_by_site_and_markdown_table():
    scores = score_pages([("u1", "x", "a b", "a b"), ("u2", "x", "a a b c", "a b b d e"), ("u3", "y", None, "z")])
    sites = by_site(scores)
    assert list(sites) == ["x", "y"]
    assert sites["x"].f1 == pytest.approx((1 + 4 / 9) / 2)  # 0.7222
    assert sites["y"].f1 == 0.0 and sites["y"].missing == 1
    table = markdown_table(scores)
    lines = table.strip().splitlines()
    assert lines[0] == "| site | pages | missing | P | R | F1 |"
    assert lines[2] == "| x | 2 | 0 | 0.750 | 0.700 | 0.722 |"
    assert lines[3] == "| y | 1 | 1 | 0.000 | 0.000 | 0.000 |"
    assert lines[4] == "| **all (macro)** | 3 | 1 | 0.500 | 0.467 | 0.481 |"


def test_decode_gold_utf8_then_cp1252(tmp_path):
    assert decode_gold("naïve — ok".encode()) == "naïve — ok"
    assert decode_gold("\ufeffbom".encode("utf-8")) == "bom"
    # cp1252: 0x93/0x94 curly quotes, 0x97 em dash, 0xe9 é; not valid UTF-8.
    assert decode_gold(b"\x93Caf\xe9\x94 \x97 x\r\ny") == "\u201cCaf\u00e9\u201d \u2014 x\ny"
    # 0x81 is undefined in cp1252: falls back to Latin-1 instead of failing.
    assert decode_gold(b"a\x81b") == "a\x81b"
    p = tmp_path / "g.txt"
    p.write_bytes(b"Head\xe9\n\nBody")
    assert read_text_file(p) == "Head\u00e9\n\nBody"


def test_gold_mojibake_is_repaired_and_correct_text_kept():
    # CleanEval stores some gold as UTF-8 once read as Latin-1 (its page 15: "SÃ¸ren", "AkgÃ¼n").
    assert decode_gold("SÃ¸ren AkgÃ¼n SPECwebÂ©2005".encode()) == "Søren Akgün SPECweb©2005"
    assert repair_mojibake("Søren naïve — “ok” 海外") == "Søren naïve — “ok” 海外"


def test_readability_gold_html_keeps_utf8_without_a_charset():
    # expected.html files are UTF-8 fragments without <meta charset>: lxml alone reads them as Latin-1.
    expected = "<div><p>海外留学生看两会 — Zürich</p></div>".encode()
    assert html_text(decode_gold(expected)).strip() == "海外留学生看两会 — Zürich"


def test_normalize_url():
    assert normalize_url("HTTP://127.0.0.2:8080/a/b.html#frag") == "http://127.0.0.2:8080/a/b.html"
    assert normalize_url("http://h") == "http://h/"


def test_read_parquet_and_pair_with_gold(tmp_path):
    (tmp_path / "articles").mkdir()
    (tmp_path / "rejects").mkdir()
    arts = pa.table({"url": ["http://h/a", "http://h/b"], "site": ["s", "s"], "category": ["c", "c"],
                     "title": ["A", "B"], "text": ["alpha beta", "gamma"], "extra": [1, 2]})
    pq.write_table(arts, tmp_path / "articles" / "part-0.parquet")
    pq.write_table(pa.table({"url": ["http://h/r"], "reason": ["too_short"]}), tmp_path / "rejects" / "r.parquet")
    articles = read_articles(tmp_path)
    assert set(articles) == {"http://h/a", "http://h/b"}
    assert read_reject_urls(tmp_path) == {"http://h/r": "too_short"}
    pairs = pair_with_gold({"http://h/a#x": ("s", "alpha"), "http://h/r": ("s", "rejected gold")}, articles)
    scores = score_pages(pairs)
    assert [s.f1 for s in scores] == [pytest.approx(2 / 3), 0.0]
    assert scores[1].missing
    assert read_articles(tmp_path / "nowhere") == {}


@pytest.mark.parametrize("lead", ["", "\n", "\r\n\n"])
def test_cleaneval_gold_drops_the_url_line_after_leading_blank_lines(lead):
    gold = f"{lead}URL: http://bbc.co.uk/news/x-1\n<h>Storm hits &amp; coast\n<p>Two people were hurt.\n"
    assert cleaneval_gold_text(gold) == "Storm hits & coast\nTwo people were hurt."


def test_cleaneval_gold_keeps_a_first_line_that_is_not_a_url_line():
    assert cleaneval_gold_text("<p>URL shorteners are popular.\n<p>Next.") == "URL shorteners are popular.\nNext."


def test_cleaneval_gold_that_is_only_the_no_article_comment_is_empty():
    gold = "\nURL: http://bbc.co.uk/news/entertainment_and_arts\n\n<!-- this page contains no article -->\n"
    assert cleaneval_gold_text(gold) == ""


def test_cleaneval_gold_keeps_a_comment_shown_in_a_code_listing():
    gold = "URL: http://x.org/a\n<p><form action=\"p.php\">\n  <!-- Rest of form here -->\n</form>"
    assert "Rest of form here" in cleaneval_gold_text(gold)


def test_page_era_by_the_sets_year_the_golds_date_or_the_pages_own():
    from datetime import UTC, datetime

    from newsclean_eval.datasets import EvalPage, page_era, page_year

    def page(dataset, group="g", date=None):
        return EvalPage(dataset, group, "p", b"<html></html>", "gold", date=date)

    assert page_year(page("msv-big9", "cnn.com/2013")) == 2013 and page_era(page("msv-big9", "cnn.com/2009")) == "before 2015"
    assert page_era(page("dragnet")) == "before 2015" and page_era(page("cleaneval")) == "before 2015"
    assert page_era(page("trafilatura-eval", date="2020-01-16")) == "2020+"
    assert page_era(page("trafilatura-eval", date="2019-12-31")) == "2015+"
    assert page_era(page("readability-test-pages"), datetime(2019, 5, 1, tzinfo=UTC)) == "2015+"
    assert page_era(page("readability-test-pages", date="2011-02-03"), datetime(2019, 5, 1, tzinfo=UTC)) == \
        "before 2015"  # the gold's date first
    assert page_era(page("readability-test-pages")) == "undated"

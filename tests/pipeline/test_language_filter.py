"""The language filter (``--languages``): an article whose identified language is not asked for becomes a
``language`` reject, counted like every reject; the codes are checked at launch against the identifier's labels;
the filter is one of the settings an incremental run must share with its corpus."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from warc_builder import Response, article_page, write_warc

from newsclean.cli import main
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.errors import SettingsMismatchError, UsageError
from newsclean.pipeline.incremental import read_runs
from newsclean.pipeline.options import (
    CleanConfig,
    add_clean_arguments,
    clean_config_from_flags,
    clean_config_from_options,
)
from newsclean.pipeline.stages import clean_page
from newsclean.schemas.records import Article, Page, Provenance, Reject
from newsclean.transforms.chain import DEFAULT_CONFIG

TEXTS = {
    "en": ["The town council voted on Monday to approve the new plan for the harbour after a long debate.",
           "Members said the costs would be shared by the town and the port authority over the next ten years.",
           "The mayor told reporters that work on the first pier could begin before the end of the summer."],
    "de": ["Der Gemeinderat hat am Montag nach einer langen Debatte den neuen Plan für den Hafen genehmigt.",
           "Die Kosten sollen in den nächsten zehn Jahren von der Stadt und der Hafenbehörde geteilt werden.",
           "Der Bürgermeister sagte, die Arbeiten am ersten Pier könnten vor dem Ende des Sommers beginnen."],
    "fr": ["Le conseil municipal a approuvé lundi le nouveau projet pour le port après un long débat.",
           "Les coûts seront partagés entre la ville et l'autorité portuaire au cours des dix prochaines années.",
           "Le maire a déclaré que les travaux sur la première jetée pourraient commencer avant la fin de l'été."],
}
TITLES = {"en": "Council approves the harbour plan", "de": "Gemeinderat genehmigt den Hafenplan",
          "fr": "Le conseil approuve le projet du port"}


def _url(lang: str) -> str:
    return f"http://alpha.test/news/harbour-{lang}.html"


def _html(lang: str) -> bytes:
    return article_page("alpha", "news", TITLES[lang], TEXTS[lang]).encode()


def _page(html: bytes, url: str = "http://alpha.test/news/page.html") -> Page:
    return Page(url=url, site="alpha", category="news", fetched_at=datetime(2024, 5, 1, tzinfo=UTC), status=200,
                content_type="text/html", charset="utf-8", provenance=Provenance("a.warc.gz", "<urn:uuid:1>", 0),
                html=html)


def _config(argv: list[str]) -> CleanConfig:
    """The config ``newsclean clean`` builds from ``argv`` (its own parser and builder)."""
    parser = argparse.ArgumentParser()
    add_clean_arguments(parser, require=True)
    return clean_config_from_flags(parser.parse_args(argv))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("languages")
    write_warc(root / "warc" / "alpha" / "news" / "alpha-news-20240501T100000Z-00000.warc.gz", "alpha", "news",
               [Response(_url(lang), _html(lang)) for lang in ("en", "de", "fr")])
    out = root / "out"
    config = _config(["--warc", str(root / "warc"), "--out", str(out), "--languages", "en,DE", "--incremental"])
    summary = run_clean(config, ["--runner", "DirectRunner"])
    return {"root": root, "out": out, "summary": summary,
            "articles": pq.read_table(out / "articles").to_pylist(),
            "rejects": pq.read_table(out / "rejects").to_pylist()}


def test_articles_in_other_languages_become_language_rejects(corpus):
    assert sorted((a["url"], a["language"]) for a in corpus["articles"]) == [(_url("de"), "de"), (_url("en"), "en")]
    (reject,) = corpus["rejects"]
    assert (reject["url"], reject["reason"], reject["stage"]) == (_url("fr"), "language", "clean")
    assert reject["message"].startswith("identified language fr (score ")
    assert "not one of --languages de,en" in reject["message"]


def test_language_rejects_are_counted_and_the_accounting_balances(corpus):
    s = corpus["summary"]
    assert (s.records_read, s.articles_written, s.rejects, s.duplicates_dropped) == (3, 2, {"language": 1}, 0)
    assert s.balanced


def test_another_language_filter_is_another_settings_for_an_incremental_run(corpus):
    assert corpus["summary"].settings["languages"] == ["de", "en"]
    warc, out = str(corpus["root"] / "warc"), str(corpus["out"])
    for other, now in ((["--languages", "en"], r'\["en"\]'), ([], "null")):  # a narrower filter, and none
        with pytest.raises(SettingsMismatchError, match=rf'languages \["de", "en"\] there, {now} now'):
            run_clean(_config(["--warc", warc, "--out", out, "--incremental", *other]), ["--runner", "DirectRunner"])
    again = run_clean(_config(["--warc", warc, "--out", out, "--incremental", "--languages", "de,en"]),
                      ["--runner", "DirectRunner"])  # the same filter: the corpus's settings, nothing new to clean
    assert again.articles_written == 2 and read_runs(out)[-1]["files_skipped"] == 1


def test_without_the_flag_nothing_is_filtered():
    config = _config(["--warc", "w", "--out", "o"])
    assert config.languages is None
    out = clean_page(_page(_html("fr")), None, DEFAULT_CONFIG, languages=config.languages)
    assert isinstance(out, Article) and out.language == "fr"


def test_an_article_without_an_identified_language_is_rejected_when_filtering():
    digits = " ".join(str(1000 + 37 * i) for i in range(40))
    html = f"<html><body><article><p>{digits}</p><p>{digits[::-1]}</p></article></body></html>".encode()
    kept = clean_page(_page(html), None, DEFAULT_CONFIG, min_words=0)
    assert isinstance(kept, Article) and kept.language is None  # no letters: nothing to identify
    out = clean_page(_page(html), None, DEFAULT_CONFIG, min_words=0, languages=("en",))
    assert isinstance(out, Reject) and out.reason == "language"
    assert out.message == "no language identified (no letters in the text), not one of --languages en"


def test_an_unknown_code_is_a_one_line_usage_error(capsys):
    assert main(["clean", "--warc", "w", "--out", "o", "--languages", "en,english"]) == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert line.startswith("newsclean: error: --languages: 'english' is not a code the language identifier returns")
    assert ", en, " in line and ", yue, " in line  # the accepted codes, two- and three-letter
    with pytest.raises(UsageError, match="empty"):
        _config(["--warc", "w", "--out", "o", "--languages", ","])


def test_run_checks_the_codes_before_it_crawls(tmp_path, monkeypatch, capsys):
    import newsclean.crawler.run

    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", lambda *a, **k: pytest.fail("crawled before the check"))
    config = tmp_path / "sites.toml"
    config.write_text('[[site]]\nname = "alpha"\nallowed_domains = ["alpha.test"]\n'
                      '[site.categories]\nnews = ["http://alpha.test/news/"]\n')
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "job"), "--languages", "xx"]) == 2
    assert "'xx' is not a code the language identifier returns" in capsys.readouterr().err


def test_the_codes_the_identifier_returns_are_accepted_as_a_beam_option():
    options = PipelineOptions(["--warc", "w", "--out", "o", "--languages", "zxx,yue,en,kik"])
    assert clean_config_from_options(options).languages == ("en", "kik", "yue", "zxx")

"""The chain crosses a run as one object: resolved once from ``--chain``, a custom ``ChainConfig`` runs as
``newsclean.extract`` runs it, and an article row's fields mean what the API's ``Extraction`` fields of the same
names mean.

WARC files are written with tests/warc_builder.py (warcio); runs use Beam's in-process runner, so that what the
workers look up is seen by the spy too.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from warc_builder import Response, article_page, paragraph, write_warc

import newsclean
from newsclean import cli
from newsclean.pipeline import options as options_module
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.errors import SettingsMismatchError
from newsclean.pipeline.incremental import read_runs
from newsclean.pipeline.options import CleanConfig, clean_config_from_options
from newsclean.schemas.records import ARTICLE_SCHEMA
from newsclean.transforms import chain as chain_module
from newsclean.transforms.chain import CONFIGS, DEFAULT_CONFIG, PAPER_CONFIG, Extraction

IN_PROCESS = ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"]
BASE = "https://www.daily.example.co.uk/world"

#: A chain that is no shipped one: no static stage (so no site evidence, in the pipeline as in the API) and no block
#: decision, so every text block that noise removal leaves is kept (the header's logo too).
EVERY_BLOCK = dataclasses.replace(PAPER_CONFIG, name="every-block", static=None, boilerpipe=None, ancestor=None)


def _declared_german(seed: int) -> str:
    """An English article that declares German, with a relative image and canonical URL and two dates."""
    html = article_page("daily", "world", f"Harbour story {seed}", [paragraph(seed + i) for i in range(4)])
    head = ('<head><meta property="og:image" content="/img/harbour.jpg">'
            f'<link rel="canonical" href="/world/story-{seed}.html">'
            '<meta property="article:published_time" content="2024-04-01T09:00:00Z">'
            '<meta property="article:modified_time" content="2024-04-02T10:00:00Z">')
    return html.replace('<html lang="en">', '<html lang="de">').replace("<head>", head)


def _pages(tmp_path, seeds=(10, 50)) -> dict[str, str]:
    pages = {f"{BASE}/story-{seed}.html": _declared_german(seed) for seed in seeds}
    write_warc(tmp_path / "warc" / "daily" / "world" / "a.warc.gz", "daily", "world",
               [Response(url, html.encode()) for url, html in pages.items()])
    return pages


def _rows(out) -> dict[str, dict]:
    return {row["url"]: row for row in pq.read_table(out / "articles").to_pylist()}


@pytest.fixture(scope="module")
def paper_run(tmp_path_factory):
    """``newsclean clean --chain paper`` in-process, counting every chain lookup by name it makes."""
    tmp = tmp_path_factory.mktemp("paper")
    pages = _pages(tmp)
    calls = []
    original = chain_module.named_config

    def spy(name):
        calls.append(name)
        return original(name)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chain_module, "named_config", spy)
        patch.setattr(options_module, "named_config", spy)
        status = cli.main(["clean", "--warc", str(tmp / "warc"), "--out", str(tmp / "out"), "--chain", "paper",
                           *IN_PROCESS])
    return status, calls, pages, tmp / "out"


def test_chain_is_looked_up_by_name_once_a_run(paper_run):
    status, calls, _, _ = paper_run
    assert status == 0
    assert calls == ["paper"]


def test_row_fields_mean_what_the_extraction_fields_of_the_same_names_mean(paper_run):
    _, _, pages, out = paper_run
    rows = _rows(out)
    shared = {f.name for f in dataclasses.fields(Extraction)} & set(ARTICLE_SCHEMA.names)
    assert {"title", "text", "language", "declared_language", "published_at", "image_url", "page_type"} <= shared
    for url, html in pages.items():
        extraction = newsclean.extract(html, url=url, chain="paper", neighbours=pages.values())  # the run's sample
        row = rows[url]
        assert {name: row[name] for name in shared} == {
            name: list(value) if isinstance(value, tuple) else value
            for name, value in ((name, getattr(extraction, name)) for name in shared)}, url
        assert (extraction.language, extraction.declared_language) == ("en", "de")  # identified, declared
        assert extraction.image_url == "https://www.daily.example.co.uk/img/harbour.jpg"


def test_run_clean_runs_a_custom_chain_as_extract_does(tmp_path):
    pages = _pages(tmp_path)
    config = CleanConfig(warc=str(tmp_path / "warc"), out=str(tmp_path / "out"), chain=EVERY_BLOCK, incremental=True)
    run_clean(config, IN_PROCESS)
    rows = _rows(tmp_path / "out")
    assert set(rows) == set(pages)
    for url, html in pages.items():
        custom = newsclean.extract(html, url=url, chain=EVERY_BLOCK).text
        assert rows[url]["text"] == custom
        paper = newsclean.extract(html, url=url, chain="paper").text
        assert "Daily Daily" in custom.splitlines() and "Daily Daily" not in paper.splitlines()  # the header's logo
    # The corpus's settings name the custom chain: the same chain appends (nothing new here), another is refused.
    run_clean(dataclasses.replace(config), IN_PROCESS)
    assert (read_runs(config.out)[-1]["files_cleaned"], read_runs(config.out)[-1]["files_skipped"]) == (0, 1)
    other = dataclasses.replace(EVERY_BLOCK, link_filter=1)
    with pytest.raises(SettingsMismatchError, match="chain"):
        run_clean(dataclasses.replace(config, chain=other), IN_PROCESS)


def test_a_shipped_chain_is_recorded_by_its_name_a_custom_one_by_a_digest():
    from newsclean.pipeline.incremental import chain_setting

    assert chain_setting(CleanConfig(warc="w", out="o", chain="default", text_includes=()).chain) == "default"
    assert chain_setting(DEFAULT_CONFIG.with_(listing_text=True)) == "default"
    custom = chain_setting(EVERY_BLOCK)
    assert custom.startswith("every-block (custom sha256:") and custom != chain_setting(
        dataclasses.replace(EVERY_BLOCK, link_filter=1))
    renamed = dataclasses.replace(DEFAULT_CONFIG, refine=DEFAULT_CONFIG.refine[:-1])  # named "default", not it
    assert chain_setting(renamed).startswith("default (custom sha256:")


def test_a_custom_chain_is_recorded_alike_in_every_process():
    probe = ("import dataclasses\nfrom newsclean.pipeline.incremental import chain_setting\n"
             "from newsclean.transforms.chain import DEFAULT_CONFIG\n"
             "print(chain_setting(dataclasses.replace(DEFAULT_CONFIG, name='mine')))\n")
    lines = {subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True,
                            env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
             for seed in ("1", "2")}
    assert len(lines) == 1 and lines.pop().startswith("mine (custom sha256:")


def test_one_builder_makes_the_same_config_from_the_command_line_and_from_beam_options():
    from newsclean.pipeline.options import clean_config_from_flags

    argv = ["--warc", "w", "--out", "o", "--chain", "precision", "--neighbour-sample", "4", "--min-words", "3",
            "--text-includes", "captions", "--keep-listings", "--partition-by", "site", "--batch-mib", "2",
            "--incremental", "--allow-mixed-settings", "--wait-for-lock"]
    args, _ = cli.build_parser("clean").parse_known_args(["clean", *argv])
    from_cli = clean_config_from_flags(args)
    assert from_cli == clean_config_from_options(PipelineOptions(argv))
    assert from_cli.chain == CONFIGS["precision"].with_(text_includes=("captions",), listing_text=True)
    assert (from_cli.neighbour_sample, from_cli.min_words, from_cli.batch_bytes, from_cli.partition_by) == (
        4, 3, 2 << 20, "site")


def test_a_custom_chain_keeps_its_own_listing_text_and_text_parts_without_flags():
    """Without ``--keep-listings``/``--text-includes`` a run runs the custom chain as given; the flags only add."""
    custom = DEFAULT_CONFIG.with_(listing_text=True, text_includes=("captions",))
    kept = CleanConfig(warc="in", out="out", chain=custom).chain
    assert kept is custom
    flagged = CleanConfig(warc="in", out="out", chain="default", keep_listings=True, text_includes=("captions",))
    assert (flagged.chain.listing_text, flagged.chain.text_includes) == (True, ("captions",))
    assert CleanConfig(warc="in", out="out", chain="default").chain is DEFAULT_CONFIG

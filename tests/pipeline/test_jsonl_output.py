"""``--format jsonl``: articles, rejects and duplicates as gzip-compressed JSON Lines, the rows of the Parquet run.

The crawl is test_batches.py's (exact and near duplicates across files, rejects, another crawler's files). The rows
are read back with gzip and json only, and the timestamps parsed with ``datetime.fromisoformat``, so the check does
not go through newsclean's own reader."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from test_batches import ONE_GRAPH, PER_FILE, _crawl

from newsclean.cli import build_parser
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.dedup import DUPLICATE_SCHEMA
from newsclean.pipeline.errors import NewscleanError, SettingsMismatchError
from newsclean.pipeline.incremental import read_runs
from newsclean.pipeline.options import CleanConfig, NewscleanOptions, clean_config_from_flags, clean_config_from_options
from newsclean.pipeline.summary import read_staged_summary
from newsclean.schemas.records import ARTICLE_SCHEMA, REJECT_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = {"articles": ARTICLE_SCHEMA, "rejects": REJECT_SCHEMA, "duplicates": DUPLICATE_SCHEMA}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$")


def _config(warc: Path, out: Path, batch_bytes: int = ONE_GRAPH, **kw) -> CleanConfig:
    return CleanConfig(warc=str(warc), out=str(out), neighbour_sample=3, batch_bytes=batch_bytes, **kw)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("jsonl")
    warc = _crawl(root)
    summaries = {
        "parquet": run_clean(_config(warc, root / "parquet"), []),
        "jsonl": run_clean(_config(warc, root / "jsonl", output_format="jsonl"), []),
        "jsonl-batches": run_clean(_config(warc, root / "jsonl-batches", PER_FILE, output_format="jsonl"), []),
    }
    return {"root": root, "warc": warc, "summaries": summaries}


def _json_lines(folder: Path) -> list[dict]:
    rows = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            assert path.name.endswith(".jsonl.gz"), path
            with gzip.open(path, "rt", encoding="utf-8") as f:
                rows += [json.loads(line) for line in f if line.strip()]
    return rows


def _parquet_rows(folder: Path) -> list[dict]:
    return ds.dataset(str(folder), format="parquet").to_table().to_pylist()


def _typed(row: dict, schema: pa.Schema) -> dict:
    """A JSON row with its timestamp fields parsed (they must be ISO 8601 UTC strings or null)."""
    out = dict(row)
    for field in schema:
        if pa.types.is_timestamp(field.type) and out[field.name] is not None:
            assert ISO_UTC.match(out[field.name]), (field.name, out[field.name])
            out[field.name] = datetime.fromisoformat(out[field.name])
    return out


def _key(row: dict):
    return row["warc_file"], row["warc_offset"], row["url"]


@pytest.mark.parametrize("name", ["jsonl", "jsonl-batches"])
def test_jsonl_rows_are_the_parquet_rows(runs, name):
    """Through the one graph and through batches: every table's rows, field by field, with the Parquet columns'
    names in their order."""
    root = runs["root"]
    for table, schema in SCHEMAS.items():
        expected = sorted(_parquet_rows(root / "parquet" / table), key=_key)
        lines = _json_lines(root / name / table)
        assert all(list(line) == schema.names for line in lines), table
        got = sorted((_typed(line, schema) for line in lines), key=_key)
        assert len(got) == len(expected) > 0, table
        for a, b in zip(got, expected, strict=True):
            assert a == b, table
    assert {p.parent.name for p in (root / name).glob("*/*.parquet")} <= {"_index"}  # the internal index stays Parquet


def test_a_jsonl_line_is_utf8_text_and_iso_utc_times():
    from newsclean.pipeline.formats import json_row

    schema = pa.schema([("title", pa.string()), ("when", pa.timestamp("us", tz="UTC")), ("tags", pa.list_(pa.string()))])
    row = {"title": "Caf\u00e9 \u2014 \u4e2d\u6587", "tags": ("a",), "when": datetime(2024, 5, 1, 9, tzinfo=UTC)}
    assert json_row(row, schema) == '{"title": "Caf\u00e9 \u2014 \u4e2d\u6587", "when": "2024-05-01T09:00:00Z", "tags": ["a"]}'


def test_the_jsonl_summary_balances_as_the_parquet_one(runs):
    parquet = runs["summaries"]["parquet"].to_dict()
    for name in ("jsonl", "jsonl-batches"):
        summary = runs["summaries"][name]
        assert summary.balanced and summary.records_read == 16
        assert summary.to_dict() | {"warc": "", "out": ""} == parquet | {"warc": "", "out": ""}
        on_disk = json.loads((runs["root"] / name / "_summary.json").read_text())
        assert on_disk["articles_written"] == parquet["articles_written"]


def test_the_dataset_card_names_the_jsonl_files(runs):
    card = (runs["root"] / "jsonl" / "README.md").read_text(encoding="utf-8")
    for table in SCHEMAS:
        assert f"{table}/*.jsonl.gz" in card
    assert ".parquet" not in card


def test_an_incremental_jsonl_rerun_skips_every_file_and_partitions(runs, tmp_path):
    config = _config(runs["warc"], tmp_path / "corpus", output_format="jsonl", incremental=True, partition_by="site")
    first = run_clean(config, [])
    again = run_clean(config, [])
    first_run, rerun = read_runs(str(tmp_path / "corpus"))
    assert (first_run["files_cleaned"], rerun["files_cleaned"], rerun["files_skipped"]) == (5, 0, 5)
    assert again.balanced and again.to_dict() == first.to_dict()
    parquet = runs["summaries"]["parquet"]
    assert again.articles_written == parquet.articles_written and again.articles_by_site == parquet.articles_by_site
    sites = {p.name for p in (tmp_path / "corpus" / "articles").iterdir()}
    assert sites == {f"site={site}" for site in parquet.articles_by_site}
    for folder in (tmp_path / "corpus" / "articles").iterdir():
        assert {row["site"] for row in _json_lines(folder)} == {folder.name.removeprefix("site=")}
    with pytest.raises(SettingsMismatchError, match="stored as jsonl"):
        run_clean(dataclasses.replace(config, output_format="parquet"), [])


def test_a_cut_jsonl_file_fails_the_read_back(runs, tmp_path):
    staged = tmp_path / "staged"
    shutil.copytree(runs["root"] / "jsonl", staged)
    (part,) = (staged / "articles").glob("*.jsonl.gz")
    part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    with pytest.raises(NewscleanError, match="cannot be read back"):
        read_staged_summary(str(staged))


def test_the_corpus_fingerprint_reads_jsonl_as_parquet(runs):
    fingerprint = pytest.importorskip("newsclean_eval.fingerprint")
    root = runs["root"]
    assert fingerprint.corpus_fingerprints(root / "jsonl") == fingerprint.corpus_fingerprints(root / "parquet")


def test_the_readme_pyserini_one_liner(runs, tmp_path):
    if not (shutil.which("jq") and shutil.which("zcat")):
        pytest.skip("jq or zcat not installed")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = [line for line in readme.splitlines() if "jq" in line and "contents" in line]
    shutil.copytree(runs["root"] / "jsonl", tmp_path / "corpus")
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True, timeout=120)
    docs = [json.loads(line) for line in (tmp_path / "pyserini" / "docs.jsonl").read_text().splitlines()]
    articles = {row["article_id"]: row for row in _parquet_rows(runs["root"] / "parquet" / "articles")}
    assert {doc["id"] for doc in docs} == set(articles)
    for doc in docs:
        assert list(doc) == ["id", "contents"]
        assert articles[doc["id"]]["text"] in doc["contents"]
        assert doc["contents"].startswith(articles[doc["id"]]["title"] or "")


@pytest.mark.parametrize("command", ["clean", "run"])
def test_the_format_flag(command):
    head = ["clean", "--warc", "w", "--out", "o"] if command == "clean" else ["run", "--config", "s.toml", "--out", "o"]
    args, _ = build_parser(command).parse_known_args([*head, "--format", "jsonl"])
    assert clean_config_from_flags(args, warc="w", out="o").output_format == "jsonl"
    args, _ = build_parser(command).parse_known_args(head)
    assert clean_config_from_flags(args, warc="w", out="o").output_format == "parquet"
    with pytest.raises(SystemExit):
        build_parser(command).parse_args([*head, "--format", "csv"])


def test_the_format_as_a_beam_option():
    from apache_beam.options.pipeline_options import PipelineOptions

    options = PipelineOptions(["--warc", "w", "--out", "o", "--format", "jsonl"])
    assert options.view_as(NewscleanOptions).output_format == "jsonl"
    assert clean_config_from_options(options).output_format == "jsonl"

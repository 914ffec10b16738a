"""``newsclean clean``, ``summarize``, ``crawl`` and ``run`` on object stores: a real S3-compatible server (moto's
standalone server on 127.0.0.1, one per module) reached through Beam's S3 filesystem with the endpoint flags;
``gs://`` paths (no local server) by their path handling only."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import boto3
import pyarrow.parquet as pq
import pytest
from apache_beam.io.filesystems import FileSystems
from moto.server import ThreadedMotoServer
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean import cli
from newsclean.cli import main

BUCKET = "news"
SITES_TOML = """
[[site]]
name = "alpha"
allowed_domains = ["alpha.test"]
[site.categories]
politics = ["http://alpha.test/politics/"]
"""
CLEAN = ["--chain", "paper", "--neighbour-sample", "2"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """``(boto3 client, Beam flags that reach the server)`` of a moto S3 server on 127.0.0.1 holding the bucket
    ``news``; Beam's filesystems get no options back afterwards."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing", aws_secret_access_key="testing",
                          region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    flags = ["--s3_endpoint_url", endpoint, "--s3_access_key_id", "testing", "--s3_secret_access_key", "testing",
             "--s3_region_name", "us-east-1"]
    try:
        yield client, flags
    finally:
        FileSystems.set_options(None)
        server.stop()


def _keys(client, prefix: str) -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return sorted(o["Key"] for page in pages for o in page.get("Contents", []))


def _rows(client, prefix: str) -> int:
    """Rows of the Parquet files under ``s3://news/<prefix>`` (Hive partitions included)."""
    return sum(pq.read_table(io.BytesIO(client.get_object(Bucket=BUCKET, Key=k)["Body"].read())).num_rows
               for k in _keys(client, prefix) if k.endswith(".parquet"))


def _json(client, key: str) -> dict:
    return json.loads(client.get_object(Bucket=BUCKET, Key=key)["Body"].read())


@pytest.fixture(scope="module")
def warc_in_bucket(s3, tmp_path_factory):
    """``s3://news/in/warc``: one WARC file of 5 response records: 3 articles, the first of them again at another
    URL (an exact duplicate), and a 404 (an ``http_status`` reject)."""
    client, _ = s3
    pages = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i in range(3)]
    pages.append(Response("http://alpha.test/politics/copy.html", pages[0].body))
    pages.append(Response("http://alpha.test/politics/gone.html", b"<html><body>gone</body></html>", status=404))
    path = tmp_path_factory.mktemp("s3warc") / "alpha.warc.gz"
    write_warc(path, "alpha", "politics", pages)
    client.upload_file(str(path), BUCKET, "in/warc/alpha/politics/alpha.warc.gz")
    return "s3://news/in/warc"


@pytest.fixture(scope="module")
def cleaned(s3, warc_in_bucket):
    """``newsclean clean --warc s3://... --out s3://news/out --partition-by site`` run once: its exit status."""
    return main(["clean", "--warc", warc_in_bucket, "--out", "s3://news/out", "--partition-by", "site", *CLEAN, *s3[1]])


@pytest.mark.s3
def test_clean_reads_and_writes_an_s3_bucket_and_every_record_is_accounted_for(s3, cleaned, tmp_path, monkeypatch):
    client, _ = s3
    monkeypatch.chdir(tmp_path)
    assert cleaned == 0
    summary = _json(client, "out/_summary.json")
    articles, rejects = _rows(client, "out/articles/"), _rows(client, "out/rejects/")
    assert (articles, rejects) == (3, 1)  # 3 stories; the 404
    assert summary["records_read"] == 5
    assert articles + rejects + summary["duplicates_dropped"] == summary["records_read"]
    assert "out/.clean.lock" not in _keys(client, "out/")  # the lock object is gone once the run ended
    assert not any(tmp_path.iterdir())  # nothing local, no ./s3:/ folder


@pytest.mark.s3
def test_an_incremental_rerun_on_s3_skips_every_cleaned_file(s3, cleaned, warc_in_bucket, capsys):
    client, flags = s3
    assert cleaned == 0
    assert main(["clean", "--warc", warc_in_bucket, "--out", "s3://news/out", "--incremental", *CLEAN, *flags]) == 0
    last = [json.loads(line) for line in
            client.get_object(Bucket=BUCKET, Key="out/_manifest/runs.jsonl")["Body"].read().splitlines()][-1]
    assert (last["files_cleaned"], last["files_skipped"], last["records_read"]) == (0, 1, 0)
    assert _rows(client, "out/articles/") == 3
    assert "nothing new read this run" in capsys.readouterr().out


@pytest.mark.s3
def test_partition_by_site_on_s3_writes_hive_folders(s3, cleaned):
    client, _ = s3
    assert cleaned == 0
    articles = [k for k in _keys(client, "out/articles/") if k.endswith(".parquet")]
    assert articles and all(k.startswith("out/articles/site=alpha/") for k in articles)


@pytest.mark.s3
def test_summarize_takes_the_beam_flags_of_an_s3_output(s3, cleaned, capsys):
    assert cleaned == 0
    capsys.readouterr()
    assert main(["summarize", "s3://news/out", *s3[1]]) == 0
    out = capsys.readouterr().out
    assert "5 WARC response records read" in out and "check: 3 + 1 + 1 = 5 vs 5 read: ok" in out


@pytest.mark.s3
def test_report_takes_the_beam_flags_of_an_s3_output(s3, cleaned, capsys):
    from lxml import html as lxml_html

    client, flags = s3
    assert cleaned == 0
    capsys.readouterr()
    assert main(["report", "s3://news/out", *flags]) == 0
    assert capsys.readouterr().out.strip() == "report: s3://news/out/report.html"
    doc = lxml_html.fromstring(client.get_object(Bucket=BUCKET, Key="out/report.html")["Body"].read())
    totals = {tr[0].text_content(): tr[1].text_content() for tr in doc.get_element_by_id("totals")}
    # by hand: 5 records; 3 stories, the 404, the exact copy of the first story
    assert {k: totals[k] for k in ("WARC response records read", "articles written", "rejects",
                                   "duplicates dropped")} == {"WARC response records read": "5",
                                                             "articles written": "3", "rejects": "1",
                                                             "duplicates dropped": "1"}
    sites = {tr[0].text_content(): tr[1].text_content() for tr in doc.get_element_by_id("sites") if tr[0].tag == "td"}
    assert sites == {"alpha": "3"}  # read from the Hive partitions site=alpha/ of the bucket


@pytest.mark.s3
def test_a_lock_object_in_the_output_refuses_the_run_in_one_line(s3, warc_in_bucket, capsys):
    client, flags = s3
    holder = {"pid": 4242, "host": "elsewhere", "started": "2024-05-01T12:00:00+00:00", "token": "x"}
    client.put_object(Bucket=BUCKET, Key="locked/.clean.lock", Body=json.dumps(holder).encode())
    assert main(["clean", "--warc", warc_in_bucket, "--out", "s3://news/locked", *CLEAN, *flags]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("newsclean:")]
    assert len(err) == 1 and "pid 4242 on host elsewhere" in err[0] and "s3://news/locked/.clean.lock" in err[0]
    assert _keys(client, "locked/") == ["locked/.clean.lock"]  # nothing written, the holder's lock left alone


@pytest.mark.s3
def test_crawl_into_s3_uploads_the_warc_files_and_report_and_writes_no_local_s3_folder(s3, tmp_path, monkeypatch):
    import types

    import newsclean.crawler.run

    client, flags = s3

    def fake_crawl(config, out_dir, *, log_level="INFO", settings=None):  # what a crawl leaves in its folder
        warc = Path(out_dir) / "alpha" / "politics" / "alpha-politics-20240501T120000Z-000.warc.gz"
        warc.parent.mkdir(parents=True)
        warc.write_bytes(b"WARC bytes")
        (Path(out_dir) / "crawl-report-20240501T120000Z-000.json").write_text("{}")
        (Path(out_dir) / "crawl-state.sqlite3").write_bytes(b"state")
        return types.SimpleNamespace(format=lambda: "crawled", finish_reason="finished", start_refusal=lambda: None,
                                     reasons=lambda outcome: {})

    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", fake_crawl)
    (tmp_path / "sites.toml").write_text(SITES_TOML)
    monkeypatch.chdir(tmp_path)
    assert main(["crawl", "--config", "sites.toml", "--out", "s3://news/warc2", *flags]) == 0
    assert _keys(client, "warc2/") == ["warc2/alpha/politics/alpha-politics-20240501T120000Z-000.warc.gz",
                                       "warc2/crawl-report-20240501T120000Z-000.json"]
    assert client.get_object(Bucket=BUCKET, Key=_keys(client, "warc2/")[0])["Body"].read() == b"WARC bytes"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.toml"]


def test_run_into_gs_crawls_and_cleans_gs_paths_and_makes_no_local_gs_folder(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "_crawl", lambda config, out, args, beam_args=(): calls.append(("crawl", out)))
    monkeypatch.setattr(cli, "_clean", lambda warc, out, args, beam_args: calls.append(("clean", warc, out)) or 0)
    (tmp_path / "sites.toml").write_text(SITES_TOML)
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--config", "sites.toml", "--out", "gs://b/c"]) == 0
    assert calls == [("crawl", "gs://b/c/warc"), ("clean", "gs://b/c/warc", "gs://b/c")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites.toml"]


def test_the_warc_folder_of_run_is_joined_as_a_url_on_object_stores():
    assert cli.warc_folder("gs://b/c/") == "gs://b/c/warc"
    assert cli.warc_folder("s3://news") == "s3://news/warc"
    assert cli.warc_folder("corpus") == str(Path("corpus") / "warc")

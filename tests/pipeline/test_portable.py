"""``newsclean clean`` on Beam's PortableRunner (the Fn API path Flink and Dataflow Runner v2 use) gives the
same Parquet rows as on the DirectRunner, and ``--no-wait`` + ``newsclean summarize`` finish the same run.

The test starts Beam's local job service (``local_job_service_main``) and an external SDK worker pool
(``worker_pool_main``) on 127.0.0.1 with free ports, runs the launcher in a child process with a time
limit, and stops both services at the end. Workers are started by the pool with the ``python`` on PATH,
so the venv's bin directory goes first on the children's PATH.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import main as cli_main
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.errors import NewscleanError
from newsclean.pipeline.launch import summarize_out
from newsclean.pipeline.options import CleanConfig

pytestmark = pytest.mark.integration

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
LIMIT_S = 240  # one launcher run; a broken worker pool makes the job wait forever otherwise


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"service exited with {proc.returncode}: {proc.stdout.read()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture(scope="module")
def services():
    job_port, pool_port = _free_port(), _free_port()
    procs = [
        subprocess.Popen([sys.executable, "-m", "apache_beam.runners.portability.local_job_service_main",
                          "--port", str(job_port)], env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True),
        subprocess.Popen([sys.executable, "-m", "apache_beam.runners.worker.worker_pool_main",
                          "--service_port", str(pool_port)], env=_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True),
    ]
    try:
        _wait_port(job_port, procs[0])
        _wait_port(pool_port, procs[1])
        yield ["--runner", "PortableRunner", "--job_endpoint", f"127.0.0.1:{job_port}",
               "--environment_type", "EXTERNAL", "--environment_config", f"127.0.0.1:{pool_port}"]
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="module")
def warc(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("portable")
    for site, cat, seed in (("alpha", "politics", 10), ("beta", "world", 50)):
        pages = [Response(f"http://{site}.test/{cat}/story-{i}.html",
                          article_page(site, cat, f"{site} story {i}", [paragraph(seed + 3 * i + j) for j in range(3)]).encode(),
                          date=T0 + timedelta(minutes=i)) for i in range(4)]
        pages.append(Response(f"http://{site}.test/{cat}/gone.html", b"<html>gone</html>", status=404))
        write_warc(root / "warc" / site / cat / f"{site}-{cat}-20240501T100000Z-00000.warc.gz", site, cat, pages)
    return root


@pytest.fixture(scope="module")
def direct(warc):
    out = warc / "out-direct"
    run_clean(CleanConfig(warc=str(warc / "warc"), out=str(out)), ["--runner", "DirectRunner"])
    return out


def _rows(out: Path, name: str, key: str) -> list[dict]:
    return sorted(pq.read_table(out / name).to_pylist(), key=lambda r: (r[key], r["url"]))


def _cli(args: list[str], timeout: float = LIMIT_S) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "newsclean.cli", *args], env=_env(), capture_output=True,
                          text=True, timeout=timeout)


def test_portable_runner_output_equals_direct_runner(services, warc, direct):
    out = warc / "out-portable"
    proc = _cli(["clean", "--warc", str(warc / "warc"), "--out", str(out), *services])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "vs 10 read: ok" in proc.stdout
    assert _rows(out, "articles", "article_id") == _rows(direct, "articles", "article_id")
    assert _rows(out, "rejects", "url") == _rows(direct, "rejects", "url")
    assert len(_rows(out, "articles", "article_id")) == 8


def test_no_wait_prints_the_job_id_and_summarize_publishes(services, warc, direct, capsys):
    out = warc / "out-nowait"
    # In process: the launcher returns once the job is submitted; the job runs in the job service.
    assert cli_main(["clean", "--warc", str(warc / "warc"), "--out", str(out), "--no-wait", *services]) == 0
    job_line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("job id: "))
    assert job_line != "job id: local"  # the job service's id
    end = time.monotonic() + LIMIT_S
    while True:
        try:
            summary = summarize_out(str(out))
            break
        except NewscleanError as exc:
            assert "has not finished" in str(exc)
            assert not (out / "articles").exists()  # nothing published before the job is done
            if time.monotonic() > end:
                raise
            time.sleep(0.5)
    assert summary.balanced and summary.records_read == 10
    assert (out / "_summary.json").exists() and not (out / "_pending.json").exists()
    assert _rows(out, "articles", "article_id") == _rows(direct, "articles", "article_id")
    assert cli_main(["summarize", str(out)]) == 0  # nothing pending: the summary of the published outputs
    assert "vs 10 read: ok" in capsys.readouterr().out

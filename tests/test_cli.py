"""The ``newsclean`` command line (newsclean.cli): help, exit codes, one-line errors, wiring of subcommands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.cli import main

SITES_TOML = """
[[site]]
name = "alpha"
allowed_domains = ["alpha.test"]
[site.categories]
politics = ["http://alpha.test/politics/"]
"""


def _write_crawl(root: Path) -> None:
    pages = [Response(f"http://alpha.test/politics/{i}.html",
                      article_page("alpha", "politics", f"Story {i}", [paragraph(10 * i + j) for j in range(3)]).encode())
             for i in range(3)]
    write_warc(root / "alpha" / "politics" / "alpha-politics-20240501T100000Z-00000.warc.gz", "alpha", "politics", pages)


def _crawl_summary(text: str, refusal: str | None = None) -> types.SimpleNamespace:
    """A stand-in for the crawler's report: ``format()`` gives ``text``; ``start_refusal()`` gives ``refusal``."""
    return types.SimpleNamespace(format=lambda: text, finish_reason="finished", start_refusal=lambda: refusal,
                                 reasons=lambda outcome: {})


def _err_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def test_help_lists_subcommands(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("crawl", "clean", "run", "demo"):
        assert cmd in out


@pytest.mark.parametrize("cmd", ["crawl", "clean", "run", "demo"])
def test_subcommand_help(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    assert "--out" in capsys.readouterr().out


def test_clean_help_documents_beam_options(capsys):
    main(["clean", "--help"])
    out = capsys.readouterr().out
    assert "--neighbour-sample" in out and "--chain" in out and "DataflowRunner" in out


def test_chain_help_describes_every_named_chain():
    from newsclean.pipeline.options import chain_choices_help
    from newsclean.transforms.chain import CONFIGS

    text = chain_choices_help()
    assert text.startswith("'default' (")
    for name, config in CONFIGS.items():
        assert config.summary, f"chain {name!r} has no summary for --help"
        assert f"'{name}' ({config.summary})" in text


def _help(argv, capsys) -> str:
    assert main(argv) == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line wrapping undone


def test_top_level_and_clean_help_name_every_chain_and_near_duplicate_removal(capsys):
    from newsclean.transforms.chain import CONFIGS

    top, clean = _help(["--help"], capsys), _help(["clean", "--help"], capsys)
    assert f"{len(CONFIGS)} named configurations, {', '.join(CONFIGS)}" in top
    assert "near-duplicate (MinHash LSH)" in top and "exact and near duplicates (MinHash LSH)" in clean
    assert all(f"'{name}'" in clean for name in CONFIGS)


def test_the_package_description_counts_the_chains_and_names_near_duplicates():
    import tomllib

    from newsclean.transforms.chain import CONFIGS

    description = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["description"]
    number = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"][len(CONFIGS)]
    assert f"{number} named chains" in description and "near duplicates" in description


@pytest.mark.parametrize("argv", [
    [],
    ["bogus"],
    ["clean", "--out", "x"],
    ["clean", "--warc", "x", "--out", "y", "--neighbour-sample", "0"],
    ["clean", "--warc", "x", "--out", "y", "--chain", "nope"],
    ["clean", "--warc", "x", "--out", "y", "--runer", "DirectRunner"],
    ["crawl", "--config", "x.toml", "--out", "y", "--runner", "DirectRunner"],
])
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err


def test_glob_matching_nothing_is_one_line_exit_1(tmp_path, capsys):
    assert main(["clean", "--warc", str(tmp_path / "none" / "**" / "*.warc.gz"), "--out", str(tmp_path / "o")]) == 1
    lines = _err_lines(capsys)
    assert lines == [f"newsclean: error: --warc '{tmp_path}/none/**/*.warc.gz' matches no WARC file"]


def test_missing_or_bad_config_is_a_usage_error(tmp_path, capsys):
    assert main(["crawl", "--config", str(tmp_path / "missing.toml"), "--out", str(tmp_path)]) == 2
    assert "config file not found" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[[site]]\nname = 'a b'\n")
    assert main(["crawl", "--config", str(bad), "--out", str(tmp_path)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_console_script_one_line_error(tmp_path):
    exe = Path(sys.executable).with_name("newsclean")
    if not exe.exists():
        pytest.skip("console script not installed (pip install -e .)")
    proc = subprocess.run([str(exe), "clean", "--warc", str(tmp_path / "*.warc.gz"), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [f"newsclean: error: --warc '{tmp_path}/*.warc.gz' matches no WARC file"]
    assert "Traceback" not in proc.stderr


def test_clean_runs_with_beam_flags_and_prints_summary(tmp_path, capsys):
    _write_crawl(tmp_path / "warc")
    out = tmp_path / "out"
    rc = main(["clean", "--warc", str(tmp_path / "warc"), "--out", str(out), "--chain", "paper",
               "--neighbour-sample", "2", "--runner", "DirectRunner", "--direct_running_mode", "in_memory"])
    assert rc == 0
    stdout = capsys.readouterr().out
    assert "3 WARC response records read" in stdout and "check:" in stdout
    assert json.loads((out / "_summary.json").read_text())["balanced"] is True


def test_run_crawls_into_out_warc_then_cleans(tmp_path, monkeypatch, capsys):
    import newsclean.crawler.run

    calls = []

    def fake_run_crawl(config, out_dir, *, log_level="INFO", settings=None):
        calls.append((config.sites[0].name, Path(out_dir), log_level))
        _write_crawl(Path(out_dir))
        return _crawl_summary("crawl finished (fake)")

    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", fake_run_crawl)
    config = tmp_path / "sites.toml"
    config.write_text(SITES_TOML)
    out = tmp_path / "job"
    assert main(["run", "--config", str(config), "--out", str(out), "--log-level", "WARNING"]) == 0
    assert calls == [("alpha", out / "warc", "WARNING")]
    stdout = capsys.readouterr().out
    assert "crawl finished (fake)" in stdout and "3 WARC response records read" in stdout
    assert (out / "_summary.json").exists() and list((out / "articles").glob("*.parquet"))


def test_run_reports_an_empty_crawl(tmp_path, monkeypatch, capsys):
    import newsclean.crawler.run

    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", lambda config, out_dir, *, log_level="INFO", settings=None:
                        _crawl_summary("nothing"))
    config = tmp_path / "sites.toml"
    config.write_text(SITES_TOML)
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "job")]) == 1
    assert _err_lines(capsys) == [f"newsclean: error: the crawl wrote no WARC file under {tmp_path / 'job' / 'warc'}"]


def test_crawl_passes_scrapy_settings_and_refuses_a_malformed_one(tmp_path, monkeypatch, capsys):
    import newsclean.crawler.run

    seen = []
    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", lambda config, out_dir, *, log_level="INFO", settings=None:
                        seen.append(settings) or _crawl_summary("done"))
    config = tmp_path / "sites.toml"
    config.write_text(SITES_TOML)
    argv = ["crawl", "--config", str(config), "--out", str(tmp_path / "w")]
    assert main([*argv, "-s", "DOWNLOAD_DELAY=2", "-s", "LOG_LEVEL=ERROR"]) == 0
    assert seen == [{"DOWNLOAD_DELAY": "2", "LOG_LEVEL": "ERROR"}]
    assert main([*argv, "-s", "no-equals-sign"]) == 2 and len(seen) == 1  # refused before any crawl
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_a_crawl_whose_every_start_was_refused_exits_1_naming_the_setting(tmp_path, monkeypatch, capsys):
    import newsclean.crawler.run

    refusal = "every start URL was refused: private_address (allow with --allow-private-networks)"
    monkeypatch.setattr(newsclean.crawler.run, "run_crawl", lambda config, out_dir, *, log_level="INFO", settings=None:
                        _crawl_summary("fetched nothing", refusal))
    config = tmp_path / "sites.toml"
    config.write_text(SITES_TOML)
    assert main(["crawl", "--config", str(config), "--out", str(tmp_path / "w")]) == 1
    assert _err_lines(capsys) == [f"newsclean: error: {refusal}"]


def test_demo_calls_run_demo(tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("newsclean.demo.run")
    fake.run_demo = lambda out_dir, *, seed=0, clean_args=(): calls.append((out_dir, seed, list(clean_args)))
    monkeypatch.setitem(sys.modules, "newsclean.demo.run", fake)
    assert main(["demo", "--out", str(tmp_path), "--seed", "3", "--direct_num_workers", "2"]) == 0
    assert calls == [(tmp_path, 3, ["--direct_num_workers", "2"])]


def test_eval_subcommand_comes_from_the_harness_entry_point(monkeypatch):
    import argparse

    from newsclean import cli
    from newsclean.pipeline.errors import UsageError

    harness = cli.plugin_command("eval")
    if harness is None:
        pytest.skip("the evaluation harness is not installed (pip install -e ./evaluation)")
    assert harness.__name__ == "newsclean_eval.command" and callable(harness.cmd_eval)
    monkeypatch.setattr(cli, "plugin_command", lambda name: None)  # as in a plain `pip install newsclean`
    with pytest.raises(UsageError, match=r"pip install -e \./evaluation"):
        cli.cmd_eval(argparse.Namespace(), ["eval"])


def test_version_and_top_level_help_import_neither_beam_nor_scrapy():
    """``newsclean --version`` and ``--help`` answer without importing the pipeline's or the crawler's
    frameworks (seconds of start-up on a loaded machine); ``clean --help`` still lists the Beam-backed flags."""
    probe = ("import io, sys, contextlib\n"
             "from newsclean.cli import main\n"
             "for argv in (['--version'], ['--help'], ['summarize', '--help'], ['extract', '--help']):\n"
             "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
             "        assert main(argv) == 0, argv\n"
             "    assert out.getvalue().strip(), argv\n"
             "heavy = sorted(m for m in ('apache_beam', 'scrapy', 'twisted') if m in sys.modules)\n"
             "print(','.join(heavy) or 'none')\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "none"


def test_version_prints_the_installed_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip().startswith("newsclean ")
    assert main(["clean", "--version"]) == 0  # after the subcommand too (hoisted)


@pytest.mark.parametrize("argv, line", [
    (["clean", "--warc", "", "--out", "o"], "newsclean: error: --warc is empty: give a WARC file, a folder of WARC files or a glob"),
    (["clean", "--warc", "x", "--out", ""], "newsclean: error: --out is empty: give an output folder"),
])
def test_errors_found_after_parsing_are_one_line_without_the_usage(argv, line, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert _err_lines(capsys) == [line]


def test_an_output_folder_on_a_read_only_filesystem_is_one_line_exit_1(tmp_path, monkeypatch, capsys):
    import errno

    import newsclean.pipeline.output as output

    _write_crawl(tmp_path / "warc")

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(output.os, "makedirs", read_only)
    out = tmp_path / "new" / "out"
    assert main(["clean", "--warc", str(tmp_path / "warc"), "--out", str(out)]) == 1
    assert _err_lines(capsys) == [f"newsclean: error: --out '{out}': cannot create the directory: Read-only file system"]

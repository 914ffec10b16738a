"""The batched executor (pipeline/batches.py): a run that leaves the runner to newsclean and reads more than a
batch of WARC bytes is cut into batches of files, and gives the rows of one run over all of them, since its last
run is the one graph's dedup stages and sinks over every batch's spill.

The crawl is made so that cutting it per file would change rows if each batch decided on its own: the best-ranked
copy of an exact duplicate and of a near-duplicate lies in a later file than the other copy, and a URL section of
another crawler's files fills a neighbour sample only with the pages of two files together."""

from __future__ import annotations

import ast
import dataclasses
import os
import pickle
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apache_beam as beam
import pyarrow.dataset as ds
import pytest
from warc_builder import Response, article_page, paragraph, write_warc

from newsclean.pipeline import batches, clean, dedup, incremental, stages
from newsclean.pipeline.batches import BATCHES_DIR, DONE_FILE, file_batches, resume_key, runs_in_batches
from newsclean.pipeline.clean import run_clean
from newsclean.pipeline.incremental import INDEX_DIR, matched_file_stamps
from newsclean.pipeline.options import CleanConfig
from newsclean.pipeline.output import RESUME_FILE, STAGING_PREFIX
from newsclean.pipeline.summary import read_counts

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
#: One run's graph, whatever the input's size.
ONE_GRAPH = 0
#: A batch per WARC file.
PER_FILE = 1


def _paragraphs(seed: int) -> list[str]:
    return [paragraph(seed * 100 + j) for j in range(6)]  # about 280 words: 3 changed words keep J > 0.8


def _edit(paras: list[str]) -> list[str]:
    words = paras[1].split()
    for i in (5, 15, 25):
        words[i] = "changedword"
    return [paras[0], " ".join(words), *paras[2:]]


def _page(site: str, category: str, url: str, seed: int, date: datetime, paras=None) -> Response:
    return Response(url, article_page(site, category, f"Story {seed}", paras or _paragraphs(seed)).encode(),
                    date=date)


def _crawl(root: Path) -> Path:
    """Five WARC files; the best-ranked copies of the duplicates lie in the later files."""
    warc = root / "warc"
    first = [_page("alpha", "news", f"http://alpha.test/news/story-{i}.html", i, T0 + timedelta(hours=1, minutes=i))
             for i in range(4)]
    write_warc(warc / "alpha" / "news" / "alpha-news-20240501T100000Z-00000.warc.gz", "alpha", "news", first)
    second = [
        # the same text as story-2, fetched earlier: it wins exact dedup although its file comes later
        Response("http://alpha.test/news/wire-copy-2.html", first[2].body, date=T0),
        # a near-duplicate of story-1, published earlier: it is the cluster's kept member
        _page("alpha", "news", "http://alpha.test/news/near-1.html", 1, T0, _edit(_paragraphs(1))),
        _page("alpha", "news", "http://alpha.test/news/story-9.html", 9, T0 + timedelta(hours=2)),
        Response("http://alpha.test/news/missing.html", b"<html><body>Not found</body></html>", status=404),
    ]
    write_warc(warc / "alpha" / "news" / "alpha-news-20240501T120000Z-00001.warc.gz", "alpha", "news", second)
    beta = [_page("beta", "world", f"http://beta.test/world/story-{i}.html", 20 + i, T0) for i in range(3)]
    beta.append(Response("http://beta.test/world/empty.html", b"   "))
    write_warc(warc / "beta" / "world" / "beta-world-20240501T100000Z-00000.warc.gz", "beta", "world", beta)
    # another crawler's files (no headers, no folder layout): gamma.test/sport/ has 3 pages in 2 files
    foreign = [_page("gamma", "sport", f"http://gamma.test/sport/match-{i}.html", 40 + i, T0) for i in range(2)]
    foreign.append(_page("gamma", "opinion", "http://gamma.test/opinion/view.html", 45, T0))
    write_warc(warc / "crawl" / "CC-MAIN-00000.warc.gz", "x", "y", foreign, newsclean_headers="none")
    write_warc(warc / "crawl" / "CC-MAIN-00001.warc.gz", "x", "y",
               [_page("gamma", "sport", "http://gamma.test/sport/match-2.html", 42, T0)], newsclean_headers="none")
    return warc


def _config(warc: Path, out: Path, batch_bytes: int, incremental: bool = False) -> CleanConfig:
    return CleanConfig(warc=str(warc), out=str(out), neighbour_sample=3, incremental=incremental,
                       batch_bytes=batch_bytes)


def _rows(out: Path, table: str) -> list[tuple]:
    rows = ds.dataset(str(out / table), format="parquet").to_table().to_pylist()
    return sorted(tuple(sorted((k, repr(v)) for k, v in row.items())) for row in rows)


def _same_rows(a: Path, b: Path) -> None:
    for table in ("articles", "rejects", "duplicates", INDEX_DIR):
        assert _rows(a, table) == _rows(b, table), table
    assert read_counts(str(a)) == read_counts(str(b))


#: The graph's dedup stages and sinks: each must be applied once over a run's whole corpus, whatever the executor.
STAGES = ((dedup, "DedupExact"), (dedup, "NearDedup"), (dedup, "WriteDuplicates"), (incremental, "WriteIndex"),
          (stages, "WriteParquet"), (stages, "WriteCounts"))


def _watch(mp: pytest.MonkeyPatch, graphs: list, applied: list) -> None:
    """Record the WARC patterns of each Beam run (``graphs``) and each application of :data:`STAGES`
    (``applied``: the stage's name, its output folder or None, the outputs it writes)."""
    for module in (batches, clean):
        def counted(build, beam_args, patterns, run=module.run_graph):
            graphs.append(len(patterns))
            return run(build, beam_args, patterns)

        mp.setattr(module, "run_graph", counted)
    for module, name in STAGES:
        cls = getattr(module, name)

        def expand(self, pcolls, original=cls.expand, name=name):
            applied.append((name, getattr(self, "out", None), tuple(pcolls) if isinstance(pcolls, dict) else ()))
            return original(self, pcolls)

        mp.setattr(cls, "expand", expand)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("batches")
    warc = _crawl(root)
    graphs, applied = {"one": [], "cut": []}, {"one": [], "cut": []}
    summaries = []
    for name, batch_bytes in (("one", ONE_GRAPH), ("cut", PER_FILE)):
        mp = pytest.MonkeyPatch()
        _watch(mp, graphs[name], applied[name])
        try:
            summaries.append(run_clean(_config(warc, root / name, batch_bytes), []))
        finally:
            mp.undo()
    return {"root": root, "warc": warc, "one": root / "one", "cut": root / "cut", "summaries": tuple(summaries),
            "graphs": graphs, "applied": applied}


def test_a_large_input_runs_in_batches_of_files(outputs):
    assert outputs["graphs"]["one"] == [2]  # one graph over --warc DIR's two patterns (*.warc.gz, *.warc)
    # the evidence over all five files, one run per file, then dedup and write over the spill (no WARC input)
    assert outputs["graphs"]["cut"] == [5, 1, 1, 1, 1, 1, 0]


def test_both_executors_apply_the_graphs_dedup_stages_and_sinks_once_over_the_corpus(outputs):
    """One set of dedup decisions and one writer of each output: the batched run's last Beam run applies the one
    graph's dedup stages and sinks once, into the staging folder, as the one graph does; the batches themselves
    write only their rejects and counts (into their own folders, through the same sinks), for that last run."""
    corpus = {name: sorted((stage, written) for stage, out, written in outputs["applied"][name]
                           if out is None or f"/{BATCHES_DIR}/" not in out) for name in ("one", "cut")}
    assert corpus["one"] == corpus["cut"] == sorted(
        [("DedupExact", ()), ("NearDedup", ()), ("WriteDuplicates", ()), ("WriteIndex", ()),
         ("WriteParquet", ("articles", "rejects")), ("WriteCounts", ())])
    per_batch = sorted((stage, written) for stage, out, written in outputs["applied"]["cut"]
                       if out is not None and f"/{BATCHES_DIR}/" in out)
    assert per_batch == [("WriteCounts", ())] * 5 + [("WriteParquet", ("rejects",))] * 5


def test_the_batched_executor_has_no_writer_or_decision_of_its_own():
    """pipeline/batches.py writes no Parquet file itself (of pyarrow.parquet it reads step 1's rows only, no file
    is created or renamed by hand: the graph's sinks write every output) and makes no dedup decision (it imports
    none of pipeline/dedup_decisions.py's functions)."""
    tree = ast.parse(Path(batches.__file__).read_text(encoding="utf-8"))
    imported = {(node.module, alias.name) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert {name for module, name in imported if module == "newsclean.pipeline.dedup_decisions"} <= {"NearDupParams"}
    calls = [node.func for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)]
    assert {f.attr for f in calls if isinstance(f.value, ast.Name) and f.value.id == "pq"} == {"read_table"}
    assert not {f.attr for f in calls} & {"ParquetWriter", "write_table", "write_to_dataset", "create", "rename", "copy"}
    writers = [node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr.startswith("Write")]
    assert writers == ["WriteToParquet"]  # WritePickled's, the site evidence between step 1 and the batches


def test_a_changed_near_duplicate_decision_changes_both_executors_alike(outputs, tmp_path, monkeypatch):
    """The batched run has no near-duplicate decision of its own: with the graph's edge step giving no edge, neither
    executor drops a near-duplicate, and their rows stay the same."""
    monkeypatch.setattr(dedup, "pair_edge", lambda kv, threshold: iter(()))
    for name, batch_bytes in (("one", ONE_GRAPH), ("cut", PER_FILE)):
        run_clean(_config(outputs["warc"], tmp_path / name, batch_bytes), [])
    _same_rows(tmp_path / "one", tmp_path / "cut")
    assert {r["reason"] for r in ds.dataset(str(tmp_path / "cut" / "duplicates")).to_table().to_pylist()} == {
        "exact_duplicate"}
    urls = {r["url"] for r in ds.dataset(str(tmp_path / "cut" / "articles")).to_table().to_pylist()}
    assert {"http://alpha.test/news/near-1.html", "http://alpha.test/news/story-1.html"} <= urls


def test_batches_give_the_rows_of_one_run(outputs):
    _same_rows(outputs["one"], outputs["cut"])
    one, cut = outputs["summaries"]
    assert one.to_dict() | {"warc": ""} == cut.to_dict() | {"warc": ""}
    assert cut.balanced and cut.records_read == 16


def test_the_best_ranked_copy_in_a_later_batch_is_kept(outputs):
    articles = {r["url"]: r for r in ds.dataset(str(outputs["cut"] / "articles")).to_table().to_pylist()}
    assert "http://alpha.test/news/wire-copy-2.html" in articles
    assert "http://alpha.test/news/story-2.html" not in articles
    assert "http://alpha.test/news/near-1.html" in articles
    assert "http://alpha.test/news/story-1.html" not in articles
    assert {r["url"] for r in articles.values() if r["category"] == "sport"} == {
        f"http://gamma.test/sport/match-{i}.html" for i in range(3)}  # the section's pages of both files


def test_an_incremental_run_in_batches_gives_the_rows_of_one_run(outputs, tmp_path):
    warc = outputs["warc"]
    later = [
        _page("alpha", "news", "http://alpha.test/news/story-9b.html", 9, T0 + timedelta(days=1)),  # corpus text
        _page("alpha", "news", "http://alpha.test/news/near-0.html", 0, T0, _edit(_paragraphs(0))),  # near corpus
        _page("alpha", "news", "http://alpha.test/news/story-3.html", 3, T0 + timedelta(days=1),
              _edit(_paragraphs(3))),  # a new version of a corpus URL
        _page("beta", "world", "http://beta.test/world/story-7.html", 27, T0 + timedelta(days=1)),
    ]
    write_warc(tmp_path / "warc" / "alpha" / "news" / "alpha-news-20240502T100000Z-00000.warc.gz", "alpha", "news",
               later[:3])
    write_warc(tmp_path / "warc" / "beta" / "world" / "beta-world-20240502T100000Z-00000.warc.gz", "beta", "world",
               later[3:])
    shutil.copytree(warc, tmp_path / "warc", dirs_exist_ok=True)
    for name in ("one", "cut"):
        shutil.copytree(outputs["one"], tmp_path / name)
    one = run_clean(_config(tmp_path / "warc", tmp_path / "one", ONE_GRAPH, True), [])
    cut = run_clean(_config(tmp_path / "warc", tmp_path / "cut", PER_FILE, True), [])
    _same_rows(tmp_path / "one", tmp_path / "cut")
    assert cut.balanced and cut.duplicates == one.duplicates
    assert cut.duplicates["near_duplicate"] >= 1 and cut.duplicates["exact_duplicate"] >= 2


def test_a_partitioned_run_in_batches_gives_the_rows_of_one_run(outputs, tmp_path):
    config = dataclasses.replace(_config(outputs["warc"], tmp_path / "out", PER_FILE), partition_by="crawl_date")
    assert run_clean(config, []).balanced
    assert sorted(p.name for p in (tmp_path / "out" / "articles").iterdir()) == ["crawl_date=2024-05-01"]
    table = ds.dataset(str(tmp_path / "out" / "articles"), format="parquet", partitioning="hive").to_table()
    rows = sorted(tuple(sorted((k, repr(v)) for k, v in row.items() if k != "crawl_date")) for row in table.to_pylist())
    assert rows == _rows(outputs["one"], "articles")


def test_file_batches_keep_the_order_and_the_bound():
    files = [("a", 5), ("b", 4), ("c", 2), ("d", 20), ("e", 1)]
    assert file_batches(files, 10) == [["a", "b"], ["c"], ["d"], ["e"]]
    assert file_batches(files, 100) == [["a", "b", "c", "d", "e"]]
    assert file_batches([], 10) == []


def test_only_a_large_run_that_leaves_the_runner_to_newsclean_runs_in_batches():
    files = [("a", 100 << 20), ("b", 100 << 20)]
    assert runs_in_batches([], files, 128 << 20)
    assert not runs_in_batches([], files[:1], 128 << 20)
    assert not runs_in_batches([], files, 0)  # --batch-mib 0: always one run
    for flags in (["--runner", "DirectRunner"], ["--direct_running_mode=in_memory"], ["--runner=PrismRunner"]):
        assert not runs_in_batches(flags, files, 128 << 20)


def test_batch_mib_reaches_the_run(monkeypatch, tmp_path):
    from apache_beam.options.pipeline_options import PipelineOptions

    import newsclean.pipeline.clean as clean
    from newsclean.cli import main
    from newsclean.pipeline.options import DEFAULT_BATCH_MIB, clean_config_from_options

    class Seen(Exception):
        pass

    def run_clean(config, *args, **kwargs):
        raise Seen(config.batch_bytes)

    monkeypatch.setattr(clean, "run_clean", run_clean)
    for flags, mib in (([], DEFAULT_BATCH_MIB), (["--batch-mib", "3"], 3), (["--batch_mib=0"], 0)):
        with pytest.raises(Seen) as seen:
            main(["clean", "--warc", str(tmp_path), "--out", str(tmp_path / "out"), *flags])
        assert seen.value.args == (mib << 20,)
        assert clean_config_from_options(PipelineOptions(["--warc", "w", "--out", "o", *flags])).batch_bytes == mib << 20


def test_progress_of_a_run_in_batches(outputs, tmp_path, monkeypatch, capsys):
    """The phases on lines of their own; the counts go on over the batches, never more articles than records."""
    import re

    import newsclean.pipeline.progress as progress

    monkeypatch.setattr(progress, "INTERVAL_S", 0.0)  # a line at every count
    run_clean(_config(outputs["warc"], tmp_path / "out", PER_FILE), [], progress=True)
    lines = [line[len(progress.PREFIX):] for line in capsys.readouterr().err.splitlines()
             if line.startswith(progress.PREFIX)]
    notes = [line for line in lines if "records read" not in line]
    assert notes[0].startswith("5 WARC files") and "cleaning in 5 batches" in notes[0]
    assert notes[1:] == [*(f"batch {i} of 5: 1 WARC files" for i in range(1, 6)), "deduplicating the batches' articles"]
    counts = [tuple(int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:records read|articles|rejects)", line))
              for line in lines if "records read" in line]
    assert counts[-1][0] == 16 and all(a + j <= r for r, a, j in counts)


# --- a killed run in batches resumes where it stopped ------------------------------------------------------------


def _staging(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.name.startswith(STAGING_PREFIX))


@pytest.fixture(scope="module")
def killed(outputs):
    """An output folder whose batched run was killed after its third batch's Beam run, before that batch's
    completion marker: two batches completed, the third's outputs written but not marked."""
    out = outputs["root"] / "killed"
    mp = pytest.MonkeyPatch()

    def kill_at_the_third(path, obj, write=batches.write_marker):
        if path.endswith(f"b00002/{DONE_FILE}"):
            raise KeyboardInterrupt
        write(path, obj)

    mp.setattr(batches, "write_marker", kill_at_the_third)
    try:
        with pytest.raises(KeyboardInterrupt):
            run_clean(_config(outputs["warc"], out, PER_FILE), [])
    finally:
        mp.undo()
    return out


def _copy(killed: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(killed, out)
    return out


def test_a_killed_run_in_batches_leaves_its_completed_batches(killed):
    [staging] = _staging(killed)
    done = {p.parent.name for p in (staging / BATCHES_DIR).glob(f"*/{DONE_FILE}")}
    assert done == {"b00000", "b00001"}
    assert (staging / BATCHES_DIR / "b00002" / "rejects").is_dir()  # written, not marked
    assert (staging / RESUME_FILE).is_file() and not (killed / "articles").exists()


def test_a_rerun_cleans_only_the_batches_not_completed(outputs, killed, tmp_path, monkeypatch):
    out = _copy(killed, tmp_path)
    graphs = []
    _watch(monkeypatch, graphs, [])
    summary = run_clean(_config(outputs["warc"], out, PER_FILE), [])
    assert graphs == [1, 1, 1, 0]  # batches 3 (not marked), 4 and 5, then dedup and write; no evidence run
    _same_rows(outputs["cut"], out)
    assert summary.balanced and summary.records_read == 16
    assert summary.to_dict() | {"warc": ""} == outputs["summaries"][1].to_dict() | {"warc": ""}
    assert _staging(out) == []


def _step1_keys(evidence: Path, folder: str) -> list:
    """Every key step 1 wrote to ``folder`` (evidence or sections), read without Beam."""
    rows = ds.dataset(str(evidence / folder), format="parquet").to_table().column("value").to_pylist()
    return sorted(pickle.loads(row)[0] for row in rows)


def _assert_batch_keys(evidence: Path, folder: str, files: list[Path], expected: list) -> None:
    """A batch over ``files`` reads the keys ``expected`` of step 1's ``folder``."""
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    with TestPipeline(runner="FnApiRunner") as p:  # the DirectRunner would try to fetch Prism first
        paths = p | beam.Create([str(f) for f in files])
        sites = beam.pvalue.AsDict(batches.batch_sites(paths, str(evidence)))
        values = p | batches.ReadPickled(str(evidence / folder), sites)
        assert_that(values | beam.Map(lambda kv: kv[0]), equal_to(expected))


def test_a_batch_reads_the_evidence_and_sections_of_its_own_sites_only(outputs, killed):
    """Step 1 records the sites of each file; a batch's side inputs hold step 1's evidence and URL sections of
    those sites only, every key of them (a section spanning two files stays whole)."""
    evidence = _staging(killed)[0] / batches.EVIDENCE_DIR
    every_key = _step1_keys(evidence, batches.EVIDENCE)
    assert {site for site, _ in every_key} == {"alpha", "beta", "gamma.test"}
    gamma = [key for key in every_key if key[0] == "gamma.test"]
    assert ("gamma.test", "sport") in gamma and len(gamma) == 2  # the section and the host's other pages
    assert _step1_keys(evidence, batches.SECTIONS) == [("gamma.test", "sport")]
    beta = outputs["warc"] / "beta" / "world" / "beta-world-20240501T100000Z-00000.warc.gz"
    second = outputs["warc"] / "crawl" / "CC-MAIN-00001.warc.gz"
    _assert_batch_keys(evidence, batches.EVIDENCE, [beta], [("beta", "world")])
    _assert_batch_keys(evidence, batches.SECTIONS, [beta], [])
    _assert_batch_keys(evidence, batches.EVIDENCE, [second], gamma)
    _assert_batch_keys(evidence, batches.SECTIONS, [second], [("gamma.test", "sport")])
    _assert_batch_keys(evidence, batches.EVIDENCE, [beta, second], sorted([("beta", "world"), *gamma]))


def test_a_batch_unpickles_the_rows_of_its_own_keys_only():
    """Step 1's rows are selected by their key column before any value is unpickled: a row of another key whose
    value is not a pickle at all is never read."""
    import pyarrow as pa

    rows = [batches._value_row((("alpha", "news"), 1), batches.site_of),  # noqa: SLF001
            batches._value_row((("beta", "world"), 2), batches.site_of),  # noqa: SLF001
            {"key": "gamma.test", "value": b"not a pickle"}]
    table = pa.Table.from_pylist(rows, schema=batches.VALUE_SCHEMA)
    assert batches.selected_values(table, ["beta"]) == [(("beta", "world"), 2)]
    assert batches.selected_values(table, ["alpha", "delta"]) == [(("alpha", "news"), 1)]
    assert batches.selected_values(table, []) == []
    with pytest.raises(pickle.UnpicklingError):
        batches.selected_values(table, None)  # every row


def test_a_rerun_learns_again_the_evidence_an_older_version_wrote(outputs, killed, tmp_path, monkeypatch):
    """A step-1 folder whose marker names another row format (an older version's) is learnt again; the batches
    it completed stand, and the rows are those of one run."""
    out = _copy(killed, tmp_path)
    [staging] = _staging(out)
    marker = staging / batches.EVIDENCE_DIR / DONE_FILE
    old = batches.read_marker(str(marker))
    assert old["format"] == batches.EVIDENCE_FORMAT
    batches.write_marker(str(marker), old | {"format": batches.EVIDENCE_FORMAT - 1})
    graphs = []
    _watch(monkeypatch, graphs, [])
    run_clean(_config(outputs["warc"], out, PER_FILE), [])
    assert graphs == [5, 1, 1, 1, 0]  # step 1 again, then batches 3 to 5 and dedup
    _same_rows(outputs["cut"], out)


@pytest.mark.parametrize("change", ["settings", "one graph", "files"])
def test_a_rerun_with_other_settings_or_files_starts_over(outputs, killed, tmp_path, monkeypatch, change):
    out = _copy(killed, tmp_path)
    config = _config(outputs["warc"], out, PER_FILE)
    if change == "settings":
        config = dataclasses.replace(config, min_words=config.min_words + 1)
    elif change == "one graph":
        config = dataclasses.replace(config, batch_bytes=ONE_GRAPH)
    else:
        warc = tmp_path / "warc"
        shutil.copytree(outputs["warc"], warc)
        (warc / "crawl" / "CC-MAIN-00001.warc.gz").unlink()
        config = dataclasses.replace(config, warc=str(warc))
    graphs = []
    _watch(monkeypatch, graphs, [])
    assert run_clean(config, []).balanced
    assert graphs == {"settings": [5, 1, 1, 1, 1, 1, 0], "one graph": [2], "files": [4, 1, 1, 1, 1, 0]}[change]
    assert _staging(out) == []
    if change == "one graph":
        _same_rows(outputs["cut"], out)


def test_the_resume_key_tells_files_of_the_same_path_and_size_apart_by_modification_time(tmp_path):
    a, b = tmp_path / "a.warc", tmp_path / "b.warc"
    a.write_bytes(b"WARC/1.1 one")
    b.write_bytes(b"WARC/1.1 two")
    config = _config(tmp_path, tmp_path / "out", PER_FILE)
    key = resume_key(config, matched_file_stamps([str(a)]))
    assert key == resume_key(config, matched_file_stamps([str(a)]))
    os.utime(b, (1_700_000_000, 1_700_000_000))  # another modification time than a's (written just now)
    b.replace(a)
    assert key["files"][0][:2] == resume_key(config, matched_file_stamps([str(a)]))["files"][0][:2]
    assert key != resume_key(config, matched_file_stamps([str(a)]))


def test_a_live_run_still_blocks_a_rerun_and_keeps_its_staging_folder(outputs, killed, tmp_path):
    from newsclean.pipeline.output import OutputLockedError, output_lock

    out = _copy(killed, tmp_path)
    with output_lock(str(out)), pytest.raises(OutputLockedError):
        run_clean(_config(outputs["warc"], out, PER_FILE), [])
    assert [p.name for p in _staging(out)] == [p.name for p in _staging(killed)]

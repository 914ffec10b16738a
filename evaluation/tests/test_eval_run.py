"""``newsclean eval`` (newsclean_eval): grouping and split, bootstrap, snippet metric, peers, report, CLI.

Everything but the last test runs on a tiny synthetic data set built here; the last one scores the
default chain on a few real msv-big9 groups and skips where ``../shared/data`` is absent.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

import newsclean_eval.runner as runner_mod
from newsclean.cli import main
from newsclean.transforms.chain import CONFIGS, ChainConfig
from newsclean.transforms.classifier.model import LearnedParams
from newsclean.transforms.refine.region_recall import RegionRecallParams
from newsclean_eval import report
from newsclean_eval.command import EvalOptions, render_markdown, resolve_configs, run_eval
from newsclean_eval.datasets import EvalPage, shared_data_dir, split_of
from newsclean_eval.metrics import (
    SnippetCounts,
    macro_diff_interval,
    macro_interval,
    resample_indices,
    snippet_counts,
    snippet_interval,
    snippet_scores,
)
from newsclean_eval.runner import GroupTask, build_tasks, group_pages, neighbour_sample, run_group, select_groups
from newsclean_eval.systems import (
    PEERS,
    STEP_ROWS,
    PeerSpec,
    System,
    ablations,
    crossfit_systems,
    default_ablation_bases,
    html_fragment_text,
    named_configs,
    resolve_peers,
)

#: A papers'-chain configuration built here, so these tests do not move when the shipped default does.
PLAIN = ChainConfig(name="default")


def plain_systems(*ids: str):
    """``default`` (:data:`PLAIN`) and the named ablations of it."""
    by_id = {s.id: s for s in named_configs({"default": PLAIN}) + ablations(PLAIN)}
    return [by_id[i] for i in ids]

NAV = "<div id='nav'><a href='/'>Home</a> <a href='/world'>World news</a> <a href='/sport'>Sport pages</a></div>"
FOOT = "<div class='footer'><p>Copyright Example Media Group, all rights reserved worldwide.</p></div>"


def _article(site: str, n: int) -> tuple[bytes, str]:
    """A templated news page of ``site`` and its gold text (headline + two paragraphs)."""
    words = " ".join(f"{site}word{n}x{i}" for i in range(40))
    body = f"Story {n} of {site} begins here. {words}. The end of story {n}, told in full sentences."
    html = (f"<html><head><title>Story {n}</title></head><body>{NAV}<div class='main'><h1>Story {n} headline</h1>"
            f"<p>{body}</p><p>Second paragraph of story {n} with more words about {site}.</p></div>{FOOT}</body></html>")
    gold = f"Story {n} headline\n\n{body}\n\nSecond paragraph of story {n} with more words about {site}."
    return html.encode("utf-8"), gold


def synthetic_sites() -> list[EvalPage]:
    """2 sites x 2 groups x 3 pages with plain-text gold."""
    pages = []
    for site in ("alpha.test", "beta.test"):
        for year in ("2005", "2009"):
            for n in range(3):
                html, gold = _article(site, int(year) + n)
                pages.append(EvalPage("synthetic-sites", f"{site}/{year}", f"{site}-{year}-{n}.html", html, gold,
                                      site=site))
    return pages


def synthetic_snippets() -> list[EvalPage]:
    """3 single pages with snippet gold."""
    pages = []
    for n in range(3):
        html, _ = _article("gamma.test", n)
        pages.append(EvalPage("synthetic-snippets", f"u{n}", f"p{n}.html", html, None, f"http://g/{n}",
                              must_contain=(f"Story {n} of gamma.test begins here.", f"Second paragraph of story {n}"),
                              must_not_contain=("all rights reserved", "Sport pages")))
    return pages


LOADER = {"synthetic-sites": synthetic_sites, "synthetic-snippets": synthetic_snippets}


@pytest.fixture()
def synthetic(monkeypatch):
    """Treat ``synthetic-sites`` as a per-site (neighbour) data set; register an 'echo' peer (whole page text)."""
    monkeypatch.setattr(runner_mod, "NEIGHBOUR_SETS", ("synthetic-sites",))
    monkeypatch.setitem(PEERS, "echo", PeerSpec("echo", "lxml", "lxml", html_fragment_text))


# ------------------------------------------------------------------------------- grouping and split


def test_grouping_is_deterministic_and_keeps_groups_whole():
    pages = synthetic_sites()
    a, b = group_pages(pages), group_pages(list(reversed(pages)))
    assert list(a) == list(b) == ["alpha.test/2005", "alpha.test/2009", "beta.test/2005", "beta.test/2009"]
    assert all([p.page_id for p in a[g]] == [p.page_id for p in b[g]] for g in a)
    tasks = build_tasks("synthetic-sites", pages, plain_systems("default"))
    assert sorted(t.group for t in tasks) == list(a) and all(len(t.pages) == 3 for t in tasks)
    assert list(select_groups(a, 2)) == list(select_groups(b, 2)) and len(select_groups(a, 2)) == 2


def test_split_is_by_site_so_every_group_falls_on_one_side():
    pages = synthetic_sites() + synthetic_snippets()
    for group, members in group_pages(pages).items():
        assert len({p.split for p in members}) == 1, group
    assert {p.split for p in pages if p.site == "alpha.test"} == {split_of("synthetic-sites", "alpha.test")}
    assert split_of("d", "s") == split_of("d", "s") and split_of("d", "s") in ("tune", "test")
    # Over many sites the hash gives both sides.
    assert {split_of("d", f"site{i}") for i in range(50)} == {"tune", "test"}


def test_neighbour_sample_is_deterministic_and_can_exclude_the_target():
    group = group_pages(synthetic_sites())["alpha.test/2005"]
    assert [p.page_id for p in neighbour_sample(group, 2)] == [p.page_id for p in neighbour_sample(group[::-1], 2)]
    assert len(neighbour_sample(group, 10)) == 3
    target = group[0]
    assert all(p.page_id != target.page_id for p in neighbour_sample(group, 10, exclude=target))
    with pytest.raises(ValueError):
        neighbour_sample(group, 0)


# ---------------------------------------------------------------------------------------- metrics


def test_bootstrap_is_deterministic_and_contains_the_mean():
    rng = np.random.default_rng(7)
    values = rng.uniform(0.5, 1.0, size=40)
    idx = resample_indices(len(values), 1000, seed=3)
    assert idx.shape == (1000, 40) and idx.min() >= 0 and idx.max() < 40
    assert np.array_equal(idx, resample_indices(40, 1000, seed=3))
    assert not np.array_equal(idx, resample_indices(40, 1000, seed=4))
    lo, hi = macro_interval(values, idx)
    assert lo < values.mean() < hi and hi - lo < 0.2
    assert (lo, hi) == macro_interval(values, resample_indices(40, 1000, seed=3))
    assert macro_interval([0.7] * 5, resample_indices(5)) == (0.7, 0.7)
    dlo, dhi = macro_diff_interval(values, values - 0.1, idx)
    assert dlo == pytest.approx(0.1) and dhi == pytest.approx(0.1)
    with pytest.raises(ValueError):
        resample_indices(0)


def test_snippet_metric_hand_computed():
    text = "Intro.\n  Hello \n world. Foo   bar and more."
    # "Hello world" matches after whitespace collapsing; "Foo bar" is a must-not-contain that is present.
    assert snippet_counts(text, ["Hello world", "missing part"], ["Foo bar", "absent"]) == SnippetCounts(1, 1, 1, 1)
    assert snippet_counts(None, ["a", "b"], ["c"]) == SnippetCounts(0, 2, 0, 1)
    assert snippet_counts("", ["a"], ["b"]) == SnippetCounts(0, 1, 0, 1)
    # Micro over pages: tp 1+2, fn 1+0, fp 1+0, tn 1+2 -> P 3/4, R 3/4, F1 6/8, accuracy 6/8.
    s = snippet_scores([(1, 1, 1, 1), (2, 0, 0, 2)])
    assert (s.precision, s.recall, s.f1, s.accuracy) == (0.75, 0.75, 0.75, 0.75)
    # P 2/3 (tp 2, fp 1), R 2/5 (fn 3): F1 = 2*2 / (2*2 + 1 + 3) = 0.5; accuracy (2+4)/10.
    s = snippet_scores([(2, 3, 1, 4)])
    assert (s.precision, s.recall, s.f1, s.accuracy) == (pytest.approx(2 / 3), 0.4, 0.5, 0.6)
    zero = snippet_scores([])
    assert (zero.precision, zero.recall, zero.f1, zero.accuracy) == (0.0, 0.0, 0.0, 0.0)
    counts = [(1, 1, 1, 1), (2, 0, 0, 2), (0, 2, 1, 1)]
    lo, hi = snippet_interval(counts, resample_indices(3, 500, seed=1))
    assert lo <= snippet_scores(counts).f1 <= hi


# ------------------------------------------------------------------------------------------ peers


def test_missing_peer_is_skipped_with_a_note():
    registry = {"ghost": PeerSpec("ghost", "no_such_module_for_newsclean_tests", "ghost", lambda h: ""),
                "echo": PeerSpec("echo", "lxml", "lxml", lambda h: h)}
    systems, notes = resolve_peers(["ghost", "echo"], registry)
    assert [s.id for s in systems] == ["echo"] and systems[0].kind == "peer"
    assert len(notes) == 1 and "ghost" in notes[0] and "[eval]" in notes[0]
    opts = EvalOptions(["synthetic-sites"], systems, notes, out=None, csv=None)
    result = run_eval(opts, loader=lambda n: LOADER[n](), progress=lambda _: None)
    assert "ghost skipped" in render_markdown(opts, result)


def test_ablations_change_one_thing_each():
    systems = {s.id: s for s in ablations(PLAIN)}
    assert set(systems) == {"no-static", "no-dynamic", "no-boilerpipe", "no-ancestor", "alg1", "depth1", "depth3",
                            "depth4", "depth5", "filter1", "filter2", "filter3", "n1", "n3", "n5", "n20"}
    assert systems["no-static"].config.static is None and systems["no-static"].neighbour_only
    assert systems["depth4"].config.ancestor.depth == 4 and systems["filter3"].config.link_filter == 3
    assert systems["alg1"].config.boilerpipe.algorithm == 1 and systems["alg1"].config.ancestor == PLAIN.ancestor
    assert systems["n5"].neighbours == 5 and systems["n5"].config == PLAIN
    # Another base: prefixed ids, labels naming it.
    other = {s.id: s for s in ablations(PLAIN.with_(name="papers"))}
    assert "papers:depth3" in other and other["papers:depth3"].label == "papers ancestor depth 3"
    # A learned base: Boilerpipe and ancestor filter are features only, so no rows for them.
    learned = {s.id for s in ablations(PLAIN.with_(name="ml", learned=LearnedParams(), boilerpipe=None, ancestor=None))}
    assert "ml:no-static" in learned and "ml:n3" in learned
    assert not any(k.split(":")[1].startswith(("depth", "alg", "no-boilerpipe", "no-ancestor")) for k in learned)


def test_each_kind_of_page_level_step_has_a_row_that_takes_out_exactly_that_kind():
    from newsclean.transforms.chain import DEFAULT_CONFIG

    rows = {s.id: s for s in ablations(DEFAULT_CONFIG)}
    kinds = list(dict.fromkeys(type(step) for step in DEFAULT_CONFIG.refine))
    assert len(kinds) == len(STEP_ROWS) == 14  # every step of the shipped chain has its row
    for kind in kinds:
        sid, _, neighbour_only = STEP_ROWS[kind]
        row = rows[f"no-{sid}"]
        assert row.config.refine == tuple(s for s in DEFAULT_CONFIG.refine if not isinstance(s, kind))
        assert row.config.learned == DEFAULT_CONFIG.learned and row.neighbour_only == neighbour_only
    assert rows["no-region-recall"].config.step(RegionRecallParams) is None  # both region steps go
    assert rows["no-site-check"].neighbour_only and rows["no-recurring"].neighbour_only  # evidence from neighbours


def test_config_selection_by_ids_and_groups():
    bases = default_ablation_bases()
    assert bases[0] == "default" and all(b in CONFIGS for b in bases)
    named = [s.id for s in resolve_configs("named")]
    assert named[:len(named_configs())] == [s.id for s in named_configs()] and "default" in CONFIGS
    assert named[len(named_configs()):] in ([], ["crossfit"])  # crossfit: when its model files are there
    chosen = resolve_configs("filters,default", bases=bases)
    assert chosen[0].id == "default" and all(s.group == "filters" for s in chosen[1:]) and len(chosen) > 1
    assert resolve_configs("none") == []


# ------------------------------------------------------------------------------------- end to end


def test_run_report_and_csv_on_synthetic_data(synthetic, tmp_path):
    systems = plain_systems("default", "no-static", "n1") + resolve_peers(["echo"])[0]
    opts = EvalOptions(["synthetic-sites", "synthetic-snippets"], systems, resamples=200, out=None, csv=None)
    result = run_eval(opts, loader=lambda n: LOADER[n](), progress=lambda _: None)
    sites, snippets = result.runs
    assert len(sites.results) == 12 * 4 and len(snippets.results) == 3 * 2  # neighbour-only ablations skipped
    agg = result.agg
    default = agg.get("synthetic-sites", "all", "default")
    assert default.pages == 12 and default.f1 > 0.9 and default.ci[0] <= default.f1 <= default.ci[1]
    echo = agg.get("synthetic-sites", "all", "echo")
    assert echo.recall == pytest.approx(1.0) and echo.precision < default.precision  # the whole page: nav and footer
    assert agg.get("synthetic-snippets", "all", "n1") is None
    snip = agg.get("synthetic-snippets", "all", "default")
    counts = [r.snippets for r in snippets.results if r.system == "default"]
    assert snip.accuracy is not None and snip.snippets == 12 and snip.recall == pytest.approx(1.0)
    assert (snip.precision, snip.f1, snip.accuracy) == (pytest.approx(snippet_scores(counts).precision),
                                                        pytest.approx(snippet_scores(counts).f1),
                                                        pytest.approx(snippet_scores(counts).accuracy))
    assert agg.get("synthetic-snippets", "all", "echo").precision == pytest.approx(0.5)  # finds every must-not too
    # Deterministic: a second run gives the same scores and intervals.
    again = run_eval(opts, loader=lambda n: LOADER[n](), progress=lambda _: None).agg
    assert all(again.scores[k].f1 == s.f1 and again.scores[k].ci == s.ci for k, s in agg.scores.items())
    md = render_markdown(opts, result)
    assert "## Summary: F1 per data set (all pages)" in md and "## synthetic-sites" in md and "| echo" in md
    assert "| default 1 neighbour page" in md and "the target page is part of the sample" in md
    path = tmp_path / "pages.csv"
    report.write_csv([r for run in result.runs for r in run.results], path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert len(rows) == 54 and list(rows[0]) == list(report.CSV_COLUMNS)


def test_crossfit_runs_its_tune_config_on_tune_pages_only(synthetic):
    # a probability never reaches 1.01: no block kept
    nothing = PLAIN.with_(learned=LearnedParams(threshold=1.01), boilerpipe=None, ancestor=None)
    system = System("crossfit", "cross-fitted", "config", PLAIN, tune_config=nothing)
    assert system.config_for("test") is PLAIN and system.config_for("tune") is nothing
    tune_task = build_tasks("synthetic-sites", synthetic_sites(), [system])[0]
    assert {p.split for p in tune_task.pages} == {"tune"}
    assert all(r.error == "no_content" for r in run_group(tune_task))
    site = next(s for s in (f"s{i}.test" for i in range(100)) if split_of("synthetic-sites", s) == "test")
    html, gold = _article(site, 1)
    page = EvalPage("synthetic-sites", site, f"{site}.html", html, gold, site=site)
    (result,) = run_group(GroupTask("synthetic-sites", site, (page,), (system,)))
    assert result.split == "test" and result.error == "" and result.f1 > 0.9


def test_crossfit_system_needs_all_three_model_files(tmp_path):
    assert crossfit_systems(CONFIGS["default"], tmp_path) == []
    for name in ("block_classifier.txt.gz", "block_classifier_context.txt.gz", "boilerplate_lexicon.tsv.gz"):
        assert crossfit_systems(CONFIGS["default"], tmp_path) == []
        (tmp_path / name).write_bytes(b"")
    (system,) = crossfit_systems(CONFIGS["default"], tmp_path)
    assert system.config == CONFIGS["default"] and system.tune_config.learned.model_path.startswith(str(tmp_path))
    assert crossfit_systems(PLAIN, tmp_path) == []  # no learned classifier, nothing to cross-fit


def test_lodo_row_scores_each_data_set_with_its_own_models(synthetic, tmp_path):
    import shutil

    from newsclean.pipeline.errors import UsageError
    from newsclean.transforms.classifier.model import DEFAULT_CONTEXT_MODEL, DEFAULT_LEXICON, DEFAULT_MODEL
    from newsclean_eval.command import check_lodo_folder, lodo_system, systems_for_dataset

    with pytest.raises(UsageError, match="synthetic-sites.*--holdout-set synthetic-sites"):
        check_lodo_folder(tmp_path, ["synthetic-sites"])
    (tmp_path / "synthetic-sites").mkdir()
    for f in (DEFAULT_MODEL, DEFAULT_CONTEXT_MODEL, DEFAULT_LEXICON):  # the shipped files: LODO must equal default
        shutil.copy(f, tmp_path / "synthetic-sites" / f.name)
    check_lodo_folder(tmp_path, ["synthetic-sites"])
    lodo = lodo_system(tmp_path, "synthetic-sites")
    assert lodo.id == report.LODO_SYSTEM and lodo.config.learned.model_path == str(tmp_path / "synthetic-sites" / DEFAULT_MODEL.name)
    opts = EvalOptions(["synthetic-sites"], [*named_configs({"default": CONFIGS["default"]}), lodo_system(tmp_path, "other"),
                                             *resolve_peers(["echo"])[0]],
                       resamples=50, out=None, csv=None, lodo=tmp_path)
    bound = systems_for_dataset(opts, "synthetic-sites")
    assert bound[1].config.learned.lexicon_path == str(tmp_path / "synthetic-sites" / DEFAULT_LEXICON.name)
    result = run_eval(opts, loader=lambda n: LOADER[n](), progress=lambda _: None)
    lodo_score = result.agg.get("synthetic-sites", "all", report.LODO_SYSTEM)
    assert lodo_score.pages == 12 and lodo_score.f1 == result.agg.get("synthetic-sites", "all", "default").f1
    table = report.lodo_table(result.agg, ["synthetic-sites"], "all", reference="echo")
    row = table.splitlines()[2].split(" | ")
    assert row[0] == "| synthetic-sites" and row[1] == "12" and row[5] == "yes"  # above the whole-page echo
    markdown = render_markdown(opts, result)
    assert "## Leave-one-data-set-out" in markdown
    tune = markdown.split("### Tune pages only")[1].split("\n## ")[0]  # the same rows on the tune split
    tune_score = result.agg.get("synthetic-sites", "tune", report.LODO_SYSTEM)
    assert tune_score.pages > 0 and f"| synthetic-sites | {tune_score.pages} | {tune_score.f1:.3f}" in tune
    eras = markdown.split("### Per era")[1]  # the synthetic pages carry no date: all undated
    assert f"| synthetic-sites | undated | 12 | {lodo_score.f1:.3f} |" in eras


def test_exclude_target_learns_from_other_pages(synthetic):
    pages = synthetic_sites()
    (task,) = [t for t in build_tasks("synthetic-sites", pages, plain_systems("default"), exclude_target=True)
               if t.group == "alpha.test/2005"]
    results = run_group(task)
    assert len(results) == 3 and all(r.f1 > 0.9 for r in results)


def test_cli_usage_errors_and_absent_data(monkeypatch, tmp_path, capsys):
    assert main(["eval", "--datasets", "nope"]) == 2
    assert main(["eval", "--configs", "bogus"]) == 2
    assert main(["eval", "--peers", "nobody"]) == 2
    assert main(["eval", "extra-arg"]) == 2
    monkeypatch.setenv("NEWSCLEAN_SHARED", str(tmp_path))
    monkeypatch.setenv("NEWSCLEAN_DATA", str(tmp_path / "none"))
    assert main(["eval", "--datasets", "msv-big9", "--quick", "--jobs", "1", "--out", "-", "--csv", "-"]) == 1
    assert "no shared data" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ real sample

SHARED = shared_data_dir()
#: Default chain's macro F1 on 4 msv-big9 groups (40 pages); measured 0.979 when set, kept a bit under
#: while the chain is being tuned: raise it as the chain settles.
REAL_F1_FLOOR = 0.94


@pytest.mark.shared_data
@pytest.mark.skipif(SHARED is None or not (SHARED / "msv-big9.tar.gz").exists(),
                    reason="needs ../shared/data/msv-big9.tar.gz beside the repository (or NEWSCLEAN_SHARED); absent here")
def test_default_chain_on_real_msv_big9_groups():
    opts = EvalOptions(["msv-big9"], resolve_configs("default"), max_groups=4, resamples=200, jobs=2, out=None, csv=None)
    result = run_eval(opts, progress=lambda _: None)
    score = result.agg.get("msv-big9", "all", "default")
    assert score.pages == 40 and score.errors == 0
    assert score.f1 >= REAL_F1_FLOOR, render_markdown(opts, result)


def test_twin_configs_run_once():
    configs = {"default": PLAIN, "paper": PLAIN.with_(name="paper"), "other": PLAIN.with_(link_filter=1, name="other")}
    rows = named_configs(configs)
    assert [(s.id, s.label) for s in rows] == [("default", "newsclean default (= paper)"), ("other", "newsclean other")]


def test_a_split_runs_only_its_own_pages():
    """``--split tune`` must not score (or write to the CSV) a test page: the test half stays held out."""
    from newsclean_eval.datasets import split_of

    names = [f"s{i}.test" for i in range(20)]
    sites = [next(n for n in names if split_of("synthetic-sites", n) == want) for want in ("tune", "test")]
    pages = [EvalPage("synthetic-sites", f"{site}/2009", f"{site}-{n}.html", *_article(site, n), site=site)
             for site in sites for n in range(3)]
    for split, site in zip(("tune", "test"), sites):
        opts = EvalOptions(["synthetic-sites"], plain_systems("default"), split=split, resamples=50, out=None, csv=None)
        results = run_eval(opts, loader=lambda _: pages, progress=lambda _: None).runs[0].results
        assert sorted(r.page_id for r in results) == [f"{site}-{n}.html" for n in range(3)]

"""BoilerNet's trainer (scripts/train_boilernet.py) and ``newsclean eval``'s BoilerNet rows: the PyTorch model agrees
with the numpy inference, leave-one-data-set-out training, the sequence cache, the LODO row's model."""

import importlib.util
import sys
from dataclasses import replace

import numpy as np
import pytest
from boilernet_models import random_model
from repo import ROOT

from newsclean.transforms.boilernet import (
    DEFAULT_BOILERNET_MODEL,
    BoilerNetHyper,
    Vocabulary,
    block_tokens,
    block_vectors,
    forward,
    leaf_path,
    load_model,
)
from newsclean.transforms.chain import BOILERNET_CONFIG, CONFIGS, prepare_blocks

REPO = ROOT
PAGE = ("<html><head><title>Rain in the city</title></head><body><nav><a href='/'>Home</a> <a href='/w'>World</a>"
        "</nav><article><h1>Rain in the city</h1>" + "".join(
            f"<p>Paragraph {i} of the article says that the rain fell on the city for a <b>long</b> time and people "
            "stayed at home.</p>" for i in range(6)) + "</article><footer>Copyright 2020 Example Corp</footer></body></html>")


def _trainer():
    spec = importlib.util.spec_from_file_location("train_boilernet", REPO / "scripts" / "train_boilernet.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _test_pages(limit=4):
    """A few pages of the shared data's test half (none when the shared data are absent)."""
    try:
        from newsclean.transforms.parse import decode_html
        from newsclean_eval.datasets import load

        pages = [p for name in ("cleaneval",) for p in load(name) if p.split == "test"][:limit]
        return [decode_html(p.html)[0] for p in pages]
    except (FileNotFoundError, ImportError, OSError):
        return []


@pytest.mark.skipif(not DEFAULT_BOILERNET_MODEL.is_file(), reason="shipped BoilerNet model not trained yet")
def test_numpy_inference_agrees_with_torch_on_test_pages():
    pytest.importorskip("torch")
    trainer = _trainer()
    model = load_model(DEFAULT_BOILERNET_MODEL)
    net = trainer.from_numpy(model)
    pages = [PAGE] + _test_pages()
    for html in pages:
        blocks = prepare_blocks(html, None, BOILERNET_CONFIG).blocks
        seq = trainer.PageSeq("k", "test", [leaf_path(b) for b in blocks], [block_tokens(b.text) for b in blocks],
                              [0] * len(blocks), [b.num_words for b in blocks])
        ours = forward(model, block_vectors(blocks, model.vocab))
        theirs = trainer.torch_probabilities(net, trainer.encode(seq, model.vocab))
        assert len(ours) == len(blocks) and np.max(np.abs(ours - theirs)) < 1e-5


def test_export_from_torch_round_trips():
    pytest.importorskip("torch")
    trainer = _trainer()
    model = random_model(seed=3)
    back = trainer.to_numpy(trainer.from_numpy(model), model.vocab, model.hyper)
    assert back.dense_w == pytest.approx(model.dense_w) and back.out_b == pytest.approx(model.out_b)
    assert back.layers[1][1].b == pytest.approx(model.layers[1][1].b)


def _seq(trainer, key):
    return trainer.PageSeq(key, "tune", [["html"]], [["a"]], [1], [1])


def test_lodo_holds_out_each_text_gold_set_and_trains_on_the_others():
    trainer = _trainer()
    assert trainer.lodo_holdouts("all") == trainer.TEXT_GOLD_SETS
    assert trainer.lodo_holdouts("dragnet") == ("dragnet",)
    with pytest.raises(ValueError, match="trafilatura-eval"):  # snippet gold: never trained on, no LODO model
        trainer.lodo_holdouts("trafilatura-eval")
    seqs = [_seq(trainer, k) for k in ("cleaneval:12", "dragnet:a.com", "msv-big9:x.de/2005", "dragnet:b.com:8080")]
    assert trainer.dataset_of(seqs[3]) == "dragnet"  # a colon inside the site name
    assert [s.key for s in trainer.without_set(seqs, "dragnet")] == ["cleaneval:12", "msv-big9:x.de/2005"]
    assert trainer.without_set(seqs, "cleanportaleval") == seqs


def test_sequence_cache_is_read_back_and_filtered_to_the_sets_asked(tmp_path):
    import pickle

    trainer = _trainer()
    seqs = [_seq(trainer, k) for k in ("cleaneval:1", "dragnet:a.com", "cleaneval:2")]
    cache = tmp_path / "seqs.pkl"
    cache.write_bytes(pickle.dumps(seqs))
    back = trainer.collect_cached(1, ("cleaneval",), cache)  # from the cache: no data set is loaded
    assert [s.key for s in back] == ["cleaneval:1", "cleaneval:2"]


def test_best_of_k_epochs_is_what_a_k_epoch_run_returns():
    pytest.importorskip("torch")
    trainer = _trainer()
    rng = np.random.default_rng(0)
    seqs = []
    for n in range(12):  # tiny pages: content blocks say "story", boilerplate "menu"
        labels = [int(x) for x in rng.integers(0, 2, size=6)]
        seqs.append(trainer.PageSeq(f"toy:site{n}", "tune", [["html", "body", "p" if y else "li"] for y in labels],
                                    [["story", "text"] if y else ["menu"] for y in labels], labels, [2] * 6))
    hyper = BoilerNetHyper(num_tags=5, num_words=5, dense_size=4, hidden_size=3, epochs=3, batch_size=4)
    early = {2: None}
    full, _ = trainer.train(seqs, hyper, 7, 0, log=lambda _: None, best_of=early)
    two, two_f1 = trainer.train(seqs, replace(hyper, epochs=2), 7, 0, log=lambda _: None)
    assert early[2][1] == two_f1
    assert np.array_equal(early[2][0].dense_w, two.dense_w) and np.array_equal(early[2][0].layers[1][0].w_hh, two.layers[1][0].w_hh)


def test_eval_lodo_boilernet_row_uses_the_model_that_never_saw_the_set(tmp_path):
    import shutil

    from newsclean.pipeline.errors import UsageError
    from newsclean_eval import report
    from newsclean_eval.command import (
        EvalOptions,
        check_lodo_boilernet_folder,
        lodo_boilernet_system,
        render_markdown,
        run_eval,
        systems_for_dataset,
    )
    from newsclean_eval.datasets import EvalPage
    from newsclean_eval.systems import named_configs

    with pytest.raises(UsageError, match="--holdout-set toy-set"):
        check_lodo_boilernet_folder(tmp_path, ["toy-set"])
    check_lodo_boilernet_folder(tmp_path, ["trafilatura-eval"])  # never trained on: the shipped model
    assert lodo_boilernet_system(tmp_path, "trafilatura-eval").config.boilernet.model_path == str(DEFAULT_BOILERNET_MODEL)
    if not DEFAULT_BOILERNET_MODEL.is_file():
        pytest.skip("shipped BoilerNet model not trained yet")
    (tmp_path / "toy-set").mkdir()
    shutil.copy(DEFAULT_BOILERNET_MODEL, tmp_path / "toy-set" / "boilernet.npz")  # the shipped model: rows must agree
    check_lodo_boilernet_folder(tmp_path, ["toy-set"])
    systems = [*named_configs({"boilernet": BOILERNET_CONFIG}), lodo_boilernet_system(tmp_path, "other-set")]
    opts = EvalOptions(["toy-set"], systems, resamples=20, out=None, csv=None, lodo_boilernet=tmp_path)
    bound = systems_for_dataset(opts, "toy-set")
    assert bound[1].config.boilernet.model_path == str(tmp_path / "toy-set" / "boilernet.npz")
    gold = " ".join(f"Paragraph {i} of the article says that the rain fell on the city for a long time and people "
                    "stayed at home." for i in range(6))
    pages = [EvalPage("toy-set", f"site{i}", f"p{i}", PAGE.encode(), gold) for i in range(2)]
    result = run_eval(opts, loader=lambda _: pages, progress=lambda _: None)
    lodo = result.agg.get("toy-set", "all", report.LODO_BOILERNET_SYSTEM)
    assert lodo.pages == 2 and lodo.f1 == result.agg.get("toy-set", "all", "boilernet").f1
    md = render_markdown(opts, result)
    assert "## BoilerNet, leave-one-data-set-out" in md and "shipped boilernet F1" in md


def test_eval_boilernet_model_option_swaps_only_the_boilernet_rows_model(tmp_path):
    from newsclean.pipeline.errors import UsageError
    from newsclean_eval.command import with_boilernet_model
    from newsclean_eval.systems import named_configs

    systems = named_configs({"default": CONFIGS["default"], "boilernet": BOILERNET_CONFIG})
    model = tmp_path / "cleaneval-only.npz"
    with pytest.raises(UsageError, match="not found"):
        with_boilernet_model(systems, model)
    model.write_bytes(b"")
    with pytest.raises(UsageError, match="--configs boilernet"):
        with_boilernet_model(systems[:1], model)
    default, boilernet = with_boilernet_model(systems, model)
    assert default == systems[0]
    assert boilernet.config.boilernet.model_path == str(model) and str(model) in boilernet.label


def test_weight_difference_is_zero_for_the_same_weights_and_finds_one_changed_weight():
    trainer = _trainer()
    a = random_model(seed=5)
    assert trainer.weight_difference(a, replace(a, hyper=replace(a.hyper, epochs=99))) == 0.0  # hyper not compared
    w_hh = a.layers[1][1].w_hh.copy()
    w_hh[0, 1] += 0.25
    changed = replace(a, layers=(a.layers[0], (a.layers[1][0], replace(a.layers[1][1], w_hh=w_hh))))
    assert trainer.weight_difference(a, changed) == pytest.approx(0.25)
    assert trainer.weight_difference(a, replace(a, vocab=Vocabulary(("html",), ("a",)))) == float("inf")
    assert trainer.weight_difference(a, random_model(seed=5, hidden=3)) == float("inf")

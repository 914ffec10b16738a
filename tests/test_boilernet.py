"""BoilerNet (transforms/boilernet.py, Leonhardt et al. 2020): block sequence, input vectors, numpy LSTM,
model file, chain wiring, and agreement with the PyTorch model the training script builds."""

import importlib.util
import math
import sys
from dataclasses import replace
from pathlib import Path

import lxml.html
import numpy as np
import pytest

from newsclean.transforms.boilernet import (
    DEFAULT_BOILERNET_MODEL,
    BoilerNetHyper,
    BoilerNetModel,
    LSTMWeights,
    Vocabulary,
    block_probabilities,
    block_tokens,
    block_vectors,
    build_vocabulary,
    forward,
    leaf_path,
    load_model,
    lstm,
    save_model,
    text_blocks,
)
from newsclean.transforms.chain import BOILERNET_CONFIG, CONFIGS, extract_article, prepare_blocks
from newsclean.transforms.errors import ExtractionError

REPO = Path(__file__).resolve().parents[1]


def _root(body: str):
    return lxml.html.document_fromstring(f"<html><head><title>t</title></head><body>{body}</body></html>")


def test_every_tag_splits_blocks_as_in_section_3_1():
    blocks = text_blocks(_root("<p>A<strong>B</strong>C</p>"))
    assert [b.text for b in blocks] == ["A", "B", "C"]
    assert [leaf_path(b) for b in blocks] == [["html", "body", "p"], ["html", "body", "p", "strong"],
                                              ["html", "body", "p"]]


def test_links_split_blocks_too_and_whitespace_leaves_are_no_blocks():
    blocks = text_blocks(_root("<div>\n  <a href='/x'>Home</a> <span>News</span>\n</div><ul><li>one</li></ul>"))
    assert [b.text for b in blocks] == ["Home", "News", "one"]
    assert leaf_path(blocks[2]) == ["html", "body", "ul", "li"]


def test_text_under_ignored_tags_is_no_block():
    blocks = text_blocks(_root("<p>before<button>Buy now</button>after</p><script>var x = 1;</script>"))
    assert [b.text for b in blocks] == ["before", "after"]


def test_block_tokens_lowercase_words_and_punctuation():
    assert block_tokens("Hello, World!") == ["hello", ",", "world", "!"]
    assert block_tokens("  ") == []


def test_vocabulary_takes_most_common_with_ties_by_name():
    vocab = build_vocabulary([["html", "body", "p"], ["html", "body", "div"]], [["a", "b", "a"], ["c"]],
                             num_tags=3, num_words=2)
    assert vocab.tags == ("body", "html", "div")  # 2, 2, then div before p (1 each)
    assert vocab.words == ("a", "b")  # a: 2, then b before c
    assert vocab.width == 3 + 2 + 2


def test_vectors_count_path_tags_and_words_with_oov_slots():
    vocab = Vocabulary(tags=("html", "body", "p"), words=("a", "b"))
    # layout: [OOV tag, html, body, p, OOV word, a, b]
    blocks = text_blocks(_root("<p>A, a z<strong>B</strong></p>"))
    x = block_vectors(blocks, vocab)
    assert x.shape == (2, 7) and x.dtype == np.float32
    # "A, a z" under html/body/p: tokens a , a z -> a twice, "," and "z" out of vocabulary
    assert x[0].tolist() == [0, 1, 1, 1, 2, 2, 0]
    # "B" under html/body/p/strong: strong is out of vocabulary
    assert x[1].tolist() == [1, 1, 1, 1, 0, 0, 1]


def test_nested_repeated_tags_are_counted_each_time():
    vocab = Vocabulary(tags=("div",), words=())
    blocks = text_blocks(_root("<div><div><div>deep</div></div></div>"))
    # html and body are out of vocabulary; three divs
    assert block_vectors(blocks, vocab)[0].tolist() == [2, 3, 1]


def _sig(v):
    return 1 / (1 + math.exp(-v))


def test_numpy_lstm_single_step_by_hand():
    # one unit, one input; gates in PyTorch's order i, f, g, o
    w = LSTMWeights(np.array([[1.0], [2.0], [3.0], [4.0]]), np.zeros((4, 1)), np.array([0.1, 0.0, 0.0, -0.2]))
    h = lstm(np.array([[0.5]]), w)
    i, g, o = _sig(0.5 + 0.1), math.tanh(1.5), _sig(2.0 - 0.2)
    c = i * g  # c_0 = 0, so the forget gate does not matter
    assert h.shape == (1, 1)
    assert h[0, 0] == pytest.approx(o * math.tanh(c), abs=1e-12)


def test_numpy_lstm_recurrence_and_reverse_by_hand():
    w = LSTMWeights(np.array([[1.0], [1.0], [1.0], [1.0]]), np.array([[0.5], [0.5], [0.5], [0.5]]), np.zeros(4))

    def step(x, h, c):
        z = x + 0.5 * h
        c = _sig(z) * c + _sig(z) * math.tanh(z)
        return _sig(z) * math.tanh(c), c

    h1, c1 = step(1.0, 0.0, 0.0)
    h2, _ = step(-1.0, h1, c1)
    out = lstm(np.array([[1.0], [-1.0]]), w)
    assert out[:, 0] == pytest.approx([h1, h2], abs=1e-12)
    r2, rc2 = step(-1.0, 0.0, 0.0)  # backward: last input first, outputs stay at their positions
    r1, _ = step(1.0, r2, rc2)
    assert lstm(np.array([[1.0], [-1.0]]), w, reverse=True)[:, 0] == pytest.approx([r1, r2], abs=1e-12)


def _random_model(seed=0, width=7, dense=3, hidden=2, layers=2) -> BoilerNetModel:
    rng = np.random.default_rng(seed)

    def lw(inp):
        return LSTMWeights(*(rng.normal(size=s).astype(np.float32) for s in ((4 * hidden, inp), (4 * hidden, hidden), (4 * hidden,))))

    stack = tuple((lw(dense if n == 0 else 2 * hidden), lw(dense if n == 0 else 2 * hidden)) for n in range(layers))
    return BoilerNetModel(Vocabulary(("html", "body", "p"), ("a", "b")), rng.normal(size=(width, dense)).astype(np.float32),
                          rng.normal(size=dense).astype(np.float32), stack, rng.normal(size=2 * hidden).astype(np.float32),
                          0.3, BoilerNetHyper(num_tags=3, num_words=2, dense_size=dense, hidden_size=hidden, num_layers=layers))


def test_forward_is_dense_relu_bilstm_sigmoid():
    model = _random_model(layers=1)
    x = np.array([[0, 1, 1, 1, 0, 2, 0], [1, 1, 1, 1, 1, 0, 1]], dtype=np.float32)
    h = np.maximum(x @ model.dense_w + model.dense_b, 0)
    fwd, bwd = model.layers[0]
    both = np.concatenate([lstm(h, fwd), lstm(h, bwd, reverse=True)], axis=1)
    expected = 1 / (1 + np.exp(-(both @ model.out_w + model.out_b)))
    assert forward(model, x) == pytest.approx(expected, abs=1e-6)
    # the backward direction makes the first block depend on the second
    x2 = x.copy()
    x2[1, 5] = 5
    assert forward(model, x2)[0] != pytest.approx(forward(model, x)[0], abs=1e-9)
    with pytest.raises(ValueError):
        forward(model, np.zeros((2, 6), dtype=np.float32))


def test_model_file_round_trip(tmp_path):
    model = _random_model()
    save_model(tmp_path / "m.npz", model)
    back = load_model(tmp_path / "m.npz")
    assert back.vocab == model.vocab and back.hyper == model.hyper
    x = np.random.default_rng(1).integers(0, 3, size=(5, 7)).astype(np.float32)
    assert forward(back, x) == pytest.approx(forward(model, x), abs=1e-7)


PAGE = ("<html><head><title>Rain in the city</title></head><body><nav><a href='/'>Home</a> <a href='/w'>World</a>"
        "</nav><article><h1>Rain in the city</h1>" + "".join(
            f"<p>Paragraph {i} of the article says that the rain fell on the city for a <b>long</b> time and people "
            "stayed at home.</p>" for i in range(6)) + "</article><footer>Copyright 2020 Example Corp</footer></body></html>")


@pytest.mark.skipif(not DEFAULT_BOILERNET_MODEL.is_file(), reason="shipped BoilerNet model not trained yet")
def test_chain_keeps_exactly_the_blocks_the_model_scores_content():
    page = prepare_blocks(PAGE, None, BOILERNET_CONFIG)
    probs = block_probabilities(page.blocks, load_model(DEFAULT_BOILERNET_MODEL))
    kept = [b.text for b, p in zip(page.blocks, probs) if p >= 0.5]
    assert [b.text for b in page.blocks][:3] == ["Home", "World", "Rain in the city"]
    try:
        out = extract_article(PAGE, None, BOILERNET_CONFIG)
    except ExtractionError:
        assert sum(len(t.split()) for t in kept) < BOILERNET_CONFIG.min_words
        return
    assert out.counts.blocks_kept == len(kept) and out.counts.blocks_total == len(page.blocks)
    assert out.text.split() == " ".join(kept).split()


# -------------------------------------------------------------------- agreement with the PyTorch model


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
    model = _random_model(seed=3)
    back = trainer.to_numpy(trainer.from_numpy(model), model.vocab, model.hyper)
    assert back.dense_w == pytest.approx(model.dense_w) and back.out_b == pytest.approx(model.out_b)
    assert back.layers[1][1].b == pytest.approx(model.layers[1][1].b)


@pytest.mark.skipif(not DEFAULT_BOILERNET_MODEL.is_file(), reason="shipped BoilerNet model not trained yet")
def test_explain_labels_dropped_blocks_boilernet():
    from newsclean.transforms.explain import explain_page

    report = explain_page(PAGE, None, BOILERNET_CONFIG)
    assert report.words["classifier"] == report.words["boilerplate"] == report.words["ancestor"] == 0
    assert report.words["boilernet"] + report.words["kept"] > 50
    assert 'class="nc-boilernet"' in report.html or report.words["boilernet"] == 0


# -------------------------------------------------------------------- leave-one-data-set-out training


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


# -------------------------------------------------------------------- the LODO row of newsclean eval


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
    a = _random_model(seed=5)
    assert trainer.weight_difference(a, replace(a, hyper=replace(a.hyper, epochs=99))) == 0.0  # hyper not compared
    w_hh = a.layers[1][1].w_hh.copy()
    w_hh[0, 1] += 0.25
    changed = replace(a, layers=(a.layers[0], (a.layers[1][0], replace(a.layers[1][1], w_hh=w_hh))))
    assert trainer.weight_difference(a, changed) == pytest.approx(0.25)
    assert trainer.weight_difference(a, replace(a, vocab=Vocabulary(("html",), ("a",)))) == float("inf")
    assert trainer.weight_difference(a, _random_model(seed=5, hidden=3)) == float("inf")

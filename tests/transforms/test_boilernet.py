"""BoilerNet (transforms/boilernet.py, Leonhardt et al. 2020): block sequence, input vectors, numpy LSTM,
model file, chain wiring, and agreement with the PyTorch model the training script builds."""

import math

import lxml.html
import numpy as np
import pytest
from boilernet_models import random_model
from repo import ROOT

from newsclean.transforms.boilernet import (
    DEFAULT_BOILERNET_MODEL,
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
from newsclean.transforms.chain import BOILERNET_CONFIG, extract_article, prepare_blocks
from newsclean.transforms.errors import ExtractionError

REPO = ROOT


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


def test_forward_is_dense_relu_bilstm_sigmoid():
    model = random_model(layers=1)
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
    model = random_model()
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


@pytest.mark.skipif(not DEFAULT_BOILERNET_MODEL.is_file(), reason="shipped BoilerNet model not trained yet")
def test_explain_labels_dropped_blocks_boilernet():
    from newsclean.transforms.explain import explain_page

    report = explain_page(PAGE, None, BOILERNET_CONFIG)
    assert report.words["classifier"] == report.words["boilerplate"] == report.words["ancestor"] == 0
    assert report.words["boilernet"] + report.words["kept"] > 50
    assert 'class="nc-boilernet"' in report.html or report.words["boilernet"] == 0


# -------------------------------------------------------------------- leave-one-data-set-out training


# -------------------------------------------------------------------- the LODO row of newsclean eval

"""BoilerNet (Leonhardt, Anand and Khosla 2020, "Boilerplate Removal using a Neural Sequence
Labeling Model"): every text block of a page labelled content or boilerplate by a BiLSTM over the
page's block sequence. Inference in numpy (no PyTorch); training is ``scripts/train_boilernet.py``.

§3.1, the input:

- **text blocks** are the DOM's text leaves in document order; *every* tag splits them, so
  ``<p>A<strong>B</strong>C</p>`` gives the three blocks ``A``, ``B``, ``C``
  (:data:`BOILERNET_BLOCKS`, :func:`text_blocks`). Text inside the paper's ignored tags
  (:data:`IGNORED_TAGS`, from the authors' ``TAGS_TO_IGNORE``; with ``head``, ``title`` and
  ``template`` skipped by :mod:`newsclean.transforms.blocks`) is no block.
- a block's **vector** (:func:`block_vectors`): first the counts of each of the ``num_tags`` most
  common HTML tags on the path from the root (``html``) to the leaf (the leaf's parent included), with
  one out-of-vocabulary slot counting every other tag; then the counts of each of the ``num_words``
  most common words of the block, with one out-of-vocabulary slot. Width ``num_tags + 1 + num_words + 1``.
  Words are the lowercased ``\\w+`` runs and single punctuation characters of the NFC text
  (:func:`block_tokens`; the authors use NLTK's ``word_tokenize``, which also splits punctuation off).

§3.2, the model (:class:`BoilerNetModel`, :func:`forward`): a dense layer (ReLU, as the authors'
code) to ``dense_size`` units, ``num_layers`` bidirectional LSTM layers of ``hidden_size`` units
per direction (forward and backward outputs concatenated), dropout after the last LSTM layer
(training only), and a dense layer with a sigmoid: one content probability per block. Trained with
class-weighted binary cross-entropy.

The extracted paper text lost its numbers (§3.1's vector size, §4.2's sizes). :class:`BoilerNetHyper`'s
defaults are the values of the authors' published code and README ("to reproduce the paper results"):
1000 words, 50 tags, dense 256, 2 layers of 256 units, dropout 0.5, 50 epochs, batch 16, class
weights "balanced" (scikit-learn's ``n / (2 n_c)``), best checkpoint on the validation F1. The
shipped model (``transforms/models/boilernet.npz``) records the values it was trained with; see
``evaluation/boilernet.md`` for where they differ from these defaults (CPU time).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from lxml import etree

from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.types import BlockParams, TextBlock

MODELS_DIR = Path(__file__).with_name("models")
DEFAULT_BOILERNET_MODEL = MODELS_DIR / "boilernet.npz"

#: §3.1: every tag separates text blocks (the chain's ``a``-joins-blocks rule is Boilerpipe's, not BoilerNet's).
BOILERNET_BLOCKS = BlockParams(non_separator_tags=())

#: The authors' ``TAGS_TO_IGNORE`` (``checkbox`` is no HTML tag; ``head`` is skipped by the block walk):
#: text under these is no block. The chain removes them before building blocks (its non-informative stage).
IGNORED_TAGS = ("iframe", "script", "meta", "link", "style", "input", "button", "noscript")

_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class BoilerNetHyper:
    """BoilerNet's hyper-parameters; defaults: the authors' published values (module docstring).

    num_tags / num_words: vocabulary sizes, without the two out-of-vocabulary slots.
    dense_size: units of the projection ("embedding") layer. hidden_size: LSTM units per direction.
    num_layers: stacked bidirectional LSTM layers. dropout: probability, in [0, 1), after the last LSTM layer.
    class_weights: ``"balanced"`` (``n / (2 n_c)`` over the training blocks) or ``(w_boilerplate, w_content)``.
    epochs, batch_size: training loop (pages per batch).
    """

    num_tags: int = 50
    num_words: int = 1000
    dense_size: int = 256
    hidden_size: int = 256
    num_layers: int = 2
    dropout: float = 0.5
    class_weights: str | tuple[float, float] = "balanced"
    epochs: int = 50
    batch_size: int = 16


@dataclass(frozen=True)
class BoilerNetParams:
    """Inference parameters of the ``boilernet`` chain configuration.

    model_path: the ``.npz`` written by ``scripts/train_boilernet.py`` (None: the shipped one).
    threshold: a block is content when its probability is at least this, in [0, 1] (paper: rounding, 0.5).
    """

    model_path: str | None = None
    threshold: float = 0.5

    def model_files(self) -> tuple[Path, ...]:
        """The model file inference reads (the shipped one when ``model_path`` is None)."""
        return (Path(self.model_path or DEFAULT_BOILERNET_MODEL),)


@dataclass(frozen=True)
class Vocabulary:
    """The most common tags and words (slot ``i + 1`` of their part of the vector; slot 0 is OOV)."""

    tags: tuple[str, ...]
    words: tuple[str, ...]
    tag_index: dict[str, int] = field(init=False, repr=False, compare=False)
    word_index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "tag_index", {t: i + 1 for i, t in enumerate(self.tags)})
        object.__setattr__(self, "word_index", {w: i + 1 for i, w in enumerate(self.words)})

    @property
    def width(self) -> int:
        """Input vector width: tags + words + the two out-of-vocabulary slots."""
        return len(self.tags) + len(self.words) + 2


def text_blocks(root: etree._Element) -> list[TextBlock]:
    """§3.1's text blocks of the ``<body>`` of ``root`` (DOM text leaves, document order), leaves
    under :data:`IGNORED_TAGS` left out. Whitespace-only leaves are no blocks (as the authors' code)."""
    return [b for b in extract_blocks(root, BOILERNET_BLOCKS) if not in_ignored(b)]


def in_ignored(block: TextBlock) -> bool:
    """True when the block's leaf lies under one of :data:`IGNORED_TAGS`."""
    return any(tag in IGNORED_TAGS for tag in leaf_path(block))


def leaf_path(block: TextBlock) -> list[str]:
    """Tags from the root element down to the leaf's parent element (the block's container), in that order.

    Only meaningful for blocks built with :data:`BOILERNET_BLOCKS`, where a block is one text leaf
    and its container is that leaf's parent. Comments and other non-element nodes are not tags.
    """
    path = []
    node = block.container
    while node is not None:
        if isinstance(node.tag, str):
            path.append(node.tag)
        node = node.getparent()
    return path[::-1]


def block_tokens(text: str) -> list[str]:
    """Words of a block for the vector: lowercased ``\\w+`` runs and single non-space punctuation
    characters of the NFC text (``"Hello, World!"`` -> ``["hello", ",", "world", "!"]``)."""
    return _TOKEN.findall(unicodedata.normalize("NFC", text).lower())


def build_vocabulary(paths: Iterable[Sequence[str]], token_lists: Iterable[Sequence[str]],
                     num_tags: int = 50, num_words: int = 1000) -> Vocabulary:
    """The ``num_tags`` tags and ``num_words`` words with the highest counts over the given leaves
    (every occurrence counts, as in the authors' preprocessing); ties broken by the string, so the
    result does not depend on input order."""
    tag_counts = Counter(t for p in paths for t in p)
    word_counts = Counter(w for toks in token_lists for w in toks)

    def top(counts: Counter, k: int) -> tuple[str, ...]:
        return tuple(s for s, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k])

    return Vocabulary(top(tag_counts, num_tags), top(word_counts, num_words))


def leaf_vector(path: Sequence[str], tokens: Sequence[str], vocab: Vocabulary) -> np.ndarray:
    """One block's §3.1 vector, float32 of width ``vocab.width``: ``[OOV tag, tag counts..., OOV word,
    word counts...]``, counts of the tags on ``path`` and of the ``tokens``."""
    vec = np.zeros(vocab.width, dtype=np.float32)
    offset = len(vocab.tags) + 1
    for tag in path:
        vec[vocab.tag_index.get(tag, 0)] += 1
    for word in tokens:
        vec[offset + vocab.word_index.get(word, 0)] += 1
    return vec


def block_vectors(blocks: Sequence[TextBlock], vocab: Vocabulary) -> np.ndarray:
    """The page's input sequence: shape ``(len(blocks), vocab.width)``, float32 (see :func:`leaf_vector`)."""
    if not blocks:
        return np.zeros((0, vocab.width), dtype=np.float32)
    return np.stack([leaf_vector(leaf_path(b), block_tokens(b.text), vocab) for b in blocks])


# ------------------------------------------------------------------------------------------- model


@dataclass(frozen=True)
class LSTMWeights:
    """One direction of one LSTM layer, PyTorch's layout: gates stacked ``[input, forget, cell, output]``.

    w_ih: ``(4H, I)``; w_hh: ``(4H, H)``; b: ``(4H,)`` (PyTorch's ``b_ih + b_hh``).
    """

    w_ih: np.ndarray
    w_hh: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class BoilerNetModel:
    """Trained weights and the vocabulary they read.

    dense_w: ``(V, E)``, dense_b: ``(E,)``; layers: per layer ``(forward, backward)`` :class:`LSTMWeights`;
    out_w: ``(2H,)``, out_b: scalar. ``hyper`` is what it was trained with.
    """

    vocab: Vocabulary
    dense_w: np.ndarray
    dense_b: np.ndarray
    layers: tuple[tuple[LSTMWeights, LSTMWeights], ...]
    out_w: np.ndarray
    out_b: float
    hyper: BoilerNetHyper = BoilerNetHyper()


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # = 1 / (1 + e^-x), without overflow warnings


def lstm(x: np.ndarray, w: LSTMWeights, reverse: bool = False) -> np.ndarray:
    """Run one LSTM direction over ``x`` (shape ``(T, I)``) from zero state; returns ``h`` for every step, ``(T, H)``.

    PyTorch's ``nn.LSTM`` equations: ``i, f, g, o = σ, σ, tanh, σ`` of ``W_ih x_t + W_hh h_{t-1} + b``;
    ``c_t = f c_{t-1} + i g``; ``h_t = o tanh(c_t)``. ``reverse`` reads the sequence from its end
    (the backward LSTM of §3.2); the outputs stay aligned with the input positions.
    """
    steps, hidden = x.shape[0], w.w_hh.shape[1]
    gates_x = x @ w.w_ih.T + w.b  # (T, 4H): the input part of every step at once
    w_hh_t = np.ascontiguousarray(w.w_hh.T)
    h = np.zeros(hidden, dtype=x.dtype)
    c = np.zeros(hidden, dtype=x.dtype)
    out = np.empty((steps, hidden), dtype=x.dtype)
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    for t in order:
        z = gates_x[t] + h @ w_hh_t
        i = _sigmoid(z[:hidden])
        f = _sigmoid(z[hidden:2 * hidden])
        g = np.tanh(z[2 * hidden:3 * hidden])
        o = _sigmoid(z[3 * hidden:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out[t] = h
    return out


def forward(model: BoilerNetModel, x: np.ndarray) -> np.ndarray:
    """Content probability per block, shape ``(T,)`` in [0, 1], for the input sequence ``x`` ``(T, V)``
    (:func:`block_vectors`). Dropout is inactive (inference). Raises ValueError on a width mismatch."""
    if x.shape[1:] != (model.dense_w.shape[0],):
        raise ValueError(f"input width {x.shape[1:]} does not match the model's {model.dense_w.shape[0]}")
    if x.shape[0] == 0:
        return np.zeros(0, dtype=x.dtype)
    h = np.maximum(x @ model.dense_w + model.dense_b, 0.0)
    for fwd, bwd in model.layers:
        h = np.concatenate([lstm(h, fwd), lstm(h, bwd, reverse=True)], axis=1)
    return _sigmoid(h @ model.out_w + model.out_b)


# ------------------------------------------------------------------------------------------- files


def save_model(path: Path | str, model: BoilerNetModel) -> None:
    """Write ``model`` as a compressed ``.npz`` (float32 weights, vocabulary as unicode arrays, hyper-parameters)."""
    arrays = {
        "tags": np.array(model.vocab.tags, dtype=str), "words": np.array(model.vocab.words, dtype=str),
        "dense_w": model.dense_w, "dense_b": model.dense_b,
        "out_w": model.out_w, "out_b": np.array(model.out_b, dtype=np.float32),
    }
    hyper = model.hyper
    weights = hyper.class_weights if isinstance(hyper.class_weights, tuple) else (-1.0, -1.0)
    arrays["hyper"] = np.array([hyper.num_tags, hyper.num_words, hyper.dense_size, hyper.hidden_size,
                                hyper.num_layers, hyper.dropout, weights[0], weights[1], hyper.epochs,
                                hyper.batch_size], dtype=np.float64)
    for n, (fwd, bwd) in enumerate(model.layers):
        for d, w in (("f", fwd), ("b", bwd)):
            arrays[f"l{n}{d}_w_ih"], arrays[f"l{n}{d}_w_hh"], arrays[f"l{n}{d}_b"] = w.w_ih, w.w_hh, w.b
    np.savez_compressed(path, **{k: (v.astype(np.float32) if v.dtype.kind == "f" and k != "hyper" else v)
                                 for k, v in arrays.items()})


def load_model(path: Path | str) -> BoilerNetModel:
    """Read a model written by :func:`save_model`. Raises OSError (missing file) or KeyError (not a BoilerNet file)."""
    with np.load(path, allow_pickle=False) as z:
        h = z["hyper"]
        weights: str | tuple[float, float] = "balanced" if h[6] < 0 else (float(h[6]), float(h[7]))
        hyper = BoilerNetHyper(int(h[0]), int(h[1]), int(h[2]), int(h[3]), int(h[4]), float(h[5]), weights,
                               int(h[8]), int(h[9]))
        layers = tuple(tuple(LSTMWeights(z[f"l{n}{d}_w_ih"], z[f"l{n}{d}_w_hh"], z[f"l{n}{d}_b"]) for d in "fb")
                       for n in range(hyper.num_layers))
        return BoilerNetModel(Vocabulary(tuple(z["tags"].tolist()), tuple(z["words"].tolist())),
                              z["dense_w"], z["dense_b"], layers, z["out_w"], float(z["out_b"]), hyper)


@lru_cache(maxsize=4)
def cached_model(path: str) -> BoilerNetModel:
    """:func:`load_model`, once per process and path."""
    return load_model(path)


def classify_boilernet(blocks: Sequence[TextBlock], params: BoilerNetParams = BoilerNetParams()) -> list[bool]:
    """Keep flags for ``blocks`` (built with :data:`BOILERNET_BLOCKS`): probability >= ``params.threshold``.
    Blocks under :data:`IGNORED_TAGS` are boilerplate without entering the sequence.
    Raises OSError when the model file is missing."""
    model = cached_model(str(params.model_path or DEFAULT_BOILERNET_MODEL))
    probs = block_probabilities(blocks, model)
    return [bool(p >= params.threshold) for p in probs]


def block_probabilities(blocks: Sequence[TextBlock], model: BoilerNetModel) -> np.ndarray:
    """Content probability per block, shape ``(len(blocks),)``; 0 for blocks under :data:`IGNORED_TAGS`."""
    probs = np.zeros(len(blocks), dtype=np.float32)
    idx = [i for i, b in enumerate(blocks) if not in_ignored(b)]
    if idx:
        probs[idx] = forward(model, block_vectors([blocks[i] for i in idx], model.vocab))
    return probs

"""Learned block classifier: a gradient-boosted tree model over :mod:`newsclean.transforms.classifier.features`.

The field's extension of Boilerpipe (Kohlschütter 2010 §4 trains decision trees on shallow
features; Dragnet and BoilerNet train on labelled blocks): the papers' own decisions
(StaDyNoT dynamic noise, Boilerpipe Algorithms 1 and 2, the ancestor filter) enter as
features next to DOM context, and a LightGBM model trained on the *tune* half of the shared
data sets (``scripts/train_block_classifier.py``, split by site: ``newsclean_eval.datasets.split_of``)
decides per block, in two stages: stage 1 scores each block from its features; stage 2 adds
the stage-1 probabilities of the neighbouring blocks and of the block's DOM cluster
(:func:`newsclean.transforms.classifier.features.context_features`), a stacked sequence model that smooths
isolated decisions. Both models are gzipped LightGBM text files shipped in ``transforms/models/``
(a file may hold a seed ensemble: :data:`ENSEMBLE_SEPARATOR`), beside the boilerplate lexicon
that gives the lexical features (:mod:`newsclean.transforms.classifier.lexicon`). The page-level steps that
revise its keep flags are :mod:`newsclean.transforms.refine`'s.

Raises ``FileNotFoundError`` when a model or lexicon file is missing and ``ValueError`` when a
model's feature names differ from :data:`newsclean.transforms.vocab.FEATURE_NAMES`.
"""

from __future__ import annotations

import ctypes
import functools
import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from newsclean.transforms import kernel
from newsclean.transforms.classifier.features import (
    CONTEXT_FEATURE_NAMES,
    block_features,
    context_features,
    context_groups,
)
from newsclean.transforms.classifier.forest import parse_model
from newsclean.transforms.classifier.lexicon import load_lexicon
from newsclean.transforms.context import PageContext
from newsclean.transforms.errors import UnsupportedModel
from newsclean.transforms.types import TextBlock
from newsclean.transforms.vocab import FEATURE_NAMES

MODELS = Path(__file__).resolve().parents[1] / "models"  # transforms/models/, beside BoilerNet's weights
DEFAULT_MODEL = MODELS / "block_classifier.txt.gz"
DEFAULT_CONTEXT_MODEL = MODELS / "block_classifier_context.txt.gz"
DEFAULT_LEXICON = MODELS / "boilerplate_lexicon.tsv.gz"


@dataclass(frozen=True)
class LearnedParams:
    """Model and lexicon files (None = the shipped ones), whether to run stage 2, whether to use the
    lexicon (False: every word unknown, as on a page in a language it never saw) and the content
    threshold in [0, 1] (:func:`keep_flags`).

    ``context_early_stop_margin``: LightGBM's prediction early stopping for stage 2 only (:func:`predict_parameters`;
    None = every tree). Stage 1 always runs every tree: its probabilities are stage 2's context features, which
    move with them (docs/DECISIONS.md, "Chain speed"). Raises ValueError for a margin <= 0."""

    model_path: str | None = None
    context_model_path: str | None = None
    lexicon_path: str | None = None
    use_context: bool = True
    use_lexicon: bool = True
    threshold: float = 0.5
    context_early_stop_margin: float | None = 10.0

    def __post_init__(self):
        predict_parameters(self.context_early_stop_margin)  # a margin <= 0 fails here, not on the first page

    def model_files(self) -> tuple[Path, ...]:
        """The files :func:`content_probabilities` reads with these parameters: the stage 1 model, the stage 2
        model when ``use_context``, the lexicon when ``use_lexicon`` (the shipped ones where a path is None)."""
        files = [Path(self.model_path or DEFAULT_MODEL)]
        if self.use_context:
            files.append(Path(self.context_model_path or DEFAULT_CONTEXT_MODEL))
        if self.use_lexicon:
            files.append(Path(self.lexicon_path or DEFAULT_LEXICON))
        return tuple(files)


#: Feature rows one evaluator call scores (:meth:`ModelEnsemble.predict`): 1,024 rows of ~100 float64 features,
#: under 1 MiB, stay in the cache while every tree walks them.
PREDICT_CHUNK_ROWS = 1024

ENSEMBLE_SEPARATOR = "\n\x1e\n"
"""Line (ASCII record separator) between the members of a model file holding a seed ensemble."""


def _compiled_predict(forest: type, model: ModelEnsemble, X: np.ndarray, early_stop_margin: float | None) -> np.ndarray:
    """:meth:`ModelEnsemble._predict` by the compiled evaluator (``forest``: its ``CompiledForest``). Raises
    :class:`~newsclean.transforms.kernel.Unsupported` for a model it does not read (LightGBM predicts)."""
    members = model.compiled(forest)
    if not members:
        raise kernel.Unsupported("a model the compiled evaluator does not read")
    return members[0].predict(X, early_stop_margin) if len(members) == 1 else \
        np.mean([m.predict(X, early_stop_margin) for m in members], axis=0)


class ModelEnsemble:
    """LightGBM boosters trained alike with different seeds; predicts the mean of their probabilities.

    ``feature_names``: the columns the members were trained on, in order (the model file records them);
    ``texts``: the members' LightGBM text models (None: written out by the boosters when first needed), read by
    the compiled evaluator where :func:`newsclean.transforms.kernel.enabled` holds.
    """

    def __init__(self, boosters: Sequence, feature_names: tuple[str, ...] = (), texts: Sequence[str] | None = None):
        self.boosters = list(boosters)
        self.feature_names = feature_names or tuple(self.boosters[0].feature_name())
        self._texts = list(texts) if texts is not None else None
        self._forests: list | None = None

    def predict(self, rows, early_stop_margin: float | None = None) -> np.ndarray:
        """Mean content probability in [0, 1] per feature row (``rows``: n x features), shape (n,);
        ``early_stop_margin``: :func:`booster_predict`'s. With the compiled kernel, its evaluator of the same trees
        (the same probabilities bit for bit, :mod:`newsclean.transforms.classifier.forest`); else LightGBM.

        Rows are scored :data:`PREDICT_CHUNK_ROWS` at a time (each row's score depends on that row only): one
        compiled or LightGBM call stays short, so the pipeline's per-page time budget (an asynchronous exception) can
        stop a page of 10^5 blocks between calls, and a chunk's rows stay in the CPU cache across the trees."""
        X = np.asarray(rows, dtype=float)
        if len(X) <= PREDICT_CHUNK_ROWS:
            return self._predict(X, early_stop_margin)
        return np.concatenate([self._predict(X[start:start + PREDICT_CHUNK_ROWS], early_stop_margin)
                               for start in range(0, len(X), PREDICT_CHUNK_ROWS)])

    @kernel.twin("CompiledForest", module="trees", adapt=_compiled_predict)
    def _predict(self, X: np.ndarray, early_stop_margin: float | None) -> np.ndarray:
        """Mean probability of the members (LightGBM) for one chunk of rows."""
        if len(self.boosters) == 1:
            return booster_predict(self.boosters[0], X, early_stop_margin)
        return np.mean([booster_predict(b, X, early_stop_margin) for b in self.boosters], axis=0)

    def compiled(self, forest: type) -> list:
        """The members as compiled forests of class ``forest`` (the kernel's ``CompiledForest``; built once); empty
        when a member uses what the compiled evaluator does not read
        (:class:`~newsclean.transforms.errors.UnsupportedModel`: LightGBM predicts)."""
        if self._forests is None:
            texts = self._texts if self._texts is not None else [b.model_to_string() for b in self.boosters]
            try:
                self._forests = [forest(parse_model(text)) for text in texts]
            except UnsupportedModel:
                self._forests = []
        return self._forests


def predict_parameters(early_stop_margin: float | None = None) -> dict[str, object]:
    """LightGBM prediction parameters: one thread; with ``early_stop_margin`` (> 0) LightGBM's prediction early
    stopping (``pred_early_stop``: every 10 trees, a row whose margin 2 x |raw score| exceeds it stops; 10 is
    |raw| > 5, p > 0.9933 or < 0.0067). Raises ValueError for a margin <= 0."""
    if early_stop_margin is None:
        return {"num_threads": 1}
    if early_stop_margin <= 0:
        raise ValueError(f"early_stop_margin must be > 0, got {early_stop_margin}")
    return {"num_threads": 1, "pred_early_stop": True, "pred_early_stop_freq": 10,
            "pred_early_stop_margin": early_stop_margin}


def booster_predict(booster, X: np.ndarray, early_stop_margin: float | None = None) -> np.ndarray:
    """``booster.predict(X, **predict_parameters(early_stop_margin))`` (probabilities, shape (n,)), by the same
    C function of LightGBM's C API (``LGBM_BoosterPredictForMat``) called directly when ``X`` is a non-empty
    C-contiguous float64 matrix: the Python wrapper's per-call work cost ~8 % of a page's prediction
    (docs/DECISIONS.md, "Chain speed"). Falls back to ``booster.predict`` when LightGBM's internals differ."""
    api = _lightgbm_c_api()
    handle = getattr(booster, "_handle", None)
    if api is None or handle is None or X.ndim != 2 or not len(X) or X.dtype != np.float64 or not X.flags.c_contiguous:
        return booster.predict(X, **predict_parameters(early_stop_margin))
    lib, safe_call, c_str = api
    out, written = np.empty(len(X)), ctypes.c_int64(0)
    safe_call(lib.LGBM_BoosterPredictForMat(
        handle, X.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(1), ctypes.c_int32(X.shape[0]),  # 1: float64
        ctypes.c_int32(X.shape[1]), ctypes.c_int(1), ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(-1),  # row-major,
        c_str(_parameter_string(early_stop_margin)), ctypes.byref(written), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double))))  # normal
    if written.value != len(X):  # all iterations from the first
        raise RuntimeError(f"LightGBM wrote {written.value} predictions for {len(X)} rows")
    return out


@functools.cache
def _parameter_string(early_stop_margin: float | None) -> str:
    """:func:`predict_parameters` as the C API's ``key=value`` string."""
    return " ".join(f"{k}={str(v).lower()}" for k, v in predict_parameters(early_stop_margin).items())


@functools.cache
def _lightgbm_c_api():
    """LightGBM's loaded library and its error check (``lightgbm.basic``), or None when they are not there."""
    try:
        from lightgbm.basic import _LIB, _c_str, _safe_call
    except ImportError:
        return None
    return _LIB, _safe_call, _c_str


@lru_cache(maxsize=8)
def load_model(path: str, known: tuple[str, ...] = FEATURE_NAMES) -> ModelEnsemble:
    """Load (once per process) a model file: LightGBM text models (one, or several joined by
    :data:`ENSEMBLE_SEPARATOR`), gzipped when ``path`` ends in ``.gz``.

    A model may use any subset of the ``known`` features in any order (feature-group ablations and
    leave-one-data-set-out models), but every member must record the same names.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: no model in the file, or recorded feature names unknown to the code (see
            :func:`check_feature_names`) or differing between members.
    """
    import lightgbm  # imported here: only the learned configuration needs it

    if not Path(path).exists():
        raise FileNotFoundError(f"block classifier model not found: {path}")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        members = [text for text in fh.read().split(ENSEMBLE_SEPARATOR) if text.strip()]
    boosters = [lightgbm.Booster(model_str=text) for text in members]
    if not boosters:
        raise ValueError(f"{path}: no LightGBM model in the file")
    names = tuple(boosters[0].feature_name())
    for booster in boosters:
        if tuple(booster.feature_name()) != names:
            raise ValueError(f"{path}: the ensemble's members record different feature names")
    check_feature_names(path, names, known)
    return ModelEnsemble(boosters, names, members)


def check_feature_names(path: str, trained: tuple[str, ...], known: tuple[str, ...]) -> None:
    """Raise ValueError when a model file's recorded feature names (``feature_names=`` of a LightGBM
    text model, in column order) include one that :mod:`newsclean.transforms.classifier.features` does not
    compute (in ``known``), or one twice: the model was trained on features this code lacks
    (retrain: ``make models``). A subset of ``known`` is fine: only those columns are computed."""
    unknown = [n for n in trained if n not in known]
    twice = sorted({n for n in trained if trained.count(n) > 1})
    if unknown or twice:
        raise ValueError(f"{path}: model features differ from those in newsclean.transforms.classifier.features: the model "
                         f"expects {', '.join(unknown) or 'nothing'} the code lacks"
                         f"{'; named twice: ' + ', '.join(twice) if twice else ''}; retrain the model")


def stage2_block_names(stage2: ModelEnsemble, path: str) -> tuple[str, ...]:
    """The block features of a stage-2 model: its recorded names without the trailing
    :data:`CONTEXT_FEATURE_NAMES`. Raises ValueError when they do not end its names."""
    names, tail = stage2.feature_names, len(CONTEXT_FEATURE_NAMES)
    if names[-tail:] != CONTEXT_FEATURE_NAMES:
        raise ValueError(f"{path}: a stage-2 model's features must end with the context features {CONTEXT_FEATURE_NAMES}")
    return names[:-tail]


def content_probabilities(blocks: Sequence[TextBlock], ctx: PageContext, params: LearnedParams = LearnedParams()) -> list[float]:
    """Probability in [0, 1] that each block is main content (stage 2 when ``use_context``, else stage 1).
    Each stage computes the features its model file records (:func:`load_model`)."""
    return stage_probabilities(blocks, ctx, params).content


class StageProbabilities(NamedTuple):
    """One page's classification: ``features`` (blocks x stage-1 features), ``stage1`` and ``content`` (the
    probability used, stage 2's when ``use_context``), one per block, in [0, 1]."""

    features: np.ndarray
    stage1: list[float]
    content: list[float]


def stage_probabilities(blocks: Sequence[TextBlock], ctx: PageContext,
                        params: LearnedParams = LearnedParams()) -> StageProbabilities:
    """:func:`content_probabilities` with what it computed on the way (stage 1's features and probabilities)."""
    if not blocks:
        return StageProbabilities(np.zeros((0, 0)), [], [])
    lexicon = load_lexicon(str(params.lexicon_path or DEFAULT_LEXICON)) if params.use_lexicon else {}
    stage1 = load_model(str(params.model_path or DEFAULT_MODEL))
    feats = block_features(blocks, ctx, lexicon, stage1.feature_names)
    p1 = stage1.predict(feats).tolist()
    if not params.use_context:
        return StageProbabilities(feats, p1, p1)
    path2 = str(params.context_model_path or DEFAULT_CONTEXT_MODEL)
    stage2 = load_model(path2, FEATURE_NAMES + CONTEXT_FEATURE_NAMES)
    names2 = stage2_block_names(stage2, path2)
    feats2 = feats if names2 == stage1.feature_names else block_features(blocks, ctx, lexicon, names2)
    ctx_feats = context_features(p1, context_groups(blocks), [b.num_words for b in blocks])
    p2 = stage2.predict(np.hstack([feats2, np.asarray(ctx_feats, dtype=float)]), params.context_early_stop_margin)
    return StageProbabilities(feats, p1, p2.tolist())


def keep_flags(probs: Sequence[float], params: LearnedParams = LearnedParams()) -> list[bool]:
    """Keep flags from content probabilities in [0, 1]: a block is kept at or above ``params.threshold``."""
    return [p >= params.threshold for p in probs]

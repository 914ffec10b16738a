"""Learned block classifier: a gradient-boosted tree model over :mod:`transforms.features`.

The field's extension of Boilerpipe (Kohlschütter 2010 §4 trains decision trees on shallow
features; Dragnet and BoilerNet train on labelled blocks): the papers' own decisions
(StaDyNoT dynamic noise, Boilerpipe Algorithms 1 and 2, the ancestor filter) enter as
features next to DOM context, and a LightGBM model trained on the *tune* half of the shared
data sets (``scripts/train_block_classifier.py``, split by site: ``pipeline.datasets.split_of``)
decides per block. The model is a LightGBM text file shipped in ``transforms/models/``.

Raises ``FileNotFoundError`` when the model file is missing and ``ValueError`` when its
feature names differ from :data:`transforms.features.FEATURE_NAMES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from transforms.blocks import TextBlock
from transforms.features import FEATURE_NAMES, PageContext, block_features

DEFAULT_MODEL = Path(__file__).with_name("models") / "block_classifier.txt"


@dataclass(frozen=True)
class LearnedParams:
    """model_path: LightGBM model file (None = the shipped one); threshold: content probability in [0, 1]."""

    model_path: str | None = None
    threshold: float = 0.5


@lru_cache(maxsize=4)
def load_model(path: str):
    """Load (once per process) a LightGBM booster and check its feature names."""
    import lightgbm  # imported here: only the learned configuration needs it

    if not Path(path).exists():
        raise FileNotFoundError(f"block classifier model not found: {path}")
    booster = lightgbm.Booster(model_file=path)
    if tuple(booster.feature_name()) != FEATURE_NAMES:
        raise ValueError(f"{path}: model features differ from transforms.features.FEATURE_NAMES")
    return booster


def content_probabilities(blocks: Sequence[TextBlock], ctx: PageContext, params: LearnedParams = LearnedParams()) -> list[float]:
    """Probability in [0, 1] that each block is main content."""
    if not blocks:
        return []
    booster = load_model(str(params.model_path or DEFAULT_MODEL))
    return [float(p) for p in booster.predict(block_features(blocks, ctx))]


def classify_learned(blocks: Sequence[TextBlock], ctx: PageContext, params: LearnedParams = LearnedParams()) -> list[bool]:
    """Keep flags: content probability at or above ``params.threshold``."""
    return [p >= params.threshold for p in content_probabilities(blocks, ctx, params)]

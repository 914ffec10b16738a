"""The learned block classifier: stage-2 context features and model loading."""

import math

import pytest

from transforms.chain import LEARNED_CONFIG, extract_article
from transforms.features import CONTEXT_FEATURE_NAMES, context_features
from transforms.learned import LearnedParams


def test_context_features_see_neighbours_and_clusters():
    p = [0.1, 0.9, 0.8, 0.2]
    groups = [(0, 10), (1, 11), (1, 11), (2, 10)]
    words = [10, 30, 10, 10]
    rows = context_features(p, groups, words)
    assert len(rows) == 4 and all(len(r) == len(CONTEXT_FEATURE_NAMES) for r in rows)
    first = dict(zip(CONTEXT_FEATURE_NAMES, rows[0]))
    assert (first["p_prev2"], first["p_prev1"], first["p_self"], first["p_next1"], first["p_next2"]) == (0, 0, 0.1, 0.9, 0.8)
    second = dict(zip(CONTEXT_FEATURE_NAMES, rows[1]))
    assert second["p_parent_mean"] == pytest.approx((0.9 * 30 + 0.8 * 10) / 40)  # word-weighted over parent 1
    assert first["p_grand_mean"] == pytest.approx((0.1 * 10 + 0.2 * 10) / 20)  # blocks 0 and 3 share grandparent 10
    assert second["p_run_log"] == pytest.approx(math.log1p(2))  # blocks 1-2 form a run above 0.5
    assert first["p_page_max"] == 0.9


def test_missing_model_is_a_clear_error(tmp_path):
    config = LEARNED_CONFIG.with_(learned=LearnedParams(model_path=str(tmp_path / "none.txt")))
    with pytest.raises(FileNotFoundError, match="none.txt"):
        extract_article("<html><body><p>" + "word " * 50 + "</p></body></html>", None, config)

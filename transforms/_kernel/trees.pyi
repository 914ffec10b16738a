"""Typed interface of the compiled tree-ensemble evaluator (``trees.pyx``), as the binding table in
:mod:`newsclean.transforms.kernel` calls it: LightGBM's scores, bit for bit, for the models it reads."""

import numpy as np

from newsclean.transforms.classifier.forest import FlatForest

class CompiledForest:
    """One LightGBM model's trees. Raises ``errors.UnsupportedModel`` for a tree of more nodes and leaves than the
    evaluator walks (the caller predicts with LightGBM)."""

    def __init__(self, flat: FlatForest) -> None: ...
    def predict(self, X: np.ndarray, early_stop_margin: float | None = None, early_stop_freq: int = 10) -> np.ndarray:
        """Probabilities in [0, 1] of the rows of ``X`` (n x columns, float64): shape ``(n,)``; ``early_stop_margin``
        as LightGBM's ``pred_early_stop_margin``. Raises ValueError for a column count other than the model's."""

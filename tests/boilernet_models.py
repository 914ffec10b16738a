"""A small random BoilerNet model (transforms/boilernet.py) for the tests of its inference and of its trainer."""

from __future__ import annotations

import numpy as np

from newsclean.transforms.boilernet import BoilerNetHyper, BoilerNetModel, LSTMWeights, Vocabulary


def random_model(seed=0, width=7, dense=3, hidden=2, layers=2) -> BoilerNetModel:
    """A BoilerNet model of the given sizes with normal random weights (``seed``): vocabulary html/body/p and a/b."""
    rng = np.random.default_rng(seed)

    def lw(inp):
        return LSTMWeights(*(rng.normal(size=s).astype(np.float32) for s in ((4 * hidden, inp), (4 * hidden, hidden), (4 * hidden,))))

    stack = tuple((lw(dense if n == 0 else 2 * hidden), lw(dense if n == 0 else 2 * hidden)) for n in range(layers))
    return BoilerNetModel(Vocabulary(("html", "body", "p"), ("a", "b")), rng.normal(size=(width, dense)).astype(np.float32),
                          rng.normal(size=dense).astype(np.float32), stack, rng.normal(size=2 * hidden).astype(np.float32),
                          0.3, BoilerNetHyper(num_tags=3, num_words=2, dense_size=dense, hidden_size=hidden, num_layers=layers))

"""The page-level steps as data (transforms/refine/__init__.py): one signature, run in the configuration's order,
none without a classifier; the shipped chains' steps each called once per page."""

from dataclasses import dataclass

import pytest

from newsclean.transforms.chain import DEFAULT_CONFIG, PAPER_CONFIG, PRECISION_CONFIG, extract_article
from newsclean.transforms.context import PageContext
from newsclean.transforms.refine import refine_keep
from newsclean.transforms.refine.side_content import SideContentParams


@dataclass(frozen=True)
class Flip:
    """A step that keeps block ``i`` when the block before it is kept, recording what it saw."""

    i: int
    seen: list

    def __call__(self, blocks, probs, keep, ctx):
        self.seen.append(list(keep))
        out = list(keep)
        out[self.i] = out[self.i - 1]
        return out


def test_steps_run_in_order_each_on_the_previous_steps_flags():
    seen = []
    steps = (Flip(1, seen), Flip(2, seen))
    out = refine_keep(["a", "b", "c"], [0.1, 0.2, 0.3], [True, False, False], PageContext(), steps)
    assert out == [True, True, True]  # the second step saw the first one's keep of block 1
    assert seen == [[True, False, False], [True, True, False]]
    assert refine_keep(["a", "b", "c"], [0.1, 0.2, 0.3], [True, False, False], PageContext(), steps[::-1]) == [
        True, True, False]  # the other order: block 2 looked before block 1 changed


def test_lengths_are_checked_once_before_any_step():
    seen = []
    with pytest.raises(ValueError, match="differ in length: 3, 2, 3"):
        refine_keep(["a", "b", "c"], [0.1, 0.2], [True] * 3, PageContext(), (Flip(1, seen),))
    assert seen == []


def test_refine_steps_need_the_learned_classifier():
    with pytest.raises(ValueError, match="refine"):
        PAPER_CONFIG.with_(refine=(SideContentParams(),))
    assert DEFAULT_CONFIG.without_steps(SideContentParams).step(SideContentParams) is None
    assert PRECISION_CONFIG.step(SideContentParams) != DEFAULT_CONFIG.step(SideContentParams)
    assert [type(s) for s in PRECISION_CONFIG.refine] == [type(s) for s in DEFAULT_CONFIG.refine]


def test_each_shipped_step_is_called_once_per_page(monkeypatch):
    calls = []
    for kind in {type(step) for step in DEFAULT_CONFIG.refine}:
        real = kind.__call__

        def spy(self, blocks, probs, keep, ctx, _real=real):
            calls.append(type(self).__name__)
            return _real(self, blocks, probs, keep, ctx)
        monkeypatch.setattr(kind, "__call__", spy)
    html = "<html><body><article>" + "<p>The council met on Monday and voted on the budget for the year.</p>" * 5
    extract_article(html + "</article></body></html>", None, DEFAULT_CONFIG)
    assert calls == [type(step).__name__ for step in DEFAULT_CONFIG.refine]

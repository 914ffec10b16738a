"""The exceptions of the cleaning chain: :class:`ExtractionError` for bad input, :class:`UnsupportedModel` for a
model the compiled tree evaluator does not read."""

from __future__ import annotations

from newsclean.schemas.records import RejectReason


class ExtractionError(Exception):
    """A page cannot become an article; ``reason`` is a :class:`RejectReason`, ``message`` says why."""

    def __init__(self, reason: RejectReason, message: str):
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message


class UnsupportedModel(ValueError):
    """The model uses a LightGBM feature the compiled evaluator does not read (categorical splits, linear trees,
    another objective, several trees per iteration, average output)."""

"""The one exception type the cleaning chain raises for bad input."""

from __future__ import annotations

from newsclean.schemas.records import RejectReason


class ExtractionError(Exception):
    """A page cannot become an article; ``reason`` is a :class:`RejectReason`, ``message`` says why."""

    def __init__(self, reason: RejectReason, message: str):
        super().__init__(f"{reason.value}: {message}")
        self.reason = reason
        self.message = message

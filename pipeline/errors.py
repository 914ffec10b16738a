"""Expected failures of the pipeline and CLI: the CLI prints their message on one line, no traceback."""

from __future__ import annotations


def first_line(exc: BaseException, limit: int | None = 300) -> str:
    """The first line of ``exc``'s message (its type's name when the message is empty), at most ``limit``
    characters (None: whole): what a one-line error quotes of a library's exception."""
    line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return line if limit is None else line[:limit]


class NewscleanError(Exception):
    """An expected failure (bad input, nothing to read, failed job): exit status 1, one-line message."""


class UsageError(NewscleanError):
    """Bad or missing command-line flags: exit status 2."""


class NoInputError(NewscleanError):
    """The ``--warc`` glob, file or directory matches no WARC file."""


class AccountingError(NewscleanError):
    """Articles + rejects + duplicates differ from the WARC response records read (a bug: report it)."""


class NothingReadError(NewscleanError):
    """The WARC files hold no readable WARC response record (all bytes unreadable, or no response records)."""


class NoRunError(NewscleanError):
    """An output folder holds no newsclean run (``newsclean summarize`` of a mistyped folder)."""


class SettingsMismatchError(NewscleanError):
    """``--incremental`` into a corpus made with other settings (chain, ``--min-words``, models, ...)."""

"""A path as a Beam file pattern that matches that one path.

Beam's ``FileSystems.match`` takes every path as a pattern (``FileSystem.translate_pattern``: fnmatch syntax,
``*`` within a directory, ``**`` across, "there is no way to quote meta-characters"), so a file named
``a[1]*?.warc.gz`` matches no pattern that names it. A character class of one character quotes it: ``[[]``,
``[*]``, ``[?]`` (fnmatch, as :func:`glob.escape` writes them), which Beam's translation keeps. Python's ``re``
warns of a "possible nested set" when it compiles Beam's translation of ``[[]``; Beam's file-system module compiles
it, and that warning alone is silenced here.
"""

from __future__ import annotations

import glob
import warnings

warnings.filterwarnings("ignore", message="Possible nested set", category=FutureWarning,
                        module=r"apache_beam\.io\.filesystem")


def literal_pattern(path: str) -> str:
    """``path`` (a local path or a URL such as ``gs://bucket/a[1].warc.gz``) as a Beam file pattern that matches
    only ``path`` itself: each ``*``, ``?`` and ``[`` becomes a one-character class (:func:`glob.escape`). A path
    without them is returned as it is (Beam then looks it up without listing its directory)."""
    return glob.escape(path)

"""Command-line options of the cleaning pipeline, shared by ``newsclean clean`` and Beam.

newsclean's own flags are ``--warc GLOB --out DIR --neighbour-sample N --chain NAME``
(:func:`add_clean_arguments`); every other flag is a Beam pipeline option (``--runner``,
``--direct_running_mode``, ``--project``, ``--temp_location``, ...). DirectRunner is the default.

:class:`NewscleanOptions` registers newsclean's flags with Beam's options machinery, so that a
plain ``PipelineOptions(argv).view_as(NewscleanOptions)`` works too (e.g. from a Dataflow
template or a notebook). None of its flags is ``required`` there: Beam parses every registered
options class for every pipeline in the process, and a required flag would break unrelated
pipelines. :func:`clean_config_from_options` checks them instead.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from apache_beam.options.pipeline_options import PipelineOptions, _BeamArgumentParser

from newsclean.pipeline.errors import UsageError

#: StaDyNoT §4 learns static noise from 10 neighbour pages per site.
DEFAULT_NEIGHBOUR_SAMPLE = 10
from newsclean.transforms.chain import CONFIGS as CHAIN_CONFIGS  # noqa: E402 (names accepted by ``--chain``)


def _positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_clean_arguments(parser: argparse.ArgumentParser, *, require: bool = False,
                        with_warc: bool = True, with_out: bool = True) -> None:
    """Add newsclean's pipeline flags to ``parser``.

    Args:
        parser: an ``argparse`` parser (or Beam's ``_BeamArgumentParser``).
        require: make ``--warc`` and ``--out`` required (the CLI); False for Beam's registry.
        with_warc: add ``--warc`` (``newsclean run`` derives it from ``--out`` instead).
        with_out: add ``--out`` (``newsclean run`` has its own).
    """
    if with_warc:
        parser.add_argument(
            "--warc", dest="warc", required=require, metavar="GLOB",
            help="WARC files to read: a glob ('warc/**/*.warc.gz'; '**/' also matches no directory), "
                 "a single file, or a directory (= DIR/**/*.warc.gz). Local paths or gs://, s3://, ... URLs.")
    if with_out:
        parser.add_argument(
            "--out", dest="out", required=require, metavar="DIR",
            help="output directory (local or gs://...): articles/*.parquet, rejects/*.parquet, summary.json. "
                 "Earlier outputs in articles/, rejects/ and _counts/ are replaced.")
    parser.add_argument(
        "--neighbour-sample", "--neighbour_sample", dest="neighbour_sample", type=_positive_int,
        default=DEFAULT_NEIGHBOUR_SAMPLE, metavar="N",
        help="neighbour pages sampled per (site, category) to learn static noise "
             f"(default {DEFAULT_NEIGHBOUR_SAMPLE}, as in StaDyNoT §4)")
    parser.add_argument(
        "--chain", dest="chain", choices=sorted(CHAIN_CONFIGS), default="default",
        help="cleaning chain configuration: 'default' (= 'learned': the papers' stages feeding a learned "
             "block classifier), 'paper' (the papers' chain and constants as printed), 'heuristic' "
             "(the papers' chain, inline tags joining text blocks)")


class NewscleanOptions(PipelineOptions):
    """Beam ``PipelineOptions`` view holding newsclean's flags (see :func:`add_clean_arguments`)."""

    @classmethod
    def _add_argparse_args(cls, parser: _BeamArgumentParser) -> None:
        add_clean_arguments(parser, require=False)


@dataclass(frozen=True)
class CleanConfig:
    """What the cleaning pipeline needs besides the runner options.

    Attributes:
        warc: glob, file or directory of WARC files (see ``--warc``).
        out: output directory, local path or filesystem URL.
        neighbour_sample: neighbour pages sampled per (site, category), >= 1.
        chain: a key of :data:`CHAIN_CONFIGS`.
    """

    warc: str
    out: str
    neighbour_sample: int = DEFAULT_NEIGHBOUR_SAMPLE
    chain: str = "default"

    def __post_init__(self):
        if not self.warc:
            raise UsageError("--warc is required")
        if not self.out:
            raise UsageError("--out is required")
        if self.neighbour_sample < 1:
            raise UsageError(f"--neighbour-sample must be at least 1, got {self.neighbour_sample}")
        if self.chain not in CHAIN_CONFIGS:
            raise UsageError(f"--chain must be one of {sorted(CHAIN_CONFIGS)}, got {self.chain!r}")


def clean_config_from_options(options: PipelineOptions) -> CleanConfig:
    """Read and check newsclean's flags from Beam options. Raises :class:`UsageError` when missing."""
    view = options.view_as(NewscleanOptions)
    return CleanConfig(warc=view.warc or "", out=view.out or "",
                       neighbour_sample=view.neighbour_sample, chain=view.chain)


def resolve_chain_config(name: str):
    """The ``newsclean.transforms.chain`` configuration object for ``--chain name``.

    Raises:
        UsageError: ``name`` is not a key of ``newsclean.transforms.chain.CONFIGS``.
    """
    if name not in CHAIN_CONFIGS:
        raise UsageError(f"--chain must be one of {sorted(CHAIN_CONFIGS)}, got {name!r}")
    return CHAIN_CONFIGS[name]


def unknown_beam_flags(flags: list[str]) -> list[str]:
    """The entries of ``flags`` that no registered Beam ``PipelineOptions`` class understands.

    Used by the CLI to turn a typo such as ``--runer`` into a usage error instead of Beam's
    silent "Discarding unparseable args" warning. Positional words count as unknown, and so
    does the value after an unknown flag (``["--runer", "DirectRunner"]``).
    """
    parser = _BeamArgumentParser(allow_abbrev=False)
    seen: set[str] = set()
    for cls in PipelineOptions.__subclasses__():
        if str(cls) in seen:
            continue
        seen.add(str(cls))
        cls._add_argparse_args(parser)  # noqa: SLF001 - Beam's own registry mechanism
    _, unknown = parser.parse_known_args(flags)
    return unknown

"""Launcher modes for clusters: submit the cleaning job and return its id (``--no-wait``), and finish
the output folder afterwards (``newsclean summarize OUT``).

Airflow's Dataflow operators and a Dataflow flex template expect a launcher that submits the job and
returns; the job then runs on its own. :func:`launch_clean` does the launcher's half of
:func:`newsclean.pipeline.clean.run_clean`: it checks the inputs, builds the same graph into a staging
folder ``OUT/_staging-<id>/`` and records it in ``OUT/_pending.json`` with the runner's job id.
:func:`summarize_out` does the other half once the job is done: it publishes the staged outputs (the
earlier ones are replaced, or appended to on an incremental run) and writes ``OUT/_summary.json`` and
the dataset card from what the job wrote. With nothing pending it rebuilds the summary from the
published outputs.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from newsclean.pipeline.errors import NewscleanError, NoRunError
from newsclean.pipeline.formats import check_corpus_format
from newsclean.pipeline.incremental import (
    RunPlan,
    corpus_settings,
    finish_run,
    interrupts_deferred,
    nothing_new,
    plan_run,
    run_settings,
    staged_config,
)
from newsclean.pipeline.output import PENDING_FILE, is_url, output_lock, use_filesystem_options
from newsclean.pipeline.runner import check_runner, new_pipeline

log = logging.getLogger(__name__)



def job_id_of(result) -> str:
    """The runner's id of a submitted job: Dataflow's ``job_id()``, the portable job service's id, or
    ``"local"`` for runners without one (the DirectRunner has finished when ``run()`` returns)."""
    job_id = getattr(result, "job_id", None)
    if callable(job_id):
        try:
            return str(job_id())
        except Exception:  # noqa: BLE001 - a runner whose job_id() is not implemented
            pass
    return str(getattr(result, "_job_id", None) or "local")


def _write_json(path: str, obj: dict) -> None:
    with FileSystems.create(path, mime_type="application/json",
                            compression_type=CompressionTypes.UNCOMPRESSED) as f:
        f.write((json.dumps(obj, indent=2, sort_keys=True) + "\n").encode("utf-8"))


def read_json(path: str) -> dict | None:
    """The JSON object in ``path``, or None when there is no such file."""
    if not FileSystems.exists(path):
        return None
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return json.loads(f.read().decode("utf-8"))


def launch_clean(config, beam_args: Sequence[str] | PipelineOptions | None = None) -> str:
    """Submit the cleaning job for ``config`` (a ``CleanConfig``) and return its job id without waiting.

    The job writes into a staging folder recorded in ``OUT/_pending.json``; run
    :func:`summarize_out` (``newsclean summarize OUT``) after it finished. Raises what
    :func:`~newsclean.pipeline.clean.run_clean` raises before submitting (``NoInputError``, ``UsageError``),
    and :class:`NewscleanError` when the runner refuses the job.
    """
    from newsclean.pipeline import clean
    from newsclean.pipeline.output import discard_staging, hold_output, new_staging

    options = use_filesystem_options(beam_args)  # before the first listing of an s3:// or gs:// path
    check_runner(options)  # before any --cc-news download
    patterns = clean.input_patterns(config)
    with hold_output(config.out) as out:
        if config.incremental:
            check_corpus_format(out, config.output_format)
        plan = plan_run(out, patterns, config.incremental, run_settings(config), config.allow_mixed_settings)
        if config.incremental:
            if not plan.files:
                nothing_new(out, plan, config.source)
                return "none (no new WARC file)"
            patterns = plan.patterns
        staging = new_staging(out)
        staged = staged_config(config, staging, plan)
        p = new_pipeline(options)
        clean.build_pipeline(p, patterns, staged)
        try:
            result = p.run()
        except Exception as exc:
            discard_staging(staging)
            raise NewscleanError(f"the runner did not accept the job: {type(exc).__name__}: {exc}") from exc
        job_id = job_id_of(result)
        _write_json(FileSystems.join(out, PENDING_FILE), {
            "job_id": job_id, "staging": staging, "partition_by": config.partition_by,
            "warc": os.path.abspath(config.warc) if config.warc and not is_url(config.warc) else config.source,
            "plan": plan.to_dict(),
        })
    return job_id


def summarize_out(out: str, *, check: bool = True, beam_args: Sequence[str] | PipelineOptions | None = None):
    """Finish ``out``: publish a pending ``--no-wait`` run's staged outputs, then write and return the
    :class:`~newsclean.pipeline.summary.RunSummary` of the published outputs. ``beam_args``: the Beam flags that
    reach ``out`` (``--s3_endpoint_url ...`` for an ``s3://`` folder: :func:`use_filesystem_options`).

    Raises:
        NewscleanError: a pending run's job has not written its outputs yet (still running, or failed).
        NoRunError: ``out`` holds neither a pending run nor a finished one (nothing is written there).
        AccountingError: ``check`` and articles + rejects + duplicates != records read.
    """
    from newsclean.pipeline.output import STAGING_PREFIX
    from newsclean.pipeline.stages import COUNTS_DIR
    from newsclean.pipeline.summary import SUMMARY_FILE, check_balanced, read_counts, summarize_output, write_summary

    use_filesystem_options(beam_args)
    out = out.rstrip("/") or "/"
    pending = read_json(FileSystems.join(out, PENDING_FILE))
    previous = read_json(FileSystems.join(out, SUMMARY_FILE))
    if pending is None and previous is None and not read_counts(out):
        raise NoRunError(f"{out} holds no newsclean run (no {SUMMARY_FILE}, {COUNTS_DIR}/ or {PENDING_FILE}): "
                         "nothing to summarize")
    with output_lock(out):
        if pending is not None:
            staging = pending["staging"]
            counts = FileSystems.join(staging, COUNTS_DIR, "counts.jsonl")
            temp = [m.path for r in FileSystems.match([FileSystems.join(staging, "beam-temp-*")])
                    for m in r.metadata_list]
            if not FileSystems.exists(counts) or temp:
                raise NewscleanError(f"job {pending['job_id']} has not finished writing {staging} "
                                     "(still running, or failed: see the runner's job page)")
            if STAGING_PREFIX not in staging:
                raise NewscleanError(f"{PENDING_FILE} names {staging!r}, not a staging folder of {out}")
            with interrupts_deferred():  # published and no longer pending, or neither
                summary, _ = finish_run(staging, out, RunPlan.from_dict(pending["plan"]), pending.get("warc", ""),
                                        pending.get("partition_by"))
                FileSystems.delete([FileSystems.join(out, PENDING_FILE)])
        else:
            warc = (previous or {}).get("warc", "")  # written relative to OUT
            if warc and not is_url(warc) and not is_url(out) and not os.path.isabs(warc):
                warc = os.path.normpath(os.path.join(out, warc))
            summary = summarize_output(out, warc=warc)
            summary.settings = (previous or {}).get("settings") or corpus_settings(out) or {}
            write_summary(summary)
    if check:
        check_balanced(summary)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m newsclean.pipeline.launch --warc ... --out ... [--no_wait] [beam options]``: the entry point of
    the Dataflow flex template (infra/dataflow/launch.py). With ``--no_wait``: submit, print the job id, exit;
    without: :func:`newsclean.pipeline.clean.main`."""
    import sys

    from newsclean.pipeline import clean
    from newsclean.pipeline.options import NewscleanOptions, clean_config_from_options

    argv = list(sys.argv[1:] if argv is None else argv)
    options = PipelineOptions(argv)
    if not options.view_as(NewscleanOptions).no_wait:
        return clean.main(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        print(f"job id: {launch_clean(clean_config_from_options(options), options)}")
    except NewscleanError as exc:
        print(f"newsclean: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

"""The Apache Beam side of newsclean: WARC files in, cleaned articles, rejects and duplicates in Parquet out.

Modules, in the order a run uses them: :mod:`~newsclean.pipeline.options` (the flags, ``CleanConfig``),
:mod:`~newsclean.pipeline.clean` (``run_clean`` and ``build_pipeline``: the stages in order),
:mod:`~newsclean.pipeline.runner` (which Beam runner, configured how), :mod:`~newsclean.pipeline.warc_reader`
(WARC response records -> pages), :mod:`~newsclean.pipeline.stages` (reading, site evidence, filtering, cleaning,
writing), :mod:`~newsclean.pipeline.budget` (the per-page time budget), :mod:`~newsclean.pipeline.dedup` (exact and
near-duplicate removal as graph stages; their decisions, MinHash included, in
:mod:`~newsclean.pipeline.dedup_decisions`), :mod:`~newsclean.pipeline.batches` (the batched executor of the graph),
:mod:`~newsclean.pipeline.incremental` (manifest, corpus index, publishing a run),
:mod:`~newsclean.pipeline.output` (the staged output folder), :mod:`~newsclean.pipeline.summary` (run summary and
dataset card), :mod:`~newsclean.pipeline.progress` (progress on stderr), :mod:`~newsclean.pipeline.launch`
(``--no-wait`` and ``newsclean summarize``), :mod:`~newsclean.pipeline.errors`. The ``newsclean`` command that
drives it is :mod:`newsclean.cli`; nothing here imports the crawler or the demo.
"""

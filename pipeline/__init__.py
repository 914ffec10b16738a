"""The Apache Beam side of newsclean: WARC files in, cleaned articles and rejects in Parquet out.

Modules: :mod:`newsclean.pipeline.warc_reader` (WARC response records -> pages, fastwarc),
:mod:`newsclean.pipeline.stages` (one composite PTransform per stage), :mod:`newsclean.pipeline.clean` (build and run
the pipeline), :mod:`newsclean.pipeline.options` (flags), :mod:`newsclean.pipeline.summary` (run summary).
The ``newsclean`` command that drives it is :mod:`newsclean.cli`.
"""

"""The Apache Beam side of newsclean: WARC files in, cleaned articles and rejects in Parquet out.

Modules: :mod:`pipeline.warc_reader` (WARC response records -> pages, fastwarc),
:mod:`pipeline.stages` (one composite PTransform per stage), :mod:`pipeline.clean` (build and run
the pipeline), :mod:`pipeline.options` (flags), :mod:`pipeline.summary` (run summary),
:mod:`pipeline.cli` (the ``newsclean`` command), plus evaluation and the demo.
"""

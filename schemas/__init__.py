"""The records newsclean stores and the crawl -> clean contract.

* :mod:`newsclean.schemas.records`: pyarrow schemas (versioned) and the dataclasses that mirror them
  (``Page``, ``Article``, ``Reject``, ``StageCounts``, ...).
* :mod:`newsclean.schemas.contract`: WARC extension header names, page types, roles, outcomes and
  reject reasons, imported by both the crawler and the pipeline.

Import from those modules (``from newsclean.schemas.records import Article``); this package
re-exports nothing.
"""

"""``newsclean eval``: the chain, its ablations and peer extractors measured on the shared data sets.

Modules: :mod:`~pipeline.eval.systems` (what runs: named configs, ablations, peers),
:mod:`~pipeline.eval.runner` (neighbour groups, signatures, parallel run, per-page results),
:mod:`~pipeline.eval.metrics` (snippet metric, bootstrap intervals), :mod:`~pipeline.eval.report`
(aggregates, Markdown, CSV), :mod:`~pipeline.eval.command` (arguments and the whole run).
Bag-of-words scoring itself lives in :mod:`pipeline.evaluation`, data loading in :mod:`pipeline.datasets`.
"""

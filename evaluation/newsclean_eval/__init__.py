"""newsclean's evaluation harness (not part of the ``newsclean`` wheel): data-set loaders for ``../shared/data``
(:mod:`~newsclean_eval.datasets`), data-set replay as loopback sites (:mod:`~newsclean_eval.replay`) and
``newsclean eval`` (:mod:`~newsclean_eval.systems`: what runs; :mod:`~newsclean_eval.runner`: neighbour groups
and the parallel run; :mod:`~newsclean_eval.metrics`: snippet metric, bootstrap; :mod:`~newsclean_eval.report`:
aggregates and Markdown; :mod:`~newsclean_eval.command`: arguments and the whole run).
Bag-of-words scoring itself is :mod:`newsclean.demo.scoring` (the demo scores with it too).
"""

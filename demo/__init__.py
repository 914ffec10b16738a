"""The built-in demo (``newsclean demo``): a generated news network served on 127.0.0.x, crawled, cleaned
and scored. Modules: :mod:`~newsclean.demo.network` (the generated sites), :mod:`~newsclean.demo.localsite`
(loopback HTTP servers), :mod:`~newsclean.demo.served` (sites + expected crawl, ``sites.toml``),
:mod:`~newsclean.demo.scoring` (bag-of-words precision/recall/F1), :mod:`~newsclean.demo.run` (the run).
"""

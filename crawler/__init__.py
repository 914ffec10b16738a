"""newsclean's crawler: a config-driven Scrapy spider that writes WARC files per site and category.

Entry points: :func:`crawler.run.run_crawl` (in this process, once), :func:`crawler.run.run_crawl_subprocess`
and ``python -m crawler.run --config sites.toml --out DIR``. Format and layout: ``crawler/README.md``.
(Nothing is imported here, so that ``crawler.localsite`` stays usable without loading Scrapy.)
"""

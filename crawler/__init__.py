"""newsclean's crawler: a config-driven Scrapy spider that writes WARC files per site and category.

Entry points: :func:`newsclean.crawler.run.run_crawl` (in this process, once), :func:`newsclean.crawler.run.run_crawl_subprocess`
and ``python -m newsclean.crawler.run --config sites.toml --out DIR``. Format and layout: ``crawler/README.md``.
(Nothing is imported here, so that ``newsclean.demo.localsite`` stays usable without loading Scrapy.)
"""

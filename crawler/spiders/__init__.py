"""Scrapy spiders (``SPIDER_MODULES``): :class:`newsclean.crawler.spiders.news.NewsSpider`."""

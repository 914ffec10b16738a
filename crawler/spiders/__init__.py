"""Scrapy spiders (``SPIDER_MODULES``): :class:`crawler.spiders.news.NewsSpider`."""

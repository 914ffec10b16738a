"""A Scrapy DNS resolver for crawl tests that never asks a DNS server (``TWISTED_DNS_RESOLVER``).

An IP literal resolves to itself; any host name fails as a name no DNS server knows does (Twisted's
``DNSLookupError``), so a test of an unresolvable host sends no packet beyond loopback, whatever
``/etc/resolv.conf`` names. Crawls run in a child process: the test puts this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import ipaddress

from scrapy.resolver import CachingThreadedResolver
from twisted.internet import defer
from twisted.internet.error import DNSLookupError


class LoopbackOnlyResolver(CachingThreadedResolver):
    """Scrapy's caching resolver for IP literals; every host name is unknown."""

    def getHostByName(self, name: str, timeout=()):  # noqa: N802 (Twisted interface)
        """``name`` itself when it is an IP address, else a failed Deferred (``DNSLookupError``)."""
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return defer.fail(DNSLookupError(f"{name}: no such host (offline test resolver)"))
        return super().getHostByName(name, timeout)

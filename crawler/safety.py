"""Where the crawler may go: configured domains only, http(s) only, public addresses only (by default).

Two layers, because a host name is only known to be safe once it is resolved:

* :class:`SafetyMiddleware`, a downloader middleware at order 50 (it takes the place of Scrapy's
  ``OffsiteMiddleware``, which knows only the union of all sites' domains), checks every request
  before it is sent, redirects and retries included (they go through the downloader middlewares
  again): the scheme is ``http`` or ``https``; the host is inside the ``allowed_domains`` of the
  request's *own* site (robots.txt requests: of any configured site); an IP-literal host is a
  public address unless private networks are allowed. A refused request raises
  :class:`RefusedRequest` (an ``IgnoreRequest``) whose ``reason`` the report shows:
  ``bad_scheme``, ``offsite``, ``offsite_redirect`` or ``private_address``.
* :class:`PublicOnlyResolver`, Scrapy's caching DNS resolver (``TWISTED_DNS_RESOLVER``) that fails
  a lookup whose answer is not a public address with :class:`PrivateAddressError`. Checking at
  resolution time, the address actually connected to, also defeats DNS rebinding.

* :class:`ProxyTargetMiddleware` (order 760, after Scrapy's ``HttpProxyMiddleware``): behind an HTTP
  proxy (``http_proxy``/``https_proxy`` or ``meta["proxy"]``) the crawler resolves only the
  proxy's name, so the target's name is resolved here first and the request refused
  (``private_address``) when it is not a public address.

``allow_private_networks = true`` in ``[crawl]`` (or ``--allow-private-networks``) lifts the address
checks, for tests, the demo and intranet sites; domains and schemes are always checked.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import IgnoreRequest
from scrapy.resolver import CachingThreadedResolver
from twisted.internet.error import DNSLookupError

from newsclean.crawler.config import host_in_domains
from newsclean.crawler.fetch import failure_causes

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response

ALLOWED_SCHEMES = frozenset({"http", "https"})


class RefusedRequest(IgnoreRequest):
    """A request the crawler will not send; ``reason`` is a short code for the report."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class PrivateAddressError(DNSLookupError):
    """A host name resolved to a private, loopback, link-local or otherwise non-public address."""


def is_public_address(address: str) -> bool:
    """Whether the IPv4/IPv6 ``address`` is globally routable unicast (``ipaddress``'s ``is_global``,
    multicast excluded; an IPv4-mapped IPv6 address is judged by its IPv4 part). ``False`` for a
    string that is not an IP address."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def ip_literal(host: str) -> bool:
    """Whether ``host`` is an IP address rather than a name."""
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class SafetyMiddleware:
    """Downloader middleware refusing requests outside the configured sites (see the module docstring).

    Settings: ``NEWSCLEAN_SITE_DOMAINS`` (site name -> list of allowed domains) and
    ``NEWSCLEAN_ALLOW_PRIVATE_NETWORKS`` (bool). The spider's requests carry their site in
    ``meta["newsclean"].site``; other requests (robots.txt) may go to any configured site.
    """

    def __init__(self, site_domains: dict[str, list[str]], allow_private: bool) -> None:
        self.site_domains = {site: tuple(domains) for site, domains in site_domains.items()}
        self.all_domains = tuple(sorted({d for domains in self.site_domains.values() for d in domains}))
        self.allow_private = allow_private

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SafetyMiddleware:
        """Build from the crawler's settings."""
        settings = crawler.settings
        return cls(settings.getdict("NEWSCLEAN_SITE_DOMAINS"), settings.getbool("NEWSCLEAN_ALLOW_PRIVATE_NETWORKS"))

    def process_request(self, request: Request) -> None:
        """Let ``request`` through (``None``) or raise :class:`RefusedRequest`."""
        self.check(request.url, request.meta)

    def check(self, url: str, meta: dict[str, Any]) -> None:
        """Raise :class:`RefusedRequest` when ``url`` (requested with ``meta``) must not be fetched."""
        scheme, _, rest = url.partition("://")
        if scheme.lower() not in ALLOWED_SCHEMES:
            raise RefusedRequest("bad_scheme", f"refused {url}: scheme {scheme!r} is not http(s)")
        task = meta.get("newsclean")
        domains = self.site_domains.get(task.site, ()) if task is not None else self.all_domains
        if not host_in_domains(url, domains):
            reason = "offsite_redirect" if meta.get("redirect_urls") else "offsite"
            raise RefusedRequest(reason, f"refused {url}: host outside the allowed domains {list(domains)}")
        host = _host(url)
        if not self.allow_private and ip_literal(host) and not is_public_address(host):
            raise RefusedRequest("private_address", f"refused {url}: {host} is not a public address "
                                                    "(allow_private_networks is off)")


class ProxyTargetMiddleware:
    """Downloader middleware (order 760): check the *target* host of a request sent through a proxy
    (see the module docstring). Settings: ``NEWSCLEAN_ALLOW_PRIVATE_NETWORKS`` (then it does nothing).
    Raises :class:`RefusedRequest` with ``private_address``, or ``dns`` when the name does not resolve."""

    def __init__(self, allow_private: bool) -> None:
        self.allow_private = allow_private

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProxyTargetMiddleware:
        """Build from the crawler's settings."""
        return cls(crawler.settings.getbool("NEWSCLEAN_ALLOW_PRIVATE_NETWORKS"))

    async def process_request(self, request: Request) -> None:
        """Let a proxied request through only when its host resolves to a public address."""
        if self.allow_private or not request.meta.get("proxy"):
            return
        from scrapy.utils.defer import maybe_deferred_to_future  # noqa: PLC0415
        from twisted.internet import reactor  # noqa: PLC0415

        host = _host(request.url)
        if ip_literal(host):
            address = host
        else:
            try:
                address = await maybe_deferred_to_future(reactor.resolve(host))
            except Exception as exc:  # noqa: BLE001 (refused or unresolvable: either way not sent)
                if is_private_address_failure(exc, host):
                    address = "0.0.0.0"  # noqa: S104 (a marker: not public)
                else:
                    raise RefusedRequest("dns", f"refused {request.url}: {host} does not resolve "
                                                "(checked before sending it to the proxy)") from exc
        if not is_public_address(address):
            raise RefusedRequest("private_address", f"refused {request.url} via proxy: {host} resolves to "
                                                    f"{address}, not a public address (allow_private_networks is off)")


def _host(url: str) -> str:
    from urllib.parse import urlsplit  # noqa: PLC0415 (cheap, keeps the import list short)

    return urlsplit(url).hostname or ""


class PublicOnlyResolver(CachingThreadedResolver):
    """Scrapy's caching threaded resolver, failing lookups that answer a non-public address with
    :class:`PrivateAddressError` (Scrapy's download handler reports it as ``CannotResolveHostError``
    with this error as its cause). Installed by :func:`newsclean.crawler.settings.build_settings` unless
    private networks are allowed."""

    def getHostByName(self, name: str, timeout=()):  # noqa: N802 (Twisted interface)
        """Resolve ``name``; the Deferred fails with :class:`PrivateAddressError` for a non-public answer."""
        d = super().getHostByName(name, timeout)
        d.addCallback(self._check_public, name)
        return d

    @staticmethod
    def _check_public(address: str, name: str) -> str:
        if not is_public_address(address):
            REFUSED_HOSTS.add(name.lower())
            raise PrivateAddressError(f"{name} resolves to {address}, not a public address "
                                      "(allow_private_networks is off)")
        return address


#: Host names :class:`PublicOnlyResolver` refused in this process. Twisted's name resolution wraps the
#: resolver's error into a plain "no results" ``DNSLookupError``, so the refusal is remembered here.
REFUSED_HOSTS: set[str] = set()


def is_private_address_failure(exc: BaseException, host: str | None = None) -> bool:
    """Whether ``exc`` is, wraps or lists (:func:`~newsclean.crawler.fetch.failure_causes`) a
    :class:`PrivateAddressError` (or an error saying "not a public address"), or is a DNS failure for a
    ``host`` that :class:`PublicOnlyResolver` refused."""
    if host and host.lower() in REFUSED_HOSTS and is_dns_failure(exc):
        return True
    return any(isinstance(cause, PrivateAddressError) or "not a public address" in str(cause)
               for cause in failure_causes(exc))


def is_dns_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says a host name did not resolve (Twisted's ``DNSLookupError``, Scrapy's
    ``CannotResolveHostError``); :func:`is_private_address_failure` tells a refused answer from a missing one."""
    from scrapy.exceptions import CannotResolveHostError  # noqa: PLC0415

    return isinstance(exc, (DNSLookupError, CannotResolveHostError))


def refused_redirect_target(response: Response) -> str | None:
    """The absolute ``Location`` of a 3xx ``response`` whose scheme is not http(s) (``file:``, ``ftp:``,
    ``data:``, ...), which Scrapy's RedirectMiddleware does not follow; ``None`` for any other response."""
    from urllib.parse import urljoin, urlsplit  # noqa: PLC0415

    location = response.headers.get("Location")
    if not 300 <= response.status < 400 or not location:
        return None
    target = urljoin(response.url, location.decode("latin-1").strip())
    return None if urlsplit(target).scheme.lower() in ALLOWED_SCHEMES else target

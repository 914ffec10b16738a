"""Serve in-memory web sites on loopback addresses, for the demo, the tests and the real-data replay.

A :class:`StaticSite` maps URL paths to :class:`Resource` (status, headers, body bytes, an optional
delay before answering) or to a callable ``(hit: int) -> Resource`` for endpoints whose answer
changes from one request to the next (``hit`` counts the requests for that path, from 1). A
:class:`LocalSites` context manager starts one threaded HTTP server per site, each on its own
loopback address (127.0.0.2, 127.0.0.3, ...) so that every site is a distinct origin and host
(Scrapy's offsite filtering compares hosts, not ports). Only 127.0.0.0/8 is ever bound:
:func:`loopback_host` raises ``ValueError`` for anything else.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Resource:
    """One HTTP response: ``status`` code, ``body`` bytes, extra ``headers`` (name -> value) and ``delay``,
    seconds to wait before answering (a slow server)."""

    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


@dataclass
class StaticSite:
    """A site: ``name`` and a map of URL path (``/a/b.html``) to :class:`Resource`.

    A ``/robots.txt`` allowing everything is added unless the site provides one. ``received`` maps
    each requested path to the request headers (name -> value) of its latest GET.
    """

    name: str
    resources: dict[str, Resource | Callable[[int], Resource]] = field(default_factory=dict)
    hits: Counter = field(default_factory=Counter)
    received: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, path: str, body: bytes | str, **kwargs) -> None:
        """Add ``body`` at ``path``; ``str`` bodies are encoded as UTF-8."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.resources[path] = Resource(data, **kwargs)


def loopback_host(index: int) -> str:
    """The loopback address for site number ``index`` (0 -> 127.0.0.2); raises ValueError past 127.0.0.254."""
    host = f"127.0.0.{index + 2}"
    if not ipaddress.ip_address(host).is_loopback or index + 2 > 254:
        raise ValueError(f"site index {index} gives no loopback address")
    return host


class _Handler(BaseHTTPRequestHandler):
    site: StaticSite  # set on the per-site subclass

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        res = self.site.resources.get(path)
        self.site.hits[path] += 1
        self.site.received[path] = dict(self.headers.items())
        if callable(res):
            res = res(self.site.hits[path])
        if res is None and path == "/robots.txt":
            res = Resource(b"User-agent: *\nAllow: /\n", content_type="text/plain")
        if res is None:
            res = Resource(b"<html><body><h1>Not found</h1></body></html>", status=404)
        if res.delay:
            time.sleep(res.delay)
        try:
            self.send_response(res.status)
            if res.content_type:
                self.send_header("Content-Type", res.content_type)
            for name, value in res.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(res.body)))
            self.end_headers()
            self.wfile.write(res.body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout under test)
            self.close_connection = True

    def log_message(self, *args) -> None:  # keep test and demo output quiet
        pass


class _Server(ThreadingHTTPServer):
    """Threaded server with a listen backlog large enough for a crawler's burst of connections
    (``socketserver``'s default of 5 makes connects time out under load)."""

    request_queue_size = 128
    daemon_threads = True


def _bind(host: str, port: int, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """A server on ``host:port``, or on a port the OS picks when ``port`` is 0 or cannot be bound."""
    if port:
        try:
            return _Server((host, port), handler)
        except OSError:
            pass
    return _Server((host, 0), handler)


class LocalSites:
    """Context manager serving several :class:`StaticSite` on distinct loopback hosts.

    ``base_urls[name]`` gives ``http://127.0.0.N:PORT`` for each site once started. ``port``: the port every
    site is served on (each has its own host), so that its URLs are the same from run to run; 0, or a port
    already taken on a site's host, gives that site a port the OS picks.
    """

    def __init__(self, sites: list[StaticSite], port: int = 0):
        self.sites = sites
        self.port = port
        self.base_urls: dict[str, str] = {}
        self._servers: list[ThreadingHTTPServer] = []

    def __enter__(self) -> LocalSites:
        for i, site in enumerate(self.sites):
            handler = type(f"Handler_{i}", (_Handler,), {"site": site})
            server = _bind(loopback_host(i), self.port, handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
            host, port = server.server_address[:2]
            self.base_urls[site.name] = f"http://{host}:{port}"
            self._servers.append(server)
        return self

    def __exit__(self, *exc) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

"""The crawl report: per site and category, what was fetched, stored, skipped and why, what failed and why.

:class:`CrawlReport` is filled in while the crawl runs (by the item pipeline, and by the spider
for known articles it skips); :class:`CrawlSummary` is the finished report of one crawl process,
printed at the end (:meth:`CrawlSummary.format`) and written as JSON next to the WARC files
(``OUT/crawl-report-<UTC stamp>-<serial>.json``, :meth:`CrawlSummary.to_json`).

Counts per (site, category):

``fetched``
    pages that got an HTTP response (redirect hops and retries of one page count once);
``responses``
    HTTP responses recorded as WARC response records (every hop and attempt);
``stored``
    article pages stored (2xx HTML);
``listings``
    listing pages, feeds, sitemaps and robots.txt files fetched and followed;
``skipped_known``
    article links not fetched because the crawl store knows them;
``skipped``
    reason -> count: ``non_html:<content type>``, ``binary:<content type>``, ``robots_txt``,
    ``redirect_to_known``;
``failed``
    reason -> count: ``http_<status>``, ``timeout``, ``too_large``, ``redirect_loop``,
    ``max_redirects``, ``offsite``, ``offsite_redirect``, ``bad_scheme`` (a URL or a redirect target that is not
    http(s)), ``private_address``, ``dns`` (the host name did not resolve), ``connection``, ``data_loss``,
    ``not_http`` (the reply was not HTTP), ``storage_error`` (fetched, but the WARC records could not be
    written), ``error:<exception>``;
``bytes``
    response bodies received, as received (content-encoded), summed over all responses;
``duration_s``
    from the first request of the category to its last outcome.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CategoryReport:
    """Counts of one (site, category); see the module docstring for each field."""

    fetched: int = 0
    responses: int = 0
    stored: int = 0
    listings: int = 0
    skipped_known: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)
    bytes: int = 0
    duration_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (reason maps sorted)."""
        data = dataclasses.asdict(self)
        data["skipped"] = dict(sorted(self.skipped.items()))
        data["failed"] = dict(sorted(self.failed.items()))
        data["duration_s"] = round(self.duration_s, 3)
        return data

    def format(self) -> str:
        """One line: ``fetched 12, stored 5, listings 2, skipped-known 0, skipped 1 (...), failed 3 (...), 12.3 KiB, 1.20 s``."""
        def reasons(counts: dict[str, int]) -> str:
            total = sum(counts.values())
            inner = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            return f"{total} ({inner})" if inner else "0"

        return (f"fetched {self.fetched}, stored {self.stored}, listings {self.listings}, "
                f"skipped-known {self.skipped_known}, skipped {reasons(self.skipped)}, "
                f"failed {reasons(self.failed)}, {self.bytes / 1024:.1f} KiB, {self.duration_s:.2f} s")


class CrawlReport:
    """Running report of one crawl process: a :class:`CategoryReport` per (site, category).

    Times are ``time.monotonic()`` seconds; :meth:`category` gives (and creates) an entry.
    """

    def __init__(self) -> None:
        self.categories: dict[tuple[str, str], CategoryReport] = {}
        self.statuses: Counter[int] = Counter()
        self._first: dict[tuple[str, str], float] = {}
        self._last: dict[tuple[str, str], float] = {}

    def category(self, site: str, category: str) -> CategoryReport:
        """The entry of (site, category), created empty if needed."""
        key = (site, category)
        if key not in self.categories:
            self.categories[key] = CategoryReport()
        return self.categories[key]

    def started(self, site: str, category: str) -> None:
        """Note that a request of (site, category) was issued (the start of its duration)."""
        self._first.setdefault((site, category), time.monotonic())
        self.category(site, category)

    def skipped_known(self, site: str, category: str) -> None:
        """Count a known article link that was not fetched."""
        self.started(site, category)
        self.category(site, category).skipped_known += 1
        self._touch(site, category)

    def add_outcome(self, site: str, category: str, outcome: str, reason: str | None,
                    statuses: list[int], body_bytes: int) -> None:
        """Count one page: its ``outcome`` (``stored``, ``listing``, ``skipped``, ``failed``) and
        ``reason``, the HTTP ``statuses`` of its responses and their total ``body_bytes``."""
        self.started(site, category)
        entry = self.category(site, category)
        if statuses:
            entry.fetched += 1
        entry.responses += len(statuses)
        entry.bytes += body_bytes
        self.statuses.update(statuses)
        if outcome == "stored":
            entry.stored += 1
        elif outcome == "listing":
            entry.listings += 1
        else:
            bucket = entry.skipped if outcome == "skipped" else entry.failed
            bucket[reason or "unknown"] = bucket.get(reason or "unknown", 0) + 1
        self._touch(site, category)

    def _touch(self, site: str, category: str) -> None:
        key = (site, category)
        now = time.monotonic()
        self._last[key] = now
        self.categories[key].duration_s = now - self._first.get(key, now)


#: Reasons for which the crawler itself refused a page (skipped or failed, :class:`CategoryReport`), each with
#: the setting that would allow it (``None``: no setting does).
REFUSAL_SETTINGS: dict[str, str | None] = {
    "private_address": "allow_private_networks = true in [crawl] (or --allow-private-networks) allows hosts on "
                       "private, loopback and link-local addresses",
    "robots_txt": "obey_robots = false in [crawl] ignores robots.txt (only for sites you run or may crawl so)",
    "robots_unavailable": "robots.txt could not be fetched, which disallows the host (RFC 9309 2.3.1.4); "
                          "obey_robots = false in [crawl] ignores robots.txt",
    "offsite": "add the host to the site's allowed_domains",
    "offsite_redirect": "the start URL redirects to another host: add that host to the site's allowed_domains, "
                        "or start from the URL it redirects to",
    "bad_scheme": None,
}

#: Reasons for which a page could not be fetched at all, each with what it means and what to check (no setting
#: of the crawler changes them).
UNREACHABLE_HINTS: dict[str, str] = {
    "dns": "the host name did not resolve: check the host in the URL, and this machine's DNS and network",
    "not_http": "the server's reply was not HTTP: check the URL's scheme and port",
}


def refusal_message(reasons: dict[str, int]) -> str:
    """One line naming each reason of ``reasons`` (reason -> pages) with its setting (:data:`REFUSAL_SETTINGS`)
    or its meaning (:data:`UNREACHABLE_HINTS`)."""
    parts = []
    for reason, count in sorted(reasons.items()):
        hint = REFUSAL_SETTINGS.get(reason) or UNREACHABLE_HINTS.get(reason) or "no setting allows it"
        parts.append(f"{reason} ({count}): {hint}")
    return "; ".join(parts)


@dataclass(frozen=True)
class RecoveredWarc:
    """A ``.open`` WARC leftover repaired at the start of the crawl (see :func:`newsclean.crawler.warc.recover_open_files`)."""

    path: str
    final: str | None
    kept: int
    dropped: int


@dataclass(frozen=True)
class CrawlSummary:
    """What one crawl process did: the crawl report plus the WARC files.

    Attributes:
        warc_files: paths of the WARC files this process closed, in closing order.
        responses: response records per ``(site, category)``.
        statuses: response records per HTTP status code.
        warc_bytes: total size of those WARC files, in bytes (compressed).
        payload_bytes: total size of the stored response bodies as received, in bytes.
        requests: requests Scrapy sent (robots.txt and retries included).
        finish_reason: Scrapy's finish reason (``"finished"`` for a crawl that ran out of work,
            ``"shutdown"`` after a signal).
        elapsed_s: wall time of the crawl in seconds.
        categories: the :class:`CategoryReport` of every (site, category).
        job: the crawl job id; ``resumed``: whether this process resumed an unfinished job.
        recovered: WARC leftovers of a killed crawl repaired at start.
        report_path: where the JSON report was written (``None`` if it was not).
    """

    warc_files: tuple[str, ...] = ()
    responses: dict[tuple[str, str], int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    warc_bytes: int = 0
    payload_bytes: int = 0
    requests: int = 0
    finish_reason: str | None = None
    elapsed_s: float = 0.0
    categories: dict[tuple[str, str], CategoryReport] = field(default_factory=dict)
    job: str | None = None
    resumed: bool = False
    recovered: tuple[RecoveredWarc, ...] = ()
    report_path: str | None = None

    @property
    def total_responses(self) -> int:
        """Response records written, over all sites and categories."""
        return sum(self.responses.values())

    def total(self, name: str) -> int:
        """Sum of the count ``name`` (``fetched``, ``stored``, ``listings``, ``skipped_known``, ``bytes``)
        over every category; for ``skipped`` / ``failed`` the number of pages."""
        values = [getattr(c, name) for c in self.categories.values()]
        return sum(sum(v.values()) if isinstance(v, dict) else v for v in values)

    def reasons(self, kind: str) -> dict[str, int]:
        """``skipped`` or ``failed`` reasons summed over every category."""
        out: Counter[str] = Counter()
        for entry in self.categories.values():
            out.update(getattr(entry, kind))
        return dict(out)

    def start_refusal(self) -> str | None:
        """Why nothing was fetched, when the crawl got no page at all (no article stored, no listing, feed,
        sitemap or robots.txt followed) and every page it tried was refused by the crawler itself
        (:data:`REFUSAL_SETTINGS`: private address, robots.txt, off the site's domains) or could not be reached
        (:data:`UNREACHABLE_HINTS`: a host name that did not resolve, a reply that was not HTTP): a message naming
        the setting that would allow each, or what to check. ``None`` otherwise (some page was fetched, or a page
        failed for another reason, e.g. a 404 or a timeout)."""
        if self.total("stored") or self.total("listings"):
            return None
        reasons = dict(Counter(self.reasons("skipped")) + Counter(self.reasons("failed")))
        if not reasons or any(reason not in REFUSAL_SETTINGS and reason not in UNREACHABLE_HINTS for reason in reasons):
            return None
        refused = all(reason in REFUSAL_SETTINGS for reason in reasons)
        return (f"nothing was fetched: every start point was {'refused' if refused else 'refused or unreachable'}: "
                + refusal_message(reasons))

    def to_json(self) -> str:
        """JSON text; :meth:`from_json` reads it back to an equal summary. ``sites`` nests the
        category reports as ``{site: {category: {...}}}``."""
        sites: dict[str, dict[str, Any]] = {}
        for (site, cat), entry in sorted(self.categories.items()):
            sites.setdefault(site, {})[cat] = entry.to_dict()
        data = {
            "job": self.job, "resumed": self.resumed, "finish_reason": self.finish_reason,
            "elapsed_s": self.elapsed_s, "requests": self.requests,
            "totals": {name: self.total(name) for name in
                       ("fetched", "stored", "listings", "skipped_known", "skipped", "failed", "bytes")},
            "sites": sites,
            "warc_files": list(self.warc_files), "warc_bytes": self.warc_bytes,
            "payload_bytes": self.payload_bytes,
            "responses": [[s, c, n] for (s, c), n in sorted(self.responses.items())],
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "recovered": [dataclasses.asdict(r) for r in self.recovered],
            "report_path": self.report_path,
        }
        return json.dumps(data, indent=2)

    @classmethod
    def from_json(cls, text: str) -> CrawlSummary:
        """Parse what :meth:`to_json` wrote; raises ``ValueError`` (or ``KeyError``) on other input."""
        data = json.loads(text)
        categories = {(site, cat): CategoryReport(**entry)
                      for site, cats in data.get("sites", {}).items() for cat, entry in cats.items()}
        return cls(
            warc_files=tuple(data["warc_files"]),
            responses={(s, c): n for s, c, n in data["responses"]},
            statuses={int(k): v for k, v in data["statuses"].items()},
            warc_bytes=data["warc_bytes"], payload_bytes=data["payload_bytes"], requests=data["requests"],
            finish_reason=data["finish_reason"], elapsed_s=data["elapsed_s"], categories=categories,
            job=data.get("job"), resumed=data.get("resumed", False),
            recovered=tuple(RecoveredWarc(**r) for r in data.get("recovered", [])),
            report_path=data.get("report_path"),
        )

    def format(self) -> str:
        """Lines for humans: totals, statuses, then one line per site/category."""
        lines = [
            f"crawl {self.finish_reason or 'did not finish'} in {self.elapsed_s:.2f} s: "
            f"{self.total_responses} responses recorded in {len(self.warc_files)} WARC files "
            f"({self.warc_bytes / 1024:.1f} KiB; {self.requests} requests sent)"
            + (f"; resumed job {self.job}" if self.resumed else ""),
            "  by status: " + (" ".join(f"{k}={v}" for k, v in sorted(self.statuses.items())) or "-"),
        ]
        lines += [f"  {s}/{c}: {entry.format()}" for (s, c), entry in sorted(self.categories.items())]
        if self.recovered:
            lines.append(f"  recovered {len(self.recovered)} WARC leftover(s) of a killed crawl")
        if self.report_path:
            lines.append(f"  report: {self.report_path}")
        return "\n".join(lines)

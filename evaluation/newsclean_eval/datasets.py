"""Loaders for the real evaluation data sets in ``../shared/data`` (formats per each ``<name>.md``).

Every loader yields :class:`EvalPage` records: the raw HTML bytes, a neighbour *group* (the
pages of one site, and of one category where the data has one: msv-big9 site + year,
cleanportaleval site section, dragnet site; the single-page sets give every page its own
group), and the gold: plain text, or must-contain / must-not-contain snippets
(trafilatura-eval). :func:`data_root` finds the unpacked data, running ``unpack.sh`` when needed;
:func:`decode_gold` is the one decoder of gold files (mixed UTF-8 / cp1252; mojibake repaired).

Used by ``newsclean eval`` (:mod:`newsclean_eval`), the msv-big9 replay (:mod:`newsclean_eval.replay`)
and ``scripts/train_block_classifier.py``. Raises ``FileNotFoundError`` (with the path) when the
shared data are absent.
"""

from __future__ import annotations

import csv
import functools
import gzip
import hashlib
import html as htmllib
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import ftfy
import lxml.html

REPO_ROOT = Path(__file__).resolve().parents[2]
COMMENTS_MARKER = "!@#$%^&*()  COMMENTS"
_WRAPPER_OPEN = re.compile(rb"^\s*<text\b[^>]*>", re.I)
_WRAPPER_ID = re.compile(rb"""<text\b[^>]*\bid\s*=\s*["']([^"']*)["']""", re.I)
_WRAPPER_CLOSE = re.compile(rb"</text>\s*$", re.I)
_CLEANEVAL_TAG = re.compile(r"^\s*<(?:h|p|l)>\s*", re.I | re.M)
#: A gold file whose only content is an HTML comment is the annotators' "no main content" marker
#: (CleanPortalEval bbc.co.uk_news_04: ``<!-- this page contains no article -->``), i.e. empty gold.
_NO_CONTENT_MARKER = re.compile(r"\A\s*<!--.*?-->\s*\Z", re.S)


@dataclass(frozen=True)
class EvalPage:
    """One page with gold. ``gold`` is plain text (None for snippet-only gold); ``url`` may be None."""

    dataset: str
    group: str
    page_id: str
    html: bytes
    gold: str | None
    url: str | None = None
    must_contain: tuple[str, ...] = ()
    must_not_contain: tuple[str, ...] = ()
    site: str | None = None  # the site when a group is finer (msv-big9: site/year); None = the group
    date: str | None = None  # the publication date the set's gold gives (ISO 8601 text), where it gives one
    page_type: str = "article"  # the gold page type: wcxb-dev's label (article, listing, product, ...), else article

    @property
    def split(self) -> str:
        """``tune`` or ``test``: :func:`split_of` this page."""
        return split_of(self.dataset, self.site or self.group)


TUNE_SHARE = 0.5

#: Pages dated before this year are of the older markup era (HTML 4, tables, few structural marks), the others of
#: the modern one; from :data:`RECENT_YEAR` on, of today's (:func:`page_era`).
ERA_YEAR = 2015
RECENT_YEAR = 2020
ERAS = (f"before {ERA_YEAR}", f"{ERA_YEAR}+", f"{RECENT_YEAR}+", "undated")
#: The era labels each reported era covers: ``2015+`` is every page from 2015 on, ``2020+`` included
#: (:func:`page_era` labels a page with the finest era, so a 2021 page is ``2020+``).
ERA_MEMBERS = {ERAS[0]: {ERAS[0]}, ERAS[1]: {ERAS[1], ERAS[2]}, ERAS[2]: {ERAS[2]}, ERAS[3]: {ERAS[3]}}
#: Data sets whose README says when all their pages were collected: that year bounds every page's date
#: (dragnet: Moz 2012; cleaneval: the 2007 shared task; cleanportaleval: collected for Endrédy & Novák 2013).
COLLECTED_BY = {"dragnet": 2012, "cleaneval": 2007, "cleanportaleval": 2013}


def page_year(page: EvalPage, published: datetime | None = None) -> int | None:
    """The year of ``page``, as far as can be told: msv-big9's crawl year (its group, ``site/YYYY``); the
    collection year of a set in :data:`COLLECTED_BY`; the date the set's gold gives (``page.date``:
    trafilatura-eval's ``date``, Readability's ``publishedTime``); else the page's own publication date
    (``published``: ``Metadata.published_at``, JSON-LD, meta tags or htmldate). None when none is known."""
    if page.dataset == "msv-big9":
        return int(page.group.rsplit("/", 1)[1])
    if page.dataset in COLLECTED_BY:
        return COLLECTED_BY[page.dataset]
    if page.date and page.date[:4].isdigit():
        return int(page.date[:4])
    return published.year if published is not None else None


def page_era(page: EvalPage, published: datetime | None = None) -> str:
    """One of :data:`ERAS`, the finest: before :data:`ERA_YEAR`, from it to before :data:`RECENT_YEAR`
    (``2015+``), from :data:`RECENT_YEAR` on (``2020+``), by :func:`page_year`; ``undated`` when unknown. A
    report's ``2015+`` row covers the ``2020+`` pages too (:data:`ERA_MEMBERS`)."""
    year = page_year(page, published)
    if year is None:
        return ERAS[3]
    return ERAS[0] if year < ERA_YEAR else ERAS[1] if year < RECENT_YEAR else ERAS[2]


def split_of(dataset: str, site: str, tune_share: float = TUNE_SHARE) -> str:
    """Deterministic tune/test split by site: SHA-1 of ``dataset:site`` mapped to [0, 1).

    Splitting by site (not by page) keeps every page of a site, and so its template, on one side:
    what is tuned on never leaks a template into what is reported. Single-page data sets have one
    page per "site" (the page id), so they split by page.
    """
    digest = hashlib.sha1(f"{dataset}:{site}".encode()).digest()
    return "tune" if int.from_bytes(digest[:8], "big") / 2**64 < tune_share else "test"


def shared_data_dir() -> Path | None:
    """The shared data folder (the one holding ``unpack.sh``), or None when absent.

    ``$NEWSCLEAN_SHARED`` when set (naming the ``shared`` folder or its ``data`` folder), else
    ``../shared/data`` beside the repository.
    """
    env = os.environ.get("NEWSCLEAN_SHARED")
    candidates = [Path(env), Path(env) / "data"] if env else [REPO_ROOT.parent / "shared" / "data"]
    return next((c for c in candidates if (c / "unpack.sh").is_file()), None)


def unpacked_dir() -> Path:
    """Where the data sets are unpacked: ``$NEWSCLEAN_DATA``, else ``~/.cache/newsclean-data`` (as unpack.sh)."""
    return Path(os.environ.get("NEWSCLEAN_DATA") or Path.home() / ".cache" / "newsclean-data")


def data_root() -> Path:
    """Folder holding the unpacked data sets (``<root>/<name>/``).

    Where the shared data exist, runs their ``unpack.sh`` (idempotent: it re-unpacks only a changed
    tarball) into :func:`unpacked_dir` first; otherwise an already unpacked :func:`unpacked_dir` is used.
    Raises FileNotFoundError when neither exists.
    """
    shared, root = shared_data_dir(), unpacked_dir()
    if shared is not None:
        out = subprocess.run(["bash", str(shared / "unpack.sh"), str(root)], check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()
        return Path(out[-1]) if out else root
    if root.is_dir():
        return root
    raise FileNotFoundError(f"no shared data: neither ../shared/data/unpack.sh (or $NEWSCLEAN_SHARED) "
                            f"nor an unpacked {root} exists")


def decode_gold(data: bytes) -> str:
    """Text of a gold file's bytes: UTF-8 (BOM dropped) when it decodes strictly, else Windows-1252,
    then mojibake repaired by :func:`repair_mojibake`.

    The data sets mix both. Bytes that cp1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) fall
    back to Latin-1, so decoding never fails and never invents U+FFFD. Line ends become ``\\n``.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = "".join(_cp1252_char(b) for b in data)
    return repair_mojibake(text.replace("\r\n", "\n").replace("\r", "\n"))


def repair_mojibake(text: str) -> str:
    """``text`` with UTF-8 that was once read as Latin-1/cp1252 turned back (``SÃ¸ren`` -> ``Søren``).

    45 CleanEval gold files store such double-encoded text while their pages are plain cp1252; left
    as it is, a correct decode of the page would lose those words. ftfy's ``fix_encoding`` only
    changes text whose mojibake is unambiguous, so correct text passes unchanged.
    """
    return ftfy.fix_encoding(text)


def _cp1252_char(byte: int) -> str:
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return chr(byte)


def read_text_file(path: Path | str) -> str:
    """Text of a gold file, decoded by :func:`decode_gold`. Raises OSError when unreadable."""
    return decode_gold(Path(path).read_bytes())


def unwrap_cleaneval(html: bytes) -> tuple[bytes, str | None]:
    """Strip the CleanEval ``<text id="URL" ...> ... </text>`` wrapper; returns (html, url)."""
    m = _WRAPPER_ID.search(html[:2000])
    url = m.group(1).decode("utf-8", "replace") if m else None
    return _WRAPPER_CLOSE.sub(b"", _WRAPPER_OPEN.sub(b"", html, count=1)), url


def cleaneval_gold_text(text: str) -> str:
    """Plain text of CleanEval-markup gold: drop the ``URL:`` line (the first non-blank line; 60 of the 71
    CleanPortalEval gold files open with a blank line) and ``<h>/<p>/<l>`` markers, unescape entities.
    A gold that is nothing but one HTML comment (the "this page contains no article" marker) is empty;
    a comment inside gold text (a code listing shown on the page) stays."""
    lines = text.lstrip("\r\n").splitlines()
    if lines and lines[0].startswith("URL:"):
        lines = lines[1:]
    body = "\n".join(lines)
    if _NO_CONTENT_MARKER.match(body):
        return ""
    return htmllib.unescape(_CLEANEVAL_TAG.sub("", body)).strip()


def _csv_rows(path: Path) -> list[dict[str, str]]:
    """Rows of a UTF-8 CSV file with a header line (the file is closed before returning)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def load_msv_big9(root: Path) -> Iterator[EvalPage]:
    """msv-big9: 9 news sites x 3 years x 10 pages; group = site/year."""
    base = root / "msv-big9"
    for row in _csv_rows(base / "sites.csv"):
        site = row["site"].split(" ")[0]
        yield EvalPage("msv-big9", f"{site}/{row['year']}", row["html"], (base / row["html"]).read_bytes(),
                       read_text_file(base / row["gold"]), site=site)


def load_dragnet(root: Path) -> Iterator[EvalPage]:
    """dragnet (site-clustered subset): group = inferred site; gold text before the comments marker."""
    base = root / "dragnet"
    for row in _csv_rows(base / "sites.csv"):
        if row["included_here"] != "yes":
            continue
        name = row["html_file"]
        gold = read_text_file(base / "Corrected" / f"{name}.corrected.txt").split(COMMENTS_MARKER)[0]
        yield EvalPage("dragnet", row["inferred_site"], name, (base / "HTML" / name).read_bytes(), gold.strip())


def load_cleanportaleval(root: Path) -> Iterator[EvalPage]:
    """cleanportaleval: ``<site>_<section>_<NN>.html``; group = site section."""
    base = root / "cleanportaleval"
    for path in sorted((base / "input").glob("*.html")):
        html, url = unwrap_cleaneval(path.read_bytes())
        gold = cleaneval_gold_text(read_text_file(base / "GoldStandard" / f"{path.stem}.txt"))
        yield EvalPage("cleanportaleval", path.stem.rsplit("_", 1)[0], path.name, html, gold, url)


def load_cleaneval(root: Path) -> Iterator[EvalPage]:
    """cleaneval dev + final pages that have gold; every page is its own group."""
    base = root / "cleaneval"
    sets = (("cleaneval-dev", "input", "{}-cleaned.txt"), ("cleaneval-final", "finalrun-input", "{}.txt"))
    for folder, inputs, gold_name in sets:
        for path in sorted((base / folder / inputs).glob("*.html"), key=lambda p: int(p.stem) if p.stem.isdigit() else 0):
            gold_path = base / folder / "GoldStandard" / gold_name.format(path.stem)
            if not gold_path.exists():
                continue
            html, url = unwrap_cleaneval(path.read_bytes())
            pid = f"{folder}/{path.name}"
            yield EvalPage("cleaneval", pid, pid, html, cleaneval_gold_text(read_text_file(gold_path)), url)


def html_text(markup: str) -> str:
    """Text content of decoded HTML. The caller decodes: lxml given bytes without a charset
    declaration reads them as Latin-1 (every non-ASCII character of Readability's UTF-8
    ``expected.html`` files would turn to mojibake)."""
    return lxml.html.document_fromstring(markup).text_content()


def load_readability(root: Path) -> Iterator[EvalPage]:
    """Mozilla Readability test pages: gold = text of ``expected.html``; every page its own group."""
    base = root / "readability-test-pages" / "test-pages"
    for case in sorted(p for p in base.iterdir() if (p / "source.html").exists()):
        expected = (case / "expected.html").read_bytes()
        gold = html_text(decode_gold(expected)) if expected.strip() else ""
        meta_path = case / "expected-metadata.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.exists() else {}
        yield EvalPage("readability-test-pages", case.name, case.name, (case / "source.html").read_bytes(), gold,
                       date=meta.get("publishedTime") or None)


def load_trafilatura(root: Path) -> Iterator[EvalPage]:
    """trafilatura-eval subset: snippet gold (must contain / must not contain); every page its own group."""
    base = root / "trafilatura-eval"
    gold = json.loads((base / "evaldata.json").read_text(encoding="utf-8"))
    for row in _csv_rows(base / "subset.csv"):
        path = base / row["folder"] / row["file"]
        if row["included_here"] != "yes" or not path.exists():
            continue
        entry = gold[row["url"]]
        yield EvalPage("trafilatura-eval", row["url"], row["file"], path.read_bytes(), None, row["url"],
                       tuple(entry.get("with", ())), tuple(entry.get("without", ())),
                       date=str(entry.get("date") or "") or None)


def load_wcxb(root: Path) -> Iterator[EvalPage]:
    """WCXB development set (2018–2026): gold = ``ground_truth.main_content``, ``page_type`` = upstream's
    ``_internal.page_type.primary``, date = ``ground_truth.publish_date``; every page its own group
    (one page per domain, mostly)."""
    base = root / "wcxb-dev"
    for path in sorted((base / "ground-truth").glob("*.json")):
        entry = json.loads(path.read_text(encoding="utf-8"))
        truth = entry["ground_truth"]
        html = gzip.decompress((base / "html" / f"{path.stem}.html.gz").read_bytes())
        kind = entry["_internal"]["page_type"]["primary"]
        yield EvalPage("wcxb-dev", path.stem, path.stem, html, truth.get("main_content") or "", entry.get("url"),
                       date=str(truth.get("publish_date") or "") or None, page_type=kind)


LOADERS: dict[str, Callable[[Path], Iterator[EvalPage]]] = {
    "msv-big9": load_msv_big9,
    "dragnet": load_dragnet,
    "cleanportaleval": load_cleanportaleval,
    "cleaneval": load_cleaneval,
    "readability-test-pages": load_readability,
    "trafilatura-eval": load_trafilatura,
    "wcxb-dev": load_wcxb,
}
NEIGHBOUR_SETS = ("msv-big9", "dragnet", "cleanportaleval")


def load(name: str, root: Path | None = None) -> list[EvalPage]:
    """All pages of data set ``name`` (a key of :data:`LOADERS`), a new list each call; read and decoded once a
    process (the pages are frozen). Raises KeyError for an unknown name."""
    return list(_loaded(name, root or data_root()))


@functools.cache
def _loaded(name: str, root: Path) -> tuple[EvalPage, ...]:
    return tuple(LOADERS[name](root))

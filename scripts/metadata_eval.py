"""Measure article metadata on the shared pages, before (git HEAD~ metadata module) and after; write evaluation/results/metadata-eval.md.

    .venv/bin/python scripts/metadata_eval.py [--before-rev REV] [--out evaluation/results/metadata-eval.md] [--timing-pages 200]

Needs the evaluation harness (``pip install -e ./evaluation``) and the shared data (``newsclean_eval.datasets``).

Gold:
- dates: msv-big9 pages were saved in the crawl year of their folder (big5-05/09/13 -> 2005/2009/2013): the
  right year is that year. The exact day where the page's own URL (canonical / og:url / the archived URL,
  ``/YYYY/MM/DD/``) or cleanportaleval's source URL carries one.
- language: msv-big9, dragnet and cleanportaleval are English news sites (their data cards); trafilatura-eval
  pages carry the language their curators filtered on (``<html lang>``, see shared/data/trafilatura-eval.md).
  "Before" is the old ``language`` column (the declared tag); "after" is py3langid on the cleaned text.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import types
from collections import Counter
from dataclasses import replace
from pathlib import Path

from newsclean.transforms import metadata as after
from newsclean.transforms.chain import DEFAULT_CONFIG, extract_article
from newsclean.transforms.parse import decode_html, parse_html

_URL_DAY = re.compile(r"/((?:19|20)\d\d)/(0[1-9]|1[0-2])/(0[1-9]|[12]\d|3[01])/")
ENGLISH_SETS = ("msv-big9", "dragnet", "cleanportaleval")


def load_before(rev: str):
    """The metadata module as it was at ``rev`` (git), as a module object."""
    source = subprocess.run(["git", "show", f"{rev}:transforms/metadata.py"], capture_output=True, text=True,
                            check=True).stdout
    module = types.ModuleType("metadata_before")
    sys.modules["metadata_before"] = module  # dataclasses look their module up
    exec(compile(source, "metadata_before.py", "exec"), module.__dict__)  # noqa: S102 - our own file at rev
    return module


def url_day(*urls: str | None) -> tuple[int, int, int] | None:
    """``(year, month, day)`` from the first URL with a ``/YYYY/MM/DD/`` path, else None."""
    for url in urls:
        m = _URL_DAY.search(url or "")
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
    return None


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f} %)" if d else "0/0"


def date_table(pages, before) -> list[str]:
    rows = {"before": Counter(), "after": Counter()}
    for page in pages:
        html, _ = decode_html(page.html, None)
        root = parse_html(html)
        year = 2000 + int(page.group.split("/")[1][-2:]) if page.dataset == "msv-big9" else None
        old = before.read_metadata(root).published_at
        new = after.read_metadata(root)
        day = url_day(page.url, new.canonical_url, *(m.get("content") for m in root.iter("meta")
                                                        if (m.get("property") or "").lower() == "og:url"))
        for name, dt in (("before", old), ("after", new.published_at)):
            c = rows[name]
            c["pages", page.dataset] += 1
            c["found", page.dataset] += dt is not None
            if year:
                c["year_ok", page.dataset] += dt is not None and dt.year == year
            if day:
                c["day_pages", page.dataset] += 1
                c["day_ok", page.dataset] += dt is not None and (dt.year, dt.month, dt.day) == day
    lines = ["| data set | version | pages | date found | right year (of all pages) | exact day (pages whose URL gives it) |",
             "|---|---|---|---|---|---|"]
    for ds in sorted({p.dataset for p in pages}):
        for name in ("before", "after"):
            c = rows[name]
            year = _pct(c["year_ok", ds], c["pages", ds]) if ds == "msv-big9" else "–"
            lines.append(f"| {ds} | {name} | {c['pages', ds]} | {_pct(c['found', ds], c['pages', ds])} | {year} | "
                         f"{_pct(c['day_ok', ds], c['day_pages', ds])} |")
    return lines


def language_and_fields(pages, before) -> tuple[list[str], list[str]]:
    lang = {"before": Counter(), "after": Counter()}
    fields = Counter()
    for page in pages:
        html, _ = decode_html(page.html, None)
        gold = "en" if page.dataset in ENGLISH_SETS else (page.url and TRAF_LANG.get(page.url))
        try:
            extraction = extract_article(html, None, DEFAULT_CONFIG)
            text = extraction.text
        except Exception:
            text = ""
        root = parse_html(html)
        old = before.read_metadata(root).language
        code, _ = after.identify_language(text)
        meta = after.read_metadata(root)
        key = "english sets" if page.dataset in ENGLISH_SETS else page.dataset
        if gold:
            lang["before"][key, "n"] += 1
            lang["after"][key, "n"] += 1
            lang["before"][key, "ok"] += bool(old) and old.split("-")[0] == gold
            lang["after"][key, "ok"] += code == gold
            lang["before"][key, "charset"] += bool(old) and not after.declared_language(old)
        fields[page.dataset, "n"] += 1
        fields[page.dataset, "authors"] += bool(meta.authors)
        fields[page.dataset, "description"] += bool(meta.description)
        fields[page.dataset, "image"] += bool(meta.image_url)
        fields[page.dataset, "site_name"] += bool(meta.site_name)
        fields[page.dataset, "tags"] += bool(meta.tags)
    lang_lines = ["| pages | gold language | before: declared `<html lang>` right | after: py3langid on the cleaned text right |",
                  "|---|---|---|---|"]
    for key in sorted({k for k, _ in lang["after"]}):
        n = lang["after"][key, "n"]
        lang_lines.append(f"| {key} | {'en' if key == 'english sets' else 'curated <html lang>'} | "
                          f"{_pct(lang['before'][key, 'ok'], n)} | {_pct(lang['after'][key, 'ok'], n)} |")
    field_lines = ["| data set | pages | authors | description | image | site name | tags |", "|---|---|---|---|---|---|---|"]
    for ds in sorted({d for d, _ in fields}):
        n = fields[ds, "n"]
        field_lines.append(f"| {ds} | {n} | " + " | ".join(_pct(fields[ds, f], n) for f in
                                                          ("authors", "description", "image", "site_name", "tags")) + " |")
    return lang_lines, field_lines


TRAF_LANG: dict[str, str] = {}

_NAME_SPLIT = re.compile(r"\s*(?:,|;|&|\||\band\b|\bund\b|\bet\b|\by\b)\s*", re.I)
_LEADING_BY = re.compile(r"^\s*(?:by|von|par|por|door|di)\s+", re.I)


def name_set(names) -> frozenset[str]:
    """Author names compared as sets of case-folded, letter-only names ("By Jane Doe and John Roe" -> {janedoe,
    johnroe}); a string is split at commas, semicolons, ampersands and "and"."""
    if isinstance(names, str):
        names = _NAME_SPLIT.split(_LEADING_BY.sub("", names))
    return frozenset(f for f in ("".join(ch for ch in n.casefold() if ch.isalpha()) for n in names) if f)


def folded_title(title: str | None) -> str:
    return "".join(ch for ch in (title or "").casefold() if ch.isalnum())


def gold_metadata(page, root: Path) -> tuple[str | None, str | None]:
    """``(author, title)`` the set's gold gives for ``page`` (trafilatura-eval: its ``author`` and ``title``;
    Readability: ``byline`` and ``title`` of ``expected-metadata.json``); None where it gives none. ``root``: the
    unpacked data sets."""
    import json

    if page.dataset == "trafilatura-eval":
        entry = TRAF_GOLD.setdefault("_", json.loads((root / "trafilatura-eval" / "evaldata.json")
                                                     .read_text(encoding="utf-8"))).get(page.url, {})
        return entry.get("author") or None, entry.get("title") or None
    if page.dataset == "readability-test-pages":
        path = root / "readability-test-pages" / "test-pages" / page.page_id / "expected-metadata.json"
        meta = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return meta.get("byline") or None, meta.get("title") or None
    return None, None


TRAF_GOLD: dict = {}


def authors_and_titles(pages, before, root: Path, sample_out: Path | None = None) -> tuple[list[str], list[str], list[str]]:
    """Fill rate of authors per set (before, after, trafilatura's ``extract_metadata``), and authors and titles
    against the gold of trafilatura-eval and Readability (right = the same set of names; the same title, letters
    and digits case-folded). ``sample_out``: where the authors found in a byline on the sets without author gold are
    written, one page a line, for hand-checking."""
    from trafilatura.metadata import extract_metadata

    fill, gold = Counter(), Counter()
    samples = []
    for page in pages:
        html, _ = decode_html(page.html, None)
        tree = parse_html(html)
        old = before.read_metadata(tree)
        new = after.read_metadata(tree)
        try:  # the row's authors: the chain adds the byline beside the article (transforms/byline.py)
            new = replace(new, authors=extract_article(html, None, DEFAULT_CONFIG).metadata.authors)
        except Exception:  # noqa: BLE001 - a page the chain rejects keeps what the page says of itself
            pass
        try:
            traf = extract_metadata(html)
        except Exception:  # noqa: BLE001 - trafilatura on odd pages: no metadata
            traf = None
        traf_authors = [a for a in ((traf.author or "").split("; ") if traf else []) if a]
        traf_title = traf.title if traf else None
        ds = page.dataset
        fill[ds, "n"] += 1
        fill[ds, "before"] += bool(old.authors)
        fill[ds, "after"] += bool(new.authors)
        fill[ds, "trafilatura"] += bool(traf_authors)
        fill[ds, "byline"] += bool(new.authors) and not old.authors
        if new.authors and not old.authors and ds not in ("trafilatura-eval", "readability-test-pages"):
            samples.append(f"{ds}\t{page.page_id}\t{' ; '.join(new.authors)}")
        g_author, g_title = gold_metadata(page, root)
        if g_author is not None or ds in ("trafilatura-eval", "readability-test-pages"):
            want = name_set(g_author or "")
            for name, got in (("before", old.authors), ("after", new.authors), ("trafilatura", traf_authors)):
                found = name_set(got)
                if want:
                    gold[ds, "author_n"] += name == "before"
                    gold[ds, f"author_ok_{name}"] += found == want
                    gold[ds, f"author_some_{name}"] += bool(found & want)
                else:
                    gold[ds, "noauthor_n"] += name == "before"
                    gold[ds, f"noauthor_fp_{name}"] += bool(found)
        if g_title:
            want = folded_title(g_title)
            gold[ds, "title_n"] += 1
            for name, got in (("before", old.title), ("after", new.headline), ("trafilatura", traf_title)):
                gold[ds, f"title_ok_{name}"] += folded_title(got) == want
    fill_lines = ["| data set | pages | before | after | of which from the byline | trafilatura |",
                  "|---|---:|---:|---:|---:|---:|"]
    for ds in sorted({d for d, _ in fill}):
        n = fill[ds, "n"]
        fill_lines.append(f"| {ds} | {n} | {_pct(fill[ds, 'before'], n)} | {_pct(fill[ds, 'after'], n)} | "
                          f"{fill[ds, 'byline']} | {_pct(fill[ds, 'trafilatura'], n)} |")
    gold_lines = ["| data set | pages with gold author | names right: before / after / trafilatura | "
                  "some name right: before / after / trafilatura | pages without an author: some found (before / "
                  "after / trafilatura) |", "|---|---:|---|---|---|"]
    title_lines = ["| data set | pages with gold title | title right: before (`title`) / after (`headline`) / "
                   "trafilatura |", "|---|---:|---|"]
    for ds in sorted({d for d, _ in gold}):
        n, m = gold[ds, "author_n"], gold[ds, "noauthor_n"]
        gold_lines.append(f"| {ds} | {n} | " + " / ".join(_pct(gold[ds, f"author_ok_{v}"], n) for v in VERSIONS)
                          + " | " + " / ".join(_pct(gold[ds, f"author_some_{v}"], n) for v in VERSIONS)
                          + " | " + " / ".join(_pct(gold[ds, f"noauthor_fp_{v}"], m) for v in VERSIONS) + " |")
        t = gold[ds, "title_n"]
        title_lines.append(f"| {ds} | {t} | " + " / ".join(_pct(gold[ds, f"title_ok_{v}"], t) for v in VERSIONS)
                           + " |")
    if sample_out is not None:
        sample_out.write_text("\n".join(samples) + "\n", encoding="utf-8")
    return fill_lines, gold_lines, title_lines


VERSIONS = ("before", "after", "trafilatura")


def timing(pages, before, n: int) -> list[str]:
    trees = []
    for page in pages[:n]:
        html, _ = decode_html(page.html, None)
        trees.append(parse_html(html))
    after.read_metadata(trees[0])  # load extruct and py3langid once, outside the timing
    after.identify_language("warm up the model")
    texts = [t.text_content()[: after.LANGID_CHARS] for t in trees]
    out = []
    for name, fn in (("before: read_metadata", lambda i: before.read_metadata(trees[i])),
                     ("after: read_metadata", lambda i: after.read_metadata(trees[i])),
                     ("after: identify_language (3,000 characters)", lambda i: after.identify_language(texts[i]))):
        start = time.perf_counter()
        for i in range(len(trees)):
            fn(i)
        out.append(f"| {name} | {1000 * (time.perf_counter() - start) / len(trees):.1f} |")
    return ["| step | ms per page |", "|---|---|", *out]


def main(argv: list[str] | None = None) -> int:
    from newsclean_eval.datasets import data_root, load

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-rev", default="HEAD", help="git revision of the old metadata module")
    parser.add_argument("--out", default="evaluation/results/metadata-eval.md")
    parser.add_argument("--timing-pages", type=int, default=200)
    parser.add_argument("--authors-only", action="store_true",
                        help="measure the authors and titles section only, and put it in place of that section of "
                             "--out (the other sections are left as they are)")
    parser.add_argument("--byline-samples", type=Path, help="write the byline authors of the sets without gold here")
    args = parser.parse_args(argv)
    before = load_before(args.before_rev)
    root = data_root()
    every = [p for ds in ("msv-big9", "dragnet", "cleanportaleval", "cleaneval", "readability-test-pages",
                          "trafilatura-eval") for p in load(ds, root)]
    author_lines, gold_lines, title_lines = authors_and_titles(every, before, root, args.byline_samples)
    authors_section = [
        "## Authors and titles",
        "",
        "Authors (the article row's, `extract_article(...).metadata.authors`): structured data (JSON-LD, microdata), "
        "then author meta tags, then (new) the visible byline beside the article (`transforms/byline.py`: byline and "
        "author boxes in the article's scope, trafilatura's name normalisation), every name cleaned (no \"By\", no "
        "dates, no job titles, no social handles). Share of pages with at least one author, per set, against "
        "trafilatura's own `extract_metadata`:",
        "",
        *author_lines,
        "",
        "Against the gold where a set gives one (trafilatura-eval's `author`, Readability's `byline`; names compared "
        "as sets of case-folded letters):",
        "",
        *gold_lines,
        "",
        "Titles: `title` is now the headline as readers see it (no site-name suffix, `reader_title`); the raw "
        "`<title>` is `page_title`. Against the gold titles (letters and digits, case-folded):",
        "",
        *title_lines,
        "",
    ]
    if args.authors_only:
        path = Path(args.out)
        kept = path.read_text(encoding="utf-8").split("## Authors and titles")[0] if path.exists() else ""
        path.write_text(kept.rstrip("\n") + "\n\n" + "\n".join(authors_section), encoding="utf-8")
        print("\n".join(authors_section))
        return 0
    news = [p for ds in ("msv-big9", "cleanportaleval") for p in load(ds, root)]
    traf = load("trafilatura-eval", root)
    for p in traf:
        html, _ = decode_html(p.html, None)
        tag = after.declared_language(parse_html(html).get("lang"))
        if tag:
            TRAF_LANG[p.url] = tag.split("-")[0]
    lang_pages = [p for ds in ENGLISH_SETS for p in load(ds, root)] + [p for p in traf if p.url in TRAF_LANG]
    date_lines = date_table(news, before)
    lang_lines, field_lines = language_and_fields(lang_pages, before)
    timing_pages = load("msv-big9", root)[::2] + load("dragnet", root)
    time_lines = timing(timing_pages, before, args.timing_pages)
    text = "\n".join([
        "# Article metadata: measured on the shared pages",
        "",
        f"Written by `scripts/metadata_eval.py` (before = `transforms/metadata.py` at `{args.before_rev}`: dateutil "
        "on meta tags, declared `<html lang>`; after = htmldate + extruct (JSON-LD, microdata, OpenGraph) + py3langid).",
        "",
        "## Publication date",
        "",
        "Right year: msv-big9 pages were saved in their folder's crawl year (2005, 2009, 2013). Exact day: pages "
        "whose URL (source, canonical or og:url) carries `/YYYY/MM/DD/`.",
        "",
        *date_lines,
        "",
        "## Language",
        "",
        "English sets: msv-big9, dragnet, cleanportaleval (English news sites). trafilatura-eval: the language its "
        "curators kept the page for (its `<html lang>`), so the *before* column is right by construction there.",
        "",
        *lang_lines,
        "",
        "## Share of pages with the new fields (after)",
        "",
        *field_lines,
        "",
        f"## Cost ({min(args.timing_pages, len(timing_pages))} pages of msv-big9 and dragnet, parsed once, this machine)",
        "",
        *time_lines,
        "",
        *authors_section,
    ])
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The docs stay true to the code they describe, and short.

Read from the source on every run, so that a change to the code that leaves a doc behind fails here:
references to a section of docs/DECISIONS.md name a heading it has; docs/CONTRACTS.md lists exactly what
``pipeline/`` imports from ``newsclean.transforms``; docs/ARCHITECTURE.md names every module of ``transforms/``;
repository paths named in the docs and the product code exist; the docstrings of ``transforms`` and ``refine``
list the stages and steps in the order the code runs them; the product and the tests speak of what is true now, not
of issue numbers or work sessions; docs/ stays under its line budget.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from repo import ROOT

DOCS = ROOT / "docs"
DOCS_MAX_LINES = 807
"""Lines of all of docs/ together: a third of what docs/ held when the experiment log moved to evaluation/."""

SCANNED_FOLDERS = ("transforms", "pipeline", "crawler", "schemas", "src", "demo", "evaluation", "scripts", "bench",
                   "tests", "infra", "docs")
PRODUCT_FOLDERS = ("transforms", "crawler", "schemas", "src", "demo", "pipeline")
"""Folders whose code, docstrings and docs must not name issue numbers or work sessions (the tests neither)."""
TEST_FOLDERS = ("tests", "evaluation/tests")

_DECISIONS_REF = re.compile(
    r'docs/DECISIONS\.md(?:\]\([^)]*\))?[,:]?\s*(?:#:?\s*)?"([^"]{1,160})"'
    r'((?:\s*(?:,|and)\s*(?:#:?\s*)?"[^"]{1,160}")*)')
_QUOTED = re.compile(r'"([^"]{1,160})"')
_REPO_PATH = re.compile(r"(?<![\w./-])(?:transforms|pipeline|crawler|schemas|src/newsclean|demo|scripts|bench|"
                        r"evaluation|infra|docs|tests)/[\w./-]*\w\.(?:py|md)\b")
_NOT_NOW = re.compile(
    r"\bissues?\s*#?\d+|(?<![&\w])#1\d\b|\(#\d+\)|"
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|"
    r"fourteenth|fifteenth|sixteenth|seventeenth|this|last|next|previous) (?:session|round)\b",
    re.IGNORECASE)


def text_files(folders=SCANNED_FOLDERS, suffixes=(".py", ".md")) -> Iterator[Path]:
    """The repository's ``.py`` and ``.md`` files under ``folders`` (caches, hidden and build folders skipped)."""
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.suffix in suffixes and path.is_file() and not any(
                    p.startswith(".") or p == "__pycache__" or p.endswith(".egg-info") for p in parts):
                yield path


def headings(markdown: str) -> list[str]:
    """The titles of a Markdown text's ATX headings (``## Title`` -> ``Title``)."""
    return [line.lstrip("#").strip() for line in markdown.splitlines() if re.match(r"#{1,6} ", line)]


def one_line(quoted: str) -> str:
    """A quoted section name wrapped over lines (in a docstring, a ``#:`` comment or Markdown) as one line."""
    return " ".join(re.sub(r"\n\s*(?:#:?)?", " ", quoted).split())


def decisions_references(text: str) -> list[str]:
    """Every section name quoted after ``docs/DECISIONS.md`` in ``text`` (``"A"``, ``"A" and "B"``, ``, "A"``)."""
    names = []
    for match in _DECISIONS_REF.finditer(text):
        names.append(one_line(match.group(1)))
        names += [one_line(n) for n in _QUOTED.findall(match.group(2))]
    return names


def names_heading(name: str, titles: list[str]) -> bool:
    """Whether ``name`` is a heading's title or its opening words."""
    return any(t == name or t.startswith(name + " ") for t in titles)


def section(markdown: str, title_start: str) -> str:
    """The body of the ``## `` section whose title starts with ``title_start``, up to the next ``## ``."""
    start = markdown.index("\n## " + title_start)
    end = markdown.find("\n## ", start + 1)
    return markdown[start:] if end < 0 else markdown[start:end]


def imports_listed(markdown: str) -> set[tuple[str, str]]:
    """``(module, name)`` of every ``from newsclean.transforms... import ...`` line of ``markdown``."""
    out = set()
    for module, names in re.findall(r"^from (newsclean\.transforms[\w.]*) import ([^#\n]+)", markdown, re.M):
        out |= {(module, n.strip(" ()")) for n in names.split(",") if n.strip(" ()")}
    return out


def transforms_imports(folder: Path) -> set[tuple[str, str]]:
    """``(module, name)`` of every import from ``newsclean.transforms`` in the ``.py`` files under ``folder``,
    lazy imports inside functions included (``import newsclean.transforms.x`` gives ``(module, "")``)."""
    out = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("newsclean.transforms"):
                out |= {(node.module, alias.name) for alias in node.names}
            elif isinstance(node, ast.Import):
                out |= {(alias.name, "") for alias in node.names if alias.name.startswith("newsclean.transforms")}
    return out


def test_decisions_references_name_existing_headings():
    titles = headings((DOCS / "DECISIONS.md").read_text(encoding="utf-8"))
    found, broken = 0, []
    for path in [*text_files(), ROOT / "README.md"]:
        if path in (DOCS / "DECISIONS.md", Path(__file__).resolve()):
            continue
        for name in decisions_references(path.read_text(encoding="utf-8")):
            found += 1
            if not names_heading(name, titles):
                broken.append(f"{path.relative_to(ROOT)}: {name!r}")
    assert found >= 20, "the reference pattern no longer finds the code's references to docs/DECISIONS.md"
    assert broken == [], "no heading of docs/DECISIONS.md starts with these names:\n" + "\n".join(broken)


def test_reference_pattern_reads_wrapped_and_listed_names():
    text = ('see docs/DECISIONS.md, "Page-level\n    steps" and "Side content"; '
            '#: docs/DECISIONS.md "Local runner and\n#: memory at scale"; [docs/DECISIONS.md](x), "Chain speed".')
    assert decisions_references(text) == ["Page-level steps", "Side content", "Local runner and memory at scale",
                                          "Chain speed"]
    assert names_heading("Chain speed", ["Chain speed with identical output"])
    assert not names_heading("Chain", ["Chains of custody"]) and not names_heading("Site vote", ["Site check"])


def test_contracts_list_exactly_what_the_pipeline_imports_from_transforms():
    listed = imports_listed(section((DOCS / "CONTRACTS.md").read_text(encoding="utf-8"), "transforms/ public API"))
    used = transforms_imports(ROOT / "pipeline")
    assert used, "pipeline/ imports nothing from newsclean.transforms: the scan is broken"
    assert sorted(used - listed) == [], "imported by pipeline/ but missing from docs/CONTRACTS.md"
    assert sorted(listed - used) == [], "listed in docs/CONTRACTS.md but not imported by pipeline/"


def test_contracts_name_the_user_api():
    import newsclean

    api = section((DOCS / "CONTRACTS.md").read_text(encoding="utf-8"), "transforms/ public API")
    for name in ("extract", "learn_site_evidence", "SiteEvidence"):
        assert f"newsclean.{name}" in api and name in newsclean.__all__


def test_architecture_names_every_transforms_module_and_product_folder():
    text = (DOCS / "ARCHITECTURE.md").read_text(encoding="utf-8")
    modules = [p for p in (ROOT / "transforms").rglob("*.py") if p.name != "__init__.py"]
    missing = [str(p.relative_to(ROOT)) for p in modules if f"`{p.stem}`" not in text]
    assert missing == [], "docs/ARCHITECTURE.md does not name these modules"
    packages = [p.parent.name for p in (ROOT / "transforms").glob("*/__init__.py")]
    assert packages and all(f"`{name}/`" in text for name in packages)
    for folder in ("src/newsclean", "schemas", "transforms", "crawler", "pipeline", "demo", "evaluation", "tests"):
        assert f"`{folder}/`" in text


_MOD_REF = re.compile(r":mod:`~?(newsclean\.transforms[\w.]*)`")


def imported_modules(tree: ast.Module) -> dict[str, str]:
    """Each name a module's top-level ``from newsclean.transforms... import`` binds -> the module it comes from
    (``from newsclean.transforms import kernel``: ``kernel`` -> ``newsclean.transforms.kernel``)."""
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("newsclean.transforms"):
            for alias in node.names:
                submodule = node.module == "newsclean.transforms"
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}" if submodule else node.module
    return imported


def chain_call_order(source: str, entry: str = "extract_article") -> list[str]:
    """The ``newsclean.transforms`` modules whose functions ``entry`` calls, directly or through the other functions
    of its module (``source``: the module's text), each at its first call in source order (a branch's calls where
    the branch stands); calls through an attribute of an imported name (``kernel.enabled()``) count too."""
    tree = ast.parse(source)
    imported = imported_modules(tree)
    local = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    order: list[str] = []
    visited: set[str] = set()

    def visit(function: ast.FunctionDef) -> None:
        visited.add(function.name)
        calls = sorted((n for n in ast.walk(function) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            func = call.func.value if isinstance(call.func, ast.Attribute) else call.func
            name = func.id if isinstance(func, ast.Name) else None
            if name in local and name not in visited:
                visit(local[name])
            elif name in imported and imported[name] not in order:
                order.append(imported[name])

    visit(local[entry])
    return order


def documented(module: str, refs: list[str]) -> str:
    """The reference of ``refs`` that names ``module`` or the package holding it (``module`` itself when none)."""
    return next((ref for ref in refs if module == ref or module.startswith(ref + ".")), module)


def test_chain_order_call_reads_branches_and_local_helpers():
    source = ("from newsclean.transforms import kernel\nfrom newsclean.transforms.a import f\n"
              "from newsclean.transforms.b.c import g as h\nfrom newsclean.transforms.d import unused\n"
              "def entry(x):\n    if x:\n        return helper(x)\n    return f(x)\n"
              "def helper(x):\n    return h(kernel.enabled()) or f(x)\n")
    assert chain_call_order(source, "entry") == ["newsclean.transforms.b.c", "newsclean.transforms.kernel",
                                                 "newsclean.transforms.a"]
    assert documented("newsclean.transforms.b.c", ["newsclean.transforms.b"]) == "newsclean.transforms.b"


def test_transforms_docstring_lists_the_stages_in_the_order_the_chain_runs_them():
    import newsclean.transforms

    doc = newsclean.transforms.__doc__
    stages_part, _, bases_part = doc.partition("Shared bases")
    stages, bases = _MOD_REF.findall(stages_part), _MOD_REF.findall(bases_part)
    source = (ROOT / "transforms" / "chain.py").read_text(encoding="utf-8")
    called = [documented(m, stages + bases) for m in chain_call_order(source)]
    assert len(called) >= 10, "the call scan of transforms/chain.py finds too little: it is broken"
    assert [m for m in called if m not in bases] == stages, (
        "transforms/__init__.py's docstring: list each module chain.extract_article calls, in its order, as a stage "
        "or among the shared bases")
    chain_imports = set(imported_modules(ast.parse(source)).values())
    assert bases and [b for b in bases if b not in chain_imports] == [], "shared bases that chain.py does not import"


def test_refine_docstrings_list_the_shipped_steps_in_order():
    import newsclean.transforms.refine
    from newsclean.transforms.chain import CONFIGS, LEARNED_STEPS

    modules = [type(step).__module__ for step in LEARNED_STEPS]
    shipped = [m for i, m in enumerate(modules) if i == 0 or m != modules[i - 1]]  # a step run twice: one entry
    assert all([type(s).__module__ for s in c.refine] in ([], modules) for c in CONFIGS.values())
    paragraph = newsclean.transforms.refine.__doc__.split("The shipped order", 1)[1].split("\n\n")[0]
    assert _MOD_REF.findall(paragraph) == shipped, "transforms/refine/__init__.py: the shipped order"
    row = next(line for line in (DOCS / "ARCHITECTURE.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `refine/` |"))
    listed = re.findall(r"`(\w+)`", row.split(":", 1)[1].split(";")[0])
    assert listed == [m.rsplit(".", 1)[1] for m in shipped], "docs/ARCHITECTURE.md's refine/ row: the shipped order"


def test_repository_paths_in_docs_and_product_exist():
    files = [*DOCS.glob("*.md"), ROOT / "README.md", ROOT / "crawler" / "README.md", ROOT / "infra" / "README.md",
             ROOT / "transforms" / "models" / "MODEL_CARD.md",
             *text_files(("transforms", "pipeline", "crawler", "schemas", "src", "demo", "scripts", "bench"), (".py",))]
    missing = [f"{path.relative_to(ROOT)}: {ref}" for path in files
               for ref in _REPO_PATH.findall(path.read_text(encoding="utf-8")) if not (ROOT / ref).exists()]
    assert missing == [], "paths named but not in the repository:\n" + "\n".join(missing)
    assert not (ROOT / "docs" / "DESIGN.md").exists()
    assert [p for p in files if "DESIGN.md" in p.read_text(encoding="utf-8")] == []


def test_product_and_tests_name_no_issue_numbers_or_sessions():
    files = [*text_files(PRODUCT_FOLDERS, (".py", ".md", ".pyx", ".pxi")), *DOCS.glob("*.md"), ROOT / "README.md",
             *(path for path in text_files(TEST_FOLDERS, (".py",)) if path != Path(__file__).resolve())]
    found = [f"{path.relative_to(ROOT)}: {m.group(0)!r}" for path in files
             for m in _NOT_NOW.finditer(path.read_text(encoding="utf-8"))]
    assert found == [], "say what is true now:\n" + "\n".join(found)


def test_not_now_pattern():
    for text in ("issue #11", "Issue 15 item 1", "(#13)", "binary (#7)", "the ninth round", "this session",
                 "Fifteenth session"):
        assert _NOT_NOW.search(text), text
    for text in ("session ids", "&#10;", "the other way round", "a session cluster", "issued requests", "UAX #29"):
        assert not _NOT_NOW.search(text), text


def test_docs_stay_short():
    lines = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in DOCS.glob("*.md")}
    assert sum(lines.values()) <= DOCS_MAX_LINES, lines

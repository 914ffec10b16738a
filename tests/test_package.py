"""The product package's shape: one import name, no harness inside, no import cycle.

The import graph is read from the source with ``ast`` (no module is imported), every
``import``/``from ... import`` counted wherever it stands (inside functions and ``TYPE_CHECKING``
blocks too: a cycle that only a lazy import hides is still a cycle in the design). The compiled kernel's Cython
modules (``transforms/_kernel/*.pyx``, each with the ``.pxi`` files it ``include``s) are read line by line for their
``import``, ``from ... import`` and ``cimport`` statements, lazy ones too.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: import name -> source folder, as pyproject.toml maps them
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
PRODUCT_TOP = ("crawler", "pipeline", "transforms", "schemas", "demo")


def product_modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the product (``newsclean.*``)."""
    modules = {}
    for package, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for path in base.glob("*.py"):
            name = package if path.stem == "__init__" else f"{package}.{path.stem}"
            modules[name] = path
    # subpackages listed in pyproject (e.g. newsclean.crawler.spiders) live below their parent's folder
    for package in PYPROJECT["tool"]["setuptools"]["packages"]:
        if package in PACKAGE_DIRS:
            continue
        parent = max((p for p in PACKAGE_DIRS if package.startswith(p + ".")), key=len)
        folder = ROOT / PACKAGE_DIRS[parent] / Path(*package[len(parent) + 1:].split("."))
        for path in folder.glob("*.py"):
            modules[package if path.stem == "__init__" else f"{package}.{path.stem}"] = path
    for path in (ROOT / PACKAGE_DIRS["newsclean.transforms"] / "_kernel").glob("*.pyx"):
        modules[f"newsclean.transforms._kernel.{path.stem}"] = path
    return modules


_INCLUDE = re.compile(r"""^\s*include\s+["']([^"']+)["']""", re.M)
_CYTHON_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+c?import[ \t]+(?:\(([^)]*)\)|([^\n#]*))", re.M)
_CYTHON_IMPORT = re.compile(r"^[ \t]*c?import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)[ \t]*$",
                            re.M)


def cython_source(path: Path) -> str:
    """A ``.pyx`` file's text with each ``include "x.pxi"`` line replaced by that file's text (recursively)."""
    return _INCLUDE.sub(lambda m: cython_source(path.parent / m.group(1)), path.read_text(encoding="utf-8"))


def cython_imports(path: Path) -> set[str]:
    """Absolute names a ``.pyx`` module imports or cimports, its included ``.pxi`` files and imports inside functions
    counted (``from pkg import name`` counts ``pkg`` and ``pkg.name``, as :func:`imports_of` does)."""
    source = cython_source(path)
    out = set()
    for m in _CYTHON_FROM.finditer(source):
        out.add(m.group(1))
        names = m.group(2) if m.group(2) is not None else m.group(3)
        out.update(f"{m.group(1)}.{name.split()[0]}" for name in names.split(",") if name.strip())
    for m in _CYTHON_IMPORT.finditer(source):
        out.update(name.split()[0] for name in m.group(1).split(","))
    return out


def imports_of(path: Path, module: str) -> set[str]:
    """Absolute names ``module`` imports (relative imports resolved; a Cython module: :func:`cython_imports`)."""
    if path.suffix == ".pyx":
        return cython_imports(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                name = f"{base}.{node.module}" if node.module else base
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return out


KERNEL_LOADER = "newsclean.transforms.kernel"
"""The module that loads the compiled kernel's modules at run time (the binding seam): its lazy import of them is the
one edge the cycle check leaves out, since the compiled modules import it back for ``Unsupported`` and the base
modules (:data:`KERNEL_MAY_IMPORT`) import it for their bound functions."""
KERNEL_MAY_IMPORT = frozenset({
    "newsclean.transforms",  # the package: each ``from newsclean.transforms import base`` names it
    "newsclean.transforms.vocab", "newsclean.transforms.types", "newsclean.transforms.dom",
    "newsclean.transforms.text", "newsclean.transforms.errors", KERNEL_LOADER,
})
"""The product modules the compiled kernel may import: the base modules (no paper's algorithm), ``kernel`` for
``Unsupported``."""


def import_graph() -> dict[str, set[str]]:
    """Product module -> the product modules it imports (a package import counts as its ``__init__``), but the kernel
    loader's edges into the compiled kernel (:data:`KERNEL_LOADER`)."""
    modules = product_modules()
    graph = {name: {m for m in imports_of(path, name) if m in modules and m != name}
             for name, path in modules.items()}
    graph[KERNEL_LOADER] = {m for m in graph[KERNEL_LOADER] if not m.startswith("newsclean.transforms._kernel")}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a path ``[a, b, ..., a]``, or None (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_find_cycle_finds_one():
    # the checker itself: a cycle through a package __init__ is found, a diamond is not a cycle
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None


def test_every_product_module_is_seen():
    modules = product_modules()
    assert {"newsclean", "newsclean.cli", "newsclean.schemas.contract", "newsclean.pipeline.stages", "newsclean.crawler.warc",
            "newsclean.crawler.spiders.news", "newsclean.transforms.chain", "newsclean.demo.run"} <= set(modules)
    assert len(modules) >= 40


def test_product_import_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None


def test_cython_imports_are_read_from_included_files_and_functions(tmp_path):
    # the reader itself: a lazy import inside a function of an included .pxi, a cimport and an aliased import count
    (tmp_path / "part.pxi").write_text("def f():\n    from newsclean.transforms import blocks as _b\n    import a.b, c\n")
    pyx = tmp_path / "m.pyx"
    pyx.write_text("from libc.math cimport exp, fabs\nfrom x import (p,\n    q)\ncimport lxml.includes.etreepublic as cetree\n"
                   'include "part.pxi"\n')
    assert cython_imports(pyx) == {"libc.math", "libc.math.exp", "libc.math.fabs", "x", "x.p", "x.q",
                                   "lxml.includes.etreepublic",
                                   "newsclean.transforms", "newsclean.transforms.blocks", "a.b", "c"}


def test_compiled_kernel_imports_only_base_modules():
    # The kernel does a paper module's work; it never calls back into one (a cycle reference -> kernel -> reference):
    # what it shares with the Python reference is in the base modules.
    kernel = {name: path for name, path in product_modules().items() if path.suffix == ".pyx"}
    assert set(kernel) == {"newsclean.transforms._kernel.walks", "newsclean.transforms._kernel.trees"}
    graph = import_graph()
    assert {name: sorted(graph[name] - KERNEL_MAY_IMPORT) for name in kernel} == {name: [] for name in kernel}


def test_product_never_imports_the_harness_or_top_level_folders():
    # The harness (newsclean_eval) is a separate distribution; the product folders exist only as newsclean.*.
    bad = {}
    for name, path in product_modules().items():
        wrong = sorted(m for m in imports_of(path, name)
                       if m.split(".")[0] in ("newsclean_eval", *PRODUCT_TOP, "src", "tests", "scripts", "bench"))
        if wrong:
            bad[name] = wrong
    assert bad == {}


def test_layers_point_one_way():
    # schemas is the bottom layer; transforms knows no pipeline/crawler/demo; the crawler knows no
    # pipeline (the contract module is what the two share) and the pipeline no crawler; transforms.refine knows no
    # transforms.classifier; nothing below imports the command line; only the application (newsclean.cli) and the
    # demo reach across.
    below = {
        "newsclean.schemas": ("newsclean.transforms", "newsclean.pipeline", "newsclean.crawler", "newsclean.demo",
                              "newsclean.cli"),
        "newsclean.transforms": ("newsclean.pipeline", "newsclean.crawler", "newsclean.demo", "newsclean.cli"),
        "newsclean.crawler": ("newsclean.pipeline", "newsclean.transforms", "newsclean.demo", "newsclean.cli"),
        "newsclean.pipeline": ("newsclean.crawler", "newsclean.demo", "newsclean.cli"),
        "newsclean.demo": ("newsclean.cli",),
        # the page-level steps share the page context (transforms.context), never the classifier's code
        "newsclean.transforms.refine": ("newsclean.transforms.classifier",),
    }
    bad = [f"{src} -> {dst}" for src, targets in import_graph().items() for dst in targets
           for layer, forbidden in below.items()
           if (src == layer or src.startswith(layer + ".")) and dst.startswith(forbidden)]
    assert bad == []


def _build_wheel(tmp_path: Path) -> Path:
    """Build the wheel from a copy of the sources (an in-tree build would leave ``build/`` behind)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    for folder in {*PACKAGE_DIRS.values()}:
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path / "wheel"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"pip wheel failed:\n{done.stdout}\n{done.stderr}")
    (wheel,) = out.glob("newsclean-*.whl")
    return wheel


def test_wheel_ships_the_product_only(tmp_path):
    wheel = zipfile.ZipFile(_build_wheel(tmp_path))
    names = wheel.namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"newsclean"}  # no top-level crawler/, schemas/, ...
    assert [n for n in names if "newsclean_eval" in n or "crossfit" in n or "/tests/" in n] == []
    for member in ("newsclean/__init__.py", "newsclean/cli.py", "newsclean/schemas/contract.py", "newsclean/pipeline/clean.py",
                   "newsclean/crawler/spiders/news.py", "newsclean/demo/run.py",
                   "newsclean/transforms/models/block_classifier.txt.gz", "newsclean/transforms/models/MODEL_CARD.md"):
        assert member in names
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "Requires-Python: >=3.11" in metadata

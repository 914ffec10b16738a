"""The binding table between the compiled kernel and the Python reference (``transforms/kernel.py``): the only place
that asks whether the kernel runs, its rows in the kernel's typed interface (``_kernel/walks.pyi``, ``trees.pyi``)
and in the built modules, each bound function what its module exposes. Whether every row gives the reference's
answer is ``test_kernel.py``'s ``test_every_binding_is_compared_with_its_reference``."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle

import pytest
from kernel_pages import all_bindings
from repo import ROOT

from newsclean.transforms import kernel

PRODUCT_FOLDERS = ("src", "transforms", "pipeline", "schemas", "crawler", "demo")
SWITCHES = frozenset({"enabled", "walks", "trees"})
STUBS = ROOT / "transforms" / "_kernel"

needs_kernel = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here")


def _switch_uses(tree: ast.AST) -> list[int]:
    """Lines of ``kernel.enabled()``/``walks()``/``trees()`` calls, of imports of those names, and of imports of the
    compiled modules themselves (``newsclean.transforms._kernel``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SWITCHES \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "kernel":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if "_kernel" in module or any(a.name == "_kernel" for a in node.names) or \
                    (module.endswith("kernel") and any(a.name in SWITCHES for a in node.names)):
                lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any("_kernel" in a.name for a in node.names):
            lines.append(node.lineno)
    return lines


def test_only_the_binding_table_asks_whether_the_kernel_runs():
    table = ROOT / "transforms" / "kernel.py"
    found = [f"{path.relative_to(ROOT)}:{line}"
             for folder in PRODUCT_FOLDERS for path in sorted((ROOT / folder).rglob("*.py")) if path != table
             for line in _switch_uses(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "bind the function with @kernel.twin instead of asking kernel.enabled()/walks()/trees()"


def test_the_check_sees_each_way_of_asking():
    code = ("from newsclean.transforms import kernel\nfrom newsclean.transforms.kernel import enabled\n"
            "from newsclean.transforms._kernel import walks\nx = kernel.walks() if kernel.enabled() else kernel.trees()\n"
            "y = kernel.available()\n")
    assert _switch_uses(ast.parse(code)) == [2, 3, 4, 4, 4]


def _stub(module: str) -> dict[str, list[str] | None]:
    """Name -> positional parameter names (functions; None for a class or a constant) of ``_kernel/<module>.pyi``."""
    names: dict[str, list[str] | None] = {}
    for node in ast.parse((STUBS / f"{module}.pyi").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = [a.arg for a in node.args.posonlyargs + node.args.args]
        elif isinstance(node, ast.ClassDef):
            names[node.name] = None
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = None
    return names


def test_every_bound_name_is_in_the_kernels_typed_interface():
    rows = all_bindings()
    assert len(rows) >= 30 and {b.module for b in rows} == {"walks", "trees"}
    missing = [f"{b.name}: {b.module}.{name}" for b in rows for name in b.names if name not in _stub(b.module)]
    assert missing == []


@needs_kernel
@pytest.mark.parametrize("module", ["walks", "trees"])
def test_the_typed_interface_lists_what_the_built_module_has(module):
    built = importlib.import_module(f"newsclean.transforms._kernel.{module}")
    for name, params in _stub(module).items():
        assert hasattr(built, name), f"{module}.pyi lists {name}, which the built module lacks"
        if params is not None:
            assert list(inspect.signature(getattr(built, name)).parameters) == params, name
    for b in all_bindings():
        assert b.module != module or b.resolve() is not None, b.name


def _exposed(binding: kernel.Binding):
    """What the reference's module exposes under the reference's qualified name."""
    obj = importlib.import_module(binding.reference.__module__)
    for part in binding.reference.__qualname__.split("."):
        obj = getattr(obj, part)
    return obj


def test_each_module_exposes_the_bound_function_under_the_references_name():
    for b in all_bindings():
        bound = _exposed(b)
        assert getattr(bound, "binding", None) is b and inspect.unwrap(bound) is b.reference, b.name  # a memo above
        if "." not in b.reference.__qualname__:
            assert pickle.loads(pickle.dumps(bound)) is bound  # pipeline code pickles functions by name


def test_a_bound_function_takes_no_defaults():
    with pytest.raises(TypeError, match="positional arguments without defaults"):
        kernel.twin("count_words")(lambda text, strict=True: 0)
    with pytest.raises(TypeError, match="compare"):
        kernel.twin("count_words", compare="bits")


@needs_kernel
def test_the_twin_runs_and_unsupported_leaves_the_call_to_the_reference():
    def refuse(count, text):
        raise kernel.Unsupported("a text this twin does not read")

    rows = len(kernel.BINDINGS)
    try:
        counted = kernel.twin("count_words", adapt=lambda count, text: ("twin", count(text)))(
            lambda text: ("reference", text))
        refused = kernel.twin("count_words", adapt=refuse)(lambda text: ("reference", text))
    finally:
        del kernel.BINDINGS[rows:]
    assert counted("two words") == ("twin", 2) and refused("two words") == ("reference", "two words")
    with kernel.python_only():
        assert counted("two words") == ("reference", "two words")

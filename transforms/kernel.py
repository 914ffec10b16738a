"""Which implementation runs the chain's tree walks and tree ensembles: the compiled kernel or the Python reference.

The Python modules (:mod:`~newsclean.transforms.blocks`, :mod:`~newsclean.transforms.static_noise`,
:mod:`~newsclean.transforms.dynamic_noise`, :mod:`~newsclean.transforms.noise_removal`,
:mod:`~newsclean.transforms.classifier.features`, LightGBM for the models) are the readable reference. The compiled
kernel (``transforms/_kernel``: Cython over lxml's C API, which walks libxml2's node structs without a Python object
per node, and a tree-ensemble evaluator for the LightGBM text models) does the same work and gives the same
results, bit for bit (``tests/transforms/test_kernel.py``; all shared pages:
``evaluation/newsclean_eval/kernel_identity.py``). Where a page holds something the kernel does not read (a namespaced element or
attribute, an entity reference node, XInclude markers), the kernel hands that call back to the Python reference.

This module is the one place that decides: :func:`enabled` is true when the kernel was built (``pip install``
builds it where a C compiler is found; it is optional) and the environment variable :data:`PURE_PYTHON_ENV` is not
set to a non-empty value other than ``0``; :func:`python_only` forces the Python path for a block of code (tests
run both paths in one process).

It is also the one seam between the two: a reference function is bound to its compiled twin by :func:`twin`
(``@kernel.twin("page_keys")`` above its definition), which registers a :class:`Binding` in :data:`BINDINGS`, the
binding table. The bound function runs the twin where :func:`enabled` holds, and the reference where it does not or
where the twin raises :class:`Unsupported`; no reference module asks :func:`enabled` itself. The kernel's typed
interface is ``_kernel/walks.pyi`` and ``_kernel/trees.pyi``.
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import ModuleType

PURE_PYTHON_ENV = "NEWSCLEAN_PURE_PYTHON"
"""Set to ``1`` (any non-empty value but ``0``) to run the Python reference even where the kernel is built."""


class Unsupported(Exception):
    """Raised by a compiled walk, before it changes anything, for a tree holding a node it does not read (an entity
    reference, XInclude markers, a namespaced element or attribute): the caller runs the Python reference."""


_KERNEL: ModuleType | None = None
_LOADED = False
_forced_python = os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def _kernel() -> ModuleType | None:
    """The compiled kernel's package (imported on first use), None when it was not built or fails to load."""
    global _KERNEL, _LOADED
    if not _LOADED:
        _LOADED = True
        try:
            from newsclean.transforms._kernel import trees, walks  # noqa: F401
        except ImportError:
            _KERNEL = None
        else:
            from newsclean.transforms import _kernel
            _KERNEL = _kernel
    return _KERNEL


def available() -> bool:
    """Whether the compiled kernel was built and loads."""
    return _kernel() is not None


def enabled() -> bool:
    """Whether the chain runs the compiled kernel now: built, and not switched off (:data:`PURE_PYTHON_ENV`,
    :func:`python_only`)."""
    return not _forced_python and _kernel() is not None


@contextmanager
def python_only(on: bool = True) -> Iterator[None]:
    """Run the Python reference inside the ``with`` block (``on=False``: the kernel where built, whatever
    :data:`PURE_PYTHON_ENV` says). Not thread-safe: for tests and benchmarks in one thread."""
    global _forced_python
    saved = _forced_python
    _forced_python = on
    try:
        yield
    finally:
        _forced_python = saved


def walks() -> ModuleType:
    """The compiled tree walks (``_kernel.walks``). Call only where :func:`enabled` holds."""
    return _kernel().walks


def trees() -> ModuleType:
    """The compiled tree-ensemble evaluator (``_kernel.trees``). Call only where :func:`enabled` holds."""
    return _kernel().trees


RESULT = "result"
""":attr:`Binding.compare`: the twin returns what the reference returns for the same arguments (an iterator's items,
an array's bits)."""
TREE = "tree"
""":attr:`Binding.compare`: the twin changes the tree or blocks it is given as the reference does, and returns what it
returns."""
CALLER = "caller"
""":attr:`Binding.compare`: the twin computes a part of its caller's answer that the reference leaves to the caller
(the reference returns "none computed"); the caller's answer is what the two share."""

_UNRESOLVED = object()


@dataclass(eq=False)
class Binding:
    """One row of the binding table: a reference function and the compiled twin that does its work.

    ``names``: the attributes of the kernel module ``module`` (``"walks"`` or ``"trees"``) the twin is made of;
    ``adapt``: None when the twin ``getattr(module, names[0])`` takes the reference's arguments as they are, else a
    function ``adapt(*attributes, *arguments)`` that calls them with the reference's arguments (converting them, or
    raising :class:`Unsupported` for what the twin does not take); ``compare``: :data:`RESULT`, :data:`TREE` or
    :data:`CALLER`, what "the same" means for this twin. ``compiled`` is the callable the bound function runs,
    resolved once on first use (None: the kernel is not built)."""

    reference: Callable
    module: str
    names: tuple[str, ...]
    adapt: Callable | None = None
    compare: str = RESULT
    compiled: object = field(default=_UNRESOLVED, repr=False)

    @property
    def name(self) -> str:
        """The reference's dotted name (``newsclean.transforms.static_noise.page_keys``)."""
        return f"{self.reference.__module__}.{self.reference.__qualname__}"

    def resolve(self) -> Callable | None:
        """:attr:`compiled`, looked up in the built kernel (None where it is not built). Raises AttributeError for
        a name the kernel module lacks."""
        package = _kernel()
        if package is None:
            self.compiled = None
        else:
            parts = [getattr(getattr(package, self.module), name) for name in self.names]
            self.compiled = functools.partial(self.adapt, *parts) if self.adapt is not None else parts[0]
        return self.compiled


BINDINGS: list[Binding] = []
"""The binding table: every reference function with a compiled twin, in import order (one row per :func:`twin`)."""


def twin(*names: str, module: str = "walks", adapt: Callable | None = None,
         compare: str = RESULT) -> Callable[[Callable], Callable]:
    """Decorator binding a reference function to its compiled twin (a :class:`Binding` added to :data:`BINDINGS`):
    the returned function runs ``compiled(*args)`` where :func:`enabled` holds and the reference otherwise or when
    the twin raises :class:`Unsupported` (before it changed anything). Arguments are passed by position only.

    Raises:
        TypeError: the reference takes default, keyword-only or variable arguments (give the defaults in a caller:
            the twin is called with exactly the arguments given), or ``compare`` is not a known kind.
    """
    if compare not in (RESULT, TREE, CALLER) or not names:
        raise TypeError(f"twin({names!r}, compare={compare!r}): names and a compare of result, tree or caller")

    def bind(reference: Callable) -> Callable:
        _check_positional(reference)
        binding = Binding(reference, module, names, adapt, compare)
        BINDINGS.append(binding)

        @functools.wraps(reference)
        def bound(*args):
            if not _forced_python:
                compiled = binding.compiled
                if compiled is _UNRESOLVED:
                    compiled = binding.resolve()
                if compiled is not None:
                    try:
                        return compiled(*args)
                    except Unsupported:
                        pass
            return reference(*args)

        bound.binding = binding
        return bound

    return bind


def _check_positional(fn: Callable) -> None:
    """Raise TypeError unless every parameter of ``fn`` is a plain positional one without a default."""
    for p in inspect.signature(fn).parameters.values():
        if p.default is not p.empty or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise TypeError(f"{fn.__qualname__}: a bound function takes positional arguments without defaults ({p})")

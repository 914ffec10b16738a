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
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
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

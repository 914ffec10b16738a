"""Build of the optional compiled kernel (``transforms/_kernel``: Cython over lxml's C API).

Everything else is configured in ``pyproject.toml``. The extensions are optional: where Cython cannot run or no C
compiler is found, ``pip install .`` installs the pure-Python package, which runs the same chain
(:mod:`newsclean.transforms.kernel` picks the implementation at import).
"""

from pathlib import Path

from setuptools import Extension, setup

KERNEL = Path("transforms") / "_kernel"


def kernel_extensions() -> list[Extension]:
    """The kernel's extension modules, cythonized; none when Cython or lxml's headers are missing."""
    try:
        import lxml
        from Cython.Build import cythonize
    except ImportError:
        return []
    extensions = [
        Extension(f"newsclean.transforms._kernel.{source.stem}", [str(source)], include_dirs=lxml.get_include())
        for source in sorted(KERNEL.glob("*.pyx"))
    ]
    compiled = cythonize(extensions, compiler_directives={"language_level": 3}, quiet=True)
    for extension in compiled:  # cythonize's copies leave the flag out: a failed compile must not fail the install
        extension.optional = True
    return compiled


setup(ext_modules=kernel_extensions())

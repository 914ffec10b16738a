"""The compiled kernel: Cython modules over lxml's C API and a tree-ensemble evaluator (optional; built by
``pip install`` where a C compiler is found). Never imported directly: :mod:`newsclean.transforms.kernel` decides
whether it runs."""

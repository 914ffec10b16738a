"""Shared by every test folder: this folder is on ``sys.path`` (pytest's rootdir-relative import of a conftest in a
folder without ``__init__.py``), so the helpers beside this file (``warc_builder``, ``bench_modules``, ``repo``)
import by their plain names from any subfolder."""

# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The chain's tree walks over libxml2's node structs, through lxml's C API (compiled kernel).

Each function here does what one function of the Python reference does and returns the same result; the
reference's docstring is the specification, and :mod:`newsclean.transforms.kernel` decides which one runs. The walks
read libxml2's ``xmlNode`` fields (type, name, children/next, content, properties) of the tree lxml built and call
no libxml2 function: a Python element is made (``elementFactory``) only for what the caller gets back, and the
tree is changed only through lxml's API. lxml's views are kept exactly:

- an element's ``.text`` is the content of the text and CDATA nodes right after its start, a node's ``.tail`` that
  of those after it (lxml's ``_collectText``); children and walk order are lxml's (elements, comments, processing
  instructions; ``iterwalk``'s events);
- ``str.split()``, ``str.isspace()``, ``str.isalnum()`` and ``\\w`` are CPython's own character tests
  (``Py_UNICODE_ISSPACE``, ``Py_UNICODE_ISALNUM``) on the decoded UTF-8;
- a page holding a node lxml would show otherwise (an entity reference, XInclude markers, a namespaced element or
  attribute) raises :class:`Unsupported`, and the caller runs the Python reference on it, before anything changed;
- words are ``text.words``' units, Han/Kana tokens cut as ``text.spaceless_units`` cuts them (``WordUnits``).

The walks import only the base modules the Python reference shares with them (:mod:`~newsclean.transforms.vocab`,
:mod:`~newsclean.transforms.types`, :mod:`~newsclean.transforms.dom`, ``kernel.Unsupported``), never a paper's
module: what they compute, they compute here.
"""

cimport lxml.includes.etreepublic as cetree
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ
from libc.math cimport fabs, log1p
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memchr, memcmp, memcpy, strcmp, strlen, strncmp
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

cetree.import_lxml__etree()


cdef extern from "Python.h":
    # CPython's character tests (table lookups, safe without the GIL): str.isspace, str.isalnum, ... per character
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDIGIT(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch) nogil
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL


import unicodedata

import numpy as np

from newsclean.transforms import dom as _dom
from newsclean.transforms import types as _types
from newsclean.transforms import vocab as _vocab
from newsclean.transforms.kernel import Unsupported

cdef bytes _NOISE_ATTR = _vocab.NOISE_ATTR.encode("ascii")
cdef bytes _OWN_PREFIX = _vocab.OWN_ATTR_PREFIX.encode("ascii")
cdef bytes _DYNAMIC = _vocab.DYNAMIC.encode("ascii")


include "_text.pxi"
include "_blocks.pxi"
include "_tables.pxi"
include "_features.pxi"
include "_noise.pxi"
include "_site.pxi"
include "_metadata.pxi"
include "_page.pxi"
include "_structure.pxi"

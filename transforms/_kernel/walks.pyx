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
  attribute) raises :class:`Unsupported`, and the caller runs the Python reference on it, before anything changed.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8


cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL
from libc.math cimport fabs, log1p
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcmp, memcpy, strcmp, strncmp


cdef extern from "string.h" nogil:
    void* memmem(const void* haystack, size_t haystacklen, const void* needle, size_t needlelen)

cimport lxml.includes.etreepublic as cetree
from lxml.includes cimport tree
from lxml.includes.tree cimport xmlAttr, xmlNode

cetree.import_lxml__etree()


cdef extern from "Python.h":
    # CPython's character tests (table lookups, safe without the GIL): str.isspace, str.isalnum per character
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDIGIT(Py_UCS4 ch) nogil
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch) nogil

import unicodedata

import numpy as np

from newsclean.transforms import blocks as _blocks


from newsclean.transforms.kernel import Unsupported


# ---------------------------------------------------------------------------------------------------------------
# growable buffers

cdef struct Bytes:
    char* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int bytes_reserve(Bytes* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap
    cdef char* grown
    if b.size + extra <= b.cap:
        return 0
    cap = max(64, 2 * b.cap, b.size + extra)
    grown = <char*>realloc(b.data, cap)
    if grown == NULL:
        raise MemoryError()
    b.data = grown
    b.cap = cap
    return 0


cdef inline int bytes_add(Bytes* b, const char* s, Py_ssize_t n) except -1:
    if b.size + n > b.cap:
        bytes_reserve(b, n)
    memcpy(b.data + b.size, s, n)
    b.size += n
    return 0


cdef inline int bytes_addc(Bytes* b, char c) except -1:
    if b.size + 1 > b.cap:
        bytes_reserve(b, 1)
    b.data[b.size] = c
    b.size += 1
    return 0


cdef struct Nodes:
    xmlNode** data
    Py_ssize_t size
    Py_ssize_t cap


cdef int nodes_push(Nodes* v, xmlNode* node) except -1:
    cdef Py_ssize_t cap
    cdef xmlNode** grown
    if v.size == v.cap:
        cap = max(16, 2 * v.cap)
        grown = <xmlNode**>realloc(v.data, cap * sizeof(xmlNode*))
        if grown == NULL:
            raise MemoryError()
        v.data = grown
        v.cap = cap
    v.data[v.size] = node
    v.size += 1
    return 0


cdef struct Ints:
    Py_ssize_t* data
    Py_ssize_t size
    Py_ssize_t cap


cdef int ints_push(Ints* v, Py_ssize_t x) except -1:
    cdef Py_ssize_t cap
    cdef Py_ssize_t* grown
    if v.size == v.cap:
        cap = max(16, 2 * v.cap)
        grown = <Py_ssize_t*>realloc(v.data, cap * sizeof(Py_ssize_t))
        if grown == NULL:
            raise MemoryError()
        v.data = grown
        v.cap = cap
    v.data[v.size] = x
    v.size += 1
    return 0


# ---------------------------------------------------------------------------------------------------------------
# nodes as lxml shows them

cdef inline bint is_lxml_child(xmlNode* node) noexcept nogil:
    """lxml's ``_isElement``: the nodes an element iterates over (element, comment, entity reference, PI)."""
    return (node.type == tree.XML_ELEMENT_NODE or node.type == tree.XML_COMMENT_NODE
            or node.type == tree.XML_ENTITY_REF_NODE or node.type == tree.XML_PI_NODE)


cdef inline xmlNode* first_child(xmlNode* node) noexcept nogil:
    cdef xmlNode* c = node.children
    while c != NULL and not is_lxml_child(c):
        c = c.next
    return c


cdef inline xmlNode* next_sibling(xmlNode* node) noexcept nogil:
    cdef xmlNode* c = node.next
    while c != NULL and not is_lxml_child(c):
        c = c.next
    return c


cdef inline bint is_text(xmlNode* node) noexcept nogil:
    return node.type == tree.XML_TEXT_NODE or node.type == tree.XML_CDATA_SECTION_NODE


cdef int check_node(xmlNode* node) except -1:
    """Raise :class:`Unsupported` for a node lxml shows otherwise than the kernel reads it."""
    cdef int t = node.type
    if t == tree.XML_ELEMENT_NODE:
        if node.ns != NULL:
            raise Unsupported("namespaced element")
        return 0
    if t == tree.XML_TEXT_NODE or t == tree.XML_CDATA_SECTION_NODE or t == tree.XML_COMMENT_NODE \
            or t == tree.XML_PI_NODE:
        return 0
    raise Unsupported(f"node type {t}")


cdef int check_children(xmlNode* node) except -1:
    """:func:`check_node` of every child node of ``node`` (text nodes included)."""
    cdef xmlNode* c = node.children
    while c != NULL:
        check_node(c)
        c = c.next
    return 0


cdef int add_text(Bytes* out, xmlNode* node) except -1:
    """Append lxml's ``_collectText(node)``: the content of ``node`` and the text nodes after it (nothing when
    ``node`` is no text node). Returns whether any text node was there (lxml: '' rather than None)."""
    cdef int found = 0
    cdef const char* s
    while node != NULL and is_text(node):
        found = 1
        if node.content != NULL:
            s = <const char*>node.content
            bytes_add(out, s, _strlen(s))
        node = node.next
    return found


cdef inline Py_ssize_t _strlen(const char* s) noexcept nogil:
    cdef Py_ssize_t n = 0
    while s[n]:
        n += 1
    return n


cdef inline bint name_is(xmlNode* node, const char* name) noexcept nogil:
    return node.name != NULL and strcmp(<const char*>node.name, name) == 0


cdef xmlAttr* find_attr(xmlNode* node, const char* name) except? NULL:
    """The attribute ``name`` (no namespace) of an element, NULL when absent. Raises :class:`Unsupported` for a
    namespaced attribute or a value lxml would build from several nodes."""
    cdef xmlAttr* a = node.properties
    while a != NULL:
        if a.ns != NULL:
            raise Unsupported("namespaced attribute")
        if a.name != NULL and strcmp(<const char*>a.name, name) == 0:
            if a.children != NULL and (a.children.next != NULL or a.children.type != tree.XML_TEXT_NODE):
                raise Unsupported("attribute value of several nodes")
            return a
        a = a.next
    return NULL


cdef const char* _EMPTY = ""


cdef inline const char* attr_value(xmlAttr* a) noexcept nogil:
    """The value of an attribute found by :func:`find_attr` ('' when it has none, as ``xmlGetNsProp``)."""
    if a.children == NULL or a.children.content == NULL:
        return _EMPTY
    return <const char*>a.children.content


# ---------------------------------------------------------------------------------------------------------------
# characters

cdef inline Py_UCS4 decode(const unsigned char* s, Py_ssize_t* i) noexcept nogil:
    """The code point at byte ``i[0]`` of UTF-8 ``s`` (libxml2 stores valid UTF-8); moves ``i`` past it."""
    cdef unsigned char c = s[i[0]]
    cdef Py_UCS4 cp
    if c < 0x80:
        i[0] += 1
        return c
    if c < 0xE0:
        cp = ((c & 0x1F) << 6) | (s[i[0] + 1] & 0x3F)
        i[0] += 2
        return cp
    if c < 0xF0:
        cp = ((c & 0x0F) << 12) | ((s[i[0] + 1] & 0x3F) << 6) | (s[i[0] + 2] & 0x3F)
        i[0] += 3
        return cp
    cp = ((c & 0x07) << 18) | ((s[i[0] + 1] & 0x3F) << 12) | ((s[i[0] + 2] & 0x3F) << 6) | (s[i[0] + 3] & 0x3F)
    i[0] += 4
    return cp


cdef inline bint is_space(Py_UCS4 cp) noexcept nogil:
    """``str.isspace`` of one character (what ``str.split()`` splits on)."""
    return Py_UNICODE_ISSPACE(cp)


cdef inline bint is_spaceless(Py_UCS4 cp) noexcept nogil:
    """A character of ``text._SPACELESS_WORD`` (Han, Hiragana, Katakana): words without spaces."""
    return ((0x3040 <= cp <= 0x309F) or (0x3400 <= cp <= 0x4DBF) or (0x4E00 <= cp <= 0x9FFF)
            or (0xF900 <= cp <= 0xFAFF) or (0x20000 <= cp <= 0x3134F) or (0x30A0 <= cp <= 0x30FF)
            or (0x31F0 <= cp <= 0x31FF) or (0xFF66 <= cp <= 0xFF9F))


cdef unsigned char* _WIDE = NULL  # per code point: 0 not looked up, 1 narrow, 2 East Asian Wide or Fullwidth


cdef bint is_wide(Py_UCS4 cp) except -1:
    """``unicodedata.east_asian_width(chr(cp)) in "WF"`` (looked up once per code point and process)."""
    global _WIDE
    if cp < 0x1100:
        return False
    if _WIDE == NULL:
        _WIDE = <unsigned char*>calloc(0x110000, 1)
        if _WIDE == NULL:
            raise MemoryError()
    if _WIDE[cp] == 0:
        _WIDE[cp] = 2 if unicodedata.east_asian_width(chr(cp)) in ("W", "F") else 1
    return _WIDE[cp] == 2


cdef struct TokenStats:
    Py_ssize_t tokens      # whitespace-separated tokens
    Py_ssize_t words       # tokens holding a letter or digit (text.is_word)
    Py_ssize_t chars       # code points of the tokens joined by single spaces
    bint spaceless         # a Han/Kana character: text.words cuts tokens further (Python builds the block)
    bint wide              # an East Asian Wide/Fullwidth character (Python's text_density)
    bint non_ascii


cdef int token_stats(const unsigned char* s, Py_ssize_t n, TokenStats* st, Bytes* joined) except -1:
    """Split UTF-8 ``s[:n]`` as ``str.split()`` does and count tokens, words and characters; with ``joined``, write
    the tokens joined by single spaces there (``" ".join(s.split())``)."""
    cdef Py_ssize_t i = 0, start, tok_chars
    cdef Py_UCS4 cp
    cdef bint in_token = False, alnum = False, underscore = False, other = False
    st.tokens = st.words = st.chars = 0
    st.spaceless = st.wide = st.non_ascii = False
    while i < n:
        start = i
        cp = decode(s, &i)
        if is_space(cp):
            if in_token:
                if alnum or (underscore and other):
                    st.words += 1
                in_token = False
            continue
        if not in_token:
            in_token = True
            alnum = underscore = other = False
            if st.tokens:
                st.chars += 1
                if joined != NULL:
                    bytes_addc(joined, b' ')
            st.tokens += 1
        st.chars += 1
        if joined != NULL:
            bytes_add(joined, <const char*>s + start, i - start)
        if cp == 0x5F:
            underscore = True
        else:
            other = True
            if cp < 0x80:
                if (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A):
                    alnum = True
            else:
                st.non_ascii = True
                if Py_UNICODE_ISALNUM(cp):
                    alnum = True
                if is_spaceless(cp):
                    st.spaceless = True
                elif is_wide(cp):
                    st.wide = True
    if in_token and (alnum or (underscore and other)):
        st.words += 1
    return 0


cdef bint has_non_space(const unsigned char* s, Py_ssize_t n) noexcept:
    """``not text.isspace()`` of a non-empty text."""
    cdef Py_ssize_t i = 0
    while i < n:
        if not is_space(decode(s, &i)):
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# hidden elements (blocks.is_hidden, blocks.hidden_elements)

cdef bint ascii_only(const char* s) noexcept nogil:
    cdef Py_ssize_t i = 0
    while s[i]:
        if <unsigned char>s[i] >= 0x80:
            return False
        i += 1
    return True


cdef inline char ascii_lower(char c) noexcept nogil:
    return c + 32 if 0x41 <= c <= 0x5A else c


cdef Py_ssize_t match_property(const char* s, Py_ssize_t i, const char* name, const char* value) noexcept nogil:
    """Whether ASCII ``s`` at ``i`` matches ``name\\s*:\\s*value`` ignoring case (1) or not (0)."""
    cdef Py_ssize_t k = 0
    while name[k]:
        if ascii_lower(s[i]) != name[k]:
            return 0
        i += 1
        k += 1
    while s[i] and Py_UNICODE_ISSPACE(<unsigned char>s[i]):
        i += 1
    if s[i] != b':':
        return 0
    i += 1
    while s[i] and Py_UNICODE_ISSPACE(<unsigned char>s[i]):
        i += 1
    k = 0
    while value[k]:
        if ascii_lower(s[i]) != value[k]:
            return 0
        i += 1
        k += 1
    return 1


cdef bint style_hides(const char* s) noexcept nogil:
    """``blocks._HIDDEN_STYLE.search(style)`` for an ASCII style (``display\\s*:\\s*none|visibility\\s*:\\s*hidden``,
    any case)."""
    cdef Py_ssize_t i = 0
    while s[i]:
        if match_property(s, i, b"display", b"none") or match_property(s, i, b"visibility", b"hidden"):
            return True
        i += 1
    return False


cdef bint aria_true(const char* s) noexcept nogil:
    """``value.strip().lower() == "true"`` for an ASCII value."""
    cdef Py_ssize_t start = 0, end = _strlen(s)
    while start < end and Py_UNICODE_ISSPACE(<unsigned char>s[start]):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(<unsigned char>s[end - 1]):
        end -= 1
    if end - start != 4:
        return False
    return (ascii_lower(s[start]) == b't' and ascii_lower(s[start + 1]) == b'r' and ascii_lower(s[start + 2]) == b'u'
            and ascii_lower(s[start + 3]) == b'e')


cdef int node_hidden(object doc, xmlNode* node) except -1:
    """``blocks.is_hidden`` of an element (Python's where a value is not ASCII)."""
    cdef xmlAttr* a = node.properties
    cdef const char* style = NULL
    cdef const char* aria = NULL
    cdef bint hidden_attr = False
    while a != NULL:
        if a.ns != NULL:
            raise Unsupported("namespaced attribute")
        if a.children != NULL and (a.children.next != NULL or a.children.type != tree.XML_TEXT_NODE):
            raise Unsupported("attribute value of several nodes")
        if strcmp(<const char*>a.name, b"style") == 0:
            style = attr_value(a)
        elif strcmp(<const char*>a.name, b"hidden") == 0:
            hidden_attr = True
        elif strcmp(<const char*>a.name, b"aria-hidden") == 0:
            aria = attr_value(a)
        a = a.next
    if style == NULL and aria == NULL and not hidden_attr:
        return 0
    if (style != NULL and not ascii_only(style)) or (aria != NULL and not ascii_only(aria)):
        return _blocks.is_hidden(cetree.elementFactory(doc, node))
    if style != NULL and style[0] and style_hides(style):
        return 1
    return hidden_attr or (aria != NULL and aria_true(aria))


# ---------------------------------------------------------------------------------------------------------------
# text blocks (blocks.extract_blocks)

cdef double wrap_density(const unsigned char* s, Py_ssize_t n, Py_ssize_t width, Py_ssize_t num_words,
                         Py_ssize_t chars, bint ascii) except -1:
    """``blocks.text_density`` of a block whose tokens are all narrow (one unit of ``len`` columns each): the greedy
    ``width``-column wrap of its tokens (``s``: the tokens joined by single spaces, ``chars`` code points), words
    on all lines but the last over lines - 1; one line: its words."""
    cdef Py_ssize_t i = 0, start, tok_len, units = 0, line_words = 0, used = 0, extra
    cdef Py_ssize_t lines = 0, before_last = 0, last = 0
    cdef Py_UCS4 cp
    cdef bint alnum, underscore, other, word
    if chars <= width // 2 or (chars <= width and ascii):
        return <double>num_words
    while i < n:
        # one token (tokens are separated by single spaces)
        tok_len = 0
        alnum = underscore = other = False
        while i < n:
            start = i
            cp = decode(s, &i)
            if cp == 0x20:
                break
            tok_len += 1
            if cp == 0x5F:
                underscore = True
            else:
                other = True
                if cp < 0x80:
                    if (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A):
                        alnum = True
                elif Py_UNICODE_ISALNUM(cp):
                    alnum = True
        word = alnum or (underscore and other)
        extra = tok_len + (1 if units else 0)
        if units and used + extra > width:
            lines += 1
            before_last += line_words
            units = line_words = 0
            used = 0
            extra = tok_len
        units += 1
        line_words += word
        used += extra
    if units:
        lines += 1
        last = line_words
    else:
        return <double>num_words
    if lines <= 1:
        return <double>num_words
    return <double>before_last / <double>(lines - 1)


cdef class _Segmenter:
    """The state of one :func:`extract_blocks` walk (``blocks._segment``)."""

    cdef object doc
    cdef object params
    cdef bint detail
    cdef Py_ssize_t width
    cdef list out
    cdef object fallback          # blocks._Builder for blocks the kernel leaves to Python (Han/Kana text)
    # the pending block
    cdef Nodes piece_nodes
    cdef Ints piece_slots         # 0: text, 1: tail
    cdef Ints piece_ends          # end offset of each piece in ``texts``
    cdef Ints piece_linked
    cdef Bytes texts
    cdef Py_ssize_t linked_words
    cdef bint linked_spaceless
    cdef xmlNode* first
    cdef bint has_text
    cdef Bytes scratch

    def __dealloc__(self):
        free(self.piece_nodes.data)
        free(self.piece_slots.data)
        free(self.piece_ends.data)
        free(self.piece_linked.data)
        free(self.texts.data)
        free(self.scratch.data)

    cdef int reset(self) except -1:
        self.piece_nodes.size = 0
        self.piece_slots.size = 0
        self.piece_ends.size = 0
        self.piece_linked.size = 0
        self.texts.size = 0
        self.linked_words = 0
        self.linked_spaceless = False
        self.has_text = False
        return 0

    cdef int add_piece(self, xmlNode* node, int slot, Py_ssize_t start, bint linked) except -1:
        """The text just appended to ``texts`` from ``start`` is a piece of ``node``'s ``slot``."""
        cdef TokenStats st
        cdef const unsigned char* s = <const unsigned char*>self.texts.data + start
        cdef Py_ssize_t n = self.texts.size - start
        nodes_push(&self.piece_nodes, node)
        ints_push(&self.piece_slots, slot)
        ints_push(&self.piece_ends, self.texts.size)
        ints_push(&self.piece_linked, linked)
        if linked:
            token_stats(s, n, &st, NULL)
            self.linked_words += st.words
            self.linked_spaceless = self.linked_spaceless or st.spaceless
        if not self.has_text:
            self.has_text = has_non_space(s, n)
        return 0

    cdef list pieces(self):
        cdef Py_ssize_t k
        return [(cetree.elementFactory(self.doc, self.piece_nodes.data[k]),
                 "tail" if self.piece_slots.data[k] else "text") for k in range(self.piece_nodes.size)]

    cdef int flush(self) except -1:
        """``blocks._Builder.flush`` of the pending pieces (a block when they hold a word), then a new block."""
        cdef TokenStats st
        cdef Py_ssize_t n, k, start
        cdef double density
        if not self.piece_nodes.size:
            return 0
        if not self.has_text:
            self.reset()
            return 0
        self.scratch.size = 0
        token_stats(<const unsigned char*>self.texts.data, self.texts.size, &st, &self.scratch)
        if st.spaceless:
            self.flush_in_python()
        elif st.words:
            n = st.words
            text = PyUnicode_DecodeUTF8(self.scratch.data, self.scratch.size, NULL)
            if self.detail:
                if st.wide:
                    density = _blocks.text_density(text, self.width, n, text.split())
                else:
                    density = wrap_density(<const unsigned char*>self.scratch.data, self.scratch.size, self.width,
                                           n, st.chars, not st.non_ascii)
                block = _blocks.TextBlock(text, n, min(self.linked_words, n), density,
                                          cetree.elementFactory(self.doc, self.first), self.pieces())
            else:
                block = _blocks.TextBlock(text, n, min(self.linked_words, n), 0.0,
                                          cetree.elementFactory(self.doc, self.first))
            self.out.append(block)
        self.reset()
        return 0

    cdef int flush_in_python(self) except -1:
        """Hand the pending block to the Python builder (its words need ``text.words``' Han/Kana cuts)."""
        cdef Py_ssize_t k, start = 0
        texts, linked = [], []
        for k in range(self.piece_nodes.size):
            piece = PyUnicode_DecodeUTF8(self.texts.data + start, self.piece_ends.data[k] - start, NULL)
            texts.append(piece)
            if self.piece_linked.data[k]:
                linked.append(piece)
            start = self.piece_ends.data[k]
        self.fallback.flush(self.pieces(), texts, linked, cetree.elementFactory(self.doc, self.first))
        self.out.extend(self.fallback.blocks)
        del self.fallback.blocks[:]
        return 0


cdef struct Kind:
    bint separator
    bint skip
    bint link
    bint hidden     # an outermost hidden element


cdef list segment(cetree._Element body, object params, bint detail, bint skip_hidden, list hidden):
    """``blocks._segment`` of ``body``: its text blocks; with ``skip_hidden``, the elements of
    ``blocks.hidden_elements(body)`` are skipped as SKIP_TAGS are, and appended to ``hidden``."""
    cdef _Segmenter seg = _Segmenter()
    cdef xmlNode* root = body._c_node
    cdef xmlNode* node
    cdef xmlNode* nxt
    cdef Nodes containers
    cdef Kind* kinds = NULL
    cdef Kind* grown
    cdef Py_ssize_t depth = 0, cap = 0, links = 0, skipping = 0, start, hidden_depth = 0
    cdef Kind kind
    cdef bint separate_marked = params.separate_marked
    cdef cetree._Element el
    non_separators = frozenset(params.non_separator_tags)
    skip_tags = frozenset(_blocks.SKIP_TAGS)
    tag_kinds = {}
    seg.doc = body._doc
    seg.params = params
    seg.detail = detail
    seg.width = params.wrap_width
    seg.out = []
    seg.fallback = _blocks._Builder(params, detail)
    containers.data = NULL
    containers.size = containers.cap = 0
    try:
        node = root
        while True:
            # ---- start of ``node`` (an element, a comment or a PI)
            if node.type == tree.XML_ELEMENT_NODE:
                check_node(node)
                check_children(node)
                name = <bytes>node.name
                cached = tag_kinds.get(name)
                if cached is None:
                    tag = name.decode("utf-8")
                    cached = tag_kinds[name] = (tag not in non_separators, tag in skip_tags, tag == "a")
                kind.separator, kind.skip, kind.link = cached
                kind.hidden = False
                if skip_hidden and not hidden_depth and node != root and node_hidden(seg.doc, node):
                    kind.hidden = True  # an outermost hidden element (none above it, below ``body``)
                    hidden.append(cetree.elementFactory(seg.doc, node))
                    kind.skip = True
                hidden_depth += kind.hidden
                if not kind.separator and separate_marked and find_attr(node, b"data-newsclean-noise") != NULL:
                    kind.separator = True
                if depth == cap:
                    cap = max(64, 2 * cap)
                    grown = <Kind*>realloc(kinds, cap * sizeof(Kind))
                    if grown == NULL:
                        raise MemoryError()
                    kinds = grown
                kinds[depth] = kind
                depth += 1
                if kind.skip:
                    skipping += 1
                if kind.separator:
                    seg.flush()
                    nodes_push(&containers, node)
                if kind.link:
                    links += 1
                if not skipping and node.children != NULL and is_text(node.children):
                    start = seg.texts.size
                    if add_text(&seg.texts, node.children) and seg.texts.size > start:
                        if not seg.piece_nodes.size:
                            if not containers.size:
                                raise IndexError("list index out of range")  # blocks._segment's containers[-1]
                            seg.first = containers.data[containers.size - 1]
                        seg.add_piece(node, 0, start, links > 0)
                    else:
                        seg.texts.size = start
                nxt = first_child(node)
                if nxt != NULL:
                    node = nxt
                    continue
                # no children: the element ends now
            elif node.type != tree.XML_COMMENT_NODE and node.type != tree.XML_PI_NODE:
                raise Unsupported(f"node type {node.type}")
            # ---- end of ``node``, then its tail; climb while no next sibling
            while True:
                if node.type == tree.XML_ELEMENT_NODE:
                    depth -= 1
                    kind = kinds[depth]
                    hidden_depth -= kind.hidden
                    if kind.link:
                        links -= 1
                    if kind.separator:
                        seg.flush()
                        containers.size -= 1
                    if kind.skip:
                        skipping -= 1
                    if node == root:
                        break
                if not skipping and node.next != NULL and is_text(node.next):
                    start = seg.texts.size
                    if add_text(&seg.texts, node.next) and seg.texts.size > start:
                        if not seg.piece_nodes.size:
                            seg.first = containers.data[containers.size - 1] if containers.size else root
                        seg.add_piece(node, 1, start, links > 0)
                    else:
                        seg.texts.size = start
                nxt = next_sibling(node)
                if nxt != NULL:
                    node = nxt
                    break
                node = node.parent
            if node == root and depth == 0:
                break
        if seg.has_text:
            seg.flush()
        return seg.out
    finally:
        free(containers.data)
        free(kinds)


def extract_blocks(root, params, bint detail=True):
    """``blocks.extract_blocks(root, params, detail)``. Raises :class:`Unsupported` (the tree is not changed)."""
    body = root.find("body") if root.tag == "html" else root
    body = root if body is None else body
    hidden = []
    out = segment(body, params, detail, params.skip_hidden, hidden)
    if hidden and _blocks.hides_most(hidden, out, params.max_hidden_share):
        out = segment(body, params, detail, False, [])
    return out


# ---------------------------------------------------------------------------------------------------------------
# node maps and tag facts

cdef struct NodeMap:
    # open addressing: a node's address -> a slot number (per call; nodes do not move while a walk runs)
    void** keys
    Py_ssize_t* values
    Py_ssize_t cap      # a power of two
    Py_ssize_t size


cdef inline size_t _hash_ptr(void* p) noexcept nogil:
    cdef size_t h = (<size_t>p) >> 4
    h ^= h >> 33
    h *= <size_t>0xff51afd7ed558ccdULL
    h ^= h >> 33
    return h


cdef int map_init(NodeMap* m, Py_ssize_t expected) except -1:
    cdef Py_ssize_t cap = 16
    while cap < 2 * expected + 2:
        cap *= 2
    m.keys = <void**>calloc(cap, sizeof(void*))
    m.values = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
    if m.keys == NULL or m.values == NULL:
        free(m.keys)
        free(m.values)
        m.keys = NULL
        m.values = NULL
        raise MemoryError()
    m.cap = cap
    m.size = 0
    return 0


cdef void map_free(NodeMap* m) noexcept:
    free(m.keys)
    free(m.values)
    m.keys = NULL
    m.values = NULL


cdef inline Py_ssize_t map_get(NodeMap* m, void* key) noexcept nogil:
    """The slot of ``key``, -1 when absent."""
    cdef size_t i = _hash_ptr(key) & (m.cap - 1)
    while m.keys[i] != NULL:
        if m.keys[i] == key:
            return m.values[i]
        i = (i + 1) & (m.cap - 1)
    return -1


cdef int map_put(NodeMap* m, void* key, Py_ssize_t value) except -1:
    cdef size_t i
    cdef void** old_keys
    cdef Py_ssize_t* old_values
    cdef Py_ssize_t old_cap, k
    if 2 * (m.size + 1) > m.cap:
        old_keys, old_values, old_cap = m.keys, m.values, m.cap
        m.keys = <void**>calloc(2 * old_cap, sizeof(void*))
        m.values = <Py_ssize_t*>malloc(2 * old_cap * sizeof(Py_ssize_t))
        if m.keys == NULL or m.values == NULL:
            free(m.keys)
            free(m.values)
            m.keys, m.values = old_keys, old_values
            raise MemoryError()
        m.cap = 2 * old_cap
        m.size = 0
        for k in range(old_cap):
            if old_keys[k] != NULL:
                map_put(m, old_keys[k], old_values[k])
        free(old_keys)
        free(old_values)
    i = _hash_ptr(key) & (m.cap - 1)
    while m.keys[i] != NULL:
        if m.keys[i] == key:
            m.values[i] = value
            return 0
        i = (i + 1) & (m.cap - 1)
    m.keys[i] = key
    m.values[i] = value
    m.size += 1
    return 0


cdef inline xmlNode* parent_element(xmlNode* node) noexcept nogil:
    """lxml's ``getparent()``: the parent element, NULL at the root (its parent is the document)."""
    cdef xmlNode* p = node.parent
    if p == NULL or not is_lxml_child(p):
        return NULL
    return p


cdef enum:
    TAG_PARAGRAPH = 1       # ancestor_filter.PARAGRAPH_TAGS
    TAG_TABLE = 2
    TAG_TR = 4
    TAG_TD = 8
    TAG_TH = 16


cdef struct TagInfo:
    int flags
    int semantic            # bit of features.SEMANTIC_TAGS (0: none)
    int container_class     # features.CONTAINER_CLASSES (0: none)


cdef class TagFacts:
    """Per element name, what the features read of it (built from the Python reference's constants)."""

    cdef dict by_name   # bytes -> (flags, semantic bit, container class)

    def __init__(self, paragraph_tags, semantic_tags, container_classes):
        self.by_name = {}
        names = set(paragraph_tags) | set(semantic_tags) | set(container_classes) | {"table", "tr", "td", "th"}
        for name in names:
            flags = (TAG_PARAGRAPH if name in paragraph_tags else 0) | (TAG_TABLE if name == "table" else 0) | \
                (TAG_TR if name == "tr" else 0) | (TAG_TD if name == "td" else 0) | (TAG_TH if name == "th" else 0)
            semantic = 1 << semantic_tags.index(name) if name in semantic_tags else 0
            self.by_name[name.encode("utf-8")] = (flags, semantic, container_classes.get(name, 0))

    cdef TagInfo lookup(self, xmlNode* node) except *:
        cdef TagInfo info
        info.flags = info.semantic = info.container_class = 0
        if node.type != tree.XML_ELEMENT_NODE or node.name == NULL:
            return info
        if node.ns != NULL:
            raise Unsupported("namespaced element")
        found = self.by_name.get(<bytes>node.name)
        if found is not None:
            info.flags, info.semantic, info.container_class = found
        return info


cdef class TagCache:
    """:class:`TagFacts` per node name address for one call (libxml2 interns a document's names)."""

    cdef TagFacts facts
    cdef NodeMap map
    cdef TagInfo* infos
    cdef Py_ssize_t n, cap

    def __cinit__(self):
        self.infos = NULL
        self.map.keys = NULL
        self.map.values = NULL

    def __dealloc__(self):
        map_free(&self.map)
        free(self.infos)

    cdef int init(self, TagFacts facts) except -1:
        self.facts = facts
        map_init(&self.map, 64)
        self.cap = 64
        self.n = 0
        self.infos = <TagInfo*>malloc(self.cap * sizeof(TagInfo))
        if self.infos == NULL:
            raise MemoryError()
        return 0

    cdef TagInfo get(self, xmlNode* node) except *:
        cdef Py_ssize_t slot
        cdef TagInfo* grown
        if node.type != tree.XML_ELEMENT_NODE or node.name == NULL:
            return self.facts.lookup(node)
        slot = map_get(&self.map, <void*>node.name)
        if slot >= 0:
            return self.infos[slot]
        if self.n == self.cap:
            grown = <TagInfo*>realloc(self.infos, 2 * self.cap * sizeof(TagInfo))
            if grown == NULL:
                raise MemoryError()
            self.infos = grown
            self.cap *= 2
        self.infos[self.n] = self.facts.lookup(node)
        map_put(&self.map, <void*>node.name, self.n)
        self.n += 1
        return self.infos[self.n - 1]


cdef xmlNode* paragraph_of(TagCache tags, xmlNode* el) except? NULL:
    """``ancestor_filter.paragraph_of``: the closest ancestor-or-self with a paragraph tag, else the topmost."""
    cdef xmlNode* node = el
    cdef xmlNode* parent
    while node != NULL:
        if tags.get(node).flags & TAG_PARAGRAPH:
            return node
        parent = parent_element(node)
        if parent == NULL:
            return node
        node = parent
    return el


cdef inline xmlNode* parent_or_self(xmlNode* node) noexcept nogil:
    """``node.getparent() if node.getparent() is not None else node``."""
    cdef xmlNode* p = parent_element(node)
    return node if p == NULL else p


cdef bint in_subtree(xmlNode* node, xmlNode* top) noexcept nogil:
    """``node in set(top.iter())`` for an element ``node`` (False when ``top`` is NULL)."""
    if top == NULL:
        return False
    while node != NULL:
        if node == top:
            return True
        node = parent_element(node)
    return False


cdef Py_ssize_t lxml_len(xmlNode* node) noexcept nogil:
    """``len(element)``: its children as lxml counts them (elements, comments, PIs, entity references)."""
    cdef Py_ssize_t n = 0
    cdef xmlNode* c = node.children
    while c != NULL:
        if is_lxml_child(c):
            n += 1
        c = c.next
    return n


# ---------------------------------------------------------------------------------------------------------------
# math.fsum (CPython's mathmodule.c: Shewchuk's exact partial sums, correctly rounded)

cdef double fsum(const double* values, Py_ssize_t count) except? -1.0:
    cdef double* p = <double*>malloc((count + 1) * sizeof(double))
    cdef Py_ssize_t i, j, n = 0, k
    cdef double x, y, t, hi, yr, lo = 0.0
    if p == NULL:
        raise MemoryError()
    for k in range(count):
        x = values[k]
        i = 0
        for j in range(n):
            y = p[j]
            if fabs(x) < fabs(y):
                t = x
                x = y
                y = t
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                p[i] = lo
                i += 1
            x = hi
        n = i
        if x != 0.0:
            p[n] = x
            n += 1
    hi = 0.0
    if n > 0:
        n -= 1
        hi = p[n]
        while n > 0:
            x = hi
            n -= 1
            y = p[n]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and p[n - 1] < 0.0) or (lo > 0.0 and p[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    free(p)
    return hi


# ---------------------------------------------------------------------------------------------------------------
# string tables: UTF-8 keys (the lexicon's words, a title's tokens, a block's distinct tokens)

cdef inline size_t _hash_bytes(const char* s, Py_ssize_t n) noexcept nogil:
    cdef size_t h = <size_t>14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h ^= <unsigned char>s[i]
        h *= <size_t>1099511628211ULL
    return h


cdef struct StrSet:
    # open addressing over (offset, length) slices of one buffer (``base``)
    Py_ssize_t* offsets     # -1: empty slot
    Py_ssize_t* lengths
    double* values
    Py_ssize_t* used        # the filled slots, in order (clearing costs what was filled)
    Py_ssize_t cap
    Py_ssize_t size
    const char* base


cdef int strset_init(StrSet* t, Py_ssize_t expected) except -1:
    cdef Py_ssize_t cap = 16, k
    while cap < 2 * expected + 2:
        cap *= 2
    t.offsets = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
    t.lengths = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
    t.values = <double*>malloc(cap * sizeof(double))
    t.used = <Py_ssize_t*>malloc(cap * sizeof(Py_ssize_t))
    if t.offsets == NULL or t.lengths == NULL or t.values == NULL or t.used == NULL:
        free(t.offsets)
        free(t.lengths)
        free(t.values)
        free(t.used)
        raise MemoryError()
    for k in range(cap):
        t.offsets[k] = -1
    t.cap = cap
    t.size = 0
    t.base = NULL
    return 0


cdef void strset_free(StrSet* t) noexcept:
    free(t.offsets)
    free(t.lengths)
    free(t.values)
    free(t.used)
    t.offsets = NULL
    t.lengths = NULL
    t.values = NULL
    t.used = NULL


cdef void strset_clear(StrSet* t) noexcept nogil:
    cdef Py_ssize_t k
    for k in range(t.size):
        t.offsets[t.used[k]] = -1
    t.size = 0


cdef inline Py_ssize_t strset_find(StrSet* t, const char* s, Py_ssize_t n) noexcept nogil:
    """The slot holding key ``s[:n]``, or the empty slot where it would go."""
    cdef size_t i = _hash_bytes(s, n) & (t.cap - 1)
    cdef Py_ssize_t k
    while t.offsets[i] >= 0:
        if t.lengths[i] == n:
            k = 0
            while k < n and t.base[t.offsets[i] + k] == s[k]:
                k += 1
            if k == n:
                return i
        i = (i + 1) & (t.cap - 1)
    return i


cdef int strset_grow(StrSet* t) except -1:
    cdef Py_ssize_t* offsets = t.offsets
    cdef Py_ssize_t* lengths = t.lengths
    cdef double* values = t.values
    cdef Py_ssize_t* used = t.used
    cdef Py_ssize_t cap = t.cap, size = t.size, k, slot, old
    cdef const char* base = t.base
    strset_init(t, cap)
    t.base = base
    for k in range(size):
        old = used[k]
        slot = strset_find(t, base + offsets[old], lengths[old])
        t.offsets[slot] = offsets[old]
        t.lengths[slot] = lengths[old]
        t.values[slot] = values[old]
        t.used[t.size] = slot
        t.size += 1
    free(offsets)
    free(lengths)
    free(values)
    free(used)
    return 0


cdef int strset_add(StrSet* t, Py_ssize_t offset, Py_ssize_t n, double value) except -1:
    """Add the slice ``base[offset:offset + n]`` (of ``t.base``); returns 1 when new, 0 when already there."""
    cdef Py_ssize_t slot
    if 2 * (t.size + 1) > t.cap:
        strset_grow(t)
    slot = strset_find(t, t.base + offset, n)
    if t.offsets[slot] >= 0:
        return 0
    t.offsets[slot] = offset
    t.lengths[slot] = n
    t.values[slot] = value
    t.used[t.size] = slot
    t.size += 1
    return 1


cdef class StringTable:
    """A str -> float mapping (the boilerplate lexicon, a title's tokens) as a C table of UTF-8 keys."""

    cdef bytes store
    cdef StrSet table

    def __cinit__(self):
        self.table.offsets = NULL
        self.table.lengths = NULL
        self.table.values = NULL
        self.table.used = NULL

    def __init__(self, mapping):
        cdef list parts = []
        cdef list spans = []
        cdef Py_ssize_t offset = 0, k
        for key, value in mapping.items():
            data = key.encode("utf-8", "surrogatepass")
            parts.append(data)
            spans.append((offset, len(data), float(value)))
            offset += len(data)
        self.store = b"".join(parts)
        strset_init(&self.table, len(spans))
        self.table.base = self.store
        for start, size, value in spans:
            strset_add(&self.table, start, size, value)

    def __dealloc__(self):
        strset_free(&self.table)

    cdef inline bint get(self, const char* s, Py_ssize_t n, double* value) noexcept:
        cdef Py_ssize_t slot = strset_find(&self.table, s, n)
        if self.table.offsets[slot] < 0:
            return False
        value[0] = self.table.values[slot]
        return True


_LEXICON_TABLES = {}  # id(lexicon) -> (lexicon, its StringTable): the lexicon is loaded once per process


cdef StringTable lexicon_table(object lexicon):
    found = _LEXICON_TABLES.get(id(lexicon))
    if found is not None and found[0] is lexicon:
        return found[1]
    table = StringTable(lexicon)
    if len(_LEXICON_TABLES) > 8:
        _LEXICON_TABLES.clear()
    _LEXICON_TABLES[id(lexicon)] = (lexicon, table)
    return table


cdef inline bint is_word_char(Py_UCS4 cp) noexcept nogil:
    """``\\w`` of ``re`` on str: ``Py_UNICODE_ISALNUM`` or ``_``."""
    if cp < 0x80:
        return (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A) or cp == 0x5F
    return Py_UNICODE_ISALNUM(cp)


# ---------------------------------------------------------------------------------------------------------------
# block features (classifier.features: the shallow, text, papers, dom, page, cluster, neighbours, table and
# lexicon groups)

cdef object _features_module = None
cdef TagFacts _FACTS = None
cdef tuple _COLUMNS = None      # (column of each feature name in FEATURE_NAMES order) by group


cdef _load_features():
    global _features_module, _FACTS
    if _features_module is None:
        from newsclean.transforms.ancestor_filter import PARAGRAPH_TAGS
        from newsclean.transforms.classifier import features
        _FACTS = TagFacts(PARAGRAPH_TAGS, features.SEMANTIC_TAGS, features.CONTAINER_CLASSES)
        _features_module = features
    return _features_module


KERNEL_GROUPS = ("shallow", "text", "papers", "dom", "page", "cluster", "neighbours", "table", "lexicon")
"""The feature groups :func:`block_features` computes (the others: the Python reference's functions)."""


cdef struct BlockFacts:
    xmlNode* container
    xmlNode* owner          # where the block's first text lies (in_dynamic_noise), NULL: none
    Py_ssize_t words        # TextBlock.num_words
    Py_ssize_t linked       # TextBlock.num_linked_words
    Py_ssize_t chars        # len(text)
    double density
    double link_density
    Py_ssize_t ws           # len(words(text))
    Py_ssize_t ws_chars     # sum(map(len, words(text)))
    Py_ssize_t caps         # words opening with an upper-case letter
    Py_ssize_t ends         # features._SENTENCE_END matches in text + " "
    Py_ssize_t commas
    Py_ssize_t digits       # str.isdigit characters
    bint python_words       # Han/Kana text: words() cuts tokens; the shallow row comes from Python
    xmlNode* para           # paragraph_of(container)
    xmlNode* parent         # para's parent or para
    xmlNode* grand          # parent's parent or parent
    xmlNode* table          # the nearest table ancestor-or-self of the container, NULL: none


cdef int text_facts(str text, BlockFacts* f) except -1:
    """Characters, words, capitals, sentence ends, commas and digits of a block's text."""
    cdef Py_ssize_t size, i = 0, j
    cdef const unsigned char* s = <const unsigned char*>PyUnicode_AsUTF8AndSize(text, &size)
    cdef Py_UCS4 cp, first = 0, nxt
    cdef bint in_token = False, alnum = False, underscore = False, other = False, spaceless = False
    cdef Py_ssize_t tok_chars = 0
    f.chars = f.ws = f.ws_chars = f.caps = f.ends = f.commas = f.digits = 0
    while i < size:
        cp = decode(s, &i)
        f.chars += 1
        if cp == 0x2C:
            f.commas += 1
        elif cp == 0x2E or cp == 0x21 or cp == 0x3F:  # [.!?] then \s, the end (text + " "), or a quote
            if i >= size:
                f.ends += 1
            else:
                j = i
                nxt = decode(s, &j)
                if is_space(nxt) or nxt == 0x22 or nxt == 0x27 or nxt == 0x201D or nxt == 0x2019 or nxt == 0x29:
                    f.ends += 1
        if cp >= 0x30 and (cp <= 0x39 or (cp >= 0x80 and Py_UNICODE_ISDIGIT(cp))):
            f.digits += 1
        if is_space(cp):
            if in_token and (alnum or (underscore and other)):
                f.ws += 1
                f.ws_chars += tok_chars
                f.caps += Py_UNICODE_ISUPPER(first)
            in_token = False
            continue
        if not in_token:
            in_token = True
            alnum = underscore = other = False
            tok_chars = 0
            first = cp
        tok_chars += 1
        if cp == 0x5F:
            underscore = True
        else:
            other = True
            if cp < 0x80:
                if (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A):
                    alnum = True
            else:
                if Py_UNICODE_ISALNUM(cp):
                    alnum = True
                if is_spaceless(cp):
                    spaceless = True
    if in_token and (alnum or (underscore and other)):
        f.ws += 1
        f.ws_chars += tok_chars
        f.caps += Py_UNICODE_ISUPPER(first)
    f.python_words = spaceless
    return 0


cdef bint has_attr_value(xmlNode* node, const char* name, const char* value) except -1:
    cdef xmlAttr* a = find_attr(node, name)
    return a != NULL and strcmp(attr_value(a), value) == 0


cdef int phrase_count(str lower, PhraseTable phrases) except -1:
    """How many of the ASCII ``phrases`` occur in ``lower`` (``sum(map(lower.__contains__, phrases))``; ASCII bytes
    of UTF-8 are ASCII characters, so a byte search finds the same)."""
    cdef Py_ssize_t size
    cdef const char* s = PyUnicode_AsUTF8AndSize(lower, &size)
    return _ascii_phrase_hits(s, size, phrases)


cdef int cue_words(xmlNode* node, object doc, int* neg, int* pos) except -1:
    """``features._cue_words(features._class_id_words(el))``: negative and positive words in the lowercased class
    and id (each word once); Python's where a value is not ASCII."""
    cdef xmlAttr* klass = find_attr(node, b"class")
    cdef xmlAttr* ident = find_attr(node, b"id")
    cdef const char* kv = _EMPTY
    cdef const char* iv = _EMPTY
    if klass != NULL:
        kv = attr_value(klass)
    if ident != NULL:
        iv = attr_value(ident)
    cdef Bytes names
    if not kv[0] and not iv[0]:
        neg[0] = pos[0] = 0
        return 0
    if not ascii_only(kv) or not ascii_only(iv):
        features = _features_module
        n, p = features._cue_words(features._class_id_words(cetree.elementFactory(doc, node)))
        neg[0] = n
        pos[0] = p
        return 0
    names.data = NULL
    names.size = names.cap = 0
    try:
        _add_lower(&names, kv)
        bytes_addc(&names, b' ')
        _add_lower(&names, iv)
        neg[0] = _ascii_phrase_hits(names.data, names.size, _NEGATIVE)
        pos[0] = _ascii_phrase_hits(names.data, names.size, _POSITIVE)
    finally:
        free(names.data)
    return 0


cdef int _add_lower(Bytes* out, const char* s) except -1:
    cdef Py_ssize_t i = 0
    while s[i]:
        bytes_addc(out, ascii_lower(s[i]))
        i += 1
    return 0


cdef class PhraseTable:
    """Up to 64 byte strings, found in a text by one scan (each position compared with the phrases opening with
    its byte)."""

    cdef bytes store
    cdef const char* texts[64]
    cdef Py_ssize_t lens[64]
    cdef int heads[256]       # first phrase opening with each byte (-1: none)
    cdef int chain[64]        # next phrase with the same first byte
    cdef int count

    def __init__(self, phrases):
        cdef int k, b
        cdef const char* base
        phrases = [p.encode("utf-8") if isinstance(p, str) else bytes(p) for p in phrases]
        if len(phrases) > 64 or not all(phrases):
            raise ValueError("at most 64 non-empty phrases")
        self.store = b"".join(phrases)
        base = self.store
        for b in range(256):
            self.heads[b] = -1
        self.count = len(phrases)
        offset = 0
        offsets = []
        for phrase in phrases:
            offsets.append(offset)
            offset += len(phrase)
        for k in range(self.count - 1, -1, -1):
            self.texts[k] = base + <Py_ssize_t>offsets[k]
            self.lens[k] = len(phrases[k])
            b = phrases[k][0]
            self.chain[k] = self.heads[b]
            self.heads[b] = k

    cdef int hits(self, const char* s, Py_ssize_t size) noexcept:
        """How many of the phrases occur in ``s[:size]``."""
        cdef unsigned long long found = 0, bit
        cdef Py_ssize_t i
        cdef int k, count = 0
        for i in range(size):
            k = self.heads[<unsigned char>s[i]]
            while k >= 0:
                bit = 1ULL << k
                if not (found & bit) and self.lens[k] <= size - i and (self.lens[k] == 1 or s[i + 1] == self.texts[k][1]) \
                        and memcmp(s + i, self.texts[k], self.lens[k]) == 0:
                    found |= bit
                    count += 1
                k = self.chain[k]
        return count


cdef int _ascii_phrase_hits(const char* s, Py_ssize_t size, PhraseTable phrases) except -1:
    return phrases.hits(s, size)


cdef PhraseTable _NEGATIVE = None
cdef PhraseTable _POSITIVE = None
cdef PhraseTable _PHRASES = None


cdef struct PathFacts:
    int mask
    int neg
    int pos
    int depth


cdef class DomCache:
    """``features._AncestorCache``: per element its own cue words and its path's mask, cue words and depth."""

    cdef NodeMap own_map, path_map
    cdef int* own       # two per slot
    cdef PathFacts* path
    cdef Py_ssize_t n_own, n_path, cap_own, cap_path
    cdef object doc
    cdef TagCache tags

    def __cinit__(self):
        self.own = NULL
        self.path = NULL
        self.own_map.keys = self.path_map.keys = NULL
        self.own_map.values = self.path_map.values = NULL

    def __dealloc__(self):
        map_free(&self.own_map)
        map_free(&self.path_map)
        free(self.own)
        free(self.path)

    cdef int init(self, object doc, TagCache tags) except -1:
        self.doc = doc
        self.tags = tags
        map_init(&self.own_map, 256)
        map_init(&self.path_map, 256)
        self.cap_own = self.cap_path = 256
        self.n_own = self.n_path = 0
        self.own = <int*>malloc(2 * self.cap_own * sizeof(int))
        self.path = <PathFacts*>malloc(self.cap_path * sizeof(PathFacts))
        if self.own == NULL or self.path == NULL:
            raise MemoryError()
        return 0

    cdef int own_words(self, xmlNode* node, int* neg, int* pos) except -1:
        cdef Py_ssize_t slot = map_get(&self.own_map, node)
        cdef int* grown
        if slot < 0:
            if self.n_own == self.cap_own:
                grown = <int*>realloc(self.own, 4 * self.cap_own * sizeof(int))
                if grown == NULL:
                    raise MemoryError()
                self.own = grown
                self.cap_own *= 2
            slot = self.n_own
            cue_words(node, self.doc, &self.own[2 * slot], &self.own[2 * slot + 1])
            map_put(&self.own_map, node, slot)
            self.n_own += 1
        neg[0] = self.own[2 * slot]
        pos[0] = self.own[2 * slot + 1]
        return 0

    cdef PathFacts path_of(self, xmlNode* el) except *:
        cdef Nodes chain
        cdef xmlNode* node = el
        cdef Py_ssize_t slot = -1, k
        cdef PathFacts state
        cdef PathFacts* grown
        cdef int neg, pos
        chain.data = NULL
        chain.size = chain.cap = 0
        try:
            while node != NULL:
                slot = map_get(&self.path_map, node)
                if slot >= 0:
                    break
                nodes_push(&chain, node)
                node = parent_element(node)
            if node != NULL:
                state = self.path[slot]
            else:
                state.mask = state.neg = state.pos = state.depth = 0
            for k in range(chain.size - 1, -1, -1):
                node = chain.data[k]
                self.own_words(node, &neg, &pos)
                state.mask = state.mask | self.tags.get(node).semantic
                state.neg += neg
                state.pos += pos
                state.depth += 1
                if self.n_path == self.cap_path:
                    grown = <PathFacts*>realloc(self.path, 2 * self.cap_path * sizeof(PathFacts))
                    if grown == NULL:
                        raise MemoryError()
                    self.path = grown
                    self.cap_path *= 2
                self.path[self.n_path] = state
                map_put(&self.path_map, node, self.n_path)
                self.n_path += 1
            return state
        finally:
            free(chain.data)


cdef class _Scores:
    """Readability-style cluster scores per element (``features._cluster_scores``), in first-seen order."""

    cdef NodeMap map
    cdef Nodes nodes
    cdef double* values
    cdef Py_ssize_t cap

    def __cinit__(self):
        self.map.keys = NULL
        self.map.values = NULL
        self.nodes.data = NULL
        self.nodes.size = self.nodes.cap = 0
        self.values = NULL
        self.cap = 0

    def __dealloc__(self):
        map_free(&self.map)
        free(self.nodes.data)
        free(self.values)

    cdef int add(self, xmlNode* node, double value) except -1:
        cdef Py_ssize_t slot
        cdef double* grown
        if self.map.keys == NULL:
            map_init(&self.map, 64)
        slot = map_get(&self.map, node)
        if slot < 0:
            if self.nodes.size == self.cap:
                self.cap = max(64, 2 * self.cap)
                grown = <double*>realloc(self.values, self.cap * sizeof(double))
                if grown == NULL:
                    raise MemoryError()
                self.values = grown
            slot = self.nodes.size
            nodes_push(&self.nodes, node)
            map_put(&self.map, node, slot)
            self.values[slot] = 0.0
        self.values[slot] = self.values[slot] + value
        return 0

    cdef double get(self, xmlNode* node) noexcept:
        cdef Py_ssize_t slot
        if self.map.keys == NULL:
            return 0.0
        slot = map_get(&self.map, node)
        return self.values[slot] if slot >= 0 else 0.0

    cdef xmlNode* best(self) noexcept:
        """The element with the highest score, the first on a tie (NULL: none)."""
        cdef Py_ssize_t k, top = -1
        for k in range(self.nodes.size):
            if top < 0 or self.values[k] > self.values[top]:
                top = k
        return self.nodes.data[top] if top >= 0 else NULL

    cdef double top_or_one(self) noexcept:
        """``max(scores.values(), default=1.0) or 1.0``."""
        cdef Py_ssize_t k
        cdef double top
        if not self.nodes.size:
            return 1.0
        top = self.values[0]
        for k in range(1, self.nodes.size):
            if self.values[k] > top:
                top = self.values[k]
        return top if top != 0.0 else 1.0


cdef bint algorithm1(double prev_ld, double prev_td, double curr_ld, double curr_td, double next_td) noexcept nogil:
    """``boilerpipe.algorithm1`` (Kohlschütter 2010 Algorithm 1)."""
    if curr_ld <= 0.333333:
        if prev_ld <= 0.555556:
            if curr_td <= 9:
                if next_td <= 10:
                    return not prev_td <= 4
                return True
            return not next_td == 0
        return not next_td <= 11
    return False


cdef bint algorithm2(double prev_ld, Py_ssize_t prev_w, double curr_ld, Py_ssize_t curr_w,
                     Py_ssize_t next_w) noexcept nogil:
    """``boilerpipe.algorithm2`` (Kohlschütter 2010 Algorithm 2)."""
    if curr_ld <= 0.333333:
        if prev_ld <= 0.555556:
            if curr_w <= 16:
                if next_w <= 15:
                    return not prev_w <= 4
                return True
            return True
        if curr_w <= 40:
            return not next_w <= 17
        return True
    return False


cdef bint under_dynamic(xmlNode* node, NodeMap* memo, Nodes* path) except -1:
    """``features._dynamic_flags`` of one block: its first text's node or an ancestor is marked dynamic (each
    element's answer kept in ``memo``: 1 true, 0 false)."""
    cdef Py_ssize_t known, k
    cdef bint answer
    path.size = 0
    while node != NULL:
        known = map_get(memo, node)
        if known >= 0:
            break
        if has_attr_value(node, b"data-newsclean-noise", b"dynamic"):
            break
        nodes_push(path, node)
        node = parent_element(node)
    if node == NULL:
        answer = False
    else:
        known = map_get(memo, node)
        answer = True if known < 0 else known == 1
    for k in range(path.size):
        map_put(memo, path.data[k], 1 if answer else 0)
    return answer


cdef int count_cells(TagCache tags, xmlNode* table, Py_ssize_t* cells, bint* has_th) except -1:
    """``t.xpath("./tr/td | ./tr/th | ./*/tr/td | ./*/tr/th")``: its own cells and whether one is a ``th``."""
    cdef xmlNode* child = table.children
    cdef xmlNode* row
    cdef xmlNode* grand
    cells[0] = 0
    has_th[0] = False
    while child != NULL:
        if child.type == tree.XML_ELEMENT_NODE:
            _row_cells(tags, child, cells, has_th)      # ./tr/td | ./tr/th
            row = child.children
            while row != NULL:                          # ./*/tr/td | ./*/tr/th
                if row.type == tree.XML_ELEMENT_NODE:
                    _row_cells(tags, row, cells, has_th)
                row = row.next
        child = child.next
    return 0


cdef int _row_cells(TagCache tags, xmlNode* row, Py_ssize_t* cells, bint* has_th) except -1:
    cdef xmlNode* cell
    cdef int flags
    if not tags.get(row).flags & TAG_TR:
        return 0
    cell = row.children
    while cell != NULL:
        if cell.type == tree.XML_ELEMENT_NODE:
            flags = tags.get(cell).flags
            if flags & (TAG_TD | TAG_TH):
                cells[0] += 1
                if flags & TAG_TH:
                    has_th[0] = True
        cell = cell.next
    return 0


cdef int lexicon_row(str text, str lower, StringTable lexicon, StrSet* seen, double* out) except -1:
    """``lexicon.lexicon_features(lexicon.block_terms(text), lexicon)``: mean (``math.fsum``), max and coverage of
    the boilerplate scores of the block's distinct lowercased ``\\w+`` words that are not all digits."""
    cdef Py_ssize_t size, i = 0, start, terms = 0, known = 0, k
    cdef const unsigned char* s
    cdef Py_UCS4 cp
    cdef bint digits_only
    cdef double value, top = 0.0
    cdef double* scores = NULL
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        lowered = lower  # text.lower()
    else:
        lowered = unicodedata.normalize("NFC", text).lower()
    s = <const unsigned char*>PyUnicode_AsUTF8AndSize(lowered, &size)
    strset_clear(seen)
    seen.base = <const char*>s
    try:
        scores = <double*>malloc((size + 1) * sizeof(double))
        if scores == NULL:
            raise MemoryError()
        while i < size:
            start = i
            cp = decode(s, &i)
            if not is_word_char(cp):
                continue
            digits_only = cp >= 0x30 and (cp <= 0x39 or (cp >= 0x80 and Py_UNICODE_ISDIGIT(cp)))
            while i < size:
                k = i
                cp = decode(s, &k)
                if not is_word_char(cp):
                    break
                if not (cp >= 0x30 and (cp <= 0x39 or (cp >= 0x80 and Py_UNICODE_ISDIGIT(cp)))):
                    digits_only = False
                i = k
            # the word is s[start:i]
            if digits_only:
                continue
            if strset_add(seen, start, i - start, 0.0):
                terms += 1
                if lexicon.get(<const char*>s + start, i - start, &value):
                    if not known or value > top:
                        top = value
                    scores[known] = value
                    known += 1
        if not known:
            out[0] = out[1] = out[2] = 0.0
        else:
            out[0] = fsum(scores, known) / known
            out[1] = top
            out[2] = <double>known / <double>terms
        return 0
    finally:
        free(scores)


cdef int title_facts(str lower, StrSet* title, StrSet* seen, double* overlap) except -1:
    """Share of the distinct ``[\\w-]+`` tokens of ``lower`` found among ``title``'s (0 without tokens)."""
    cdef Py_ssize_t size, i = 0, start, k, tokens = 0, hits = 0, slot
    cdef const unsigned char* s = <const unsigned char*>PyUnicode_AsUTF8AndSize(lower, &size)
    cdef Py_UCS4 cp
    strset_clear(seen)
    seen.base = <const char*>s
    while i < size:
        start = i
        cp = decode(s, &i)
        if not (is_word_char(cp) or cp == 0x2D):
            continue
        while i < size:
            k = i
            cp = decode(s, &k)
            if not (is_word_char(cp) or cp == 0x2D):
                break
            i = k
        if strset_add(seen, start, i - start, 0.0):
            tokens += 1
            slot = strset_find(title, <const char*>s + start, i - start)
            if title.offsets[slot] >= 0:
                hits += 1
    overlap[0] = <double>hits / <double>tokens if tokens else 0.0
    return 0


def block_features(list blocks, ctx, lexicon):
    """The :data:`KERNEL_GROUPS` columns of ``features.block_features(blocks, ctx, lexicon)``: a matrix of shape
    ``(len(blocks), len(FEATURE_NAMES))`` in ``FEATURE_NAMES`` order whose other columns are 0. Raises
    :class:`Unsupported` for a tree the kernel does not read (and IndexError, as the reference, for a block
    without pieces)."""
    global _NEGATIVE, _POSITIVE, _PHRASES
    features = _load_features()
    if _NEGATIVE is None:
        _NEGATIVE = PhraseTable([w.encode("ascii") for w in features.NEGATIVE_WORDS])
        _POSITIVE = PhraseTable([w.encode("ascii") for w in features.POSITIVE_WORDS])
        _PHRASES = PhraseTable([w.encode("ascii") for w in features.BOILERPLATE_PHRASES])
    index = features.FEATURE_INDEX
    cdef Py_ssize_t n = len(blocks), i, j, k, page_words = 0, m, prev_i, next_i
    X = np.zeros((n, len(features.FEATURE_NAMES)))
    if not n:
        return X
    cdef double[:, ::1] x = X
    cdef BlockFacts* f = <BlockFacts*>calloc(n, sizeof(BlockFacts))
    cdef double* own = NULL
    cdef TagCache tags = TagCache()
    cdef DomCache dom = DomCache()
    cdef _Scores scores = _Scores()
    cdef NodeMap memo, table_slot
    cdef Nodes path, tables
    cdef StrSet title_set, seen
    cdef cetree._Element el
    cdef xmlNode* node
    cdef xmlNode* best
    cdef xmlNode* anc_best = NULL
    cdef PathFacts pf
    cdef int neg, pos, n_neg, n_pos
    cdef double add, top, overlap, total_chars
    cdef double lex[3]
    cdef Py_ssize_t* table_words = NULL
    cdef Py_ssize_t* table_linked = NULL
    cdef Ints sub
    cdef bint* alg1 = NULL
    cdef bint* alg2 = NULL
    cdef xmlNode** anchors = NULL
    cdef Py_ssize_t cells
    cdef bint has_th
    cdef StringTable lex_table
    cdef Py_ssize_t c0, cp_, cn, c_comma, c_digit, c_chars, c_phrases, c_dyn, c_a1, c_a2, c_ag, c_as, c_ash
    cdef Py_ssize_t c_cls, c_sem, c_neg, n_sem, c_pos, c_share, c_over, c_is, c_blocks, c_sig, c_sib, c_pw, c_sp
    cdef Py_ssize_t c_sg, c_best, c_nb, c_tab, c_lex, nesting, size
    cdef xmlNode* anc_node
    memo.keys = table_slot.keys = NULL
    memo.values = table_slot.values = NULL
    path.data = tables.data = NULL
    path.size = path.cap = tables.size = tables.cap = 0
    sub.data = NULL
    sub.size = sub.cap = 0
    title_set.offsets = seen.offsets = NULL
    title_set.lengths = seen.lengths = NULL
    title_set.values = seen.values = NULL
    title_set.used = seen.used = NULL
    if f == NULL:
        raise MemoryError()
    try:
        tags.init(_FACTS)
        doc = None
        lowers = [None] * n
        for i in range(n):
            b = blocks[i]
            el = b.container
            if doc is None:
                doc = el._doc
            f[i].container = el._c_node
            check_node(f[i].container)
            f[i].words = b.num_words
            f[i].linked = b.num_linked_words
            f[i].density = b.text_density
            f[i].link_density = <double>f[i].linked / <double>f[i].words if f[i].words else 0.0
            text_facts(b.text, &f[i])
            page_words += f[i].words
            f[i].para = paragraph_of(tags, f[i].container)
            f[i].parent = parent_or_self(f[i].para)
            f[i].grand = parent_or_self(f[i].parent)
        if not page_words:
            page_words = 1
        dom.init(doc, tags)

        # ---- shallow: the block's, the previous one's, the next one's
        own = <double*>malloc(6 * n * sizeof(double))
        if own == NULL:
            raise MemoryError()
        for i in range(n):
            if f[i].python_words:
                b = blocks[i]
                row = features._shallow_row(b, b.words)
                for k in range(6):
                    own[6 * i + k] = row[k]
                f[i].ws = len(b.words)
                continue
            m = f[i].ws if f[i].ws > 1 else 1
            own[6 * i] = log1p(<double>f[i].words)
            own[6 * i + 1] = f[i].link_density
            own[6 * i + 2] = f[i].density
            own[6 * i + 3] = <double>f[i].ws_chars / <double>m
            own[6 * i + 4] = <double>f[i].caps / <double>m
            own[6 * i + 5] = <double>f[i].ends / <double>m if f[i].ws else 0.0
        c0 = index["words_log"]
        cp_ = index["prev_words_log"]
        cn = index["next_words_log"]
        for i in range(n):
            for k in range(6):
                x[i, c0 + k] = own[6 * i + k]
                if i > 0:
                    x[i, cp_ + k] = own[6 * (i - 1) + k]
                if i + 1 < n:
                    x[i, cn + k] = own[6 * (i + 1) + k]

        # ---- text
        c_comma, c_digit, c_chars, c_phrases = (index["comma_ratio"], index["digit_ratio"], index["chars_log"],
                                                index["boiler_phrases"])
        for i in range(n):
            b = blocks[i]
            lower = b.text.lower()
            lowers[i] = lower
            x[i, c_comma] = <double>f[i].commas / <double>(f[i].ws if f[i].ws > 1 else 1)
            x[i, c_digit] = <double>f[i].digits / <double>(f[i].chars if f[i].chars > 1 else 1)
            x[i, c_chars] = log1p(<double>f[i].chars)
            x[i, c_phrases] = <double>phrase_count(lower, _PHRASES)

        # ---- papers: dynamic noise; Boilerpipe 1 and 2, the ancestor filter on the other blocks
        map_init(&memo, 256)
        c_dyn = index["dynamic_noise"]
        for i in range(n):
            b = blocks[i]
            first, slot = b.pieces[0]
            el = first
            node = el._c_node if slot == "text" else parent_element(el._c_node)
            if node != NULL and under_dynamic(node, &memo, &path):
                x[i, c_dyn] = 1.0
            else:
                ints_push(&sub, i)
        m = sub.size
        if m:
            alg1 = <bint*>malloc(m * sizeof(bint))
            alg2 = <bint*>malloc(m * sizeof(bint))
            anchors = <xmlNode**>calloc(m, sizeof(xmlNode*))
            if alg1 == NULL or alg2 == NULL or anchors == NULL:
                raise MemoryError()
            for j in range(m):
                i = sub.data[j]
                prev_i = sub.data[j - 1] if j > 0 else -1
                next_i = sub.data[j + 1] if j + 1 < m else -1
                alg1[j] = algorithm1(f[prev_i].link_density if prev_i >= 0 else 0.0,
                                     f[prev_i].density if prev_i >= 0 else 0.0,
                                     f[i].link_density, f[i].density,
                                     f[next_i].density if next_i >= 0 else 0.0)
                alg2[j] = algorithm2(f[prev_i].link_density if prev_i >= 0 else 0.0,
                                     f[prev_i].words if prev_i >= 0 else 0,
                                     f[i].link_density, f[i].words,
                                     f[next_i].words if next_i >= 0 else 0)
            anc = _Scores()   # characters per anchor, first-seen order (ancestor_filter.ancestor_groups)
            for j in range(m):
                if alg2[j]:
                    node = f[sub.data[j]].para
                    for k in range(2):  # nth_ancestor(paragraph, depth=2)
                        if parent_element(node) == NULL:
                            break
                        node = parent_element(node)
                    anchors[j] = node
                    anc.add(node, <double>f[sub.data[j]].chars)
            anc_best = anc.best()
            total_chars = 0.0
            for k in range(anc.nodes.size):
                total_chars += anc.values[k]
            c_a1, c_a2, c_ag, c_as, c_ash = (index["bp_alg1"], index["bp_alg2"], index["anc_group"],
                                             index["anc_subtree"], index["anc_group_share"])
            for j in range(m):
                i = sub.data[j]
                x[i, c_a1] = alg1[j]
                x[i, c_a2] = alg2[j]
                x[i, c_ag] = 1.0 if (alg2[j] and anc_best != NULL and anchors[j] == anc_best) else 0.0
                x[i, c_as] = 1.0 if in_subtree(f[i].container, anc_best) else 0.0
                x[i, c_ash] = anc.get(anchors[j]) / (total_chars if total_chars != 0.0 else 1.0) \
                    if anchors[j] != NULL else 0.0

        # ---- dom
        c_cls = index["container_class"]
        c_sem = index["in_" + features.SEMANTIC_TAGS[0]]
        c_neg = index["neg_words"]
        n_sem = len(features.SEMANTIC_TAGS)
        for i in range(n):
            node = f[i].container
            pf = dom.path_of(node)
            n_neg = n_pos = 0
            for k in range(3):
                if node == NULL:
                    break
                dom.own_words(node, &neg, &pos)
                n_neg += neg
                n_pos += pos
                node = parent_element(node)
            x[i, c_cls] = tags.get(f[i].container).container_class
            for k in range(n_sem):
                x[i, c_sem + k] = 1.0 if pf.mask & (1 << k) else 0.0
            x[i, c_neg] = pf.neg
            x[i, c_neg + 1] = pf.pos
            x[i, c_neg + 2] = n_neg
            x[i, c_neg + 3] = n_pos
            x[i, c_neg + 4] = pf.depth

        # ---- page
        c_pos, c_share, c_over, c_is, c_blocks, c_sig = (index["rel_position"], index["page_word_share"],
                                                         index["title_overlap"], index["is_title"],
                                                         index["blocks_log"], index["has_signature"])
        title_text = (ctx.title or "").strip().lower()
        title_tokens = set(features._TOKEN_RE.findall(title_text))
        title_bytes = b"".join(t.encode("utf-8", "surrogatepass") for t in title_tokens)
        strset_init(&title_set, len(title_tokens))
        strset_init(&seen, 64)
        title_set.base = title_bytes
        k = 0
        for t in title_tokens:
            size = len(t.encode("utf-8", "surrogatepass"))
            strset_add(&title_set, k, size, 0.0)
            k += size
        for i in range(n):
            x[i, c_pos] = <double>i / <double>(n - 1 if n > 1 else 1)
            x[i, c_share] = <double>f[i].words / <double>page_words
            x[i, c_blocks] = log1p(<double>n)
            x[i, c_sig] = 1.0 if ctx.has_signature else 0.0
            if title_text:
                lower = lowers[i]
                if title_tokens:
                    title_facts(lower, &title_set, &seen, &overlap)
                    x[i, c_over] = overlap
                text = blocks[i].text
                if text and (is_space(ord(text[0])) or is_space(ord(text[-1]))):
                    lower = text.strip().lower()
                x[i, c_is] = 1.0 if (lower and (lower == title_text or (len(lower) > 15 and lower in title_text))) \
                    else 0.0

        # ---- cluster
        for i in range(n):
            if f[i].link_density > 0.5:
                continue
            add = <double>(1 + f[i].commas) + (f[i].chars / 100.0 if f[i].chars / 100.0 < 3 else 3.0)
            scores.add(f[i].parent, add)
            scores.add(f[i].grand, add / 2)
        best = scores.best()
        top = scores.top_or_one()
        c_sib, c_pw, c_sp, c_sg, c_best = (index["para_siblings_log"], index["para_words_share"],
                                           index["cluster_score_parent"], index["cluster_score_grandparent"],
                                           index["in_best_cluster"])
        acc = {}   # words per paragraph parent (None at the root: address 0)
        for i in range(n):
            node = parent_element(f[i].para)
            key = <size_t>node
            acc[key] = acc.get(key, 0) + f[i].words
        for i in range(n):
            node = parent_element(f[i].para)
            x[i, c_sib] = log1p(<double>(lxml_len(node) if node != NULL else 0))
            x[i, c_pw] = <double>acc[<size_t>node] / <double>page_words
            x[i, c_sp] = scores.get(f[i].parent) / top
            x[i, c_sg] = scores.get(f[i].grand) / top
            x[i, c_best] = 1.0 if in_subtree(f[i].container, best) else 0.0

        # ---- neighbours
        c_nb = index["prev2_words_log"]
        for i in range(n):
            if i >= 2:
                x[i, c_nb] = log1p(<double>f[i - 2].words)
                x[i, c_nb + 1] = f[i - 2].link_density
            if i + 2 < n:
                x[i, c_nb + 2] = log1p(<double>f[i + 2].words)
                x[i, c_nb + 3] = f[i + 2].link_density

        # ---- table: the nearest enclosing table
        map_init(&table_slot, 16)
        for i in range(n):
            node = f[i].container
            while node != NULL and not (tags.get(node).flags & TAG_TABLE):
                node = parent_element(node)
            f[i].table = node
            if node != NULL and map_get(&table_slot, node) < 0:
                map_put(&table_slot, node, tables.size)
                nodes_push(&tables, node)
        if tables.size:
            table_words = <Py_ssize_t*>calloc(tables.size, sizeof(Py_ssize_t))
            table_linked = <Py_ssize_t*>calloc(tables.size, sizeof(Py_ssize_t))
            if table_words == NULL or table_linked == NULL:
                raise MemoryError()
            for i in range(n):
                if f[i].table != NULL:
                    k = map_get(&table_slot, f[i].table)
                    table_words[k] += f[i].words
                    table_linked[k] += f[i].linked
            c_tab = index["table_cells_log"]
            stats = []
            for k in range(tables.size):
                node = tables.data[k]
                count_cells(tags, node, &cells, &has_th)
                nesting = 0
                anc_node = parent_element(node)
                while anc_node != NULL:
                    if tags.get(anc_node).flags & TAG_TABLE:
                        nesting += 1
                    anc_node = parent_element(anc_node)
                stats.append((log1p(<double>cells), <double>nesting, <double>table_words[k] / <double>page_words,
                              <double>table_linked[k] / <double>table_words[k] if table_words[k] else 0.0,
                              1.0 if has_th else 0.0, 1.0 if in_subtree(node, best) else 0.0))
            for i in range(n):
                if f[i].table != NULL:
                    row = stats[map_get(&table_slot, f[i].table)]
                    for k in range(6):
                        x[i, c_tab + k] = row[k]

        # ---- lexicon
        if lexicon is not None:
            lex_table = lexicon_table(lexicon)
            c_lex = index["lex_boiler_mean"]
            for i in range(n):
                lexicon_row(blocks[i].text, lowers[i], lex_table, &seen, lex)
                x[i, c_lex] = lex[0]
                x[i, c_lex + 1] = lex[1]
                x[i, c_lex + 2] = lex[2]
        return X
    finally:
        free(f)
        free(own)
        free(alg1)
        free(alg2)
        free(anchors)
        free(table_words)
        free(table_linked)
        free(path.data)
        free(tables.data)
        free(sub.data)
        map_free(&memo)
        map_free(&table_slot)
        strset_free(&title_set)
        strset_free(&seen)


# ---------------------------------------------------------------------------------------------------------------
# noise marks (static_noise: keys and marks, StaDyNoT §3.1; dynamic_noise: LCA candidates, §3.2)

import hashlib

cdef object _blake2b = hashlib.blake2b
cdef bytes _NOISE_ATTR = b"data-newsclean-noise"
cdef bytes _OWN_PREFIX = b"data-newsclean-"


cdef inline bint xpath_blank(const char* s) noexcept nogil:
    """Whether ``normalize-space(s)`` is empty: only XML blanks (space, tab, CR, LF)."""
    cdef Py_ssize_t i = 0
    while s[i]:
        if s[i] != b' ' and s[i] != b'\t' and s[i] != b'\n' and s[i] != b'\r':
            return False
        i += 1
    return True


cdef int own_text_into(xmlNode* el, Bytes* raw, Bytes* out) except -1:
    """``marks.own_texts``' value for one element into ``out`` (empty: none): its child text nodes that are not
    XML-blank, joined by spaces, whitespace collapsed as ``str.split`` collapses it."""
    cdef xmlNode* c = el.children
    cdef TokenStats st
    raw.size = 0
    out.size = 0
    while c != NULL:
        if is_text(c) and c.content != NULL and not xpath_blank(<const char*>c.content):
            if raw.size:
                bytes_addc(raw, b' ')
            bytes_add(raw, <const char*>c.content, _strlen(<const char*>c.content))
        c = c.next
    if raw.size:
        token_stats(<const unsigned char*>raw.data, raw.size, &st, out)
    return 0


cdef int _attr_less(xmlAttr* a, xmlAttr* b) noexcept:
    cdef int c = strcmp(<const char*>a.name, <const char*>b.name)
    if c == 0:
        c = strcmp(attr_value(a), attr_value(b))
    return c < 0


cdef int key_into(xmlNode* el, Bytes* text, Bytes* key) except -1:
    """``static_noise._key(el, text)`` as UTF-8: ``tag:name=value;...:text``, attributes sorted by name, newsclean's
    own left out."""
    cdef xmlAttr* a = el.properties
    cdef xmlAttr* attrs[64]
    cdef xmlAttr** many = NULL
    cdef xmlAttr** order = attrs
    cdef Py_ssize_t n = 0, cap = 64, i, j
    cdef xmlAttr* x
    cdef bint first = True
    key.size = 0
    bytes_add(key, <const char*>el.name, _strlen(<const char*>el.name))
    bytes_addc(key, b':')
    try:
        while a != NULL:
            if a.ns != NULL:
                raise Unsupported("namespaced attribute")
            if a.children != NULL and (a.children.next != NULL or a.children.type != tree.XML_TEXT_NODE):
                raise Unsupported("attribute value of several nodes")
            if strncmp(<const char*>a.name, <const char*>_OWN_PREFIX, len(_OWN_PREFIX)) != 0:
                if n == cap:
                    cap *= 2
                    grown = <xmlAttr**>realloc(many, cap * sizeof(xmlAttr*))
                    if grown == NULL:
                        raise MemoryError()
                    if many == NULL:
                        memcpy(grown, attrs, n * sizeof(xmlAttr*))
                    many = grown
                    order = many
                order[n] = a
                n += 1
            a = a.next
        for i in range(1, n):  # insertion sort: elements hold few attributes
            x = order[i]
            j = i - 1
            while j >= 0 and _attr_less(x, order[j]):
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = x
        for i in range(n):
            if i:
                bytes_addc(key, b';')
            bytes_add(key, <const char*>order[i].name, _strlen(<const char*>order[i].name))
            bytes_addc(key, b'=')
            bytes_add(key, attr_value(order[i]), _strlen(attr_value(order[i])))
        bytes_addc(key, b':')
        bytes_add(key, text.data, text.size)
    finally:
        free(many)
    return 0


cdef object key_digest(Bytes* key):
    """``static_noise.key_digest``: the 64-bit BLAKE2b digest of the key, as an int."""
    return int.from_bytes(_blake2b(key.data[:key.size], digest_size=8).digest(), "big")


cdef int collect_elements(xmlNode* root, Nodes* out) except -1:
    """Every element under and including ``root`` in document order (:func:`check_node` of every node met)."""
    cdef xmlNode* node = root
    cdef xmlNode* nxt
    check_node(root)
    while True:
        if node.type == tree.XML_ELEMENT_NODE:
            check_children(node)
            nodes_push(out, node)
            nxt = node.children
            while nxt != NULL and nxt.type != tree.XML_ELEMENT_NODE:
                nxt = nxt.next
            if nxt != NULL:
                node = nxt
                continue
        while True:
            if node == root:
                return 0
            nxt = node.next
            while nxt != NULL and nxt.type != tree.XML_ELEMENT_NODE:
                nxt = nxt.next
            if nxt != NULL:
                node = nxt
                break
            node = node.parent


def page_keys(cetree._Element root):
    """``static_noise.page_keys(root)``: the key digests of the elements holding own text."""
    cdef Nodes elements
    cdef Bytes raw, text, key
    cdef Py_ssize_t k
    elements.data = NULL
    elements.size = elements.cap = 0
    raw.data = text.data = key.data = NULL
    raw.size = raw.cap = text.size = text.cap = key.size = key.cap = 0
    out = set()
    try:
        collect_elements(root._c_node, &elements)
        for k in range(elements.size):
            own_text_into(elements.data[k], &raw, &text)
            if text.size:
                key_into(elements.data[k], &text, &key)
                out.add(key_digest(&key))
        return out
    finally:
        free(elements.data)
        free(raw.data)
        free(text.data)
        free(key.data)


def mark_static_noise(cetree._Element root, signature, params):
    """``static_noise.mark_static_noise(root, signature, params)``: the count of elements marked."""
    cdef Nodes elements
    cdef Bytes raw, text, key
    cdef Py_ssize_t k, slot
    cdef NodeMap answers
    cdef xmlNode* node
    cdef xmlNode* parent
    cdef signed char* static = NULL   # per element: -1 no own text, 0 not static, 1 static
    if not signature.keys:
        return 0
    keys = signature.keys
    elements.data = NULL
    elements.size = elements.cap = 0
    raw.data = text.data = key.data = NULL
    raw.size = raw.cap = text.size = text.cap = key.size = key.cap = 0
    answers.keys = NULL
    answers.values = NULL
    try:
        collect_elements(root._c_node, &elements)
        static = <signed char*>malloc(max(1, elements.size))
        if static == NULL:
            raise MemoryError()
        map_init(&answers, elements.size)
        for k in range(elements.size):
            own_text_into(elements.data[k], &raw, &text)
            if text.size:
                key_into(elements.data[k], &text, &key)
                static[k] = 1 if key_digest(&key) in keys else 0
            else:
                static[k] = -1
            map_put(&answers, elements.data[k], k)
        marked = []
        for k in range(elements.size):
            if static[k] != 1:
                continue
            node = elements.data[k]
            if params.keep_embedded:
                if node == root._c_node:
                    parent_answer = None if root.getparent() is None else \
                        _static_module().is_static(root.getparent(), signature)
                else:
                    slot = map_get(&answers, parent_element(node))
                    parent_answer = None if slot < 0 or static[slot] < 0 else bool(static[slot])
                if parent_answer is False:
                    continue
            marked.append(cetree.elementFactory(root._doc, node))
        for el in marked:
            cetree.setAttributeValue(el, "data-newsclean-noise", "static")
        return len(marked)
    finally:
        free(elements.data)
        free(raw.data)
        free(text.data)
        free(key.data)
        free(static)
        map_free(&answers)


cdef object _static_noise = None


cdef object _static_module():
    global _static_noise
    if _static_noise is None:
        from newsclean.transforms import static_noise
        _static_noise = static_noise
    return _static_noise


cdef struct Open:
    Py_ssize_t link0, nonlink0
    bint is_link, is_marked
    xmlNode* node


cdef struct Candidate:
    xmlNode* node
    Py_ssize_t depth
    Py_ssize_t order
    Py_ssize_t link, nonlink


cdef int _by_depth(const void* a, const void* b) noexcept nogil:
    cdef const Candidate* x = <const Candidate*>a
    cdef const Candidate* y = <const Candidate*>b
    if x.depth != y.depth:
        return -1 if x.depth > y.depth else 1
    return -1 if x.order < y.order else (1 if x.order > y.order else 0)


cdef extern from "stdlib.h" nogil:
    void qsort(void* base, size_t nmemb, size_t size, int (*compar)(const void*, const void*))


cdef Py_ssize_t collapsed_chars(xmlNode* node, Bytes* buf) except -1:
    """``len(" ".join(text.split()))`` of lxml's ``_collectText(node)``."""
    cdef TokenStats st
    buf.size = 0
    add_text(buf, node)
    if not buf.size:
        return 0
    token_stats(<const unsigned char*>buf.data, buf.size, &st, NULL)
    return st.chars


def mark_dynamic_noise(cetree._Element root, params):
    """``dynamic_noise.mark_dynamic_noise(root, params)``: the count of elements marked."""
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node
    cdef xmlNode* nxt
    cdef Open* starts = NULL
    cdef Open* grown_open
    cdef Candidate* cands = NULL
    cdef Candidate* grown_cand
    cdef Py_ssize_t depth = 0, cap = 0, n_cands = 0, cap_cands = 0, link = 0, nonlink = 0, links = 0, marked = 0
    cdef Py_ssize_t low = 0, chars, k, slot
    cdef Open o
    cdef NodeMap slots
    cdef Bytes buf
    cdef xmlAttr* a
    cdef bint is_link, is_marked
    parent = root.getparent()
    if parent is not None:
        from newsclean.transforms import dynamic_noise
        if dynamic_noise._in_noise(parent):
            return 0
    protected = frozenset(t.encode("utf-8") for t in params.protected_tags)
    never = frozenset(t.encode("utf-8") for t in params.never_noise_tags)
    slots.keys = NULL
    slots.values = NULL
    buf.data = NULL
    buf.size = buf.cap = 0
    marks_open = 0
    try:
        map_init(&slots, 64)
        node = top
        while True:
            if node.type == tree.XML_ELEMENT_NODE:
                check_node(node)
                check_children(node)
                is_link = name_is(node, b"a")
                a = find_attr(node, <const char*>_NOISE_ATTR)
                is_marked = a != NULL and attr_value(a)[0] != 0
                if depth == cap:
                    cap = max(64, 2 * cap)
                    grown_open = <Open*>realloc(starts, cap * sizeof(Open))
                    if grown_open == NULL:
                        raise MemoryError()
                    starts = grown_open
                starts[depth].link0 = link
                starts[depth].nonlink0 = nonlink
                starts[depth].is_link = is_link
                starts[depth].is_marked = is_marked
                starts[depth].node = node
                depth += 1
                links += is_link
                marks_open += is_marked
                if is_link and not marks_open:
                    if low:
                        nxt = starts[low - 1].node
                        if map_get(&slots, nxt) < 0 and <bytes>nxt.name not in protected:
                            if n_cands == cap_cands:
                                cap_cands = max(16, 2 * cap_cands)
                                grown_cand = <Candidate*>realloc(cands, cap_cands * sizeof(Candidate))
                                if grown_cand == NULL:
                                    raise MemoryError()
                                cands = grown_cand
                            cands[n_cands].node = nxt
                            cands[n_cands].depth = low
                            cands[n_cands].order = n_cands
                            cands[n_cands].link = cands[n_cands].nonlink = 0
                            map_put(&slots, nxt, n_cands)
                            n_cands += 1
                    low = depth
                if not marks_open and node.children != NULL and is_text(node.children):
                    chars = collapsed_chars(node.children, &buf)
                    if links:
                        link += chars
                    else:
                        nonlink += chars
                nxt = first_child(node)
                if nxt != NULL:
                    node = nxt
                    continue
            elif node.type != tree.XML_COMMENT_NODE and node.type != tree.XML_PI_NODE:
                raise Unsupported(f"node type {node.type}")
            while True:
                if node.type == tree.XML_ELEMENT_NODE:
                    depth -= 1
                    o = starts[depth]
                    slot = map_get(&slots, node)
                    if slot >= 0:
                        cands[slot].link = link - o.link0
                        cands[slot].nonlink = nonlink - o.nonlink0
                    links -= o.is_link
                    marks_open -= o.is_marked
                    if depth == 0:
                        break
                    if depth < low:
                        low = depth
                if not marks_open and node.next != NULL and is_text(node.next):
                    chars = collapsed_chars(node.next, &buf)
                    if links:
                        link += chars
                    else:
                        nonlink += chars
                nxt = next_sibling(node)
                if nxt != NULL:
                    node = nxt
                    break
                node = node.parent
            if depth == 0 and node == top:
                break
        # decide, deepest first (ties in first-seen order); a marked candidate's counts leave its ancestors'
        qsort(cands, n_cands, sizeof(Candidate), _by_depth)
        for k in range(n_cands):
            map_put(&slots, cands[k].node, k)
        alpha = params.alpha
        beta = params.beta
        chosen = []
        for k in range(n_cands):
            if <bytes>cands[k].node.name in never:
                continue
            total = cands[k].link + cands[k].nonlink
            if cands[k].nonlink < alpha or (total > 0 and cands[k].link / total > beta):
                chosen.append(cetree.elementFactory(root._doc, cands[k].node))
                node = parent_element(cands[k].node)
                while node != NULL:
                    slot = map_get(&slots, node)
                    if slot >= 0:
                        cands[slot].link -= cands[k].link
                        cands[slot].nonlink -= cands[k].nonlink
                    node = parent_element(node)
                cands[k].link = cands[k].nonlink = 0
        for el in chosen:
            cetree.setAttributeValue(el, "data-newsclean-noise", "dynamic")
        return len(chosen)
    finally:
        free(starts)
        free(cands)
        free(buf.data)
        map_free(&slots)


# ---------------------------------------------------------------------------------------------------------------
# stage-2 context (classifier.features.context_groups, context_features)

def context_groups(list blocks):
    """``features.context_groups(blocks)``: per block, small ids of its paragraph's parent and grandparent."""
    cdef TagCache tags = TagCache()
    cdef NodeMap ids
    cdef cetree._Element el
    cdef xmlNode* para
    cdef xmlNode* parent
    cdef xmlNode* grand
    cdef Py_ssize_t a, b
    _load_features()
    tags.init(_FACTS)
    ids.keys = NULL
    ids.values = NULL
    out = []
    try:
        map_init(&ids, 2 * len(blocks))
        for block in blocks:
            el = block.container
            check_node(el._c_node)
            para = paragraph_of(tags, el._c_node)
            parent = parent_or_self(para)
            grand = parent_or_self(parent)
            a = map_get(&ids, parent)
            if a < 0:
                a = ids.size
                map_put(&ids, parent, a)
            b = map_get(&ids, grand)
            if b < 0:
                b = ids.size
                map_put(&ids, grand, b)
            out.append((a, b))
        return out
    finally:
        map_free(&ids)


def context_features(p, groups, word_counts):
    """``features.context_features(p, groups, word_counts)``: the ten stage-2 columns, shape ``(len(p), 10)``."""
    cdef Py_ssize_t n = len(p), i, k, start, g
    out = np.zeros((n, 10))
    if not n:
        return out
    cdef double[:, ::1] x = out
    cdef double* probs = <double*>malloc(n * sizeof(double))
    cdef long* weights = <long*>malloc(n * sizeof(long))
    cdef Py_ssize_t* keys = <Py_ssize_t*>malloc(2 * n * sizeof(Py_ssize_t))
    cdef double* num = NULL
    cdef double* den = NULL
    cdef Py_ssize_t n_keys = 0
    cdef long total = 0
    cdef double top, run_value
    if probs == NULL or weights == NULL or keys == NULL:
        free(probs)
        free(weights)
        free(keys)
        raise MemoryError()
    try:
        for i in range(n):
            probs[i] = p[i]
            weights[i] = max(1, word_counts[i])
            a, b = groups[i]
            keys[2 * i] = a
            keys[2 * i + 1] = b
            if a < 0 or b < 0:
                raise ValueError("context group ids must be >= 0")
            n_keys = max(n_keys, a + 1, b + 1)
            total += weights[i]
        num = <double*>calloc(n_keys, sizeof(double))
        den = <double*>calloc(n_keys, sizeof(double))
        if num == NULL or den == NULL:
            raise MemoryError()
        for i in range(n):
            if i >= 2:
                x[i, 0] = probs[i - 2]
            if i >= 1:
                x[i, 1] = probs[i - 1]
            x[i, 2] = probs[i]
            if i + 1 < n:
                x[i, 3] = probs[i + 1]
            if i + 2 < n:
                x[i, 4] = probs[i + 2]
        for g in range(2):   # the parent's and the grandparent's weighted mean (features._weighted_means)
            for k in range(n_keys):
                num[k] = 0.0
                den[k] = 0.0
            for i in range(n):
                k = keys[2 * i + g]
                num[k] = num[k] + probs[i] * weights[i]
                den[k] = den[k] + weights[i]
            for i in range(n):
                k = keys[2 * i + g]
                x[i, 5 + g] = num[k] / den[k] if den[k] else 0.0
        # Python's sum of the products, as the reference (its float summation differs between versions)
        weighted = sum([probs[i] * weights[i] for i in range(n)]) / total
        top = probs[0]
        for i in range(1, n):
            if probs[i] > top:
                top = probs[i]
        start = 0
        for i in range(1, n + 1):   # features._runs
            if i == n or (probs[i] >= 0.5) != (probs[start] >= 0.5):
                run_value = log1p(<double>(i - start))
                for k in range(start, i):
                    x[k, 9] = run_value
                start = i
        for i in range(n):
            x[i, 7] = weighted
            x[i, 8] = top
        return out
    finally:
        free(probs)
        free(weights)
        free(keys)
        free(num)
        free(den)


# ---------------------------------------------------------------------------------------------------------------
# noise removal (noise_removal.remove_non_informative) and the cleaned HTML (chain._prune_empty, marks.strip_marks)

def non_informative_targets(cetree._Element root, tags):
    """What ``noise_removal.remove_non_informative`` walks, found in one walk before anything changes: the comments
    and processing instructions under ``root`` (``root.iter(Comment, ProcessingInstruction)``), the elements of
    ``tags`` under and including ``root`` (``root.iter(*tags)``), each with the position in that list of its
    nearest ancestor of those tags (-1: none), and whether ``root.find(".//form")`` finds one."""
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node = top
    cdef xmlNode* nxt
    cdef Ints open_index      # per open element: its position among the tagged (-1: not tagged)
    cdef Py_ssize_t nearest, k
    cdef bint has_form = False
    wanted = frozenset(t.encode("utf-8") for t in tags)
    others = []
    tagged = []
    ancestors = []
    open_index.data = NULL
    open_index.size = open_index.cap = 0
    doc = root._doc
    try:
        check_node(top)
        if top.type != tree.XML_ELEMENT_NODE:
            raise Unsupported("a root that is no element")
        while True:
            if node.type == tree.XML_ELEMENT_NODE:
                check_node(node)
                check_children(node)
                nearest = -1
                for k in range(open_index.size - 1, -1, -1):
                    if open_index.data[k] >= 0:
                        nearest = open_index.data[k]
                        break
                if node != top and name_is(node, b"form"):
                    has_form = True
                if <bytes>node.name in wanted:
                    ints_push(&open_index, len(tagged))
                    tagged.append(cetree.elementFactory(doc, node))
                    ancestors.append(nearest)
                else:
                    ints_push(&open_index, -1)
                nxt = first_child(node)
                if nxt != NULL:
                    node = nxt
                    continue
            elif node.type == tree.XML_COMMENT_NODE or node.type == tree.XML_PI_NODE:
                others.append(cetree.elementFactory(doc, node))
            else:
                raise Unsupported(f"node type {node.type}")
            while True:
                if node.type == tree.XML_ELEMENT_NODE:
                    open_index.size -= 1
                    if node == top:
                        break
                nxt = next_sibling(node)
                if nxt != NULL:
                    node = nxt
                    break
                node = node.parent
            if node == top and open_index.size == 0:
                break
        return others, tagged, ancestors, has_form
    finally:
        free(open_index.data)


def empty_elements(cetree._Element body):
    """``chain._prune_empty``'s list ``empty``: the topmost elements under ``body`` without text (neither
    ``br`` nor ``hr``), in the order that function finds them."""
    cdef xmlNode* top = body._c_node
    cdef Nodes elements
    cdef NodeMap full
    cdef Py_ssize_t k
    cdef xmlNode* node
    cdef xmlNode* holder
    cdef xmlNode* c
    cdef Bytes buf
    elements.data = NULL
    elements.size = elements.cap = 0
    full.keys = NULL
    full.values = NULL
    buf.data = NULL
    buf.size = buf.cap = 0
    doc = body._doc
    try:
        collect_all(top, &elements)
        map_init(&full, 64)
        map_put(&full, top, 1)
        # chain._text_holders: elements whose subtree holds text that is not whitespace
        for k in range(elements.size):
            node = elements.data[k]
            holder = NULL
            if node.type == tree.XML_ELEMENT_NODE and node.children != NULL and is_text(node.children) \
                    and _text_shows(node.children, &buf):
                holder = node
            elif node != top and node.next != NULL and is_text(node.next) and _text_shows(node.next, &buf):
                holder = parent_element(node)
            while holder != NULL and map_get(&full, holder) < 0:
                map_put(&full, holder, 1)
                holder = parent_element(holder)
        empty = []
        stack = [body]
        while stack:
            node = (<cetree._Element>stack.pop())._c_node
            c = node.children
            while c != NULL:
                if c.type == tree.XML_ELEMENT_NODE:
                    if map_get(&full, c) >= 0 or name_is(c, b"br") or name_is(c, b"hr"):
                        stack.append(cetree.elementFactory(doc, c))
                    else:
                        empty.append(cetree.elementFactory(doc, c))
                c = c.next
        return empty
    finally:
        free(elements.data)
        free(buf.data)
        map_free(&full)


cdef bint _text_shows(xmlNode* text, Bytes* buf) except -1:
    """Whether lxml's ``_collectText(text)`` is neither empty nor whitespace only."""
    buf.size = 0
    add_text(buf, text)
    return buf.size > 0 and has_non_space(<const unsigned char*>buf.data, buf.size)


cdef int collect_all(xmlNode* root, Nodes* out) except -1:
    """``root.iter()``: ``root`` and every element, comment and PI under it, in document order."""
    cdef xmlNode* node = root
    cdef xmlNode* nxt
    check_node(root)
    while True:
        check_node(node)
        nodes_push(out, node)
        if node.type == tree.XML_ELEMENT_NODE:
            check_children(node)
            nxt = first_child(node)
            if nxt != NULL:
                node = nxt
                continue
        while True:
            if node == root:
                return 0
            nxt = next_sibling(node)
            if nxt != NULL:
                node = nxt
                break
            node = node.parent


def marked_elements(cetree._Element root, attribute, value=None):
    """The elements under and including ``root`` holding ``attribute`` (no namespace; with ``value``, that
    value), in document order (``descendant-or-self::*[@attribute]``, ``...[@attribute = value]``)."""
    cdef Nodes elements
    cdef Py_ssize_t k
    cdef xmlAttr* a
    cdef bytes name = attribute.encode("utf-8")
    cdef bytes wanted = value.encode("utf-8") if value is not None else b""
    elements.data = NULL
    elements.size = elements.cap = 0
    doc = root._doc
    out = []
    try:
        collect_elements(root._c_node, &elements)
        for k in range(elements.size):
            a = find_attr(elements.data[k], name)
            if a != NULL and (value is None or strcmp(attr_value(a), wanted) == 0):
                out.append(cetree.elementFactory(doc, elements.data[k]))
        return out
    finally:
        free(elements.data)


cdef int drop_tree(cetree._Element el) except -1:
    """``el.drop_tree()`` of lxml.html (its tail kept: added to the previous sibling's tail or the parent's text),
    through lxml's C API and ``remove``; nothing when ``el`` has no parent (``noise_removal.drop_keep_tail``)."""
    cdef xmlNode* node = el._c_node
    cdef xmlNode* parent = parent_element(node)
    cdef xmlNode* previous
    if parent == NULL:
        return 0
    tail = cetree.tailOf(node)
    if tail:
        previous = cetree.previousElement(node)
        if previous == NULL:
            text = cetree.textOf(parent)
            cetree.setNodeText(parent, (text or "") + tail)
        else:
            text = cetree.tailOf(previous)
            cetree.setTailText(previous, (text or "") + tail)
    cetree.elementFactory(el._doc, parent).remove(el)
    return 0


cdef object _noise_removal = None


def remove_non_informative(cetree._Element root, params):
    """``noise_removal.remove_non_informative(root, params)``: elements removed."""
    global _noise_removal
    if _noise_removal is None:
        from newsclean.transforms import noise_removal
        _noise_removal = noise_removal
    others, tagged, ancestors, has_form = non_informative_targets(root, params.non_informative_tags)
    page = _noise_removal._PageWords(_noise_removal._TEXT(root)) if has_form else None  # before removal
    for el in others:
        drop_tree(el)
    cdef Py_ssize_t n = len(tagged), i, a, removed = 0
    cdef bytearray dropped = bytearray(n)   # removed with its subtree
    ratio = params.form_unwrap_ratio
    for i in range(n):
        a = ancestors[i]
        while a >= 0 and not dropped[a]:
            a = ancestors[a]
        if a >= 0:
            continue  # under a removed element: removed with it
        el = tagged[i]
        if el.tag == "form" and _noise_removal._unwrap_form(el, page, ratio):
            el.drop_tag()
            continue
        dropped[i] = el.getparent() is not None
        drop_tree(el)
        removed += 1
    return removed


def prune_empty(cetree._Element body):
    """``chain._prune_empty(body)``: every element under ``body`` without text (but ``br``/``hr``) dropped."""
    empty = empty_elements(body)
    for el in reversed(empty):
        drop_tree(el)


# ---------------------------------------------------------------------------------------------------------------
# words of a text (text.count_words) and the site profile's page summary (site_profile.summarise_page)

from cpython.unicode cimport PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_READ


def count_words(str text):
    """``text.count_words(text)``; -1 for a text holding Han/Kana (``text.words`` cuts it further: Python counts)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, words = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 cp
    cdef bint in_token = False, alnum = False, underscore = False, other = False
    for i in range(n):
        cp = PyUnicode_READ(kind, data, i)
        if is_space(cp):
            if in_token and (alnum or (underscore and other)):
                words += 1
            in_token = False
            continue
        if not in_token:
            in_token = True
            alnum = underscore = other = False
        if cp == 0x5F:
            underscore = True
        else:
            other = True
            if cp < 0x80:
                if (0x30 <= cp <= 0x39) or (0x41 <= cp <= 0x5A) or (0x61 <= cp <= 0x7A):
                    alnum = True
            else:
                if is_spaceless(cp):
                    return -1
                if Py_UNICODE_ISALNUM(cp):
                    alnum = True
    if in_token and (alnum or (underscore and other)):
        words += 1
    return words


cdef object _site_profile = None


cdef bint _ascii_digit_in(const char* s) noexcept nogil:
    cdef Py_ssize_t i = 0
    while s[i]:
        if 0x30 <= <unsigned char>s[i] <= 0x39:
            return True
        i += 1
    return False


cdef object element_token(object doc, xmlNode* node):
    """``site_profile.element_token`` of an element (Python's where its class or id is not ASCII)."""
    cdef xmlAttr* klass = find_attr(node, b"class")
    cdef xmlAttr* ident = find_attr(node, b"id")
    cdef const char* kv = _EMPTY
    cdef const char* iv = _EMPTY
    cdef Py_ssize_t i, start, end
    if klass != NULL:
        kv = attr_value(klass)
    if ident != NULL:
        iv = attr_value(ident)
    if not ascii_only(kv) or not ascii_only(iv):
        return _site_profile.element_token(cetree.elementFactory(doc, node)).encode("utf-8", "surrogatepass")
    names = set()
    digits = _ascii_digit_in(kv)
    i = 0
    while kv[i]:
        while kv[i] and Py_UNICODE_ISSPACE(<unsigned char>kv[i]):
            i += 1
        start = i
        while kv[i] and not Py_UNICODE_ISSPACE(<unsigned char>kv[i]):
            i += 1
        if i > start:
            name = bytes(kv[start:i]).lower()
            if not (digits and _ascii_digit_in(name)):
                names.add(name)
    start = 0
    end = _strlen(iv)
    while start < end and Py_UNICODE_ISSPACE(<unsigned char>iv[start]):
        start += 1
    while end > start and Py_UNICODE_ISSPACE(<unsigned char>iv[end - 1]):
        end -= 1
    token = b".".join([<bytes>node.name, *sorted(names)])
    if end > start:
        ident_value = bytes(iv[start:end]).lower()
        if not _ascii_digit_in(ident_value):
            token += b"#" + ident_value
    return token


cdef class _PathDigests:
    """``site_profile.PathDigests`` for one page: each element's path digest, computed once from its parent's."""

    cdef NodeMap memo
    cdef unsigned long long* values
    cdef Py_ssize_t n, cap
    cdef object doc
    cdef dict steps     # (parent digest, token) -> digest: siblings alike share it

    def __cinit__(self):
        self.memo.keys = NULL
        self.memo.values = NULL
        self.values = NULL

    def __dealloc__(self):
        map_free(&self.memo)
        free(self.values)

    cdef int init(self, object doc) except -1:
        self.doc = doc
        self.steps = {}
        map_init(&self.memo, 256)
        self.cap = 256
        self.n = 0
        self.values = <unsigned long long*>malloc(self.cap * sizeof(unsigned long long))
        if self.values == NULL:
            raise MemoryError()
        return 0

    cdef unsigned long long of(self, xmlNode* el) except? 0:
        cdef Nodes chain
        cdef xmlNode* node = el
        cdef Py_ssize_t slot = -1, k
        cdef unsigned long long value = 0
        cdef unsigned long long* grown
        chain.data = NULL
        chain.size = chain.cap = 0
        try:
            while node != NULL:
                slot = map_get(&self.memo, node)
                if slot >= 0:
                    value = self.values[slot]
                    break
                check_node(node)
                nodes_push(&chain, node)
                node = parent_element(node)
            for k in range(chain.size - 1, -1, -1):
                node = chain.data[k]
                token = element_token(self.doc, node)
                key = (value, token)
                known = self.steps.get(key)
                if known is None:
                    known = self.steps[key] = _site_profile._digest(
                        f"{value:x}/" + (<bytes>token).decode("utf-8", "surrogatepass"))
                value = known
                if self.n == self.cap:
                    grown = <unsigned long long*>realloc(self.values, 2 * self.cap * sizeof(unsigned long long))
                    if grown == NULL:
                        raise MemoryError()
                    self.values = grown
                    self.cap *= 2
                self.values[self.n] = value
                map_put(&self.memo, node, self.n)
                self.n += 1
            return value
        finally:
            free(chain.data)


def summarise_page(cetree._Element root):
    """``site_profile.summarise_page(root)``: the neighbour page's :class:`~site_profile.PageSummary`."""
    global _site_profile
    if _site_profile is None:
        from newsclean.transforms import site_profile
        _site_profile = site_profile
    blocks = extract_blocks(root, _site_profile.SITE_BLOCKS, False)
    cdef _PathDigests digests = _PathDigests()
    cdef TagCache tags = TagCache()
    cdef _Scores scores = _Scores()
    cdef cetree._Element el
    cdef xmlNode* para
    cdef xmlNode* parent
    cdef xmlNode* grand
    cdef xmlNode* best
    cdef double add, chars
    cdef Py_ssize_t total = 0, commas, linked, words
    _load_features()
    tags.init(_FACTS)
    digests.init(root._doc)
    paths = {}
    texts = {}
    for b in blocks:
        el = b.container
        key = digests.of(el._c_node)
        words = b.num_words
        linked = b.num_linked_words
        acc = paths.get(key)
        if acc is None:
            paths[key] = [words, linked]
            texts[key] = [b.text]
        else:
            acc[0] += words
            acc[1] += linked
            texts[key].append(b.text)
        total += words
        if (<double>linked / <double>words if words else 0.0) > 0.5:   # site_profile.best_cluster
            continue
        para = paragraph_of(tags, el._c_node)
        parent = parent_or_self(para)
        grand = parent_or_self(parent)
        text = b.text
        commas = text.count(",")
        chars = len(text) / 100.0
        add = <double>(1 + commas) + (chars if chars < 3 else 3.0)
        scores.add(parent, add)
        scores.add(grand, add / 2)
    best = scores.best()
    return _site_profile.PageSummary(
        {k: (w, lw, text_digest(" ".join(texts[k]))) for k, (w, lw) in paths.items()}, total,
        digests.of(best) if best != NULL else None, frozenset([text_digest(b.text) for b in blocks]))


cdef inline bint _is_decimal(Py_UCS4 cp) noexcept nogil:
    """``\\d`` of ``re`` on str."""
    return (0x30 <= cp <= 0x39) if cp < 0x80 else Py_UNICODE_ISDECIMAL(cp)


def text_digest(str text):
    """``site_profile.text_digest(text)``: years 1900-2099 read as 1900 (``\\b(?:19|20)\\d\\d\\b``), lowercased,
    whitespace collapsed, BLAKE2b to 64 bits."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, size
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 a, b
    cdef list parts = None
    cdef Py_ssize_t last = 0
    cdef Bytes out
    cdef TokenStats st
    cdef const char* utf8
    i = 0
    while i + 4 <= n:
        a = PyUnicode_READ(kind, data, i)
        b = PyUnicode_READ(kind, data, i + 1)
        if ((a == 0x31 and b == 0x39) or (a == 0x32 and b == 0x30)) \
                and _is_decimal(PyUnicode_READ(kind, data, i + 2)) and _is_decimal(PyUnicode_READ(kind, data, i + 3)) \
                and (i == 0 or not is_word_char(PyUnicode_READ(kind, data, i - 1))) \
                and (i + 4 == n or not is_word_char(PyUnicode_READ(kind, data, i + 4))):
            if parts is None:
                parts = []
            parts.append(text[last:i])
            parts.append("1900")
            last = i + 4
            i += 4
            continue
        i += 1
    if parts is not None:
        parts.append(text[last:])
        text = "".join(parts)
    lowered = text.lower()
    utf8 = PyUnicode_AsUTF8AndSize(lowered, &size)
    out.data = NULL
    out.size = out.cap = 0
    try:
        token_stats(<const unsigned char*>utf8, size, &st, &out)
        return key_digest(&out)
    finally:
        free(out.data)


def too_deep(cetree._Element root, Py_ssize_t levels):
    """``etree.XPath("boolean(/*" + "/*" * levels + ")")(root)``: whether an element lies ``levels`` elements
    below the document's root element."""
    cdef xmlNode* top = root._c_node
    cdef xmlNode* node
    cdef xmlNode* nxt
    cdef Py_ssize_t depth = 0
    while parent_element(top) != NULL:
        top = parent_element(top)
    if top.type != tree.XML_ELEMENT_NODE:
        raise Unsupported("a root that is no element")
    node = top
    while True:
        if depth >= levels:
            return True
        nxt = node.children
        while nxt != NULL and nxt.type != tree.XML_ELEMENT_NODE:
            nxt = nxt.next
        if nxt != NULL:
            node = nxt
            depth += 1
            continue
        while True:
            if node == top:
                return False
            nxt = node.next
            while nxt != NULL and nxt.type != tree.XML_ELEMENT_NODE:
                nxt = nxt.next
            if nxt != NULL:
                node = nxt
                break
            node = node.parent
            depth -= 1


# ---------------------------------------------------------------------------------------------------------------
# metadata: the <meta>/<link> walk (metadata.page_tags) and microdata item types (metadata._has_article_item)

cdef object _attr_str(xmlNode* node, const char* name):
    """``el.get(name)``: the attribute's value as str, None when absent."""
    cdef xmlAttr* a = find_attr(node, name)
    if a == NULL:
        return None
    return PyUnicode_DecodeUTF8(attr_value(a), _strlen(attr_value(a)), NULL)


def page_tags(cetree._Element root, is_canonical):
    """``(values, head_properties, canonical_url)`` of ``metadata.page_tags(root)``; ``is_canonical`` is
    ``metadata._is_canonical`` (called with each ``<link>`` until one is)."""
    cdef Nodes elements
    cdef Py_ssize_t k
    cdef xmlNode* node
    cdef xmlNode* parent
    elements.data = NULL
    elements.size = elements.cap = 0
    values = {}
    head_properties = []
    canonical = None
    doc = root._doc
    try:
        collect_elements(root._c_node, &elements)
        for k in range(elements.size):
            node = elements.data[k]
            if name_is(node, b"meta"):
                prop = _attr_str(node, b"property")
                key = (prop or _attr_str(node, b"name") or _attr_str(node, b"itemprop")
                       or _attr_str(node, b"http-equiv") or "").strip().lower()
                raw = _attr_str(node, b"content")
                content = " ".join(raw.split()) if raw else ""   # text.collapse_ws
                if key and content:
                    held = values.get(key)
                    if held is None:
                        values[key] = [content]
                    else:
                        held.append(content)
                if prop is not None and raw is not None:
                    parent = parent_element(node)
                    if parent != NULL and name_is(parent, b"head"):
                        head_properties.append(prop)
            elif canonical is None and name_is(node, b"link") and is_canonical(cetree.elementFactory(doc, node)):
                canonical = _attr_str(node, b"href").strip()
        return values, head_properties, canonical
    finally:
        free(elements.data)


def item_types(cetree._Element root):
    """``//@itemscope/../@itemtype``: the ``itemtype`` values of the elements holding ``itemscope``, in document
    order."""
    cdef Nodes elements
    cdef Py_ssize_t k
    cdef xmlNode* top = root._c_node
    elements.data = NULL
    elements.size = elements.cap = 0
    while parent_element(top) != NULL:   # an absolute path: the whole document
        top = parent_element(top)
    out = []
    try:
        collect_elements(top, &elements)
        for k in range(elements.size):
            if find_attr(elements.data[k], b"itemscope") != NULL:
                value = _attr_str(elements.data[k], b"itemtype")
                if value is not None:
                    out.append(value)
        return out
    finally:
        free(elements.data)

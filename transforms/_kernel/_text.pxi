# Part of walks.pyx (included there): Buffers, nodes as lxml shows them, characters as CPython classifies them.

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


cdef enum:
    _NOT_SPACELESS = 0     # no character of text._SPACELESS_WORD
    _SPACELESS_ONE = 1     # a Han ideograph or a Hiragana character: a word unit of its own
    _SPACELESS_RUN = 2     # a Katakana character (phonetic extensions, half-width): a run of them is one unit


cdef inline int spaceless_kind(Py_UCS4 cp) noexcept nogil:
    """How ``text._SPACELESS_WORD`` reads ``cp``: :data:`_SPACELESS_ONE` (Han: URO, Ext. A, compatibility,
    supplementary planes; Hiragana), :data:`_SPACELESS_RUN` (Katakana) or :data:`_NOT_SPACELESS`."""
    if cp < 0x3040:
        return _NOT_SPACELESS
    if cp <= 0x309F:
        return _SPACELESS_ONE
    if cp <= 0x30FF or (0x31F0 <= cp <= 0x31FF) or (0xFF66 <= cp <= 0xFF9F):
        return _SPACELESS_RUN
    if (0x3400 <= cp <= 0x4DBF) or (0x4E00 <= cp <= 0x9FFF) or (0xF900 <= cp <= 0xFAFF) \
            or (0x20000 <= cp <= 0x3134F):
        return _SPACELESS_ONE
    return _NOT_SPACELESS


cdef inline bint is_spaceless(Py_UCS4 cp) noexcept nogil:
    """A character of ``text._SPACELESS_WORD`` (Han, Hiragana, Katakana): words without spaces."""
    return spaceless_kind(cp) != _NOT_SPACELESS


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
    Py_ssize_t words       # text.words: word units (text.spaceless_units) for which text.is_word holds
    Py_ssize_t chars       # code points of the tokens joined by single spaces
    bint spaceless         # a Han/Kana character: tokens hold several wrap units (blocks.wrap_lines)
    bint wide              # an East Asian Wide/Fullwidth character other than Han/Kana (blocks._columns)
    bint non_ascii


cdef enum:
    _ASCII_SPACE = 0       # str.isspace: \t \n \v \f \r \x1c-\x1f and the space
    _ASCII_ALNUM = 1
    _ASCII_UNDERSCORE = 2
    _ASCII_OTHER = 3


cdef unsigned char _ASCII_KIND[128]


cdef void _init_ascii_kinds() noexcept:
    cdef int c
    for c in range(128):
        if Py_UNICODE_ISSPACE(c):
            _ASCII_KIND[c] = _ASCII_SPACE
        elif (0x30 <= c <= 0x39) or (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A):
            _ASCII_KIND[c] = _ASCII_ALNUM
        elif c == 0x5F:
            _ASCII_KIND[c] = _ASCII_UNDERSCORE
        else:
            _ASCII_KIND[c] = _ASCII_OTHER


_init_ascii_kinds()


cdef struct WordUnits:
    # The word units of text.spaceless_units, read one character at a time (text.words: UAX #29 WB13 and
    # "otherwise break" for Han/Kana). A unit is a word when text.is_word holds: a letter or digit
    # (str.isalnum of a character), or "_" and another character (\w found and not only underscores).
    Py_ssize_t words       # units closed so far that are words
    bint alnum             # the open unit: holds a letter or digit
    bint underscore        # ... an "_"
    bint other             # ... a character other than "_"
    bint katakana          # ... is a run of Katakana (else: a run free of Han/Kana, or nothing yet)


cdef inline void unit_close(WordUnits* u) noexcept nogil:
    """End the open unit (at a token's end or a Han/Kana boundary), counting it when it is a word."""
    u.words += u.alnum or (u.underscore and u.other)
    u.alnum = u.underscore = u.other = u.katakana = False


cdef inline void unit_ascii(WordUnits* u, unsigned char kind) noexcept nogil:
    """Add an ASCII character of ``_ASCII_KIND`` ``kind`` (no space) to the open unit (it ends a Katakana run)."""
    if u.katakana:
        unit_close(u)
    if kind == _ASCII_UNDERSCORE:
        u.underscore = True
    else:
        u.other = True
        if kind == _ASCII_ALNUM:
            u.alnum = True


cdef inline int unit_char(WordUnits* u, Py_UCS4 cp) noexcept nogil:
    """Add a character outside ASCII (no space): a Han ideograph or Hiragana character is a unit of its own,
    a Katakana one extends or opens a Katakana run, another one extends or opens a run free of them. Returns
    ``spaceless_kind(cp)``."""
    cdef int k = spaceless_kind(cp)
    if k == _SPACELESS_ONE:
        unit_close(u)
        u.words += Py_UNICODE_ISALNUM(cp)
        return k
    if (k == _SPACELESS_RUN) != u.katakana:
        unit_close(u)
        u.katakana = k == _SPACELESS_RUN
    u.other = True
    if Py_UNICODE_ISALNUM(cp):
        u.alnum = True
    return k


cdef int token_stats(const unsigned char* s, Py_ssize_t n, TokenStats* st, Bytes* joined) except -1:
    """Split UTF-8 ``s[:n]`` as ``str.split()`` does and count tokens, words (``len(text.words(s))``, Han/Kana cut
    into their units) and characters; with ``joined``, write the tokens joined by single spaces there
    (``" ".join(s.split())``: at most ``n`` bytes, each token copied whole when it ends)."""
    cdef Py_ssize_t i = 0, start, token_start = 0
    cdef Py_UCS4 cp
    cdef unsigned char c, kind
    cdef bint in_token = False
    cdef WordUnits u
    u.words = 0
    u.alnum = u.underscore = u.other = u.katakana = False
    st.tokens = st.chars = 0
    st.spaceless = st.wide = st.non_ascii = False
    if joined != NULL:
        bytes_reserve(joined, n)
    while i < n:
        start = i
        c = s[i]
        if c < 0x80:
            kind = _ASCII_KIND[c]
            i += 1
        else:
            cp = decode(s, &i)
            kind = _ASCII_SPACE if is_space(cp) else 255
        if kind == _ASCII_SPACE:
            if in_token:
                unit_close(&u)
                if joined != NULL:
                    memcpy(joined.data + joined.size, s + token_start, start - token_start)
                    joined.size += start - token_start
                in_token = False
            continue
        if not in_token:
            in_token = True
            token_start = start
            if st.tokens:
                st.chars += 1
                if joined != NULL:
                    joined.data[joined.size] = b' '
                    joined.size += 1
            st.tokens += 1
        st.chars += 1
        if kind != 255:
            unit_ascii(&u, kind)
        else:
            st.non_ascii = True
            if unit_char(&u, cp) != _NOT_SPACELESS:
                st.spaceless = True
            elif is_wide(cp):
                st.wide = True
    if in_token:
        unit_close(&u)
        if joined != NULL:
            memcpy(joined.data + joined.size, s + token_start, n - token_start)
            joined.size += n - token_start
    st.words = u.words
    return 0


cdef bint has_non_space(const unsigned char* s, Py_ssize_t n) noexcept:
    """``not text.isspace()`` of a non-empty text."""
    cdef Py_ssize_t i = 0
    while i < n:
        if not is_space(decode(s, &i)):
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# raw-text spans of markup (parse.raw_text_spans)

cdef struct _Str:
    int kind
    const void* data
    Py_ssize_t n


cdef inline void _view(str text, _Str* t) noexcept:
    """``t`` reads ``text``'s characters in place (the string must outlive it)."""
    t.kind = PyUnicode_KIND(text)
    t.data = PyUnicode_DATA(text)
    t.n = PyUnicode_GET_LENGTH(text)


cdef inline unsigned int _char_at(_Str* t, Py_ssize_t i) noexcept:
    """The code point at ``i``, 0x110000 (no character) past the end."""
    return <unsigned int>PyUnicode_READ(t.kind, t.data, i) if i < t.n else 0x110000


cdef bint _word_at(_Str* t, Py_ssize_t i, const char* word) noexcept:
    """Whether ``word`` (ASCII lowercase) opens at ``i``, ASCII letters compared without case."""
    cdef Py_ssize_t k = 0
    cdef unsigned int c
    while word[k]:
        c = _char_at(t, i + k)
        if 0x41 <= c <= 0x5A:
            c += 32
        if c != <unsigned char>word[k]:
            return False
        k += 1
    return True


cdef bint _word_ends_at(_Str* t, Py_ssize_t i) noexcept:
    """``\\b`` of ``re`` after a word character at ``i - 1``: ``i`` is the end or no word character (``\\w``)."""
    cdef unsigned int c = _char_at(t, i)
    return c == 0x110000 or not (c == 0x5F or Py_UNICODE_ISALNUM(<Py_UCS4>c))


cdef Py_ssize_t _find_char(_Str* t, unsigned int c, Py_ssize_t pos) noexcept:
    """The first ``c`` (ASCII) at or after ``pos``, -1 when there is none."""
    cdef const char* found
    if t.kind == 1:
        if pos >= t.n:
            return -1
        found = <const char*>memchr(<const char*>t.data + pos, <int>c, t.n - pos)
        return -1 if found == NULL else found - <const char*>t.data
    while pos < t.n:
        if <unsigned int>PyUnicode_READ(t.kind, t.data, pos) == c:
            return pos
        pos += 1
    return -1


cdef Py_ssize_t _skip_space(_Str* t, Py_ssize_t k) noexcept:
    """The first position at or after ``k`` that holds no whitespace (``str.isspace``), or the end."""
    while k < t.n and is_space(PyUnicode_READ(t.kind, t.data, k)):
        k += 1
    return k


cdef Py_ssize_t _end_tag(_Str* t, const char* name, Py_ssize_t pos, Py_ssize_t* end) noexcept:
    """``parse._end_tag``: the start of the first ``</name\\s*>`` at or after ``pos`` (``end``: past its ``>``), -1
    when there is none."""
    cdef Py_ssize_t j, k
    while True:
        j = _find_char(t, 0x3C, pos)
        if j < 0:
            return -1
        if _char_at(t, j + 1) == 0x2F and _word_at(t, j + 2, name):
            k = _skip_space(t, j + 2 + <Py_ssize_t>strlen(name))
            if _char_at(t, k) == 0x3E:
                end[0] = k + 1
                return j
        pos = j + 1


def raw_text_spans(str text):
    """``parse.raw_text_spans(text)`` for a text holding none of ``parse._CASE_FOLD_TRAPS`` (the caller's check): the
    script, style, comment and ``<noscript>`` spans ``(start, end, inner start, inner end)``, in order."""
    cdef _Str t
    cdef Py_ssize_t pos = 0, i, j, gt, end, inner_end
    cdef const char* name
    _view(text, &t)
    spans = []
    while True:
        i = _find_char(&t, 0x3C, pos)   # the next "<" where _SPAN_START matches
        if i < 0:
            return spans
        name = NULL
        if _word_at(&t, i + 1, b"script") and _word_ends_at(&t, i + 7):
            name = b"script"
        elif _word_at(&t, i + 1, b"style") and _word_ends_at(&t, i + 6):
            name = b"style"
        if name != NULL:
            inner_end = _end_tag(&t, name, i + 1 + <Py_ssize_t>strlen(name), &end)
            if inner_end < 0:
                pos = i + 1
            else:
                spans.append((i, end, -1, -1))
                pos = end
        elif _word_at(&t, i + 1, b"!--"):
            j = _find_char(&t, 0x2D, i + 4)   # text.find("-->", i + 4)
            while j >= 0 and not _word_at(&t, j, b"-->"):
                j = _find_char(&t, 0x2D, j + 1)
            if j < 0:
                pos = i + 1
            else:
                spans.append((i, j + 3, -1, -1))
                pos = j + 3
        elif _word_at(&t, i + 1, b"noscript") and _word_ends_at(&t, i + 9):
            gt = _find_char(&t, 0x3E, i + 9)
            inner_end = -1 if gt < 0 else _end_tag(&t, b"noscript", gt + 1, &end)
            if inner_end < 0:
                pos = i + 1
            else:
                spans.append((i, end, gt + 1, inner_end))
                pos = end
        else:
            pos = i + 1


def end_body_spans(str text):
    """``[m.span() for m in parse._END_BODY_HTML.finditer(text)]``: every ``</body>`` or ``</html>`` end tag,
    whitespace (``str.isspace``) allowed after ``</`` and before ``>``, letters without case (no character outside
    ASCII folds to one of theirs under ``re.I``)."""
    cdef _Str t
    cdef Py_ssize_t pos = 0, i, k
    _view(text, &t)
    spans = []
    while True:
        i = _find_char(&t, 0x3C, pos)
        if i < 0:
            return spans
        pos = i + 1
        if _char_at(&t, i + 1) != 0x2F:
            continue
        k = _skip_space(&t, i + 2)
        if not (_word_at(&t, k, b"body") or _word_at(&t, k, b"html")):
            continue
        k = _skip_space(&t, k + 4)
        if _char_at(&t, k) == 0x3E:
            spans.append((i, k + 1))
            pos = k + 1


def has_control(str text):
    """Whether ``text`` holds a C0 control character other than tab, LF and CR (``parse._CONTROL``); one pass (for
    one-byte text every byte is counted without an early exit, a loop a compiler can vectorise)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, found = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef const unsigned char* b = <const unsigned char*>data
    cdef Py_UCS4 c
    if kind == 1:
        for i in range(n):
            found += (b[i] < 0x20) & (b[i] != 0x09) & (b[i] != 0x0A) & (b[i] != 0x0D)
        return found > 0
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if c < 0x20 and c != 0x09 and c != 0x0A and c != 0x0D:
            return True
    return False

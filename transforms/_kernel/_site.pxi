# Part of walks.pyx (included there): Word counts (text.count_words), site profile summaries and text digests (site_profile).

# ---------------------------------------------------------------------------------------------------------------
# words of a text (text.count_words) and the site profile's page summary (site_profile.summarise_page)

def count_words(str text):
    """``text.count_words(text)``: ``len(text.words(text))``, Han/Kana tokens cut into their word units (the
    :c:type:`WordUnits` of ``_text.pxi``)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 cp
    cdef unsigned char ascii
    cdef WordUnits u
    u.words = 0
    u.alnum = u.underscore = u.other = u.katakana = False
    for i in range(n):
        cp = PyUnicode_READ(kind, data, i)
        if cp < 0x80:
            ascii = _ASCII_KIND[cp]
            if ascii == _ASCII_SPACE:
                unit_close(&u)
            else:
                unit_ascii(&u, ascii)
        elif is_space(cp):
            unit_close(&u)
        else:
            unit_char(&u, cp)
    unit_close(&u)
    return u.words


cdef bint _ascii_digit_in(const char* s) noexcept nogil:
    cdef Py_ssize_t i = 0
    while s[i]:
        if 0x30 <= <unsigned char>s[i] <= 0x39:
            return True
        i += 1
    return False


cdef object element_token(object doc, xmlNode* node):
    """``dom.element_token`` of an element (Python's where its class or id is not ASCII)."""
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
        return _dom.element_token(cetree.elementFactory(doc, node)).encode("utf-8", "surrogatepass")
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
                    known = self.steps[key] = digest_bytes(f"{value:x}/".encode("ascii") + <bytes>token)
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
    """``site_profile.summarise_page(root)``: the neighbour page's :class:`~types.PageSummary`. Raises
    :class:`Unsupported` (the tree is not changed)."""
    cdef _Segmenter blocks = block_records(root, _types.SITE_BLOCKS)
    cdef _PathDigests digests = _PathDigests()
    cdef TagCache tags = TagCache()
    cdef _Scores scores = _Scores()
    cdef xmlNode* container
    cdef xmlNode* para
    cdef xmlNode* parent
    cdef xmlNode* grand
    cdef xmlNode* best
    cdef double add, chars
    cdef Py_ssize_t total = 0, commas, linked, words, i
    _load_features()
    tags.init(_FACTS)
    digests.init(root._doc)
    paths = {}
    texts = {}
    for i in range(blocks.record_words.size):
        container = blocks.record_containers.data[i]
        text = blocks.out[i]
        key = digests.of(container)
        words = blocks.record_words.data[i]
        linked = blocks.record_linked.data[i]
        acc = paths.get(key)
        if acc is None:
            paths[key] = [words, linked]
            texts[key] = [text]
        else:
            acc[0] += words
            acc[1] += linked
            texts[key].append(text)
        total += words
        if (<double>linked / <double>words if words else 0.0) > 0.5:   # site_profile.best_cluster
            continue
        para = paragraph_of(tags, container)
        parent = parent_or_self(para)
        grand = parent_or_self(parent)
        commas = text.count(",")
        chars = len(text) / 100.0
        add = <double>(1 + commas) + (chars if chars < 3 else 3.0)
        scores.add(parent, add)
        scores.add(grand, add / 2)
    best = scores.best()
    own = {}   # text -> its digest: a path holding one block's text has that block's digest (a page repeats texts)
    for text in blocks.out:
        if text not in own:
            own[text] = text_digest(text)
    return _types.PageSummary(
        {k: (w, lw, own[texts[k][0]] if len(texts[k]) == 1 else text_digest(" ".join(texts[k])))
         for k, (w, lw) in paths.items()}, total,
        digests.of(best) if best != NULL else None, frozenset(own.values()))


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


def blocks_text(list blocks):
    """``chain.blocks_text(blocks)`` before its NFC step: the blocks' texts joined by a space inside one paragraph
    element (``dom.paragraph_of`` of the container) and by a newline between paragraphs."""
    cdef TagCache tags = TagCache()
    cdef cetree._Element el
    cdef xmlNode* para
    cdef xmlNode* previous = NULL
    _load_features()
    tags.init(_FACTS)
    parts = []
    for block in blocks:
        el = block.container
        check_node(el._c_node)
        para = paragraph_of(tags, el._c_node)
        if parts:
            parts.append(" " if para == previous else "\n")
        parts.append(block.text)
        previous = para
    return "".join(parts)

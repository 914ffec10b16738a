# Part of walks.pyx (included there): Maps keyed by node, tag facts, math.fsum, string tables.

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
    int semantic            # bit of vocab.SEMANTIC_TAGS (0: none)
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
    """``dom.paragraph_of``: the closest ancestor-or-self with a paragraph tag, else the topmost."""
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

# Part of walks.pyx (included there): Block features and the stage-2 context (classifier.features).

# ---------------------------------------------------------------------------------------------------------------
# block features (classifier.features: the shallow, text, papers, dom, page, cluster, neighbours, table and
# lexicon groups)

cdef TagFacts _FACTS = None
cdef tuple _COLUMNS = None      # (column of each feature name in FEATURE_NAMES order) by group


cdef _load_features():
    """The tag facts of :mod:`~newsclean.transforms.vocab`'s paragraph tags, semantic tags and container classes
    (built on first use)."""
    global _FACTS
    if _FACTS is None:
        _FACTS = TagFacts(_vocab.PARAGRAPH_TAGS, _vocab.SEMANTIC_TAGS, _vocab.CONTAINER_CLASSES)


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
    if spaceless:
        unit_facts(s, size, f)
    return 0


cdef int unit_facts(const unsigned char* s, Py_ssize_t n, BlockFacts* f) except -1:
    """``f.ws``, ``f.ws_chars`` and ``f.caps`` of a text holding Han/Kana from its ``text.words``: the word units
    (``text.spaceless_units`` of each token, :func:`wrap_unit`), their code points and those opening with an
    upper-case letter."""
    cdef Py_ssize_t i = 0, j, chars
    cdef Py_UCS4 first
    f.ws = f.ws_chars = f.caps = 0
    while i < n:
        j = i
        first = decode(s, &j)
        if is_space(first):
            i = j
            continue
        if wrap_unit(s, n, &i, False, &chars):
            f.ws += 1
            f.ws_chars += chars
            f.caps += Py_UNICODE_ISUPPER(first)
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
    """``dom.cue_words(dom.class_id_words(el))``: negative and positive words in the lowercased class and id (each
    word once); Python's where a value is not ASCII."""
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
        n, p = _dom.cue_words(_dom.class_id_words(cetree.elementFactory(doc, node)))
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
        if has_attr_value(node, _NOISE_ATTR, _DYNAMIC):
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
    _load_features()
    if _NEGATIVE is None:
        _NEGATIVE = PhraseTable([w.encode("ascii") for w in _vocab.NEGATIVE_WORDS])
        _POSITIVE = PhraseTable([w.encode("ascii") for w in _vocab.POSITIVE_WORDS])
        _PHRASES = PhraseTable([w.encode("ascii") for w in _vocab.BOILERPLATE_PHRASES])
    index = _vocab.FEATURE_INDEX
    cdef Py_ssize_t n = len(blocks), i, j, k, page_words = 0, m, prev_i, next_i
    X = np.zeros((n, len(_vocab.FEATURE_NAMES)))
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
        c_sem = index["in_" + _vocab.SEMANTIC_TAGS[0]]
        c_neg = index["neg_words"]
        n_sem = len(_vocab.SEMANTIC_TAGS)
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
        title_tokens = set(_vocab.TITLE_TOKEN.findall(title_text))
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
        children = {}   # lxml_len of each paragraph parent, walked once each (a flat page: one parent, n blocks)
        for i in range(n):
            node = parent_element(f[i].para)
            key = <size_t>node
            acc[key] = acc.get(key, 0) + f[i].words
            if key not in children:
                children[key] = lxml_len(node) if node != NULL else 0
        for i in range(n):
            node = parent_element(f[i].para)
            x[i, c_sib] = log1p(<double>children[<size_t>node])
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

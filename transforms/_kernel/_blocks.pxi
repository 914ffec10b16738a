# Part of walks.pyx (included there): Text blocks (blocks.extract_blocks) and hidden elements (blocks.hidden_elements).

# ---------------------------------------------------------------------------------------------------------------
# hidden elements (dom.is_hidden, blocks.hidden_elements)

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
    """``dom.is_hidden`` of an element (Python's where a value is not ASCII)."""
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
        return _dom.is_hidden(cetree.elementFactory(doc, node))
    if style != NULL and style[0] and style_hides(style):
        return 1
    return hidden_attr or (aria != NULL and aria_true(aria))

# ---------------------------------------------------------------------------------------------------------------
# text blocks (blocks.extract_blocks)

cdef bint wrap_unit(const unsigned char* s, Py_ssize_t n, Py_ssize_t* i, bint wide, Py_ssize_t* cols) except -1:
    """The wrap unit (``text.spaceless_units``) at byte ``i[0]`` of UTF-8 ``s[:n]`` (``i`` inside a token): a Han
    ideograph or Hiragana character, a run of Katakana, or a run free of them up to the token's end (whitespace,
    ``str.isspace``, or the end). Moves ``i`` past it, sets ``cols`` to its columns (``blocks._columns``: two per East Asian Wide or
    Fullwidth character where ``wide``, else one per character) and returns ``text.is_word`` of it."""
    cdef Py_ssize_t j
    cdef Py_UCS4 cp
    cdef int k
    cdef WordUnits u
    u.words = 0
    u.alnum = u.underscore = u.other = u.katakana = False
    cols[0] = 0
    while i[0] < n:
        j = i[0]
        cp = decode(s, &j)
        if is_space(cp):
            break
        k = spaceless_kind(cp)
        if cols[0] and (k == _SPACELESS_ONE or (k == _SPACELESS_RUN) != u.katakana):
            break   # the character opens the next unit
        i[0] = j
        cols[0] += 2 if wide and is_wide(cp) else 1
        if cp < 0x80:
            unit_ascii(&u, _ASCII_KIND[cp])
        else:
            unit_char(&u, cp)
        if k == _SPACELESS_ONE:
            break
    unit_close(&u)
    return u.words > 0


cdef double wrap_density(const unsigned char* s, Py_ssize_t n, Py_ssize_t width, Py_ssize_t num_words,
                         Py_ssize_t chars, bint ascii, bint wide) except -1:
    """``blocks.text_density`` of a block: the greedy ``width``-column wrap of its units (``blocks.wrap_lines``;
    ``s``: the tokens joined by single spaces, ``chars`` code points; a unit opening a token follows a space on its
    line, the other units of a token none), words on all lines but the last over lines - 1; one line: its words.
    A unit takes one column per character, two per East Asian Wide or Fullwidth one where ``wide``."""
    cdef Py_ssize_t i = 0, size, units = 0, line_words = 0, used = 0, extra
    cdef Py_ssize_t lines = 0, before_last = 0
    cdef bint word, opens_token
    if chars <= width // 2 or (chars <= width and ascii):
        return <double>num_words
    while i < n:
        opens_token = True
        while i < n and s[i] != 0x20:   # the units of one token
            word = wrap_unit(s, n, &i, wide, &size)
            extra = size + (1 if units and opens_token else 0)
            opens_token = False
            if units and used + extra > width:
                lines += 1
                before_last += line_words
                units = line_words = 0
                used = 0
                extra = size
            units += 1
            line_words += word
            used += extra
        i += 1   # the space after the token
    if units:
        lines += 1
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
    # the pending block
    cdef Nodes piece_nodes
    cdef Ints piece_slots         # 0: text, 1: tail
    cdef Ints piece_ends          # end offset of each piece in ``texts``
    cdef Ints piece_linked
    cdef Bytes texts
    cdef Py_ssize_t linked_words
    cdef xmlNode* first
    cdef bint has_text
    cdef Bytes scratch
    # records mode (:func:`block_records`): ``out`` holds each block's text, these its container and counts
    cdef bint records
    cdef Nodes record_containers
    cdef Ints record_words
    cdef Ints record_linked

    def __dealloc__(self):
        free(self.record_containers.data)
        free(self.record_words.data)
        free(self.record_linked.data)
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
        if st.words:
            n = st.words
            text = PyUnicode_DecodeUTF8(self.scratch.data, self.scratch.size, NULL)
            if self.records:
                self.record(text, n, min(self.linked_words, n), self.first)
            elif self.detail:
                density = wrap_density(<const unsigned char*>self.scratch.data, self.scratch.size, self.width,
                                       n, st.chars, not st.non_ascii, st.wide or st.spaceless)
                self.out.append(_types.TextBlock(text, n, min(self.linked_words, n), density,
                                                  cetree.elementFactory(self.doc, self.first), self.pieces()))
            else:
                self.out.append(_types.TextBlock(text, n, min(self.linked_words, n), 0.0,
                                                  cetree.elementFactory(self.doc, self.first)))
        self.reset()
        return 0

    cdef list texts_out(self):
        """The texts of the blocks walked so far (records mode: ``out`` itself)."""
        return self.out if self.records else [b.text for b in self.out]

    cdef int record(self, str text, Py_ssize_t words, Py_ssize_t linked, xmlNode* container) except -1:
        """Records mode: one block's text, word and linked-word counts and container, in block order."""
        self.out.append(text)
        nodes_push(&self.record_containers, container)
        ints_push(&self.record_words, words)
        ints_push(&self.record_linked, linked)
        return 0


cdef struct Kind:
    bint separator
    bint skip
    bint link
    bint hidden     # an outermost hidden element


cdef _Segmenter new_segmenter(cetree._Element body, object params, bint detail, bint records):
    """A :class:`_Segmenter` for one walk of ``body`` (``records``: blocks as records, not :class:`TextBlock`)."""
    cdef _Segmenter seg = _Segmenter()
    seg.doc = body._doc
    seg.params = params
    seg.detail = detail
    seg.records = records
    seg.width = params.wrap_width
    seg.out = []
    return seg


cdef int walk_blocks(_Segmenter seg, cetree._Element body, bint skip_hidden, list hidden) except -1:
    """``blocks._segment`` of ``body``: ``seg`` gets its text blocks; with ``skip_hidden``, the elements of
    ``blocks.hidden_elements(body)`` are skipped as SKIP_TAGS are, and appended to ``hidden``."""
    cdef object params = seg.params
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
    skip_tags = frozenset(_vocab.SKIP_TAGS)
    tag_kinds = {}
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
                if not kind.separator and separate_marked and find_attr(node, _NOISE_ATTR) != NULL:
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
        return 0
    finally:
        free(containers.data)
        free(kinds)


_SKIP_NAMES = tuple(tag.encode("ascii") for tag in _vocab.SKIP_TAGS)


cdef bint _is_skipped(xmlNode* node) except -1:
    """An element whose tag is one of ``vocab.SKIP_TAGS``."""
    if node.type != tree.XML_ELEMENT_NODE:
        return False
    for name in _SKIP_NAMES:
        if name_is(node, name):
            return True
    return False


cdef xmlNode* _next_within(xmlNode* node, xmlNode* top, bint descend) noexcept:
    """The node after ``node`` in document order (its first child where ``descend``), NULL past ``top``'s subtree."""
    if descend and node.children != NULL:
        return node.children
    while node != top and node.next == NULL:
        node = node.parent
    return NULL if node == top else node.next


cdef Py_ssize_t _normalized_length(xmlNode* top) except -1:
    """XPath ``string-length(normalize-space(.))`` of an element: the code points of its text nodes' content
    (comments and processing instructions are not in its string value), XML whitespace (space, tab, CR, LF) stripped
    at both ends and each inner run of it read as one space."""
    cdef Py_ssize_t chars = 0
    cdef bint started = False, gap = False
    cdef const unsigned char* s
    cdef xmlNode* node = _next_within(top, top, True)
    while node != NULL:
        check_node(node)
        if is_text(node) and node.content != NULL:
            s = <const unsigned char*>node.content
            while s[0]:
                if s[0] == 0x20 or s[0] == 0x09 or s[0] == 0x0A or s[0] == 0x0D:
                    gap = started
                elif (s[0] & 0xC0) != 0x80:  # the first byte of a character
                    chars += 1 + gap
                    gap = False
                    started = True
                s += 1
        node = _next_within(node, top, node.type == tree.XML_ELEMENT_NODE)
    return chars


cdef Py_ssize_t _shown_length(xmlNode* el) except -1:
    """``blocks._shown_length``: :func:`_normalized_length` of ``el`` less that of each outermost skipped element
    under it (one with no skipped ancestor in the whole document: none where ``el`` or an ancestor is skipped)."""
    cdef Py_ssize_t chars = _normalized_length(el)
    cdef xmlNode* node = el
    while node != NULL and node.type == tree.XML_ELEMENT_NODE:
        if _is_skipped(node):
            return chars
        node = node.parent
    node = _next_within(el, el, True)
    while node != NULL:
        check_node(node)
        if _is_skipped(node):
            chars -= _normalized_length(node)
            node = _next_within(node, el, False)
        else:
            node = _next_within(node, el, node.type == tree.XML_ELEMENT_NODE)
    return chars


cdef bint _hides_most(list hidden, list shown_texts, max_share) except -1:
    """``blocks.hides_most(hidden, shown, max_share)`` given the shown blocks' texts (the same float arithmetic)."""
    cdef cetree._Element el
    hidden_chars = 0
    for item in hidden:
        el = item
        hidden_chars += <double>_shown_length(el._c_node)
    return hidden_chars > max_share * (hidden_chars + sum([len(text) for text in shown_texts]))


def extract_blocks(root, params, bint detail=True):
    """``blocks.extract_blocks(root, params, detail)``. Raises :class:`Unsupported` (the tree is not changed)."""
    return walked_segmenter(root, params, detail, False).out


cdef _Segmenter block_records(cetree._Element root, params):
    """The blocks of ``extract_blocks(root, params, detail=False)`` as records, not :class:`TextBlock` objects: the
    segmenter's ``out`` holds each block's text, ``record_containers`` / ``record_words`` / ``record_linked`` its
    container and counts, in block order. Raises :class:`Unsupported` (the tree is not changed)."""
    return walked_segmenter(root, params, False, True)


cdef _Segmenter walked_segmenter(root, params, bint detail, bint records):
    """The segmenter after walking ``root``'s body (``blocks.extract_blocks``): hidden elements skipped with
    ``params.skip_hidden``, unless they hold most of the page's text (then the body is walked again, reading them)."""
    body = root.find("body") if root.tag == "html" else root
    body = root if body is None else body
    hidden = []
    cdef _Segmenter seg = new_segmenter(body, params, detail, records)
    walk_blocks(seg, body, params.skip_hidden, hidden)
    if hidden and _hides_most(hidden, seg.texts_out(), params.max_hidden_share):
        seg = new_segmenter(body, params, detail, records)
        walk_blocks(seg, body, False, [])
    return seg

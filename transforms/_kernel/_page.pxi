# Part of walks.pyx (included there): what the page-level steps read of the tree (refine.*, page_type, roles,
# byline): element words, card groups, text and main containers, blocks under an element, byline and role boxes.

from cpython.unicode cimport PyUnicode_FromKindAndData

cdef extern from "Python.h":
    int PyUnicode_4BYTE_KIND


_TextBlock = _types.TextBlock    # its link_density: linked words / words (read here from the two counts)


cdef tuple tag_class_signature(xmlNode* node):
    """``dom.tag_class_signature`` of an element: ``(tag, its class tokens sorted and space-joined)``."""
    check_node(node)
    cdef xmlAttr* klass = find_attr(node, b"class")
    names = (PyUnicode_DecodeUTF8(attr_value(klass), _strlen(attr_value(klass)), NULL) if klass != NULL else "").split()
    return ((<bytes>node.name).decode("utf-8"), names[0] if len(names) == 1 else " ".join(sorted(names)))


cdef class _ElementCounts:
    """``teaser_cards.element_words`` of one page's blocks: per element reached (the container of each block with
    words, and its ancestors up to the root), the words, link blocks and linked words of the blocks under it; slots in
    the order the blocks reach the elements."""

    cdef NodeMap slots
    cdef Nodes order
    cdef Py_ssize_t* sums       # words, link blocks, linked words of each slot
    cdef Py_ssize_t cap
    cdef object doc

    def __cinit__(self):
        self.slots.keys = NULL
        self.slots.values = NULL
        self.order.data = NULL
        self.order.size = self.order.cap = 0
        self.sums = NULL

    def __dealloc__(self):
        map_free(&self.slots)
        free(self.order.data)
        free(self.sums)

    cdef int count(self, list blocks, Py_ssize_t min_link_words, double min_link_density) except -1:
        """Raises :class:`Unsupported` for blocks of more than one document."""
        cdef Py_ssize_t slot, words, linked, link
        cdef Py_ssize_t* grown
        cdef xmlNode* node
        cdef cetree._Element el
        map_init(&self.slots, 8 * len(blocks) + 16)
        for block in blocks:
            words = block.num_words
            if not words:
                continue
            linked = block.num_linked_words
            link = words >= min_link_words and (
                <double>linked / <double>words if type(block) is _TextBlock else block.link_density) >= min_link_density
            el = block.container
            if self.doc is None:
                self.doc = el._doc
            elif el._doc is not self.doc:
                raise Unsupported("blocks of more than one document")
            node = el._c_node
            while node != NULL and node.type == tree.XML_ELEMENT_NODE:
                slot = map_get(&self.slots, node)
                if slot < 0:
                    slot = self.order.size
                    nodes_push(&self.order, node)
                    map_put(&self.slots, node, slot)
                    if 3 * self.order.size > self.cap:
                        self.cap = max(64, 2 * self.cap, 3 * self.order.size)
                        grown = <Py_ssize_t*>realloc(self.sums, self.cap * sizeof(Py_ssize_t))
                        if grown == NULL:
                            raise MemoryError()
                        self.sums = grown
                    self.sums[3 * slot] = self.sums[3 * slot + 1] = self.sums[3 * slot + 2] = 0
                self.sums[3 * slot] += words
                self.sums[3 * slot + 1] += link
                self.sums[3 * slot + 2] += linked
                node = node.parent
        return 0

    cdef inline Py_ssize_t words(self, xmlNode* node) noexcept:
        cdef Py_ssize_t slot = map_get(&self.slots, node)
        return self.sums[3 * slot] if slot >= 0 else 0


def element_words(list blocks, Py_ssize_t min_link_words, double min_link_density):
    """``teaser_cards.element_words`` (before its memo): per element holding a block with words, ``(words, link
    blocks, linked words)`` of the blocks under it, in the order the blocks reach the elements (each container, then
    its ancestors up to the root). Raises :class:`Unsupported` for blocks of more than one document."""
    cdef _ElementCounts counts = _ElementCounts()
    cdef Py_ssize_t k
    cdef Py_ssize_t* sums
    counts.count(blocks, min_link_words, min_link_density)
    sums = counts.sums
    return {cetree.elementFactory(counts.doc, counts.order.data[k]): (sums[3 * k], sums[3 * k + 1], sums[3 * k + 2])
            for k in range(counts.order.size)}


def alnum_casefold(str text):
    """``page_type._folded(text)``: ``text.casefold()`` with every character that is not ``str.isalnum()`` left out
    (the reference's ``[\\W_]+`` removal: ``\\w`` is ``str.isalnum()`` or ``_``). Case folding maps each character
    on its own (to at most 3), so a text of few non-ASCII characters is folded one character at a time (ASCII in C:
    ``casefold`` is ``lower`` there), a wider one by ``str.casefold`` at once."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, kept = 0, wide = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 cp
    for i in range(n):
        if PyUnicode_READ(kind, data, i) >= 0x80:
            wide += 1
    if wide * 8 > n:
        return _alnum_only(text.casefold())
    cdef Py_UCS4* out = <Py_UCS4*>malloc((n + 2 * wide + 1) * sizeof(Py_UCS4))  # ASCII: one character, others at most 3
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            cp = PyUnicode_READ(kind, data, i)
            if cp >= 0x80:
                kept = _append_alnum(chr(cp).casefold(), out, kept)
            elif 0x41 <= cp <= 0x5A:
                out[kept] = <Py_UCS4>(<unsigned int>cp + 0x20)
                kept += 1
            elif (0x30 <= cp <= 0x39) or (0x61 <= cp <= 0x7A):
                out[kept] = cp
                kept += 1
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, kept)
    finally:
        free(out)


cdef Py_ssize_t _append_alnum(str text, Py_UCS4* out, Py_ssize_t kept) except -1:
    """Append the ``str.isalnum`` characters of ``text`` to ``out`` from ``kept``; the new length."""
    cdef Py_ssize_t i
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 cp
    for i in range(PyUnicode_GET_LENGTH(text)):
        cp = PyUnicode_READ(kind, data, i)
        if is_word_char(cp) and cp != 0x5F:  # the reference removes [\W_]: \w but the underscore
            out[kept] = cp
            kept += 1
    return kept


cdef str _alnum_only(str text):
    """The ``str.isalnum`` characters of ``text``."""
    cdef Py_UCS4* out = <Py_UCS4*>malloc((PyUnicode_GET_LENGTH(text) + 1) * sizeof(Py_UCS4))
    if out == NULL:
        raise MemoryError()
    try:
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, _append_alnum(text, out, 0))
    finally:
        free(out)


def under_element(list nodes, cetree._Element scope):
    """``ancestor_filter.under_element(nodes, scope)``: per node (None: False), whether it is ``scope`` or lies
    under it."""
    cdef xmlNode* target = scope._c_node
    cdef xmlNode* node
    cdef cetree._Element el
    out = []
    for item in nodes:
        if item is None:
            out.append(False)
            continue
        el = item
        node = el._c_node
        while node != NULL and node != target:
            node = node.parent
        out.append(node != NULL)
    return out


cdef class _Hit:
    """What :func:`_under_any` asks of each element on a walk up: ``hit(node)``, a pure rule of the element."""

    cdef bint hit(self, xmlNode* node) except -1:
        return False


cdef list _under_any(list nodes, _Hit hitter, stop):
    """``dom.under_any(nodes, hit, stop)``: per node (None: False), whether it or one of its ancestors below
    the first element in ``stop`` is a hit; each element's answer found once and shared by the nodes below it (a hit
    element itself asked again when reached again)."""
    cdef NodeMap stops, memo
    cdef Nodes path
    cdef xmlNode* node
    cdef cetree._Element el
    cdef Py_ssize_t k, answer
    stops.keys = memo.keys = NULL
    stops.values = memo.values = NULL
    path.data = NULL
    path.size = path.cap = 0
    try:
        map_init(&stops, len(stop) + 1)
        for item in stop:
            el = item
            map_put(&stops, el._c_node, 1)
        map_init(&memo, 4 * len(nodes) + 16)
        out = []
        for item in nodes:
            if item is None:
                out.append(False)
                continue
            el = item
            node = el._c_node
            path.size = 0
            while node != NULL and map_get(&stops, node) < 0 and map_get(&memo, node) < 0 and not hitter.hit(node):
                nodes_push(&path, node)
                node = parent_element(node)
            if node == NULL or map_get(&stops, node) >= 0:
                answer = 0
            else:
                answer = map_get(&memo, node)
                if answer < 0:
                    answer = 1      # a hit (not memoised)
            for k in range(path.size):
                map_put(&memo, path.data[k], answer)
            out.append(bool(answer))
        return out
    finally:
        map_free(&stops)
        map_free(&memo)
        free(path.data)


cdef class _CardGroups(_Hit):
    """``teaser_cards.CardGroups`` over the words each element holds (:class:`_ElementCounts`)."""

    cdef _ElementCounts counts
    cdef NodeMap judged         # parent -> index in ``groups``
    cdef list groups            # per judged parent: {signature: is a group}
    cdef Py_ssize_t max_card_words, min_description_words, min_cards
    cdef double min_card_share

    def __cinit__(self):
        self.judged.keys = NULL
        self.judged.values = NULL

    def __dealloc__(self):
        map_free(&self.judged)

    cdef int init(self, list blocks, object params) except -1:
        self.counts = _ElementCounts()
        self.counts.count(blocks, params.min_link_words, params.min_link_density)
        self.max_card_words = params.max_card_words
        self.min_description_words = params.min_description_words
        self.min_cards = params.min_cards
        self.min_card_share = params.min_card_share
        self.groups = []
        map_init(&self.judged, 64)
        return 0

    cdef bint is_card(self, xmlNode* node) except -1:
        cdef Py_ssize_t slot, words
        cdef Py_ssize_t* sums = self.counts.sums
        if node.type != tree.XML_ELEMENT_NODE:
            return False
        slot = map_get(&self.counts.slots, node)
        if slot < 0:
            return False
        words = sums[3 * slot]
        if not (0 < words <= self.max_card_words and sums[3 * slot + 1] > 0
                and words - sums[3 * slot + 2] >= self.min_description_words):
            return False
        return (name_is(node, b"li") or name_is(node, b"div") or name_is(node, b"article")   # teaser_cards.CARD_TAGS
                or name_is(node, b"section") or name_is(node, b"ul") or name_is(node, b"ol"))

    cdef bint hit(self, xmlNode* node) except -1:
        """``CardGroups.__call__``: a card among at least ``min_cards`` same-signature sibling cards."""
        cdef xmlNode* parent
        cdef xmlNode* child
        cdef Py_ssize_t index, cards = 0
        if not self.is_card(node):
            return False
        parent = parent_element(node)
        if parent == NULL:
            return False
        index = map_get(&self.judged, parent)
        if index < 0:
            child = parent.children
            while child != NULL:
                cards += self.is_card(child)
                child = child.next
            judged = {}
            if cards >= self.min_cards:  # else no signature has enough cards (CardGroups._judge)
                tally = {}
                child = parent.children
                while child != NULL:
                    if child.type == tree.XML_ELEMENT_NODE and map_get(&self.counts.slots, child) >= 0:
                        sig = tag_class_signature(child)
                        same, n_cards = tally.get(sig, (0, 0))
                        tally[sig] = (same + 1, n_cards + self.is_card(child))
                    child = child.next
                judged = {sig: n_cards >= self.min_cards and <double>n_cards >= self.min_card_share * <double>same
                          for sig, (same, n_cards) in tally.items()}
            index = len(self.groups)
            self.groups.append(judged)
            map_put(&self.judged, parent, index)
        judged = self.groups[index]
        if not judged:
            return False
        return judged.get(tag_class_signature(node), False)


def card_flags(list blocks, list nodes, params, stop):
    """``dom.under_any(nodes, teaser_cards.CardGroups(teaser_cards.element_words(blocks, ...), params),
    stop)``: per node (None: False), whether it or an ancestor below the first element of ``stop`` is a card of a
    card group. Raises :class:`Unsupported` for blocks of more than one document."""
    cdef _CardGroups groups = _CardGroups()
    groups.init(blocks, params)
    return _under_any(nodes, groups, stop)


def text_containers(list blocks):
    """``[refine.region.text_container(b) for b in blocks]``: the parent of each block's paragraph
    (``dom.paragraph_of`` of its container; the paragraph itself at the root). Raises
    :class:`Unsupported` for a container the kernel does not read."""
    cdef TagCache tags = TagCache()
    cdef cetree._Element el
    cdef xmlNode* para
    cdef xmlNode* previous = NULL
    cdef xmlNode* node
    _load_features()
    tags.init(_FACTS)
    out = []
    made = None
    for block in blocks:
        el = block.container
        check_node(el._c_node)
        para = paragraph_of(tags, el._c_node)
        node = parent_or_self(para)
        if node != previous or made is None:  # neighbouring blocks mostly share theirs: one proxy lookup
            made = cetree.elementFactory(el._doc, node)
            previous = node
        out.append(made)
    return out


_HINT_TABLES = {}   # words -> PhraseTable, or None where the words are not plain ASCII (at most a few word sets)


cdef object hint_table(tuple words):
    """The :class:`PhraseTable` of ``words`` (``refine.region.word_hint``'s words), None where they do not fit one
    (more than 64, empty or not ASCII): then :func:`class_id_hinted` holds for every element with a class or id."""
    table = _HINT_TABLES.get(words, False)
    if table is False:
        table = None
        if all(isinstance(w, str) and w and w.isascii() for w in words) and len(words) <= 64:
            table = PhraseTable([w.encode("ascii") for w in words])
        if len(_HINT_TABLES) < 64:
            _HINT_TABLES[words] = table
    return table


cdef bint class_id_hinted(xmlNode* node, object table, Bytes* scratch) except -1:
    """Whether ``refine.region.hinted_class_tokens(el, word_hint(words))`` may hold one of ``words`` or a token
    holding one: ``table`` (:func:`hint_table` of the words) finds one of them in the element's ``"class id"``, its
    ASCII letters lowercased (True where ``table`` is None; False without class and id). Such tokens are runs of
    ASCII letters and digits of that string, lowercased (``dom.class_tokens``), and UTF-8 keeps ASCII
    bytes as they are: any other byte is part of a character that splits tokens."""
    cdef xmlAttr* klass = find_attr(node, b"class")
    cdef xmlAttr* ident = find_attr(node, b"id")
    cdef const char* kv = _EMPTY if klass == NULL else attr_value(klass)
    cdef const char* iv = _EMPTY if ident == NULL else attr_value(ident)
    if not kv[0] and not iv[0]:
        return False
    if table is None:
        return True
    scratch.size = 0
    _add_lower(scratch, kv)
    bytes_addc(scratch, b' ')
    _add_lower(scratch, iv)
    return (<PhraseTable>table).hits(scratch.data, scratch.size) > 0


cdef class _KindMemo:
    """Per element, its byline box kind as the Python reference computes it (``kind(element)``: ``byline._BoxKinds``,
    an int >= 0), asked only for elements with an itemprop or rel, or whose class or id the box words' ``table`` may
    hint at (:func:`class_id_hinted`; no other can be a box); memoised."""

    cdef NodeMap memo
    cdef object doc, kind, table
    cdef Bytes scratch

    def __cinit__(self):
        self.memo.keys = NULL
        self.memo.values = NULL
        self.scratch.data = NULL
        self.scratch.size = self.scratch.cap = 0

    def __dealloc__(self):
        map_free(&self.memo)
        free(self.scratch.data)

    cdef int init(self, object doc, object kind, object table) except -1:
        self.doc = doc
        self.kind = kind
        self.table = table
        map_init(&self.memo, 256)
        return 0

    cdef Py_ssize_t of(self, xmlNode* node) except -1:
        cdef Py_ssize_t k = map_get(&self.memo, node)
        if k >= 0:
            return k
        check_node(node)
        if find_attr(node, b"itemprop") != NULL or find_attr(node, b"rel") != NULL \
                or class_id_hinted(node, self.table, &self.scratch):
            k = self.kind(cetree.elementFactory(self.doc, node))
        else:
            k = 0
        map_put(&self.memo, node, k)
        return k


cdef enum:
    COMMENT_BOX = 1     # byline._COMMENT_BOX
    BYLINE_BOX = 2      # byline._BYLINE_BOX


cdef xmlNode* _box_of(xmlNode* el, Py_ssize_t levels, xmlNode* scope, _KindMemo kinds) except? NULL:
    """``byline._box_of``."""
    cdef xmlNode* node = el
    cdef Py_ssize_t k, kind
    for k in range(levels + 1):
        if node == NULL or node.type != tree.XML_ELEMENT_NODE:
            return NULL
        kind = kinds.of(node)
        if kind == COMMENT_BOX:
            return NULL
        if kind == BYLINE_BOX:
            return node
        if node == scope:
            return NULL
        node = parent_element(node)
    return NULL


cdef bint _in_comments(xmlNode* el, Py_ssize_t levels, xmlNode* scope, _KindMemo kinds) except -1:
    """``byline._in_comments``."""
    cdef xmlNode* node = el
    cdef Py_ssize_t k
    for k in range(levels + 1):
        if node == NULL or node.type != tree.XML_ELEMENT_NODE:
            return False
        if kinds.of(node) == COMMENT_BOX:
            return True
        if node == scope:
            return False
        node = parent_element(node)
    return False


def byline_boxes(list blocks, cetree._Element scope, Py_ssize_t box_levels, Py_ssize_t max_words, kind,
                 tuple hint_words):
    """The byline boxes ``byline.byline_names`` reads, in page order: for each block under ``scope`` of at most
    ``max_words`` words, its box (``_box_of``, else, outside comment boxes, ``_inline_box``) where it has one.
    ``kind`` is ``byline._BoxKinds``, asked only for elements with an itemprop or rel or whose class or id holds one of
    ``hint_words`` (the words of its ``word_hint``: :func:`class_id_hinted`)."""
    cdef _KindMemo kinds = _KindMemo()
    cdef cetree._Element el
    cdef cetree._Element piece
    cdef xmlNode* container
    cdef xmlNode* node
    cdef xmlNode* box
    cdef xmlNode* target = scope._c_node
    kinds.init(scope._doc, kind, hint_table(hint_words))
    out = []
    for block in blocks:
        el = block.container
        container = el._c_node
        node = container
        while node != NULL and node != target:
            node = node.parent
        if node == NULL or block.num_words > max_words:
            continue
        box = _box_of(container, box_levels, target, kinds)
        if box == NULL and not _in_comments(container, box_levels, target, kinds):
            for piece, slot in block.pieces:  # byline._inline_box
                node = piece._c_node if slot == "text" else parent_element(piece._c_node)
                while node != NULL and node != container and node != target:
                    if _box_of(node, 0, target, kinds) != NULL:
                        box = node
                        break
                    node = parent_element(node)
                if box != NULL:
                    break
        if box != NULL:
            out.append(cetree.elementFactory(el._doc, box))
    return out


def box_roles(list blocks, list nodes, own, Py_ssize_t max_caption_words, tuple hint_words):
    """``[roles._Boxes.role_of(el) for el in nodes]``: per element, the role of the outermost of it and its ancestors
    that has one of its own. ``own(element, words)`` is ``roles._Boxes._own``, asked only for the elements that can
    have one (a class or id holding one of ``hint_words``, the words of its ``word_hint``: :func:`class_id_hinted`;
    a ``figure``/``figcaption`` of at most ``max_caption_words`` words; never ``body`` or ``html``); ``words``: the
    words of ``blocks`` under the element."""
    cdef _ElementCounts counts = _ElementCounts()
    cdef NodeMap memo
    cdef Py_ssize_t words, k
    cdef Nodes path
    cdef xmlNode* node
    cdef cetree._Element el
    cdef bint figure
    cdef Bytes scratch
    table = hint_table(hint_words)
    scratch.data = NULL
    scratch.size = scratch.cap = 0
    memo.keys = NULL
    memo.values = NULL
    path.data = NULL
    path.size = path.cap = 0
    roles = []          # memo's values: the role of each element seen
    doc = None
    try:
        counts.count(blocks, 2, 0.5)   # the words under each element (link settings not read)
        map_init(&memo, 4 * len(nodes) + 16)
        out = []
        for item in nodes:
            el = item
            if doc is None:
                doc = el._doc
            node = el._c_node
            path.size = 0
            while node != NULL and map_get(&memo, node) < 0:
                check_node(node)
                nodes_push(&path, node)
                node = parent_element(node)
            role = roles[map_get(&memo, node)] if node != NULL else None
            for k in range(path.size - 1, -1, -1):
                node = path.data[k]
                if role is None and node.type == tree.XML_ELEMENT_NODE \
                        and not name_is(node, b"body") and not name_is(node, b"html"):
                    words = counts.words(node)
                    figure = name_is(node, b"figcaption") or name_is(node, b"figure")
                    if figure and words <= max_caption_words:
                        role = own(cetree.elementFactory(doc, node), words)
                    elif class_id_hinted(node, table, &scratch):
                        role = own(cetree.elementFactory(doc, node), words)
                map_put(&memo, node, len(roles))
                roles.append(role)
            out.append(role)
        return out
    finally:
        map_free(&memo)
        free(path.data)
        free(scratch.data)


cdef class _NamedHit(_Hit):
    """A Python rule ``hit(element)`` asked only for elements with one of ``attributes`` or a tag in ``tags`` (bytes
    names), or whose class or id the ``table`` of a rule's class words may hint at (:func:`class_id_hinted`; no
    table: never): the others are no hit."""

    cdef object rule, doc, table
    cdef tuple attributes, tags
    cdef Bytes scratch

    def __cinit__(self):
        self.scratch.data = NULL
        self.scratch.size = self.scratch.cap = 0

    def __dealloc__(self):
        free(self.scratch.data)

    cdef bint hit(self, xmlNode* node) except -1:
        check_node(node)
        if node.type != tree.XML_ELEMENT_NODE:
            return False
        for name in self.tags:
            if name_is(node, name):
                return bool(self.rule(cetree.elementFactory(self.doc, node)))
        for name in self.attributes:
            if find_attr(node, name) != NULL:
                return bool(self.rule(cetree.elementFactory(self.doc, node)))
        if self.table is not False and class_id_hinted(node, self.table, &self.scratch):
            return bool(self.rule(cetree.elementFactory(self.doc, node)))
        return False


def under_any_named(list nodes, hit, stop, tuple attributes, tuple tags, tuple class_words=()):
    """``dom.under_any(nodes, hit, stop)`` for a ``hit`` that is False for every element with none of
    ``attributes`` (bytes names), a tag outside ``tags`` (bytes names) and a class and id holding none of
    ``class_words`` (:func:`class_id_hinted`): ``hit`` is asked only for the others."""
    cdef _NamedHit hitter = _NamedHit()
    cdef cetree._Element el
    first = next((item for item in nodes if item is not None), None)
    if first is None:
        return [False] * len(nodes)
    el = first
    hitter.rule, hitter.doc, hitter.attributes, hitter.tags = hit, el._doc, attributes, tags
    hitter.table = hint_table(class_words) if class_words else False
    return _under_any(nodes, hitter, stop)


def main_container(list blocks, list keep, list containers):
    """``refine.region.main_container(blocks, keep)`` given the blocks' ``text_containers``: the text container holding
    most words of the kept blocks, the first in document order on a tie; None when no block with words is kept
    (the three lists read as ``zip`` reads them)."""
    cdef NodeMap slots
    cdef Nodes order
    cdef Py_ssize_t* held = NULL
    cdef Py_ssize_t* grown
    cdef Py_ssize_t n = min(len(blocks), len(keep), len(containers)), i, slot, words, cap = 0, best = -1
    cdef cetree._Element el
    cdef xmlNode* node
    slots.keys = NULL
    slots.values = NULL
    order.data = NULL
    order.size = order.cap = 0
    try:
        map_init(&slots, 64)
        for i in range(n):
            if not keep[i]:
                continue
            words = blocks[i].num_words
            if not words:
                continue
            el = containers[i]
            node = el._c_node
            slot = map_get(&slots, node)
            if slot < 0:
                slot = order.size
                nodes_push(&order, node)
                map_put(&slots, node, slot)
                if order.size > cap:
                    cap = max(16, 2 * cap)
                    grown = <Py_ssize_t*>realloc(held, cap * sizeof(Py_ssize_t))
                    if grown == NULL:
                        raise MemoryError()
                    held = grown
                held[slot] = 0
            held[slot] += words
        for i in range(order.size):
            if best < 0 or held[i] > held[best]:
                best = i
        if best < 0:
            return None
        for i in range(n):
            el = containers[i]
            if el._c_node == order.data[best]:
                return el
        return None
    finally:
        map_free(&slots)
        free(order.data)
        free(held)

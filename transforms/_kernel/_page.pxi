# Part of walks.pyx (included there): what the page-level steps read of the kept blocks (refine.teaser_cards,
# page_type).

from cpython.unicode cimport PyUnicode_FromKindAndData

cdef extern from "Python.h":
    int PyUnicode_4BYTE_KIND


def element_words(list blocks, Py_ssize_t min_link_words, double min_link_density):
    """``teaser_cards.element_words`` (before its memo): per element holding a block with words, ``(words, link
    blocks, linked words)`` of the blocks under it, in the order the blocks reach the elements (each container, then
    its ancestors up to the root). Raises :class:`Unsupported` for blocks of more than one document."""
    cdef NodeMap slots
    cdef Nodes order
    cdef Py_ssize_t* sums = NULL
    cdef Py_ssize_t* grown
    cdef Py_ssize_t cap = 0, slot, words, linked, link, k
    cdef xmlNode* node
    cdef cetree._Element el
    doc = None
    order.data = NULL
    order.size = order.cap = 0
    map_init(&slots, 8 * len(blocks) + 16)
    try:
        for block in blocks:
            words = block.num_words
            if not words:
                continue
            linked = block.num_linked_words
            link = words >= min_link_words and block.link_density >= min_link_density
            el = block.container
            if doc is None:
                doc = el._doc
            elif el._doc is not doc:
                raise Unsupported("blocks of more than one document")
            node = el._c_node
            while node != NULL and node.type == tree.XML_ELEMENT_NODE:
                slot = map_get(&slots, node)
                if slot < 0:
                    slot = order.size
                    nodes_push(&order, node)
                    map_put(&slots, node, slot)
                    if 3 * order.size > cap:
                        cap = max(64, 2 * cap, 3 * order.size)
                        grown = <Py_ssize_t*>realloc(sums, cap * sizeof(Py_ssize_t))
                        if grown == NULL:
                            raise MemoryError()
                        sums = grown
                    sums[3 * slot] = sums[3 * slot + 1] = sums[3 * slot + 2] = 0
                sums[3 * slot] += words
                sums[3 * slot + 1] += link
                sums[3 * slot + 2] += linked
                node = node.parent
        held = {}
        for k in range(order.size):
            held[cetree.elementFactory(doc, order.data[k])] = (sums[3 * k], sums[3 * k + 1], sums[3 * k + 2])
        return held
    finally:
        map_free(&slots)
        free(order.data)
        free(sums)


def alnum_casefold(str text):
    """``page_type._folded(text)``: ``text.casefold()`` with every character that is not ``str.isalnum()`` left out
    (the reference's ``[\\W_]+`` removal: ``\\w`` is ``str.isalnum()`` or ``_``)."""
    cdef str folded = text.casefold()
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(folded), i, kept = 0
    cdef int kind = PyUnicode_KIND(folded)
    cdef void* data = PyUnicode_DATA(folded)
    cdef Py_UCS4 cp
    cdef Py_UCS4* out = <Py_UCS4*>malloc((n + 1) * sizeof(Py_UCS4))
    if out == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            cp = PyUnicode_READ(kind, data, i)
            if cp < 0x80:
                if (0x30 <= cp <= 0x39) or (0x61 <= cp <= 0x7A) or (0x41 <= cp <= 0x5A):
                    out[kept] = cp
                    kept += 1
            elif Py_UNICODE_ISALNUM(cp):
                out[kept] = cp
                kept += 1
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, kept)
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


cdef object _teaser_cards = None


cdef class _CardGroups:
    """``teaser_cards.CardGroups`` over the words each element holds (``element_words``), counted here."""

    cdef NodeMap slots          # element -> its counts' slot
    cdef Py_ssize_t* sums       # words, link blocks, linked words of each slot
    cdef Py_ssize_t cap, n
    cdef NodeMap judged         # parent -> index in ``groups``
    cdef list groups            # per judged parent: {signature: is a group}
    cdef object doc, params
    cdef Py_ssize_t max_card_words, min_description_words, min_cards
    cdef double min_card_share

    def __cinit__(self):
        self.slots.keys = self.judged.keys = NULL
        self.slots.values = self.judged.values = NULL
        self.sums = NULL

    def __dealloc__(self):
        map_free(&self.slots)
        map_free(&self.judged)
        free(self.sums)

    cdef int init(self, list blocks, object params) except -1:
        cdef Py_ssize_t words, linked, link, slot
        cdef Py_ssize_t min_link_words = params.min_link_words
        cdef double min_link_density = params.min_link_density
        cdef cetree._Element el
        cdef xmlNode* node
        cdef Py_ssize_t* grown
        self.params = params
        self.max_card_words = params.max_card_words
        self.min_description_words = params.min_description_words
        self.min_cards = params.min_cards
        self.min_card_share = params.min_card_share
        self.groups = []
        self.n = 0
        self.cap = 0
        map_init(&self.slots, 8 * len(blocks) + 16)
        map_init(&self.judged, 64)
        for block in blocks:
            words = block.num_words
            if not words:
                continue
            linked = block.num_linked_words
            link = words >= min_link_words and block.link_density >= min_link_density
            el = block.container
            if self.doc is None:
                self.doc = el._doc
            elif el._doc is not self.doc:
                raise Unsupported("blocks of more than one document")
            node = el._c_node
            while node != NULL and node.type == tree.XML_ELEMENT_NODE:
                slot = map_get(&self.slots, node)
                if slot < 0:
                    slot = self.n
                    self.n += 1
                    map_put(&self.slots, node, slot)
                    if 3 * self.n > self.cap:
                        self.cap = max(64, 2 * self.cap, 3 * self.n)
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

    cdef bint is_card(self, xmlNode* node) except -1:
        cdef Py_ssize_t slot, words, k
        if node.type != tree.XML_ELEMENT_NODE:
            return False
        slot = map_get(&self.slots, node)
        if slot < 0:
            return False
        words = self.sums[3 * slot]
        if not (0 < words <= self.max_card_words and self.sums[3 * slot + 1] > 0
                and words - self.sums[3 * slot + 2] >= self.min_description_words):
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
                    if child.type == tree.XML_ELEMENT_NODE and map_get(&self.slots, child) >= 0:
                        sig = _teaser_cards.tag_class_signature(cetree.elementFactory(self.doc, child))
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
        return judged.get(_teaser_cards.tag_class_signature(cetree.elementFactory(self.doc, node)), False)


def card_flags(list blocks, list nodes, params, stop):
    """``ancestor_filter.under_any(nodes, teaser_cards.CardGroups(teaser_cards.element_words(blocks, ...), params),
    stop)``: per node (None: False), whether it or an ancestor below the first element of ``stop`` is a card of a
    card group. Raises :class:`Unsupported` for blocks of more than one document."""
    global _teaser_cards
    if _teaser_cards is None:
        from newsclean.transforms.refine import teaser_cards
        _teaser_cards = teaser_cards
    cdef _CardGroups groups = _CardGroups()
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
        groups.init(blocks, params)
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
            while node != NULL and map_get(&stops, node) < 0 and map_get(&memo, node) < 0 and not groups.hit(node):
                nodes_push(&path, node)
                node = parent_element(node)
            if node == NULL or map_get(&stops, node) >= 0:
                answer = 0
            else:
                answer = map_get(&memo, node)
                if answer < 0:
                    answer = 1      # a card of a group (not memoised: asked again when reached again)
            for k in range(path.size):
                map_put(&memo, path.data[k], answer)
            out.append(bool(answer))
        return out
    finally:
        map_free(&stops)
        map_free(&memo)
        free(path.data)


def text_containers(list blocks):
    """``[refine.region.text_container(b) for b in blocks]``: the parent of each block's paragraph
    (``ancestor_filter.paragraph_of`` of its container; the paragraph itself at the root). Raises
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


cdef inline bint has_class_or_id(xmlNode* node) except -1:
    return find_attr(node, b"class") != NULL or find_attr(node, b"id") != NULL


cdef class _KindMemo:
    """Per element, a kind the Python reference computes (``kind(element)``, an int >= 0), asked only for elements
    with one of the attributes that can make it non-zero; memoised for one call."""

    cdef NodeMap memo
    cdef object doc, kind
    cdef bint author_attrs     # itemprop and rel count too (byline boxes)

    def __cinit__(self):
        self.memo.keys = NULL
        self.memo.values = NULL

    def __dealloc__(self):
        map_free(&self.memo)

    cdef int init(self, object doc, object kind, bint author_attrs) except -1:
        self.doc = doc
        self.kind = kind
        self.author_attrs = author_attrs
        map_init(&self.memo, 256)
        return 0

    cdef Py_ssize_t of(self, xmlNode* node) except -1:
        cdef Py_ssize_t k = map_get(&self.memo, node)
        if k >= 0:
            return k
        check_node(node)
        if has_class_or_id(node) or (self.author_attrs and (find_attr(node, b"itemprop") != NULL
                                                            or find_attr(node, b"rel") != NULL)):
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


def byline_boxes(list blocks, cetree._Element scope, Py_ssize_t box_levels, Py_ssize_t max_words, kind):
    """The byline boxes ``byline.byline_names`` reads, in page order: for each block under ``scope`` of at most
    ``max_words`` words, its box (``_box_of``, else, outside comment boxes, ``_inline_box``) where it has one.
    ``kind`` is ``byline._BoxKinds`` (asked only for elements with a class, id, itemprop or rel)."""
    cdef _KindMemo kinds = _KindMemo()
    cdef cetree._Element el
    cdef cetree._Element piece
    cdef xmlNode* container
    cdef xmlNode* node
    cdef xmlNode* box
    cdef xmlNode* target = scope._c_node
    kinds.init(scope._doc, kind, True)
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


def box_roles(list blocks, list nodes, own, Py_ssize_t max_caption_words):
    """``[roles._Boxes.role_of(el) for el in nodes]``: per element, the role of the outermost of it and its ancestors
    that has one of its own. ``own(element, words)`` is ``roles._Boxes._own``, asked only for the elements that can
    have one (a class or an id; a ``figure``/``figcaption`` of at most ``max_caption_words`` words; never ``body``
    or ``html``); ``words``: the words of ``blocks`` under the element."""
    cdef NodeMap slots, memo
    cdef Py_ssize_t* sums = NULL
    cdef Py_ssize_t* grown
    cdef Py_ssize_t cap = 0, used = 0, slot, words, k
    cdef Nodes path
    cdef xmlNode* node
    cdef cetree._Element el
    cdef bint figure
    slots.keys = memo.keys = NULL
    slots.values = memo.values = NULL
    path.data = NULL
    path.size = path.cap = 0
    roles = []          # memo's values: the role of each element seen
    doc = None
    try:
        map_init(&slots, 8 * len(blocks) + 16)
        map_init(&memo, 4 * len(nodes) + 16)
        for block in blocks:   # teaser_cards.element_words' word counts
            words = block.num_words
            if not words:
                continue
            el = block.container
            node = el._c_node
            while node != NULL and node.type == tree.XML_ELEMENT_NODE:
                slot = map_get(&slots, node)
                if slot < 0:
                    slot = used
                    used += 1
                    map_put(&slots, node, slot)
                    if used > cap:
                        cap = max(64, 2 * cap)
                        grown = <Py_ssize_t*>realloc(sums, cap * sizeof(Py_ssize_t))
                        if grown == NULL:
                            raise MemoryError()
                        sums = grown
                    sums[slot] = 0
                sums[slot] += words
                node = node.parent
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
                    slot = map_get(&slots, node)
                    words = sums[slot] if slot >= 0 else 0
                    figure = name_is(node, b"figcaption") or name_is(node, b"figure")
                    if figure and words <= max_caption_words:
                        role = own(cetree.elementFactory(doc, node), words)
                    elif has_class_or_id(node):
                        role = own(cetree.elementFactory(doc, node), words)
                map_put(&memo, node, len(roles))
                roles.append(role)
            out.append(role)
        return out
    finally:
        map_free(&slots)
        map_free(&memo)
        free(path.data)
        free(sums)


def under_any_named(list nodes, hit, stop, tuple attributes, tuple tags):
    """``ancestor_filter.under_any(nodes, hit, stop)`` for a ``hit`` that is False for every element with none of
    ``attributes`` (bytes names) and a tag outside ``tags`` (bytes names): ``hit`` is asked only for the others."""
    cdef NodeMap stops, memo
    cdef Nodes path
    cdef xmlNode* node
    cdef cetree._Element el
    cdef Py_ssize_t k, answer
    cdef bint named
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
            doc = el._doc
            node = el._c_node
            path.size = 0
            while node != NULL and map_get(&stops, node) < 0 and map_get(&memo, node) < 0:
                check_node(node)
                named = False
                if node.type == tree.XML_ELEMENT_NODE:
                    for name in tags:
                        if name_is(node, name):
                            named = True
                            break
                    if not named:
                        for name in attributes:
                            if find_attr(node, name) != NULL:
                                named = True
                                break
                if named and hit(cetree.elementFactory(doc, node)):
                    break
                nodes_push(&path, node)
                node = parent_element(node)
            if node == NULL or map_get(&stops, node) >= 0:
                answer = 0
            else:
                answer = map_get(&memo, node)
                if answer < 0:
                    answer = 1      # a hit (not memoised, as under_any)
            for k in range(path.size):
                map_put(&memo, path.data[k], answer)
            out.append(bool(answer))
        return out
    finally:
        map_free(&stops)
        map_free(&memo)
        free(path.data)


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

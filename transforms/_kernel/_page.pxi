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

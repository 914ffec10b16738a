# Part of walks.pyx (included there): Noise marks and removal (static_noise, dynamic_noise, noise_removal) and the cleaned HTML's pruning.

# ---------------------------------------------------------------------------------------------------------------
# noise marks (static_noise: keys and marks, StaDyNoT §3.1; dynamic_noise: LCA candidates, §3.2)

import hashlib

cdef object _BLAKE8 = hashlib.blake2b(digest_size=8)  # copied per digest: cheaper than a new one's arguments


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
    return digest_bytes(key.data[:key.size])


cdef object digest_bytes(bytes data):
    """``int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")``."""
    hasher = _BLAKE8.copy()
    hasher.update(data)
    cdef bytes raw = hasher.digest()
    cdef const unsigned char* b = raw
    cdef unsigned long long value = 0
    cdef int k
    for k in range(8):
        value = (value << 8) | b[k]
    return value


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
    if params.keep_embedded and root.getparent() is not None:
        raise Unsupported("a root below another element (static_noise.is_static of its parent)")
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
                    parent_answer = None   # a root without a parent (checked above)
                else:
                    slot = map_get(&answers, parent_element(node))
                    parent_answer = None if slot < 0 or static[slot] < 0 else bool(static[slot])
                if parent_answer is False:
                    continue
            marked.append(cetree.elementFactory(root._doc, node))
        for el in marked:
            cetree.setAttributeValue(el, _vocab.NOISE_ATTR, _vocab.STATIC)
        return len(marked)
    finally:
        free(elements.data)
        free(raw.data)
        free(text.data)
        free(key.data)
        free(static)
        map_free(&answers)


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
    if parent is not None and _dom.in_noise(parent):
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
            cetree.setAttributeValue(el, _vocab.NOISE_ATTR, _vocab.DYNAMIC)
        return len(chosen)
    finally:
        free(starts)
        free(cands)
        free(buf.data)
        map_free(&slots)

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


cdef int _visible_text_into(xmlNode* el, Bytes* out) except -1:
    """Append the text nodes under ``el`` in document order, but those whose parent is a ``<script>`` or a
    ``<style>`` and those under a ``<template>``."""
    cdef xmlNode* c = el.children
    cdef bint own = not (name_is(el, b"script") or name_is(el, b"style"))
    cdef const char* s
    while c != NULL:
        check_node(c)
        if c.type == tree.XML_ELEMENT_NODE:
            if not name_is(c, b"template"):
                _visible_text_into(c, out)  # depth: at most parse.MAX_DEPTH elements
        elif own and is_text(c) and c.content != NULL:
            s = <const char*>c.content
            bytes_add(out, s, _strlen(s))
        c = c.next
    return 0


def visible_text(cetree._Element el):
    """``parse.element_visible_text(el)`` (``"".join`` of ``.//text()[not(parent::script or parent::style)]
    [not(ancestor::template)]``): "" under a ``<template>`` (``el`` or an ancestor)."""
    cdef xmlNode* node = el._c_node
    cdef Bytes out
    check_node(node)
    while node != NULL:
        if name_is(node, b"template"):
            return ""
        node = parent_element(node)
    out.data = NULL
    out.size = out.cap = 0
    try:
        _visible_text_into(el._c_node, &out)
        return PyUnicode_DecodeUTF8(out.data, out.size, NULL) if out.size else ""
    finally:
        free(out.data)


cdef Py_ssize_t _visible_words(cetree._Element el) except -1:
    """``count_words(parse.element_visible_text(el))`` (``noise_removal._word_count``)."""
    return count_words(visible_text(el))


cdef dict _form_words(list tagged):
    """Per ``<form>`` of ``tagged``, its :func:`_visible_words` before anything is removed (removing comments, PIs and
    the tagged elements before it in document order leaves its visible text as it is)."""
    out = {}
    for el in tagged:
        if el.tag == "form":
            out[el] = _visible_words(el)
    return out


def remove_non_informative(cetree._Element root, params):
    """``noise_removal.remove_non_informative(root, params)``: elements removed. A form is unwrapped where its words
    reach ``params.form_unwrap_ratio`` of the page's (at least 1): ``noise_removal._unwrap_form``, whose page count is
    a lower bound that decides as the whole count does. Raises :class:`Unsupported` (the tree is not changed)."""
    others, tagged, ancestors, has_form = non_informative_targets(root, params.non_informative_tags)
    page_words = 1   # noise_removal: no form below the root, no page count (a form at the root: 1 word)
    if has_form:  # before removal
        page_words = _visible_words(root)
    forms = _form_words(tagged)
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
        if el.tag == "form" and forms[el] >= ratio * max(1, page_words):
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


def clear_dropped(list blocks, keep):
    """``chain.cleaned_html``'s first step: the text of every piece of the blocks not kept set to None
    (``setattr(el, slot, None)``), through lxml's C API."""
    cdef cetree._Element el
    for block, kept in zip(blocks, keep):
        if kept:
            continue
        for piece, slot in block.pieces:
            el = piece
            if slot == "text":
                cetree.setNodeText(el._c_node, None)
            elif slot == "tail":
                cetree.setTailText(el._c_node, None)
            else:
                setattr(el, slot, None)

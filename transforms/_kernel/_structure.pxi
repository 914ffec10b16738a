# Part of walks.pyx (included there): The per-site and structure feature groups (classifier.features.site_features,
# structure_features).

cdef object _BODY_NAME = _vocab.BODY_NAME


cdef struct Marks:
    bint container      # structure.article_marks of the element and its ancestors, or-ed
    bint body_prop
    bint body_name
    xmlNode* nearest    # the nearest of them that is an article container or has a body class/id name


cdef int own_marks(xmlNode* node, bint* container, bint* body_prop, bint* body_name) except -1:
    """``structure.article_marks`` of one element."""
    cdef xmlAttr* itemprop = find_attr(node, b"itemprop")
    cdef xmlAttr* prop = find_attr(node, b"property")
    cdef xmlAttr* role = find_attr(node, b"role")
    cdef xmlAttr* klass = find_attr(node, b"class")
    cdef xmlAttr* ident = find_attr(node, b"id")
    body_prop[0] = False
    if itemprop != NULL or prop != NULL:
        text = f"{_attr_str(node, b'itemprop') or ''} {_attr_str(node, b'property') or ''}".lower()
        body_prop[0] = "articlebody" in text
    container[0] = name_is(node, b"article") or name_is(node, b"main") or body_prop[0]
    if not container[0] and role != NULL:
        container[0] = (_attr_str(node, b"role") or "").lower() == "main"
    body_name[0] = False
    if klass != NULL or ident != NULL:
        names = f"{_attr_str(node, b'class') or ''} {_attr_str(node, b'id') or ''}".lower()
        body_name[0] = bool(names.strip()) and _BODY_NAME.search(names) is not None
    return 0


cdef class _PathMarks:
    """``structure.PathMarks`` for one page: each element's marks and those of its ancestors, from its parent's."""

    cdef NodeMap memo
    cdef Marks* states
    cdef Py_ssize_t n, cap

    def __cinit__(self):
        self.memo.keys = NULL
        self.memo.values = NULL
        self.states = NULL

    def __dealloc__(self):
        map_free(&self.memo)
        free(self.states)

    cdef int init(self) except -1:
        map_init(&self.memo, 256)
        self.cap = 256
        self.n = 0
        self.states = <Marks*>malloc(self.cap * sizeof(Marks))
        if self.states == NULL:
            raise MemoryError()
        return 0

    cdef Marks of(self, xmlNode* el) except *:
        cdef Nodes chain
        cdef xmlNode* node = el
        cdef Py_ssize_t slot, k
        cdef Marks state
        cdef Marks* grown
        cdef bint container, body_prop, body_name
        state.container = state.body_prop = state.body_name = False
        state.nearest = NULL
        chain.data = NULL
        chain.size = chain.cap = 0
        try:
            while node != NULL:
                slot = map_get(&self.memo, node)
                if slot >= 0:
                    state = self.states[slot]
                    break
                check_node(node)
                nodes_push(&chain, node)
                node = parent_element(node)
            for k in range(chain.size - 1, -1, -1):
                node = chain.data[k]
                own_marks(node, &container, &body_prop, &body_name)
                if container or body_name:
                    state.nearest = node
                state.container = state.container or container
                state.body_prop = state.body_prop or body_prop
                state.body_name = state.body_name or body_name
                if self.n == self.cap:
                    grown = <Marks*>realloc(self.states, 2 * self.cap * sizeof(Marks))
                    if grown == NULL:
                        raise MemoryError()
                    self.states = grown
                    self.cap *= 2
                self.states[self.n] = state
                map_put(&self.memo, node, self.n)
                self.n += 1
            return state
        finally:
            free(chain.data)


def structure_columns(list blocks, support, double coverage):
    """``features.structure_features(blocks, article_body)`` given what it reads of the ``articleBody``: ``support``,
    the blocks' ``BodySupport.support`` (None: no body to judge by), and ``coverage``. Shape ``(len(blocks), 8)``.
    Raises :class:`Unsupported` for a tree the kernel does not read."""
    cdef Py_ssize_t n = len(blocks), i, k, page_words = 0, slot
    X = np.zeros((n, 8))
    if not n:
        return X
    cdef double[:, ::1] x = X
    cdef _PathMarks marks = _PathMarks()
    cdef Marks* states = <Marks*>malloc(n * sizeof(Marks))
    cdef Py_ssize_t* words = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef Py_ssize_t* totals = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
    cdef NodeMap held
    cdef Nodes order
    cdef xmlNode* anc
    cdef cetree._Element el
    cdef double has_container, body_present = 0.0 if support is None else 1.0
    held.keys = NULL
    held.values = NULL
    order.data = NULL
    order.size = order.cap = 0
    try:
        if states == NULL or words == NULL or totals == NULL:
            raise MemoryError()
        marks.init()
        map_init(&held, n)
        for i in range(n):
            b = blocks[i]
            el = b.container
            words[i] = b.num_words
            page_words += words[i]
            states[i] = marks.of(el._c_node)
        if not page_words:
            page_words = 1
        for i in range(n):  # words of the blocks whose nearest marked element each one is, in first-seen order
            if states[i].nearest == NULL:
                continue
            slot = map_get(&held, states[i].nearest)
            if slot < 0:
                slot = order.size
                map_put(&held, states[i].nearest, slot)
                nodes_push(&order, states[i].nearest)
                totals[slot] = 0
            totals[slot] += words[i]
        own = [totals[k] for k in range(order.size)]
        for k in range(order.size):  # a container's words include those of the containers nested in it
            anc = parent_element(order.data[k])
            while anc != NULL:
                slot = map_get(&held, anc)
                if slot >= 0:
                    totals[slot] += <Py_ssize_t>own[k]
                anc = parent_element(anc)
        has_container = 1.0 if order.size else 0.0
        for i in range(n):
            x[i, 0] = 1.0 if states[i].container else 0.0
            x[i, 1] = 1.0 if states[i].body_prop else 0.0
            x[i, 2] = 1.0 if states[i].body_name else 0.0
            if states[i].nearest != NULL:
                x[i, 3] = <double>totals[map_get(&held, states[i].nearest)] / <double>page_words
            x[i, 4] = has_container
            x[i, 5] = <double>support[i] if support is not None else 0.0
            x[i, 6] = body_present
            x[i, 7] = coverage
        return X
    finally:
        free(states)
        free(words)
        free(totals)
        map_free(&held)
        free(order.data)


def site_columns(list blocks, dict content, dict structures, dict texts):
    """``features.site_features(blocks, profile)`` for a profile's ``dict(profile.content)``,
    ``profile.structures()`` and ``profile.texts()``: shape ``(len(blocks), 7)``. Raises :class:`Unsupported` for a
    tree the kernel does not read."""
    cdef Py_ssize_t n = len(blocks), i, k, slot, page_words = 0, inside = 0
    X = np.zeros((n, 7))
    if not n:
        return X
    cdef double[:, ::1] x = X
    cdef _PathDigests digests = _PathDigests()
    cdef NodeMap memo
    cdef Nodes chain
    cdef double* best = <double*>malloc(16 * sizeof(double))
    cdef double* grown
    cdef Py_ssize_t cap = 16, used = 0
    cdef double value, found
    cdef xmlNode* node
    cdef cetree._Element el
    memo.keys = NULL
    memo.values = NULL
    chain.data = NULL
    chain.size = chain.cap = 0
    try:
        if best == NULL:
            raise MemoryError()
        map_init(&memo, 4 * n)
        for i in range(n):
            b = blocks[i]
            el = b.container
            if i == 0:
                digests.init(el._doc)
            node = el._c_node
            chain.size = 0
            value = 0.0
            while node != NULL:  # site_profile.content_support: the best support on the path, memoised
                slot = map_get(&memo, node)
                if slot >= 0:
                    value = best[slot]
                    break
                nodes_push(&chain, node)
                node = parent_element(node)
            for k in range(chain.size - 1, -1, -1):
                found = content.get(digests.of(chain.data[k]), 0.0)
                if found > value:
                    value = found
                if used == cap:
                    grown = <double*>realloc(best, 2 * cap * sizeof(double))
                    if grown == NULL:
                        raise MemoryError()
                    best = grown
                    cap *= 2
                best[used] = value
                map_put(&memo, chain.data[k], used)
                used += 1
            x[i, 0] = value
            stats = structures.get(digests.of(el._c_node))
            if stats is not None:
                for k in range(4):
                    x[i, 2 + k] = stats[k]
            if texts:
                x[i, 6] = texts.get(text_digest(b.text), 0.0)
            page_words += b.num_words
            if value > 0:
                inside += b.num_words
        if not page_words:
            page_words = 1
        for i in range(n):
            x[i, 1] = <double>inside / <double>page_words
        return X
    finally:
        free(best)
        free(chain.data)
        map_free(&memo)


def content_supports(list blocks, dict content):
    """``[site_profile.content_support(b.container, digests, content, memo) for b in blocks]`` (one digest and
    support memo for the page). Raises :class:`Unsupported` for a tree the kernel does not read."""
    if not blocks:
        return []
    return site_columns(blocks, content, {}, {})[:, 0].tolist()

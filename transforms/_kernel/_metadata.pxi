# Part of walks.pyx (included there): The metadata walks (metadata.page_tags, metadata._has_article_item).

# ---------------------------------------------------------------------------------------------------------------
# metadata: the <meta>/<link> walk (metadata.page_tags) and microdata item types (metadata._has_article_item)

cdef object _attr_str(xmlNode* node, const char* name):
    """``el.get(name)``: the attribute's value as str, None when absent."""
    cdef xmlAttr* a = find_attr(node, name)
    if a == NULL:
        return None
    return PyUnicode_DecodeUTF8(attr_value(a), _strlen(attr_value(a)), NULL)


def page_tags(cetree._Element root, is_canonical, Py_ssize_t max_headings):
    """``(values, head_properties, canonical_url, title_element, headings)`` of ``metadata.page_tags(root)``;
    ``is_canonical`` is ``metadata._is_canonical`` (called with each ``<link>`` until one is); ``headings``: the
    first ``max_headings`` ``<h1>`` elements."""
    cdef Nodes elements
    cdef Py_ssize_t k
    cdef xmlNode* node
    cdef xmlNode* parent
    cdef xmlNode* title = NULL
    elements.data = NULL
    elements.size = elements.cap = 0
    values = {}
    head_properties = []
    headings = []
    canonical = None
    doc = root._doc
    try:
        collect_elements(root._c_node, &elements)
        for k in range(elements.size):
            node = elements.data[k]
            if name_is(node, b"title"):
                if title == NULL and k > 0:   # root.find(".//title"): below the root
                    title = node
            elif name_is(node, b"h1"):
                if len(headings) < max_headings:
                    headings.append(cetree.elementFactory(doc, node))
            elif name_is(node, b"meta"):
                prop = _attr_str(node, b"property")
                key = (prop or _attr_str(node, b"name") or _attr_str(node, b"itemprop")
                       or _attr_str(node, b"http-equiv") or "").strip().lower()
                raw = _attr_str(node, b"content")
                content = " ".join(raw.split()) if raw else ""   # text.collapse_ws
                if key and content:
                    held = values.get(key)
                    if held is None:
                        values[key] = [content]
                    else:
                        held.append(content)
                if prop is not None and raw is not None:
                    parent = parent_element(node)
                    if parent != NULL and name_is(parent, b"head"):
                        head_properties.append(prop)
            elif canonical is None and name_is(node, b"link") and is_canonical(cetree.elementFactory(doc, node)):
                canonical = _attr_str(node, b"href").strip()
        return (values, head_properties, canonical, cetree.elementFactory(doc, title) if title != NULL else None,
                tuple(headings))
    finally:
        free(elements.data)


def item_types(cetree._Element root):
    """``//@itemscope/../@itemtype``: the ``itemtype`` values of the elements holding ``itemscope``, in document
    order."""
    cdef Nodes elements
    cdef Py_ssize_t k
    cdef xmlNode* top = root._c_node
    elements.data = NULL
    elements.size = elements.cap = 0
    while parent_element(top) != NULL:   # an absolute path: the whole document
        top = parent_element(top)
    out = []
    try:
        collect_elements(top, &elements)
        for k in range(elements.size):
            if find_attr(elements.data[k], b"itemscope") != NULL:
                value = _attr_str(elements.data[k], b"itemtype")
                if value is not None:
                    out.append(value)
        return out
    finally:
        free(elements.data)

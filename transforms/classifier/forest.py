"""A LightGBM text model read into flat arrays, for the compiled tree-ensemble evaluator.

The learned block classifier's models are LightGBM text files (:mod:`newsclean.transforms.classifier.model`).
LightGBM itself is the reference evaluator; the compiled kernel (:mod:`newsclean.transforms.kernel`) evaluates the
same trees from the arrays read here, and gives the same probabilities bit for bit. The format (LightGBM 4,
``GBDT::SaveModelToString`` / ``Tree::ToString``): a header of ``key=value`` lines (``objective=binary
sigmoid:1``, ``num_tree_per_iteration``, ``max_feature_idx``), then per tree ``Tree=<i>`` followed by
``num_leaves``, ``num_cat``, ``split_feature``, ``threshold``, ``decision_type``, ``left_child``, ``right_child``,
``leaf_value`` (already multiplied by the tree's ``shrinkage``), ``is_linear``. A child index below 0 is the
leaf ``~index``. ``decision_type`` holds bit 0 categorical, bit 1 default-left, bits 2-3 the missing type (0 none,
1 zero, 2 NaN). Only what the shipped models use is read: binary objective, one tree per iteration, numerical
splits, no linear trees; anything else raises :class:`UnsupportedModel` and the caller keeps LightGBM.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

from newsclean.transforms.errors import UnsupportedModel

_SIGMOID = re.compile(r"^objective=binary(?:\s.*?)?\bsigmoid:(\S+)", re.M)
_TREE = re.compile(r"^Tree=\d+\n(.*?)(?=^Tree=|^end of trees|\Z)", re.M | re.S)


@dataclass(frozen=True)
class FlatForest:
    """All trees of one model in flat arrays (``array`` objects, typed for the compiled evaluator).

    Per tree ``t``: its nodes are ``node_start[t]`` to ``node_start[t + 1]`` of ``feature`` (int32, the column
    read), ``threshold`` (float64), ``decision`` (uint8, LightGBM's ``decision_type``), ``left`` and ``right``
    (int32, a node index within the tree or ``~leaf``); its leaves ``leaf_start[t]`` to ``leaf_start[t + 1]`` of
    ``leaf_value`` (float64). A one-leaf tree has no nodes. ``sigmoid``: the binary objective's parameter;
    ``columns``: features a row must hold (``max_feature_idx + 1``).
    """

    feature: array
    threshold: array
    decision: array
    left: array
    right: array
    leaf_value: array
    node_start: array
    leaf_start: array
    sigmoid: float
    columns: int

    @property
    def trees(self) -> int:
        return len(self.node_start) - 1


def _values(fields: dict[str, str], key: str, kind: type) -> list:
    text = fields.get(key, "").strip()
    return [kind(v) for v in text.split()] if text else []


def parse_model(text: str) -> FlatForest:
    """The :class:`FlatForest` of one LightGBM text model (one member of a model file).

    Raises:
        UnsupportedModel: a model this evaluator does not read (module docstring).
        ValueError: a malformed model (array lengths disagree with ``num_leaves``).
    """
    header = text.split("\nTree=", 1)[0]
    sigmoid = _SIGMOID.search(header)
    if sigmoid is None:
        raise UnsupportedModel("only the binary objective is read")
    head = dict(line.split("=", 1) for line in header.splitlines() if "=" in line)
    if head.get("num_tree_per_iteration", "1").strip() != "1" or "average_output" in header:
        raise UnsupportedModel("one tree per iteration, summed, is read")
    parts = {name: array(code) for name, code in (("feature", "i"), ("threshold", "d"), ("decision", "B"),
                                                  ("left", "i"), ("right", "i"), ("leaf_value", "d"))}
    node_start, leaf_start = array("i", [0]), array("i", [0])
    for body in _TREE.findall(text):
        fields = dict(line.split("=", 1) for line in body.splitlines() if "=" in line)
        leaves = int(fields["num_leaves"])
        if int(fields.get("num_cat", "0")) or fields.get("is_linear", "0").strip() != "0":
            raise UnsupportedModel("categorical splits and linear trees are not read")
        columns = {"feature": _values(fields, "split_feature", int), "threshold": _values(fields, "threshold", float),
                   "decision": _values(fields, "decision_type", int), "left": _values(fields, "left_child", int),
                   "right": _values(fields, "right_child", int)}
        values = _values(fields, "leaf_value", float)
        if len(values) != leaves or any(len(v) != leaves - 1 for v in columns.values()):
            raise ValueError(f"tree with {leaves} leaves has arrays of other lengths")
        if any(d & 1 for d in columns["decision"]):
            raise UnsupportedModel("categorical splits are not read")
        for name, column in columns.items():
            parts[name].extend(column)
        parts["leaf_value"].extend(values)
        node_start.append(len(parts["feature"]))
        leaf_start.append(len(parts["leaf_value"]))
    if len(node_start) == 1:
        raise ValueError("no tree in the model")
    return FlatForest(**parts, node_start=node_start, leaf_start=leaf_start, sigmoid=float(sigmoid.group(1)),
                      columns=int(head["max_feature_idx"]) + 1)

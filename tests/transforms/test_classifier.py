"""The learned block classifier: stage-2 context features and model loading."""

import math

import lxml.html
import numpy as np
import pytest

from newsclean.transforms.chain import LEARNED_CONFIG, extract_article
from newsclean.transforms.classifier.features import CONTEXT_FEATURE_NAMES, context_features
from newsclean.transforms.classifier.model import LearnedParams


def test_context_features_see_neighbours_and_clusters():
    p = [0.1, 0.9, 0.8, 0.2]
    groups = [(0, 10), (1, 11), (1, 11), (2, 10)]
    words = [10, 30, 10, 10]
    rows = context_features(p, groups, words)
    assert len(rows) == 4 and all(len(r) == len(CONTEXT_FEATURE_NAMES) for r in rows)
    first = dict(zip(CONTEXT_FEATURE_NAMES, rows[0]))
    assert (first["p_prev2"], first["p_prev1"], first["p_self"], first["p_next1"], first["p_next2"]) == (0, 0, 0.1, 0.9, 0.8)
    second = dict(zip(CONTEXT_FEATURE_NAMES, rows[1]))
    assert second["p_parent_mean"] == pytest.approx((0.9 * 30 + 0.8 * 10) / 40)  # word-weighted over parent 1
    assert first["p_grand_mean"] == pytest.approx((0.1 * 10 + 0.2 * 10) / 20)  # blocks 0 and 3 share grandparent 10
    assert second["p_run_log"] == pytest.approx(math.log1p(2))  # blocks 1-2 form a run above 0.5
    assert first["p_page_max"] == 0.9


def test_missing_model_is_a_clear_error(tmp_path):
    config = LEARNED_CONFIG.with_(learned=LearnedParams(model_path=str(tmp_path / "none.txt")))
    with pytest.raises(FileNotFoundError, match="none.txt"):
        extract_article("<html><body><p>" + "word " * 50 + "</p></body></html>", None, config)


def test_lexicon_log_odds_match_the_naive_bayes_formula():
    from newsclean.transforms.classifier.lexicon import learn_lexicon

    # 4 boilerplate blocks (label 0) and 2 content blocks (label 1) over sites a, b, c.
    terms = [frozenset({"subscribe"}), frozenset({"subscribe", "the"}), frozenset({"subscribe"}),
             frozenset({"menu"}), frozenset({"the", "minister"}), frozenset({"the"})]
    labels = [0, 0, 0, 0, 1, 1]
    sites = ["a", "b", "c", "a", "a", "c"]
    lex = learn_lexicon(terms, labels, sites, min_sites=3)
    # subscribe: 3 of 4 boilerplate blocks, 0 of 2 content blocks, 3 sites.
    assert lex["subscribe"] == pytest.approx(math.log(4 / 6) - math.log(1 / 4))
    # the: 1 of 4 boilerplate, 2 of 2 content: a content cue (negative).
    assert lex["the"] == pytest.approx(math.log(2 / 6) - math.log(3 / 4)) and lex["the"] < 0
    assert "menu" not in lex and "minister" not in lex  # one site each: not a cue of the field
    with pytest.raises(ValueError):
        learn_lexicon(terms, labels[:-1], sites)


def test_lexicon_features_and_terms():
    from newsclean.transforms.classifier.lexicon import block_terms, lexicon_features

    assert block_terms("Photo: GETTY Images 2020, Ａ") == frozenset({"photo", "getty", "images", "ａ"})
    assert block_terms("Cafe\u0301") == frozenset({"café"})  # NFC: one word, as composed
    lex = {"photo": 2.0, "getty": 3.0, "minister": -1.0}
    assert lexicon_features({"photo", "getty", "unknown"}, lex) == pytest.approx([2.5, 3.0, 2 / 3])
    assert lexicon_features({"unknown"}, lex) == [0.0, 0.0, 0.0]


def test_lexicon_mean_does_not_depend_on_term_order():
    """A frozenset's order follows the string hash seed, which differs between processes (Beam workers): the
    mean must be the same in every order (plain left-to-right sums of these differ in the last bit)."""
    from newsclean.transforms.classifier.lexicon import lexicon_features

    lex = {"a": 0.1, "b": 0.2, "c": 0.3}
    assert sum([0.1, 0.2, 0.3]) != sum([0.3, 0.2, 0.1])  # the premise: order changes a plain sum
    means = {lexicon_features(order, lex)[0] for order in (["a", "b", "c"], ["c", "b", "a"], ["b", "c", "a"])}
    assert means == {0.6 / 3}


def test_lexicon_file_round_trip_and_errors(tmp_path):
    import gzip

    from newsclean.transforms.classifier.lexicon import load_lexicon, save_lexicon

    path = tmp_path / "lex.tsv.gz"
    save_lexicon({"zeta": -0.5, "alpha": 1.23456}, path)
    assert gzip.open(path, "rt", encoding="utf-8").read() == "alpha\t1.2346\nzeta\t-0.5000\n"
    assert load_lexicon(str(path)) == {"alpha": 1.2346, "zeta": -0.5}
    bad = tmp_path / "bad.tsv.gz"
    with gzip.open(bad, "wt", encoding="utf-8") as fh:
        fh.write("no tab here\n")
    with pytest.raises(ValueError, match="bad.tsv.gz:1"):
        load_lexicon(str(bad))
    with pytest.raises(FileNotFoundError):
        load_lexicon(str(tmp_path / "missing.tsv.gz"))


def test_seed_ensemble_file_predicts_the_members_mean(tmp_path):
    import gzip

    import lightgbm as lgb
    import numpy as np

    from newsclean.transforms.classifier.model import ENSEMBLE_SEPARATOR, load_model

    rng = np.random.default_rng(0)
    X = rng.random((200, 2))
    y = (X[:, 0] + 0.3 * rng.random(200) > 0.6).astype(int)
    params = dict(objective="binary", num_leaves=4, min_data_in_leaf=5, bagging_fraction=0.7, bagging_freq=1, verbose=-1)
    members = [lgb.train({**params, "seed": s}, lgb.Dataset(X, y, feature_name=["a", "b"]), num_boost_round=5) for s in (1, 2)]
    path = tmp_path / "ensemble.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(ENSEMBLE_SEPARATOR.join(m.model_to_string() for m in members))
    model = load_model(str(path), ("a", "b"))
    assert len(model.boosters) == 2
    expected = (members[0].predict(X[:5]) + members[1].predict(X[:5])) / 2
    assert np.allclose(model.predict(X[:5]), expected)
    assert not np.allclose(members[0].predict(X[:5]), members[1].predict(X[:5]))  # the seeds differ
    with pytest.raises(ValueError, match="features differ"):
        load_model(str(path), ("a", "c"))


def test_keep_flags_are_the_threshold_alone():
    from newsclean.transforms.classifier.model import keep_flags

    assert keep_flags([0.9, 0.5, 0.49, 0.1], LearnedParams(threshold=0.5)) == [True, True, False, False]
    assert keep_flags([0.9, 0.5], LearnedParams(threshold=0.6)) == [True, False]
    assert keep_flags([], LearnedParams()) == []

def test_table_features_tell_a_data_table_in_the_article_from_the_layout_table():
    from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
    from newsclean.transforms.classifier.features import block_features
    from newsclean.transforms.vocab import FEATURE_NAMES, TABLE_FEATURE_NAMES

    html = ('<html><body><table><tr><td><div class="article">'
            "<p>The company said on Monday that sales rose again this year, as the table shows.</p>"  # 15 words
            "<table><tr><th>Year</th><th>Sales</th></tr><tr><td>2019</td><td>12 units</td></tr></table>"  # 5
            "<p>Analysts expect the trend to hold.</p></div></td>"  # 6
            '<td><a href="/a">Home</a> <a href="/b">News</a></td></tr></table>'  # 2, linked
            "<p>Outside any table.</p></body></html>")  # 3: 31 words on the page
    blocks = prepare_blocks(html, None, DEFAULT_CONFIG).blocks
    k = FEATURE_NAMES.index(TABLE_FEATURE_NAMES[0])
    table = {b.text: dict(zip(TABLE_FEATURE_NAMES, row[k:k + len(TABLE_FEATURE_NAMES)]))
             for b, row in zip(blocks, block_features(blocks))}
    data, layout, outside = table["12 units"], table["Home News"], table["Outside any table."]
    # The data table: 4 own cells, inside the layout table, 5 of 31 words, no links, headers, in the article.
    assert data == pytest.approx({"table_cells_log": math.log(5), "table_nesting": 1, "table_word_share": 5 / 31,
                                  "table_link_density": 0, "table_has_th": 1, "table_in_best_cluster": 1})
    # The layout table: its 2 own cells (not the nested table's), 23 words of which 2 linked, no <th> of its own.
    assert layout == pytest.approx({"table_cells_log": math.log(3), "table_nesting": 0, "table_word_share": 23 / 31,
                                    "table_link_density": 2 / 23, "table_has_th": 0, "table_in_best_cluster": 0})
    assert table["Analysts expect the trend to hold."] == layout
    assert set(outside.values()) == {0.0}


class _CountingElement(lxml.html.HtmlElement):
    """An lxml.html element that adds up the children every ``len()`` walks (lxml counts them one by one)."""

    walked = 0

    def __len__(self):
        n = super().__len__()
        _CountingElement.walked += n
        return n


def _counting_blocks(html: str):
    from lxml import etree

    from newsclean.transforms.blocks import extract_blocks
    from newsclean.transforms.types import BlockParams
    from newsclean.transforms.vocab import INLINE_TAGS

    parser = lxml.html.HTMLParser()
    parser.set_element_class_lookup(etree.ElementDefaultClassLookup(element=_CountingElement))
    root = lxml.html.document_fromstring(html, parser=parser)
    return extract_blocks(root, BlockParams(non_separator_tags=INLINE_TAGS, separate_marked=True))


def test_features_of_a_flat_page_walk_each_parent_once():
    """A flat page (thousands of sibling paragraphs under one element) must cost work linear in its
    blocks: counting each block's siblings anew (lxml's ``len()`` walks the children) was quadratic
    (15 s on a 3.3 MB page)."""
    from newsclean.transforms.classifier.features import block_features, context_groups

    n = 3000
    html = "<html><body><div>" + "".join(f"<p>Paragraph {i} of a flat page, with a comma.</p>" for i in range(n)) + "</div></body></html>"
    blocks = _counting_blocks(html)
    assert len(blocks) == n
    _CountingElement.walked = 0
    X = block_features(blocks)
    context_groups(blocks)
    assert X.shape[0] == n
    assert _CountingElement.walked <= 4 * n  # quadratic: n * n = 9,000,000 children walked


def test_feature_groups_name_every_column_once_and_fill_it():
    from newsclean.transforms.chain import DEFAULT_CONFIG, prepare_blocks
    from newsclean.transforms.classifier.features import block_features, feature_columns
    from newsclean.transforms.context import PageContext
    from newsclean.transforms.vocab import FEATURE_GROUPS, FEATURE_NAMES

    grouped = [n for names in FEATURE_GROUPS.values() for n in names]
    assert sorted(grouped) == sorted(FEATURE_NAMES) and len(set(grouped)) == len(grouped)
    html = ("<html><head><title>Minister resigns over budget row</title></head><body><nav><a href='/'>Home</a></nav>"
            "<div class='article'><h1>Minister resigns over budget row</h1><p>The minister said on Monday, "
            "after a long day, that he would resign.</p><p>Another paragraph of 2024 news text here.</p></div></body></html>")
    blocks = prepare_blocks(html, None, DEFAULT_CONFIG).blocks
    X = block_features(blocks, PageContext("Minister resigns over budget row"))
    assert [b.text for b in blocks][:2] == ["Home", "Minister resigns over budget row"]
    assert X.shape == (4, len(FEATURE_NAMES)) and not np.isnan(X).any()
    col = dict(zip(("words", "prev", "next", "title", "pos"),
                   feature_columns(["words_log", "prev_words_log", "next_words_log", "is_title", "rel_position"])))
    words = [b.num_words for b in blocks]
    assert X[:, col["words"]] == pytest.approx([math.log1p(w) for w in words])
    assert X[:, col["prev"]] == pytest.approx([0, *(math.log1p(w) for w in words[:3])])  # shifted by one
    assert X[:, col["next"]] == pytest.approx([*(math.log1p(w) for w in words[1:]), 0])
    assert list(X[:, col["title"]]) == [0, 1, 0, 0]  # the <h1> repeats the title
    assert X[:, col["pos"]] == pytest.approx([0, 1 / 3, 2 / 3, 1])
    with pytest.raises(KeyError, match="no_such_feature"):
        feature_columns(["no_such_feature"])
    assert block_features([]).shape == (0, len(FEATURE_NAMES))


def test_a_model_trained_on_other_features_is_refused_by_name(tmp_path):
    import lightgbm as lgb

    from newsclean.transforms.classifier.model import load_model
    from newsclean.transforms.vocab import FEATURE_NAMES

    rng = np.random.default_rng(1)
    names = [*FEATURE_NAMES[:-1], "old_feature"]  # one feature renamed since the model was trained
    X = rng.random((100, len(names)))
    booster = lgb.train(dict(objective="binary", num_leaves=4, min_data_in_leaf=5, verbose=-1),
                        lgb.Dataset(X, (X[:, 0] > 0.5).astype(int), feature_name=names), num_boost_round=2)
    path = tmp_path / "old.txt"
    path.write_text(booster.model_to_string(), encoding="utf-8")
    assert "feature_names=" + " ".join(names) in booster.model_to_string()  # the file records them
    with pytest.raises(ValueError, match="old.txt.*model expects old_feature the code lacks"):
        load_model(str(path))


def test_a_model_on_a_subset_of_features_gets_exactly_its_columns(tmp_path):
    """An ablation model (two features, in its own order) loads, and block_features computes those columns."""
    import lightgbm as lgb

    from newsclean.transforms.blocks import extract_blocks
    from newsclean.transforms.classifier.features import block_features, group_feature_names
    from newsclean.transforms.classifier.model import load_model
    from newsclean.transforms.parse import parse_html
    from newsclean.transforms.vocab import FEATURE_NAMES

    names = ["link_density", "words_log"]  # reversed against FEATURE_NAMES
    rng = np.random.default_rng(2)
    X = rng.random((100, 2))
    booster = lgb.train(dict(objective="binary", num_leaves=4, min_data_in_leaf=5, verbose=-1),
                        lgb.Dataset(X, (X[:, 0] > 0.5).astype(int), feature_name=names), num_boost_round=2)
    path = tmp_path / "subset.txt"
    path.write_text(booster.model_to_string(), encoding="utf-8")
    assert load_model(str(path)).feature_names == tuple(names)
    root = parse_html("<html><body><p>one two three four</p><p><a href='/x'>a link</a> and text</p></body></html>")
    blocks = extract_blocks(root)
    full = block_features(blocks)
    sub = block_features(blocks, names=names)
    assert sub.shape == (len(blocks), 2)
    assert np.array_equal(sub, full[:, [FEATURE_NAMES.index(n) for n in names]])
    assert sub[1, 0] == pytest.approx(2 / 4)  # "a link" is 2 of the 4 words of "a link and text"
    assert group_feature_names(["neighbours"]) == ("prev2_words_log", "prev2_link_density",
                                                   "next2_words_log", "next2_link_density")
    with pytest.raises(KeyError, match="no_such_group"):
        group_feature_names(["no_such_group"])
    with pytest.raises(KeyError, match="no_such_feature"):
        block_features(blocks, names=["no_such_feature"])


def test_shipped_models_record_the_features_the_code_computes():
    from newsclean.transforms.classifier.features import CONTEXT_FEATURE_NAMES
    from newsclean.transforms.classifier.model import DEFAULT_CONTEXT_MODEL, DEFAULT_MODEL, load_model
    from newsclean.transforms.vocab import FEATURE_NAMES

    # the shipped models may predate a new feature group (trained again by the coordinator: make models), but
    # every feature they record is one the code computes, in FEATURE_NAMES order
    stage1 = tuple(load_model(str(DEFAULT_MODEL)).boosters[0].feature_name())
    assert stage1 == tuple(n for n in FEATURE_NAMES if n in stage1) and len(stage1) > 50
    stage2 = load_model(str(DEFAULT_CONTEXT_MODEL), FEATURE_NAMES + CONTEXT_FEATURE_NAMES)
    assert tuple(stage2.boosters[0].feature_name()) == stage1 + CONTEXT_FEATURE_NAMES

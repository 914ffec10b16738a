"""The block classifier's trainer (scripts/train_block_classifier.py): boosting recipes from the command line, the
split choice, and that a stage trained with fewer rounds is the longer one's first trees (model size)."""

from repo import ROOT


def _train_script():
    import importlib.util

    path = ROOT / "scripts" / "train_block_classifier.py"
    spec = importlib.util.spec_from_file_location("train_block_classifier_under_test", path)
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_boosting_recipes_from_the_command_line():
    script = _train_script()
    args = script.argparse.Namespace(rounds=None, learning_rate=None, num_leaves=None, context_rounds=None,
                                     context_learning_rate=None, context_num_leaves=None)
    stage1, stage2 = script.recipes(args)
    assert stage1 == script.SHIPPED and stage1.rounds == 400
    assert (stage2.rounds, stage2.learning_rate, stage2.num_leaves) == (300, stage1.learning_rate, stage1.num_leaves)
    args.context_rounds, args.num_leaves = 250, 15
    stage1, stage2 = script.recipes(args)
    assert (stage1.num_leaves, stage2.rounds, stage2.num_leaves) == (15, 250, 15)


def test_train_split_all_takes_both_halves():
    script = _train_script()
    tune, test = (script.argparse.Namespace(split=s) for s in ("tune", "test"))
    assert [script.in_split(p, "all") for p in (tune, test)] == [True, True]
    assert [script.in_split(p, "tune") for p in (tune, test)] == [True, False]
    assert [script.in_split(p, "test") for p in (tune, test)] == [False, True]


def test_fewer_rounds_give_the_first_trees_of_more_rounds():
    # what makes a stage-2 model cut to its first k trees (Booster.model_to_string(num_iteration=k)) the model
    # that ``--context-rounds k`` trains: bagging and feature sampling draw the same per round
    import lightgbm as lgb
    import numpy as np

    script = _train_script()
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(scale=0.5, size=600) > 0).astype(int)
    params = {**script.Boosting(num_leaves=7).params(13), "min_data_in_leaf": 10, "num_threads": 1}
    long = lgb.train(params, lgb.Dataset(X, y), num_boost_round=12)
    short = lgb.train(params, lgb.Dataset(X, y), num_boost_round=8)
    assert np.array_equal(long.predict(X, num_iteration=8), short.predict(X))
    assert not np.array_equal(long.predict(X), short.predict(X))

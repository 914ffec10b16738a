"""Train BoilerNet (transforms/boilernet.py, Leonhardt et al. 2020) on the *tune* half of the shared data.

    nice python scripts/train_boilernet.py [--out transforms/models/boilernet.npz] [--epochs N] [--seed 13]
    nice python scripts/train_boilernet.py --holdout-set all --lodo-dir out/boilernet/lodo [--epochs N]

Needs PyTorch (``pip install -e '.[train]'``, CPU build); runs on the CPU with one thread,
deterministically for a seed. Pages: the full-text gold data sets, only pages whose site falls
in the ``tune`` split (``newsclean_eval.datasets.split_of``), one site in ten of those held out as the
validation set that picks the best epoch (the paper: best checkpoint on validation F1). Blocks are
the ``boilernet`` chain configuration's (every DOM text leaf), labelled by the in-order token
alignment with the gold that the block classifier uses (``aligned_labels`` of
``scripts/train_block_classifier.py``). The vocabulary (most common tags and words) comes from the
training pages only. Loss: binary cross-entropy weighted per class (``"balanced"``), over real
blocks only (padding masked); Adam (Keras' defaults, as the authors' code).

``--holdout-set NAME|all`` (leave-one-data-set-out, the selection protocol): the block sequences of every text-gold
set's tune pages are collected once, then one model per held-out set is trained on the *other* sets'
tune pages (same settings and seed) into ``LODO_DIR/<set>/boilernet.npz``; ``newsclean eval
--lodo-boilernet LODO_DIR --split tune`` scores each set with the model that never saw it.
trafilatura-eval (snippet gold) is never trained on, so it has no LODO model: its LODO row uses the
shipped model. ``--seq-cache FILE`` keeps the collected sequences (pickle) for later runs.

The dense projection of a sparse count vector is an ``EmbeddingBag`` sum (the same ``x @ W``); the
export writes numpy arrays that ``newsclean.transforms.boilernet.forward`` runs without PyTorch.
``--max-blocks`` cuts long training pages into windows of that many blocks (inference reads whole pages).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import pickle
import sys
import time
from dataclasses import dataclass, replace
from multiprocessing import Pool
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from newsclean.transforms.boilernet import (  # noqa: E402
    DEFAULT_BOILERNET_MODEL,
    BoilerNetHyper,
    BoilerNetModel,
    LSTMWeights,
    Vocabulary,
    block_tokens,
    build_vocabulary,
    forward,
    leaf_path,
    leaf_vector,
    load_model,
    save_model,
)
from newsclean.transforms.chain import BOILERNET_CONFIG, prepare_blocks  # noqa: E402
from newsclean.transforms.errors import ExtractionError  # noqa: E402
from newsclean.transforms.parse import decode_html  # noqa: E402
from newsclean_eval.datasets import EvalPage, load  # noqa: E402


def _block_classifier_script():
    """scripts/train_block_classifier.py as a module (its ``aligned_labels`` labels our blocks too)."""
    spec = importlib.util.spec_from_file_location("train_block_classifier", REPO / "scripts" / "train_block_classifier.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


aligned_labels = _block_classifier_script().aligned_labels

TEXT_GOLD_SETS = ("msv-big9", "dragnet", "cleanportaleval", "cleaneval", "readability-test-pages")
SEED = 13
VALIDATION_SHARE = 0.1  # of the tune sites
#: What the shipped model was trained with (evaluation/boilernet.md): the paper's architecture, narrower for 2 CPU cores.
SHIPPED = BoilerNetHyper(dense_size=64, hidden_size=64, epochs=8)


@dataclass
class PageSeq:
    """One page: key (dataset:site), tag paths and tokens per block, labels (0/1), words per block."""

    key: str
    split: str
    paths: list[list[str]]
    tokens: list[list[str]]
    labels: list[int]
    words: list[int]


def page_seq(page: EvalPage) -> PageSeq | None:
    """The page's block sequence as the ``boilernet`` chain builds it, labelled; None when unusable."""
    try:
        html = decode_html(page.html)[0]
        blocks = prepare_blocks(html, None, BOILERNET_CONFIG).blocks
    except ExtractionError:
        return None
    if not blocks or page.gold is None:
        return None
    return PageSeq(f"{page.dataset}:{page.site or page.group}", page.split, [leaf_path(b) for b in blocks],
                   [block_tokens(b.text) for b in blocks], aligned_labels(blocks, page.gold),
                   [b.num_words for b in blocks])


def collect(jobs: int, split: str = "tune", sets: tuple[str, ...] = TEXT_GOLD_SETS) -> list[PageSeq]:
    """Labelled sequences of every page of ``split`` of the data sets ``sets``, in a fixed order."""
    pages = [p for name in sets for p in load(name) if p.split == split]
    with Pool(jobs) as pool:
        seqs = [s for s in pool.imap(page_seq, pages, chunksize=8) if s is not None]
    return sorted(seqs, key=lambda s: (s.key, len(s.labels), s.labels))


def dataset_of(seq: PageSeq) -> str:
    """The data set a sequence comes from (the part of its key before the first ``:``)."""
    return seq.key.split(":", 1)[0]


def lodo_holdouts(holdout: str) -> tuple[str, ...]:
    """The data sets to hold out in turn: every text-gold set for ``"all"``, else just ``holdout``.

    Raises ValueError for a set that is not a text-gold training set (trafilatura-eval's snippet gold
    is never trained on, so leaving it out would give the shipped model again)."""
    if holdout == "all":
        return TEXT_GOLD_SETS
    if holdout not in TEXT_GOLD_SETS:
        raise ValueError(f"--holdout-set {holdout!r}: not a training set ({', '.join(TEXT_GOLD_SETS)} or all)")
    return (holdout,)


def without_set(seqs: list[PageSeq], holdout: str) -> list[PageSeq]:
    """``seqs`` minus the pages of data set ``holdout``, order kept (the training pages of its LODO model)."""
    return [s for s in seqs if dataset_of(s) != holdout]


def collect_cached(jobs: int, sets: tuple[str, ...], cache: Path | None) -> list[PageSeq]:
    """:func:`collect` of the tune pages of ``sets``, read from / written to the pickle ``cache`` when given."""
    if cache is not None and cache.exists():
        with cache.open("rb") as f:
            seqs = pickle.load(f)
        return [s for s in seqs if dataset_of(s) in sets]
    seqs = collect(jobs, "tune", sets)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        part = cache.with_name(cache.name + ".part")  # renamed when complete: a killed run leaves no torn cache
        with part.open("wb") as f:
            pickle.dump(seqs, f, protocol=pickle.HIGHEST_PROTOCOL)
        part.replace(cache)
    return seqs


def is_validation(key: str) -> bool:
    """The :data:`VALIDATION_SHARE` of sites held out for choosing the epoch (SHA-1 of the key)."""
    return int(hashlib.sha1(f"boilernet-val:{key}".encode()).hexdigest(), 16) % 1000 < VALIDATION_SHARE * 1000


def encode(seq: PageSeq, vocab: Vocabulary) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse form of the page's input vectors: (indices, counts, offsets) as EmbeddingBag takes them."""
    idx, cnt, offsets = [], [], []
    word0 = len(vocab.tags) + 1
    for path, toks in zip(seq.paths, seq.tokens):
        offsets.append(len(idx))
        counts: dict[int, int] = {}
        for t in path:
            k = vocab.tag_index.get(t, 0)
            counts[k] = counts.get(k, 0) + 1
        for w in toks:
            k = word0 + vocab.word_index.get(w, 0)
            counts[k] = counts.get(k, 0) + 1
        for k in sorted(counts):
            idx.append(k)
            cnt.append(counts[k])
    return np.array(idx, dtype=np.int64), np.array(cnt, dtype=np.float32), np.array(offsets, dtype=np.int64)


def make_net(width: int, hyper: BoilerNetHyper):
    """The PyTorch BoilerNet: EmbeddingBag sum + bias (the dense layer), ReLU, BiLSTM layers, dropout, linear."""
    import torch
    from torch import nn

    class BoilerNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.EmbeddingBag(width, hyper.dense_size, mode="sum")
            bound = (6.0 / (width + hyper.dense_size)) ** 0.5  # Glorot uniform, as Keras' Dense
            nn.init.uniform_(self.embed.weight, -bound, bound)
            self.dense_b = nn.Parameter(torch.zeros(hyper.dense_size))
            self.lstm = nn.LSTM(hyper.dense_size, hyper.hidden_size, num_layers=hyper.num_layers,
                                bidirectional=True, batch_first=True)
            self.drop = nn.Dropout(hyper.dropout)
            self.out = nn.Linear(2 * hyper.hidden_size, 1)

        def forward(self, pages):
            """``pages``: list of (indices, counts, offsets) tensors; returns logits ``(B, T_max)``."""
            lengths = [len(off) for _, _, off in pages]
            idx = torch.cat([p[0] for p in pages])
            cnt = torch.cat([p[1] for p in pages])
            shifts = np.cumsum([0] + [len(p[0]) for p in pages[:-1]])
            offs = torch.cat([p[2] + int(s) for p, s in zip(pages, shifts)])
            emb = torch.relu(self.embed(idx, offs, per_sample_weights=cnt) + self.dense_b)
            seqs = torch.split(emb, lengths)
            padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)
            packed = nn.utils.rnn.pack_padded_sequence(padded, torch.tensor(lengths), batch_first=True,
                                                       enforce_sorted=False)
            out, _ = self.lstm(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=max(lengths))
            return self.out(self.drop(out)).squeeze(-1)

    return BoilerNet()


def to_numpy(net, vocab: Vocabulary, hyper: BoilerNetHyper) -> BoilerNetModel:
    """The torch net's weights as a :class:`BoilerNetModel` (biases of each LSTM gate summed, as numpy adds them once)."""
    sd = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    layers = []
    for n in range(hyper.num_layers):
        dirs = []
        for suffix in ("", "_reverse"):
            dirs.append(LSTMWeights(sd[f"lstm.weight_ih_l{n}{suffix}"], sd[f"lstm.weight_hh_l{n}{suffix}"],
                                    sd[f"lstm.bias_ih_l{n}{suffix}"] + sd[f"lstm.bias_hh_l{n}{suffix}"]))
        layers.append(tuple(dirs))
    return BoilerNetModel(vocab, sd["embed.weight"], sd["dense_b"], tuple(layers), sd["out.weight"][0],
                          float(sd["out.bias"][0]), hyper)


def from_numpy(model: BoilerNetModel):
    """A torch net holding ``model``'s weights (each LSTM bias put in ``bias_ih``, ``bias_hh`` zero)."""
    import torch

    net = make_net(model.vocab.width, model.hyper)
    sd = {"embed.weight": model.dense_w, "dense_b": model.dense_b, "out.weight": model.out_w[None, :],
          "out.bias": np.array([model.out_b], dtype=np.float32)}
    for n, (fwd, bwd) in enumerate(model.layers):
        for suffix, w in (("", fwd), ("_reverse", bwd)):
            sd[f"lstm.weight_ih_l{n}{suffix}"], sd[f"lstm.weight_hh_l{n}{suffix}"] = w.w_ih, w.w_hh
            sd[f"lstm.bias_ih_l{n}{suffix}"], sd[f"lstm.bias_hh_l{n}{suffix}"] = w.b, np.zeros_like(w.b)
    net.load_state_dict({k: torch.from_numpy(np.asarray(v, dtype=np.float32)) for k, v in sd.items()})
    net.eval()
    return net


def torch_probabilities(net, seq_x: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """Content probabilities of one page from the torch net (eval mode), ``(T,)`` float64."""
    import torch

    with torch.no_grad():
        logits = net([tuple(torch.from_numpy(a) for a in seq_x)])
    return torch.sigmoid(logits[0].double()).numpy()


def weight_difference(a: BoilerNetModel, b: BoilerNetModel) -> float:
    """Largest absolute difference between two models' weights (every array), ``inf`` when their
    vocabularies or shapes differ; 0.0 for a bit-identical retraining. ``hyper`` is not compared
    (a run with ``--epochs 6`` records 6 where the shipped 8-epoch run, best at epoch 6, records 8)."""
    if a.vocab != b.vocab:
        return float("inf")

    def arrays(m: BoilerNetModel) -> list[np.ndarray]:
        lstm_arrays = [x for layer in m.layers for d in layer for x in (d.w_ih, d.w_hh, d.b)]
        return [m.dense_w, m.dense_b, m.out_w, np.array([m.out_b]), *lstm_arrays]

    pairs = list(zip(arrays(a), arrays(b)))
    if len(arrays(a)) != len(arrays(b)) or any(x.shape != y.shape for x, y in pairs):
        return float("inf")
    return max(float(np.max(np.abs(x.astype(np.float64) - y))) for x, y in pairs)


def _windows(n: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(n, s + size)) for s in range(0, n, size)] if size else [(0, n)]


def word_f1(model: BoilerNetModel, seqs: list[PageSeq], vocab: Vocabulary) -> float:
    """Content F1 over words (blocks weighted by their words), all ``seqs`` pooled; numpy inference."""
    tp = fp = fn = 0.0
    for s in seqs:
        x = np.stack([leaf_vector(p, t, vocab) for p, t in zip(s.paths, s.tokens)])
        pred = forward(model, x) >= 0.5
        for k, y, w in zip(pred, s.labels, s.words):
            tp += w * (k and y)
            fp += w * (k and not y)
            fn += w * (not k and y)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def train(seqs: list[PageSeq], hyper: BoilerNetHyper, seed: int, max_blocks: int, log=print,
          best_of: dict[int, tuple[BoilerNetModel, float]] | None = None) -> tuple[BoilerNetModel, float]:
    """Fit on the training sites of ``seqs``, pick the epoch with the best validation word F1; returns (model, F1).

    ``best_of``: keys are epoch counts k < ``hyper.epochs``; each gets the best (model, F1) of the first k
    epochs, which is what a run with ``epochs=k`` returns (nothing in an epoch depends on the total)."""
    import torch

    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    rng = np.random.RandomState(seed)
    train_seqs = [s for s in seqs if not is_validation(s.key)]
    val_seqs = [s for s in seqs if is_validation(s.key)]
    vocab = build_vocabulary((p for s in train_seqs for p in s.paths), (t for s in train_seqs for t in s.tokens),
                             hyper.num_tags, hyper.num_words)
    items = []
    for s in train_seqs:
        x = encode(s, vocab)
        for a, b in _windows(len(s.labels), max_blocks):
            lo, hi = x[2][a], (x[2][b] if b < len(s.labels) else len(x[0]))
            items.append(((torch.from_numpy(x[0][lo:hi]), torch.from_numpy(x[1][lo:hi]),
                           torch.from_numpy(x[2][a:b] - lo)), torch.tensor(s.labels[a:b], dtype=torch.float32)))
    labels = np.concatenate([y.numpy() for _, y in items])
    if hyper.class_weights == "balanced":
        pos = labels.mean()
        weights = (0.5 / (1 - pos), 0.5 / pos)  # n / (2 n_c)
    else:
        weights = hyper.class_weights
    log(f"{len(train_seqs)} training pages ({len(items)} windows, {len(labels)} blocks, {labels.mean():.3f} content), "
        f"{len(val_seqs)} validation pages; class weights {weights[0]:.3f} / {weights[1]:.3f}")
    net = make_net(vocab.width, hyper)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    best, best_f1 = to_numpy(net, vocab, hyper), -1.0
    for epoch in range(hyper.epochs):
        t0 = time.time()
        net.train()
        order = rng.permutation(len(items))
        total = 0.0
        for start in range(0, len(order), hyper.batch_size):
            batch = [items[i] for i in order[start:start + hyper.batch_size]]
            logits = net([b[0] for b in batch])
            y = torch.nn.utils.rnn.pad_sequence([b[1] for b in batch], batch_first=True)
            mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(b[1]) for b in batch], batch_first=True)
            w = mask * (weights[0] + (weights[1] - weights[0]) * y)
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none") * w).sum() / mask.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(batch)
        net.eval()
        model = to_numpy(net, vocab, hyper)
        f1 = word_f1(model, val_seqs, vocab)
        log(f"epoch {epoch + 1}: loss {total / len(items):.4f}, validation word F1 {f1:.4f} ({time.time() - t0:.0f} s)")
        if f1 > best_f1:
            best, best_f1 = model, f1
        if best_of is not None and epoch + 1 in best_of:
            best_of[epoch + 1] = (best, best_f1)
    return best, best_f1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_BOILERNET_MODEL)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--epochs", type=int, default=SHIPPED.epochs)
    ap.add_argument("--hidden", type=int, default=SHIPPED.hidden_size, help="LSTM units per direction (paper 256)")
    ap.add_argument("--dense", type=int, default=SHIPPED.dense_size, help="dense projection units (paper 256)")
    ap.add_argument("--max-blocks", type=int, default=512, help="training window in blocks (0: whole pages)")
    ap.add_argument("--sets", default=",".join(TEXT_GOLD_SETS), help="comma-separated data sets to train on")
    ap.add_argument("--key-prefix", default="",
                    help="train only on pages whose dataset:site key starts with this, e.g. cleaneval:cleaneval-dev/ "
                         "(the CleanEval dev set the paper trains on)")
    ap.add_argument("--holdout-set", metavar="NAME", help="leave-one-data-set-out: a text-gold set, or all")
    ap.add_argument("--lodo-dir", type=Path, default=REPO / "out" / "boilernet" / "lodo",
                    help="where --holdout-set writes <set>/boilernet.npz")
    ap.add_argument("--seq-cache", type=Path, help="pickle of the collected tune sequences (written if absent)")
    ap.add_argument("--compare-to", type=Path, metavar="NPZ",
                    help="after training, print the largest weight difference to this model (reproduction check)")
    ap.add_argument("--also-best-of", type=int, metavar="K",
                    help="also write the best model of the first K epochs (what --epochs K gives) as *-best-of-K.npz")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    hyper = replace(SHIPPED, epochs=args.epochs, hidden_size=args.hidden, dense_size=args.dense)
    t0 = time.time()
    sets = tuple(args.sets.split(","))
    holdouts = lodo_holdouts(args.holdout_set) if args.holdout_set else ()
    seqs = [s for s in collect_cached(args.jobs, sets, args.seq_cache) if s.key.startswith(args.key_prefix)]
    print(f"{len(seqs)} tune pages, {sum(len(s.labels) for s in seqs)} blocks in {time.time() - t0:.0f} s", file=sys.stderr)
    runs = [(without_set(seqs, h), args.lodo_dir / h / "boilernet.npz", f"without {h}") for h in holdouts] \
        or [(seqs, args.out, ",".join(sets))]
    for train_seqs, out, what in runs:
        t1 = time.time()
        print(f"training on {what}", file=sys.stderr, flush=True)
        early: dict[int, tuple[BoilerNetModel, float]] = {args.also_best_of: None} if args.also_best_of else {}
        model, f1 = train(train_seqs, hyper, args.seed, args.max_blocks, log=lambda m: print(m, file=sys.stderr, flush=True),
                          best_of=early)
        out.parent.mkdir(parents=True, exist_ok=True)
        save_model(out, model)
        for k, (m, kf1) in ((k, v) for k, v in early.items() if v is not None):
            save_model(out.with_name(f"{out.stem}-best-of-{k}.npz"), m)
            print(f"{what}: best of the first {k} epochs: validation word F1 {kf1:.4f}", flush=True)
        if args.compare_to:
            print(f"largest weight difference to {args.compare_to}: "
                  f"{weight_difference(model, load_model(args.compare_to)):.3g}", flush=True)
        print(f"{what}: best validation word F1 {f1:.4f}; model written to {out} in {time.time() - t1:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

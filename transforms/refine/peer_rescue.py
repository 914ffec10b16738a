"""A second extractor's opinion where the block classifier keeps almost nothing (the "recall collapse").

On pages whose article layout the classifier cannot read, the default keeps one fragment of the body or
nothing at all, with precision ~1.0 (the held-out "recall collapse"). A general extractor with other
rules, trafilatura (Barbaresi 2021, ACL demo "Trafilatura: A Web Scraping Library and Command-Line Tool for
Text Discovery and Extraction"; it falls back on readability and jusText itself when its own output is short),
often still finds the article there. So when the default kept an *unsure fragment* (at least one and fewer
than ``max_kept_words`` words, no kept block at a content probability of ``max_kept_probability`` or more) and
trafilatura extracts at least ``min_peer_words``, every text block whose words lie (``min_block_share``) in
trafilatura's text is kept as well. The output stays newsclean's own blocks (text and cleaned HTML from the
same tree); trafilatura only votes, and only on such pages (under 4 % of the shared pages), so its ~16 ms a
page are paid rarely.

Chosen under leave-one-data-set-out on the six shared sets' tune pages (docs/DECISIONS.md, "Peer
rescue"): a trigger relative to trafilatura's length (kept < R x its words) lowers Readability and
Dragnet, where trafilatura keeps comments the classifier rightly drops; the absolute trigger lowers no set. The
fragment and probability conditions spare short articles the classifier is sure of and pages it empties (section
fronts), where trafilatura's extra text (comments, teasers) is wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from newsclean.transforms.context import PageContext
from newsclean.transforms.metadata import declares_article
from newsclean.transforms.text import scoring_tokens
from newsclean.transforms.types import TextBlock

#: Pages longer than this (characters of decoded HTML) are not given to the peer: bounds its time on
#: hostile or huge pages (its cost grows with the tree; the pipeline's per-record budget still applies).
MAX_PEER_HTML_CHARS = 3_000_000


@dataclass(frozen=True)
class PeerRescueParams:
    """When and how the peer's extraction rescues a collapsed page.

    max_kept_words: the rescue runs when the kept blocks hold at least one and fewer than this many words
        (``TextBlock.num_words``): a fragment. A page with nothing kept is left alone: it is more often a
        section front or an error page than an article (docs/DECISIONS.md).
    max_kept_probability: ... and the classifier gave every kept block a content probability below this (in
        [0, 1]): a fragment it was sure of is a short article, kept as it is.
    min_peer_words: ... and trafilatura's text holds at least this many words (``\\w+`` tokens).
    min_block_share: a block is kept when at least this fraction in [0, 1] of its ``\\w+`` tokens occur in
        trafilatura's text (case-folded, NFC).
    declared_empty: the rescue also runs on a page with nothing kept when the page declares an article
        (``PageContext.page_types``: ``og:type`` ``article`` or a schema.org Article type): an article whose layout
        the classifier could not read, not a section front.
    Raises ValueError for a share or probability outside (0, 1] or a negative word count.
    """

    max_kept_words: int = 100
    max_kept_probability: float = 0.8
    min_peer_words: int = 200
    min_block_share: float = 0.9
    declared_empty: bool = False

    def __post_init__(self) -> None:
        if not 0.0 < self.min_block_share <= 1.0 or not 0.0 < self.max_kept_probability <= 1.0:
            raise ValueError(f"min_block_share and max_kept_probability must be in (0, 1], got "
                             f"{self.min_block_share}, {self.max_kept_probability}")
        if self.max_kept_words < 0 or self.min_peer_words < 0:
            raise ValueError("word counts must be >= 0")

    def __call__(self, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                 ctx: PageContext) -> list[bool]:
        """The step (:class:`~newsclean.transforms.refine.RefineStep`): :func:`rescue_keep` on the decoded page
        (``ctx.html``; without it, flags unchanged)."""
        if ctx.html is None:
            return list(keep)
        declared = self.declared_empty and declares_article(ctx.page_types)
        return rescue_keep(ctx.html, blocks, probs, keep, self, declared)


def peer_text(html: str) -> str:
    """trafilatura's main text of ``html`` (comments off, tables on, no formatting: as its own benchmark runs it);
    '' when it finds none, fails, or the page is longer than :data:`MAX_PEER_HTML_CHARS`. Any exception inside the
    peer counts as a failure, the pipeline's per-record timeout included (the page then finishes without the
    peer's vote, a few milliseconds later)."""
    if len(html) > MAX_PEER_HTML_CHARS:
        return ""
    import trafilatura  # here, not at import: only collapsed pages need it

    try:
        return trafilatura.extract(html, include_comments=False, include_tables=True,
                                   include_formatting=False) or ""
    except Exception:  # noqa: BLE001 - the peer's failure (any) must leave the page as the classifier kept it
        return ""


def collapsed(blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
              params: PeerRescueParams, empty_too: bool = False) -> bool:
    """Whether the kept blocks are an unsure fragment (the rescue's trigger): they hold fewer than
    ``params.max_kept_words`` words, at least one unless ``empty_too``, each at a content probability below
    ``params.max_kept_probability``."""
    kept = [(b.num_words, p) for b, p, k in zip(blocks, probs, keep) if k]
    words = sum(w for w, _ in kept)
    return (empty_too or words > 0) and words < params.max_kept_words and \
        all(p < params.max_kept_probability for _, p in kept)


def rescue_keep(html: str, blocks: Sequence[TextBlock], probs: Sequence[float], keep: Sequence[bool],
                params: PeerRescueParams = PeerRescueParams(), empty_too: bool = False) -> list[bool]:
    """Keep flags after the peer's vote: ``keep`` unchanged unless the page :func:`collapsed` (an empty page too,
    with ``empty_too``) and trafilatura's text of ``html`` (the decoded page as given to the chain) holds >=
    ``params.min_peer_words`` words; then also every block with >= ``params.min_block_share`` of its tokens in that
    text. ``probs`` and ``keep``: one content probability in [0, 1] and one flag per block."""
    if not collapsed(blocks, probs, keep, params, empty_too):
        return list(keep)
    peer = scoring_tokens(peer_text(html))
    if len(peer) < params.min_peer_words:
        return list(keep)
    vocabulary = set(peer)
    return [k or _share_in(b.text, vocabulary) >= params.min_block_share for b, k in zip(blocks, keep)]


def _share_in(text: str, vocabulary: set[str]) -> float:
    """Fraction in [0, 1] of the tokens of ``text`` that are in ``vocabulary`` (0 for a text without tokens)."""
    toks = scoring_tokens(text)
    return sum(t in vocabulary for t in toks) / len(toks) if toks else 0.0

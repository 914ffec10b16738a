"""The cleaning chain for one page, and its named configurations.

:func:`extract_article` tells the whole story of one page, top to bottom: parse -> metadata -> [link filter,
Ghorbani 2014] -> static-noise marks (StaDyNoT §3.1, from the site's :class:`~newsclean.transforms.site_evidence.SiteEvidence`)
-> dynamic-noise marks (§3.2) -> noise and non-informative tags removed (§3.3) -> atomic text blocks (Kohlschütter
2010) -> the block decision -> the page-level steps (:mod:`newsclean.transforms.refine`, in the configuration's
order) -> text, cleaned HTML, counts.

The block decision is one of: Boilerpipe's decision trees then the ancestor filter (Viveros-Jiménez 2018 §4), the
papers' chain; the learned classifier (:mod:`newsclean.transforms.classifier`), which reads every paper's decision
as a feature; or BoilerNet (:mod:`newsclean.transforms.boilernet`).

Named configurations: :data:`PAPER_CONFIG` uses every paper's constants as printed; :data:`HEURISTIC_CONFIG` lets
inline tags join text blocks; :data:`LEARNED_CONFIG` feeds every stage's decision to the learned block classifier
and then runs the page-level steps; :data:`DEFAULT_CONFIG`, what newsclean ships, is the learned one;
:data:`PRECISION_CONFIG` keeps article bodies only; :data:`BOILERNET_CONFIG` is BoilerNet as its paper runs it.
Each stage can be switched off (for ablations in ``newsclean eval``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, fields, is_dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import lxml.html
from lxml import etree

from newsclean.schemas.contract import PageType
from newsclean.schemas.records import RejectReason, StageCounts
from newsclean.transforms import kernel
from newsclean.transforms.ancestor_filter import AncestorFilterParams, ancestor_filter
from newsclean.transforms.blocks import extract_blocks
from newsclean.transforms.boilernet import BOILERNET_BLOCKS, IGNORED_TAGS, BoilerNetParams, classify_boilernet
from newsclean.transforms.boilerpipe import BoilerpipeParams, boilerpipe
from newsclean.transforms.byline import byline_names
from newsclean.transforms.classifier.model import LearnedParams, content_probabilities, keep_flags
from newsclean.transforms.context import PageContext
from newsclean.transforms.dom import paragraph_of
from newsclean.transforms.dynamic_noise import DynamicNoiseParams, mark_dynamic_noise
from newsclean.transforms.errors import ExtractionError
from newsclean.transforms.finish import PageFacts, finish_fields
from newsclean.transforms.link_filters import FILTERS as LINK_FILTERS
from newsclean.transforms.link_filters import PAD_ATTR, apply_link_filter
from newsclean.transforms.marks import strip_marks
from newsclean.transforms.metadata import Metadata, read_metadata
from newsclean.transforms.noise_removal import (
    FORM_CONTROL_TAGS,
    NON_INFORMATIVE_TAGS,
    NoiseRemovalParams,
    RemovalCounts,
    remove_noise,
    remove_non_informative,
)
from newsclean.transforms.page_type import PageTypeParams, listing_lines, page_type
from newsclean.transforms.parse import parse_html
from newsclean.transforms.refine import RefineStep, refine_keep
from newsclean.transforms.refine.article_fallback import ArticleFallbackParams
from newsclean.transforms.refine.article_lists import ArticleListsParams
from newsclean.transforms.refine.body_evidence import BodyEvidenceParams
from newsclean.transforms.refine.coherence import CoherenceParams, ModuleSplitParams
from newsclean.transforms.refine.consent import ConsentParams
from newsclean.transforms.refine.first_story import FirstStoryParams
from newsclean.transforms.refine.paragraph_lines import ParagraphLinesParams
from newsclean.transforms.refine.peer_rescue import PeerRescueParams
from newsclean.transforms.refine.recurring import RecurringTextParams
from newsclean.transforms.refine.region_recall import REGION_RECALL_STEPS
from newsclean.transforms.refine.side_content import (
    ARTICLE_BODY_SIDE_CONTENT_WORDS,
    CAPTION_TAGS,
    SIDE_TAGS,
    SideContentParams,
)
from newsclean.transforms.refine.site_check import SiteCheckParams
from newsclean.transforms.refine.teaser_cards import TeaserCardsParams
from newsclean.transforms.roles import BODY, CAPTION, LEAD, TEXT_PARTS, RoleParams, block_roles
from newsclean.transforms.site_evidence import SiteEvidence
from newsclean.transforms.static_noise import StaticNoiseParams, mark_static_noise
from newsclean.transforms.text import count_words
from newsclean.transforms.types import BlockParams, TextBlock
from newsclean.transforms.vocab import DYNAMIC, INLINE_TAGS, STATIC

__all__ = [
    "ChainConfig", "DEFAULT_CONFIG", "PAPER_CONFIG", "HEURISTIC_CONFIG", "LEARNED_CONFIG", "PRECISION_CONFIG",
    "BOILERNET_CONFIG", "CONFIGS",
    "MIN_ARTICLE_WORDS", "Extraction", "extract_article",
]

KEEP_EMPTY_TAGS = ("br", "hr")


DEFAULT_TEXT_INCLUDES = ("lead",)
"""What the shipped chains' ``text`` holds besides the body: the lead (standfirst, dek), which the data sets' golds
keep (taking it out lowered every set's F1, trafilatura-eval's by 0.018: evaluation/experiments-accuracy.md);
captions stay in their own column (``--text-includes captions`` adds them)."""


@dataclass(frozen=True)
class ChainConfig:
    """Every parameter of the chain. ``None`` for a stage's params switches that stage off.

    One stage decides which text blocks are content, and a configuration names exactly one (or none:
    every block kept):

    * the papers' decision: ``boilerpipe`` (Kohlschütter 2010 Algorithm 1 or 2) then ``ancestor``
      (Viveros-Jiménez 2018 §4), each of which may be off;
    * ``learned``: the learned block classifier (:mod:`newsclean.transforms.classifier`) decides per block;
      Boilerpipe's and the ancestor filter's verdicts are among its features, computed with the fixed
      parameters it was trained with, and dynamic noise is kept on the tree as a feature instead of
      being removed;
    * ``boilernet``: BoilerNet (:mod:`newsclean.transforms.boilernet`, Leonhardt 2020) decides per block.

    ``refine``: the page-level steps after the learned classifier, in order (:mod:`newsclean.transforms.refine`;
    each reads the classifier's probabilities, so they need ``learned``).

    What the kept blocks make (:func:`assemble`): ``roles`` labels them body, caption or lead
    (:mod:`newsclean.transforms.roles`; None: every kept block is body); ``text`` holds the body and the parts of
    ``text_includes`` (``"captions"``, ``"lead"``: :data:`~newsclean.transforms.roles.TEXT_PARTS`; default
    :data:`DEFAULT_TEXT_INCLUDES`, the lead) in page order, and all of them when the body has no words. ``page_types`` decides the page type
    (:mod:`newsclean.transforms.page_type`; None: every page is an article); with ``listing_text`` a listing page's
    text is its items, one a line (:func:`~newsclean.transforms.page_type.listing_lines`).

    A setting the chosen decision would ignore is refused rather than silently dropped: with
    ``learned`` or ``boilernet`` set, ``boilerpipe`` and ``ancestor`` must be ``None``, at most one
    of ``learned`` and ``boilernet`` may be set, and ``refine`` needs ``learned``. So is a chain whose empty-page
    fallback would read other consent regions than its consent step drops (``ArticleFallbackParams.consent``
    must equal the first ``ConsentParams`` of ``refine``).

    ``name`` is what ``--chain`` and :data:`CONFIGS` call it; ``summary`` one line on what it does, for ``--help``
    (not compared: two configurations with equal parameters are equal whatever their summaries).

    The corpus filter (reject an extraction shorter than N words) is not the chain's: it is the
    pipeline's ``CleanConfig.min_words`` and the ``min_words`` argument of :func:`extract_article`.

    Raises:
        ValueError: a combination with ignored or disagreeing settings (see above), or ``link_filter`` outside 1–3.
    """

    name: str = "custom"
    summary: str = field(default="", compare=False)
    link_filter: int | None = None
    static: StaticNoiseParams | None = field(default_factory=StaticNoiseParams)
    dynamic: DynamicNoiseParams | None = field(default_factory=DynamicNoiseParams)
    removal: NoiseRemovalParams = field(default_factory=NoiseRemovalParams)
    blocks: BlockParams = field(default_factory=BlockParams)
    boilerpipe: BoilerpipeParams | None = field(default_factory=BoilerpipeParams)
    ancestor: AncestorFilterParams | None = field(default_factory=AncestorFilterParams)
    learned: LearnedParams | None = None
    refine: tuple[RefineStep, ...] = ()
    boilernet: BoilerNetParams | None = None
    roles: RoleParams | None = field(default_factory=RoleParams)
    text_includes: tuple[str, ...] = DEFAULT_TEXT_INCLUDES
    page_types: PageTypeParams | None = field(default_factory=PageTypeParams)
    listing_text: bool = False

    def model_files(self) -> tuple[Path, ...]:
        """The model and lexicon files this configuration reads (the learned classifier's or BoilerNet's; none for
        the papers' decision), e.g. to record their digests with a run's settings."""
        files: tuple[Path, ...] = ()
        if self.learned is not None:
            files += self.learned.model_files()
        if self.boilernet is not None:
            files += self.boilernet.model_files()
        return files

    def __post_init__(self) -> None:
        for problem in config_problems(self):
            raise ValueError(f"ChainConfig {self.name!r}: {problem}")

    def with_(self, **changes) -> ChainConfig:
        """A copy with ``changes`` applied (``dataclasses.replace``)."""
        return replace(self, **changes)

    def step(self, kind: type) -> RefineStep | None:
        """The first page-level step of type ``kind`` in ``refine`` (None: the chain has none)."""
        return next((step for step in self.refine if isinstance(step, kind)), None)

    def without_steps(self, kind: type) -> ChainConfig:
        """A copy whose page-level steps (``refine``) leave out every step of type ``kind`` (an ablation)."""
        return replace(self, refine=tuple(step for step in self.refine if not isinstance(step, kind)))


def config_problems(config: ChainConfig) -> list[str]:
    """What is wrong with ``config`` (empty when nothing): settings its block decision would ignore, steps whose
    consent settings disagree."""
    problems = []
    deciders = [name for name in ("learned", "boilernet") if getattr(config, name) is not None]
    if len(deciders) > 1:
        problems.append("both 'learned' and 'boilernet' are set; a chain has one block classifier")
    ignored = [name for name in ("boilerpipe", "ancestor") if getattr(config, name) is not None]
    if deciders and ignored:
        problems.append(f"{' and '.join(repr(n) for n in ignored)} would be ignored: {deciders[0]!r} decides "
                        f"per block; set {', '.join(f'{n}=None' for n in ignored)}")
    if config.refine and config.learned is None:
        problems.append("'refine' steps read the learned classifier's probabilities; set 'learned' or refine=()")
    consent = config.step(ConsentParams)
    if consent is not None and any(isinstance(step, ArticleFallbackParams) and step.consent != consent
                                   for step in config.refine):
        problems.append("the empty-page fallback's consent regions differ from the consent step's; set "
                        "ArticleFallbackParams(consent=...) to the chain's ConsentParams")
    unknown = [part for part in config.text_includes if part not in TEXT_PARTS]
    if isinstance(config.text_includes, str) or unknown:
        problems.append(f"text_includes must be a tuple of {TEXT_PARTS}, got {config.text_includes!r}")
    if config.link_filter is not None and config.link_filter not in LINK_FILTERS:
        problems.append(f"link_filter must be one of {LINK_FILTERS} (Ghorbani 2014) or None, got {config.link_filter!r}")
    return problems


#: Default of the corpus filter (pipeline ``--min-words``, :func:`newsclean.extract`): fewer kept words
#: than this makes a page a ``too_short`` reject. Not a paper's value: a project choice that keeps
#: one-line stubs (a headline and a "read more" link) out of the corpus.
MIN_ARTICLE_WORDS = 10


PAPER_CONFIG = ChainConfig(name="paper", summary="the papers' chain and constants as printed")
"""Papers' constants: α=50, β=0.2, A the only non-separator, 80-column wrap, Algorithm 2, depth 2."""

HEURISTIC_CONFIG = ChainConfig(name="heuristic", summary="the papers' chain, inline tags joining text blocks",
                               blocks=BlockParams(non_separator_tags=INLINE_TAGS))
"""The papers' chain with one change: inline formatting tags (em, b, span, ...) do not split text blocks."""

LEARNED_NON_INFORMATIVE_TAGS = NON_INFORMATIVE_TAGS + FORM_CONTROL_TAGS
"""§3.3's non-informative tags plus the drop-down (:data:`~newsclean.transforms.noise_removal.FORM_CONTROL_TAGS`)."""

LEARNED_CONSENT = ConsentParams()
"""The learned configuration's consent regions: its consent step drops them, its empty-page fallback never selects
their blocks."""

LEARNED_STEPS: tuple[RefineStep, ...] = (
    LEARNED_CONSENT,
    CoherenceParams(),
    ModuleSplitParams(),
    *REGION_RECALL_STEPS,
    BodyEvidenceParams(keep_support=1.1, drop_below=0.9),
    SiteCheckParams(),
    ArticleListsParams(),
    SideContentParams(protect_title=True, max_drop_share=0.5),
    RecurringTextParams(),
    TeaserCardsParams(min_description_words=8, skip_card_pages=True),
    ParagraphLinesParams(max_run_words=300),
    FirstStoryParams(),
    ArticleFallbackParams(consent=LEARNED_CONSENT),
    PeerRescueParams(declared_empty=True),
)
"""The learned configuration's page-level steps, in order (each chosen on leave-one-data-set-out F1: docs/DECISIONS.md
"Page-level steps", evaluation/experiments-accuracy.md): consent regions dropped first (cookie banners, privacy
modals, vendor lists), coherence (dropped prose of the main container, and prose between kept blocks at most two
blocks away: an inline module's split), the article region's dropped prose kept when
the kept text is a fragment of it (twice), the JSON-LD ``articleBody`` as evidence (dropping only), the site check
against the neighbours' content container, a list or table that follows a kept block of its parent, side boxes
(related, share, "read also" teasers; never the title's wrapper, never more than half of the kept words), short
unsure lines that recur on the site's neighbour pages,
repeated teaser cards beside the article, the lines of one ``<br>``-split paragraph taking its decision, one story
per page, the blocks the page's ``articleBody`` or article-body markup holds where nothing was kept, and last, where
the classifier kept only an unsure fragment (under 100 words, none at p >= 0.8) or nothing of a page that declares an
article, trafilatura's vote for the blocks its text holds."""



LEARNED_CONFIG = ChainConfig(
    name="learned", summary="the papers' stages feeding a learned block classifier, then page-level checks",
    removal=NoiseRemovalParams(non_informative_tags=LEARNED_NON_INFORMATIVE_TAGS),
    blocks=BlockParams(non_separator_tags=INLINE_TAGS, separate_marked=True, skip_hidden=True),
    boilerpipe=None,
    ancestor=None,
    learned=LearnedParams(),
    refine=LEARNED_STEPS,
)
"""Papers' stages as features of a learned block classifier (:mod:`newsclean.transforms.classifier`), then the
page-level steps of :data:`LEARNED_STEPS`."""

DEFAULT_CONFIG = replace(LEARNED_CONFIG, name="default", summary="= learned, the shipped chain")
"""Shipped chain: the learned configuration (chosen by leave-one-data-set-out F1: docs/DECISIONS.md,
"Selection protocol"; its scores: evaluation/results/eval.md)."""

PRECISION_CONFIG = replace(
    LEARNED_CONFIG, name="precision",
    summary="the default, also dropping what it keeps in caption and byline boxes: article bodies only",
    refine=tuple(SideContentParams(class_words=ARTICLE_BODY_SIDE_CONTENT_WORDS, tags=SIDE_TAGS + CAPTION_TAGS,
                                   max_drop_share=0.5) if isinstance(step, SideContentParams) else step
                 for step in LEARNED_STEPS))
"""The shipped chain for a corpus of article bodies only: its side-content step also drops what the classifier
kept in boxes named as photo captions (and ``<figcaption>``) or bylines, author bios and date
lines (:data:`~newsclean.transforms.refine.side_content.ARTICLE_BODY_SIDE_CONTENT_WORDS`), below the same probability
bound, but never more than half of the kept words (boxes that hold most of the kept text are that page's
content: a body in a ``caption``-named section, a thread page). Higher precision on every shared set but CleanEval, lower
recall; F1 depends on the gold's convention (docs/DECISIONS.md "Side content"). The analogue
of trafilatura's ``favor_precision``; ``--chain precision``."""

BOILERNET_CONFIG = ChainConfig(
    name="boilernet", summary="BoilerNet, Leonhardt et al. 2020: a BiLSTM over DOM text leaves",
    static=None, dynamic=None, boilerpipe=None, ancestor=None,
    removal=NoiseRemovalParams(non_informative_tags=IGNORED_TAGS, form_unwrap_ratio=1.01),
    blocks=BOILERNET_BLOCKS, boilernet=BoilerNetParams(),
)
"""BoilerNet as the paper runs it: raw page, its ignored tags removed, every DOM text leaf a block, a BiLSTM decides."""

CONFIGS = {c.name: c for c in (DEFAULT_CONFIG, PAPER_CONFIG, HEURISTIC_CONFIG, LEARNED_CONFIG, PRECISION_CONFIG,
                                BOILERNET_CONFIG)}


def named_config(name: str) -> ChainConfig:
    """The shipped chain called ``name`` (a key of :data:`CONFIGS`).

    Raises:
        TypeError: ``name`` is not a ``str``.
        ValueError: no shipped chain has that name; the message lists the names.
    """
    if not isinstance(name, str):
        raise TypeError(f"chain must be a chain name (str) or a ChainConfig, got {type(name).__name__}")
    if name not in CONFIGS:
        raise ValueError(f"chain must be one of {sorted(CONFIGS)}, got {name!r}")
    return CONFIGS[name]


@dataclass(frozen=True)
class Extraction:
    """Result of the chain for one page: text (blocks, paragraphs separated by newlines: the body, plus the parts
    the configuration's ``text_includes`` names), cleaned HTML of the kept content (formatting kept), metadata,
    ``word_count`` (words of ``text``) and per-stage counts; ``captions`` (image captions and credits, one string
    each, in page order), ``lead`` (standfirst, dek or key points; None: none) and ``page_type`` (``article``,
    ``listing`` or ``other``: :mod:`newsclean.transforms.page_type`). ``title`` is the headline as readers see
    it (``Metadata.headline``: no site-name suffix); the raw ``<title>`` is ``metadata.page_title``.

    ``title``, ``published_at``, ``modified_at``, ``language`` (identified in ``text``), ``language_score``,
    ``declared_language`` (the page's own), ``image_url``, ``canonical_url``, ``domain``, ``page_type`` and
    ``is_accessible_for_free`` (schema.org ``isAccessibleForFree``; None: the page does not say) are
    finished by :func:`newsclean.transforms.finish.finish_fields` and mean what the Parquet article row's columns
    of the same names mean; ``metadata`` holds what the page says as it says it."""

    title: str | None
    text: str
    html: str
    published_at: datetime | None
    language: str | None
    word_count: int
    counts: StageCounts = field(default_factory=StageCounts)
    metadata: Metadata | None = None  # everything the page says about itself (authors, dates, image, ...)
    captions: tuple[str, ...] = ()
    lead: str | None = None
    page_type: str = PageType.ARTICLE.value
    declared_language: str | None = None
    language_score: float | None = None
    modified_at: datetime | None = None
    image_url: str | None = None
    canonical_url: str | None = None
    domain: str | None = None
    is_accessible_for_free: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (``json.dumps`` takes it as it is): keys the dataclass fields in their order;
        datetimes as ISO 8601 strings (``datetime.isoformat``: aware UTC, ``+00:00``), ``counts`` and ``metadata``
        as dicts of their fields (``metadata`` None when the chain read none; ``metadata.article_body`` included, at
        most 100,000 characters), tuples as lists; text fields are characters (Unicode, not bytes). Never raises."""
        return {f.name: _json_ready(getattr(self, f.name)) for f in fields(self)}


def _json_ready(value: Any) -> Any:
    """``value`` as JSON types: a datetime as its ISO 8601 string, a dataclass as a dict of its fields, a tuple or
    list as a list (each recursively); str, numbers, bools and None as they are."""
    if isinstance(value, datetime):
        return value.isoformat()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json_ready(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, (tuple, list)):
        return [_json_ready(v) for v in value]
    return value


@dataclass
class PreparedPage:
    """A page after every stage before block classification: tree, metadata, text blocks, counts."""

    root: etree._Element
    meta: Metadata
    blocks: list[TextBlock]
    dynamic_marked: int
    removed: RemovalCounts
    non_informative: int

    def context(self, evidence: SiteEvidence | None, html: str | None = None) -> PageContext:
        """The block decision's page context: the title, whether static noise was learnt from the neighbour pages
        (``evidence``), their site profile, the page's ``articleBody``; ``html`` (the decoded page) only for the
        peer rescue."""
        profile = evidence.profile if evidence is not None else None
        return PageContext(self.meta.title, bool(evidence), profile, self.meta.article_body, html, self.meta.page_types)


def prepare_blocks(html: str, evidence: SiteEvidence | None, config: ChainConfig,
                   on_marked: Callable[[etree._Element], None] | None = None,
                   root: etree._Element | None = None) -> PreparedPage:
    """Parse, read metadata, link filter, mark and remove noise, build text blocks.

    ``evidence``: the site's, learnt from the page's neighbours (None: no static stage). ``on_marked`` is called
    with the tree once noise is marked and before anything is removed (``newsclean explain`` takes its snapshot
    there). ``root``: the page already parsed by :func:`~newsclean.transforms.parse.parse_html` (``html`` is then
    not read; the tree is changed in place).
    Raises :class:`ExtractionError` (``EMPTY_BODY``/``PARSE_ERROR``) for input lxml cannot use.
    """
    root = parse_html(html) if root is None else root
    meta = read_metadata(root)
    apply_link_filter(root, config.link_filter)
    if evidence and config.static:
        mark_static_noise(root, evidence.static, config.static)
    dynamic_marked = mark_dynamic_noise(root, config.dynamic) if config.dynamic else 0
    if on_marked is not None:
        on_marked(root)
    removed = remove_noise(root, (STATIC,) if config.learned else (DYNAMIC, STATIC))
    non_informative = remove_non_informative(root, config.removal)
    blocks = extract_blocks(root, config.blocks)
    return PreparedPage(root, meta, blocks, dynamic_marked, removed, non_informative)


def extract_article(html: str, evidence: SiteEvidence | None = None,
                    config: ChainConfig = DEFAULT_CONFIG, url: str | None = None,
                    min_words: int = 0, root: etree._Element | None = None,
                    facts: PageFacts | None = None) -> Extraction:
    """Run the chain on decoded HTML. ``evidence`` comes from the page's neighbour pages
    (:func:`~newsclean.transforms.site_evidence.learn_site_evidence`; None: no static stage, no site profile).

    ``url`` names the page in error messages (and is its facts' URL when ``facts`` is None). ``min_words``: the corpus filter, in words
    (:func:`~newsclean.transforms.text.count_words`); 0 keeps any non-empty extraction. ``root``: ``html`` already
    parsed by :func:`~newsclean.transforms.parse.parse_html` (then not parsed again; the tree is changed in place).
    ``facts``: what is known of the page besides its HTML (:class:`~newsclean.transforms.finish.PageFacts`; None:
    its ``url`` only), for the finished fields (:func:`~newsclean.transforms.finish.finish_fields`).

    Raises :class:`ExtractionError` with ``EMPTY_BODY``/``PARSE_ERROR`` (bad input), ``NO_CONTENT``
    (no block kept) or ``TOO_SHORT`` (fewer than ``min_words`` words kept).
    """
    page = prepare_blocks(html, evidence, config, root=root)
    return extract_from_blocks(page, html, evidence, config, url, min_words, facts)


def extract_from_blocks(page: PreparedPage, html: str, evidence: SiteEvidence | None = None,
                        config: ChainConfig = DEFAULT_CONFIG, url: str | None = None, min_words: int = 0,
                        facts: PageFacts | None = None, probabilities: list[float] | None = None) -> Extraction:
    """What :func:`extract_article` does after :func:`prepare_blocks`: select the blocks of ``page`` (prepared
    from ``html`` with ``evidence`` under ``config``), assemble and finish the article (``page.root`` is changed in
    place). ``probabilities``: the learned classifier's of ``page.blocks`` when the caller computed them already
    (:func:`~newsclean.transforms.classifier.model.stage_probabilities`' ``content``, same context and
    parameters); None: computed here. Arguments and errors (``NO_CONTENT``, ``TOO_SHORT``) as
    :func:`extract_article`'s."""
    blocks, meta = page.blocks, page.meta
    keep = select_blocks(blocks, config, page.context(evidence, html), probabilities)
    parts = assemble(page, keep, config)
    text = parts.text
    words = count_words(text)
    if not words:
        raise ExtractionError(RejectReason.NO_CONTENT, f"no text block kept of {len(blocks)}" + (f" ({url})" if url else ""))
    if words < min_words:
        raise ExtractionError(RejectReason.TOO_SHORT, f"{words} words kept, minimum {min_words}")
    counts = StageCounts(
        static_nodes_removed=page.removed.static,
        dynamic_nodes_removed=page.removed.dynamic,  # 0 under ``learned``: marked nodes stay, as features
        dynamic_nodes_marked=page.dynamic_marked,
        noninformative_nodes_removed=page.non_informative,
        blocks_total=len(blocks), blocks_kept=sum(keep),
    )
    if not meta.authors:
        meta = replace(meta, authors=byline_names(blocks, keep))
    html_out = cleaned_html(page.root, blocks, keep)
    finished = finish_fields(text, meta, parts.page_type, facts or PageFacts(url=url))
    return Extraction(text=text, html=html_out, word_count=words, counts=counts, metadata=meta,
                      captions=parts.captions, lead=parts.lead, **finished._asdict())


@dataclass(frozen=True)
class ArticleParts:
    """What the kept blocks of one page make: ``text`` (the configuration's convention, paragraphs on lines),
    ``captions`` (one string per caption paragraph), ``lead`` (None: none) and ``page_type``."""

    text: str
    captions: tuple[str, ...] = ()
    lead: str | None = None
    page_type: str = PageType.ARTICLE.value


def assemble(page: PreparedPage, keep: list[bool], config: ChainConfig) -> ArticleParts:
    """The :class:`ArticleParts` of ``page`` with the keep flags ``keep`` (one per block) under ``config``
    (:class:`ChainConfig`: ``roles``, ``text_includes``, ``page_types``, ``listing_text``)."""
    blocks = page.blocks
    dated = page.meta.published_at is not None or bool(page.meta.authors)
    kind = page_type(blocks, keep, page.meta.page_types, config.page_types, page.meta.title, dated,
                     bool(page.meta.article_body)) \
        if config.page_types else PageType.ARTICLE.value
    if config.listing_text and kind == PageType.LISTING.value:
        lines = listing_lines(blocks, config.page_types.cards)
        if lines:
            return ArticleParts(unicodedata.normalize("NFC", "\n".join(lines)), page_type=kind)
    if config.roles is None:
        return ArticleParts(blocks_text([b for b, k in zip(blocks, keep) if k]), page_type=kind)
    roles = block_roles(blocks, keep, page.meta.description, config.roles)
    wanted = {BODY, *(part.rstrip("s") for part in config.text_includes)}
    body = [b for b, r in zip(blocks, roles) if r in wanted]
    if not any(b.num_words for b in body if b is not None):
        body = [b for b, r in zip(blocks, roles) if r is not None]
    captions = blocks_text([b for b, r in zip(blocks, roles) if r == CAPTION])
    lead = blocks_text([b for b, r in zip(blocks, roles) if r == LEAD])
    return ArticleParts(blocks_text(body), tuple(captions.split("\n")) if captions else (), lead or None, kind)


def select_blocks(blocks: list[TextBlock], config: ChainConfig, ctx: PageContext,
                  probabilities: list[float] | None = None) -> list[bool]:
    """Keep flags, one per block: BoilerNet; or the learned classifier's then the page-level steps
    (``config.refine``); or Boilerpipe then the ancestor filter (each skipped when None). ``probabilities``: the
    learned classifier's, when already computed (:func:`extract_from_blocks`)."""
    if config.boilernet:
        return classify_boilernet(blocks, config.boilernet)
    if config.learned:
        probs = content_probabilities(blocks, ctx, config.learned) if probabilities is None else probabilities
        return refine_keep(blocks, probs, keep_flags(probs, config.learned), ctx, config.refine)
    keep = boilerpipe(blocks, config.boilerpipe, ctx.title) if config.boilerpipe else [True] * len(blocks)
    if config.ancestor:
        keep = ancestor_filter(blocks, keep, config.ancestor)
    return keep


@kernel.twin("blocks_text", adapt=lambda join, blocks: unicodedata.normalize("NFC", join(list(blocks))))
def blocks_text(blocks: list[TextBlock]) -> str:
    """Join kept blocks: a space inside one paragraph element, a newline between paragraphs; the
    result in Unicode NFC (as corpora and gold standards store text: pages mix composed and
    decomposed forms, e.g. Bengali U+09DC, which NFC decomposes). The compiled kernel joins them where
    :func:`newsclean.transforms.kernel.enabled` holds."""
    parts: list[str] = []
    previous = None
    for block in blocks:
        para = paragraph_of(block.container)
        if parts:
            parts.append(" " if para is previous else "\n")
        parts.append(block.text)
        previous = para
    return unicodedata.normalize("NFC", "".join(parts))


def cleaned_html(root: etree._Element, blocks: list[TextBlock], keep: list[bool]) -> str:
    """Serialise the body with dropped blocks' text removed and empty elements pruned; marks stripped (the text
    removed by the compiled kernel where :func:`newsclean.transforms.kernel.enabled` holds)."""
    _clear_dropped(blocks, keep)
    body = root.find("body")
    body = root if body is None else body
    _prune_empty(body)
    strip_marks(root)
    for el in _PADDED_LINKS(body):
        del el.attrib[PAD_ATTR]
    return lxml.html.tostring(body, encoding="unicode", method="html").strip()


_PADDED_LINKS = etree.XPath(f"descendant-or-self::a[@{PAD_ATTR}]")  # link filter 3's padding (link_filters.py)


@kernel.twin("clear_dropped", adapt=lambda clear, blocks, keep: clear(list(blocks), keep), compare=kernel.TREE)
def _clear_dropped(blocks: list[TextBlock], keep: list[bool]) -> None:
    """The text of every piece of the blocks not kept set to None (``setattr(el, slot, None)``)."""
    for block, kept in zip(blocks, keep):
        if not kept:
            for el, slot in block.pieces:
                setattr(el, slot, None)


@kernel.twin("prune_empty", compare=kernel.TREE)
def _prune_empty(body: etree._Element) -> None:
    """Drop every element under ``body`` without text (but ``br``/``hr``), as dropping them children before
    parents would. Which elements hold text does not depend on the order of dropping (a dropped element's tail stays
    in its parent), so it is found first (:func:`_text_holders`); then only the topmost empty elements
    are dropped, their empty descendants with them. The compiled kernel does the same where
    :func:`newsclean.transforms.kernel.enabled` holds."""
    full = _text_holders(body)
    empty: list[etree._Element] = []
    stack = [body]
    while stack:
        for child in stack.pop():
            if not isinstance(child.tag, str):
                continue
            if child in full or child.tag in KEEP_EMPTY_TAGS:
                stack.append(child)  # kept: its empty descendants are dropped one by one
            else:
                empty.append(child)
    for el in reversed(empty):
        el.drop_tree()


def _text_holders(body: etree._Element) -> set[etree._Element]:
    """The elements under ``body`` (itself included) whose subtree holds non-whitespace text: those with
    such ``.text``, the parents of nodes with such ``.tail``, and all their ancestors up to ``body``."""
    full: set[etree._Element] = {body}
    for node in body.iter():
        text = node.text if isinstance(node.tag, str) else None
        tail = node.tail if node is not body else None
        if text and not text.isspace():
            holder = node
        elif tail and not tail.isspace():
            holder = node.getparent()
        else:
            continue
        while holder not in full:
            full.add(holder)
            holder = holder.getparent()
    return full

"""What ``newsclean eval`` runs: the chain's named configurations, its ablations, and the peer extractors.

A :class:`System` is one row of the tables. Three kinds:

* ``config``: every named configuration of :data:`newsclean.transforms.chain.CONFIGS` (``default``, ``paper``, ...;
  ``boilernet``: BoilerNet, Leonhardt 2020, trained on the ``tune`` half by ``scripts/train_boilernet.py``),
  and ``crossfit`` (:func:`crossfit_systems`): the default with each split scored by a classifier
  trained on the other.
* ``ablation``: a base configuration (``default``, and the papers' chain when the default uses the
  learned classifier: :func:`default_ablation_bases`) with one thing changed, built with
  ``ChainConfig.with_`` and the stages' parameter dataclasses (:func:`ablations`): each stage off
  in turn (a learned base also without its boilerplate lexicon, as on a page in a language the
  lexicon never saw, and without each kind of page-level step it has, :data:`STEP_ROWS`), the
  other Boilerpipe algorithm, ancestor depth 1-5, link Filters 1-3, and neighbour groups of
  1/3/5/10/20 pages. Values equal to the base's are not repeated (the base's own row is
  that point of each series). Static-noise and neighbour-size ablations only mean something on data
  sets with neighbour groups and are run there only.
* ``peer``: other extractors as baselines (:data:`PEERS`: trafilatura, readability-lxml, jusText,
  boilerpy3, resiliparse; the ``[eval]`` install extra). A peer whose library does not import is
  skipped with a note (:func:`resolve_peers`).

Every system gets the same input: the page decoded to text once by :func:`newsclean.transforms.parse.decode_html`
(HTTP charset absent, so BOM, meta, then detection), so that the comparison measures extraction, not
charset guessing. Peers run with their documented defaults, except trafilatura, which runs as its own
benchmark runs it (comments and formatting off, tables on: ``tests/eval_common.py`` upstream).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from newsclean.transforms.chain import CONFIGS, DEFAULT_CONFIG, ChainConfig
from newsclean.transforms.classifier.model import DEFAULT_CONTEXT_MODEL, DEFAULT_LEXICON, DEFAULT_MODEL
from newsclean.transforms.refine.article_fallback import ArticleFallbackParams
from newsclean.transforms.refine.article_lists import ArticleListsParams
from newsclean.transforms.refine.body_evidence import BodyEvidenceParams
from newsclean.transforms.refine.coherence import CoherenceParams, ModuleSplitParams
from newsclean.transforms.refine.consent import ConsentParams
from newsclean.transforms.refine.first_story import FirstStoryParams
from newsclean.transforms.refine.paragraph_lines import ParagraphLinesParams
from newsclean.transforms.refine.peer_rescue import PeerRescueParams
from newsclean.transforms.refine.recurring import RecurringTextParams
from newsclean.transforms.refine.region_recall import RegionRecallParams
from newsclean.transforms.refine.side_content import SideContentParams
from newsclean.transforms.refine.site_check import SiteCheckParams
from newsclean.transforms.refine.teaser_cards import TeaserCardsParams

CROSSFIT_MODELS = Path(__file__).with_name("models") / "crossfit"
"""The shipped model's three files trained on the *test* split instead, for ``newsclean eval``'s cross-fitted
row only (:func:`crossfit_systems`); never used to clean, not in the newsclean wheel."""

#: StaDyNoT §4 learns static noise from 10 neighbour pages per site (also the pipeline's default).
DEFAULT_NEIGHBOURS = 10
NEIGHBOUR_SIZES = (1, 3, 5, 10, 20)
DEPTHS = (1, 2, 3, 4, 5)
LINK_FILTERS = (1, 2, 3)
ABLATION_GROUPS = ("stages", "algorithm", "depth", "filters", "neighbours")

#: Page-level step type -> (row id after "no-", words after "−", whether the row needs neighbour groups): the
#: ablation rows of a base's ``refine`` steps, one per kind of step (all steps of that kind taken out).
STEP_ROWS: dict[type, tuple[str, str, bool]] = {
    ConsentParams: ("consent", "consent regions", False),
    CoherenceParams: ("coherence", "page-level coherence", False),
    ModuleSplitParams: ("module-splits", "prose between kept blocks (inline-module splits)", False),
    RegionRecallParams: ("region-recall", "article region recall", False),
    BodyEvidenceParams: ("body-evidence", "articleBody evidence", False),
    SiteCheckParams: ("site-check", "site check", True),
    ArticleListsParams: ("article-lists", "lists and tables after a kept block", False),
    SideContentParams: ("side-content", "side content", False),
    RecurringTextParams: ("recurring", "recurring texts", True),
    TeaserCardsParams: ("teaser-cards", "teaser cards", False),
    ParagraphLinesParams: ("paragraph-lines", "paragraph lines", False),
    FirstStoryParams: ("first-story", "first story", False),
    ArticleFallbackParams: ("article-fallback", "empty-page fallback", False),
    PeerRescueParams: ("peer-rescue", "peer rescue (trafilatura on collapsed pages)", False),
}


@dataclass(frozen=True)
class System:
    """One row of the evaluation tables.

    id: short CLI name (``default``, ``no-static``, ``depth3``, ``trafilatura``); label: row label.
    kind: ``config``, ``ablation`` or ``peer``; group: the ablation series (one of
    :data:`ABLATION_GROUPS`, "" otherwise). config: the chain configuration (None for peers).
    neighbours: neighbour pages per group to learn static noise from (None: the run's ``--neighbours``).
    neighbour_only: run only on data sets with neighbour groups (the result elsewhere equals the default's).
    tune_config: the configuration for pages of the ``tune`` split (None: ``config``); cross-fitting
    (:func:`crossfit_systems`) scores them with a classifier trained on the ``test`` split.
    """

    id: str
    label: str
    kind: str
    config: ChainConfig | None = None
    group: str = ""
    neighbours: int | None = None
    neighbour_only: bool = False
    tune_config: ChainConfig | None = None

    def config_for(self, split: str) -> ChainConfig | None:
        """The configuration this system runs on a page of ``split`` (``tune`` or ``test``)."""
        return self.tune_config if split == "tune" and self.tune_config is not None else self.config

    @property
    def is_chain(self) -> bool:
        """True for the chain's configurations and ablations, False for peers."""
        return self.config is not None


def named_configs(configs: Mapping[str, ChainConfig] = CONFIGS) -> list[System]:
    """One ``config`` system per named configuration, ``default`` first, then in ``configs`` order.

    A configuration equal to an earlier one but for its name is not run twice: the earlier row's label
    names it (``newsclean default (= learned)``).
    """
    systems: list[System] = []
    for name in sorted(configs, key=lambda n: n != "default"):
        twin = next((i for i, s in enumerate(systems) if s.config == configs[name].with_(name=s.config.name)), None)
        if twin is None:
            systems.append(System(name, f"newsclean {name}", "config", configs[name]))
        else:
            systems[twin] = replace(systems[twin], label=f"{systems[twin].label} (= {name})")
    return systems


def crossfit_systems(base: ChainConfig = DEFAULT_CONFIG, models: Path = CROSSFIT_MODELS) -> list[System]:
    """``crossfit``: ``base`` on ``test`` pages and, on ``tune`` pages, ``base`` with the classifier files
    of ``models`` (trained on the ``test`` split: ``scripts/train_block_classifier.py --train-split
    test``). Every page is then scored by a model that never saw its site (2-fold cross-fitting), so
    its all-pages F1 estimates unseen pages with twice the pages of the test half alone. [] when
    ``base`` has no learned classifier or a file is missing."""
    files = [models / f.name for f in (DEFAULT_MODEL, DEFAULT_CONTEXT_MODEL, DEFAULT_LEXICON)]
    if base.learned is None or not all(f.is_file() for f in files):
        return []
    swapped = replace(base.learned, model_path=str(files[0]), context_model_path=str(files[1]), lexicon_path=str(files[2]))
    return [System("crossfit", f"newsclean {base.name}, cross-fitted", "config", base,
                   tune_config=base.with_(learned=swapped))]


def ablations(base: ChainConfig = DEFAULT_CONFIG, neighbours: int = DEFAULT_NEIGHBOURS) -> list[System]:
    """The ablation systems of ``base`` (see the module docstring), in :data:`ABLATION_GROUPS` order.

    ``neighbours`` is the run's neighbour-group size (the point of the size series that the base row
    already shows). A stage already off in ``base`` gives no "off" row; no Boilerpipe stage, no algorithm
    row; no ancestor stage, no depth rows. A base with a learned block classifier gets no Boilerpipe or
    ancestor rows at all: its classifier replaces both and reads them as features computed with fixed
    parameters, so changing them changes nothing. Ids are bare (``depth3``) for the ``default`` base and
    prefixed by the base's name otherwise (``heuristic:depth3``); labels start with the base's name.
    """
    prefix = "" if base.name == "default" else f"{base.name}:"

    def make(sid: str, words: str, group: str, config: ChainConfig, **kw) -> System:
        return System(prefix + sid, f"{base.name} {words}", "ablation", config, group, **kw)

    decides = base.learned is None  # Boilerpipe and the ancestor filter decide only without a classifier
    out: list[System] = []
    stages = (("static", "static noise"), ("dynamic", "dynamic noise"), ("boilerpipe", "Boilerpipe"),
              ("ancestor", "ancestor filter"))
    for name, words in stages:
        if getattr(base, name) is not None and (decides or name in ("static", "dynamic")):
            out.append(make(f"no-{name}", f"− {words}", "stages", base.with_(**{name: None}),
                            neighbour_only=name == "static"))
    if base.learned is not None:
        out.append(make("no-lexicon", "− lexicon (an unseen language)", "stages",
                        base.with_(learned=replace(base.learned, use_lexicon=False))))
        for kind in dict.fromkeys(type(step) for step in base.refine):
            sid, words, neighbour_only = STEP_ROWS[kind]
            out.append(make(f"no-{sid}", f"− {words}", "stages", base.without_steps(kind), neighbour_only=neighbour_only))
    if base.boilerpipe is not None and decides:
        other = 3 - base.boilerpipe.algorithm
        out.append(make(f"alg{other}", f"Boilerpipe Algorithm {other}", "algorithm",
                        base.with_(boilerpipe=replace(base.boilerpipe, algorithm=other))))
    if base.ancestor is not None and decides:
        out += [make(f"depth{d}", f"ancestor depth {d}", "depth", base.with_(ancestor=replace(base.ancestor, depth=d)))
                for d in DEPTHS if d != base.ancestor.depth]
    out += [make(f"filter{f}", f"link Filter {f}", "filters", base.with_(link_filter=f))
            for f in LINK_FILTERS if f != base.link_filter]
    out += [make(f"n{n}", f"{n} neighbour page{'s' if n > 1 else ''}", "neighbours", base, neighbours=n,
                 neighbour_only=True)
            for n in NEIGHBOUR_SIZES if n != neighbours]
    return out


def default_ablation_bases(configs: Mapping[str, ChainConfig] = CONFIGS) -> list[str]:
    """Names of the configurations ablated by default: ``default``; when it uses a learned classifier,
    also the first named configuration without one other than ``paper`` (the papers' chain as shipped
    before the classifier), else ``paper``, so the papers' stages are ablated where they decide."""
    bases = ["default"]
    if configs["default"].learned is not None:
        plain = [n for n, c in configs.items() if c.learned is None and n not in ("default", "paper")]
        bases += plain[:1] or [n for n in ("paper",) if n in configs]
    return bases


def describe_base(base: ChainConfig = DEFAULT_CONFIG, neighbours: int = DEFAULT_NEIGHBOURS) -> str:
    """One line naming the base's point in every ablation series (for the report header)."""
    if base.learned is not None:
        return (f"`{base.name}`: learned block classifier (Boilerpipe and ancestor filter as its features), "
                f"link filter {base.link_filter or 'none'}, {neighbours} neighbour pages")
    alg = base.boilerpipe.algorithm if base.boilerpipe else "off"
    depth = base.ancestor.depth if base.ancestor else "off"
    return (f"`{base.name}`: Boilerpipe Algorithm {alg}, ancestor depth {depth}, "
            f"link filter {base.link_filter or 'none'}, {neighbours} neighbour pages")


# ------------------------------------------------------------------------------------------- peers


@dataclass(frozen=True)
class PeerSpec:
    """A peer extractor: ``module`` to import (its absence skips the peer), ``dist`` the pip distribution
    (for its version), ``run`` the function from decoded HTML (str) to plain text (str)."""

    name: str
    module: str
    dist: str
    run: Callable[[str], str]


_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption",
    "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p",
    "pre", "section", "table", "td", "th", "tr", "ul",
})


def html_fragment_text(fragment: str) -> str:
    """Text of an HTML fragment with a line break at every block element (so ``</p><p>`` never glues
    two words together, as ``text_content()`` alone would). "" for an empty fragment."""
    import lxml.html

    if not fragment.strip():
        return ""
    root = lxml.html.fromstring(fragment)
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag in _BLOCK_TAGS:
            el.tail = "\n" + (el.tail or "")
    return root.text_content()


def run_trafilatura(html: str) -> str:
    """trafilatura as its benchmark runs it: main text, tables on, comments and formatting off."""
    import trafilatura

    return trafilatura.extract(html, include_comments=False, include_tables=True, include_formatting=False) or ""


def run_readability(html: str) -> str:
    """readability-lxml: text of ``Document(html).summary()`` (the article body; no title)."""
    from readability import Document

    return html_fragment_text(Document(html).summary(html_partial=True))


_LANG = re.compile(r"<html\b[^>]*?\blang\s*=\s*[\"']?([A-Za-z]{2,3})", re.I)
_JUSTEXT_LANGUAGES = {
    "ar": "Arabic", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fi": "Finnish", "fr": "French", "hu": "Hungarian", "it": "Italian",
    "nl": "Dutch", "no": "Norwegian_Bokmal", "nb": "Norwegian_Bokmal", "pl": "Polish", "pt": "Portuguese",
    "ro": "Romanian", "ru": "Russian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian",
}


def justext_language(html: str) -> str:
    """jusText stoplist name for the page's ``<html lang>`` (first 2-3 letters), English when unknown."""
    m = _LANG.search(html[:5000])
    return _JUSTEXT_LANGUAGES.get(m.group(1).lower()[:2], "English") if m else "English"


def run_justext(html: str) -> str:
    """jusText with default thresholds and the stoplist of the page's declared language (English default)."""
    import justext

    paragraphs = justext.justext(html, justext.get_stoplist(justext_language(html)))
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


def run_boilerpy3(html: str) -> str:
    """boilerpy3's ArticleExtractor (the Boilerpipe article model), failures as empty output."""
    from boilerpy3 import extractors

    return extractors.ArticleExtractor(raise_on_failure=False).get_content(html) or ""


def run_resiliparse(html: str) -> str:
    """resiliparse ``extract_plain_text(main_content=True)``."""
    from resiliparse.extract.html2text import extract_plain_text

    return extract_plain_text(html, main_content=True)


PEERS: dict[str, PeerSpec] = {
    "trafilatura": PeerSpec("trafilatura", "trafilatura", "trafilatura", run_trafilatura),
    "readability": PeerSpec("readability", "readability", "readability-lxml", run_readability),
    "justext": PeerSpec("justext", "justext", "jusText", run_justext),
    "boilerpy3": PeerSpec("boilerpy3", "boilerpy3.extractors", "boilerpy3", run_boilerpy3),
    "resiliparse": PeerSpec("resiliparse", "resiliparse.extract.html2text", "resiliparse", run_resiliparse),
}
#: Peers of ``--quick``: the two the targets name (:func:`newsclean_eval.report.target_checks`).
QUICK_PEERS = ("trafilatura", "readability")


def peer_version(spec: PeerSpec) -> str:
    """Installed version of the peer's distribution, "?" when unknown."""
    try:
        return version(spec.dist)
    except PackageNotFoundError:
        return "?"


def resolve_peers(names: Sequence[str], registry: Mapping[str, PeerSpec] = PEERS) -> tuple[list[System], list[str]]:
    """Peer systems for ``names`` (keys of ``registry``) whose library imports, and a note per skipped one.

    Raises KeyError for a name not in ``registry``.
    """
    systems, notes = [], []
    for name in names:
        spec = registry[name]
        try:
            importlib.import_module(spec.module)
        except Exception as exc:  # noqa: BLE001 - ImportError, or a broken install raising anything else
            notes.append(f"peer {name} skipped: `{spec.module}` does not import ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''}); `pip install -e '.[eval]'` installs it")
            continue
        systems.append(System(name, f"{name} {peer_version(spec)}", "peer"))
    return systems, notes

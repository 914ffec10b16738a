"""A synthetic, deterministic news network for ``newsclean demo`` (no network access at all).

Three sites with clearly different templates, two categories each, ``articles_per_category`` articles
per category (10 by default):

* **The Daily Ledger** (``ledger``: politics, business): an old-school table layout with ``<font>`` tags,
  upper-case markup, Windows-1252 bytes declared as ISO-8859-1 in the HTTP header, dated ``.html`` URLs.
* **Metro Courier** (``courier``: sports, technology): a div/class layout (``#wrapper``, ``.story-body``,
  sidebar widgets), UTF-8 declared in the HTTP header, extension-less URLs.
* **Harbor Post** (``harbor``: science, culture): HTML5 ``header/nav/main/article/section/aside/footer``,
  charset only in ``<meta charset>``, trailing-slash URLs, a ``robots.txt`` that disallows ``/search``.

Every article page carries the usual noise: navigation menus, breadcrumbs, share bars, ads, related-link
boxes, "most read" lists, reader comments (long, paragraph-like: a real trap), newsletter forms and
copyright footers. Each category has two index pages (the second reached by an "older stories" link),
and each site a home page and a few static pages (about, contact, privacy), all interlinked.

Article text is generated from seeded ``random.Random`` over templates and a vocabulary, so it reads
like news; paragraphs may hold inline links and ``<em>``. The **gold text** of an article is its
headline, its standfirst when the template shows one, its body paragraphs and its sub-headings, joined
by blank lines (the msv-big9 convention: headline first); bylines, captions and everything else on the
page are noise. The same ``seed`` gives byte-identical sites.
"""

from __future__ import annotations

import html
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from newsclean.demo.localsite import StaticSite
from newsclean.demo.served import ServedNetwork

# ------------------------------------------------------------------------------------- vocabulary

FIRST = ["Maria", "James", "Aisha", "Tomasz", "Elena", "David", "Priya", "Samuel", "Chloé", "Kwame", "Hannah",
         "Luis", "Mei", "Robert", "Fatima", "Jonas", "Grace", "Omar", "Ingrid", "Peter", "José", "Naomi"]
LAST = ["Alvarez", "Whitfield", "Okafor", "Lindqvist", "Brennan", "Nakamura", "Castellano", "Hughes", "Mbeki",
        "Rourke", "Sandoval", "Petrov", "Lambert", "Oyelaran", "Fischer", "Delacroix", "Thornton", "Peña"]
PLACES = ["Port Alder", "Eastbrook", "Millford", "Carrow County", "New Halden", "Riverside", "Ashgrove",
          "Lake Merrin", "Stonebridge", "the Upper Valley", "Greywater", "North Fenwick"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PERIODS = ["the year", "the quarter", "the summer", "next spring", "the decade", "the season"]
HANDLES = ["riverwatcher", "JKL_1972", "concerned_parent", "old_timer", "mfenwick", "TruthSeeker88", "anna_b",
           "localguy", "skeptic42", "greenthumb", "Deb R.", "night_owl"]

# Per category: roles, organisations, things (noun phrases), actions (verb phrases), events, quotes,
# consequences and benefits. Kept small; templates combine them.
TOPICS: dict[str, dict[str, list[str]]] = {
    "politics": {
        "role": ["mayor", "state senator", "council member", "city manager", "party chair", "governor"],
        "org": ["the city council", "the state legislature", "the Department of Transportation",
                "the election commission", "the governor's office", "the budget committee"],
        "thing": ["the transit levy", "the housing bill", "the new district map", "the school funding plan",
                  "the property tax freeze", "the ethics reform package", "the water rights agreement"],
        "action": ["approve", "delay", "revise", "put to a public vote", "block", "fund"],
        "event": ["town hall meeting", "budget hearing", "special election", "committee vote"],
        "quote": ["We owe the voters a straight answer on this", "Nobody in this building wanted to raise fees",
                  "The numbers simply do not add up", "This is a compromise that both sides can live with"],
        "consequence": ["push rents even higher", "leave rural districts underfunded", "stall for another year"],
        "benefit": ["bring long-overdue repairs", "give families some relief", "restore trust in the process"],
    },
    "business": {
        "role": ["chief executive", "chief financial officer", "analyst", "founder", "union representative"],
        "org": ["Halden Foods", "the regional chamber of commerce", "Merrin Bank", "Stonebridge Logistics",
                "the port authority", "Greywater Energy"],
        "thing": ["the merger", "quarterly earnings", "the new distribution centre", "the wage agreement",
                  "the expansion plan", "interest rates", "the supply contract"],
        "action": ["announce", "renegotiate", "scale back", "finalise", "invest in", "review"],
        "event": ["shareholder meeting", "trade fair", "earnings call", "job fair"],
        "quote": ["Demand has been stronger than anyone expected", "We are not planning any layoffs",
                  "Customers are watching every dollar right now", "The next two quarters will be decisive"],
        "consequence": ["cost hundreds of jobs", "squeeze smaller suppliers", "raise prices for shoppers"],
        "benefit": ["create new jobs", "lower shipping costs", "keep the plant open"],
    },
    "sports": {
        "role": ["head coach", "team captain", "general manager", "striker", "goalkeeper", "athletic director"],
        "org": ["the Port Alder Mariners", "the Eastbrook Rovers", "the league office", "the Millford Hawks",
                "the state athletics board", "the Riverside Comets"],
        "thing": ["the playoff race", "the new stadium", "the transfer window", "the injury list",
                  "the home opener", "the championship series", "the training camp"],
        "action": ["rebuild", "sign", "appeal", "postpone", "extend", "reschedule"],
        "event": ["derby", "season opener", "final", "charity match"],
        "quote": ["We played with heart for ninety minutes", "The locker room believes in this group",
                  "You cannot give a team like that second chances", "Our fans deserved a better result"],
        "consequence": ["cost them a playoff spot", "hurt ticket sales", "leave the defence thin"],
        "benefit": ["give young players a chance", "bring the title back home", "boost attendance"],
    },
    "technology": {
        "role": ["software engineer", "product manager", "security researcher", "chief technology officer"],
        "org": ["Ashgrove Labs", "the city's IT department", "Fenwick Systems", "a Greywater start-up",
                "the broadband authority", "Lindqvist Robotics"],
        "thing": ["the broadband rollout", "the data breach", "the new chip plant", "the ride-hailing app",
                  "the open data portal", "the battery recycling pilot", "the software update"],
        "action": ["launch", "patch", "audit", "open-source", "test", "roll back"],
        "event": ["developer conference", "hackathon", "product launch", "security summit"],
        "quote": ["Security has to be built in from day one", "Users should not have to read the manual",
                  "We found the flaw during a routine review", "Rural customers have waited long enough"],
        "consequence": ["expose customer records", "leave older phones behind", "drive up energy use"],
        "benefit": ["speed up service", "cut costs for schools", "make the network more reliable"],
    },
    "science": {
        "role": ["marine biologist", "climate scientist", "astronomer", "professor of geology", "epidemiologist"],
        "org": ["the University of New Halden", "the Merrin Institute", "the national weather service",
                "the coastal research station", "the state museum", "the observatory on Stonebridge Hill"],
        "thing": ["the coral survey", "the new telescope", "the drought study", "the vaccine trial",
                  "the fossil find", "the river sediment samples", "the bird migration data"],
        "action": ["publish", "replicate", "expand", "fund", "revisit", "measure"],
        "event": ["research expedition", "public lecture", "field season", "annual conference"],
        "quote": ["The data surprised even the most cautious members of the team",
                  "We need another decade of measurements", "This changes how we read the fossil record",
                  "Nature rarely follows the textbook"],
        "consequence": ["threaten the fisheries", "delay the next mission", "raise flood risk downstream"],
        "benefit": ["improve storm forecasts", "protect the wetlands", "train a new generation of researchers"],
    },
    "culture": {
        "role": ["director", "curator", "novelist", "festival organiser", "composer", "choreographer"],
        "org": ["the Ashgrove Theatre", "the city orchestra", "the public library", "the Greywater Film Society",
                "the modern art museum", "the folk music festival"],
        "thing": ["the retrospective", "the new season", "the restoration project", "the book prize",
                  "the street art programme", "the opera premiere", "the archive of letters"],
        "action": ["unveil", "cancel", "tour", "celebrate", "reopen", "commission"],
        "event": ["opening night", "book fair", "gallery tour", "open-air concert"],
        "quote": ["Art has to meet people where they live", "The audience told us what they wanted to see",
                  "Every archive is a story waiting for a reader", "We wanted the music to feel dangerous"],
        "consequence": ["price out younger audiences", "close the east gallery", "lose its last sponsor"],
        "benefit": ["bring new visitors downtown", "give local artists a stage", "keep the tradition alive"],
    },
}

SENTENCES = [
    "{Person}, the {role} of {org}, said on {day} that {org2} would {action} {thing} before the end of {period}.",
    "The decision follows months of debate over {thing} in {place}.",
    '"{quote}," said {person}, a {role} who has followed {thing} for years.',
    "According to figures released by {org}, interest in {thing} has risen by {num} percent since {period2}.",
    "Critics argue that {thing} could {consequence}, while supporters say it will {benefit}.",
    "{Org} did not immediately respond to a request for comment on {day}.",
    "The {event} is expected to draw about {big} people to {place} next {day}.",
    "Officials in {place} have been reviewing {thing} since {month}, when the first proposals were made public.",
    "{Person} said the plan would {benefit}, but warned that it could also {consequence}.",
    "In a statement, {org} said it remained committed to {thing} and would share more details at the {event}.",
    "Residents who spoke at the {event} were divided, with several asking whether {org} had moved too quickly.",
    "{Num} people signed a petition in {month} asking {org} to {action} {thing}.",
    "It is the {ordinal} time in {small} years that {place} has faced such a choice.",
    '"{quote}," {person} told reporters after the {event}.',
    "Observers expect a final answer by {month}, although {person} cautioned that talks could drag on.",
]
SUBHEADS = ["What happens next", "A long road", "Questions remain", "The view from {place}", "Money matters",
            "Looking ahead", "Behind the numbers"]
HEADLINES = ["{Org} moves to {action} {thing}", "{Place} divided over {thing}", "{Person} vows to {action} {thing}",
             "Inside the fight over {thing}", "{Thing} faces new test in {place}", "Why {thing} matters to {place}"]
COMMENTS = [
    "I have lived in {place} for {small} years and I have never seen anything like this. Somebody needs to ask harder questions about {thing}.",
    "Great reporting as always. I would like to know who is actually paying for {thing}, because it is never the people making the decisions.",
    "This is exactly what we were warned about. {Org} keeps promising to {benefit} and nothing ever changes.",
    "Finally some good news. My family has been waiting for this since {month}.",
    "Does anyone know whether the {event} will be streamed online? Not all of us can get to {place} on a {day}.",
]
ADS = ["Refinance today: rates from 3.9% APR", "Hearing aids at half the price - free trial",
       "Top 10 weekend getaways near {place}", "Local singles are waiting for you", "Sponsored: the smartest way to save"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
ORDINALS = ["second", "third", "fourth", "fifth"]


# --------------------------------------------------------------------------------- text generation


@dataclass(frozen=True)
class Block:
    """One body block: ``tag`` (``p`` or ``h2``), its inner ``html`` and its plain ``text`` (same words)."""

    tag: str
    html: str
    text: str


@dataclass
class Story:
    """One generated article: where it lives and what it says (``blocks`` = body, in order)."""

    site: str
    category: str
    path: str
    headline: str
    dek: str
    author: str
    day: date
    blocks: list[Block] = field(default_factory=list)
    comments: list[tuple[str, str]] = field(default_factory=list)
    caption: str = ""

    def gold(self, with_dek: bool) -> str:
        """Gold text: headline, standfirst when shown (``with_dek``), then body blocks; blank-line separated."""
        parts = [self.headline] + ([self.dek] if with_dek else []) + [b.text for b in self.blocks]
        return "\n\n".join(parts)

    def teaser(self) -> str:
        """The first sentence of the first paragraph (for index pages)."""
        first = next(b.text for b in self.blocks if b.tag == "p")
        return first.split(". ")[0].rstrip(".") + "."


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class _Writer:
    """Fills sentence templates for one category from a seeded ``random.Random``."""

    def __init__(self, rng: random.Random, category: str):
        self.rng, self.topic = rng, TOPICS[category]

    def person(self) -> str:
        """A random "First Last" name."""
        return f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"

    def slots(self) -> dict[str, str]:
        """Values for every placeholder (lower-case key; the capitalised key gives the capitalised value)."""
        r, t = self.rng, self.topic
        org, org2 = r.sample(t["org"], 2)
        values = {
            "person": self.person(), "role": r.choice(t["role"]), "org": org, "org2": org2,
            "thing": r.choice(t["thing"]), "action": r.choice(t["action"]), "event": r.choice(t["event"]),
            "quote": r.choice(t["quote"]), "consequence": r.choice(t["consequence"]),
            "benefit": r.choice(t["benefit"]), "place": r.choice(PLACES), "day": r.choice(DAYS),
            "period": r.choice(PERIODS), "period2": r.choice(["last year", "2019", "the spring", "the pandemic"]),
            "month": r.choice(MONTHS), "num": str(r.randint(3, 48)), "big": f"{r.randint(2, 40) * 500:,}",
            "small": str(r.randint(3, 30)), "ordinal": r.choice(ORDINALS),
        }
        values.update({k[:1].upper() + k[1:]: _cap(v) for k, v in list(values.items())})
        return values

    def fill(self, template: str, link_to: str | None = None, emphasis: bool = False) -> tuple[str, str]:
        """``(html, text)`` of one filled template; one noun phrase may become a link or ``<em>``."""
        values = self.slots()
        fancy = {k: html.escape(v, quote=False) for k, v in values.items()}
        keys = [k for k in ("thing", "org", "place", "event") if "{" + k + "}" in template]
        if keys and (link_to or emphasis):
            k = self.rng.choice(keys)
            fancy[k] = (f'<a href="{link_to}">{fancy[k]}</a>' if link_to else f"<em>{fancy[k]}</em>")
        escaped = html.escape(template, quote=False)
        return escaped.format(**fancy), template.format(**values)

    def paragraph(self, link_pool: list[str]) -> Block:
        """A paragraph of 2-4 sentences; about one in three carries an inline link, one in four an ``<em>``."""
        parts = []
        for _ in range(self.rng.randint(2, 4)):
            link = self.rng.choice(link_pool) if link_pool and self.rng.random() < 0.12 else None
            parts.append(self.fill(self.rng.choice(SENTENCES), link, emphasis=self.rng.random() < 0.08))
        return Block("p", " ".join(h for h, _ in parts), " ".join(t for _, t in parts))

    def subhead(self) -> Block:
        """An ``h2`` sub-heading block."""
        h, t = self.fill(self.rng.choice(SUBHEADS))
        return Block("h2", h, t)

    def headline(self) -> str:
        """A plain-text headline."""
        return self.fill(self.rng.choice(HEADLINES))[1]

    def comment(self) -> tuple[str, str]:
        """A reader comment: ``(handle, text)``."""
        return self.rng.choice(HANDLES), self.fill(self.rng.choice(COMMENTS))[1]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("é", "e").replace("ñ", "n")).strip("-")[:60].strip("-")


def _story(w: _Writer, site: str, category: str, path_for: Callable[[str, date], str], day: date,
           taken: set[str]) -> Story:
    headline = w.headline()
    slug, n = _slug(headline), 2
    while slug in taken:
        slug, n = f"{_slug(headline)}-{n}", n + 1
    taken.add(slug)
    dek = w.fill(w.rng.choice(SENTENCES))[1]
    story = Story(site, category, path_for(slug, day), headline, dek, w.person(), day)
    story.caption = f"{w.fill('{Place}, {day}.')[1]} Photo: {w.person()}"
    story.comments = [w.comment() for _ in range(w.rng.randint(2, 5))]
    return story


def _fill_body(w: _Writer, story: Story, link_pool: list[str], subheads: bool) -> None:
    count = w.rng.randint(5, 8)
    for i in range(count):
        if subheads and i in (2, 5) and i < count - 1:
            story.blocks.append(w.subhead())
        story.blocks.append(w.paragraph([p for p in link_pool if p != story.path]))


# ------------------------------------------------------------------------------------ site shapes


@dataclass(frozen=True)
class SiteSpec:
    """How a site looks: ``name``, display ``title``, ``categories`` (slug -> label), URL shapes,
    ``render`` (the template module), the bytes' ``encoding`` and the HTTP ``content_type``."""

    name: str
    title: str
    categories: dict[str, str]
    article_path: Callable[[str, str, date], str]
    index_paths: Callable[[str], tuple[str, str]]
    render: Template
    encoding: str
    content_type: str
    with_dek: bool
    subheads: bool
    robots: str = "User-agent: *\nAllow: /\n"
    article_allow: str = ""  # regex of article URLs for sites.toml (the crawl stores only these)
    listing_allow: str = ""  # regex of listing pages past the first (pagination)
    category_pattern: str = ""  # regex whose group 1 is the category in an article URL (sites.toml category_from "url")


@dataclass
class SiteContext:
    """What a template needs besides the story: the spec, all stories of the site and a seeded rng."""

    spec: SiteSpec
    stories: list[Story]
    rng: random.Random

    def pick(self, k: int, exclude: Story | None = None, category: str | None = None) -> list[Story]:
        """``k`` random stories of the site (of ``category`` when given), never ``exclude``."""
        pool = [s for s in self.stories if s is not exclude and (category is None or s.category == category)]
        return self.rng.sample(pool, min(k, len(pool)))

    def ad(self) -> str:
        """An HTML-escaped advertisement line."""
        return html.escape(self.rng.choice(ADS).format(place=self.rng.choice(PLACES)))


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _links(stories: list[Story], fmt: str) -> str:
    return "".join(fmt.format(href=s.path, text=_esc(s.headline)) for s in stories)


class Template:
    """Renders the pages of one site layout. Subclasses fill the abstract methods."""

    def article(self, story: Story, ctx: SiteContext) -> str:
        """Full HTML of an article page."""
        raise NotImplementedError

    def index(self, title: str, items: list[Story], more: str | None, ctx: SiteContext) -> str:
        """Full HTML of a listing page (headline + teaser per item, "older" link to ``more`` when given)."""
        raise NotImplementedError

    def static(self, title: str, text: str, ctx: SiteContext) -> str:
        """Full HTML of a static page (about, contact, ...)."""
        raise NotImplementedError


STATIC_PAGES = {
    "/about.html": ("About us", "{title} has covered {place} and the surrounding region since 1921. Our newsroom "
                    "is independent and funded by readers and advertisers."),
    "/contact.html": ("Contact", "Write to the newsroom at the address below or call the news desk. Corrections "
                      "are published every weekday on page two."),
    "/privacy.html": ("Privacy policy", "We use cookies to measure readership and to show advertising. You can "
                      "change your choices at any time in the settings of your browser."),
}


# ----------------------------------------------------------------------------------- the templates


class LedgerTemplate(Template):
    """Old-school table layout: nested tables, ``<font>``, upper-case tags, ``<br>`` separated lists."""

    def _nav(self, ctx: SiteContext) -> str:
        cats = " | ".join(f'<A HREF="{ctx.spec.index_paths(c)[0]}">{l}</A>' for c, l in ctx.spec.categories.items())
        return (f'<TR><TD COLSPAN="3" CLASS="topnav" BGCOLOR="#003366"><FONT COLOR="#FFFFFF" SIZE="2">'
                f'<A HREF="/">Home</A> | {cats} | <A HREF="/about.html">About Us</A> | '
                f'<A HREF="/contact.html">Contact</A></FONT></TD></TR>')

    def _left(self, ctx: SiteContext) -> str:
        most = _links(ctx.pick(5), '<LI><FONT SIZE="1"><A HREF="{href}">{text}</A></FONT></LI>')
        cats = "".join(f'<A HREF="{ctx.spec.index_paths(c)[0]}">{l}</A><BR>' for c, l in ctx.spec.categories.items())
        return (f'<TD WIDTH="160" VALIGN="top" CLASS="leftnav" BGCOLOR="#EEEEEE"><FONT SIZE="2"><B>Sections</B><BR>'
                f'{cats}<A HREF="/">Front Page</A><BR></FONT><BR><B>Most Read</B><OL>{most}</OL>'
                f'<FONT SIZE="1">Weather: {ctx.rng.randint(40, 80)}&deg;F, partly cloudy</FONT></TD>')

    def _right(self, ctx: SiteContext) -> str:
        return (f'<TD WIDTH="180" VALIGN="top" CLASS="rightcol"><TABLE BORDER="1" CELLPADDING="4"><TR><TD>'
                f'<FONT SIZE="1">ADVERTISEMENT</FONT><BR><A HREF="#ad">{ctx.ad()}</A></TD></TR></TABLE><BR>'
                f'<FORM ACTION="/subscribe" METHOD="post"><FONT SIZE="2"><B>Free e-mail edition</B><BR>'
                f'Get the Ledger in your inbox every morning.</FONT><BR><INPUT TYPE="text" NAME="email">'
                f'<INPUT TYPE="submit" VALUE="Sign up"></FORM><BR><TABLE BORDER="1" CELLPADDING="4"><TR><TD>'
                f'<FONT SIZE="1">ADVERTISEMENT</FONT><BR><A HREF="#ad2">{ctx.ad()}</A></TD></TR></TABLE></TD>')

    def _page(self, title: str, center: str, ctx: SiteContext) -> str:
        today = date(2024, 3, 29).strftime("%A, %B %d, %Y")
        return (f'<HTML><HEAD><TITLE>{_esc(title)} - {ctx.spec.title}</TITLE>\n'
                f'<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-1">\n'
                f'<SCRIPT LANGUAGE="JavaScript">var adZone = "news"; function popUp(u) {{ window.open(u); }}</SCRIPT>'
                f'</HEAD>\n<BODY BGCOLOR="#FFFFFF" TOPMARGIN="0" LEFTMARGIN="0">\n'
                f'<TABLE WIDTH="100%" CELLPADDING="0" CELLSPACING="0" BORDER="0">\n'
                f'<TR><TD COLSPAN="3" CLASS="masthead"><A HREF="/"><IMG SRC="/img/ledger-logo.gif" BORDER="0" '
                f'ALT="{ctx.spec.title}"></A> <FONT SIZE="1">{today}</FONT></TD></TR>\n{self._nav(ctx)}\n<TR>'
                f'{self._left(ctx)}\n<TD VALIGN="top" CLASS="storycell">{center}</TD>\n{self._right(ctx)}</TR>\n'
                f'<TR><TD COLSPAN="3" CLASS="footer" ALIGN="center"><FONT SIZE="1">Copyright &copy; 2024 '
                f'{ctx.spec.title} Publishing Co. All rights reserved. | <A HREF="/privacy.html">Privacy Policy</A> | '
                f'<A HREF="/about.html">About Us</A> | <A HREF="/contact.html">Contact Us</A></FONT></TD></TR>\n'
                f'</TABLE></BODY></HTML>\n')

    def article(self, story: Story, ctx: SiteContext) -> str:
        label = ctx.spec.categories[story.category]
        paras = "\n".join(f'<P><FONT FACE="Times New Roman" SIZE="3">{b.html}</FONT></P>' if b.tag == "p"
                          else f"<P><B>{b.html}</B></P>" for b in story.blocks)
        related = _links(ctx.pick(3, story, story.category), '<A HREF="{href}">{text}</A><BR>')
        comments = "".join(f'<TR><TD><FONT SIZE="1"><B>{_esc(u)}</B> wrote:</FONT><BR><FONT SIZE="2">{_esc(t)}'
                           f'</FONT></TD></TR>' for u, t in story.comments)
        center = (f'<FONT SIZE="1" CLASS="crumbs"><A HREF="/">Home</A> &gt; <A HREF="{ctx.spec.index_paths(story.category)[0]}">'
                  f'{label}</A></FONT>\n<H1><FONT FACE="Georgia">{_esc(story.headline)}</FONT></H1>\n'
                  f'<FONT SIZE="2" COLOR="#666666">By {_esc(story.author)}, Staff Writer<BR>'
                  f'{story.day.strftime("%B %d, %Y")}</FONT>\n<TABLE CLASS="sharetools"><TR><TD><A HREF="#email">'
                  f'E-mail this story</A></TD><TD><A HREF="#print">Printer-friendly version</A></TD><TD>'
                  f'<A HREF="#share">Share</A></TD></TR></TABLE>\n{paras}\n'
                  f'<TABLE CLASS="related" WIDTH="100%" BGCOLOR="#F5F5DC"><TR><TD><B>Related Stories</B><BR>'
                  f'{related}</TD></TR></TABLE>\n<P><B>Reader comments ({len(story.comments)})</B></P>'
                  f'<TABLE CLASS="comments" WIDTH="100%">{comments}</TABLE>')
        return self._page(story.headline, center, ctx)

    def index(self, title, items, more, ctx) -> str:
        rows = "".join(f'<P><A HREF="{s.path}"><B>{_esc(s.headline)}</B></A><BR><FONT SIZE="2">{_esc(s.teaser())}'
                       f'</FONT></P>' for s in items)
        older = f'<P><A HREF="{more}">Older stories &raquo;</A></P>' if more else ""
        return self._page(title, f"<H2>{_esc(title)}</H2>{rows}{older}", ctx)

    def static(self, title, text, ctx) -> str:
        return self._page(title, f"<H2>{_esc(title)}</H2><P>{_esc(text)}</P>", ctx)


class CourierTemplate(Template):
    """Div/class layout: ``#wrapper``, ``#header``, ``#nav ul.menu``, ``.story-body``, sidebar widgets."""

    def _head(self, title: str, ctx: SiteContext) -> str:
        return (f'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" '
                f'"http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n<html><head>'
                f"<title>{_esc(title)} | {ctx.spec.title}</title>\n<style>.ad{{border:1px solid #ccc}}</style>\n"
                f"<script>var _gaq = _gaq || []; _gaq.push(['_trackPageview']);</script></head>\n")

    def _top(self, ctx: SiteContext, crumbs: str) -> str:
        menu = "".join(f'<li><a href="{ctx.spec.index_paths(c)[0]}">{l}</a></li>' for c, l in ctx.spec.categories.items())
        return (f'<div id="header"><div class="logo"><a href="/">{ctx.spec.title}</a></div><div class="header-ad">'
                f'<div class="ad ad-leaderboard"><span class="ad-label">Advertisement</span> <a href="#ad">{ctx.ad()}'
                f'</a></div></div></div>\n<div id="nav"><ul class="menu"><li><a href="/">Home</a></li>{menu}'
                f'<li><a href="/about.html">About</a></li></ul></div>\n<div class="breadcrumbs">{crumbs}</div>\n')

    def _sidebar(self, ctx: SiteContext) -> str:
        most = _links(ctx.pick(5), '<li><a href="{href}">{text}</a></li>')
        return (f'<div class="sidebar"><div class="widget most-read"><h3>Most Read</h3><ol>{most}</ol></div>'
                f'<div class="widget newsletter"><h3>Courier Daily</h3><p>The day\'s top stories, every evening at '
                f'six.</p><form action="/newsletter" method="post"><input type="email" name="email" '
                f'placeholder="Your e-mail"><button type="submit">Subscribe</button></form></div>'
                f'<div class="widget ad ad-box"><span class="ad-label">Advertisement</span><p><a href="#ad3">'
                f'{ctx.ad()}</a></p></div></div>\n')

    def _footer(self, ctx: SiteContext) -> str:
        return (f'<div id="footer"><ul class="footer-links"><li><a href="/about.html">About</a></li>'
                f'<li><a href="/contact.html">Contact</a></li><li><a href="/privacy.html">Privacy</a></li></ul>'
                f'<p class="copyright">&copy; 2024 {ctx.spec.title} Media Group. All rights reserved. '
                f'No part of this site may be reproduced without permission.</p></div>\n')

    def _page(self, title: str, main: str, ctx: SiteContext, crumbs: str) -> str:
        return (f'{self._head(title, ctx)}<body class="page">\n<div id="wrapper">\n{self._top(ctx, crumbs)}'
                f'<div id="content" class="clearfix"><div class="main-col">{main}</div>\n{self._sidebar(ctx)}</div>\n'
                f'{self._footer(ctx)}</div></body></html>\n')

    def article(self, story: Story, ctx: SiteContext) -> str:
        cat_index = ctx.spec.index_paths(story.category)[0]
        label = ctx.spec.categories[story.category]
        crumbs = f'<a href="/">Home</a> &rsaquo; <a href="{cat_index}">{label}</a> &rsaquo; <span>{_esc(story.headline)}</span>'
        body = []
        for i, b in enumerate(story.blocks):
            body.append(f"<{b.tag}>{b.html}</{b.tag}>" if b.tag == "p" else f"<h3>{b.html}</h3>")
            if i == 2:
                body.append(f'<div class="inline-ad ad"><span class="ad-label">Advertisement</span> <a href="#ad4">'
                            f'{ctx.ad()}</a></div>')
        related = _links(ctx.pick(4, story, story.category), '<li><a href="{href}">{text}</a></li>')
        comments = "".join(f'<div class="comment"><div class="comment-author">{_esc(u)} <span class="when">'
                           f'{ctx.rng.randint(1, 23)} hours ago</span></div><div class="comment-body"><p>{_esc(t)}</p>'
                           f'</div><div class="comment-actions"><a href="#reply">Reply</a> <a href="#flag">Report</a>'
                           f'</div></div>' for u, t in story.comments)
        main = (f'<div class="story"><h1 class="story-title">{_esc(story.headline)}</h1><div class="story-meta">'
                f'<span class="byline">By {_esc(story.author)}</span> <span class="timestamp">Updated '
                f'{story.day.strftime("%b %d, %Y")} {ctx.rng.randint(1, 12)}:{ctx.rng.randint(10, 59)} PM</span></div>'
                f'<div class="share-bar"><a class="share-fb" href="#fb">Facebook</a> <a class="share-tw" href="#tw">'
                f'Twitter</a> <a class="share-mail" href="#mail">Email</a> <span class="count">{ctx.rng.randint(5, 900)}'
                f' shares</span></div>\n<div class="story-body"><div class="text">\n' + "\n".join(body) +
                f'\n</div></div><div class="tags">Tags: <a href="{cat_index}">{label}</a></div></div>\n'
                f'<div class="related-box"><h3>More from {label}</h3><ul>{related}</ul></div>\n'
                f'<div id="comments"><h3>{len(story.comments)} Comments</h3>{comments}<form class="comment-form" '
                f'action="/comment" method="post"><textarea name="c">Join the discussion</textarea><button>Post'
                f'</button></form></div>')
        return self._page(story.headline, main, ctx, crumbs)

    def index(self, title, items, more, ctx) -> str:
        crumbs = f'<a href="/">Home</a> &rsaquo; <span>{_esc(title)}</span>'
        rows = "".join(f'<div class="teaser"><h2><a href="{s.path}">{_esc(s.headline)}</a></h2><p class="summary">'
                       f'{_esc(s.teaser())}</p></div>' for s in items)
        older = f'<div class="pager"><a class="next" href="{more}">Next page &rsaquo;</a></div>' if more else ""
        return self._page(title, f'<div class="section-front"><h1>{_esc(title)}</h1>{rows}{older}</div>', ctx, crumbs)

    def static(self, title, text, ctx) -> str:
        return self._page(title, f'<div class="page-text"><h1>{_esc(title)}</h1><p>{_esc(text)}</p></div>', ctx,
                          '<a href="/">Home</a>')


class HarborTemplate(Template):
    """HTML5 layout: ``header/nav``, ``main > article > header + figure + section``, ``aside``, ``footer``."""

    def _page(self, title: str, main: str, ctx: SiteContext, crumbs: list[tuple[str, str]]) -> str:
        nav = "".join(f'<li><a href="{ctx.spec.index_paths(c)[0]}">{l}</a></li>' for c, l in ctx.spec.categories.items())
        trail = "".join(f'<li><a href="{h}">{_esc(t)}</a></li>' for h, t in crumbs)
        most = _links(ctx.pick(5), '<li><a href="{href}">{text}</a></li>')
        return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" '
                f'content="width=device-width, initial-scale=1"><title>{_esc(title)} — {ctx.spec.title}</title>'
                f'<meta property="og:site_name" content="{ctx.spec.title}"></head>\n<body>\n'
                f'<header class="site-header"><a class="brand" href="/">{ctx.spec.title}</a><nav class="primary-nav" '
                f'aria-label="Sections"><ul><li><a href="/">Front page</a></li>{nav}</ul></nav><form role="search" '
                f'action="/search"><input name="q" placeholder="Search"></form></header>\n<main id="main">\n'
                f'<nav class="crumbs" aria-label="Breadcrumb"><ol>{trail}</ol></nav>\n{main}\n'
                f'<aside class="rail"><section class="most-read"><h2>Most read</h2><ol>{most}</ol></section>'
                f'<section class="newsletter"><h2>The Morning Tide</h2><p>Our best journalism in your inbox, '
                f'free, every weekday.</p><form action="/newsletter" method="post"><label>Email <input '
                f'type="email" name="e"></label><button>Sign me up</button></form></section><div class="ad" '
                f'data-slot="rail-1"><small>Advertisement</small><p><a href="#ad">{ctx.ad()}</a></p></div></aside>\n'
                f'</main>\n<footer class="site-footer"><nav><a href="/about.html">About</a> · <a href="/contact.html">'
                f'Contact</a> · <a href="/privacy.html">Privacy</a></nav><p><small>© 2024 {ctx.spec.title} Media. '
                f'All rights reserved.</small></p></footer>\n</body></html>\n')

    def article(self, story: Story, ctx: SiteContext) -> str:
        label = ctx.spec.categories[story.category]
        cat_index = ctx.spec.index_paths(story.category)[0]
        body = []
        for i, b in enumerate(story.blocks):
            body.append(f"<{b.tag}>{b.html}</{b.tag}>")
            if i == 3:
                more = _links(ctx.pick(2, story, story.category), '<li><a href="{href}">{text}</a></li>')
                body.append(f'<aside class="inline-related"><h4>Read more</h4><ul>{more}</ul></aside>')
        comments = "".join(f'<article class="comment"><header><b>{_esc(u)}</b> <time>{ctx.rng.randint(1, 9)}d'
                           f'</time></header><p>{_esc(t)}</p></article>' for u, t in story.comments)
        main = (f'<article class="story" itemscope itemtype="https://schema.org/NewsArticle">\n<header '
                f'class="story__header"><p class="kicker">{label}</p><h1 itemprop="headline">{_esc(story.headline)}'
                f'</h1><p class="story__dek">{_esc(story.dek)}</p><address class="byline">By {_esc(story.author)}'
                f'</address> <time datetime="{story.day.isoformat()}">{story.day.strftime("%d %B %Y")}</time>'
                f'</header>\n<figure class="lead-image"><img src="/media/{ctx.rng.randint(1000, 9999)}.jpg" alt="">'
                f'<figcaption>{_esc(story.caption)}</figcaption></figure>\n<section class="story__body" '
                f'itemprop="articleBody">\n' + "\n".join(body) + '\n</section>\n<footer class="story__footer"><ul '
                f'class="share"><li><button data-share="facebook">Share</button></li><li><button data-share="x">'
                f'Post</button></li><li><button data-share="link">Copy link</button></li></ul></footer>\n</article>\n'
                f'<section class="comments" id="comments"><h2>Comments ({len(story.comments)})</h2>{comments}</section>')
        return self._page(story.headline, main, ctx, [("/", "Home"), (cat_index, label)])

    def index(self, title, items, more, ctx) -> str:
        cards = "".join(f'<article class="card"><h3><a href="{s.path}">{_esc(s.headline)}</a></h3><p>'
                        f'{_esc(s.teaser())}</p></article>' for s in items)
        older = f'<nav class="pagination"><a rel="next" href="{more}">Older stories</a></nav>' if more else ""
        return self._page(title, f'<section class="section-list"><h1>{_esc(title)}</h1>{cards}{older}</section>', ctx,
                          [("/", "Home")])

    def static(self, title, text, ctx) -> str:
        return self._page(title, f'<section class="page"><h1>{_esc(title)}</h1><p>{_esc(text)}</p></section>', ctx,
                          [("/", "Home")])


SPECS = [
    SiteSpec("ledger", "The Daily Ledger", {"politics": "Politics", "business": "Business"},
             lambda c, slug, d: f"/{c}/{d:%Y/%m/%d}/{slug}.html", lambda c: (f"/{c}/", f"/{c}/index2.html"),
             LedgerTemplate(), "cp1252", "text/html; charset=iso-8859-1", with_dek=False, subheads=False,
             article_allow=r"/\d{4}/\d{2}/\d{2}/[^/]+\.html$", listing_allow=r"/index\d+\.html$",
             category_pattern=r"^https?://[^/]+/([a-z]+)/\d{4}/"),
    SiteSpec("courier", "Metro Courier", {"sports": "Sports", "technology": "Technology"},
             lambda c, slug, d: f"/news/{c}/{slug}-{d:%Y%m%d}", lambda c: (f"/news/{c}/", f"/news/{c}/page/2/"),
             CourierTemplate(), "utf-8", "text/html; charset=utf-8", with_dek=False, subheads=True,
             article_allow=r"/news/[a-z]+/[a-z0-9-]+-\d{8}$", listing_allow=r"/news/[a-z]+/page/\d+/$",
             category_pattern=r"/news/([a-z]+)/"),
    SiteSpec("harbor", "Harbor Post", {"science": "Science", "culture": "Culture"},
             lambda c, slug, d: f"/{c}/{d:%Y/%m}/{slug}/", lambda c: (f"/{c}/", f"/{c}/page-2/"),
             HarborTemplate(), "utf-8", "text/html", with_dek=True, subheads=True,
             robots="User-agent: *\nDisallow: /search\n",
             article_allow=r"/\d{4}/\d{2}/[^/]+/$", listing_allow=r"/[a-z]+/page-\d+/$",
             category_pattern=r"^https?://[^/]+/([a-z]+)/\d{4}/"),
]


# -------------------------------------------------------------------------------------- assembly


def _stories(spec: SiteSpec, rng: random.Random, per_category: int) -> list[Story]:
    stories, taken = [], set()
    for category in spec.categories:
        w = _Writer(rng, category)
        for i in range(per_category):
            day = date(2024, 3, 28) - timedelta(days=i * 2 + rng.randint(0, 1))
            stories.append(_story(w, spec.name, category,
                                  lambda slug, d, c=category: spec.article_path(c, slug, d), day, taken))
    pool = [s.path for s in stories]
    for s in stories:
        _fill_body(_Writer(rng, s.category), s, pool, spec.subheads)
    return stories


def _add(site: StaticSite, spec: SiteSpec, path: str, page: str) -> None:
    site.add(path, page.encode(spec.encoding, errors="xmlcharrefreplace"), content_type=spec.content_type)


def build_site(spec: SiteSpec, seed: int, per_category: int = 10) -> tuple[StaticSite, dict[str, str]]:
    """One site of the network and its gold text per article path. Deterministic for ``(spec.name, seed)``."""
    rng = random.Random(f"{seed}:{spec.name}")
    stories = _stories(spec, rng, per_category)
    ctx = SiteContext(spec, stories, rng)
    site = StaticSite(spec.name)
    for story in stories:
        _add(site, spec, story.path, spec.render.article(story, ctx))
    for category, label in spec.categories.items():
        first, second = spec.index_paths(category)
        items = sorted((s for s in stories if s.category == category), key=lambda s: s.day, reverse=True)
        half = (len(items) + 1) // 2
        _add(site, spec, first, spec.render.index(label, items[:half], second, ctx))
        _add(site, spec, second, spec.render.index(f"{label}: older stories", items[half:], None, ctx))
    front = sorted(stories, key=lambda s: s.day, reverse=True)[:8]
    _add(site, spec, "/", spec.render.index(f"{spec.title}: front page", front, None, ctx))
    for path, (title, text) in STATIC_PAGES.items():
        _add(site, spec, path, spec.render.static(title, text.format(title=spec.title, place=PLACES[0]), ctx))
    site.add("/robots.txt", spec.robots, content_type="text/plain")
    return site, {s.path: s.gold(spec.with_dek) for s in stories}


def build_demo_network(seed: int = 0, articles_per_category: int = 10) -> ServedNetwork:
    """The demo network: 3 sites x 2 categories x ``articles_per_category`` articles.

    Returns a :class:`~newsclean.demo.served.ServedNetwork`: ``sites`` (serve them with
    :class:`~newsclean.demo.localsite.LocalSites`), ``start_paths[site][category]`` (the category's first index
    page), ``gold[site][path]`` (gold article text) and ``sites_toml(base_urls)`` for the crawl.
    Deterministic: the same arguments give byte-identical pages.
    """
    sites, start, gold, options = [], {}, {}, {}
    for spec in SPECS:
        site, site_gold = build_site(spec, seed, articles_per_category)
        sites.append(site)
        start[spec.name] = {c: [spec.index_paths(c)[0]] for c in spec.categories}
        gold[spec.name] = site_gold
        # an article's category from its URL, as the sites lay them out (a story linked from another category's
        # pages would otherwise take the category of whichever crawl path reached it first, which varies per run)
        options[spec.name] = {"article_allow": [spec.article_allow], "listing_allow": [spec.listing_allow],
                              "category_from": ["url", "config"], "category_pattern": spec.category_pattern}
    return ServedNetwork(sites, start, gold, site_options=options)

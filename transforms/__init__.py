"""The cleaning algorithms as plain functions over lxml trees (no Beam, no Scrapy).

Once per (site, category), :func:`~newsclean.transforms.site_evidence.learn_site_evidence` learns the static-noise
signature (StaDyNoT §3.1) and the site profile from the neighbour pages. Then per page, the stages in the order
:func:`~newsclean.transforms.chain.extract_article` runs them:

1. :mod:`~newsclean.transforms.parse`: bytes -> text -> lxml tree (WHATWG Encoding), with the repair step;
2. :mod:`~newsclean.transforms.metadata`: title, dates, authors, language (schema.org, OpenGraph);
3. :mod:`~newsclean.transforms.link_filters`: the optional hyperlink filter (Ghorbani 2014 §3);
4. :mod:`~newsclean.transforms.static_noise`: static-noise marks from the site's signature (StaDyNoT §3.1);
5. :mod:`~newsclean.transforms.dynamic_noise`: least-common-ancestor dynamic-noise marks (StaDyNoT §3.2);
6. :mod:`~newsclean.transforms.noise_removal`: marked and non-informative tags removed (StaDyNoT §3.3);
7. :mod:`~newsclean.transforms.blocks`: atomic text blocks and their features (Kohlschütter 2010 §3.3);
8. the block decision, one of: :mod:`~newsclean.transforms.boilernet` (Leonhardt 2020); the learned block
   classifier (:mod:`~newsclean.transforms.classifier`), then the page-level steps
   (:mod:`~newsclean.transforms.refine`, whose docstring lists their order); or, the papers' chain,
   :mod:`~newsclean.transforms.boilerpipe` (Kohlschütter 2010 §4) then :mod:`~newsclean.transforms.ancestor_filter`
   (Viveros-Jiménez 2018 §4);
9. :mod:`~newsclean.transforms.page_type`: article, listing or other;
10. :mod:`~newsclean.transforms.roles`: each kept block's role (body, caption, lead), which makes ``text``;
11. :mod:`~newsclean.transforms.byline`: the in-page byline, where the metadata names no author;
12. :mod:`~newsclean.transforms.finish`: the fields that mean what the corpus row's columns of the same names mean
    (identified language, headline, plausible dates, resolved URLs, page type);

with the cleaned HTML of the kept blocks and the per-stage counts.

Shared bases the chain reads between the stages: :mod:`~newsclean.transforms.text` (words),
:mod:`~newsclean.transforms.errors` (``ExtractionError``), :mod:`~newsclean.transforms.marks` (noise marks),
:mod:`~newsclean.transforms.vocab` (tag sets, word lists, feature names), :mod:`~newsclean.transforms.types`
(``BlockParams``, ``TextBlock``, ``PageSummary``), :mod:`~newsclean.transforms.dom` (tree helpers),
:mod:`~newsclean.transforms.context` (``PageContext``) and :mod:`~newsclean.transforms.kernel` (whether the
compiled kernel runs).
"""

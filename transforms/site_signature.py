"""Learning a site's signature for a chain: static noise, site profile and, when the chain asks, the site vote
and the listing check's evidence (:mod:`newsclean.transforms.listing`).

The one place that runs the chain on neighbour pages while learning (issue #17): the pipeline's signature
step (:func:`newsclean.pipeline.stages.learn_signature`), ``newsclean.extract`` and ``newsclean eval`` call
:func:`learn_site_signature`. A module of its own because it needs the chain, and the chain needs the vote's
blending (:mod:`newsclean.transforms.site_vote`): no import cycle.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from newsclean.transforms.chain import ChainConfig, prepare_blocks
from newsclean.transforms.learned import content_probabilities
from newsclean.transforms.listing import is_sure_article
from newsclean.transforms.site_profile import SiteVote
from newsclean.transforms.site_vote import learn_site_vote, page_vote
from newsclean.transforms.static_noise import StaticNoiseSignature, learn_static_noise, learn_static_noise_trees


def pages_needed(config: ChainConfig) -> int | None:
    """Fewest neighbour pages from which :func:`learn_site_signature` learns anything for chain ``config``: the
    static-noise ``min_pages`` (StaDyNoT §3.1: a node is static when the neighbour pages share it, which one
    page cannot show; 2 by default). A smaller sample gives a signature with no keys and no profile
    (:func:`~newsclean.transforms.site_profile.learn_site_profile` needs 2 pages too), whatever its pages hold,
    so its pages need not be read or parsed. None when the static stage is off (nothing is learnt)."""
    return None if config.static is None else config.static.min_pages


def classifies_neighbours(config: ChainConfig) -> bool:
    """Whether :func:`learn_site_signature` runs ``config``'s block classifier on the neighbour pages (a site
    vote or the listing check is set, and the static stage is on); otherwise it is :func:`learn_static_noise`."""
    learned = config.learned
    return config.static is not None and learned is not None and (learned.site_vote is not None
                                                                  or learned.listing is not None)


def learn_site_signature(htmls: Iterable[str], config: ChainConfig) -> StaticNoiseSignature | None:
    """The static-noise signature of a neighbour sample (decoded HTML pages of one site/category) for chain
    ``config``, with the site vote in its profile when ``config.learned.site_vote`` is set, and the neighbour
    pages holding a sure article (``SiteVote.article_pages``) when ``config.learned.listing`` is: each distinct
    neighbour is parsed once (:func:`~newsclean.transforms.static_noise.learn_static_noise_trees`), then its
    tree goes through the chain's stages with that signature and the block classifier scores its blocks
    (:func:`~newsclean.transforms.site_vote.page_vote`).

    Returns None when ``config.static`` is None (static stage off); without either setting exactly
    :func:`~newsclean.transforms.static_noise.learn_static_noise`'s signature. A neighbour on which the
    chain raises is left out of the vote. Raises what the classifier's model loading raises
    (``FileNotFoundError``, ``ValueError``).
    """
    if config.static is None:
        return None
    if not classifies_neighbours(config):
        return learn_static_noise(htmls, config.static)
    params, listing = config.learned.site_vote, config.learned.listing
    signature, trees = learn_static_noise_trees(htmls, config.static)
    if signature.profile is None:
        return signature
    votes, articles = [], 0
    for root in trees:
        try:
            page = prepare_blocks("", signature, config, root=root)
        except Exception:  # noqa: BLE001 - a broken neighbour must not stop learning, as in learn_static_noise
            continue
        probs = content_probabilities(page.blocks, page.context(signature), config.learned)
        votes.append(page_vote(page.blocks, probs) if params is not None else {})
        articles += listing is not None and is_sure_article(page.blocks, probs, listing)
    vote = learn_site_vote(votes, params) if params is not None else (SiteVote(len(votes)) if len(votes) >= 2 else None)
    if vote is not None and listing is not None:
        vote = replace(vote, article_pages=articles)
    return replace(signature, profile=replace(signature.profile, vote=vote))

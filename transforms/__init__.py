"""The cleaning algorithms as plain functions over lxml trees (no Beam, no Scrapy).

Stages, in chain order (see :mod:`newsclean.transforms.chain`):
static noise (StaDyNoT §3.1) -> dynamic noise (StaDyNoT §3.2) -> post-processing (§3.3)
-> text blocks + Boilerpipe classification (Kohlschütter 2010) -> ancestor filter
(Viveros-Jiménez 2018 §4); optional link pre-processing filters (Ghorbani 2014).
"""

"""The learned block classifier: features of each text block (:mod:`~newsclean.transforms.classifier.features`),
the boilerplate lexicon behind the lexical ones (:mod:`~newsclean.transforms.classifier.lexicon`) and the two-stage
LightGBM model that scores each block (:mod:`~newsclean.transforms.classifier.model`)."""

"""Files: the pickle-free archive, its codec, checkpoints and their checks.

The strict container (a JSON document and plain arrays), the one codec
that turns a tree of data into it and back (with the tags of Python and
numpy data, and any its callers plug in: :mod:`skpmlp.io` adds estimators,
splitters and distributions), the translation of :mod:`skpmlp.io`'s
format 1 into the codec's scheme, the checks of an estimator rebuilt from
a file, and the checkpoints of a search (written atomically, matched to
the search by a fingerprint of its parameters and data).
"""

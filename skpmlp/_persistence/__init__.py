"""Files: the pickle-free archive, its codec, checkpoints and their checks.

The strict container (a JSON document and plain arrays), the codec that
turns a tree of state into it and back, the checks of an estimator rebuilt
from a file, and the checkpoints of a search (written atomically, matched
to the search by a fingerprint of its parameters and data).
"""

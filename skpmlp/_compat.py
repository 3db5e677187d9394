"""The one place where scikit-learn's private or version-dependent API is used."""

from sklearn.base import _fit_context  # noqa: F401  (sklearn >= 1.3)
from sklearn.utils.validation import _check_sample_weight as check_sample_weight  # noqa: F401
from sklearn.utils.validation import validate_data  # noqa: F401  (sklearn >= 1.6)

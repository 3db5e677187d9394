"""Save and load fitted skpmlp estimators without pickle.

A pickle (or joblib) file runs code when it is loaded, so a model file
shared by someone else is a program. :func:`save` writes a fitted estimator
as data only: one ``.npz`` archive holding a JSON document (parameters,
scalars, structure) and plain numeric / string arrays (weights, scores).
:func:`load` reads it with ``allow_pickle=False`` and rebuilds only skpmlp
estimator classes, looked up by name in the ``skpmlp`` package.

The fitted state is encoded generically: every parameter and every fitted
attribute (a name ending in ``_`` or starting with ``_``) goes through
skpmlp's one codec (:mod:`skpmlp._persistence._codec`, which checkpoints
use too), so attributes added to the estimators later are saved without
changing this module, as long as they are made of data (numbers, strings,
None, numpy scalars and arrays, masked arrays, lists, tuples, sets, dicts,
RandomState instances and nested skpmlp estimators). This module adds to
the codec what only model files hold: estimators by class name, splitters,
distributions, and the fitted ``StandardScaler`` of an
``input_transform="standard"`` model and ``QuantileTransformer`` of an
``input_transform="quantile"`` one (scikit-learn's classes, stored by name,
parameters and fitted arrays, as an estimator; no other scikit-learn
transformer is read).
A searched parameter given as a distribution is data too when it is one of
``scipy.stats``'s (stored as its name and arguments, e.g. ``loguniform``
with ``(1e-4, 0.1)``, and rebuilt from ``scipy.stats`` on load) or a
:class:`~skpmlp.LayerSizesDistribution`; the configurations drawn from it
are in ``cv_results_["params"]``, saved as any other data.
Scorer objects (``scorer_``) are functions, not data: they are dropped on
save and rebuilt on load from the ``scoring`` parameter. A ``cv`` splitter
of scikit-learn's (``KFold(5, shuffle=True)``, ...) is stored as its class
name and parameters and rebuilt on load from a fixed list of classes.

Files of format 1 (skpmlp 0.2.0) load too: their document is translated
into the codec's scheme first (:mod:`skpmlp._persistence._format_1`).

Examples
--------
>>> import os, tempfile
>>> from sklearn.datasets import load_iris
>>> from skpmlp import SingleMLPClassifier
>>> import skpmlp.io
>>> X, y = load_iris(return_X_y=True)
>>> clf = SingleMLPClassifier((8,), "tanh", max_iter=20, random_state=0).fit(X, y)
>>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
>>> skpmlp.io.save(clf, path)
>>> loaded = skpmlp.io.load(path)
>>> bool((loaded.predict_proba(X) == clf.predict_proba(X)).all())
True
"""

import inspect
import warnings
from numbers import Integral

import scipy.stats
import sklearn.model_selection
from sklearn.base import BaseEstimator
from sklearn.preprocessing import QuantileTransformer, StandardScaler
from sklearn.utils.validation import check_is_fitted

from . import _estimators
from ._core._compat import get_param_names
from ._core._params import sklearn_mlp_params
from ._core._version import __version__
from ._persistence._archive import InvalidFileError, read_archive, write_archive
from ._persistence._checkpoint import CheckpointWarning
from ._persistence._codec import NotDataError, Tag, decode, encode, payload_fields, payload_list
from ._persistence._data_tags import DATA_TAGS
from ._persistence._format_1 import from_format_1
from ._persistence._state_checks import check_loaded
from ._search._scorers import fitted_scorers, resolve_scorers
from ._search._space import LayerSizesDistribution, is_distribution

__all__ = ["save", "load", "FORMAT_VERSION", "CheckpointWarning", "InconsistentVersionWarning",
           "InvalidFileError"]

#: Version of the file layout :func:`save` writes.
FORMAT_VERSION = 2

#: Versions :func:`load` reads, refusing any other: format 1 (skpmlp 0.2.0)
#: through :func:`~skpmlp._persistence._format_1.from_format_1`.
_READ_VERSIONS = (1, FORMAT_VERSION)

_FORMAT_NAME = "skpmlp.io"

#: Attributes in ``__dict__`` that are configuration kept by scikit-learn
#: itself, not fitted state; they are not saved.
_SKIPPED_ATTRIBUTES = frozenset({"_metadata_request", "_sklearn_output_config"})

#: Fields of ``shards_`` entries that name machines and processes (host
#: name, process id, Dask worker address). Files are shared, so they are
#: saved as None unless ``save(..., include_host_info=True)``.
_HOST_FIELDS = ("host", "pid", "worker")

class InconsistentVersionWarning(UserWarning):
    """Warning of :func:`load` when a file was saved by another skpmlp version.

    The file layout (:data:`FORMAT_VERSION`) is checked strictly, but the
    fitted attributes an estimator holds may change between skpmlp versions
    without changing the layout, as scikit-learn's may between pickles;
    scikit-learn warns with its own ``InconsistentVersionWarning`` then, and
    this is its counterpart.

    Parameters
    ----------
    estimator_name : str
        Class of the saved estimator.
    saved_version : str
        The skpmlp version that saved the file.
    current_version : str
        The skpmlp version loading it.
    """

    def __init__(self, estimator_name, saved_version, current_version):
        # the arguments as args too, so the warning pickles (joblib workers)
        super().__init__(estimator_name, saved_version, current_version)
        self.estimator_name = estimator_name
        self.saved_version = saved_version
        self.current_version = current_version

    def __str__(self):
        return (
            f"Loading a {self.estimator_name} saved with skpmlp {self.saved_version} into skpmlp "
            f"{self.current_version}. Its fitted attributes may mean something else in this "
            f"version, which can break the estimator or give wrong results; refit it with "
            f"skpmlp {self.current_version}, or load it with skpmlp {self.saved_version}."
        )


# ---------------------------------------------------------------- classes
def _estimator_classes():
    """``{name: class}`` of the estimators a file may name.

    Only public estimator classes defined in the skpmlp package qualify:
    those of the ``skpmlp`` namespace (:mod:`skpmlp._estimators`), then
    any other public subclass of ``BaseEstimator`` that a skpmlp module
    defines (e.g. a new ensemble class not exported yet). Classes are found among those already
    defined, by name: a file can never make :func:`load` import a module
    or build an arbitrary object.
    """

    def ours(obj):
        return (
            isinstance(obj, type) and issubclass(obj, BaseEstimator)
            and not obj.__name__.startswith("_")
            and (obj.__module__ == "skpmlp" or obj.__module__.startswith("skpmlp."))
        )

    classes = {}
    pending = [BaseEstimator]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if ours(cls):
            classes.setdefault(cls.__name__, cls)
    # the public namespace wins over a same-named class elsewhere
    public = [getattr(_estimators, name) for name in _estimators.__all__]
    classes.update({cls.__name__: cls for cls in public if ours(cls)})
    return classes


def _class_name(estimator, classes):
    """The name :func:`load` will find ``estimator``'s class by, checked.

    Raises
    ------
    NotDataError
        For a class that is not a skpmlp estimator's.
    """
    name = type(estimator).__name__
    if classes.get(name) is not type(estimator):
        raise NotDataError(
            f"cannot save a {type(estimator).__module__}.{name}; only the estimators of the "
            f"skpmlp package ({', '.join(sorted(classes))}) can be saved"
        )
    return name


# -------------------------------------------------------------- splitters
#: The module a file names splitter classes by: the public one, so that files
#: outlive scikit-learn moving a class between its private modules.
_SPLITTER_MODULE = "sklearn.model_selection"


def _splitter_classes():
    """``{name: class}`` of the cross-validation splitters a file may name.

    scikit-learn's own splitters only: the concrete public classes of
    ``sklearn.model_selection`` that split (``split`` and ``get_n_splits``),
    e.g. ``KFold``, ``StratifiedShuffleSplit``, ``RepeatedKFold``. Their
    state is their ``__init__`` parameters, so the class and those
    parameters rebuild them. As for estimators, classes are looked up among
    those already defined: a file can never name another one.
    """
    return {
        name: obj for name, obj in vars(sklearn.model_selection).items()
        if name in sklearn.model_selection.__all__ and isinstance(obj, type)
        and not name.startswith("Base") and not inspect.isabstract(obj)
        and callable(getattr(obj, "split", None)) and callable(getattr(obj, "get_n_splits", None))
    }


def _init_params(cls):
    """Names of the ``__init__`` parameters of ``cls`` (no ``self``, no ``**``)."""
    return [
        p.name for p in inspect.signature(cls).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _splitter_params(splitter):
    """``{name: value}`` of a scikit-learn splitter's ``__init__`` parameters.

    Splitters have no ``get_params``; this reads them as scikit-learn's own
    splitter ``repr`` does: the attribute of each parameter's name, or for
    the repeated splitters (``RepeatedKFold``, ...) the entry in ``cvargs``,
    the arguments they pass to the splitter they repeat.
    """
    missing = object()
    cvargs = getattr(splitter, "cvargs", {})
    params = {}
    for name in _init_params(type(splitter)):
        value = getattr(splitter, name, missing)
        params[name] = cvargs.get(name, missing) if value is missing else value
    # a parameter found nowhere would come back as its default: refuse instead
    unread = [name for name, value in params.items() if value is missing]
    assert not unread, f"cannot read the parameters {unread} of {splitter!r}"
    return params


def _check_cv_is_data(estimator, splitters):
    """A ``cv`` the file cannot rebuild fails saving early, with the reason.

    An int, None, ``"auto"``, a list of ``(train, test)`` index arrays and
    scikit-learn's splitters are data; any other splitter object is code, and an iterator
    of splits (a generator) was used up by ``fit``.
    """
    cv = getattr(estimator, "cv", None)
    if cv is None or isinstance(cv, (Integral, str)) or type(cv) in (list, tuple):
        return  # a str is "auto" (the constraints refuse any other)
    if type(cv) in splitters.values():
        return
    name = type(estimator).__name__
    kind = f"{type(cv).__module__}.{type(cv).__qualname__}"
    if hasattr(cv, "split"):
        problem = (
            f"is a {kind}, not one of scikit-learn's splitters (which are stored by class and "
            f"parameters); other splitter classes are code and cannot be stored without pickle"
        )
    else:
        problem = (
            f"is an iterable of splits ({kind}): it may be used up by fit and cannot be "
            f"stored as data"
        )
    raise ValueError(
        f"Cannot save {name}: its cv={cv!r} {problem}. Fit with cv given as an int, a "
        f"scikit-learn splitter (e.g. KFold(5, shuffle=True, random_state=0)) or a list of "
        f"(train, test) index arrays (e.g. cv=list(splitter.split(X, y))) to save the "
        f"estimator, or use pickle / joblib for files you trust."
    )


# ----------------------------------------------------------- transformers
#: The module a file names scikit-learn transformers by.
_TRANSFORMER_MODULE = "sklearn.preprocessing"

#: The scikit-learn transformers a file may hold, by name: the fitted input
#: transforms of ``input_transform="standard"`` and ``"quantile"``. Their
#: state is their parameters and fitted attributes (arrays and numbers), as
#: an estimator's.
_TRANSFORMERS = {"StandardScaler": StandardScaler, "QuantileTransformer": QuantileTransformer}


# ----------------------------------------------------------- distributions
#: The distribution classes of skpmlp a file may name, by name.
_SKPMLP_DISTRIBUTIONS = {"LayerSizesDistribution": LayerSizesDistribution}

#: The module a file names scipy distributions by.
_SCIPY_MODULE = "scipy.stats"


def _scipy_distribution(name):
    """The ``scipy.stats`` distribution named ``name`` (e.g. ``loguniform``), or None."""
    if not isinstance(name, str) or name.startswith("_"):
        return None
    generator = getattr(scipy.stats, name, None)
    distributions = (scipy.stats.rv_continuous, scipy.stats.rv_discrete)
    return generator if isinstance(generator, distributions) else None


# ------------------------------------------------------- derived attributes
def _check_scoring_is_data(estimator):
    """A callable scorer is code: it cannot be stored, so saving fails early."""
    scoring = getattr(estimator, "scoring", None)
    values = scoring.values() if isinstance(scoring, dict) else (
        scoring if isinstance(scoring, (list, tuple, set)) else [scoring]
    )
    if any(callable(value) for value in values):
        raise ValueError(
            f"Cannot save {type(estimator).__name__}: its scoring={scoring!r} holds a callable, "
            f"which is code and cannot be stored without pickle. Fit with scoring given as "
            f"scorer names (a str, or a list or dict of str) to save the estimator, or use "
            f"pickle / joblib for files you trust."
        )


def _rebuild_scorer(estimator):
    """``scorer_`` as fit sets it, from the ``scoring`` parameter."""
    scorers, multimetric = resolve_scorers(estimator, estimator.scoring)
    scorers = fitted_scorers(estimator, scorers)
    return scorers if multimetric else scorers["score"]


#: Fitted attributes that are not data: ``name: (check before saving,
#: rebuild after loading)``. They are left out of the file.
_DERIVED_ATTRIBUTES = {"scorer_": (_check_scoring_is_data, _rebuild_scorer)}


def _is_state_name(name):
    """sklearn's convention: fitted attributes end in ``_`` (or are private)."""
    return (
        isinstance(name, str) and name.isidentifier() and not name.startswith("__")
        and (name.endswith("_") or name.startswith("_")) and name not in _SKIPPED_ATTRIBUTES
    )


def _without_host_info(shards):
    """``shards_`` with the :data:`_HOST_FIELDS` set to None; the keys stay,
    so code that reads the entries works on a loaded estimator too."""
    return [{k: None if k in _HOST_FIELDS else v for k, v in entry.items()} for entry in shards]


#: Fitted attributes that may say more than users mean to share:
#: ``name: redact``, applied unless ``include_host_info=True``.
_HOST_ATTRIBUTES = {"shards_": _without_host_info}


# -------------------------------------------------------------------- tags
class _FileTags:
    """The codec's tags for what only model files hold: skpmlp estimators,
    scikit-learn splitters and transformers, and distributions (after the
    data tags of :mod:`skpmlp._persistence._data_tags`).

    Parameters
    ----------
    include_host_info : bool, default=False
        See :func:`save`.
    """

    def __init__(self, *, include_host_info=False):
        self.classes = _estimator_classes()
        self.splitters = _splitter_classes()
        self.include_host_info = include_host_info

    def tags(self):
        """The tags of a model file, in the order the encoder asks them."""
        return DATA_TAGS + (
            # exact type, before the estimators (a scaler is a BaseEstimator)
            Tag("transformer", _is_transformer, _encode_transformer, _decode_transformer),
            Tag("estimator", lambda value: isinstance(value, BaseEstimator),
                self._encode_estimator, self._decode_estimator),
            # exact type: a subclass may hold state its parameters do not show
            Tag("splitter", lambda value: self.splitters.get(type(value).__name__) is type(value),
                self._encode_splitter, self._decode_splitter),
            Tag("distribution", is_distribution, _encode_distribution, self._decode_distribution),
        )

    def _encode_estimator(self, estimator, child):
        name = _class_name(estimator, self.classes)
        _check_cv_is_data(estimator, self.splitters)
        params = estimator.get_params(deep=False)
        state, derived = {}, []
        for attr, value in vars(estimator).items():
            if attr in params or not _is_state_name(attr):
                continue
            if attr in _DERIVED_ATTRIBUTES:
                _DERIVED_ATTRIBUTES[attr][0](estimator)
                derived.append(attr)
                continue
            if attr in _HOST_ATTRIBUTES and not self.include_host_info:
                value = _HOST_ATTRIBUTES[attr](value)
            state[attr] = child(value, f".{attr}")
        params = {key: child(value, f".{key}") for key, value in params.items()}
        return {"class": name, "params": params, "state": state, "derived": derived}

    def _decode_estimator(self, payload, child):
        name, params, state, derived = payload_fields(
            payload, "class", "params", "state", "derived")
        if not isinstance(name, str) or name not in self.classes:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown estimator class {str(name)[:80]!r}; known classes "
                f"are {', '.join(sorted(self.classes))}."
            )
        estimator = _restored(self.classes[name], name, params, state, child)
        for attr in derived:
            if attr not in _DERIVED_ATTRIBUTES:
                raise InvalidFileError(
                    f"Invalid skpmlp file: unknown derived attribute {str(attr)[:80]!r}."
                )
            setattr(estimator, attr, _DERIVED_ATTRIBUTES[attr][1](estimator))
        check_loaded(estimator)
        return estimator

    def _encode_splitter(self, splitter, child):
        params = _splitter_params(splitter)
        return {
            "module": _SPLITTER_MODULE, "class": type(splitter).__name__,
            "params": {key: child(value, f".{key}") for key, value in params.items()},
        }

    def _decode_splitter(self, payload, child):
        module, name, params = payload_fields(payload, "module", "class", "params")
        if module != _SPLITTER_MODULE or not isinstance(name, str) or name not in self.splitters:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown splitter class {module!r}.{name!r}; known classes "
                f"are those of {_SPLITTER_MODULE}: {', '.join(sorted(self.splitters))}."
            )
        cls = self.splitters[name]
        return _construct(cls, name, params, _init_params(cls), child)

    def _decode_distribution(self, payload, child):
        module, name, args, kwds = payload_fields(payload, "module", "name", "args", "kwds")
        args = [child(value) for value in payload_list(args)]
        ours = module == "skpmlp" and isinstance(name, str) and name in _SKPMLP_DISTRIBUTIONS
        if ours and not args:
            cls = _SKPMLP_DISTRIBUTIONS[name]
            return _construct(cls, name, kwds, _init_params(cls), child)
        generator = _scipy_distribution(name) if module == _SCIPY_MODULE else None
        if generator is None:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown distribution {module!r}.{name!r}; known ones are "
                f"skpmlp's {sorted(_SKPMLP_DISTRIBUTIONS)} and those of {_SCIPY_MODULE}."
            )
        return generator(*args, **{key: child(value) for key, value in kwds.items()})


def _is_transformer(value):
    return _TRANSFORMERS.get(type(value).__name__) is type(value)


def _encode_transformer(transformer, child):
    params = transformer.get_params(deep=False)
    state = {attr: child(value, f".{attr}") for attr, value in vars(transformer).items()
             if attr not in params and _is_state_name(attr)}
    return {
        "module": _TRANSFORMER_MODULE, "class": type(transformer).__name__,
        "params": {key: child(value, f".{key}") for key, value in params.items()},
        "state": state,
    }


def _decode_transformer(payload, child):
    module, name, params, state = payload_fields(payload, "module", "class", "params", "state")
    if module != _TRANSFORMER_MODULE or not isinstance(name, str) or name not in _TRANSFORMERS:
        raise InvalidFileError(
            f"Invalid skpmlp file: unknown transformer class {module!r}.{str(name)[:80]!r}; known "
            f"classes are {_TRANSFORMER_MODULE}'s {', '.join(sorted(_TRANSFORMERS))}."
        )
    transformer = _restored(_TRANSFORMERS[name], name, params, state, child)
    check_loaded(transformer)
    return transformer


def _encode_distribution(value, child):
    if _SKPMLP_DISTRIBUTIONS.get(type(value).__name__) is type(value):
        params = {"depths": value.depths, "widths": value.widths}
        return {
            "module": "skpmlp", "name": type(value).__name__, "args": [],
            "kwds": {key: child(item, f".{key}") for key, item in params.items()},
        }
    # a frozen scipy.stats distribution: its generator's name and arguments
    dist = getattr(value, "dist", None)
    generator = _scipy_distribution(getattr(dist, "name", None))
    args, kwds = getattr(value, "args", None), getattr(value, "kwds", None)
    if (generator is not None and type(generator) is type(dist) and type(args) is tuple
            and type(kwds) is dict):
        return {
            "module": _SCIPY_MODULE, "name": dist.name,
            "args": [child(item, f".args[{i}]") for i, item in enumerate(args)],
            "kwds": {key: child(item, f".kwds[{key!r}]") for key, item in kwds.items()},
        }
    raise NotDataError(
        f"cannot save the distribution {value!r} of type {type(value).__module__}."
        f"{type(value).__qualname__}; skpmlp.io stores scipy.stats distributions (e.g. "
        f"loguniform(1e-4, 0.1)) and skpmlp.LayerSizesDistribution as data, other "
        f"distribution objects are code. Search with one of those to save the estimator, "
        f"or use pickle / joblib for files you trust."
    )


def _construct(cls, name, encoded_params, param_names, child):
    """``cls(**params)`` from a file's encoded parameters, refusing any
    name ``cls`` does not take.

    A parameter the file lacks came after the version that wrote it: it
    takes the value that trains as that version did (scikit-learn's, where
    the searches' default has changed since: :func:`sklearn_mlp_params`),
    else its default (which, for a parameter added later, is off).
    """
    params = {key: child(value) for key, value in encoded_params.items()}
    unknown = set(params) - set(param_names)
    if unknown:
        raise InvalidFileError(
            f"Invalid skpmlp file: {name} has no parameters {sorted(unknown)[:10]}."
        )
    earlier = {key: value for key, value in sklearn_mlp_params("regressor").items()
               if key in param_names and key not in params}
    return cls(**earlier, **params)


# -------------------------------------------------------------------- API

def _restored(cls, name, params, state, child):
    """An instance of ``cls`` built from its saved parameters, with its
    saved fitted attributes (names that are not a fitted attribute's, or
    that a parameter has, are refused)."""
    instance = _construct(cls, name, params, get_param_names(cls), child)
    for attr, value in state.items():
        if not _is_state_name(attr) or attr in params:
            raise InvalidFileError(
                f"Invalid skpmlp file: {attr[:80]!r} is not a fitted attribute name."
            )
        setattr(instance, attr, child(value))
    return instance


def save(estimator, path, *, compress=False, include_host_info=False):
    """Save a fitted skpmlp estimator to one file, without pickle.

    Parameters
    ----------
    estimator : skpmlp estimator
        A fitted estimator of any skpmlp estimator class: ParallelMLPClassifier,
        ParallelMLPRegressor, SingleMLPClassifier, SingleMLPRegressor, ...
    path : str, path-like or binary file object
        Where to write. The file is a ``.npz`` archive whatever its name:
        a JSON document and plain numeric or string ``.npy`` arrays.
    compress : bool, default=False
        Compress the archive's members (smaller, slower).
    include_host_info : bool, default=False
        Keep the host name, process id and Dask worker address of every
        entry of a search's ``shards_``. Model files are shared, so by
        default these fields are saved as None; the other fields (shard,
        models, device, threads, seconds) are always kept.

    Raises
    ------
    sklearn.exceptions.NotFittedError
        If ``estimator`` is not fitted.
    TypeError
        If ``estimator`` is not a skpmlp estimator, or holds an attribute
        value that is not data; the message names the attribute.
    ValueError
        If ``scoring`` holds a callable (code cannot be stored), or ``cv``
        is neither an int, a list of splits nor one of scikit-learn's
        splitters (e.g. a generator of splits, or a splitter class of
        another package).
    """
    tags = _FileTags(include_host_info=include_host_info)
    try:
        # a foreign object gets the TypeError, not check_is_fitted's message
        _class_name(estimator, tags.classes)
    except NotDataError as error:
        raise TypeError(f"estimator: {error.message}") from None
    check_is_fitted(estimator)
    encoded, arrays = encode(estimator, tags.tags(), root="estimator")
    document = {
        "format": _FORMAT_NAME,
        "version": FORMAT_VERSION,
        "skpmlp_version": __version__,
        "estimator": encoded,
    }
    write_archive(path, document, arrays, compress=compress)


def load(path):
    """Load an estimator written by :func:`save`.

    Nothing in the file is unpickled or executed: arrays are read with
    ``allow_pickle=False``, the rest is JSON, and only skpmlp estimator
    classes are built.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file :func:`save` wrote: of :data:`FORMAT_VERSION`, or of
        format 1 (skpmlp 0.2.0's).

    Returns
    -------
    estimator
        The fitted estimator, predicting as the saved one.

    Raises
    ------
    InvalidFileError
        A subclass of ``ValueError``: the file is not a skpmlp file (another
        archive, a pickle, any other file), is damaged (truncated, flipped
        bytes: zip's CRC-32 is checked), has another format version, names
        an unknown class, holds pickled data or any array dtype other than
        bool, number and string ones, has an array header that disagrees
        with its data (e.g. claims 10^12 elements: refused before any
        allocation), or holds a state no fit gives (weights whose shapes do
        not chain, NaN weights in a fitted model, invalid parameters). The
        message says which.
    OSError
        If ``path`` cannot be opened (no such file, permissions).

    Warns
    -----
    InconsistentVersionWarning
        If the file was saved by another version of skpmlp.
    """
    document, members = read_archive(path)
    if document.get("format") != _FORMAT_NAME:
        raise InvalidFileError(f"{path!r} is not a skpmlp file (its document is not skpmlp.io's).")
    version = document.get("version")
    if type(version) is not int or version not in _READ_VERSIONS:
        raise InvalidFileError(
            f"Unsupported skpmlp file format version {str(version)[:80]}; this skpmlp "
            f"({__version__}) reads versions {' and '.join(map(str, _READ_VERSIONS))}."
        )
    estimator = document.get("estimator")
    if version == 1:
        estimator, members = from_format_1(estimator, members)
    if not (isinstance(estimator, dict) and list(estimator) == ["$estimator"]
            and isinstance(estimator["$estimator"], dict)):
        raise InvalidFileError("Invalid skpmlp file: the document holds no estimator.")
    payload = estimator["$estimator"]
    saved_version = document.get("skpmlp_version")
    if saved_version != __version__:
        # before decoding: if the old state does not fit, the reason shows first
        warnings.warn(
            InconsistentVersionWarning(
                estimator_name=_short(payload.get("class")), saved_version=_short(saved_version),
                current_version=__version__,
            ),
            stacklevel=2,
        )
    return decode(estimator, members, _FileTags().tags(), what="estimator")


def _short(value):
    """``value`` for a message, a long string cut short (a file may hold any)."""
    return value[:80] if isinstance(value, str) else value

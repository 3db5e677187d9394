"""Save and load fitted skpmlp estimators without pickle.

A pickle (or joblib) file runs code when it is loaded, so a model file
shared by someone else is a program. :func:`save` writes a fitted estimator
as data only: one ``.npz`` archive holding a JSON document (parameters,
scalars, structure) and plain numeric / string arrays (weights, scores).
:func:`load` reads it with ``allow_pickle=False`` and rebuilds only skpmlp
estimator classes, looked up by name in the ``skpmlp`` package.

The fitted state is encoded generically: every parameter and every fitted
attribute (a name ending in ``_`` or starting with ``_``) goes through one
small recursive encoder, so attributes added to the estimators later are
saved without changing this module, as long as they are made of data
(numbers, strings, None, numpy scalars and arrays, masked arrays, lists,
tuples, dicts, RandomState instances and nested skpmlp estimators).
A searched parameter given as a distribution is data too when it is one of
``scipy.stats``'s (stored as its name and arguments, e.g. ``loguniform``
with ``(1e-4, 0.1)``, and rebuilt from ``scipy.stats`` on load) or a
:class:`~skpmlp.LayerSizesDistribution`; the configurations drawn from it
are in ``cv_results_["params"]``, saved as any other data.
Scorer objects (``scorer_``) are functions, not data: they are dropped on
save and rebuilt on load from the ``scoring`` parameter. A ``cv`` splitter
of scikit-learn's (``KFold(5, shuffle=True)``, ...) is stored as its class
name and parameters and rebuilt on load from a fixed list of classes.

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
import math
import re
import warnings
from numbers import Integral

import numpy as np
import scipy.stats
import sklearn.model_selection
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from . import _estimators
from ._core._compat import get_param_names
from ._core._version import __version__
from ._persistence._archive import InvalidFileError, is_plain_dtype, read_archive, write_archive
from ._persistence._state_checks import check_loaded
from ._search._scorers import fitted_scorers, resolve_scorers
from ._search._space import LayerSizesDistribution, is_distribution

__all__ = ["save", "load", "FORMAT_VERSION", "InconsistentVersionWarning", "InvalidFileError"]

#: Version of the file layout; :func:`load` refuses any other.
FORMAT_VERSION = 1

_FORMAT_NAME = "skpmlp.io"
_TAG = "__type__"

#: Attributes in ``__dict__`` that are configuration kept by scikit-learn
#: itself, not fitted state; they are not saved.
_SKIPPED_ATTRIBUTES = frozenset({"_metadata_request", "_sklearn_output_config"})

#: Fields of ``shards_`` entries that name machines and processes (host
#: name, process id, Dask worker address). Files are shared, so they are
#: saved as None unless ``save(..., include_host_info=True)``.
_HOST_FIELDS = ("host", "pid", "worker")

#: dtype kinds a numpy scalar may have in a file (no objects, no voids).
_SCALAR_KINDS = frozenset("biufU")

#: The dtypes of those kinds, as :attr:`numpy.dtype.str` spells them.
_SCALAR_DTYPE = re.compile(r"[<>|=]?(b1|[iu][1248]|f[248]|U[0-9]{1,6})")


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


def _class_name(estimator, path, classes):
    """The name :func:`load` will find ``estimator``'s class by, checked."""
    name = type(estimator).__name__
    if classes.get(name) is not type(estimator):
        raise TypeError(
            f"{path}: cannot save a {type(estimator).__module__}.{name}; only the estimators "
            f"of the skpmlp package ({', '.join(sorted(classes))}) can be saved."
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


# ---------------------------------------------------------------- encoding
class _Encoder:
    """Turns a value into JSON-able data, putting arrays into ``self.arrays``.

    An array object referenced twice is stored once and shared again on
    load (e.g. ``classes_`` of a search and of its ``best_estimator_``).
    """

    def __init__(self, *, include_host_info=False):
        self.classes = _estimator_classes()
        self.splitters = _splitter_classes()
        self.include_host_info = include_host_info
        self.arrays = {}
        # id -> (array, key); holding the array keeps its id from being reused
        self._memo = {}

    def encode(self, value, path):
        if isinstance(value, np.generic):  # before float: np.float64 is a float
            return self._scalar(value, path)
        if type(value) is np.ma.MaskedArray:
            return {
                _TAG: "masked_array",
                "data": self.encode(np.ma.getdata(value), f"{path}.data"),
                "mask": self.encode(np.ma.getmaskarray(value), f"{path}.mask"),
                "fill_value": self.encode(value.fill_value, f"{path}.fill_value"),
            }
        if type(value) is np.ndarray:
            return self._array(value, path)
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, Integral):
            return int(value)
        if isinstance(value, float):
            return value if math.isfinite(value) else {_TAG: "float", "value": repr(value)}
        # exact types: a subclass (namedtuple, defaultdict, ...) would come
        # back as its base class, so it is refused rather than changed
        if type(value) in (list, tuple):
            items = [self.encode(v, f"{path}[{i}]") for i, v in enumerate(value)]
            return items if type(value) is list else {_TAG: "tuple", "items": items}
        if type(value) in (set, frozenset):  # e.g. scoring={"accuracy", "f1_macro"}
            items = [self.encode(v, f"{path} item {v!r}") for v in value]
            return {_TAG: type(value).__name__, "items": items}
        if type(value) is dict:
            return self._dict(value, path)
        if isinstance(value, np.random.RandomState):
            return {_TAG: "random_state", "state": self.encode(value.get_state(), f"{path}.state")}
        if isinstance(value, BaseEstimator):
            return self.estimator(value, path)
        # exact type: a subclass may hold state its parameters do not show
        if self.splitters.get(type(value).__name__) is type(value):
            return self._splitter(value, path)
        if is_distribution(value):
            return self._distribution(value, path)
        raise TypeError(
            f"{path}: cannot save a value of type {type(value).__module__}."
            f"{type(value).__qualname__}; skpmlp.io stores only data (None, bool, int, float, "
            f"str, numpy scalars and arrays, lists, tuples, sets, dicts, RandomState and skpmlp "
            f"estimators)."
        )

    def _scalar(self, value, path):
        if value.dtype.kind not in _SCALAR_KINDS:
            raise TypeError(f"{path}: cannot save a numpy scalar of dtype {value.dtype}.")
        return {_TAG: "scalar", "dtype": value.dtype.str, "value": self.encode(value.item(), path)}

    def _array(self, value, path):
        if value.dtype.hasobject:
            items = [self.encode(v, f"{path}[{i}]") for i, v in enumerate(value.ravel())]
            return {_TAG: "object_array", "shape": list(value.shape), "items": items}
        if not is_plain_dtype(value.dtype):
            raise TypeError(
                f"{path}: cannot save an array of dtype {value.dtype}; skpmlp.io stores bool, "
                f"integer, float, complex and string arrays."
            )
        if id(value) not in self._memo:
            key = f"a{len(self.arrays)}"
            self.arrays[key] = value
            self._memo[id(value)] = (value, key)
        return {_TAG: "ndarray", "key": self._memo[id(value)][1]}

    def _dict(self, value, path):
        plain = all(isinstance(k, str) for k in value) and _TAG not in value
        if plain:
            return {k: self.encode(v, f"{path}[{k!r}]") for k, v in value.items()}
        # int (or other) keys cannot be JSON object keys: store the pairs
        return {
            _TAG: "dict",
            "items": [
                [self.encode(k, f"{path} key {k!r}"), self.encode(v, f"{path}[{k!r}]")]
                for k, v in value.items()
            ],
        }

    def _splitter(self, value, path):
        params = _splitter_params(value)
        return {
            _TAG: "splitter",
            "module": _SPLITTER_MODULE,
            "class": type(value).__name__,
            "params": {k: self.encode(v, f"{path}.{k}") for k, v in params.items()},
        }

    def _distribution(self, value, path):
        if _SKPMLP_DISTRIBUTIONS.get(type(value).__name__) is type(value):
            params = {"depths": value.depths, "widths": value.widths}
            return {
                _TAG: "distribution", "module": "skpmlp", "name": type(value).__name__,
                "args": [], "kwds": {k: self.encode(v, f"{path}.{k}") for k, v in params.items()},
            }
        # a frozen scipy.stats distribution: its generator's name and arguments
        dist = getattr(value, "dist", None)
        generator = _scipy_distribution(getattr(dist, "name", None))
        args, kwds = getattr(value, "args", None), getattr(value, "kwds", None)
        if (generator is not None and type(generator) is type(dist) and type(args) is tuple
                and type(kwds) is dict):
            return {
                _TAG: "distribution", "module": _SCIPY_MODULE, "name": dist.name,
                "args": [self.encode(v, f"{path}.args[{i}]") for i, v in enumerate(args)],
                "kwds": {k: self.encode(v, f"{path}.kwds[{k!r}]") for k, v in kwds.items()},
            }
        raise TypeError(
            f"{path}: cannot save the distribution {value!r} of type {type(value).__module__}."
            f"{type(value).__qualname__}; skpmlp.io stores scipy.stats distributions (e.g. "
            f"loguniform(1e-4, 0.1)) and skpmlp.LayerSizesDistribution as data, other "
            f"distribution objects are code. Search with one of those to save the estimator, "
            f"or use pickle / joblib for files you trust."
        )

    def estimator(self, estimator, path):
        name = _class_name(estimator, path, self.classes)
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
            state[attr] = self.encode(value, f"{path}.{attr}")
        return {
            _TAG: "estimator",
            "class": name,
            "params": {k: self.encode(v, f"{path}.{k}") for k, v in params.items()},
            "state": state,
            "derived": derived,
        }


# ---------------------------------------------------------------- decoding
class _Decoder:
    """Rebuilds values from :class:`_Encoder` data; refuses anything else."""

    def __init__(self, arrays):
        self.classes = _estimator_classes()
        self.splitters = _splitter_classes()
        self.arrays = arrays
        #: keys of the arrays the document refers to
        self.used = set()

    def decode(self, data):
        if data is None or isinstance(data, (bool, int, float, str)):
            return data
        if isinstance(data, list):
            return [self.decode(v) for v in data]
        if not isinstance(data, dict):
            raise InvalidFileError(f"Invalid skpmlp file: unexpected JSON value {data!r}.")
        tag = data.get(_TAG)
        if tag is None:
            return {k: self.decode(v) for k, v in data.items()}
        decoder = getattr(self, f"_decode_{tag}", None) if isinstance(tag, str) else None
        if decoder is None:
            raise InvalidFileError(f"Invalid skpmlp file: unknown value type {str(tag)[:80]!r}.")
        try:
            return decoder(data)
        except InvalidFileError:
            raise
        except Exception as exc:
            # whatever a constructor, numpy or scipy raise on the file's
            # values, the file is what is wrong
            raise InvalidFileError(
                f"Invalid skpmlp file: malformed {tag!r} value ({type(exc).__name__}: "
                f"{str(exc)[:200]})."
            ) from exc

    def _decode_float(self, data):
        if data["value"] not in ("nan", "inf", "-inf"):
            raise InvalidFileError(f"Invalid skpmlp file: bad float {str(data['value'])[:80]!r}.")
        return float(data["value"])

    def _decode_tuple(self, data):
        return tuple(self.decode(v) for v in data["items"])

    def _decode_set(self, data):
        return {self.decode(v) for v in data["items"]}

    def _decode_frozenset(self, data):
        return frozenset(self.decode(v) for v in data["items"])

    def _decode_dict(self, data):
        return {self.decode(k): self.decode(v) for k, v in data["items"]}

    def _decode_scalar(self, data):
        name, value = data["dtype"], self.decode(data["value"])
        if not isinstance(name, str) or not _SCALAR_DTYPE.fullmatch(name):
            raise InvalidFileError(
                f"Invalid skpmlp file: scalar dtype {str(name)[:80]!r} is not allowed.")
        dtype = np.dtype(name)
        # a string scalar's width is its text's: a file cannot make it allocate more
        fits = isinstance(value, str) and dtype.itemsize <= 4 * max(len(value), 1)
        if dtype.kind == "U" and not fits:
            raise InvalidFileError(
                f"Invalid skpmlp file: scalar dtype {name!r} does not fit its value.")
        return np.array(value, dtype=dtype)[()]

    def _decode_ndarray(self, data):
        key = data["key"]
        if not isinstance(key, str) or key not in self.arrays:
            raise InvalidFileError(
                f"Invalid skpmlp file: malformed 'ndarray' value: the document names a missing "
                f"array {str(key)[:80]!r}."
            )
        self.used.add(key)
        return self.arrays[key]

    def _decode_object_array(self, data):
        shape = tuple(int(n) for n in data["shape"])
        items = [self.decode(v) for v in data["items"]]
        if math.prod(shape) != len(items) or min(shape, default=0) < 0:
            raise InvalidFileError(
                f"Invalid skpmlp file: an object array of shape {shape} holds {len(items)} items."
            )
        array = np.empty(len(items), dtype=object)
        # element-wise, so tuples stay elements instead of becoming a dimension
        for i, item in enumerate(items):
            array[i] = item
        return array.reshape(shape)

    def _decode_masked_array(self, data):
        return np.ma.MaskedArray(
            self.decode(data["data"]), mask=self.decode(data["mask"]),
            fill_value=self.decode(data["fill_value"]),
        )

    def _decode_random_state(self, data):
        random_state = np.random.RandomState()
        random_state.set_state(self.decode(data["state"]))
        return random_state

    def _decode_splitter(self, data):
        module, name = data["module"], data["class"]
        if module != _SPLITTER_MODULE or not isinstance(name, str) or name not in self.splitters:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown splitter class {module!r}.{name!r}; known classes "
                f"are those of {_SPLITTER_MODULE}: {', '.join(sorted(self.splitters))}."
            )
        cls = self.splitters[name]
        return self._construct(cls, name, data["params"], _init_params(cls))

    def _decode_distribution(self, data):
        module, name = data["module"], data["name"]
        args = [self.decode(v) for v in data["args"]]
        ours = module == "skpmlp" and isinstance(name, str) and name in _SKPMLP_DISTRIBUTIONS
        if ours and not args:
            cls = _SKPMLP_DISTRIBUTIONS[name]
            return self._construct(cls, name, data["kwds"], _init_params(cls))
        generator = _scipy_distribution(name) if module == _SCIPY_MODULE else None
        if generator is None:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown distribution {module!r}.{name!r}; known ones are "
                f"skpmlp's {sorted(_SKPMLP_DISTRIBUTIONS)} and those of {_SCIPY_MODULE}."
            )
        kwds = {k: self.decode(v) for k, v in data["kwds"].items()}
        return generator(*args, **kwds)

    def _construct(self, cls, name, encoded_params, param_names):
        """``cls(**params)`` from a file's encoded parameters, refusing any
        name ``cls`` does not take."""
        params = {k: self.decode(v) for k, v in encoded_params.items()}
        unknown = set(params) - set(param_names)
        if unknown:
            raise InvalidFileError(
                f"Invalid skpmlp file: {name} has no parameters {sorted(unknown)[:10]}."
            )
        return cls(**params)

    def _decode_estimator(self, data):
        name = data["class"]
        if not isinstance(name, str) or name not in self.classes:
            raise InvalidFileError(
                f"Invalid skpmlp file: unknown estimator class {str(name)[:80]!r}; known classes "
                f"are {', '.join(sorted(self.classes))}."
            )
        cls = self.classes[name]
        estimator = self._construct(cls, name, data["params"], get_param_names(cls))
        for attr, value in data["state"].items():
            if not _is_state_name(attr) or attr in data["params"]:
                raise InvalidFileError(
                    f"Invalid skpmlp file: {attr[:80]!r} is not a fitted attribute name."
                )
            setattr(estimator, attr, self.decode(value))
        for attr in data["derived"]:
            if attr not in _DERIVED_ATTRIBUTES:
                raise InvalidFileError(
                    f"Invalid skpmlp file: unknown derived attribute {str(attr)[:80]!r}."
                )
            setattr(estimator, attr, _DERIVED_ATTRIBUTES[attr][1](estimator))
        check_loaded(estimator)
        return estimator


# -------------------------------------------------------------------- API
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
    encoder = _Encoder(include_host_info=include_host_info)
    # a foreign object gets the TypeError, not check_is_fitted's message
    _class_name(estimator, "estimator", encoder.classes)
    check_is_fitted(estimator)
    document = {
        "format": _FORMAT_NAME,
        "version": FORMAT_VERSION,
        "skpmlp_version": __version__,
        "estimator": encoder.estimator(estimator, "estimator"),
    }
    # non-finite floats are tagged, so the JSON stays standard
    write_archive(path, document, encoder.arrays, compress=compress)


def load(path):
    """Load an estimator written by :func:`save`.

    Nothing in the file is unpickled or executed: arrays are read with
    ``allow_pickle=False``, the rest is JSON, and only skpmlp estimator
    classes are built.

    Parameters
    ----------
    path : str, path-like or binary file object
        The file :func:`save` wrote.

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
    if type(version) is not int or version != FORMAT_VERSION:
        raise InvalidFileError(
            f"Unsupported skpmlp file format version {str(version)[:80]}; this skpmlp "
            f"({__version__}) reads version {FORMAT_VERSION}."
        )
    estimator = document.get("estimator")
    if not isinstance(estimator, dict) or estimator.get(_TAG) != "estimator":
        raise InvalidFileError("Invalid skpmlp file: the document holds no estimator.")
    saved_version = document.get("skpmlp_version")
    if saved_version != __version__:
        # before decoding: if the old state does not fit, the reason shows first
        warnings.warn(
            InconsistentVersionWarning(
                estimator_name=_short(estimator.get("class")), saved_version=_short(saved_version),
                current_version=__version__,
            ),
            stacklevel=2,
        )
    decoder = _Decoder(members)
    loaded = decoder.decode(estimator)
    unused = sorted(set(members) - decoder.used)
    if unused:
        raise InvalidFileError(
            f"Invalid skpmlp file: its arrays {unused[:10]} are not part of the estimator."
        )
    return loaded


def _short(value):
    """``value`` for a message, a long string cut short (a file may hold any)."""
    return value[:80] if isinstance(value, str) else value

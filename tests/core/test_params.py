"""The parameter table is the one place each parameter is defined (issue 29, item 1).

Every estimator's ``__init__`` signature follows the table (names, order,
defaults, keyword-only after the first two), so a parameter added to the
table and not to a signature, or the other way round, fails here with a
message that names it. Its constraints, optimizer defaults and docstring
entries all come from the table.
"""

import inspect

import numpy as np
import pytest
from numpydoc.docscrape import ClassDoc

from skpmlp import (
    ParallelMLPClassifier,
    ParallelMLPRegressor,
    SingleMLPClassifier,
    SingleMLPRegressor,
)
from skpmlp._core._params import (
    INPUT_PARAMS,
    MODEL_PARAMS,
    OPTIMIZER_DEFAULTS,
    OPTIMIZER_PARAMS,
    PARAMS,
    SEARCHED_PARAMS,
    estimator_params,
    signature_mismatches,
)
from skpmlp._engine import OptimizerSettings

ESTIMATORS = [
    (ParallelMLPClassifier, "search", "classifier"),
    (ParallelMLPRegressor, "search", "regressor"),
    (SingleMLPClassifier, "single", "classifier"),
    (SingleMLPRegressor, "single", "regressor"),
]
IDS = [cls.__name__ for cls, _, _ in ESTIMATORS]


@pytest.mark.parametrize("estimator_class, family, task", ESTIMATORS, ids=IDS)
def test_signature_follows_the_table(estimator_class, family, task):
    assert signature_mismatches(estimator_class, family, task) == []


@pytest.mark.parametrize("estimator_class, family, task", ESTIMATORS, ids=IDS)
def test_init_stores_every_parameter_as_given(estimator_class, family, task):
    """``get_params`` gives back what ``__init__`` got, for every parameter."""
    values = {row.name: object() for row in estimator_params(family, task)}
    assert estimator_class(**values).get_params(deep=False) == values


def test_a_signature_out_of_step_with_the_table_is_named():
    class Lacking(ParallelMLPClassifier):
        def __init__(self, hidden_layer_sizes=None, activation=("relu", "tanh", "logistic"), *, extra=1):
            pass

    messages = "\n".join(signature_mismatches(Lacking, "search", "classifier"))
    assert "lacks the table's parameter 'solver'" in messages
    assert "has 'extra', which the parameter table does not give it" in messages


@pytest.mark.parametrize("estimator_class, family, task", ESTIMATORS, ids=IDS)
def test_constraints_and_documentation_come_from_the_table(estimator_class, family, task):
    names = [row.name for row in estimator_params(family, task)]
    assert list(estimator_class._parameter_constraints) == names
    documented = [p.name for p in ClassDoc(estimator_class)["Parameters"]]
    assert documented == names
    attributes = [p.name for p in ClassDoc(estimator_class)["Attributes"]]
    assert len(attributes) == len(set(attributes)), "an attribute documented twice"


def test_optimizer_parameters_are_the_engines_settings():
    """Each per-model optimizer parameter is a field of the engine's
    settings (with the same default), or the batch size."""
    fields = inspect.signature(OptimizerSettings).parameters
    assert OPTIMIZER_PARAMS == (*fields, "batch_size")
    assert {name: fields[name].default for name in fields} == {
        name: OPTIMIZER_DEFAULTS[name] for name in fields
    }
    assert SEARCHED_PARAMS == MODEL_PARAMS + OPTIMIZER_PARAMS + INPUT_PARAMS
    assert INPUT_PARAMS == ("input_transform",)  # the search layer's, never the engine's
    assert all(PARAMS[name].searchable for name in SEARCHED_PARAMS)


def test_param_grid_documents_every_searchable_parameter():
    _, description = PARAMS["param_grid"].entry("search")
    assert all(f"``{name}``" in description for name in SEARCHED_PARAMS)


@pytest.mark.parametrize("name", SEARCHED_PARAMS)
def test_a_search_takes_a_list_or_a_distribution_of_every_searchable_parameter(name):
    constraints = PARAMS[name].constraint_in("search")
    assert "array-like" in constraints
    assert any(getattr(c, "methods", None) == ["rvs"] for c in constraints)
    assert "array-like" not in PARAMS[name].constraint_in("single") or name == "hidden_layer_sizes"


def test_defaults_render_as_literals():
    _, default = PARAMS["error_score"].entry("search")[0].rsplit("default=", 1)
    assert default == "np.nan" and np.isnan(PARAMS["error_score"].default)
    assert PARAMS["epsilon"].entry("single")[0].endswith("default=1e-8")

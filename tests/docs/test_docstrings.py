"""numpydoc validation of every public class, method and function (issue 29, item 6).

Every name skpmlp exports (``__all__`` of the package and of its public
modules), and every public method such a class defines, has a numpydoc
docstring that documents its parameters (all of them, in the signature's
order, each with a type and a description) and what it returns, in
well-formed sections. The checks left out are style choices this project
does not make (see ``IGNORED``).
"""

import inspect

import pytest
from numpydoc.validate import validate

import skpmlp
import skpmlp.io
import skpmlp.model_selection
import skpmlp.plotting

#: numpydoc checks this project does not enforce: an extended summary,
#: See Also and Examples everywhere (the classes and main functions have
#: them), and a bare type on the Returns line (``self : object``, as
#: scikit-learn writes it).
IGNORED = {"ES01", "SA01", "EX01", "RT02"}

MODULES = [skpmlp, skpmlp.io, skpmlp.model_selection, skpmlp.plotting]


def _public_objects():
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue  # __version__
            qualname = f"{module.__name__}.{name}"
            yield qualname
            if inspect.isclass(obj):
                # its public methods written in skpmlp (inherited from its
                # own base classes included; scikit-learn's are its business)
                for method, member in inspect.getmembers(obj):
                    if method.startswith("_") or isinstance(inspect.getattr_static(obj, method), property):
                        continue
                    if callable(member) and getattr(member, "__module__", "").startswith("skpmlp"):
                        yield f"{qualname}.{method}"


OBJECTS = sorted(set(_public_objects()))


@pytest.mark.parametrize("qualname", OBJECTS)
def test_docstring_is_valid_numpydoc(qualname):
    errors = [(code, message) for code, message in validate(qualname)["errors"] if code not in IGNORED]
    assert not errors, "\n".join(f"{qualname} {code}: {message}" for code, message in errors)

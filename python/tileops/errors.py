"""The tileops error family in Python: one exception class per class of the C++ family
(tileops/errors.hpp), named as in C++ and derived as there, built from what the C API reports
(tileops_error_kind_name, tileops_error_kind_parent). TypeError, ValueError and RuntimeError
also derive from the Python built-in of the same name, so ``except ValueError`` (the
built-in) catches a tileops.ValueError too. A message is the C++ exception's what()."""

import builtins

from . import _capi

_BUILTIN_BASES = {"TypeError": builtins.TypeError, "ValueError": builtins.ValueError, "RuntimeError": builtins.RuntimeError}


def _build_family():
    classes = {}
    kind = 1
    while True:
        name = _capi.error_kind_name(kind)
        if name is None:
            return classes
        name = name.decode()
        parent = classes.get(_capi.error_kind_parent(kind), Exception)
        bases = (parent,) + ((_BUILTIN_BASES[name],) if name in _BUILTIN_BASES else ())
        classes[kind] = type(name, bases, {"__module__": "tileops", "kind": kind, "__doc__": "tileops::" + name})
        kind += 1


_capi.error_classes.update(_build_family())
_by_name = {cls.__name__: cls for cls in _capi.error_classes.values()}
globals().update(_by_name)
__all__ = sorted(_by_name)


def error(name, message):
    """A new exception of the family class `name` ("ValueError") with `message`: what the
    Python layer raises for what it checks itself, in the C++ messages' style."""
    return _by_name[name](message)

"""The in-tree ops, one class per manifest entry, generated at import from the manifests the
library compiled in (through the C API's op list): ``tileops.ops.RMSNormFwdOp``, ... Each class
takes its manifest parameters and is called on its manifest inputs (see tileops.Op)."""

import inspect

from ._op import Op, op_specs


def _signature(spec):
    """The constructor's signature: positional parameters, then keyword-only ones and target. A
    required parameter after a defaulted one (LongRoPEFwdOp's factor tensors) is shown
    keyword-only, as Python signatures require, though the class also takes it by position."""
    positional, keyword = [], []
    for p in spec["params"]:
        default = inspect.Parameter.empty if p["required"] else p["default"]
        after_default = p["required"] and any(q.default is not inspect.Parameter.empty for q in positional)
        by_name = p["kw_only"] or after_default
        kind = inspect.Parameter.KEYWORD_ONLY if by_name else inspect.Parameter.POSITIONAL_OR_KEYWORD
        (keyword if by_name else positional).append(inspect.Parameter(p["name"], kind, default=default))
    keyword.append(inspect.Parameter("target", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(positional + keyword)


def _doc(spec):
    def declared(d):
        return "%s %s" % (d.get("dtype", ""), d.get("shape", d.get("type", "")))

    lines = ["%s%s  (family %s)" % (spec["name"], _signature(spec), spec["family"]), ""]
    lines += ["param  %s: %s" % (p["name"], p.get("type") or "tensor " + declared(p)) for p in spec["params"]]
    lines += [
        "input  %s: %s%s" % (i["name"], declared(i), "  (optional)" if "optional" in i else "") for i in spec["inputs"]
    ]
    lines += ["output %s: %s" % (o["name"], declared(o)) for o in spec["outputs"]]
    if spec["boundary_operators"]:
        lines.append("boundary operators: " + ", ".join(b["name"] for b in spec["boundary_operators"]))
    return "\n".join(lines)


def _make_class(spec):
    cls = type(spec["name"], (Op,), {"__module__": __name__, "__doc__": _doc(spec), "_spec": spec})
    cls.__signature__ = _signature(spec)
    cls._prepare()
    return cls


_classes = [_make_class(spec) for spec in op_specs()]
globals().update({cls.__name__: cls for cls in _classes})
__all__ = sorted(cls.__name__ for cls in _classes)

"""Records assay builds itself, made without validating them again.

Per row an experiment makes a root ``Run``, its ``Example`` and an ``EvaluationResult``
per metric, from values already of their declared types. Validation (``model(**fields)``)
costs more than the trivial target it records, and ``model_construct`` more still, so
these records are made the way validation leaves them: the fields in the declared order,
defaults filled, ``model_fields_set`` the fields given. Never for values a user passed
in: those go through validation.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)
_Template = tuple[dict[str, Any], tuple[tuple[str, Any], ...], bool]
_TEMPLATES: dict[type[BaseModel], _Template] = {}

# The four slots of a pydantic model, set through their descriptors: no attribute lookup
# (``object.__setattr__`` finds the descriptor by name on every call).
_SET_DICT = BaseModel.__dict__["__dict__"].__set__
_SET_FIELDS_SET = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


def trusted(model: type[M], fields: dict[str, Any]) -> M:
    """An instance of ``model`` from ``fields`` that are already of their declared types
    and pass its validators (records assay builds itself, or reads back from its store):
    ~3x cheaper than ``model(**fields)``. Fields not given take their defaults;
    ``model_fields_set`` is the fields given, as with validation.
    """
    defaults, factories, allows_extra = _template_of(model)
    values = {**defaults, **fields}  # the declared field order, as validation builds it
    for name, factory in factories:
        if name not in fields:
            values[name] = factory()
    return _made(model, values, set(fields), allows_extra)


def trusted_builder(model: type[M], names: tuple[str, ...]) -> Callable[..., M]:
    """``trusted(model, dict(zip(names, values)))`` as ``build(*values)``, for records
    built per row with always the same fields.

    The builder is a function written for ``model`` and ``names`` (as ``dataclasses``
    writes ``__init__``): one dict display in the declared order, the given values and
    the defaults in place, ``{}`` and ``[]`` for the ``dict`` and ``list`` factories;
    nothing is merged, looked up or looped over per call.
    """
    defaults, factories, allows_extra = _template_of(model)
    factory_of = dict(factories)
    scope: dict[str, Any] = {
        "_model": model,
        "_new": object.__new__,
        "_set_dict": _SET_DICT,
        "_set_fields_set": _SET_FIELDS_SET,
        "_set_extra": _SET_EXTRA,
        "_set_private": _SET_PRIVATE,
    }
    entries = []
    for index, name in enumerate(defaults):
        if name in names:
            value = f"v{names.index(name)}"
        elif factory_of.get(name) is dict:
            value = "{}"
        elif factory_of.get(name) is list:
            value = "[]"
        elif name in factory_of:
            value = f"_factory{index}()"
            scope[f"_factory{index}"] = factory_of[name]
        else:
            value = f"_default{index}"
            scope[f"_default{index}"] = defaults[name]
        entries.append(f"{name!r}: {value}")
    # Names that are no field follow, in their order (``trusted`` merges them the same way).
    entries.extend(f"{name!r}: v{index}" for index, name in enumerate(names) if name not in defaults)
    parameters = ", ".join(f"v{index}" for index in range(len(names)))
    given = "{" + ", ".join(repr(name) for name in names) + "}" if names else "set()"
    source = (  # what _made does, inline: a call fewer per record
        f"def build({parameters}):\n"
        f"    made = _new(_model)\n"
        f"    _set_dict(made, {{{', '.join(entries)}}})\n"
        f"    _set_fields_set(made, {given})\n"
        f"    _set_extra(made, {'{}' if allows_extra else 'None'})\n"
        f"    _set_private(made, None)\n"
        f"    return made\n"
    )
    exec(source, scope)  # noqa: S102 - the source is made of field names and local names
    build: Callable[..., M] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{model.__name__}"
    return build


def _made(model: type[M], values: dict[str, Any], fields_set: set[str], allows_extra: bool) -> M:
    made = object.__new__(model)
    _SET_DICT(made, values)
    _SET_FIELDS_SET(made, fields_set)
    _SET_EXTRA(made, {} if allows_extra else None)
    _SET_PRIVATE(made, None)
    return made


def _template_of(model: type[BaseModel]) -> _Template:
    template = _TEMPLATES.get(model)
    if template is None:
        template = _TEMPLATES[model] = _template(model)
    return template


def _template(model: type[BaseModel]) -> _Template:
    defaults: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, field in model.model_fields.items():
        default = None if field.default is PydanticUndefined else field.default
        defaults[name] = default
        if field.default_factory is not None:
            factories.append((name, field.default_factory))
        elif not isinstance(default, (str, int, float, bool, tuple, frozenset, type(None))):
            factories.append((name, functools.partial(copy.deepcopy, default)))  # as pydantic copies it
    return defaults, tuple(factories), model.model_config.get("extra") == "allow"

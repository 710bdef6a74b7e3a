"""Every rendered object validated offline: built-in kinds against the Kubernetes OpenAPI
schemas (PyPI kubernetes-validate, strict: unknown fields are errors), KEDA's ScaledObject
against KEDA's CRD schema as the models of PyPI cloudcoil-models-keda carry it."""

from __future__ import annotations

import types
import typing
from typing import Any

import kubernetes_validate
import pydantic
from cloudcoil.models.keda.v1alpha1 import ScaledObject

from .chart import KUBE_VERSION, without_template
from .fail import CheckFailed

# Kinds whose schema is not Kubernetes' own: their validating model.
CUSTOM_KINDS: dict[tuple[str, str], type[pydantic.BaseModel]] = {
    ("keda.sh/v1alpha1", "ScaledObject"): ScaledObject,
}


def validate(objects: list[dict[str, Any]], label: str) -> int:
    """Validates every object; returns how many were checked."""
    for obj in objects:
        name = f"{label}: {obj['kind']} {obj['metadata'].get('name')} " \
               f"({obj['metadata'].get('_template')})"
        plain = without_template(obj)
        model = CUSTOM_KINDS.get((obj["apiVersion"], obj["kind"]))
        try:
            if model is not None:
                model.model_validate(plain)
                unknown = unknown_fields(model, plain)
                if unknown:
                    raise CheckFailed(f"{name}: fields the schema does not have: {unknown}")
            else:
                kubernetes_validate.validate(plain, KUBE_VERSION, strict=True)
        except kubernetes_validate.SchemaNotFoundError as e:
            raise CheckFailed(f"{name}: no schema for this kind in Kubernetes {KUBE_VERSION}: {e}")
        except (kubernetes_validate.ValidationError, pydantic.ValidationError) as e:
            raise CheckFailed(f"{name}: {e}")
    return len(objects)


def unknown_fields(model: type[pydantic.BaseModel], data: Any, path: str = "") -> list[str]:
    """Keys of `data` that no field of `model` (by its alias) declares, recursively: the models
    ignore extra keys, the API server's structural schema prunes or refuses them."""
    if not isinstance(data, dict):
        return []
    fields = {(f.alias or n): f for n, f in model.model_fields.items()}
    found = []
    for key, value in data.items():
        field = fields.get(key)
        if field is None:
            found.append(f"{path}.{key}" if path else key)
            continue
        for sub in models_in(field.annotation):
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                where = f"{path}.{key}[{i}]" if isinstance(value, list) else f"{path}.{key}"
                found += unknown_fields(sub, item, where.lstrip("."))
    return found


def models_in(annotation: Any) -> list[type[pydantic.BaseModel]]:
    """The pydantic models an annotation like Optional[List[Trigger]] holds."""
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is None:
        return []
    if origin is dict:
        return []
    if origin in (list, typing.Union, types.UnionType, typing.Annotated):
        return [m for arg in typing.get_args(annotation) for m in models_in(arg)]
    return []

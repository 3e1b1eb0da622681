"""A small strict shape checker for the custom resources Felt renders (Gateway API HTTPRoutes, cert-manager
Certificates), whose CRD schemas kubernetes-validate does not ship: unknown fields, wrong types, values
outside an enum or a pattern, lists too long, required fields missing. Each resource module describes its
kind with these nodes and adds the cross-field rules of its CRD (CEL rules) itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Str:
    pattern: str | None = None
    enum: tuple[str, ...] = ()
    max_length: int | None = None

    def problems(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, str):
            return [f"{where}: must be a string, not {type(value).__name__}"]
        if self.enum and value not in self.enum:
            return [f"{where}: {value!r} is not one of {list(self.enum)}"]
        if self.pattern and not re.fullmatch(self.pattern, value):
            return [f"{where}: {value!r} does not match {self.pattern}"]
        if self.max_length is not None and len(value) > self.max_length:
            return [f"{where}: longer than {self.max_length} characters"]
        return []


@dataclass(frozen=True)
class Int:
    minimum: int | None = None
    maximum: int | None = None

    def problems(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{where}: must be an integer, not {type(value).__name__}"]
        if (self.minimum is not None and value < self.minimum) or (
            self.maximum is not None and value > self.maximum
        ):
            return [f"{where}: {value} is outside {self.minimum}..{self.maximum}"]
        return []


@dataclass(frozen=True)
class Bool:
    def problems(self, value: Any, where: str) -> list[str]:
        return [] if isinstance(value, bool) else [f"{where}: must be true or false"]


@dataclass(frozen=True)
class List:
    item: Node
    max_items: int | None = None
    min_items: int = 0

    def problems(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, list):
            return [f"{where}: must be a list"]
        problems = []
        if len(value) < self.min_items:
            problems.append(f"{where}: needs at least {self.min_items} item(s)")
        if self.max_items is not None and len(value) > self.max_items:
            problems.append(f"{where}: at most {self.max_items} items (has {len(value)})")
        for i, item in enumerate(value):
            problems += self.item.problems(item, f"{where}.{i}")
        return problems


@dataclass(frozen=True)
class Obj:
    fields: Mapping[str, Node]
    required: tuple[str, ...] = ()
    # Any keys with values of this node (a map such as labels); `fields` are then not used.
    values: Node | None = None
    extra: frozenset[str] = field(default_factory=frozenset)  # keys accepted without a check

    def problems(self, value: Any, where: str) -> list[str]:
        if not isinstance(value, dict):
            return [f"{where}: must be an object"]
        problems = []
        for key in self.required:
            if key not in value:
                problems.append(f"{where}: {key!r} is required")
        for key, item in value.items():
            node = self.values if self.values is not None else self.fields.get(key)
            if node is None:
                if key not in self.extra:
                    problems.append(f"{where}: {key!r} was unexpected (known: {sorted(self.fields)})")
                continue
            problems += node.problems(item, f"{where}.{key}" if where else key)
        return problems


Node = Str | Int | Bool | List | Obj

DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
STRINGS = Obj({}, values=Str())
# metadata as kustomize renders it: names, namespace, labels, annotations.
METADATA = Obj(
    {
        "name": Str(DNS_SUBDOMAIN, max_length=253),
        "namespace": Str(DNS_LABEL, max_length=63),
        "labels": STRINGS,
        "annotations": STRINGS,
    },
    required=("name",),
)


def resource(api_version: str, kind: str, spec: Node) -> Obj:
    return Obj(
        {
            "apiVersion": Str(enum=(api_version,)),
            "kind": Str(enum=(kind,)),
            "metadata": METADATA,
            "spec": spec,
        },
        required=("apiVersion", "kind", "metadata", "spec"),
    )

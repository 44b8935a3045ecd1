"""Variables in rule values, compiled once: ``{inventory[memory][physical_mb]}``.

A reference names a root and a chain of keys, written as Python's
``str.format`` writes them (``[key]`` or ``.key``; both look up a key of
an object, an index of a list). The roots:

- ``data``: the introspection data (v1; always rendered as text);
- ``inventory``: the ramdisk's inventory (``data["inventory"]``);
- ``plugin_data``: the processed data (what ``data`` names, Ironic's word);
- ``node``: the Ironic node as it stands with the changes recorded so far
  (``{node.driver_info[ipmi_address]}`` or ``{node[driver_info][...]}``);
- ``ports``: the node's Ironic ports, a list;
- ``item``: the current item of the rule part's ``loop``.

A value that is one reference and nothing else keeps its type (a number
stays a number), except ``{data[...]}``, which v1 rules always rendered as
text. Action values follow ``str.format``'s syntax (``{{`` is a brace, a
format spec and ``!r`` apply). Condition values, which v1 never formatted,
substitute only the references above and leave every other brace alone, so
a regular expression like ``^a{3}$`` keeps its meaning.
"""

import _string  # str.format's field parser
import dataclasses
import re
import string
from collections.abc import Callable
from typing import Any

ROOTS = frozenset({"data", "inventory", "plugin_data", "node", "ports", "item"})
TEXT_ROOTS = frozenset({"data"})
"""Roots whose lone reference still renders as text (the v1 behaviour)."""

_REFERENCE = re.compile(
    r"\{((?:data|inventory|plugin_data|node|ports|item)"
    r"(?:\.[A-Za-z_][A-Za-z0-9_]*|\[[^\[\]{}]*\])*)\}"
)

Namespace = dict[str, Any]
Render = Callable[[Namespace], Any]


class Unresolved(Exception):
    """A reference that the data, the node or the loop does not have."""


def _step(value: Any, key: Any, ref: str) -> Any:
    if isinstance(value, dict):
        if key in value:
            return value[key]
        if not isinstance(key, str) and str(key) in value:
            return value[str(key)]
        raise Unresolved(f"{{{ref}}} does not resolve: no key {key!r}")
    if isinstance(value, list):
        try:
            return value[int(key)]
        except (ValueError, IndexError):
            raise Unresolved(
                f"{{{ref}}} does not resolve: no item {key!r} in a list of {len(value)}"
            ) from None
    raise Unresolved(
        f"{{{ref}}} does not resolve: {key!r} asked of a "
        f"{type(value).__name__}, not an object or a list"
    )


@dataclasses.dataclass(frozen=True)
class Reference:
    """``{root[key]...}`` with its keys parsed once."""

    text: str
    root: str
    keys: tuple[Any, ...]

    @classmethod
    def parse(cls, text: str) -> "Reference":
        """:raises ValueError: malformed, or a root we do not know."""
        try:
            root, rest = _string.formatter_field_name_split(text)
            keys = tuple(key for _is_attr, key in rest)
        except ValueError as exc:
            raise ValueError(f"{{{text}}} is not a reference: {exc}") from None
        if root not in ROOTS:
            raise ValueError(
                f"{{{text}}} names {root!r}; a reference starts with one of "
                f"{', '.join(sorted(ROOTS))}"
            )
        return cls(text, str(root), keys)

    def resolve(self, namespace: Namespace) -> Any:
        if self.root not in namespace:
            raise Unresolved(f"{{{self.text}}} is used outside a loop")
        value = namespace[self.root]
        for key in self.keys:
            value = _step(value, key, self.text)
        return value


@dataclasses.dataclass(frozen=True)
class _Field:
    reference: Reference
    conversion: str | None = None
    spec: str = ""

    def text(self, namespace: Namespace) -> str:
        value = self.reference.resolve(namespace)
        if self.conversion == "r":
            value = repr(value)
        elif self.conversion == "a":
            value = ascii(value)
        elif self.conversion == "s":
            value = str(value)
        try:
            return format(value, self.spec)
        except (TypeError, ValueError) as exc:
            raise Unresolved(
                f"{{{self.reference.text}:{self.spec}}} cannot be formatted: {exc}"
            ) from None


@dataclasses.dataclass(frozen=True)
class Template:
    """A string with references, ready to render."""

    parts: tuple[str | _Field, ...]

    @property
    def lone(self) -> Reference | None:
        """The reference when the template is one and nothing else."""
        if len(self.parts) == 1 and isinstance(self.parts[0], _Field):
            return self.parts[0].reference
        return None

    @property
    def references(self) -> list[Reference]:
        return [p.reference for p in self.parts if isinstance(p, _Field)]

    def render(self, namespace: Namespace) -> Any:
        if len(self.parts) == 1 and isinstance(self.parts[0], _Field):
            field = self.parts[0]
            lone = field.conversion is None and not field.spec
            if lone and field.reference.root not in TEXT_ROOTS:
                return field.reference.resolve(namespace)
        return "".join(
            p if isinstance(p, str) else p.text(namespace) for p in self.parts
        )


def action_template(text: str) -> Template | None:
    """``text`` read as ``str.format`` reads it; None when it has no field.

    :raises ValueError: a malformed format or an unknown root.
    """
    if "{" not in text and "}" not in text:
        return None
    parts: list[str | _Field] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a valid format: {exc}") from None
    for literal, name, spec, conversion in parsed:
        if literal:
            parts.append(literal)
        if name is None:
            continue
        if not name:
            raise ValueError(f"{text!r} has an empty {{}}: name a reference")
        if spec and "{" in spec:
            raise ValueError(f"{text!r}: a reference inside a format spec")
        parts.append(_Field(Reference.parse(name), conversion, spec or ""))
    if not any(isinstance(p, _Field) for p in parts):
        return None  # only {{ and }}: the text once unescaped
    return Template(tuple(parts))


def condition_template(text: str) -> Template | None:
    """``text`` with its references found; None when it has none."""
    parts: list[str | _Field] = []
    position = 0
    for match in _REFERENCE.finditer(text):
        if match.start() > position:
            parts.append(text[position : match.start()])
        parts.append(_Field(Reference.parse(match.group(1))))
        position = match.end()
    if not parts:
        return None
    if position < len(text):
        parts.append(text[position:])
    return Template(tuple(parts))


def compile_value(value: Any, parse: Callable[[str], Template | None]) -> Render | None:
    """A function rendering ``value`` (strings in lists and objects too), or
    None when ``value`` holds no reference (it is used as it is)."""
    if isinstance(value, str):
        template = parse(value)
        if template is None:
            if parse is action_template and ("{{" in value or "}}" in value):
                unescaped = value.replace("{{", "{").replace("}}", "}")
                return lambda _ns: unescaped
            return None
        return template.render
    if isinstance(value, list):
        items = [compile_value(v, parse) for v in value]
        if all(i is None for i in items):
            return None
        renders = [
            i if i is not None else _constant(v)
            for i, v in zip(items, value, strict=True)
        ]
        return lambda ns: [r(ns) for r in renders]
    if isinstance(value, dict):
        entries = {k: compile_value(v, parse) for k, v in value.items()}
        if all(e is None for e in entries.values()):
            return None
        fixed = {
            k: e if e is not None else _constant(value[k]) for k, e in entries.items()
        }
        return lambda ns: {k: r(ns) for k, r in fixed.items()}
    return None


def _constant(value: Any) -> Render:
    return lambda _ns: value


def references(value: Any, parse: Callable[[str], Template | None]) -> list[Reference]:
    """Every reference in ``value``."""
    if isinstance(value, str):
        template = parse(value)
        return template.references if template else []
    if isinstance(value, list):
        return [r for v in value for r in references(v, parse)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in references(v, parse)]
    return []

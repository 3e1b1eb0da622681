"""The ErrorInfo reasons a service's code can return, found by reading the code (no service runs).

A refusal is built by a *refuser*: a class that derives from `Refusal` (refusal, ledger, dealing, the rules'
cores, naiko's own `Refusal` record) or a function that returns one (servicekit.errors' constructors,
`ledger.errors.invalid`, a servicer's `_denied`). The reasons of a refuser call are its UPPER_SNAKE
arguments: a literal (`errors.not_found("TABLE_NOT_FOUND", ...)`), a reason constant
(`TableError(e.NOT_SEATED)`, `caps.FIELD_TOO_LONG`), a local variable set to literals in the same
function (`refused = "STREAMS_EXHAUSTED"`), or the class's `default_reason` (`ShoeNotFound(...)`).

Which code counts: the modules the service's entry files import, transitively, inside the repository
(libs/ and services/); of those, the functions reachable from the entry points by name (a call or a
reference `x.name` reaches every function called `name` in those modules). Name reachability
over-approximates (two functions of one name are both reached), never under-approximates a direct call,
so a reason the code can raise is found; what it finds that no caller can meet, a test names with why.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIBS = ROOT / "libs"
REASON = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,}")
TEMPLATE = re.compile(r"(?:\*|<\w+>|[A-Z0-9_])*(?:\*|<\w+>)(?:\*|<\w+>|[A-Z0-9_])*")
PARAMETER = re.compile(r"<(\w+)>")
Function = ast.FunctionDef | ast.AsyncFunctionDef


@cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def module_path(name: str) -> Path | None:
    """The repository file of a module (`services.dealer.routing`, `servicekit.errors`), or None."""
    parts = name.split(".")
    base = ROOT if parts[0] == "services" else LIBS
    for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def _package_of(path: Path) -> list[str]:
    rel = path.relative_to(ROOT if path.is_relative_to(ROOT / "services") else LIBS)
    return list(rel.with_suffix("").parts)[:-1]  # a module's package; a package's own for __init__


def imported(path: Path) -> Iterator[Path]:
    for node in ast.walk(parsed(path)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = _package_of(path)
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for name in names:
            found = module_path(name) if name else None
            if found is not None:
                yield found


def import_closure(entries: Iterable[Path]) -> set[Path]:
    seen: set[Path] = set()
    todo = list(entries)
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(imported(path))
    return seen


def _terminal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _carries_reason(cls: ast.ClassDef) -> bool:
    """An exception that carries a reason for a service to pass on (`self.reason = reason` in its
    __init__: handeval's InvalidHand)."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            for sub in ast.walk(node):
                if isinstance(sub, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == "reason"
                    for target in sub.targets
                    for t in (target.elts if isinstance(target, ast.Tuple) else [target])
                ):
                    return True
    return False


def _template_part(value: ast.expr) -> str:
    """An f-string's part: its text, `<name>` for `{name.upper()}` (resolved at the calls that pass
    `name`), `*` for anything else."""
    if isinstance(value, ast.Constant):
        return str(value.value)
    if isinstance(value, ast.FormattedValue):
        call = value.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "upper"
            and isinstance(call.func.value, ast.Name)
        ):
            return f"<{call.func.value.id}>"
    return "*"


def _referenced(node: ast.AST) -> Iterator[str]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr


@dataclass
class Code:
    """The definitions of a set of modules: functions by name, refuser classes, reason constants."""

    files: set[Path]
    functions: dict[str, list[Function]] = field(default_factory=dict)  # not nested: reached by name
    every_function: dict[str, list[Function]] = field(default_factory=dict)  # nested ones too
    classes: dict[str, list[ast.ClassDef]] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    refusers: set[str] = field(default_factory=set)
    default_reasons: dict[str, set[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for path in self.files:
            tree = parsed(path)
            for function in _functions_of(path):
                self.functions.setdefault(function.name, []).append(function)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    self.classes.setdefault(node.name, []).append(node)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.every_function.setdefault(node.name, []).append(node)
            for node in tree.body:
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                    value = node.value.value
                    for target in node.targets:
                        if (
                            isinstance(target, ast.Name)
                            and isinstance(value, str)
                            and REASON.fullmatch(value)
                        ):
                            self.constants[target.id] = value
        self._find_refusers()

    def _find_refusers(self) -> None:
        refusers = {"Refusal"}
        while True:
            before = len(refusers)
            for name, classes in self.classes.items():
                if any(_terminal(base) in refusers for cls in classes for base in cls.bases) or any(
                    _carries_reason(cls) for cls in classes
                ):
                    refusers.add(name)
            for name, functions in self.every_function.items():  # a nested `bad(...)` refuses too
                for function in functions:
                    for sub in ast.walk(function):
                        if (
                            isinstance(sub, ast.Return)
                            and isinstance(sub.value, ast.Call)
                            and _terminal(sub.value.func) in refusers
                        ):
                            refusers.add(name)
            if len(refusers) == before:
                break
        self.refusers = refusers
        for name in refusers:
            for cls in self.classes.get(name, []):
                for node in cls.body:
                    if (
                        isinstance(node, ast.Assign)
                        and any(_terminal(t) == "default_reason" for t in node.targets)
                        and isinstance(node.value, ast.Constant)
                        and isinstance(node.value.value, str)
                    ):
                        self.default_reasons.setdefault(name, set()).add(node.value.value)
        # A class without its own default_reason has its bases'.
        while True:
            before = sum(map(len, self.default_reasons.values()))
            for name in refusers - set(self.default_reasons):
                for cls in self.classes.get(name, []):
                    for base in cls.bases:
                        inherited = self.default_reasons.get(_terminal(base) or "", set())
                        if inherited:
                            self.default_reasons.setdefault(name, set()).update(inherited)
            if sum(map(len, self.default_reasons.values())) == before:
                break

    def raised_in(self, node: ast.AST) -> set[str]:
        """The reasons of the refuser calls written in `node` (not those of the functions it calls)."""
        local: dict[str, set[str]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign):
                for target in sub.targets:
                    pairs: list[tuple[ast.expr, ast.expr]] = [(target, sub.value)]
                    if isinstance(target, ast.Tuple) and isinstance(sub.value, ast.Tuple):
                        pairs = list(zip(target.elts, sub.value.elts, strict=False))
                    for name, value in pairs:
                        if isinstance(name, ast.Name):
                            local.setdefault(name.id, set()).update(self._values(value))
            elif (
                isinstance(sub, ast.For)
                and isinstance(sub.target, ast.Name)
                and isinstance(sub.iter, ast.Tuple | ast.List | ast.Set)
            ):
                for value in sub.iter.elts:
                    local.setdefault(sub.target.id, set()).update(self._values(value))
        found: set[str] = set()
        for sub in ast.walk(node):
            if not isinstance(sub, ast.Call) or _terminal(sub.func) not in self.refusers:
                continue
            callee = _terminal(sub.func)
            assert callee is not None
            given = len(found)
            for arg in [*sub.args, *(k.value for k in sub.keywords if k.arg in (None, "reason"))]:
                if isinstance(arg, ast.Name) and arg.id in local:
                    found |= local[arg.id]
                else:
                    found |= self._values(arg)
            if len(found) == given:  # no reason given: the class's own
                found |= self.default_reasons.get(callee, set())
        return found

    def _values(self, value: ast.expr) -> set[str]:
        """The reasons an expression can be: a literal, a reason constant, either of an `a if c else b`,
        or a template (an f-string `f"{x}_UNAVAILABLE"` is `*_UNAVAILABLE`, named by the test)."""
        if isinstance(value, ast.Constant):
            return {value.value} if isinstance(value.value, str) and REASON.fullmatch(value.value) else set()
        if isinstance(value, ast.IfExp):
            return self._values(value.body) | self._values(value.orelse)
        if isinstance(value, ast.JoinedStr):
            text = "".join(_template_part(v) for v in value.values)
            return {text} if TEMPLATE.fullmatch(text) else set()
        name = _terminal(value)
        return {self.constants[name]} if name is not None and name in self.constants else set()

    def reachable(
        self, starts: Iterable[ast.AST], within: set[Path] | None = None, besides: Iterable[ast.AST] = ()
    ) -> set[str]:
        """The reasons raised in `starts` and in every function they reach by name (only functions of
        the files `within`, when given; never the functions `besides`)."""
        allowed = None if within is None else {id(f) for p in within for f in _functions_of(p)}
        seen: set[int] = {id(node) for node in besides}
        reasons: set[str] = set()
        calls: list[ast.Call] = []
        todo = list(starts)
        while todo:
            node = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            reasons |= self.raised_in(node)
            calls.extend(n for n in ast.walk(node) if isinstance(n, ast.Call))
            for name in set(_referenced(node)):
                for function in self.functions.get(name, []):
                    if allowed is None or id(function) in allowed:
                        todo.append(function)
        return {r for template in reasons for r in self._resolved(template, calls)}

    def _resolved(self, reason: str, calls: list[ast.Call]) -> set[str]:
        """`<field>_REQUIRED` made of `f"{field.upper()}_REQUIRED"`: one reason per literal that a call
        reached passes as `field` to a function of that parameter."""
        match = PARAMETER.search(reason)
        if match is None:
            return {reason}
        parameter = match.group(1)
        values: set[str] = set()
        for call in calls:
            for function in self.every_function.get(_terminal(call.func) or "", []):
                if reason not in self.raised_in(function):
                    continue
                names = [a.arg for a in function.args.args]
                names = names[1:] if names[:1] == ["self"] else names
                given = [k.value for k in call.keywords if k.arg == parameter]
                if parameter in names and names.index(parameter) < len(call.args):
                    given.append(call.args[names.index(parameter)])
                values |= {g.value for g in given if isinstance(g, ast.Constant) and isinstance(g.value, str)}
        return {r for v in values for r in self._resolved(reason.replace(match.group(0), v.upper()), calls)}


@cache
def _functions_of(path: Path) -> tuple[Function, ...]:
    """The module's functions and the methods of its classes; not a function nested in another (it is
    read with the function that defines it: a call of a nested `run` names that one, not every `run`)."""
    found: list[Function] = []
    todo: list[ast.AST] = [parsed(path)]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append(child)
            elif isinstance(child, ast.ClassDef | ast.If | ast.Try | ast.With):
                todo.append(child)
    return tuple(found)


def servicer_methods(paths: Iterable[Path], rpcs: Iterable[str]) -> dict[str, Function]:
    """The servicer's method of each RPC: a method of that name in a class of the entry files."""
    wanted = set(rpcs)
    found: dict[str, Function] = {}
    for path in paths:
        for cls in (n for n in ast.walk(parsed(path)) if isinstance(n, ast.ClassDef)):
            for node in cls.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in wanted:
                    assert node.name not in found, f"two servicers define {node.name}"
                    found[node.name] = node
    return found


# -- the proto's lists ---------------------------------------------------------------------------------

WORD = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def _comment_above(lines: list[str], index: int) -> list[str]:
    out: list[str] = []
    while index > 0 and lines[index - 1].strip().startswith("//"):
        index -= 1
        out.insert(0, lines[index])
    return out


def listed(proto: Path, service: str) -> tuple[set[str], dict[str, set[str]]]:
    """The reasons of the service's own comment (the lines right above it, for every RPC) and of each
    RPC's comment (the lines right above `rpc Name(`)."""
    lines = proto.read_text(encoding="utf-8").split("\n")
    start = lines.index(f"service {service} {{")
    header = set(WORD.findall("\n".join(_comment_above(lines, start))))
    per_rpc: dict[str, set[str]] = {}
    index = start + 1
    while lines[index] != "}":
        match = re.match(r"\s*rpc (\w+)\(", lines[index])
        if match:
            per_rpc[match.group(1)] = set(WORD.findall("\n".join(_comment_above(lines, index))))
        index += 1
    return header, per_rpc

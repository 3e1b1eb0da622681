"""Just enough PromQL to list the series selectors an expression uses: metric names and label matchers.

Not a full parser (promtool parses when it is installed); it only has to find every name and matcher so
that a typo or a renamed metric is caught even where promtool is absent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?:ms|[smhdwy])?)
  | (?P<ident>[a-zA-Z_:][a-zA-Z0-9_:]*)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^<>=(){},])
  | (?P<space>\s+)
  | (?P<other>.)
    """,
    re.VERBOSE,
)
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"})
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
# Aggregations may put `by (...)` between their name and their parenthesis: never metric names.
AGGREGATIONS = frozenset(
    {
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "limitk",
        "limit_ratio",
    }
)
# Grafana's variables stand for a range or a value; give them a PromQL-shaped stand-in.
_GRAFANA_VARS = re.compile(r"\$__(?:rate_interval|interval|range)\b|\$\{__(?:rate_interval|interval|range)\}")


@dataclass(frozen=True)
class Matcher:
    label: str
    op: str
    value: str


@dataclass(frozen=True)
class Selector:
    name: str | None  # None for `{__name__=~"..."}`-style selectors without a name
    matchers: tuple[Matcher, ...]


class PromQLSyntaxError(ValueError):
    pass


def _tokens(expr: str) -> list[tuple[str, str]]:
    expr = _GRAFANA_VARS.sub("5m", expr)
    out = []
    for match in _TOKEN.finditer(expr):
        kind = match.lastgroup or "other"
        if kind == "space":
            continue
        if kind == "other":
            raise PromQLSyntaxError(f"unexpected character {match.group()!r} in {expr!r}")
        out.append((kind, match.group()))
    return out


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return body if literal[0] == "`" else bytes(body, "utf-8").decode("unicode_escape")


def selectors(expr: str) -> list[Selector]:
    """Every vector selector in `expr`, in order."""
    tokens = _tokens(expr)
    found: list[Selector] = []
    i = 0
    while i < len(tokens):
        kind, text = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if kind == "ident" and text in GROUPING:
            # by (a, b) / on(x) / group_left(y): label names, not metrics.
            if nxt[1] == "(":
                close = _matching(tokens, i + 1, "(", ")")
                i = close + 1
            else:
                i += 1
            continue
        if kind == "ident" and text == "offset":
            i += 2
            continue
        if kind == "ident" and text in AGGREGATIONS:
            i += 1
            continue
        if kind == "ident" and text not in KEYWORDS and nxt[1] != "(":
            if nxt[1] == "{":
                close = _matching(tokens, i + 1, "{", "}")
                found.append(Selector(text, _matchers(tokens[i + 2 : close])))
                i = close + 1
            else:
                found.append(Selector(text, ()))
                i += 1
            continue
        if text == "{":
            close = _matching(tokens, i, "{", "}")
            matchers = _matchers(tokens[i + 1 : close])
            names = [m.value for m in matchers if m.label == "__name__" and m.op == "="]
            found.append(Selector(names[0] if names else None, matchers))
            i = close + 1
            continue
        i += 1
    return found


def _matching(tokens: list[tuple[str, str]], start: int, opener: str, closer: str) -> int:
    depth = 0
    for j in range(start, len(tokens)):
        if tokens[j][1] == opener:
            depth += 1
        elif tokens[j][1] == closer:
            depth -= 1
            if depth == 0:
                return j
    raise PromQLSyntaxError(f"unbalanced {opener}{closer}")


def _matchers(tokens: list[tuple[str, str]]) -> tuple[Matcher, ...]:
    out = []
    parts = [t for t in tokens if t[1] != ","]
    if len(parts) % 3:
        raise PromQLSyntaxError(f"malformed label matchers: {' '.join(t for _, t in tokens)}")
    for j in range(0, len(parts), 3):
        (lk, label), (_, op), (vk, value) = parts[j : j + 3]
        if lk != "ident" or op not in ("=", "!=", "=~", "!~") or vk != "string":
            raise PromQLSyntaxError(f"malformed label matcher {label} {op} {value}")
        out.append(Matcher(label, op, _unquote(value)))
    return tuple(out)


def alternatives(regex: str) -> list[str] | None:
    """`A|B|C` as a list when the regex is a plain alternation of literals, else None (cannot check)."""
    if re.fullmatch(r"[A-Za-z0-9_.]+(?:\|[A-Za-z0-9_.]+)*", regex) and ".*" not in regex:
        return regex.split("|")
    return None

"""Python names for JSON names: deterministic, collision-free, and reversible by table.

JSON property and tool names may be anything (``odd-name``, ``class``,
``2fa``, ``ﬁle``). The SDK shows a valid Python identifier and, wherever it
differs, the real name next to it. Mapping is a pure function of the set of
names, so the same schema always yields the same identifiers.
"""

from __future__ import annotations

import functools
import hashlib
import keyword
import re
import unicodedata
from collections.abc import Iterable

# Names a generated type must not shadow: the module imports these from typing
# or uses them as builtin types inside annotations.
RESERVED_TYPE_NAMES = frozenset(
    {"Any", "Literal", "Never", "NotRequired", "TypedDict", "None", "True", "False"}
    | {"bool", "dict", "float", "int", "list", "str", "tuple", "annotations"}
)

_NON_WORD = re.compile(r"\W", re.UNICODE)
_WORD_SPLIT = re.compile(r"[^0-9A-Za-z\u0080-\U0010ffff]+|_")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def is_identifier(name: str) -> bool:
    """True when ``name`` can be written as-is as a Python name and means itself.

    Python folds identifiers with NFKC, so ``ﬁle`` would silently become
    ``file``; such names are not identifiers for our purpose.
    """
    return name.isidentifier() and not keyword.iskeyword(name) and unicodedata.normalize("NFKC", name) == name


def to_identifier(name: str) -> str:
    """A valid identifier for ``name``; ``name`` itself when it already is one."""
    if is_identifier(name):
        return name
    candidate = _NON_WORD.sub("_", unicodedata.normalize("NFKC", name))
    if not candidate or not (candidate[0].isidentifier()):
        candidate = "_" + candidate
    if keyword.iskeyword(candidate):
        candidate += "_"
    if is_identifier(candidate):
        return candidate
    # Characters that are word characters yet cannot form identifiers (rare
    # marks and digits of other scripts): fall back to a stable digest.
    return "n_" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def unique_identifiers(names: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Map each real name to a distinct identifier, deterministically.

    Names that already are identifiers keep themselves; the others are mapped
    in sorted order and get ``_2``, ``_3`` ... on collision. ``taken`` lists
    identifiers that must not be produced.
    """
    unique = sorted(set(names))
    used = set(taken)
    result: dict[str, str] = {}
    for name in unique:
        if is_identifier(name) and name not in used:
            result[name] = name
            used.add(name)
    for name in unique:
        if name in result:
            continue
        base = to_identifier(name)
        candidate, n = base, 1
        while candidate in used:
            n += 1
            candidate = f"{base}_{n}"
        result[name] = candidate
        used.add(candidate)
    return result


def words(name: str) -> list[str]:
    """Split a name into words on punctuation, ``_`` and camelCase boundaries."""
    parts: list[str] = []
    for chunk in _WORD_SPLIT.split(name):
        parts.extend(p for p in _CAMEL.split(chunk) if p)
    return parts


@functools.lru_cache(maxsize=4096)
def pascal_case(name: str) -> str:
    """A class-style name: ``get_current-time`` → ``GetCurrentTime`` (never reserved, never empty)."""
    joined = "".join(w[:1].upper() + w[1:] for w in words(name))
    candidate = to_identifier(joined) if joined else "T"
    if candidate[0].isdigit() or candidate.startswith("_"):
        candidate = "T" + candidate.lstrip("_")
    if candidate in RESERVED_TYPE_NAMES or not is_identifier(candidate):
        candidate = "T" + candidate if is_identifier("T" + candidate) else "T"
    return candidate

"""``config show`` and ``config check`` as data: the files looked at, every key in force, every problem.

:func:`inspect_config` loads both files once; the CLI prints the result as
text or as one versioned JSON object. ``config check`` exits
:attr:`ConfigReport.exit_code`: 1 on any problem (a file that is not TOML or
not readable, an unknown key or section, a wrong type or value, a format
``version`` this plugin does not read), else 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ptc_plus.config.bindings import load_bindings
from ptc_plus.config.effective import EffectiveKey, effective_keys
from ptc_plus.config.errors import ConfigSyntaxError, ConfigUnreadable, ConfigVersionUnsupported
from ptc_plus.config.issues import ConfigIssue
from ptc_plus.config.keys import toml_literal
from ptc_plus.config.loader import load_config
from ptc_plus.config.model import DEFAULT_CAPS, RuntimeCaps
from ptc_plus.config.paths import Scope, user_config_file, workspace_config_file
from ptc_plus.i18n import message

WHOLE_FILE_CODES = frozenset({ConfigUnreadable.code, ConfigSyntaxError.code, ConfigVersionUnsupported.code})
"""Codes of the problems that make a whole file unusable."""


def problem_line(problem: ConfigIssue, lang: str | None = None) -> str:
    """``PTC-xxxx: file:line:col: ...``: a problem with its stable code, as every command prints one."""
    return f"{problem.code}: {problem.message(lang)}"


@attrs.frozen(kw_only=True)
class ConfigFile:
    """One config file looked at: its scope, path, whether it exists, and whether any of it could be used
    (``False`` when it exists but could not be read, is not TOML or has an unsupported version)."""

    scope: Scope
    path: str
    exists: bool
    usable: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope.value, "path": self.path, "exists": self.exists, "usable": self.usable}

    def state_text(self, lang: str | None = None) -> str:
        if not self.exists:
            return message("config.show.missing", lang)
        return message("config.show.exists" if self.usable else "config.show.unusable", lang)


@attrs.frozen(kw_only=True)
class ConfigReport:
    """Everything ``config show`` and ``config check`` print."""

    files: tuple[ConfigFile, ...]
    keys: tuple[EffectiveKey, ...]
    problems: tuple[ConfigIssue, ...]

    @property
    def exit_code(self) -> int:
        """``config check``'s exit code: 1 when there is any problem, else 0."""
        return 1 if self.problems else 0

    def check_json(self, lang: str | None = None) -> dict[str, Any]:
        """``{"ok", "files", "problems"}``; each problem as :meth:`ConfigIssue.to_json` (the CLI adds ``version``)."""
        return {
            "ok": not self.problems,
            "files": [file.to_json() for file in self.files],
            "problems": [problem.to_json(lang) for problem in self.problems],
        }

    def show_json(self, lang: str | None = None) -> dict[str, Any]:
        """``{"files", "keys", "problems"}``; each key as :meth:`EffectiveKey.to_json` (the CLI adds ``version``)."""
        return {
            "files": [file.to_json() for file in self.files],
            "keys": [key.to_json() for key in self.keys],
            "problems": [problem.to_json(lang) for problem in self.problems],
        }

    def check_lines(self, lang: str | None = None) -> list[str]:
        """One line per problem, then a summary line."""
        lines = [problem_line(problem, lang) for problem in self.problems]
        read = sum(file.exists for file in self.files)
        if len(self.problems) == 1:
            lines.append(message("config.check.one-problem", lang))
        elif self.problems:
            lines.append(message("config.check.problems", lang, count=len(self.problems)))
        else:
            lines.append(message("config.check.clean", lang, files=read))
        return lines

    def show_lines(self, lang: str | None = None) -> list[str]:
        """The files, then ``key = value  # source`` per key, then any problems."""
        lines = [
            message(
                "config.show.file",
                lang,
                scope=message(f"config.scope.{file.scope.value}", lang),
                path=file.path,
                state=file.state_text(lang),
            )
            for file in self.files
        ]
        for key in self.keys:
            value = message("config.show.unset", lang) if key.value is None else toml_literal(key.value)
            source = message(f"config.scope.{key.source}", lang)
            lines.append(f"{key.key} = {value}  # {source}")
        lines += [message("config.show.problem", lang, problem=problem_line(p, lang)) for p in self.problems]
        return lines


def inspect_config(
    workspace: Path | None,
    *,
    env: Mapping[str, str] | None = None,
    user_file: Path | None = None,
    caps: RuntimeCaps = DEFAULT_CAPS,
) -> ConfigReport:
    """Load the user file and (when ``workspace`` is given) the workspace file, as :func:`.load_config` does."""
    user = user_file or user_config_file(env)
    paths = [(Scope.USER, user)]
    if workspace is not None:
        paths.append((Scope.WORKSPACE, workspace_config_file(workspace)))
    loaded = load_config(workspace, env=env, user_file=user, caps=caps)
    unusable = {issue.file for issue in loaded.issues if issue.code in WHOLE_FILE_CODES}
    files = tuple(
        ConfigFile(scope=scope, path=str(path), exists=str(path) in loaded.files, usable=str(path) not in unusable)
        for scope, path in paths
    )
    scopes = {file.path: file.scope.value for file in files}
    # Problems in file order, as a person reads and fixes them (the loader finds them per section).
    order = {file.path: index for index, file in enumerate(files)}
    # The REPL's user bindings are files a config names: a missing or refused one is a problem here too.
    found = (*loaded.issues, *load_bindings(loaded).issues)
    problems = sorted(found, key=lambda i: (order.get(i.file, len(order)), i.line or 0, i.column or 0))
    return ConfigReport(files=files, keys=effective_keys(loaded, scopes), problems=tuple(problems))

"""The page's save routes: a value, a baseline edit, a capability's choice, in either file (ADR 0129).

Every route spends the rendering's form token first (a forged, missing or replayed one is ``403``, as for
the switch) behind the page's :class:`.RequestGuard` (token, ``Host``, ``Origin``). Then it reads the form,
checks what can be checked before the file is touched (an identity's form, its presence in the catalog),
and saves through :func:`ptc_plus.config.set_config_value` with the value the page showed as
``expected``. The answer is a ``303`` to the page on success; otherwise the page again, its field showing
the reader's input and why (:class:`.FieldNote`): ``422`` for a value the checker refuses (its own words),
``409`` with the other side's value when the file changed since the page loaded, ``400`` for a form the
page never sends. A refused save writes nothing.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import attrs
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from hookspecs.i18n import LOCALES, current_locale
from ptc_plus.capabilities import CatalogUnavailable
from ptc_plus.cli.settings_page.field_errors import FieldNote, field_id
from ptc_plus.cli.settings_page.form_tokens import FormTokens
from ptc_plus.cli.settings_page.forms import BASELINE, CHOICES, EDITED_KEYS, INHERIT, KINDS
from ptc_plus.cli.settings_page.guard import TOKEN_PARAMETER
from ptc_plus.cli.workspace_plan import workspace_catalog
from ptc_plus.config import (
    ConfigEditConflict,
    ConfigError,
    ConfigIssue,
    ConfigValueRejected,
    KeyPath,
    Scope,
    is_well_formed_identity,
    set_config_value,
)
from ptc_plus.i18n import message
from ptc_plus.spelling import closest

PageMaker = Callable[..., HTMLResponse]
"""``page(lang, *, query=, note=, status=)``: the page rendered afresh (the server's own)."""


class BadForm(Exception):
    """A form the page never sends (an unknown key, scope or operation, an ``expected`` that is no TOML)."""


@attrs.frozen(kw_only=True)
class Save:
    """One save asked for: where, what, what the page showed, and the field to answer at."""

    scope: Scope
    key: KeyPath
    value: Any
    expected: Any
    field: str
    given: str


def save_routes(workspace: Path, forms: FormTokens, token: str, page: PageMaker) -> list[Route]:
    """The routes ``/value``, ``/baseline`` and ``/choice`` for ``workspace``'s page."""

    def route(path: str, parse: Callable[[Mapping[str, str]], Save | FieldNote]) -> Route:
        async def save(request: Request) -> Response:
            form = {key: values[-1] for key, values in parse_qs((await request.body()).decode()).items()}
            if not forms.spend(form.get("form_token", "")):
                return PlainTextResponse("refused: form token\n", status_code=403)
            lang, query = _lang(form.get("lang")), form.get("q", "")
            try:
                asked = await run_in_threadpool(parse, {**form, "lang": lang})
            except BadForm:
                return PlainTextResponse("refused: value\n", status_code=400)
            if isinstance(asked, FieldNote):  # refused before the file was looked at
                return await run_in_threadpool(page, lang, query=query, note=asked, status=asked.status)
            note = await run_in_threadpool(_save, workspace, asked, lang)
            if note is not None:
                return await run_in_threadpool(page, lang, query=query, note=note, status=note.status)
            # Back to the field saved: the page opens there, not at its top.
            target = "/?" + urlencode({TOKEN_PARAMETER: token, "lang": lang, "q": query}) + "#" + asked.field
            return RedirectResponse(target, status_code=303)

        return Route(f"/{path}", save, methods=["POST"])

    def baseline(form: Mapping[str, str]) -> Save | FieldNote:
        return _baseline(workspace, form)

    return [route("value", _value), route("baseline", baseline), route("choice", _choice)]


def _save(workspace: Path, asked: Save, lang: str) -> FieldNote | None:
    """Save ``asked``; ``None`` when it was saved, else the note its field shows."""
    try:
        set_config_value(asked.scope, workspace, asked.key, asked.value, expected=asked.expected)
    except ConfigValueRejected as refused:
        text = "; ".join(_issue_text(issue, lang) for issue in refused.issues)
        return FieldNote(field=asked.field, given=asked.given, text=text, status=422)
    except ConfigEditConflict as conflict:
        theirs = str(conflict.params["theirs"]) or message("cli.settings.page.not-set", lang)
        file = message(f"config.scope.{asked.scope.value}", lang)
        text = message(
            "cli.settings.page.conflict-field", lang, file=file, setting=conflict.params["setting"], theirs=theirs
        )
        return FieldNote(field=asked.field, given=asked.given, text=text, status=409)
    except ConfigError as error:  # the file is not TOML, a table on the way is no table: the loader's words
        return FieldNote(field=asked.field, given=asked.given, text=error.message(lang), status=422)
    return None


def _lang(asked: str | None) -> str:
    return asked if asked in LOCALES else current_locale()


def _issue_text(issue: ConfigIssue, lang: str) -> str:
    return f"{issue.path}: {issue.reason_text(lang)}" if issue.code == "PTC-4010" else issue.message(lang)


def _scope(form: Mapping[str, str]) -> Scope:
    try:
        return Scope(form.get("scope", ""))
    except ValueError:
        raise BadForm from None


def _expected(form: Mapping[str, str]) -> Any:
    """The value the page showed, from its TOML text (empty: not set)."""
    text = form.get("expected", "")
    if text == "":
        return None
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        raise BadForm from None


def typed(kind: str, text: str) -> Any:
    """The form's text as the value the file gets: an integer, a number or a boolean when it reads as one,
    else the text itself, which the checker then refuses in its own words ("expected an integer");
    empty: not set (the key is removed from the file)."""
    text = text.strip()
    if text == "":
        return None
    if kind == "boolean":
        return {"true": True, "false": False}.get(text, text)
    try:
        if kind == "integer":
            return int(text, 10)
        if kind == "number":
            return float(text)
    except ValueError:
        return text
    return text


def _value(form: Mapping[str, str]) -> Save:
    key, scope = form.get("key", ""), _scope(form)
    if key not in EDITED_KEYS:
        raise BadForm
    given = form.get("value", "")
    field = field_id("value", scope.value, key)
    value = typed(KINDS[key], given)
    return Save(scope=scope, key=tuple(key.split(".")), value=value, expected=_expected(form), field=field, given=given)


def _choice(form: Mapping[str, str]) -> Save:
    identity, scope, chosen = form.get("identity", ""), _scope(form), form.get("value", "")
    if not identity or chosen not in (INHERIT, *CHOICES):
        raise BadForm
    field = field_id("choice", scope.value, identity)
    value = None if chosen == INHERIT else chosen
    key = ("capabilities", identity, "disclosure")
    return Save(scope=scope, key=key, value=value, expected=_expected(form), field=field, given=chosen)


def _baseline(workspace: Path, form: Mapping[str, str]) -> Save | FieldNote:
    """Add, remove or move one entry of a file's baseline, from the list the page showed."""
    scope, op, lang = _scope(form), form.get("op", ""), form.get("lang", "")
    expected = _expected(form)
    if expected is not None and not (isinstance(expected, list) and all(isinstance(i, str) for i in expected)):
        raise BadForm
    listed: list[str] = list(expected or [])
    if op == "add":
        item = form.get("add", "").strip()
        field = field_id("add", scope.value)
        refused = _unusable_identity(workspace, item, lang)
        if refused is not None:
            return FieldNote(field=field, given=item, text=refused, status=422)
        listed.append(item)  # a duplicate is left to the checker, which says so in its words
        given = item
    else:
        field, given = field_id("baseline", scope.value), ""
        try:
            index = int(form.get("index", ""), 10)
        except ValueError:
            raise BadForm from None
        if not 0 <= index < len(listed) or listed[index] != form.get("item"):
            raise BadForm
        if op == "remove":
            del listed[index]
        elif op in ("up", "down"):
            other = index - 1 if op == "up" else index + 1
            if not 0 <= other < len(listed):
                raise BadForm
            listed[index], listed[other] = listed[other], listed[index]
        else:
            raise BadForm
    # An emptied baseline leaves the file: the other file's (or none) applies, as before it was written.
    return Save(scope=scope, key=BASELINE, value=listed or None, expected=expected, field=field, given=given)


def _unusable_identity(workspace: Path, item: str, lang: str) -> str | None:
    """Why ``item`` cannot join a baseline, in ``lang`` (``None``: it can): not an identity at all (the words
    ``ptc-plus capabilities set`` refuses it with), or none of the workspace's catalog (with the nearest)."""
    if not is_well_formed_identity(item):
        return message("error.PTC-4022", lang, identity=item)
    try:
        capabilities = workspace_catalog(workspace).managed()
    except CatalogUnavailable:  # no catalog to compare with: the file's own checks still apply
        return None
    known = {capability.identity: capability.identity for capability in capabilities}
    if item in known:
        return None
    for capability in capabilities:
        known.setdefault(capability.name, capability.identity)
    text = message("cli.settings.page.unknown-identity", lang, identity=item)
    suggestion = closest(item, known)
    return f"{text} {message('ptc.did-you-mean', lang, suggestion=suggestion)}" if suggestion else text

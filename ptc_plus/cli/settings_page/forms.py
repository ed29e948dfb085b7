"""The page's edit forms: values, the baseline and each capability's choice, for both files (ADR 0129).

Every form is plain HTML posted to a route of :mod:`.saves`: it carries the rendering's form token, the
value the page showed (``expected``, TOML; empty: not set) and the file it edits (``scope``), so a save
lands only in that file and only if that file still holds what the reader saw. Each control has a
``<label>`` (visually hidden where its row and column already name it), each action is a ``<button>``, and
a refused save's note sits beside its field (:mod:`.field_errors`). The capability search is a GET form:
the page comes back filtered and ranked by discovery's own ranker (:func:`ptc_plus.discovery.find` over
the whole catalog, ``off`` members included, since a reader may want one back), without script.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from html import escape
from typing import Any
from urllib.parse import urlencode

import attrs

from ptc_plus import discovery
from ptc_plus.capabilities import Capability
from ptc_plus.cli.settings_page.field_errors import FieldNote, described, field_id, note_for, note_html
from ptc_plus.cli.settings_page.guard import TOKEN_PARAMETER
from ptc_plus.cli.settings_page.view import KeyRow, SettingsView
from ptc_plus.config import Scope, config_keys, file_values, toml_literal, value_at
from ptc_plus.i18n import message

EDITED_KEYS = (
    "management.enabled",
    "statistics.enabled",
    "statistics.window",
    "statistics.min_samples",
    "statistics.threshold",
    "management.budget_tokens",
    "management.context_tokens",
    "context.discovery_tokens",
    "context.recovery_tokens",
    "context.preview_tokens",
)
"""The values the page edits in either file: the switch, the statistics settings and the four budgets."""
BASELINE = ("management", "baseline")
CHOICES = ("full", "on-demand", "off")
INHERIT = "inherit"
SCOPES = (Scope.WORKSPACE, Scope.USER)
SEARCH_LIMIT = 25
"""How many ranked matches the search shows (a narrower query finds the others)."""

KINDS: Mapping[str, str] = {key.path: key.kind for key in config_keys() if key.path in EDITED_KEYS}
"""Each edited key's kind (``boolean``, ``integer``, ``number``), from the model, as the checker reads it."""

EDIT_STYLE = """
:focus-visible{outline:3px solid #000;outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.edit{margin:0;display:flex;flex-wrap:wrap;gap:.3rem;align-items:center}.edit button,.edit select{margin:0}
input{font:inherit;max-width:100%}.edit input.num{width:7rem}
.field-note{flex-basis:100%;margin:.2rem 0;border-left:4px solid #000;padding-left:.4rem}
[aria-invalid=true]{border:3px double #000}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.pair section{border:1px solid #bbb;padding:.5rem}
ol.baseline li{margin:.3rem 0}ol.baseline .edit{display:inline-flex;margin-left:.4rem}
.desc{display:block;color:#444;font-size:.9em;font-weight:normal}
@media (max-width:700px){.pair{grid-template-columns:1fr}}
"""


@attrs.frozen(kw_only=True)
class Forms:
    """What one rendering's forms need besides the view: where they post and what they carry."""

    lang: str
    token: str
    form_token: str
    query: str
    note: FieldNote | None

    def say(self, name: str, **params: object) -> str:
        return escape(message(name, self.lang, **params))

    def action(self, route: str) -> str:
        return escape(f"/{route}?" + urlencode({TOKEN_PARAMETER: self.token}), quote=True)

    def hidden(self, **fields: str) -> str:
        common = {"form_token": self.form_token, "lang": self.lang, "q": self.query}
        return "".join(
            f'<input type="hidden" name="{name}" value="{escape(value, quote=True)}">'
            for name, value in {**common, **fields}.items()
        )

    def file_name(self, scope: Scope) -> str:
        return message(f"config.scope.{scope.value}", self.lang)


def edit_sections(view: SettingsView, forms: Forms) -> str:
    """The three editing sections: values, baselines, capability choices (each file side by side)."""
    files = {scope: file_values(scope, view.workspace) for scope in SCOPES}
    return "".join(
        (
            f'<h2 id="edit">{forms.say("cli.settings.page.edit-values")}</h2>',
            f'<p class="note">{forms.say("cli.settings.page.edit-values-note")}</p>',
            _values_table(view, files, forms),
            f'<h2 id="baseline">{forms.say("cli.settings.page.baseline")}</h2>',
            _baseline_in_force(view, forms),
            '<div class="pair">',
            *(_baseline(view, scope, files[scope], forms) for scope in SCOPES),
            "</div>",
            f'<h2 id="choices">{forms.say("cli.settings.page.choices")}</h2>',
            _search_form(forms),
            _choices_table(view, files, forms),
        )
    )


def _rows(view: SettingsView) -> dict[str, KeyRow]:
    return {row.key: row for row in view.keys}


def _source(row: KeyRow | None, forms: Forms) -> str:
    if row is None:
        return forms.say("config.scope.default")
    text = forms.say(f"config.scope.{row.effective.source}")
    value = row.effective.value
    shown = forms.say("cli.settings.page.not-set") if value is None else escape(toml_literal(value))
    return f"<code>{shown}</code> ({text})"


def _values_table(view: SettingsView, files: Mapping[Scope, Mapping[str, Any]], forms: Forms) -> str:
    rows = _rows(view)
    headers = ("col-key", "col-workspace", "col-user", "col-effective")
    head = "".join(f'<th scope="col">{forms.say(f"cli.settings.page.{name}")}</th>' for name in headers)
    labels = [escape(message(f"cli.settings.page.{name}", forms.lang), quote=True) for name in headers]
    body = []
    for key in EDITED_KEYS:
        path = tuple(key.split("."))
        cells = [f'<th scope="row"><code>{escape(key)}</code></th>']
        for index, scope in enumerate(SCOPES, 1):
            cells.append(
                f'<td data-label="{labels[index]}">{_value_form(key, scope, value_at(files[scope], path), forms)}</td>'
            )
        cells.append(f'<td data-label="{labels[3]}">{_source(rows.get(key), forms)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table id="values"><tr class="head">{head}</tr>{"".join(body)}</table></div>'


def _value_form(key: str, scope: Scope, held: Any, forms: Forms) -> str:
    """One key of one file: its value as the file holds it (invalid ones too), a Save button."""
    field = field_id("value", scope.value, key)
    mine = note_for(forms.note, field)
    shown = "" if held is None else toml_literal(held)  # an invalid value too, as the file holds it
    text = mine.given if mine is not None else shown
    label = forms.say("cli.settings.page.field-label", setting=key, file=forms.file_name(scope))
    if KINDS.get(key) == "boolean":
        options = "".join(
            f'<option value="{value}"{" selected" if text == value else ""}>{forms.say(words)}</option>'
            for value, words in (
                ("", "cli.settings.page.not-set"),
                ("true", "cli.settings.page.switch-true"),
                ("false", "cli.settings.page.switch-false"),
            )
        )
        control = f'<select id="{field}" name="value"{described(forms.note, field)}>{options}</select>'
    else:
        placeholder = forms.say("cli.settings.page.not-set")
        control = (
            f'<input id="{field}" name="value" class="num" inputmode="decimal" autocomplete="off"'
            f' value="{escape(text, quote=True)}" placeholder="{placeholder}"{described(forms.note, field)}>'
        )
    expected = "" if held is None else toml_literal(held)
    return (
        f'<form method="post" action="{forms.action("value")}" class="edit">'
        f"{forms.hidden(scope=scope.value, key=key, expected=expected)}"
        f'<label class="sr" for="{field}">{label}</label>{control}'
        f'<button type="submit">{forms.say("cli.settings.page.save")}</button>'
        f"{note_html(forms.note, field, forms.lang)}</form>"
    )


def _baseline_in_force(view: SettingsView, forms: Forms) -> str:
    row = _rows(view).get(".".join(BASELINE))
    listed = [] if row is None or not isinstance(row.effective.value, list) else row.effective.value
    source = forms.say(f"config.scope.{row.effective.source}") if row is not None else forms.say("config.scope.default")
    shown = ", ".join(listed) or message("cli.settings.page.not-set", forms.lang)
    return f"<p>{forms.say('cli.settings.page.baseline-in-force', baseline=shown, source=source)}</p>"


def _baseline(view: SettingsView, scope: Scope, data: Mapping[str, Any], forms: Forms) -> str:
    """One file's baseline, most important first: each entry with Move up / Move down / Remove, then Add."""
    held = value_at(data, BASELINE)
    items = [item for item in held if isinstance(item, str)] if isinstance(held, list) else []
    expected = "" if held is None else toml_literal(held)
    name = forms.file_name(scope)
    field = field_id("baseline", scope.value)
    title = forms.say(f"cli.settings.page.col-{scope.value}")
    parts = [f'<section aria-labelledby="{field}-title"><h3 id="{field}-title">{title}</h3>']
    parts.append(note_html(forms.note, field, forms.lang))
    if not items:
        parts.append(f"<p>{forms.say('cli.settings.page.baseline-empty', file=name)}</p>")
    else:
        parts.append(f'<ol class="baseline" id="{field}">')
        for index, item in enumerate(items):
            buttons = []
            for op, words, usable in (
                ("up", "cli.settings.page.move-up", index > 0),
                ("down", "cli.settings.page.move-down", index < len(items) - 1),
                ("remove", "cli.settings.page.remove", True),
            ):
                if usable:  # no Move up on the first entry: a button that does nothing is noise to a keyboard
                    spoken = escape(message(f"{words}-item", forms.lang, item=item), quote=True)
                    button = f'<button type="submit" name="op" value="{op}" aria-label="{spoken}">'
                    buttons.append(f"{button}{forms.say(words)}</button>")
            parts.append(
                f"<li><code>{escape(item)}</code>"
                f'<form method="post" action="{forms.action("baseline")}" class="edit">'
                f"{forms.hidden(scope=scope.value, expected=expected, index=str(index), item=item)}"
                f"{''.join(buttons)}</form></li>"
            )
        parts.append("</ol>")
    add = field_id("add", scope.value)
    mine = note_for(forms.note, add)
    parts.append(
        f'<form method="post" action="{forms.action("baseline")}" class="edit">'
        f"{forms.hidden(scope=scope.value, expected=expected, index='', item='')}"
        f'<label for="{add}">{forms.say("cli.settings.page.add-label", file=name)}</label>'
        f'<input id="{add}" name="add" list="identities" autocomplete="off"'
        f' value="{escape(mine.given if mine else "", quote=True)}"{described(forms.note, add)}>'
        f'<button type="submit" name="op" value="add">{forms.say("cli.settings.page.add")}</button>'
        f"{note_html(forms.note, add, forms.lang)}</form></section>"
    )
    return "".join(parts)


def _search_form(forms: Forms) -> str:
    clear = ""
    if forms.query:
        href = escape("/?" + urlencode({TOKEN_PARAMETER: forms.token, "lang": forms.lang}) + "#choices", quote=True)
        clear = f' <a href="{href}">{forms.say("cli.settings.page.show-all")}</a>'
    return (
        f'<form method="get" action="/#choices" role="search" class="edit">'
        f'<input type="hidden" name="{TOKEN_PARAMETER}" value="{escape(forms.token, quote=True)}">'
        f'<input type="hidden" name="lang" value="{escape(forms.lang, quote=True)}">'
        f'<label for="q">{forms.say("cli.settings.page.search-label")}</label>'
        f'<input id="q" type="search" name="q" value="{escape(forms.query, quote=True)}">'
        f'<button type="submit">{forms.say("cli.settings.page.search")}</button>{clear}</form>'
    )


def shown_capabilities(view: SettingsView, query: str) -> list[Capability]:
    """The catalog's capabilities the choices table lists: all, in catalog order, without ``query``; with it,
    the best :data:`SEARCH_LIMIT` by discovery's ranker, best first."""
    managed = view.catalog.managed()
    if not query.strip():
        return list(managed)
    snapshot = discovery.build_snapshot(view.catalog, counter=view.counter)
    found = discovery.find(snapshot, query.strip(), limit=SEARCH_LIMIT)["matches"]
    by_identity = {capability.identity: capability for capability in managed}
    return [by_identity[match["identity"]] for match in found if match["identity"] in by_identity]


def _choices_table(view: SettingsView, files: Mapping[Scope, Mapping[str, Any]], forms: Forms) -> str:
    shown = shown_capabilities(view, forms.query)
    known = {capability.identity for capability in view.catalog.managed()}
    stale: list[str] = []  # chosen in a file, absent from the catalog: listed so a stale choice can be undone
    if not forms.query.strip():
        for scope in SCOPES:
            chosen = files[scope].get("capabilities")
            if isinstance(chosen, Mapping):
                stale += [identity for identity in chosen if identity not in known and identity not in stale]
    in_force = {row.identity: row.disclosure for row in view.plan}
    headers = ("col-capability", "col-effective", "col-workspace", "col-user")
    head = "".join(f'<th scope="col">{forms.say(f"cli.settings.page.{name}")}</th>' for name in headers)
    labels = [escape(message(f"cli.settings.page.{name}", forms.lang), quote=True) for name in headers]
    datalist = "".join(f'<option value="{escape(c.identity, quote=True)}">' for c in view.catalog.managed())
    summary = ""
    if forms.query.strip():
        words = "cli.settings.page.matches" if shown else "cli.settings.page.no-matches"
        summary = f'<p role="status">{forms.say(words, count=len(shown), query=forms.query.strip())}</p>'
    rows: list[tuple[str, str, str]] = [(c.identity, c.name, _first_line(c.description)) for c in shown]
    rows += [(identity, "", forms.say("cli.settings.page.not-in-catalog")) for identity in stale]
    body = []
    absent = message("ptc.report.absent", forms.lang)
    for identity, name, description in rows:
        about = (
            f'<span class="desc">{escape(name)} — {escape(description)}</span>'
            if name
            else f'<span class="desc">{description}</span>'
        )
        disclosure = escape(in_force.get(identity) or absent) + _chosen_in(view, identity, forms)
        cells = [
            f'<th scope="row"><code>{escape(identity)}</code>{about}</th>',
            f'<td data-label="{labels[1]}">{disclosure}</td>',
        ]
        for index, scope in enumerate(SCOPES, 2):
            held = value_at(files[scope], ("capabilities", identity, "disclosure"))
            cells.append(f'<td data-label="{labels[index]}">{_choice_form(identity, scope, held, forms)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    table = (
        f'<div class="scroll"><table id="choice-table"><tr class="head">{head}</tr>{"".join(body)}</table></div>'
        if body
        else ""
    )
    return f'{summary}{table}<datalist id="identities">{datalist}</datalist>'


def _chosen_in(view: SettingsView, identity: str, forms: Forms) -> str:
    """Which file's choice is in force for ``identity`` (nothing when neither file chooses: the plan decided)."""
    name = identity if re.fullmatch(r"[A-Za-z0-9_-]+", identity) else toml_literal(identity)
    key = f"capabilities.{name}.disclosure"  # bare or quoted, as effective_keys writes it
    row = _rows(view).get(key)
    if row is None or row.effective.source not in {scope.value for scope in SCOPES}:
        return ""
    file = forms.file_name(Scope(row.effective.source))
    return f'<span class="file">{forms.say("cli.settings.page.chosen-in", file=file)}</span>'


def _choice_form(identity: str, scope: Scope, held: Any, forms: Forms) -> str:
    field = field_id("choice", scope.value, identity)
    mine = note_for(forms.note, field)
    current = held if isinstance(held, str) else INHERIT
    selected = mine.given if mine is not None else current
    options = "".join(
        f'<option value="{value}"{" selected" if selected == value else ""}>{escape(value)}</option>'
        for value in (INHERIT, *CHOICES)
    )
    label = forms.say("cli.settings.page.choice-label", identity=identity, file=forms.file_name(scope))
    expected = "" if held is None else toml_literal(held)
    return (
        f'<form method="post" action="{forms.action("choice")}" class="edit">'
        f"{forms.hidden(scope=scope.value, identity=identity, expected=expected)}"
        f'<label class="sr" for="{field}">{label}</label>'
        f'<select id="{field}" name="value"{described(forms.note, field)}>{options}</select>'
        f'<button type="submit">{forms.say("cli.settings.page.save")}</button>'
        f"{note_html(forms.note, field, forms.lang)}</form>"
    )


def _first_line(text: str) -> str:
    """A description's first line, at most 140 characters (the table stays readable at 390 pixels)."""
    lines = text.strip().splitlines()
    line = lines[0].strip() if lines else ""
    return line if len(line) <= 140 else line[:139] + "…"

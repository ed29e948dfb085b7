"""The page as HTML, rendered on the server: every text from the message catalogs, every value escaped.

No script: the language switch is a pair of links, the tables are plain tables, readable without colour
(an overage says so in words); below 700 pixels each row becomes a block whose cells name their column.
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

from hookspecs.i18n import LOCALES
from ptc_plus.cli.settings_page.bars import BAR_STYLE, budget_section, coverage_cell, samples_cell, statistics_note
from ptc_plus.cli.settings_page.field_errors import FieldNote
from ptc_plus.cli.settings_page.forms import EDIT_STYLE, Forms, edit_sections
from ptc_plus.cli.settings_page.guard import TOKEN_PARAMETER
from ptc_plus.cli.settings_page.paths import shown as shown_path
from ptc_plus.cli.settings_page.session_section import SESSION_STYLE, Shown, sessions_section
from ptc_plus.cli.settings_page.view import KeyRow, SettingsView
from ptc_plus.config import EffectiveKey, problem_line, toml_literal
from ptc_plus.i18n import message

SWITCH_KEY = "management.enabled"

_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1rem;color:#111;background:#fff}
h1{font-size:1.4rem;margin:.2rem 0 .6rem}h2{font-size:1.15rem;margin:1.4rem 0 .4rem}
nav{float:right}nav a,nav strong{margin-left:.6rem}
.scroll{overflow-x:auto;border:1px solid #bbb}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;
border-bottom:1px solid #ddd}th{background:#f2f2f2}.head th{white-space:nowrap}
code{font-size:.92em;overflow-wrap:anywhere}
.unset{color:#666}.file{display:block;color:#555;font-size:.85em;overflow-wrap:anywhere}
.over{font-weight:bold}ul{padding-left:1.2rem}li{overflow-wrap:anywhere}
.note{color:#444}.conflict{border:2px solid #000;padding:.5rem;font-weight:bold}
form{margin:.4rem 0 .8rem}select,button{font:inherit;margin:0 .4rem}
@media (max-width:700px){table,tbody,tr,th,td{display:block;width:auto}tr.head{display:none}
tr{border-bottom:2px solid #bbb;padding:.3rem 0}th,td{border:0;padding:.15rem .5rem}
td::before{content:attr(data-label) ": ";font-weight:bold}
nav{float:none;margin-bottom:.4rem}nav a,nav strong{margin:0 .6rem 0 0}}
"""


def render(
    view: SettingsView,
    lang: str,
    token: str,
    *,
    form_token: str,
    conflict: str | None = None,
    query: str = "",
    note: FieldNote | None = None,
    shown: Shown | None = None,
) -> str:
    """The whole page for ``view`` in ``lang``; links keep ``token`` so the language switch stays allowed.

    ``form_token`` is this rendering's own token for its forms (:class:`.FormTokens`); ``conflict`` is the
    value another edit left in the file when a switch save was refused (TOML, or ``None`` for a plain page);
    ``query`` filters the capability choices (:mod:`.forms`); ``note`` is a refused save's, at its field;
    ``shown`` the receipt (or refusal) of a session refresh just asked for.
    """

    def say(key: str, **params: object) -> str:
        return escape(message(key, lang, **params))

    parts = [
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{say('cli.settings.page.title')}</title><style>{_STYLE}{BAR_STYLE}{SESSION_STYLE}{EDIT_STYLE}</style></head><body>",
        _languages(lang, token),
        f"<h1>{say('cli.settings.page.title')}</h1>",
        f"<p>{say('cli.settings.page.workspace', workspace=shown_path(view.workspace))}</p>",
        f'<p class="note">{say("cli.settings.page.read-only")}</p>',
        "" if conflict is None else f'<p role="alert" class="conflict">{_conflict_text(conflict, lang)}</p>',
        f"<h2>{say('cli.settings.page.files')}</h2><ul>",
        *(
            "<li>"
            + say(
                "config.show.file",
                scope=message(f"config.scope.{file.scope.value}", lang),
                path=shown_path(file.path),
                state=file.state_text(lang),
            )
            + "</li>"
            for file in view.files
        ),
        "</ul>",
        _problems(view, lang),
        f"<h2>{say('cli.settings.page.settings')}</h2>",
        _switch_form(view, lang, token, form_token),
        _keys_table(view.keys, lang),
        edit_sections(view, Forms(lang=lang, token=token, form_token=form_token, query=query, note=note)),
        f"<h2>{say('cli.settings.page.plan')}</h2><ul>",
        *(f"<li>{escape(line)}</li>" for line in view.summary),
        "</ul>",
        "" if view.computed is None else budget_section(view.computed, view.unit, lang),
        "" if view.computed is None else statistics_note(view.computed, lang),
        _plan_table(view, lang),
        sessions_section(view.sessions, lang, token, form_token, shown),
        "</body></html>",
    ]
    return "".join(parts)


def _languages(lang: str, token: str) -> str:
    links = []
    for code in LOCALES:
        name = escape(message(f"cli.settings.page.lang-{code}", lang))
        href = escape("?" + urlencode({TOKEN_PARAMETER: token, "lang": code}))
        links.append(f"<strong>{name}</strong>" if code == lang else f'<a href="{href}" hreflang="{code}">{name}</a>')
    label = escape(message("cli.settings.page.language", lang))
    return f'<nav aria-label="{label}">{label}: {"".join(links)}</nav>'


def _problems(view: SettingsView, lang: str) -> str:
    if not view.problems:
        return f"<p>{escape(message('cli.settings.page.no-problems', lang))}</p>"
    items = "".join(f"<li>{escape(problem_line(problem, lang))}</li>" for problem in view.problems)
    return f"<h2>{escape(message('cli.settings.page.problems', lang))}</h2><ul>{items}</ul>"


def _keys_table(rows: tuple[KeyRow, ...], lang: str) -> str:
    headers = ("col-key", "col-workspace", "col-user", "col-effective", "col-source")
    head = "".join(f'<th scope="col">{escape(message(f"cli.settings.page.{name}", lang))}</th>' for name in headers)
    label = [escape(message(f"cli.settings.page.{name}", lang), quote=True) for name in headers]
    body = []
    for row in rows:
        source = escape(message(f"config.scope.{row.effective.source}", lang))
        if row.effective.file:
            source += f'<span class="file">{escape(shown_path(row.effective.file))}</span>'
        cells = [
            f'<th scope="row"><code>{escape(row.key)}</code></th>',
            f'<td data-label="{label[1]}">{_value(row.workspace, lang)}</td>',
            f'<td data-label="{label[2]}">{_value(row.user, lang)}</td>',
            f'<td data-label="{label[3]}">{_value(row.effective, lang)}</td>',
            f'<td data-label="{label[4]}">{source}</td>',
        ]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table id="settings"><tr class="head">{head}</tr>{"".join(body)}</table></div>'


def _value(key: EffectiveKey | None, lang: str) -> str:
    if key is None or key.value is None:
        return f'<span class="unset">{escape(message("cli.settings.page.not-set", lang))}</span>'
    return f"<code>{escape(toml_literal(key.value))}</code>"


def _plan_table(view: SettingsView, lang: str) -> str:
    if not view.plan:
        return f"<p>{escape(message('cli.settings.page.no-capabilities', lang))}</p>"
    headers = ("col-capability", "col-disclosure", "col-coverage", "col-samples", "col-reason")
    head = "".join(f'<th scope="col">{escape(message(f"cli.settings.page.{name}", lang))}</th>' for name in headers)
    label = [escape(message(f"cli.settings.page.{name}", lang), quote=True) for name in headers]
    absent = message("ptc.report.absent", lang)
    body = []
    entries = view.computed.entries if view.computed is not None else ()
    for index, row in enumerate(view.plan):
        entry = entries[index] if index < len(entries) else None
        reason = escape(row.reason)
        if row.overage:
            over = message("cli.capabilities.plan.over-budget", lang, reason=row.reason)
            reason = f'<span class="over">{escape(over)}</span>'
        cells = (
            f'<th scope="row"><code>{escape(row.identity)}</code></th>',
            f'<td data-label="{label[1]}">{escape(row.disclosure or absent)}</td>',
            f'<td data-label="{label[2]}">{"" if entry is None else coverage_cell(entry, lang)}</td>',
            f'<td data-label="{label[3]}">{"" if entry is None else samples_cell(entry, lang)}</td>',
            f'<td data-label="{label[4]}">{reason}</td>',
        )
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table id="plan"><tr class="head">{head}</tr>{"".join(body)}</table></div>'


def _switch_form(view: SettingsView, lang: str, token: str, form_token: str) -> str:
    """The management switch of the workspace file, saved only if the file still says what it says now."""
    row = next((row for row in view.keys if row.key == SWITCH_KEY), None)
    seen = row.workspace.value if row is not None and row.workspace is not None else None
    effective = row.effective.value if row is not None else True
    expected = "" if seen is None else toml_literal(seen)
    action = escape("/switch?" + urlencode({TOKEN_PARAMETER: token}))
    options = "".join(
        f'<option value="{value}"{" selected" if effective is chosen else ""}>'
        f"{escape(message(f'cli.settings.page.switch-{value}', lang))}</option>"
        for value, chosen in (("true", True), ("false", False))
    )
    return (
        f'<form method="post" action="{action}" id="switch">'
        f'<input type="hidden" name="form_token" value="{escape(form_token)}">'
        f'<input type="hidden" name="expected" value="{escape(expected)}">'
        f'<input type="hidden" name="lang" value="{escape(lang)}">'
        f'<label for="enabled">{escape(message("cli.settings.page.switch-label", lang))}</label>'
        f'<select id="enabled" name="enabled">{options}</select>'
        f'<button type="submit">{escape(message("cli.settings.page.switch-save", lang))}</button></form>'
    )


def _conflict_text(theirs: str, lang: str) -> str:
    shown = theirs or message("cli.settings.page.not-set", lang)
    return escape(message("cli.settings.page.conflict", lang, setting=SWITCH_KEY, theirs=shown))

"""The page's sessions section: each live or recent session, its frozen plan, its pending diff and a refresh
button, and the receipt of the last refresh (ADR 0130). No script: each button is a form of its own."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from urllib.parse import urlencode

import attrs

from ptc_plus.cli.settings_page.guard import TOKEN_PARAMETER
from ptc_plus.cli.settings_page.sessions import Kind, SessionRow, frozen_lines
from ptc_plus.i18n import message


@attrs.frozen(kw_only=True)
class Shown:
    """What the page says after a refresh was asked for: the slash command's receipt, or why it was refused."""

    session_id: str
    status: str
    """The receipt's status (``applied``, ``unchanged``, ``failed``, ...) or ``refused``."""
    text: str


def sessions_section(
    rows: tuple[SessionRow, ...], lang: str, token: str, form_token: str, shown: Shown | None = None
) -> str:
    """The heading, what "live" means, the receipt of the refresh just asked for, then one block per session."""

    def say(key: str, **params: object) -> str:
        return escape(message(key, lang, **params))

    parts = [f'<h2 id="sessions-heading">{say("cli.settings.page.sessions")}</h2>']
    parts.append(f'<p class="note">{say("cli.settings.page.sessions-note")}</p>')
    if shown is not None:
        parts.append(_receipt(shown, lang))
    if not rows:
        parts.append(f"<p>{say('cli.settings.page.no-sessions')}</p>")
        return "".join(parts)
    parts.append('<ul id="sessions" class="sessions">')
    parts += (_session(row, lang, token, form_token) for row in rows)
    parts.append("</ul>")
    return "".join(parts)


def _receipt(shown: Shown, lang: str) -> str:
    head = escape(message("cli.settings.page.receipt", lang, session=shown.session_id, status=shown.status))
    return (
        f'<section id="receipt" role="status" aria-live="polite" class="receipt"><h3>{head}</h3>'
        f'<pre id="receipt-text">{escape(shown.text)}</pre></section>'
    )


def _session(row: SessionRow, lang: str, token: str, form_token: str) -> str:
    def say(key: str, **params: object) -> str:
        return escape(message(key, lang, **params))

    state = say("cli.settings.page.session-live" if row.live else "cli.settings.page.session-ended")
    when = datetime.fromtimestamp(row.modified, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if row.modified else "?"
    title = escape(row.title) or say("cli.settings.page.untitled")
    head = say(f"cli.settings.page.kind-{row.kind}")
    parts = [
        f'<li class="session" id="session-{escape(row.session_id, quote=True)}">',
        f"<h3><code>{escape(row.session_id)}</code> · {head} · {title}</h3>",
        f"<p><strong>{state}</strong> · {say('cli.settings.page.session-modified', when=when)}</p>",
    ]
    if row.plan is None:
        parts.append(f"<p>{say(f'cli.settings.page.session-{row.state}', detail=row.detail)}</p>")
    else:
        lines = frozen_lines(row, lang)
        summary_count = len(lines) - len(row.plan.entries)
        parts.append(f'<p class="pending">{escape(row.pending or "")}</p>')
        items = "".join(f"<li>{escape(line)}</li>" for line in lines[summary_count:])
        head_lines = "".join(f"<p>{escape(line)}</p>" for line in lines[:summary_count])
        parts.append(
            f"<details><summary>{say('cli.settings.page.frozen-plan', sequence=row.sequence)}</summary>"
            f"{head_lines}<ul>{items}</ul></details>"
        )
    parts.append(_refresh_form(row, lang, token, form_token))
    parts.append("</li>")
    return "".join(parts)


def _refresh_form(row: SessionRow, lang: str, token: str, form_token: str) -> str:
    """The refresh button; for a session the page may not refresh, the reason in its place (still typed)."""
    if row.kind is Kind.LLM:
        conversation = row.session_id.removeprefix("llm-")
        note = message("error.PTC-6007", lang, session=row.session_id, conversation=conversation)
        return f'<p class="note">{escape(note)}</p>'
    if row.live:
        note = message("error.PTC-6005", lang, session=row.session_id, log=row.log.name)
        return f'<p class="note">{escape(note)}</p>'
    action = escape("/refresh?" + urlencode({TOKEN_PARAMETER: token}))
    label = escape(message("cli.settings.page.refresh-button", lang))
    described = escape(message("cli.settings.page.refresh-label", lang, session=row.session_id), quote=True)
    return (
        f'<form method="post" action="{action}" class="refresh">'
        f'<input type="hidden" name="form_token" value="{escape(form_token)}">'
        f'<input type="hidden" name="session" value="{escape(row.session_id)}">'
        f'<input type="hidden" name="lang" value="{escape(lang)}">'
        f'<button type="submit" aria-label="{described}">{label}</button></form>'
    )


SESSION_STYLE = """
.sessions{list-style:none;padding:0}.session{border:1px solid #bbb;padding:.4rem .7rem;margin:.5rem 0}
.session h3{font-size:1rem;margin:.2rem 0;overflow-wrap:anywhere}.session p{margin:.25rem 0}
.pending{border-left:3px solid #555;padding-left:.5rem;overflow-wrap:anywhere}
.receipt{border:2px solid #000;padding:.4rem .7rem;margin:.6rem 0}.receipt h3{font-size:1rem;margin:.2rem 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}details{margin:.3rem 0}summary{cursor:pointer}
"""
"""The section's own rules, added after the page's."""

"""The settings page in Debian's headless Chromium, through chromium-driver (issue 34, ADR 0126).

Loads the page in English and in Chinese at 1280 and at 390 pixels wide, checks what a reader sees there
(the plan's capabilities, the language switch working from the page itself, no sideways scroll of the
page at 390 pixels), takes the screenshots, refreshes a session from its button by mouse and another by
keyboard (each receipt the one ``/capabilities refresh`` gives the same situation typed into a third
session), then saves the management switch from the page. The
screenshots go to the test's temporary directory, so a test run never rewrites tracked files;
``SETTINGS_SCREENSHOTS=docs/settings`` writes them where the docs show them (how they were made). A second
test drives every edit control by keyboard (Tab to reach each, Enter and Space to act, arrow keys in a
select): bad input at its field, a concurrent ``ptc-plus capabilities set`` refused with its value shown,
the search ranked as discovery ranks, and a save at 390 pixels in Chinese (ADR 0129).
Skipped, with the reason, when the browser is missing and ``TESTS_REQUIRE_BROWSER`` is unset;
``scripts/test`` run as root installs it and sets that variable, so there a missing browser fails the run.
"""

from __future__ import annotations

import html
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ptc_plus import discovery
from ptc_plus.cli.settings_page.field_errors import field_id
from ptc_plus.cli.workspace_plan import new_session_plan, workspace_catalog
from ptc_plus.i18n import message
from ptc_plus.statistics import workspace_store
from tests.ptc_plus.cli.settings_server import START_TIMEOUT_S, cli_child, form_of, get, running_server
from tests.ptc_plus.cli.test_settings_page import workspace  # noqa: F401 (the fixture)
from tests.ptc_plus.cli.test_settings_sessions import slash, start_sessions
from tests.statistics_samples import record_families

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
REQUIRED = "TESTS_REQUIRE_BROWSER"
SHOTS_TO = "SETTINGS_SCREENSHOTS"
WIDTHS = (1280, 390)

pytestmark = pytest.mark.slow


@pytest.fixture
def driver() -> Iterator[object]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        if os.environ.get(REQUIRED):
            pytest.fail(f"{REQUIRED}=1 but {CHROMIUM} or {CHROMEDRIVER} is missing")
        pytest.skip(f"no {CHROMIUM} and {CHROMEDRIVER} (apt-get install chromium chromium-driver, as root)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    with tempfile.TemporaryDirectory() as profile:
        for flag in (
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
        ):
            options.add_argument(flag)
        service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
        browser = webdriver.Chrome(options=options, service=service)
        browser.set_page_load_timeout(START_TIMEOUT_S)
        try:
            yield browser
        finally:
            browser.quit()


def test_the_page_in_chromium_in_both_languages_at_both_widths(
    workspace: Path,  # noqa: F811
    driver: object,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.expected_conditions import staleness_of
    from selenium.webdriver.support.ui import Select, WebDriverWait

    assert isinstance(driver, WebDriver)
    # Paths under the home directory are shown from "~": the screenshots show ~/project, not a temporary path.
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm"))
    # Three sessions started, then the budget cut: each has a refresh pending (contracts moved to on-demand).
    by_mouse, by_keyboard, by_person = start_sessions(workspace, 3)
    config = workspace / ".ptc-plus" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("budget_tokens = 1234", "budget_tokens = 300"))
    # Statistics for the bars: six families, the converter used in four of them.
    families = [f"f{n}" for n in range(6)]
    record_families(workspace_store(workspace), workspace, families[:4], ["host:convert_units", "host:read_file"])
    record_families(workspace_store(workspace), workspace, families[4:], ["host:read_file"])
    identities = [entry.identity for entry in new_session_plan(workspace).plan.entries]
    shots = Path(os.environ.get(SHOTS_TO) or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    with running_server(workspace) as server:
        for width in WIDTHS:
            driver.set_window_size(width, 1000)
            driver.get(server.url + "&lang=en")
            for lang in ("en", "zh"):
                if lang == "zh":  # switched from the page itself, as a reader would, the token kept by the link
                    driver.find_element(By.CSS_SELECTOR, 'a[hreflang="zh"]').click()
                assert driver.find_element(By.TAG_NAME, "html").get_attribute("lang") == lang
                assert driver.find_element(By.TAG_NAME, "h1").text == message("cli.settings.page.title", lang)
                shown = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#plan th[scope=row]")]
                assert shown == identities
                # Usable at this width: the page itself never scrolls sideways (wide tables scroll in their box).
                page_width = driver.execute_script("return document.documentElement.scrollWidth")
                view_width = driver.execute_script("return document.documentElement.clientWidth")
                assert page_width <= view_width, (width, lang, page_width, view_width)
                height = driver.execute_script("return document.documentElement.scrollHeight")
                driver.set_window_size(width, min(int(height) + 120, 6000))
                assert driver.save_screenshot(str(shots / f"settings-{lang}-{width}.png"))
                driver.set_window_size(width, 1000)
        # A session refreshed from its button, as a reader would: the receipt is the slash command's.
        typed = slash(workspace, by_person, "/capabilities refresh")
        assert typed.status.value == "applied"
        driver.get(server.url + "&lang=en")
        button = driver.find_element(By.CSS_SELECTOR, f"#session-{by_mouse} form.refresh button")
        button.click()
        WebDriverWait(driver, START_TIMEOUT_S).until(staleness_of(button))
        assert driver.find_element(By.ID, "receipt-text").text == typed.text
        # And one by keyboard only: Tab until its button has the focus, then Enter.
        button = driver.find_element(By.CSS_SELECTOR, f"#session-{by_keyboard} form.refresh button")
        for _ in range(400):
            ActionChains(driver).send_keys(Keys.TAB).perform()
            if driver.switch_to.active_element == button:
                break
        else:
            pytest.fail("Tab never reached the refresh button")
        ActionChains(driver).send_keys(Keys.ENTER).perform()
        WebDriverWait(driver, START_TIMEOUT_S).until(staleness_of(button))
        assert driver.find_element(By.ID, "receipt-text").text == typed.text
        refreshed = driver.find_element(By.CSS_SELECTOR, f"#session-{by_keyboard}").text
        assert (
            message("ptc.report.pending-diff", "en", sequence=2, summary=message("ptc.refresh.none", "en")) in refreshed
        )
        # The switch saved from the page, as a reader would: choose "off", press Save, see the file say so.
        driver.get(server.url + "&lang=en")
        Select(driver.find_element(By.ID, "enabled")).select_by_value("false")
        button = driver.find_element(By.CSS_SELECTOR, "#switch button")
        button.click()
        WebDriverWait(driver, START_TIMEOUT_S).until(staleness_of(button))  # the page after the save's redirect
        cell = driver.find_element(By.CSS_SELECTOR, '#settings td[data-label="Workspace file"]')
        assert cell.text == "false"
    assert "enabled = false" in (workspace / ".ptc-plus" / "config.toml").read_text(encoding="utf-8")


def _reload_after(driver: object, act: Callable[[], None]) -> None:
    """Do ``act`` (a key that submits a form) and wait until the page it replaced is gone."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.expected_conditions import staleness_of
    from selenium.webdriver.support.ui import WebDriverWait

    assert isinstance(driver, WebDriver)
    old = driver.find_element(By.TAG_NAME, "html")
    act()
    WebDriverWait(driver, START_TIMEOUT_S).until(staleness_of(old))


def _tab_from(driver: object, start: object) -> object:
    """Focus ``start``, press Tab once; the element that has the focus then."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(driver, WebDriver)
    driver.execute_script("arguments[0].focus()", start)
    ActionChains(driver).send_keys(Keys.TAB).perform()
    return driver.switch_to.active_element


def search_button(driver: object) -> object:
    """The search form's button (the control after the search box)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(driver, WebDriver)
    return driver.find_element(By.CSS_SELECTOR, "form[role=search] button")


def test_every_edit_control_by_keyboard_with_a_concurrent_cli_edit_and_bad_input(
    workspace: Path,  # noqa: F811
    driver: object,
) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.remote.webdriver import WebDriver

    assert isinstance(driver, WebDriver)
    local = workspace / ".ptc-plus" / "config.toml"
    user = workspace.parent / "xdg" / "ptc-plus" / "config.toml"

    def by_id(field: str) -> Any:
        return driver.find_element(By.ID, field)

    def note(field: str) -> str:
        return str(by_id(f"{field}-note").text)

    def press(*keys: str) -> None:
        ActionChains(driver).send_keys(*keys).perform()

    def type_and_enter(field: str, text: str) -> None:
        """Focus ``field`` (where Tab reaches it, checked above), replace its text by keys, press Enter."""
        control = by_id(field)
        driver.execute_script("arguments[0].focus()", control)
        assert driver.switch_to.active_element == control
        press(Keys.END, *([Keys.BACKSPACE] * 40), text)
        _reload_after(driver, lambda: press(Keys.ENTER))

    with running_server(workspace) as server:
        driver.set_window_size(1280, 1000)
        driver.get(server.url + "&lang=en")

        # Every control of the page is reachable with Tab, in order, and shows where the focus is.
        controls = driver.execute_script(
            "return [...document.querySelectorAll('input:not([type=hidden]),select,button,a[href]')]"
            ".filter(e => !e.disabled)"
        )
        driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        reached = []
        for _ in range(len(controls)):
            press(Keys.TAB)
            active = driver.switch_to.active_element
            reached.append(active)
            style = driver.execute_script(
                "const s = getComputedStyle(arguments[0]); return [s.outlineStyle, s.outlineWidth]", active
            )
            assert style[0] != "none" and style[1] != "0px", (active.get_attribute("outerHTML")[:120], style)
        assert reached == controls  # each once, in page order: no control skipped, none out of reach
        # Every input and select has a label tied to it; every action is a real button.
        unlabelled = driver.execute_script(
            "return [...document.querySelectorAll('input:not([type=hidden]),select')]"
            ".filter(e => e.labels.length === 0).map(e => e.id)"
        )
        assert unlabelled == []
        assert driver.find_elements(By.CSS_SELECTOR, "[onclick],[role=button]") == []

        # A value: a non-number, then a negative window, shown at the field with the checker's words; the
        # reader's input kept and the file untouched; then a good value saved, by Enter.
        window = field_id("value", "workspace", "statistics.window")
        before = local.read_text(encoding="utf-8")
        type_and_enter(window, "abc")
        assert note(window).startswith(message("cli.settings.page.not-saved", "en"))
        assert "statistics.window: " + message("config.reason.type", "en", expected="an integer") in note(window)
        assert by_id(window).get_attribute("value") == "abc"
        assert by_id(window).get_attribute("aria-invalid") == "true"
        assert driver.switch_to.active_element == by_id(window)  # the refused page opens at the field
        type_and_enter(window, "-3")
        assert "statistics.window: " + message("config.reason.minimum", "en", low="1") in note(window)
        assert local.read_text(encoding="utf-8") == before
        type_and_enter(window, "30")
        assert "window = 30" in local.read_text(encoding="utf-8")

        # A boolean of the user file: Arrow keys on the select, Tab to its Save button, Space.
        enabled = field_id("value", "user", "statistics.enabled")
        driver.execute_script("arguments[0].focus()", by_id(enabled))
        press(Keys.END)  # the last option: "off"
        assert by_id(enabled).get_attribute("value") == "false"
        save = _tab_from(driver, by_id(enabled))
        assert save.tag_name == "button"  # type: ignore[attr-defined]
        _reload_after(driver, lambda: press(Keys.SPACE))
        assert "enabled = false" in user.read_text(encoding="utf-8")

        # The baseline: an unknown identity refused at the field, two added by Enter, the second moved up by
        # Space on its button, the first removed by Enter on its.
        add = field_id("add", "workspace")
        type_and_enter(add, "host:nope")
        assert message("cli.settings.page.unknown-identity", "en", identity="host:nope") in note(add)
        assert by_id(add).get_attribute("value") == "host:nope"
        type_and_enter(add, "host:read_file")
        type_and_enter(add, "host:list_files")
        up = driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Move host:list_files up"]')
        driver.execute_script("arguments[0].focus()", up)
        _reload_after(driver, lambda: press(Keys.SPACE))
        remove = driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Remove host:read_file"]')
        driver.execute_script("arguments[0].focus()", remove)
        _reload_after(driver, lambda: press(Keys.ENTER))
        assert 'baseline = ["host:list_files"]' in local.read_text(encoding="utf-8")
        type_and_enter(add, "host:read_file")
        down = driver.find_element(By.CSS_SELECTOR, 'button[aria-label="Move host:list_files down"]')
        driver.execute_script("arguments[0].focus()", down)
        _reload_after(driver, lambda: press(Keys.ENTER))
        assert 'baseline = ["host:read_file", "host:list_files"]' in local.read_text(encoding="utf-8")

        # The search: typed, Enter; the rows are discovery's ranking of the whole catalog (off members too).
        query = "write a file"
        snapshot = discovery.build_snapshot(workspace_catalog(workspace))
        ranked = [match["identity"] for match in discovery.find(snapshot, query, limit=25)["matches"]]
        type_and_enter("q", query)
        shown = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#choice-table th[scope=row] code")]
        assert shown == ranked
        # Another query typed, then Tab to the Search button and Space (the same query again would only
        # scroll: the form's address, fragment and all, would be the page's own).
        driver.execute_script("arguments[0].focus()", by_id("q"))
        press(Keys.END, *([Keys.BACKSPACE] * 40), "delete a note")
        search = _tab_from(driver, by_id("q"))
        assert search.text == message("cli.settings.page.search", "en")  # type: ignore[attr-defined]
        _reload_after(driver, lambda: press(Keys.SPACE))
        shown = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#choice-table th[scope=row] code")]
        assert shown == [m["identity"] for m in discovery.find(snapshot, "delete a note", limit=25)["matches"]]
        show_all = _tab_from(driver, search_button(driver))  # "Show all", a link, followed with Enter
        assert show_all.tag_name == "a"  # type: ignore[attr-defined]
        _reload_after(driver, lambda: press(Keys.ENTER))
        shown = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#choice-table th[scope=row] code")]
        assert shown == [capability.identity for capability in workspace_catalog(workspace).managed()]
        # The user file's choice, by keyboard too.
        mine = field_id("choice", "user", "host:notes_delete")
        driver.execute_script("arguments[0].focus()", by_id(mine))
        press(Keys.END)  # "off"
        _tab_from(driver, by_id(mine))
        _reload_after(driver, lambda: press(Keys.SPACE))
        assert 'disclosure = "off"' in user.read_text(encoding="utf-8")
        type_and_enter("q", query)  # back to the ranked rows the concurrent edit below works in

        # A concurrent edit from the CLI while the page is open: the page's save is refused with their value
        # shown and nothing lost; a second, knowing Save replaces it.
        choice = field_id("choice", "workspace", "host:write_file")
        cli_child("capabilities", "set", "host:write_file", "on-demand", "--workspace", str(workspace))
        theirs = local.read_text(encoding="utf-8")
        driver.execute_script("arguments[0].focus()", by_id(choice))
        press(Keys.HOME)  # inherit, full, on-demand, off: Home then one down is "full"
        press(Keys.DOWN)
        assert by_id(choice).get_attribute("value") == "full"
        save = _tab_from(driver, by_id(choice))
        assert save.tag_name == "button"  # type: ignore[attr-defined]
        _reload_after(driver, lambda: press(Keys.ENTER))
        assert '"on-demand"' in note(choice)
        assert local.read_text(encoding="utf-8") == theirs  # the CLI's edit stands
        assert by_id(choice).get_attribute("value") == "full"  # the reader's choice, kept for a second look
        save = _tab_from(driver, by_id(choice))
        assert save.tag_name == "button"  # type: ignore[attr-defined]
        _reload_after(driver, lambda: press(Keys.SPACE))
        assert 'disclosure = "full"' in local.read_text(encoding="utf-8")

        # At 390 pixels: no sideways scroll, and a value still saved by keyboard.
        driver.set_window_size(390, 1000)
        driver.get(server.url + "&lang=zh")
        page_width = driver.execute_script("return document.documentElement.scrollWidth")
        view_width = driver.execute_script("return document.documentElement.clientWidth")
        assert page_width <= view_width, (page_width, view_width)
        threshold = field_id("value", "user", "statistics.threshold")
        type_and_enter(threshold, "2")
        assert message("config.reason.range", "zh", low="0", high="1") in note(threshold)
        type_and_enter(threshold, "0.2")
        assert "threshold = 0.2" in user.read_text(encoding="utf-8")


def test_chromium_is_refused_without_the_token_and_from_another_origins_form(
    workspace: Path,  # noqa: F811
    driver: object,
) -> None:
    """What a browser itself sends: the page's address without its token, and a hostile page of another
    origin (another port of 127.0.0.1) whose form posts to the switch with the URL token and even a valid
    form token; both refused, the file untouched."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from selenium.webdriver.common.by import By
    from selenium.webdriver.remote.webdriver import WebDriver
    from selenium.webdriver.support.ui import WebDriverWait

    assert isinstance(driver, WebDriver)
    config = workspace / ".ptc-plus" / "config.toml"
    before = config.read_bytes()
    with running_server(workspace) as server:
        driver.get(f"http://127.0.0.1:{server.port}/")
        assert driver.find_element(By.TAG_NAME, "body").text.startswith("refused: ")
        _, page = get(server, f"/?token={server.token}")
        fields = {**form_of(page), "enabled": "false"}
        inputs = "".join(f'<input type="hidden" name="{k}" value="{html.escape(v)}">' for k, v in fields.items())
        hostile = (
            f'<form id="f" method="post" action="http://127.0.0.1:{server.port}/switch?token={server.token}">'
            f"{inputs}</form><script>document.getElementById('f').submit()</script>"
        ).encode()

        class Hostile(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.end_headers()
                self.wfile.write(hostile)

            def log_message(self, format: str, *args: object) -> None:
                pass

        site = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
        threading.Thread(target=site.serve_forever, daemon=True).start()
        try:
            driver.get(f"http://127.0.0.1:{site.server_address[1]}/")
            WebDriverWait(driver, START_TIMEOUT_S).until(lambda d: f":{server.port}/switch" in d.current_url)
            assert driver.find_element(By.TAG_NAME, "body").text.startswith("refused: ")
        finally:
            site.shutdown()
            site.server_close()
    assert config.read_bytes() == before

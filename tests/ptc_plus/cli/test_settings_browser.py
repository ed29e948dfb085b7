"""The settings page in Debian's headless Chromium, through chromium-driver (issue 34, ADR 0126).

Loads the page in English and in Chinese at 1280 and at 390 pixels wide, checks what a reader sees there
(the plan's capabilities, the language switch working from the page itself, no sideways scroll of the
page at 390 pixels), takes the screenshots, refreshes a session from its button by mouse and another by
keyboard (each receipt the one ``/capabilities refresh`` gives the same situation typed into a third
session), then saves the management switch from the page. The
screenshots go to the test's temporary directory, so a test run never rewrites tracked files;
``SETTINGS_SCREENSHOTS=docs/settings`` writes them where the docs show them (how they were made).
Skipped, with the reason, when the browser is missing and ``TESTS_REQUIRE_BROWSER`` is unset;
``scripts/test`` run as root installs it and sets that variable, so there a missing browser fails the run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ptc_plus.cli.workspace_plan import new_session_plan
from ptc_plus.i18n import message
from ptc_plus.statistics import workspace_store
from tests.ptc_plus.cli.settings_server import START_TIMEOUT_S, running_server
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

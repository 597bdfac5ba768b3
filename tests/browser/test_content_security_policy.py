"""The web client under the server's Content-Security-Policy: signing in, racing a game, the
leaderboard page and a rules page do nothing the policy forbids (a violation would also break
them)."""

from __future__ import annotations

from playwright.async_api import Browser

from solitaire_race.app import App

from .racer import Racer, perform

# Every violation the browser reports, from before the page's first script runs.
RECORD_VIOLATIONS_JS = """
window.cspViolations = [];
document.addEventListener('securitypolicyviolation', e => window.cspViolations.push(
  `${e.effectiveDirective} ${e.blockedURI || 'inline'} ${e.sourceFile}:${e.lineNumber}`));
"""


async def test_the_client_runs_under_its_content_security_policy(app: App, browser: Browser) -> None:
    context = await browser.new_context()
    await context.add_init_script(RECORD_VIOLATIONS_JS)
    page = await context.new_page()
    racer = Racer(page)
    response = await page.goto(app.url)
    assert response is not None and "frame-ancestors 'none'" in response.headers["content-security-policy"]

    await racer.sign_in("ann")
    await racer.start_solo("clock", 7)  # Clock's board sets the most styles from scripts
    await perform(racer, "p")
    await racer.expect_moves(1)
    await racer.leave_race()
    assert await page.evaluate("window.cspViolations") == []

    await page.goto(f"{app.url}leaderboard?game=clock")
    await page.wait_for_selector("#rows tr")
    assert await page.evaluate("window.cspViolations") == []

    await page.goto(f"{app.url}rules/clock")  # its picture sets the board's styles from scripts too
    await page.wait_for_selector("#board .dial")
    assert await page.evaluate("window.cspViolations") == []
    assert racer.errors == []

    # The policy is enforced, and a violation would be seen: an inline script is refused.
    await page.evaluate(
        "document.body.append(Object.assign(document.createElement('script'), {textContent: 'window.ran = 1'}))"
    )
    await page.wait_for_function("() => window.cspViolations.length > 0")
    assert await page.evaluate("window.ran") is None
    assert (await page.evaluate("window.cspViolations"))[0].startswith("script-src-elem inline")
    await context.close()

"""One vocabulary for a racer's outcome: the browser's values and labels (js/format.js's
OUTCOME and OUTCOME_LABELS) are the server's (solitaire_race.results: RacerOutcome and
OUTCOME_LABELS), checked in Chromium against the Python module itself."""

from __future__ import annotations

from playwright.async_api import Browser

from solitaire_race import results
from solitaire_race.app import App

from .racer import Racer

FORMAT_JS = """async () => {
  const { OUTCOME, OUTCOME_LABELS, outcomeLabel } = await import('/js/format.js');
  return { values: OUTCOME, labels: OUTCOME_LABELS, frozen: Object.isFrozen(OUTCOME) && Object.isFrozen(OUTCOME_LABELS),
           unknown: outcomeLabel('abandoned'), timeout: outcomeLabel(OUTCOME.TIMEOUT) };
}"""


async def test_the_browser_names_outcomes_as_the_server_does(app: App, browser: Browser) -> None:
    racer = await Racer.open(browser, app.url)
    try:
        got = await racer.page.evaluate(FORMAT_JS)
        assert got["values"] == {o.name: o.value for o in results.RacerOutcome}
        assert got["labels"] == {o.value: label for o, label in results.OUTCOME_LABELS.items()}
        assert got["frozen"]
        # a value a newer server sends is shown as it is, as results.outcome_label does
        assert got["unknown"] == results.outcome_label("abandoned") == "abandoned"
        assert got["timeout"] == results.outcome_label("timeout") == "out of time"
        assert racer.errors == []
    finally:
        await racer.close()

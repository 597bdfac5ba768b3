"""Cruel: Perseverance with single-card moves and unlimited, earned redeals.

A redeal is allowed only after at least one card has gone to a foundation since the last
deal (the first deal counts), which guarantees that every game ends.
"""

from __future__ import annotations

from .perseverance import Perseverance, PerseveranceState


class Cruel(Perseverance):
    id = "cruel"
    name = "Cruel"
    summary = "Perseverance moving single cards only; redeal whenever a card went home since the last deal."
    max_redeals = None
    runs_move = False

    def may_redeal(self, state: PerseveranceState) -> bool:
        return state.homed_since_deal

    def _redeal_refusal(self, state: PerseveranceState) -> str:
        return "no card has gone to a foundation since the last deal, so no redeal yet"

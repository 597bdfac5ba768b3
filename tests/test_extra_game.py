"""A game added from outside the engine's own modules is served like the built-in ones.

``Ladder`` is a small game written here, against the engine's interface only. Registered,
it passes the generic conformance suite every game passes, and the real server deals it,
judges its moves and ranks a race of it; the terminal client expands its short forms and
draws it; the solver solves it. Nothing outside this file knows it: that is what
docs/engine.md's "Adding a game" promises.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from solitaire_race.app import App
from solitaire_race.engine import (
    Game,
    IllegalMove,
    Kind,
    Move,
    NotationError,
    Progress,
    ShortForms,
    register,
    unregister,
)
from solitaire_race.engine.cards import Card, card, code, codes, label, parse_card, rank_of
from solitaire_race.solver import solve
from solitaire_race.tui.moves import expand
from solitaire_race.tui.render import render_view

from . import test_conformance as conformance
from .conftest import TEST_SECRET, Client, make_config

PILES = 4
_MOVE = re.compile(r"^([1-4])\s*>\s*([1-4f])$")


@dataclass(frozen=True, slots=True)
class LadderState:
    piles: tuple[tuple[Card, ...], ...]  # bottom to top
    home: int  # the top rank on the one foundation (0: none yet)


class Ladder(Game[LadderState]):
    """Thirteen spades dealt into four open piles. A top card goes home when it is the next
    rank up (Ace first), or onto a pile whose top is one rank higher, or (from a pile of two
    or more) into an empty pile. Won with all thirteen home."""

    id = "ladder"
    name = "Ladder"
    summary = "Thirteen spades in four open piles: build down by one, home from Ace to King."
    full_information = True
    short_forms = ShortForms(source=r"[1-4]", home="f", builds=True)

    def deck(self) -> list[Card]:
        return [card(rank, 0) for rank in range(1, 14)]

    def deal_from(self, cards: Sequence[Card]) -> LadderState:
        cut = (0, 4, 7, 10, 13)
        return LadderState(tuple(tuple(cards[a:b]) for a, b in pairwise(cut)), 0)

    def legal_moves(self, state: LadderState) -> list[Move]:
        moves = []
        for i, pile in enumerate(state.piles):
            if not pile:
                continue
            if rank_of(pile[-1]) == state.home + 1:
                moves.append(Move(Kind.HOME, i))
            for j, target in enumerate(state.piles):
                if j != i and self._fits(pile, target):
                    moves.append(Move(Kind.BUILD, i, j))
        return moves

    @staticmethod
    def _fits(pile: tuple[Card, ...], target: tuple[Card, ...]) -> bool:
        return rank_of(target[-1]) == rank_of(pile[-1]) + 1 if target else len(pile) > 1

    def _pile(self, state: LadderState, index: int) -> tuple[Card, ...]:
        if not 0 <= index < PILES:
            raise IllegalMove(f"there is no pile {index + 1}: the piles are 1-{PILES}")
        return state.piles[index]

    def apply(self, state: LadderState, move: Move) -> LadderState:
        if move.kind not in (Kind.HOME, Kind.BUILD):
            raise IllegalMove(f"Ladder has no {move.kind.value} moves")
        pile = self._pile(state, move.src)
        if not pile:
            raise IllegalMove(f"pile {move.src + 1} is empty")
        piles = list(state.piles)
        piles[move.src] = pile[:-1]
        if move.kind is Kind.HOME:
            if move.dst:
                raise IllegalMove("a move home names no pile to go to")
            if rank_of(pile[-1]) != state.home + 1:
                raise IllegalMove(f"{label(pile[-1])} cannot go home yet")
            return LadderState(tuple(piles), state.home + 1)
        target = self._pile(state, move.dst)
        if move.dst == move.src or not self._fits(pile, target):
            raise IllegalMove(f"{label(pile[-1])} cannot go onto pile {move.dst + 1}")
        piles[move.dst] = target + (pile[-1],)
        return LadderState(tuple(piles), state.home)

    def progress(self, state: LadderState) -> Progress:
        return Progress(state.home, 13)

    def view_list(self, state: LadderState) -> tuple[str, Sequence[Any], Callable[[Any], Any]]:
        return "piles", state.piles, codes

    def view_rest(self, state: LadderState) -> dict[str, Any]:
        return {"home": code(card(state.home, 0)) if state.home else None}

    def from_view(self, view: dict[str, Any]) -> LadderState:
        home = view["home"]
        piles = tuple(tuple(map(parse_card, p)) for p in view["piles"])
        return LadderState(piles, rank_of(parse_card(home)) if home else 0)

    def snapshot(self, state: LadderState) -> dict[str, Any]:
        return self.view(state)

    def all_cards(self, state: LadderState) -> list[Card]:
        return [c for pile in state.piles for c in pile] + [card(rank, 0) for rank in range(1, state.home + 1)]

    def parse_move(self, text: str) -> Move:
        m = _MOVE.match(text.strip().lower())
        if not m:
            raise NotationError(f"{text[:20]!r} is not a Ladder move: write '3>f' (home) or '3>1' (onto pile 1)")
        src = int(m.group(1)) - 1
        return Move(Kind.HOME, src) if m.group(2) == "f" else Move(Kind.BUILD, src, int(m.group(2)) - 1)

    def format_move(self, move: Move) -> str:
        return f"{move.src + 1}>{'f' if move.kind is Kind.HOME else move.dst + 1}"


@pytest.fixture
def ladder() -> Iterator[Ladder]:
    game = Ladder()
    register(game)
    try:
        yield game
    finally:
        unregister(game.id)


def test_the_extra_game_passes_the_generic_conformance_suite(ladder: Ladder) -> None:
    for deal in range(conformance.DEALS):
        conformance.playout(ladder, deal)
    conformance.test_deals_differ_by_number_and_secret(ladder.id)
    conformance.test_describe_and_registry(ladder.id)
    for text in conformance.BAD_NOTATION:
        conformance.test_bad_notation_is_refused_clearly(ladder.id, text)


async def test_the_server_and_the_clients_serve_it_untouched(ladder: Ladder, tmp_path: Path) -> None:
    deal = next(d for d in range(50) if solve(ladder, ladder.deal(d, TEST_SECRET.encode())).moves)
    moves = solve(ladder, ladder.deal(deal, TEST_SECRET.encode())).moves
    assert moves is not None
    line = list(moves)
    app = await App.start(make_config(tmp_path))
    ann = await Client.connect(app)
    try:
        await ann.hello("ann")
        games = await ann.request({"type": "list_games"})
        assert {"id": "ladder", "name": "Ladder", "summary": ladder.summary} in games["games"]
        room = await ann.request({"type": "create_race", "game": "ladder", "deal": deal})
        assert room["race"]["game"] == "ladder"
        await ann.request({"type": "start_race"})
        view = (await ann.expect("race_started"))["view"]
        assert view == ladder.view(ladder.deal(deal, TEST_SECRET.encode()))
        # The terminal client draws it and expands its short forms from what it declares.
        assert any(line.startswith("piles:") for line in render_view(view))
        legal = {ladder.format_move(m) for m in ladder.legal_moves(ladder.deal(deal, TEST_SECRET.encode()))}
        for pile in "1234":  # a pile number alone: its one move, or the choices listed
            short = expand(pile, view)
            if short.moves:  # no move from there: sent home, and the server says why
                assert short.moves[0] in legal or short.moves[0] == f"{pile}>f"
            else:
                assert short.note and f"type {pile}>" in short.note
        refused = await ann.request({"type": "move", "moves": ["9>f"]})
        assert refused["rejected"]["code"] == "bad_notation"
        won = await ann.request({"type": "move", "moves": line})
        assert won["applied"] == line and won["outcome"] == "won"
        finished = await ann.expect("race_finished")
        assert finished["game"] == "ladder" and finished["ranking"][0]["outcome"] == "won"
        await ann.close()
    finally:
        await app.stop()

"""The fast Patriarchs playout model (``solver.patriarchs_playouts``) against the engine.

The model re-implements Patriarchs' rules on plain tuples, so every check here compares it
with the engine (``Patriarchs.apply``, ``legal_moves``, ``is_won``, ``progress``) and with
the engine-based playout edges (``PatriarchsKnowledge.playout_edges``), on positions of
real play: deals played at random through the engine, lone foundation shifts and the
redeal included.
"""

from __future__ import annotations

import random

import pytest

from solitaire_race.engine import Kind, get_game
from solitaire_race.engine.patriarchs import WASTE, Patriarchs, PatriarchsState
from solitaire_race.solver.knowledge import Edge, knowledge_for
from solitaire_race.solver.patriarchs_playouts import (
    NO_FIT,
    PatriarchsModel,
    fit,
    home_edge,
    tableau_homes,
    to_state,
)
from solitaire_race.solver.playouts import model_for
from solitaire_race.solver.search import search
from solitaire_race.solver.two_deck_knowledge import PatriarchsKnowledge

from .conftest import TEST_SECRET

SECRET = TEST_SECRET.encode()
_GAME = get_game("patriarchs")
assert isinstance(_GAME, Patriarchs)
GAME: Patriarchs = _GAME
KNOW = knowledge_for(GAME)
assert isinstance(KNOW, PatriarchsKnowledge)


def played_positions(count: int) -> list[PatriarchsState]:
    """Positions reached by random legal engine moves (any of them, shifts too) from deals,
    stopped at a random depth: early, mid-game, after the redeal, and stuck ones."""
    rng = random.Random(23)
    out = []
    for number in range(count):
        state = GAME.deal(number, SECRET)
        for _ in range(rng.randrange(250)):
            moves = GAME.legal_moves(state)
            if not moves:
                break
            homes = [m for m in moves if m.kind is Kind.HOME]
            # Mostly home when possible, so that foundations meet and pass as in real play.
            pool = homes if homes and rng.random() < 0.8 else moves
            state = GAME.apply(state, rng.choice(pool))
        out.append(state)
    return out


POSITIONS = played_positions(150)


def engine_after(state: PatriarchsState, edge: Edge) -> PatriarchsState:
    for move in edge:  # raises IllegalMove if the model took an illegal move
        state = GAME.apply(state, move)
    return state


def test_positions_cover_the_phases() -> None:
    assert any(s.redealt for s in POSITIONS) and any(not s.redealt for s in POSITIONS)
    assert any(not GAME.legal_moves(s) for s in POSITIONS)  # stuck
    assert any(len(e) > 1 for s in POSITIONS for e in KNOW.playout_edges(s)[0])  # shifts, then home


def test_model_positions_round_trip() -> None:
    model = PatriarchsModel()
    for state in POSITIONS:
        assert to_state(model.start(state)) == state


def test_the_model_lists_the_engine_edges_home() -> None:
    model = PatriarchsModel()
    for state in POSITIONS:
        tableau, _, _, waste, tops, _ = model.start(state)
        pairs = [(src, side) for src, side in tableau_homes(tableau, tops)]
        if waste is not None and fit(waste[0], tops) != NO_FIT:
            pairs.append((WASTE, fit(waste[0], tops)))
        cards = dict(GAME.playable(state))
        mine = {home_edge(tops, cards[src], src, side)[0] for src, side in pairs}
        assert mine == set(KNOW.playout_edges(state)[0]), state


@pytest.mark.parametrize("home", [1.0, 0.0])
def test_one_step_of_the_model_is_the_engines(home: float) -> None:
    """One edge from each position (home first, or the stock first where it can): legal in
    the engine, leading to the same position, and a run of stock turns only where the
    engine's playout has no card to send home."""
    model = PatriarchsModel(home=home, far=home)
    rng = random.Random(5)
    steps = 0
    for state in POSITIONS:
        line: list[Edge] = []
        positions: list[object] = []
        spent, count, won = model.extend(model.start(state), rng, 1, line, positions)
        homes, rest = KNOW.playout_edges(state)
        if not line:  # the model is stuck: so is the engine's playout
            assert not homes and not rest and spent == 0
            assert count == GAME.progress(state).home and won == GAME.is_won(state)
            continue
        (edge,) = line
        assert edge in homes or edge[0] in {m for e in rest for m in e}
        after = state
        for i, move in enumerate(edge):
            if i and move.kind is Kind.STOCK:  # a forced turn: nothing to send home before it
                assert KNOW.playout_edges(after)[0] == [], (state, edge)
            after = engine_after(after, (move,))
        assert to_state(positions[0]) == after  # type: ignore[arg-type]
        assert spent == len(edge) and count == GAME.progress(after).home and won == GAME.is_won(after)
        steps += 1
    assert steps > 90


def near_the_end() -> list[PatriarchsState]:
    """Positions a few moves from the end of a winning line, where playouts do win."""
    state = GAME.deal(2, SECRET)
    found = search(GAME, KNOW, state, node_budget=50_000, time_budget_s=None)
    assert found.moves is not None
    out = []
    for i, move in enumerate(found.moves):
        if len(found.moves) - i in (5, 15, 30):
            out.append(state)
        state = GAME.apply(state, move)
    return out


def test_whole_playouts_replay_in_the_engine() -> None:
    """Playouts to the end from deals and played positions: every position on the line is
    the engine's, and the end (won or stuck, cards home) is the engine's."""
    model = PatriarchsModel()
    rng = random.Random(9)
    outcomes = set()
    for state in [GAME.deal(n, SECRET) for n in range(10)] + POSITIONS[::5] + near_the_end():
        line: list[Edge] = []
        positions: list[object] = []
        spent, count, won = model.extend(model.start(state), rng, 10**6, line, positions)
        current = state
        for edge, position in zip(line, positions, strict=True):
            current = engine_after(current, edge)
            assert to_state(position) == current  # type: ignore[arg-type]
        assert spent == sum(map(len, line))
        assert won == GAME.is_won(current) and count == GAME.progress(current).home
        if not won:
            assert KNOW.playout_edges(current) == ([], [])  # stuck in the engine too
        outcomes.add(won)
    assert outcomes == {True, False}


def test_patriarchs_playouts_run_on_the_model_and_win_verified_lines() -> None:
    assert isinstance(model_for(GAME, KNOW), PatriarchsModel)
    state = GAME.deal(2, SECRET)
    found = search(GAME, KNOW, state, node_budget=50_000, time_budget_s=None)
    assert found.status == "won" and found.moves is not None
    end = state
    for move in found.moves:
        end = GAME.apply(end, move)
    assert GAME.is_won(end)

"""The shortening's bounds and free moves (``solver/bounds.py``) against exhaustive
searches, and the bounded search's proofs of the shortest line.

Small positions (a few cards left) are cut from the solver's own lines on real deals, and
the same positions with their cards shuffled among the piles and with their redeals given
back (``redeals=0``): hand-built, but legal positions of the game. A plain breadth-first
search over every legal move, keyed by the state alone, gives the shortest winning line
that never redeals and the shortest that does; every bound must be at most that (any
bound will do where there is none), every free move must start a shortest final line,
and a par the shortening calls proved must be the breadth-first length.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import deque
from typing import Any

import pytest

from solitaire_race.engine import Kind, all_games
from solitaire_race.solver.beam import final_line, final_starts
from solitaire_race.solver.bounds import bounds_for
from solitaire_race.solver.knowledge import knowledge_for
from solitaire_race.solver.search import search
from solitaire_race.solver.shorten import shorten

SECRET = b"bounds"
CARDS_LEFT = {"perseverance": 9, "perseverance-a": 10, "cruel": 7, "persian-patience": 4}
LIMIT = 20_000  # states a breadth-first search may store; bigger positions are skipped


@functools.cache
def shortest(game: Any, state: Any) -> tuple[int | None, int | None] | None:
    """(the shortest winning line without a redeal, the shortest with one), None where
    there is none; None overall when the position is too big to search."""
    start = (state, False)
    seen = {start}
    queue = deque([(start, 0)])
    final: int | None = None
    redealing: int | None = None
    while queue:
        (position, redealt), depth = queue.popleft()
        if game.is_won(position):
            if redealt:
                redealing = depth if redealing is None else redealing
            else:
                final = depth if final is None else final
            continue
        for move in game.legal_moves(position):
            node = (game.apply(position, move), redealt or move.kind is Kind.REDEAL)
            if node not in seen:
                if len(seen) >= LIMIT:
                    return None
                seen.add(node)
                queue.append((node, depth + 1))
    return final, redealing


@functools.cache
def small_positions(game_id: str, deals: int = 16, cards_left: int | None = None) -> list[Any]:
    game = all_games()[game_id]
    most = CARDS_LEFT[game_id] if cards_left is None else cards_left
    found: list[Any] = []
    for number in range(deals):
        state = game.deal(number, SECRET)
        result = search(game, knowledge_for(game), state, node_budget=5_000, time_budget_s=None)
        for move in result.moves or ():
            state = game.apply(state, move)
            left = game.progress(state).total - game.progress(state).home
            if 0 < left <= most:
                # The position, and its cards shuffled among its piles (the same sizes);
                # each also with its redeals given back.
                cards = [c for pile in state.piles for c in pile]
                random.Random(number).shuffle(cards)
                piles, k = [], 0
                for pile in state.piles:
                    piles.append(tuple(cards[k : k + len(pile)]))
                    k += len(pile)
                for position in (state, dataclasses.replace(state, piles=tuple(piles))):
                    found += [position, dataclasses.replace(position, redeals=0)]
                break
    return found


@pytest.mark.parametrize("game_id", sorted(CARDS_LEFT))
def test_bounds_never_exceed_the_shortest_line_and_free_moves_start_one(game_id: str) -> None:
    game = all_games()[game_id]
    bounds = bounds_for(game)
    checked = fired = freed = 0
    for state in small_positions(game_id):
        lengths = shortest(game, state)
        if lengths is None:
            continue
        checked += 1
        for kind, length in zip((True, False), lengths, strict=True):
            least = bounds.remaining(state, kind)
            if length is None:
                continue  # no such line: any bound (or None) is right
            assert least is not None and least <= length, (kind, least, length)
            fired += least > game.progress(state).total - game.progress(state).home + (not kind)
        free = bounds.free(state)
        if free is not None and lengths[0] is not None:
            after = shortest(game, game.apply(state, free))
            assert after is not None and after[0] == lengths[0] - 1
            freed += 1
    assert checked >= 4, checked
    assert freed, freed
    # The bounds do more than count the cards left (Persian Patience's small positions here
    # have no locked card: its bound is checked, but never above the count).
    assert fired or game_id == "persian-patience", fired


@pytest.mark.parametrize("game_id", sorted(CARDS_LEFT))
def test_a_par_proved_shortest_is_the_shortest_line(game_id: str) -> None:
    game = all_games()[game_id]
    proved = 0
    for state in small_positions(game_id):
        lengths = shortest(game, state)
        found = search(game, knowledge_for(game), state, node_budget=20_000, time_budget_s=None)
        if lengths is None or found.moves is None:
            continue
        short = shorten(game, state, found.moves, 50_000)
        best = min(n for n in lengths if n is not None)
        assert len(short.line) >= best
        if short.proved:
            assert len(short.line) == best, short.method
            proved += 1
    assert proved >= 3, proved


@functools.cache
def shortest_final(game: Any, state: Any) -> int | None:
    """The shortest winning line that never redeals (breadth first over every legal move),
    -1 where there is none; None when too big to search. Positions are keyed by their piles
    in any order: without a redeal no rule reads a pile's number, so permuting the piles
    maps lines to lines of the same length (the one fact taken from the solver's proofs)."""

    def key(position: Any) -> Any:
        return tuple(sorted(position.piles)), position.foundations

    seen = {key(state)}
    queue = deque([(state, 0)])
    while queue:
        position, depth = queue.popleft()
        if game.is_won(position):
            return depth
        for move in game.legal_moves(position):
            if move.kind is Kind.REDEAL:
                continue
            child = game.apply(position, move)
            if key(child) not in seen:
                if len(seen) >= LIMIT:
                    return None
                seen.add(key(child))
                queue.append((child, depth + 1))
    return -1


def wins_without_redeal(game: Any, state: Any, line: list[Any]) -> bool:
    for move in line:
        assert move.kind is not Kind.REDEAL
        state = game.apply(state, move)
    return bool(game.is_won(state))


@pytest.mark.parametrize("cards_left", [6, 9])
def test_an_uncut_beam_finds_the_shortest_final_line_and_any_beam_a_real_one(cards_left: int) -> None:
    """Persian Patience's beam search (``beam.py``): where its width cut nothing off, its
    line is the shortest final line (and a dry beam means there is none); any width gives
    a real final line, never shorter than that."""
    game = all_games()["persian-patience"]
    bounds = bounds_for(game)
    checked = built = 0
    for state in small_positions("persian-patience", cards_left=cards_left):
        length = shortest_final(game, state)
        if length is None:
            continue
        checked += 1
        line, cut = final_line(game, bounds, state, 10**9, game.apply)
        assert not cut
        if length < 0:
            assert line is None
            continue
        assert line is not None and len(line) == length and wins_without_redeal(game, state, line)
        built += length > game.progress(state).total - game.progress(state).home
        for width in (1, 2, 5):
            narrow, _ = final_line(game, bounds, state, width, game.apply)
            assert narrow is None or (len(narrow) >= length and wins_without_redeal(game, state, narrow))
    assert checked >= 8, checked
    assert built >= 3, built  # lines that need builds: the beam's layers are tested


def test_final_starts_are_reached_by_their_moves() -> None:
    game = all_games()["persian-patience"]
    bounds = bounds_for(game)
    state = game.deal(3, SECRET)
    line = list(search(game, knowledge_for(game), state, node_budget=20_000, time_budget_s=None).moves or ())
    assert line
    keys = set()
    for count, (prefix, start) in enumerate(final_starts(game, bounds, line, state, game.apply)):
        reached = state
        for move in prefix:
            reached = game.apply(reached, move)
        assert reached == start
        keys.add(bounds.final_key(start))
        if count == 300:
            break
    assert len(keys) == count + 1  # each start once

"""The contract every registered game must honour (OpenSpiel-style generic test).

Random playouts from many deals check, at every step, that: every generated legal move
applies and round-trips through the notation; every other move in a broad candidate space
is refused with a readable ``IllegalMove`` and leaves the state unchanged; cards are
conserved; views are JSON, and ``from_view`` rebuilds the player's position from one; the
end of the game is reported (the quick verdict and the search in slices, as the server runs
them, agree with ``outcome``); and replaying the move log from the deal reproduces the final
state exactly.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from typing import Any

import pytest

from solitaire_race.engine import Game, IllegalMove, Kind, Move, NotationError, Outcome, all_games, replay, view_changes
from solitaire_race.engine.base import PRODUCTIVE, StuckSearch

SECRET = b"conformance"
DEALS = 12
MAX_STEPS = 400
GAMES = sorted(all_games())


def candidate_moves(legal: list[Move]) -> set[Move]:
    """Legal moves plus a broad grid of well-formed but mostly illegal ones."""
    grid = {Move(k, s, d) for k in Kind for s in range(-1, 14) for d in range(-1, 14)}
    # Also probe around every legal move's addresses (Parallels slots go past 13).
    for m in legal:
        for k in Kind:
            for s in (m.src - 1, m.src, m.src + 1, m.src + 10):
                for d in (m.dst - 1, m.dst, m.dst + 1):
                    grid.add(Move(k, s, d))
    return grid | set(legal)


def playout(game: Game[Any], deal: int, *, probe_every: int = 20) -> None:
    rng = random.Random(deal)
    start = game.deal(deal, SECRET)
    assert game.deal(deal, SECRET) == start, "dealing must be deterministic"
    cards = Counter(game.all_cards(start))
    state, log = start, []
    seen: list[Any] = [start]  # every position so far
    for step in range(MAX_STEPS):
        view = game.view(state)
        json.dumps(view)
        json.dumps(game.snapshot(state))
        legal = game.legal_moves(state)
        assert legal == game.legal_moves(state), "legal_moves must be deterministic"
        known = game.from_view(view)  # what a client rebuilds from the view alone
        assert game.view(known) == view and game.legal_moves(known) == legal, (
            "from_view must give the player's position"
        )
        assert len(set(legal)) == len(legal), "legal_moves must not repeat a move"
        for m in legal:
            text = game.format_move(m)
            assert game.parse_move(text) == m, f"{text!r} does not round-trip"
        if step % probe_every == 0:
            for m in candidate_moves(legal):
                if m in legal:
                    game.apply(state, m)
                    continue
                with pytest.raises(IllegalMove) as refused:
                    game.apply(state, m)
                assert str(refused.value).strip(), f"{m} refused without a reason"
        if game.has_productive_move(state):  # the fast path must never be wrong
            assert any(m.kind in PRODUCTIVE for m in legal), "has_productive_move without one"
        elif game.productive_test_is_exact:  # nor, where it says so, ever miss one
            assert not any(m.kind in PRODUCTIVE for m in legal), "has_productive_move missed one"
        progress = game.progress(state)
        assert game.is_won(state) == (progress.home == progress.total), "is_won against progress"
        outcome = game.outcome(state)
        verdict = game.assess(state)
        if isinstance(verdict, StuckSearch):  # the server's way: the search in small slices must agree
            sliced = None
            for _ in range(game.stuck_search_limit + 1):
                if (sliced := verdict.run(7)) is not None:
                    break
            assert sliced is outcome, f"sliced search {sliced} against {outcome}"
            if type(game).outcome is Game.outcome:  # and both with the rules' plain search
                assert reference_outcome(game, state) is outcome, f"the plain search says otherwise than {outcome}"
        else:
            assert verdict is outcome, f"assess {verdict} against {outcome}"
        if outcome is not Outcome.PLAYING:
            assert outcome is Outcome.STUCK or game.is_won(state)
            break
        assert legal, "a game in play must have a legal move"
        move = rng.choice(legal)
        before = state
        state = game.apply(state, move)
        assert game.apply(before, move) == state, "apply must be a pure function"
        assert before != state, f"{move} changed nothing"
        assert Counter(game.all_cards(state)) == cards, f"cards not conserved after {move}"
        check_view_changes(game, before, state)
        if len(seen) >= 4:  # several moves in one message: changes from further back
            check_view_changes(game, seen[-4], state)
        seen.append(state)
        log.append(game.format_move(move))
    replayed, applied = replay(game, game.deal(deal, SECRET), log)
    assert applied == len(log)
    assert replayed == state
    p = game.progress(state)
    assert 0 <= p.home <= p.total == len(game.all_cards(state))


def reference_outcome(game: Game[Any], state: Any) -> Outcome:
    """docs/games/rules.md's stuck test written plainly, without the engine's shortcuts: breadth-first
    over the moves that are not shuttles, until a position has a productive legal move
    (playing), the search's bound is reached (playing: the benefit of the doubt), or
    nothing is left to try (stuck)."""

    def productive(position: Any) -> bool:
        return any(m.kind in PRODUCTIVE for m in game.legal_moves(position))

    if game.is_won(state):
        return Outcome.WON
    if productive(state):
        return Outcome.PLAYING
    seen, queue = {state}, [state]
    while queue:
        position = queue.pop(0)
        for move in game.legal_moves(position):
            if game.is_shuttle(position, move):
                continue
            nxt = game.apply(position, move)
            if nxt in seen:
                continue
            if len(seen) >= game.stuck_search_limit:
                return Outcome.PLAYING
            seen.add(nxt)
            if productive(nxt):
                return Outcome.PLAYING
            queue.append(nxt)
    return Outcome.STUCK


def check_view_changes(game: Game[Any], before: Any, after: Any) -> None:
    """A client that applies a move_result's changes to its view has the server's new view.
    The game's own changes (built from the states' parts) are exactly those of comparing
    the two whole views."""
    old, new = game.view(before), game.view(after)
    assert old.keys() == new.keys(), "a game's view keeps its fields"
    changes = game.view_changes(before, after)
    assert changes == view_changes.diff(old, new), "the game's changes differ from the views' difference"
    assert game.view_changes(None, after) == view_changes.diff({}, new), "the whole view as changes"
    wire = json.loads(json.dumps(changes))  # as a client gets them
    assert view_changes.apply(json.loads(json.dumps(old)), wire) == new
    for key, *rest in changes:  # only what changed is sent
        assert (old[key] if len(rest) == 1 else old[key][rest[0]]) != rest[-1]


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("deal", range(DEALS))
def test_random_playouts(game_id: str, deal: int) -> None:
    playout(all_games()[game_id], deal)


@pytest.mark.parametrize("game_id", GAMES)
def test_deals_differ_by_number_and_secret(game_id: str) -> None:
    game = all_games()[game_id]
    assert game.deal(1, SECRET) != game.deal(2, SECRET)
    assert game.deal(1, SECRET) != game.deal(1, b"another secret")


BAD_NOTATION = ["", "   ", "zz", "99>99", "1>", ">f", "x", "1>1>1", "🂡", "1" * 200, "\x00"]


@pytest.mark.parametrize("game_id", GAMES)
@pytest.mark.parametrize("text", BAD_NOTATION)
def test_bad_notation_is_refused_clearly(game_id: str, text: str) -> None:
    game = all_games()[game_id]
    try:
        move = game.parse_move(text)
    except NotationError as exc:
        assert str(exc).strip()
        return
    # Some games accept short forms; whatever parses must then be judged by apply.
    state = game.deal(0, SECRET)
    try:
        game.apply(state, move)
    except IllegalMove as exc:
        assert str(exc).strip()


@pytest.mark.parametrize("game_id", GAMES)
def test_describe_and_registry(game_id: str) -> None:
    game = all_games()[game_id]
    info = game.describe()
    assert info["id"] == game_id and info["name"] and info["summary"]
    assert game.view(game.deal(0, SECRET))["game"] == game_id

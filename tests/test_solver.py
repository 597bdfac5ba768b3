"""The solver (``solitaire_race.solver``): its lines win, its proofs hold, its budgets bind.

Soundness is checked against a plain search: ``Knowledge(game)`` has no transposition keys
but the state, no safe moves, no dead positions and no footprints (so no move-order
pruning), which leaves an exhaustive depth-first search over the rules alone. On many small
positions cut from real deals, the real solver and the plain search must agree on
won/unwinnable. Every budget here is a node budget, so every answer is reproducible.
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import date
from typing import Any

import pytest

from solitaire_race.bots.policy import Policy
from solitaire_race.cli import main
from solitaire_race.daily import daily_deal_number
from solitaire_race.engine import Kind, Outcome, all_games, get_game, replay
from solitaire_race.engine.cards import card
from solitaire_race.engine.parallels import ParallelsState
from solitaire_race.engine.patriarchs import PatriarchsState
from solitaire_race.engine.perseverance import PerseveranceState
from solitaire_race.engine.persian import ORDER, PersianState
from solitaire_race.solver import CANDIDATES, Budget, DailyChoice, NoProvenDeal, choose_daily, hint, solve, verify
from solitaire_race.solver.knowledge import Knowledge, knowledge_for, play_out
from solitaire_race.solver.piles import buried_for_good
from solitaire_race.solver.search import search

from .conftest import TEST_SECRET

SECRET = TEST_SECRET.encode()
GAMES = sorted(all_games())


def plain(game_id: str, state: Any, budget: int = 400_000) -> str:
    game = get_game(game_id)
    return search(game, Knowledge(game), state, node_budget=budget, time_budget_s=None).status


def solver(game_id: str, state: Any, budget: int = 400_000) -> str:
    game = get_game(game_id)
    return search(game, knowledge_for(game), state, node_budget=budget, time_budget_s=None).status


# --- lines found replay to a win -------------------------------------------------------------------
def first_won(game_id: str, budget: int, deals: range) -> tuple[int, Any]:
    game = get_game(game_id)
    for number in deals:
        result = solve(game, game.deal(number, SECRET), node_budget=budget, shorten_budget=5_000)
        if result.won:
            return number, result
    raise AssertionError(f"the solver won no {game_id} deal of {deals} within {budget} nodes")


@pytest.mark.parametrize("game_id", GAMES)
def test_a_line_found_replays_to_a_win(game_id: str) -> None:
    game = get_game(game_id)
    number, result = first_won(game_id, 3_000, range(40))
    state, applied = replay(game, game.deal(number, SECRET), result.moves)
    assert game.outcome(state) is Outcome.WON and applied == len(result.moves)
    assert verify(game_id, game.deal(number, SECRET), result.moves)
    assert not verify(game_id, game.deal(number, SECRET), result.moves[:-1])  # one short: no win


def test_the_shortening_pass_keeps_the_line_winning_and_never_longer() -> None:
    shorter = 0
    for game_id in ("perseverance", "cruel", "persian-patience"):
        game = get_game(game_id)
        for number in range(3):
            start = game.deal(number, SECRET)
            raw = search(game, knowledge_for(game), start, node_budget=60_000, time_budget_s=None)
            if raw.status != "won":
                continue
            short = solve(game, start, node_budget=60_000, shorten_budget=20_000)
            assert short.moves is not None and verify(game, start, short.moves)
            assert len(short.moves) <= len(raw.moves or ())
            shorter += len(short.moves) < len(raw.moves or ())
    assert shorter  # the pass does shorten search lines


# --- proofs -----------------------------------------------------------------------------------------
def test_hand_built_lost_positions_are_proved_unwinnable() -> None:
    # K♠ above Q♠ in one pile, every other card home: the King can never move, so the Queen
    # never goes home, whatever is redealt (a redeal keeps them together in one pile).
    spade_queen, spade_king = card(12, 0), card(13, 0)
    for game_id in ("perseverance", "perseverance-a"):
        for redeals in (0, 1, 2):
            state = PerseveranceState(((spade_queen, spade_king),) + ((),) * 11, (11, 13, 13, 13), redeals)
            assert solve(game_id, state).status == "unwinnable"
    for homed in (False, True):
        state = PerseveranceState(((spade_queen, spade_king),) + ((),) * 11, (11, 13, 13, 13), 0, homed)
        assert solve("cruel", state).status == "unwinnable"
    # Persian Patience: eight piles, each a Queen under the King of her suit, every other
    # card home. A King goes only onto an empty pile and there is none, so with both
    # redeals used nothing moves; with one left, the redeal (gathered top card first, dealt
    # round) puts the Queens on top, and everything goes home.
    piles = tuple((card(12, s), card(13, s)) for s in range(4) for _ in range(2))
    heights = (6,) * 8  # both foundations of every suit up to the Jack
    assert solve("persian-patience", PersianState(piles, heights, 2)).status == "unwinnable"
    assert solve("persian-patience", PersianState(piles, heights, 1)).status == "won"


def test_a_tiny_budget_answers_unknown() -> None:
    game = get_game("perseverance")
    hard = next(n for n in range(50) if solver("perseverance", game.deal(n, SECRET), 3_000) == "unknown")
    result = solve(game, game.deal(hard, SECRET), node_budget=3_000)
    assert result.status == "unknown" and result.moves is None and result.nodes <= 3_000 + 100
    # A time budget already spent stops the search at its first look at the clock.
    assert solve(game, game.deal(hard, SECRET), node_budget=10**9, time_budget_s=0).status == "unknown"


# --- soundness: the reductions never change a verdict ---------------------------------------
def perseverance_cut(number: int, tops: tuple[int, ...], redeals: int, homed: bool) -> PerseveranceState:
    """A real Perseverance layout with the cards below ``tops`` (per suit) already home."""
    dealt = get_game("perseverance").deal(number, SECRET)
    piles = tuple(tuple(c for c in p if c >> 2 > tops[c & 3]) for p in dealt.piles)
    return PerseveranceState(piles, tops, redeals, homed)


def with_king_on_top(state: PerseveranceState) -> PerseveranceState:
    """The same position with the King of the first pile's bottom card's suit moved on top of
    that pile (above a lower card of its suit: lost unless a redeal separates them)."""
    first = next(i for i, p in enumerate(state.piles) if p)
    king = card(13, state.piles[first][0] & 3)
    piles = [tuple(c for c in p if c != king) for p in state.piles]
    piles[first] += (king,)
    return PerseveranceState(tuple(piles), state.foundations, state.redeals, state.homed_since_deal)


@pytest.mark.parametrize("game_id", ["perseverance", "perseverance-a", "cruel"])
def test_perseverance_family_verdicts_match_a_plain_search(game_id: str) -> None:
    verdicts: Counter[str] = Counter()
    know = knowledge_for(get_game(game_id))
    buried_first_pile = 0  # positions lost for good before the last redeal (see knowledge.py)
    for number in range(8):
        redeals = number % 3 if game_id != "cruel" else 0
        homed = number % 2 == 0
        loose = perseverance_cut(number, tuple(7 + (number + s) % 3 for s in range(4)), redeals, homed)
        planted = with_king_on_top(
            perseverance_cut(number, tuple(9 + (number + s) % 3 for s in range(4)), redeals, homed)
        )
        for state in (loose, planted):
            expected = plain(game_id, state, 25_000)
            if expected == "unknown":
                continue  # too big for the plain search: not a comparison
            assert solver(game_id, state) == expected, (number, state)
            verdicts[expected] += 1
            buried_first_pile += know.dead(state) and redeals < 2
    assert verdicts["won"] >= 3 and verdicts["unwinnable"] >= 3, verdicts
    assert buried_first_pile  # the rule for positions with redeals left was exercised


def with_successor_below(state: PerseveranceState) -> PerseveranceState | None:
    """The next card x of a suit (rank 10 at most) put at the bottom of the first pile with
    x's next two cards of its suit on it, the higher first: the one above x sits over its
    own successor, so with single cards it never leaves, while the run they form could (its
    bottom's successor is not below it), so the runs-move rule does not call it buried."""
    suit = next((s for s, top in enumerate(state.foundations) if top < 10), None)
    if suit is None:
        return None
    x = card(state.foundations[suit] + 1, suit)
    y, successor = x + 4, x + 8
    first = next(i for i, p in enumerate(state.piles) if p)
    piles = [tuple(c for c in p if c not in (x, y, successor)) for p in state.piles]
    piles[first] = (x, successor, y) + piles[first]
    return PerseveranceState(tuple(piles), state.foundations, state.redeals, state.homed_since_deal)


def test_cruel_single_card_burial_matches_a_plain_search() -> None:
    """Cruel's dead rule (``piles.stuck_single``) on first piles where the Perseverance
    rule (``buried_for_good``) sees nothing: the plain search proves each lost."""
    know = knowledge_for(get_game("cruel"))
    proved = 0
    for number in range(12):
        cut = perseverance_cut(number, tuple(9 + (number + s) % 2 for s in range(4)), 0, number % 2 == 0)
        state = with_successor_below(cut)
        assert state is not None
        first = next(p for p in state.piles if p)
        assert know.dead(state) and not buried_for_good(first[:4])
        expected = plain("cruel", state, 25_000)
        if expected == "unknown":
            continue
        assert expected == "unwinnable" == solver("cruel", state), number
        proved += 1
    assert proved >= 6


def persian_layout(number: int, ranks: tuple[int, ...], redeals: int) -> PersianState:
    """Both copies of ``ranks`` (the top of the rank order) shuffled into 8 full piles, the
    lower ranks home: every pile holds cards, so Kings cannot simply move to empty piles."""
    rng = random.Random(number)
    cards = [card(r, s) for r in ranks for s in range(4) for _ in range(2)]
    rng.shuffle(cards)
    n = len(cards) // 8
    home = len(ORDER) - len(ranks)
    return PersianState(tuple(tuple(cards[i * n : (i + 1) * n]) for i in range(8)), (home,) * 8, redeals)


def test_persian_verdicts_match_a_plain_search_and_the_safe_rule_fires() -> None:
    verdicts: Counter[str] = Counter()
    know = knowledge_for(get_game("persian-patience"))
    safe_positions = 0
    for number in range(40):
        state = persian_layout(number, (10, 11, 12, 13), redeals=1 if number % 5 == 0 else 2)
        expected = plain("persian-patience", state, 20_000)
        assert expected != "unknown"
        assert solver("persian-patience", state) == expected, (number, state)
        verdicts[expected] += 1
        safe_positions += know.safe(state) is not None
    assert verdicts["won"] and verdicts["unwinnable"], verdicts
    assert safe_positions  # the safe-move rule was exercised, not just present


def test_the_last_phase_rules_of_perseverance() -> None:
    """Dead-by-burial never condemns a layout that playing out would win, and playing out
    decides exactly what a full search decides."""
    game = get_game("perseverance")
    dead = won = 0
    for number in range(40):
        state = perseverance_cut(number, (5, 5, 5, 5), 2, True)  # 32 cards
        played = play_out(game, state)
        wins = played is not None and game.is_won(played[1])
        if any(map(buried_for_good, state.piles)):
            dead += 1
            assert not wins
        won += wins
    assert dead and won
    checked: Counter[bool] = Counter()
    for number in range(16):  # fewer cards, so that the full search stays small
        state = perseverance_cut(number, (8, 8, 8, 8), 2, True)
        played = play_out(game, state)
        wins = played is not None and game.is_won(played[1])
        expected = plain("perseverance", state, 30_000)
        if expected != "unknown":
            assert expected == ("won" if wins else "unwinnable"), number
            checked[wins] += 1
    assert checked[True] and checked[False], checked


def two_deck_position(game_id: str, number: int) -> Any:
    """A small random position: per suit the foundations short of meeting or already past
    each other, the other cards shuffled. Parallels: every card in the rows, no stock (so
    middle cards can be walled in); Patriarchs: tableau, stock and waste, redeal used."""
    rng = random.Random(number)
    tops = [
        (rng.choice([5, 6, 7]), rng.choice([8, 9])) if rng.random() < 0.6 else (rng.choice([8, 9]), rng.choice([6, 7]))
        for _ in range(4)
    ]
    cards = [
        card(r, s)
        for s in range(4)
        for r in range(1, 14)
        for _ in range(2 - (r <= tops[s][0]) - (r >= tops[s][1]))
    ]
    rng.shuffle(cards)
    flat = tuple(v for t in tops for v in t)
    if game_id == "parallels":
        rows = -(-len(cards) // 10)
        return ParallelsState(tuple(cards) + (0,) * (rows * 10 - len(cards)), (), flat)
    k = rng.randrange(max(1, len(cards) - 9))
    return PatriarchsState(tuple(cards[:9]), tuple(cards[9 : 9 + k]), tuple(cards[9 + k :]), flat, True)


@pytest.mark.parametrize("game_id", ["parallels", "patriarchs"])
def test_two_deck_verdicts_match_a_plain_search(game_id: str) -> None:
    verdicts: Counter[str] = Counter()
    for number in range(40):
        state = two_deck_position(game_id, number)
        expected = plain(game_id, state, 3_000)
        if expected == "unknown":
            continue  # too big for the plain search: not a comparison
        found = solver(game_id, state, 20_000)
        assert found in (expected, "unknown"), (number, state)  # never the wrong verdict
        verdicts[found] += 1
        if verdicts["won"] >= 3 and verdicts["unwinnable"] >= 3:
            break
    assert verdicts["won"] >= 3 and verdicts["unwinnable"] >= 3, verdicts


@pytest.mark.parametrize(("game_id", "number"), [("parallels", 3), ("patriarchs", 2)])
def test_playouts_win_two_deck_deals_that_the_ordered_searches_leave_unknown(game_id: str, number: int) -> None:
    game = get_game(game_id)
    state = game.deal(number, SECRET)
    ordered_only = knowledge_for(game)
    ordered_only.playout_share = 0.0
    ordered_only.best_first_share = 0.5  # depth-first and best-first, half the budget each
    assert search(game, ordered_only, state, node_budget=20_000, time_budget_s=None).status == "unknown"
    found = search(game, knowledge_for(game), state, node_budget=20_000, time_budget_s=None)
    assert found.status == "won" and found.moves is not None
    assert verify(game, state, [game.format_move(m) for m in found.moves])


@pytest.mark.parametrize("game_id", ["cruel", "parallels"])
def test_a_position_one_move_from_a_win_is_solved_with_the_default_shortening(game_id: str) -> None:
    """The shortening's replays stop on a line of one move (they once looped on it)."""
    game = get_game(game_id)
    number, result = first_won(game_id, 200_000, range(20))
    line = [game.parse_move(m) for m in result.moves or ()]
    state = game.deal(number, SECRET)
    for move in line[:-1]:
        state = game.apply(state, move)
    last = solve(game, state)
    assert last.won and last.moves == (game.format_move(line[-1]),)


def test_playouts_give_the_same_line_on_every_run() -> None:
    game = get_game("patriarchs")
    state = game.deal(7, SECRET)
    runs = [search(game, knowledge_for(game), state, node_budget=30_000, time_budget_s=None) for _ in range(2)]
    assert runs[0].status == "won" and runs[0].moves == runs[1].moves and runs[0].nodes == runs[1].nodes


def test_move_order_pruning_saves_work_without_changing_the_answer() -> None:
    game = get_game("perseverance")
    know = knowledge_for(game)

    class NoFootprints(type(know)):  # type: ignore[misc]
        def edges(self, state: Any) -> list[Any]:
            return [(e, None) for e, _ in super().edges(state)]

    blind = NoFootprints(game)
    for number in range(6):
        state = game.deal(number, SECRET)
        a = search(game, know, state, node_budget=10**6, time_budget_s=None)
        b = search(game, blind, state, node_budget=10**6, time_budget_s=None)
        if a.status == "unwinnable":  # a full search: pruning shows in the node count
            assert b.status == "unwinnable" and a.nodes < b.nodes
            return
    raise AssertionError("no quickly unwinnable Perseverance deal among the first six")


# --- Clock: every exchange is tried ----------------------------------------------------------------
def clock_by_hand(state: Any) -> bool:
    """Won with some exchange choice? Plays every choice out, independently of the solver."""
    game = get_game("clock")
    while True:
        moves = game.legal_moves(state)
        if not moves:
            return game.is_won(state)
        if moves[0].kind is Kind.EXCHANGE:
            return any(clock_by_hand(game.apply(state, m)) for m in moves)
        state = game.apply(state, moves[0])


def test_clock_search_tries_every_exchange() -> None:
    game = get_game("clock")
    seen: Counter[str] = Counter()
    for number in range(40):
        state = game.deal(number, SECRET)
        result = solve(game, state, shorten_budget=0)
        assert result.status == ("won" if clock_by_hand(state) else "unwinnable")
        seen[result.status] += 1
        if result.won:
            assert result.moves is not None
            seen["exchanged"] += any(m.startswith("x") for m in result.moves)
    assert seen["won"] and seen["unwinnable"] and seen["exchanged"]


# --- the daily deal -----------------------------------------------------------------------------
def test_choose_daily_is_the_first_candidate_proved_winnable() -> None:
    day, budget = date(2026, 3, 16), Budget(nodes=3_000, shorten_nodes=20_000)
    chosen = choose_daily("perseverance", SECRET, day, budget)
    assert chosen == choose_daily("perseverance", SECRET, day, budget)  # deterministic
    game = get_game("perseverance")
    for attempt in range(50):
        candidate = daily_deal_number(SECRET, "perseverance", day, attempt)
        result = solve(game, game.deal(candidate, SECRET), node_budget=3_000, shorten_budget=20_000)
        if result.won:
            moves = tuple(result.moves or ())
            assert chosen == DailyChoice(candidate, len(moves), attempt + 1, moves, result.shortening)
            assert chosen.par_method and "20,000 nodes" in chosen.par_method  # how par was found
            break
        assert candidate != chosen.deal
    else:
        raise AssertionError("no candidate won")
    assert attempt > 0, "the test needs a day whose first candidate is not proved"


def test_choose_daily_never_settles_on_an_unproven_deal() -> None:
    expected = f"no cruel candidate of 2026-03-14 was proved winnable \\({CANDIDATES} tried"
    with pytest.raises(NoProvenDeal, match=expected):
        choose_daily("cruel", SECRET, date(2026, 3, 14), Budget(nodes=1))


# --- front ends ------------------------------------------------------------------------------------
def test_solve_command_prints_a_line_that_replays(capsys: pytest.CaptureFixture[str]) -> None:
    game = get_game("cruel")
    number = next(n for n in range(20) if solve(game, game.deal(n, b"s"), node_budget=5_000, shorten_budget=0).won)
    assert main(["solve", "cruel", str(number), "--secret", "s", "--nodes", "5000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"# Cruel, deal {number}: won in {len(out) - 1} moves (")
    state, applied = replay(game, game.deal(number, b"s"), out)
    assert game.is_won(state) and applied == len(out) - 1
    lost = next(
        n
        for n in range(20)
        if solve(game, game.deal(n, b"s"), node_budget=5_000, shorten_budget=0).status == "unwinnable"
    )
    assert main(["solve", "cruel", str(lost), "--secret", "s", "--nodes", "5000"]) == 1
    assert f"# Cruel, deal {lost}: unwinnable, proved: no line wins (" in capsys.readouterr().out
    assert main(["solve", "perseverance", "4", "--secret", "s", "--nodes", "10"]) == 3
    assert "# Perseverance, deal 4: unknown: the budget ran out" in capsys.readouterr().out


def test_hint_is_the_next_move_of_a_winning_line_where_everything_is_seen() -> None:
    game = get_game("cruel")
    number = next(n for n in range(20) if solve(game, game.deal(n, SECRET), node_budget=5_000, shorten_budget=0).won)
    state = game.deal(number, SECRET)
    for _ in range(5):  # follow the hints: each is legal and the game stays winnable
        found = hint(game, state, Budget(nodes=5_000, shorten_nodes=0))
        assert found.move is not None and (found.wins, found.layouts) == (1, 1)
        assert found.describe() == "the next move of a winning line"
        state = game.apply(state, game.parse_move(found.move))
    assert solve(game, state, node_budget=5_000, shorten_budget=0).won


def test_bots_play_the_solver_line_in_full_information_games() -> None:
    game = get_game("perseverance")
    number = next(n for n in range(20) if solve(game, game.deal(n, SECRET), node_budget=5_000, shorten_budget=0).won)
    state = game.deal(number, SECRET)
    policy = Policy("perseverance", plan_budget=1_000)  # solver budget 5 x 1,000 nodes
    while game.outcome(state) is Outcome.PLAYING:
        move = policy.choose(game.view(state))
        assert move is not None
        state = game.apply(state, game.parse_move(move))
    assert game.is_won(state)

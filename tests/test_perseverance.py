"""Perseverance, Perseverance A and Cruel: each test quotes the docs/games/rules.md line it checks."""

from __future__ import annotations

import pytest

from solitaire_race.engine import IllegalMove, Kind, Move, NotationError, Outcome, get_game
from solitaire_race.engine.cards import parse_card
from solitaire_race.engine.perseverance import PerseveranceState

P = get_game("perseverance")
PA = get_game("perseverance-a")
CRUEL = get_game("cruel")


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def state(*piles: str, found: str = "AS AH AD AC", redeals: int = 0, homed: bool = False) -> PerseveranceState:
    padded = [cards(p) for p in piles] + [()] * (12 - len(piles))
    tops = tuple(parse_card(c) >> 2 for c in found.split())
    return PerseveranceState(tuple(padded), tops, redeals, homed)


def test_deal_four_at_a_time() -> None:
    """"the other 48 cards are shuffled and dealt four at a time into 12 piles of 4 (pile 1
    gets the first four cards, the fourth being its top card)" and "Aces go to the four
    foundations"."""
    order = P.deck()[::-1]
    s = P.deal_from(order)
    assert s.piles[0] == tuple(order[:4]) and s.piles[11] == tuple(order[44:])
    assert all(len(p) == 4 for p in s.piles)
    assert P.progress(s).home == 4  # the four Aces
    assert sorted(P.all_cards(s)) == sorted(range(4, 56))


def test_worked_redeal_example() -> None:
    """"Worked example: piles 1, 2, 4 holding 4, 2, 3 cards (bottom to top A0..A3, B0 B1,
    D0..D2) redeal to pile 1 = A0..A3, pile 2 = B0 B1 D0 D1, pile 3 = D2." """
    a, b, d = "3S 4S 5S 6S", "3H 4H", "3D 4D 5D"
    s = state(a, b, "", d)
    after = P.apply(s, P.parse_move("r"))
    assert after.piles[:4] == (cards(a), cards(b) + cards("3D 4D"), cards("5D"), ())
    assert all(p == () for p in after.piles[3:])
    assert after.redeals == 1


def test_at_most_two_redeals() -> None:
    """"Redeal: at any time, at most twice." """
    s = state("3S 4S", "5H")
    s = P.apply(P.apply(s, P.parse_move("r")), P.parse_move("r"))
    assert Move(Kind.REDEAL) not in P.legal_moves(s)
    with pytest.raises(IllegalMove, match="no redeals left"):
        P.apply(s, P.parse_move("r"))


def test_build_down_by_suit_with_reason() -> None:
    """"The top card of a pile may go to its foundation (up by suit, A to K) or onto the
    next-higher card of its own suit on top of another pile." """
    s = state("7S", "9S", "8S", "8H")
    with pytest.raises(IllegalMove, match=r"^7♠ cannot go on 9♠: needs 8♠$"):
        P.apply(s, P.parse_move("1>2"))
    with pytest.raises(IllegalMove, match="7♠ cannot go on 8♥: needs 7♥"):
        P.apply(s, P.parse_move("1>4"))
    after = P.apply(s, P.parse_move("1>3"))
    assert after.piles[2] == cards("8S 7S") and after.piles[0] == ()


def test_foundation_up_by_suit() -> None:
    """"The top card of a pile may go to its foundation (up by suit, A to K)" """
    s = state("2S", "3S", "2H 3H")
    with pytest.raises(IllegalMove, match="3♠ cannot go to the foundation: the ♠ foundation needs 2♠"):
        P.apply(s, P.parse_move("2>f"))
    s = P.apply(s, P.parse_move("1>f"))
    s = P.apply(s, P.parse_move("2f"))
    assert s.foundations == (3, 1, 1, 1)
    with pytest.raises(IllegalMove, match="3♥ cannot go to the foundation"):
        P.apply(s, P.parse_move("3>f"))


def test_runs_move_as_unit_whole_or_top_part() -> None:
    """"A run of same-suit cards in descending order at the top of a pile (the whole run or
    its top part) may move as a unit onto the next-higher card of its suit." """
    s = state("KD 6S 5S 4S 3S", "7S", "5S", "QC 5H")
    whole = P.apply(s, P.parse_move("1>2"))
    assert whole.piles[0] == cards("KD") and whole.piles[1] == cards("7S 6S 5S 4S 3S")
    # The 5♠ on pile 3 is a second copy only for this hand-built test; what matters is
    # that the target decides the unit: onto a 5 the top part 4♠ 3♠ moves.
    part = P.apply(s, P.parse_move("1>3"))
    assert part.piles[0] == cards("KD 6S 5S") and part.piles[2] == cards("5S 4S 3S")
    with pytest.raises(IllegalMove, match=r"6♠\.\.3♠ cannot go on 5♥: needs 4♥"):
        P.apply(s, P.parse_move("1>4"))


def test_runs_go_home_one_card_at_a_time() -> None:
    """"Runs go to foundations one card at a time." """
    s = state("4S 3S 2S")
    moves = P.legal_moves(s)
    assert moves.count(Move(Kind.HOME, 0)) == 1
    after = P.apply(s, Move(Kind.HOME, 0))
    assert after.piles[0] == cards("4S 3S") and after.foundations[0] == 2


def test_emptied_pile_stays_empty() -> None:
    """"An emptied pile stays empty for the rest of the game: nothing may be moved into it." """
    s = state("2S", "KH")
    s = P.apply(s, P.parse_move("1>f"))
    assert all(m.dst != 0 for m in P.legal_moves(s) if m.kind is Kind.BUILD)
    with pytest.raises(IllegalMove, match="pile 1 is empty, and an emptied pile stays empty"):
        P.apply(s, P.parse_move("2>1"))


def test_kings_to_bottom_in_first_deal_only() -> None:
    """Perseverance A: "in the initial deal (not in redeals) every King is moved to the
    bottom of its pile, the other cards keeping their order, several Kings in one pile
    keeping the order in which they were dealt." """
    rest = [c for c in PA.deck() if c not in cards("KS KH KD KC 2S 3S 2H 3H")]
    order = list(cards("2S KH 3S KD 2H 3H KS KC")) + rest
    s = PA.deal_from(order)
    assert s.piles[0] == cards("KH KD 2S 3S")
    assert s.piles[1] == cards("KS KC 2H 3H")
    assert P.deal_from(order).piles[0] == cards("2S KH 3S KD")  # plain Perseverance keeps them
    # A redeal gathers and deals as Perseverance does: no Kings moved.
    redealt = PA.apply(state("2S KH", "3S", homed=False), PA.parse_move("r"))
    assert redealt.piles[0] == cards("2S KH 3S")


def test_cruel_single_cards_only() -> None:
    """Cruel: "only single cards move (no runs)" """
    s = state("6S 5S", "7S", "6S")
    with pytest.raises(IllegalMove, match="only single cards move in Cruel: 5♠ cannot go on 7♠: needs 6♠"):
        CRUEL.apply(s, CRUEL.parse_move("1>2"))
    after = CRUEL.apply(s, CRUEL.parse_move("1>3"))
    assert after.piles[2] == cards("6S 5S")
    assert Move(Kind.BUILD, 0, 1) not in CRUEL.legal_moves(s)


def test_cruel_redeal_needs_a_card_home_since_last_deal() -> None:
    """Cruel: "redeals are unlimited, but a redeal is only allowed after at least one card
    has gone to a foundation since the last deal (so a game always ends)." """
    s = state("9H 2S", "3S", "KH 2H", "3H")
    with pytest.raises(IllegalMove, match="no card has gone to a foundation since the last deal"):
        CRUEL.apply(s, CRUEL.parse_move("r"))
    assert Move(Kind.REDEAL) not in CRUEL.legal_moves(s)
    s = CRUEL.apply(s, CRUEL.parse_move("1>f"))
    assert s.homed_since_deal and Move(Kind.REDEAL) in CRUEL.legal_moves(s)
    redealt = CRUEL.apply(s, CRUEL.parse_move("r"))
    assert not redealt.homed_since_deal
    assert redealt.piles[:2] == (cards("9H 3S KH 2H"), cards("3H"))
    with pytest.raises(IllegalMove):
        CRUEL.apply(redealt, CRUEL.parse_move("r"))
    # Unlimited: a third, fourth ... redeal is fine once a card went home in between.
    again = CRUEL.apply(CRUEL.apply(redealt, CRUEL.parse_move("1>f")), CRUEL.parse_move("r"))
    assert again.redeals == 2 and CRUEL.view(again)["redeals_left"] is None


def test_won_and_stuck() -> None:
    """"A game is won when every card is on the foundations" and lost (stuck) "when no move
    is left that could ever bring another card to a foundation" """
    s = state("KS", found="QS KH KD KC")
    assert P.outcome(s) is Outcome.PLAYING
    won = P.apply(s, P.parse_move("1>f"))
    assert P.outcome(won) is Outcome.WON and P.progress(won).home == 52
    stuck = state("2S 3S", "2H 3H", redeals=2)
    assert P.legal_moves(stuck) == [] and P.outcome(stuck) is Outcome.STUCK
    assert P.outcome(state("2S 3S", "2H 3H", redeals=1)) is Outcome.PLAYING  # a redeal is left


def test_notation() -> None:
    for text, move in [
        ("3>f", Move(Kind.HOME, 2)),
        ("3f", Move(Kind.HOME, 2)),
        ("12>1", Move(Kind.BUILD, 11, 0)),
        ("r", Move(Kind.REDEAL)),
    ]:
        assert P.parse_move(text) == move
    assert P.format_move(Move(Kind.HOME, 2)) == "3>f"
    for bad in ["13>f", "0>1", "3>", "f", "3>x"]:
        with pytest.raises(NotationError):
            P.parse_move(bad)

"""Persian Patience: every rule bullet of docs/games/rules.md, the notation, and won/stuck detection.

States are mostly built by hand (``state(...)`` below) so each test shows exactly the
position it is about. Hand-built positions need not hold all 64 cards.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from solitaire_race.engine.base import IllegalMove, Kind, Move, NotationError, Outcome, replay
from solitaire_race.engine.cards import card, code, parse_card
from solitaire_race.engine.persian import ORDER, PersianPatience, PersianState
from solitaire_race.engine.registry import get_game

GAME = PersianPatience()
SECRET = b"test secret"


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def state(
    *piles: str, foundations: tuple[int, ...] = (0,) * 8, redeals: int = 0
) -> PersianState:
    """Piles as space-separated codes, bottom to top; missing piles are empty."""
    padded = list(piles) + [""] * (8 - len(piles))
    return PersianState(tuple(cards(p) for p in padded), foundations, redeals)


def home(pile: int) -> Move:
    return Move(Kind.HOME, pile - 1)


def build(src: int, dst: int) -> Move:
    return Move(Kind.BUILD, src - 1, dst - 1)


REDEAL = Move(Kind.REDEAL)
# Fillers that neither build on each other nor go home on empty foundations: Kings and
# Jacks on top, with no Queen anywhere on top.
FILL = ("KS", "KH", "KD", "KC", "JS", "JH", "JD", "JC")


def rejects(s: PersianState, move: Move, message: str) -> None:
    before = s
    with pytest.raises(IllegalMove) as err:
        GAME.apply(s, move)
    assert str(err.value) == message
    assert s == before  # unchanged (states are frozen values)
    assert move not in GAME.legal_moves(s)


# --- deck and deal -------------------------------------------------------------------


def test_deck_has_64_cards_without_2s_to_6s() -> None:
    """rules.md: "Two decks without 2s to 6s: 64 cards, ranks in the order A, 7, 8, 9, 10,
    J, Q, K." """
    deck = GAME.deck()
    assert len(deck) == 64
    ranks = (1, 7, 8, 9, 10, 11, 12, 13)
    assert Counter(deck) == Counter({card(r, s): 2 for r in ranks for s in range(4)})
    assert ORDER == (1, 7, 8, 9, 10, 11, 12, 13)


def test_deal_one_card_at_a_time_across_eight_piles() -> None:
    """rules.md: "Dealt face up into 8 piles of 8, one card at a time across the piles." """
    deck = GAME.deck()
    s = GAME.deal_from(deck)
    assert len(s.piles) == 8 and all(len(p) == 8 for p in s.piles)
    for i in range(8):
        assert s.piles[i] == tuple(deck[i::8])  # card 1 to pile 1, card 9 on top of it, ...
    assert s.piles[0][-1] == deck[56]
    assert s.foundations == (0,) * 8 and s.redeals == 0


def test_shuffled_deal_is_complete_and_registered() -> None:
    """rules.md: "Every card's position is decided by the deal; nothing is random after
    the deal." """
    assert get_game("persian-patience").id == GAME.id
    s = GAME.deal(7, SECRET)
    assert s == GAME.deal(7, SECRET)
    assert sorted(GAME.all_cards(s)) == sorted(GAME.deck())
    assert [len(p) for p in s.piles] == [8] * 8


# --- foundations ---------------------------------------------------------------------


def test_foundations_build_up_a_7_8_to_k() -> None:
    """rules.md: "8 foundations, one per suit and deck, built up A, 7, 8, ... K." """
    s = state("KS QS JS TS 9S 8S 7S AS")
    for _ in range(8):
        s = GAME.apply(s, home(1))
    assert s.foundations[:2] == (0, 8)
    assert GAME.view(s)["foundations"][:2] == ["KS", None]
    # the 7 goes straight on the Ace: there are no 2s to 6s
    s = GAME.apply(state("7H", foundations=(0, 0, 0, 1, 0, 0, 0, 0)), home(1))
    assert s.foundations == (0, 0, 0, 2, 0, 0, 0, 0)


def test_foundation_refuses_out_of_order_cards() -> None:
    """rules.md: "8 foundations, one per suit and deck, built up A, 7, 8, ... K." """
    rejects(
        state("8S", foundations=(1, 1, 0, 0, 0, 0, 0, 0)),
        home(1),
        "8♠ cannot go to a foundation: the ♠ foundations need 7♠",
    )
    rejects(state("7D"), home(1), "7♦ cannot go to a foundation: the ♦ foundations need A♦")
    # clubs at A and A-7-8: 9♣ fits the higher one, 8♣ fits neither
    s = state("8C", "9C", foundations=(0, 0, 0, 0, 0, 0, 1, 3))
    rejects(s, home(1), "8♣ cannot go to a foundation: the ♣ foundations need 7♣ or 9♣")
    assert GAME.apply(s, home(2)).foundations[6:] == (1, 4)
    rejects(
        state("AS", foundations=(8, 8, 0, 0, 0, 0, 0, 0)),
        home(1),
        "both ♠ foundations are complete",
    )


def test_two_foundations_per_suit_are_stored_canonically() -> None:
    """rules.md: "8 foundations, one per suit and deck" -- which of the two same-suit
    foundations a card went to does not matter, so the same position is the same state."""
    s = state("AS", "AS", "7S")
    one = GAME.apply(GAME.apply(GAME.apply(s, home(1)), home(2)), home(3))  # A, A, 7
    two = GAME.apply(GAME.apply(GAME.apply(s, home(1)), home(3)), home(2))  # A, 7, A
    assert one == two and hash(one) == hash(two)
    assert one.foundations[:2] == (1, 2)
    # a second Ace starts the other foundation of its suit
    assert GAME.apply(state("AH", foundations=(0, 0, 0, 5, 0, 0, 0, 0)), home(1)).foundations[
        2:4
    ] == (1, 5)
    # the lower foundation catching up keeps the pair sorted
    assert GAME.apply(state("7D", foundations=(0, 0, 0, 0, 1, 1, 0, 0)), home(1)).foundations[
        4:6
    ] == (1, 2)


# --- building ------------------------------------------------------------------------


def test_ace_goes_on_a_seven_of_the_other_colour() -> None:
    """rules.md: "onto a pile whose top card is the next rank up in that order and of the
    other colour (so an Ace may go on a 7)." """
    s = state("KS AH", "7S", "7D", *FILL[3:])
    assert build(1, 2) in GAME.legal_moves(s)
    after = GAME.apply(s, build(1, 2))
    assert after.piles[0] == cards("KS") and after.piles[1] == cards("7S AH")
    rejects(s, build(1, 3), "A♥ cannot go on 7♦: needs a black A")


def test_build_down_in_order_needs_the_other_colour() -> None:
    """rules.md: "onto a pile whose top card is the next rank up in that order and of the
    other colour" """
    s = state("KD 7C", "8H", "8S", "9D", "QC", "KH", *FILL[6:])
    assert build(1, 2) in GAME.legal_moves(s)  # 7♣ on 8♥
    assert GAME.apply(s, build(1, 2)).piles[1] == cards("8H 7C")
    rejects(s, build(1, 3), "7♣ cannot go on 8♠: needs a red 7")
    rejects(s, build(1, 4), "7♣ cannot go on 9♦: needs a black 8")
    assert build(5, 6) in GAME.legal_moves(s)  # Q♣ on K♥
    assert build(3, 4) in GAME.legal_moves(s)  # 8♠ on 9♦


def test_nothing_goes_on_an_ace() -> None:
    """rules.md: "ranks in the order A, 7, 8, 9, 10, J, Q, K" -- the Ace is lowest, so
    nothing is built on it."""
    rejects(state("KS 7C", "AH", *FILL[2:]), build(1, 2), "nothing can go on A♥")


def test_king_goes_only_onto_an_empty_pile() -> None:
    """rules.md: "An empty pile may take any single card." -- and a King, having no next
    rank up, goes on nothing else."""
    s = state("QD KS", "QH", "", *FILL[3:])
    rejects(s, build(1, 2), "K♠ cannot go on Q♥: a King goes only onto an empty pile")
    after = GAME.apply(s, build(1, 3))
    assert after.piles[2] == cards("KS") and after.piles[0] == cards("QD")


def test_empty_pile_takes_any_single_card() -> None:
    """rules.md: "An empty pile may take any single card." """
    s = state("KS 9H", "", "JC AD")
    moves = GAME.legal_moves(s)
    assert build(1, 2) in moves and build(3, 2) in moves
    assert GAME.apply(s, build(3, 2)).piles[:3] == (cards("KS 9H"), cards("AD"), cards("JC"))


def test_one_card_at_a_time() -> None:
    """rules.md: "The top card of a pile may go to a foundation, or onto a pile [...] One
    card at a time." """
    # 8♥-7♣ is a proper sequence, but only the top card moves
    s = state("8H 7C", "9S", "8D")
    assert GAME.apply(s, build(1, 3)).piles[:3] == (cards("8H"), cards("9S"), cards("8D 7C"))
    rejects(s, build(1, 2), "7♣ cannot go on 9♠: needs a red 8")
    # the card under the top does not go home by itself either
    s = state("AS KD")
    rejects(s, home(1), "K♦ cannot go to a foundation: the ♦ foundations need A♦")


def test_bad_pile_references() -> None:
    """Moves must name a non-empty source pile and an existing, different target pile."""
    s = state("KS 8H", "9S")
    rejects(s, build(3, 2), "pile 3 is empty")
    rejects(s, home(3), "pile 3 is empty")
    rejects(s, build(1, 1), "a card cannot be moved onto its own pile")
    rejects(s, Move(Kind.BUILD, 0, 8), "there is no pile 9 (piles are 1-8)")
    rejects(s, Move(Kind.HOME, 8), "there is no pile 9 (piles are 1-8)")
    rejects(s, Move(Kind.STOCK), "Persian Patience has no stock moves")
    # unused fields must stay 0, so every move has one canonical value
    rejects(state("AS"), Move(Kind.HOME, 0, 3), "malformed home move: move.src=0, move.dst=3")
    rejects(s, Move(Kind.REDEAL, 1), "malformed redeal move: move.src=1, move.dst=0")


# --- redeal --------------------------------------------------------------------------


def test_redeal_order() -> None:
    """rules.md: "the piles are picked up left to right, each pile from its top card to
    its bottom card, without shuffling, and dealt one card at a time across the 8 piles,
    left to right, until the cards run out." (the worked example of the docs)"""
    s = state("AS 7H 8C", "", "9D TS", "JH", "QC KD 7S 8S 9H")
    # gathered: 8C 7H AS | TS 9D | JH | 9H 8S 7S KD QC
    after = GAME.apply(s, REDEAL)
    assert after.piles == (
        cards("8C 7S"),
        cards("7H KD"),
        cards("AS QC"),
        cards("TS"),
        cards("9D"),
        cards("JH"),
        cards("9H"),
        cards("8S"),
    )
    assert after.redeals == 1 and after.foundations == s.foundations


def test_redeal_of_a_full_layout_keeps_the_pick_up_order() -> None:
    """rules.md: "each pile from its top card to its bottom card" -- after a redeal of 64
    cards, pile 1 holds the old top cards of piles 1, 2, 3, ..., 8 from the bottom up."""
    s = GAME.deal(3, SECRET)
    after = GAME.apply(s, REDEAL)
    assert after.piles[0] == tuple(p[-1] for p in s.piles)
    assert after.piles[7] == tuple(p[0] for p in s.piles)


def test_redeal_at_any_time_at_most_twice() -> None:
    """rules.md: "**Redeal**: at any time, at most **twice**" """
    s = state("KD AS", "7H")  # a home move is available, yet redealing is allowed
    assert home(1) in GAME.legal_moves(s) and REDEAL in GAME.legal_moves(s)
    s = GAME.apply(GAME.apply(s, REDEAL), REDEAL)
    assert s.redeals == 2
    assert REDEAL not in GAME.legal_moves(s)
    rejects(s, REDEAL, "no redeals left (all 2 used)")
    assert GAME.view(s)["redeals_left"] == 0 and not GAME.view(s)["redeal_allowed"]


# --- won / stuck ---------------------------------------------------------------------


def test_won_when_every_card_is_home() -> None:
    """rules.md: "A game is **won** when every card is on the foundations" """
    s = state("KC", foundations=(8,) * 7 + (7,))
    assert GAME.progress(s).home == 63 and GAME.outcome(s) is Outcome.PLAYING
    won = GAME.apply(s, home(1))
    assert GAME.progress(won).to_json() == {"home": 64, "total": 64}
    assert GAME.is_won(won) and GAME.outcome(won) is Outcome.WON
    assert GAME.legal_moves(won) == []
    rejects(won, REDEAL, "there are no cards left to redeal")


def test_stuck_when_no_move_is_left() -> None:
    """rules.md: "A game is **lost** (stuck) when no move is left that could ever bring
    another card to a foundation: no legal move at all" """
    s = state("AS KH", "AH KS", "AD KC", "AC KD", "7S JH", "7H JS", "7D JC", "7C JD", redeals=2)
    assert GAME.legal_moves(s) == []
    assert GAME.outcome(s) is Outcome.STUCK
    # the same position with a redeal left is still playing
    assert GAME.outcome(PersianState(s.piles, s.foundations, 1)) is Outcome.PLAYING


def test_stuck_when_only_lone_cards_shuttle_into_empty_piles() -> None:
    """rules.md: "or only moves that shuttle cards without opening anything (... or a lone
    card moved into an empty pile and back in Persian Patience)." """
    s = state("9H", "9D", "9S", "9C", "JH", "JD", "7H", "", redeals=2)
    moves = GAME.legal_moves(s)
    assert moves and all(GAME.is_shuttle(s, m) for m in moves)
    assert GAME.outcome(s) is Outcome.STUCK
    # moving a card that is not alone is not a shuttle: it uncovers the card below
    s2 = state("AS 9H", redeals=2)
    assert not GAME.is_shuttle(s2, build(1, 2))
    assert GAME.outcome(s2) is Outcome.PLAYING


def test_stuck_when_only_pointless_builds_remain() -> None:
    """rules.md: "no move is left that could ever bring another card to a foundation" --
    8♥ may go back and forth between 9♣ and 9♠, which opens nothing."""
    s = state("AS 9C 8H", "AH 9S", "AD KS", "AC KH", "7S KD", "7H KC", "8S JS", "8D JH", redeals=2)
    assert GAME.legal_moves(s) == [build(1, 2)]
    assert GAME.outcome(s) is Outcome.STUCK
    assert GAME.legal_moves(GAME.apply(s, build(1, 2))) == [build(2, 1)]


def test_playing_when_builds_open_a_foundation_move() -> None:
    """rules.md: "A game is **lost** (stuck) when no move is left that could ever bring
    another card to a foundation" -- here two builds free the A♠, so it is not lost."""
    s = state("AS 8H 9C", "TD", "9S", "KS", "KH", "KD", "KC", "JS", redeals=2)
    moves = GAME.legal_moves(s)
    assert all(m.kind is Kind.BUILD for m in moves)
    assert GAME.outcome(s) is Outcome.PLAYING
    s = GAME.apply(GAME.apply(s, build(1, 2)), build(1, 3))
    assert home(1) in GAME.legal_moves(s)


# --- notation ------------------------------------------------------------------------


def test_notation_round_trip() -> None:
    """Every legal move formats to text that parses back to the same move."""
    s = GAME.deal(11, SECRET)
    seen = set()
    for _ in range(40):
        for m in GAME.legal_moves(s):
            assert GAME.parse_move(GAME.format_move(m)) == m
            seen.add(m.kind)
        s = GAME.apply(s, GAME.legal_moves(s)[0])
    assert GAME.format_move(home(3)) == "3>f"
    assert GAME.format_move(build(3, 5)) == "3>5"
    assert GAME.format_move(REDEAL) == "r"
    for text, move in [
        ("3f", home(3)),
        (" 3 > F ", home(3)),
        ("3-5", build(3, 5)),
        ("3 5", build(3, 5)),
        ("35", build(3, 5)),
        ("R", REDEAL),
        ("redeal", REDEAL),
    ]:
        assert GAME.parse_move(text) == move


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9>f", "'9>f': there is no pile 9 (piles are 1-8)"),
        ("0>1", "'0>1': there is no pile 0 (piles are 1-8)"),
        ("3>12", "'3>12': there is no pile 12 (piles are 1-8)"),
        (
            "f>3",
            "'f>3' is not a Persian Patience move: use e.g. '3>f' (pile 3 to a foundation), "
            "'3>5' (pile 3 onto pile 5) or 'r' (redeal)",
        ),
    ],
)
def test_notation_rejections(text: str, message: str) -> None:
    """Bad notation raises NotationError saying what the notation looks like."""
    with pytest.raises(NotationError) as err:
        GAME.parse_move(text)
    assert str(err.value) == message


@pytest.mark.parametrize("text", ["", "x", "3>", "3>>5", "3>5>7", "s", "3>g"])
def test_notation_rejects_garbage(text: str) -> None:
    with pytest.raises(NotationError, match=r"use e\.g\. '3>f'"):
        GAME.parse_move(text)


def test_format_rejects_foreign_moves() -> None:
    with pytest.raises(NotationError, match="has no shift moves"):
        GAME.format_move(Move(Kind.SHIFT))


def test_replay_a_move_log() -> None:
    """A log of moves in notation replays to the same state."""
    s = state("KD AS", "7S", "7H QS")
    end, n = replay(GAME, s, ["1>f  # the Ace", "2f", "", "3>1", "r"])
    assert n == 4
    assert end.foundations[:2] == (0, 2) and end.redeals == 1
    assert end.piles[:3] == (cards("QS"), cards("KD"), cards("7H"))


# --- view ----------------------------------------------------------------------------


def test_view_shows_everything_face_up() -> None:
    """rules.md: "Dealt face up" -- nothing is hidden, so the view lists every card; it is
    JSON-able and the snapshot equals it."""
    s = state("KD 9S", "", "TH", foundations=(1, 2, 0, 0, 0, 0, 0, 8), redeals=1)
    v = GAME.view(s)
    assert json.loads(json.dumps(v)) == v
    assert v == {
        "game": "persian-patience",
        "piles": [["KD", "9S"], [], ["TH"], [], [], [], [], []],
        "foundations": ["7S", "AS", None, None, None, None, "KC", None],
        "redeals_used": 1,
        "redeals_left": 1,
        "redeal_allowed": True,
    }
    assert GAME.snapshot(s) == v
    assert Counter(GAME.all_cards(s)) == Counter(cards("AS AS 7S KD 9S TH") + tuple(
        card(r, 3) for r in ORDER
    ))
    full = GAME.deal(5, SECRET)
    assert sorted(c for p in GAME.view(full)["piles"] for c in p) == sorted(
        code(c) for c in GAME.deck()
    )

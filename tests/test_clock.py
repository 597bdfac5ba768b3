"""Clock: each test quotes the docs/games/rules.md line it checks."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from solitaire_race.engine import IllegalMove, Kind, Move, NotationError, Outcome, get_game, replay
from solitaire_race.engine.cards import KING, Card, code, parse_card, rank_of
from solitaire_race.engine.clock import CENTRE, ClockState

C = get_game("clock")
SECRET = b"clock tests"
PLAY = Move(Kind.PLAY)
RANKS = "A23456789TJQK"


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_card(t) for t in text.split())


def four(rank: str) -> tuple[Card, ...]:
    """The four cards of a rank, bottom to top: spades, hearts, diamonds, clubs."""
    return cards(" ".join(rank + s for s in "SHDC"))


def deal_order(piles: list[tuple[Card, ...]]) -> list[Card]:
    """The shuffled sequence that deals round into these 13 piles (bottom to top)."""
    return [piles[i][j] for j in range(4) for i in range(13)]


def play(state: ClockState, *texts: str) -> ClockState:
    for t in texts:
        state = C.apply(state, C.parse_move(t))
    return state


# Hour h holds the four cards of rank h+1, hour 12 the Kings and the centre the Aces: the
# chain runs A, 2, ..., Q, K, A, ... and the last card turned up is the fourth King.
CYCLE = [four(RANKS[i + 1]) for i in range(12)] + [four("A")]
# The centre holds the Kings and hour 12 the Aces: three Kings go at once and the fourth
# turns up with 48 cards face down, so the game needs the exchange.
KINGS_FIRST = [four(RANKS[i + 1]) for i in range(11)] + [four("A"), four("K")]


def blocked_state() -> ClockState:
    s = play(C.deal_from(deal_order(KINGS_FIRST)), "p", "p", "p", "p")
    assert s.hand == parse_card("KS") and s.up[CENTRE] == cards("KH KD KC")
    return s


# --- the deal ---------------------------------------------------------------------------
def test_deal_round_face_down() -> None:
    """"52 cards dealt face down, one at a time round the 13 piles (hours 1..12, pile 13 the
    centre, the Kings' pile), so each pile holds 4." """
    order = list(range(4, 56))[::-1]
    s = C.deal_from(order)
    for i in range(13):
        assert s.down[i] == tuple(order[i::13])  # the last card dealt onto a pile is its top
    assert s.down[0][-1] == order[39] and s.down[CENTRE][0] == order[12]
    assert all(len(p) == 4 for p in s.down) and s.up == ((),) * 13
    assert s.hand is None and not s.exchanged
    assert sorted(C.all_cards(s)) == list(range(4, 56))
    assert C.progress(s).home == 0 and C.progress(s).total == 52
    dealt = C.deal(7, SECRET)
    assert sorted(C.all_cards(dealt)) == list(range(4, 56)) and dealt.hand is None


# --- playing ----------------------------------------------------------------------------
def test_play_starts_with_the_top_of_the_centre() -> None:
    """"Play starts by turning up the top card of the centre pile." """
    s0 = C.deal_from(deal_order(CYCLE))
    assert C.legal_moves(s0) == [PLAY]
    s1 = C.apply(s0, PLAY)
    assert s1.hand == parse_card("AC")  # the centre's top card
    assert s1.down[CENTRE] == cards("AS AH AD") and s1.up == ((),) * 13
    assert C.progress(s1).home == 0  # the card in hand is not yet on its hour


def test_card_goes_under_its_hour_and_that_pile_is_turned_up() -> None:
    """"The turned-up card goes face up to the bottom of its rank's pile (A=1 ... J=11,
    Q=12, K=centre), and the next card turned up is the top face-down card of that pile." """
    down = tuple(four(RANKS[i]) for i in range(13))  # every card already on its own hour
    up: tuple[tuple[Card, ...], ...] = ((),) * 13
    for hand, pile in (("AS", 0), ("JH", 10), ("QD", 11), ("KC", CENTRE)):
        s = ClockState(down, up, parse_card(hand), False)
        after = C.apply(s, PLAY)
        assert after.up[pile] == (parse_card(hand),)
        assert after.hand == down[pile][-1] and after.down[pile] == down[pile][:-1]
    # Under the face-up cards already there, even when it came from its own pile.
    s = ClockState(down, up[:6] + (cards("7D"),) + up[7:], parse_card("7S"), False)
    after = C.apply(s, PLAY)
    assert after.up[6] == cards("7S 7D") and after.hand == parse_card("7C")


def test_only_choice_is_the_exchange() -> None:
    """"Each of these is one player move ("play the card in hand"); the player's only real
    choice is the exchange below." """
    s = C.deal_from(deal_order(KINGS_FIRST))
    for _ in range(4):
        assert C.legal_moves(s) == [PLAY]
        s = C.apply(s, PLAY)
    assert {m.kind for m in C.legal_moves(s)} == {Kind.EXCHANGE}


def test_won_deal_played_through_by_hand() -> None:
    """"Won when every card is face up." -- the CYCLE deal, traced by hand: the opening
    turns up A♣ (the centre's top), then each card goes home and turns up the next rank, so
    after 14 moves one card of each rank (the clubs) is face up and A♦ is in hand."""
    s = play(C.deal_from(deal_order(CYCLE)), *["p"] * 14)
    assert s.hand == parse_card("AD")
    assert s.up == tuple((parse_card(RANKS[i] + "C"),) for i in range(13))
    assert [len(p) for p in s.down] == [3] * 12 + [2]  # the centre gave A♣ and A♦
    assert C.progress(s).home == 13 and C.outcome(s) is Outcome.PLAYING
    s = C.apply(s, PLAY)  # A♦ goes under A♣; hour 1's next card, 2♦, turns up
    assert s.up[0] == cards("AD AC") and s.hand == parse_card("2D")
    s = play(s, *["p"] * 37)  # up to the fourth King, turned up last from hour 12
    assert s.hand == parse_card("KS") and not any(s.down)
    assert C.progress(s).home == 51 and C.outcome(s) is Outcome.PLAYING
    assert C.legal_moves(s) == [PLAY]
    s = C.apply(s, PLAY)
    assert s.hand is None and s.up[0] == cards("AS AH AD AC")
    assert s.up[CENTRE] == cards("KS KH KD KC")  # K♣ went first, so it is at the top
    assert C.is_won(s) and C.outcome(s) is Outcome.WON and C.progress(s).home == 52
    assert C.legal_moves(s) == []
    with pytest.raises(IllegalMove, match="the game is over: every card is face up"):
        C.apply(s, PLAY)
    final, applied = replay(C, C.deal_from(deal_order(CYCLE)), ["p"] * 53)
    assert applied == 53 and final == s


def test_win_by_placing_the_fourth_king_last() -> None:
    """"Won when every card is face up." (a state built by hand: only the fourth King left)"""
    up = tuple(four(RANKS[i]) for i in range(12)) + (cards("KH KD KC"),)
    s = ClockState(((),) * 13, up, parse_card("KS"), False)
    assert not C.is_won(s) and C.progress(s).home == 51
    assert C.legal_moves(s) == [PLAY] and not C.view(s)["exchange_allowed"]
    won = C.apply(s, PLAY)
    assert won.up[CENTRE] == cards("KS KH KD KC") and won.hand is None
    assert C.outcome(won) is Outcome.WON


# --- the exchange -----------------------------------------------------------------------
def test_fourth_king_must_be_exchanged() -> None:
    """"If the fourth King is turned up while face-down cards remain, the player may **once**
    exchange it for any face-down card in the layout, of the player's choosing: the King
    takes that card's place face down, and the chosen card becomes the card in hand." """
    s = blocked_state()
    assert s.down[CENTRE] == () and sum(map(len, s.down)) == 48
    with pytest.raises(
        IllegalMove,
        match=r"^the fourth K cannot be played while face-down cards remain: exchange it "
        r"\(x<hour>\.<n>\) or resign$",
    ):
        C.apply(s, PLAY)
    legal = C.legal_moves(s)
    assert legal == [Move(Kind.EXCHANGE, i, d) for i in range(12) for d in range(4)]
    assert C.outcome(s) is Outcome.PLAYING
    v = C.view(s)
    assert v["exchange_allowed"] and not v["exchange_used"] and v["hand"] == "KS"
    after = C.apply(s, C.parse_move("x3.2"))  # hour 3 holds 4♠ 4♥ 4♦ 4♣, 2nd from top: 4♦
    assert after.down[2] == cards("4S 4H KS 4C") and after.hand == parse_card("4D")
    assert after.exchanged and after.up == s.up
    assert Counter(C.all_cards(after)) == Counter(C.all_cards(s))
    assert C.view(after)["exchange_used"] and not C.view(after)["exchange_allowed"]
    assert C.legal_moves(after) == [PLAY]


def test_exchange_for_the_bottom_card_then_win() -> None:
    """"the King takes that card's place face down, and the chosen card becomes the card in
    hand." Exchanging for hour 12's bottom card (A♠) buries the King under the three other
    Aces: four rounds A..Q later it is the last card turned up, and the game is won."""
    s = C.apply(blocked_state(), C.parse_move("x12.4"))
    assert s.down[11] == cards("KS AH AD AC") and s.hand == parse_card("AS")
    s = play(s, *["p"] * 48)
    assert s.hand == parse_card("KS") and not any(s.down)
    assert s.up[0] == cards("AH AD AC AS")  # A♠ went first, so it is at the top
    s = C.apply(s, PLAY)
    assert C.outcome(s) is Outcome.WON and C.progress(s).home == 52


def test_fourth_king_again_loses() -> None:
    """"If the fourth King turns up again before every other card is face up, the game is
    lost." Exchanging for hour 12's top card (A♣) puts the King on top of hour 12, so it
    turns up again after one round A..Q."""
    s = C.apply(blocked_state(), C.parse_move("x12.1"))
    assert s.down[11] == cards("AS AH AD KS") and s.hand == parse_card("AC")
    s = play(s, *["p"] * 12)
    assert s.hand == parse_card("KS") and sum(map(len, s.down)) == 36
    assert C.legal_moves(s) == []
    assert C.outcome(s) is Outcome.STUCK
    with pytest.raises(IllegalMove, match="one exchange is used: the game is lost"):
        C.apply(s, PLAY)
    with pytest.raises(IllegalMove, match=r"^the one exchange has already been used$"):
        C.apply(s, C.parse_move("x1.1"))
    v = C.view(s)
    assert v["exchange_used"] and not v["exchange_allowed"]


def test_only_the_fourth_king_is_exchanged() -> None:
    """"If the fourth King is turned up while face-down cards remain, the player may **once**
    exchange it" -- not any other card, and not before the game starts."""
    s0 = C.deal_from(deal_order(KINGS_FIRST))
    with pytest.raises(IllegalMove, match=r"^there is no card in hand to exchange$"):
        C.apply(s0, Move(Kind.EXCHANGE, 0, 0))
    s1 = C.apply(s0, PLAY)  # K♣ in hand, the first King
    with pytest.raises(IllegalMove, match=r"only the fourth King may be exchanged.*K♣ is in"):
        C.apply(s1, C.parse_move("x1.1"))


def test_exchange_addresses_are_checked() -> None:
    """"exchange it for any face-down card in the layout" -- a card that is there."""
    s = blocked_state()
    s = ClockState(s.down[:1] + (s.down[1][:2],) + s.down[2:], s.up, s.hand, False)
    for move, reason in (
        (Move(Kind.EXCHANGE, CENTRE, 0), "^the centre \\(hour 13\\) has no face-down cards$"),
        (Move(Kind.EXCHANGE, 1, 2), "^hour 2 has only 2 face-down cards: choose 1-2$"),
        (Move(Kind.EXCHANGE, 13, 0), "^there is no hour 14"),
        (Move(Kind.EXCHANGE, 0, -1), "^hour 1 has only 4 face-down cards"),
    ):
        with pytest.raises(IllegalMove, match=reason):
            C.apply(s, move)


# --- why only the centre runs out -------------------------------------------------------
def random_playout(deal: int) -> list[ClockState]:
    rng = random.Random(deal)
    s = C.deal(deal, SECRET)
    states = [s]
    while moves := C.legal_moves(s):
        s = C.apply(s, rng.choice(moves))
        states.append(s)
    return states


def test_only_the_centre_runs_out() -> None:
    """"the next card turned up is the top face-down card of that pile" -- always possible
    except for the fourth King: an hour pile holds as many face-down cards as its rank has
    cards not yet face up, and the centre one fewer, so only the centre runs out, exactly
    when three Kings are face up (docs/games/clock.md)."""
    outcomes: Counter[Outcome] = Counter()
    for deal in range(60):
        states = random_playout(deal)
        for s in states[1:]:
            assert s.hand is not None or not any(s.down)
            not_up = Counter(rank_of(c) for c in C.all_cards(s)) - Counter(
                rank_of(c) for p in s.up for c in p
            )
            for i in range(12):
                assert len(s.down[i]) == not_up[i + 1]
            if s.hand is not None:
                assert len(s.down[CENTRE]) == not_up[KING] - 1
                if rank_of(s.hand) != KING or len(s.up[CENTRE]) < 3:
                    assert C.legal_moves(s) == [PLAY]
        outcomes[C.outcome(states[-1])] += 1
        assert C.outcome(states[-1]) is not Outcome.PLAYING
        assert len(states) <= 1 + 1 + 53  # opening, 52 placements, at most one exchange
    assert outcomes[Outcome.STUCK] > 0


# --- notation ---------------------------------------------------------------------------
def test_notation_round_trip() -> None:
    """"Each of these is one player move ("play the card in hand")" -- written 'p'; the
    exchange is 'x<hour>.<n>'."""
    assert C.parse_move("p") == PLAY and C.parse_move(" PLAY ") == PLAY
    assert C.format_move(PLAY) == "p"
    for i in range(13):
        for d in range(4):
            m = Move(Kind.EXCHANGE, i, d)
            assert C.parse_move(C.format_move(m)) == m
    assert C.format_move(Move(Kind.EXCHANGE, 6, 0)) == "x7.1"
    assert C.parse_move("xc.2") == C.parse_move("x13.2") == Move(Kind.EXCHANGE, CENTRE, 1)
    assert C.parse_move("X 7 . 1") == Move(Kind.EXCHANGE, 6, 0)
    for s in (blocked_state(), C.deal(3, SECRET)):
        for m in C.legal_moves(s):
            assert C.parse_move(C.format_move(m)) == m


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "use 'p'"),
        ("pp", "use 'p'"),
        ("x7", "e.g. 'x7.1'"),
        ("7.1", "e.g. 'x7.1'"),
        ("xd.1", "e.g. 'x7.1'"),
        ("x0.1", "there is no hour 0"),
        ("x14.1", "there is no hour 14"),
        ("x7.0", "counted from the top, 1-4"),
        ("x7.5", "counted from the top, 1-4"),
    ],
)
def test_bad_notation(text: str, reason: str) -> None:
    """Notation errors say what a move looks like."""
    with pytest.raises(NotationError, match=reason):
        C.parse_move(text)
    with pytest.raises(NotationError, match="Clock has no home moves"):
        C.format_move(Move(Kind.HOME, 0))


def test_illegal_moves_leave_the_state_unchanged() -> None:
    """"apply the moves in order and stop at the first illegal one" -- an illegal move is
    refused with a reason and the state is the same afterwards."""
    s = blocked_state()
    before = C.snapshot(s)
    for move, reason in (
        (PLAY, "the fourth K cannot be played"),
        (Move(Kind.PLAY, 1, 0), "'p' names no pile"),
        (Move(Kind.HOME, 0), "^Clock has no home moves$"),
        (Move(Kind.REDEAL), "^Clock has no redeal moves$"),
        (Move(Kind.EXCHANGE, 2, 9), "hour 3 has only 4"),
    ):
        with pytest.raises(IllegalMove, match=reason):
            C.apply(s, move)
        assert C.snapshot(s) == before


# --- what the player sees ---------------------------------------------------------------
def test_hidden_cards_never_reach_the_view() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." -- over 200 random playouts, every card code in the view is a face-up card or the
    card in hand, and no face-down card's code appears (one deck: every card is unique)."""
    for deal in range(200):
        for s in random_playout(deal):
            v = C.view(s)
            text = json.dumps(v)
            shown = [c for p in v["piles"] for c in p["face_up"]]
            if v["hand"] is not None:
                shown.append(v["hand"])
            visible = {code(c) for p in s.up for c in p} | (
                set() if s.hand is None else {code(s.hand)}
            )
            assert sorted(shown) == sorted(visible)
            for p in s.down:
                for c in p:
                    assert f'"{code(c)}"' not in text
            assert [p["face_down"] for p in v["piles"]] == [len(p) for p in s.down]


def test_view_and_snapshot_contents() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." -- the view shows counts, the snapshot (server-only) shows the cards."""
    s = C.deal(5, SECRET)
    v = C.view(s)
    assert v == {
        "game": "clock",
        "piles": [{"hour": h, "face_down": 4, "face_up": []} for h in range(1, 14)],
        "hand": None,
        "exchange_used": False,
        "exchange_allowed": False,
    }
    snap = C.snapshot(s)
    assert [p["face_down_cards"] for p in snap["piles"]] == [[code(c) for c in p] for p in s.down]
    json.dumps(snap)

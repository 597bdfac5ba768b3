"""Patriarchs: each test quotes the docs/games/rules.md line it checks. The deck and the foundation
moves shared with Parallels (two_deck.py) are tested in test_parallels.py too; here they are
checked through Patriarchs' own sources (tableau slots and the waste)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from solitaire_race.engine import IllegalMove, Kind, Move, NotationError, Outcome, get_game
from solitaire_race.engine.cards import ACE, KING, card, code, codes, parse_card
from solitaire_race.engine.patriarchs import WASTE, PatriarchsState
from solitaire_race.engine.piles import DOWN, UP, TwoWayFoundations
from solitaire_race.engine.two_deck import two_deck

G = get_game("patriarchs")
ALL_CODES = {code(card(r, s)) for r in range(1, 14) for s in range(4)}


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def found(**suits: tuple[int, int]) -> tuple[int, ...]:
    """Foundation tops, e.g. ``found(S=(6, 7))``: spades Ace foundation at 6, King at 7."""
    tops = list(TwoWayFoundations.START)
    for letter, (up, down) in suits.items():
        s = "SHDC".index(letter)
        tops[2 * s], tops[2 * s + 1] = up, down
    return tuple(tops)


def state(
    tableau: str,
    stock: str = "",
    waste: str = "",
    tops: tuple[int, ...] = TwoWayFoundations.START,
    redealt: bool = False,
) -> PatriarchsState:
    """Tableau slots 1-9 ('.' empty; missing ones empty), stock next card first, waste
    bottom to top."""
    slots = [0 if t == "." else parse_card(t) for t in tableau.split()]
    return PatriarchsState(tuple(slots + [0] * (9 - len(slots))), cards(stock), cards(waste), tops, redealt)


def view_codes(view: Any) -> Counter[str]:
    if isinstance(view, dict):
        return sum((view_codes(v) for v in view.values()), Counter())
    if isinstance(view, list):
        return sum((view_codes(v) for v in view), Counter())
    return Counter([view]) if view in ALL_CODES else Counter()


FULL = "9H 9D 9C 8H 8D 8C 7H 7D 7C"  # nine cards that fit nowhere at the start


def test_deal() -> None:
    """"Two decks. One Ace and one King of each suit start the foundations as in Parallels."
    and "Nine cards dealt face up as a 3 by 3 tableau; the rest is the stock (hidden)." """
    deck = G.deck()
    assert deck == two_deck() and len(deck) == 96
    order = deck[::-1]
    s = G.deal_from(order)
    assert s.tableau == tuple(order[:9]) and s.stock == tuple(order[9:]) and s.waste == ()
    assert s.foundations == (ACE, KING) * 4 and not s.redealt
    assert G.progress(s).home == 8 and G.progress(s).total == 104
    assert len(G.all_cards(s)) == 104


def test_tableau_cards_go_only_to_foundations() -> None:
    """"Tableau cards go only to foundations." """
    s = state("2S QS 9H", stock="5C")
    assert [G.format_move(m) for m in G.legal_moves(s)] == ["1>A", "2>K", "s"]
    with pytest.raises(NotationError):
        G.parse_move("1>2")
    with pytest.raises(IllegalMove, match="Patriarchs has no build moves"):
        G.apply(s, Move(Kind.BUILD, 0, 1))
    with pytest.raises(IllegalMove, match=r"^9♥ cannot go to the ♥ Ace foundation: it needs 2♥$"):
        G.apply(s, G.parse_move("3>A"))


def test_stock_turns_onto_the_waste_whose_top_may_go_home() -> None:
    """"Turning the stock puts its top card face up on the waste; the top waste card may go
    to a foundation." """
    s = state(FULL, stock="2S 2H 5C")
    s = G.apply(G.apply(s, G.parse_move("s")), G.parse_move("s"))
    assert s.waste == cards("2S 2H") and s.stock == cards("5C")
    # Only the top waste card (2♥) is playable; 2♠ under it is not.
    assert [G.format_move(m) for m in G.legal_moves(s)] == ["w>A", "s"]
    s = G.apply(s, G.parse_move("w>A"))
    assert s.waste == cards("2S") and s.foundations == found(H=(2, KING))
    assert G.format_move(G.legal_moves(s)[0]) == "w>A"


def test_vacancy_filled_from_the_waste_first() -> None:
    """"A tableau vacancy is filled at once, automatically, with the top waste card, or from
    the stock when the waste is empty." """
    s = state("2S " + FULL[3:], stock="4C 5C", waste="3D 6D")
    after = G.apply(s, G.parse_move("1>A"))  # one move: home and refill
    assert after.tableau[0] == parse_card("6D")
    assert after.waste == cards("3D") and after.stock == cards("4C 5C")
    assert after.foundations == found(S=(2, KING))


def test_vacancy_filled_from_the_stock_when_the_waste_is_empty() -> None:
    """"A tableau vacancy is filled at once, automatically, with the top waste card, or from
    the stock when the waste is empty." """
    s = state(FULL[:-2] + "QC", stock="4C 5C")
    after = G.apply(s, G.parse_move("9>K"))
    assert after.tableau[8] == parse_card("4C") and after.stock == cards("5C")
    assert G.view(after)["tableau"][8] == "4C"
    # With both empty the slot stays empty.
    bare = G.apply(state(FULL[:-2] + "QC"), G.parse_move("9>K"))
    assert bare.tableau[8] == 0 and G.view(bare)["tableau"][8] is None
    with pytest.raises(IllegalMove, match=r"^slot 9 is empty$"):
        G.apply(bare, G.parse_move("9>A"))


def test_redeal_only_when_the_stock_is_empty() -> None:
    """"One redeal: when the stock is empty, the waste is turned over (no shuffle) to form
    the stock." """
    s = state(FULL, stock="2C", waste="4S 5S 6S")
    assert Move(Kind.REDEAL) not in G.legal_moves(s)
    with pytest.raises(IllegalMove, match=r"^a redeal is only allowed once the stock is empty \(1 card left\)$"):
        G.apply(s, G.parse_move("r"))
    s = G.apply(s, G.parse_move("s"))
    assert G.legal_moves(s)[-1] == Move(Kind.REDEAL) and G.view(s)["redeal_allowed"]
    with pytest.raises(IllegalMove, match=r"^the stock is empty: redeal with 'r'"):
        G.apply(s, G.parse_move("s"))
    redealt = G.apply(s, G.parse_move("r"))
    # Turned over: the first card put on the waste is the next card of the new stock.
    assert redealt.stock == cards("4S 5S 6S 2C") and redealt.waste == () and redealt.redealt
    assert G.apply(redealt, G.parse_move("s")).waste == cards("4S")
    with pytest.raises(IllegalMove, match=r"^the waste is empty: there is nothing to redeal$"):
        G.apply(state(FULL), G.parse_move("r"))


def test_no_second_redeal() -> None:
    """"One redeal" """
    s = state(FULL, waste="4S 5S", redealt=True)
    assert Move(Kind.REDEAL) not in G.legal_moves(s)
    with pytest.raises(IllegalMove, match=r"^the one redeal is already used$"):
        G.apply(s, G.parse_move("r"))
    with pytest.raises(IllegalMove, match=r"^the stock is empty and the one redeal is used$"):
        G.apply(s, G.parse_move("s"))
    v = G.view(s)
    assert v["redeal_used"] and not v["redeal_allowed"]
    assert G.outcome(s) is Outcome.STUCK


def test_shifts_when_foundations_meet() -> None:
    """"Foundation top cards may move between the two foundations of one suit when they
    meet; the starting Ace and King never move." """
    s = state(FULL, tops=found(D=(8, 9)))
    down = G.apply(s, G.parse_move("D:A>K"))
    assert down.foundations == found(D=(7, 8))
    assert G.apply(s, G.parse_move("D:K>A")).foundations == found(D=(9, 10))
    with pytest.raises(IllegalMove, match="the ♦ foundations do not meet"):
        G.apply(state(FULL, tops=found(D=(8, 10))), G.parse_move("D:A>K"))
    start = state(FULL, tops=found(C=(ACE, 2), H=(12, KING)))
    assert [G.format_move(m) for m in G.legal_moves(start)] == ["H:A>K", "C:K>A"]
    with pytest.raises(IllegalMove, match=r"^the starting A♣ never moves$"):
        G.apply(start, G.parse_move("C:A>K"))
    with pytest.raises(IllegalMove, match=r"^the starting K♥ never moves$"):
        G.apply(start, G.parse_move("H:K>A"))


def test_shuttle_and_stuck() -> None:
    """"A game is lost (stuck) when no move is left that could ever bring another card to a
    foundation: no legal move at all, or only moves that shuttle cards without opening
    anything (a card moved back and forth between the two foundations of one suit in
    Parallels and Patriarchs ...)" """
    tops = found(S=(6, 7))
    # No spade in the tableau and none on the waste top (5♠ is under it): shuttles only.
    s = state(FULL, waste="5S 9S 3C", tops=tops, redealt=True)
    assert [m.kind for m in G.legal_moves(s)] == [Kind.SHIFT, Kind.SHIFT]
    assert all(G.is_shuttle(s, m) for m in G.legal_moves(s))
    assert G.outcome(s) is Outcome.STUCK
    # A spade on the waste top makes the shifts matter: 3♠ fits after three shifts.
    s = state(FULL, waste="5S 9S 3S", tops=tops, redealt=True)
    assert not G.is_shuttle(s, Move(Kind.SHIFT, 0, UP)) and G.outcome(s) is Outcome.PLAYING
    # So does a spade in the tableau.
    s = state("3S " + FULL[3:], tops=tops, redealt=True)
    assert G.outcome(s) is Outcome.PLAYING
    # The unused redeal keeps a game alive.
    assert G.outcome(state(FULL, waste="5S", tops=tops)) is Outcome.PLAYING
    assert G.outcome(state(FULL)) is Outcome.STUCK  # nothing at all to do


def test_won() -> None:
    """"A game is won when every card is on the foundations" """
    s = state("", waste="AD", tops=found(S=(13, 1), H=(13, 1), D=(13, 2), C=(13, 1)), redealt=True)
    assert G.outcome(s) is Outcome.PLAYING
    won = G.apply(s, G.parse_move("w>K"))
    assert G.outcome(won) is Outcome.WON and G.progress(won).home == 104


def test_notation() -> None:
    for text, move in [
        ("5>A", Move(Kind.HOME, 4, UP)),
        (" 9 > k", Move(Kind.HOME, 8, DOWN)),
        ("w>K", Move(Kind.HOME, WASTE, DOWN)),
        ("W>a", Move(Kind.HOME, WASTE, UP)),
        ("S:K>A", Move(Kind.SHIFT, 0, DOWN)),
        ("s", Move(Kind.STOCK)),
        ("r", Move(Kind.REDEAL)),
    ]:
        assert G.parse_move(text) == move
        assert G.parse_move(G.format_move(move)) == move
    assert G.format_move(Move(Kind.HOME, WASTE, DOWN)) == "w>K"
    assert G.format_move(Move(Kind.HOME, 4, UP)) == "5>A"
    for bad in ["0>A", "10>A", "w>F", "5", "x>A", "S:A>A", "a1>A", ""]:
        with pytest.raises(NotationError):
            G.parse_move(bad)
    with pytest.raises(NotationError, match="use a slot 1-9 \\(row by row\\) or w \\(the waste\\)"):
        G.parse_move("0>A")


def test_illegal_moves_leave_the_state_unchanged() -> None:
    s = state("2S . 9H", stock="3S")
    before = PatriarchsState(s.tableau, s.stock, s.waste, s.foundations, s.redealt)
    for text, message in [
        ("2>A", "^slot 2 is empty$"),
        ("w>A", "^the waste is empty$"),
        ("1>K", "^2♠ cannot go to the ♠ King foundation: it needs Q♠$"),
        ("r", "a redeal is only allowed once the stock is empty"),
        ("S:A>K", "the ♠ foundations do not meet"),
    ]:
        with pytest.raises(IllegalMove, match=message):
            G.apply(s, G.parse_move(text))
        assert s == before
    with pytest.raises(IllegalMove, match="there is no slot 12"):
        G.apply(s, Move(Kind.HOME, 11, UP))
    with pytest.raises(IllegalMove, match="a redeal move has no source or destination"):
        G.apply(state(FULL, waste="4S"), Move(Kind.REDEAL, 1, 0))


def test_view_shows_the_waste_top_only_and_no_stock_order() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." """
    s = state(FULL, stock="2S 3S", waste="4S 5S")
    v = G.view(s)
    assert v["tableau"] == FULL.split() and v["waste_top"] == "5S" and v["waste_count"] == 2
    assert v["stock_count"] == 2 and v["foundations"] == TwoWayFoundations.view(s.foundations)
    assert not v["redeal_used"] and not v["redeal_allowed"]
    assert view_codes(v) == Counter(FULL.split() + ["5S"] + ["AS", "KS", "AH", "KH", "AD", "KD", "AC", "KC"])
    snap = G.snapshot(s)
    assert snap["stock"] == ["2S", "3S"] and snap["waste"] == ["4S", "5S"]


def test_no_stock_card_in_the_view_over_random_playouts() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." With two decks a stock card's twin may be visible, so the view's card codes must
    be, as a multiset, exactly the face-up cards shown: tableau, waste top and foundation
    tops. Along the way outcome() must agree with the shuttle rule: "only moves that
    shuttle cards without opening anything" means stuck, and a shift that is not a shuttle
    keeps the game alive."""
    for deal in range(25):
        rng = random.Random(deal)
        s = G.deal(deal, b"view test")
        for _ in range(300):
            tops = s.foundations
            shown = codes(c for c in s.tableau if c) + codes(s.waste[-1:])
            shown += [code(card(tops[2 * x + side], x)) for x in range(4) for side in (UP, DOWN)]
            assert view_codes(G.view(s)) == Counter(shown)
            moves = G.legal_moves(s)
            # The generic search agrees with the shuttle rule: any move that is not a
            # shuttle (even a lone shift) can still bring a card home.
            alive = any(not G.is_shuttle(s, m) for m in moves)
            if G.is_won(s):
                assert G.outcome(s) is Outcome.WON
                break
            assert G.outcome(s) is (Outcome.PLAYING if alive else Outcome.STUCK)
            if not alive:
                break
            home = [m for m in moves if m.kind is Kind.HOME]  # plays deeper, sometimes wins
            s = G.apply(s, rng.choice(home or moves))

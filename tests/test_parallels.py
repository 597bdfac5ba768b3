"""Parallels (and the two-deck rules it shares with Patriarchs): each test quotes the
docs/games/rules.md line it checks."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from solitaire_race.engine import IllegalMove, Kind, Move, NotationError, Outcome, get_game
from solitaire_race.engine.cards import ACE, KING, card, code, codes, parse_card
from solitaire_race.engine.parallels import ParallelsState
from solitaire_race.engine.piles import DOWN, UP, TwoWayFoundations
from solitaire_race.engine.two_deck import two_deck

G = get_game("parallels")
ALL_CODES = {code(card(r, s)) for r in range(1, 14) for s in range(4)}


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(t) for t in text.split())


def rows(*texts: str) -> tuple[int, ...]:
    """Rows of up to ten cards, '.' for an empty slot; short rows are padded with empties."""
    out: list[int] = []
    for text in texts:
        row = [0 if t == "." else parse_card(t) for t in text.split()]
        out += row + [0] * (10 - len(row))
    return tuple(out)


def found(**suits: tuple[int, int]) -> tuple[int, ...]:
    """Foundation tops, e.g. ``found(S=(6, 7))``: spades Ace foundation at 6, King at 7."""
    tops = list(TwoWayFoundations.START)
    for letter, (up, down) in suits.items():
        s = "SHDC".index(letter)
        tops[2 * s], tops[2 * s + 1] = up, down
    return tuple(tops)


def state(*texts: str, stock: str = "", tops: tuple[int, ...] = TwoWayFoundations.START) -> ParallelsState:
    return ParallelsState(rows(*texts), cards(stock), tops)


def view_codes(view: Any) -> Counter[str]:
    """Every card code anywhere in a view."""
    if isinstance(view, dict):
        return sum((view_codes(v) for v in view.values()), Counter())
    if isinstance(view, list):
        return sum((view_codes(v) for v in view), Counter())
    return Counter([view]) if view in ALL_CODES else Counter()


def foundation_tops(tops: tuple[int, ...]) -> list[str]:
    return [code(card(tops[2 * s + side], s)) for s in range(4) for side in (UP, DOWN)]


def test_deck_and_deal() -> None:
    """"Two decks (104 cards). One Ace and one King of each suit start the foundations" and
    "The rest is shuffled into the stock (face down, order hidden). A first row of 10 cards
    is dealt face up." """
    deck = G.deck()
    assert deck == two_deck() and len(deck) == 96
    counts = Counter(deck)
    assert all(counts[card(r, s)] == (1 if r in (ACE, KING) else 2) for r in range(1, 14) for s in range(4))
    order = deck[::-1]
    s = G.deal_from(order)
    assert s.slots == tuple(order[:10]) and s.stock == tuple(order[10:])
    assert s.foundations == (ACE, KING) * 4
    assert G.progress(s).home == 8 and G.progress(s).total == 104
    assert Counter(G.all_cards(s)) == Counter(deck) + Counter(cards("AS KS AH KH AD KD AC KC"))


def test_free_card_rule() -> None:
    """"A tableau card is free when the slot directly above or directly below it is empty;
    above the first row and below the lowest dealt row count as empty." """
    s = state("9H 2S", "9D 2H", "9C 2D")
    # b2 (2♥) has cards above (b1) and below (b3): not free.
    assert Move(Kind.HOME, 11, UP) not in G.legal_moves(s)
    with pytest.raises(IllegalMove, match=r"^2♥ at b2 is not free: b1 above and b3 below both hold cards$"):
        G.apply(s, G.parse_move("b2>A"))
    # The first row and the lowest row are free: 2♠ (b1) and 2♦ (b3) may go home.
    assert {G.format_move(m) for m in G.legal_moves(s) if m.kind is Kind.HOME} == {"b1>A", "b3>A"}
    assert set(G.view(s)["free"]) == {"a1", "b1", "a3", "b3"}
    # When a neighbour leaves, b2 becomes free: from above ...
    above = G.apply(s, G.parse_move("b1>A"))
    assert G.apply(above, G.parse_move("b2>A")).slots[11] == 0
    # ... or from below.
    below = G.apply(s, G.parse_move("b3>A"))
    assert Move(Kind.HOME, 11, UP) in G.legal_moves(below)
    # Only the slots of its own column count: a2 stays blocked by a1 and a3.
    assert "a2" not in G.view(below)["free"]


def test_free_cards_go_to_foundations_only() -> None:
    """"Free cards go to foundations only (no building on the tableau)." """
    s = state("3S 4S 2S", stock="5S")
    assert {m.kind for m in G.legal_moves(s)} <= {Kind.HOME, Kind.SHIFT, Kind.STOCK}
    with pytest.raises(NotationError, match="not a Parallels move"):
        G.parse_move("b1>a2")
    with pytest.raises(IllegalMove, match="Parallels has no build moves"):
        G.apply(s, Move(Kind.BUILD, 0, 1))


def test_aces_build_up_kings_build_down() -> None:
    """"Aces build up by suit to King, Kings build down by suit to Ace (8 foundations)." """
    s = state("2S QS 3S QH")
    after = G.apply(G.apply(s, G.parse_move("a1>A")), G.parse_move("b1>K"))
    assert after.foundations == found(S=(2, 12))
    assert G.progress(after).home == 10
    with pytest.raises(IllegalMove, match=r"^3♠ cannot go to the ♠ Ace foundation: it needs 2♠$"):
        G.apply(s, G.parse_move("c1>A"))
    with pytest.raises(IllegalMove, match=r"^2♠ cannot go to the ♠ King foundation: it needs Q♠$"):
        G.apply(s, G.parse_move("a1>K"))
    done = state("3S", tops=found(S=(KING, 2)))
    with pytest.raises(IllegalMove, match="the ♠ Ace foundation is complete"):
        G.apply(done, G.parse_move("a1>A"))


def test_stock_fills_gaps_first_top_row_first_left_to_right() -> None:
    """"Stock action (the player chooses when): if any slot in the dealt rows is empty, fill
    all of them from the stock, top row first, left to right, until the stock runs out" """
    s = state("9S 9S 9S . 9S 9S 9S 9S 9S .", ". 8S 8S 8S 8S 8S 8S 8S 8S 8S", stock="4H 5H 6H 7H")
    after = G.apply(s, G.parse_move("s"))
    assert after.slots[3] == parse_card("4H") and after.slots[9] == parse_card("5H")
    assert after.slots[10] == parse_card("6H")
    assert after.stock == cards("7H") and len(after.slots) == 20  # no new row
    # Until the stock runs out: the later gaps stay empty.
    short = G.apply(state(". 9S", ". 8S", ".", stock="4H 5H"), G.parse_move("s"))
    assert short.slots[0] == parse_card("4H") and short.slots[2] == parse_card("5H")
    assert short.slots[10] == 0 and short.stock == ()


def test_stock_deals_a_new_row_when_no_gap() -> None:
    """"otherwise deal a new row of ten below the lowest row (fewer if the stock runs
    short)" """
    full = "9S " * 10
    stock = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"
    after = G.apply(state(full, stock=stock), G.parse_move("s"))
    assert after.slots[10:] == cards(stock)[:10] and after.stock == cards("QH")
    # Each column keeps its slots: row 1 is unchanged.
    assert after.slots[:10] == rows(full)
    short = G.apply(after, G.parse_move("s"))
    # One card left: a third row holding it in column a, and nine empty slots of that row.
    assert len(short.slots) == 30 and short.slots[20:] == cards("QH") + (0,) * 9
    assert short.stock == () and G.view(short)["rows"][2] == ["QH"] + [None] * 9
    # The short row is the lowest row: its card is free.
    assert "a3" in G.view(short)["free"]


def test_stock_empty() -> None:
    """"No redeal: the game ends when the stock is empty and nothing can move." """
    s = state("9S 9H")
    assert Move(Kind.STOCK) not in G.legal_moves(s)
    with pytest.raises(IllegalMove, match=r"^the stock is empty \(there is no redeal in Parallels\)$"):
        G.apply(s, G.parse_move("s"))
    with pytest.raises(NotationError):
        G.parse_move("r")
    assert G.outcome(s) is Outcome.STUCK


def test_shift_needs_the_foundations_to_meet() -> None:
    """"The top card of a foundation may move to the other foundation of its suit when it
    fits there" """
    s = state("9H", tops=found(S=(6, 7)))
    moves = G.legal_moves(s)
    assert Move(Kind.SHIFT, 0, UP) in moves and Move(Kind.SHIFT, 0, DOWN) in moves
    down = G.apply(s, G.parse_move("S:A>K"))  # 6♠ onto the King foundation's 7♠
    assert down.foundations == found(S=(5, 6))
    up = G.apply(s, G.parse_move("S:K>A"))  # 7♠ onto the Ace foundation's 6♠
    assert up.foundations == found(S=(7, 8))
    assert G.progress(down).home == G.progress(s).home == G.progress(up).home
    apart = state("9H", tops=found(S=(6, 9)))
    assert not [m for m in G.legal_moves(apart) if m.kind is Kind.SHIFT]
    with pytest.raises(
        IllegalMove, match=r"^the ♠ foundations do not meet \(Ace foundation at 6♠, King foundation at 9♠\)$"
    ):
        G.apply(apart, G.parse_move("S:A>K"))


def test_starting_ace_and_king_never_move() -> None:
    """"the starting Ace and King never move." """
    low = state("9H", tops=found(H=(ACE, 2)))
    assert Move(Kind.SHIFT, 1, UP) not in G.legal_moves(low)
    assert Move(Kind.SHIFT, 1, DOWN) in G.legal_moves(low)
    with pytest.raises(IllegalMove, match=r"^the starting A♥ never moves$"):
        G.apply(low, G.parse_move("H:A>K"))
    high = state("9H", tops=found(H=(12, KING)))
    assert Move(Kind.SHIFT, 1, DOWN) not in G.legal_moves(high)
    with pytest.raises(IllegalMove, match=r"^the starting K♥ never moves$"):
        G.apply(high, G.parse_move("H:K>A"))


def test_shuttling_shifts_do_not_keep_a_game_alive() -> None:
    """"A game is lost (stuck) when no move is left that could ever bring another card to a
    foundation: no legal move at all, or only moves that shuttle cards without opening
    anything (a card moved back and forth between the two foundations of one suit in
    Parallels and Patriarchs ...)" """
    tops = found(S=(6, 7))
    # 5♠ is buried (b2): shifting spades cannot open anything, so the game is lost.
    buried = state("9H 9D", "9C 5S", "8H 8D", tops=tops)
    assert [m.kind for m in G.legal_moves(buried)] == [Kind.SHIFT, Kind.SHIFT]
    assert all(G.is_shuttle(buried, m) for m in G.legal_moves(buried))
    assert G.outcome(buried) is Outcome.STUCK
    # A free 3♠ does not fit now, but after shifts it does: the game goes on.
    free = state("9H 3S", "9C 5S", "8H 8D", tops=tops)
    assert not G.is_shuttle(free, Move(Kind.SHIFT, 0, UP))
    assert G.outcome(free) is Outcome.PLAYING
    s = G.apply(G.apply(G.apply(free, G.parse_move("S:A>K")), G.parse_move("S:A>K")), G.parse_move("S:A>K"))
    assert s.foundations == found(S=(3, 4))
    assert G.apply(s, G.parse_move("b1>K")).foundations == found(S=(3, 3))
    # With cards left in the stock, the stock action keeps the game alive.
    assert G.outcome(state("9H", "9C 5S", "8H", stock="7D", tops=tops)) is Outcome.PLAYING


def test_won() -> None:
    """"A game is won when every card is on the foundations" """
    s = state(".", "KS", tops=found(S=(12, 1), H=(13, 1), D=(13, 1), C=(13, 1)))
    assert G.outcome(s) is Outcome.PLAYING
    won = G.apply(s, G.parse_move("a2>A"))
    assert G.outcome(won) is Outcome.WON and G.progress(won).home == 104


def test_notation() -> None:
    for text, move in [
        ("c2>A", Move(Kind.HOME, 12, UP)),
        (" C2 > k ", Move(Kind.HOME, 12, DOWN)),
        ("j10>K", Move(Kind.HOME, 99, DOWN)),
        ("a1>a", Move(Kind.HOME, 0, UP)),
        ("S:A>K", Move(Kind.SHIFT, 0, UP)),
        ("h:k>a", Move(Kind.SHIFT, 1, DOWN)),
        ("C:K>A", Move(Kind.SHIFT, 3, DOWN)),
        ("s", Move(Kind.STOCK)),
    ]:
        assert G.parse_move(text) == move
        assert G.parse_move(G.format_move(move)) == move
    assert G.format_move(Move(Kind.HOME, 12, UP)) == "c2>A"
    assert G.format_move(Move(Kind.SHIFT, 2, DOWN)) == "D:K>A"
    for bad in ["k1>A", "a0>A", "c2>Q", "c2>f", "c2", "S:A>A", "X:A>K", "r", "", "c2>A>K"]:
        with pytest.raises(NotationError):
            G.parse_move(bad)
    with pytest.raises(NotationError, match=r"use e\.g\. 'c2>A'"):
        G.parse_move("hello")
    with pytest.raises(NotationError, match="a shift goes from one foundation of a suit to the other"):
        G.parse_move("S:K>K")


def test_illegal_moves_leave_the_state_unchanged() -> None:
    s = state("2S . 9H", "9D")
    before = ParallelsState(s.slots, s.stock, s.foundations)
    for text, message in [
        ("b1>A", "^slot b1 is empty$"),
        ("a3>A", "^there is no slot a3: the dealt rows are 1-2, columns a-j$"),
        ("s", "the stock is empty"),
        ("a1>K", "2♠ cannot go to the ♠ King foundation: it needs Q♠"),
        ("S:K>A", "the ♠ foundations do not meet"),
    ]:
        with pytest.raises(IllegalMove, match=message):
            G.apply(s, G.parse_move(text))
        assert s == before
    with pytest.raises(IllegalMove, match="a stock move has no source or destination"):
        G.apply(state("9S", stock="2H"), Move(Kind.STOCK, 3, 0))


def test_view_shows_rows_free_cards_foundations_and_stock_count_only() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." """
    s = state("2S . 9H", "9D", stock="3S 4S 5S")
    v = G.view(s)
    assert v["rows"] == [["2S", None, "9H"] + [None] * 7, ["9D"] + [None] * 9]
    assert v["free"] == ["a1", "c1", "a2"]  # a1: above the first row counts as empty
    assert v["stock_count"] == 3 and v["foundations"] == TwoWayFoundations.view(s.foundations)
    assert "3S" not in str(v) and "4S" not in str(v) and "5S" not in str(v)
    assert G.snapshot(s)["stock"] == ["3S", "4S", "5S"]


def test_no_stock_card_in_the_view_over_random_playouts() -> None:
    """"Hidden cards (face down, stock order) never leave the server until they are turned
    up." With two decks a stock card's twin may be visible, so the view's card codes must
    be, as a multiset, exactly the face-up cards shown: tableau and foundation tops.
    Along the way outcome() must agree with the shuttle rule: "only moves that shuttle
    cards without opening anything" means stuck, and a shift that is not a shuttle keeps
    the game alive."""
    for deal in range(25):
        rng = random.Random(deal)
        s = G.deal(deal, b"view test")
        for _ in range(300):
            shown = codes(c for c in s.slots if c) + foundation_tops(s.foundations)
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

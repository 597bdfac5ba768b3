"""The terminal client's drawing (``tui.render``) and typed short forms (``tui.moves``), as
text, from the views of real deals."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solitaire_race.client.terminal_text import UNSAFE_CATEGORIES, safe_message, safe_text
from solitaire_race.engine import all_games, get_game
from solitaire_race.engine.cards import parse_card
from solitaire_race.tui.moves import expand
from solitaire_race.tui.render import (
    PLAIN,
    Screen,
    Style,
    card_label,
    help_lines,
    render_screen,
    render_view,
    visible_len,
)

from .conftest import TEST_SECRET
from .support import random_playout

SECRET = TEST_SECRET.encode()
LABEL = re.compile(r"(10|[A2-9JQK])([♠♥♦♣])")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def view_after(game_id: str, deal: int, moves: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    game = get_game(game_id)
    state = game.deal(deal, SECRET)
    for move in moves:
        state = game.apply(state, game.parse_move(move))
    return game.view(state)


def random_views(game_id: str, deals: int = 3, steps: int = 120) -> list[dict[str, Any]]:
    """Views along random games (every position, so the layouts change a lot)."""
    game = get_game(game_id)
    return [game.view(state) for state in random_playout(game_id, SECRET, deals, steps, seed=7)]


def shown_cards(view: dict[str, Any]) -> Counter[str]:
    """The card codes a view shows, with repeats (two decks)."""
    found: Counter[str] = Counter()

    def walk(value: Any) -> None:
        if isinstance(value, str) and re.fullmatch(r"[A2-9TJQK][SHDC]", value):
            found[value] += 1
        elif isinstance(value, list):
            for v in value:
                walk(v)
        elif isinstance(value, dict):
            for k, v in value.items():
                if k not in ("game", "suit", "side", "free"):
                    walk(v)

    walk(view)
    return found


def drawn_cards(lines: list[str]) -> Counter[str]:
    text = "\n".join(lines)
    return Counter(f"{'T' if r == '10' else r}{'SHDC'['♠♥♦♣'.index(s)]}" for r, s in LABEL.findall(text))


# --- every game ---------------------------------------------------------------------------
@pytest.mark.parametrize("game_id", sorted(all_games()))
def test_every_card_of_the_view_is_drawn_and_nothing_else(game_id: str) -> None:
    """The drawing shows exactly the cards the view shows (so never a hidden one), with
    suit symbols, in every position of a few random games."""
    for view in random_views(game_id):
        lines = render_view(view, PLAIN)
        assert drawn_cards(lines) == shown_cards(view), "\n".join(lines)
        assert all(line == line.rstrip() for line in lines)
        assert max(visible_len(line) for line in lines) <= 80


@pytest.mark.parametrize("game_id", sorted(all_games()))
def test_colour_red_suits_red_and_plain_without_escapes(game_id: str) -> None:
    view = view_after(game_id, 1, ["p", "p", "p"] if game_id == "clock" else [])
    coloured = "\n".join(render_view(view, Style(color=True)))
    plain = "\n".join(render_view(view, PLAIN))
    assert "\x1b[" not in plain
    assert ANSI.sub("", coloured) == plain  # the same layout, only coloured
    red_cards = re.findall(r"\x1b\[31m\s*(?:10|[A2-9JQK])([♠♥♦♣])\x1b\[0m", coloured)
    assert red_cards and set(red_cards) <= {"♥", "♦"}
    assert len(red_cards) == sum(suit in "♥♦" for _, suit in LABEL.findall(plain))


def test_tableau_games_label_their_piles() -> None:
    for game_id, piles in (("perseverance", 12), ("perseverance-a", 12), ("cruel", 12), ("persian-patience", 8)):
        lines = render_view(view_after(game_id, 2), PLAIN)
        labels = [int(m.group(1)) for line in lines if (m := re.match(r"^\s*(\d+) │", line))]
        assert labels == list(range(1, piles + 1)), game_id
        assert any(line.startswith("Foundations (f)") for line in lines)


def test_empty_pile_and_redeal_state_are_shown() -> None:
    view = view_after("cruel", 1, ["1>f"])
    view["piles"][4] = []
    lines = render_view(view, PLAIN)
    assert "  5 │   · empty" in lines
    assert "Redeals  unlimited, 0 used · r redeals now" in lines
    assert "Redeals  2 of 2 left · r redeals now" in render_view(view_after("perseverance", 1), PLAIN)
    assert "Redeals  unlimited, 0 used · r: after a card goes home" in render_view(view_after("cruel", 1), PLAIN)


def test_clock_hidden_cards_are_backs_and_the_hand_points_at_its_hour() -> None:
    start = render_view(view_after("clock", 1), PLAIN)
    assert "\n".join(start).count("▒") == 52  # every card face down, none named
    assert not drawn_cards(start)
    assert "No card in hand: p (or Enter) turns up the centre's top card" in start
    lines = render_view(view_after("clock", 1, ["p", "p", "p"]), PLAIN)
    text = "\n".join(lines)
    assert text.count("▒") == 52 - 3  # three cards turned up: two placed, one in hand
    assert "▸4" in text and "In hand: 4♣ → goes under hour 4: p (or Enter)" in lines
    for label in ("11 J", "12 Q", "13 K", "1 A"):
        assert label in text


def test_clock_blocked_king_offers_the_exchange() -> None:
    view = view_after("clock", 1)
    view = {**view, "hand": "KS", "exchange_allowed": True}
    lines = render_view(view, PLAIN)
    assert "In hand: K♠, the fourth King, with cards still face down." in lines
    assert "Exchange it with x<hour>.<n> (the n-th face-down card from the top), or resign" in lines


def test_parallels_marks_free_cards_and_labels_columns_and_rows() -> None:
    view = view_after("parallels", 1, ["s"])  # a second row
    lines = render_view(view, PLAIN)
    header = next(line for line in lines if line.strip().startswith("a"))
    assert header.split() == list("abcdefghij")
    rows = [line for line in lines if re.match(r"^\s+\d+  ", line)]
    assert [int(r.split()[0]) for r in rows] == [1, 2]
    assert rows[0].count("[") == 10 and rows[1].count("[") == 10  # both rows free
    assert "Stock  ▒ 76 cards · s deals a new row" in lines


def test_patriarchs_slots_waste_and_stock() -> None:
    lines = render_view(view_after("patriarchs", 1, ["s", "s"]), PLAIN)
    text = "\n".join(lines)
    for n in range(1, 10):
        assert f"{n} [" in text
    assert "Waste (w)" in text and "(2 cards)" in text
    assert "Stock      ▒ 85 cards · s turns one" in text


# --- golden drawings, one deal per family ----------------------------------------------------
GOLDEN = {
    ("cruel", ("1>f",)): """\
Foundations (f)   A♠   2♥   A♦   A♣
Redeals  unlimited, 0 used · r redeals now

Piles (top card on the right)
  1 │  K♥  Q♦  8♣
  2 │  J♣ 10♠  4♠  5♥
  3 │  7♠  2♦  K♠  4♥
  4 │  7♥  6♠  6♥ 10♥
  5 │  5♣  4♦  2♠  3♣
  6 │ 10♦  3♦  J♠  3♠
  7 │  9♥  6♣  Q♠  6♦
  8 │  8♦  9♦  5♠  J♦
  9 │ 10♣  Q♣  5♦  3♥
 10 │  2♣  K♣  K♦  J♥
 11 │  7♦  Q♥  7♣  4♣
 12 │  9♠  8♠  8♥  9♣""",
    ("clock", ("p", "p", "p")): """\
                 11 J ▒▒▒▒       12 Q ▒▒▒▒       1 A  ▒▒▒▒

 10   ▒▒▒▒                                                       2    ▒▒▒▒

 9    ▒▒▒▒                       13 K ▒▒                         3    ▒▒▒▒
                                 K♣
 8    ▒▒▒▒                                                      ▸4    ▒▒▒
                                                                 4♦
                 7    ▒▒▒▒       6    ▒▒▒▒       5    ▒▒▒▒


In hand: 4♣ → goes under hour 4: p (or Enter)
Exchange of the fourth King: not used""",
    ("parallels", ()): """\
Foundations  ♠  A A♠   K K♠       ♥  A A♥   K K♥
             ♦  A A♦   K K♦       ♣  A A♣   K K♣
             A: Ace foundation (up) · K: King foundation (down) · ⇄: they meet

       a     b     c     d     e     f     g     h     i     j
  1  [ 6♦] [ 2♣] [ 7♦] [ 2♠] [ 3♣] [ 8♠] [10♠] [10♠] [ K♠] [ J♣]
Stock  ▒ 86 cards · s deals a new row
[card] = free: the slot above or below it is empty""",
    ("patriarchs", ()): """\
Foundations  ♠  A A♠   K K♠       ♥  A A♥   K K♥
             ♦  A A♦   K K♦       ♣  A A♣   K K♣
             A: Ace foundation (up) · K: King foundation (down) · ⇄: they meet

  1 [ 9♥]  2 [ A♣]  3 [ 7♣]      Waste (w)  empty
  4 [ 8♥]  5 [ 5♦]  6 [ 4♦]      Stock      ▒ 87 cards · s turns one
  7 [10♠]  8 [ 2♣]  9 [ Q♦]      Redeal     once, when the stock is empty""",
    ("persian-patience", ()): """\
Foundations (f)  ♠   ·   ·   ♥   ·   ·   ♦   ·   ·   ♣   ·   ·
Rank order A 7 8 9 10 J Q K · build down in alternate colours
Redeals  2 of 2 left · r redeals now

Piles (top card on the right)
  1 │  8♦  9♠  9♣ 10♦ 10♥  A♥  A♦  J♦
  2 │  8♥  7♣  8♣  J♣ 10♦  Q♦  7♠  7♠
  3 │  J♥  9♥  K♦  8♣  7♦  A♣  9♣  J♥
  4 │  Q♠  K♦  9♦ 10♠  8♦  A♦  9♠  J♦
  5 │  8♥  K♣ 10♥  K♥  A♠  Q♣  A♣  K♥
  6 │  8♠ 10♣  J♠  Q♣  J♣  7♣  J♠  K♠
  7 │  K♠ 10♣ 10♠  7♥  A♥  Q♠  7♦  K♣
  8 │  8♠  Q♥  9♦  A♠  7♥  Q♥  Q♦  9♥""",
}


@pytest.mark.parametrize("game_id, moves", sorted(GOLDEN))
def test_golden_drawing(game_id: str, moves: tuple[str, ...]) -> None:
    assert "\n".join(render_view(view_after(game_id, 1, moves), PLAIN)) == GOLDEN[(game_id, moves)]


def test_two_deck_foundations_mark_suits_that_meet() -> None:
    view = view_after("parallels", 1)
    for f in view["foundations"]:
        if f["suit"] == "H":
            f["top"] = "7H" if f["side"] == "A" else "8H"
    lines = render_view(view, PLAIN)
    assert "♥  A 7♥   K 8♥  ⇄" in lines[0]
    assert "⇄" not in lines[1]


# --- the whole screen ---------------------------------------------------------------------------
def race_screen() -> Screen:
    view = view_after("cruel", 1, ["1>f"])
    return Screen(
        server="ws://127.0.0.1:1/ws",
        phase="race",
        player_id=1,
        player_name="ann",
        race={"code": "KXPMRT", "game": "cruel", "deal": 1, "time_limit_s": 600},
        view=view,
        me={"player_id": 1, "name": "ann", "home": 5, "total": 52, "moves": 1, "outcome": "playing", "time_ms": None},
        elapsed_ms=83_450,
        opponents={2: {"player_id": 2, "name": "bob", "home": 26, "total": 52, "moves": 30, "outcome": "won",
                       "time_ms": 312_407}},
        notices=[("ok", "1>f"), ("error", "4>9: 10♥ cannot go on 5♦: needs 4♦")],
    )


def test_race_screen_shows_header_board_racers_and_the_servers_reason() -> None:
    lines = render_screen(race_screen(), PLAIN)
    text = "\n".join(lines)
    assert lines[0] == "solitaire-race · ann · ws://127.0.0.1:1/ws"
    assert lines[1] == "Cruel · deal 1 · race KXPMRT · 1:23 / 10:00"
    assert "  1 │  K♥  Q♦  8♣" in lines
    me = next(line for line in lines if "ann" in line and "/52" in line)
    bob = next(line for line in lines if "bob" in line)
    assert me.startswith("▸ ann") and "5/52" in me and "playing" in me
    assert "26/52" in bob and "won 5:12.4" in bob and "██████████░░░░░░░░░░" in bob
    assert "✓ 1>f" in lines
    assert "✗ 4>9: 10♥ cannot go on 5♦: needs 4♦" in lines
    assert lines[-1].startswith("type a move")
    assert "\x1b" not in text


def test_help_shows_the_games_notation_and_commands() -> None:
    screen = race_screen()
    screen.show_help = True
    text = "\n".join(render_screen(screen, PLAIN))
    assert "How to play Cruel" in text and "3>7  3 7  3-7" in text and "resign" in text
    assert "  1 │" not in text  # the help takes the board's place until it is closed
    for game_id in all_games():
        assert len(help_lines(game_id)) > 6
    assert any("new GAME" in line for line in help_lines(None))


@pytest.mark.parametrize("width", [80, 100])
def test_help_wraps_between_words(width: int) -> None:
    """Every help line leaves the terminal's last column free, and wraps between words: the
    text read back line by line is the text written."""
    from solitaire_race.tui.render import _HELP, _HELP_COMMON, _HELP_LOBBY

    for game_id, rows in [*((g, [*_HELP[g], *_HELP_COMMON]) for g in all_games()), (None, _HELP_LOBBY)]:
        lines = help_lines(game_id, width)
        assert all(visible_len(line) < width for line in lines), (game_id, [ln for ln in lines if len(ln) >= width])
        words = " ".join(line.strip() for line in lines).split()
        for _form, text in rows:
            assert " ".join(text.split()) in " ".join(words), (game_id, text)


def test_lobby_room_and_finished_screens() -> None:
    games = [g.describe() for g in all_games().values()]
    lobby = Screen(server="s", phase="lobby", player_id=1, player_name="ann", games=games,
                   races=[{"code": "BCDFGH", "game": "clock", "deal": 9, "players": [{"name": "bob"}]}],
                   dailies={"date": "2026-11-21", "challenges": [{"game": "cruel", "attempted": True},
                                                                 {"game": "clock", "attempted": False},
                                                                 {"game": "patriarchs", "preparing": True}]})
    text = "\n".join(render_screen(lobby, PLAIN, width=60))
    assert "  BCDFGH  Clock" in text and "bob" in text
    assert "cruel ✓ · clock · patriarchs (preparing)" in text
    assert all(visible_len(line) <= 60 for line in text.splitlines() if line.startswith("  perseverance"))

    room = {"code": "KXPMRT", "link": "http://h/join/KXPMRT", "game": "cruel", "deal": 1, "private": True,
            "status": "lobby", "creator_id": 1, "time_limit_s": 1800, "max_players": 8,
            "players": [{"id": 1, "name": "ann", "ready": False, "connected": True},
                        {"id": 2, "name": "bob", "ready": True, "connected": False}]}
    creator = render_screen(Screen(server="s", phase="room", player_id=1, player_name="ann", room=room), PLAIN)
    assert "Share the code KXPMRT: http://h/join/KXPMRT  or  solitaire-race play --join KXPMRT" in creator
    assert any(line.startswith("  ann (you)") and "creator · not ready" in line for line in creator)
    assert any(line.startswith("  bob") and "ready · away" in line for line in creator)
    assert creator[-1].startswith("start · ready")
    other = render_screen(Screen(server="s", phase="room", player_id=2, room=room, countdown_ms=2100), PLAIN)
    assert "Starting in 2.1 s" in other and not other[-1].startswith("start")
    assert not any("this computer only" in line for line in creator)
    local = render_screen(Screen(server="s", phase="room", player_id=1, room={**room, "link": "http://127.0.0.1:8765/join/KXPMRT"}))
    assert any("opens on this computer only: serve with --host 0.0.0.0" in line for line in local)

    finished = race_screen()
    finished.phase = "finished"
    finished.ranking = [
        {"player_id": 2, "name": "bob", "rank": 1, "outcome": "won", "time_ms": 312_407,
         "moves": 68, "home": 52, "total": 52},
        {"player_id": 1, "name": "ann", "rank": 2, "outcome": "resigned", "time_ms": 320_112,
         "moves": 41, "home": 23, "total": 52},
    ]
    lines = render_screen(finished, PLAIN)
    assert any(line.startswith("   1. bob") and "won 5:12.4" in line for line in lines)
    assert any(line.startswith("▸  2. ann") and "resigned 5:20.1" in line and "23/52" in line for line in lines)


def test_daily_header() -> None:
    screen = race_screen()
    assert screen.race is not None
    screen.race["daily"] = {"date": "2026-11-21", "ranked": False, "par": 71}
    header = render_screen(screen, PLAIN)[1]
    assert header == "Cruel · deal 1 · daily challenge 2026-11-21 (unranked replay) · par 71 moves · 1:23 / 10:00"


def test_hint_is_offered_only_in_practice_of_a_past_day() -> None:
    screen = race_screen()
    assert screen.race is not None
    assert "hint" not in render_screen(screen, PLAIN)[-1]  # a race: the server refuses hints
    screen.race["daily"] = {"date": "2026-11-21", "ranked": True, "par": 71, "practice": False}
    assert "hint" not in render_screen(screen, PLAIN)[-1]
    screen.race["daily"]["ranked"] = False  # today's deal replayed: refused too
    assert "hint" not in render_screen(screen, PLAIN)[-1]
    screen.race["daily"]["practice"] = True
    prompt = render_screen(screen, PLAIN)[-1]
    assert prompt == "type a move (? shows how) · f sends all home · hint · resign · leave · quit"
    for game_id in all_games():
        assert any(line.split()[0] == "hint" for line in help_lines(game_id) if line.strip())


def test_card_labels() -> None:
    assert [card_label(c) for c in ("TH", "AS", "KC", "9D")] == ["10♥", "A♠", "K♣", "9♦"]
    assert parse_card("TH") == parse_card("10♥")


# --- short forms ------------------------------------------------------------------------------------
def test_pile_number_alone_sends_home_or_the_one_build() -> None:
    view = view_after("cruel", 1)  # pile 1's top is 2♥, which goes home
    assert expand("1", view).moves == ["1>f"]
    game = get_game("cruel")
    state = game.deal(1, SECRET)
    kinds = set()
    for pile in range(1, 13):
        moves = [game.format_move(m) for m in game.legal_moves(state) if m.src == pile - 1]
        home = [m for m in moves if m.endswith(">f")]
        # No move at all: sent as N>f, and the server says why.
        expected = home or (moves if len(moves) == 1 else [f"{pile}>f"])
        kinds.add("home" if home else "build" if moves else "none")
        # (10, 11, 12 are piles here, although the engine alone reads "12" as 1>2)
        assert expand(str(pile), view).moves == expected, pile
    assert kinds == {"home", "build", "none"}  # this deal exercises all three
    assert expand("3>7", view).moves == ["3>7"]  # the notation goes through untouched
    assert expand("3 7", view).moves == ["3 7"]


def test_pile_number_with_several_targets_sends_nothing_and_lists_them() -> None:
    # Persian Patience (two decks): 7♥ on pile 1 fits on both black 8s.
    view = view_after("persian-patience", 1)
    view["piles"] = [["7H"], ["8S"], ["8C"], [], [], [], [], []]
    sent = expand("1", view)
    assert sent.moves == [] and sent.note is not None
    assert "1>2 or 1>3" in sent.note
    assert expand("12", view).moves == ["12"]  # not a pile here (8 piles): 1>2 as typed


def test_two_deck_source_alone_goes_to_the_foundation_it_fits() -> None:
    view = view_after("patriarchs", 1)
    view["tableau"][1] = "2C"  # 2♣ fits the ♣ Ace foundation only
    assert expand("2", view).moves == ["2>A"]
    view["foundations"] = [
        {"suit": s, "side": side, "top": top}
        for s in "SHDC"
        for side, top in (("A", f"A{s}"), ("K", f"K{s}"))
    ]
    view["foundations"][6]["top"] = "AC"
    view["foundations"][7]["top"] = "3C"  # the ♣ King foundation is down to 3♣: 2♣ fits both
    both = expand("2", view)
    assert both.moves == [] and both.note == "2 fits both foundations: type 2>A or 2>K"
    assert expand("5", view).moves == ["5>A"]  # 5♦ fits neither: the server will say why
    parallels = view_after("parallels", 1)
    assert expand("b1", parallels).moves == ["b1>A"]  # 2♣ onto A♣
    assert expand("S:A>K", parallels).moves == ["S:A>K"]


def test_clock_enter_plays_and_f_sends_every_home_move() -> None:
    assert expand("", view_after("clock", 1)).moves == ["p"]
    assert expand("", view_after("cruel", 1)).moves == []
    view = view_after("cruel", 1)
    home = expand("f", view)
    assert home.all_home and home.moves[0] == "1>f"
    game = get_game("cruel")
    state = game.deal(1, SECRET)
    for move in home.moves:
        state = game.apply(state, game.parse_move(move))  # every one legal, in order
    assert not any(m.kind.value == "home" for m in game.legal_moves(state))
    assert expand("f", view_after("clock", 1)).note == "no card can go to a foundation now"
    assert expand("1>f, 9>f; 3>f", view).moves == ["1>f", "9>f", "3>f"]


def test_a_screen_too_tall_for_the_terminal_keeps_the_board_and_the_clock() -> None:
    screen = race_screen()
    screen.opponents[3] = {
        "player_id": 3, "name": "cat", "home": 9, "total": 52, "moves": 12, "outcome": "playing", "time_ms": None
    }
    full = render_screen(screen, PLAIN)
    assert render_screen(screen, PLAIN, height=len(full) + 1) == full  # it fits: unchanged
    fitted = render_screen(screen, PLAIN, height=24)  # the classic 80x24 terminal
    assert len(fitted) <= 23  # one row stays for the input line
    assert fitted[1].startswith("Cruel · deal 1 · race KXPMRT · 1:23")
    assert [line for line in fitted if "│" in line] == [line for line in full if "│" in line]
    assert any("cat" in line for line in fitted) and any(line.startswith("✗ 4>9") for line in fitted)
    assert len(render_screen(screen, PLAIN, height=10)) == 9  # last resort: the top scrolls away


def test_a_race_that_finished_while_away_shows_its_ranking() -> None:
    screen = Screen(server="s", phase="finished", player_id=1, player_name="ann",
                    race={"code": "KXPMRT", "game": "clock", "deal": 4, "time_limit_s": None},
                    ranking=[{"player_id": 1, "name": "ann", "rank": 1, "outcome": "left", "time_ms": 61_000,
                              "moves": 3, "home": 2, "total": 52}])
    lines = render_screen(screen, PLAIN)
    assert lines[1] == "Clock · deal 4 · race KXPMRT · 0:00 / -"
    assert any(line.startswith("▸  1. ann") and "left 1:01.0" in line for line in lines)


def test_outcomes_are_shown_with_their_labels() -> None:
    """A timed-out racer is "out of time", as in the browser; a value this client does not
    know (a newer server's) is shown as it is."""
    screen = race_screen()
    screen.opponents[3] = {"player_id": 3, "name": "cat", "home": 9, "total": 52, "moves": 12,
                           "outcome": "timeout", "time_ms": 600_000}
    cat = next(line for line in render_screen(screen, PLAIN) if "cat" in line)
    assert cat.endswith("9/52      12  out of time 10:00.0")
    screen.phase = "finished"
    screen.ranking = [
        {"player_id": 2, "name": "bob", "rank": 1, "outcome": "won", "time_ms": 312_407, "moves": 68, "home": 52,
         "total": 52},
        {"player_id": 3, "name": "cat", "rank": 2, "outcome": "timeout", "time_ms": 600_000, "moves": 12, "home": 9,
         "total": 52},
        {"player_id": 1, "name": "ann", "rank": 3, "outcome": "disqualified", "time_ms": None, "moves": 1,
         "home": 5, "total": 52},
    ]
    rows = [line for line in render_screen(screen, PLAIN) if re.match(r"[ ▸]  \d\. ", line)]
    assert "out of time 10:00.0" in rows[1] and "timeout" not in rows[1]
    assert "disqualified" in rows[2]
    assert len({row.index("/52") for row in rows}) == 1  # the longest label still fits its column


# --- text from the server -------------------------------------------------------------------
HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # sets the terminal's title, then clears the screen


def test_hostile_names_and_messages_are_drawn_as_visible_escapes() -> None:
    """What a server sends reaches the screen through ``safe_message`` (the client's
    connection applies it to every message): drawn in colour, the only escape sequences
    left are the client's own colours, and the hostile text shows as harmless escapes."""
    room = safe_message({"type": "room", "race": {
        "code": "KXP\x1bMRT", "link": "http://h/join/\x9b2J", "game": "cruel", "deal": 1, "private": True,
        "status": "lobby", "creator_id": 1, "time_limit_s": 1800, "max_players": 8,
        "players": [{"id": 1, "name": "ann", "ready": True, "connected": True},
                    {"id": 2, "name": HOSTILE, "ready": False, "connected": True},
                    {"id": 3, "name": "\u202eevil\u2066", "ready": False, "connected": True}]}})["race"]
    error = safe_message({"type": "error", "code": "x", "message": "refused" + HOSTILE + "\r\x08"})
    screen = Screen(server="s", phase="room", player_id=1, player_name="ann", room=room,
                    notices=[("error", error["message"])])
    drawn = "\n".join(ANSI.sub("", line) for line in render_screen(screen, Style(color=True), width=200))
    assert not [c for c in drawn if unicodedata.category(c) in UNSAFE_CATEGORIES and c != "\n"]
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in drawn  # the name, as visible text
    assert "\\u202eevil\\u2066" in drawn and "KXP\\x1bMRT" in drawn and "http://h/join/\\x9b2J" in drawn
    assert "✗ refused\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x08" in drawn


def test_server_text_is_escaped_visibly_and_harmless_text_is_kept() -> None:
    assert safe_text(HOSTILE) == "\\x1b]0;pwned\\x07\\x1b[2J"
    assert safe_text("ann\u202enn\u200b\r\x00\x9b\U000e0001\ud800") == (
        "ann\\u202enn\\u200b\\x0d\\x00\\x9b\\U000e0001\\ud800"
    )
    for harmless in ("ann", "Zoë ❤", "10♠ → home", "\u00a0", "\u0430nn", ""):
        assert safe_text(harmless) == harmless
    message = {"type": "error", "code": "x\x1b", "message": HOSTILE, "race": {"players": [{"id": 1, "name": "\x07"}]}}
    assert safe_message(message) == {
        "type": "error", "code": "x\\x1b", "message": safe_text(HOSTILE),
        "race": {"players": [{"id": 1, "name": "\\x07"}]},
    }


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_escaped_text_holds_nothing_a_terminal_would_obey(text: str) -> None:
    safe = safe_text(text)
    assert all(unicodedata.category(c) not in UNSAFE_CATEGORIES for c in safe)
    assert safe_text(safe) == safe
    safe.encode("utf-8")  # a lone surrogate would not even encode

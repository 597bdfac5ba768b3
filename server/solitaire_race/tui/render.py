"""Drawing the terminal client's screen as text: pure functions of what it shows.

Everything here takes plain data (a player view from the server, progress and ranking
entries, a ``Screen``) and returns lines of text; nothing reads the clock, the terminal or
the network, so every drawing is tested as text (``tests/test_tui_render.py``).

- Cards are drawn with their suit symbols, always three columns wide (`` K♥``, ``10♠``),
  hearts and diamonds in red when colour is on; a face-down card is a back (``▒``).
- Every pile, slot or hour carries the label its game's notation uses (``docs/games/``), so
  the moves can be read off the board: piles ``1``-``12``, Parallels columns ``a``-``j``
  and rows ``1``.., Patriarchs slots ``1``-``9`` and ``w``, Clock hours ``1``-``13``.
- ``Style`` is the only place that writes ANSI escape codes; ``Style(color=False)`` draws
  the same layout without them (``NO_COLOR``, or output that is not a terminal).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..config import loopback_only
from ..engine import all_games
from ..engine.cards import RANK_LABELS, SUIT_SYMBOLS, label, parse_card
from ..results import RacerOutcome, outcome_label

BACK = "▒"
EMPTY = "·"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def visible_len(text: str) -> int:
    """Length of ``text`` on screen, escape codes not counted."""
    return len(_ANSI.sub("", text))


def pad(text: str, width: int, right: bool = False) -> str:
    """Pad to ``width`` visible columns (on the left when ``right``)."""
    gap = " " * max(0, width - visible_len(text))
    return gap + text if right else text + gap


class Style:
    """ANSI colours and emphasis, or none at all."""

    def __init__(self, color: bool = True) -> None:
        self.color = color

    def _sgr(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def red(self, text: str) -> str:
        return self._sgr(text, "31")

    def green(self, text: str) -> str:
        return self._sgr(text, "32")

    def yellow(self, text: str) -> str:
        return self._sgr(text, "33")

    def blue(self, text: str) -> str:
        return self._sgr(text, "34")

    def cyan(self, text: str) -> str:
        return self._sgr(text, "36")

    def bold(self, text: str) -> str:
        return self._sgr(text, "1")

    def dim(self, text: str) -> str:
        return self._sgr(text, "2")

    def reverse(self, text: str) -> str:
        return self._sgr(text, "7")


PLAIN = Style(color=False)


# --- cards ---------------------------------------------------------------------------
def card_label(code: str) -> str:
    """``"TH"`` -> ``"10♥"``."""
    return label(parse_card(code))


def card(code: str | None, style: Style, bold: bool = False, width: int = 3) -> str:
    """A card ``width`` columns wide (right-aligned), red suits in red; ``None`` is an
    empty place (``·``)."""
    if code is None:
        return style.dim(pad(EMPTY, width, right=True))
    text = pad(card_label(code), width, right=True)
    if code[-1] in "HD":
        text = style.red(text)
    return style.bold(text) if bold else text


def backs(count: int, style: Style) -> str:
    """``count`` face-down cards."""
    return style.blue(BACK * count)


def suit_symbol(letter: str) -> str:
    return SUIT_SYMBOLS["SHDC".index(letter)]


def _suit(letter: str, style: Style) -> str:
    sym = suit_symbol(letter)
    return style.red(sym) if letter in "HD" else sym


def clock_time(ms: int | None) -> str:
    """``83450`` -> ``"1:23"``; hours when needed."""
    if ms is None:
        return "-"
    s = max(0, ms) // 1000
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def race_time(ms: int | None) -> str:
    """A finishing time with tenths: ``"5:12.3"``."""
    if ms is None:
        return "-"
    return f"{clock_time(ms)}.{ms % 1000 // 100}"


def game_name(game_id: str) -> str:
    game = all_games().get(game_id)
    return game.name if game is not None else game_id


# --- one drawing per game family ---------------------------------------------------------
def _redeals(view: dict[str, Any], style: Style, cruel_hint: bool) -> str:
    used, left = view["redeals_used"], view["redeals_left"]
    if left is None:
        text = f"unlimited, {used} used"
    else:
        text = f"{left} of {used + left} left"
    if view["redeal_allowed"]:
        return f"Redeals  {text} · {style.bold('r')} redeals now"
    if cruel_hint and left is None:
        return f"Redeals  {text} · r: after a card goes home"
    return f"Redeals  {text}"


def _pile_rows(piles: Sequence[Sequence[str]], style: Style) -> list[str]:
    lines = []
    for number, pile in enumerate(piles, start=1):
        if pile:
            cards = [card(c, style, bold=i == len(pile) - 1) for i, c in enumerate(pile)]
            body = " ".join(cards)
        else:
            body = card(None, style) + style.dim(" empty")
        lines.append(f"{number:>3} │ {body}")
    return lines


def render_perseverance(view: dict[str, Any], style: Style) -> list[str]:
    """Perseverance, Perseverance A, Cruel: 12 piles, top card on the right."""
    found = "  ".join(card(c, style) for c in view["foundations"])
    lines = [
        f"Foundations (f)  {found}",
        _redeals(view, style, cruel_hint=True),
        "",
        style.dim("Piles (top card on the right)"),
    ]
    lines += _pile_rows(view["piles"], style)
    return lines


def render_persian(view: dict[str, Any], style: Style) -> list[str]:
    """Persian Patience: 8 piles; two foundations per suit, ranks A 7 8 9 10 J Q K."""
    found = view["foundations"]
    groups = [
        f"{_suit(s, style)} {card(found[2 * i], style)} {card(found[2 * i + 1], style)}"
        for i, s in enumerate("SHDC")
    ]
    lines = [
        f"Foundations (f)  {'   '.join(groups)}",
        "Rank order A 7 8 9 10 J Q K · build down in alternate colours",
        _redeals(view, style, cruel_hint=False),
        "",
        style.dim("Piles (top card on the right)"),
    ]
    lines += _pile_rows(view["piles"], style)
    return lines


# The clock face: (row, column) of each hour in a 5 by 5 grid; 13 is the centre.
_DIAL = {
    11: (0, 1), 12: (0, 2), 1: (0, 3),
    10: (1, 0), 2: (1, 4),
    9: (2, 0), 13: (2, 2), 3: (2, 4),
    8: (3, 0), 4: (3, 4),
    7: (4, 1), 6: (4, 2), 5: (4, 3),
}  # fmt: skip
_CELL = 16


def _hour_label(hour: int) -> str:
    rank = RANK_LABELS[hour - 1]
    return f"{hour} {rank}" if rank != str(hour) else str(hour)


def render_clock(view: dict[str, Any], style: Style) -> list[str]:
    """Clock: the 13 piles as a dial, face-down cards as backs, the card in hand below."""
    hand = view["hand"]
    target = parse_card(hand) >> 2 if hand else None
    grid = [[("", "") for _ in range(5)] for _ in range(5)]
    for pile in view["piles"]:
        hour = pile["hour"]
        mark = style.yellow("▸") if hour == target else " "
        head = f"{mark}{style.bold(pad(_hour_label(hour), 5))}{backs(pile['face_down'], style)}"
        up = " ".join(card(c, style, width=0) for c in pile["face_up"])
        r, c = _DIAL[hour]
        grid[r][c] = (head, " " + up)
    lines = []
    for row in grid:
        for part in (0, 1):
            lines.append("".join(pad(cell[part], _CELL) for cell in row).rstrip())
    lines.append("")
    if hand is None:
        if view["piles"][12]["face_down"]:
            lines.append(f"No card in hand: {style.bold('p')} (or Enter) turns up the centre's top card")
        else:
            lines.append("Every card is face up")
    elif view["exchange_allowed"]:
        lines.append(f"In hand: {card(hand, style, width=0)}, the fourth King, with cards still face down.")
        lines.append(
            f"Exchange it with {style.bold('x<hour>.<n>')} (the n-th face-down card from the top), or resign"
        )
    else:
        where = "the centre (13 K)" if target == 13 else f"hour {_hour_label(target or 0)}"
        lines.append(f"In hand: {card(hand, style, width=0)} → goes under {where}: {style.bold('p')} (or Enter)")
    lines.append(f"Exchange of the fourth King: {'used' if view['exchange_used'] else 'not used'}")
    return lines


def _two_way_foundations(foundations: list[dict[str, Any]], style: Style) -> list[str]:
    """Per suit: the Ace foundation (built up) and the King foundation (built down)."""
    tops: dict[tuple[str, str], str] = {(f["suit"], f["side"]): f["top"] for f in foundations}
    groups = []
    for s in "SHDC":
        up, down = tops[(s, "A")], tops[(s, "K")]
        meet = (parse_card(up) >> 2) + 1 == parse_card(down) >> 2
        mark = style.yellow("⇄") if meet else " "
        up_card, down_card = (pad(card(c, style, width=0), 3) for c in (up, down))
        groups.append(f"{_suit(s, style)}  A {up_card}  K {down_card} {mark}")
    return [
        f"Foundations  {groups[0]}    {groups[1]}".rstrip(),
        f"             {groups[2]}    {groups[3]}".rstrip(),
        style.dim("             A: Ace foundation (up) · K: King foundation (down) · ⇄: they meet"),
    ]


def render_parallels(view: dict[str, Any], style: Style) -> list[str]:
    """Parallels: rows 1.. of columns a-j; free cards in brackets."""
    free = set(view["free"])
    lines = _two_way_foundations(view["foundations"], style)
    lines.append("")
    lines.append("     " + "".join(f"  {col}   " for col in "abcdefghij").rstrip())
    for r, row in enumerate(view["rows"], start=1):
        cells = []
        for col, code in zip("abcdefghij", row, strict=True):
            if code is None:
                cells.append(style.dim(f"  {EMPTY}  "))
            elif f"{col}{r}" in free:
                cells.append(f"[{card(code, style, bold=True)}]")
            else:
                cells.append(f" {card(code, style)} ")
        lines.append(f"{r:>3}  " + " ".join(cells).rstrip())
    gaps = sum(code is None for row in view["rows"] for code in row)
    stock = view["stock_count"]
    if stock:
        action = f"fills the {gaps} empty slot{'s' if gaps != 1 else ''}" if gaps else "deals a new row"
        lines.append(f"Stock  {backs(1, style)} {stock} cards · {style.bold('s')} {action}")
    else:
        lines.append("Stock  empty (no redeal in Parallels)")
    lines.append("[card] = free: the slot above or below it is empty")
    return lines


def render_patriarchs(view: dict[str, Any], style: Style) -> list[str]:
    """Patriarchs: slots 1-9 in a 3 by 3 square, the waste ``w`` and the stock."""
    lines = _two_way_foundations(view["foundations"], style)
    lines.append("")
    tab = view["tableau"]
    waste = view["waste_top"]
    side = [
        f"Waste (w)  {card(waste, style, bold=True, width=0) if waste else style.dim('empty')}"
        + (f"  ({view['waste_count']} cards)" if view["waste_count"] else ""),
        f"Stock      {backs(1, style)} {view['stock_count']} cards"
        + (f" · {style.bold('s')} turns one" if view["stock_count"] else ""),
        "Redeal     "
        + (
            "used"
            if view["redeal_used"]
            else f"{style.bold('r')} now" if view["redeal_allowed"] else "once, when the stock is empty"
        ),
    ]
    for r in range(3):
        cells = []
        for c in range(3):
            n = 3 * r + c
            code = tab[n]
            body = f"[{card(code, style, bold=True)}]" if code else style.dim(f"  {EMPTY}  ")
            cells.append(f"{n + 1} {body}")
        lines.append("  " + "  ".join(cells) + "      " + side[r])
    return lines


RENDERERS = {
    "perseverance": render_perseverance,
    "perseverance-a": render_perseverance,
    "cruel": render_perseverance,
    "persian-patience": render_persian,
    "clock": render_clock,
    "parallels": render_parallels,
    "patriarchs": render_patriarchs,
}


def render_fields(view: dict[str, Any], style: Style) -> list[str]:
    """A game without a drawing of its own here: its view's fields, one a line."""
    return [f"{key}: {value}" for key, value in view.items() if key != "game"]


def render_view(view: dict[str, Any], style: Style = PLAIN) -> list[str]:
    """A player's view of any game as lines of text."""
    return RENDERERS.get(view["game"], render_fields)(view, style)


# --- help -----------------------------------------------------------------------------------
_HELP: dict[str, list[tuple[str, str]]] = {
    "perseverance": [
        ("3>f  3f  3", "top card of pile 3 to its foundation"),
        ("3>7  3 7  3-7", "the card, or same-suit run, from pile 3 onto pile 7"),
        ("3", "pile 3's only move: home if it fits, else the one pile it fits"),
        ("r", "redeal (at most twice)"),
    ],
    "cruel": [
        ("3>f  3f  3", "top card of pile 3 to its foundation"),
        ("3>7  3 7  3-7", "the top card of pile 3 onto pile 7 (single cards only)"),
        ("3", "pile 3's only move: home if it fits, else the one pile it fits"),
        ("r", "redeal (after a card went home since the last deal)"),
    ],
    "persian-patience": [
        ("3>f  3f  3", "top card of pile 3 to a foundation"),
        ("3>5  3 5  35", "top card of pile 3 onto pile 5: the next rank up in the other colour, or any card "
                         "onto an empty pile"),
        ("3", "pile 3's only move: home if it fits, else the one pile it fits"),
        ("r", "redeal (at most twice)"),
    ],
    "clock": [
        ("p  (or Enter)", "put the card in hand under its hour and turn up that pile's top face-down card (the "
                          "first p turns up the centre's top card)"),
        ("x7.1", "exchange the blocked fourth King for hour 7's 1st face-down card from the top (once per game)"),
    ],
    "parallels": [
        ("c2>A  c2>K", "the card at column c, row 2 to its Ace (up) or King (down) foundation"),
        ("c2", "the same, to whichever foundation it fits"),
        ("S:A>K  S:K>A", "shift a top card between the two ♠ foundations when they meet (⇄)"),
        ("s", "stock: fill every empty slot, or deal a new row"),
    ],
    "patriarchs": [
        ("5>A  5>K  w>A  w>K", "slot 5, or the waste w, to its Ace (up) or King (down) foundation"),
        ("5  w", "the same, to whichever foundation it fits"),
        ("S:A>K  S:K>A", "shift a top card between the two ♠ foundations when they meet (⇄)"),
        ("s", "turn a stock card onto the waste"),
        ("r", "the one redeal, once the stock is empty"),
    ],
}
_HELP["perseverance-a"] = _HELP["perseverance"]

_HELP_COMMON = [
    ("f", "every foundation move there is now, in one go"),
    ("3>f, 9>f", "several moves at once, separated by commas"),
    ("hint", "the next move of a winning line (practice of a past day's daily only)"),
    ("resign", "give up this game (you stay to see the ranking)"),
    ("leave", "leave the race (resigns a running game)"),
    ("quit  (or Ctrl-D)", "close the client; resume within a minute with play --join CODE"),
    ("?", "show or hide this help"),
]
_HELP_LOBBY = [
    ("new GAME [DEAL] [public]", "create a race (a random deal unless DEAL is given)"),
    ("join CODE", "join a race by its code"),
    ("races", "list the public races open to join"),
    ("daily GAME", "play today's daily challenge of GAME"),
    ("daily GAME DATE", "practise the daily challenge of a past DATE (YYYY-MM-DD): unranked, with hints"),
    ("start  ready  unready", "in a race's room: start it (creator), say you are (not) ready"),
    ("bots [N] [SPEED]", "in a race's room: N bot opponents join, SPEED moves per second"),
    ("quit  (or Ctrl-D)", "close the client"),
    ("?", "show or hide this help"),
]


def _help_rows(rows: list[tuple[str, str]], form_width: int, width: int) -> list[str]:
    """Two columns, the text wrapped at word boundaries (never inside one) to leave the last
    of ``width`` columns free, as every line of the screen does; its further lines under its
    first."""
    indent = " " * (form_width + 3)
    lines = []
    for form, text in rows:
        first, *more = textwrap.wrap(text, max(20, width - 1 - len(indent)), break_on_hyphens=False) or [""]
        lines.append(f"  {form:<{form_width}} {first}")
        lines += [indent + line for line in more]
    return lines


def help_lines(game_id: str | None, width: int = 80) -> list[str]:
    """The notation of ``game_id`` (docs/games/) and the client's commands, for a terminal
    ``width`` columns wide."""
    lines = []
    if game_id is not None:
        lines.append(f"How to play {game_name(game_id)} (moves in the game's notation):")
        lines += _help_rows(_HELP.get(game_id, []), 22, width)
        lines.append("Commands:")
        lines += _help_rows(_HELP_COMMON, 22, width)
    else:
        lines.append("Commands:")
        lines += _help_rows(_HELP_LOBBY, 26, width)
    return lines


# --- racers and ranking ------------------------------------------------------------------
def progress_bar(home: int, total: int, width: int, style: Style) -> str:
    filled = round(width * home / total) if total else 0
    return style.green("█" * filled) + style.dim("░" * (width - filled))


def _outcome_text(entry: dict[str, Any], style: Style) -> str:
    outcome, shown = entry["outcome"], outcome_label(entry["outcome"])
    if outcome == RacerOutcome.PLAYING:
        return shown
    text = shown if entry.get("time_ms") is None else f"{shown} {race_time(entry['time_ms'])}"
    return style.green(text) if outcome == RacerOutcome.WON else style.yellow(text)


def render_racers(racers: Sequence[dict[str, Any]], me: int | None, style: Style) -> list[str]:
    """Each racer's progress: name, bar, cards home, moves, outcome. ``me``: your player id."""
    lines = [style.dim(f"  {'racer':<16} {'':<20} {'home':>7} {'moves':>6}  status")]
    for entry in racers:
        mine = entry.get("player_id") == me
        name = pad(entry["name"][:16], 16)
        lines.append(
            f"{style.yellow('▸') if mine else ' '} {style.bold(name) if mine else name} "
            f"{progress_bar(entry['home'], entry['total'], 20, style)} "
            f"{entry['home']:>3}/{entry['total']:<3} {entry['moves']:>6}  {_outcome_text(entry, style)}"
        )
    return lines


def render_ranking(ranking: Sequence[dict[str, Any]], me: int | None, style: Style) -> list[str]:
    lines = [style.dim(f"  {'#':>2}  {'racer':<16} {'result':<19} {'home':>7} {'moves':>6}")]
    for entry in ranking:
        mine = entry["player_id"] == me
        name = pad(entry["name"][:16], 16)
        lines.append(
            f"{style.yellow('▸') if mine else ' '} {entry['rank']:>2}. {style.bold(name) if mine else name} "
            f"{pad(_outcome_text(entry, style), 19)} {entry['home']:>3}/{entry['total']:<3} {entry['moves']:>6}"
        )
    return lines


# --- the whole screen ------------------------------------------------------------------------
@dataclass
class Screen:
    """Everything the client shows; the app keeps it up to date from the server's messages."""

    server: str
    phase: str = "connecting"  # connecting | name | lobby | room | race | finished
    player_id: int | None = None
    player_name: str | None = None
    games: list[dict[str, Any]] = field(default_factory=list)
    races: list[dict[str, Any]] = field(default_factory=list)  # public races open to join
    dailies: dict[str, Any] | None = None  # the `daily_challenges` reply for today
    room: dict[str, Any] | None = None  # race summary (docs/protocol.md)
    countdown_ms: int | None = None  # time left before the start, while counting down
    race: dict[str, Any] | None = None  # race_started without view and opponents
    view: dict[str, Any] | None = None
    me: dict[str, Any] | None = None  # own progress entry (same fields as `progress`)
    elapsed_ms: int = 0
    opponents: dict[int, dict[str, Any]] = field(default_factory=dict)
    ranking: list[dict[str, Any]] | None = None
    notices: list[tuple[str, str]] = field(default_factory=list)  # (ok | error | info, text)
    show_help: bool = False


def _notice(kind: str, text: str, style: Style) -> str:
    if kind == "ok":
        return style.green("✓ ") + text
    if kind == "error":
        return style.red("✗ " + text)
    return style.cyan("• ") + text


def _practice(screen: Screen) -> bool:
    """Practice of a past day's daily challenge: the only place the server gives hints."""
    daily = (screen.race or {}).get("daily")
    return bool(daily and daily.get("practice"))


def _hint(screen: Screen) -> str:
    if screen.phase == "name":
        return "Type the name other racers will see, then Enter"
    if screen.phase == "lobby":
        return "new GAME [DEAL] [public] · join CODE · races · daily GAME · ? help · quit"
    if screen.phase == "room":
        room = screen.room or {}
        start = "start · " if room.get("creator_id") == screen.player_id else ""
        return f"{start}ready · unready · bots [N] [SPEED] · leave · ? help · quit"
    if screen.phase == "race":
        if screen.me is not None and screen.me["outcome"] != RacerOutcome.PLAYING:
            return "your game is over: the ranking comes when everyone is done · leave · quit"
        game = all_games().get((screen.race or {}).get("game", ""))
        if game is not None and game.quick_move:  # Clock: the whole game is one key
            return f"Enter (or {game.quick_move}) plays · ? help · resign · leave · quit"
        hint = "hint · " if _practice(screen) else ""
        return f"type a move (? shows how) · f sends all home · {hint}resign · leave · quit"
    if screen.phase == "finished":
        return "again [new] · new GAME [DEAL] · join CODE · leave · quit"
    return "quit"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def render_screen(screen: Screen, style: Style = PLAIN, width: int = 80, height: int | None = None) -> list[str]:
    """The whole screen above the input line, for a terminal ``width`` columns wide.

    With ``height`` (the terminal's rows, one of which the input line takes) a screen too
    tall is made to fit: first the blank lines between sections go, then older messages,
    then the line of hints, then the last message, and only then does the top scroll away."""
    who = screen.player_name or "not signed in"
    head = [f"{style.bold('solitaire-race')} · {who} · {screen.server}"]
    room = screen.room
    if screen.phase in ("race", "finished") and screen.race is not None:
        race = screen.race
        limit = clock_time(race["time_limit_s"] * 1000) if race.get("time_limit_s") else "-"
        daily = race.get("daily")
        if daily:
            par = f" · par {daily['par']} moves" if daily.get("par") else ""
            kind = "practice" if daily.get("practice") else "ranked" if daily.get("ranked") else "unranked replay"
            tag = f"daily challenge {daily['date']} ({kind}){par}"
        else:
            tag = f"race {race['code']}"
        head.append(
            f"{style.bold(game_name(race['game']))} · deal {race['deal']} · {tag} · "
            f"{clock_time(screen.elapsed_ms)} / {limit}"
        )
    elif room is not None and screen.phase == "room":
        head.append(
            f"{style.bold(game_name(room['game']))} · deal {room['deal']} · race {style.bold(room['code'])} · "
            f"{'private' if room['private'] else 'public'} · {clock_time(room['time_limit_s'] * 1000)} limit"
        )
    sections: list[list[str]] = [head]

    if screen.show_help:
        game_id = (screen.race or {}).get("game")
        sections.append(help_lines(game_id if screen.phase in ("race", "finished") else None, width))
    elif screen.phase == "lobby":
        sections.append(
            [style.bold("Games")] + [f"  {g['id']:<17} {_clip(g['summary'], width - 21)}" for g in screen.games]
        )
        if screen.dailies is not None and screen.dailies.get("challenges"):
            marks = [
                f"{c['game']}{' ✓' if c.get('attempted') else ''}{' (preparing)' if c.get('preparing') else ''}"
                for c in screen.dailies["challenges"]
            ]
            sections.append([
                style.bold(f"Daily challenges of {screen.dailies['date']}")
                + style.dim("  (daily GAME; ✓: ranked attempt used)"),
                "  " + _clip(" · ".join(marks), width - 2),
            ])
        races = [style.bold("Open races") + style.dim("  (join CODE)")]
        if not screen.races:
            races.append(style.dim("  none right now: start one with new GAME"))
        for r in screen.races[:8]:
            names = ", ".join(p["name"] for p in r["players"])
            races.append(f"  {r['code']}  {game_name(r['game']):<16} deal {r['deal']:<8} {names}")
        sections.append(races)
    elif screen.phase == "room" and room is not None:
        code = room["code"]
        share = [f"Share the code {style.bold(code)}: {room['link']}  or  solitaire-race play --join {code}"]
        if loopback_only(urlsplit(room["link"]).hostname or ""):
            share.append(style.dim("  (this link opens on this computer only: serve with --host 0.0.0.0 for others)"))
        sections.append(share)
        players = [style.bold(f"Players ({len(room['players'])}/{room['max_players']})")]
        for p in room["players"]:
            marks = []
            if p["id"] == room["creator_id"]:
                marks.append("creator")
            marks.append(style.green("ready") if p["ready"] else style.dim("not ready"))
            if not p["connected"]:
                marks.append(style.yellow("away"))
            you = " (you)" if p["id"] == screen.player_id else ""
            players.append(f"  {pad(p['name'] + you, 24)} {' · '.join(marks)}")
        sections.append(players)
        if screen.countdown_ms is not None:
            sections.append([style.bold(style.yellow(f"Starting in {max(0, screen.countdown_ms) / 1000:.1f} s"))])
        elif room["creator_id"] == screen.player_id:
            sections.append(["Type start to start now (racing alone is fine), or wait until everyone is ready"])
        else:
            sections.append(
                ["Type ready when you are; the race starts when everyone is ready or the creator starts it"]
            )
    elif screen.phase in ("race", "finished"):
        if screen.view is not None:
            sections.append(render_view(screen.view, style))
        if screen.phase == "finished" and screen.ranking is not None:
            sections.append([style.bold("Result")] + render_ranking(screen.ranking, screen.player_id, style))
        else:
            racers = ([screen.me] if screen.me is not None else []) + list(screen.opponents.values())
            sections.append(render_racers(racers, screen.player_id, style))
    elif screen.phase == "connecting":
        sections.append(["Connecting…"])

    notices = [_notice(kind, text, style) for kind, text in screen.notices[-3:]]
    hint = style.dim(_hint(screen))

    def assemble(blank_lines: bool, messages: int, with_hint: bool) -> list[str]:
        out: list[str] = []
        for section in sections:
            out += section
            if blank_lines:
                out.append("")
        return out + notices[len(notices) - messages :] + ([hint] if with_hint else [])

    lines: list[str] = []
    ladder = ((True, 3, True), (False, 3, True), (False, 1, True), (False, 1, False), (False, 0, False))
    for blank_lines, messages, with_hint in ladder:
        lines = assemble(blank_lines, min(messages, len(notices)), with_hint)
        if height is None or len(lines) <= height - 1:
            return lines
    assert height is not None  # without a height the first try always fits
    return lines[len(lines) - (height - 1) :] if height > 1 else []


def prompt(screen: Screen) -> str:
    return {"name": "name> ", "race": "move> "}.get(screen.phase, "> ")

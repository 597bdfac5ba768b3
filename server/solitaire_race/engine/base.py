"""The one small interface every game implements, and what it is made of.

A ``Game`` is a stateless rule book; a state is an immutable, hashable value that the game
creates (``deal``) and transforms (``apply``). Moves are small ``Move`` values with a
per-game text notation (``parse_move`` / ``format_move``). Illegal input raises
``IllegalMove`` or ``NotationError`` with a sentence a player can read; the state passed in
is never changed (it cannot be: states are frozen).

A game also declares its own facts (as OpenSpiel's ``GameType`` does): whether its view
shows every card (``full_information``), how a player's view becomes a state a client or
bot can reason about (``from_view``), and the notation's short forms (``ShortForms``,
``quick_move``). Nothing outside a game's module lists game ids.
"""

from __future__ import annotations

import enum
import functools
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

from .cards import Card
from .shuffle import check_deal_number, deal_label, keyed_shuffle
from .view_changes import Change, diff, item_changes


class IllegalMove(ValueError):
    """A well-formed move that the rules do not allow in this state."""


class NotationError(ValueError):
    """Text that is not a move in this game's notation."""


class Outcome(str, enum.Enum):
    PLAYING = "playing"
    WON = "won"
    STUCK = "stuck"  # lost: no move left that could ever bring another card home


# Members ``assess`` returns after every move, bound to names once (the move path's one
# speed idiom: docs/performance.md, "Enum members bound to names").
_WON, _PLAYING = Outcome.WON, Outcome.PLAYING


class Progress(NamedTuple):  # not a frozen dataclass: made after every move, at half the cost
    home: int  # cards on the foundations (Clock: cards face up on their hour)
    total: int

    def to_json(self) -> dict[str, int]:
        return {"home": self.home, "total": self.total}


class Kind(str, enum.Enum):
    """What a move does; each game documents how it reads ``src`` and ``dst``."""

    HOME = "home"  # a card to a foundation
    BUILD = "build"  # a card (or run) onto a tableau pile
    SHIFT = "shift"  # a foundation's top card to the other foundation of its suit
    REDEAL = "redeal"
    STOCK = "stock"  # turn / deal from the stock
    PLAY = "play"  # Clock: play the card in hand
    EXCHANGE = "exchange"  # Clock: swap the fourth King for a face-down card


@dataclass(frozen=True, slots=True)
class ShortForms:
    """How a player may name a move by where its card comes from alone (``3`` for ``3>f``
    or ``3>7``), which the clients expand from the player's own view (docs/terminal.md)."""

    source: str  # a regular expression of the names of sources: pile numbers, slots, the waste
    home: str  # the target that means "its foundation" in this notation (``f``, ``A``)
    builds: bool  # a source alone may also mean its one build onto another pile


@dataclass(frozen=True, slots=True)
class Move:
    kind: Kind
    src: int = 0
    dst: int = 0


def require_unused(move: Move, *, src: bool = False, dst: bool = False) -> None:
    """Refuse a move whose unused fields are set, so each move has one canonical value."""
    if (not src and move.src) or (not dst and move.dst):
        raise IllegalMove(f"malformed {move.kind.value} move: {move.src=}, {move.dst=}")


# Moves that can put a card home or bring new cards into play; anything else only
# rearranges what is already visible.
PRODUCTIVE = frozenset({Kind.HOME, Kind.REDEAL, Kind.STOCK, Kind.PLAY, Kind.EXCHANGE})

S = TypeVar("S")


class Game(ABC, Generic[S]):
    """Rules of one game. Subclasses set ``id``/``name``/``summary`` and the methods."""

    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    # How far ``outcome`` searches rearranging moves for a way to progress before it
    # gives the player the benefit of the doubt. Small on purpose: the server runs it after
    # every move, and a racer shuffling cards must not be able to make each move expensive.
    stuck_search_limit: ClassVar[int] = 300
    # True where ``has_productive_move`` is exact (False: no productive move at all). Then
    # ``assess`` hands the search over without listing the position's moves: the search
    # lists them, off the move path, and not at all if the racer moves on first.
    productive_test_is_exact: ClassVar[bool] = False

    # --- the game's facts, for clients, bots and the solver ----------------------------
    # The view shows every card: ``from_view`` of a view is the whole position, so a bot
    # or the solver may search from it, and a hint may be given (docs/solver.md).
    full_information: ClassVar[bool] = False
    # A source alone as a move (None: no short forms), and the move a client's one-key
    # "play" sends (Clock's ``p``; None: there is none).
    short_forms: ClassVar[ShortForms | None] = None
    quick_move: ClassVar[str | None] = None

    # --- dealing -------------------------------------------------------------------
    @abstractmethod
    def deck(self) -> list[Card]:
        """The unshuffled cards that the shuffle permutes (see docs/shuffle.md)."""

    @abstractmethod
    def deal_from(self, cards: Sequence[Card]) -> S:
        """The starting state for a shuffled card sequence."""

    def deal(self, deal_number: int, secret: bytes) -> S:
        check_deal_number(deal_number)
        return self.deal_from(keyed_shuffle(self.deck(), secret, deal_label(self.id, deal_number)))

    # --- rules ---------------------------------------------------------------------
    @abstractmethod
    def legal_moves(self, state: S) -> list[Move]:
        """Every legal move, in a deterministic order."""

    @abstractmethod
    def apply(self, state: S, move: Move) -> S:
        """The state after ``move``; raises ``IllegalMove`` saying why it is not allowed."""

    @abstractmethod
    def progress(self, state: S) -> Progress: ...

    def is_won(self, state: S) -> bool:
        p = self.progress(state)
        return p.home == p.total

    def is_shuttle(self, state: S, move: Move) -> bool:
        """True for a legal move that cannot open anything (docs/games/rules.md: shuttling)."""
        return False

    def has_productive_move(self, state: S) -> bool:
        """A cheap sufficient test: True only if a productive move (a card home, a redeal,
        the stock) is available now. ``outcome`` then needs no move generation; games
        override this where it is cheaper than ``legal_moves`` (the server calls
        ``outcome`` after every move)."""
        return False

    def outcome(self, state: S) -> Outcome:
        """Won, stuck (no move left that could ever bring another card home), or playing."""
        verdict = self.assess(state)
        return verdict if isinstance(verdict, Outcome) else self._searched_outcome(state)

    def assess(self, state: S) -> Outcome | StuckSearch[S]:
        """``outcome`` when one look at the position decides it (won; a productive move
        now; no move at all, where the moves are listed here), else the search of
        rearranging moves that will decide it (``StuckSearch``). The server answers moves
        with this and runs the search later, in slices. Games whose productive-move test
        is exact leave even the listing to the search, so "no move at all" comes from it."""
        if self.is_won(state):
            return _WON
        if self.has_productive_move(state):
            return _PLAYING
        if self.productive_test_is_exact:
            return StuckSearch(self, state, None)
        moves = self._rearranging_moves(state)
        if moves is None:
            return Outcome.PLAYING
        return StuckSearch(self, state, moves) if moves else Outcome.STUCK

    def _rearranging_moves(self, state: S) -> list[Move] | None:
        """The moves that are not shuttles, or None if one of them is productive."""
        moves = [m for m in self.legal_moves(state) if not self.is_shuttle(state, m)]
        return None if any(m.kind in PRODUCTIVE for m in moves) else moves

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - games live as long as the process
    def _searched_outcome(self, state: S) -> Outcome:
        # Cached: a racer shuffling cards back and forth revisits the same positions.
        search = self.assess(state)
        assert isinstance(search, StuckSearch)  # outcome() asks only when a search decides
        outcome = search.run(self.stuck_search_limit)
        assert outcome is not None  # a budget of the whole limit always decides
        return outcome

    # --- what players and logs see -------------------------------------------------
    # A view is ``{"game", <one list: the piles, rows or slots>, **view_rest(state)}``.
    @abstractmethod
    def view_list(self, state: S) -> tuple[str, Sequence[Any], Callable[[Any], Any]]:
        """The view's list: its key, the state's parts its items are made from (piles are
        shared tuples, so a move replaces only those it touches), and how one part is shown."""

    @abstractmethod
    def view_rest(self, state: S) -> dict[str, Any]:
        """The view's other fields: foundations, stock and redeal counts."""

    def view_rest_source(self, state: S) -> Hashable | None:
        """Optional: a value, cheap to make and compare, that ``view_rest`` is a function of
        (equal values, equal fields), so ``view_changes`` can skip building both when a move
        left it alone; None, the default: always build them."""
        return None

    def view(self, state: S) -> dict[str, Any]:
        """The player's view as JSON-able data: no face-down card, no stock order."""
        key, parts, show = self.view_list(state)
        return {"game": self.id, key: [show(part) for part in parts], **self.view_rest(state)}

    def view_changes(self, before: S | None, after: S) -> list[Change]:
        """The changes (``view_changes.py``'s format) that turn the view of ``before`` into
        the view of ``after``, exactly those of ``diff`` of the two views; with ``before``
        None, the whole view as changes. The room sends them after every move: only the
        list's items whose parts a move replaced are built, and the other fields."""
        if before is None:
            return diff({}, self.view(after))
        key, old, show = self.view_list(before)
        changes = item_changes(key, old, self.view_list(after)[1], show)
        source = self.view_rest_source(after)
        if source is None or source != self.view_rest_source(before):
            changes += diff(self.view_rest(before), self.view_rest(after))
        return changes

    @abstractmethod
    def from_view(self, view: dict[str, Any]) -> S:
        """The state a player's ``view`` shows, every card it hides as ``cards.UNKNOWN`` (a
        card that fits no foundation and no pile). So ``view(from_view(v)) == v``; the
        legal moves of ``from_view(v)`` are exactly the player's; a chain of foundation
        moves on it is legal in the real game (a hidden card never goes home); and with
        ``full_information`` it is the position itself. Clients and bots reason on it."""

    @abstractmethod
    def snapshot(self, state: S) -> dict[str, Any]:
        """The whole state as JSON-able data, hidden cards included. Server-side only."""

    @abstractmethod
    def all_cards(self, state: S) -> list[Card]:
        """Every card in the state, wherever it is (for conservation checks)."""

    @abstractmethod
    def parse_move(self, text: str) -> Move:
        """Parse this game's notation; raises ``NotationError``."""

    @abstractmethod
    def format_move(self, move: Move) -> str: ...

    def source_text(self, move: Move) -> str:
        """How the notation names where ``move`` takes its card from (``ShortForms``)."""
        return self.format_move(move).split(">", 1)[0]

    def describe(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "summary": self.summary}


class StuckSearch(Generic[S]):
    """Breadth-first over rearranging moves from a position with none that is productive,
    looking for a position that has one. Resumable, so the server can run it in slices
    between other work: ``run(budget)`` visits up to ``budget`` more positions and returns
    the outcome once decided (PLAYING also when the game's ``stuck_search_limit`` is
    reached: too big to decide cheaply gives the player the benefit of the doubt)."""

    __slots__ = ("_first_moves", "game", "queue", "seen", "start")

    def __init__(self, game: Game[S], start: S, first_moves: list[Move] | None) -> None:
        """``first_moves``: the start's rearranging moves, or None to have ``run`` list them."""
        self.game = game
        self.start = start
        # Made on the first run: most searches are replaced by the racer's next move first.
        self.seen: set[S] | None = None
        self.queue: deque[tuple[S, list[Move]]] | None = None
        self._first_moves = first_moves

    def run(self, budget: int) -> Outcome | None:
        game, seen, queue = self.game, self.seen, self.queue
        if seen is None or queue is None:
            seen, queue = {self.start}, deque[tuple[S, list[Move]]]()
            self.seen, self.queue = seen, queue
            first_moves = self._first_moves
            if first_moves is None:
                first_moves = game._rearranging_moves(self.start)
                if first_moves is None:
                    return Outcome.PLAYING
            queue.append((self.start, first_moves))  # none at all: the loop finds it stuck
        stop = len(seen) + budget
        while queue:
            state, moves = queue[0]
            while moves:
                nxt = game.apply(state, moves.pop())
                if nxt in seen:
                    continue
                if len(seen) >= game.stuck_search_limit:
                    return Outcome.PLAYING
                seen.add(nxt)
                if game.has_productive_move(nxt):  # the usual way out: no need to list every move
                    return Outcome.PLAYING
                nxt_moves = game._rearranging_moves(nxt)
                if nxt_moves is None:
                    return Outcome.PLAYING
                queue.append((nxt, nxt_moves))
                if len(seen) >= stop:
                    return None
            queue.popleft()
        return Outcome.STUCK


class ReplayError(ValueError):
    """A move log line that does not parse or is illegal where it stands."""

    def __init__(self, line: int, text: str, reason: str) -> None:
        super().__init__(f"line {line}: {text!r}: {reason}")
        self.line = line
        self.text = text
        self.reason = reason


def replay(game: Game[S], state: S, lines: Iterable[str], parse: Callable[[str], Any] | None = None) -> tuple[S, int]:
    """Apply a move log (one move per line; blank lines and ``#`` comments skipped).

    Returns the final state and the number of moves applied; raises ``ReplayError`` at the
    first bad line. ``parse`` stands in for ``game.parse_move`` (a caller's cache of it).
    """
    parse = parse or game.parse_move
    applied = 0
    for number, raw in enumerate(lines, start=1):
        text = raw.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            state = game.apply(state, parse(text))
        except (IllegalMove, NotationError) as exc:
            raise ReplayError(number, text, str(exc)) from None
        applied += 1
    return state, applied

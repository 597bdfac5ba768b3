"""How a bot chooses its next move, from its own player view only.

The policy is given exactly what a person gets: the ``view`` of ``race_started`` and
``move_result``. It rebuilds the visible position (``client.known``: hidden cards are
placeholders, so the legal moves are exactly the player's).

In the full-information games (Perseverance family, Persian Patience) everything is on the
table, so the bot first asks the solver (``solitaire_race.solver``) for a winning line from
its own position (``solve_budget`` nodes, by default five times ``plan_budget``; at most
``solve_calls`` times a game, and never again once the solver proved the position lost)
and plays it move by move. Where cards are hidden (Clock, Parallels, Patriarchs) and
``hidden_solve_calls`` allows it (0 by default: it costs seconds of CPU a game for a few
more wins, ``bench/bots.py``), it asks the solver the same of a *layout*: the cards its
view hides dealt at random (``solver.sampling``), a position that looks exactly like its
own. It follows that line while what the game shows matches what the layout said it
would; as soon as a card turns up that the layout placed elsewhere, it deals a new layout
from its new view and asks again. It never sees the server's state.

Without a solver line it plans like a careful person: a best-first search from its position
(the position with most cards home first, then fewer redeals, then the shorter line; at
most ``plan_budget`` positions; never back to a position it has been in) for the line that
brings the most cards home, a won game ending the search at once. It plays that line, then
plans again from where it arrives. A search that looked everywhere and found no line
bringing another card home means the game is lost: the bot resigns. When the search was cut
off without finding one, and in the games with hidden cards, it picks, in this order:

1. a foundation move;
2. the first move of the shortest sequence of rearranging moves (builds, foundation
   shifts; never a shuttle) that leads to a foundation move, searched breadth-first over at
   most ``search_limit`` positions and never through a position the bot has already been in;
3. a move that brings new cards into play: the stock, a redeal, Clock's ``p``;
4. Clock's exchange of the fourth King, for the bottom card of the fullest face-down pile
   (the King then turns up as late as possible, the only way to still win);
5. only when the search was cut off by its bound: a rearranging move to a position not seen
   before (there may be a way forward that the bound hid).

Nothing left: ``None``, and the bot resigns. The bot also resigns after ``max_moves``
moves, so a game can never loop. Distance to the next foundation move strictly shrinks along
step 2, so that step cannot cycle either.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..client.known import known_state
from ..engine import Game, Kind, Move, get_game
from ..solver import solve
from ..solver.sampling import layouts

REARRANGING = frozenset({Kind.BUILD, Kind.SHIFT})
BRINGS_CARDS = (Kind.STOCK, Kind.REDEAL, Kind.PLAY)  # in order of preference


@dataclass
class Policy:
    """The move chooser of one bot for one game; it remembers the positions it has seen."""

    game_id: str
    search_limit: int = 300
    plan_budget: int = 4000
    max_moves: int = 3000
    solve_budget: int | None = None  # solver nodes per call; None: 5 x plan_budget
    solve_calls: int = 3  # solver calls per game at most
    hidden_solve_calls: int = 0  # the same where cards are hidden, on layouts (see the module doc)
    seed: int = 0  # the layouts' random numbers (where cards are hidden)
    game: Game[Any] = field(init=False)
    _seen: set[Any] = field(default_factory=set, init=False)
    _chosen: int = field(default=0, init=False)
    _solver_calls: int = field(default=0, init=False)
    _lost: bool = field(default=False, init=False)  # the solver proved the position lost
    # The planned line: the positions it passes through and the moves between them.
    _plan: deque[tuple[Any, Move]] = field(default_factory=deque, init=False)

    def __post_init__(self) -> None:
        self.game = get_game(self.game_id)
        self._rng = random.Random(self.seed)

    def choose(self, view: dict[str, Any]) -> str | None:
        """The next move in notation, or ``None`` to resign."""
        if self._chosen >= self.max_moves:
            return None
        move = self._choose(view)
        if move is None:
            return None
        self._chosen += 1
        return self.game.format_move(move)

    def _useful(self, state: Any) -> list[Move]:
        game = self.game
        return [m for m in game.legal_moves(state) if not game.is_shuttle(state, m)]

    def _choose(self, view: dict[str, Any]) -> Move | None:
        state = known_state(view)
        self._seen.add(state)
        if not self._plan or self._plan[0][0] != state:
            self._plan = deque(self._solver_line(state))
        if self._plan and self._plan[0][0] == state:
            return self._plan.popleft()[1]
        if self.game.full_information:  # no solver line to follow: a plan of its own
            line, exhausted = self._search_plan(state)
            if not line and exhausted:
                return None  # searched every line: none brings another card home
            self._plan = deque(line)
            if self._plan:
                return self._plan.popleft()[1]
        moves = self._useful(state)
        for move in moves:
            if move.kind is Kind.HOME:
                return move
        path, cut_off = self._path_home(state, [m for m in moves if m.kind in REARRANGING])
        if path:
            return path[0]
        for kind in BRINGS_CARDS:
            for move in moves:
                if move.kind is kind:
                    return move
        if view.get("exchange_allowed"):  # Clock's exchange of the fourth King
            return self._exchange(view)
        if cut_off:
            for move in moves:
                if move.kind in REARRANGING and self.game.apply(state, move) not in self._seen:
                    return move
        return None

    def _solver_line(self, start: Any) -> list[tuple[Any, Move]]:
        """A winning line from the solver as (position the bot will see before it, move)
        pairs, or []: from ``start`` itself, or where cards are hidden from a layout of them."""
        game = self.game
        calls = self.solve_calls if game.full_information else self.hidden_solve_calls
        if self._lost or self._solver_calls >= calls:
            return []
        self._solver_calls += 1
        budget = self.solve_budget if self.solve_budget is not None else 5 * self.plan_budget
        if game.full_information:
            position = start
        else:
            try:
                position = layouts(game, start, 1, self._rng)[0]
            except ValueError:  # a view no deal can show (hand-made): nothing to sample
                return []
        result = solve(game, position, node_budget=budget, shorten_budget=0)
        # Lost in a layout says nothing of the real deal; only a whole view is a proof.
        self._lost = game.full_information and result.status == "unwinnable"
        line: list[tuple[Any, Move]] = []
        for text in result.moves or ():
            move = game.parse_move(text)
            # Positions as the bot's view will show them (a view does not carry every
            # internal flag, e.g. Perseverance's homed-since-deal, nor hidden cards), so the
            # plan is followed only while the game shows what it expected.
            line.append((known_state(game.view(position)), move))
            position = game.apply(position, move)
        return line

    def _search_plan(self, start: Any) -> tuple[list[tuple[Any, Move]], bool]:
        """The line (position before each move, move) to the best position found: most
        cards home, then the shortest line; empty when nothing beats ``start``. Also
        whether the search looked at every position it could reach (not cut off).

        Best-first: the position with most cards home is expanded next, ties by fewer
        redeals (they are scarce), then by the shorter line, so lines stay short and a won
        position ends the search at once."""
        game = self.game
        best_home = game.progress(start).home
        best: Any = None
        parent: dict[Any, tuple[Any, Move] | None] = {start: None}
        heap: list[tuple[int, int, int, int, Any]] = [(-best_home, 0, 0, 0, start)]
        tie = 0  # keeps heap entries comparable without comparing states
        while heap and len(parent) < self.plan_budget:
            _, redeals, depth, _, state = heapq.heappop(heap)
            for move in self._useful(state):
                nxt = game.apply(state, move)
                if nxt in parent or nxt in self._seen:
                    continue
                parent[nxt] = (state, move)
                home = game.progress(nxt).home
                if home > best_home:
                    best_home, best = home, nxt
                    if game.is_won(nxt):
                        heap.clear()
                        break
                tie += 1
                heapq.heappush(heap, (-home, redeals + (move.kind is Kind.REDEAL), depth + 1, tie, nxt))
        line: list[tuple[Any, Move]] = []
        while best is not None and parent[best] is not None:
            before, move = parent[best]  # type: ignore[misc]
            line.append((before, move))
            best = before
        return line[::-1], not heap

    def _path_home(self, start: Any, first: list[Move]) -> tuple[list[Move], bool]:
        """Shortest rearranging line to a position with a foundation move; and whether the
        search stopped at its bound before looking everywhere."""
        game = self.game
        visited = {start}
        queue: deque[tuple[Any, list[Move], list[Move]]] = deque([(start, first, [])])
        while queue:
            state, moves, line = queue.popleft()
            for move in moves:
                nxt = game.apply(state, move)
                if nxt in visited or nxt in self._seen:
                    continue
                if len(visited) >= self.search_limit:
                    return [], True
                visited.add(nxt)
                nxt_moves = self._useful(nxt)
                if any(m.kind is Kind.HOME for m in nxt_moves):
                    return line + [move], False
                queue.append((nxt, [m for m in nxt_moves if m.kind in REARRANGING], line + [move]))
        return [], False

    def _exchange(self, view: dict[str, Any]) -> Move:
        # Bury the King as deep as possible: the bottom card of the pile with most face down.
        pile = max(view["piles"], key=lambda p: (p["face_down"], -p["hour"]))
        return Move(Kind.EXCHANGE, pile["hour"] - 1, pile["face_down"] - 1)

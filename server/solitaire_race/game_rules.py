"""The rules as players read them: one page per game (the web client's ``/rules/<game>``,
served as ``/api/rules/<game>``), written once, here.

Each game has four sections (the layout, the moves, redeals and the stock, how it is won),
the rules the engine enforces told in words (the exact readings are in docs/games/), and
a picture: a real position, dealt by the engine and played into by its own legal moves
(``example``). The example deals with a key of its own, not the server's secret, so the
picture is never a deal anyone races. Pure: no I/O.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from .engine.base import Game, Kind

# What "par" means, wherever it is shown (the daily challenges, the race bar, the boards).
PAR: Final = (
    "Par is the number of moves of the shortest winning line the server's solver found for a "
    "daily challenge's deal, before publishing it: every daily deal is proven winnable. Winning "
    "in par moves or fewer is playing as well as the solver (it is an upper bound: a shorter "
    "line may exist). Races rank by time, never by moves against par; the daily board shows "
    "both."
)

# How a race is decided, for every game.
RACING: Final = (
    "Everyone in a race gets the same deal. Winners rank first, the fastest ahead (fewer moves "
    "break a tie); then the others by fewer cards left, then by time. The server checks every "
    "move and says why it refuses one; it never moves a card for you."
)

_PERSEVERANCE_LAYOUT = (
    "One deck. The four Aces start the four foundations. The other 48 cards are dealt face up, "
    "four at a time, into 12 piles of four: every card is visible from the start."
)
_PERSEVERANCE_REDEAL = (
    "The piles are gathered (pile 12 onto pile 11, ..., onto pile 1), turned over and dealt "
    "again four at a time without shuffling: the new deal is pile 1 from bottom to top, then "
    "pile 2, and so on. Empty piles take no part, and the last pile may get fewer than four "
    "cards."
)
_PERSEVERANCE_WON = (
    "Won when all 52 cards are on the foundations. When no move is left that could ever bring "
    "another card home, the game is over (stuck) and the cards home count."
)
_TWO_DECK_FOUNDATIONS = (
    "Two decks. One Ace and one King of each suit start the eight foundations: per suit, an "
    "Ace foundation (marked ▲) built up by suit, A, 2, 3, ..., K, and a King foundation "
    "(marked ▼) built down by suit, K, Q, J, ..., A."
)
_TWO_DECK_SHIFT = (
    "A card goes to either foundation of its suit that it fits; when it fits both, you choose. "
    "When a suit's two foundations meet (the Ace foundation's top is one below the King "
    "foundation's, say an 8 and a 9), the top card of either may move onto the other, as "
    "often as you like; the starting Ace and King never move. With two decks each foundation "
    "must reach the other end, so they build on past each other."
)
_TWO_DECK_WON = "Won when all 104 cards are on the foundations."

# Per game: (title, text) sections, in the order the page shows them.
RULES: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "perseverance": (
        ("Layout", _PERSEVERANCE_LAYOUT),
        ("Moves", (
            "The top card of a pile goes to its foundation, built up by suit from the Ace to the "
            "King, or onto the next-higher card of its own suit on top of another pile (5♥ on "
            "6♥). A run descending in one suit at the top of a pile moves as a unit onto the "
            "card one above its bottom card; the top part of a run may move the same way. Runs "
            "go home one card at a time. An emptied pile stays empty: nothing may be moved "
            "into it."
        )),
        ("Redeals", "Two, at any time. " + _PERSEVERANCE_REDEAL),
        ("How it is won", _PERSEVERANCE_WON),
    ),
    "perseverance-a": (
        ("Layout", _PERSEVERANCE_LAYOUT + (
            " Then, in the first deal only, every King is moved to the bottom of its pile, the "
            "other cards keeping their order."
        )),
        ("Moves", (
            "As in Perseverance: the top card of a pile goes to its foundation, built up by "
            "suit from the Ace to the King, or onto the next-higher card of its own suit on "
            "top of another pile. A run descending in one suit moves as a unit onto the card "
            "one above its bottom card; runs go home one card at a time. An emptied pile stays "
            "empty."
        )),
        ("Redeals", "Two, at any time. " + _PERSEVERANCE_REDEAL + " Redeals do not move the Kings."),
        ("How it is won", _PERSEVERANCE_WON),
    ),
    "cruel": (
        ("Layout", _PERSEVERANCE_LAYOUT),
        ("Moves", (
            "Only single cards move. The top card of a pile goes to its foundation, built up by "
            "suit from the Ace to the King, or onto the next-higher card of its own suit on top "
            "of another pile (5♥ on 6♥). An emptied pile stays empty: nothing may be moved "
            "into it."
        )),
        ("Redeals", (
            "As many as you like, but each only after at least one card has gone to a "
            "foundation since the last deal (the first deal counts). " + _PERSEVERANCE_REDEAL
        )),
        ("How it is won", _PERSEVERANCE_WON),
    ),
    "clock": (
        ("Layout", (
            "One deck, dealt face down one card at a time into 13 piles of four: twelve round a "
            "dial, one for each hour (the Ace is one o'clock, the Jack eleven, the Queen "
            "twelve), and the Kings' pile in the centre."
        )),
        ("Moves", (
            "There is one move, Play. The first turns up the top card of the centre: it is the "
            "card in hand. Each Play then puts the card in hand face up at the bottom of its "
            "hour's pile (a 7 under seven o'clock, a King under the centre) and turns up the "
            "top face-down card of that same pile as the new card in hand. You make every step "
            "yourself; the only choice comes with the fourth King."
        )),
        ("The fourth King: one exchange", (
            "Play only stops when the fourth King turns up (the centre then has no face-down "
            "card left). If face-down cards remain elsewhere, you may exchange the King, once "
            "in the game, for any face-down card you pick: the King takes its place face down "
            "and the picked card becomes the card in hand. A King put at the bottom of a pile "
            "is turned up last. If the fourth King turns up again after the exchange was used, "
            "the game is lost. There is no redeal."
        )),
        ("How it is won", (
            "Won when the fourth King is placed with no face-down card left anywhere: all 52 "
            "cards face up on their hours. Cards home are the cards face up on their hours."
        )),
    ),
    "parallels": (
        ("Layout", _TWO_DECK_FOUNDATIONS + (
            " Ten cards are dealt face up as the first row, columns a to j; the other 86 are the "
            "stock."
        )),
        ("Moves", (
            "A card in the rows is free when the slot directly above or below it in its column "
            "is empty: every card of the first row and of the lowest row is free. Free cards go "
            "to the foundations, and only there: there is no building in the rows, and you "
            "never move a card into a slot. " + _TWO_DECK_SHIFT
        )),
        ("The stock, no redeal", (
            "Whenever you choose, the stock fills every empty slot of the dealt rows, top row "
            "first, left to right; if no slot is empty it deals a new row of ten below the "
            "lowest one. Rows stay even when all their cards are gone, so their gaps keep the "
            "cards above and below them free. There is no redeal: once the stock is empty, "
            "only the cards left in the rows can move."
        )),
        ("How it is won", _TWO_DECK_WON),
    ),
    "patriarchs": (
        ("Layout", _TWO_DECK_FOUNDATIONS + (
            " Nine cards are dealt face up in a 3 by 3 tableau (slots 1 to 9, row by row); the "
            "other 87 are the stock, with an empty waste beside it."
        )),
        ("Moves", (
            "A tableau card or the top card of the waste goes to a foundation, and only there: "
            "there is no building, and you never move a card into the tableau. When a tableau "
            "card goes home its slot is refilled at once, from the waste, or from the stock "
            "when the waste is empty. " + _TWO_DECK_SHIFT
        )),
        ("The stock and the one redeal", (
            "The stock turns one card at a time onto the waste, whenever you choose. Once the "
            "stock is empty, one redeal turns the waste over, without shuffling, as the new "
            "stock: the cards come again in the order they were first turned."
        )),
        ("How it is won", _TWO_DECK_WON),
    ),
    "persian-patience": (
        ("Layout", (
            "Two decks without the 2s to 6s: 64 cards, dealt face up one at a time across 8 "
            "piles of eight. The ranks run A, 7, 8, 9, 10, J, Q, K: the Ace sits just below the "
            "7. Eight foundations, two per suit, start empty."
        )),
        ("Moves", (
            "The top card of a pile goes to a foundation of its suit, built up in the order A, "
            "7, 8, 9, 10, J, Q, K (an Ace starts a foundation, a 7 goes on the Ace), or onto "
            "another pile whose top card is the next rank up and of the other colour (a red 7 on "
            "a black 8, a black Ace on a red 7). A King goes on nothing but an empty pile, and "
            "an empty pile takes any single card. Cards move one at a time."
        )),
        ("Redeals", (
            "Two, at any time. The piles are picked up left to right, each from its top card to "
            "its bottom card, and dealt again one card at a time across the 8 piles, without "
            "shuffling. Cards on the foundations stay there."
        )),
        ("How it is won", (
            "Won when all 64 cards are on the foundations. When no move is left that could ever "
            "bring another card home, the game is over (stuck) and the cards home count."
        )),
    ),
}

# The picture: how many moves into which deal, dealt with this key (never the server's).
EXAMPLE_SECRET: Final = b"solitaire-race rules example"
EXAMPLE_DEAL: Final = 7
EXAMPLE_MOVES: Final[dict[str, int]] = {"clock": 14, "parallels": 14, "patriarchs": 12}
DEFAULT_EXAMPLE_MOVES: Final = 6
_PREFERRED = (Kind.HOME, Kind.PLAY, Kind.BUILD, Kind.STOCK)  # never a redeal, an exchange or a shift


def example_line(game: Game[Any], count: int) -> tuple[Any, list[str]]:
    """The position after up to ``count`` moves of a plain line from the example deal (a
    card home when one can go, else Clock's play, a build that is no shuttle, the stock),
    and those moves in the game's notation."""
    state = game.deal(EXAMPLE_DEAL, EXAMPLE_SECRET)
    line: list[str] = []
    for _ in range(count):
        moves = [m for m in game.legal_moves(state) if not game.is_shuttle(state, m)]
        choice = next((m for kind in _PREFERRED for m in moves if m.kind is kind), None)
        if choice is None:
            break
        state = game.apply(state, choice)
        line.append(game.format_move(choice))
    return state, line


@functools.cache
def rules_page(game: Game[Any]) -> dict[str, Any]:
    """A game's rules page: name, summary, sections, what par means, and the picture (the
    player's view of a real position, with the deal and the moves that led to it)."""
    state, line = example_line(game, EXAMPLE_MOVES.get(game.id, DEFAULT_EXAMPLE_MOVES))
    return {
        "game": game.id,
        "name": game.name,
        "summary": game.summary,
        "sections": [{"title": title, "text": text} for title, text in RULES.get(game.id, ())],
        "racing": RACING,
        "par": PAR,
        "example": {"deal": EXAMPLE_DEAL, "moves": line, "view": game.view(state)},
    }

"""Player names: what a name may be, its one stored form, and when two names are the same.

The rules (docs/protocol.md, "Names"), applied by the service to every name a ``hello``
brings and by migration 0008 to the names stored before them:

- **One form.** A name is kept in NFKC (full-width ``ａｎｎ`` is ``ann``), without
  variation selectors U+FE0E/U+FE0F (emoji keyboards add them), every run of spaces as one
  space, and no space at either end (``normalize``).
- **Length.** 1 to ``NAME_MAX_LENGTH`` characters in that form (the wire allows
  ``SENT_MAX_LENGTH``, so that a name typed decomposed or with spaces to spare still fits).
- **Only visible characters.** Refused, each with a message naming it: control characters
  (Cc: NUL, newline, ESC, so terminal escape sequences too), format characters (Cf:
  zero-width spaces and joiners, bidirectional overrides and isolates, ...), surrogates,
  private-use and unassigned code points, line and paragraph separators, every other
  Default_Ignorable_Code_Point (Hangul fillers, variation selectors but the two dropped
  above) and the blank braille pattern U+2800; a combining mark at the start, more than
  ``MAX_MARKS`` combining marks on one character, or the same mark twice in a row.
- **Same name.** Two names are the same when their ``name_key`` is: the UTS #39 skeleton
  (``confusables.py``) of the case-folded skeleton. So ``Ann``, ``ANN``, ``аnn`` (Cyrillic
  а) and ``ａｎｎ`` are one name, and so are ``bob`` and ``b0b`` (the key also ignores
  invisible characters, which a name cannot have anyway). The store keeps the key in a
  unique column: the database, not a read before the write, decides who gets a name
  (docs/database.md).

Pure: no I/O, no SQLAlchemy (the migration and the store import it).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator

from .confusables import is_default_ignorable, skeleton

NAME_MAX_LENGTH = 32  # characters, in the stored form
SENT_MAX_LENGTH = 64  # characters, as a hello sends it (protocol.Name)
MAX_MARKS = 4  # combining marks on one character (UTS #39's optional checks: more is suspect)

_DROPPED = {0xFE0E: None, 0xFE0F: None}  # text / emoji presentation selectors
_BLANK = frozenset("\u2800")  # BRAILLE PATTERN BLANK: visible as nothing, yet not ignorable
_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible formatting character",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


class BadName(ValueError):
    """A name the rules refuse; the message says why, for people (never echoing the name)."""


def describe(char: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a character named safely, whatever it is."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def _refusal(char: str) -> str | None:
    """Why ``char`` cannot be in a name, or None if it can."""
    kind = _KINDS.get(unicodedata.category(char))
    if kind is not None:
        return kind
    if is_default_ignorable(char) or char in _BLANK:
        return "an invisible character"
    return None


def normalize(text: str) -> str:
    """The stored form of ``text``: NFKC, no U+FE0E/U+FE0F, spaces collapsed and trimmed.
    Refuses nothing: ``check_name`` does."""
    text = unicodedata.normalize("NFKC", text).translate(_DROPPED)
    # After NFKC every kind of space is a Zs character (tabs and newlines are controls).
    spaced = "".join(" " if unicodedata.category(c) == "Zs" else c for c in text)
    return " ".join(part for part in spaced.split(" ") if part)


def check_name(sent: str) -> str:
    """The stored form of a name as sent, or ``BadName`` saying which rule it breaks."""
    name = normalize(sent)
    if not name:
        raise BadName("a name cannot be blank")
    for char in name:
        why = _refusal(char)
        if why is not None:
            raise BadName(f"a name cannot contain {describe(char)} ({why})")
    if len(name) > NAME_MAX_LENGTH:
        raise BadName(f"a name has at most {NAME_MAX_LENGTH} characters once normalised, not {len(name)}")
    _check_marks(name)
    return name


def _check_marks(name: str) -> None:
    if unicodedata.category(name[0]).startswith("M"):
        raise BadName(f"a name cannot start with a combining mark ({describe(name[0])})")
    run: list[str] = []
    for char in unicodedata.normalize("NFD", name):
        if unicodedata.category(char) not in ("Mn", "Me"):
            run = []
            continue
        if run and run[-1] == char:
            raise BadName(f"a name cannot repeat a combining mark ({describe(char)})")
        run.append(char)
        if len(run) > MAX_MARKS:
            raise BadName(f"a name has at most {MAX_MARKS} combining marks on one character")


def name_key(name: str) -> str:
    """The key that is equal for names that look the same, ignoring case.

    The UTS #39 skeleton, case-folded, and the skeleton of that again: the first skeleton
    maps capital ``I`` to ``l`` before case folding would make it an ``i`` (``Iike`` looks
    like ``like``); the second maps what folding made (``ſ`` -> ``s``, ``ß`` -> ``ss``)."""
    return skeleton(skeleton(unicodedata.normalize("NFKC", name)).casefold())


# --- names stored before these rules (migration 0008) ---------------------------------------
def repair(stored: str) -> str | None:
    """A name stored before these rules, in their form: refused characters dropped (a
    control character such as a newline or a tab counts as a space), then ``check_name``.
    None when nothing acceptable is left."""
    text = unicodedata.normalize("NFKC", stored)
    kept = "".join(" " if c.isspace() else "" if _refusal(c) else c for c in text)
    kept = normalize(kept)
    while kept and unicodedata.category(kept[0]).startswith("M"):
        kept = kept[1:].lstrip()
    kept = kept[:NAME_MAX_LENGTH].rstrip()
    try:
        return check_name(kept)
    except BadName:
        return None


def _candidates(player_id: int, repaired: str | None) -> Iterator[str]:
    """Names to try, in order, for a stored player (see ``assign``)."""
    if repaired is not None:
        yield repaired
        suffix = f" #{player_id}"
        yield repaired[: NAME_MAX_LENGTH - len(suffix)].rstrip() + suffix
    yield f"player #{player_id}"
    n = 2
    while True:
        yield f"player #{player_id}-{n}"
        n += 1


def assign(players: Iterable[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """For the players stored before these rules, oldest (smallest id) first: each one's
    name in the new form and its key, every key distinct.

    Each name is ``repair``-ed (a valid one only takes the stored form). When its key is
    already taken by an older player (``Ann`` after ``ann``, ``аnn`` after ``ann``), the
    player's id is added (``Ann #7``); a name with nothing acceptable left becomes
    ``player #<id>``. The oldest keeps a name: they had it first."""
    taken: set[str] = set()
    out = []
    for player_id, stored in players:
        for candidate in _candidates(player_id, repair(stored)):
            key = name_key(candidate)
            if key not in taken:
                break
        taken.add(key)
        out.append((player_id, candidate, key))
    return out

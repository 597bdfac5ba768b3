"""Compact view updates: what changed between two views of one game, and applying it.

A ``move_result`` carries ``changes`` instead of the whole view (docs/protocol.md): the
piles a move touched, not all of them. The format is game-agnostic, so every client
applies it with the same few lines: a list of entries ``[key, value]`` (the view's
``key`` is now ``value``) or ``[key, index, value]`` (item ``index`` of the list at
``key`` is now ``value``), applied in order. Pure functions over JSON-like data; the
engine's games (``Game.view_changes``), the terminal client and the bots share them, and
``client/web/js/view-changes.js`` is the browser's copy. ``diff({}, view)`` is the whole
view as changes, every field whole: what the room sends when it cannot know which view
the client has (``Room.resync``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

Change = list[Any]
T = TypeVar("T")


def diff(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """The changes that turn ``old`` into ``new`` (two views of the same game)."""
    out: list[Change] = []
    for key, value in new.items():
        before = old.get(key, _MISSING)
        if before == value:  # one comparison in C for the common case: unchanged
            continue
        # A list of the same length (piles, rows, foundations): only the items that changed.
        if type(value) is list and type(before) is list and len(before) == len(value):
            for i in range(len(value)):
                if before[i] != value[i]:
                    out.append([key, i, value[i]])
        else:
            out.append([key, value])
    return out


def item_changes(key: str, before: Sequence[T], after: Sequence[T], render: Callable[[T], Any]) -> list[Change]:
    """What ``diff`` gives for the view's list at ``key``, from the parts of two states that
    the list's items are rendered from (``render``), rendering only the items that changed.
    A move makes new tuples only for the piles it touches and shares the rest, so an
    untouched pile costs one identity test."""
    if len(before) != len(after):
        return [[key, [render(item) for item in after]]]
    return [
        [key, i, render(after[i])] for i in range(len(after)) if before[i] is not after[i] and before[i] != after[i]
    ]


def apply(view: Mapping[str, Any], changes: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A new view: ``view`` with ``changes`` applied (``view`` itself is left as it was).

    Raises ``ValueError`` for changes that do not fit the view: a client's view is out of
    step with the server's, and it should ask for the whole view again (rejoin)."""
    out = dict(view)
    copied: set[str] = set()  # lists already copied from ``view``: theirs to change in place
    for change in changes:
        if len(change) == 2:
            out[change[0]] = change[1]
            copied.discard(change[0])  # the change's own value: copied before any item changes
        elif len(change) == 3:
            key, index, value = change
            items = out.get(key)
            if type(items) is not list or type(index) is not int or not 0 <= index < len(items):
                raise ValueError(f"no item {index!r} in the view's {key!r}")
            if key not in copied:
                items = out[key] = list(items)
                copied.add(key)
            items[index] = value
        else:
            raise ValueError(f"a change has 2 or 3 parts, not {len(change)}: {change!r}")
    return out


_MISSING = object()

"""view_changes: the compact view updates of move_result (docs/protocol.md, view changes).

Every game's views are covered by the conformance test's playouts; these pin the format
and the refusals."""

from __future__ import annotations

import pytest

from solitaire_race.engine import view_changes

VIEW = {"game": "g", "piles": [["AS"], ["2H", "3H"], []], "redeals": 0, "free": ["c1"]}


def test_only_changed_items_and_fields() -> None:
    new = {**VIEW, "piles": [["AS"], ["2H"], ["3H"]], "redeals": 1, "free": ["c1", "c2"]}
    changes = view_changes.diff(VIEW, new)
    assert changes == [["piles", 1, ["2H"]], ["piles", 2, ["3H"]], ["redeals", 1], ["free", ["c1", "c2"]]]
    assert view_changes.apply(VIEW, changes) == new
    assert VIEW["piles"] == [["AS"], ["2H", "3H"], []], "the old view is left as it was"
    assert view_changes.diff(VIEW, dict(VIEW)) == []


def test_a_whole_field_then_an_item_of_it() -> None:
    changes: list[view_changes.Change] = [["free", ["c3", "c4"]], ["free", 1, "c5"]]
    assert view_changes.apply(VIEW, changes)["free"] == ["c3", "c5"]
    assert changes[0] == ["free", ["c3", "c4"]], "the changes are left as they were"


@pytest.mark.parametrize(
    "changes",
    [
        [["piles", 3, []]], [["piles", -1, []]], [["redeals", 0, 1]],
        [["piles", "1", []]], [["game"]], [["piles", 0, 1, 2]],
    ],
)
def test_changes_that_do_not_fit_are_refused(changes: list[list[object]]) -> None:
    with pytest.raises(ValueError):
        view_changes.apply(VIEW, changes)


@pytest.mark.parametrize(
    "before, after",
    [
        ([(1, 2), (3,), ()], [(1, 2), (3, 4), ()]),  # one pile changed
        ([(1, 2), (3,)], [(1, 2), (3,)]),  # equal piles, new tuples: nothing to send
        ([(1,), (2,)], [(1,), (2,), (3,)]),  # a new row dealt: the whole list
        ([(1,), (2,)], [(1,)]),
    ],
)
def test_item_changes_are_what_diff_gives_for_the_rendered_lists(
    before: list[tuple[int, ...]], after: list[tuple[int, ...]]
) -> None:
    def render(pile: tuple[int, ...]) -> list[str]:
        return [str(card) for card in pile]

    expected = view_changes.diff({"piles": [render(p) for p in before]}, {"piles": [render(p) for p in after]})
    assert view_changes.item_changes("piles", before, after, render) == expected

"""What a board must show, from the engine's player view: the face-up cards by zone (the same
zones ``racer.ZONES_JS`` reads from the page), and how to make a move with the mouse."""

from __future__ import annotations

import re
from typing import Any

CARD = re.compile(r"^[A2-9TJQK][SHDC]$")


def expected_zones(view: dict[str, Any]) -> dict[str, list[str]]:
    """Zone → face-up card codes, bottom to top; "f" (all foundation tops) is sorted."""
    game = view["game"]
    zones: dict[str, list[str]] = {}
    foundations: list[str] = []
    if game in ("perseverance", "perseverance-a", "cruel", "persian-patience"):
        zones = {f"p{i + 1}": list(pile) for i, pile in enumerate(view["piles"]) if pile}
        foundations = [top for top in view["foundations"] if top]
    elif game == "clock":
        zones = {f"h{p['hour']}": list(p["face_up"]) for p in view["piles"] if p["face_up"]}
        if view["hand"]:
            zones["hand"] = [view["hand"]]
    elif game == "parallels":
        for r, row in enumerate(view["rows"]):
            for c, code in enumerate(row):
                if code:
                    zones[f"s:{'abcdefghij'[c]}{r + 1}"] = [code]
        foundations = [f["top"] for f in view["foundations"]]
    elif game == "patriarchs":
        zones = {f"s:{i + 1}": [code] for i, code in enumerate(view["tableau"]) if code}
        if view["waste_top"]:
            zones["waste"] = [view["waste_top"]]
        foundations = [f["top"] for f in view["foundations"]]
    else:
        raise AssertionError(f"no zones for {game}")
    if foundations:
        zones["f"] = sorted(foundations)
    return zones


def normalized(zones: dict[str, list[str]]) -> dict[str, list[str]]:
    return {k: sorted(v) if k == "f" else v for k, v in zones.items()}


def gesture(move: str) -> tuple[str, str | None]:
    """The board selectors for a move in canonical notation: (what to pick up or press, where
    to put it, or None for a one-step move such as a button or a tap)."""
    if move in ("r", "s", "p"):
        return (f"button[data-move='{move}']", None) if move == "r" else (f"[data-tap='{move}']", None)
    if m := re.fullmatch(r"(\d+)>f", move):
        return f"[data-src='p{m[1]}']", ".foundations"
    if m := re.fullmatch(r"(\d+)>(\d+)", move):
        return f"[data-src='p{m[1]}']", f"[data-dst='p{m[2]}']"
    if m := re.fullmatch(r"x(\d+)\.(\d+)", move):
        return "[data-src='hand']", f"[data-dst='x{m[1]}.{m[2]}']"
    if m := re.fullmatch(r"([SHDC]):([AK])>([AK])", move):
        return f"[data-src='fnd-{m[2]}:{m[1]}']", f"[data-dst='{m[3]}:{m[1]}']"
    if m := re.fullmatch(r"([a-j]\d+|[1-9]|w)>([AK])", move):
        src = m[1] if m[1][0].isalpha() and m[1] != "w" else ("w" if m[1] == "w" else f"t{m[1]}")
        # the foundation of the card's own suit: the page fills in {suit} from the card picked up
        return f"[data-src='{src}']", f"[data-dst='{m[2]}:{{suit}}']"
    raise AssertionError(f"no gesture for {move!r}")

"""The confusable skeleton of Unicode Technical Standard #39 (section 4), from its data.

``skeleton(text)`` is what UTS #39 calls ``internalSkeleton``: two strings that look alike
(Cyrillic ``а`` and Latin ``a``, ``ℓ`` and ``l``, ``rn`` and ``m``) have the same skeleton.
It is a key for comparing, never a text to show. The algorithm:

1. the text in NFD;
2. without its Default_Ignorable_Code_Point characters (zero-width spaces, joiners,
   variation selectors, bidirectional controls, Hangul fillers...);
3. each character replaced by its prototype from ``confusables.txt``;
4. the result in NFD again.

The mapping is Unicode's own data file, ``data/confusables.txt``, shipped unchanged
(version 18.0.0, 2026-08-06; SHA-256 checked by ``tests/test_names.py``). No package on
PyPI computes this skeleton from current data: ``confusable-homoglyphs`` finds mixed-script
homoglyphs but has no skeleton, ``confusables`` ships Unicode 13 data with additions of its
own and returns every possible normalisation, not the skeleton (README, dependency table).

Pure: no I/O but reading the data file once, on first use.
"""

from __future__ import annotations

import functools
import unicodedata
from pathlib import Path

DATA_FILE = Path(__file__).parent / "data" / "confusables.txt"

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt (as of Unicode
# 15.0; its ranges also cover code points kept for future invisible characters). Python's
# unicodedata does not expose the property.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)  # fmt: skip


def is_default_ignorable(char: str) -> bool:
    """Whether ``char`` has Unicode's Default_Ignorable_Code_Point property (invisible)."""
    point = ord(char)
    return any(low <= point <= high for low, high in DEFAULT_IGNORABLE)


def parse(text: str) -> dict[int, str]:
    """``confusables.txt`` as a ``str.translate`` table: code point -> its prototype.

    Each data line is ``source ; target ; MA # comment``: one code point in hex, then the
    prototype as code points in hex separated by spaces."""
    table: dict[int, str] = {}
    for line in text.splitlines():
        data = line.split("#", 1)[0].strip()  # the comment may hold ';' itself
        if not data:
            continue
        source, target, *_ = (field.strip() for field in data.split(";"))
        table[int(source, 16)] = "".join(chr(int(point, 16)) for point in target.split())
    return table


@functools.cache
def prototypes() -> dict[int, str]:
    """The mapping of the shipped data file, read once."""
    return parse(DATA_FILE.read_text(encoding="utf-8"))


@functools.cache
def _ignorables() -> dict[int, None]:
    """A ``str.translate`` table deleting every assigned Default_Ignorable_Code_Point up to
    the plane-14 ranges (the whole property, as a table: one C-level pass per string)."""
    return {point: None for low, high in DEFAULT_IGNORABLE for point in range(low, high + 1)}


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text``: equal for strings that look alike."""
    decomposed = unicodedata.normalize("NFD", text).translate(_ignorables())
    return unicodedata.normalize("NFD", decomposed.translate(prototypes()))

"""The name rules (names.py), the UTS #39 skeleton and its data (confusables.py), and
the ``assign``-ment of stored names that migration 0008 applies: pure functions, no server."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solitaire_race import confusables, names

HOSTILE = "\x1b]0;pwned\x07\x1b[2J"  # sets the terminal's title, then clears the screen
INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})  # categories no name may hold
CONFUSABLES_SHA256 = "6ed3ee967c9dfdf6677d563c9985182fbc50a2efb7d6059cd57b2e2ce18f5b92"  # Unicode's 18.0.0 file


# --- confusables.txt and the skeleton -----------------------------------------------------
def test_the_data_file_is_unicodes_confusables_txt_unchanged() -> None:
    raw = confusables.DATA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == CONFUSABLES_SHA256
    header = raw.decode("utf-8").splitlines()[:10]
    assert "# Version: 18.0.0" in header and "# confusables.txt" in header
    assert len(confusables.prototypes()) == 6712  # "# total: 6712" at its end


def test_parse_reads_sources_targets_and_semicolons_in_comments() -> None:
    text = (
        "# header\n\n"
        "0430 ;\t0061 ;\tMA\t# ( а → a )\n"
        "FF1B ;\t003B ;\tMA\t#* ( ； → ; ) FULLWIDTH SEMICOLON\n"
        "217F ;\t0072 006E ;\tMA\n"
    )
    assert confusables.parse(text) == {0x430: "a", 0xFF1B: ";", 0x217F: "rn"}


@pytest.mark.parametrize(("text", "expected"), [
    ("paypal", "paypal"),
    ("\U0001d52d\U0001d4b6\u1eff\U0001d561\U0001d552\u2113", "paypal"),  # UTS #39's own example
    ("\u0430nn", "ann"),  # Cyrillic а
    ("modern", "rnodern"),
    ("b0b", "bOb"),
    ("a\u200bb\u034fc", "abc"),  # Default_Ignorable_Code_Point characters are dropped
])  # fmt: skip
def test_skeleton(text: str, expected: str) -> None:
    assert confusables.skeleton(text) == expected


def test_skeleton_is_idempotent_on_every_prototype() -> None:
    for target in confusables.prototypes().values():
        assert confusables.skeleton(confusables.skeleton(target)) == confusables.skeleton(target)


def test_default_ignorables_are_the_unicode_property() -> None:
    # Spot checks across the ranges (the table is DerivedCoreProperties.txt's).
    points = (0xAD, 0x34F, 0x115F, 0x180E, 0x200B, 0x200D, 0x202E, 0x2066, 0x3164, 0xFE0F, 0xFEFF, 0xE0001, 0xE01EF)
    for point in points:
        assert confusables.is_default_ignorable(chr(point)), hex(point)
    for char in "aZ0 \u00a0\u0301é€❤\U0001f600":
        assert not confusables.is_default_ignorable(char), hex(ord(char))


# --- what a name may be ----------------------------------------------------------------------
@pytest.mark.parametrize(("sent", "kept"), [
    ("ann", "ann"),
    ("  ann   B.  ", "ann B."),
    ("\u00a0ann\u3000bob\u2003", "ann bob"),  # any Unicode space, collapsed
    ("\uff41\uff4e\uff4e", "ann"),  # full-width letters: NFKC
    ("Zoe\u0308", "Zo\u00eb"),  # decomposed: composed
    ("\u2764\ufe0f ann", "\u2764 ann"),  # the emoji presentation selector is dropped
    ("\u0e01\u0e34\u0e48", "\u0e01\u0e34\u0e48"),  # Thai marks on a consonant
    ("n" * 32, "n" * 32),
    ("  " + "n" * 30 + "   x ", "n" * 30 + " x"),  # 37 sent, 32 kept
    ("Nguye\u0302\u0303n Thi\u0323 Thanh Ta\u0302m Va\u0306n", "Nguyễn Thị Thanh Tâm Văn"),  # 37 sent decomposed
])  # fmt: skip
def test_names_are_kept_in_one_form(sent: str, kept: str) -> None:
    assert names.check_name(sent) == kept


@pytest.mark.parametrize(("sent", "why"), [
    ("   ", "blank"),
    ("\u3000\u00a0", "blank"),
    ("ann\x00", r"U\+0000 \(a control character\)"),
    ("ann\nbob", r"U\+000A \(a control character\)"),
    ("ann\tbob", r"U\+0009"),
    (HOSTILE, r"U\+001B \(a control character\)"),
    ("ann\x9b2J", r"U\+009B"),  # C1 CSI
    ("ann\u200b", r"U\+200B ZERO WIDTH SPACE \(an invisible formatting character\)"),
    ("a\u200dnn", r"U\+200D ZERO WIDTH JOINER"),
    ("\u202eann", r"U\+202E RIGHT-TO-LEFT OVERRIDE"),
    ("\u2066ann\u2069", r"U\+2066 LEFT-TO-RIGHT ISOLATE"),
    ("\ufeffann", r"U\+FEFF"),
    ("an\u00adn", r"U\+00AD SOFT HYPHEN"),
    ("ann\U000e0041", r"U\+E0041 TAG LATIN CAPITAL LETTER A"),
    ("ann\ue000", r"private-use"),
    ("ann\ud800", r"a surrogate"),
    ("ann\u0378", r"an unassigned character"),
    ("ann\u2028bob", r"a line separator"),
    ("ann\u2029", r"a paragraph separator"),
    ("\u3164", r"U\+1160 HANGUL JUNGSEONG FILLER \(an invisible character\)"),  # U+3164 in NFKC
    ("ann\u034f", r"U\+034F COMBINING GRAPHEME JOINER \(an invisible character\)"),
    ("ann\ufe00", r"U\+FE00"),
    ("\u2800", r"U\+2800 BRAILLE PATTERN BLANK"),
    ("\u0301ann", r"start with a combining mark"),
    ("a" + "\u0301\u0302\u0303\u0304\u0306" + "nn", r"at most 4 combining marks"),
    ("a\u0301\u0301nn", r"repeat a combining mark"),
    ("n" * 33, r"at most 32 characters once normalised, not 33"),
    ("\ufdfa\ufdfa", r"at most 32 characters once normalised, not 36"),  # 2 sent, 36 in NFKC
])  # fmt: skip
def test_names_with_invisible_or_controlling_characters_are_refused(sent: str, why: str) -> None:
    with pytest.raises(names.BadName, match=why) as refusal:
        names.check_name(sent)
    assert str(refusal.value).isprintable()  # never echoes the name


# --- when two names are the same ---------------------------------------------------------------
@pytest.mark.parametrize("group", [
    ["ann", "Ann", "ANN", "\u0430nn", "\uff41\uff4e\uff4e", "\u0410NN"],  # Latin, Cyrillic а and А, full-width
    ["like", "Iike", "\u04cfike", "1ike"],  # capital I, Cyrillic palochka, the digit one
    ["bob", "b0b", "BOB", "b\u043eb"],  # the digit zero, Cyrillic о
    ["Stra\u00dfe", "STRASSE", "strasse"],
    ["Zo\u00eb", "Zoe\u0308", "ZO\u00cb"],
    ["modern", "rnodern"],
    ["ann bob", "ann  bob", "Ann Bob"],
])  # fmt: skip
def test_names_that_look_the_same_have_one_key(group: list[str]) -> None:
    keys = {names.name_key(names.check_name(name)) for name in group}
    assert len(keys) == 1, keys


@pytest.mark.parametrize(
    ("one", "other"), [("ann", "anne"), ("ann", "\u00e1nn"), ("ann", "an"), ("bob", "bop"), ("ann", "ann2")]
)
def test_names_that_look_different_have_different_keys(one: str, other: str) -> None:
    assert names.name_key(one) != names.name_key(other)


def test_keys_fit_their_column() -> None:
    from solitaire_race.store.records import NAME_KEY_MAX_LENGTH

    widest = max(
        (
            chr(p)
            for p in range(0x110000)
            if not 0xD800 <= p <= 0xDFFF and unicodedata.category(chr(p)) in ("Lo", "So", "Lu", "Ll")
        ),
        key=lambda c: len(names.name_key(c)) / max(1, len(unicodedata.normalize("NFKC", c))),
    )
    name = (unicodedata.normalize("NFKC", widest) * 32)[: names.NAME_MAX_LENGTH]
    assert len(names.name_key(names.check_name(name))) <= NAME_KEY_MAX_LENGTH


# --- properties over any text ------------------------------------------------------------------
@settings(max_examples=400, deadline=None)
@given(st.text(max_size=names.SENT_MAX_LENGTH))
def test_an_accepted_name_is_visible_normal_and_stable(sent: str) -> None:
    try:
        name = names.check_name(sent)
    except names.BadName:
        return
    assert 1 <= len(name) <= names.NAME_MAX_LENGTH and name == name.strip() and "  " not in name
    assert unicodedata.normalize("NFKC", name) == name
    assert all(unicodedata.category(c) not in INVISIBLE for c in name)
    assert names.check_name(name) == name  # the stored form is accepted as it is


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=12))
def test_stored_names_are_each_given_an_accepted_name_and_a_distinct_key(stored: list[str]) -> None:
    plan = names.assign(list(enumerate(stored, start=1)))
    assert [player_id for player_id, _, _ in plan] == list(range(1, len(stored) + 1))
    assert len({key for _, _, key in plan}) == len(plan)
    for _, name, key in plan:
        assert names.check_name(name) == name and names.name_key(name) == key


def test_stored_names_before_the_rules() -> None:
    stored = [
        (1, "ann"),
        (2, "Ann"),  # looks like 1's: gets its id
        (3, "\u0430nn"),  # Cyrillic а: looks like 1's
        (4, "bob" + HOSTILE),  # the escape sequence goes, the rest stays
        (5, "\u200b\u202e"),  # nothing visible: player #5
        (6, "\uff43arol  x"),  # valid: its stored form
        (7, "ann\u200b"),  # repaired to ann, which looks like 1's
        (8, "n" * 29 + "\u00e0"),  # long and taken below: the id replaces its end
        (9, "n" * 29 + "a\u0300"),
        (10, "player #5"),  # valid, but taken by 5 meanwhile
    ]
    assert names.assign(stored) == [
        (1, "ann", "ann"),
        (2, "Ann #2", "ann #2"),
        (3, "\u0430nn #3", "ann #3"),
        (4, "bob]0;pwned[2J", "bob]o;pwned[2j"),
        (5, "player #5", "player #5"),
        (6, "carol x", "carol x"),
        (7, "ann #7", "ann #7"),
        (8, "n" * 29 + "\u00e0", "n" * 29 + "a\u0300"),
        (9, "n" * 29 + " #9", "n" * 29 + " #9"),
        (10, "player #5 #10", "player #5 #lo"),
    ]

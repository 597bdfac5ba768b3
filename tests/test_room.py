"""The race room state machine, fed directly: no sockets, no clock but the one passed in."""

from __future__ import annotations

from typing import Any

import pytest

from solitaire_race.engine import IllegalMove, Outcome, get_game, view_changes
from solitaire_race.results import RacerOutcome
from solitaire_race.room import (
    MAX_MOVES_PER_RACER,
    CheckStuck,
    LogMoves,
    Room,
    RoomError,
    SaveResults,
    Score,
    Send,
    Series,
    Status,
)

from .support import searched_line, winnable_deal

SECRET = b"test-secret"
GAME = "cruel"
DEAL, WINNING_LINE = winnable_deal(GAME, SECRET)


def make_room(**kw: Any) -> Room:
    args: dict[str, Any] = dict(
        race_id=1, code="BCDFGH", game=get_game(GAME), deal_number=DEAL, secret=SECRET,
        private=True, creator_id=1, time_limit_s=600, countdown_s=3.0, max_players=8,
        link="http://x/join/BCDFGH", leave_grace_s=60.0,
    )
    args.update(kw)
    return Room(**args)


def sends(effects: list[Any], to: int | None = None, type_: str | None = None) -> list[dict[str, Any]]:
    return [
        e.message for e in effects
        if isinstance(e, Send) and (to is None or to in e.to) and (type_ is None or e.message["type"] == type_)
    ]


def running_room(players: int = 2, **kw: Any) -> tuple[Room, list[Any]]:
    room = make_room(**kw)
    for pid in range(1, players + 1):
        room.join(pid, f"p{pid}", now=0.0)
    room.start(1, now=1.0)
    effects = room.tick(now=4.0)
    assert room.status is Status.RUNNING
    return room, effects


def test_lobby_join_ready_countdown_and_identical_deal() -> None:
    room = make_room()
    e = room.join(1, "ann", now=0.0)
    assert sends(e, 1, "room")[0]["race"]["players"] == [{"id": 1, "name": "ann", "ready": False, "connected": True}]
    e = room.join(2, "bob", now=0.5)
    assert len(sends(e, 1, "room")) == 1 and len(sends(e, 2, "room")) == 1  # everyone sees who is in
    room.set_ready(1, True, now=1.0)
    assert room.status is Status.LOBBY
    e = room.set_ready(2, True, now=2.0)  # all ready: the countdown starts
    room = room  # mypy keeps room.status narrowed across the call above: forget it
    assert room.status is Status.COUNTDOWN and room.deadline() == 5.0
    assert sends(e, 2, "countdown")[0]["starts_in_ms"] == 3000
    assert room.tick(now=4.999) == []  # not yet
    e = room.tick(now=5.0)
    views = [sends(e, pid, "race_started")[0]["view"] for pid in (1, 2)]
    assert views[0] == views[1] == get_game(GAME).view(get_game(GAME).deal(DEAL, SECRET))
    opponents = sends(e, 1, "race_started")[0]["opponents"]  # the first racer sees the later ones
    assert [(o["player_id"], o["home"], o["total"]) for o in opponents] == [(2, 4, 52)]


def test_only_the_creator_starts_and_no_join_after_start() -> None:
    room = make_room()
    room.join(1, "ann", 0.0)
    room.join(2, "bob", 0.0)
    with pytest.raises(RoomError) as exc:
        room.start(2, 1.0)
    assert exc.value.code == "not_creator"
    room.start(1, 1.0)
    with pytest.raises(RoomError) as exc:
        room.join(3, "cat", 1.5)
    assert exc.value.code == "race_started"


def test_room_full() -> None:
    room = make_room(max_players=2)
    room.join(1, "a", 0.0)
    room.join(2, "b", 0.0)
    with pytest.raises(RoomError) as exc:
        room.join(3, "c", 0.0)
    assert exc.value.code == "room_full"


def test_creator_leaving_the_lobby_passes_the_role_on() -> None:
    room = make_room()
    room.join(1, "a", 0.0)
    room.join(2, "b", 0.0)
    e = room.leave(1, 1.0)
    assert room.creator_id == 2 and sends(e, 2, "room")[0]["race"]["creator_id"] == 2
    room.leave(2, 2.0)
    assert room.status is Status.FINISHED  # abandoned


def test_moves_before_start_are_refused() -> None:
    room = make_room()
    room.join(1, "a", 0.0)
    with pytest.raises(RoomError) as exc:
        room.play(1, ["1>f"], 0.5)
    assert exc.value.code == "race_not_running"


def test_a_racer_makes_at_most_max_moves_in_a_race() -> None:
    room, _ = running_room(players=1)
    racer = room.racers[1]
    racer.log.extend(["(earlier)"] * (MAX_MOVES_PER_RACER - 1))  # as if played: the bound counts the log
    state = racer.state
    with pytest.raises(RoomError) as exc:
        room.play(1, list(WINNING_LINE[:2]), 5.0)  # one past the bound: refused whole
    assert exc.value.code == "not_allowed" and f"{MAX_MOVES_PER_RACER:,}" in exc.value.message
    assert racer.state is state and len(racer.log) == MAX_MOVES_PER_RACER - 1
    played = room.play(1, list(WINNING_LINE[:1]), 5.0)  # the last one allowed
    assert played.answer.message["applied"] == list(WINNING_LINE[:1]) and len(racer.log) == MAX_MOVES_PER_RACER


def durable(room: Room, effects: list[Any]) -> list[Any]:
    """What the service does with a LogMoves: make it durable, then tell the room."""
    for effect in effects:
        if isinstance(effect, LogMoves):
            room.logged(effect)
    return effects


def test_legal_move_applies_and_progress_goes_to_the_others() -> None:
    room, _ = running_room()
    e = room.play(1, [WINNING_LINE[0]], now=5.0).effects
    reply = sends(e, 1, "move_result")[0]
    assert reply["applied"] == [WINNING_LINE[0]] and reply["rejected"] is None
    assert reply["elapsed_ms"] == 1000  # server clock: started at 4.0
    assert not sends(e, 2, "progress") and not sends(e, 2, "standings")  # coalesced: sent at the next flush
    assert room.flush_progress() == []  # and only once the moves are durable
    durable(room, e)
    durable(room, room.play(1, [WINNING_LINE[1]], now=5.05).effects)
    room.play(1, [WINNING_LINE[2]], now=5.06)  # not durable yet: not published
    flushed = room.flush_progress()
    # One frame for the whole room, the same for everyone, with one entry for both moves.
    assert len(flushed) == 1 and isinstance(flushed[0], Send) and set(flushed[0].to) == {1, 2}
    (standings,) = sends(flushed, 2, "standings")
    assert [(r["player_id"], r["moves"], r["outcome"]) for r in standings["racers"]] == [(1, 2, "playing")]
    assert "view" not in standings["racers"][0] and "state" not in standings["racers"][0]  # never your cards
    assert room.flush_progress() == [] and not room.has_pending_progress


def test_standings_carry_every_racer_who_moved_since_the_last_flush() -> None:
    room, _ = running_room()
    durable(room, room.play(1, [WINNING_LINE[0]], now=5.0).effects)
    durable(room, room.play(2, [WINNING_LINE[0]], now=5.01).effects)
    durable(room, room.play(1, [WINNING_LINE[1]], now=5.02).effects)
    (standings,) = sends(room.flush_progress(), 1, "standings")
    assert sorted((r["player_id"], r["moves"]) for r in standings["racers"]) == [(1, 2), (2, 1)]
    durable(room, room.play(2, [WINNING_LINE[1]], now=5.2).effects)
    (standings,) = sends(room.flush_progress(), 2, "standings")
    assert [(r["player_id"], r["moves"]) for r in standings["racers"]] == [(2, 2)]


def test_the_last_progress_goes_out_before_the_ranking() -> None:
    room, _ = running_room()
    room.resign(2, now=5.0)
    room.play(1, list(WINNING_LINE[:40]), now=6.0)
    e = room.play(1, list(WINNING_LINE[40:]), now=7.0).effects
    kinds = [x.message["type"] if isinstance(x, Send) else type(x).__name__ for x in e]
    assert kinds == ["LogMoves", "move_result", "standings", "SaveResults"]
    assert sends(e, 2, "standings")[0]["racers"][0]["outcome"] == "won"


def test_illegal_move_rejected_with_reason_and_no_effect() -> None:
    room, _ = running_room()
    before = room.racers[1].state
    e = room.play(1, ["12>1"] if "12>1" not in WINNING_LINE[:1] else ["1>12"], now=5.0).effects
    reply = sends(e, 1, "move_result")[0]
    assert reply["applied"] == [] and reply["rejected"]["code"] == "illegal_move"
    assert "cannot go on" in reply["rejected"]["reason"] or "needs" in reply["rejected"]["reason"]
    assert room.racers[1].state == before and room.racers[1].log == []
    assert not sends(e, 2)  # nothing to tell the others


def test_batch_stops_at_first_illegal_move_earlier_ones_stay() -> None:
    """docs/games/rules.md: "A client may send several moves in one message; the server applies them in
    order and stops at the first illegal one (earlier ones stay applied)." """
    room, _ = running_room()
    e = room.play(1, [WINNING_LINE[0], "zz", WINNING_LINE[1]], now=5.0).effects
    reply = sends(e, 1, "move_result")[0]
    assert reply["applied"] == [WINNING_LINE[0]]
    assert reply["rejected"]["move"] == "zz" and reply["rejected"]["code"] == "bad_notation"
    assert room.racers[1].log == [WINNING_LINE[0]]


def test_full_race_ranking_saved_before_announced() -> None:
    room, _ = running_room(players=3)
    room.play(3, [WINNING_LINE[0]], now=5.0)
    room.resign(3, now=6.0)
    e = room.play(2, list(WINNING_LINE[:40]), now=7.0).effects
    e = room.play(2, list(WINNING_LINE[40:]), now=9.0).effects  # player 2 wins at 5 s
    assert sends(e, 2, "move_result")[0]["outcome"] == "won"
    assert room.status is Status.RUNNING  # player 1 still racing
    room.play(1, list(WINNING_LINE[:40]), now=13.0)
    e = room.play(1, list(WINNING_LINE[40:]), now=14.0).effects  # player 1 wins at 10 s
    room = room  # mypy keeps room.status narrowed across the calls above: forget it
    assert room.status is Status.CLOSING
    saves = [x for x in e if isinstance(x, SaveResults)]
    assert len(saves) == 1 and not sends(e, type_="race_finished")  # not announced yet
    ranking = [(r.player_id, r.rank, r.outcome, r.time_ms) for r in saves[0].results]
    assert ranking == [(2, 1, "won", 5000), (1, 2, "won", 10000), (3, 3, "resigned", 2000)]
    assert saves[0].results[0].move_log == WINNING_LINE
    e = room.results_saved()
    finished = sends(e, 1, "race_finished")[0]
    assert [r["player_id"] for r in finished["ranking"]] == [2, 1, 3]
    room = room  # mypy keeps room.status narrowed across the calls above: forget it
    assert room.status is Status.FINISHED


def test_game_over_refuses_further_moves() -> None:
    room, _ = running_room()
    room.resign(1, now=5.0)
    with pytest.raises(RoomError) as exc:
        room.play(1, ["1>f"], now=6.0)
    assert exc.value.code == "game_over"


def play_line(room: Room, player_id: int, line: list[str], now: float) -> list[Any]:
    """One move at a time, each made durable; the last move's effects."""
    effects: list[Any] = []
    for i, text in enumerate(line):
        effects = durable(room, room.play(player_id, [text], now=now + i * 0.01).effects)
    return effects


def test_a_position_only_a_search_decides_is_answered_at_once_then_checked() -> None:
    room, _ = running_room()
    line = searched_line(GAME, SECRET, DEAL, Outcome.STUCK)
    effects = play_line(room, 1, line, now=5.0)
    (reply,) = sends(effects, 1, "move_result")
    assert reply["outcome"] == "playing"  # not yet known: the move is not held up by the search
    (check,) = [e for e in effects if isinstance(e, CheckStuck)]
    assert effects.index(check) > effects.index(next(e for e in effects if isinstance(e, Send)))
    assert (check.player_id, check.moves) == (1, len(line))
    assert get_game(GAME).outcome(check.search.start) is Outcome.STUCK

    ended = room.stuck_checked(1, len(line), Outcome.STUCK)
    (progress,) = sends(ended, 2, "progress")
    assert sends(ended, 1, "progress") == [progress]  # the racer learns it with everyone
    last_move_ms = round((5.0 + (len(line) - 1) * 0.01 - 4.0) * 1000)
    assert (progress["outcome"], progress["time_ms"], progress["moves"]) == ("stuck", last_move_ms, len(line))
    with pytest.raises(RoomError) as exc:
        room.play(1, [line[0]], now=9.0)
    assert exc.value.code == "game_over"
    assert room.stuck_checked(1, len(line), Outcome.STUCK) == []  # a second verdict changes nothing

    room.resign(2, now=9.0)  # the last game in play ends: the race closes
    assert room.status is Status.CLOSING


def test_a_check_is_moot_once_the_racer_moved_on_or_found_playing() -> None:
    room, _ = running_room()
    line = searched_line(GAME, SECRET, DEAL, Outcome.PLAYING)
    play_line(room, 1, line, now=5.0)
    game = get_game(GAME)
    state = room.racers[1].state
    onward = next(  # a move on that does not itself end the game
        game.format_move(m) for m in game.legal_moves(state) if game.assess(game.apply(state, m)) is not Outcome.STUCK
    )
    durable(room, room.play(1, [onward], now=6.0).effects)
    assert room.stuck_checked(1, len(line), Outcome.STUCK) == []  # about the position before
    assert room.stuck_checked(1, len(line) + 1, Outcome.PLAYING) == []
    assert not room.racers[1].done

    room2, _ = running_room()
    line = searched_line(GAME, SECRET, DEAL, Outcome.STUCK)
    play_line(room2, 2, line, now=5.0)
    room2.resign(1, now=6.0)
    closing = room2.stuck_checked(2, len(line), Outcome.STUCK)  # the last game in play ends
    assert [e for e in closing if isinstance(e, SaveResults)] and room2.status is Status.CLOSING
    assert {(r.player_id, r.outcome) for r in room2.results} == {(2, "stuck"), (1, "resigned")}


def test_time_limit_closes_the_race_unfinished_ranked_by_progress() -> None:
    room, _ = running_room(time_limit_s=60)
    room.play(2, list(WINNING_LINE[:10]), now=5.0)
    assert room.deadline() == 64.0
    assert room.tick(now=63.0) == []
    e = room.tick(now=64.5)
    results = next(x for x in e if isinstance(x, SaveResults)).results
    assert [(r.player_id, r.outcome, r.time_ms) for r in results] == [(2, "timeout", 60000), (1, "timeout", 60000)]
    assert results[0].home > results[1].home


def test_disconnected_racer_keeps_clock_and_is_marked_left_after_grace() -> None:
    room, _ = running_room()
    room.leave(2, now=10.0)
    assert not room.racers[2].connected and room.deadline() == 70.0
    e = room.join(2, "p2", now=20.0)  # back in time: resumes the same game
    started = sends(e, 2, "race_started")[0]
    assert started["elapsed_ms"] == 16000 and started["view"] == room.game.view(room.racers[2].state)
    room.leave(2, now=30.0)
    room.resign(1, now=31.0)
    e = room.tick(now=90.0)
    results = next(x for x in e if isinstance(x, SaveResults)).results
    assert {r.player_id: r.outcome for r in results} == {1: "resigned", 2: "left"}


def test_moves_are_logged_before_they_are_acknowledged() -> None:
    room, _ = running_room()
    e = room.play(1, list(WINNING_LINE[:3]) + ["zz"], now=5.0).effects
    assert isinstance(e[0], LogMoves) and e[0].player_id == 1
    assert e[0].entries == tuple((i, "move", WINNING_LINE[i], 1000) for i in range(3))
    assert isinstance(e[1], Send) and e[1].message["type"] == "move_result"
    e = room.play(1, ["zz"], now=6.0).effects  # nothing applied: nothing to log
    assert not any(isinstance(x, LogMoves) for x in e)
    e = room.resign(1, now=7.0)
    assert e[0] == LogMoves(1, ((3, "resign", "", 3000),))


def test_restore_rebuilds_the_race_from_its_log() -> None:
    room, _ = running_room(players=3)
    effects = []
    effects += room.play(1, list(WINNING_LINE[:5]), now=5.0).effects
    effects += room.play(2, list(WINNING_LINE[:40]), now=6.0).effects
    effects += room.play(2, list(WINNING_LINE[40:]), now=8.0).effects  # won at 4 s
    effects += room.resign(3, now=9.0)
    logs: dict[int, list[tuple[int, str, str, int]]] = {1: [], 2: [], 3: []}
    for effect in effects:  # what the service wrote to the durable log
        if isinstance(effect, LogMoves):
            logs[effect.player_id] += effect.entries
    again = make_room(max_players=3)
    again.restore(104.0, [(pid, f"p{pid}", logs[pid]) for pid in (1, 2, 3)], now=110.0)
    assert again.status is Status.RUNNING and again.start_at == 104.0
    for pid in (1, 2, 3):
        before, after = room.racers[pid], again.racers[pid]
        assert (after.state, after.log, after.outcome, after.end_ms, after.events) == (
            before.state, before.log, before.outcome, before.end_ms, before.events
        )
    assert again.racers[2].end_ms == 4000 and again.racers[3].end_ms == 5000
    assert not again.racers[1].connected and again.racers[1].gone_since == 110.0
    e = again.play(1, [WINNING_LINE[5]], now=111.0).effects  # the log continues where it stopped
    assert e[0] == LogMoves(1, ((5, "move", WINNING_LINE[5], 7000),))


def test_restore_refuses_a_log_that_does_not_replay() -> None:
    room = make_room()
    with pytest.raises(IllegalMove):
        room.restore(0.0, [(1, "p1", [(0, "move", "1>1", 10)])], now=1.0)
    with pytest.raises(ValueError, match="seq 1 where 0 is due"):  # a gap
        make_room().restore(0.0, [(1, "p1", [(1, "move", WINNING_LINE[0], 10)])], now=1.0)
    repeated = [(0, "move", WINNING_LINE[0], 10), (0, "move", WINNING_LINE[1], 20)]
    with pytest.raises(ValueError, match="seq 0 where 1 is due"):  # the journal does not prevent it
        make_room().restore(0.0, [(1, "p1", repeated)], now=1.0)


def test_every_room_error_code_is_a_protocol_error_code() -> None:
    """The gateway turns RoomError.code into an ErrorCode: an unknown one would be a bug."""
    import inspect
    import re

    from solitaire_race import protocol
    from solitaire_race.room import beyond, room

    source = inspect.getsource(room) + inspect.getsource(beyond)
    codes = set(re.findall(r'RoomError\(\s*"([a-z_]+)"', source))
    assert codes and codes <= {c.value for c in protocol.ErrorCode}


def test_results_are_replayed_before_they_are_saved() -> None:
    import dataclasses

    room, _ = running_room()
    room.play(1, list(WINNING_LINE[:40]), now=5.0)
    room.play(1, list(WINNING_LINE[40:]), now=6.0)
    e = room.resign(2, now=7.0)
    results = next(x for x in e if isinstance(x, SaveResults)).results
    room.verify(results)  # the honest results replay
    won = results[0]
    for forged in (
        dataclasses.replace(won, move_log=won.move_log[:-1]),  # a move missing: not won
        dataclasses.replace(won, move_log=("1>1",) + won.move_log),  # an illegal move
        # no notation (not in the parse cache)
        dataclasses.replace(won, move_log=won.move_log[:5] + ("zz",) + won.move_log[5:]),
        dataclasses.replace(won, moves=won.moves - 3),  # a count that does not match
        dataclasses.replace(results[1], outcome=RacerOutcome.WON),  # a claimed win with no moves
    ):
        with pytest.raises(ValueError):
            room.verify([forged])


def test_move_results_carry_the_changes_to_the_view_the_client_has() -> None:
    """The client's view (race_started, then each move_result's changes) is the room's,
    whatever happened between: refusals, a resume, a takeover (resync), a restart."""
    game = get_game(GAME)
    room, started = running_room()
    client = sends(started, 1, "race_started")[0]["view"]

    def move(texts: list[str], now: float) -> dict[str, Any]:
        nonlocal client
        reply = sends(durable(room, room.play(1, texts, now=now).effects), 1, "move_result")[0]
        client = view_changes.apply(client, reply["changes"])
        assert client == game.view(room.racers[1].state)
        return reply

    first = move([WINNING_LINE[0]], 5.0)
    assert 0 < len(first["changes"]) < len(client), "only what changed"
    assert move(["1>1"], 5.1)["changes"] == []  # refused: nothing changed
    move(list(WINNING_LINE[1:4]), 5.2)

    resumed = room.join(1, "p1", now=5.3)  # a reconnect: the whole view again
    client = sends(resumed, 1, "race_started")[0]["view"]
    move([WINNING_LINE[4]], 5.4)

    room.resync(1)  # a takeover: the old connection may have had replies the new one lacks
    stale = client
    reply = sends(durable(room, room.play(1, [WINNING_LINE[5]], now=5.5).effects), 1, "move_result")[0]
    assert {len(change) for change in reply["changes"]} == {2}, "every field whole"
    assert view_changes.apply({"game": GAME}, reply["changes"]) == view_changes.apply(stale, reply["changes"])
    client = view_changes.apply(stale, reply["changes"])
    assert client == game.view(room.racers[1].state)

    again = make_room()
    entries = [(i, "move", text, 100 * i) for i, text in enumerate(room.racers[1].log)]
    again.restore(0.0, [(1, "p1", entries), (2, "p2", [])], now=10.0)  # a restart: no view known
    assert again.racers[1].shown is None
    after = sends(durable(again, again.play(1, [WINNING_LINE[6]], now=11.0).effects), 1, "move_result")[0]
    assert view_changes.apply(client, after["changes"]) == game.view(again.racers[1].state)


def test_equal_progress_ranks_by_time_then_moves() -> None:
    """Racers stuck with as many cards home after as many moves rank by time, the sooner
    first (not by player id); more cards home still ranks first."""
    from solitaire_race.room.racer import Racer
    from solitaire_race.room.results import rank

    game = get_game("clock")
    start = game.deal(4, b"secret")
    racers = [
        Racer(1, "slow", state=start, log=["x"] * 49, outcome=RacerOutcome.STUCK, end_ms=95_000),
        Racer(2, "quick", state=start, log=["x"] * 49, outcome=RacerOutcome.STUCK, end_ms=80_000),
        Racer(3, "quicker-more-moves", state=start, log=["x"] * 50, outcome=RacerOutcome.STUCK, end_ms=70_000),
        Racer(4, "resigned-sooner", state=start, log=["x"] * 49, outcome=RacerOutcome.RESIGNED, end_ms=81_000),
    ]
    ranked = rank(game, racers, fair_play=False)  # (made by hand: no move times to assess)
    assert [r.name for r in ranked] == ["quicker-more-moves", "quick", "resigned-sooner", "slow"]


def test_a_series_is_decided_by_a_majority_or_once_every_race_is_run() -> None:
    first = Series(10, 3, 1)
    assert first.shown and not first.decided and first.champion is None
    one_all = first.after([(1, "ann", 1), (2, "bob", 2)]).next()
    assert one_all is not None and one_all.number == 2 and not one_all.decided
    tied = one_all.after([(2, "bob", 1), (1, "ann", 2)])
    third = tied.next()
    assert third is not None and not third.decided  # 1-1 before the third race: still on
    assert [(s.name, s.wins) for s in third.score] == [("ann", 1), ("bob", 1)]
    won = third.after([(1, "ann", 1), (2, "bob", 2)])
    assert won.decided and won.champion is not None and won.champion.name == "ann" and won.next() is None
    # three racers, three different winners: decided after three races, and tied
    spread = Series(1, 3, 3, (Score(1, "a", 1), Score(2, "b", 1), Score(3, "c", 0))).after([(3, "c", 1)])
    assert spread.decided and spread.champion is None
    assert spread.to_json()["champion"] is None and spread.to_json()["decided"] is True
    # a majority ends a best of 5 early; an open series is never decided
    early = Series(1, 5, 3, (Score(1, "a", 2), Score(2, "b", 0))).after([(1, "a", 1), (2, "b", 2)])
    assert early.decided and early.champion == Score(1, "a", 3)
    open_series = Series(1, None, 9, (Score(1, "a", 8),)).after([(1, "a", 1)])
    assert not open_series.decided and open_series.next() is not None and not Series(1, None, 1).shown

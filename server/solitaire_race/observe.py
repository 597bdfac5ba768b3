"""Observability: the metrics served at /metrics and one-JSON-object-per-line logs.

Metrics are a handful of counters, gauges and two histograms rendered in the Prometheus
text format (version 0.0.4); a few dozen lines here beat a dependency with global state.
Logs: ``JsonFormatter`` turns every record into one line; ``event`` logs a named event
with its fields (race, player, ...). Nothing here ever receives a token.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0)
HISTOGRAM_HELP = {
    "solitaire_db_commit_seconds": "Latency of move-log group commits.",
    "solitaire_move_seconds": "From a move request read to its move_result sent (validation, durable log, reply).",
}


class Histogram:
    __slots__ = ("count", "counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, seconds: float) -> None:
        self.sum += seconds
        self.count += 1
        self.counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1  # le="bound": bound included

    def render(self, name: str) -> list[str]:
        lines = [f"# HELP {name} {HISTOGRAM_HELP[name]}", f"# TYPE {name} histogram"]
        cumulative = 0
        for bound, count in zip((*LATENCY_BUCKETS, math.inf), self.counts, strict=True):
            cumulative += count
            lines.append(f'{name}_bucket{{le="{"+Inf" if bound == math.inf else bound}"}} {cumulative}')
        return lines + [f"{name}_sum {_num(self.sum)}", f"{name}_count {self.count}"]


class Counter:
    """One counter: ``inc(n)`` adds to its ``value``."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class Metrics:
    """The server's counters; gauges are read from callables when rendered."""

    def __init__(self) -> None:
        self.counters: dict[tuple[str, tuple[tuple[str, str], ...]], Counter] = {}
        self.gauges: dict[str, tuple[str, Callable[[], Iterable[tuple[dict[str, str], float]]]]] = {}
        self.histograms = {name: Histogram() for name in HISTOGRAM_HELP}

    def counter(self, name: str, **labels: str) -> Counter:
        """The counter of ``name`` with ``labels`` (made on first use). The code that
        counts keeps the counters it counts in, and calls their ``inc``."""
        key = (name, tuple(sorted(labels.items())))
        found = self.counters.get(key)
        if found is None:
            found = self.counters[key] = Counter()
        return found

    def gauge(self, name: str, help_text: str, read: Callable[[], Iterable[tuple[dict[str, str], float]]]) -> None:
        self.gauges[name] = (help_text, read)

    def observe_commit(self, rows: int, seconds: float, on_loop: bool = True) -> None:
        """A move-log group commit: its latency, how many moves it carried, and where it
        ran (on the event loop, or on the writer thread: behind another process's lock or a
        checkpoint)."""
        self.counter("solitaire_db_commits_total", on="loop" if on_loop else "writer").inc()
        self.counter("solitaire_db_committed_moves_total").inc(rows)
        self.histograms["solitaire_db_commit_seconds"].observe(seconds)

    def render(self) -> str:
        lines: list[str] = []
        by_name: dict[str, list[tuple[tuple[tuple[str, str], ...], float]]] = defaultdict(list)
        for (name, labels), counter in sorted(self.counters.items(), key=lambda item: item[0]):
            by_name[name].append((labels, counter.value))
        for name in sorted(set(by_name) | set(COUNTER_HELP)):
            lines += [f"# HELP {name} {COUNTER_HELP.get(name, name)}", f"# TYPE {name} counter"]
            for labels, value in by_name.get(name, [((), 0.0)]):
                lines.append(f"{name}{_labels(dict(labels))} {_num(value)}")
        for name, (help_text, read) in sorted(self.gauges.items()):
            lines += [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
            lines += [f"{name}{_labels(labels)} {_num(value)}" for labels, value in read()]
        for name, histogram in sorted(self.histograms.items()):
            lines += histogram.render(name)
        return "\n".join(lines) + "\n"


COUNTER_HELP = {
    "solitaire_messages_total": "Client messages received.",
    "solitaire_moves_total": "Moves applied (moves/s: rate of this counter).",
    "solitaire_moves_rejected_total": "Moves refused (illegal or bad notation).",
    "solitaire_errors_total": "Error messages sent, by code.",
    "solitaire_races_finished_total": "Races finished and saved.",
    "solitaire_slow_clients_dropped_total": "Connections dropped because they did not read their messages.",
    "solitaire_db_commits_total": "Move-log group commits, by where they ran (loop, or writer thread).",
    "solitaire_db_committed_moves_total": "Move-log entries committed.",
}


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    body = ",".join(
        f'{k}="{str(v).replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
        for k, v in sorted(labels.items())
    )
    return "{" + body + "}"


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            error = record.exc_info[1]
            # An error that marks itself one_line_log (a storage fault: the disk, not a bug)
            # is logged as its one-line message; its traceback would say nothing more.
            if getattr(error, "one_line_log", False):
                entry["exc"] = f"{type(error).__name__}: {error}"
            else:
                entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def event(logger: logging.Logger, name: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log the event ``name`` with its fields (e.g. race=..., player=...)."""
    logger.log(level, name, extra={"fields": {"event": name, **fields}})


def configure_logging(level: int = logging.INFO) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)

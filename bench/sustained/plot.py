# Draws a sustained-load run (issue 42) of errand and its peers, and prints
# a summary of it per system.
#
# Usage: python3 bench/sustained/plot.py <results-dir> <out.png>
# (bench/sustained/plot.sh runs it with the pinned matplotlib)
#
# <results-dir> holds a folder per system (errand, graphile, awa: whichever
# are there), each with
#   latency.csv  submitted,started,finished: one row per job, epoch seconds;
#   tables.csv   t,table,live,dead,total_bytes,index_bytes,autovacuum_count:
#                one row per table per sample (every 10 s), t in epoch seconds;
#   events.csv   t,event: `<phase>-start` and `<phase>-end` (phases such as
#                open-transaction and readers).
# Each system's clock starts at its run's first submission: the runs are
# made one after another, and are compared by the time into the run.
#
# The PNG has three panels over the same minutes: the p99 and p50 start
# latency (started - submitted) of the jobs submitted in each 10 s (log
# scale: a stall is orders of magnitude above the rest); each table's
# total_bytes (heap, indexes and TOAST); each table's dead tuples; with the
# phases of events.csv shaded. The summary, a markdown table per system:
# the p99 of the first and of the last minute's jobs and their ratio (a ratio
# far above 1 is a queue that degrades as it runs), the worst 10-s p99 during
# each open transaction and how long after its end the p99 was back within
# 2x the first minute's, and each table's size at 5 minutes and at the end.
from __future__ import annotations

import csv
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # a file, no display
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
WINDOW_S = 10.0
SYSTEMS = ("errand", "graphile", "awa")
# A colour family per system (its tables take shades of it), a colour per phase.
CMAPS = {"errand": "Blues", "graphile": "Oranges", "awa": "Greens"}
PHASE_COLOURS = {"open-transaction": "tab:red", "readers": "tab:purple"}
OPEN_TRANSACTION = "open-transaction"
LINESTYLES = ("-", "--", ":", "-.")


class Run:
    """One system's files, its times in seconds since its first submission."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        latency = folder / "latency.csv"
        rows = np.loadtxt(latency, delimiter=",", skiprows=1, ndmin=2) if latency.exists() else np.empty((0, 3))
        self.tables: dict[str, list[tuple[float, float, float]]] = defaultdict(list)  # (t, MB, dead)
        raw_tables = read_csv(folder / "tables.csv")
        raw_events = read_csv(folder / "events.csv")
        starts = [rows[:, 0].min()] if len(rows) else [float(r["t"]) for r in raw_tables + raw_events]
        self.t0 = min(starts) if starts else 0.0
        order = np.argsort(rows[:, 0])
        self.submitted = rows[order, 0] - self.t0
        self.wait_ms = (rows[order, 1] - rows[order, 0]) * 1000
        for r in raw_tables:
            self.tables[r["table"]].append((float(r["t"]) - self.t0, int(r["total_bytes"]) / 1e6, int(r["dead"])))
        for samples in self.tables.values():
            samples.sort()
        self.phases = pair_phases([(float(r["t"]) - self.t0, r["event"]) for r in raw_events], self.end())

    def end(self) -> float:
        ends = [self.submitted[-1]] if len(self.submitted) else []
        ends += [s[-1][0] for s in self.tables.values()]
        return max(ends, default=0.0)

    def windows(self) -> tuple[Floats, Floats, Floats]:
        """Each 10-s window of submission time with jobs: its middle, p50 and p99 (ms)."""
        if not len(self.submitted):
            return np.empty(0), np.empty(0), np.empty(0)
        index = (self.submitted // WINDOW_S).astype(int)
        bounds = np.flatnonzero(np.diff(index)) + 1
        groups = np.split(self.wait_ms, bounds)
        first = index[np.concatenate(([0], bounds))]
        mids = (first + 0.5) * WINDOW_S
        return mids, np.array([np.percentile(g, 50) for g in groups]), np.array([np.percentile(g, 99) for g in groups])

    def p99(self, start: float, end: float) -> float | None:
        """The p99 (ms) of the jobs submitted in [start, end), None if none were."""
        lo, hi = np.searchsorted(self.submitted, [start, end])
        return float(np.percentile(self.wait_ms[lo:hi], 99)) if hi > lo else None


def read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def pair_phases(events: list[tuple[float, str]], end: float) -> list[tuple[str, float, float]]:
    """(phase, start, end) from `<phase>-start` and `<phase>-end` events; a
    phase never ended lasts to the end of the run."""
    phases, open_at = [], {}
    for t, event in sorted(events):
        name, _, edge = event.rpartition("-")
        if edge == "start":
            open_at[name] = t
        elif edge == "end" and name in open_at:
            phases.append((name, open_at.pop(name), t))
    phases += [(name, t, end) for name, t in open_at.items()]
    return sorted(phases, key=lambda p: p[1])


def ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def size_at(samples: list[tuple[float, float, float]], t: float) -> float | None:
    """The size (MB) of the last sample at or before t."""
    before = [mb for at, mb, _ in samples if at <= t]
    return before[-1] if before else None


def summary(run: Run) -> str:
    end = run.submitted[-1] if len(run.submitted) else 0.0
    first = run.p99(0, 60)
    last = run.p99(end - 60, end + 1e-9)
    lines = [f"### {run.name}", "", "| | |", "|---|---|"]
    lines.append(f"| jobs | {len(run.submitted)} over {end / 60:.1f} min |")
    lines.append(f"| p99 start latency, first minute (ms) | {ms(first)} |")
    lines.append(f"| p99 start latency, last minute (ms) | {ms(last)} |")
    ratio = f"{last / first:.2f}" if first and last is not None else "n/a"
    lines.append(f"| last / first | {ratio} |")
    mids, _, p99s = run.windows()
    for n, (_, start, stop) in enumerate(p for p in run.phases if p[0] == OPEN_TRANSACTION):
        label = f"open transaction {n + 1} ({start / 60:.1f}-{stop / 60:.1f} min)"
        # The windows whose middle is inside the phase.
        inside = p99s[(mids >= start) & (mids < stop)]
        lines.append(f"| {label}: worst 10-s p99 (ms) | {ms(float(inside.max()) if len(inside) else None)} |")
        # Windows of 10 s from the end on: the first whose p99 is within 2x
        # the first minute's (0 s: the first 10 s after it already were).
        back = "n/a"
        if first is not None:
            back = "not within the run"
            k = 0
            while stop + k * WINDOW_S < end:
                p = run.p99(stop + k * WINDOW_S, stop + (k + 1) * WINDOW_S)
                if p is not None and p <= 2 * first:
                    back = f"{k * WINDOW_S:.0f} s"
                    break
                k += 1
        lines.append(f"| {label}: p99 back within 2x of the first minute's after | {back} |")
    for table, samples in sorted(run.tables.items()):
        at5, final = size_at(samples, 300), samples[-1][1]
        at5_text = "n/a" if at5 is None else f"{at5:.1f}"
        lines.append(f"| {table}: MB at 5 min / at the end | {at5_text} / {final:.1f} |")
    return "\n".join(lines) + "\n"


def draw(runs: list[Run], out: Path) -> None:
    fig, (lat, size, dead) = plt.subplots(3, 1, sharex=True, figsize=(13, 11), constrained_layout=True)
    for run in runs:
        cmap = plt.get_cmap(CMAPS.get(run.name, "Greys"))
        mids, p50s, p99s = run.windows()
        lat.plot(mids / 60, p99s, color=cmap(0.85), lw=1.4, label=f"{run.name} p99")
        lat.plot(mids / 60, p50s, color=cmap(0.55), lw=1.0, ls="--", label=f"{run.name} p50")
        tables = sorted(run.tables)
        for i, table in enumerate(tables):
            # Shades of the system's colour, and dashes too: a dozen greens alone do not part.
            style = {"color": cmap(0.45 + 0.5 * (i / max(1, len(tables) - 1))), "ls": LINESTYLES[i % len(LINESTYLES)]}
            t, mb, dead_tuples = (np.array(c) for c in zip(*run.tables[table]))
            size.plot(t / 60, mb, lw=1.2, label=f"{run.name}: {table}", **style)
            dead.plot(t / 60, dead_tuples, lw=1.2, label=f"{run.name}: {table}", **style)
        for phase, start, stop in run.phases:
            for ax in (lat, size, dead):
                ax.axvspan(start / 60, stop / 60, color=PHASE_COLOURS.get(phase, "grey"), alpha=0.08, lw=0)
    # One legend entry per phase, whatever the number of systems shading it.
    for phase in sorted({p[0] for run in runs for p in run.phases}):
        lat.axvspan(np.nan, np.nan, color=PHASE_COLOURS.get(phase, "grey"), alpha=0.25, label=phase)
    lat.set_yscale("log")
    lat.set_ylabel("start latency (ms)\nper 10 s of submissions")
    lat.set_title("Sustained load: start latency and the queue tables, per system", loc="left")
    size.set_ylabel("table size (MB)\nheap + indexes + TOAST")
    # Dead tuples go from none to millions: linear up to 100, logarithmic above.
    dead.set_yscale("symlog", linthresh=100)
    dead.set_ylim(bottom=0)
    dead.set_ylabel("dead tuples")
    dead.set_xlabel("minutes since the run's first submission")
    lat.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    if any(run.tables for run in runs):
        size.legend(
            loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False, title="table", title_fontsize=8
        )
    for ax in (lat, size, dead):
        ax.grid(True, which="major", alpha=0.3)
    fig.savefig(out, dpi=110)


def main() -> None:
    if len(sys.argv) != 3:
        print("usage: python3 bench/sustained/plot.py <results-dir> <out.png>", file=sys.stderr)
        sys.exit(2)
    results, out = Path(sys.argv[1]), Path(sys.argv[2])
    # The known systems in their order, then any other folder.
    names = [s for s in SYSTEMS if (results / s).is_dir()]
    names += sorted(p.name for p in results.iterdir() if p.is_dir() and p.name not in SYSTEMS)
    runs = [Run(name, results / name) for name in names]
    if not runs:
        print(f"plot.py: no system's folder in {results}", file=sys.stderr)
        sys.exit(1)
    draw(runs, out)
    print("\n".join(summary(run) for run in runs))


if __name__ == "__main__":
    main()

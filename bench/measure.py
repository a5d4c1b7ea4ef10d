#!/usr/bin/env python3
"""Time whole runs of a command and record each run's peak RSS.

Usage: measure.py WARMUP RUNS -- COMMAND [ARGS...]

Each run is spawned directly (no shell in between, so neither its start-up
time nor its memory is counted) with stdout on /dev/null, and reaped with
wait4(), which returns that one child's rusage: ru_maxrss is the peak
resident set size of exactly this process (KiB on Linux). Wall time is taken
around spawn + wait, i.e. what a user or a calling tool waits for.

Prints one JSON object: {"ms": [...], "maxrss_kib": [...]} for the measured
runs. Exits non-zero if any run (warm-up included) fails.
"""

import json
import os
import sys
import time


def run_once(argv):
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions)
    _, status, rusage = os.wait4(pid, 0)
    t1 = time.perf_counter()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"measure.py: {' '.join(argv)} exited with {code}")
    return (t1 - t0) * 1000.0, rusage.ru_maxrss


def main():
    warmup, runs = int(sys.argv[1]), int(sys.argv[2])
    assert sys.argv[3] == "--"
    argv = sys.argv[4:]
    # Warm-up runs fill the page cache with the input and the binary, so the
    # measured runs do not depend on what ran before the benchmark.
    for _ in range(warmup):
        run_once(argv)
    ms, rss = [], []
    for _ in range(runs):
        t, r = run_once(argv)
        ms.append(t)
        rss.append(r)
    print(json.dumps({"ms": ms, "maxrss_kib": rss}))


if __name__ == "__main__":
    main()

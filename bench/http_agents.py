#!/usr/bin/env python3
"""Many agents, one branch, over HTTP (issue 27): replayed, not refused.

Usage: http_agents.py CLADA_BIN [--agents 8,32] [--replies 10]

Serves bare repositories with scripts/git-http-server.sh (lighttpd running
`git http-backend` as www-data, clada's server hooks installed; needs root
and lighttpd), as bench/http_push.py does, whose server helpers it uses.
For each number of agents N, a repository of its own and N clones, and
three phases, each of R rounds; in a round all N agents act at once
(threads released together), the next round starts when all are done:

  one      every agent sends `git clada push-reply origin main reply.md`,
           a WRITE of a file of its own (agents/<i>/<round>.txt), all to
           ONE branch, main. Each reply is made on the agent's own branch
           as push-reply left it (fast-forwarded after the last request):
           no fetch or merge between replies. Every request must come back
           `success`, each exactly once on main (one post commit naming
           it), main's history linear, `git fsck --strict` clean.
  conflict the same on a branch `race`, agents in pairs; in odd rounds
           both agents of a pair replace the same line of the pair's
           file (a SEARCH), in even rounds each writes a file of its own.
           For each conflicting pair exactly one must apply and the other
           come back `stale` naming the SEARCH; every other reply
           `success`.
  branches each agent on a branch of its own (b<i>): in each round a
           `push-reply` of a file of its own, then (the order alternates
           round by round) a plain `git push` of the same change
           committed locally (untimed).

Times are each agent's command, wall clock. The round trip target
compares phase one's median with the plain pushes' median at the same N
in the same run (plain pushes to one branch would refuse all but one
agent: they go to a branch each). Throughput is N x rounds over the
summed wall time of the rounds (first start to last end), for requests
applied and for plain pushes. Prints a table and writes
bench/out/http_agents.json; exits 1 when a check of correctness fails
(a wrong result is never timed).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_push as hp  # noqa: E402

ROOT = hp.ROOT
SCRIPT = hp.SCRIPT


def args():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    opts = {"bin": os.path.abspath(sys.argv[1]), "agents": [8, 32], "replies": 10}
    rest = sys.argv[2:]
    while rest:
        name, value, rest = rest[0], rest[1], rest[2:]
        if name == "--agents":
            opts["agents"] = [int(n) for n in value.split(",")]
        elif name == "--replies":
            opts["replies"] = int(value)
        else:
            sys.exit(f"unknown option {name}")
    return opts


def fail(why):
    print(f"FAILED: {why}", file=sys.stderr)
    sys.exit(1)


def server_git(root, binp, name, *argv):
    out = subprocess.run(
        ["bash", SCRIPT, "as-server", root, binp, "git", "-C", f"repos/{name}.git", *argv],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        fail(f"git {' '.join(argv)} on the server: {out.stderr}")
    return out.stdout


def trailer(text, key):
    for line in text.splitlines():
        if line.startswith(key + ": "):
            return line[len(key) + 2:].strip()
    return None


def bench(opts, root, base, n):
    env = hp.client_env(opts["bin"], root)
    name = f"agents{n}"
    out = subprocess.run(["bash", SCRIPT, "repo", root, name, opts["bin"]], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    url = f"{base}/{name}.git"
    rounds = opts["replies"]
    seed = os.path.join(root, f"{name}-seed")
    hp.git(env, root, "clone", "-q", url, seed)
    with open(os.path.join(seed, "a.txt"), "w") as f:
        f.write("hi\n")
    os.makedirs(os.path.join(seed, "pairs"))
    for k in range((n + 1) // 2):
        with open(os.path.join(seed, "pairs", f"{k}.txt"), "w") as f:
            f.write("".join(f"line {r}: original\n" for r in range(rounds)))
    hp.git(env, seed, "add", ".")
    hp.git(env, seed, "commit", "-q", "-m", "seed")
    branches = ["main", "race"] + [f"b{i}" for i in range(n)]
    hp.git(env, seed, "push", "-q", "origin", *[f"HEAD:refs/heads/{b}" for b in branches])
    agents = []
    for i in range(n):
        d = os.path.join(root, f"{name}-agent{i}")
        hp.git(env, root, "clone", "-q", url, d)
        for b in ("race", f"b{i}"):
            hp.git(env, d, "branch", "-q", b, f"origin/{b}")
        agents.append(d)

    def send(i, branch, reply_text, label):
        d = agents[i]
        reply = os.path.join(d, ".git", f"reply-{label}.md")
        with open(reply, "w") as f:
            f.write(reply_text)
        return hp.git(env, d, "clada", "push-reply", "origin", branch, reply, check=False)

    def write(path, content):
        return f'<---WRITE file="{path}"--->\n{content}<---END--->\n'

    results = {"one": [], "conflict": [], "branch_note": [], "branch_plain": []}
    walls = {k: [] for k in results}

    def check_out(branch_of):
        # Before the rounds, untimed: a checkout is not part of a request
        # (push-reply leaves the agent on its branch, moved to the result).
        for i, d in enumerate(agents):
            hp.git(env, d, "checkout", "-q", branch_of(i))

    # Phase one: everyone on main.
    outcomes = {}
    check_out(lambda i: "main")
    for r in range(rounds):
        def work(i, r=r):
            res = send(i, "main", write(f"agents/{i}/{r}.txt", f"agent {i} round {r}\n"), "one")
            outcomes[(i, r)] = res
        times, wall = hp.at_once(n, work)
        results["one"].extend(times)
        walls["one"].append(wall)
    for (i, r), res in outcomes.items():
        if res.returncode != 0 or trailer(res.stdout, "Clada-Status") != "success":
            fail(f"one branch: agent {i} round {r} ({res.returncode}):\n{res.stdout}{res.stderr}")
    log = server_git(root, opts["bin"], name, "log", "--format=%H%x00%B%x01", "main")
    refs = [trailer(c, "Clada-Request-Ref") for c in log.split("\x01") if "[clada:post]" in c]
    if len(refs) != n * rounds or len(set(refs)) != n * rounds:
        fail(f"one branch: {len(refs)} post commits ({len(set(refs))} requests) for {n * rounds} requests")
    merges = server_git(root, opts["bin"], name, "rev-list", "--merges", "--count", "main").strip()
    if merges != "0":
        fail(f"one branch: {merges} merge commits on main")
    files = server_git(root, opts["bin"], name, "ls-tree", "-r", "--name-only", "main").split()
    missing = [f"agents/{i}/{r}.txt" for i in range(n) for r in range(rounds) if f"agents/{i}/{r}.txt" not in files]
    if missing:
        fail(f"one branch: files missing on main: {missing[:5]}")
    server_git(root, opts["bin"], name, "fsck", "--strict", "--no-progress")

    # Phase two: pairs racing on the same line in odd rounds.
    outcomes = {}
    check_out(lambda i: "race")
    for r in range(rounds):
        def work(i, r=r):
            k = i // 2
            if r % 2:
                path = f"pairs/{k}.txt"
                text = (f'<---SEARCH file="{path}"--->\nline {r}: original\n'
                        f"<---REPLACE--->\nline {r}: agent {i}\n<---END--->\n")
            else:
                text = write(f"race/{i}/{r}.txt", f"agent {i} round {r}\n")
            outcomes[(i, r)] = send(i, "race", text, "race")
        times, wall = hp.at_once(n, work)
        results["conflict"].extend(times)
        walls["conflict"].append(wall)
    conflicts = {"pairs": 0, "applied": 0, "stale": 0}
    for (i, r), res in outcomes.items():
        status = trailer(res.stdout, "Clada-Status")
        if r % 2 == 0 and (res.returncode != 0 or status != "success"):
            fail(f"conflict phase: agent {i}'s own file in round {r} ({res.returncode}):\n{res.stdout}{res.stderr}")
    for r in range(1, rounds, 2):
        for k in range((n + 1) // 2):
            pair = [i for i in (2 * k, 2 * k + 1) if i < n]
            statuses = [trailer(outcomes[(i, r)].stdout, "Clada-Status") for i in pair]
            if len(pair) == 1:
                if statuses != ["success"]:
                    fail(f"conflict phase: agent {pair[0]} alone in its pair, round {r}: {statuses}")
                continue
            conflicts["pairs"] += 1
            if sorted(statuses, key=str) != ["stale", "success"]:
                fail(f"conflict phase: pair {k} round {r}: {statuses}:\n" + "\n".join(
                    f"agent {i} (exit {outcomes[(i, r)].returncode}):\n{outcomes[(i, r)].stdout}{outcomes[(i, r)].stderr}"
                    for i in pair))
            loser = pair[statuses.index("stale")]
            said = outcomes[(loser, r)].stdout
            if f"stale: [task-1] SEARCH pairs/{k}.txt" not in said or outcomes[(loser, r)].returncode != 3:
                fail(f"conflict phase: the stale reply of pair {k} round {r} does not name its SEARCH (exit {outcomes[(loser, r)].returncode}):\n{said}")
            conflicts["applied"] += 1
            conflicts["stale"] += 1
    race = server_git(root, opts["bin"], name, "show", "race:pairs/0.txt")
    if n >= 2 and any(f"line {r}: original" in race for r in range(1, rounds, 2)):
        fail(f"conflict phase: a conflicting line was never changed:\n{race}")
    merges = server_git(root, opts["bin"], name, "rev-list", "--merges", "--count", "race").strip()
    if merges != "0":
        fail(f"conflict phase: {merges} merge commits")
    server_git(root, opts["bin"], name, "fsck", "--strict", "--no-progress")

    # Phase three: a branch each, requests and plain pushes.
    check_out(lambda i: f"b{i}")
    for r in range(rounds):
        def note(i, r=r):
            res = send(i, f"b{i}", write(f"own/{i}/note-{r}.txt", f"agent {i} round {r}\n"), "own")
            if res.returncode != 0 or trailer(res.stdout, "Clada-Status") != "success":
                fail(f"branches: agent {i} round {r} ({res.returncode}):\n{res.stdout}{res.stderr}")

        def plain(i, r=r):
            res = hp.git(env, agents[i], "push", "-q", "origin", f"b{i}", check=False)
            if res.returncode != 0:
                fail(f"branches: agent {i}'s push failed:\n{res.stderr}")

        def commit_plain():
            for i, d in enumerate(agents):
                os.makedirs(os.path.join(d, "own", str(i)), exist_ok=True)
                with open(os.path.join(d, "own", str(i), f"plain-{r}.txt"), "w") as f:
                    f.write(f"agent {i} round {r}\n")
                hp.git(env, d, "add", "-A")
                hp.git(env, d, "commit", "-q", "-m", f"change {r}")

        order = [("branch_note", note), ("branch_plain", plain)]
        if r % 2:
            order.reverse()
        for label, fn in order:
            if label == "branch_plain":
                commit_plain()
            times, wall = hp.at_once(n, fn)
            results[label].extend(times)
            walls[label].append(wall)
    server_git(root, opts["bin"], name, "fsck", "--strict", "--no-progress")
    return results, walls, conflicts


def main():
    opts = args()
    check = subprocess.run(["bash", SCRIPT, "check", opts["bin"]], capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit("cannot run the HTTP server here: " + check.stderr.strip())
    root = tempfile.mkdtemp(prefix="clada-agents-bench-")
    os.chmod(root, 0o755)
    proc, base = hp.start_server(root, opts["bin"])
    report = {}
    try:
        for n in opts["agents"]:
            report[n] = bench(opts, root, base, n)
    finally:
        hp.stop_server(proc)
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {root} (BENCH_KEEP)")
        else:
            shutil.rmtree(root, ignore_errors=True)
    ms = lambda s: s * 1000
    print(f"{'agents':>6} {'one p50':>8} {'push p50':>8} {'ratio':>6} {'race p50':>8} {'pairs':>5} "
          f"{'own p50':>8} {'applied/s':>9} {'pushes/s':>8} {'ratio':>6} {'one: applied/s':>14}")
    summary = {}
    for n, (r, w, c) in report.items():
        one50, push50 = statistics.median(r["one"]), statistics.median(r["branch_plain"])
        per_s = lambda key: n * len(w[key]) / sum(w[key])
        s = summary[n] = {
            "one_p50_ms": ms(one50), "one_mean_ms": ms(statistics.mean(r["one"])),
            "push_p50_ms": ms(push50), "ratio_p50": one50 / push50,
            "race_p50_ms": ms(statistics.median(r["conflict"])), "conflicts": c,
            "own_p50_ms": ms(statistics.median(r["branch_note"])),
            "applied_per_s": per_s("branch_note"), "pushes_per_s": per_s("branch_plain"),
            "one_applied_per_s": per_s("one"),
        }
        s["throughput_ratio"] = s["applied_per_s"] / s["pushes_per_s"]
        print(f"{n:>6} {s['one_p50_ms']:>6.0f}ms {s['push_p50_ms']:>6.0f}ms {s['ratio_p50']:>6.2f} "
              f"{s['race_p50_ms']:>6.0f}ms {c['pairs']:>5} {s['own_p50_ms']:>6.0f}ms "
              f"{s['applied_per_s']:>9.1f} {s['pushes_per_s']:>8.1f} {s['throughput_ratio']:>6.2f} {s['one_applied_per_s']:>14.1f}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "http_agents.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()

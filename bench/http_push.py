#!/usr/bin/env python3
"""Round trip of a request over HTTP against a plain push of the same change.

Usage: http_push.py CLADA_BIN [--agents 1,4,16] [--rounds 15] [--warmup 2]

Serves bare repositories with scripts/git-http-server.sh (lighttpd running
`git http-backend` as www-data, clada's server hooks installed; needs root
and lighttpd) on a 127.0.0.1 port of its own. For each number of agents N, a
repository of its own with one branch per agent, and N clones. Each round
runs the three scenarios, all N agents at once (threads, started
together), in an order that rotates from round to round:

  note   `git clada push-reply origin <branch> reply.md`: the reply (a
         WRITE of agents/<i>/<round>.txt) pushed as a request, applied by
         the server's hooks, the result and the branch fetched. Untimed
         after it: the local branch is moved to the fetched one.
  plain  the same file with the same content committed locally (untimed),
         then `git push origin <branch>` (timed).
  nofetch  `push-reply --no-fetch`: as note, without fetching the branch
         (fetched untimed after it): the request's own round trip, its
         result taken from the push's output.

Every note must come back `success` (exit 0) and every push must succeed,
or the script stops: a failed run cannot pass as a fast one. The times are
wall-clock times of each agent's command; a round's throughput is N over
the round's wall time for that scenario (from the start of the first
agent's command to the end of the last). Prints a table and writes
bench/out/http_push.json.
"""

import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "git-http-server.sh")


def args():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    opts = {"bin": os.path.abspath(sys.argv[1]), "agents": [1, 4, 16], "rounds": 15, "warmup": 2}
    rest = sys.argv[2:]
    while rest:
        name, value, rest = rest[0], rest[1], rest[2:]
        if name == "--agents":
            opts["agents"] = [int(n) for n in value.split(",")]
        elif name == "--rounds":
            opts["rounds"] = int(value)
        elif name == "--warmup":
            opts["warmup"] = int(value)
        else:
            sys.exit(f"unknown option {name}")
    return opts


def client_env(bin_path, home):
    env = {
        "PATH": os.path.dirname(bin_path) + ":" + os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "agent",
        "GIT_AUTHOR_EMAIL": "agent@bench",
        "GIT_COMMITTER_NAME": "agent",
        "GIT_COMMITTER_EMAIL": "agent@bench",
        "LC_ALL": "C",
    }
    return env


def git(env, cwd, *argv, check=True):
    out = subprocess.run(["git", *argv], cwd=cwd, env=env, capture_output=True, text=True)
    if check and out.returncode != 0:
        sys.exit(f"git {' '.join(argv)} in {cwd} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return out


def served_id(port):
    """What the server on PORT serves at /id, or None."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
    try:
        conn.request("GET", "/id")
        r = conn.getresponse()
        return r.read().decode().strip() if r.status == 200 else None
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def start_server(root, bin_path, port=0, mode="run"):
    """lighttpd (or nginx with fcgiwrap: mode "run-nginx") serving
    ROOT/repos, leading a process group of its own; returns (process, base
    URL of the repositories). The port (any free one, or PORT: a server
    started again where a killed one was) is bound here and the socket
    handed to it, so no other server can take it first, and the URLs
    start with an id no other server serves."""
    server_id = os.path.basename(root)
    with socket.socket() as s, open(os.path.join(root, "server.log"), "ab") as log:
        # A server started again on this port after a kill binds it while
        # the killed one's connections are in TIME_WAIT only if both
        # sockets have SO_REUSEADDR (lighttpd sets it on the socket it is
        # given, nginx does not).
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(128)
        port = s.getsockname()[1]
        proc = subprocess.Popen(
            ["bash", SCRIPT, mode, root, str(port), server_id, bin_path],
            stdin=s, stdout=subprocess.DEVNULL, stderr=log, start_new_session=True,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        if served_id(port) == server_id:
            return proc, f"http://127.0.0.1:{port}/{server_id}/git"
        time.sleep(0.02)
    stop_server(proc)
    logs = [open(os.path.join(root, f), errors="replace").read() for f in ("server.log", "error.log")]
    sys.exit("the web server did not start:\n" + "\n".join(logs))


def group_runs(pgid):
    """Whether a process of group PGID runs (zombies do not)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def stop_server(proc):
    """Kills the server's process group: lighttpd and the programs it
    started for requests, which would outlive lighttpd killed alone."""
    deadline = time.monotonic() + 10
    while True:
        os.killpg(proc.pid, signal.SIGKILL)
        if not group_runs(proc.pid) or time.monotonic() > deadline:
            break
        time.sleep(0.005)
    proc.wait()


def at_once(n, work):
    """Runs work(i) for i in range(n) in threads started together; returns
    (per-agent seconds, wall seconds from the first start to the last end)."""
    times = [0.0] * n
    barrier = threading.Barrier(n + 1)
    marks = []
    failed = []

    def run(i):
        barrier.wait()
        start = time.perf_counter()
        marks.append(start)
        try:
            work(i)
        except BaseException as e:
            # sys.exit in a thread ends only the thread, silently: the
            # main thread raises it again, and the bench stops.
            failed.append(e)
            return
        end = time.perf_counter()
        times[i] = end - start
        marks.append(end)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    barrier.wait()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    return times, max(marks) - min(marks)


def bench(opts, root, base, n):
    env = client_env(opts["bin"], root)
    name = f"n{n}"
    out = subprocess.run(["bash", SCRIPT, "repo", root, name, opts["bin"]], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    url = f"{base}/{name}.git"
    seed = os.path.join(root, f"{name}-seed")
    git(env, root, "clone", "-q", url, seed)
    with open(os.path.join(seed, "a.txt"), "w") as f:
        f.write("hi\n")
    git(env, seed, "add", "a.txt")
    git(env, seed, "commit", "-q", "-m", "seed")
    git(env, seed, "push", "-q", "origin", *[f"HEAD:refs/heads/b{i}" for i in range(n)])
    agents = []
    for i in range(n):
        d = os.path.join(root, f"{name}-agent{i}")
        git(env, root, "clone", "-q", url, d)
        git(env, d, "checkout", "-q", f"b{i}")
        os.makedirs(os.path.join(d, "agents", str(i)), exist_ok=True)
        agents.append(d)
    counter = [0]

    def content(i, r):
        return f"change {r} of agent {i}\n"

    def note(r, extra=(), name="note"):
        def work(i):
            d = agents[i]
            reply = os.path.join(d, ".git", "reply.md")
            with open(reply, "w") as f:
                f.write(f'<---WRITE file="agents/{i}/{name}-{r}.txt"--->\n{content(i, r)}<---END--->\n')
            res = git(env, d, "clada", "push-reply", *extra, "origin", f"b{i}", reply, check=False)
            if res.returncode != 0 or "Clada-Status: success" not in res.stdout:
                sys.exit(f"agent {i}: push-reply failed ({res.returncode}):\n{res.stdout}{res.stderr}")

        times, wall = at_once(n, work)
        for i, d in enumerate(agents):
            if extra:
                git(env, d, "fetch", "-q", "origin", f"b{i}:refs/remotes/origin/b{i}")
            git(env, d, "update-ref", f"refs/heads/b{i}", f"refs/remotes/origin/b{i}")
            git(env, d, "reset", "-q", "--hard")
        return times, wall

    def nofetch(r):
        return note(r, ("--no-fetch",), "nofetch")

    def plain(r):
        for i, d in enumerate(agents):
            with open(os.path.join(d, "agents", str(i), f"plain-{r}.txt"), "w") as f:
                f.write(content(i, r))
            git(env, d, "add", "-A")
            git(env, d, "commit", "-q", "-m", f"change {r}")

        def work(i):
            res = git(env, agents[i], "push", "-q", "origin", f"b{i}", check=False)
            if res.returncode != 0:
                sys.exit(f"agent {i}: push failed:\n{res.stderr}")

        return at_once(n, work)

    result = {k: [] for k in ("note", "plain", "nofetch", "note_wall", "plain_wall", "nofetch_wall")}
    total = opts["warmup"] + opts["rounds"]
    for r in range(total):
        counter[0] += 1
        order = [("note", note), ("plain", plain), ("nofetch", nofetch)]
        order = order[r % 3:] + order[:r % 3]
        for label, fn in order:
            times, wall = fn(r)
            if r >= opts["warmup"]:
                result[label].extend(times)
                result[f"{label}_wall"].append(wall)
    # The server's side is sound after it all.
    out = subprocess.run(
        ["bash", SCRIPT, "as-server", root, opts["bin"], "git", "-C", f"repos/{name}.git", "fsck", "--no-progress"],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        sys.exit(f"fsck failed: {out.stderr}")
    return result


def main():
    opts = args()
    check = subprocess.run(["bash", SCRIPT, "check", opts["bin"]], capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit("cannot run the HTTP server here: " + check.stderr.strip())
    root = tempfile.mkdtemp(prefix="clada-http-bench-")
    os.chmod(root, 0o755)
    proc, base = start_server(root, opts["bin"])
    report = {}
    try:
        for n in opts["agents"]:
            report[n] = bench(opts, root, base, n)
    finally:
        stop_server(proc)
        shutil.rmtree(root, ignore_errors=True)
    ms = lambda s: s * 1000
    print(f"{'agents':>6} {'note p50':>9} {'note mean':>9} {'push p50':>9} {'push mean':>9} {'ratio p50':>9} {'notes/s':>8} {'pushes/s':>8} {'no-fetch p50':>12} {'ratio':>6}")
    summary = {}
    for n, r in report.items():
        note50, push50 = statistics.median(r["note"]), statistics.median(r["plain"])
        notes_s = n * len(r["note_wall"]) / sum(r["note_wall"])
        pushes_s = n * len(r["plain_wall"]) / sum(r["plain_wall"])
        summary[n] = {
            "note_p50_ms": ms(note50), "note_mean_ms": ms(statistics.mean(r["note"])),
            "push_p50_ms": ms(push50), "push_mean_ms": ms(statistics.mean(r["plain"])),
            "ratio_p50": note50 / push50, "notes_per_s": notes_s, "pushes_per_s": pushes_s,
            "nofetch_p50_ms": ms(statistics.median(r["nofetch"])),
            "nofetch_ratio_p50": statistics.median(r["nofetch"]) / push50,
            "note_ms": [ms(t) for t in r["note"]], "push_ms": [ms(t) for t in r["plain"]],
            "nofetch_ms": [ms(t) for t in r["nofetch"]],
        }
        s = summary[n]
        print(f"{n:>6} {s['note_p50_ms']:>8.0f}ms {s['note_mean_ms']:>7.0f}ms {s['push_p50_ms']:>7.0f}ms {s['push_mean_ms']:>7.0f}ms {s['ratio_p50']:>9.2f} {notes_s:>8.1f} {pushes_s:>8.1f} {s['nofetch_p50_ms']:>10.0f}ms {s['nofetch_ratio_p50']:>6.2f}")
    os.makedirs(os.path.join(ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "out", "http_push.json"), "w") as f:
        json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()

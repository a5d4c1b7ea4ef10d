#!/usr/bin/env python3
"""Agents over HTTP while the web server is killed and restarted (issue 28).

Usage: http_kill.py CLADA_BIN [--agents 8] [--requests 80] [--kills 25,55]
                    [--kill server,group] [--server lighttpd|nginx]
                    [--down 1.5] [--branch one|each]

Serves a bare repository with scripts/git-http-server.sh (lighttpd, or
nginx with fcgiwrap, running `git http-backend` as www-data with clada's
server hooks; needs root), with bench/http_push.py's helpers. N agents
(threads, each with a clone of its own) send REQUESTS requests in all,
REQUESTS / N each, one after the other: each a `git clada push-reply
--id <its id> origin <branch> reply.md` of a WRITE of a file of its own
(agents/<i>/<k>.txt). By default all to ONE branch, main: requests made
on a tip the others have moved are replayed there, so recovering a
request whose hook died has to look above its commit for what it may
have applied (`--branch each`: a branch b<i> each).

While they run, the web server is killed with SIGKILL and started again
on the same port (after DOWN seconds, during which connections are
refused) once the agents have started the K-th request, for each K of
--kills, at a moment a post-receive hook is running when there is one
within 3 s. --kill says how, kill by kill: `server` kills only the web
server (lighttpd; nginx's master and workers and fcgiwrap), and the CGI
programs it started (git http-backend, git-receive-pack, the hooks) go on
without it, as after the web server's crash; `group` kills the whole
process group, them too, as an OOM kill of the service or a machine
going down would.

Each agent takes push-reply's answer as an agent would: exit 0 → applied;
exit 4 (outcome unknown) → once the server answers again, agents of
even number run the fetch command push-reply printed (`git fetch origin
refs/clada/results/<id>`, then the result's Clada-Status) and, when
there is no result yet, send the reply again under the SAME --id; agents
of odd number send it again at once, and learn the outcome from that; exit 5 (nothing sent) → sent again
once the server answers (0.5 s at least); exit 2 "no result ... within" → as exit 4; any other answer
(a refusal, exit 1 or 3) is what the agent was told, recorded.

Then, on the server, before and after `git clada hook recover`: (a)
every request an agent was told applied is on its branch exactly once
(one post commit whose Clada-Request-Ref names it) with its file and
content; (b) none an agent was told was not applied is there; (c) no
request applied twice; (d) linear history, `git fsck --strict` clean,
no claim left, the inbox empty. Prints a table and writes
bench/out/http_kill.json; exits 1 on any violation.
"""

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_push as hp  # noqa: E402

SCRIPT = hp.SCRIPT


def args():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) > 1 else 2)
    opts = {"bin": os.path.abspath(sys.argv[1]), "agents": 8, "requests": 80, "kills": [25, 55],
            "kill": ["server", "group"], "server": "lighttpd", "down": 1.5, "branch": "one"}
    rest = sys.argv[2:]
    while rest:
        if len(rest) < 2:
            sys.exit(f"{rest[0]} needs a value")
        name, value, rest = rest[0], rest[1], rest[2:]
        if name in ("--agents", "--requests"):
            opts[name[2:]] = int(value)
        elif name == "--kills":
            opts["kills"] = [int(k) for k in value.split(",") if k]
        elif name == "--kill":
            opts["kill"] = value.split(",")
            if any(k not in ("server", "group") for k in opts["kill"]):
                sys.exit("--kill takes server or group, for each kill")
        elif name == "--server" and value in ("lighttpd", "nginx"):
            opts["server"] = value
        elif name == "--down":
            opts["down"] = float(value)
        elif name == "--branch" and value in ("one", "each"):
            opts["branch"] = value
        else:
            sys.exit(f"unknown option {name} {value}")
    if opts["requests"] % opts["agents"]:
        sys.exit("--requests must be a multiple of --agents")
    return opts


def group_processes(pgid):
    """(pid, command line) of the live processes of group PGID; the
    command line starts with the program's name (/proc's comm: nginx
    rewrites its own command line)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            found.append((int(pid), [comm] + [a.decode(errors="replace") for a in cmdline if a]))
    return found


def is_web_server(cmdline):
    """lighttpd, or nginx and fcgiwrap: the daemons, not the CGI programs
    they started (fcgiwrap's children are git http-backend and what it
    runs). A restarted run-nginx starts fcgiwrap again on its socket."""
    return cmdline[0] in ("lighttpd", "nginx", "fcgiwrap")


def is_post_receive(cmdline):
    return "hook" in cmdline and "post-receive" in cmdline


class Server:
    """The web server, killed and started again on the same port."""

    def __init__(self, root, binp, mode):
        self.root, self.bin, self.mode = root, binp, mode
        self.proc, self.base = hp.start_server(root, binp, mode=mode)
        self.port = int(self.base.split(":")[2].split("/")[0])
        # Process groups of killed servers whose CGI programs may still run.
        self.left = []

    def kill(self, how):
        """Kills the web server (`server`) or its whole group (`group`);
        says what ran at that moment."""
        pgid = self.proc.pid
        running = group_processes(pgid)
        hooks = sum(1 for _, c in running if is_post_receive(c))
        cgi = sum(1 for _, c in running if not is_web_server(c))
        if how == "group":
            hp.stop_server(self.proc)
        else:
            # The leader first (nginx's master would start a worker again
            # for one killed before it), then until no daemon is left.
            os.kill(pgid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                daemons = [pid for pid, c in group_processes(pgid) if is_web_server(c)]
                if not daemons:
                    break
                for pid in daemons:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.005)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                hp.stop_server(self.proc)
                sys.exit("the web server outlived SIGKILL: is_web_server did not know it")
            self.left.append(pgid)
        return {"how": how, "post_receive_running": hooks, "cgi_running": cgi}

    def start(self):
        """Starts the server again; what held the port meanwhile, if
        anything did (`ss`'s lines for it)."""
        deadline = time.monotonic() + 60
        held = ""
        while True:
            try:
                self.proc, _ = hp.start_server(self.root, self.bin, port=self.port, mode=self.mode)
                return held
            except OSError:
                # A CGI program of the killed server may hold the port
                # (an inherited listening socket) until it ends.
                if not held:
                    held = subprocess.run(["ss", "-tanp", f"sport = :{self.port}"],
                                          capture_output=True, text=True).stdout.strip()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def up(self):
        return hp.served_id(self.port) == os.path.basename(self.root)

    def stop(self):
        hp.stop_server(self.proc)
        self.settle()

    def settle(self, within=120):
        """Waits for the CGI programs of killed servers to end."""
        deadline = time.monotonic() + within
        while any(group_processes(g) for g in self.left) and time.monotonic() < deadline:
            time.sleep(0.1)
        stuck = [p for g in self.left for p in group_processes(g)]
        for pid, _ in stuck:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return stuck


def trailer(text, key):
    for line in text.splitlines():
        if line.startswith(key + ": "):
            return line[len(key) + 2:].strip()
    return None


def blob_id(content):
    data = content.encode()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    opts = args()
    nginx = opts["server"] == "nginx"
    check = subprocess.run(["bash", SCRIPT, "check", opts["bin"]] + (["nginx"] if nginx else []),
                           capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit("cannot run the HTTP server here: " + check.stderr.strip())
    root = tempfile.mkdtemp(prefix="clada-kill-bench-")
    os.chmod(root, 0o755)
    server = Server(root, opts["bin"], "run-nginx" if nginx else "run")
    try:
        report, violations = run(opts, root, server)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    show(opts, report, violations)
    sys.exit(1 if violations else 0)


def run(opts, root, server):
    env = hp.client_env(opts["bin"], root)
    n, per = opts["agents"], opts["requests"] // opts["agents"]
    name = "kill"
    out = subprocess.run(["bash", SCRIPT, "repo", root, name, opts["bin"]], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    url = f"{server.base}/{name}.git"
    git_dir = os.path.join(root, "repos", f"{name}.git")
    branch_of = (lambda i: "main") if opts["branch"] == "one" else (lambda i: f"b{i}")
    branches = sorted({branch_of(i) for i in range(n)})
    seed = os.path.join(root, "seed")
    hp.git(env, root, "clone", "-q", url, seed)
    with open(os.path.join(seed, "a.txt"), "w") as f:
        f.write("hi\n")
    hp.git(env, seed, "add", ".")
    hp.git(env, seed, "commit", "-q", "-m", "seed")
    hp.git(env, seed, "push", "-q", "origin", *[f"HEAD:refs/heads/{b}" for b in branches])
    agents = []
    for i in range(n):
        d = os.path.join(root, f"agent{i}")
        hp.git(env, root, "clone", "-q", url, d)
        if branch_of(i) != "main":
            hp.git(env, d, "checkout", "-q", "-b", branch_of(i), f"origin/{branch_of(i)}")
        agents.append(d)

    lock = threading.Lock()
    sent = [0]
    counts = {"first_success": 0, "unknown": 0, "not_sent": 0, "resends": 0, "fetched": 0, "refused": 0,
              "from_before": 0}
    records = {}
    # What push-reply said, for the report: a wrong answer is shown whole.
    said = {}

    def count(key):
        with lock:
            counts[key] += 1

    def fetch_result(d, rid):
        """The fetch command push-reply printed; the result's text, or None."""
        got = hp.git(env, d, "fetch", "origin", f"refs/clada/results/{rid}", check=False)
        if got.returncode != 0:
            return None
        return hp.git(env, d, "log", "-1", "--format=%B", "FETCH_HEAD").stdout

    def agent(i):
        d, b = agents[i], branch_of(i)
        reply = os.path.join(d, ".git", "reply.md")
        for k in range(per):
            rid = f"agent{i}-{k}"
            path, content = f"agents/{i}/{k}.txt", f"agent {i} request {k}\n"
            with open(reply, "w") as f:
                f.write(f'<---WRITE file="{path}"--->\n{content}<---END--->\n')
            rec = records[rid] = {"agent": i, "branch": b, "path": path, "content": content,
                                  "answers": [], "told": None}
            with lock:
                sent[0] += 1
            while rec["told"] is None:
                if len(rec["answers"]) >= 40:
                    rec["told"] = "never learned"
                    break
                if rec["answers"]:
                    count("resends")
                res = hp.git(env, d, "clada", "push-reply", "--id", rid, "--timeout", "30s",
                             "--push-timeout", "60s", "origin", b, reply, check=False)
                code = res.returncode
                rec["answers"].append(code)
                said.setdefault(rid, []).append(f"exit {code}\n{res.stdout}{res.stderr}")
                status = trailer(res.stdout, "Clada-Status")
                if f"the server has the request {rid} from before" in res.stderr:
                    count("from_before")
                if code == 5:
                    count("not_sent")
                    # Sent again when the server can be reached.
                    time.sleep(0.5)
                    until = time.monotonic() + 120
                    while not server.up() and time.monotonic() < until:
                        time.sleep(0.2)
                    continue
                later = code == 4 or (code == 2 and "no result for the request" in res.stderr)
                if not later:
                    if code == 0 and len(rec["answers"]) == 1:
                        count("first_success")
                    if code == 2 and status is None:
                        count("refused")
                    rec["told"] = status or f"refused (exit {code})"
                    break
                count("unknown")
                # Later: once the server answers again, the printed fetch
                # (agents of even number), or at once the reply sent again
                # under the same id (odd: the resend is what they learn
                # the outcome from).
                while not server.up():
                    time.sleep(0.2)
                if i % 2:
                    continue
                time.sleep(0.5)
                text = fetch_result(d, rid)
                if text is not None:
                    count("fetched")
                    said[rid].append(f"fetched\n{text}")
                    rec["told"] = trailer(text, "Clada-Status") or "a result without a status"
                # Otherwise sent again under the same id.

    kills = []

    def killer():
        for at, how in zip(opts["kills"], opts["kill"] * len(opts["kills"])):
            while sent[0] < at and not finished.is_set():
                time.sleep(0.01)
            if finished.is_set():
                break
            # The moment a post-receive runs, if one does within 3 s.
            until = time.monotonic() + 3
            while time.monotonic() < until and not any(
                    is_post_receive(c) for _, c in group_processes(server.proc.pid)):
                time.sleep(0.005)
            seen = server.kill(how)
            killed = time.monotonic()
            seen["after_sent"] = sent[0]
            time.sleep(opts["down"])
            seen["port_held_by"] = server.start()
            seen["down_s"] = time.monotonic() - killed
            kills.append(seen)

    finished = threading.Event()
    watcher = threading.Thread(target=killer)
    watcher.start()
    start = time.perf_counter()
    try:
        hp.at_once(n, agent)
    finally:
        wall = time.perf_counter() - start
        finished.set()
        watcher.join()
    stuck = server.settle()

    violations = []
    if stuck:
        violations.append(f"CGI programs of a killed server still ran after 120 s: {stuck}")
    if len(kills) != len(opts["kills"]):
        violations.append(f"{len(kills)} kills of {len(opts['kills'])}: the agents finished first")

    def server_git(*argv, check=True):
        res = subprocess.run(["bash", SCRIPT, "as-server", root, opts["bin"], "git", "-C", f"repos/{name}.git", *argv],
                             capture_output=True, text=True)
        if check and res.returncode != 0:
            violations.append(f"git {' '.join(argv)} on the server failed: {res.stderr.strip()}")
        return res.stdout

    def audit(when):
        """(applied count by request) and the violations found now."""
        found = []
        applied = {rid: 0 for rid in records}
        foreign = 0
        for b in branches:
            log = server_git("log", "--format=%H%x00%B%x01", b)
            for c in log.split("\x01"):
                if "[clada:post]" not in c:
                    continue
                ref = trailer(c.split("\x00", 1)[-1], "Clada-Request-Ref") or ""
                rid = ref.removeprefix("refs/clada/inbox/")
                if rid in applied:
                    applied[rid] += 1
                else:
                    foreign += 1
            if server_git("rev-list", "--merges", "--count", b).strip() != "0":
                found.append(f"{when}: merge commits on {b}")
            files = {}
            for line in server_git("ls-tree", "-r", b).splitlines():
                meta, path = line.split("\t", 1)
                files[path] = meta.split()[2]
            for rid, rec in records.items():
                if rec["branch"] != b:
                    continue
                present = files.get(rec["path"])
                told_applied = rec["told"] in ("success", "partial")
                if told_applied and present != blob_id(rec["content"]):
                    found.append(f"{when}: {rid} was told {rec['told']}, but {rec['path']} on {b} is "
                                 f"{'missing' if present is None else 'not its content'}")
                if told_applied and applied[rid] != 1:
                    found.append(f"{when}: {rid} was told {rec['told']}, and {applied[rid]} post commits name it")
                if not told_applied and rec["told"] != "never learned" and (applied[rid] or present):
                    found.append(f"{when}: {rid} was told {rec['told']!r}, but it is on {b} "
                                 f"({applied[rid]} post commits)")
        if foreign:
            found.append(f"{when}: {foreign} post commits name no request of this run")
        for rid, times in applied.items():
            if times > 1:
                found.append(f"{when}: {rid} applied {times} times")
        server_git("fsck", "--strict", "--no-progress")
        return applied, found

    applied, found = audit("after the run")
    violations += found
    recover = server_git("clada", "hook", "recover")
    applied_after, found = audit("after hook recover")
    violations += found
    inbox = server_git("for-each-ref", "--format=%(refname)", "refs/clada/inbox/").split()
    if inbox:
        violations.append(f"requests left in the inbox after hook recover: {inbox}")
    claims_dir = os.path.join(git_dir, "clada", "claims")
    claims = os.listdir(claims_dir) if os.path.isdir(claims_dir) else []
    if claims:
        violations.append(f"claims left: {claims}")
    never = [rid for rid, r in records.items() if r["told"] == "never learned"]
    if never:
        violations.append(f"agents never learned the outcome of {never}")
    recovered = 0
    log_path = os.path.join(git_dir, "clada", "requests.log")
    if os.path.exists(log_path):
        with open(log_path) as f:
            recovered = sum(1 for line in f if json.loads(line).get("recovered"))
    stats = server_git("clada", "hook", "stats", check=False)
    # A request wrongly answered is counted once, found before and after
    # hook recover or not.
    wrong = sorted({v.split(": ", 1)[1].split(" ", 1)[0] for v in violations if " was told " in v})
    for rid in wrong + never:
        # Each answer once, with how many times it came.
        answers = said.get(rid, [])
        shown = [f"({answers.count(a)}x) {a}" for k, a in enumerate(answers) if a not in answers[:k]]
        print(f"--- what {rid}'s agent was told:\n" + "\n".join(shown), file=sys.stderr)
    told = {}
    for r in records.values():
        told[r["told"]] = told.get(r["told"], 0) + 1
    report = {
        "server": opts["server"], "branch": opts["branch"], "agents": n, "requests": len(records),
        "kills": kills, **counts, "recovered": recovered, "told": told,
        "applied": sum(1 for t in applied_after.values() if t), "applied_twice": sum(1 for t in applied_after.values() if t > 1),
        "wrong_answers": len(wrong), "wall_s": wall, "recover_said": recover.strip(), "stats": stats.strip(),
    }
    return report, violations


def show(opts, r, violations):
    for k in r["kills"]:
        print(f"kill ({k['how']}) after {k['after_sent']} requests started: "
              f"{k['post_receive_running']} post-receive and {k['cgi_running']} CGI processes were running; "
              f"serving again {k['down_s']:.1f} s later")
        if k["port_held_by"]:
            print("  the port was held meanwhile:\n  " + k["port_held_by"].replace("\n", "\n  "))
    rows = [
        ("server / branches", f"{r['server']} / {'one branch' if r['branch'] == 'one' else 'a branch each'}"),
        ("agents", r["agents"]),
        ("requests", r["requests"]),
        ("told success first time", r["first_success"]),
        ("told unknown (exit 4, or no result in time)", r["unknown"]),
        ("told nothing sent (exit 5)", r["not_sent"]),
        ("resends (same --id)", r["resends"]),
        ("resends the server had from before (its result told)", r["from_before"]),
        ("outcomes learned by fetching the result", r["fetched"]),
        ("refused at the push (exit 2)", r["refused"]),
        ("final answers", ", ".join(f"{k} {v}" for k, v in sorted(r["told"].items(), key=str))),
        ("recovered by the server (requests.log)", r["recovered"]),
        ("applied (distinct requests on the branch)", r["applied"]),
        ("applied twice (must be 0)", r["applied_twice"]),
        ("wrong answers (must be 0)", r["wrong_answers"]),
        ("wall time", f"{r['wall_s']:.1f} s"),
    ]
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print("hook stats on the server:\n  " + r["stats"].replace("\n", "\n  "))
    os.makedirs(os.path.join(hp.ROOT, "bench", "out"), exist_ok=True)
    with open(os.path.join(hp.ROOT, "bench", "out", "http_kill.json"), "w") as f:
        json.dump({**r, "violations": violations}, f, indent=1)
    for v in violations:
        print(f"VIOLATION: {v}", file=sys.stderr)
    print(f"RESULT {'FAIL' if violations else 'PASS'}: {len(violations)} violations")


if __name__ == "__main__":
    main()

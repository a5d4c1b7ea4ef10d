#!/usr/bin/env bash
# Installs git-clada (binary on PATH, man page where `man` finds it) and runs
# it on a ready example: a scratch repository and two sample replies.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

echo "==> installing git-clada with cargo (a few minutes the first time)"
cargo install --quiet --locked --path "$root"
bin_dir=${CARGO_HOME:-$HOME/.cargo}/bin
# man-db looks for pages beside each bin directory on PATH: <prefix>/share/man.
install -Dm644 "$root/man/git-clada.1" "$bin_dir/../share/man/man1/git-clada.1"
case ":$PATH:" in *":$bin_dir:"*) ;; *) export PATH="$bin_dir:$PATH" ;; esac

repo=$(mktemp -d "${TMPDIR:-/tmp}/clada-try.XXXXXX")
echo "==> scratch repository: $repo"
git -C "$repo" init -q
printf 'print("Hello, world!")\n' > "$repo/main.py"
printf '# Notes\n' > "$repo/NOTES.md"
git -C "$repo" add main.py NOTES.md
git -C "$repo" -c user.name=you -c user.email=you@example.com commit -qm "initial"
# Uncommitted work of yours, which clada must keep safe.
printf 'draft idea\n' > "$repo/todo.txt"
cd "$repo"
examples="$root/examples"

echo
echo "==> git clada parse $examples/broken-reply.md   (every problem, with hints; exit status 2)"
git clada parse "$examples/broken-reply.md" || echo "(exit status $?)"

echo
echo "==> git clada apply reply.md   (your uncommitted todo.txt goes into a pre commit first)"
git clada apply "$examples/reply.md"
echo
git log --oneline --format='%h %s'
echo "git status --porcelain: '$(git status --porcelain)'"
echo "--- main.py"; cat main.py

echo
echo "==> git clada apply near-miss-reply.md   (a SEARCH that does not match: what the model is told)"
git clada apply "$examples/near-miss-reply.md" || echo "(exit status $?)"

echo
echo "==> git clada apply --verify 'python3 main.py' breaking-reply.md   (the check fails: your branch does not move)"
git clada apply --verify 'python3 main.py' "$examples/breaking-reply.md" || echo "(exit status $?)"
git log --oneline --format='%h %s' -1

echo
echo "Next: 'git clada prompt' prints the guide to give your model; 'git help clada' opens the manual."

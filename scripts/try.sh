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
git -C "$repo" add main.py
git -C "$repo" -c user.name=clada -c user.email=clada@localhost commit -qm "initial"
cp "$root/examples/reply.md" "$root/examples/broken-reply.md" "$repo/"
cd "$repo"

echo
echo "==> git clada parse reply.md   (a well-formed reply)"
git clada parse reply.md

echo
echo "==> git clada parse broken-reply.md   (every problem, with hints; exit status 2)"
git clada parse broken-reply.md || echo "(exit status $?)"

echo
echo "==> git clada parse --format json reply.md   (for tools and agents)"
git clada parse --format json reply.md | head -c 400; echo " ..."

echo
echo "Next: 'git clada prompt' prints the guide to give your model; 'git help clada' opens the manual."

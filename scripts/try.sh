#!/usr/bin/env bash
# Installs git-clada (binary on PATH, man page where `man` finds it) and runs
# it on a ready example: a scratch repository and two sample replies.
#
# Installs where `cargo install` does by default — $CARGO_INSTALL_ROOT, else
# $CARGO_HOME, else ~/.cargo — passing that root to cargo explicitly so that
# the binary and the man page always land under the same prefix. Ends by
# saying whether `git clada` works in a new shell, and what to add if not.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The PATH of the shell that started the script: what a new shell has too.
user_path=$PATH

install_root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
# Absolute, as it is printed for PATH (cargo reads a relative one from here).
case $install_root in /*) ;; *) install_root=$PWD/$install_root ;; esac
# Without trailing slashes: `CARGO_HOME=~/.cargo/` would be printed, and
# looked for on PATH, as ~/.cargo//bin.
while [ "$install_root" != / ] && [ "${install_root%/}" != "$install_root" ]; do
    install_root=${install_root%/}
done
bin_dir=$install_root/bin
# man-db looks for pages beside each bin directory on PATH: <prefix>/share/man.
man_dir=$install_root/share/man/man1

echo "==> cargo install --locked --root $install_root --path $root"
echo "    (a few minutes the first time; cargo shows each crate it builds)"
cargo install --locked --root "$install_root" --path "$root"
install -Dm644 "$root/man/git-clada.1" "$man_dir/git-clada.1"
echo "==> installed $bin_dir/git-clada and $man_dir/git-clada.1"
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

# Whether a new shell finds this git-clada (first on its PATH).
echo
found=$(PATH=$user_path; hash -r; command -v git-clada || true)
if [ -n "$found" ] && { [ "$found" = "$bin_dir/git-clada" ] || [ "$found" -ef "$bin_dir/git-clada" ]; }; then
    echo "==> git clada is ready: $bin_dir is on your PATH."
else
    if [ -n "$found" ]; then
        echo "==> a new shell would run another git-clada, $found, first."
    else
        echo "==> git clada is not on your PATH yet: $bin_dir is missing from it."
    fi
    echo "    Add this line to your shell's start-up file (~/.bashrc, ~/.zshrc, ~/.profile) and open a new shell:"
    echo
    # Quoted for the shell: a directory may hold spaces or quotes.
    printf '    export PATH=%q:"$PATH"\n' "$bin_dir"
    echo
    printf '    (fish: fish_add_path %q)\n' "$bin_dir"
fi

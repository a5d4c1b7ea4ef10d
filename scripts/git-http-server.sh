#!/usr/bin/env bash
# A smart-HTTP git server on 127.0.0.1 for the tests (tests/it/http.rs) and
# the benchmark (bench/http_push.py): lighttpd running `git http-backend`
# as CGI, as the user www-data, with no HOME and a web server's PATH, the
# set-up Gitea, Forgejo, GitLab and cgit-style servers all end in
# (`git-receive-pack` running the repository's hooks).
#
#   git-http-server.sh check BIN [nginx]   can it run here (lighttpd, or nginx with fcgiwrap)?
#                                          exit 0, or 1 with the reason on stderr
#   git-http-server.sh repo ROOT NAME BIN  a bare repository ROOT/repos/NAME.git owned by www-data,
#                                          push enabled, clada's server hooks installed
#   git-http-server.sh as-server ROOT BIN CMD...
#                                          run CMD as the server does (www-data, its environment)
#   git-http-server.sh run ROOT PORT ID BIN <SOCKET
#                                          serve ROOT/repos at http://127.0.0.1:PORT/ID/git/, and ID
#                                          itself at /id, on the listening socket that is standard
#                                          input (exec, in the foreground: see below)
#   git-http-server.sh serve ROOT PORT BIN [nginx]
#                                          from a shell: bind 127.0.0.1:PORT and serve ROOT/repos
#                                          at http://127.0.0.1:PORT/local/git/ (Ctrl-C stops it)
#   git-http-server.sh run-nginx ROOT PORT ID BIN <SOCKET
#                                          the same with nginx and fcgiwrap, the most common
#                                          set-up (doc/hooks.md has the configuration)
#
# BIN is the git-clada binary. Its directory comes first on the server's
# PATH, where an administrator would put it in /usr/local/bin. It must be
# executable by www-data along its whole path: `check` says so when not.
#
# `run` binds no port. The caller binds 127.0.0.1:PORT, listens, and gives
# the socket as standard input; lighttpd takes it over (systemd's socket
# activation, LISTEN_FDS). The port is never free between its choice and
# the server's start, so no other server can take it, and lighttpd cannot
# fail to bind it. ID (letters, digits, - and _) is the server's own: its
# URLs under /ID/ are found on no other server, and /id says which server
# answers. The caller starts `run` as the leader of a process group of its
# own and stops it by killing the group: lighttpd's CGI programs (git
# http-backend, git-receive-pack, the hooks) are in it, and outlive
# lighttpd killed alone.
#
# Needs root (to start lighttpd, which drops to www-data, and to act as
# www-data) and Debian's lighttpd package, or its nginx and fcgiwrap
# packages for run-nginx (.ci/run installs them).
set -euo pipefail

USER_NAME=www-data
BACKEND=/usr/lib/git-core/git-http-backend
WEB_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# A request with the header `X-Clada-Fault: <point>` runs its hooks with
# CLADA_FAULT=<point>: a debug build of git-clada aborts there, as a
# killed hook would (src/fault.rs; the recovery tests). A release build
# ignores it.
FAULT_POINTS="hook-locked post-committed branch-moved noted hook-noted hook-answered"

lighttpd_bin() {
    command -v lighttpd 2>/dev/null || { [ -x /usr/sbin/lighttpd ] && echo /usr/sbin/lighttpd; } || true
}

server_path() { # BIN
    printf '%s:%s' "$(dirname "$1")" "$WEB_PATH"
}

# The environment the web server gives its CGI programs (and so git and
# the hooks): no HOME, the web server's PATH, no system git config (the
# tests stay hermetic; a real server may have one).
as_server() { # ROOT BIN CMD...
    local root=$1 bin=$2
    shift 2
    cd "$root"
    exec setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups \
        env -i PATH="$(server_path "$bin")" GIT_CONFIG_NOSYSTEM=1 LC_ALL=C "$@"
}

case "${1:-}" in
check)
    bin=${2:?usage: check BIN}
    if [ "$(id -u)" != 0 ]; then
        echo "needs root: lighttpd is started as root and serves as $USER_NAME, and the repositories are made as $USER_NAME" >&2
        exit 1
    fi
    if [ "${3:-}" = nginx ]; then
        for program in nginx fcgiwrap; do
            if [ ! -x "/usr/sbin/$program" ]; then
                echo "$program is not installed (apt-get install nginx-light fcgiwrap; .ci/run does)" >&2
                exit 1
            fi
        done
    elif [ -z "$(lighttpd_bin)" ]; then
        echo "lighttpd is not installed (apt-get install lighttpd; .ci/run does)" >&2
        exit 1
    fi
    if [ ! -x "$BACKEND" ]; then
        echo "$BACKEND is missing (Debian's git package has it)" >&2
        exit 1
    fi
    if ! id "$USER_NAME" >/dev/null 2>&1; then
        echo "there is no user $USER_NAME to serve as" >&2
        exit 1
    fi
    if ! command -v setpriv >/dev/null 2>&1; then
        echo "setpriv (util-linux) is missing" >&2
        exit 1
    fi
    if ! setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups \
        env -i "$bin" --version >/dev/null 2>&1; then
        echo "$USER_NAME cannot execute $bin: every directory on its path must be searchable (o+x) by $USER_NAME" >&2
        exit 1
    fi
    ;;
repo)
    root=${2:?usage: repo ROOT NAME BIN}
    name=${3:?usage: repo ROOT NAME BIN}
    bin=${4:?usage: repo ROOT NAME BIN}
    mkdir -p "$root/repos"
    chown "$USER_NAME:$USER_NAME" "$root/repos"
    (bash "$0" as-server "$root" "$bin" sh -c '
        set -e
        git init -q --bare -b main "repos/$1.git"
        git -C "repos/$1.git" config http.receivepack true
        cd "repos/$1.git" && git clada hook install --server >/dev/null
    ' sh "$name")
    ;;
as-server)
    root=${2:?usage: as-server ROOT BIN CMD...}
    bin=${3:?usage: as-server ROOT BIN CMD...}
    shift 3
    as_server "$root" "$bin" "$@"
    ;;
run)
    root=${2:?usage: run ROOT PORT ID BIN <SOCKET}
    port=${3:?usage: run ROOT PORT ID BIN <SOCKET}
    id=${4:?usage: run ROOT PORT ID BIN <SOCKET}
    bin=${5:?usage: run ROOT PORT ID BIN <SOCKET}
    if ! [[ $id =~ ^[A-Za-z0-9_-]+$ ]]; then
        echo "run: ID must be letters, digits, - and _, not '$id'" >&2
        exit 2
    fi
    if [ ! -S /dev/stdin ]; then
        echo "run: standard input must be the socket listening on 127.0.0.1:$port" >&2
        exit 2
    fi
    mkdir -p "$root/www" "$root/uploads" "$root/repos"
    printf '%s\n' "$id" >"$root/www/id"
    # lighttpd opens its log as www-data.
    touch "$root/error.log"
    chown "$USER_NAME:$USER_NAME" "$root/uploads" "$root/error.log"
    env_block() { # EXTRA: the CGI environment, with one more entry
        cat <<EOF
    setenv.set-environment = (
        "PATH" => "$(server_path "$bin")",
        "GIT_PROJECT_ROOT" => "$root/repos",
        "GIT_HTTP_EXPORT_ALL" => "1",
        "GIT_CONFIG_NOSYSTEM" => "1",$1
    )
EOF
    }
    faults=""
    for point in $FAULT_POINTS; do
        faults+="    \$REQUEST_HEADER[\"X-Clada-Fault\"] == \"$point\" {
$(env_block "
        \"CLADA_FAULT\" => \"$point\",")
    }
"
    done
    # server.bind and server.port name the socket given: lighttpd serves
    # it instead of binding one.
    cat >"$root/lighttpd.conf" <<EOF
server.modules = ("mod_alias", "mod_setenv", "mod_cgi")
server.systemd-socket-activation = "enable"
server.bind = "127.0.0.1"
server.port = $port
server.document-root = "$root/www"
server.upload-dirs = ("$root/uploads")
server.errorlog = "$root/error.log"
server.username = "$USER_NAME"
server.groupname = "$USER_NAME"
server.max-connections = 256
alias.url = ("/$id/git" => "$BACKEND")
\$HTTP["url"] =~ "^/$id/git/" {
    cgi.assign = ("" => "")
$(env_block "")
$faults}
EOF
    lighttpd=$(lighttpd_bin)
    # The socket goes to descriptor 3, where socket activation passes it;
    # exec keeps this process's id, the one LISTEN_PID names.
    exec 3<&0 </dev/null
    exec env -i PATH="$WEB_PATH" LISTEN_PID=$$ LISTEN_FDS=1 "$lighttpd" -D -f "$root/lighttpd.conf"
    ;;
run-nginx)
    root=${2:?usage: run-nginx ROOT PORT ID BIN <SOCKET}
    port=${3:?usage: run-nginx ROOT PORT ID BIN <SOCKET}
    id=${4:?usage: run-nginx ROOT PORT ID BIN <SOCKET}
    bin=${5:?usage: run-nginx ROOT PORT ID BIN <SOCKET}
    if ! [[ $id =~ ^[A-Za-z0-9_-]+$ ]]; then
        echo "run-nginx: ID must be letters, digits, - and _, not '$id'" >&2
        exit 2
    fi
    if [ ! -S /dev/stdin ]; then
        echo "run-nginx: standard input must be the socket listening on 127.0.0.1:$port" >&2
        exit 2
    fi
    mkdir -p "$root/www" "$root/repos" "$root/nginx"
    printf '%s\n' "$id" >"$root/www/id"
    touch "$root/error.log"
    chown "$USER_NAME:$USER_NAME" "$root/nginx" "$root/error.log"
    # fcgiwrap runs git http-backend (and so git-receive-pack and the
    # hooks) as www-data, with the FastCGI parameters nginx sends as the
    # whole environment. Its workers take requests in parallel, as a
    # deployment's should (one worker serialises every push). A socket
    # left by a killed fcgiwrap would make this one fail to bind it
    # (bench/http_kill.py starts the server again after killing it).
    rm -f "$root/nginx/fcgiwrap.sock"
    setpriv --reuid="$USER_NAME" --regid="$USER_NAME" --clear-groups \
        env -i PATH="$WEB_PATH" /usr/sbin/fcgiwrap -c 8 -s "unix:$root/nginx/fcgiwrap.sock" \
        </dev/null 2>>"$root/error.log" &
    for _ in $(seq 200); do
        [ -S "$root/nginx/fcgiwrap.sock" ] && break
        sleep 0.05
    done
    faults=""
    for point in $FAULT_POINTS; do
        faults+="
        $point $point;"
    done
    cat >"$root/nginx.conf" <<EOF
daemon off;
master_process on;
worker_processes 2;
user $USER_NAME;
pid $root/nginx/nginx.pid;
error_log $root/error.log;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path $root/nginx/body;
    fastcgi_temp_path $root/nginx/fastcgi;
    proxy_temp_path $root/nginx/proxy;
    uwsgi_temp_path $root/nginx/uwsgi;
    scgi_temp_path $root/nginx/scgi;
    # X-Clada-Fault: <point> runs the hooks with CLADA_FAULT=<point>.
    map \$http_x_clada_fault \$clada_fault {
        default "";$faults
    }
    server {
        # The socket given, inherited (below).
        listen 127.0.0.1:$port;
        location = /id { root $root/www; default_type text/plain; }
        location ~ ^/$id/git(/.*)\$ {
            # Pushes of any size, and hooks that take their time.
            client_max_body_size 0;
            fastcgi_read_timeout 600s;
            # The hooks' lines reach the pusher as they are written.
            fastcgi_buffering off;
            include /etc/nginx/fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $BACKEND;
            fastcgi_param PATH_INFO \$1;
            fastcgi_param GIT_PROJECT_ROOT $root/repos;
            fastcgi_param GIT_HTTP_EXPORT_ALL 1;
            fastcgi_param GIT_CONFIG_NOSYSTEM 1;
            fastcgi_param PATH $(server_path "$bin");
            fastcgi_param REMOTE_USER \$remote_user;
            fastcgi_param CLADA_FAULT \$clada_fault if_not_empty;
            fastcgi_pass unix:$root/nginx/fcgiwrap.sock;
        }
    }
}
EOF
    # nginx takes listening sockets over from the environment variable
    # NGINX (descriptors, each followed by ';'), as it hands them to a new
    # binary on an upgrade: the socket given becomes descriptor 3. exec
    # keeps this process as the group's leader; fcgiwrap is in the group.
    exec 3<&0 </dev/null
    exec env -i PATH="$WEB_PATH" NGINX="3;" /usr/sbin/nginx -c "$root/nginx.conf" -p "$root/nginx/"
    ;;
serve)
    # From a shell: binds 127.0.0.1:PORT itself (with python3, as bash
    # cannot listen) and runs `run` (or `run-nginx`) on it, in the
    # foreground; Ctrl-C stops it. Repositories come from `repo`.
    root=${2:?usage: serve ROOT PORT BIN [nginx]}
    port=${3:?usage: serve ROOT PORT BIN [nginx]}
    bin=${4:?usage: serve ROOT PORT BIN [nginx]}
    mode=run
    if [ "${5:-}" = nginx ]; then mode=run-nginx; fi
    mkdir -p "$root"
    chmod 755 "$root"
    echo "serving $root/repos/NAME.git at http://127.0.0.1:$port/local/git/NAME.git" >&2
    exec python3 -c '
import os, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[4])))
s.listen(128)
os.dup2(s.fileno(), 0)
os.execvp("bash", ["bash"] + sys.argv[1:])
' "$0" "$mode" "$root" "$port" local "$bin"
    ;;
*)
    echo "usage: $0 check BIN [nginx] | repo ROOT NAME BIN | as-server ROOT BIN CMD... | run ROOT PORT ID BIN <SOCKET | run-nginx ROOT PORT ID BIN <SOCKET | serve ROOT PORT BIN [nginx]" >&2
    exit 2
    ;;
esac

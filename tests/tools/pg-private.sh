#!/usr/bin/env bash
# A private PostgreSQL server for the tests, from Debian's postgresql
# package: its cluster, Unix socket and log all in one folder, no TCP port,
# trust authentication for the superuser "tierwise", fsync off (a test
# server's data is thrown away).  Run as root, the server runs as nobody
# (PostgreSQL refuses root); otherwise as the current user.
#
#   pg-private.sh start DIR   makes DIR (absent or empty), starts the server
#                             and prints its base connection string
#                             ("host=DIR hostaddr='' port=5432
#                             user=tierwise", no dbname; the empty hostaddr
#                             overrides a PGHOSTADDR in the environment,
#                             which would send libpq over TCP instead of
#                             the socket, and the port, the socket's name,
#                             is fixed whatever PGPORT says)
#   pg-private.sh stop DIR    stops it (fast: open sessions are ended) and
#                             removes DIR; a DIR that holds no such server
#                             is left alone
#
# TW_PG_BINDIR names the folder of initdb and pg_ctl (default: pg_config
# --bindir, else the newest /usr/lib/postgresql/*/bin).
# With TW_PG_WATCH_PID=PID, start also leaves a watcher that stops the
# server and removes DIR when process PID ends, however it ends (a
# SIGKILLed tests/run.sh leaves nothing running).
#
# Exit status: 0 done; 77 the PostgreSQL server binaries are not installed
# (the reason on stderr); 1 anything else failed.
set -euo pipefail

usage() { echo "usage: pg-private.sh start|stop DIR" >&2; exit 1; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$2
case $cmd in start|stop) ;; *) usage ;; esac
case $dir in
  /*) ;;
  *) dir="$(pwd)/$dir" ;;
esac
# DIR goes into a connection string unquoted and names the socket.
case $dir in
  *[[:space:]\'\"\\]*)
    echo "pg-private.sh: $dir: a folder without spaces, quotes or backslashes is needed" >&2
    exit 1 ;;
esac
# A Unix socket's path is at most 107 bytes: DIR/.s.PGSQL.5432 must fit.
if [ $(( ${#dir} + 17 )) -gt 107 ]; then
  echo "pg-private.sh: $dir is too long for a Unix socket beside it (at most 90 characters)" >&2
  exit 1
fi
marker="$dir/.tierwise-pg-private"

# The server's binaries: TW_PG_BINDIR's when set, else pg_config's, else
# the newest Debian version's.
bindir=""
if [ -n "${TW_PG_BINDIR:-}" ]; then
  [ -x "$TW_PG_BINDIR/initdb" ] && [ -x "$TW_PG_BINDIR/pg_ctl" ] && bindir=$TW_PG_BINDIR
elif command -v pg_config >/dev/null 2>&1; then
  b=$(pg_config --bindir 2>/dev/null || true)
  [ -n "$b" ] && [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ] && bindir=$b
fi
if [ -z "$bindir" ] && [ -z "${TW_PG_BINDIR:-}" ]; then
  for b in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$b/initdb" ] && [ -x "$b/pg_ctl" ]; then bindir=$b; break; fi
  done
fi

# Runs a command as the server's user, from DIR (initdb and pg_ctl
# complain about a working folder they can't read).
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd "$dir" && runuser -u nobody -- "$@")
  else
    (cd "$dir" && "$@")
  fi
}

stop() {
  if [ ! -e "$marker" ]; then
    if [ -e "$dir" ]; then
      echo "pg-private.sh: $dir holds no server of pg-private.sh's; left as it is" >&2
      exit 1
    fi
    return 0
  fi
  if [ -n "$bindir" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  # A postmaster still there (pg_ctl could not stop it) is ended by its pid.
  if [ -f "$dir/data/postmaster.pid" ]; then
    pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null || true)
    case $pid in
      ''|*[!0-9]*) ;;
      *) kill -KILL "$pid" 2>/dev/null || true ;;
    esac
  fi
  rm -rf "$dir"
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi

if [ -z "$bindir" ]; then
  echo "pg-private.sh: no PostgreSQL server binaries (initdb, pg_ctl) in" \
       "${TW_PG_BINDIR:-pg_config --bindir or /usr/lib/postgresql/*/bin}; Debian's postgresql" \
       "package has them" >&2
  exit 77
fi
if [ "$(id -u)" -eq 0 ] && ! command -v runuser >/dev/null 2>&1; then
  echo "pg-private.sh: run as root, but runuser (util-linux) is missing to run the server as nobody" >&2
  exit 77
fi
if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  echo "pg-private.sh: $dir is not empty; give a new or empty folder" >&2
  exit 1
fi
mkdir -p "$dir"
: >"$marker"
if [ "$(id -u)" -eq 0 ]; then
  chown nobody: "$dir"
  # nobody must reach DIR through its parents.
  if ! runuser -u nobody -- test -x "$dir"; then
    echo "pg-private.sh: nobody can't reach $dir (a parent folder is closed to others)" >&2
    rm -rf "$dir"
    exit 1
  fi
fi
chmod 700 "$dir"

# Whatever fails from here leaves nothing behind.
trap 'stop' ERR
if ! as_owner "$bindir/initdb" -D "$dir/data" --auth=trust -U tierwise -E UTF8 --locale=C \
     --no-sync >"$dir/initdb.log" 2>&1; then
  echo "pg-private.sh: initdb failed:" >&2
  tail -20 "$dir/initdb.log" >&2
  stop
  exit 1
fi
# No TCP at all (listen_addresses empty), the socket in DIR; enough
# connections for several backends with their pools (integration tests).
opts="-c listen_addresses='' -c unix_socket_directories='$dir' -c port=5432 -c fsync=off"
opts+=" -c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
opts+=" -c shared_buffers=64MB"
if ! as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$opts" \
     start >"$dir/pg_ctl.log" 2>&1; then
  echo "pg-private.sh: the server did not start:" >&2
  tail -20 "$dir/server.log" >&2 2>/dev/null || cat "$dir/pg_ctl.log" >&2
  stop
  exit 1
fi
trap - ERR

if [ -n "${TW_PG_WATCH_PID:-}" ]; then
  watched=$TW_PG_WATCH_PID
  self=$(realpath "$0")
  # Detached, holding none of the caller's descriptors (a pipe held open
  # would keep the caller's reader waiting).
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -e "$3" ]; do sleep 2; done
                  [ -e "$3" ] && "$2" stop "$4"' \
    pg-watch "$watched" "$self" "$marker" "$dir" </dev/null >/dev/null 2>&1 &
fi
echo "host=$dir hostaddr='' port=5432 user=tierwise"

# server-lib.sh - what the tierwise serve tests share; sourced after
# `scratch` is set and testlib.sh is sourced.
#
#   need TOOL...            exit 77 (skipped) unless every TOOL is installed
#   start_server NAME ARGS  tierwise serve --db $db on 127.0.0.1 port 0 with a
#                           port file; sets $pid, $port, $base (empty port:
#                           it did not come up in 10 s)
#   stop_server SIG         sends SIG to $pid and waits; sets $stop_status
#   make_token ROLE         prints a new token of ROLE in $db
#   report ID               writes a valid report with id ID to $scratch/r-ID.json
#   req METHOD PATH TOKEN [CURL ARGS...]
#                           prints the HTTP status; the body goes to $scratch/body,
#                           the headers to $scratch/headers ("-" as TOKEN: none)
#   uuid N                  prints a UUID made of this run's prefix and N
#   db_lock [FILE]          holds SQLite's write lock on FILE ($db) from a
#                           sqlite3 shell until db_unlock; returns once held
#                           (status 1 if not held in 10 s). The server's
#                           writer then waits for it (busy timeout 5 s).
#   db_unlock               rolls that transaction back and ends the shell
#   metric NAME             prints the value of NAME in $base/metrics
#   start_azsim SCENARIO    tierwise-azsim ($TW_AZSIM) on 127.0.0.1 port 0 with
#                           SCENARIO; sets $sim_pid and $sim (its base URL);
#                           exits 1 when it does not come up in 10 s
#
# Every server started is killed at exit (cleanup_servers, from the trap).

cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
fixtures=${TW_FIXTURES:?}
srcdir=${TW_SOURCE_DIR:?}
db="$scratch/tw.db"
server_pids=()
template="$fixtures/reports/web-03.json"

need() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
  done
}

cleanup_servers() {
  for p in "${server_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  [ -n "${lock_pid:-}" ] && kill "$lock_pid" 2>/dev/null
  return 0
}

start_server() {
  local name=$1; shift
  rm -f "$scratch/$name.port"
  "$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/$name.port" \
    --web "$srcdir/web" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err" &
  pid=$!
  server_pids+=("$pid")
  port=""
  base=""
  for _ in $(seq 100); do
    if [ -s "$scratch/$name.port" ]; then
      port=$(cat "$scratch/$name.port")
      base="http://127.0.0.1:$port"
      return
    fi
    kill -0 "$pid" 2>/dev/null || return
    sleep 0.1
  done
}

stop_server() {
  kill -"$1" "$pid" 2>/dev/null
  wait "$pid"
  stop_status=$?
}

make_token() {
  "$cli" token create --db "$db" --role "$1" --name "test-$1" 2>/dev/null
}

# The run's UUID prefix: random, so reruns never collide.
uuid_prefix=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
uuid() {
  printf '%s-%04x-4%03x-8%03x-%012x\n' "$uuid_prefix" $(($1 >> 24 & 0xffff)) \
    $(($1 >> 12 & 0xfff)) $(($1 & 0xfff)) "$1"
}

report() {
  jq -c --arg id "$1" '.id = $id' "$template" >"$scratch/r-$1.json"
}

req() {
  local method=$1 path=$2 tok=$3; shift 3
  local auth=()
  [ "$tok" != "-" ] && auth=(-H "Authorization: Bearer $tok")
  curl -s --noproxy '*' --path-as-is -X "$method" "${auth[@]}" -o "$scratch/body" \
    -D "$scratch/headers" -w '%{http_code}' "$@" "$base$path"
}

# post_report FILE TOKEN: POSTs a report file, prints the status.
post_report() {
  req POST /api/v1/reports "$2" -H 'Content-Type: application/json' --data-binary "@$1"
}

# healthy: the server still answers /healthz with 200.
healthy() {
  [ "$(req GET /healthz -)" = 200 ]
}

db_lock() {
  local file=${1:-$db} fifo="$scratch/lock.fifo"
  rm -f "$fifo" "$scratch/lock.out"
  mkfifo "$fifo"
  sqlite3 "$file" <"$fifo" >"$scratch/lock.out" 2>&1 &
  lock_pid=$!
  exec {lock_fd}>"$fifo"
  printf ".timeout 10000\nBEGIN IMMEDIATE;\nSELECT 'locked';\n" >&"$lock_fd"
  for _ in $(seq 200); do
    grep -qx locked "$scratch/lock.out" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}

db_unlock() {
  [ -n "${lock_pid:-}" ] || return 0
  printf 'ROLLBACK;\n.quit\n' >&"$lock_fd"
  exec {lock_fd}>&-
  wait "$lock_pid"
  lock_pid=""
}

start_azsim() {
  rm -f "$scratch/sim.port"
  "${TW_AZSIM:?}" --scenario "$1" --port-file "$scratch/sim.port" >/dev/null 2>"$scratch/azsim.err" &
  sim_pid=$!
  for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
  [ -s "$scratch/sim.port" ] || { echo "FAIL: the simulator did not start: $(cat "$scratch/azsim.err")"; exit 1; }
  sim="http://127.0.0.1:$(cat "$scratch/sim.port")"
}

metric() {
  curl -s --noproxy '*' -m 5 "$base/metrics" | awk -v n="$1" '$1 == n {print $2}'
}

#!/usr/bin/env bash
# The agent's spool with the real backend on 127.0.0.1: reports made while
# tierwise serve is down are kept; once it is up they are all delivered,
# oldest first, each exactly once (counted on the server); the agent
# running as a daemon retries with backoff until the backend comes back
# and stops cleanly on SIGTERM; a full spool is said, with exit 4, and
# nothing in it is lost.  Needs jq and curl: exits 77 (skipped) without.
set -u
agent=${TW_AGENT:?run through ctest}
cli=${TW_CLI:?}
azsim=${TW_AZSIM:?}
src=${TW_SOURCE_DIR:?}
for tool in jq curl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
export TIERWISE_LOOPBACK_ONLY=1
unset STATE_DIRECTORY
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-agent-spool-XXXXXX")
sim="" srv="" daemon=""
cleanup() {
  for p in $daemon $srv $sim; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"

wait_file() { # FILE PID
  for _ in $(seq 100); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.1; done
  return 1
}

"$azsim" --scenario "$src/tests/fixtures/sim/scenario-basic.json" --port-file "$scratch/sim.port" \
  >/dev/null 2>"$scratch/sim.err" &
sim=$!
wait_file "$scratch/sim.port" "$sim" || { echo "simulator: $(cat "$scratch/sim.err")"; exit 1; }
export TIERWISE_IMDS_URL="http://127.0.0.1:$(cat "$scratch/sim.port")"

db="$scratch/tierwise.db"
(umask 077; "$cli" token create --db "$db" --role agent >"$scratch/agent.tok") 2>/dev/null ||
  { echo "token create failed"; exit 1; }

# start_server [PORT]: tierwise serve on PORT (default 0); sets srv, port.
start_server() {
  rm -f "$scratch/srv.port"
  "$cli" serve --db "$db" --listen "127.0.0.1:${1:-0}" --port-file "$scratch/srv.port" \
    2>>"$scratch/srv.err" &
  srv=$!
  wait_file "$scratch/srv.port" "$srv" || { srv=""; return 1; }
  port=$(cat "$scratch/srv.port")
}
stop_server() {
  kill -TERM "$srv"; wait "$srv"; local st=$?; srv=""
  [ $st -eq 0 ] && ok || bad "tierwise serve exit $st after SIGTERM"
}
stored() { curl -s --noproxy '*' "http://127.0.0.1:$port/metrics" | sed -n 's/^tierwise_reports_stored //p'; }
spooled() { "$agent" run --spool "$1" --spool-list | jq -r "[.[] | select(.state == \"$2\")] | length"; }

# The backend's port, while nothing listens on it.
start_server || { echo "tierwise serve did not start: $(cat "$scratch/srv.err")"; exit 1; }
stop_server
down="http://127.0.0.1:$port"
run=("$agent" run --token-file "$scratch/agent.tok" --profiles none --once)

# 1. Down: three cycles, three reports kept, each run exits 7 (nothing
#    delivered, the report waits in the spool).
for i in 1 2 3; do
  "${run[@]}" --server "$down" --spool "$scratch/spool.db" 2>"$scratch/err"
  st=$?
  [ $st -eq 7 ] && grep -q "kept in the spool" "$scratch/err" && ok ||
    bad "run $i with the backend down: exit $st: $(cat "$scratch/err")"
done
[ "$(spooled "$scratch/spool.db" pending)" = 3 ] && ok || bad "not 3 reports spooled"
"$agent" run --spool "$scratch/spool.db" --spool-list | jq -r '.[].id' >"$scratch/ids"

# 2. Up: the three old reports, oldest first, then the new one; each once.
start_server || { bad "serve did not restart"; finish agent-spool; exit 1; }
"${run[@]}" --server "http://127.0.0.1:$port" --spool "$scratch/spool.db" 2>"$scratch/err"
st=$?
[ $st -eq 0 ] && ok || bad "drain: exit $st: $(cat "$scratch/err")"
sed -n 's/.*report \([0-9a-f-]*\) delivered.*/\1/p' "$scratch/err" >"$scratch/delivered"
[ "$(head -3 "$scratch/delivered")" = "$(cat "$scratch/ids")" ] && [ "$(wc -l <"$scratch/delivered")" -eq 4 ] &&
  ok || bad "delivery order: $(cat "$scratch/delivered") vs spooled $(cat "$scratch/ids")"
[ "$(stored)" = 4 ] && ok || bad "the server holds $(stored) reports, not 4"
[ "$(spooled "$scratch/spool.db" pending)" = 0 ] && ok || bad "spool not empty after the drain"
# Nothing is sent twice: another run adds exactly one.
"${run[@]}" --server "http://127.0.0.1:$port" --spool "$scratch/spool.db" 2>/dev/null
[ "$(stored)" = 5 ] && ok || bad "the server holds $(stored) reports, not 5"
stop_server

# 3. The daemon: started while the backend is down, it spools its report
#    and retries with backoff; the backend comes back on the same port and
#    gets it once; SIGTERM stops the agent with status 0.  The port is free
#    when the daemon starts; should another process take it before the
#    backend is back, the check is made again on a new port (with a new
#    spool), up to five times, and fails after that.
delivered=0
for attempt in 1 2 3 4 5; do
  start_server || { bad "serve did not start: $(tail -3 "$scratch/srv.err")"; break; }
  kill -TERM "$srv"; wait "$srv"; srv=""
  dport=$port dspool="$scratch/d$attempt.db"
  : >"$scratch/daemon.err"
  "$agent" run --token-file "$scratch/agent.tok" --profiles none --server "http://127.0.0.1:$dport" \
    --spool "$dspool" --interval 1h --retry-min 200ms --retry-max 1s 2>"$scratch/daemon.err" &
  daemon=$!
  for _ in $(seq 100); do grep -q "next delivery attempt" "$scratch/daemon.err" && break; sleep 0.1; done
  if start_server "$dport"; then
    delivered=1
    break
  fi
  echo "note: port $dport was taken meanwhile (attempt $attempt); again on another"
  kill -TERM "$daemon"; wait "$daemon"; daemon=""
done
if [ $delivered -eq 1 ]; then
  grep -q "next delivery attempt" "$scratch/daemon.err" && ok ||
    bad "daemon did not spool: $(cat "$scratch/daemon.err")"
  for _ in $(seq 150); do grep -q "delivered" "$scratch/daemon.err" && break; sleep 0.1; done
  grep -q "delivered (stored)" "$scratch/daemon.err" && ok ||
    bad "daemon did not deliver: $(cat "$scratch/daemon.err")"
  [ "$(stored)" = 6 ] && ok || bad "the server holds $(stored) reports, not 6"
  stop_server
else
  bad "the backend could not come back on the daemon's port in 5 attempts: $(tail -3 "$scratch/srv.err")"
fi
# One agent per spool: a second one is turned away, saying why.
if [ -n "$daemon" ]; then
  expect 1 "another tierwise-agent run" -- "${run[@]}" --server "$down" --spool "$dspool"
  kill -TERM "$daemon"; wait "$daemon"; st=$?; daemon=""
  [ $st -eq 0 ] && grep -q "stopping" "$scratch/daemon.err" && ok ||
    bad "daemon exit $st after SIGTERM: $(tail -3 "$scratch/daemon.err")"
else
  bad "no daemon to check the one-agent-per-spool rule and SIGTERM with"
fi

# 4. The bound: two reports fit; the third is refused loudly (exit 4) and
#    the two kept are still there.
for i in 1 2; do
  "${run[@]}" --server "$down" --spool "$scratch/b.db" --spool-max 2 2>/dev/null
  st=$?
  [ $st -eq 7 ] && ok || bad "bound run $i: exit $st, want 7 (spooled)"
done
"${run[@]}" --server "$down" --spool "$scratch/b.db" --spool-max 2 2>"$scratch/err"
st=$?
[ $st -eq 4 ] && grep -q "is full" "$scratch/err" && ok || bad "full spool: exit $st: $(cat "$scratch/err")"
[ "$(spooled "$scratch/b.db" pending)" = 2 ] && ok || bad "full spool lost reports"

kill -TERM "$sim"; wait "$sim"; st=$?; sim=""
[ $st -eq 0 ] && ok || bad "simulator exit $st after SIGTERM"
finish agent-spool

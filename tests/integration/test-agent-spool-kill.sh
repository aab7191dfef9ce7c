#!/usr/bin/env bash
# tierwise-agent run killed (SIGKILL) at the two moments its spool exists
# for, against a real tierwise serve, and the report ends in the server's
# database exactly once after the next run:
#  1. between the spool write and the POST reaching the server: the server
#     is stopped (SIGSTOP), so the agent's POST waits unread; the kill comes
#     once the agent says the report is made (it is in the spool then);
#     the server is killed without ever reading it.  The next run, against
#     the server restarted, delivers it (stored, the first time).
#  2. between the 201 and the spool's delete: the spool's write lock is
#     held by another process, so the agent's delete waits; the kill comes
#     when the server's own log line says it answered 201.  The report is
#     still in the spool; the next run sends it again and the server answers
#     "already stored": one copy.
# And the 503 store_unavailable the agent's spool depends on: with the
# backend's database locked, the agent's first POST gets 503 with
# Retry-After: 5; the agent waits that long before its next attempt, which
# delivers it once the lock is gone.
# Needs curl, jq and sqlite3 (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-agent-kill-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
agent_bin=${TW_AGENT:?run through ctest}
azsim=${TW_AZSIM:?}
need curl jq sqlite3
export TIERWISE_LOOPBACK_ONLY=1
unset STATE_DIRECTORY
sim="" ag=""
trap 'for p in $ag $sim; do kill -KILL "$p" 2>/dev/null; done; cleanup_servers; rm -rf "$scratch"' EXIT

wait_file() { # FILE PID
  for _ in $(seq 100); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.1; done
  return 1
}
# wait_grep PATTERN FILE [TENTHS]: until FILE has a line matching PATTERN.
wait_grep() {
  for _ in $(seq "${3:-100}"); do grep -q -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

"$azsim" --scenario "$TW_SOURCE_DIR/tests/fixtures/sim/scenario-basic.json" --port-file "$scratch/sim.port" \
  >/dev/null 2>"$scratch/sim.err" &
sim=$!
wait_file "$scratch/sim.port" "$sim" || { echo "FAIL: simulator: $(cat "$scratch/sim.err")"; exit 1; }
export TIERWISE_IMDS_URL="http://127.0.0.1:$(cat "$scratch/sim.port")"
(umask 077; make_token agent >"$scratch/agent.tok")
[ -s "$scratch/agent.tok" ] || { echo "FAIL: token create"; exit 1; }

run=("$agent_bin" run --token-file "$scratch/agent.tok" --profiles none --once)
pending() { "$agent_bin" run --spool "$1" --spool-list | jq -r '.[] | select(.state == "pending") | .id'; }
on_server() { sqlite3 "$db" "SELECT count(*) FROM reports WHERE id = '$1';"; }
report_of() { sed -n 's/.*report \([0-9a-f-]*\) made.*/\1/p' "$1" | head -1; }

# ---- 1. killed between the spool write and the POST ----
start_server one --log-requests
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/one.err")"; exit 1; }
kill -STOP "$pid"
"${run[@]}" --server "$base" --spool "$scratch/s1.db" 2>"$scratch/a1.err" &
ag=$!
wait_grep ' made (' "$scratch/a1.err" && ok || bad "the agent made no report: $(cat "$scratch/a1.err")"
x1=$(report_of "$scratch/a1.err")
sleep 0.5 # posting: the server reads nothing
kill -0 "$ag" 2>/dev/null && ok || bad "the agent was not waiting for the stopped server: $(cat "$scratch/a1.err")"
[ "$(pending "$scratch/s1.db")" = "$x1" ] && ok || bad "report $x1 is not in the spool before the POST is answered"
kill -KILL "$ag"
wait "$ag" 2>/dev/null
ag=""
{ kill -KILL "$pid"; wait "$pid"; } 2>/dev/null # it never read the POST
grep -q 'delivered' "$scratch/a1.err" && bad "killed run says delivered: $(cat "$scratch/a1.err")" || ok
[ "$(on_server "$x1")" = 0 ] && ok || bad "report $x1 reached the stopped server"
[ "$(pending "$scratch/s1.db")" = "$x1" ] && ok || bad "report $x1 left the spool with the kill: $(pending "$scratch/s1.db")"
# The next run, against the server back up: delivered, the first copy.
start_server one-again --log-requests
[ -n "$port" ] || { bad "restart: $(cat "$scratch/one-again.err")"; finish agent-spool-kill; exit 1; }
"${run[@]}" --server "$base" --spool "$scratch/s1.db" 2>"$scratch/a1b.err"
st=$?
[ $st = 0 ] && ok || bad "next run: exit $st: $(cat "$scratch/a1b.err")"
grep -q "report $x1 delivered (stored)" "$scratch/a1b.err" && ok || bad "report $x1 not delivered by the next run: $(cat "$scratch/a1b.err")"
[ "$(on_server "$x1")" = 1 ] && ok || bad "report $x1 is $(on_server "$x1") times on the server"
[ -z "$(pending "$scratch/s1.db")" ] && ok || bad "the spool still holds $(pending "$scratch/s1.db")"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM reports;')" = 2 ] && ok || bad "$(sqlite3 "$db" 'SELECT count(*) FROM reports;') reports on the server, want 2 (x1 and the new run's)"

# ---- 2. killed between the 201 and the delete ----
# A report waiting in the spool (the backend was down for the first run).
down="http://127.0.0.1:1"
"${run[@]}" --server "$down" --spool "$scratch/s2.db" 2>"$scratch/a2a.err"
x2=$(report_of "$scratch/a2a.err")
[ -n "$x2" ] && [ "$(pending "$scratch/s2.db")" = "$x2" ] && ok || bad "no report spooled with the backend down: $(cat "$scratch/a2a.err")"
n_201=$(grep -c 'POST /api/v1/reports 201' "$scratch/one-again.err")
db_lock "$scratch/s2.db" || bad "could not lock the spool: $(cat "$scratch/lock.out")"
"${run[@]}" --server "$base" --spool "$scratch/s2.db" 2>"$scratch/a2.err" &
ag=$!
# The server's log line: it answered 201 (the commit came before it).
for _ in $(seq 100); do
  [ "$(grep -c 'POST /api/v1/reports 201' "$scratch/one-again.err")" -gt "$n_201" ] && break
  sleep 0.1
done
[ "$(grep -c 'POST /api/v1/reports 201' "$scratch/one-again.err")" = $((n_201 + 1)) ] && ok || bad "the server did not answer 201: $(tail -3 "$scratch/one-again.err")"
[ "$(on_server "$x2")" = 1 ] && ok || bad "report $x2 not on the server after its 201"
sleep 0.3 # the agent has the answer and waits to delete it
kill -0 "$ag" 2>/dev/null && ok || bad "the agent was not waiting to delete the report: $(cat "$scratch/a2.err")"
kill -KILL "$ag"
wait "$ag" 2>/dev/null
ag=""
db_unlock
grep -q 'delivered' "$scratch/a2.err" && bad "killed run says delivered: $(cat "$scratch/a2.err")" || ok
[ "$(pending "$scratch/s2.db")" = "$x2" ] && ok || bad "report $x2 left the spool without its delete: $(pending "$scratch/s2.db")"
# The next run sends it again: already stored, one copy, spool empty.
"${run[@]}" --server "$base" --spool "$scratch/s2.db" 2>"$scratch/a2b.err"
st=$?
[ $st = 0 ] && ok || bad "next run: exit $st: $(cat "$scratch/a2b.err")"
grep -q "report $x2 delivered (already stored)" "$scratch/a2b.err" && ok || bad "report $x2 not confirmed as already stored: $(cat "$scratch/a2b.err")"
[ "$(on_server "$x2")" = 1 ] && ok || bad "report $x2 is $(on_server "$x2") times on the server"
[ -z "$(pending "$scratch/s2.db")" ] && ok || bad "the spool still holds $(pending "$scratch/s2.db")"
[ "$(sqlite3 "$db" 'SELECT count(*) FROM reports;')" = 4 ] && ok || bad "$(sqlite3 "$db" 'SELECT count(*) FROM reports;') reports on the server, want 4"

# ---- 3. the backend's 503: kept, retried after Retry-After, delivered ----
n_503=$(grep -c 'POST /api/v1/reports 503' "$scratch/one-again.err")
db_lock || bad "could not lock the backend's database: $(cat "$scratch/lock.out")"
t0=$(date +%s%N)
"${run[@]}" --server "$base" --spool "$scratch/s3.db" 2>"$scratch/a3.err" &
ag=$!
for _ in $(seq 100); do
  [ "$(grep -c 'POST /api/v1/reports 503' "$scratch/one-again.err")" -gt "$n_503" ] && break
  sleep 0.1
done
t503=$(date +%s%N)
[ "$(grep -c 'POST /api/v1/reports 503' "$scratch/one-again.err")" = $((n_503 + 1)) ] && ok || bad "no 503 from the locked backend: $(tail -3 "$scratch/one-again.err")"
db_unlock
x3=$(report_of "$scratch/a3.err")
[ -n "$x3" ] && [ "$(pending "$scratch/s3.db")" = "$x3" ] && ok || bad "report ${x3:-?} not in the spool after the 503"
wait "$ag"
st=$?
ag=""
t1=$(date +%s%N)
waited=$(( (t1 - t503) / 1000000 ))
echo "503 after $(( (t503 - t0) / 1000000 )) ms; delivered $waited ms later"
[ $st = 0 ] && ok || bad "run after a 503: exit $st: $(cat "$scratch/a3.err")"
grep -q "report $x3 delivered (stored)" "$scratch/a3.err" && ok || bad "report $x3 not delivered after the 503: $(cat "$scratch/a3.err")"
[ "$waited" -ge 4000 ] && ok || bad "the agent tried again $waited ms after the 503, before its Retry-After of 5 s"
[ "$(on_server "$x3")" = 1 ] && ok || bad "report $x3 is $(on_server "$x3") times on the server"
[ -z "$(pending "$scratch/s3.db")" ] && ok || bad "the spool still holds $(pending "$scratch/s3.db")"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "tierwise serve exit $stop_status after SIGTERM"
finish agent-spool-kill

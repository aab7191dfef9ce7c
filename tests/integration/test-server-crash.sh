#!/usr/bin/env bash
# tierwise serve killed with SIGKILL while reports are in flight, then
# restarted on the same database.  The kill does not come after a fixed
# sleep: in the middle of a burst of concurrent reports another process
# takes the database's write lock, so the writer's next commit waits for it
# and every worker's report is parsed, queued and unanswered; the server's
# own /metrics says when they all are (tierwise_ingest_queue_depth), and
# the kill comes then, before the writer's busy timeout.  Then: requests
# were in flight (each worker's last report got no answer), every report
# that got a 2xx is in the database, one that got no answer is absent (it
# was never committed) or, if there, was never acknowledged, PRAGMA
# integrity_check is ok, and the reports cut off can be sent again (stored
# once).  A server that answered before its commit acknowledges reports
# the kill then loses, and fails here every time.  Needs curl, jq and
# sqlite3 (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-crash-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
workers=()
trap 'touch "$scratch/stop"; for w in "${workers[@]}"; do kill "$w" 2>/dev/null; done; cleanup_servers; rm -rf "$scratch"' EXIT

n_workers=8
agent=$(make_token agent)
start_server main --threads 4
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
jq -c '.id = "@ID@"' "$template" >"$scratch/tmpl.json"

# worker W: posts reports with fresh ids until told to stop, logging
# "id status" per report (000: no answer).
worker() {
  local w=$1 i=0 id st
  while [ ! -e "$scratch/stop" ]; do
    i=$((i + 1))
    id=$(uuid $((w * 1000000 + i)))
    echo "$id" >"$scratch/w$w.cur" # sent, not answered yet
    st=$(sed "s/@ID@/$id/" "$scratch/tmpl.json" |
      curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -m 20 \
        -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
        --data-binary @- "$base/api/v1/reports")
    echo "$id $st" >>"$scratch/w$w.log"
    rm -f "$scratch/w$w.cur"
  done
}
acked_so_far() { cat "$scratch"/w*.log 2>/dev/null | awk '$2 ~ /^2/' | wc -l; }

for w in $(seq "$n_workers"); do
  worker "$w" &
  workers+=($!)
done
# The burst runs until some reports are stored...
for _ in $(seq 200); do
  [ "$(acked_so_far)" -ge 40 ] && break
  sleep 0.05
done
# ...then the write lock is taken: the writer's next commit waits, and
# each worker's report waits for it.
db_lock && ok || bad "could not take the database's write lock: $(cat "$scratch/lock.out")"
locked_at=$(date +%s%N)
# Every worker is waiting for its answer, and the server holds their
# reports: the writer has one batch in its hands, the rest are queued (the
# server's own gauge, steady).  4 s at most, inside the writer's busy
# timeout of 5 s.
depth=0 last=-1 steady=0
while [ $(( ($(date +%s%N) - locked_at) / 1000000 )) -lt 4000 ]; do
  depth=$(metric tierwise_ingest_queue_depth)
  waiting=$(ls "$scratch"/w*.cur 2>/dev/null | wc -l)
  if [ "${depth:-0}" -ge 1 ] && [ "$depth" = "$last" ] && [ "$waiting" = "$n_workers" ]; then
    steady=$((steady + 1))
    [ "$steady" -ge 3 ] && break
  else
    steady=0
  fi
  last=${depth:-0}
  sleep 0.1
done
acked_before=$(acked_so_far)
touch "$scratch/stop" # each worker ends with the request it has in flight
kill -KILL "$pid"
wait "$pid" 2>/dev/null
db_unlock
wait "${workers[@]}" 2>/dev/null
workers=()
echo "at the kill: $waiting workers waiting, $depth reports queued for the writer; $acked_before acknowledged before"
[ "$steady" -ge 3 ] && ok ||
  bad "the workers' reports never all waited for the writer (queue depth ${depth:-none}, $waiting of $n_workers waiting; answered before the commit?)"

cat "$scratch"/w*.log >"$scratch/all.log"
awk '$2 ~ /^2/ {print $1}' "$scratch/all.log" | sort >"$scratch/acked"
awk '$2 !~ /^2/ {print $1}' "$scratch/all.log" | sort >"$scratch/unacked"
# Each worker's last request was in flight at the kill: no answer.
for w in $(seq "$n_workers"); do
  tail -1 "$scratch/w$w.log" | awk '$2 == "000" {print $1}' >>"$scratch/inflight"
done
inflight=$(wc -l <"$scratch/inflight")
n_acked=$(wc -l <"$scratch/acked")
echo "burst: $(wc -l <"$scratch/all.log") requests, $n_acked answered 2xx, $inflight in flight at the kill"
[ "$n_acked" -ge 40 ] && ok || bad "only $n_acked reports were acknowledged: $(head -3 "$scratch/all.log")"
[ "$inflight" = "$n_workers" ] && ok ||
  bad "only $inflight of $n_workers workers had a request in flight at the kill (answered while the writer could not commit?)"
# Nothing was answered while the writer waited for the lock: no commit,
# no 2xx.
[ "$(acked_so_far)" = "$acked_before" ] && ok ||
  bad "$(($(acked_so_far) - acked_before)) reports answered 2xx while no commit could happen"
# Every answer was 201, or nothing (the kill): no 5xx, no 4xx.
others=$(awk '$2 != 201 && $2 != "000" {print}' "$scratch/all.log" | head -3)
[ -z "$others" ] && ok || bad "unexpected answers: $others"

# The database as the kill left it (SQLite recovers the WAL on open).
[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ] && ok || bad "integrity_check after SIGKILL: $(sqlite3 "$db" 'PRAGMA integrity_check;' | head -3)"
sqlite3 "$db" 'SELECT id FROM reports;' | sort >"$scratch/stored"
missing=$(comm -23 "$scratch/acked" "$scratch/stored")
[ -z "$missing" ] && ok || bad "$(wc -l <<<"$missing") acknowledged reports are not stored: $(head -3 <<<"$missing" | tr '\n' ' ')"
# The ones in flight were never committed (the writer was waiting); one
# found stored anyway must not have been acknowledged (it is in unacked).
sort -o "$scratch/inflight" "$scratch/inflight"
present=$(comm -12 "$scratch/inflight" "$scratch/stored")
echo "in flight and stored anyway: $(grep -c . <<<"$present")"
[ -z "$(comm -12 <(echo "$present" | grep .) "$scratch/acked")" ] && ok ||
  bad "a report in flight at the kill is both stored and acknowledged"

# Restarted on the same file: it serves, the cut-off reports can be resent
# (stored or already stored), the acknowledged ones are all "already stored".
start_server again --threads 2
[ -n "$port" ] && ok || { bad "restart failed: $(cat "$scratch/again.err")"; finish "server-crash"; exit; }
healthy && ok || bad "healthz after restart"
for id in $(tail -20 "$scratch/acked"); do
  sed "s/@ID@/$id/" "$scratch/tmpl.json" >"$scratch/one.json"
  [ "$(post_report "$scratch/one.json" "$agent")" = 200 ] && ok || bad "acknowledged $id resent: $(cat "$scratch/body")"
done
for id in $(cat "$scratch/unacked"); do
  sed "s/@ID@/$id/" "$scratch/tmpl.json" >"$scratch/one.json"
  st=$(post_report "$scratch/one.json" "$agent")
  [ "$st" = 201 ] || [ "$st" = 200 ] && ok || bad "cut-off $id resent: $st $(cat "$scratch/body")"
done
want=$(sort -u "$scratch/acked" "$scratch/unacked" | wc -l)
have=$(sqlite3 "$db" 'SELECT count(*) FROM reports;')
[ "$have" = "$want" ] && ok || bad "$have reports stored, want $want (each once)"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ] && ok || bad "integrity_check at the end"
finish "server-crash"

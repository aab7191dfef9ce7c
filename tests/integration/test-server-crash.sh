#!/usr/bin/env bash
# tierwise serve killed with SIGKILL in the middle of a burst of concurrent
# reports, then restarted on the same database: every report that got a 2xx
# is in the database, PRAGMA integrity_check is ok, and the reports cut off
# by the kill can be sent again (stored once).  Needs curl, jq and sqlite3
# (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-crash-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
workers=()
trap 'touch "$scratch/stop"; for w in "${workers[@]}"; do kill "$w" 2>/dev/null; done; cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
start_server main --threads 2
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
jq -c '.id = "@ID@"' "$template" >"$scratch/tmpl.json"

# worker W: posts reports with fresh ids until told to stop, logging
# "id status" per report (000: no answer).
worker() {
  local w=$1 i=0 id st
  while [ ! -e "$scratch/stop" ]; do
    i=$((i + 1))
    id=$(uuid $((w * 1000000 + i)))
    st=$(sed "s/@ID@/$id/" "$scratch/tmpl.json" |
      curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -m 10 \
        -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
        --data-binary @- "$base/api/v1/reports")
    echo "$id $st" >>"$scratch/w$w.log"
  done
}
for w in 1 2 3 4 5 6 7 8; do
  worker "$w" &
  workers+=($!)
done
# Let the burst run, then kill the server without warning.
sleep 2
kill -KILL "$pid"
wait "$pid" 2>/dev/null
sleep 0.5
touch "$scratch/stop"
wait "${workers[@]}" 2>/dev/null
workers=()

cat "$scratch"/w*.log >"$scratch/all.log"
awk '$2 ~ /^2/ {print $1}' "$scratch/all.log" | sort >"$scratch/acked"
awk '$2 !~ /^2/ {print $1}' "$scratch/all.log" | sort >"$scratch/unacked"
n_acked=$(wc -l <"$scratch/acked")
echo "burst: $(wc -l <"$scratch/all.log") requests, $n_acked answered 2xx before the kill"
[ "$n_acked" -gt 20 ] && ok || bad "only $n_acked reports were acknowledged: $(head -3 "$scratch/all.log")"
# Every answer was 201, or nothing (the kill): no 5xx, no 4xx.
others=$(awk '$2 != 201 && $2 != "000" {print}' "$scratch/all.log" | head -3)
[ -z "$others" ] && ok || bad "unexpected answers: $others"

# The database as the kill left it (SQLite recovers the WAL on open).
[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ] && ok || bad "integrity_check after SIGKILL: $(sqlite3 "$db" 'PRAGMA integrity_check;' | head -3)"
sqlite3 "$db" 'SELECT id FROM reports;' | sort >"$scratch/stored"
missing=$(comm -23 "$scratch/acked" "$scratch/stored" | head -5)
[ -z "$missing" ] && ok || bad "acknowledged but not stored: $missing"

# Restarted on the same file: it serves, the cut-off reports can be resent
# (stored or already stored), the acknowledged ones are all "already stored".
start_server again --threads 2
[ -n "$port" ] && ok || { bad "restart failed: $(cat "$scratch/again.err")"; finish "server-crash"; exit; }
healthy && ok || bad "healthz after restart"
for id in $(head -20 "$scratch/acked"); do
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

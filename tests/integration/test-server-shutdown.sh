#!/usr/bin/env bash
# tierwise serve stops gracefully on SIGTERM: a slow upload in flight still
# gets its 201, a burst of concurrent reports loses nothing that was
# acknowledged, the process exits 0 with its message, nothing listens on
# the port any more, and the database is closed cleanly (no WAL left,
# integrity_check ok).  Needs curl, jq and sqlite3 (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-stop-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
workers=()
trap 'touch "$scratch/stop"; for w in "${workers[@]}"; do kill "$w" 2>/dev/null; done; cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
start_server main --threads 2
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
jq -c '.id = "@ID@"' "$template" >"$scratch/tmpl.json"

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
    [ "$st" = 000 ] && break # the server is gone
  done
}

# A slow upload: a valid report padded to 60 KB, sent at 20 KB/s (3 s).
slow_id=$(uuid 999999)
{ jq --arg id "$slow_id" '.id = $id' "$template"; head -c 60000 /dev/zero | tr '\0' ' '; } >"$scratch/slow.json"
curl -s --noproxy '*' -o "$scratch/slow.out" -w '%{http_code}' --limit-rate 20k -m 30 \
  -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
  --data-binary "@$scratch/slow.json" "$base/api/v1/reports" >"$scratch/slow.status" &
slow=$!
for w in 1 2 3 4; do
  worker "$w" &
  workers+=($!)
done
sleep 1
kill -TERM "$pid"
wait "$pid"
st=$?
touch "$scratch/stop"
wait "${workers[@]}" 2>/dev/null
workers=()
wait "$slow"

[ "$st" = 0 ] && ok || bad "exit status $st after SIGTERM: $(cat "$scratch/main.err")"
grep -q 'stopped by SIGTERM' "$scratch/main.err" && ok || bad "no stop message: $(cat "$scratch/main.err")"
[ "$(cat "$scratch/slow.status")" = 201 ] && ok || bad "the upload in flight got $(cat "$scratch/slow.status"): $(cat "$scratch/slow.out")"
curl -s --noproxy '*' -o /dev/null "$base/healthz"
[ $? = 7 ] && ok || bad "port $port still answers after SIGTERM"

cat "$scratch"/w*.log >"$scratch/all.log"
awk '$2 ~ /^2/ {print $1}' "$scratch/all.log" | sort >"$scratch/acked"
echo "$slow_id" >>"$scratch/acked"
sort -o "$scratch/acked" "$scratch/acked"
echo "burst: $(wc -l <"$scratch/all.log") requests, $(wc -l <"$scratch/acked") answered 2xx"
# During the stop: 201, 503 (stopping) or no connection; nothing else.
others=$(awk '$2 != 201 && $2 != 503 && $2 != "000" {print}' "$scratch/all.log" | head -3)
[ -z "$others" ] && ok || bad "unexpected answers: $others"
[ ! -s "$db-wal" ] && ok || bad "the WAL is left behind ($(stat -c %s "$db-wal") bytes): not closed cleanly"
[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ] && ok || bad "integrity_check"
sqlite3 "$db" 'SELECT id FROM reports;' | sort >"$scratch/stored"
missing=$(comm -23 "$scratch/acked" "$scratch/stored" | head -5)
[ -z "$missing" ] && ok || bad "acknowledged but not stored: $missing"
finish "server-shutdown"

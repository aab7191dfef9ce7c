#!/usr/bin/env bash
# tierwise serve's failure answers, each produced for real and checked by
# status, JSON error code and headers:
#  - 503 store_unavailable with Retry-After: 5 when the database is locked
#    by another process past the writer's busy timeout (a batch of one, then
#    a whole batch of three that waited behind it): nothing of them stored,
#    and each stored when sent again;
#  - a whole batch lost in the middle: a report whose insert ends the
#    transaction itself (a trigger's RAISE(ROLLBACK), as a full disk or an
#    I/O error does) takes the other reports of its batch with it: all 503
#    store_unavailable, none stored;
#  - 500 store_failed: a report the store refuses alone (a trigger's
#    RAISE(ABORT)), while the others of its batch are stored (201);
#  - the 503s of a shutdown: after SIGTERM, a new request on an open
#    keep-alive connection gets 503 shutting_down with Retry-After, a GET
#    and a POST alike, while the report in flight is still stored.
# The batches are made by holding the database's write lock while the
# reports arrive (the writer takes the first alone, the others queue: the
# server's queue-depth gauge says when), then letting it go.
# Needs curl, jq and sqlite3 (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-fail-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
bg=()
trap 'for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done; exec 3>&- 4>&- 2>/dev/null; cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
start_server main --threads 4
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# post_bg NAME ID: POSTs report ID in the background; status in
# $scratch/NAME.st, body and headers in $scratch/NAME.body, NAME.hdr.
post_bg() {
  report "$2"
  curl -s --noproxy '*' -m 30 -o "$scratch/$1.body" -D "$scratch/$1.hdr" -w '%{http_code}' \
    -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
    --data-binary "@$scratch/r-$2.json" "$base/api/v1/reports" >"$scratch/$1.st" &
  bg+=($!)
}
wait_bg() {
  wait "${bg[@]}" 2>/dev/null
  bg=()
}
# header FILE NAME: the value of header NAME in FILE (case-insensitive).
header() {
  awk -v n="$(tr 'A-Z' 'a-z' <<<"$2")" -F': ' 'tolower($1) == n {sub(/\r$/, "", $2); print $2}' "$1"
}
# answer NAME STATUS CODE [RETRY]: request NAME got STATUS with a JSON error
# CODE (and a message; "" for an answer that is not an error), Content-Type application/json, and Retry-After: 5
# when RETRY is "retry", none when "noretry".
answer() {
  local name=$1 want=$2 code=$3 retry=${4:-} got
  got=$(cat "$scratch/$name.st" 2>/dev/null)
  if [ "$got" != "$want" ]; then
    bad "$name: status ${got:-none}, want $want: $(head -c 300 "$scratch/$name.body" 2>/dev/null)"
    return
  fi
  ok
  [ -z "$code" ] || { jq -e --arg c "$code" '.error.code == $c and (.error.message | length > 0)' "$scratch/$name.body" >/dev/null 2>&1 &&
    ok || bad "$name: not a JSON error $code: $(head -c 300 "$scratch/$name.body")"; }
  [ "$(header "$scratch/$name.hdr" Content-Type)" = application/json ] && ok ||
    bad "$name: Content-Type $(header "$scratch/$name.hdr" Content-Type)"
  case $retry in
  retry) [ "$(header "$scratch/$name.hdr" Retry-After)" = 5 ] && ok ||
    bad "$name: Retry-After '$(header "$scratch/$name.hdr" Retry-After)', want 5" ;;
  noretry) [ -z "$(header "$scratch/$name.hdr" Retry-After)" ] && ok ||
    bad "$name: a Retry-After on an answer that is not a 503" ;;
  esac
}
stored() { [ "$(sqlite3 "$db" "SELECT count(*) FROM reports WHERE id = '$1';")" = 1 ]; }
# wait_depth N: until the server says N reports wait for the writer (3 s).
wait_depth() {
  local d
  for _ in $(seq 60); do
    d=$(metric tierwise_ingest_queue_depth)
    [ "${d:-0}" -ge "$1" ] && return 0
    sleep 0.05
  done
  bad "the server never had $1 reports queued (${d:-no} gauge)"
  return 1
}
# batch FIRST IDS...: with the write lock held, report FIRST goes to the
# writer alone and IDS queue behind it, so the writer's next batch is IDS.
# The lock is left held (db_unlock, or the busy timeout, ends it).
batch() {
  local first=$1 i=0; shift
  db_lock || bad "could not take the write lock: $(cat "$scratch/lock.out")"
  post_bg first "$first"
  wait_depth 0 # /metrics answers
  sleep 1      # the writer has it (alone): still 0 queued
  [ "$(metric tierwise_ingest_queue_depth)" = 0 ] && ok || bad "report $first did not reach the writer alone"
  for id in "$@"; do
    i=$((i + 1))
    post_bg "b$i" "$id"
  done
  wait_depth "$#"
}
batch_failed_lines() { grep -c "a batch of $1 reports was not stored" "$scratch/main.err"; }

# ---- 503 store_unavailable: the database is locked past the busy timeout ----
a0=$(uuid 100) a1=$(uuid 101) a2=$(uuid 102) a3=$(uuid 103)
batch "$a0" "$a1" "$a2" "$a3"
t0=$(date +%s)
wait_bg # the first after 5 s, the batch of three 5 s later
echo "locked database: answered in $(($(date +%s) - t0)) s"
db_unlock
answer first 503 store_unavailable retry
grep -q 'locked' "$scratch/first.body" && ok || bad "the message does not say the database is locked: $(cat "$scratch/first.body")"
for i in 1 2 3; do answer "b$i" 503 store_unavailable retry; done
[ "$(batch_failed_lines 1)" -ge 1 ] && ok || bad "no log line for the failed batch of 1: $(cat "$scratch/main.err")"
[ "$(batch_failed_lines 3)" = 1 ] && ok || bad "the three reports did not fail as one batch: $(cat "$scratch/main.err")"
for id in "$a0" "$a1" "$a2" "$a3"; do
  stored "$id" && bad "report $id stored although answered 503" || ok
done
# Nothing of them was stored: sent again, each is new.
for id in "$a0" "$a1" "$a2" "$a3"; do
  report "$id"
  [ "$(post_report "$scratch/r-$id.json" "$agent")" = 201 ] && ok || bad "$id resent after the 503: $(cat "$scratch/body")"
done
healthy && ok || bad "healthz after the 503s"

# ---- a whole batch lost in the middle of the transaction ----
p0=$(uuid 200) p1=$(uuid 201) p2=$(uuid 202) poison=$(uuid 203)
sqlite3 "$db" "CREATE TRIGGER tw_test_rollback BEFORE INSERT ON reports WHEN NEW.id = '$poison'
  BEGIN SELECT RAISE(ROLLBACK, 'the disk went away'); END;"
before=$(batch_failed_lines 3)
batch "$p0" "$p1" "$poison" "$p2"
db_unlock
wait_bg
answer first 201 "" # not an error
jq -e --arg id "$p0" '.id == $id and .status == "stored"' "$scratch/first.body" >/dev/null && ok || bad "first: $(cat "$scratch/first.body")"
for i in 1 2 3; do answer "b$i" 503 store_unavailable retry; done
[ "$(batch_failed_lines 3)" = $((before + 1)) ] && ok || bad "no log line for the lost batch of 3: $(cat "$scratch/main.err")"
stored "$p0" && ok || bad "$p0 (its own batch) not stored"
for id in "$p1" "$p2" "$poison"; do
  stored "$id" && bad "report $id of the lost batch is stored" || ok
done
sqlite3 "$db" 'DROP TRIGGER tw_test_rollback;'

# ---- 500 store_failed: one report refused, the rest of its batch kept ----
q0=$(uuid 300) q1=$(uuid 301) q2=$(uuid 302) refused=$(uuid 303)
sqlite3 "$db" "CREATE TRIGGER tw_test_abort BEFORE INSERT ON reports WHEN NEW.id = '$refused'
  BEGIN SELECT RAISE(ABORT, 'refused by the store'); END;"
before=$(grep -c 'reports was not stored' "$scratch/main.err")
batch "$q0" "$q1" "$refused" "$q2"
db_unlock
wait_bg
answer first 201 ""
for i in 1 3; do
  answer "b$i" 201 ""
  jq -e '.status == "stored"' "$scratch/b$i.body" >/dev/null && ok || bad "b$i: $(cat "$scratch/b$i.body")"
done
answer b2 500 store_failed noretry
grep -q "$refused" "$scratch/b2.body" && ok || bad "the message does not name the report: $(cat "$scratch/b2.body")"
[ "$(grep -c 'reports was not stored' "$scratch/main.err")" = "$before" ] && ok || bad "a batch failed: $(tail -2 "$scratch/main.err")"
for id in "$q0" "$q1" "$q2"; do stored "$id" && ok || bad "$id not stored beside the refused one"; done
stored "$refused" && bad "the refused report $refused is stored" || ok
sqlite3 "$db" 'DROP TRIGGER tw_test_abort;'
report "$refused"
[ "$(post_report "$scratch/r-$refused.json" "$agent")" = 201 ] && ok || bad "$refused resent: $(cat "$scratch/body")"

# ---- the 503s of a shutdown ----
# Two keep-alive connections, each used once before the stop.
# http_on FD REQUEST: sends REQUEST on FD; the answer's status line, headers
# and body go to $scratch/ka.st, ka.hdr, ka.body.
http_on() {
  local fd=$1 line len=0
  printf '%b' "$2" >&"$fd"
  : >"$scratch/ka.hdr"
  IFS= read -r -t 5 line <&"$fd" || { echo 000 >"$scratch/ka.st"; return; }
  awk '{print $2}' <<<"$line" >"$scratch/ka.st"
  while IFS= read -r -t 5 line <&"$fd"; do
    line=${line%$'\r'}
    [ -z "$line" ] && break
    echo "$line" >>"$scratch/ka.hdr"
  done
  len=$(header "$scratch/ka.hdr" Content-Length)
  : >"$scratch/ka.body"
  [ "${len:-0}" -gt 0 ] && head -c "$len" <&"$fd" >"$scratch/ka.body"
}
get_req="GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
exec 3<>"/dev/tcp/127.0.0.1/$port" 4<>"/dev/tcp/127.0.0.1/$port"
http_on 3 "$get_req"
[ "$(cat "$scratch/ka.st")" = 200 ] && ok || bad "keep-alive GET before the stop: $(cat "$scratch/ka.st")"
http_on 4 "$get_req"
[ "$(cat "$scratch/ka.st")" = 200 ] && ok || bad "keep-alive GET before the stop: $(cat "$scratch/ka.st")"
# A report in flight keeps the server in its stop: the writer waits for
# the lock.
db_lock || bad "could not take the write lock"
inflight=$(uuid 400)
post_bg first "$inflight"
wait_depth 0
sleep 0.5
kill -TERM "$pid"
# The listening socket closes at once.
for _ in $(seq 50); do
  curl -s --noproxy '*' -o /dev/null -m 2 "$base/healthz"
  [ $? = 7 ] && break
  sleep 0.05
done
curl -s --noproxy '*' -o /dev/null -m 2 "$base/healthz"
[ $? = 7 ] && ok || bad "new connections still accepted after SIGTERM"
http_on 3 "$get_req"
cp "$scratch/ka.st" "$scratch/stop-get.st"; cp "$scratch/ka.hdr" "$scratch/stop-get.hdr"; cp "$scratch/ka.body" "$scratch/stop-get.body"
report "$(uuid 401)"
body=$(cat "$scratch/r-$(uuid 401).json")
http_on 4 "POST /api/v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer $agent\r\nContent-Type: application/json\r\nContent-Length: ${#body}\r\n\r\n$body"
cp "$scratch/ka.st" "$scratch/stop-post.st"; cp "$scratch/ka.hdr" "$scratch/stop-post.hdr"; cp "$scratch/ka.body" "$scratch/stop-post.body"
exec 3>&- 4>&-
db_unlock
wait_bg
wait "$pid"
st=$?
answer stop-get 503 shutting_down retry
answer stop-post 503 shutting_down retry
answer first 201 ""
[ "$st" = 0 ] && ok || bad "exit status $st after SIGTERM: $(tail -3 "$scratch/main.err")"
stored "$inflight" && ok || bad "the report in flight at SIGTERM ($inflight) is not stored"
stored "$(uuid 401)" && bad "the report refused during the stop is stored" || ok
[ "$(sqlite3 "$db" 'PRAGMA integrity_check;')" = ok ] && ok || bad "integrity_check"
finish "server-failures"

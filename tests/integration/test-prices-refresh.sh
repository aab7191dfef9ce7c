#!/usr/bin/env bash
# tierwise serve --prices-refresh against the Azure simulator, all on
# 127.0.0.1.  SQLite: a fleet in westeurope; a backend started with
# --prices-refresh 1d fetches that region's USD book at its start (the
# simulator sees the GETs, GET /api/v1/prices says "api <simulator>"); a
# restart fetches nothing (the book is fresh); two days later (libfaketime)
# it fetches again; with the API failing, the failure is logged and the
# stored book kept, the backend healthy; bad values are usage errors.
# Part "pg": two backends on one PostgreSQL database, both with
# --prices-refresh: one of them fetches (its log takes the periodic work
# "prices", the other's says another backend runs it), the simulator sees
# one refresh's GETs, and both serve the book.  Needs jq, curl, libfaketime
# (and psql with TW_TEST_PG for "pg"): exits 77 (skipped) without.
# ctest-parts: pg
set -u
azsim=${TW_AZSIM:?run through ctest}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-prices-refresh-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
part=${1:-sqlite}
need jq curl
if [ "$part" = pg ]; then
  [ -n "${TW_TEST_PG:-}" ] || { echo "SKIP: TW_TEST_PG names no PostgreSQL server (tests/run.sh starts one)"; exit 77; }
  need psql
else
  need_faketime
fi
sim_pid="" pgname=""
cleanup() {
  cleanup_servers
  [ -n "$sim_pid" ] && kill -KILL "$sim_pid" 2>/dev/null
  if [ -n "$pgname" ]; then
    psql "$TW_TEST_PG dbname=postgres" -XAtq -c "DROP DATABASE IF EXISTS $pgname WITH (FORCE)" \
      >/dev/null 2>&1
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
export TIERWISE_LOOPBACK_ONLY=1
# libfaketime is preloaded ahead of the sanitizers' runtime: let it be.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

start_azsim "$srcdir/deploy/demo-scenario.json"
# The Retail Prices GETs the simulator has answered.
price_gets() {
  curl -s --noproxy '*' "$sim/_sim/requests" |
    jq '[.requests[] | select(.path | startswith("/api/retail/prices"))] | length'
}
# wait_line NAME TEXT [SECONDS]: until the server NAME's log has TEXT
# (10 s unless said).
wait_line() {
  for _ in $(seq $((${3:-10} * 10))); do grep -qF -- "$2" "$scratch/$1.err" && return 0; sleep 0.1; done
  return 1
}
# book: the stored book's "source fetched_at" through GET /api/v1/prices.
book() {
  [ "$(req GET '/api/v1/prices?region=westeurope&currency=USD' "$reader")" = 200 ] &&
    jq -r '.source + " " + .fetched_at' "$scratch/body"
}

if [ "$part" = pg ]; then
  pgname="tw_prices_$$_$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  psql "$TW_TEST_PG dbname=postgres" -XAtq -c "CREATE DATABASE $pgname TEMPLATE template0" \
    >/dev/null 2>"$scratch/createdb.err" ||
    { echo "FAIL: creating $pgname: $(cat "$scratch/createdb.err")"; pgname=""; exit 1; }
  db="$TW_TEST_PG dbname=$pgname"
fi

# The fleet: one VM in westeurope (the simulator prices westeurope in USD).
agent=$(make_token agent)
reader=$(make_token reader)
jq -c --arg id "$(uuid 1)" '.id = $id | .inventory.vm.location = "westeurope"' "$template" \
  >"$scratch/r.json"
start_server plain
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/plain.err")"; exit 1; }
[ "$(post_report "$scratch/r.json" "$agent")" = 201 ] && ok || bad "post: $(cat "$scratch/body")"
# Without --prices-refresh nothing is fetched, and the work is not asked
# for (a backend with it asks at its start: below).
sleep 1
[ "$(price_gets)" = 0 ] && ok || bad "a backend without --prices-refresh fetched prices"
curl -s --noproxy '*' -m 5 "$base/metrics" >"$scratch/metrics"
grep -q '^tierwise_' "$scratch/metrics" && ! grep -q 'tierwise_periodic_work_held{kind="prices"}' "$scratch/metrics" &&
  ok || bad "a backend without --prices-refresh asked for the prices' work: $(grep periodic "$scratch/metrics")"
stop_server TERM

if [ "$part" = pg ]; then
  start_server b --prices-refresh 1d --prices-url "$sim"
  pid_b=$pid base_b=$base
  start_server c --prices-refresh 1d --prices-url "$sim"
  pid_c=$pid
  [ -n "$port" ] && [ -n "$base_b" ] && ok || bad "the backends did not start: $(cat "$scratch/b.err" "$scratch/c.err")"
  for n in b c; do
    wait_line "$n" "periodic prices: " && ok || bad "backend $n never asked for the prices' work: $(cat "$scratch/$n.err")"
  done
  wait_line b "price books from" || wait_line c "price books from"
  sleep 1
  runs=$(cat "$scratch/b.err" "$scratch/c.err" | grep -c "periodic prices: this backend runs it now")
  others=$(cat "$scratch/b.err" "$scratch/c.err" | grep -c "periodic prices: another backend runs it")
  [ "$runs" = 1 ] && [ "$others" = 1 ] && ok ||
    bad "the prices' work: $runs holder(s), $others waiting: $(cat "$scratch/b.err" "$scratch/c.err")"
  lines=$(cat "$scratch/b.err" "$scratch/c.err" | grep -c "price books from $sim: 1 of 1 refreshed")
  [ "$lines" = 1 ] && ok || bad "$lines refresh line(s): $(cat "$scratch/b.err" "$scratch/c.err")"
  gets=$(price_gets)
  [ "$gets" -ge 1 ] && ok || bad "the simulator saw no price GET"
  # Both serve the book the one fetched.
  for b in "$base_b" "$base"; do
    base=$b
    got=$(book) && [ "${got%% *}" = api ] && ok || bad "$b serves: $got $(cat "$scratch/body")"
  done
  # One refresh's GETs: the same count as a refresh of that book alone.
  curl -s --noproxy '*' -X DELETE "$sim/_sim/requests" >/dev/null
  "$cli" prices refresh --db "$scratch/one.db" --region westeurope --currency USD \
    --prices-url "$sim" >/dev/null 2>"$scratch/one.err" || bad "prices refresh: $(cat "$scratch/one.err")"
  [ "$(price_gets)" = "$gets" ] && ok || bad "the backends made $gets price GETs, one refresh makes $(price_gets)"
  pid=$pid_b; stop_server TERM
  pid=$pid_c; stop_server TERM
  finish "prices-refresh/pg"
  exit
fi

# Bad values (a time limit: one let through would serve on).
for v in 10s 31d soon; do
  timeout 10 "$cli" serve --db "$db" --listen 127.0.0.1:0 --prices-refresh "$v" --prices-url "$sim" \
    >/dev/null 2>"$scratch/err"
  st=$?
  [ $st = 2 ] && grep -q -- '--prices-refresh "'"$v"'" must be a duration from 1m to 30d' "$scratch/err" &&
    ok || bad "--prices-refresh $v: exit $st $(cat "$scratch/err")"
done

echo '{"prices-refresh": 86400}' >"$scratch/bad.json"
timeout 10 "$cli" serve --db "$db" --listen 127.0.0.1:0 --config "$scratch/bad.json" >/dev/null 2>"$scratch/err"
st=$?
[ $st = 2 ] && grep -q '"prices-refresh" must be a duration (e.g. "1d")' "$scratch/err" && ok ||
  bad "a number as prices-refresh: exit $st $(cat "$scratch/err")"
echo '{"prices-refresh": "soon"}' >"$scratch/soon.json"
timeout 10 "$cli" serve --db "$db" --listen 127.0.0.1:0 --config "$scratch/soon.json" \
  --prices-url "$sim" >/dev/null 2>"$scratch/err"
st=$?
[ $st = 2 ] && grep -qF "$scratch/soon.json: \"prices-refresh\": \"soon\" must be a duration from 1m to 30d" "$scratch/err" &&
  ok || bad "\"soon\" in the config file: exit $st $(cat "$scratch/err")"

# At its start the backend fetches the fleet's book (the flag wins over
# the config file's bad value).
start_server fresh --config "$scratch/soon.json" --prices-refresh 1d --prices-url "$sim"
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/fresh.err")"; exit 1; }
wait_line fresh "price books from" &&
  grep -qF "price books from $sim: 1 of 1 refreshed, 0 fresh (fetched within 86400s)" "$scratch/fresh.err" &&
  ok || bad "the start's line: $(cat "$scratch/fresh.err")"
gets=$(price_gets)
[ "$gets" -ge 1 ] && ok || bad "the simulator saw no price GET"
got=$(book) && [ "${got% *}" = "api $sim" ] && ok || bad "the stored book: $got $(cat "$scratch/body")"
first_at=${got##* }
[ "$(metric 'tierwise_periodic_work_held{kind="prices"}')" = 1 ] && ok ||
  bad "tierwise_periodic_work_held{kind=\"prices\"}: $(metric 'tierwise_periodic_work_held{kind="prices"}')"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "stop: $stop_status"

# A restart (D from the config file): the book is fresh, nothing is fetched.
echo '{"prices-refresh": "1d"}' >"$scratch/serve.json"
start_server again --config "$scratch/serve.json" --prices-url "$sim"
wait_line again "price books from" &&
  grep -qF "price books from $sim: 0 of 1 refreshed, 1 fresh" "$scratch/again.err" &&
  ok || bad "the restart's line: $(cat "$scratch/again.err")"
[ "$(price_gets)" = "$gets" ] && ok || bad "a restart fetched a fresh book again"
stop_server TERM

# Two days on, the book is stale: fetched again.
later() { # OFFSET NAME ARGS: start_server with the clock OFFSET ahead (libfaketime)
  local offset=$1 name=$2; shift 2
  rm -f "$scratch/$name.port"
  env "LD_PRELOAD=$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}" "FAKETIME=$offset" \
    "$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/$name.port" "$@" \
    >/dev/null 2>"$scratch/$name.err" &
  pid=$!
  server_pids+=("$pid")
  for _ in $(seq 100); do [ -s "$scratch/$name.port" ] && break; sleep 0.1; done
  base="http://127.0.0.1:$(cat "$scratch/$name.port" 2>/dev/null)"
}
later +2d stale --prices-refresh 1d --prices-url "$sim"
wait_line stale "price books from" &&
  grep -qF "price books from $sim: 1 of 1 refreshed, 0 fresh" "$scratch/stale.err" &&
  ok || bad "two days on: $(cat "$scratch/stale.err")"
[ "$(price_gets)" -gt "$gets" ] && ok || bad "two days on, nothing was fetched"
got=$(book) && [ "${got##* }" != "$first_at" ] && ok || bad "fetched_at did not move: $got"
second_at=${got##* }
stop_server TERM

# Four days on with the API failing: logged, the stored book kept.
curl -s --noproxy '*' -X POST "$sim/_sim/faults" -H 'Content-Type: application/json' \
  -d '{"kind": "error", "path": "/api/retail/prices", "status": 503}' >/dev/null
later +4d down --prices-refresh 1d --prices-url "$sim"
wait_line down "price books from" 60 &&
  grep -qF "price books from $sim: 0 of 1 refreshed, 0 fresh, 1 failed (nothing stored is changed for them; tried again at the next look): westeurope USD: " "$scratch/down.err" &&
  ok || bad "the API failing: $(cat "$scratch/down.err")"
got=$(book) && [ "${got##* }" = "$second_at" ] && ok || bad "the stored book changed: $got"
healthy && ok || bad "/healthz with the API failing: $(cat "$scratch/body")"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "stop: $stop_status"
finish "prices-refresh"

#!/usr/bin/env bash
# scale-out.sh - the backend past one machine: ingest and the fleet's read
# pages on SQLite beside PostgreSQL, on this machine's cores (the figures
# in README were taken on 2).
#
#  - ingest: wrk drives POST /api/v1/reports with a real 7.5 KiB report
#    (tests/perf/ingest-load.lua, a fresh UUID per request) for --duration
#    seconds on a fresh database, three ways: one backend on SQLite, one
#    on PostgreSQL, and three backends on one PostgreSQL database with the
#    load spread over them (one wrk per backend, --connections split).
#    Reports/s are the 2xx answers of all of them over the longest run;
#    p50/p99 are the worst backend's.  Every acknowledged report is looked
#    up in the database afterwards (nothing lost).
#  - the fleet's read pages: --vms VMs (5 disks and 10 results each,
#    tests/perf/fleet-load.py post) on SQLite and on PostgreSQL, then p50
#    and p99 of a page (?limit=500) of /api/v1/vms, /disks and
#    /compliance, the walk of every page, and the fleet summary.
#
# Printed side by side with ratios (PostgreSQL / SQLite), and what the
# rates mean for sizing: reports/s needed when --vms VMs report within a
# 15-minute window each night.
#
#   tests/perf/scale-out.sh [--duration SEC] [--connections N] [--vms N]
#                           [--requests N] [--timeout S] [--spread N]
#                           [--cli PATH] [--no-ingest] [--no-read] [--no-pg]
#
# Defaults: 20 s, 64 connections, 10,000 VMs, 30 requests per page, a
# walk of all pages cut off after 300 s (shown as ">S" and "N (cut)"),
# ingest's reports spread over 500 VMs per wrk thread (tests/perf/
# scale-out.lua; --spread 0: all of one VM, as ingest-load.sh posts them).
# PostgreSQL: the server TW_TEST_PG names (a libpq base string without
# dbname; databases scale_out_* made and dropped here), else a private one
# started by tests/tools/pg-private.sh and stopped at the end; --no-pg or
# neither: the SQLite column alone.  Without --cli, a Release tierwise is
# built in build/perf-scale.  Needs wrk, jq, curl, sqlite3, python3 (and
# psql for PostgreSQL).  Everything on 127.0.0.1 (port 0); every server
# started here is stopped at the end, however the script ends.
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
duration=20 connections=64 vms=10000 requests=30 timeout=300 spread=500 cli="" do_ingest=1 do_read=1 do_pg=1
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --vms) vms=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --spread) spread=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    --no-ingest) do_ingest=0; shift ;;
    --no-read) do_read=0; shift ;;
    --no-pg) do_pg=0; shift ;;
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale-out.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in wrk jq curl sqlite3 python3; do
  command -v "$t" >/dev/null || { echo "scale-out.sh: needs $t" >&2; exit 2; }
done
[ "$connections" -ge 3 ] || { echo "scale-out.sh: --connections must be at least 3" >&2; exit 2; }
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_CONFIG
out=$(mktemp -d "${TMPDIR:-/tmp}/tw-scale-XXXXXX")
pids=() pgdbs=() pg_private=""
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  if [ -n "${pg_base:-}" ]; then
    for d in "${pgdbs[@]}"; do
      psql "$pg_base dbname=postgres" -qXc "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1
    done
  fi
  [ -n "$pg_private" ] && "$src/tests/tools/pg-private.sh" stop "$pg_private" >/dev/null 2>&1
  rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$cli" ]; then
  echo "building (Release) in build/perf-scale ..." >&2
  { cmake -S . -B build/perf-scale -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF &&
    cmake --build build/perf-scale -j2 --target tierwise; } >"$out/build.log" 2>&1 ||
    { echo "scale-out.sh: the build failed:" >&2; tail -20 "$out/build.log" >&2; exit 1; }
  cli=$src/build/perf-scale/src/tierwise
fi

# ---- PostgreSQL ----
pg_base=""
if [ $do_pg = 1 ]; then
  if ! command -v psql >/dev/null; then
    echo "scale-out.sh: no psql: the PostgreSQL columns are left out" >&2
  elif [ -n "${TW_TEST_PG:-}" ]; then
    pg_base=$TW_TEST_PG
  elif [ -x tests/tools/pg-private.sh ]; then
    # Its own folder, open to others: run as root, the server runs as
    # nobody, which must reach it (mktemp's folders are the owner's only).
    pg_private=$(mktemp -d /tmp/tw-scale-pg-XXXXXX) && chmod 0755 "$pg_private"
    if pg_base=$(tests/tools/pg-private.sh start "$pg_private" 2>"$out/pg.err"); then
      echo "a private PostgreSQL: $pg_base" >&2
    else
      echo "scale-out.sh: no private PostgreSQL ($(tail -1 "$out/pg.err")): the PostgreSQL columns are left out" >&2
      rmdir "$pg_private" 2>/dev/null; pg_private="" pg_base=""
    fi
  else
    echo "scale-out.sh: no TW_TEST_PG and no tests/tools/pg-private.sh: the PostgreSQL columns are left out" >&2
  fi
fi
# newdb KIND NAME: a fresh database's location in $db (a file, or a new
# PostgreSQL database, dropped at the end)
newdb() {
  if [ "$1" = sqlite ]; then db=$out/$2.db; return; fi
  local d=scale_out_${2}_$$
  psql "$pg_base dbname=postgres" -qXc "CREATE DATABASE $d" >/dev/null 2>>"$out/pg.err" ||
    { echo "scale-out.sh: CREATE DATABASE $d failed: $(tail -1 "$out/pg.err")" >&2; exit 1; }
  pgdbs+=("$d")
  db="$pg_base dbname=$d"
}
# sql DB QUERY: one value from the database at DB
sql() {
  case $1 in
    *dbname=*) psql "$1" -qXAtc "$2" ;;
    *) sqlite3 "$1" "$2" ;;
  esac
}
# serve DB NAME: a backend on DB; its URL in $url, its pid in $pid
serve() {
  rm -f "$out/$2.port"
  "$cli" serve --db "$1" --listen 127.0.0.1:0 --port-file "$out/$2.port" >>"$out/$2.out" 2>>"$out/$2.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 150); do [ -s "$out/$2.port" ] && break; sleep 0.1; done
  [ -s "$out/$2.port" ] || { echo "scale-out.sh: $2: the server did not start: $(tail -3 "$out/$2.err")" >&2; exit 1; }
  url="http://127.0.0.1:$(cat "$out/$2.port")"
}
unserve() { # PID...
  for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
  for p in "$@"; do wait "$p" 2>/dev/null; done
}
get() { sed -E "s/.* $2=([0-9]+).*/\1/" <<<"$1"; }

# ---- ingest ----
# ingest LABEL KIND BACKENDS: figures into $out/ingest-LABEL.json
ingest() {
  local label=$1 kind=$2 k=$3 db token i script=tests/perf/ingest-load.lua
  [ "$spread" -gt 0 ] && script=tests/perf/scale-out.lua
  newdb "$kind" "ingest_$label"
  token=$("$cli" token create --db "$db" --role agent --name scale-out 2>"$out/token.err") ||
    { echo "scale-out.sh: token create on $kind: $(cat "$out/token.err")" >&2; exit 1; }
  jq -c '.id = "@ID@"' tests/fixtures/reports/sap-app-02.json >"$out/template.json"
  local spids=() urls=()
  for i in $(seq "$k"); do serve "$db" "ingest-$label-$i"; spids+=("$pid"); urls+=("$url"); done
  echo "ingest, $label: $k backend(s) on $kind, ${duration} s at $connections connections ..." >&2
  local wpids=()
  for i in $(seq "$k"); do
    mkdir -p "$out/acked-$label-$i"
    local c=$((connections / k))
    [ "$i" -le $((connections % k)) ] && c=$((c + 1))
    wrk -t1 -c"$c" -d"${duration}s" --timeout 10s --latency -s "$script" \
      "${urls[$((i - 1))]}" -- ingest "$out/template.json" "$token" "$out/acked-$label-$i" "$spread" \
      >"$out/wrk-$label-$i.txt" 2>&1 &
    wpids+=("$!")
  done
  for p in "${wpids[@]}"; do wait "$p" || { echo "scale-out.sh: wrk failed: $(cat "$out"/wrk-"$label"-*.txt)" >&2; exit 1; }; done
  sleep 1 # what was in flight committed
  unserve "${spids[@]}"
  local req=0 bad=0 dur=0 p50=0 p99=0 max=0 errs=0 line
  for i in $(seq "$k"); do
    line=$(grep '^TW_WRK ' "$out/wrk-$label-$i.txt" | tail -1)
    [ -n "$line" ] || { echo "scale-out.sh: wrk gave no figures: $(cat "$out/wrk-$label-$i.txt")" >&2; exit 1; }
    req=$((req + $(get "$line" requests))) bad=$((bad + $(get "$line" non2xx)))
    errs=$((errs + $(get "$line" connect_err) + $(get "$line" read_err) + $(get "$line" write_err) + $(get "$line" timeouts)))
    [ "$(get "$line" duration_us)" -gt "$dur" ] && dur=$(get "$line" duration_us)
    [ "$(get "$line" p50_us)" -gt "$p50" ] && p50=$(get "$line" p50_us)
    [ "$(get "$line" p99_us)" -gt "$p99" ] && p99=$(get "$line" p99_us)
    [ "$(get "$line" max_us)" -gt "$max" ] && max=$(get "$line" max_us)
  done
  cat "$out"/acked-"$label"-*/acked-*.txt 2>/dev/null | sort -u >"$out/acked-$label"
  sql "$db" "SELECT id FROM reports" | sort >"$out/stored-$label"
  local lost stored
  lost=$(comm -23 "$out/acked-$label" "$out/stored-$label" | wc -l)
  stored=$(wc -l <"$out/stored-$label")
  jq -n --arg lbl "$label" --argjson ok $((req - bad)) --argjson bad "$bad" --argjson errs "$errs" \
    --argjson dur "$dur" --argjson p50 "$p50" --argjson p99 "$p99" --argjson max "$max" \
    --argjson lost "$lost" --argjson stored "$stored" --argjson acked "$(wc -l <"$out/acked-$label")" \
    '{"label": $lbl, "rate": (if $dur > 0 then $ok / ($dur / 1e6) else 0 end), "ok": $ok,
      "bad": $bad, "errors": $errs, "p50_ms": ($p50 / 1000), "p99_ms": ($p99 / 1000),
      "max_ms": ($max / 1000), "lost": $lost, "stored": $stored, "acked": $acked}' \
    >"$out/ingest-$label.json" || { echo "scale-out.sh: jq failed on the ingest figures" >&2; exit 1; }
  jq -c . "$out/ingest-$label.json" >&2
}

# ---- the fleet's read pages ----
paths="/api/v1/vms?limit=500 /api/v1/disks?limit=500 /api/v1/compliance?limit=500 /api/v1/compliance/summary"
# reads LABEL KIND: figures into $out/read-LABEL.json (one object a line)
reads() {
  local label=$1 kind=$2 db agent reader res="$out/read-$1.json"
  newdb "$kind" "read_$label"
  agent=$("$cli" token create --db "$db" --role agent --name scale-out 2>/dev/null)
  reader=$("$cli" token create --db "$db" --role reader --name scale-out 2>/dev/null)
  serve "$db" "read-$label"
  echo "reads, $label: posting $vms reports to one backend on $kind ..." >&2
  python3 tests/perf/fleet-load.py post "$url" "$agent" --vms "$vms" >"$res" ||
    { echo "scale-out.sh: posting the fleet failed" >&2; exit 1; }
  for p in $paths; do
    local walk=--walk
    case $p in *summary*) walk= ;; esac
    echo "reads, $label: GET $p ..." >&2
    python3 tests/perf/fleet-load.py read "$url" "$reader" --path "$p" --requests "$requests" \
      $walk --timeout "$timeout" >>"$res"
  done
  unserve "$pid"
  jq -c . "$res" >&2
}

if [ $do_ingest = 1 ]; then
  ingest sqlite1 sqlite 1
  if [ -n "$pg_base" ]; then ingest pg1 pg 1; ingest pg3 pg 3; fi
fi
if [ $do_read = 1 ]; then
  reads sqlite sqlite
  [ -n "$pg_base" ] && reads pg pg
fi
echo "(the run took ${SECONDS} s)" >&2

# ---- the tables ----
fig() { # FILE JQ
  [ -s "$1" ] || { echo "-"; return; }
  jq -rs "($2) // \"-\"" "$1" | head -1
}
num() { awk -v v="$1" -v d="$2" 'BEGIN { if (v == "-" || v == "") print "-"; else printf "%.*f", d, v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a+0 > 0 && b+0 > 0) printf "%.2f", a / b; else print "-" }'; }
nproc_=$(nproc)
echo
echo "scale-out: $nproc_ cores, $(uname -r), PostgreSQL $( [ -n "$pg_base" ] && psql "$pg_base dbname=postgres" -qXAtc 'SHOW server_version' || echo '-')"
if [ $do_ingest = 1 ]; then
  echo
  echo "ingest: POST /api/v1/reports, ${duration} s, $connections connections, 7.5 KiB reports, $( [ "$spread" -gt 0 ] && echo "$spread VMs per wrk thread" || echo "all of one VM")"
  printf '%-24s %12s %12s %12s %10s %10s\n' "" "SQLite x1" "PG x1" "PG x3" "PG1/SQL" "PG3/SQL"
  for f in "reports/s:rate:0" "p50 latency, ms:p50_ms:2" "p99 latency, ms:p99_ms:2" "max latency, ms:max_ms:1" \
           "answers not 2xx:bad:0" "socket errors:errors:0" "acknowledged, missing:lost:0"; do
    IFS=: read -r name key d <<<"$f"
    a=$(num "$(fig "$out/ingest-sqlite1.json" ".[0].$key")" "$d")
    b=$(num "$(fig "$out/ingest-pg1.json" ".[0].$key")" "$d")
    c=$(num "$(fig "$out/ingest-pg3.json" ".[0].$key")" "$d")
    r1=- r3=-
    case $key in rate|p50_ms|p99_ms|max_ms) r1=$(ratio "$b" "$a") r3=$(ratio "$c" "$a") ;; esac
    printf '%-24s %12s %12s %12s %10s %10s\n' "$name" "$a" "$b" "$c" "$r1" "$r3"
  done
  need=$(awk -v n="$vms" 'BEGIN { printf "%.1f", n / 900 }')
  echo
  echo "sizing: $vms VMs reporting within 15 minutes each night need $need reports/s;"
  for l in sqlite1:"one backend on SQLite" pg1:"one backend on PostgreSQL" pg3:"three backends on PostgreSQL"; do
    r=$(fig "$out/ingest-${l%%:*}.json" ".[0].rate")
    [ "$r" = - ] && continue
    awk -v r="$r" -v need="$need" -v what="${l#*:}" -v n="$vms" 'BEGIN {
      printf "  %s: %.0f reports/s, %.0fx that: %.0f VMs in the window\n", what, r, r / need, r * 900 }'
  done
fi
if [ $do_read = 1 ]; then
  echo
  echo "the fleet's read pages at $vms VMs (one backend; p50/p99 of $requests requests)"
  printf '%-36s %12s %12s %10s\n' "" "SQLite" "PostgreSQL" "PG/SQL"
  a=$(fig "$out/read-sqlite.json" 'map(select(.posted))[0].seconds')
  b=$(fig "$out/read-pg.json" 'map(select(.posted))[0].seconds')
  printf '%-36s %12s %12s %10s\n' "$vms reports posted, s" "$(num "$a" 1)" "$(num "$b" 1)" "$(ratio "$b" "$a")"
  for p in $paths; do
    short=${p#/api/v1}
    for k in p50_ms p99_ms walk_s pages; do
      case $k in walk_s|pages) case $p in *summary*) continue ;; esac ;; esac
      sel="map(select(.path == \"$p\"))[0] | .$k"
      a=$(fig "$out/read-sqlite.json" "$sel") b=$(fig "$out/read-pg.json" "$sel")
      d=2; [ $k = pages ] && d=0
      a=$(num "$a" $d) b=$(num "$b" $d)
      r=$(ratio "$b" "$a")
      # A walk cut off by the timeout (fleet-load.py's walk_complete
      # false) took longer than shown, over fewer pages.
      if [ $k = walk_s ] || [ $k = pages ]; then
        inc="map(select(.path == \"$p\"))[0] | .walk_complete == false"
        [ "$(fig "$out/read-sqlite.json" "$inc")" = true ] && a=">$a" r=-
        [ "$(fig "$out/read-pg.json" "$inc")" = true ] && b=">$b" r=">$r"
        [ $k = pages ] && [ "${b:0:1}" = ">" ] && { b="${b#>} (cut)"; r=-; }
        [ $k = pages ] && [ "${a:0:1}" = ">" ] && { a="${a#>} (cut)"; r=-; }
      fi
      printf '%-36s %12s %12s %10s\n' "$short ${k/_/, }" "$a" "$b" "$r"
    done
  done
fi
verdict=0
for f in "$out"/ingest-*.json; do
  [ -e "$f" ] || continue
  if [ "$(jq '.lost' "$f")" != 0 ] || [ "$(jq '.bad' "$f")" != 0 ]; then
    echo "FAIL: $(jq -r '.label' "$f"): $(jq '.lost' "$f") acknowledged reports missing, $(jq '.bad' "$f") answers not 2xx"
    verdict=1
  fi
done
for f in "$out"/read-*.json; do
  [ -e "$f" ] || continue
  if jq -e 'select(.error)' "$f" >/dev/null 2>&1; then
    echo "FAIL: $(basename "$f" .json): $(jq -r 'select(.error) | "\(.path): \(.error)"' "$f" | head -3)"
    verdict=1
  fi
done
exit $verdict

#!/usr/bin/env bash
# The backend's ingest benchmark: wrk drives POST /api/v1/reports on a
# fresh database with real 4-8 KiB reports (tests/fixtures/reports/), each
# request a fresh UUID (tests/perf/ingest-load.lua), then GET /healthz the
# same way as the server's own ceiling, and prints both side by side with
# the targets:
#   >= 5,000 reports/s, p99 < 50 ms, nothing lost: every report answered
#   201 is in the database, and the database holds no more than the 201s
#   plus the requests still in flight when wrk stopped (at most one per
#   connection: stored, but wrk closed the connection before the answer).
#
#   tests/perf/ingest-load.sh [--duration SEC] [--connections N] [--threads N]
#                             [--server-threads N] [--report FILE] [--cli PATH]
#
# Defaults: 20 s, 64 connections, 2 wrk threads, the server's default
# request threads, sap-app-02.json (7.5 KiB).  Without --cli it builds a
# Release tierwise in $TW_BUILD_DIR (default build/release).  Needs wrk,
# jq, sqlite3 and curl.  Everything runs on 127.0.0.1 (port 0).
set -euo pipefail
cd "$(dirname "$0")/../.."

duration=20 connections=64 wrk_threads=2 server_threads="" cli=""
report=tests/fixtures/reports/sap-app-02.json
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --threads) wrk_threads=$2; shift 2 ;;
    --server-threads) server_threads=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "ingest-load: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for tool in wrk jq sqlite3 curl; do
  command -v "$tool" >/dev/null || { echo "ingest-load: $tool is not installed" >&2; exit 2; }
done
[ "$connections" -ge "$wrk_threads" ] || { echo "ingest-load: --connections must be >= --threads" >&2; exit 2; }

if [ -z "$cli" ]; then
  build=${TW_BUILD_DIR:-build/release}
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target tierwise >/dev/null
  cli="$build/src/tierwise"
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/tw-ingest-XXXXXX")
pid=""
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$out"' EXIT
db="$out/tw.db"

token=$("$cli" token create --db "$db" --role agent --name ingest-load 2>/dev/null)
jq -c '.id = "@ID@"' "$report" >"$out/template.json"
body_bytes=$(($(wc -c <"$out/template.json") - 4 + 36))
args=(serve --db "$db" --listen 127.0.0.1:0 --port-file "$out/port")
[ -n "$server_threads" ] && args+=(--threads "$server_threads")
"$cli" "${args[@]}" 2>"$out/serve.err" &
pid=$!
for _ in $(seq 100); do [ -s "$out/port" ] && break; sleep 0.1; done
[ -s "$out/port" ] || { echo "ingest-load: the server did not start: $(cat "$out/serve.err")" >&2; exit 1; }
base="http://127.0.0.1:$(cat "$out/port")"

# run MODE: wrk for the duration; prints its TW_WRK line.
run() {
  wrk -t"$wrk_threads" -c"$connections" -d"${duration}s" --timeout 10s --latency \
    -s tests/perf/ingest-load.lua "$base" -- "$1" "$out/template.json" "$token" "$out" \
    >"$out/wrk-$1.txt" 2>&1 || { cat "$out/wrk-$1.txt" >&2; exit 1; }
  grep '^TW_WRK ' "$out/wrk-$1.txt" | tail -1
}
get() { sed -E "s/.* $2=([0-9]+).*/\1/" <<<"$1"; }

echo "ingest-load: ${duration} s at $connections connections ($wrk_threads wrk threads), reports of $body_bytes bytes ($(basename "$report"))"
ingest=$(run ingest)
# Let the writer commit what was in flight, then read the database.
sleep 1
health=$(run healthz)
kill -TERM "$pid"; wait "$pid" || true; pid=""

stored=$(sqlite3 "$db" 'SELECT count(*) FROM reports;')
cat "$out"/acked-*.txt 2>/dev/null | sort -u >"$out/acked"
sqlite3 "$db" 'SELECT id FROM reports;' | sort >"$out/stored"
acked_ids=$(wc -l <"$out/acked")
lost=$(comm -23 "$out/acked" "$out/stored" | wc -l)
integrity=$(sqlite3 "$db" 'PRAGMA integrity_check;')

rate() { awk -v n="$1" -v us="$2" 'BEGIN { r = 0; if (us > 0) r = n / (us / 1e6); printf "%.0f", r }'; }
ms() { awk -v us="$1" 'BEGIN { printf "%.2f", us / 1000 }'; }
i_req=$(get "$ingest" requests) i_dur=$(get "$ingest" duration_us) i_bad=$(get "$ingest" non2xx)
h_req=$(get "$health" requests) h_dur=$(get "$health" duration_us) h_bad=$(get "$health" non2xx)
i_err=$(( $(get "$ingest" connect_err) + $(get "$ingest" read_err) + $(get "$ingest" write_err) + $(get "$ingest" timeouts) ))
i_2xx=$((i_req - i_bad))
i_rate=$(rate "$i_2xx" "$i_dur")
i_p99=$(get "$ingest" p99_us)

printf '\n%-22s %14s %14s   %s\n' "" "POST /reports" "GET /healthz" "target (reports)"
printf '%-22s %14s %14s   %s\n' "requests/s (2xx)" "$i_rate" "$(rate $((h_req - h_bad)) "$h_dur")" ">= 5000"
printf '%-22s %14s %14s\n' "p50 latency (ms)" "$(ms "$(get "$ingest" p50_us)")" "$(ms "$(get "$health" p50_us)")"
printf '%-22s %14s %14s\n' "p90 latency (ms)" "$(ms "$(get "$ingest" p90_us)")" "$(ms "$(get "$health" p90_us)")"
printf '%-22s %14s %14s   %s\n' "p99 latency (ms)" "$(ms "$i_p99")" "$(ms "$(get "$health" p99_us)")" "< 50"
printf '%-22s %14s %14s\n' "max latency (ms)" "$(ms "$(get "$ingest" max_us)")" "$(ms "$(get "$health" max_us)")"
printf '%-22s %14s %14s\n' "answers not 2xx" "$i_bad" "$h_bad"
printf '%-22s %14s\n' "socket errors" "$i_err"
echo
echo "database: $stored reports stored; $i_2xx answered 2xx ($acked_ids ids logged by wrk); $lost acknowledged but missing; integrity_check: $integrity"

verdict=0
[ "$lost" = 0 ] && [ "$acked_ids" = "$i_2xx" ] || { echo "FAIL: acknowledged reports are missing (or wrk lost count)"; verdict=1; }
extra=$((stored - i_2xx))
if [ "$extra" -lt 0 ] || [ "$extra" -gt "$connections" ]; then
  echo "FAIL: the database holds $stored reports for $i_2xx 2xx answers"; verdict=1
elif [ "$extra" -gt 0 ]; then
  echo "note: $extra reports were stored but their answers were cut off when wrk stopped (at most one per connection)"
fi
[ "$integrity" = ok ] || { echo "FAIL: integrity_check: $integrity"; verdict=1; }
[ "$i_bad" = 0 ] || { echo "FAIL: $i_bad answers were not 2xx"; verdict=1; }
[ "$i_rate" -ge 5000 ] && echo "target reports/s: met" || echo "target reports/s: NOT met ($i_rate < 5000)"
[ "$i_p99" -lt 50000 ] && echo "target p99 < 50 ms: met" || echo "target p99 < 50 ms: NOT met"
exit $verdict

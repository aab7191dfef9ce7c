#!/usr/bin/env bash
# Price refresh and lookups, against the targets of issue 5:
#   refresh bound by the network, not by parsing: parse >= 50 MB/s of JSON;
#   lookups >= 10 million per second.
#
# A simulator on 127.0.0.1 (port 0) serves one region's Storage price list:
# the bundled snapshot's real USD items, all relabelled to one test region
# "perfregion" (4,209 items, more than any real region lists today), in
# pages of --page-size items (default 100: 43 pages).  `tierwise prices
# refresh` fetches every page into a scratch database; `tierwise prices
# bench` then builds the book from the database and times --lookups
# lookups (default 1,000,000) round robin over its prices.  Time and peak
# memory (max RSS) of both are printed next to the targets.  Use a build
# without sanitizers for figures (-DCMAKE_BUILD_TYPE=Release, no TW_SANITIZE).
#
#   tests/perf/prices.sh [--build DIR] [--page-size N] [--lookups N] [--runs N]
set -euo pipefail
cd "$(dirname "$0")/../.."

build=build/release page=100 lookups=1000000 runs=3
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --page-size) page=$2; shift 2 ;;
    --lookups) lookups=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "prices.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
cli=${TW_CLI:-$build/src/tierwise}
azsim=${TW_AZSIM:-$build/src/tierwise-azsim}
for f in "$cli" "$azsim"; do
  [ -x "$f" ] || { echo "prices.sh: $f is not built (give --build DIR)" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "prices.sh: needs jq" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "prices.sh: needs /usr/bin/time (GNU time) for memory" >&2; exit 2; }

scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-perf-prices-XXXXXX")
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
export TIERWISE_LOOPBACK_ONLY=1

jq '{Items: [.Items[] | select(.currencyCode == "USD") | .armRegionName = "perfregion"]}' \
  pricing/azure-disk-prices.json >"$scratch/items.json"
items=$(jq '.Items | length' "$scratch/items.json")
printf '{"schema": "tierwise.azsim-scenario/1", "settings": {"prices_page_size": %s}}\n' "$page" \
  >"$scratch/scenario.json"
"$azsim" --scenario "$scratch/scenario.json" --prices "$scratch/items.json" \
  --port-file "$scratch/port" >/dev/null 2>"$scratch/sim.err" &
pid=$!
for _ in $(seq 100); do [ -s "$scratch/port" ] && break; sleep 0.1; done
[ -s "$scratch/port" ] || { echo "prices.sh: the simulator did not start: $(cat "$scratch/sim.err")" >&2; exit 1; }
url="http://127.0.0.1:$(cat "$scratch/port")"

# rss FILE: the max RSS in KiB that GNU time wrote to FILE.
rss() { sed -n 's/.*Maximum resident set size (kbytes): //p' "$1"; }

echo "prices: $items items of one region in pages of $page, $lookups lookups, $runs runs ($cli)"
printf '%-4s %7s %6s %9s %9s %11s %9s %14s %9s\n' run pages items refresh_s parse_s parse_MB/s rss_KiB lookups/s rss_KiB
for run in $(seq "$runs"); do
  rm -f "$scratch/p.db"*
  /usr/bin/time -v -o "$scratch/time1" "$cli" prices refresh --db "$scratch/p.db" \
    --region perfregion --currency USD --prices-url "$url" --json >"$scratch/refresh.json"
  /usr/bin/time -v -o "$scratch/time2" "$cli" prices bench --db "$scratch/p.db" \
    --region perfregion --currency USD --lookups "$lookups" --json >"$scratch/bench.json"
  r=$(cat "$scratch/refresh.json") b=$(cat "$scratch/bench.json")
  printf '%-4s %7s %6s %9.3f %9.4f %11.1f %9s %14.0f %9s\n' "$run" \
    "$(jq .pages <<<"$r")" "$(jq .items <<<"$r")" "$(jq .seconds <<<"$r")" \
    "$(jq .parse_seconds <<<"$r")" "$(jq .parse_mb_per_s <<<"$r")" "$(rss "$scratch/time1")" \
    "$(jq .lookups_per_s <<<"$b")" "$(rss "$scratch/time2")"
  echo "$r" >>"$scratch/all-refresh"
  echo "$b" >>"$scratch/all-bench"
done
# Medians against the targets.
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
parse=$(jq .parse_mb_per_s "$scratch/all-refresh" | med)
share=$(jq '.parse_seconds / .seconds * 100' "$scratch/all-refresh" | med)
look=$(jq .lookups_per_s "$scratch/all-bench" | med)
printf '\n%-36s %14s %14s\n' "median" "measured" "target"
printf '%-36s %14.1f %14s\n' "parse, MB/s of JSON" "$parse" ">= 50"
printf '%-36s %14.1f %14s\n' "parse share of the refresh, %" "$share" "small (network-bound)"
printf '%-36s %14.0f %14s\n' "lookups per second" "$look" ">= 10000000"

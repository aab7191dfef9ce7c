#!/usr/bin/env bash
# fleet-read.sh - the read side of the backend on a large fleet: 10,000 VMs,
# 50,000 disks and 100,000 results, posted as 10,000 reports (5 disks and 10
# results each, every result the latest of its disk and profile) to a fresh
# database; then p50/p99 of a page of /api/v1/compliance, /disks and /vms
# (?limit=500: a revision without paging ignores it and answers everything),
# the fleet summary, the time of a walk of every page (following the answer's
# cursor; one request when there is none) and the server's peak RSS (VmHWM).
# The same run on a reference revision (--ref REV, default 5282142, the
# commit before the store v2 work; built from a git worktree under build/)
# is printed beside it, as ratios.
#
#   tests/perf/fleet-read.sh [--ref REV | --no-ref] [--vms N] [--requests N]
#                            [--timeout S]
#
# Loopback only, port 0 read back from --port-file, every server stopped at
# the end.  Release builds in build/perf-fleet (and build/perf-fleet-ref).
# Needs cmake, git, curl, jq, python3.  Bounded: each request may take at
# most --timeout seconds (default 60), a walk as long.
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
ref=5282142
vms=10000
requests=30
timeout=60
while [ $# -gt 0 ]; do
  case $1 in
    --ref) ref=$2; shift 2 ;;
    --no-ref) ref=""; shift ;;
    --vms) vms=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fleet-read.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for t in cmake git curl jq python3; do
  command -v "$t" >/dev/null || { echo "fleet-read.sh: needs $t" >&2; exit 2; }
done
export TIERWISE_LOOPBACK_ONLY=1
out=$(mktemp -d "${TMPDIR:-/tmp}/tw-fleet-read-XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
load="python3 $src/tests/perf/fleet-load.py"

build() { # SRCDIR BUILDDIR
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >"$out/cmake.log" 2>&1 &&
    cmake --build "$2" -j2 --target tierwise >>"$out/cmake.log" 2>&1 ||
    { echo "fleet-read.sh: the build in $2 failed:" >&2; tail -20 "$out/cmake.log" >&2; exit 1; }
}

echo "building (Release) ..." >&2
build "$src" "$src/build/perf-fleet"
clis=("$src/build/perf-fleet/src/tierwise")
labels=("HEAD")
if [ -n "$ref" ]; then
  wt="$src/build/perf-fleet-ref-src"
  rev=$(git rev-parse --verify "$ref^{commit}") || { echo "fleet-read.sh: no revision $ref" >&2; exit 2; }
  if [ ! -d "$wt" ] || [ "$(git -C "$wt" rev-parse HEAD 2>/dev/null)" != "$rev" ]; then
    [ -d "$wt" ] && git worktree remove --force "$wt" 2>/dev/null
    git worktree add --detach "$wt" "$rev" >/dev/null 2>&1 ||
      { echo "fleet-read.sh: can't make a worktree of $ref in $wt" >&2; exit 1; }
  fi
  build "$wt" "$src/build/perf-fleet-ref"
  clis+=("$src/build/perf-fleet-ref/src/tierwise")
  labels+=("$(git rev-parse --short "$rev")")
fi

# serve INDEX: starts the server of INDEX on its database; sets $pid, $url.
serve() {
  local i=$1
  rm -f "$out/$i.port"
  "${clis[$i]}" serve --db "$out/$i.db" --listen 127.0.0.1:0 --port-file "$out/$i.port" \
    >>"$out/$i.out" 2>>"$out/$i.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do [ -s "$out/$i.port" ] && break; sleep 0.1; done
  [ -s "$out/$i.port" ] || { echo "fleet-read.sh: ${labels[$i]}: the server did not start: $(cat "$out/$i.err")" >&2; exit 1; }
  url="http://127.0.0.1:$(cat "$out/$i.port")"
}
# unserve INDEX: notes the server's peak RSS and stops it (SIGKILL when a
# request it was abandoned by still runs: a slow answer must not hold the
# run, nor load the next measurement).
unserve() {
  awk '/^VmHWM/ {printf "{\"rss_kib\": %s}\n", $2}' "/proc/$pid/status" >>"$out/$1.json"
  kill -TERM "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
}

# run INDEX: a fresh database, the reports posted, then the reads, each
# route on a server of its own; the figures go to $out/INDEX.json (one JSON
# object per line).
run() {
  local i=$1 cli=${clis[$1]} db="$out/$1.db" res="$out/$1.json"
  : >"$res"
  local agent reader
  agent=$("$cli" token create --db "$db" --role agent --name perf 2>/dev/null)
  reader=$("$cli" token create --db "$db" --role reader --name perf 2>/dev/null)
  serve "$i"
  echo "${labels[$i]}: posting $vms reports ..." >&2
  $load post "$url" "$agent" --vms "$vms" | tee -a "$res" >&2
  # What the database holds.
  curl -s --noproxy '*' "$url/metrics" |
    awk '$1 ~ /^tierwise_(vms|disks|results)$/ {printf "{\"%s\": %s}\n", $1, $2}' >>"$res"
  local summary=""
  for p in /api/v1/compliance/summary /api/v1/summary; do
    code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $reader" "$url$p")
    [ "$code" = 200 ] && { summary=$p; break; }
  done
  echo "{\"summary_route\": \"${summary:-none}\"}" >>"$res"
  unserve "$i"
  for p in /api/v1/vms /api/v1/disks /api/v1/compliance $summary; do
    serve "$i"
    local q="$p?limit=500"
    [ "$p" = "$summary" ] && q=$p
    echo "${labels[$i]}: GET $q, then a walk ..." >&2
    # One request first: an unpaged revision answers everything per
    # request, so a big or slow answer is asked for 3 times, not 30, and
    # one over the timeout is noted as such and not repeated.
    n=$requests
    $load read "$url" "$reader" --path "$q" --requests 1 --timeout "$timeout" >"$out/probe"
    if jq -e '.error' "$out/probe" >/dev/null; then
      jq -c --arg t "$timeout" '.error = "no answer within \($t) s (\(.error))" | .over_s = ($t | tonumber)' \
        "$out/probe" >>"$res"
      unserve "$i"
      continue
    fi
    if jq -e '.bytes > 10000000 or .p50_ms > 2000' "$out/probe" >/dev/null; then n=3; fi
    local walk=--walk
    [ "$p" = "$summary" ] && walk=
    $load read "$url" "$reader" --path "$q" --requests "$n" $walk --timeout "$timeout" >>"$res"
    unserve "$i"
  done
}

for i in "${!clis[@]}"; do run "$i"; done
echo "(the run took ${SECONDS} s)" >&2

# The table: HEAD, the reference and their ratio beside the targets.
fig() { # INDEX JQ
  [ -s "$out/$1.json" ] || { echo "-"; return; }
  jq -rs "$2 // \"-\"" "$out/$1.json" | head -1
}
row() { # LABEL JQ TARGET [JQ OF THE REFERENCE]
  local a b ratio
  a=$(fig 0 "$2")
  b=-
  [ ${#clis[@]} -gt 1 ] && b=$(fig 1 "${4:-$2}")
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN {
    lt = ""; if (substr(b, 1, 1) == ">") { lt = "<"; b = substr(b, 2) }
    if (a+0 > 0 && b+0 > 0) printf "%s%.3g", lt, a / b; else print "-" }')
  printf '%-34s %14s %14s %10s   %s\n' "$1" "$a" "$b" "$ratio" "$3"
}
# by PATH FIELD: the jq for FIELD of PATH's figures; a request over the
# timeout shows as ">T" in ms or s, and its counts as "-".
by() {
  local over='"-"'
  case $2 in
    *_ms) over='">\(.over_s * 1000)"' ;;
    *_s) over='">\(.over_s)"' ;;
  esac
  echo "map(select(.path == \"$1\"))[0] | if .over_s then $over else .$2 end"
}
echo
printf '%-34s %14s %14s %10s   %s\n' "" "${labels[0]}" "${labels[1]:-(no ref)}" "HEAD/ref" "target"
row "reports posted, s" 'map(select(.posted))[0].seconds' ""
row "VMs" 'map(select(.tierwise_vms))[0].tierwise_vms' ""
row "disks" 'map(select(.tierwise_disks))[0].tierwise_disks' ""
row "results" 'map(select(.tierwise_results))[0].tierwise_results' ""
for p in compliance disks vms; do
  row "/$p?limit=500 p50, ms" "$(by "/api/v1/$p?limit=500" p50_ms)" ""
  row "/$p?limit=500 p99, ms" "$(by "/api/v1/$p?limit=500" p99_ms)" "< 50"
  row "/$p?limit=500 answer, bytes" "$(by "/api/v1/$p?limit=500" bytes)" ""
  row "/$p walk of all pages, s" "$(by "/api/v1/$p?limit=500" walk_s)" ""
  row "/$p walk: pages" "$(by "/api/v1/$p?limit=500" pages)" ""
  row "/$p walk: rows" "$(by "/api/v1/$p?limit=500" rows)" ""
done
sum0=$(fig 0 'map(select(.summary_route))[0].summary_route')
sum1=$(fig 1 'map(select(.summary_route))[0].summary_route')
if [ "$sum0" != none ] && [ "$sum0" != - ]; then
  # A reference without the route: its whole /compliance (one request,
  # unpaged there) is what a summary cost it.
  ref_p=$sum0
  [ "$sum1" = none ] && ref_p="/api/v1/compliance?limit=500"
  row "summary p50, ms" "$(by "$sum0" p50_ms)" "" "$(by "$ref_p" p50_ms)"
  row "summary p99, ms" "$(by "$sum0" p99_ms)" "< 200" "$(by "$ref_p" p99_ms)"
  echo "(summary: $sum0 on ${labels[0]}$([ ${#clis[@]} -gt 1 ] && [ "$sum1" = none ] && echo "; ${labels[1]} has no summary route: its whole /compliance"))"
else
  echo "(no fleet summary route: the summary is the whole /compliance, its walk above; target < 200 ms)"
fi
row "server peak RSS (VmHWM), MiB" '[.[] | .rss_kib // empty] | max / 1024 | floor' "< 300"
for i in "${!clis[@]}"; do
  if jq -e 'select(.error)' "$out/$i.json" >/dev/null 2>&1; then
    echo "${labels[$i]}: errors:"
    jq -r 'select(.error) | "  \(.path): \(.error)"' "$out/$i.json"
  fi
done

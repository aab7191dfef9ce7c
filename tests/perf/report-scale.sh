#!/usr/bin/env bash
# report-scale.sh - the monthly report at scale: the fleet of savings-scale.sh
# (20,000 VMs, 100,000 disks) with November 2026 lived through by a policy
# that takes every Premium data disk (60,000) to Standard SSD each weekend
# (tests/perf/fleet-gen.py --activity 2026-11: weekend deallocations, done
# downgrades and upgrades with their audit log and ARM SKU rows, skipped,
# failed and drift cases; the bundled price snapshot, USD; no results, so
# no verdicts), written straight into a fresh database.  The generator is
# checked first (its rows counted in the database, the month's actions
# shown by a sqlite3 query).  Then `tierwise report monthly --db --month
# 2026-11 --format json|csv|html --out F`, each --runs times, with
# /usr/bin/time -v: the median and min-max wall time and the peak RSS per
# format beside the targets (3 s, 500 MiB; the HTML under 10 MB) as
# ratios, and the output's size; the JSON once more with the policy given
# (--policy: the `possible` figures modelled).  Each output is checked:
# the JSON's fleet totals are the sums of its rows and its disks the
# fleet's, the CSV has a record per disk, the HTML is one page.  Beside
# them, the reference: `tierwise savings --db --policy --month 2026-11` on
# the same data.  Exit 1 when a target is missed or a check fails, 77 when
# this tierwise has no `report monthly` (after the generator's checks).
#
#   tests/perf/report-scale.sh [--vms N] [--runs N] [--keep DIR] [--cli FILE]
#
# --runs: runs per format (default 3); --keep DIR: leave the database and
# the outputs there (a database kept from an earlier run of the same
# --vms is used again); --cli FILE: time that tierwise instead of building
# one.  A Release build in build/perf-report.  Needs cmake, python3,
# sqlite3 and /usr/bin/time.  No network.
set -u
cd "$(dirname "$0")/../.." || exit 2
src=$PWD
vms=20000
runs=3
keep=""
cli=""
while [ $# -gt 0 ]; do
  case $1 in
    --vms) vms=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --cli) cli=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "report-scale.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $vms$runs in *[!0-9]*) echo "report-scale.sh: --vms and --runs take whole numbers" >&2; exit 2 ;; esac
[ "$vms" -ge 1 ] && [ "$runs" -ge 1 ] || { echo "report-scale.sh: --vms and --runs must be at least 1" >&2; exit 2; }
for t in cmake python3 sqlite3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "report-scale.sh: needs $t (deploy/setup.sh installs it)" >&2; exit 2; }
done
export TIERWISE_LOOPBACK_ONLY=1
if [ -n "$keep" ]; then out=$keep; mkdir -p "$out"; else out=$(mktemp -d "${TMPDIR:-/tmp}/tw-report-scale-XXXXXX"); fi
cleanup() { [ -n "$keep" ] || rm -rf "$out"; }
trap cleanup EXIT

if [ -z "$cli" ]; then
  echo "building (Release) ..." >&2
  bd="$src/build/perf-report"
  cmake -S "$src" -B "$bd" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >"$out/cmake.log" 2>&1 &&
    cmake --build "$bd" -j2 --target tierwise >>"$out/cmake.log" 2>&1 ||
    { echo "report-scale.sh: the build failed:" >&2; tail -20 "$out/cmake.log" >&2; exit 1; }
  cli="$bd/src/tierwise"
fi
[ -x "$cli" ] || { echo "report-scale.sh: $cli is not a program" >&2; exit 2; }

# ---- the fleet -------------------------------------------------------------
db="$out/fleet.db"
if [ -s "$out/gen.json" ] && [ -s "$db" ] && [ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vms"])' "$out/gen.json")" = "$vms" ]; then
  echo "using the fleet kept in $db" >&2
  gen_s=kept
else
  rm -f "$db" "$out/gen.json"
  "$cli" prices import --db "$db" "$src/pricing/azure-disk-prices.json" >"$out/import.log" 2>&1 ||
    { echo "report-scale.sh: importing the snapshot failed: $(cat "$out/import.log")" >&2; exit 1; }
  echo "generating $vms VMs with a month of actions ..." >&2
  gen_start=$(date +%s.%N)
  python3 "$src/tests/perf/fleet-gen.py" "$db" "$vms" --activity 2026-11 2>"$out/gen.err" ||
    { echo "report-scale.sh: the generator failed: $(tail -3 "$out/gen.err")" >&2; exit 1; }
  gen_end=$(date +%s.%N)
  tail -1 "$out/gen.err" >"$out/gen.json"
  gen_s=$(awk -v a="$gen_start" -v b="$gen_end" 'BEGIN {printf "%.0f s", b - a}')
fi
status=0
rm -f "$out/figures.txt"

# The generator's checks: what it says it wrote is in the database, and the
# month's actions are what the fleet's shape makes them: per weekend whose
# Monday is in November (5), per Premium data disk (3 a VM), a downgrade
# and an upgrade; done but for 1 VM in 50 (one weekend skipped) and 1 in
# 1000 (the last upgrade failed).
check=$(python3 - "$db" "$out/gen.json" "$vms" <<'PY'
import json, sqlite3, sys
db, gen, n = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
con = sqlite3.connect(db)
bad = []
for t in ("vms", "disks", "power_states", "disk_sku_history", "actions", "action_transitions",
          "drift", "disk_originals"):
    c = con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
    if c != gen[t]:
        bad.append("%s: %d rows, the generator wrote %d" % (t, c, gen[t]))
skip = sum(1 for v in range(1, n + 1) if v % 50 == 3)
fail = sum(1 for v in range(1, n + 1) if v % 1000 == 11)
drift = sum(1 for v in range(1, n + 1) if v % 100 == 7)
want = {"vms": n, "disks": 5 * n, "actions": 30 * n, "drift": 3 * drift,
        "disk_originals": 3 * fail,
        # done: 5 moves, skipped: 2, failed: 4
        "action_transitions": 5 * (30 * n - 6 * skip - 3 * fail) + 2 * 6 * skip + 4 * 3 * fail}
for k, w in want.items():
    if gen[k] != w:
        bad.append("%s: %d, the fleet's shape makes %d" % (k, gen[k], w))
states = dict(((k, s), c) for k, s, c in con.execute(
    "SELECT kind, state, count(*) FROM actions GROUP BY 1, 2"))
if states.get(("upgrade", "failed"), 0) != 3 * fail or \
        states.get(("downgrade", "skipped"), 0) != 3 * skip:
    bad.append("action states: %s" % states)
# Every done action moved to verified once, and a SKU row of the disk says so then.
c = con.execute("SELECT count(*) FROM actions a WHERE a.state = 'done' AND NOT EXISTS (SELECT 1 "
                "FROM action_transitions t JOIN disk_sku_history h ON h.disk_id = a.disk_id AND "
                "h.sku = a.to_sku AND h.observed_at = substr(t.at, 1, 19) || 'Z' WHERE "
                "t.action_id = a.id AND t.to_state = 'verified')").fetchone()[0]
if c:
    bad.append("%d done actions without their verified move and SKU row" % c)
print("ok" if not bad else "; ".join(bad))
PY
)
if [ "$check" != ok ]; then
  echo "report-scale.sh: the generated fleet: $check" >&2
  status=1
fi
printf 'fleet: %s VMs, generated in %s (%s MiB database): %s\n' "$vms" "$gen_s" \
  "$(( $(stat -c %s "$db") / 1048576 ))" "$(cat "$out/gen.json")"
printf '\nthe month'"'"'s disk actions (verified in November 2026, by the audit log), by kind and state:\n'
sqlite3 -header -column "$db" "SELECT a.kind, a.state, count(*) AS actions, count(DISTINCT a.disk_id) AS disks,
  min(coalesce(t.at, a.finished_at)) AS first, max(coalesce(t.at, a.finished_at)) AS last
  FROM actions a LEFT JOIN action_transitions t ON t.action_id = a.id AND t.to_state = 'verified'
  WHERE coalesce(t.at, a.finished_at) >= '2026-11-01' AND coalesce(t.at, a.finished_at) < '2026-12-01'
  GROUP BY 1, 2 ORDER BY 1, 2" || status=1

cat >"$out/weekends.json" <<'EOF'
{ "schema_version": "tierwise.policy/1", "name": "weekends",
  "match": { "skus": ["Premium_LRS"] }, "target": "StandardSSD_LRS",
  "windows": ["Fri 20:00-Mon 06:00"], "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": 10, "before_start_minutes": 30 },
  "min_saving": "0.01", "quota": { "changes": 2, "hours": 24 }, "os_disks": false }
EOF

# ---- the runs ----------------------------------------------------------------
secs() { # a /usr/bin/time -v file: its wall clock in seconds
  awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); t = 0; for (i = 1; i <= n; i++) t = t * 60 + a[i]; print t}' "$1"
}
kib() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1"; }
# NAME COMMAND...: runs it --runs times; "median min max peak_kib" into $out/NAME.fig
timed() {
  local name=$1 s peak=0 k times=""
  shift
  for _ in $(seq "$runs"); do
    /usr/bin/time -v "$@" >"$out/$name.stdout" 2>"$out/$name.time"
    local st=$?
    if [ $st != 0 ]; then
      echo "report-scale.sh: $name: exit $st: $(grep -v '^\s' "$out/$name.time" | head -3)" >&2
      return 1
    fi
    s=$(secs "$out/$name.time")
    k=$(kib "$out/$name.time")
    [ "$k" -gt "$peak" ] && peak=$k
    times="$times $s"
  done
  echo "$times" | tr ' ' '\n' | grep . | sort -g | awk -v k="$peak" '{a[NR] = $1}
    END {m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m, a[1], a[NR], k}' \
    >"$out/$name.fig"
}

# The reference: the previous design's nearest run over the same data.
timed savings "$cli" savings --db "$db" --policy "$out/weekends.json" --month 2026-11 \
  --currency USD --json || status=1
ref=$(awk '{print $1}' "$out/savings.fig" 2>/dev/null)

if ! "$cli" report monthly --help >"$out/help.txt" 2>&1; then
  echo "report-scale.sh: $cli has no \`report monthly\` ($(head -1 "$out/help.txt")); the fleet's checks: $check" >&2
  [ -s "$out/savings.fig" ] && awk '{printf "\nthe reference, tierwise savings --month 2026-11, runs: %d, median %.2f s (%.2f-%.2f), peak %.1f MiB\n", '"$runs"', $1, $2, $3, $4 / 1024}' "$out/savings.fig"
  [ $status = 0 ] && exit 77
  exit $status
fi

for f in json csv html; do
  timed "$f" "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format "$f" --out "$out/report.$f" || status=1
done
timed json-policy "$cli" report monthly --db "$db" --month 2026-11 --currency USD --format json \
  --policy "$out/weekends.json" --out "$out/report-policy.json" || status=1

# The outputs' checks.
for j in report.json report-policy.json; do
  [ -s "$out/$j" ] || continue
  v=$(python3 - "$out/$j" "$vms" <<'PY'
import json, sys
from decimal import Decimal
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
t = doc["totals"]
bad = []
if len(doc["disks"]) != 5 * n or t["disks"] != 5 * n:
    bad.append("%d rows, totals.disks %d, the fleet has %d" % (len(doc["disks"]), t["disks"], 5 * n))
for f in ("cost", "baseline", "realised", "transactions", "possible"):
    # an unpriced disk's amounts are null: left out of the totals
    s = sum(Decimal(d[f]) for d in doc["disks"] if d[f] is not None)
    if s != Decimal(t[f] or 0):
        bad.append("totals.%s %s, its rows sum to %s" % (f, t[f], s))
    if sum(Decimal(g["totals"][f] or 0) for g in doc["groups"]) != Decimal(t[f] or 0):
        bad.append("the groups' %s do not sum to the fleet's" % f)
if t["switches"] != sum(d["switches"] for d in doc["disks"]):
    bad.append("totals.switches is not its rows' sum")
print("ok %s %s %s %s %d" % (t["realised"], t["possible"], t["cost"], t["baseline"], t["switches"])
      if not bad else "; ".join(bad))
PY
)
  case $v in
    ok*) read -r _ realised possible cost baseline switches <<<"$v"
         printf '%s: fleet cost %s, baseline %s, realised %s, possible %s USD, %s switches\n' "$j" \
           "$cost" "$baseline" "$realised" "$possible" "$switches" >>"$out/figures.txt" ;;
    *) echo "report-scale.sh: $j: $v" >&2; status=1 ;;
  esac
done
if [ -s "$out/report.csv" ]; then
  recs=$(python3 -c '
import csv, sys
with open(sys.argv[1], newline="") as f:
    print(sum(1 for _ in csv.reader(f)))' "$out/report.csv")
  [ "$recs" = $((5 * vms + 1)) ] ||
    { echo "report-scale.sh: report.csv: $recs records, not a header and $((5 * vms)) disks" >&2; status=1; }
fi
if [ -s "$out/report.html" ]; then
  grep -qi '<html' "$out/report.html" && grep -qi '</html>' "$out/report.html" &&
    ! grep -qi '<script' "$out/report.html" ||
    { echo "report-scale.sh: report.html is not one page without a script" >&2; status=1; }
fi

# ---- the table -----------------------------------------------------------------
printf '\nthe monthly report, %s runs each; targets: under 3 s, under 500 MiB, the HTML under 10 MB (2 cores)\n' "$runs"
printf '%-12s %8s %15s %7s %9s %8s %9s %8s %10s\n' run median_s "min-max s" "s/3s" peak_MiB \
  "MiB/500" size_MB "MB/10" "x savings"
for name in json csv html json-policy savings; do
  [ -s "$out/$name.fig" ] || { printf '%-12s %8s\n' "$name" failed; continue; }
  case $name in
    json-policy) file=$out/report-policy.json ;;
    savings) file=$out/savings.stdout ;;
    *) file=$out/report.$name ;;
  esac
  size=$(stat -c %s "$file" 2>/dev/null || echo 0)
  read -r med lo hi peak <"$out/$name.fig"
  awk -v n="$name" -v m="$med" -v lo="$lo" -v hi="$hi" -v k="$peak" -v sz="$size" -v r="$ref" 'BEGIN {
    printf "%-12s %8.2f %7.2f-%-7.2f %7.2f %9.1f %8.2f %9.2f %8s %10s\n", n, m, lo, hi, m / 3,
      k / 1024, k / 1024 / 500, sz / 1e6, (n == "html" ? sprintf("%.2f", sz / 1e7) : "-"),
      (r > 0 ? sprintf("%.1f", m / r) : "-") }'
  if [ "$name" != savings ]; then
    awk -v hi="$hi" 'BEGIN {exit !(hi < 3)}' ||
      { echo "report-scale.sh: $name: the slowest run took $hi s, not under 3 s" >&2; status=1; }
    [ "$peak" -le $((500 * 1024)) ] ||
      { echo "report-scale.sh: $name: peak $((peak / 1024)) MiB, over 500 MiB" >&2; status=1; }
  fi
  if [ "$name" = html ] && [ "$size" -ge 10000000 ]; then
    echo "report-scale.sh: report.html is $size bytes, not under 10 MB" >&2
    status=1
  fi
done
[ -s "$out/figures.txt" ] && { echo; cat "$out/figures.txt"; }
exit $status

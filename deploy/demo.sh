#!/usr/bin/env bash
# The main job on this machine, against a simulated Azure on 127.0.0.1:
#
#  1. set up and build;
#  2. start tierwise-azsim with deploy/demo-scenario.json (a Standard_D8s_v3
#     VM in westeurope with a P10, a P40 and an E10 data disk) and the
#     backend, tierwise serve, with a fresh database; create an agent, a
#     reader and an admin token;
#  3. read the VM's inventory from the simulated Instance Metadata Service,
#     with this machine's own disk standing in for data disk LUN 0;
#  4. run the agent once: the rated-iops and rated-throughput profiles on a
#     scratch file on that disk, reported to the backend; then fio the same
#     way for comparison;
#  5. read the verdicts back from the backend (tierwise compliance --server);
#  6. refresh westeurope's disk prices from the (simulated) Retail Prices
#     API through the backend, and show what the disks cost;
#  7. model what moving the P10 to Standard SSD every weekend saves, and the
#     fleet's opportunities this month under deploy/demo-policies/;
#  8. read the fleet from ARM (tierwise sync), plan the policy's tier
#     switches for two weeks (and as a calendar), run a weekend by hand
#     (vm stop, vm start) against the simulator, and show the audit log;
#  9. judge a constructed field example (an LVM stripe over three P40s);
# 10. replay last month's weekends of tier switches on five more VMs
#     (deploy/demo-month.sh: a failure, a drift, agent reports), write that
#     month's report (build/demo-results/report-YYYY-MM.html, .json, .csv),
#     explain each money figure in a line, and give the dashboard's URL and
#     the reader token.
#
# At the end, when standard input is a terminal, the dashboard stays up
# until you press Enter; otherwise (CI, a pipe) the backend stops with the
# script, which says so before it prints the URL and prints the command
# that starts the dashboard again on the same database.
#
#   ./deploy/demo.sh
#   TW_DEMO_DIR=/mnt/data TW_DEMO_SECONDS=30 ./deploy/demo.sh
#   TW_DEMO_STAY=1 ./deploy/demo.sh     keep the backend up afterwards (Ctrl-C stops it)
#   ./deploy/demo.sh --help             this text
#
# Settings: TW_DEMO_DIR (folder on the disk to measure, default /var/tmp),
# TW_DEMO_SIZE (scratch file, default 512M), TW_DEMO_SECONDS (measured
# seconds per profile, default 10: shorter runs are judged inconclusive),
# TW_DEMO_KEEP=1 keeps the scratch file, TW_DEMO_PORT (the backend's port,
# default: any free one), TW_DEMO_STAY=1 (keep the backend up until Ctrl-C,
# terminal or not), TW_BUILD_DIR (the build folder, default build/release).
# The records, the database and the tokens are kept under
# build/demo-results/.  Every Azure endpoint points at the simulator and the
# HTTP client refuses any address outside 127.0.0.0/8.  Exit status 0 when
# every step ran, else the failing step's.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "demo.sh: unknown argument $1 (--help says what it does; settings are TW_DEMO_* variables)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
root=$PWD

./deploy/setup.sh
build=${TW_BUILD_DIR:-build/release}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTW_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
agent="$build/src/tierwise-agent"
tierwise="$build/src/tierwise"
azsim="$build/src/tierwise-azsim"

dir=${TW_DEMO_DIR:-/var/tmp}
size=${TW_DEMO_SIZE:-512M}
secs=${TW_DEMO_SECONDS:-10}
target="$dir/tierwise-demo.bench"
out=build/demo-results
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/tierwise-demo-XXXXXX")
sim_pid="" srv_pid=""
cleanup() {
  [ -n "$srv_pid" ] && kill -TERM "$srv_pid" 2>/dev/null && wait "$srv_pid" 2>/dev/null
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  [ "${TW_DEMO_KEEP:-0}" = 1 ] || rm -f "$target"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
step() { printf '\n== %s\n' "$*"; }

step "starting the Azure simulator (tierwise-azsim) on 127.0.0.1"
"$azsim" --scenario deploy/demo-scenario.json --port-file "$work/port" >/dev/null 2>"$work/azsim.err" &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/azsim.err" >&2; exit 1; }
port=$(cat "$work/port")
export TIERWISE_IMDS_URL="http://127.0.0.1:$port" TIERWISE_ARM_URL="http://127.0.0.1:$port"
export TIERWISE_LOGIN_URL="http://127.0.0.1:$port" TIERWISE_PRICES_URL="http://127.0.0.1:$port"
export TIERWISE_LOOPBACK_ONLY=1
echo "   IMDS, ARM, login and Retail Prices at http://127.0.0.1:$port"

step "starting the backend (tierwise serve) on 127.0.0.1 with a fresh database"
db="$out/tierwise.db"
rm -f "$db" "$db-wal" "$db-shm"
(umask 077
 "$tierwise" token create --db "$db" --role agent --name demo-agent >"$out/agent.tok"
 "$tierwise" token create --db "$db" --role reader --name demo-reader >"$out/reader.tok"
 "$tierwise" token create --db "$db" --role admin --name demo-admin >"$out/admin.tok")
"$tierwise" serve --db "$db" --listen "127.0.0.1:${TW_DEMO_PORT:-0}" --port-file "$work/srv.port" \
  --web web --prices-url "$TIERWISE_PRICES_URL" --policies deploy/demo-policies \
  2>"$out/serve.log" &
srv_pid=$!
for _ in $(seq 100); do [ -s "$work/srv.port" ] && break; sleep 0.1; done
[ -s "$work/srv.port" ] || { cat "$out/serve.log" >&2; exit 1; }
api="http://127.0.0.1:$(cat "$work/srv.port")"
echo "   API at $api/api/v1, dashboard at $api/ (log: $out/serve.log)"
echo "   tokens (agent, reader, admin) in $out/*.tok, readable by you only"

# The disk under TW_DEMO_DIR plays data disk LUN 0: a /dev/disk/azure link
# to it in a scratch /dev tree, as udev makes on an Azure VM.
mm=$(stat -c '%Hd:%Ld' "$dir")
sys=$(readlink -f "/sys/dev/block/$mm" 2>/dev/null || true)
[ -n "$sys" ] && [ -e "$sys/partition" ] && sys=$(dirname "$sys")
disk=$(basename "${sys:-none}")
if [ -n "$sys" ] && [ -d "$sys" ]; then
  mkdir -p "$work/dev/disk/azure/scsi1"
  ln -s "../../../$disk" "$work/dev/disk/azure/scsi1/lun0"
  export TW_DEV_ROOT="$work/dev"
fi

step "inventory: the VM and its disks, from the (simulated) Instance Metadata Service"
echo "   ($dir is on /dev/$disk, which stands in for data disk LUN 0)"
"$agent" inventory
"$agent" inventory --json >"$out/inventory.json"

step "the agent, once: rated-iops and rated-throughput on $target ($size),"
echo "   ${secs}s each after a 1s ramp, reported to the backend"
"$agent" run --once --server "$api" --token-file "$out/agent.tok" --spool "$work/spool.db" \
  --file-target "0=$target" --file-size "$size" --profiles rated-iops,rated-throughput \
  --runtime "$secs" --ramp 1
reader=$(cat "$out/reader.tok")
curl -s --noproxy '*' -H "Authorization: Bearer $reader" "$api/api/v1/disks" >"$out/disks.json"
lun0=$(jq -r '[.disks[] | select(.lun == 0)][0].id' "$out/disks.json")
curl -s --noproxy '*' -H "Authorization: Bearer $reader" "$api/api/v1/disks/$lun0" >"$out/disk-lun0.json"
for profile in rated-iops rated-throughput; do
  step "$profile as the backend stored it (GET /api/v1/disks/$lun0)"
  jq --arg p "$profile" '[.results[] | select(.profile == $p)][0]' "$out/disk-lun0.json" \
    >"$out/$profile.json"
  "$tierwise" result "$out/$profile.json"
done

if command -v fio >/dev/null; then
  step "fio with the rated-iops method on the same file, imported into the same record"
  fio --name=rated-iops --filename="$target" --size="$size" --direct=1 --rw=randread \
      --bs=8k --ioengine=libaio --iodepth=256 --numjobs=4 --group_reporting \
      --norandommap --randrepeat=0 --lat_percentiles=1 --runtime="$secs" --ramp_time=1 \
      --time_based --output-format=json --output="$out/fio-rated-iops.json" >/dev/null
  "$agent" import-fio "$out/fio-rated-iops.json" --json >"$out/fio-rated-iops.record.json"
  "$tierwise" result "$out/fio-rated-iops.record.json"
fi

step "compliance, read back from the backend: does data disk LUN 0 (Premium_LRS 128 GiB"
echo "   = P10: 500 IOPS, 100 MB/s) deliver?  (this machine's disk is not a P10, so expect"
echo "   the verdict to say the figures came from somewhere else than the disk named)"
"$tierwise" compliance --server "$api" --token-file "$out/reader.tok"

step "prices: westeurope's disk prices from the (simulated) Retail Prices API, through the backend"
# The refresh answers 202 with an operation; ?wait= waits for it to finish.
op=$(curl -s --noproxy '*' -X POST -H "Authorization: Bearer $(cat "$out/admin.tok")" \
  -H 'Content-Type: application/json' -d '{"region":"westeurope","currency":"USD"}' \
  "$api/api/v1/prices/refresh" | jq -r .id)
curl -s --noproxy '*' -H "Authorization: Bearer $(cat "$out/admin.tok")" \
  "$api/api/v1/operations/$op?wait=30" |
  jq -c '{state} + (.result // {} | {items, prices, pages, source, fetched_at}) + {error}'
"$tierwise" prices show --db "$db" --region westeurope --currency USD --sku P10
"$tierwise" prices show --db "$db" --region westeurope --currency USD --sku E10
"$tierwise" prices show --db "$db" --region westeurope --currency USD --sku P40

step "savings: the P10 on Standard SSD E10 every weekend (Fri 20:00 to Mon 06:00,"
echo "   Amsterdam time) while the VM is deallocated, over next year, at these prices"
year=$(( $(date -u +%Y) + 1 ))
"$tierwise" savings --db "$db" --region westeurope --currency USD --from-tier P10 --to-tier E10 \
  --window "Fri 20:00-Mon 06:00" --tz Europe/Amsterdam --period "$year-01-01..$((year + 1))-01-01"

month=$(date -u +%Y-%m)
step "savings opportunities of the fleet this month ($month) under the policy"
echo "   deploy/demo-policies/weekend-downgrade.json (GET /api/v1/savings/opportunities)"
"$tierwise" savings --db "$db" --policy deploy/demo-policies/weekend-downgrade.json --month "$month"

pol=deploy/demo-policies/weekend-downgrade.json
step "the fleet from ARM (tierwise sync): every VM and disk of the subscription IMDS names,"
echo "   agent or not, with its SKU, disk state and power state, into the database"
"$tierwise" sync --db "$db"

from=$(date -u +%F) to=$(date -u -d '+14 days' +%F)
step "the tier switches the policy plans from $from to $to (tierwise plan, GET /api/v1/plan):"
echo "   down 10 minutes into each window, back up 30 minutes before it closes"
"$tierwise" plan --db "$db" --policy "$pol" --from "$from" --to "$to"
"$tierwise" plan --db "$db" --policy "$pol" --from "$from" --to "$to" --ics >"$out/plan.ics"
echo "   the same as a calendar to subscribe to: $out/plan.ics (GET /api/v1/plan.ics)"

step "a weekend by hand, the runbook way, against the simulator: tierwise vm stop deallocates"
echo "   the VM, waits for it, then moves its Premium data disks to Standard SSD and verifies"
"$tierwise" vm stop --db "$db" --vm tw-demo-vm --policy "$pol" --execute
step "tierwise vm start puts every disk back on its original SKU, verifies, then starts the VM"
"$tierwise" vm start --db "$db" --vm tw-demo-vm --execute
step "the audit log of those switches (tierwise actions, GET /api/v1/actions), and drift:"
echo "   a running VM on a disk below the SKU its policy requires (none now)"
"$tierwise" actions --db "$db" --vm tw-demo-vm
"$tierwise" drift --db "$db" --policy "$pol"

step "compliance on a constructed field example: an SAP database VM (Standard_E16ds_v5)"
echo "   with an LVM stripe over three P40s (3 x 7,500 IOPS, 3 x 250 MB/s), see"
echo "   tests/fixtures/compliance/README.md"
fx=tests/fixtures/compliance
"$tierwise" compliance --inventory "$fx/inventory.json" \
  --result "$fx/stripe-randread-under.json" --result "$fx/stripe-psync-qd1.json" \
  --result "$fx/stripe-seq-1m-vm-capped.json" --result "$fx/log-perf-tier-delivers.json" \
  --result "$fx/apps-burst.json"

prev=$(date -u -d "$(date -u +%Y-%m-01) -1 month" +%Y-%m)
step "a month of tier switches: $prev, replayed in the simulator's time (deploy/demo-month.sh)"
echo "   five more VMs in rg-web and rg-app (westeurope, eastus; P10, P20, P30 and an E10),"
echo "   four of them under $pol: every weekend of $prev deallocated and"
echo "   downgraded at Friday 20:00 (vm stop), restored and started at Monday 06:00 (vm start),"
echo "   each switch verified against their own simulator; one ARM failure; app-02 started by"
echo "   hand one Monday at 06:01 on Standard SSD, put right at 18:01 (a drift of 12 hours);"
echo "   db-01 under no policy; agent"
echo "   reports: web-02's and db-01's disks deliver, app-01's P30 does not"
./deploy/demo-month.sh --db "$db" --work "$out/month" --month "$prev" --cli "$tierwise" \
  --azsim "$azsim" --server "$api" --agent-token "$out/agent.tok"
"$tierwise" actions --db "$db" --vm app-02

step "the monthly cost-saving report of $prev (tierwise report monthly, GET /api/v1/reports/monthly)"
report="$out/report-$prev.html"
"$tierwise" report monthly --db "$db" --month "$prev" --format html --policy "$pol" --out "$report"
"$tierwise" report monthly --db "$db" --month "$prev" --format json --policy "$pol" \
  --out "$out/report-$prev.json"
"$tierwise" report monthly --db "$db" --month "$prev" --format csv --policy "$pol" \
  --out "$out/report-$prev.csv"
jq -r '.currency as $c | .totals as $t |
  "   saved this month  \($t.realised) \($c): the disks'"'"' cost had nothing been switched (the baseline) less what they cost",
  "   baseline          \($t.baseline) \($c): every disk on its original SKU all month, at the prices of each hour",
  "   cost              \($t.cost) \($c): what the \($t.disks) disks cost, hour by hour on the SKU they were on",
  "   still possible    \($t.possible) \($c): what the policies would save on top of that, had every window been taken",
  "   transactions      \($t.transactions) \($c): the per-operation charges counted (Standard SSD and HDD bill them; a deallocated VM makes none)",
  "   switches \($t.switches), \($t.downgraded_hours) h downgraded, \($t.drift_hours) h of drift, \($t.under) of the measured disks under-delivering, \($t.unpriced) without a price"' \
  "$out/report-$prev.json"
echo "   the page: $report (also .json and .csv beside it)"
# this month so far, as the dashboard's first page has it: every disk priced
# (the refreshed westeurope book holds every tier the fleet uses)
now_month=$(date -u +%Y-%m)
"$tierwise" report monthly --db "$db" --month "$now_month" --format json --policy "$pol" \
  --out "$out/report-$now_month.json"
jq -r '"   this month so far (\(.month // "'"$now_month"'"), the dashboard'"'"'s first page): \(.totals.disks) disks, \(.totals.unpriced) without a price, prices from " + ([.books[] | "\(.region) \(.source)"] | unique | join("; "))' \
  "$out/report-$now_month.json"
# Does the dashboard stay up?  Said before its URL.
stay=0
if [ "${TW_DEMO_STAY:-0}" = 1 ]; then stay=1
elif [ -t 0 ]; then stay=2
else
  echo "   (standard input is not a terminal, so the dashboard stops when this script ends,"
  echo "   seconds from now; the command that starts it again is printed at the end)"
fi
echo "   the dashboard: $api/#/fleet/$prev, the fleet in $prev (sign in with the reader token"
echo "   $(cat "$out/reader.tok"), also in $out/reader.tok; $api/ shows this month)"

step "done"
echo "The records, the database and the tokens are in $out/."
echo "'$agent --help' and '$tierwise --help' list the commands."
abs() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$root" "$1" ;; esac; }
if [ "$stay" = 1 ]; then
  echo
  echo "The backend stays up: the dashboard at $api/#/fleet/$prev (paste the reader token"
  echo "$(cat "$out/reader.tok") from $out/reader.tok at sign-in), the API at $api/api/v1."
  echo "Ctrl-C here (or kill $srv_pid) stops it and the simulator."
  wait "$srv_pid"
elif [ "$stay" = 2 ]; then
  echo
  echo "The dashboard stays up at $api/#/fleet/$prev (reader token in $out/reader.tok)."
  printf 'press Enter to stop the dashboard '
  read -r _ || true
  echo "stopping the backend and the simulator"
else
  echo "The dashboard was at $api/ (reader token in $out/reader.tok); the backend stops now"
  echo "(standard input is not a terminal). To start it again on the same database:"
  echo "  $(abs "$tierwise") serve --db $(abs "$db") --listen 127.0.0.1:${TW_DEMO_PORT:-8080} \\"
  echo "    --web $root/web --policies $root/deploy/demo-policies"
  echo "then open http://127.0.0.1:${TW_DEMO_PORT:-8080}/#/fleet/$prev with the token in $(abs "$out/reader.tok")"
  echo "(Ctrl-C stops it); or run ./deploy/demo.sh from a terminal, or with TW_DEMO_STAY=1."
fi

#!/usr/bin/env bash
# -q/--quiet and -v/--verbose of tierwise-agent inventory and import-fio:
# -q leaves stderr to errors, -v says what was read and decided, and
# stdout is the same whatever the verbosity.
set -u
agent=${TW_AGENT:?run through ctest, or set TW_AGENT and TW_FIXTURES}
fx=${TW_FIXTURES:?}
azsim=${TW_AZSIM:-}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-qv-XXXXXX")
sim_pid=
cleanup() {
  [ -n "$sim_pid" ] && kill -TERM "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_CONFIG TIERWISE_IMDS_URL

# ---- inventory ----
inv=$fx/compliance/inventory.json
for args in "--json" ""; do
  "$agent" inventory $args --inventory-file "$inv" >"$scratch/n.out" 2>"$scratch/n.err"; sn=$?
  "$agent" inventory $args -q --inventory-file "$inv" >"$scratch/q.out" 2>"$scratch/q.err"; sq=$?
  "$agent" inventory $args --verbose --inventory-file "$inv" >"$scratch/v.out" 2>"$scratch/v.err"; sv=$?
  [ "$sn$sq$sv" = 000 ] && ok || bad "inventory $args: exits $sn $sq $sv: $(cat "$scratch/q.err" "$scratch/v.err")"
  cmp -s "$scratch/n.out" "$scratch/q.out" && cmp -s "$scratch/n.out" "$scratch/v.out" && ok \
    || bad "inventory $args: stdout differs with -q or -v"
  [ ! -s "$scratch/q.err" ] && ok || bad "inventory $args -q said: $(cat "$scratch/q.err")"
  grep -q "inventory from the file $inv (" "$scratch/v.err" &&
    grep -q "VM sap-db-01 (Standard_E16ds_v5, westeurope), [0-9]* disk(s)" "$scratch/v.err" &&
    grep -q "disk sap-db-01-data0 (data, LUN 0): " "$scratch/v.err" && ok \
    || bad "inventory $args -v: $(cat "$scratch/v.err")"
done
# A disk without a device says so with -v (the inventory names none, and
# this sysfs and /dev tree have none).
mkdir -p "$scratch/sys/class/block" "$scratch/dev"
printf '{"vm": {"name": "v", "vm_size": "Standard_D2s_v3", "location": "westeurope"},
 "disks": [{"name": "v-data0", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 128}]}\n' \
  >"$scratch/inv.json"
"$agent" inventory -v --inventory-file "$scratch/inv.json" --sysfs-root "$scratch/sys" \
  --dev-root "$scratch/dev" >/dev/null 2>"$scratch/v.err" &&
  grep -q "disk v-data0 (data, LUN 0): no device found on this machine" "$scratch/v.err" && ok \
  || bad "inventory -v without a device: $(cat "$scratch/v.err")"
# Errors are said with -q too.
expect 2 "can't open" -- "$agent" inventory -q --inventory-file "$scratch/none.json"
# The help offers both, and no config key that nothing reads.
h=$("$agent" inventory --help)
grep -q -- "-q, --quiet" <<<"$h" && grep -q -- "-v, --verbose" <<<"$h" && ok || bad "inventory --help lacks -q/-v"
grep -q "login_url" <<<"$h" && bad "inventory --help names login_url" || ok

# IMDS (the simulator): -v names the URL and the setting it came from.
if [ -n "$azsim" ] && [ -x "$azsim" ]; then
  "$azsim" -q --scenario "$fx/sim/scenario-basic.json" --port-file "$scratch/sim.port" \
    >/dev/null 2>"$scratch/sim.err" &
  sim_pid=$!
  for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
  port=$(cat "$scratch/sim.port" 2>/dev/null)
  if [ -n "$port" ]; then
    "$agent" inventory -v --imds-url "http://127.0.0.1:$port" >/dev/null 2>"$scratch/v.err" &&
      grep -q "asking IMDS at http://127.0.0.1:$port (the URL from --imds-url)" "$scratch/v.err" && ok \
      || bad "inventory -v from IMDS: $(cat "$scratch/v.err")"
    TIERWISE_IMDS_URL="http://127.0.0.1:$port" "$agent" inventory -q >/dev/null 2>"$scratch/q.err" &&
      [ ! -s "$scratch/q.err" ] && ok || bad "inventory -q from IMDS: $(cat "$scratch/q.err")"
  else
    bad "the simulator did not start: $(cat "$scratch/sim.err")"
  fi
fi

# ---- import-fio ----
text=$fx/fio/fioread-4jobs.txt
# Direct I/O not known: a note normally, none with -q; stdout the same.
"$agent" import-fio "$text" >"$scratch/n.out" 2>"$scratch/n.err"; sn=$?
"$agent" import-fio -q "$text" >"$scratch/q.out" 2>"$scratch/q.err"; sq=$?
"$agent" import-fio -v "$text" >"$scratch/v.out" 2>"$scratch/v.err"; sv=$?
[ "$sn$sq$sv" = 000 ] && ok || bad "import-fio: exits $sn $sq $sv"
# The record's id is new on every run: compare the rest.
for f in n q v; do
  sed 's/[0-9a-f]\{8\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{4\}-[0-9a-f]\{12\}/ID/g' \
    "$scratch/$f.out" >"$scratch/$f.cmp"
done
grep -q "result ID" "$scratch/n.cmp" && ok || bad "import-fio text without its id: $(cat "$scratch/n.cmp")"
cmp -s "$scratch/n.cmp" "$scratch/q.cmp" && cmp -s "$scratch/n.cmp" "$scratch/v.cmp" && ok \
  || bad "import-fio: stdout differs with -q or -v"
grep -q "does not show whether its I/O was direct" "$scratch/n.err" &&
  grep -q -- "--job-file" "$scratch/n.err" && ok || bad "import-fio: no note on direct: $(cat "$scratch/n.err")"
[ ! -s "$scratch/q.err" ] && ok || bad "import-fio -q said: $(cat "$scratch/q.err")"
grep -q "read $text ([0-9]* bytes): fio text, fio-3" "$scratch/v.err" &&
  grep -q "method: libaio, randread, 4096-byte blocks, QD 256 x 4 job(s)" "$scratch/v.err" &&
  grep -q "direct I/O: not known (how decided: unknown)" "$scratch/v.err" && ok \
  || bad "import-fio -v: $(cat "$scratch/v.err")"
# With the job file: direct, decided by it; no note.
"$agent" import-fio --verbose --json --job-file "$fx/fio/fioread.ini" "$text" >"$scratch/j.json" \
  2>"$scratch/v.err" &&
  grep -q "hints: job file $fx/fio/fioread.ini" "$scratch/v.err" &&
  grep -q "direct I/O: yes (how decided: job file)" "$scratch/v.err" &&
  ! grep -q "does not show whether" "$scratch/v.err" &&
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$scratch/j.json" && ok \
  || bad "import-fio -v --job-file: $(cat "$scratch/v.err")"
# JSON of fio: direct from its job options, no note even without -q.
"$agent" import-fio "$fx/fio/libaio-randread-8k-qd32.json" >/dev/null 2>"$scratch/n.err" &&
  [ ! -s "$scratch/n.err" ] && ok || bad "import-fio of JSON said: $(cat "$scratch/n.err")"
expect 2 "can't open" -- "$agent" import-fio -q "$scratch/none.txt"
h=$("$agent" import-fio --help)
grep -q -- "-q, --quiet" <<<"$h" && grep -q -- "-v, --verbose" <<<"$h" && ok || bad "import-fio --help lacks -q/-v"

finish agent-quiet-verbose

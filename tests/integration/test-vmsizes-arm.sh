#!/usr/bin/env bash
# tierwise serve --vm-sizes-from-arm against the Azure simulator, all on
# 127.0.0.1: the fleet's region read from the simulated ARM's Resource SKUs
# (token from the simulated IMDS) at start, cached in the database, and
# used by the verdicts before the bundled caps table; a size neither knows
# is "cap": null with why; without the option, the why says ARM is not
# read; with ARM gone, a restart keeps serving the cached sizes and says
# the refresh failed.  Needs jq and curl: exits 77 (skipped) without.
set -u
azsim=${TW_AZSIM:?run through ctest}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-vmsizes-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need jq curl sqlite3
sim_pid=""
trap 'cleanup_servers; [ -n "$sim_pid" ] && kill -KILL "$sim_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1
sub=5a1e0000-7e57-4d3e-a000-000000000001

# The demo scenario with one more size, Standard_Sim9_v1, that the bundled
# table does not know (a copy of D8s_v3's entry at 5,000 IOPS, 100 MB/s).
jq '.resource_skus += [.resource_skus[0] | .name = "Standard_Sim9_v1" | .size = "Sim9_v1" |
      .capabilities |= map(if .name == "UncachedDiskIOPS" then .value = "5000"
                           elif .name == "UncachedDiskBytesPerSecond" then .value = "100000000"
                           else . end)]' \
  "$srcdir/deploy/demo-scenario.json" >"$scratch/scenario.json"
start_sim() { start_azsim "$scratch/scenario.json"; }
start_sim

# Two VMs in westeurope of the simulator's subscription: one of the size
# only ARM knows, one of a size nobody knows.
agent=$(make_token agent)
reader=$(make_token reader)
n=0
vm_report() { # NAME SIZE
  n=$((n + 1))
  jq -c --arg id "$(uuid $((n * 10)))" --arg r1 "$(uuid $((n * 10 + 1)))" \
    --arg r2 "$(uuid $((n * 10 + 2)))" --arg name "$1" --arg size "$2" --arg sub "$sub" \
    '.id = $id | .results[0].id = $r1 | .results[1].id = $r2 |
     .inventory.vm.name = $name | .inventory.vm.vm_size = $size |
     .inventory.vm.location = "westeurope" | .inventory.vm.subscription_id = $sub |
     .inventory.disks |= map(.name = $name + "-" + .name |
                             .managed_disk_id = .managed_disk_id + "-" + $name)' \
    "$template" >"$scratch/$1.json"
}
vm_report sim-arm Standard_Sim9_v1
vm_report sim-unknown Standard_Nope_v1

# 1. Without --vm-sizes-from-arm: no cap for either, and the why says ARM
# is not read.
start_server plain
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/plain.err")"; exit 1; }
for v in sim-arm sim-unknown; do
  [ "$(post_report "$scratch/$v.json" "$agent")" = 201 ] && ok || bad "post $v: $(cat "$scratch/body")"
done
[ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "compliance: $(cat "$scratch/body")"
jq -e '[.verdicts[] | select(.vm_name == "sim-arm") | .vm] | length > 0 and
       all(.size == "Standard_Sim9_v1" and .cap == null and
           (.why | test("not in the bundled caps table.*ARM.s Resource SKUs are not read")))' \
  "$scratch/body" >/dev/null && ok || bad "no ARM: $(jq -c '[.verdicts[].vm]' "$scratch/body")"
stop_server TERM

# --arm-url alone is a usage error.
"$cli" serve --db "$db" --listen 127.0.0.1:0 --arm-url "$sim" >/dev/null 2>"$scratch/err"
[ $? = 2 ] && grep -q -- "--vm-sizes-from-arm" "$scratch/err" && ok || bad "--arm-url alone: $(cat "$scratch/err")"

# 2. With ARM: the region is read at start and cached.
start_server arm --vm-sizes-from-arm --arm-url "$sim" --imds-url "$sim"
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/arm.err")"; exit 1; }
for _ in $(seq 100); do grep -q "VM sizes from ARM" "$scratch/arm.err" && break; sleep 0.1; done
grep -q "VM sizes from ARM: 1 region(s), 2 size(s) stored" "$scratch/arm.err" && ok ||
  bad "refresh line: $(cat "$scratch/arm.err")"
[ "$(sqlite3 "$db" "SELECT count(*) FROM vm_sizes WHERE region = 'westeurope'")" = 2 ] && ok ||
  bad "vm_sizes rows: $(sqlite3 "$db" 'SELECT region, name FROM vm_sizes' 2>&1)"
[ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "compliance: $(cat "$scratch/body")"
jq -e '[.verdicts[] | select(.vm_name == "sim-arm") | .vm] | length > 0 and
       all(.cap.iops == 5000 and .cap.mbps == 100 and (.cap.source | startswith("arm westeurope ")) and
           .why == null)' "$scratch/body" >/dev/null && ok ||
  bad "ARM's cap: $(jq -c '[.verdicts[].vm]' "$scratch/body")"
jq -e '[.verdicts[] | select(.vm_name == "sim-unknown") | .vm] | length > 0 and
       all(.cap == null and (.why | test("ARM.s Resource SKUs of westeurope \\(fetched .*\\) do not list it either")))' \
  "$scratch/body" >/dev/null && ok || bad "unknown size: $(jq -c '[.verdicts[].vm]' "$scratch/body")"
# The CLI's text says it too.
printf '%s\n' "$reader" >"$scratch/reader.tok"
chmod 600 "$scratch/reader.tok"
"$cli" compliance --server "$base" --token-file "$scratch/reader.tok" >"$scratch/text" 2>&1
grep -q '^VM sim-unknown (Standard_Nope_v1; uncached cap unknown: ' "$scratch/text" && ok ||
  bad "text: $(cat "$scratch/text")"
stop_server TERM

# The same from a --config file ("vm-sizes-from-arm" and the endpoints).
printf '{"vm-sizes-from-arm": true, "arm_url": "%s", "imds_url": "%s"}\n' "$sim" "$sim" \
  >"$scratch/serve.json"
start_server conf --config "$scratch/serve.json"
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/conf.err")"; exit 1; }
for _ in $(seq 100); do grep -q "VM sizes from ARM" "$scratch/conf.err" && break; sleep 0.1; done
grep -q "VM sizes from ARM: 1 region(s), 2 size(s) stored" "$scratch/conf.err" && ok ||
  bad "refresh from --config: $(cat "$scratch/conf.err")"
stop_server TERM
printf '{"vm-sizes-from-arm": "yes"}\n' >"$scratch/bad.json"
"$cli" serve --db "$db" --config "$scratch/bad.json" >/dev/null 2>"$scratch/err"
[ $? = 2 ] && grep -q '"vm-sizes-from-arm" must be true or false' "$scratch/err" && ok ||
  bad "bad config value: $(cat "$scratch/err")"

# 3. ARM gone: the cached sizes still serve, and the refresh's failure is
# said (and kept in the why of a size not cached).
kill -TERM "$sim_pid"; wait "$sim_pid" 2>/dev/null; sim_pid=""
start_server gone --vm-sizes-from-arm --arm-url "$sim" --imds-url "$sim"
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/gone.err")"; exit 1; }
for _ in $(seq 150); do grep -q "VM sizes from ARM" "$scratch/gone.err" && break; sleep 0.1; done
grep -q "0 of 1 region(s) refreshed, 1 failed (their cached sizes are kept)" "$scratch/gone.err" && ok ||
  bad "failed refresh line: $(cat "$scratch/gone.err")"
[ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "compliance: $(cat "$scratch/body")"
jq -e '[.verdicts[] | select(.vm_name == "sim-arm") | .vm.cap.iops] | length > 0 and all(. == 5000)' \
  "$scratch/body" >/dev/null && ok || bad "cached cap: $(jq -c '[.verdicts[].vm]' "$scratch/body")"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"
finish vmsizes-arm

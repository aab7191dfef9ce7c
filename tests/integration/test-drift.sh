#!/usr/bin/env bash
# Drift end to end over a real store (a copy of the schema-4 fixture, which
# the first command migrates): sap-db-01's data1 went Premium_LRS ->
# StandardSSD_LRS while the VM was deallocated, and tierwise recorded its
# original SKU as the first downgrade does.  Deallocated: no drift.  The
# agent reports the VM running (someone started it in the portal): the
# server's drift job (serve --policies DIR --drift-interval 1s) logs "drift
# started: ..." once, /metrics' tierwise_drift_disks is 1, GET
# /api/v1/drift and `tierwise drift --json` (by the policies the server
# stored, and by a file) give the same object with since = the report's
# time; --fail-on-drift exits 1; a policy without
# require_original_before_start gives none.  The disk restored: the job logs
# "drift ended: ..." once, the gauge is 0, the route and the command give
# none.  From ARM's observations alone (tierwise sync against the
# simulator): a VM started in the portal while its disk was downgraded
# drifts, since the sync that saw it running.  Bad input: a missing
# database and a policy that does not parse exit 2.  Needs curl, jq and
# sqlite3.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-drift-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

check() {
  if jq -se "length == 1 and (.[0] | ($3))" >/dev/null 2>&1 <<<"$2"; then ok
  else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

# gauge_is N: /metrics says N disks drift.
gauge_is() {
  [ "$(metric tierwise_drift_disks)" = "$1" ]
}

# wait_for WHAT CMD...: CMD succeeds within 15 s.
wait_for() {
  local what=$1; shift
  for _ in $(seq 150); do
    "$@" && { ok; return; }
    sleep 0.1
  done
  bad "$what: not within 15 s"
}

cp "$fixtures/store/v4.db" "$db"
reader=$(cat "$fixtures/store/v4-reader.tok")
agent=$(cat "$fixtures/store/v4-agent.tok")
pol="$scratch/policies"
mkdir -p "$pol"
cat >"$pol/sap-premium.json" <<'EOF'
{"schema_version": "tierwise.policy/1", "name": "sap-premium",
 "match": {"skus": ["Premium_LRS"], "resource_groups": ["rg-sap"]},
 "target": "StandardSSD_LRS", "windows": ["Fri 20:00-Mon 06:00"]}
EOF
cat >"$scratch/lax.json" <<'EOF'
{"schema_version": "tierwise.policy/1", "name": "sap-lax",
 "match": {"skus": ["Premium_LRS"]}, "target": "StandardSSD_LRS",
 "windows": ["Fri 20:00-Mon 06:00"], "require_original_before_start": false}
EOF

# Nothing recorded yet (and the database migrated to this build's schema).
out=$("$cli" drift --db "$db" --policy "$pol/sap-premium.json" --json)
check "no original recorded" "$out" '. == {"drift": [], "count": 0}'
# No policy given, none stored: said, not passed off as a judgement.
"$cli" drift --db "$db" >"$scratch/np.out" 2>"$scratch/np.err"
st=$?
[ "$st" = 0 ] && grep -q 'the database holds no policies, so no disk is required' "$scratch/np.err" &&
  grep -q '^No disk drifts' "$scratch/np.out" && ok ||
  bad "no policies: exit $st, $(cat "$scratch/np.out" "$scratch/np.err")"
# The first downgrade's record: the disk's original SKU (tw_store_disk_original_set's row).
sqlite3 "$db" "INSERT INTO disk_originals(disk_id, sku, tier, set_at) VALUES (3, 'Premium_LRS', 'P40', '2026-11-30T20:10:00Z')" &&
  ok || bad "recording the original SKU"
out=$("$cli" drift --db "$db" --policy "$pol/sap-premium.json" --json --fail-on-drift)
[ $? = 0 ] && ok || bad "--fail-on-drift without drift exits non-zero"
check "deallocated: no drift" "$out" '.count == 0'

start_server main --policies "$pol" --drift-interval 1s
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
wait_for "the gauge after the first run" gauge_is 0

# The agent reports the VM running, its data1 still on Standard SSD.
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
jq -c --arg id "$(uuid 1)" --arg at "$started" '.id = $id | .created_at = $at | .power_state = "running"' \
  "$fixtures/store/late.json" >"$scratch/running.json"
st=$(post_report "$scratch/running.json" "$agent")
[ "$st" = 201 ] && ok || bad "POST the running VM's report: $st $(cat "$scratch/body")"
wait_for "the gauge at 1" gauge_is 1
if command -v promtool >/dev/null; then
  curl -s --noproxy '*' -m 5 "$base/metrics" >"$scratch/metrics.txt"
  promtool check metrics <"$scratch/metrics.txt" >"$scratch/promtool.out" 2>&1 && ok ||
    bad "promtool on /metrics: $(cat "$scratch/promtool.out")"
  grep -qx '# TYPE tierwise_drift_disks gauge' "$scratch/metrics.txt" && ok || bad "the gauge's type"
fi
line="tierwise serve: drift started: VM sap-db-01 disk sap-db-01-data1 runs on StandardSSD_LRS, its policy sap-premium requires Premium_LRS (since $started)"
wait_for "the start logged" grep -qxF "$line" "$scratch/main.err"
sleep 2 # two more runs: still one drift, logged once
n=$(grep -c 'drift started' "$scratch/main.err")
[ "$n" = 1 ] && ok || bad "drift started logged $n times"
[ "$(metric tierwise_drift_errors_total)" = 0 ] && ok || bad "drift errors counted"
want='{"vm": "sap-db-01", "disk": "sap-db-01-data1", "sku": "StandardSSD_LRS", "required_sku": "Premium_LRS", "since": $since, "policy": "sap-premium", "vm_id": 1, "disk_id": 3}'
st=$(req GET /api/v1/drift "$reader")
[ "$st" = 200 ] && ok || bad "GET /api/v1/drift: $st"
grep -qi '^Content-Type: application/json' "$scratch/headers" && ok || bad "content type"
body=$(cat "$scratch/body")
jq -e --arg since "$started" ". == {\"drift\": [$want], \"count\": 1}" <<<"$body" >/dev/null &&
  ok || bad "GET /api/v1/drift answered $body"
st=$(req GET /api/v1/drift "$agent")
[ "$st" = 403 ] && ok || bad "an agent's token reads drift: $st"
st=$(req GET /api/v1/drift -)
[ "$st" = 401 ] && ok || bad "no token reads drift: $st"
# The command: by the policies the server stored, and by the file.
out=$("$cli" drift --db "$db" --json)
jq -e --arg since "$started" ". == {\"drift\": [$want], \"count\": 1}" <<<"$out" >/dev/null &&
  ok || bad "tierwise drift --json (stored policies) printed $out"
out=$("$cli" drift --db "$db" --policy "$pol/sap-premium.json")
grep -q "^sap-db-01 .* sap-db-01-data1 .* StandardSSD_LRS .* Premium_LRS .* sap-premium .* $started\$" <<<"$out" &&
  ok || bad "the table: $out"
expect 1 "1 disk is below the SKU its policy requires" -- \
  sh -c '"$1" drift --db "$2" --fail-on-drift >/dev/null' sh "$cli" "$db"
out=$("$cli" drift --db "$db" --policy "$scratch/lax.json" --json)
check "a policy that does not require the original SKU" "$out" '.count == 0'

# Restored (a late upgrade that went through): the drift ends, logged once.
sleep 1
restored=$(date -u +%Y-%m-%dT%H:%M:%SZ)
jq -c --arg id "$(uuid 2)" --arg at "$restored" \
  '.id = $id | .created_at = $at | .power_state = "running" |
   (.inventory.disks[] | select(.name == "sap-db-01-data1")) |= (.sku = "Premium_LRS" | .tier = "P40")' \
  "$fixtures/store/late.json" >"$scratch/restored.json"
st=$(post_report "$scratch/restored.json" "$agent")
[ "$st" = 201 ] && ok || bad "POST the restored disk's report: $st $(cat "$scratch/body")"
wait_for "the gauge at 0" gauge_is 0
wait_for "the end logged" grep -q "^tierwise serve: drift ended: VM sap-db-01 disk sap-db-01-data1 is back on the required SKU Premium_LRS (drift since $started, ended " "$scratch/main.err"
sleep 2
n=$(grep -c 'drift ended' "$scratch/main.err")
[ "$n" = 1 ] && ok || bad "drift ended logged $n times"
st=$(req GET /api/v1/drift "$reader")
check "GET /api/v1/drift after the restore ($st)" "$(cat "$scratch/body")" '. == {"drift": [], "count": 0}'
out=$("$cli" drift --db "$db" --policy "$pol/sap-premium.json")
grep -q '^No disk drifts' <<<"$out" && ok || bad "the table after the restore: $out"
rows=$(sqlite3 "$db" "SELECT since, ended_at IS NOT NULL FROM drift")
[ "$rows" = "$started|1" ] && ok || bad "the store's drift rows: $rows"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "serve stopped with $stop_status"

# From ARM's observations alone (no agent): a sync finds advisor-vm-02,
# deallocated, on Premium; tierwise downgrades its data disk (ARM's PATCH,
# the original recorded); someone starts the VM in the portal (the
# simulator's power switch); the next sync sees it running on Standard SSD:
# drift, since that sync's observation.
sim_up=false
if [ -z "${TW_AZSIM:-}" ]; then
  echo "note: no simulator (TW_AZSIM): drift from ARM's observations is not tried"
elif [ ! -x "$TW_AZSIM" ]; then
  bad "the simulator $TW_AZSIM is not built: drift from ARM's observations is not tried"
else
  "$TW_AZSIM" --scenario "$fixtures/sim/scenario-basic.json" --port-file "$scratch/sim.port" \
    >/dev/null 2>"$scratch/azsim.err" &
  server_pids+=("$!")
  for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
  [ -s "$scratch/sim.port" ] && sim_up=true ||
    bad "the simulator did not start: $(cat "$scratch/azsim.err")"
fi
if $sim_up; then
  unset AZURE_TENANT_ID AZURE_CLIENT_ID AZURE_CLIENT_SECRET
  adb="$scratch/arm.db"
  sim="http://127.0.0.1:$(cat "$scratch/sim.port")"
  arm=(--arm-url "$sim" --imds-url "$sim")
  "$cli" sync --db "$adb" "${arm[@]}" >/dev/null 2>"$scratch/sync1.err" && ok ||
    bad "the first sync: $(cat "$scratch/sync1.err")"
  sub=00000000-1111-2222-3333-444444444444
  tok=$(curl -s -H 'Metadata: true' \
    "$sim/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/" |
    jq -r .access_token)
  disk="$sim/subscriptions/$sub/resourceGroups/rg-advisor-test/providers/Microsoft.Compute/disks/advisor-vm-02-data0?api-version=2024-03-02"
  code=$(curl -s -o "$scratch/patch.json" -w '%{http_code}' -X PATCH -H "Authorization: Bearer $tok" \
    -H 'Content-Type: application/json' -d '{"sku":{"name":"StandardSSD_LRS"}}' "$disk")
  case $code in 200|202) ok ;; *) bad "PATCH answered $code: $(cat "$scratch/patch.json")" ;; esac
  for _ in $(seq 50); do
    [ "$(curl -s -H "Authorization: Bearer $tok" "$disk" | jq -r '.sku.name + " " + .properties.provisioningState')" = \
      "StandardSSD_LRS Succeeded" ] && break
    sleep 0.1
  done
  sqlite3 "$adb" "INSERT INTO disk_originals(disk_id, sku, tier, set_at) SELECT id, 'Premium_LRS', '', '2026-12-01T00:00:00Z' FROM disks WHERE name = 'advisor-vm-02-data0'" &&
    ok || bad "recording the original SKU"
  cat >"$scratch/advisor.json" <<'EOF2'
{"schema_version": "tierwise.policy/1", "name": "advisor-nights",
 "match": {"skus": ["Premium_LRS"], "resource_groups": ["rg-advisor-test"]},
 "target": "StandardSSD_LRS", "windows": ["Mon 20:00-Tue 06:00"]}
EOF2
  out=$("$cli" drift --db "$adb" --policy "$scratch/advisor.json" --json)
  check "deallocated, as ARM saw it" "$out" '.count == 0'
  code=$(curl -s -o "$scratch/power.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -d '{"vm": "advisor-vm-02", "state": "running"}' "$sim/_sim/power")
  [ "$code" = 200 ] && ok || bad "the simulator's power switch answered $code: $(cat "$scratch/power.json")"
  # serve --sync: the drift job's first run (at the start, before the
  # sync) finds the VM deallocated; the sync that sees it running queues a
  # drift run at once, so the gauge is 1 long before --drift-interval 24h.
  mkdir -p "$scratch/advpol"
  cp "$scratch/advisor.json" "$scratch/advpol/"
  main_db=$db
  db=$adb
  start_server armsync --policies "$scratch/advpol" --drift-interval 24h --sync-interval 24h \
    --subscription "$sub" "${arm[@]}"
  db=$main_db
  if [ -n "$port" ]; then
    wait_for "drift judged right after serve's sync" gauge_is 1
    grep -q 'drift started: VM advisor-vm-02 disk advisor-vm-02-data0' "$scratch/armsync.err" &&
      ok || bad "no drift line after serve's sync: $(cat "$scratch/armsync.err")"
    [ "$(metric tierwise_drift_errors_total)" = 0 ] && ok || bad "drift errors metric"
    last=$(metric tierwise_drift_last_success_timestamp_seconds)
    [ -n "$last" ] && [ "$last" -gt 1700000000 ] && ok || bad "drift last success metric: '$last'"
    stop_server TERM
    [ "$stop_status" = 0 ] && ok || bad "serve --sync with drift stopped with $stop_status"
  else
    bad "serve --sync with --policies did not start: $(cat "$scratch/armsync.err")"
  fi
  "$cli" sync --db "$adb" "${arm[@]}" >/dev/null 2>"$scratch/sync2.err" && ok ||
    bad "the second sync: $(cat "$scratch/sync2.err")"
  seen=$(sqlite3 "$adb" "SELECT p.observed_at FROM power_states p JOIN vms v ON v.id = p.vm_id WHERE v.name = 'advisor-vm-02' AND p.state = 'running' AND p.source = 'arm' ORDER BY p.observed_ms LIMIT 1")
  since=$(sed -E 's/\.[0-9]+Z$/Z/' <<<"$seen")
  out=$("$cli" drift --db "$adb" --policy "$scratch/advisor.json" --json)
  check "started in the portal, seen by ARM (running since $seen)" "$out" \
    ".count == 1 and (.drift[0] | .vm == \"advisor-vm-02\" and .disk == \"advisor-vm-02-data0\" and
     .sku == \"StandardSSD_LRS\" and .required_sku == \"Premium_LRS\" and .policy == \"advisor-nights\" and
     .since == \"$since\")"
fi

# Bad input.
expect 2 "no such database" -- "$cli" drift --db "$scratch/nope.db"
echo '{"schema_version": "tierwise.policy/1"' >"$scratch/broken.json"
expect 2 "broken.json" -- "$cli" drift --db "$db" --policy "$scratch/broken.json"
expect 2 "unexpected argument" -- "$cli" drift --db "$db" extra
expect 2 "--drift-interval" -- "$cli" serve --db "$db" --drift-interval 0s

finish test-drift

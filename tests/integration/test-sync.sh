#!/usr/bin/env bash
# tierwise sync against the Azure simulator, all on 127.0.0.1: three VMs
# (one running with an agent, one deallocated, one that no agent reports)
# and an unattached disk; the subscription from the simulated IMDS; the
# counts and the store's rows (source arm); a SKU changed through ARM's
# PATCH is one sku change at the next sync; an agent's report afterwards
# joins the VM ARM stored (one VM, its disks not doubled); serve --sync
# does the same on its worker with the sync metrics; refusals (403 naming
# the role), an unreachable ARM and a bad subscription id exit as said.
# Needs jq, curl and sqlite3: exits 77 (skipped) without.
set -u
azsim=${TW_AZSIM:?run through ctest}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-sync-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need jq curl sqlite3
sim_pid=""
trap 'cleanup_servers; [ -n "$sim_pid" ] && kill -KILL "$sim_pid" 2>/dev/null; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1
unset AZURE_TENANT_ID AZURE_CLIENT_ID AZURE_CLIENT_SECRET
sub=00000000-1111-2222-3333-444444444444
db="$scratch/tw.db"

# The basic scenario (advisor-vm-01 running, its agent's VM; advisor-vm-02
# deallocated; spare-disk unattached) with a third VM no agent runs on.
jq '.vms += [{"subscription_id": "'$sub'", "resource_group": "rg-other",
              "name": "quiet-vm", "vm_size": "Standard_D2s_v3", "location": "eastus",
              "power_state": "running", "tags": {"env": "test"},
              "disks": [{"name": "quiet-vm-os", "role": "os", "sku": "Premium_LRS",
                         "size_gib": 64, "caching": "ReadWrite"}]}]' \
  "$fixtures/sim/scenario-basic.json" >"$scratch/scenario.json"
start_azsim "$scratch/scenario.json"
arm=(--arm-url "$sim" --imds-url "$sim")

# 1. The first sync: everything is new; the subscription is IMDS's.
"$cli" sync --db "$db" "${arm[@]}" --json >"$scratch/s1.json" 2>"$scratch/s1.err"
st=$?
[ "$st" = 0 ] && ok || bad "first sync exited $st: $(cat "$scratch/s1.err")"
jq -e '.vms == 3 and .vms_new == 3 and .disks == 6 and .disks_new == 6 and
       .unattached_disks == 1 and .power_changes == 3 and .sku_changes == 0 and
       .detached == 0' "$scratch/s1.json" >/dev/null && ok || bad "first sync counts: $(cat "$scratch/s1.json")"
jq -e '[.changes[] | select(.what == "vm_new") | .vm] | sort ==
       ["advisor-vm-01", "advisor-vm-02", "quiet-vm"]' "$scratch/s1.json" >/dev/null &&
  ok || bad "first sync's new VMs"
q() { sqlite3 "$db" "$1"; }
[ "$(q "SELECT count(*) FROM vms WHERE last_report_id = '' AND arm_seen_at IS NOT NULL")" = 3 ] &&
  ok || bad "three VMs without a report"
[ "$(q "SELECT power_state FROM vms WHERE name = 'advisor-vm-02'")" = deallocated ] &&
  ok || bad "advisor-vm-02's power state"
[ "$(q "SELECT count(*) FROM disk_sku_history WHERE source = 'arm' AND report_id IS NULL")" = 6 ] &&
  ok || bad "one SKU row per disk, source arm"
[ "$(q "SELECT count(*) FROM power_states WHERE source = 'arm'")" = 3 ] && ok || bad "power rows"
[ "$(q "SELECT role || ':' || coalesce(lun, '-') FROM disks WHERE name = 'advisor-vm-01-data1'")" = data:1 ] &&
  ok || bad "the data disk's LUN from the storage profile"
[ "$(q "SELECT count(*) FROM disks WHERE name LIKE 'advisor-vm-01_OsDisk%' AND role = 'os'")" = 1 ] &&
  ok || bad "the OS disk's role"
[ "$(q "SELECT disk_state FROM disks WHERE name = 'advisor-vm-02-data0'")" = Reserved ] &&
  ok || bad "disk state of a deallocated VM's disk"
[ "$(q "SELECT count(*) FROM disks WHERE name = 'spare-disk'")" = 0 ] && ok || bad "unattached disk stored"

# 2. Again, nothing changed: the same counts in words, no change.
"$cli" sync --db "$db" "${arm[@]}" --subscription "$sub" >"$scratch/s2.txt" 2>"$scratch/s2.err" &&
  ok || bad "second sync: $(cat "$scratch/s2.err")"
grep -q '^3 VMs (0 new), 6 disks (0 new); 0 SKU changes, 0 power changes, 0 detached; 1 unattached disk' \
  "$scratch/s2.txt" && ok || bad "second sync's words: $(cat "$scratch/s2.txt")"
[ "$(wc -l <"$scratch/s2.txt")" = 1 ] && ok || bad "second sync listed changes"
[ "$(q "SELECT count(*) FROM disk_sku_history")" = 6 ] && ok || bad "second sync wrote history"

# 3. A SKU changed through ARM (advisor-vm-02 is deallocated, so ARM takes
# it): one sku change at the next sync, source arm.
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
"$cli" sync --db "$db" "${arm[@]}" --json >"$scratch/s3.json" 2>"$scratch/s3.err" &&
  ok || bad "third sync: $(cat "$scratch/s3.err")"
jq -e '.sku_changes == 1 and .vms_new == 0 and ([.changes[] | select(.what == "sku")] ==
       [{"what": "sku", "vm": "advisor-vm-02", "disk": "advisor-vm-02-data0",
         "from": "Premium_LRS", "to": "StandardSSD_LRS"}])' "$scratch/s3.json" >/dev/null &&
  ok || bad "the SKU change: $(cat "$scratch/s3.json")"
[ "$(q "SELECT group_concat(h.sku || '/' || h.source, ',') FROM disk_sku_history h JOIN disks d
        ON d.id = h.disk_id WHERE d.name = 'advisor-vm-02-data0' ORDER BY h.id")" = \
  "Premium_LRS/arm,StandardSSD_LRS/arm" ] && ok || bad "the disk's SKU history"
[ "$(q "SELECT sku FROM disks WHERE name = 'advisor-vm-02-data0'")" = StandardSSD_LRS ] &&
  ok || bad "the disk's current SKU"

# One resource group only: its VM and disk, nothing of the others touched.
"$cli" sync --db "$db" "${arm[@]}" --resource-group rg-other --json >"$scratch/rg.json" 2>"$scratch/rg.err" &&
  ok || bad "sync of one group: $(cat "$scratch/rg.err")"
jq -e '.vms == 1 and .disks == 1 and .unattached_disks == 0 and .changes == []' "$scratch/rg.json" \
  >/dev/null && ok || bad "one group's counts: $(cat "$scratch/rg.json")"
expect 2 "is not a resource group name" -- "$cli" sync --db "$db" "${arm[@]}" --resource-group "rg other"

# 4. advisor-vm-01's agent reports afterwards (its ids in another case):
# it joins ARM's VM and disks.
vm01=$(q "SELECT id FROM vms WHERE name = 'advisor-vm-01'")
rid="/subscriptions/$sub/resourcegroups/RG-ADVISOR-TEST/providers/Microsoft.Compute/virtualMachines/ADVISOR-VM-01"
dpre="/subscriptions/$sub/resourceGroups/rg-advisor-test/providers/Microsoft.Compute/disks"
jq --arg id "$(uuid 1)" --arg rid "$rid" --arg sub "$sub" --arg d "$dpre" \
  '.id = $id | .created_at = (now | strftime("%Y-%m-%dT%H:%M:%SZ")) | .results = [] |
   .inventory.vm = {name: "advisor-vm-01", resource_id: $rid, subscription_id: $sub,
                    resource_group: "rg-advisor-test", location: "eastus",
                    vm_size: "Standard_D2s_v3", tags: {env: "test"}} |
   .inventory.disks = [
     (.inventory.disks[0] | .name = "advisor-vm-01_OsDisk_1_0123456789abcdef0123456789abcdef" |
      .managed_disk_id = ($d + "/" + .name | ascii_upcase) | .size_gib = 30 | .tier = "P4"),
     (.inventory.disks[1] | .name = "advisor-vm-01-data0" | .lun = 0 |
      .managed_disk_id = ($d + "/advisor-vm-01-data0") | .size_gib = 32 | .tier = "P4")]' \
  "$fixtures/reports/sap-db-01.json" >"$scratch/report.json"
start_server serve
[ -n "$port" ] || { echo "FAIL: serve did not start: $(cat "$scratch/serve.err")"; exit 1; }
agent=$(make_token agent)
reader=$(make_token reader)
code=$(post_report "$scratch/report.json" "$agent")
[ "$code" = 201 ] && ok || bad "the agent's report answered $code: $(cat "$scratch/body")"
[ "$(q "SELECT count(*) FROM vms")" = 3 ] && ok || bad "the report made another VM"
[ "$(q "SELECT count(*) FROM vms WHERE id = $vm01 AND last_report_id <> ''")" = 1 ] &&
  ok || bad "the report is not ARM's VM's"
[ "$(q "SELECT count(*) FROM disks WHERE vm_id = $vm01")" = 3 ] && ok || bad "disks doubled"
code=$(req GET "/api/v1/vms/$vm01" "$reader")
[ "$code" = 200 ] && jq -e '.name == "advisor-vm-01" and .disks >= 2 and .last_report_at != ""' \
  "$scratch/body" >/dev/null && ok || bad "GET /vms/$vm01: $code $(cat "$scratch/body")"
code=$(req GET /api/v1/vms "$reader")
[ "$code" = 200 ] && jq -e '[.vms[].name] | sort == ["advisor-vm-01", "advisor-vm-02", "quiet-vm"]' \
  "$scratch/body" >/dev/null && ok || bad "GET /vms: $(cat "$scratch/body")"
jq -e '.vms[] | select(.name == "quiet-vm") | .last_report_at == null and .power_state == "running"' \
  "$scratch/body" >/dev/null && ok || bad "a VM no agent reported: last_report_at null"
# The fleet's reads with VMs no agent reported: compliance (the VMs
# without results judged as having none), its summary, the disks' page.
for path in /api/v1/compliance /api/v1/compliance/summary /api/v1/disks "/api/v1/vms?limit=1"; do
  code=$(req GET "$path" "$reader")
  [ "$code" = 200 ] && ok || bad "GET $path with ARM's VMs: $code $(head -c 300 "$scratch/body")"
done
code=$(req GET /api/v1/disks "$reader")
jq -e '[.disks[] | select(.vm_name == "quiet-vm")] | length == 1 and .[0].last_seen_at != null' \
  "$scratch/body" >/dev/null && ok || bad "quiet-vm's disk on the disks page: $(head -c 300 "$scratch/body")"
stop_server TERM

# serve's shared ARM options: client credentials from --client-secret-file
# against --login-url, unpaced; a secret file that can't be read, and the
# options without --sync or --scheduler, are usage.
# (the scenario's constructed service principal: a wrong secret is refused)
printf 'constructed-test-secret\n' >"$scratch/secret"
export AZURE_TENANT_ID=99999999-8888-7777-6666-555555555555
export AZURE_CLIENT_ID=11111111-2222-3333-4444-555555555555
start_server cc --sync-interval 1s --subscription "$sub" "${arm[@]}" --login-url "$sim" \
  --client-secret-file "$scratch/secret" --no-pacing
if [ -n "$port" ]; then
  for _ in $(seq 100); do
    [ "$(metric tierwise_sync_last_success_timestamp_seconds)" -gt 0 ] 2>/dev/null && break
    sleep 0.1
  done
  [ "$(metric tierwise_sync_last_success_timestamp_seconds)" -gt 0 ] 2>/dev/null && ok ||
    bad "serve --sync with client credentials: $(cat "$scratch/cc.err")"
  stop_server TERM
  [ "$stop_status" = 0 ] && ok || bad "serve with client credentials stopped with $stop_status"
else
  bad "serve --client-secret-file did not start: $(cat "$scratch/cc.err")"
fi
expect 2 "$scratch/no-secret" -- "$cli" serve --db "$db" --sync --subscription "$sub" "${arm[@]}" \
  --login-url "$sim" --client-secret-file "$scratch/no-secret"
unset AZURE_TENANT_ID AZURE_CLIENT_ID
expect 2 "are for --scheduler and --sync" -- "$cli" serve --db "$db" --no-pacing
"$cli" serve --help | grep -q -- "--client-secret-file" && ok || bad "serve --help lacks --client-secret-file"

# 5. serve --sync-interval: the same sync on the worker, its metrics.
start_server sync --sync-interval 1s --subscription "$sub" "${arm[@]}"
[ -n "$port" ] || { echo "FAIL: serve --sync did not start: $(cat "$scratch/sync.err")"; exit 1; }
for _ in $(seq 100); do
  [ "$(metric tierwise_sync_last_success_timestamp_seconds)" != 0 ] &&
    [ -n "$(metric tierwise_sync_last_success_timestamp_seconds)" ] && break
  sleep 0.1
done
last=$(metric tierwise_sync_last_success_timestamp_seconds)
[ -n "$last" ] && [ "$last" -gt 1700000000 ] && ok || bad "last success metric: '$last'"
[ "$(metric tierwise_sync_errors_total)" = 0 ] && ok || bad "sync errors metric"
grep -q 'sync from ARM: 3 VMs' "$scratch/sync.err" && ok || bad "no sync line: $(cat "$scratch/sync.err")"
# ARM goes away: failures are counted and logged, the server keeps serving.
kill -KILL "$sim_pid"; wait "$sim_pid" 2>/dev/null; sim_pid=""
for _ in $(seq 100); do
  [ "$(metric tierwise_sync_errors_total)" -ge 1 ] 2>/dev/null && break
  sleep 0.1
done
[ "$(metric tierwise_sync_errors_total)" -ge 1 ] 2>/dev/null && ok || bad "errors not counted"
grep -q 'sync from ARM failed' "$scratch/sync.err" && ok || bad "no failure line"
healthy && ok || bad "serve unhealthy after a failed sync"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "serve --sync stopped with $stop_status"

# 6. Errors: a bad id is usage (2), nothing read; ARM unreachable (1); ARM
# refusing (403) names the role to assign (1).
expect 2 "not a subscription id" -- "$cli" sync --db "$db" "${arm[@]}" --subscription nope
expect 1 "listing the disks of subscription" -- "$cli" sync --db "$db" \
  --arm-url http://127.0.0.1:1 --imds-url http://127.0.0.1:1 --subscription "$sub"
jq '.faults = [{"kind": "error", "path": "/subscriptions/'$sub'/providers/Microsoft.Compute/disks",
                "status": 403, "count": -1}]' "$scratch/scenario.json" >"$scratch/refuse.json"
start_azsim "$scratch/refuse.json"
expect 1 "deploy/azure-role.json" -- "$cli" sync --db "$db" --arm-url "$sim" --imds-url "$sim"
expect 2 "give --db" -- "$cli" sync "${arm[@]}"
# A file that is no tierwise database is usage too; a bad group name is
# refused while the options are read: no database made, IMDS not asked.
printf 'not a database at all, just text\n%.0s' $(seq 200) >"$scratch/text.db"
expect 2 "is not a tierwise database" -- "$cli" sync --db "$scratch/text.db" \
  --arm-url "$sim" --imds-url "$sim" --subscription "$sub"
expect 2 "is not a resource group name" -- "$cli" sync --db "$scratch/new.db" \
  --arm-url http://127.0.0.1:1 --imds-url http://127.0.0.1:1 --resource-group "bad group."
[ ! -e "$scratch/new.db" ] && ok || bad "a refused group name made the database"
expect 2 "--subscription is for --sync" -- "$cli" serve --db "$db" --subscription "$sub"
expect 2 "not a subscription id" -- "$cli" serve --db "$db" --sync --subscription nope
expect 2 "--sync-interval \"0s\" must be a duration" -- "$cli" serve --db "$db" --sync-interval 0s

finish sync

#!/usr/bin/env bash
# tierwise-azsim as a process: starts on port 0 with --port-file, answers
# IMDS, the managed-identity token, ARM and the Retail Prices API on
# 127.0.0.1, applies a --fault, refuses bad usage and non-loopback
# addresses, and stops cleanly on SIGTERM and SIGINT with nothing left
# listening.  Needs the curl and jq commands: exits 77 (skipped) without.
set -u
azsim=${TW_AZSIM:?run through ctest, or set TW_AZSIM and TW_FIXTURES}
fixtures=${TW_FIXTURES:?}
scenario="$fixtures/sim/scenario-basic.json"
for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-azsim-XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# start NAME ARGS...: runs the simulator in the background with a port
# file; sets $pid and $port (empty when it did not come up in 10 s).
start() {
  local name=$1; shift
  rm -f "$scratch/$name.port"
  "$azsim" --port-file "$scratch/$name.port" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err" &
  pid=$!
  pids+=("$pid")
  port=""
  for _ in $(seq 100); do
    [ -s "$scratch/$name.port" ] && { port=$(cat "$scratch/$name.port"); return; }
    kill -0 "$pid" 2>/dev/null || return
    sleep 0.1
  done
}

# stop SIGNAL: sends it, waits, checks exit 0, the message, and that the
# port no longer answers.
stop() {
  local sig=$1 st
  kill -"$sig" "$pid"
  wait "$pid"; st=$?
  [ "$st" = 0 ] && ok || bad "exit status $st after SIG$sig"
  grep -q "stopped by SIG$sig" "$scratch/main.err" && ok || bad "no stop message: $(cat "$scratch/main.err")"
  curl -s --noproxy '*' -o /dev/null "http://127.0.0.1:$port/_sim/state"
  [ $? = 7 ] && ok || bad "port $port still answers after SIG$sig"
  if command -v ss >/dev/null && ss -ltnH "sport = :$port" | grep -q .; then
    bad "something still listens on $port"
  fi
}

get() { curl -s --noproxy '*' "$@"; }
status() { curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "$@"; }

# ---- a full run ----
start main --scenario "$scenario" --fault 'kind=error,path=/metadata/versions,status=503,count=1'
if [ -z "$port" ]; then
  echo "FAIL: tierwise-azsim did not start: $(cat "$scratch/main.err")"
  exit 1
fi
base="http://127.0.0.1:$port"
[ "$(head -1 "$scratch/main.out")" = "$port" ] && ok || bad "stdout does not carry the port"
grep -q "on $base" "$scratch/main.err" && ok || bad "no listening message"

# IMDS: the header rule, then the instance with its storage profile.
[ "$(status "$base/metadata/instance?api-version=2021-02-01")" = 400 ] && ok || bad "IMDS without Metadata header"
inst=$(get -H 'Metadata: true' "$base/metadata/instance?api-version=2021-02-01")
[ "$(jq -r '.compute.storageProfile.dataDisks[0].lun' <<<"$inst")" = "0" ] && ok || bad "IMDS lun: $inst"
[ "$(jq -r '.compute.storageProfile.dataDisks[0].managedDisk.storageAccountType' <<<"$inst")" = Premium_LRS ] && ok || bad "IMDS SKU"
[ "$(jq -r '.compute.vmSize' <<<"$inst")" = Standard_D2s_v3 ] && ok || bad "IMDS vmSize"

# The --fault: one 503, then served.
[ "$(status -H 'Metadata: true' "$base/metadata/versions")" = 503 ] && ok || bad "fault did not fire"
[ "$(status -H 'Metadata: true' "$base/metadata/versions")" = 200 ] && ok || bad "fault fired twice"

# Token, then ARM.
tok=$(get -H 'Metadata: true' "$base/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/" | jq -r .access_token)
[ -n "$tok" ] && [ "$tok" != null ] && ok || bad "no token"
disk="$base/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-advisor-test/providers/Microsoft.Compute/disks/advisor-vm-01-data0?api-version=2024-03-02"
[ "$(status "$disk")" = 401 ] && ok || bad "ARM without a token"
[ "$(get -H "Authorization: Bearer $tok" "$disk" | jq -r .properties.tier)" = P10 ] && ok || bad "ARM disk GET"
code=$(get -X PATCH -H "Authorization: Bearer $tok" -H 'Content-Type: application/json' \
       -d '{"sku":{"name":"StandardSSD_LRS"}}' "$disk" | jq -r .error.code)
[ "$code" = OperationNotAllowed ] && ok || bad "PATCH while running: $code"
# VMs: GET with the instance view, the subscription's list; api-version checked.
vms="$base/subscriptions/00000000-1111-2222-3333-444444444444/providers/Microsoft.Compute/virtualMachines"
vm="$base/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-advisor-test/providers/Microsoft.Compute/virtualMachines/advisor-vm-02"
[ "$(get -H "Authorization: Bearer $tok" "$vm?api-version=2024-07-01&\$expand=instanceView" |
     jq -r '.properties.instanceView.statuses[1].code')" = PowerState/deallocated ] && ok || bad "VM GET with instanceView"
[ "$(get -H "Authorization: Bearer $tok" "$vms?api-version=2024-07-01" | jq -r '[.value[].name] | join(",")')" = \
  advisor-vm-01,advisor-vm-02 ] && ok || bad "VM list"
[ "$(get -H "Authorization: Bearer $tok" "$vm" | jq -r .error.code)" = MissingApiVersionParameter ] && ok || bad "VM GET without api-version"
[ "$(get -H "Authorization: Bearer $tok" "$vm?api-version=2024-03-02" | jq -r .error.code)" = InvalidApiVersionParameter ] &&
  ok || bad "VM GET with DiskRP's api-version"
[ "$(get "$base/_sim/counters" | jq -r '.patches["/subscriptions/00000000-1111-2222-3333-444444444444/resourcegroups/rg-advisor-test/providers/microsoft.compute/disks/advisor-vm-01-data0"]')" = 1 ] &&
  ok || bad "counters: $(get "$base/_sim/counters")"

# Retail Prices: one page of the example's USD items.
page=$(get "$base/api/retail/prices?\$filter=serviceName%20eq%20%27Storage%27")
[ "$(jq -r .Count <<<"$page")" = 12 ] && ok || bad "prices Count: $(jq -c '{Count,NextPageLink}' <<<"$page")"
[ "$(jq -r .BillingCurrency <<<"$page")" = USD ] && ok || bad "BillingCurrency"
# A $skip past any sane count is refused, and the simulator lives on.
[ "$(status "$base/api/retail/prices?\$skip=9223372036854775807")" = 400 ] && ok || bad "huge \$skip"
[ "$(status "$base/_sim/state")" = 200 ] && ok || bad "simulator gone after a huge \$skip"

# The admin surface saw it all.
[ "$(get "$base/_sim/requests" | jq -r .total)" -ge 8 ] && ok || bad "request log"

# A second simulator can't take the same port: exit 1 with the reason.
"$azsim" --scenario "$scenario" --listen "127.0.0.1:$port" >/dev/null 2>"$scratch/busy.err"; st=$?
[ $st = 1 ] && grep -q "in use" "$scratch/busy.err" && ok || bad "port in use: exit $st $(cat "$scratch/busy.err")"

stop TERM

# ---- SIGINT also stops it ----
start main --scenario "$scenario" --listen 127.0.0.1:0
[ -n "$port" ] && ok || bad "second start"
[ -n "$port" ] && stop INT

# ---- --arm-limits: one read a second, the second read throttled ----
start main --scenario "$scenario" --arm-limits 1,1
if [ -n "$port" ]; then
  base="http://127.0.0.1:$port"
  tok=$(get -H 'Metadata: true' "$base/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/" | jq -r .access_token)
  disk="$base/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-advisor-test/providers/Microsoft.Compute/disks/advisor-vm-01-data0?api-version=2024-03-02"
  [ "$(status -H "Authorization: Bearer $tok" "$disk")" = 200 ] && ok || bad "first read under --arm-limits"
  get -o /dev/null -D "$scratch/limit.h" -H "Authorization: Bearer $tok" "$disk"
  grep -q "^HTTP/1.1 429" "$scratch/limit.h" && grep -qi "^Retry-After: 1" "$scratch/limit.h" &&
    grep -qi "^x-ms-ratelimit-remaining-subscription-reads: 0" "$scratch/limit.h" && ok || bad "second read: $(cat "$scratch/limit.h")"
  [ "$(get "$base/_sim/counters" | jq -r .throttled)" = 1 ] && ok || bad "throttled counter"
  stop TERM
else
  bad "start with --arm-limits"
fi

# ---- bad usage: exit 2, one clear message, nothing listening ----
expect2() {
  local words=$1; shift
  "$azsim" "$@" >"$scratch/x.out" 2>"$scratch/x.err"; local st=$?
  if [ $st != 2 ] || ! grep -qF -- "$words" "$scratch/x.err" || [ -s "$scratch/x.out" ]; then
    bad "$* -> exit $st: $(cat "$scratch/x.err")"
  else
    ok
  fi
}
expect2 "loopback" --scenario "$scenario" --listen 0.0.0.0:0
expect2 "loopback" --scenario "$scenario" --listen 192.168.1.10:8080
expect2 "--scenario FILE is required" --listen 127.0.0.1:0
expect2 "can't open" --scenario "$scratch/none.json"
printf '{"vms": [{"name": "x"}]}' >"$scratch/bad.json"
expect2 "vms[0].subscription_id is missing" --scenario "$scratch/bad.json"
expect2 'kind "boom"' --scenario "$scenario" --fault kind=boom
expect2 "unknown option" --scenario "$scenario" --frobnicate
expect2 "READS,WRITES" --scenario "$scenario" --arm-limits 25
"$azsim" --help | grep -q "usage: tierwise-azsim" && ok || bad "--help"

echo "test-azsim: $pass passed, $fail failed"
[ $fail -eq 0 ]

# switch-lib.sh - what the tier-switch tests (tests/integration/test-switch-*.sh)
# share; sourced after testlib.sh, with `scratch` set.
#
#   switch_scenario NAME POWER [DISKS_JSON] [SETTINGS_JSON]
#                       writes $scratch/scenario.json: VM NAME in rg-dev
#                       (eastus, Standard_D2s_v3) in power state POWER
#                       ("running", "deallocated", "hibernated"), an OS disk
#                       and the data disks of DISKS_JSON (default two
#                       Premium_LRS data disks, data0 and data1)
#   start_sim [ARGS...] starts tierwise-azsim on port 0 over that scenario
#                       (sets sim_port, sim_pid, ARM: the ARM options of
#                       the commands); the test fails if it does not start
#   sim GET|POST|DELETE PATH [BODY]
#                       the simulator's answer (its admin surface, /_sim/...)
#   patches DISK        PATCHes the simulator counted for disk DISK of rg-dev
#   sim_sku DISK        the disk's SKU as the simulator has it
#   sim_power VM        the VM's power state as the simulator has it
#   at TIME CMD...      CMD with the system clock at TIME (faketime, which
#                       must be installed: need_faketime exits 77 without it);
#                       `at TIME apply ARGS...` is apply's command line
#   faked TIME CMD...   CMD under libfaketime from TIME on (faked_env TIME sets
#                       FAKED, the same as a command prefix, for `&`)
#   fresh_db            a new database ($db) with the bundled USD price books and
#                       the fleet synced from the simulator (at $sync_at when set)
#
# Every address is 127.0.0.1 (TIERWISE_LOOPBACK_ONLY=1).

azsim=${TW_AZSIM:?the path of tierwise-azsim, TW_AZSIM}
cli=${TW_CLI:?}
db="$scratch/tw.db"
sub="00000000-1111-2222-3333-444444444444"
export TIERWISE_LOOPBACK_ONLY=1
# libfaketime is preloaded ahead of the sanitizers' runtime: let it be.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
sim_pid=""

switch_scenario() {
  local name=$1 power=$2
  local two='[{"name": "NAME-data0", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 128},
             {"name": "NAME-data1", "role": "data", "lun": 1, "sku": "Premium_LRS", "size_gib": 256}]'
  local disks=${3:-$two}
  local settings=${4:-'{}'}
  local hib=false
  [ "$power" = hibernated ] && { hib=true; power=deallocated; }
  jq -n --arg name "$name" --arg power "$power" --argjson hib "$hib" --arg sub "$sub" \
    --argjson disks "${disks//NAME/$name}" --argjson settings "$settings" '
    {schema: "tierwise.azsim-scenario/1",
     settings: ({operation_delay_ms: 200, retry_after_s: 0, sku_changes_per_day: 2} + $settings),
     self: $name,
     vms: [{subscription_id: $sub, resource_group: "rg-dev", name: $name,
            vm_size: "Standard_D2s_v3", location: "eastus", power_state: $power,
            hibernated: $hib,
            disks: ([{name: ($name + "-os"), role: "os", sku: "Premium_LRS", size_gib: 30}] + $disks)}]}' \
    >"$scratch/scenario.json"
}

start_sim() {
  rm -f "$scratch/sim.port"
  "$azsim" --scenario "$scratch/scenario.json" --port-file "$scratch/sim.port" "$@" \
    >/dev/null 2>"$scratch/sim.err" &
  sim_pid=$!
  for _ in $(seq 100); do [ -s "$scratch/sim.port" ] && break; sleep 0.1; done
  if [ ! -s "$scratch/sim.port" ]; then
    echo "FAIL: the simulator did not start: $(cat "$scratch/sim.err")"
    exit 1
  fi
  sim_port=$(cat "$scratch/sim.port")
  ARM=(--arm-url "http://127.0.0.1:$sim_port" --imds-url "http://127.0.0.1:$sim_port"
       --login-url "http://127.0.0.1:$sim_port")
}

stop_sim() {
  [ -n "$sim_pid" ] || return 0
  kill -TERM "$sim_pid" 2>/dev/null
  wait "$sim_pid" 2>/dev/null
  sim_pid=""
}

sim() {
  local method=$1 path=$2 body=${3:-}
  if [ -n "$body" ]; then
    curl -s -X "$method" -H 'Content-Type: application/json' -d "$body" "http://127.0.0.1:$sim_port$path"
  else
    curl -s -X "$method" "http://127.0.0.1:$sim_port$path"
  fi
}

patches() {
  local id="/subscriptions/$sub/resourcegroups/rg-dev/providers/microsoft.compute/disks/$1"
  sim GET /_sim/counters | jq --arg id "${id,,}" '.patches[$id] // 0'
}

sim_sku() {
  sim GET /_sim/state | jq -r --arg n "$1" '.disks[] | select(.name == $n) | .sku'
}

sim_power() {
  sim GET /_sim/state | jq -r --arg n "$1" '.vms[] | select(.name == $n) | .power_state'
}

# need_faketime (testlib.sh) finds libfaketime for faked_env.

# faked_env TIME: FAKED, the env(1) command line that runs a command with the
# clock starting at TIME ("YYYY-MM-DD hh:mm:ss" or "@EPOCH" seconds) and
# running on from there.  For a command in the background use
# `"${FAKED[@]}" CMD... &`: env execs CMD, so $! is CMD's pid (a function
# in the background would be a subshell's, and a kill would miss CMD).
faked_env() {
  local when=$1
  case "$when" in
    @*) when=$(date -u -d "$when" '+%Y-%m-%d %H:%M:%S') ;;
  esac
  FAKED=(env "LD_PRELOAD=$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}" "FAKETIME=@$when" TZ=UTC
         FAKETIME_DONT_RESET=1)
}
# faked TIME CMD...: CMD under that clock, in the foreground.
faked() {
  faked_env "$1"; shift
  "${FAKED[@]}" "$@"
}

at() {
  local when=$1; shift
  if [ "$1" = apply ]; then
    shift
    faked "$when" "$cli" apply --db "$db" --policy "$scratch/policy.json" --currency USD \
      --poll-ms 50 "${ARM[@]}" "$@"
  else
    faked "$when" "$@"
  fi
}

fresh_db() {
  rm -f "$db" "$db-wal" "$db-shm"
  # the bundled books in USD only: one currency, as the scheduler needs
  jq '.Items |= map(select(.currencyCode == "USD"))' "$TW_SOURCE_DIR/pricing/azure-disk-prices.json" \
    >"$scratch/prices-usd.json"
  "$cli" prices import --db "$db" "$scratch/prices-usd.json" >/dev/null 2>&1 ||
    { echo "FAIL: importing the bundled prices"; exit 1; }
  local pre=()
  [ -n "${sync_at:-}" ] && pre=(faked "$sync_at") # the first sync at a chosen time
  "${pre[@]}" "$cli" sync --db "$db" --subscription "$sub" "${ARM[@]}" >/dev/null 2>"$scratch/sync.err" ||
    { echo "FAIL: tierwise sync: $(cat "$scratch/sync.err")"; exit 1; }
}

# The weekend policy the tests plan by (UTC, data disks to Standard HDD).
weekend_policy() {
  cat >"$scratch/policy.json" <<'EOF'
{"schema_version": "tierwise.policy/1", "name": "dev-weekends",
 "match": {"resource_groups": ["rg-dev"]},
 "target": "Standard_LRS", "windows": ["Fri 20:00-Mon 06:00"], "timezone": "UTC"}
EOF
}

# apply ARGS...: tierwise apply over the policy with the ARM options.
apply() {
  "$cli" apply --db "$db" --policy "$scratch/policy.json" --currency USD --poll-ms 50 "${ARM[@]}" "$@"
}

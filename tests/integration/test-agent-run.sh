#!/usr/bin/env bash
# tierwise-agent run end to end on 127.0.0.1: the Azure simulator (IMDS),
# tierwise serve with tokens from tierwise token create, and the agent
# measuring a scratch file that stands in for data disk LUN 0, once; the
# report is then read back from the server with a reader token.  Also: the
# option and token-file errors, and a refused token keeping the report.
# Needs jq and curl: exits 77 (skipped) without.
set -u
agent=${TW_AGENT:?run through ctest}
cli=${TW_CLI:?}
azsim=${TW_AZSIM:?}
src=${TW_SOURCE_DIR:?}
for tool in jq curl; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
export TIERWISE_LOOPBACK_ONLY=1
unset STATE_DIRECTORY
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-agent-run-XXXXXX")
sim=""
srv=""
cleanup() {
  [ -n "$sim" ] && kill -KILL "$sim" 2>/dev/null
  [ -n "$srv" ] && kill -KILL "$srv" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"

wait_port() { # FILE PID NAME
  for _ in $(seq 100); do [ -s "$1" ] && return 0; kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
  echo "$3 did not start"; return 1
}

"$azsim" --scenario "$src/tests/fixtures/sim/scenario-basic.json" --port-file "$scratch/sim.port" \
  >/dev/null 2>"$scratch/sim.err" &
sim=$!
wait_port "$scratch/sim.port" "$sim" simulator || { cat "$scratch/sim.err"; exit 1; }
export TIERWISE_IMDS_URL="http://127.0.0.1:$(cat "$scratch/sim.port")"

db="$scratch/tierwise.db"
(umask 077
 "$cli" token create --db "$db" --role agent --name test-agent >"$scratch/agent.tok" &&
 "$cli" token create --db "$db" --role reader >"$scratch/reader.tok") 2>"$scratch/tok.err" ||
  { echo "token create failed: $(cat "$scratch/tok.err")"; exit 1; }
"$cli" serve --db "$db" --listen 127.0.0.1:0 --port-file "$scratch/srv.port" 2>"$scratch/srv.err" &
srv=$!
wait_port "$scratch/srv.port" "$srv" "tierwise serve" || { cat "$scratch/srv.err"; exit 1; }
server="http://127.0.0.1:$(cat "$scratch/srv.port")"
reader=$(cat "$scratch/reader.tok")
get() { curl -s --noproxy '*' -H "Authorization: Bearer $reader" "$server$1"; }

# The disk under the scratch folder plays data disk LUN 0 (a udev-style
# link in a scratch /dev tree), measured on a file there.  Where O_DIRECT
# works the real engine runs for a second; elsewhere the null engine.
mm=$(stat -c '%Hd:%Ld' "$scratch")
sys=$(readlink -f "/sys/dev/block/$mm" 2>/dev/null)
[ -n "$sys" ] && [ -e "$sys/partition" ] && sys=$(dirname "$sys")
devopts=()
if [ -n "$sys" ] && [ -d "$sys" ]; then
  mkdir -p "$scratch/dev/disk/azure/scsi1"
  ln -s "../../../$(basename "$sys")" "$scratch/dev/disk/azure/scsi1/lun0"
  devopts=(--dev-root "$scratch/dev")
fi
engine=()
dd if=/dev/zero of="$scratch/probe" bs=4096 count=1 oflag=direct 2>/dev/null ||
  engine=(--engine null --buffered)
run=("$agent" run --server "$server" --token-file "$scratch/agent.tok" --spool "$scratch/spool.db")

# 1. One cycle: two profiles on LUN 0's file, the report stored.
"${run[@]}" --once --runtime 1 --ramp 0 --file-target "0=$scratch/data0.bench" --file-size 16M \
  "${engine[@]}" "${devopts[@]}" >"$scratch/out" 2>"$scratch/err"
st=$?
[ $st -eq 0 ] && grep -q "delivered (stored)" "$scratch/err" && ok ||
  bad "run --once: exit $st: $(cat "$scratch/err")"
[ ! -s "$scratch/out" ] && ok || bad "run wrote on stdout: $(cat "$scratch/out")"
id=$(sed -n 's/.*report \([0-9a-f-]*\) made.*/\1/p' "$scratch/err")
get /api/v1/vms >"$scratch/vms.json"
jq -e '.vms | length == 1 and .[0].name == "advisor-vm-01" and .[0].power_state == "running"
       and .[0].disks == 3' "$scratch/vms.json" >/dev/null && ok ||
  bad "GET /api/v1/vms: $(cat "$scratch/vms.json")"
get /api/v1/disks >"$scratch/disks.json"
disk=$(jq -r '[.. | objects | select(.lun? == 0 and .name? == "advisor-vm-01-data0")][0].id // empty' \
  "$scratch/disks.json")
if [ -n "$disk" ]; then
  get "/api/v1/disks/$disk" >"$scratch/disk.json"
  jq -e '[.. | objects | select(has("schema_version")) | .profile] | sort ==
         ["rated-iops", "rated-throughput"]' "$scratch/disk.json" >/dev/null && ok ||
    bad "GET /api/v1/disks/$disk: no results of both profiles: $(head -c 600 "$scratch/disk.json")"
else
  bad "GET /api/v1/disks: no LUN 0 disk: $(head -c 600 "$scratch/disks.json")"
fi
"$agent" run --spool "$scratch/spool.db" --spool-list >"$scratch/list.json" 2>"$scratch/err" &&
  jq -e 'length == 0' "$scratch/list.json" >/dev/null && ok ||
  bad "spool not empty after delivery: $(cat "$scratch/list.json" "$scratch/err")"
[ -n "$id" ] && ok || bad "no report id in the log"

# 2. An inventory-only report; the server now holds two.
"${run[@]}" --once --profiles none 2>"$scratch/err" && ok || bad "--profiles none: $(cat "$scratch/err")"
curl -s --noproxy '*' "$server/metrics" | grep -qx 'tierwise_reports_stored 2' && ok ||
  bad "metrics: $(curl -s --noproxy '*' "$server/metrics" | grep reports_stored)"

# 3. A reader token is refused (403): the report stays spooled, exit 6;
#    with the agent token the next run delivers it, then its own.
cp "$scratch/reader.tok" "$scratch/wrong.tok"
"$agent" run --server "$server" --token-file "$scratch/wrong.tok" --spool "$scratch/spool.db" \
  --once --profiles none 2>"$scratch/err"
st=$?
[ $st -eq 6 ] && grep -q "refused the agent" "$scratch/err" && ok ||
  bad "reader token: exit $st: $(cat "$scratch/err")"
"$agent" run --spool "$scratch/spool.db" --spool-list | jq -e 'length == 1 and .[0].state ==
  "pending" and .[0].http_status == 403' >/dev/null && ok || bad "the refused report is not kept"
"${run[@]}" --once --profiles none 2>"$scratch/err" && ok || bad "after 403: $(cat "$scratch/err")"
curl -s --noproxy '*' "$server/metrics" | grep -qx 'tierwise_reports_stored 4' && ok ||
  bad "after 403: $(curl -s --noproxy '*' "$server/metrics" | grep reports_stored)"

# 4. Usage and token-file errors: one message, exit 2, nothing sent.
chmod 644 "$scratch/wrong.tok"
expect 2 "chmod 600" -- "$agent" run --server "$server" --token-file "$scratch/wrong.tok" --once
expect 2 "No such file" -- "$agent" run --server "$server" --token-file "$scratch/none" --once
: >"$scratch/empty.tok"; chmod 600 "$scratch/empty.tok"
expect 2 "is empty" -- "$agent" run --server "$server" --token-file "$scratch/empty.tok" --once
expect 2 "http:// or https://" -- "${run[@]/$server/ftp://x}" --once
expect 2 "no host" -- "$agent" run --server "http://" --token-file "$scratch/agent.tok" --once
expect 2 "TIERWISE_LOOPBACK_ONLY" -- "$agent" run --server "http://192.0.2.1:8080" \
  --token-file "$scratch/agent.tok" --once
expect 2 "--server URL" -- "$agent" run --token-file "$scratch/agent.tok" --once
expect 2 "--token-file" -- "$agent" run --server "$server" --once
expect 2 "unknown profile" -- "${run[@]}" --once --profiles rated-iops,nonsense
expect 2 "LUN=PATH" -- "${run[@]}" --once --file-target sdc
expect 2 "no data disk at LUN 9" -- "${run[@]}" --once --file-target "9=$scratch/x" --profiles none
expect 2 "unknown option" -- "${run[@]}" --once --frobnicate
echo "not a database, just text that is long enough to be refused as a header ........." \
  >"$scratch/text.db"
expect 2 "not a tierwise spool" -- "$agent" run --server "$server" --token-file "$scratch/agent.tok" \
  --spool "$scratch/text.db" --once --profiles none
# A token handed over by systemd's LoadCredential= (ACL in the group bits)
# is taken inside $CREDENTIALS_DIRECTORY only.
mkdir -p "$scratch/creds"
cp "$scratch/agent.tok" "$scratch/creds/agent-token"; chmod 640 "$scratch/creds/agent-token"
CREDENTIALS_DIRECTORY="$scratch/creds" "${run[@]/$scratch\/agent.tok/$scratch/creds/agent-token}" \
  --once --profiles none 2>"$scratch/err" && ok || bad "credential token: $(cat "$scratch/err")"
expect 2 "chmod 600" -- "${run[@]/$scratch\/agent.tok/$scratch/creds/agent-token}" --once
"$agent" run --help >"$scratch/help" && grep -q -- "--spool-max" "$scratch/help" &&
  grep -q "Exit status" "$scratch/help" && ok || bad "run --help"
curl -s --noproxy '*' "$server/metrics" | grep -qx 'tierwise_reports_stored 5' && ok ||
  bad "errors sent something: $(curl -s --noproxy '*' "$server/metrics" | grep reports_stored)"

# 5. The systemd units are valid (where systemd-analyze is at hand).
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify --man=no "$src/deploy/tierwise-agent.service" \
    "$src/deploy/tierwise-agent.timer" 2>&1 | grep -v "is not executable" >"$scratch/verify"
  [ ! -s "$scratch/verify" ] && ok || bad "systemd-analyze verify: $(cat "$scratch/verify")"
fi

# 6. Everything stops cleanly.
kill -TERM "$srv"; wait "$srv"; st=$?; srv=""
[ $st -eq 0 ] && ok || bad "tierwise serve exit $st after SIGTERM: $(cat "$scratch/srv.err")"
kill -TERM "$sim"; wait "$sim"; st=$?; sim=""
[ $st -eq 0 ] && ok || bad "simulator exit $st after SIGTERM"

finish agent-run

#!/usr/bin/env bash
# tierwise-agent run's conventions without a backend: the progress line on
# a terminal (disk, profile, seconds left) and none in a pipe or with -q,
# status 7 when the report could only be spooled, the spool's folder made
# 0700, --help stating the load and its bounds.  The null engine on a
# buffered file: runs on any filesystem.  The backend is a loopback port
# where nothing listens (connection refused at once).
set -u
agent=${TW_AGENT:?run through ctest, or set TW_AGENT}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-run-cli-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
unset STATE_DIRECTORY TIERWISE_SERVER TIERWISE_TOKEN_FILE TIERWISE_CONFIG

cat >"$scratch/inv.json" <<'JSON'
{"vm": {"name": "vm1", "vm_size": "Standard_D2s_v3", "location": "westeurope"},
 "disks": [{"name": "vm1-data0", "role": "data", "lun": 0, "sku": "Premium_LRS", "size_gib": 128}]}
JSON
(umask 077; echo tok-1 >"$scratch/tok")
run=("$agent" run --once --server http://127.0.0.1:1 --token-file "$scratch/tok"
     --inventory-file "$scratch/inv.json" --engine null --buffered --runtime 2 --ramp 0
     --file-target "0=$scratch/d0.bench" --file-size 1M)

# 1. On a terminal (script(1) gives the run a pty): the progress line; the
#    backend down: the report spooled, status 7; the spool's folders made.
script -qec "${run[*]} --spool $scratch/state/tw/spool.db; echo status=\$?" /dev/null \
  >"$scratch/tty.txt" 2>&1
tr '\r' '\n' <"$scratch/tty.txt" >"$scratch/tty.lines"
grep -q "vm1-data0 (LUN 0) rated-iops \[1/2\]: [0-9]* s left" "$scratch/tty.lines" && ok ||
  bad "no progress line on a terminal: $(head -c 600 "$scratch/tty.txt")"
grep -q "rated-throughput \[2/2\]" "$scratch/tty.lines" && ok || bad "no progress for the second profile"
grep -q "status=7" "$scratch/tty.lines" && ok || bad "spooled only: not status 7: $(tail -c 300 "$scratch/tty.lines")"
[ "$(stat -c %a "$scratch/state")" = 700 ] && [ "$(stat -c %a "$scratch/state/tw")" = 700 ] && ok ||
  bad "spool folders: $(stat -c '%n %a' "$scratch/state" "$scratch/state/tw" 2>&1)"
[ -f "$scratch/state/tw/spool.db" ] && ok || bad "no spool made"

# 2. In a pipe: no progress line, the same status.
"${run[@]}" --spool "$scratch/s2.db" >"$scratch/out" 2>"$scratch/err"
st=$?
[ $st -eq 7 ] && ok || bad "pipe: exit $st: $(cat "$scratch/err")"
grep -q "s left" "$scratch/err" && bad "progress line in a pipe: $(cat "$scratch/err")" || ok
grep -q "delivered" "$scratch/err" && bad "said delivered" || ok
[ ! -s "$scratch/out" ] && ok || bad "run wrote on stdout: $(cat "$scratch/out")"

# 3. -q on a terminal: no progress, no line per result; the warning that
#    the report waits in the spool is still said.
script -qec "${run[*]} --spool $scratch/s3.db -q" /dev/null >"$scratch/q.txt" 2>&1
grep -q "s left" "$scratch/q.txt" && bad "-q drew progress: $(head -c 300 "$scratch/q.txt")" || ok
grep -q "IOPS" "$scratch/q.txt" && bad "-q said the results: $(head -c 300 "$scratch/q.txt")" || ok
grep -q "kept in the spool" "$scratch/q.txt" && ok || bad "-q dropped the warning: $(cat "$scratch/q.txt")"

# 4. -v says where the server and token file came from, and the load.
TIERWISE_SERVER=http://127.0.0.1:1 "$agent" run --once --token-file "$scratch/tok" \
  --inventory-file "$scratch/inv.json" --profiles rated-iops --spool "$scratch/s4.db" -v \
  2>"$scratch/v.err"
grep -q "backend http://127.0.0.1:1 (from TIERWISE_SERVER); token file $scratch/tok (from --token-file)" \
  "$scratch/v.err" && ok || bad "-v sources: $(cat "$scratch/v.err")"
grep -q "the load on each data disk: rated-iops 30 s + 5 s ramp, QD 256 x 4 (35 s; the bound is 120 s)" \
  "$scratch/v.err" && ok || bad "-v load: $(cat "$scratch/v.err")"

# 5. A disk whose device is not certain is not measured, and the run says
#    which and why: two disks on one device, a device of another size, a
#    size sysfs does not give.  A device of the disk's size is measured
#    (here a file standing in for it, under a scratch sysfs tree).
mkdir -p "$scratch/sys/class/block/sdc" "$scratch/sys/class/block/sdd" \
  "$scratch/sys/class/block/sdf" "$scratch/sys/class/block/sde" "$scratch/dev"
echo 268435456 >"$scratch/sys/class/block/sdc/size"   # 128 GiB
echo 134217728 >"$scratch/sys/class/block/sdd/size"   # 64 GiB
echo 2097152 >"$scratch/sys/class/block/sdf/size"     # 1 GiB
head -c 1048576 /dev/urandom >"$scratch/dev/sdf"
disk() { printf '{"name": "vm1-data%s", "role": "data", "lun": %s, "sku": "Premium_LRS", "size_gib": %s, "device": "%s"}' "$1" "$1" "$2" "$3"; }
# (LUN 70, past the 64 a VM has, is doubted all the same.)
printf '{"vm": {"name": "vm1", "vm_size": "Standard_D2s_v3", "location": "westeurope"}, "disks": [%s, %s, %s, %s, %s, %s]}' \
  "$(disk 1 128 "$scratch/dev/sdc")" "$(disk 2 128 "$scratch/dev/sdc")" "$(disk 3 128 "$scratch/dev/sdd")" \
  "$(disk 4 128 "$scratch/dev/sde")" "$(disk 5 1 "$scratch/dev/sdf")" "$(disk 70 128 "$scratch/dev/sdc")" \
  >"$scratch/inv2.json"
"$agent" run --once --server http://127.0.0.1:1 --token-file "$scratch/tok" --spool "$scratch/s6.db" \
  --inventory-file "$scratch/inv2.json" --sysfs-root "$scratch/sys" --engine null --buffered \
  --runtime 1 --ramp 0 --profiles rated-iops 2>"$scratch/doubt.err"
st=$?
[ $st -eq 7 ] && ok || bad "doubted devices: exit $st: $(cat "$scratch/doubt.err")"
for l in 1 2; do
  grep -q "vm1-data$l (LUN $l): not measured: its device $scratch/dev/sdc is also found for vm1-data$((3 - l))" \
    "$scratch/doubt.err" && ok || bad "LUN $l on a shared device: $(cat "$scratch/doubt.err")"
done
grep -q "vm1-data70 (LUN 70): not measured: its device $scratch/dev/sdc is also found for vm1-data1" \
  "$scratch/doubt.err" && ok || bad "LUN 70 on a shared device: $(cat "$scratch/doubt.err")"
grep -q "vm1-data3 (LUN 3): not measured: its device $scratch/dev/sdd holds 64 GiB, not the 128 GiB" \
  "$scratch/doubt.err" && ok || bad "LUN 3 of another size: $(cat "$scratch/doubt.err")"
grep -q "vm1-data4 (LUN 4): not measured: the size of its device $scratch/dev/sde can't be read" \
  "$scratch/doubt.err" && ok || bad "LUN 4 without a size: $(cat "$scratch/doubt.err")"
grep -q "vm1-data5 (LUN 5): rated-iops on $scratch/dev/sdf: " "$scratch/doubt.err" && ok ||
  bad "LUN 5 of the right size not measured: $(cat "$scratch/doubt.err")"
grep -q "made (1 results)" "$scratch/doubt.err" && ok || bad "not one result: $(cat "$scratch/doubt.err")"

# 6. The bound, and --help stating the load.
expect 2 "more than --max-seconds-per-disk 120" -- "$agent" run --once --server http://127.0.0.1:1 \
  --token-file "$scratch/tok" --spool "$scratch/s5.db" --runtime 60
"$agent" run --help >"$scratch/help"
for words in "--max-seconds-per-disk" "70 s per disk" "credit bursting" "TIERWISE_SERVER" \
             "TIERWISE_TOKEN_FILE" "  7   nothing delivered" "-q, --quiet" "--version"; do
  grep -qF -- "$words" "$scratch/help" && ok || bad "run --help lacks '$words'"
done

finish agent-run-cli

#!/usr/bin/env bash
# Block-device targets on a loop device: reads work, writes are refused
# without --allow-destructive (and the data stays as it was), allowed with
# it, and refused even with it while the device is mounted.  Needs root,
# losetup, mkfs.ext4 and mount: exits 77 (skipped) without them.
set -u
agent=${TW_AGENT:?run through ctest, or set TW_AGENT and TW_CLI}
tierwise=${TW_CLI:?}
if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null || ! command -v mkfs.ext4 >/dev/null; then
  echo "needs root, losetup and mkfs.ext4: skipped"; exit 77
fi
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-blk-XXXXXX")
img="$scratch/disk.img" mnt="$scratch/mnt" loop=""
cleanup() {
  mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
truncate -s 64M "$img"
if ! loop=$(losetup -f --show --direct-io=on "$img" 2>/dev/null) &&
   ! loop=$(losetup -f --show "$img" 2>/dev/null); then
  echo "no loop device available: skipped"; exit 77
fi

dd if=/dev/urandom of="$loop" bs=1M count=64 oflag=direct status=none
before=$(md5sum <"$img")

# Read profile on the device: a block result.
if "$agent" bench --target "$loop" --profile rated-iops --runtime 1 --ramp 0 --json >"$scratch/r.json" 2>"$scratch/err"; then
  grep -q '"kind": "block"' "$scratch/r.json" && grep -q "\"device\": \"$(basename "$loop")\"" "$scratch/r.json" &&
    "$tierwise" result "$scratch/r.json" >/dev/null && ok || bad "block read result: $(head -c 400 "$scratch/r.json")"
else
  bad "read bench on $loop failed: $(cat "$scratch/err")"
fi

# Write profile without permission: refused, exit 2, data unchanged.
"$agent" bench --target "$loop" --profile rated-iops-write --runtime 1 --ramp 0 >/dev/null 2>"$scratch/err"
st=$?
[ $st -eq 2 ] && grep -q -- "--allow-destructive" "$scratch/err" && ok || bad "write without permission: exit $st $(cat "$scratch/err")"
"$agent" bench --target "$loop" --profile oltp-8k-mixed --runtime 1 --ramp 0 >/dev/null 2>&1 && bad "mixed profile wrote to a device" || ok
[ "$(md5sum <"$img")" = "$before" ] && ok || bad "device data changed without --allow-destructive"

# With permission on an unused device: runs, and writes.
if "$agent" bench --target "$loop" --profile rated-iops-write --runtime 1 --ramp 0 --allow-destructive >/dev/null 2>"$scratch/err"; then
  ok
  sync
  [ "$(md5sum <"$img")" != "$before" ] && ok || bad "destructive run wrote nothing"
else
  bad "destructive write on an unused device failed: $(cat "$scratch/err")"
fi

# Mounted: refused even with permission.
mkfs.ext4 -q -F "$loop" && mkdir -p "$mnt" && mount "$loop" "$mnt"
"$agent" bench --target "$loop" --profile rated-iops-write --runtime 1 --ramp 0 --allow-destructive >/dev/null 2>"$scratch/err"
st=$?
[ $st -eq 2 ] && grep -q "mounted" "$scratch/err" && ok || bad "write to a mounted device: exit $st $(cat "$scratch/err")"
# Reading a mounted device is fine.
"$agent" bench --target "$loop" --profile rated-throughput --runtime 1 --ramp 0 >/dev/null 2>"$scratch/err" && ok || bad "read of a mounted device: $(cat "$scratch/err")"

echo "blockdev: $pass passed, $fail failed"
[ $fail -eq 0 ]

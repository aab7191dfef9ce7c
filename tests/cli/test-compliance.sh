#!/usr/bin/env bash
# tierwise compliance end to end on the fixtures in tests/fixtures/compliance/
# (README there): every verdict from files, the JSON fields, the stripe
# example, exit statuses and one clear message for each bad input, and the
# built-in catalog working from any directory.
set -u
tierwise=${TW_CLI:?run through ctest, or set TW_CLI and TW_FIXTURES}
fx=${TW_FIXTURES:?}/compliance
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-compliance-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"



# verdict FILE VERDICT WORDS [OPTIONS...]: the JSON verdict of one result.
verdict() {
  local file=$1 want=$2 words=$3; shift 3
  local out st
  out=$("$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/$file" --json "$@" \
          2>"$scratch/err"); st=$?
  if [ "$st" != 0 ]; then bad "$file: exit $st: $(cat "$scratch/err")"; return; fi
  local got reason
  got=$(jq -r '.verdicts[0].verdict' <<<"$out")
  reason=$(jq -r '.verdicts[0].reason' <<<"$out")
  if [ "$got" != "$want" ]; then bad "$file: verdict $got, want $want ($reason)"; return; fi
  if ! grep -qF -- "$words" <<<"$reason"; then bad "$file: reason lacks '$words': $reason"; return; fi
  ok
}

command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }

# --help on stdout, exit 0; listed by tierwise --help.
"$tierwise" compliance --help | grep -q "usage: tierwise compliance" && ok || bad "compliance --help"
"$tierwise" --help | grep -q "compliance" && ok || bad "tierwise --help lacks compliance"

# Every verdict.  The VM is a Standard_E16ds_v5 (25,600 IOPS, 600 MB/s uncached).
verdict stripe-randread-under.json under \
  "measured 16,300 IOPS is 72 % of 22,500 expected (3 × P40 at 7,500)"
verdict stripe-psync-qd1.json inconclusive "Little's law"
verdict stripe-seq-1m-vm-capped.json vm-capped "the uncached cap of Standard_E16ds_v5, 600 MB/s"
verdict log-perf-tier-delivers.json delivers "(P30 at 5,000)"
verdict shared-cached.json cached "host caching ReadOnly on disk sap-db-01-shared"
verdict apps-burst.json burst "credit bursting"
verdict v2-provisioned.json inconclusive "provisioned per disk"
verdict stripe-buffered-short.json inconclusive "buffered I/O (direct: false)"
verdict stripe-buffered-short.json inconclusive "lasted 5.0 s"
# The stripe example on a VM whose cap is near what it measured: vm-capped.
printf '{"schema_version":"tierwise.vm-disk-caps/1","vms":[%s,%s]}' \
  '{"vm_size":"Standard_Test","uncached_disk_iops":16600,"uncached_disk_mbps":400}' \
  '{"vm_size":"Standard_Test2","uncached_disk_iops":20000,"uncached_disk_mbps":400}' \
  >"$scratch/caps.json"
verdict stripe-randread-under.json vm-capped "98 % of 16,600 expected" \
  --vm-caps "$scratch/caps.json" --vm-size Standard_Test
# ... under, bound by the VM, when the cap binds but is not reached ...
verdict stripe-randread-under.json under "81 % of 20,000 expected, the uncached cap of Standard_Test2" \
  --vm-caps "$scratch/caps.json" --vm-size Standard_Test2
# ... and VM-level bursting above a cap the disks could pass.
verdict stripe-randread-under.json burst "VM-level bursting" --vm-size standard_d8s_v3

# The JSON fields of the stripe example.
out=$("$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/stripe-randread-under.json" \
        --result "$fx/v2-provisioned.json" --json)
check() { # check JQ-EXPR WANT
  local got; got=$(jq -c "$1" <<<"$out")
  [ "$got" = "$2" ] && ok || bad "$1 is $got, want $2"
}
check '.verdicts | length' 2
check '.verdicts[0].result_id' '"00000000-0000-4000-8000-000000000001"'
check '.verdicts[0].disks' '["sap-db-01-data0","sap-db-01-data1","sap-db-01-data2"]'
check '.verdicts[0].tiers' '["P40","P40","P40"]'
check '.verdicts[0].verdict' '"under"'
check '.verdicts[0].measured.iops' 16300
check '.verdicts[0].expected' '{"iops":22500,"mbps":184.3,"bound_by":"disks"}'
check '.verdicts[0].ratio.iops' 0.724
check '.verdicts[0].vm.size' '"Standard_E16ds_v5"'
check '.verdicts[1].verdict' '"inconclusive"'
check '.verdicts[1].expected' '{"iops":null,"mbps":null,"bound_by":null}'
check '.verdicts[1].ratio.iops' null

# Without --json: the VM (name and size) on a line, then a line per result,
# verdict first and naming its profile, as --server prints; stdout only.
"$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/stripe-randread-under.json" \
  --result "$fx/apps-burst.json" >"$scratch/out" 2>"$scratch/err"
[ "$?" = 0 ] && ok || bad "text run failed: $(cat "$scratch/err")"
[ "$(wc -l <"$scratch/out")" = 3 ] && ok || bad "text: want 3 lines: $(cat "$scratch/out")"
[ "$(head -1 "$scratch/out")" = "VM sap-db-01 (Standard_E16ds_v5)" ] && ok \
  || bad "text VM line: $(head -1 "$scratch/out")"
grep -q '^  under .*dm-8 \[sap-db-01-data0 P40, .*\] rated-iops result 0.*72 % of 22,500 expected' \
  "$scratch/out" && ok || bad "text line: $(sed -n 2p "$scratch/out")"
grep -q '^  burst .*\] rated-iops result ' "$scratch/out" && ok || bad "text burst line: $(cat "$scratch/out")"
[ -s "$scratch/err" ] && bad "stderr on success: $(cat "$scratch/err")" || ok
# --json has the VM's name and each result's profile too, as --server's.
out=$("$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/apps-burst.json" --json)
[ "$(jq -r '.verdicts[0].vm_name + " " + .verdicts[0].profile' <<<"$out")" = "sap-db-01 rated-iops" ] \
  && ok || bad "json vm_name/profile: $out"

# An inventory inside a report, with a VM size the caps table lacks: a note
# on stderr, the verdict still printed, exit 0.
out=$("$tierwise" compliance --inventory "$fx/report-unknown-vm-size.json" \
        --result "$fx/stripe-randread-under.json" --json 2>"$scratch/err"); st=$?
[ "$st" = 0 ] && ok || bad "report inventory: exit $st"
grep -q "Standard_NC6s_v3 is not in the VM caps table" "$scratch/err" && ok || bad "no note: $(cat "$scratch/err")"
# Not a silent null: the verdict's vm says the cap is unknown, and why.
jq -e '.verdicts[0].vm.size == "Standard_NC6s_v3" and .verdicts[0].vm.cap == null and
       (.verdicts[0].vm.why | test("not in the bundled caps table \\(1112 sizes\\)"))' \
  <<<"$out" >/dev/null && ok || bad "vm should say why: $(jq -c '.verdicts[0].vm' <<<"$out")"
# ... and so do the text (on the VM's line) and the CSV.
"$tierwise" compliance --inventory "$fx/report-unknown-vm-size.json" \
  --result "$fx/stripe-randread-under.json" 2>/dev/null >"$scratch/unk.txt"
grep -q '^VM sap-db-01 (Standard_NC6s_v3; uncached cap unknown: Standard_NC6s_v3 is not in the bundled caps table' \
  "$scratch/unk.txt" && ok || bad "text VM line: $(head -1 "$scratch/unk.txt")"
"$tierwise" compliance --inventory "$fx/report-unknown-vm-size.json" \
  --result "$fx/stripe-randread-under.json" --csv 2>/dev/null >"$scratch/unk.csv"
sed -n 2p "$scratch/unk.csv" | grep -q '^sap-db-01,Standard_NC6s_v3,,,"Standard_NC6s_v3 is not in' &&
  ok || bad "csv: $(sed -n 2p "$scratch/unk.csv")"
# A size the table knows: the cap and where it came from (the CSV's
# vm_cap_* fields, the JSON's vm.cap).
"$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/apps-burst.json" --csv |
  sed -n 2p | grep -q '^sap-db-01,Standard_E16ds_v5,25600,600,,' && ok || bad "csv with a cap"
"$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/apps-burst.json" --json |
  jq -e '.verdicts[0].vm | .cap.iops == 25600 and .cap.source == "bundled table" and .why == null' \
  >/dev/null && ok || bad "json vm with a cap"

# The built-in catalog works from any directory.
(cd / && "$tierwise" compliance --inventory "$fx/inventory.json" --result "$fx/apps-burst.json" \
   >/dev/null 2>&1) && ok || bad "fails outside the source tree"

# Bad input: exit 2, one message, nothing on stdout.
inv=(--inventory "$fx/inventory.json")
expect 2 "none of the target's disks (dm-3 over sdx, sdy)" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/unmatched-target.json"
expect 2 "member sdx of dm-9 matches no disk" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/partial-stripe.json"
expect 2 "none of the target's disks (sdz) is in the inventory" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/spare-unmapped.json"
expect 2 "no-method.json: method is missing" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/no-method.json"
expect 2 "unknown disk SKU \"Premium_XRS\"" -- \
  "$tierwise" compliance --inventory "$fx/inventory-unknown-sku.json" --result "$fx/apps-burst.json"
expect 2 "beyond the largest tier (E80, 32767 GiB)" -- \
  "$tierwise" compliance --inventory "$fx/inventory-too-large.json" --result "$fx/shared-cached.json"
expect 2 "inventory-truncated.json: not valid JSON" -- \
  "$tierwise" compliance --inventory "$fx/inventory-truncated.json" --result "$fx/apps-burst.json"
expect 2 "not a tier catalog" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/apps-burst.json" --catalog "$fx/inventory.json"
expect 2 "not a VM caps table" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/apps-burst.json" --vm-caps "$fx/apps-burst.json"
expect 2 "--vm-size Standard_X is not in the VM caps table" -- \
  "$tierwise" compliance "${inv[@]}" --result "$fx/apps-burst.json" --vm-size Standard_X
# A file that does not exist is bad input (2, like every command); one that
# exists but can't be read (here a folder) is a failed read (1).
expect 2 "can't open" -- \
  "$tierwise" compliance --inventory "$scratch/missing.json" --result "$fx/apps-burst.json"
expect 1 "Is a directory" -- "$tierwise" compliance "${inv[@]}" --result "$scratch"
: >"$scratch/empty.json"
expect 2 "empty.json is empty" -- \
  "$tierwise" compliance "${inv[@]}" --result "$scratch/empty.json"
expect 2 "at least one --result" -- "$tierwise" compliance "${inv[@]}"
expect 2 "unexpected argument" -- "$tierwise" compliance "${inv[@]}" "$fx/apps-burst.json"
# A bad result among good ones: nothing printed for any.
expect 2 "partial-stripe.json" -- "$tierwise" compliance "${inv[@]}" \
  --result "$fx/apps-burst.json" --result "$fx/partial-stripe.json"
if "$tierwise" compliance --bogus >/dev/null 2>&1; then bad "--bogus accepted"; else
  [ "$?" = 2 ] && ok || bad "--bogus: exit not 2"; fi

echo "compliance: $pass passed, $fail failed"
[ "$fail" = 0 ]

#!/usr/bin/env bash
# test-dashboard-vm.sh - the dashboard's VM cell of a verdict (web/app.js
# vmText) as node runs it: the VM's name and size, and when the API's
# vm.cap is null, "VM cap unknown" with the API's why; never a blank.
# Needs node (not installed by deploy/setup.sh): exits 77 without it.
set -u
command -v node >/dev/null || { echo "node is not installed: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-dash-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
cat >"$scratch/run.js" <<'JS'
'use strict';
const fs = require('fs');
const vm = require('vm');
// Just enough of a browser for app.js to load signed out.
const any = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.iterator ? function* () {} : any()),
  apply: () => any(),
  set: () => true,
});
const ctx = {
  document: { querySelector: () => any(), querySelectorAll: () => [], createElement: () => any() },
  sessionStorage: { getItem: () => null, setItem() {}, removeItem() {} },
  fetch: () => Promise.reject(new Error('no network')),
};
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.argv[2], 'utf8') + '\n;this.vmText = vmText;', ctx);
const cases = [
  [{ vm_name: 'db-1', vm: { size: 'Standard_NC6s_v3', cap: null,
     why: 'Standard_NC6s_v3 is not in the bundled caps table (1112 sizes)' } },
   'db-1 (Standard_NC6s_v3): VM cap unknown: Standard_NC6s_v3 is not in the bundled caps table (1112 sizes)'],
  [{ vm_name: 'db-2', vm: { size: null, cap: null, why: 'the inventory names no VM size' } },
   'db-2 (size unknown): VM cap unknown: the inventory names no VM size'],
  [{ vm_name: 'db-3', vm: { size: 'Standard_E16ds_v5', cap: { iops: 25600, mbps: 600, source: 'arm' } } },
   'db-3 (Standard_E16ds_v5)'],
  [{ vm_id: 7 }, 'VM 7 (size unknown): VM cap unknown: not given'],
];
let bad = 0;
for (const [v, want] of cases) {
  const got = ctx.vmText(v);
  if (got !== want) { console.log('FAIL: ' + JSON.stringify(v) + ' -> ' + got); bad++; }
  else console.log('ok: ' + got);
}
process.exit(bad ? 1 : 0);
JS
node "$scratch/run.js" "$TW_SOURCE_DIR/web/app.js" >"$scratch/out" 2>&1 && ok ||
  bad "vmText: $(cat "$scratch/out")"
grep -c '^ok: ' "$scratch/out" | grep -qx 4 && ok || bad "not every case ran: $(cat "$scratch/out")"
# The compliance table's VM cell (web/pages.js) is the one that shows it.
# The compliance table's VM cell (vmCell: the name, then the size and the
# cap's reason on a line of their own) says the same as vmText.
grep -q "vmCell(v)" "$TW_SOURCE_DIR/web/pages.js" && ok || bad "the VM cell does not use vmCell"
sed -n '/^function vmCell/,/^}/p' "$TW_SOURCE_DIR/web/app.js" | grep -q "VM cap unknown: ' + (vm.why || 'not given')" &&
  ok || bad "vmCell does not say why no VM cap applied"
finish dashboard-vm

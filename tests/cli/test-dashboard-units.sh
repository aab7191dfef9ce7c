#!/usr/bin/env bash
# test-dashboard-units.sh - the dashboard's helpers (web/app.js, charts.js,
# pages.js) as node runs them, with a fetch that answers from a table:
# apiAll follows next_cursor to the last page (the cursor passed back
# encoded, the rows of every page in order), api rejects with the API's
# message, status and code (and says so when an answer is not JSON); the
# schedule's windows from a plan (a downgrade to its upgrade, an upgrade
# first opens at the week's start, a downgrade last runs to its end); the
# week's Monday and the months back across a new year (UTC); an instant as
# text; a table cell holds a value as text, never as markup; a select keeps
# the value given; the SVG charts are SVG elements.  Needs node (not
# installed by deploy/setup.sh): exits 77 without it.
set -u
command -v node >/dev/null || { echo "node is not installed: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-dash-units-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
cat >"$scratch/run.js" <<'JS'
'use strict';
const fs = require('fs');
const vm = require('vm');
const web = process.argv[2];
const { makeDocument, Elem, Text } = require(process.env.TW_SOURCE_DIR + '/tests/helpers/dom-stub.js');
const document = makeDocument(web + '/index.html');
// fetch answers from ANSWERS by path: [status, body object or text].
let answers = {};
const asked = [];
const fetch = async (path) => {
  asked.push(path);
  const a = answers[path];
  if (!a) return { ok: false, status: 404, statusText: 'Not Found', json: async () => ({ error: { code: 'not_found', message: 'no ' + path } }) };
  const [status, body] = a;
  return { ok: status < 300, status, statusText: 'S' + status,
    json: async () => (typeof body === 'string' ? JSON.parse(body) : body) };
};
const store = new Map([['tierwise.token', 'tw_x']]);
const ctx = vm.createContext({ document, fetch, console, location: { hash: '' },
  window: { addEventListener() {} },
  sessionStorage: { getItem: (k) => store.get(k) || null, setItem: (k, v) => store.set(k, v), removeItem: (k) => store.delete(k) } });
for (const f of ['app.js', 'charts.js', 'pages.js'])
  vm.runInContext(fs.readFileSync(web + '/' + f, 'utf8'), ctx, { filename: f });
const g = (expr) => vm.runInContext(expr, ctx);

let bad = 0, good = 0;
const eq = (what, got, want) => {
  const a = JSON.stringify(got), b = JSON.stringify(want);
  if (a === b) { good++; console.log('ok: ' + what); } else { bad++; console.log('FAIL: ' + what + ': ' + a + ' != ' + b); }
};

(async () => {
  // Pagination: three pages, a cursor that needs encoding.
  answers = {
    '/api/v1/actions?limit=2': [200, { actions: [{ id: 1 }, { id: 2 }], next_cursor: 'a b/2' }],
    '/api/v1/actions?limit=2&cursor=a%20b%2F2': [200, { actions: [{ id: 3 }, { id: 4 }], next_cursor: 'c4' }],
    '/api/v1/actions?limit=2&cursor=c4': [200, { actions: [{ id: 5 }], next_cursor: null }],
  };
  const all = await g('apiAll')('/api/v1/actions?limit=2', 'actions');
  eq('apiAll: every page\'s rows, in order', all.rows.map((r) => r.id), [1, 2, 3, 4, 5]);
  eq('apiAll: three pages asked, the cursor passed back', asked, Object.keys(answers));
  answers = { '/api/v1/vms': [200, { vms: [{ id: 9 }] }] }; // no next_cursor at all: one page
  eq('apiAll: an answer without next_cursor is the last page', (await g('apiAll')('/api/v1/vms', 'vms')).rows.length, 1);

  // Errors: the API's words, status and code; an answer that is not JSON.
  answers = { '/x': [422, { error: { code: 'no_price_book', message: 'no price book for westeurope' } }], '/y': [200, '{not json'] };
  let e = await g('api')('/x').catch((x) => x);
  eq('api: the error is the API\'s', [e.message, e.status, e.code], ['no price book for westeurope', 422, 'no_price_book']);
  e = await g('api')('/y').catch((x) => x);
  eq('api: an answer that is not JSON is an error naming the path', e.message, 'the answer of /y is not JSON');

  // The schedule's windows.
  const F = Date.parse('2026-11-30T00:00:00Z'), T = Date.parse('2026-12-07T00:00:00Z');
  const plan = [
    { vm_id: 1, disk_id: 2, disk: 'd2', kind: 'upgrade', due_at: '2026-11-30T04:30:00Z' },
    { vm_id: 1, disk_id: 2, disk: 'd2', kind: 'downgrade', due_at: '2026-12-04T19:10:00Z' },
    { vm_id: 3, disk_id: 4, disk: 'd4', kind: 'downgrade', due_at: '2026-12-01T19:10:00Z' },
    { vm_id: 3, disk_id: 4, disk: 'd4', kind: 'upgrade', due_at: '2026-12-02T04:30:00Z' },
  ];
  eq('planWindows: open at the start, still open at the end, and a whole one',
    g('planWindows')(plan, F, T).map((w) => [w.vm_id, w.disk, new Date(w.from).toISOString(), new Date(w.to).toISOString()]),
    [[1, 'd2', '2026-11-30T00:00:00.000Z', '2026-11-30T04:30:00.000Z'], [1, 'd2', '2026-12-04T19:10:00.000Z', '2026-12-07T00:00:00.000Z'],
      [3, 'd4', '2026-12-01T19:10:00.000Z', '2026-12-02T04:30:00.000Z']]);

  // Weeks and months, UTC.
  eq('mondayUtc: a Sunday late in the day is in the week of the Monday before',
    g('mondayUtc')(new Date('2026-12-06T23:59:00Z'), 0).toISOString(), '2026-11-30T00:00:00.000Z');
  eq('mondayUtc: a Monday is its own week; next week is 7 days on',
    [g('mondayUtc')(new Date('2026-11-30T00:00:00Z'), 0).toISOString(), g('mondayUtc')(new Date('2026-11-30T10:00:00Z'), 1).toISOString()],
    ['2026-11-30T00:00:00.000Z', '2026-12-07T00:00:00.000Z']);
  eq('utcMonth: six months back across the new year',
    [0, 1, 2, 3, 4, 5].map((i) => g('utcMonth')(new Date('2027-02-01T00:30:00Z'), i)),
    ['2027-02', '2027-01', '2026-12', '2026-11', '2026-10', '2026-09']);
  eq('when: an instant as text in UTC, one line', g('when')('2026-12-01T20:25:38.822Z'), '2026-12-01\u00a020:25\u00a0UTC');
  eq('when: none is a dash', g('when')(null), '-');

  // A cell's value is text, never markup; rows carry data-id.
  const t = g('table')('t1', ['A', 'B'], [{ id: 7, a: '<img src=x onerror=alert(1)>' }], (r) => [r.a, { v: '5', cls: 'num' }], (r) => r.id, 'none');
  const tr = t.querySelector('tbody tr');
  eq('table: a row per item with its data-id', [tr.getAttribute('data-id'), t.querySelectorAll('tbody tr[data-id]').length], ['7', 1]);
  const td = tr.children[0];
  eq('table: markup in a value stays text', [td.children.length, td.children[0] instanceof Text, td.textContent, td.querySelectorAll('img').length],
    [1, true, '<img src=x onerror=alert(1)>', 0]);
  const empty = g('table')('t2', ['A'], [], () => [], null, 'nothing here');
  eq('table: no row says so, without a data-id', [empty.querySelectorAll('tr[data-id]').length, empty.querySelector('tbody').textContent], [0, 'nothing here']);

  // A select keeps the value given.
  const lab = g('select')('f1', 'Verdict', [{ value: 'all', label: 'all' }, { value: 'under', label: 'under' }], 'under', () => {});
  eq('select: the value given is selected', lab.querySelector('select').value, 'under');

  // The charts are SVG, built with createElementNS.
  const svg = g('barChart')('t', [{ label: 'a', value: 2, text: '2' }, { label: 'b', value: 1, text: '1' }]);
  eq('barChart: an svg element in the SVG namespace with a bar per row',
    [svg.tagName, svg.ns, svg.querySelectorAll('rect').length], ['SVG', 'http://www.w3.org/2000/svg', 2]);
  const tc = g('timeChart')('IOPS', [{ t: 1, v: 5, series: 'a' }, { t: 2, v: 6, series: 'a' }, { t: 3, v: 1, series: 'b' }], 'IOPS');
  eq('timeChart: a line per series of more than one point, a dot per point',
    [tc.querySelectorAll('polyline').length, tc.querySelectorAll('circle').length], [1, 3 + 2]);

  console.log(good + ' ok, ' + bad + ' failed');
  process.exit(bad ? 1 : 0);
})().catch((x) => { console.log('FAIL: crash: ' + (x.stack || x)); process.exit(1); });
JS
node "$scratch/run.js" "$TW_SOURCE_DIR/web" >"$scratch/out" 2>&1 && ok || bad "the dashboard's helpers: $(cat "$scratch/out")"
grep -q '^[1-9][0-9]* ok, 0 failed$' "$scratch/out" && ok || bad "not every case ran: $(cat "$scratch/out")"
finish dashboard-units

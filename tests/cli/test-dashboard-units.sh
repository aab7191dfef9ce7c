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
# the value given; the SVG charts are SVG elements.  The pages: the disk
# page asks its months one after another, only from its first SKU history
# month on, asks again after Retry-After on 503 busy and says "not in the
# fleet that month" for a month before it, an empty report and a 404; the
# Disk heading is reset when the disk cannot be read; a table scrolls in its
# own box and a VM's size is on its own line; one disk that cannot be read
# leaves the compliance table drawn with "latency unavailable" on its row,
# and disks past the first 100 say "see the disk page"; a region without a
# price says so; the fleet page's month from the hash (#fleet-month); the
# focus on a new page's heading, and on the filter that redrew its page;
# the actions' VM filter by id, with the resource group when names repeat.
# Needs node (not installed by deploy/setup.sh): exits 77 without it.
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
// A function as the answer is called with the path (and may answer
// differently each time); [status, body, headers].
let answers = {};
const asked = [];
let inFlight = 0, maxInFlight = 0;
const fetch = async (path) => {
  asked.push(path);
  inFlight++; maxInFlight = Math.max(maxInFlight, inFlight);
  await new Promise((r) => setTimeout(r, 2));
  inFlight--;
  let a = answers[path];
  if (typeof a === 'function') a = a(path);
  if (!a) return { ok: false, status: 404, statusText: 'Not Found', headers: { get: () => null },
    json: async () => ({ error: { code: 'not_found', message: 'no ' + path } }) };
  const [status, body, headers] = a;
  return { ok: status < 300, status, statusText: 'S' + status, headers: { get: (k) => (headers || {})[k] || null },
    json: async () => (typeof body === 'string' ? JSON.parse(body) : body) };
};
const store = new Map([['tierwise.token', 'tw_x']]);
const ctx = vm.createContext({ document, fetch, console, setTimeout, location: { hash: '' },
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

  // ---- the pages
  const now = new Date();
  const M = (i) => g('utcMonth')(now, i);
  const diskBody = (id, name, first) => ({ id, name, vm_id: 1, vm_name: 'vm-a', role: 'data', sku: 'Premium_LRS', tier: 'P10',
    size_gib: 128, caching: 'None', sku_history: first ? [{ observed_at: first, sku: 'Premium_LRS', tier: 'P10', size_gib: 128 }] : [],
    results: [], verdicts: [] });
  const report = (rows) => ({ currency: 'USD', partial: false, disks: rows });
  const costRow = { priced: true, cost: '9.50', baseline: '12.00', realised: '2.50', possible_known: true, possible: '1.00',
    hours_by_sku: [{ sku: 'Premium_LRS', tier: 'P10', hours: 720 }] };
  const costsAsked = () => asked.filter((p) => p.startsWith('/api/v1/reports/monthly'));
  const cellsOf = (box, sel) => box.querySelectorAll(sel + ' tbody tr').map((tr) => tr.children.map((c) => c.textContent));
  const routeTo = async (hash) => { g('location').hash = hash; await g('route')(); };
  const pageOf = (name) => g('document').querySelector('#page-' + name);

  // The disk page: first SKU row three months ago; that month answers 503
  // busy once (Retry-After 0), the month after an empty report, the next a
  // 404, this month and last month a row.
  {
    const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3, 15, 12)).toISOString();
    let busy = 0;
    const q = (m) => '/api/v1/reports/monthly?month=' + m + '&disk=5&format=json';
    answers = {
      '/api/v1/disks/5': [200, diskBody(5, 'data-5', first)],
      [q(M(3))]: () => (busy++ === 0 ? [503, { error: { code: 'busy', message: '2 monthly reports are being built already' } }, { 'Retry-After': '0' }]
        : [200, report([costRow])]),
      [q(M(2))]: [200, report([])],
      [q(M(0))]: [200, report([costRow])],
      [q(M(1))]: [200, report([costRow])],
    };
    asked.length = 0; maxInFlight = 0;
    await routeTo('#/disk/5');
    const sec = pageOf('disk');
    eq('disk: the months from its first SKU row on are asked, one at a time, the busy one again',
      [costsAsked(), maxInFlight], [[q(M(0)), q(M(1)), q(M(2)), q(M(3)), q(M(3))], 1]);
    const rows = cellsOf(sec, '#disk-costs');
    eq('disk: six months; before the disk, an empty report and a 404 are "not in the fleet that month"',
      rows.map((r) => [r[0], r[1], r[2]]),
      [[M(0), 'Premium_LRS P10 720 h', '9.50 USD'], [M(1), 'Premium_LRS P10 720 h', '9.50 USD'],
        [M(2), 'not in the fleet that month', '-'], [M(3), 'Premium_LRS P10 720 h', '9.50 USD'],
        [M(4), 'not in the fleet that month', '-'], [M(5), 'not in the fleet that month', '-']]);
    eq('disk: ready, the heading its name, the focus on it',
      [sec.getAttribute('data-ready'), sec.querySelector('h2').textContent, g('document').activeElement === sec.querySelector('h2')],
      ['1', 'Disk data-5', true]);
    eq('disk: the Month cells stay on one line (class t)', sec.querySelectorAll('#disk-costs tbody td.t').length, 6);
    // A 404 of the cost route for a month it was asked: also not in the fleet.
    answers[q(M(1))] = [404, { error: { code: 'not_found', message: 'no disk 5 in ' + M(1) } }];
    await routeTo('#/disk/5?');
    await routeTo('#/disk/5');
    eq('disk: a 404 not_found month is "not in the fleet that month"', cellsOf(pageOf('disk'), '#disk-costs')[1][1], 'not in the fleet that month');

    // Another disk that cannot be read: the heading no longer names data-5.
    answers = { '/api/v1/disks/6': [500, { error: { code: 'internal', message: 'the store failed' } }] };
    asked.length = 0;
    await routeTo('#/disk/6');
    eq('disk: on an error the heading is reset, the error shown, no month asked',
      [pageOf('disk').querySelector('h2').textContent, pageOf('disk').querySelector('.error').textContent, costsAsked().length],
      ['Disk', 'Disk 6: the store failed', 0]);
    eq('disk: no SKU history: every month asked', g('costMonths')(now, null).filter((x) => x.ask).length, 6);
  }

  // Tables scroll in their own box; a VM's size is on its own line.
  {
    const t = g('table')('t3', ['A'], [{ a: 1 }], (r) => [String(r.a)], null, '');
    eq('table: in a .table-wrap box', [t.getAttribute('class'), t.querySelector('table').id], ['table-wrap', 't3']);
    const c = g('vmCell')({ vm_id: 3, vm_name: 'vm-with-a-long-name', vm: { size: 'Standard_E16ds_v5', cap: { iops: 1 } } });
    eq('vmCell: the name a link, the size a line of its own', [c[0].tagName, c[0].textContent, c[1].getAttribute('class'), c[1].textContent],
      ['A', 'vm-with-a-long-name', 'sub', 'Standard_E16ds_v5']);
  }

  // The compliance page: 102 disks with verdicts, the disk 2 cannot be read.
  {
    const disks = [], verdicts = [];
    answers = {};
    for (let i = 1; i <= 102; i++) {
      disks.push({ id: i, vm_id: 100 + i, name: 'd' + i });
      verdicts.push({ vm_id: 100 + i, vm_name: 'v' + i, disks: ['d' + i], verdict: 'delivers', result_id: 'r' + i, target: 'd' + i,
        judged: 'iops', measured: { iops: 500 }, expected: { iops: 500 }, profile: 'rand', reason: 'ok', vm: { size: 'S', cap: {} } });
      answers['/api/v1/disks/' + i] = [200, { id: i, results: [{ id: 'r' + i, read: { lat_ns: { percentiles: { p50: 1e6, p99: 2e6 } } } }] }];
    }
    answers['/api/v1/disks/2'] = [500, { error: { code: 'internal', message: 'database is locked' } }];
    answers['/api/v1/compliance?limit=5000'] = [200, { verdicts }];
    answers['/api/v1/disks?limit=5000'] = [200, { disks }];
    await routeTo('#/compliance');
    const sec = pageOf('compliance');
    const rows = cellsOf(sec, '#compliance-table');
    eq('compliance: one disk failing leaves the table drawn, that row says why',
      [sec.getAttribute('data-ready'), rows.length, rows[1][6], rows[0][6].startsWith('read p50 1 ms')],
      ['1', 102, 'latency unavailable: database is locked', true]);
    eq('compliance: disks past the first 100 say "see the disk page"', [rows[100][6], rows[101][6]], ['see the disk page', 'see the disk page']);
  }

  // The prices page: a region whose book has no price.
  {
    answers = {
      '/api/v1/vms?limit=5000': [200, { vms: [{ id: 1, location: 'westeurope' }, { id: 2, location: 'brazilsouth' }] }],
      '/api/v1/prices?region=westeurope': [200, { region: 'westeurope', currency: 'USD', source: 'snapshot', fetched_at: null,
        prices: [{ tier: 'P10', sku: 'Premium_LRS', redundancy: 'LRS', per_month: '19.71' }] }],
      '/api/v1/prices?region=brazilsouth': [200, { region: 'brazilsouth', currency: 'USD', source: 'snapshot', fetched_at: null, prices: [] }],
    };
    await routeTo('#/prices');
    const sec = pageOf('prices');
    eq('prices: a region without a price says the report leaves its disks out',
      [sec.querySelectorAll('.warn').map((e) => e.textContent), sec.querySelectorAll('#prices-table tr[data-id]').length],
      [['no price for brazilsouth: the report leaves its disks out'], 1]);
  }

  // The fleet page's month: from the hash, in #fleet-month.
  {
    const rep = { currency: 'USD', group_by: 'subscription', partial: false, period: {}, groups: [], disks: [],
      totals: { cost: '10.00', baseline: '12.00', realised: '2.00', possible: '1.00', disks: 1, vms: 1, under: 0, switches: 2,
        downgraded_hours: 5, drift_hours: 0, unpriced: 0 } };
    answers = {
      ['/api/v1/reports/monthly?month=' + M(1) + '&format=json']: [200, rep],
      '/api/v1/compliance/summary': [200, { vms: 0, verdicts: 0, by_sku: [] }],
      '/api/v1/disks?limit=5000': [200, { disks: [] }],
    };
    asked.length = 0;
    await routeTo('#/fleet/' + M(1));
    const sec = pageOf('fleet');
    const s = sec.querySelector('#fleet-month');
    eq('fleet: the month in the hash is read and selected, its figures shown',
      [costsAsked(), s.value, s.children.length, s.children[0].getAttribute('value'), sec.querySelector('[data-figure=realised]').textContent],
      [['/api/v1/reports/monthly?month=' + M(1) + '&format=json'], M(1), 13, M(0), '2.00 USD']);
    s.value = M(2); s.handlers.change();
    eq('fleet: choosing a month puts it in the hash', g('location').hash, '#/fleet/' + M(2));
    eq('fleet: the focus on the heading of a new page', g('document').activeElement === sec.querySelector('h2'), true);
    answers['/api/v1/reports/monthly?month=' + M(2) + '&format=json'] = [200, rep];
    sec.querySelector('#fleet-month').focus();
    await g('route')();
    eq('fleet: the month redrawn, the focus stays on #fleet-month',
      [g('document').activeElement.id, pageOf('fleet').querySelector('#fleet-month').value], ['fleet-month', M(2)]);
  }

  // The actions' VM filter: two VMs named alike, by id.
  {
    const rg = (r) => '/subscriptions/s/resourceGroups/' + r + '/providers/Microsoft.Compute/virtualMachines/web';
    const acts = [
      { id: 1, vm_id: 7, vm: 'web', vm_resource_id: rg('rg-prod'), state: 'done', kind: 'downgrade', attempts: 1 },
      { id: 2, vm_id: 8, vm: 'web', vm_resource_id: rg('rg-test'), state: 'done', kind: 'downgrade', attempts: 1 },
      { id: 3, vm_id: 8, vm: 'web', vm_resource_id: rg('rg-test'), state: 'failed', kind: 'upgrade', attempts: 1 },
      { id: 4, vm_id: 9, vm: 'db', vm_resource_id: rg('rg-prod'), state: 'done', kind: 'upgrade', attempts: 1 },
    ];
    answers = { '/api/v1/actions?limit=5000': [200, { actions: acts }] };
    await routeTo('#/actions');
    const sec = pageOf('actions');
    const s = sec.querySelector('#actions-vm');
    eq('actions: a VM option per id, "name (resource group)" when names repeat',
      s.children.map((o) => [o.getAttribute('value'), o.textContent]),
      [['all', 'all'], ['9', 'db'], ['7', 'web (rg-prod)'], ['8', 'web (rg-test)']]);
    s.value = '8'; s.handlers.change();
    eq('actions: the filter keeps that VM\'s actions only', sec.querySelectorAll('#actions-table tr[data-id]').map((tr) => tr.getAttribute('data-id')),
      ['2', '3']);
  }

  console.log(good + ' ok, ' + bad + ' failed');
  process.exit(bad ? 1 : 0);
})().catch((x) => { console.log('FAIL: crash: ' + (x.stack || x)); process.exit(1); });
JS
node "$scratch/run.js" "$TW_SOURCE_DIR/web" >"$scratch/out" 2>&1 && ok || bad "the dashboard's helpers: $(cat "$scratch/out")"
grep -q '^[1-9][0-9]* ok, 0 failed$' "$scratch/out" && ok || bad "not every case ran: $(cat "$scratch/out")"
finish dashboard-units

// tierwise dashboard: reads /api/v1 with a reader token kept in
// sessionStorage (this tab only). No framework, no build step, no CDN.
'use strict';

const KEY = 'tierwise.token';
const $ = (sel) => document.querySelector(sel);

function token() { return sessionStorage.getItem(KEY); }

// GET an API path; rejects with a message (the API's error text when given).
async function api(path) {
  const r = await fetch(path, {
    headers: { 'Authorization': 'Bearer ' + token(), 'Accept': 'application/json' },
    cache: 'no-store',
  });
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) {
    const msg = body && body.error ? body.error.message : r.status + ' ' + r.statusText;
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return body;
}

// A table cell with text (never HTML: values come from agents).
function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined || text === '' ? '-' : String(text);
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function fmt(n, unit) {
  if (n === null || n === undefined) return '-';
  const v = Number(n);
  const s = v >= 100 ? Math.round(v).toLocaleString() : v.toFixed(1);
  return unit ? s + ' ' + unit : s;
}

function figure(pair, judged) {
  if (!pair) return '-';
  return judged === 'mbps' ? fmt(pair.mbps, 'MB/s') : fmt(pair.iops, 'IOPS');
}

// The verdict's VM cell: its name and size, and when no uncached cap of
// the VM applied (vm.cap null), that and why; never a silent blank.
function vmText(v) {
  const vm = v.vm || {};
  const name = (v.vm_name || 'VM ' + (v.vm_id === undefined ? '?' : v.vm_id)) +
    ' (' + (vm.size || 'size unknown') + ')';
  if (vm.cap) return name;
  return name + ': VM cap unknown: ' + (vm.why || 'not given');
}

function verdictCell(tr, v) {
  cell(tr, v, 'verdict v-' + v);
}

function fill(id, rows, render) {
  const tbody = $(id + ' tbody');
  tbody.textContent = '';
  for (const row of rows) {
    const tr = document.createElement('tr');
    render(tr, row);
    tbody.appendChild(tr);
  }
  if (!rows.length) {
    const tr = document.createElement('tr');
    const td = cell(tr, 'nothing reported yet');
    td.colSpan = $(id + ' thead tr').children.length;
    tbody.appendChild(tr);
  }
}

async function loadCompliance() {
  const c = await api('/api/v1/compliance');
  const counts = {};
  for (const v of c.verdicts) counts[v.verdict] = (counts[v.verdict] || 0) + 1;
  $('#compliance-summary').textContent = c.vms + ' VMs, ' + c.verdicts.length + ' verdicts' +
    Object.keys(counts).map((k) => ', ' + counts[k] + ' ' + k).join('');
  fill('#compliance-table', c.verdicts, (tr, v) => {
    verdictCell(tr, v.verdict);
    const vmTd = cell(tr, vmText(v));
    if (v.vm && v.vm.cap)
      vmTd.title = 'uncached cap ' + fmt(v.vm.cap.iops, 'IOPS') + ', ' +
        fmt(v.vm.cap.mbps, 'MB/s') + ' (' + v.vm.cap.source + ')';
    cell(tr, (v.disks || []).map((d) => (typeof d === 'string' ? d : d.name)).join(', '));
    cell(tr, v.profile);
    cell(tr, v.judged);
    cell(tr, figure(v.measured, v.judged), 'num');
    cell(tr, figure(v.expected, v.judged), 'num');
    cell(tr, v.reason);
  });
  const box = $('#compliance-errors');
  box.textContent = '';
  for (const e of c.errors) {
    const p = document.createElement('p');
    p.className = 'error';
    // A VM whose stored report can't be read has no name or result here.
    p.textContent = (e.vm_name || 'VM ' + e.vm_id) +
      (e.result_id ? ', result ' + e.result_id : '') + ': ' + e.message;
    box.appendChild(p);
  }
}

async function loadVms() {
  const r = await api('/api/v1/vms');
  fill('#vms-table', r.vms, (tr, vm) => {
    cell(tr, vm.name);
    cell(tr, vm.vm_size);
    cell(tr, vm.location);
    cell(tr, vm.resource_group);
    cell(tr, vm.power_state);
    cell(tr, vm.disks, 'num');
    cell(tr, vm.last_report_at);
  });
}

async function loadDisks() {
  const r = await api('/api/v1/disks');
  fill('#disks-table', r.disks, (tr, d) => {
    cell(tr, d.vm_name);
    cell(tr, d.name);
    cell(tr, d.lun, 'num');
    cell(tr, d.sku);
    cell(tr, d.tier);
    cell(tr, d.size_gib === null || d.size_gib === undefined ? null : d.size_gib + ' GiB', 'num');
    cell(tr, d.caching);
    cell(tr, d.device);
    cell(tr, (d.verdicts || []).map((v) => v.verdict + (v.profile ? ' (' + v.profile + ')' : ''))
      .join(', '));
  });
}

// The price book of each region the VMs are in (USD), and where it comes
// from: prices refreshed from the Retail Prices API, or the bundled snapshot.
async function loadPrices() {
  const r = await api('/api/v1/vms');
  const regions = [...new Set(r.vms.map((vm) => vm.location).filter(Boolean))].sort();
  const rows = [];
  const box = $('#prices-sources');
  box.textContent = '';
  for (const region of regions) {
    const p = document.createElement('p');
    box.appendChild(p);
    try {
      const book = await api('/api/v1/prices?region=' + encodeURIComponent(region));
      p.textContent = book.region + ' (' + book.currency + '): ' + book.source +
        ', fetched ' + book.fetched_at;
      for (const x of book.prices) rows.push(Object.assign({ currency: book.currency,
        region: book.region }, x));
    } catch (e) {
      p.className = 'error';
      p.textContent = region + ': ' + e.message;
    }
  }
  fill('#prices-table', rows, (tr, x) => {
    cell(tr, x.region);
    cell(tr, x.tier);
    cell(tr, x.sku);
    cell(tr, x.redundancy);
    cell(tr, x.per_month === null || x.per_month === undefined ? null
      : x.per_month + ' ' + x.currency, 'num');
    cell(tr, x.per_10k_transactions === null || x.per_10k_transactions === undefined ? null
      : x.per_10k_transactions + ' ' + x.currency, 'num');
  });
}

const loaders = { compliance: loadCompliance, vms: loadVms, disks: loadDisks,
  prices: loadPrices };
let current = 'compliance';

async function show(tab) {
  current = tab;
  for (const b of document.querySelectorAll('nav button[data-tab]'))
    b.classList.toggle('active', b.dataset.tab === tab);
  for (const s of document.querySelectorAll('.tab'))
    s.hidden = s.id !== 'tab-' + tab;
  $('#main-error').textContent = '';
  $('#status').textContent = 'loading...';
  try {
    await loaders[tab]();
    $('#status').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e.status === 401) { logout('The token was refused: ' + e.message); return; }
    if (e.status === 403) { logout(AGENT_TOKEN); return; }
    $('#status').textContent = '';
    $('#main-error').textContent = e.message;
  }
}

function logout(message) {
  sessionStorage.removeItem(KEY);
  $('#main').hidden = true;
  $('#logout').hidden = true;
  $('#login').hidden = false;
  $('#login-error').textContent = message || '';
  $('#status').textContent = '';
}

function start() {
  $('#login').hidden = true;
  $('#main').hidden = false;
  $('#logout').hidden = false;
  show(current);
}

const AGENT_TOKEN = 'This is an agent token: it may only post reports. Sign in with a ' +
  'reader token (tierwise token create --db FILE --role reader).';

// Whether token T may read the API, by asking a reader route for one VM:
// null when it may, else what to tell the user. An agent token is a valid
// token (the server answers 403, not 401): kept, it would sign in and then
// fail on every tab.
async function checkToken(t) {
  let r;
  try {
    r = await fetch('/api/v1/vms?limit=1', {
      headers: { 'Authorization': 'Bearer ' + t, 'Accept': 'application/json' },
      cache: 'no-store',
    });
  } catch (e) {
    return 'The server could not be reached to check the token: ' + e.message;
  }
  if (r.ok) return null;
  let msg = r.status + ' ' + r.statusText;
  try {
    const body = await r.json();
    if (body && body.error && body.error.message) msg = body.error.message;
  } catch (e) { /* not JSON: the status says it */ }
  if (r.status === 403) return AGENT_TOKEN;
  if (r.status === 401) return 'The token was refused: ' + msg;
  return 'The token could not be checked: ' + msg;
}

$('#login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const t = $('#token').value.trim();
  if (!t) return;
  $('#login-error').textContent = 'checking the token...';
  const refused = await checkToken(t);
  if (refused) {
    $('#login-error').textContent = refused;
    return;
  }
  $('#login-error').textContent = '';
  sessionStorage.setItem(KEY, t);
  $('#token').value = '';
  start();
});
$('#logout').addEventListener('click', () => logout());
$('#refresh').addEventListener('click', () => show(current));
for (const b of document.querySelectorAll('nav button[data-tab]'))
  b.addEventListener('click', () => show(b.dataset.tab));

if (token()) start(); else logout();

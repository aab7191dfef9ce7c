// tierwise dashboard, part 1: the API, the sign-in, the router and the
// small DOM helpers every page uses.  Reads /api/v1 with a reader token
// kept in sessionStorage (this tab only).  No framework, no build step, no
// CDN; values are inserted as text, never HTML.
// Then charts.js (SVG), pages.js (the pages) and start.js (the start).
'use strict';

const KEY = 'tierwise.token';
const $ = (sel, root) => (root || document).querySelector(sel);
const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

function token() { return sessionStorage.getItem(KEY); }

const AGENT_TOKEN = 'This is an agent token: it may only post reports. Sign in with a ' +
  'reader token (tierwise token create --db FILE --role reader).';

// An element: PROPS maps attributes ('text' the text, 'class' the class,
// 'on<event>' a handler), KIDS are elements or strings (text nodes).
function el(tag, props, ...kids) {
  const e = document.createElement(tag);
  setProps(e, props);
  append(e, kids);
  return e;
}

function setProps(e, props) {
  if (!props) return;
  for (const k of Object.keys(props)) {
    const v = props[k];
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k === 'class') e.setAttribute('class', v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(e, kids) {
  for (const k of kids.flat(3)) {
    if (k === null || k === undefined || k === false) continue;
    e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
  }
  return e;
}

// An API error as the page shows it: role=alert, the server's words.
function errorBox(message) {
  return el('p', { class: 'error', role: 'alert', text: message });
}

// GET an API path; rejects with an Error carrying the API's message, its
// status and its error code.
async function api(path) {
  let r;
  try {
    r = await fetch(path, {
      headers: { 'Authorization': 'Bearer ' + token(), 'Accept': 'application/json' },
      cache: 'no-store',
    });
  } catch (e) {
    const err = new Error('the server could not be reached (' + path + '): ' + e.message);
    err.status = 0;
    throw err;
  }
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (!r.ok) {
    const msg = body && body.error && body.error.message ? body.error.message
      : r.status + ' ' + r.statusText + ' (' + path + ')';
    const err = new Error(msg);
    err.status = r.status;
    err.code = body && body.error ? body.error.code : null;
    const ra = r.headers && r.headers.get ? Number(r.headers.get('Retry-After')) : NaN;
    err.retryAfter = Number.isFinite(ra) && ra >= 0 ? ra : null;
    throw err;
  }
  if (body === null) {
    const err = new Error('the answer of ' + path + ' is not JSON');
    err.status = r.status;
    throw err;
  }
  return body;
}

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// api(PATH), asked once more after the server's Retry-After (at most 10 s)
// when it answers 503 busy (it builds only a few monthly reports at once).
async function apiRetry(path) {
  try {
    return await api(path);
  } catch (e) {
    if (e.status !== 503 || e.code !== 'busy') throw e;
    await sleep(1000 * Math.min(e.retryAfter === null || e.retryAfter === undefined ? 5 : e.retryAfter, 10));
    return api(path);
  }
}

// Every page of a paged list (next_cursor followed to the end): the rows
// of KEY of all pages, and the pages themselves (for their other fields).
async function apiAll(path, key) {
  const rows = [], pages = [];
  let cursor = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(cursor === null ? path : path + sep + 'cursor=' + encodeURIComponent(cursor));
    pages.push(page);
    for (const r of page[key] || []) rows.push(r);
    cursor = page.next_cursor === undefined ? null : page.next_cursor;
    if (pages.length > 10000) throw new Error(path + ': more than 10,000 pages, stopped');
  } while (cursor !== null);
  return { rows, pages };
}

// Promise.allSettled's outcome, but a 401 or 403 ends the page (signs out).
function settled(outcome) {
  if (outcome.status === 'fulfilled') return { ok: true, value: outcome.value };
  const e = outcome.reason;
  if (e && (e.status === 401 || e.status === 403)) throw e;
  return { ok: false, error: e };
}

// Text helpers.
function dash(v) { return v === null || v === undefined || v === '' ? '-' : String(v); }
function num(v, digits) {
  if (v === null || v === undefined || Number.isNaN(Number(v))) return '-';
  const n = Number(v);
  return n.toLocaleString('en-US', { maximumFractionDigits: digits === undefined ? 1 : digits });
}
function money(dec, cur) { return dec === null || dec === undefined ? '-' : dec + ' ' + (cur || ''); }
// An RFC 3339 instant as "2026-12-01 20:25 UTC".
function when(t) {
  if (!t) return '-';
  const d = new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  return d.toISOString().slice(0, 10) + '\u00a0' + d.toISOString().slice(11, 16) + '\u00a0UTC';
}
function utcMonth(d, back) {
  const x = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - (back || 0), 1));
  return x.getUTCFullYear() + '-' + String(x.getUTCMonth() + 1).padStart(2, '0');
}

// The verdict's VM: its name and size, and when no uncached cap of the VM
// applied (vm.cap null), that and why; never a silent blank.
function vmText(v) {
  const vm = v.vm || {};
  const name = (v.vm_name || 'VM ' + (v.vm_id === undefined ? '?' : v.vm_id)) +
    ' (' + (vm.size || 'size unknown') + ')';
  if (vm.cap) return name;
  return name + ': VM cap unknown: ' + (vm.why || 'not given');
}

// The same as cells: the name (a link to the VM when it has an id), then
// the size and, when no cap applied, why, on a line of their own.
function vmCell(v) {
  const vm = v.vm || {};
  const name = v.vm_name || 'VM ' + (v.vm_id === undefined || v.vm_id === null ? '?' : v.vm_id);
  return [v.vm_id === null || v.vm_id === undefined ? name : el('a', { href: '#/vm/' + encodeURIComponent(v.vm_id), text: name }),
    el('div', { class: 'sub', text: (vm.size || 'size unknown') + (vm.cap ? '' : ': VM cap unknown: ' + (vm.why || 'not given')) })];
}

// Links between the pages.
function vmLink(id, name) {
  if (id === null || id === undefined) return document.createTextNode(dash(name));
  return el('a', { href: '#/vm/' + encodeURIComponent(id), text: dash(name) });
}
function diskLink(id, name) {
  if (id === null || id === undefined) return document.createTextNode(dash(name));
  return el('a', { href: '#/disk/' + encodeURIComponent(id), text: dash(name) });
}
function policyLink(name) {
  if (!name) return document.createTextNode('-');
  return el('a', { href: '#/savings/' + encodeURIComponent(name), text: name });
}

// A table: HEADS the column titles, ROWS drawn by RENDER(row) into an
// array of cells (strings, nodes or {v, cls}); each data row a
// <tr data-id=ID(row)>; EMPTY the sentence when there is no row.
function table(id, heads, rows, render, idOf, empty) {
  const tbody = el('tbody');
  const t = el('table', { id }, el('thead', null, el('tr', null, heads.map((h) => el('th', { scope: 'col', text: h })))), tbody);
  fillRows(tbody, heads.length, rows, render, idOf, empty);
  return wide(t);
}

// A table in a box that scrolls sideways when the table is wider than the
// screen (the page itself never does).
function wide(t) { return el('div', { class: 'table-wrap' }, t); }

function fillRows(tbody, ncols, rows, render, idOf, empty) {
  tbody.textContent = '';
  for (const row of rows) {
    const tr = el('tr', { 'data-id': idOf ? idOf(row) : null });
    for (const c of render(row, tr)) {
      if (c && typeof c === 'object' && 'v' in c)
        tr.appendChild(el('td', { class: c.cls || null }, c.v === null || c.v === undefined ? '-' : c.v));
      else // an instant (when()) stays on one line
        tr.appendChild(el('td', { class: typeof c === 'string' && /^\d{4}-\d\d-\d\d\u00a0/.test(c) ? 't' : null },
          c === null || c === undefined || c === '' ? '-' : c));
    }
    tbody.appendChild(tr);
  }
  if (!rows.length)
    tbody.appendChild(el('tr', { class: 'empty' }, el('td', { colspan: ncols, text: empty || 'nothing to show' })));
}

function select(id, label, options, value, onchange) {
  const s = el('select', { id, onchange: () => onchange(s.value) });
  for (const o of options) {
    const opt = el('option', { value: o.value, text: o.label });
    if (o.value === value) opt.selected = true;
    s.appendChild(opt);
  }
  s.value = value;
  return el('label', { class: 'filter', for: id }, label + ' ', s);
}

// The pages (pages.js fills it): NAME -> async (box, arg, alive).
const pages = {};
let generation = 0;
let currentRoute = 'fleet';
let lastShown = null; // the page last drawn (and its disk or VM): the focus moves on a new one
// The headings a page rewrites (the disk's and the VM's name), as they
// read before: reset on every route, so an error never shows the last name.
const TITLES = { disk: 'Disk', vm: 'VM' };

function parseHash(h) {
  const m = /^#\/([a-z]+)(?:\/(.*))?$/.exec(h || '');
  let name = m ? m[1] : 'fleet';
  let arg = m && m[2] !== undefined ? m[2] : '';
  try { arg = decodeURIComponent(arg); } catch (e) { /* kept as written */ }
  if (!pages[name]) { name = 'fleet'; arg = ''; }
  return { name, arg };
}

// Draws the page the hash names: the section shown, data-ready removed
// until every read of the page is done and drawn, then set to "1" (also
// when the page shows an error).  A later route wins over a slower one.
async function route() {
  if (!token()) return;
  const { name, arg } = parseHash(location.hash);
  currentRoute = name;
  const my = ++generation;
  for (const s of $$('section[data-page]')) s.hidden = s.getAttribute('data-page') !== name;
  for (const a of $$('nav a[data-nav]')) {
    if (a.getAttribute('data-nav') === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const sec = $('#page-' + name);
  sec.removeAttribute('data-ready');
  const h2 = $('h2', sec);
  if (TITLES[name]) h2.textContent = TITLES[name];
  const old = $('.page-body', sec);
  // A filter that redraws its page (a month, a policy, a week) keeps the focus.
  const act = document.activeElement;
  const keep = act && act.id && act !== document.body && act.closest && act.closest('.page-body') === old ? act.id : null;
  const box = el('div', { class: 'page-body' });
  sec.replaceChild(box, old);
  $('#main-error').textContent = '';
  $('#status').textContent = 'loading...';
  const alive = () => my === generation;
  try {
    await pages[name](box, arg, alive);
  } catch (e) {
    if (!alive()) return;
    if (e.status === 401) { logout('The token was refused: ' + e.message); return; }
    if (e.status === 403) { logout(AGENT_TOKEN); return; }
    box.appendChild(errorBox(e.message));
  }
  if (!alive()) return;
  sec.setAttribute('data-ready', '1');
  $('#status').textContent = 'updated ' + new Date().toLocaleTimeString();
  // A new page (not a refresh, not a filter within it): the keyboard's
  // place moves to its heading, so a screen reader says where it is.
  const shown = TITLES[name] ? name + '/' + arg : name; // a filter in the hash is not a new page
  if (shown !== lastShown) {
    lastShown = shown;
    h2.focus();
  } else if (keep && $('#' + keep, box)) {
    $('#' + keep, box).focus();
  }
}

function logout(message) {
  generation++;
  lastShown = null;
  sessionStorage.removeItem(KEY);
  $('#main').hidden = true;
  $('#nav').hidden = true;
  $('#logout').hidden = true;
  $('#refresh').hidden = true;
  $('#login').hidden = false;
  $('#login-error').textContent = message || '';
  $('#status').textContent = '';
}

function start() {
  $('#login').hidden = true;
  $('#main').hidden = false;
  $('#nav').hidden = false;
  $('#logout').hidden = false;
  $('#refresh').hidden = false;
  return route();
}

// Whether token T may read the API, by asking a reader route for one VM:
// null when it may, else what to tell the user. An agent token is a valid
// token (the server answers 403, not 401): kept, it would sign in and then
// fail on every page.
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

async function signIn(ev) {
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
  await start();
}

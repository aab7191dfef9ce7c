// dashboard.js - the dashboard (web/) and the monthly HTML report in Debian's
// chromium, headless, driven by playwright-core; run by tests/web/run-web.sh,
// which seeds the database (deploy/demo-month.sh), starts tierwise serve on
// 127.0.0.1 and passes, in the environment:
//
//   TW_WEB_BASE     the server's origin (http://127.0.0.1:PORT)
//   TW_WEB_READER   a reader token; TW_WEB_AGENT an agent token; TW_WEB_BAD a
//                   token the server never issued
//   TW_WEB_OUT      the folder for the screenshots and the report's PDF
//   TW_WEB_REPORT   the monthly report as HTML (tierwise report monthly), or
//                   empty when that command is missing (a failure, not a skip)
//   TW_WEB_MONTH    the seeded month (YYYY-MM); TW_WEB_MONTH_JSON its report as
//                   JSON (tierwise report monthly --format json), for the PDF's
//                   headline
//   TW_WEB_MODULES  the node_modules folder that npm ci filled
//   TW_WEB_CHROMIUM the browser (default /usr/bin/chromium)
//
// Every check prints "ok - WHAT" or "not ok - WHAT: why"; the last line is
// "web: N passed, N failed" and the exit status 1 when any failed.  Each page
// is checked against the API's own answer to the request the page made (the
// same URL fetched here with the reader token), so the figures compared are
// the ones the page was given.
'use strict';
const path = require('path');
const fs = require('fs');
const { execFileSync } = require('child_process');
const { chromium } = require(path.join(process.env.TW_WEB_MODULES, 'playwright-core'));

const base = process.env.TW_WEB_BASE;
const reader = process.env.TW_WEB_READER;
const agent = process.env.TW_WEB_AGENT;
const badToken = process.env.TW_WEB_BAD;
const out = process.env.TW_WEB_OUT;
const reportHtml = process.env.TW_WEB_REPORT || '';
const month = process.env.TW_WEB_MONTH;
const monthJson = process.env.TW_WEB_MONTH_JSON || '';
const executablePath = process.env.TW_WEB_CHROMIUM || '/usr/bin/chromium';

let passed = 0, failed = 0;
function ok(what) { passed++; console.log('ok - ' + what); }
function bad(what, why) { failed++; console.log('not ok - ' + what + ': ' + why); }
function check(what, cond, why) { if (cond) ok(what); else bad(what, why); }

// GET an API path (or a full URL the page asked for) with the reader token.
async function api(p) {
  const url = p.startsWith('http') ? p : base + p;
  const r = await fetch(url, { headers: { Authorization: 'Bearer ' + reader } });
  const body = await r.json();
  if (!r.ok) throw new Error(url + ': HTTP ' + r.status + ' ' + JSON.stringify(body));
  return body;
}
// Every page of a paged list.
async function apiAll(p, key) {
  const rows = [];
  let cursor = null;
  do {
    const sep = p.includes('?') ? '&' : '?';
    const page = await api(cursor === null ? p : p + sep + 'cursor=' + encodeURIComponent(cursor));
    rows.push(...(page[key] || []));
    cursor = page.next_cursor === undefined ? null : page.next_cursor;
  } while (cursor !== null);
  return rows;
}

// The number a figure's text shows ("1,234.56 USD" -> 1234.56), or NaN.
function shown(text) {
  const m = String(text).replace(/,/g, '').match(/-?\d+(\.\d+)?/);
  return m ? Number(m[0]) : NaN;
}

async function main() {
  fs.mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({
    executablePath, headless: true,
    // no connection leaves the machine: none of chromium's own services
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-default-apps', '--disable-extensions'],
  });
  try {
    await signInRefusals(browser);
    await pages(browser);
    await report(browser);
  } finally {
    await browser.close();
  }
}

// A fresh tab on the dashboard: its console errors, failed loads and the API
// answers it got are collected.
async function tab(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  const page = await ctx.newPage();
  const t = { ctx, page, errors: [], responses: [] };
  page.on('console', (m) => { if (m.type() === 'error') t.errors.push(m.text()); });
  page.on('pageerror', (e) => t.errors.push('uncaught: ' + e.message));
  page.on('response', (r) => {
    if (r.url().includes('/api/v1/')) t.responses.push({ url: r.url(), status: r.status() });
  });
  // only the server under test is reached
  await ctx.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(base + '/') || u.startsWith('data:') || u.startsWith('file:')) return route.continue();
    t.errors.push('a request outside the server: ' + u);
    return route.abort();
  });
  return t;
}

async function signIn(t, token) {
  await t.page.goto(base + '/#/fleet');
  await t.page.waitForSelector('#login-form', { state: 'visible', timeout: 10000 });
  await t.page.fill('#token', token);
  await t.page.press('#token', 'Enter');
}

// The login error once it says more than "checking".
async function loginError(page) {
  await page.waitForFunction(() => {
    const e = document.querySelector('#login-error');
    return e && e.textContent.trim() !== '' && !/^checking/i.test(e.textContent.trim());
  }, null, { timeout: 10000 });
  return (await page.textContent('#login-error')).trim();
}

async function signInRefusals(browser) {
  for (const [who, token, want] of [['an unknown token', badToken, /refused|unknown|not valid|invalid/i],
    ['an agent token', agent, /agent token/i]]) {
    const t = await tab(browser);
    try {
      await signIn(t, token);
      const msg = await loginError(t.page);
      check('sign-in with ' + who + ' is refused with words that say why', want.test(msg),
        'the error reads "' + msg + '"');
      const kept = await t.page.evaluate(() => Object.keys(sessionStorage).length);
      const navShown = await t.page.isVisible('nav');
      check('sign-in with ' + who + ': nothing kept, no page shown', kept === 0 && !navShown,
        'session storage keys ' + kept + ', nav visible ' + navShown);
    } catch (e) {
      bad('sign-in with ' + who, e.message);
    } finally {
      await t.ctx.close();
    }
  }
}

// Goes to ROUTE in the signed-in tab, waits for the page's data-ready; the
// console errors of that load are checked and a screenshot taken (SHOT.png,
// by default NAME.png).
async function visit(t, route, name, shot) {
  t.errors.length = 0;
  t.responses.length = 0;
  await t.page.goto('about:blank');
  await t.page.goto(base + '/#/' + route);
  const sel = '[data-page="' + name + '"][data-ready="1"]';
  try {
    await t.page.waitForSelector(sel, { state: 'attached', timeout: 20000 });
  } catch (e) {
    const alert = await t.page.$$eval('.error[role=alert]', (es) => es.map((x) => x.textContent).join(' | '));
    await t.page.screenshot({ path: path.join(out, name + '-not-ready.png'), fullPage: true }).catch(() => {});
    bad('page ' + route + ' gets ready', 'no ' + sel + ' in 20 s; alerts: ' + alert + '; console: ' + t.errors.join(' | '));
    return false;
  }
  ok('page ' + route + ' gets ready');
  const alerts = await t.page.$$eval('[data-page="' + name + '"] .error[role=alert]',
    (es) => es.map((x) => x.textContent.trim()).filter((s) => s));
  check('page ' + route + ' shows no API error', alerts.length === 0, alerts.join(' | '));
  check('page ' + route + ' loads without console errors', t.errors.length === 0, t.errors.join(' | '));
  const failedApi = t.responses.filter((r) => r.status >= 400);
  check('page ' + route + ': every API read answered', failedApi.length === 0,
    failedApi.map((r) => r.status + ' ' + r.url).join(', '));
  await t.page.screenshot({ path: path.join(out, (shot || name) + '.png'), fullPage: true });
  return true;
}

// The API URL the page read that matches RE (the last such).
function asked(t, re) {
  const hits = t.responses.filter((r) => re.test(r.url) && r.status === 200);
  return hits.length ? hits[hits.length - 1].url : null;
}

async function figures(t, pageName, want) {
  for (const [name, value] of Object.entries(want)) {
    const sel = '[data-page="' + pageName + '"] [data-figure="' + name + '"]';
    const text = await t.page.$eval(sel, (e) => e.textContent).catch(() => null);
    if (text === null) { bad(pageName + ' figure ' + name, 'no ' + sel); continue; }
    check(pageName + ' figure ' + name + ' = the API\'s ' + value, shown(text) === Number(value),
      'the page shows "' + text.trim() + '"');
  }
}

// Every [data-figure] the page shows, each against the same name in WANT
// (an object of the API's figures): a figure the API has no number for is a
// failure, and so is a page that shows none.
async function allFigures(t, pageName, want, label) {
  label = label || pageName;
  const shownFigs = await t.page.$$eval('[data-page="' + pageName + '"] [data-figure]',
    (es) => es.map((e) => [e.getAttribute('data-figure'), e.textContent]));
  check(label + ' shows figures', shownFigs.length > 0, 'no [data-figure]');
  for (const [name, text] of shownFigs) {
    const value = want[name];
    if (value === undefined || value === null) {
      bad(label + ' figure ' + name, 'the API\'s answer has no ' + name + ' (the page shows "' + text.trim() + '")');
      continue;
    }
    check(label + ' figure ' + name + ' = the API\'s ' + value, shown(text) === Number(value),
      'the page shows "' + text.trim() + '"');
  }
}

// VALUE (a plain decimal, e.g. "46.88") as a number of its own in TEXT
// (thousands' commas removed): not part of 146.88 or 46.881.
function hasNumber(text, value) {
  const v = String(value).replace(/[.]/g, '\\.');
  return new RegExp('(^|[^0-9.])' + v + '(?![0-9])').test(text.replace(/,/g, ''));
}

// The data rows (tr[data-id]) of table SEL that are shown.
async function rows(t, sel) {
  return t.page.$$eval(sel + ' tr[data-id]', (trs) => trs.filter((tr) => {
    const s = getComputedStyle(tr);
    return !tr.hidden && s.display !== 'none' && s.visibility !== 'hidden';
  }).length).catch(() => -1);
}
async function waitRows(t, sel, n) {
  try {
    await t.page.waitForFunction(([s, want]) => Array.from(document.querySelectorAll(s + ' tr[data-id]'))
      .filter((tr) => !tr.hidden && getComputedStyle(tr).display !== 'none').length === want,
    [sel, n], { timeout: 10000 });
  } catch (e) { /* the count is reported by the caller */ }
  return rows(t, sel);
}
// Selects VALUE in filter SEL (a <select>), or types it (an <input>).
async function filter(t, sel, value) {
  const tag = await t.page.$eval(sel, (e) => e.tagName.toLowerCase());
  if (tag === 'select') await t.page.selectOption(sel, value);
  else { await t.page.fill(sel, value); await t.page.press(sel, 'Enter'); }
}

// The seeded month as the API reports it: switches made, money saved, the
// under-delivering disk and the drift (what the pages and the report show).
async function seeded() {
  try {
    const m = await api('/api/v1/reports/monthly?month=' + month + '&format=json');
    const t = m.totals;
    check('the API\'s ' + month + ': switches ' + t.switches + ', realised ' + t.realised + ' ' + m.currency +
      ', ' + t.under + ' under-delivering, drift ' + t.drift_hours + ' h (the seed\'s 12), none unpriced',
    t.switches > 0 && Number(t.realised) > 0 && t.under === 1 && Number(t.drift_hours) === 12 &&
      t.unpriced === 0, JSON.stringify(t));
    const src = (m.books || []).map((b) => b.source);
    check('the API\'s ' + month + ': each book\'s source names the bundled snapshot, not a scratch file',
      src.length > 0 && src.every((x) => /pricing\/azure-disk-prices\.json/.test(x) && !/\/tmp\/|tw-web-/.test(x)),
      JSON.stringify(src));
  } catch (e) { bad('the API\'s report of ' + month, e.message); }
}

async function pages(browser) {
  await seeded();
  const t = await tab(browser);
  try {
    await signIn(t, reader);
    try {
      await t.page.waitForSelector('nav', { state: 'visible', timeout: 10000 });
      const kept = await t.page.evaluate(() => Object.keys(sessionStorage).length);
      check('sign-in with the reader token: the pages are shown, the token kept for the tab', kept === 1,
        kept + ' session storage keys');
    } catch (e) {
      const msg = await t.page.textContent('#login-error').catch(() => '?');
      bad('sign-in with the reader token', 'no nav in 10 s; the login error reads "' + msg + '"');
    }
    // the reader token signs in: the fleet page loads (this month)
    if (await visit(t, 'fleet', 'fleet')) {
      const url = asked(t, /\/api\/v1\/reports\/monthly\?/);
      if (!url) bad('fleet reads the monthly report', 'no GET /api/v1/reports/monthly among ' +
        t.responses.map((r) => r.url).join(', '));
      else {
        const m = await api(url);
        await allFigures(t, 'fleet', m.totals, 'fleet (this month)');
      }
    }
    // the seeded month's fleet page: every figure against that month's report
    if (await visit(t, 'fleet/' + month, 'fleet', 'fleet-' + month)) {
      const url = asked(t, /\/api\/v1\/reports\/monthly\?/);
      const sel = await t.page.$eval('#fleet-month', (e) => e.value).catch(() => null);
      check('fleet/' + month + ': the month selector shows ' + month, sel === month, 'it shows ' + sel);
      check('fleet/' + month + ': the page reads the report of ' + month,
        url !== null && new URL(url).searchParams.get('month') === month, 'it read ' + url);
      try {
        const m = await api('/api/v1/reports/monthly?month=' + month + '&format=json');
        await allFigures(t, 'fleet', m.totals, 'fleet/' + month);
        const r = await t.page.$eval('[data-page="fleet"] [data-figure="realised"]', (e) => e.textContent)
          .catch(() => null);
        check('fleet/' + month + ': the realised saving shown is above 0 (' + m.totals.realised + ')',
          r !== null && shown(r) > 0 && Number(m.totals.realised) > 0, 'the page shows "' + r + '"');
      } catch (e) { bad('fleet/' + month + ': the month\'s report', e.message); }
      // #fleet-skus: a row per SKU and tier of the API's disks, with its count
      try {
        const disks = await apiAll('/api/v1/disks?limit=500', 'disks');
        const want = new Map();
        for (const d of disks) {
          const k = (d.sku || 'unknown') + '/' + (d.tier || 'unknown');
          want.set(k, (want.get(k) || 0) + 1);
        }
        const got = await t.page.$$eval('#fleet-skus tr[data-id]', (trs) => trs.map((tr) =>
          [tr.getAttribute('data-id'), Array.from(tr.cells).map((c) => c.textContent.trim())]));
        const gotMap = new Map(got.map(([k, c]) => [k, c]));
        const wrong = [];
        for (const [k, n] of want) {
          const c = gotMap.get(k);
          if (!c) wrong.push(k + ': no row');
          else if (c[0] + '/' + c[1] !== k || Number(c[2]) !== n) wrong.push(k + ': the row reads ' + c.join(' | ') + ', the API ' + n);
        }
        for (const [k] of got) if (!want.has(k)) wrong.push(k + ': a row the API has no disk for');
        check('fleet: #fleet-skus has a row per SKU and tier of the API\'s ' + disks.length + ' disks (' +
          Array.from(want, ([k, n]) => k + ' ' + n).join(', ') + ')',
        wrong.length === 0 && got.length === want.size && disks.length > 0, wrong.join('; '));
      } catch (e) { bad('fleet: #fleet-skus against the API\'s disks', e.message); }
      fs.copyFileSync(path.join(out, 'fleet-' + month + '.png'), path.join(out, 'screenshot-dashboard.png'));
    }

    if (await visit(t, 'compliance', 'compliance')) {
      const verdicts = await apiAll('/api/v1/compliance?limit=500', 'verdicts');
      const n = await rows(t, '#compliance-table');
      check('compliance: a row per verdict (' + verdicts.length + ')', n === verdicts.length, n + ' rows');
      const under = verdicts.filter((v) => v.verdict === 'under').length;
      check('compliance: the seeded month has an under-delivering disk and a delivering one',
        under >= 1 && verdicts.some((v) => v.verdict === 'delivers'),
        JSON.stringify(verdicts.map((v) => [v.vm_name, v.disks, v.verdict])));
      try {
        await filter(t, '#compliance-verdict', 'under');
        const k = await waitRows(t, '#compliance-table', under);
        check('compliance: the verdict filter "under" leaves ' + under + ' rows', k === under, k + ' rows');
      } catch (e) { bad('compliance: the verdict filter', e.message); }
    }

    if (await visit(t, 'savings', 'savings')) {
      const url = asked(t, /\/api\/v1\/savings\/opportunities\?/);
      if (!url) bad('savings reads the opportunities', 'no GET /api/v1/savings/opportunities');
      else {
        const o = await api(url);
        await figures(t, 'savings', { saving: o.totals.fleet.saving, excluded: o.totals.fleet.excluded,
          disks: o.totals.fleet.disks });
        const n = await rows(t, '#savings-table');
        check('savings: a row per disk opportunity (' + o.disks.length + ')', n === o.disks.length, n + ' rows');
        const x = await rows(t, '#savings-excluded');
        check('savings: a row per exclusion (' + o.excluded.length + ')', x === o.excluded.length, x + ' rows');
      }
    }

    if (await visit(t, 'schedule', 'schedule')) {
      const url = asked(t, /\/api\/v1\/plan\?/);
      if (!url) bad('schedule reads the plan', 'no GET /api/v1/plan');
      else {
        const p = await api(url);
        const n = await t.page.$$eval('#schedule-week [data-switch]', (es) => es.length).catch(() => -1);
        check('schedule: the plan\'s ' + p.actions.length + ' switches of the week are drawn',
          n === p.actions.length && n > 0, n + ' [data-switch] in #schedule-week');
      }
    }

    if (await visit(t, 'actions', 'actions')) {
      const acts = await apiAll('/api/v1/actions?limit=500', 'actions');
      const n = await rows(t, '#actions-table');
      check('actions: a row per action (' + acts.length + ')', n === acts.length && n > 0, n + ' rows');
      // the seed's failed downgrade: one row of the state "failed"
      const failedActs = acts.filter((a) => a.state === 'failed').length;
      try {
        await filter(t, '#actions-state', 'failed');
        const k = await waitRows(t, '#actions-table', failedActs);
        check('actions: the state filter "failed" leaves ' + failedActs + ' of ' + acts.length + ' rows',
          k === failedActs && failedActs > 0 && failedActs < acts.length, k + ' rows');
        await filter(t, '#actions-state', 'all');
        const vmActs = acts.filter((a) => a.vm === 'app-02').length;
        await filter(t, '#actions-vm', 'app-02');
        const v = await waitRows(t, '#actions-table', vmActs);
        check('actions: the VM filter "app-02" leaves ' + vmActs + ' rows', v === vmActs && vmActs < acts.length,
          v + ' rows');
      } catch (e) { bad('actions: the state filter', e.message); }
    }

    const disks = await apiAll('/api/v1/disks?limit=500', 'disks');
    const disk = disks.find((d) => d.name === 'app-01-data0');
    if (!disk) bad('the seeded disk app-01-data0 is stored', 'not among ' + disks.map((d) => d.name).join(' '));
    else if (await visit(t, 'disk/' + disk.id, 'disk')) {
      const d = await api('/api/v1/disks/' + disk.id);
      const h = await rows(t, '#disk-history');
      check('disk: a row per SKU change (' + d.sku_history.length + ')', h === d.sku_history.length, h + ' rows');
      const c = await rows(t, '#disk-costs');
      check('disk: cost by month has rows', c > 0, c + ' rows');
      // the seeded month's row: the disk's realised saving as the API has it
      try {
        const m = await api('/api/v1/reports/monthly?month=' + month + '&disk=' + disk.id + '&format=json');
        const row = m.disks[0];
        const cells = await t.page.$$eval('#disk-costs tr', (trs, mm) => {
          const tr = trs.find((x) => x.cells.length && x.cells[0].textContent.trim() === mm);
          return tr ? Array.from(tr.cells).map((td) => td.textContent.trim()) : null;
        }, month);
        check('disk: ' + month + ' shows the realised saving ' + row.realised + ' and the cost ' + row.cost,
          cells !== null && cells.some((x) => shown(x) === Number(row.realised)) &&
          cells.some((x) => shown(x) === Number(row.cost)) && Number(row.realised) > 0,
          'the row reads ' + JSON.stringify(cells));
      } catch (e) { bad('disk: the seeded month\'s row', e.message); }
      fs.copyFileSync(path.join(out, 'disk.png'), path.join(out, 'disk-' + disk.id + '.png'));
    }

    const vms = await apiAll('/api/v1/vms?limit=500', 'vms');
    const vm = vms.find((v) => v.name === 'app-01');
    if (!vm) bad('the seeded VM app-01 is stored', 'not among ' + vms.map((v) => v.name).join(' '));
    else if (await visit(t, 'vm/' + vm.id, 'vm')) {
      const n = await rows(t, '[data-page="vm"]');
      check('vm: a row per disk of app-01 (' + vm.disks + ')', n === vm.disks, n + ' rows');
    }
  } finally {
    await t.ctx.close();
  }
}

async function report(browser) {
  if (!reportHtml || !fs.existsSync(reportHtml)) {
    bad('the monthly report as HTML', 'no file ' + (reportHtml || '(tierwise report monthly is missing)'));
    return;
  }
  const t = await tab(browser);
  try {
    await t.page.goto('file://' + reportHtml);
    await t.page.waitForLoadState('load');
    check('report: opens without console errors', t.errors.length === 0, t.errors.join(' | '));
    await t.page.screenshot({ path: path.join(out, 'screenshot-report.png'), fullPage: false });
    const pdfPath = path.join(out, 'report.pdf');
    const pdf = await t.page.pdf({ path: pdfPath, format: 'A4', printBackground: true });
    check('report: page.pdf() of A4 succeeds', pdf.length > 1000 && pdf.subarray(0, 5).toString() === '%PDF-',
      pdf.length + ' bytes');
    let first = '';
    try {
      first = execFileSync('pdftotext', ['-f', '1', '-l', '1', '-layout', pdfPath, '-'], { encoding: 'utf8' });
    } catch (e) { bad('report: pdftotext reads the PDF', e.message); return; }
    check('report: page 1 holds the headline (saved this month, still possible, under-delivering)',
      /saved this month/i.test(first) && /still possible/i.test(first) && /under-delivering/i.test(first),
      'page 1 reads: ' + first.slice(0, 400).replace(/\s+/g, ' '));
    if (monthJson && fs.existsSync(monthJson)) {
      const m = JSON.parse(fs.readFileSync(monthJson, 'utf8'));
      check('report: page 1 shows the month\'s saving ' + m.totals.realised + ' ' + m.currency,
        hasNumber(first, m.totals.realised), 'not in: ' + first.slice(0, 400).replace(/\s+/g, ' '));
      check('report: page 1 shows what is still possible, ' + m.totals.possible,
        hasNumber(first, m.totals.possible), 'not in: ' + first.slice(0, 400).replace(/\s+/g, ' '));
      check('report: the PDF names no scratch file as a price source', !/\/tmp\/|tw-web-|prices-usd\.json/.test(
        execFileSync('pdftotext', ['-layout', pdfPath, '-'], { encoding: 'utf8' })), 'a /tmp path in the PDF');
    }
  } finally {
    await t.ctx.close();
  }
}

main().catch((e) => bad('the browser run', e.stack || String(e))).finally(() => {
  console.log('web: ' + passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
});

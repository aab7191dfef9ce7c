// tierwise dashboard, part 3: the pages.  Each is an async function
// (box, arg, alive) that reads the API, draws into BOX and returns when
// everything is drawn (the router then sets data-ready="1").  ALIVE()
// turns false when another page was asked for meanwhile.
'use strict';

const VERDICTS = ['delivers', 'under', 'vm-capped', 'burst', 'cached', 'inconclusive'];
const ACTION_STATES = ['planned', 'checked', 'sent', 'verified', 'done', 'skipped', 'failed'];

function figure(name, text, value) {
  return el('span', { class: 'figure', 'data-figure': name, 'data-value': value, text });
}

function fig(label, node, note) {
  return el('div', { class: 'kpi' }, el('div', { class: 'kpi-label', text: label }), node,
    note ? el('div', { class: 'kpi-note', text: note }) : null);
}

function heading(text) { return el('h3', { text }); }

// ---------------------------------------------------------------- fleet

const FLEET_MONTHS = 13; // this month and the 12 before

pages.fleet = async (box, arg) => {
  const now = new Date(), thisMonth = utcMonth(now);
  const months = [];
  for (let i = 0; i < FLEET_MONTHS; i++) months.push(utcMonth(now, i));
  const month = months.includes(arg) ? arg : thisMonth;
  box.appendChild(el('div', { class: 'filters' },
    select('fleet-month', 'Month', months.map((m, i) => ({ value: m, label: m + (i ? '' : ' (this month)') })), month,
      (v) => { location.hash = v === thisMonth ? '#/fleet' : '#/fleet/' + v; })));
  const got = await Promise.allSettled([
    api('/api/v1/reports/monthly?month=' + month + '&format=json'),
    api('/api/v1/compliance/summary'),
    apiAll('/api/v1/disks?limit=5000', 'disks'),
  ]);
  const rep = settled(got[0]), sum = settled(got[1]), disks = settled(got[2]);

  // This month's money.
  box.appendChild(heading((month === thisMonth ? 'This month (' : 'The month ') + month + (month === thisMonth ? ', UTC)' : ' (UTC)')));
  if (!rep.ok) {
    box.appendChild(errorBox('The monthly report: ' + rep.error.message));
  } else {
    const r = rep.value, t = r.totals, cur = r.currency;
    box.appendChild(el('p', { class: 'summary', text: (r.partial ? 'So far this month: ' : 'The month: ') +
      when(r.period && r.period.from) + ' to ' + when(r.period && r.period.to) +
      ', in ' + cur + ', grouped by ' + r.group_by + '.' }));
    box.appendChild(el('div', { class: 'kpis' },
      fig('Spend', figure('cost', money(t.cost, cur), t.cost), 'had nothing moved: ' + money(t.baseline, cur)),
      fig('Realised saving', figure('realised', money(t.realised, cur), t.realised), 'by switches that ran and were verified'),
      fig('Still possible', figure('possible', money(t.possible, cur), t.possible), 'under the policies, on top of the realised'),
      fig('Disks', figure('disks', String(t.disks), t.disks), t.vms + ' VMs'),
      fig('Under-delivering', figure('under', String(t.under), t.under), 'disks judged under their tier'),
      fig('Switches', figure('switches', String(t.switches), t.switches), t.downgraded_hours + ' h downgraded, ' +
        t.drift_hours + ' h drift')));
    const unpriced = (r.disks || []).filter((d) => !d.priced);
    if (t.unpriced > 0) {
      box.appendChild(el('p', { class: 'warn' }, figure('unpriced', String(t.unpriced), t.unpriced), ' of ' + t.disks +
        ' disks have no price ' + (month === thisMonth ? 'this month' : 'in ' + month) + ' and are left out of these figures (not counted as zero)',
        unpriced.length ? ': ' : '', unpriced.slice(0, 12).map((d, i) => [i ? '; ' : '', diskLink(d.disk_id, d.disk),
          ' on ', vmLink(d.vm_id, d.vm), ' (' + (d.unpriced_why || d.unpriced) + ')']),
        unpriced.length > 12 ? '; and ' + (unpriced.length - 12) + ' more' : '', '.'));
    } else {
      box.appendChild(el('p', { class: 'summary', text: 'Every disk has a price ' + (month === thisMonth ? 'this month.' : 'in ' + month + '.') }));
    }
    for (const m of r.missing || [])
      box.appendChild(el('p', { class: 'warn', text: 'No price book for ' + m.region + ': ' + m.why + ' (' + m.disks + ' disks)' }));
    if ((r.books || []).length)
      box.appendChild(el('p', { class: 'summary', text: 'Prices: ' + r.books.map((b) => b.region + ' from ' + b.source +
        ' (fetched ' + when(b.fetched_at) + ')').join('; ') + '.' }));

    if ((r.policies || []).length)
      box.appendChild(el('p', { class: 'summary' }, 'Still possible under the policies ',
        r.policies.map((n, i) => [i ? ', ' : '', policyLink(n)]), ' (each opens its savings).'));
    if ((r.notes || []).length)
      box.appendChild(el('details', { class: 'notes' }, el('summary', { text: 'How these figures are computed (' + r.notes.length + ' notes)' }),
        el('ul', null, r.notes.map((n) => el('li', { text: n })))));
    box.appendChild(heading('Realised saving per group'));
    const groups = r.groups || [];
    const withSaving = groups.filter((g) => Number(g.totals.realised) > 0);
    if (withSaving.length)
      box.appendChild(barChart('Realised saving per ' + r.group_by, withSaving.map((g) => ({
        label: g.key, value: Number(g.totals.realised), text: money(g.totals.realised, cur) })), 'saving'));
    else
      box.appendChild(el('p', { class: 'summary', text: month === thisMonth ? 'No group has a realised saving this month yet.' : 'No group has a realised saving in ' + month + '.' }));
    box.appendChild(table('fleet-groups', [r.group_by, 'VMs', 'Disks', 'Spend', 'Realised', 'Possible', 'Unpriced'], groups,
      (g) => [g.key, { v: num(g.totals.vms, 0), cls: 'num' }, { v: num(g.totals.disks, 0), cls: 'num' },
        { v: money(g.totals.cost, cur), cls: 'num' }, { v: money(g.totals.realised, cur), cls: 'num' },
        { v: money(g.totals.possible, cur), cls: 'num' }, { v: num(g.totals.unpriced, 0), cls: 'num' }],
      (g) => g.key, 'no group'));
  }

  // Disks by SKU and tier.
  box.appendChild(heading('Disks by SKU and tier' + (month === thisMonth ? '' : ' (now)')));
  if (!disks.ok) {
    box.appendChild(errorBox('The disks: ' + disks.error.message));
  } else {
    const counts = new Map();
    for (const d of disks.value.rows) {
      const k = (d.sku || 'unknown') + '/' + (d.tier || 'unknown');
      counts.set(k, (counts.get(k) || 0) + 1);
    }
    const rows = Array.from(counts, ([k, n]) => ({ k, sku: k.split('/')[0], tier: k.split('/')[1], n }))
      .sort((a, b) => b.n - a.n || a.k.localeCompare(b.k));
    if (rows.length)
      box.appendChild(barChart('Disks by SKU and tier', rows.map((r) => ({ label: r.sku + ' ' + r.tier,
        value: r.n, text: r.n + (r.n === 1 ? ' disk' : ' disks') }))));
    box.appendChild(table('fleet-skus', ['SKU', 'Tier', 'Disks'], rows,
      (r) => [r.sku, r.tier, { v: String(r.n), cls: 'num' }], (r) => r.k, 'no disk is stored yet'));
  }

  // Compliance at a glance.
  box.appendChild(heading('Compliance by SKU' + (month === thisMonth ? '' : ' (the latest verdicts)')));
  if (!sum.ok) {
    box.appendChild(errorBox('The compliance summary: ' + sum.error.message));
  } else {
    const s = sum.value;
    box.appendChild(el('p', { class: 'summary', text: s.vms + ' VMs judged, ' + s.verdicts + ' verdicts' +
      (s.errors ? ', ' + s.errors + ' could not be judged (see Compliance)' : '') + '.' }));
    const bySku = s.by_sku || [];
    if (bySku.some((r) => VERDICTS.some((v) => r[v] > 0)))
      box.appendChild(stackedChart('Verdicts per disk SKU', bySku.map((r) => ({ label: r.sku,
        parts: VERDICTS.map((v) => ({ key: v, value: r[v] || 0 })) })), VERDICTS));
    else
      box.appendChild(el('p', { class: 'summary', text: 'No verdict yet: no agent has reported a benchmark.' }));
    box.appendChild(table('fleet-compliance', ['SKU'].concat(VERDICTS), bySku,
      (r) => [r.sku].concat(VERDICTS.map((v) => ({ v: String(r[v] || 0), cls: 'num' }))), (r) => r.sku, 'no verdict yet'));
  }
};

// ----------------------------------------------------------- compliance

function pct(lat, p) {
  return lat && lat.percentiles && lat.percentiles[p] !== undefined ? num(lat.percentiles[p] / 1e6, 2) + ' ms' : null;
}

function latencyText(result) {
  if (!result) return null;
  const parts = [];
  for (const side of ['read', 'write']) {
    const io = result[side];
    if (!io || !io.lat_ns) continue;
    const p50 = pct(io.lat_ns, 'p50'), p99 = pct(io.lat_ns, 'p99'), p999 = pct(io.lat_ns, 'p99.9');
    if (p50 || p99) parts.push(side + ' p50 ' + dash(p50) + ', p99 ' + dash(p99) + ', p99.9 ' + dash(p999));
  }
  return parts.length ? parts.join('; ') : null;
}

// Runs FN over ITEMS, N at a time; every item's outcome
// (Promise.allSettled's), in order: one failure stops none of the others.
async function inBatches(items, n, fn) {
  const out = [];
  for (let i = 0; i < items.length; i += n) out.push(...await Promise.allSettled(items.slice(i, i + n).map(fn)));
  return out;
}

const LATENCY_DISKS_MAX = 100;

pages.compliance = async (box, arg, alive) => {
  const [c, d] = await Promise.all([apiAll('/api/v1/compliance?limit=5000', 'verdicts'),
    apiAll('/api/v1/disks?limit=5000', 'disks')]);
  if (!alive()) return;
  const verdicts = c.rows;
  const errors = c.pages.flatMap((p) => p.errors || []);
  const diskId = new Map(d.rows.map((x) => [x.vm_id + '/' + x.name, x.id]));
  // Latency percentiles are in the results, which the disk route holds.
  const wanted = [];
  for (const v of verdicts)
    for (const name of v.disks || []) {
      const id = diskId.get(v.vm_id + '/' + name);
      if (id !== undefined && !wanted.includes(id)) wanted.push(id);
    }
  const results = new Map();
  const fetched = wanted.slice(0, LATENCY_DISKS_MAX);
  const failed = new Map(); // disk id -> why its results could not be read
  const outcomes = await inBatches(fetched, 4, async (id) => {
    const o = await api('/api/v1/disks/' + id);
    for (const r of o.results || []) results.set(r.id, r);
  });
  if (!alive()) return;
  outcomes.forEach((o, i) => { const s = settled(o); if (!s.ok) failed.set(fetched[i], s.error.message); });
  const fetchedSet = new Set(fetched);
  // The latency cell: the result's percentiles, or why there are none.
  const latencyOf = (v) => {
    const t = latencyText(results.get(v.result_id));
    if (t) return t;
    const ids = (v.disks || []).map((n) => diskId.get(v.vm_id + '/' + n)).filter((x) => x !== undefined);
    const why = ids.map((x) => failed.get(x)).find((x) => x !== undefined);
    if (why !== undefined) return { v: 'latency unavailable: ' + why, cls: 'why' };
    if (ids.length && !ids.some((x) => fetchedSet.has(x))) return 'see the disk page';
    return '-';
  };

  const counts = {};
  for (const v of verdicts) counts[v.verdict] = (counts[v.verdict] || 0) + 1;
  let filter = VERDICTS.includes(arg) ? arg : 'all';
  box.appendChild(el('p', { class: 'summary', text: verdicts.length + ' verdicts' +
    VERDICTS.filter((k) => counts[k]).map((k) => ', ' + counts[k] + ' ' + k).join('') +
    '. Measured against expected for the figure the verdict judges (IOPS or MB/s).' +
    (wanted.length > fetched.length ? ' Latency is shown for the first ' + fetched.length +
      ' disks; the disk pages show the others.' : '') }));
  const tbody = el('tbody');
  const heads = ['Verdict', 'VM', 'Disks', 'Profile', 'Measured / expected', '', 'Latency', 'Reason', 'Judged'];
  const draw = () => {
    const rows = filter === 'all' ? verdicts : verdicts.filter((v) => v.verdict === filter);
    fillRows(tbody, heads.length, rows, (v) => {
      const unit = v.judged === 'mbps' ? 'MB/s' : 'IOPS';
      const key = v.judged === 'mbps' ? 'mbps' : 'iops';
      const m = v.measured ? v.measured[key] : null, x = v.expected ? v.expected[key] : null;
      return [
        { v: v.verdict, cls: 'verdict v-' + v.verdict },
        vmCell(v),
        (v.disks || []).map((n, i) => [i ? ', ' : '', diskLink(diskId.get(v.vm_id + '/' + n), n)]).concat(
          v.tiers && v.tiers.length ? [el('div', { class: 'sub', text: v.tiers.join(', ') })] : []),
        v.profile,
        { v: num(m) + ' / ' + num(x) + ' ' + unit, cls: 'num' },
        m !== null && x !== null ? measuredBars(m, x, unit) : '-',
        latencyOf(v),
        v.reason,
        when(v.started_at),
      ];
    }, (v) => v.result_id + '/' + v.target, filter === 'all' ? 'No verdict yet: no agent has reported a benchmark.'
      : 'No verdict is ' + filter + '.');
  };
  box.appendChild(el('div', { class: 'filters' },
    select('compliance-verdict', 'Verdict', [{ value: 'all', label: 'all (' + verdicts.length + ')' }].concat(
      VERDICTS.map((k) => ({ value: k, label: k + ' (' + (counts[k] || 0) + ')' }))), filter, (v) => { filter = v; draw(); })));
  box.appendChild(wide(el('table', { id: 'compliance-table' },
    el('thead', null, el('tr', null, heads.map((h) => el('th', { scope: 'col', text: h })))), tbody)));
  draw();
  if (errors.length) {
    box.appendChild(heading('Could not be judged'));
    for (const e of errors)
      box.appendChild(el('p', { class: 'error', text: (e.vm_name || 'VM ' + e.vm_id) +
        (e.result_id ? ', result ' + e.result_id : '') + ': ' + e.message }));
  }
};

// -------------------------------------------------------------- savings

let savingsMonth = null;

async function policyList() {
  const p = await api('/api/v1/policies');
  return (p.policies || []).map((x) => x.name);
}

pages.savings = async (box, arg, alive) => {
  const names = await policyList();
  if (!alive()) return;
  if (!names.length) {
    box.appendChild(el('p', { class: 'summary', text: 'The server has no policies: start tierwise serve with ' +
      '--policies DIR to see the savings each would bring.' }));
    return;
  }
  const policy = arg || names[0];
  const month = savingsMonth || utcMonth(new Date());
  const monthInput = el('input', { id: 'savings-month', type: 'month', value: month });
  monthInput.addEventListener('change', () => {
    if (/^\d{4}-\d{2}$/.test(monthInput.value)) { savingsMonth = monthInput.value; route(); }
  });
  box.appendChild(el('div', { class: 'filters' },
    select('savings-policy', 'Policy', names.map((n) => ({ value: n, label: n }))
      .concat(names.includes(policy) ? [] : [{ value: policy, label: policy }]), policy,
    (v) => { location.hash = '#/savings/' + encodeURIComponent(v); }),
    el('label', { class: 'filter', for: 'savings-month' }, 'Month ', monthInput)));
  let o;
  try {
    o = await api('/api/v1/savings/opportunities?policy=' + encodeURIComponent(policy) + '&month=' + month);
  } catch (e) {
    if (e.status === 401 || e.status === 403) throw e;
    box.appendChild(errorBox((e.status ? e.status + ' ' : '') + (e.code ? e.code + ': ' : '') + e.message));
    return;
  }
  if (!alive()) return;
  const t = o.totals.fleet, cur = o.currency;
  box.appendChild(el('p', { class: 'summary', text: 'Policy ' + o.policy + ' over ' + o.month + ' (' +
    o.timezone + '), ' + when(o.period.from) + ' to ' + when(o.period.to) + ', in ' + cur + '.' }));
  box.appendChild(el('div', { class: 'kpis' },
    fig('Saving', figure('saving', money(t.saving, cur), t.saving), 'the month, every window taken'),
    fig('Hours downgraded', figure('hours', t.hours, t.hours)),
    fig('Disks covered', figure('disks', String(t.disks), t.disks), t.vms + ' VMs'),
    fig('Excluded', figure('excluded', String(t.excluded), t.excluded)),
    fig('Without a price', figure('disks_without_price', String(t.disks_without_price), t.disks_without_price))));
  for (const r of o.regions_without_book || [])
    box.appendChild(el('p', { class: 'warn', text: 'No price book: ' + (typeof r === 'string' ? r : JSON.stringify(r)) }));
  if ((o.prices || []).length)
    box.appendChild(el('p', { class: 'summary', text: 'Prices: ' + o.prices.map((b) => b.region + ' from ' + b.source +
      ' (fetched ' + when(b.fetched_at) + ')').join('; ') + '.' }));
  box.appendChild(heading('Covered disks'));
  box.appendChild(table('savings-table', ['VM', 'Disk', 'From', 'To', 'Windows', 'Hours', 'Baseline', 'Saving', 'Caveats'],
    o.disks || [], (d) => [vmLink(d.vm_id, d.vm), diskLink(d.disk_id, d.disk), d.sku + ' ' + dash(d.tier),
      d.target_sku ? d.target_sku + ' ' + dash(d.target_tier) : (d.why || '-'),
      d.windows ? d.windows + ' (' + d.windows_taken + ' taken, ' + d.windows_skipped + ' skipped)' : '-',
      { v: dash(d.hours), cls: 'num' }, { v: money(d.baseline, cur), cls: 'num' },
      { v: d.saving === null || d.saving === undefined ? (d.why || 'no price') : money(d.saving, cur), cls: 'num' },
      (d.caveats || []).join('; ')], (d) => d.disk_id, 'No disk is covered by ' + o.policy + '.'));
  box.appendChild(heading('Excluded, and why'));
  box.appendChild(table('savings-excluded', ['VM', 'Disk', 'SKU', 'Reason', 'Why'], o.excluded || [],
    (d) => [vmLink(d.vm_id, d.vm), diskLink(d.disk_id, d.disk), d.sku + ' ' + dash(d.tier), d.reason, d.why],
    (d) => d.disk_id, 'No disk is excluded.'));
  box.appendChild(heading('Per VM'));
  box.appendChild(table('savings-vms', ['VM', 'Resource group', 'Disks', 'Excluded', 'Hours', 'Saving'],
    o.totals.vms || [], (v) => [vmLink(v.vm_id, v.vm), v.resource_group, { v: String(v.disks), cls: 'num' },
      { v: String(v.excluded), cls: 'num' }, { v: v.hours, cls: 'num' }, { v: money(v.saving, cur), cls: 'num' }],
    (v) => v.vm_id, 'no VM'));
};

// ------------------------------------------------------------- schedule

let scheduleWeek = 0; // 0 this week, 1 next
let schedulePolicy = null;

function mondayUtc(now, weeks) {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const dow = (d.getUTCDay() + 6) % 7; // Monday 0
  return new Date(d.getTime() - dow * 86400000 + weeks * 7 * 86400000);
}

// The windows of a plan: per disk, from a downgrade to the next upgrade
// (an upgrade first: the window was open at FROM; a downgrade last: still
// open at TO).
function planWindows(actions, from, to) {
  const byDisk = new Map();
  for (const a of actions) {
    const k = a.vm_id + '/' + a.disk_id;
    if (!byDisk.has(k)) byDisk.set(k, []);
    byDisk.get(k).push(a);
  }
  const out = [];
  for (const list of byDisk.values()) {
    list.sort((a, b) => Date.parse(a.due_at) - Date.parse(b.due_at));
    let open = null;
    for (const a of list) {
      if (a.kind === 'downgrade') { if (open === null) open = Date.parse(a.due_at); }
      else if (a.kind === 'upgrade') {
        out.push({ vm_id: a.vm_id, disk: a.disk, from: open === null ? from : open, to: Date.parse(a.due_at) });
        open = null;
      }
    }
    if (open !== null) out.push({ vm_id: list[0].vm_id, disk: list[0].disk, from: open, to });
  }
  return out;
}

pages.schedule = async (box, arg, alive) => {
  const names = await policyList();
  if (!alive()) return;
  const from = mondayUtc(new Date(), scheduleWeek), to = new Date(from.getTime() + 7 * 86400000);
  const F = from.getTime(), T = to.getTime();
  if (!names.includes(schedulePolicy)) schedulePolicy = names.length ? names[0] : null;
  const thisBtn = el('button', { type: 'button', id: 'schedule-this', 'aria-pressed': scheduleWeek === 0 ? 'true' : 'false',
    text: 'This week', onclick: () => { scheduleWeek = 0; route(); } });
  const nextBtn = el('button', { type: 'button', id: 'schedule-next', 'aria-pressed': scheduleWeek === 1 ? 'true' : 'false',
    text: 'Next week', onclick: () => { scheduleWeek = 1; route(); } });
  box.appendChild(el('div', { class: 'filters' },
    names.length ? select('schedule-policy', 'Policy', names.map((n) => ({ value: n, label: n })), schedulePolicy,
      (v) => { schedulePolicy = v; route(); }) : null,
    thisBtn, nextBtn,
    el('span', { class: 'summary', text: when(from.toISOString()) + ' to ' + when(to.toISOString()) + ' (days in UTC)' })));

  const got = await Promise.allSettled([
    schedulePolicy ? api('/api/v1/plan?policy=' + encodeURIComponent(schedulePolicy) + '&from=' +
      from.toISOString().replace('.000', '') + '&to=' + to.toISOString().replace('.000', '')) : Promise.resolve(null),
    apiAll('/api/v1/actions?limit=5000', 'actions'),
    api('/api/v1/drift'),
    apiAll('/api/v1/vms?limit=5000', 'vms'),
  ]);
  if (!alive()) return;
  const plan = settled(got[0]), acts = settled(got[1]), drift = settled(got[2]), vms = settled(got[3]);
  if (!names.length)
    box.appendChild(el('p', { class: 'summary', text: 'The server has no policies (--policies DIR): nothing is planned.' }));
  if (!plan.ok) box.appendChild(errorBox('The plan of ' + schedulePolicy + ': ' + plan.error.message));
  if (!acts.ok) box.appendChild(errorBox('The actions: ' + acts.error.message));
  if (!drift.ok) box.appendChild(errorBox('Drift: ' + drift.error.message));
  const planned = plan.ok && plan.value ? plan.value.actions || [] : [];
  const windows = planWindows(planned, F, T);
  const executed = acts.ok ? acts.value.rows.filter((a) => {
    const t = Date.parse(a.updated_at || a.due_at);
    return !a.dry_run && a.state !== 'planned' && t >= F && t < T;
  }) : [];
  const drifting = drift.ok ? drift.value.drift || [] : [];
  const names_ = new Map(vms.ok ? vms.value.rows.map((v) => [v.id, v.name]) : []);
  const ids = new Set();
  for (const a of planned) ids.add(a.vm_id);
  for (const a of executed) ids.add(a.vm_id);
  for (const d of drifting) ids.add(d.vm_id);
  for (const a of planned.concat(executed, drifting)) if (a.vm && !names_.has(a.vm_id)) names_.set(a.vm_id, a.vm);
  const rows = Array.from(ids).sort((a, b) => String(names_.get(a)).localeCompare(String(names_.get(b))));

  if (drifting.length)
    box.appendChild(el('p', { class: 'drift-note', role: 'status', text: drifting.length + ' disk' + (drifting.length > 1 ? 's' : '') +
      ' drifting now (a running VM on a disk below the SKU its policy requires): ' + drifting.map((d) => d.vm + '/' + d.disk +
        ' on ' + d.sku + ' (' + d.required_sku + ' required) since ' + when(d.since)).join('; ') + '.' }));

  // The week: a row per VM, a column per day.
  const W = 1000, L = 170, rowH = 46, top = 30;
  const X = (t) => L + (W - L) * Math.min(Math.max(t - F, 0), T - F) / (T - F);
  const g = svg('svg', { id: 'schedule-week', class: 'chart week', viewBox: '0 0 ' + W + ' ' + (top + Math.max(rows.length, 1) * rowH + 4),
    role: 'img', 'aria-label': 'The week per VM: windows, planned and executed switches, drift' },
  svg('title', null, 'The week per VM'));
  for (let i = 0; i < 7; i++) {
    const day = new Date(F + i * 86400000);
    g.appendChild(svg('line', { x1: X(day.getTime()), y1: top - 4, x2: X(day.getTime()), y2: top + Math.max(rows.length, 1) * rowH, class: 'grid' }));
    g.appendChild(svg('text', { x: X(day.getTime()) + 4, y: 18, class: 'lbl' },
      ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'][i] + ' ' + day.toISOString().slice(5, 10)));
  }
  const now = Date.now();
  if (now >= F && now < T)
    g.appendChild(svg('line', { x1: X(now), y1: top - 4, x2: X(now), y2: top + Math.max(rows.length, 1) * rowH, class: 'now' },
      svg('title', null, 'now')));
  rows.forEach((id, i) => {
    const y = top + i * rowH;
    const dr = drifting.filter((d) => d.vm_id === id);
    const row = svg('g', { 'data-vm': id, class: dr.length ? 'vmrow drifting' : 'vmrow' });
    if (dr.length)
      row.appendChild(svg('rect', { x: 0, y: y, width: W, height: rowH - 4, class: 'drift-band' },
        svg('title', null, 'drift: ' + dr.map((d) => d.disk + ' on ' + d.sku + ' (' + d.required_sku + ' required)').join(', '))));
    row.appendChild(svg('a', { href: '#/vm/' + encodeURIComponent(id) },
      svg('text', { x: 6, y: y + 18, class: 'lbl vmname' }, shorten(names_.get(id) || 'VM ' + id, 22))));
    if (dr.length) row.appendChild(svg('text', { x: 6, y: y + 34, class: 'lbl drift-text' }, 'drift: ' + dr.length + ' disk(s)'));
    for (const w of windows.filter((x) => x.vm_id === id))
      row.appendChild(svg('rect', { x: X(w.from).toFixed(1), y: y + 6, width: Math.max(1, X(w.to) - X(w.from)).toFixed(1),
        height: 16, class: 'window' }, svg('title', null, 'window of ' + w.disk + ': ' + when(new Date(w.from).toISOString()) +
        ' to ' + when(new Date(w.to).toISOString()))));
    for (const a of planned.filter((x) => x.vm_id === id)) {
      const x = X(Date.parse(a.due_at));
      const down = a.kind === 'downgrade';
      row.appendChild(svg('path', { 'data-switch': a.idempotency_key, class: 'switch ' + a.kind,
        d: down ? 'M' + (x - 5) + ',' + (y + 4) + ' h10 l-5,8 z' : 'M' + (x - 5) + ',' + (y + 24) + ' h10 l-5,-8 z' },
      svg('title', null, 'planned ' + a.kind + ' of ' + a.disk + ' at ' + when(a.due_at) + ': ' + a.from_sku + ' -> ' + a.to_sku)));
    }
    for (const a of executed.filter((x) => x.vm_id === id)) {
      const x = X(Date.parse(a.updated_at || a.due_at));
      row.appendChild(svg('circle', { 'data-action': a.id, cx: x.toFixed(1), cy: y + 32, r: 5, class: 'executed s-' + a.state },
        svg('title', null, a.kind + ' ' + dash(a.disk) + ' ' + a.state + ' at ' + when(a.updated_at))));
    }
    g.appendChild(row);
  });
  if (!rows.length)
    g.appendChild(svg('text', { x: L, y: top + 24, class: 'lbl' }, 'Nothing planned, executed or drifting this week.'));
  box.appendChild(g);
  box.appendChild(el('p', { class: 'legend' },
    el('span', { class: 'key key-window', text: 'window' }), ' ',
    el('span', { class: 'key key-down', text: '\u25bc planned downgrade' }), ' ',
    el('span', { class: 'key key-up', text: '\u25b2 planned upgrade' }), ' ',
    el('span', { class: 'key key-exec', text: '\u25cf executed' }), ' ',
    el('span', { class: 'key key-drift', text: 'drift' })));
  const cur = plan.ok && plan.value ? plan.value.currency : '';
  box.appendChild(heading('Planned switches'));
  box.appendChild(table('schedule-planned', ['Due', 'VM', 'Disk', 'Kind', 'SKU', 'Saving', 'Reason'], planned,
    (a) => [when(a.due_at), vmLink(a.vm_id, a.vm), diskLink(a.disk_id, a.disk), a.kind, a.from_sku + ' -> ' + a.to_sku,
      { v: money(a.saving, a.currency || cur), cls: 'num' }, a.reason], (a) => a.idempotency_key,
    schedulePolicy ? 'Nothing planned by ' + schedulePolicy + ' this week.' : 'No policy.'));
  box.appendChild(heading('Executed this week (every policy, and switches by hand)'));
  box.appendChild(table('schedule-executed', ['Updated', 'VM', 'Disk', 'Kind', 'SKU', 'State', 'Policy'], executed,
    (a) => [when(a.updated_at), vmLink(a.vm_id, a.vm), diskLink(a.disk_id, a.disk), a.kind,
      a.from_sku ? a.from_sku + ' -> ' + a.to_sku : '-', { v: a.state, cls: 's-' + a.state }, policyLink(a.policy)],
    (a) => a.id, 'No switch ran this week.'));
};

// -------------------------------------------------------------- actions

pages.actions = async (box) => {
  const { rows } = await apiAll('/api/v1/actions?limit=5000', 'actions');
  const vmsSeen = actionVms(rows);
  let state = 'all', vm = 'all';
  const tbody = el('tbody');
  const heads = ['', 'Id', 'Due', 'VM', 'Disk', 'Kind', 'SKU', 'State', 'Policy', 'Attempts', 'Updated', 'Reason'];
  const draw = () => {
    const shown = rows.filter((a) => (state === 'all' || a.state === state) && (vm === 'all' || String(a.vm_id) === vm));
    fillRows(tbody, heads.length, shown, (a, tr) => {
      const btn = el('button', { type: 'button', class: 'expand', 'aria-expanded': 'false',
        'aria-label': 'transitions of action ' + a.id, text: '+' });
      btn.addEventListener('click', () => toggleTransitions(btn, tr, a, heads.length));
      return [btn, { v: String(a.id), cls: 'num' }, when(a.due_at), vmLink(a.vm_id, a.vm), diskLink(a.disk_id, a.disk),
        a.kind, a.from_sku ? a.from_sku + ' -> ' + a.to_sku : '-', { v: a.state, cls: 's-' + a.state },
        policyLink(a.policy), { v: String(a.attempts), cls: 'num' }, when(a.updated_at), a.reason];
    }, (a) => a.id, rows.length ? 'No action matches the filters.' : 'No action yet: nothing was planned or run.');
    count.textContent = shown.length + ' of ' + rows.length + ' actions';
  };
  const count = el('span', { class: 'summary' });
  box.appendChild(el('div', { class: 'filters' },
    select('actions-state', 'State', [{ value: 'all', label: 'all' }].concat(ACTION_STATES.map((s) => ({ value: s, label: s }))),
      state, (v) => { state = v; draw(); }),
    select('actions-vm', 'VM', [{ value: 'all', label: 'all' }].concat(vmsSeen),
      vm, (v) => { vm = v; draw(); }), count));
  box.appendChild(wide(el('table', { id: 'actions-table' },
    el('thead', null, el('tr', null, heads.map((h) => el('th', { scope: 'col', text: h })))), tbody)));
  draw();
};

// The resource group in an ARM id (/subscriptions/S/resourceGroups/RG/...), or null.
function resourceGroupOf(armId) {
  const m = /\/resourceGroups\/([^/]+)/i.exec(armId || '');
  return m ? m[1] : null;
}

// The VM filter's options: one per VM id of the actions (never two VMs
// merged by name), labelled by the name, and "name (resource group)" when
// another VM has the same name; sorted by label.
function actionVms(rows) {
  const byId = new Map();
  for (const a of rows)
    if (a.vm_id !== null && a.vm_id !== undefined && !byId.has(String(a.vm_id)))
      byId.set(String(a.vm_id), { name: a.vm || 'VM ' + a.vm_id, rg: resourceGroupOf(a.vm_resource_id) });
  const uses = new Map();
  for (const v of byId.values()) uses.set(v.name, (uses.get(v.name) || 0) + 1);
  return Array.from(byId, ([id, v]) => ({ value: id, label: uses.get(v.name) > 1 ? v.name + ' (' + (v.rg || 'VM ' + id) + ')' : v.name }))
    .sort((a, b) => a.label.localeCompare(b.label) || Number(a.value) - Number(b.value));
}

// The row under TR with action A's transitions (GET /api/v1/actions/{id}).
async function toggleTransitions(btn, tr, a, ncols) {
  const next = tr.nextElementSibling;
  if (next && next.getAttribute('data-detail') === String(a.id)) {
    next.remove();
    btn.setAttribute('aria-expanded', 'false');
    btn.textContent = '+';
    return;
  }
  btn.setAttribute('aria-expanded', 'true');
  btn.textContent = '\u2212';
  const td = el('td', { colspan: ncols, text: 'loading the transitions...' });
  const row = el('tr', { class: 'detail', 'data-detail': a.id }, td);
  tr.after(row);
  try {
    const full = await api('/api/v1/actions/' + encodeURIComponent(a.id));
    td.textContent = '';
    td.appendChild(table('action-' + a.id + '-transitions', ['From', 'To', 'At', 'Owner', 'Detail'], full.transitions || [],
      (t) => [dash(t.from), t.to, when(t.at), t.owner, t.note || t.detail], null, 'no transition recorded'));
    if (full.operation_url) td.appendChild(el('p', { class: 'sub', text: 'ARM operation: ' + full.operation_url }));
  } catch (e) {
    if (e.status === 401) { logout('The token was refused: ' + e.message); return; }
    if (e.status === 403) { logout(AGENT_TOKEN); return; }
    td.textContent = '';
    td.appendChild(errorBox('Action ' + a.id + ': ' + e.message));
  }
}

// ----------------------------------------------------------------- disk

const COST_MONTHS = 6;
const NOT_IN_FLEET = 'not in the fleet that month';

// The months of the disk page's costs: the last COST_MONTHS, newest
// first, each {m, ask} with ask false for a month before FIRST (the disk's
// first SKU history row, a "YYYY-MM"; null: none is known, every month asked).
function costMonths(now, first) {
  const out = [];
  for (let i = 0; i < COST_MONTHS; i++) {
    const m = utcMonth(now, i);
    out.push({ m, ask: first === null || m >= first });
  }
  return out;
}

// The disk's report of each month asked, one month after another (the
// server builds only two reports at once and answers the others 503 busy:
// apiRetry asks again after its Retry-After).  Outcomes as allSettled's.
async function diskCosts(id, months, alive) {
  const out = [];
  for (const x of months) {
    if (!alive()) break;
    if (!x.ask) { out.push(null); continue; }
    try {
      out.push({ status: 'fulfilled', value: await apiRetry('/api/v1/reports/monthly?month=' + x.m + '&disk=' + id + '&format=json') });
    } catch (e) {
      out.push({ status: 'rejected', reason: e });
    }
  }
  return out;
}

pages.disk = async (box, arg, alive) => {
  if (!/^[0-9]+$/.test(arg)) { box.appendChild(errorBox('No disk id in the address (#/disk/ID).')); return; }
  const d = settled((await Promise.allSettled([api('/api/v1/disks/' + arg)]))[0]);
  if (!alive()) return;
  if (!d.ok) { box.appendChild(errorBox('Disk ' + arg + ': ' + d.error.message)); return; }
  const k = d.value;
  const firstSeen = (k.sku_history || []).map((h) => h.observed_at).filter(Boolean).sort()[0];
  const months = costMonths(new Date(), firstSeen ? utcMonth(new Date(firstSeen)) : null);
  const costs = await diskCosts(arg, months, alive);
  if (!alive()) return;
  $('h2', box.parentNode).textContent = 'Disk ' + k.name;
  box.appendChild(el('p', { class: 'summary' }, 'On VM ', vmLink(k.vm_id, k.vm_name), ', ' + dash(k.role) +
    (k.lun !== null && k.lun !== undefined ? ' (LUN ' + k.lun + ')' : '') + ', ' + dash(k.sku) + ' ' + dash(k.tier) + ', ' +
    dash(k.size_gib) + ' GiB, caching ' + dash(k.caching) + (k.detached_at ? ', detached ' + when(k.detached_at) : '') + '.'));

  box.appendChild(heading('SKU history'));
  box.appendChild(table('disk-history', ['Observed', 'SKU', 'Tier', 'Size'], (k.sku_history || []).slice().reverse(),
    (h) => [when(h.observed_at), h.sku, h.tier, { v: h.size_gib === null || h.size_gib === undefined ? '-' : h.size_gib + ' GiB', cls: 'num' }],
    (h) => h.observed_at, 'no SKU recorded'));

  box.appendChild(heading('Results over time'));
  const results = (k.results || []).slice().sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
  const wrap = el('div', { id: 'disk-results' });
  const rate = (r, f) => (r.read ? r.read[f] || 0 : 0) + (r.write ? r.write[f] || 0 : 0);
  if (results.length > 1)
    wrap.appendChild(el('div', { class: 'charts' },
      timeChart('IOPS by start', results.map((r) => ({ t: Date.parse(r.started_at), v: rate(r, 'iops'), series: r.profile })), 'IOPS'),
      timeChart('MB/s by start', results.map((r) => ({ t: Date.parse(r.started_at), v: rate(r, 'mbps'), series: r.profile })), 'MB/s')));
  wrap.appendChild(table('disk-results-table', ['Started', 'Profile', 'Pattern', 'IOPS', 'MB/s', 'Latency'], results,
    (r) => [when(r.started_at), r.profile, r.method ? r.method.pattern + ' ' + num(r.method.block_size_bytes / 1024, 0) + ' KiB QD' +
      r.method.queue_depth : '-', { v: num(rate(r, 'iops')), cls: 'num' }, { v: num(rate(r, 'mbps')), cls: 'num' }, latencyText(r)],
    (r) => r.id, 'No result yet: no benchmark of this disk was reported.'));
  box.appendChild(wrap);
  if ((k.verdicts || []).length) {
    box.appendChild(heading('Verdicts'));
    box.appendChild(table('disk-verdicts', ['Verdict', 'Profile', 'Measured', 'Expected', 'Reason'], k.verdicts,
      (v) => [{ v: v.verdict, cls: 'verdict v-' + v.verdict }, v.profile,
        { v: v.measured ? num(v.measured.iops) + ' IOPS, ' + num(v.measured.mbps) + ' MB/s' : '-', cls: 'num' },
        { v: v.expected ? num(v.expected.iops) + ' IOPS, ' + num(v.expected.mbps) + ' MB/s' : '-', cls: 'num' }, v.reason],
      (v) => v.result_id + '/' + v.target));
  }

  box.appendChild(heading('Cost by month'));
  const rows = months.map((x, i) => ({ m: x.m, r: costs[i] ? settled(costs[i]) : null }));
  const notIn = (m) => [{ v: m, cls: 't' }, { v: NOT_IN_FLEET, cls: 'why' }, '-', '-', '-', '-', '-'];
  box.appendChild(table('disk-costs', ['Month', 'SKUs (hours)', 'Cost', 'Had it stayed', 'Realised', 'Possible', 'Note'], rows,
    ({ m, r }) => {
      if (r === null) return notIn(m); // before its first SKU row: not asked
      if (!r.ok && r.error.status === 404 && r.error.code === 'not_found') return notIn(m);
      if (!r.ok) return [{ v: m, cls: 't' }, { v: (r.error.code ? r.error.code + ': ' : '') + r.error.message, cls: 'why' }, '-', '-', '-', '-', '-'];
      const rep = r.value, row = (rep.disks || [])[0], cur = rep.currency;
      if (!row) return notIn(m);
      const note = [];
      if (!row.priced) note.push('no price: ' + (row.unpriced_why || row.unpriced));
      if (row.excluded) note.push('excluded: ' + (row.excluded_why || row.excluded));
      if (rep.partial) note.push('month so far');
      return [{ v: m, cls: 't' }, (row.hours_by_sku || []).map((h) => h.sku + ' ' + dash(h.tier) + ' ' + h.hours + ' h').join('; '),
        { v: row.priced ? money(row.cost, cur) : '-', cls: 'num' }, { v: row.priced ? money(row.baseline, cur) : '-', cls: 'num' },
        { v: row.priced ? money(row.realised, cur) : '-', cls: 'num' },
        { v: row.possible_known ? money(row.possible, cur) : '-', cls: 'num' }, note.join('; ')];
    }, (x) => x.m));
};

// ------------------------------------------------------------------- vm

pages.vm = async (box, arg) => {
  if (!/^[0-9]+$/.test(arg)) { box.appendChild(errorBox('No VM id in the address (#/vm/ID).')); return; }
  const v = await api('/api/v1/vms/' + arg);
  $('h2', box.parentNode).textContent = 'VM ' + v.name;
  box.appendChild(el('p', { class: 'summary', text: dash(v.vm_size) + ' in ' + dash(v.location) + ', resource group ' +
    dash(v.resource_group) + ', ' + dash(v.power_state) + (v.power_state_at ? ' since ' + when(v.power_state_at) : '') +
    ', last report ' + when(v.last_report_at) + '.' }));
  const tags = v.tags ? Object.keys(v.tags).map((t) => t + '=' + v.tags[t]).join(', ') : '';
  if (tags) box.appendChild(el('p', { class: 'summary', text: 'Tags: ' + tags }));
  // One table, a row per disk; its verdicts (a stripe's on each of its disks) in a column.
  const verdictsOf = (name) => (v.verdicts || []).filter((x) => (x.disks || []).includes(name)).map((x) => {
    const key = x.judged === 'mbps' ? 'mbps' : 'iops', unit = x.judged === 'mbps' ? 'MB/s' : 'IOPS';
    return el('div', null, el('span', { class: 'verdict v-' + x.verdict, text: x.verdict }), ' ' + dash(x.profile) + ': ' +
      num(x.measured && x.measured[key]) + ' / ' + num(x.expected && x.expected[key]) + ' ' + unit);
  });
  box.appendChild(heading('Disks'));
  box.appendChild(table('vm-disks', ['Disk', 'Role', 'LUN', 'SKU', 'Tier', 'Size', 'Caching', 'Device', 'Verdicts (measured / expected)'],
    v.disks || [], (d) => {
      const vs = verdictsOf(d.name);
      return [diskLink(d.id, d.name), d.role, d.lun, d.sku, d.tier, { v: d.size_gib === null ? '-' : d.size_gib + ' GiB', cls: 'num' },
        d.caching, d.device, vs.length ? vs : 'no verdict yet'];
    }, (d) => d.id, 'No disk stored for this VM.'));
  if ((v.verdicts || []).length)
    box.appendChild(el('ul', { class: 'summary why-list' }, v.verdicts.map((x) => el('li', { text: (x.disks || []).join(' + ') +
      ', ' + dash(x.profile) + ': ' + x.reason }))));
  for (const e of v.verdict_errors || [])
    box.appendChild(el('p', { class: 'error', text: (e.result_id ? 'result ' + e.result_id + ': ' : '') + e.message }));
};

// --------------------------------------------------------------- prices

// The price book of each region the VMs are in (USD), and where it comes
// from: prices refreshed from the Retail Prices API (when), or the
// bundled snapshot.
pages.prices = async (box, arg, alive) => {
  const { rows: vms } = await apiAll('/api/v1/vms?limit=5000', 'vms');
  const regions = Array.from(new Set(vms.map((v) => v.location).filter(Boolean))).sort();
  const books = await Promise.allSettled(regions.map((r) => api('/api/v1/prices?region=' + encodeURIComponent(r))));
  if (!alive()) return;
  const rows = [];
  if (!regions.length) box.appendChild(el('p', { class: 'summary', text: 'No VM is stored yet, so no region to show.' }));
  regions.forEach((region, i) => {
    const b = settled(books[i]);
    if (!b.ok) { box.appendChild(errorBox(region + ': ' + b.error.message)); return; }
    const book = b.value;
    if (!(book.prices || []).length) { // a snapshot without this region is no book
      box.appendChild(el('p', { class: 'warn', 'data-region': region, text: 'no price for ' + region +
        ': the report leaves its disks out' }));
      return;
    }
    box.appendChild(el('p', { class: 'summary', text: book.region + ' (' + book.currency + '): ' + book.source +
      ', fetched ' + when(book.fetched_at) }));
    for (const x of book.prices || []) rows.push(Object.assign({ currency: book.currency, region: book.region }, x));
  });
  box.appendChild(table('prices-table', ['Region', 'Tier', 'SKU', 'Redundancy', 'Per month', 'Per 10,000 transactions'], rows,
    (x) => [x.region, x.tier, x.sku, x.redundancy, { v: money(x.per_month, x.currency), cls: 'num' },
      { v: x.per_10k_transactions === null || x.per_10k_transactions === undefined ? '-' : money(x.per_10k_transactions, x.currency), cls: 'num' }],
    (x) => x.region + '/' + x.sku, 'no price'));
};

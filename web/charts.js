// tierwise dashboard, part 2: charts as inline SVG, built with
// createElementNS (no library).  Colours come from style.css classes.
'use strict';

const SVGNS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs, ...kids) {
  const e = document.createElementNS(SVGNS, tag);
  if (attrs)
    for (const k of Object.keys(attrs))
      if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, String(attrs[k]));
  for (const k of kids.flat(3)) {
    if (k === null || k === undefined || k === false) continue;
    e.appendChild(typeof k === 'object' ? k : document.createTextNode(String(k)));
  }
  return e;
}

function shorten(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + '\u2026' : s; }
// The end of S kept (a group "subscription/resource-group" is told apart by its end).
function shortenStart(s, n) { s = String(s); return s.length > n ? '\u2026' + s.slice(s.length - n + 1) : s; }

// Horizontal bars: ROWS [{label, value (number), text}], one bar each.
function barChart(title, rows, cls) {
  const W = 720, left = 200, right = 130, rowH = 26;
  const max = Math.max(...rows.map((r) => r.value), 0) || 1;
  const h = rows.length * rowH + 8;
  const g = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + h, role: 'img', 'aria-label': title },
    svg('title', null, title));
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    const w = Math.max(0, (W - left - right) * r.value / max);
    g.appendChild(svg('g', null,
      svg('title', null, r.label + ': ' + r.text),
      svg('text', { x: left - 8, y: y + 17, 'text-anchor': 'end', class: 'lbl' }, shortenStart(r.label, 24)),
      svg('rect', { x: left, y: y + 3, width: w.toFixed(1), height: rowH - 8, class: 'bar ' + (cls || '') }),
      svg('text', { x: left + w + 6, y: y + 17, class: 'val' }, r.text)));
  });
  return g;
}

// Stacked bars: ROWS [{label, parts: [{key, value}]}]; KEYS in order, with
// their css class 'v-fill-KEY'.
function stackedChart(title, rows, keys) {
  const W = 720, left = 200, right = 60, rowH = 28, legendH = 26;
  const max = Math.max(...rows.map((r) => r.parts.reduce((a, p) => a + p.value, 0)), 0) || 1;
  const h = rows.length * rowH + legendH + 8;
  const g = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + h, role: 'img', 'aria-label': title },
    svg('title', null, title));
  let lx = left;
  for (const k of keys) {
    g.appendChild(svg('rect', { x: lx, y: 6, width: 12, height: 12, class: 'v-fill-' + k }));
    g.appendChild(svg('text', { x: lx + 16, y: 17, class: 'lbl' }, k));
    lx += 24 + k.length * 8;
  }
  rows.forEach((r, i) => {
    const y = legendH + 4 + i * rowH;
    const total = r.parts.reduce((a, p) => a + p.value, 0);
    const grp = svg('g', null, svg('title', null, r.label + ': ' +
      r.parts.filter((p) => p.value).map((p) => p.value + ' ' + p.key).join(', ')),
    svg('text', { x: left - 8, y: y + 18, 'text-anchor': 'end', class: 'lbl' }, shorten(r.label, 28)));
    let x = left;
    for (const p of r.parts) {
      if (!p.value) continue;
      const w = (W - left - right) * p.value / max;
      grp.appendChild(svg('rect', { x: x.toFixed(1), y: y + 3, width: w.toFixed(1), height: rowH - 8,
        class: 'v-fill-' + p.key }));
      x += w;
    }
    grp.appendChild(svg('text', { x: x + 6, y: y + 18, class: 'val' }, String(total)));
    g.appendChild(grp);
  });
  return g;
}

// Measured against expected, one small chart for a table cell.
function measuredBars(measured, expected, unit) {
  const W = 150, H = 30;
  const m = Number(measured) || 0, x = Number(expected) || 0;
  const max = Math.max(m, x) || 1;
  const title = 'measured ' + num(measured) + ' ' + unit + ', expected ' + num(expected) + ' ' + unit;
  return svg('svg', { class: 'mini', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title },
    svg('title', null, title),
    svg('rect', { x: 0, y: 2, width: (W * m / max).toFixed(1), height: 11,
      class: m < x ? 'bar-under' : 'bar-ok' }),
    svg('rect', { x: 0, y: 17, width: (W * x / max).toFixed(1), height: 11, class: 'bar-expected' }));
}

// Points over time: POINTS [{t (ms), v, series}], dots joined by a line
// within each series (a profile), a legend when there are several.
function timeChart(title, points, unit) {
  const W = 560, H = 190, L = 64, R = 16, T = 26, B = 30;
  const ts = points.map((p) => p.t), vs = points.map((p) => p.v);
  const t0 = Math.min(...ts), t1 = Math.max(...ts), vmax = Math.max(...vs, 0) || 1;
  const X = (t) => L + (t1 === t0 ? (W - L - R) / 2 : (W - L - R) * (t - t0) / (t1 - t0));
  const Y = (v) => T + (H - T - B) * (1 - v / vmax);
  const g = svg('svg', { class: 'chart small', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': title },
    svg('title', null, title),
    svg('line', { x1: L, y1: Y(0), x2: W - R, y2: Y(0), class: 'axis' }),
    svg('line', { x1: L, y1: T, x2: L, y2: Y(0), class: 'axis' }),
    svg('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', class: 'lbl' }, num(vmax, 0)),
    svg('text', { x: L - 6, y: Y(0), 'text-anchor': 'end', class: 'lbl' }, '0'),
    svg('text', { x: L, y: H - 8, class: 'lbl' }, when(new Date(t0).toISOString())),
    svg('text', { x: W - R, y: H - 8, 'text-anchor': 'end', class: 'lbl' }, when(new Date(t1).toISOString())),
    svg('text', { x: L, y: 14, class: 'val' }, title + ' (' + unit + ')'));
  const series = Array.from(new Set(points.map((p) => p.series)));
  series.forEach((name, i) => {
    const pts = points.filter((p) => p.series === name).sort((a, b) => a.t - b.t);
    const cls = 's' + (i % 6);
    if (pts.length > 1)
      g.appendChild(svg('polyline', { class: 'line ' + cls, points: pts.map((p) => X(p.t).toFixed(1) + ',' + Y(p.v).toFixed(1)).join(' ') }));
    for (const p of pts)
      g.appendChild(svg('circle', { cx: X(p.t).toFixed(1), cy: Y(p.v).toFixed(1), r: 4, class: 'dot ' + cls },
        svg('title', null, name + ', ' + when(new Date(p.t).toISOString()) + ': ' + num(p.v) + ' ' + unit)));
    if (series.length > 1) {
      const lx = W - R - 150, ly = T + 4 + i * 16;
      g.appendChild(svg('circle', { cx: lx, cy: ly - 4, r: 4, class: 'dot ' + cls }));
      g.appendChild(svg('text', { x: lx + 8, y: ly, class: 'lbl' }, shorten(name, 20)));
    }
  });
  return g;
}

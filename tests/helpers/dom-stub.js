// dom-stub.js - just enough of a browser's DOM for the dashboard's scripts
// (web/*.js) to run under node: elements with attributes, children, text
// and handlers; querySelector(All) for the selectors the scripts use (tag,
// #id, .class, [attr], [attr=value], compounds of those, and descendant
// chains); a document built from index.html's tags.  Used by
// tests/integration/test-dashboard-signin.sh and tests/cli/test-dashboard-units.sh.
'use strict';
const fs = require('fs');

class Elem {
  constructor(tag, ns) {
    this.tagName = tag.toUpperCase(); this.ns = ns || null; this.attrs = {}; this.children = [];
    this.parentNode = null; this.handlers = {}; this.text = ''; this.value = ''; this.selected = false;
  }
  get id() { return this.attrs.id || ''; }
  get hidden() { return 'hidden' in this.attrs; }
  set hidden(v) { if (v) this.attrs.hidden = ''; else delete this.attrs.hidden; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return k in this.attrs ? this.attrs[k] : null; }
  removeAttribute(k) { delete this.attrs[k]; }
  addEventListener(t, fn) { this.handlers[t] = fn; }
  appendChild(c) { if (c.parentNode) c.remove(); c.parentNode = this; this.children.push(c); return c; }
  replaceChild(n, o) { const i = this.children.indexOf(o); n.parentNode = this; o.parentNode = null; this.children[i] = n; return o; }
  remove() { if (this.parentNode) { const p = this.parentNode; p.children.splice(p.children.indexOf(this), 1); this.parentNode = null; } }
  after(n) { const p = this.parentNode; if (n.parentNode) n.remove(); n.parentNode = p; p.children.splice(p.children.indexOf(this) + 1, 0, n); }
  get nextElementSibling() { const p = this.parentNode; if (!p) return null; return p.children[p.children.indexOf(this) + 1] || null; }
  get textContent() { return this.text + this.children.map((c) => c.textContent).join(''); }
  set textContent(v) { this.text = String(v); for (const c of this.children) c.parentNode = null; this.children = []; }
  focus() { focused = this; }
  closest(sel) { for (let e = this; e; e = e.parentNode) if (e instanceof Elem && e.matches(sel)) return e; return null; }
  *walk() { for (const c of this.children) if (c instanceof Elem) { yield c; yield* c.walk(); } }
  matches(simple) {
    const m = /^([a-zA-Z0-9]*)(.*)$/.exec(simple);
    if (m[1] && m[1].toUpperCase() !== this.tagName) return false;
    const re = /#([\w-]+)|\.([\w-]+)|\[([\w-]+)(?:="?([^"\]]*)"?)?\]/g;
    let p;
    while ((p = re.exec(m[2])) !== null) {
      if (p[1] && this.id !== p[1]) return false;
      if (p[2] && !(this.attrs.class || '').split(/\s+/).includes(p[2])) return false;
      if (p[3] && (!(p[3] in this.attrs) || (p[4] !== undefined && this.attrs[p[3]] !== p[4]))) return false;
    }
    return true;
  }
  matchesChain(parts) {
    if (!this.matches(parts[parts.length - 1])) return false;
    let i = parts.length - 2;
    for (let a = this.parentNode; a && i >= 0; a = a.parentNode) if (a instanceof Elem && a.matches(parts[i])) i--;
    return i < 0;
  }
  querySelectorAll(sel) { const parts = sel.trim().split(/\s+/); return [...this.walk()].filter((e) => e.matchesChain(parts)); }
  querySelector(sel) { return this.querySelectorAll(sel)[0] || null; }
}
class Text { constructor(t) { this.textContent = t; this.parentNode = null; }
  remove() { if (this.parentNode) { const p = this.parentNode; p.children.splice(p.children.indexOf(this), 1); } } }

let focused = null;
const VOID = new Set(['meta', 'link', 'input', 'br', 'img', 'hr']);

// A document holding INDEX_PATH's elements (tags and attributes; text is not
// needed), or an empty one without it.
function makeDocument(indexPath) {
  const root = new Elem('html');
  const html = indexPath ? fs.readFileSync(indexPath, 'utf8') : '';
  const stack = [root];
  const tagRe = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)((?:\s+[a-zA-Z-]+(?:="[^"]*")?)*)\s*\/?>/g;
  let m;
  while ((m = tagRe.exec(html)) !== null) {
    const tag = m[2].toLowerCase();
    if (m[1]) { while (stack.length > 1 && stack.pop().tagName !== tag.toUpperCase()); continue; }
    const e = new Elem(tag);
    for (const a of m[3].matchAll(/([a-zA-Z-]+)(?:="([^"]*)")?/g)) e.attrs[a[1]] = a[2] === undefined ? '' : a[2];
    stack[stack.length - 1].appendChild(e);
    if (!VOID.has(tag)) stack.push(e);
  }
  return {
    root,
    get activeElement() { return focused; },
    querySelector: (sel) => root.querySelector(sel),
    querySelectorAll: (sel) => root.querySelectorAll(sel),
    createElement: (t) => new Elem(t),
    createElementNS: (ns, t) => new Elem(t, ns),
    createTextNode: (t) => new Text(t),
  };
}

module.exports = { Elem, Text, makeDocument };

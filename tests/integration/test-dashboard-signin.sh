#!/usr/bin/env bash
# The dashboard's sign-in (web/app.js) against a real tierwise serve: an
# agent token is refused at sign-in with words that say so (it used to be
# kept, and every tab then failed with 403), a reader token signs in and
# the compliance tab loads, an unknown token is refused.  app.js runs under
# node with the few parts of a DOM it touches; its fetch goes to the
# server on 127.0.0.1.  Needs node and curl (else skipped).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-signin-XXXXXX")
. "$(dirname "$0")/../helpers/testlib.sh"
. "$(dirname "$0")/server-lib.sh"
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
need node curl

start_server main
[ -n "$base" ] || { bad "server did not start: $(cat "$scratch/main.err")"; finish dashboard-signin; exit 1; }
agent=$(make_token agent)
reader=$(make_token reader)

cat >"$scratch/harness.js" <<'EOF'
// node harness.js BASE APP_JS TOKEN: signs in with TOKEN, prints the state.
'use strict';
const fs = require('fs');
const vm = require('vm');
const [base, appPath, tok] = process.argv.slice(2);

function element(id) {
  return {
    id, hidden: false, textContent: '', value: '', className: '', colSpan: 1, children: [],
    handlers: {}, dataset: {},
    classList: { toggle() {} },
    addEventListener(type, fn) { this.handlers[type] = fn; },
    appendChild(c) { this.children.push(c); return c; },
  };
}
const els = {};
const document = {
  querySelector(sel) {
    if (!els[sel]) els[sel] = element(sel);
    if (sel.endsWith(' thead tr')) els[sel].children = [1, 2, 3, 4, 5, 6, 7, 8];
    return els[sel];
  },
  querySelectorAll() { return []; },
  createElement(tag) { return element(tag); },
};
const store = new Map();
const sessionStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};
const calls = [];
const fetchLocal = (path, opts) => { calls.push(path); return fetch(base + path, opts); };
const ctx = vm.createContext({ document, sessionStorage, fetch: fetchLocal, console });
vm.runInContext(fs.readFileSync(appPath, 'utf8'), ctx, { filename: 'app.js' });

(async () => {
  const $ = (s) => document.querySelector(s);
  $('#token').value = tok;
  await $('#login-form').handlers.submit({ preventDefault() {} });
  // start() loads the tab without waiting: give it time to finish.
  for (let i = 0; i < 50 && $('#status').textContent === 'loading...'; i++)
    await new Promise((r) => setTimeout(r, 100));
  console.log(JSON.stringify({
    login_hidden: $('#login').hidden, main_hidden: $('#main').hidden,
    login_error: $('#login-error').textContent, main_error: $('#main-error').textContent,
    status: $('#status').textContent, kept: sessionStorage.getItem('tierwise.token') !== null,
    calls,
  }));
})().catch((e) => { console.log(JSON.stringify({ crash: String(e) })); });
EOF

signin() { node "$scratch/harness.js" "$base" "$srcdir/web/app.js" "$1"; }
check() { # check WHAT JSON JQ-EXPRESSION
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: $2"; fi
}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }

# An agent token: refused at sign-in, saying it is an agent token.
s=$(signin "$agent")
check "agent token" "$s" '.login_hidden == false and .main_hidden == true and .kept == false'
check "agent token words" "$s" '(.login_error | contains("This is an agent token")) and
  (.login_error | contains("reader token"))'
check "agent token asked one reader route" "$s" '.calls == ["/api/v1/vms?limit=1"]'
# A reader token: signed in, and the compliance tab loads.
s=$(signin "$reader")
check "reader token" "$s" '.login_hidden == true and .main_hidden == false and .kept == true and
  .login_error == "" and .main_error == "" and (.status | startswith("updated"))'
check "reader token loads compliance" "$s" '.calls | index("/api/v1/compliance") != null'
# A token the server does not know: refused, kept nowhere.
s=$(signin "tw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
check "unknown token" "$s" '.login_hidden == false and .kept == false and
  (.login_error | startswith("The token was refused"))'

stop_server TERM
finish dashboard-signin

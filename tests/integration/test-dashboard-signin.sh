#!/usr/bin/env bash
# The dashboard's sign-in and router (web/*.js) against a real tierwise
# serve: an agent token is refused at sign-in with words that say so (it
# used to be kept, and every page then failed with 403), a reader token
# signs in, the fleet page (the default route) and the compliance page
# load and mark themselves ready (data-ready="1") with the verdict of a
# posted report drawn as a row, a disk page of an id the server does not
# know shows the API's error in an alert, a 403 or 401 on a page later
# signs out with words that say why, an unknown token is refused.
# The scripts run under node, in the order index.html loads them, with a
# small DOM built from index.html; their fetch goes to the server on
# 127.0.0.1.  Also: every script index.html loads exists, none inserts
# HTML (innerHTML, insertAdjacentHTML, document.write, eval), and
# index.html holds no inline script, style or handler (the CSP forbids
# them).  Needs node, curl and jq (else skipped).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-signin-XXXXXX")
. "$(dirname "$0")/../helpers/testlib.sh"
. "$(dirname "$0")/server-lib.sh"
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
need node curl jq

start_server main
[ -n "$base" ] || { bad "server did not start: $(cat "$scratch/main.err")"; finish dashboard-signin; exit 1; }
agent=$(make_token agent)
reader=$(make_token reader)
report "$(uuid 1)"
[ "$(post_report "$scratch/r-$(uuid 1).json" "$agent")" = 201 ] && ok || bad "posting a report: $(cat "$scratch/body")"

# The files: scripts in the order index.html loads them, all present.
web="$srcdir/web"
mapfile -t scripts < <(grep -o '<script src="[^"]*"></script>' "$web/index.html" | sed 's/.*src="\([^"]*\)".*/\1/')
[ "${#scripts[@]}" -ge 1 ] && ok || bad "index.html loads no script"
paths=()
for s in "${scripts[@]}"; do
  [ -f "$web/$s" ] && ok || bad "index.html loads $s, which web/ lacks"
  paths+=("$web/$s")
done
if grep -nE 'innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function' "${paths[@]}"; then
  bad "a script inserts HTML or evaluates text (above)"
else ok; fi
if grep -nE '<script>|<script [^>]*>[^<]|style=|<style| on[a-z]+=' "$web/index.html"; then
  bad "index.html has inline script, style or a handler attribute (above), which the CSP forbids"
else ok; fi

# The hidden attribute hides whatever a rule of style.css displays (nav is
# display: flex, which beat the browser's own [hidden] rule: the nav showed
# before sign-in).
grep -qF '[hidden] { display: none !important; }' "$web/style.css" && ok ||
  bad "style.css lets a display rule show a hidden element (no [hidden] { display: none !important; })"

cat >"$scratch/harness.js" <<'EOF'
// node harness.js BASE INDEX_HTML TOKEN [HASH] SCRIPT...: signs in with
// TOKEN, then goes to HASH (if not "-"), prints the state.
'use strict';
const fs = require('fs');
const vm = require('vm');
const [base, indexPath, tok, hash, ...scriptPaths] = process.argv.slice(2);

const { makeDocument } = require(process.env.TW_SOURCE_DIR + '/tests/helpers/dom-stub.js');
const document = makeDocument(indexPath);
const store = new Map();
const sessionStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, String(v)),
  removeItem: (k) => store.delete(k),
};
const winHandlers = {};
const window = { addEventListener: (t, fn) => { winHandlers[t] = fn; } };
const location = { hash: '' };
const calls = [];
const fetchLocal = (path, opts) => { calls.push(path); return fetch(base + path, opts); };
const ctx = vm.createContext({ document, sessionStorage, fetch: fetchLocal, console, setTimeout, window, location });
for (const p of scriptPaths) vm.runInContext(fs.readFileSync(p, 'utf8'), ctx, { filename: p });

const $ = (s) => document.querySelector(s);
const wait = async (f) => { for (let i = 0; i < 100 && !f(); i++) await new Promise((r) => setTimeout(r, 100)); };
const ready = (n) => $('[data-page=' + n + '][data-ready="1"]') !== null;
(async () => {
  $('#token').value = tok;
  await $('#login-form').handlers.submit({ preventDefault() {} });
  await wait(() => ready('fleet') || $('#login').hidden === false);
  const out = {
    login_hidden: $('#login').hidden, main_hidden: $('#main').hidden, nav_hidden: $('#nav').hidden,
    login_error: $('#login-error').textContent, main_error: $('#main-error').textContent,
    kept: sessionStorage.getItem('tierwise.token') !== null, fleet_ready: ready('fleet'),
  };
  if (hash !== '-' && out.kept) {
    const name = /^#\/([a-z]+)/.exec(hash)[1];
    // TW_SWAP_TOKEN: the kept token replaced (a role the server no longer
    // lets read) before the page is asked for.
    if (process.env.TW_SWAP_TOKEN) sessionStorage.setItem('tierwise.token', process.env.TW_SWAP_TOKEN);
    location.hash = hash;
    winHandlers.hashchange();
    await wait(() => ready(name) || $('#login').hidden === false);
    out.after_login_hidden = $('#login').hidden;
    out.after_login_error = $('#login-error').textContent;
    out.after_kept = sessionStorage.getItem('tierwise.token') !== null;
    const sec = $('#page-' + name);
    out.page = name;
    out.page_ready = ready(name);
    out.page_hidden = sec.hidden;
    out.others_hidden = document.querySelectorAll('section[data-page]').filter((s) => s !== sec).every((s) => s.hidden);
    out.alerts = sec.querySelectorAll('.error[role=alert]').map((e) => e.textContent);
    out.rows = sec.querySelectorAll('tbody tr[data-id]').map((tr) => tr.getAttribute('data-id'));
    out.current = $('nav a[aria-current=page]') ? $('nav a[aria-current=page]').getAttribute('data-nav') : null;
  }
  out.status = $('#status').textContent;
  out.calls = calls;
  console.log(JSON.stringify(out));
})().catch((e) => { console.log(JSON.stringify({ crash: String(e.stack || e) })); });
EOF

signin() { node "$scratch/harness.js" "$base" "$web/index.html" "$1" "$2" "${paths[@]}"; }
check() { # check WHAT JSON JQ-EXPRESSION
  if jq -e "$3" >/dev/null 2>&1 <<<"$2"; then ok; else bad "$1: $3 is not true of: $2"; fi
}
month=$(date -u +%Y-%m)

# An agent token: refused at sign-in, saying it is an agent token.
s=$(signin "$agent" -)
check "agent token" "$s" '.login_hidden == false and .main_hidden == true and .nav_hidden == true and .kept == false'
check "agent token words" "$s" '(.login_error | contains("This is an agent token")) and
  (.login_error | contains("reader token"))'
check "agent token asked one reader route" "$s" '.calls == ["/api/v1/vms?limit=1"]'
# A reader token: signed in, the fleet page (the default) loads and is
# marked ready, having asked for this month's report and the compliance
# summary; then the compliance page draws the posted report's verdicts.
s=$(signin "$reader" "#/compliance")
check "reader token" "$s" '.login_hidden == true and .main_hidden == false and .kept == true and
  .login_error == "" and .main_error == "" and .fleet_ready == true and (.status | startswith("updated"))'
check "the fleet page's reads" "$s" '(.calls | index("/api/v1/reports/monthly?month='"$month"'&format=json") != null) and
  (.calls | index("/api/v1/compliance/summary") != null)'
check "the compliance page" "$s" '.page == "compliance" and .page_ready == true and .page_hidden == false and
  .others_hidden == true and .current == "compliance" and .alerts == [] and (.rows | length) >= 1 and
  (.calls | index("/api/v1/compliance?limit=5000") != null)'
# A disk the server does not know: the API's error, in an alert on the page.
s=$(signin "$reader" "#/disk/999999")
check "an unknown disk" "$s" '.page == "disk" and .page_ready == true and (.alerts | length) == 1 and
  (.alerts[0] | test("999999")) and .kept == true'
# A page that gets 403 later (the kept token swapped for an agent's) signs
# out with the agent token's words; a 401 with the server's.
s=$(TW_SWAP_TOKEN=$agent signin "$reader" "#/actions")
check "a later 403" "$s" '.after_login_hidden == false and .after_kept == false and .page_ready == false and
  (.after_login_error | contains("This is an agent token"))'
s=$(TW_SWAP_TOKEN=tw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA signin "$reader" "#/schedule")
check "a later 401" "$s" '.after_login_hidden == false and .after_kept == false and
  (.after_login_error | startswith("The token was refused"))'
# A token the server does not know: refused, kept nowhere.
s=$(signin "tw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" -)
check "unknown token" "$s" '.login_hidden == false and .kept == false and
  (.login_error | startswith("The token was refused"))'

stop_server TERM
finish dashboard-signin

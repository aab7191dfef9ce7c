#!/usr/bin/env bash
# tierwise serve round trip: reports posted (201) and repeated
# (200 "already stored"), then read back through /vms, /vms/{id}, /disks,
# /disks/{id} (latest results and verdicts) and /compliance; /metrics
# counts them; the dashboard's files are served; serve's usage errors and
# --config (flags win).  Needs curl and jq (77 without).
#
# ctest-parts: node
#   (no part)  all of the above
#   node       the served scripts parse as JavaScript: needs node (not
#              installed by deploy/setup.sh), exits 77 (skipped) without
set -u
part=${1:-}
case "$part" in
  ""|node) ;;
  *) echo "unknown part \"$part\" (none, or node)"; exit 2 ;;
esac
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-api-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

if [ "$part" = node ]; then
  need node
  start_server main
  [ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
  for f in app.js charts.js pages.js start.js; do
    [ "$(req GET "/$f" -)" = 200 ] && ok || bad "GET /$f"
    cp "$scratch/body" "$scratch/served-$f"
    node --check "$scratch/served-$f" && ok || bad "the served $f does not parse"
  done
  stop_server TERM
  finish server-api/node
  exit
fi

agent=$(make_token agent)
reader=$(make_token reader)
start_server main
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
grep -q "listening on $base" "$scratch/main.err" && ok || bad "no listening line: $(cat "$scratch/main.err")"
[ ! -s "$scratch/main.out" ] && ok || bad "serve wrote to stdout: $(cat "$scratch/main.out")"

# ---- posting: 201 then 200 for the same id ----
n_results=0
for f in "$fixtures"/reports/*.json; do
  id=$(jq -r .id "$f")
  [ "$(post_report "$f" "$agent")" = 201 ] && ok || bad "$f: $(cat "$scratch/body")"
  jq -e --arg id "$id" '.id == $id and .status == "stored"' "$scratch/body" >/dev/null && ok || bad "201 body: $(cat "$scratch/body")"
  grep -qi "^Location:" "$scratch/headers" && bad "a Location to a route that does not exist" || ok
  [ "$(post_report "$f" "$agent")" = 200 ] && ok || bad "$f again: $(cat "$scratch/body")"
  jq -e --arg id "$id" '.id == $id and .status == "already stored"' "$scratch/body" >/dev/null && ok || bad "200 body: $(cat "$scratch/body")"
  n_results=$((n_results + $(jq '.results | length' "$f")))
done

# ---- reading back ----
[ "$(req GET /api/v1/vms "$reader")" = 200 ] && ok || bad "GET /vms"
cp "$scratch/body" "$scratch/vms.json"
[ "$(jq '.vms | length' "$scratch/vms.json")" = 3 ] && ok || bad "3 VMs: $(cat "$scratch/vms.json")"
grep -qi '^Content-Type: application/json' "$scratch/headers" && ok || bad "JSON content type"
vm=$(jq '.vms[] | select(.name == "web-03") | .id' "$scratch/vms.json")
[ "$(jq '.vms[] | select(.name == "web-03") | .disks' "$scratch/vms.json")" = 4 ] && ok || bad "web-03 disk count"

[ "$(req GET "/api/v1/vms/$vm" "$reader")" = 200 ] && ok || bad "GET /vms/$vm"
jq -e '.name == "web-03" and (.disks | length) == 4 and (.verdicts | length) == 2' "$scratch/body" >/dev/null && ok || bad "/vms/$vm: $(head -c 400 "$scratch/body")"
jq -e '.verdicts[0] | .verdict and .reason and .vm_name == "web-03" and .profile' "$scratch/body" >/dev/null && ok || bad "verdict fields: $(jq -c '.verdicts[0]' "$scratch/body")"

[ "$(req GET /api/v1/disks "$reader")" = 200 ] && ok || bad "GET /disks"
cp "$scratch/body" "$scratch/disks.json"
[ "$(jq '.disks | length' "$scratch/disks.json")" = 16 ] && ok || bad "16 disks: $(jq '.disks | length' "$scratch/disks.json")"
jq -e '.disks | all(has("verdicts"))' "$scratch/disks.json" >/dev/null && ok || bad "disks without verdicts"
disk=$(jq '.disks[] | select(.name == "web-03-data0") | .id' "$scratch/disks.json")
[ "$(jq '.disks[] | select(.name == "web-03-data0") | .verdicts | length' "$scratch/disks.json")" -ge 1 ] && ok || bad "web-03-data0 has no verdict"

[ "$(req GET "/api/v1/disks/$disk" "$reader")" = 200 ] && ok || bad "GET /disks/$disk"
jq -e '.name == "web-03-data0" and (.results | length) >= 1 and (.verdicts | length) >= 1 and (.sku_history | length) >= 1' "$scratch/body" >/dev/null && ok || bad "/disks/$disk: $(head -c 400 "$scratch/body")"

[ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "GET /compliance"
jq -e --argjson n "$n_results" '.vms == 3 and ((.verdicts | length) + (.errors | length)) == $n' "$scratch/body" >/dev/null && ok || bad "compliance covers $n_results results: $(head -c 400 "$scratch/body")"
jq -e '.verdicts | all(.verdict | IN("delivers","under","vm-capped","burst","cached","inconclusive"))' "$scratch/body" >/dev/null && ok || bad "verdict names"

# ---- metrics ----
[ "$(req GET /metrics -)" = 200 ] && ok || bad "GET /metrics"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$scratch/headers" && ok || bad "metrics content type"
grep -q '^tierwise_reports_stored 3$' "$scratch/body" && ok || bad "reports stored: $(grep reports_stored "$scratch/body")"
grep -q '^tierwise_http_requests_total{route="POST /api/v1/reports",status="201"} 3$' "$scratch/body" && ok || bad "201 count"
grep -q '^tierwise_http_requests_total{route="POST /api/v1/reports",status="200"} 3$' "$scratch/body" && ok || bad "200 count"
grep -q '^tierwise_http_request_duration_seconds_bucket{route="GET /api/v1/vms",le="+Inf"} 1$' "$scratch/body" && ok || bad "latency histogram"
grep -q '^tierwise_database_size_bytes [1-9]' "$scratch/body" && ok || bad "database size"
grep -q '^tierwise_ingest_reports_total{outcome="repeat"} 3$' "$scratch/body" && ok || bad "repeat count"

# ---- the dashboard ----
[ "$(req GET / -)" = 200 ] && ok || bad "GET /"
grep -q '<script src="app.js">' "$scratch/body" && ok || bad "index.html"
grep -qi "^Content-Security-Policy: default-src 'self'" "$scratch/headers" && ok || bad "no CSP"
# What the server serves, not the files in web/: the same bytes, nothing
# loaded from elsewhere, and the prices tab.
for f in app.js charts.js pages.js start.js style.css index.html; do
  [ "$(req GET "/$f" -)" = 200 ] && ok || bad "GET /$f"
  cp "$scratch/body" "$scratch/served-$f"
  cmp -s "$scratch/served-$f" "$srcdir/web/$f" && ok || bad "/$f differs from web/$f"
done
# (the SVG namespace is a name, not a resource: nothing is fetched from it)
! grep -hE 'https?://' "$scratch"/served-*.html "$scratch"/served-*.js "$scratch"/served-*.css |
  grep -vF "const SVGNS = 'http://www.w3.org/2000/svg';" | grep -q . && ok ||
  bad "the dashboard loads something from elsewhere"
# The dashboard says which prices it uses (issue 5): a Prices page reading
# /api/v1/prices, whose answer names its source.
grep -q 'data-page="prices"' "$scratch/served-index.html" &&
  grep -q "table('prices-table'" "$scratch/served-pages.js" &&
  grep -q "/api/v1/prices?region=" "$scratch/served-pages.js" &&
  grep -q 'book.source' "$scratch/served-pages.js" &&
  ok || bad "the served dashboard has no prices page showing their source"
[ "$(req GET '/api/v1/prices?region=westeurope' "$reader")" = 200 ] &&
  jq -e '(.source | length > 0) and (.fetched_at | length > 0) and (.prices | length > 0)' "$scratch/body" >/dev/null &&
  ok || bad "the prices the dashboard shows: $(head -c 300 "$scratch/body")"

stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"

# ---- --config, flags win ----
cat >"$scratch/cfg.json" <<CFG
{"db": "$db", "listen": "127.0.0.1:1", "threads": 3, "body-max": "2KiB", "log-requests": true,
 "prices_url": "http://127.0.0.1:9"}
CFG
start_server cfg --config "$scratch/cfg.json"
[ -n "$port" ] && [ "$port" != 1 ] && ok || bad "--config: flags did not win: $(cat "$scratch/cfg.err")"
head -c 3000 /dev/zero | tr '\0' ' ' >"$scratch/3k.json"
[ "$(post_report "$scratch/3k.json" "$agent")" = 413 ] && ok || bad "body-max from --config not applied"
healthy && ok || bad "healthz with --config"
sleep 0.2
grep -q 'GET /healthz 200' "$scratch/cfg.err" && ok || bad "log-requests from --config: $(cat "$scratch/cfg.err")"
# A decoded newline in a path does not forge a log line.
req GET '/nothing%0atierwise%20serve:%20GET%20/forged%20200' - >/dev/null
sleep 0.2
grep -q "GET /nothing?tierwise serve: GET /forged 200 404" "$scratch/cfg.err" && ! grep -q "^tierwise serve: GET /forged" "$scratch/cfg.err" && ok || bad "a forged log line: $(tail -3 "$scratch/cfg.err")"
stop_server INT
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGINT"
grep -q 'stopped by SIGINT' "$scratch/cfg.err" && ok || bad "no SIGINT message"

# ---- usage errors: exit 2, one message, nothing on stdout ----
expect 2 "--db" -- "$cli" serve
expect 2 "both --tls-cert" -- "$cli" serve --db "$db" --tls-cert "$scratch/cfg.json"
expect 2 "--listen" -- "$cli" serve --db "$db" --listen 'nowhere:80'
expect 2 "--listen" -- "$cli" serve --db "$db" --listen '127.0.0.1:99999'
expect 2 "--threads" -- "$cli" serve --db "$db" --threads 0
expect 2 "--body-max" -- "$cli" serve --db "$db" --body-max lots
expect 2 "unexpected argument" -- "$cli" serve --db "$db" extra
echo '{"db": "x", "colour": "blue"}' >"$scratch/bad.json"
expect 2 'unknown key "colour"' -- "$cli" serve --config "$scratch/bad.json"
expect 2 "--prices-url" -- "$cli" serve --db "$db" --prices-url 'ftp://127.0.0.1/x'
echo '{"db": "x", "prices_url": "not a url"}' >"$scratch/badurl.json"
expect 2 "prices_url" -- "$cli" serve --config "$scratch/badurl.json"
echo '{"db": ' >"$scratch/broken.json"
expect 2 "not valid JSON" -- "$cli" serve --config "$scratch/broken.json"
echo "not a database, just text" >"$scratch/text.db"
"$cli" serve --db "$scratch/text.db" --listen 127.0.0.1:0 >/dev/null 2>"$scratch/text.err"
st=$?
[ "$st" = 1 ] || [ "$st" = 2 ] && ok || bad "a text file as database: exit $st"
grep -q "text.db" "$scratch/text.err" && ok || bad "message does not name the file: $(cat "$scratch/text.err")"
# A port in use: exit 1 with the reason.
start_server busy
"$cli" serve --db "$db" --listen "127.0.0.1:$port" >/dev/null 2>"$scratch/busy2.err"
[ $? = 1 ] && ok || bad "port in use: not exit 1"
grep -q "in use" "$scratch/busy2.err" && ok || bad "port in use message: $(cat "$scratch/busy2.err")"
stop_server TERM
# A port file that can't be written: exit 1, one message, and the server
# started for it is stopped, its database closed cleanly (no WAL left).
expect 1 "no/such/dir" -- timeout 20 "$cli" serve --db "$scratch/pf.db" --listen 127.0.0.1:0 \
  --port-file "$scratch/no/such/dir/port"
[ -f "$scratch/pf.db" ] && [ ! -e "$scratch/pf.db-wal" ] && ok ||
  bad "port file failure: the database was not closed ($(ls "$scratch" | grep pf.db))"
# ---- a stored result record this build can no longer read ----
# (a damaged row, or a parser made stricter since): that VM's verdicts are
# an error entry; /compliance, /disks and the VM itself still answer 200.
# Compliance reads the VM's rows and its results' records, never a report's
# body: a damaged body first changes nothing.
if command -v sqlite3 >/dev/null; then
  sqlite3 "$db" "UPDATE reports SET body = '{\"not\": \"a report\"}' WHERE id =
    (SELECT last_report_id FROM vms WHERE name = 'web-03')" || bad "sqlite3 update"
  start_server body
  [ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "compliance with a damaged body: $(cat "$scratch/body")"
  jq -e --argjson vm "$vm" '([.errors[] | select(.vm_id == $vm)] | length == 0) and ([.verdicts[] | select(.vm_id == $vm)] | length == 2)' \
    "$scratch/body" >/dev/null && ok || bad "a report body was read for compliance: $(cat "$scratch/body")"
  stop_server TERM
  sqlite3 "$db" "UPDATE results SET record = '{\"not\": \"a result\"}' WHERE vm_id =
    (SELECT id FROM vms WHERE name = 'web-03')" || bad "sqlite3 update"
  start_server unread
  [ "$(req GET /api/v1/compliance "$reader")" = 200 ] && ok || bad "compliance with an unreadable result: $(cat "$scratch/body")"
  jq -e --argjson vm "$vm" '[.errors[] | select(.vm_id == $vm and (.message | test("no longer reads")))] | length == 1' \
    "$scratch/body" >/dev/null && ok || bad "no error entry for the unreadable VM: $(cat "$scratch/body")"
  jq -e --argjson vm "$vm" '[.verdicts[] | select(.vm_id != $vm)] | length > 0' "$scratch/body" >/dev/null &&
    ok || bad "the other VMs lost their verdicts: $(cat "$scratch/body")"
  [ "$(req GET /api/v1/disks "$reader")" = 200 ] && ok || bad "disks with an unreadable result: $(cat "$scratch/body")"
  [ "$(req GET "/api/v1/vms/$vm" "$reader")" = 200 ] && ok || bad "the unreadable VM: $(cat "$scratch/body")"
  jq -e '.verdict_errors | length == 1' "$scratch/body" >/dev/null && ok || bad "verdict_errors: $(cat "$scratch/body")"
  stop_server TERM
fi
# ---- the systemd unit ----
# The server reads nothing under /etc/tierwise itself: the agent's setup
# makes that directory root's 0700, so config, certificate and key come
# through LoadCredential=.
unit="$srcdir/deploy/tierwise-server.service"
exec_start=$(sed -n '/^ExecStart=/,/[^\\]$/p' "$unit" | tr -d '\\\n')
grep -q -- '--config ${CREDENTIALS_DIRECTORY}/' <<<"$exec_start" && ! grep -q '/etc/' <<<"$exec_start" &&
  ok || bad "the server unit's ExecStart reads /etc directly: $exec_start"
grep -q '^LoadCredential=server.json:/etc/tierwise/server.json$' "$unit" && ok || bad "no credential for server.json"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify --man=no "$unit" 2>&1 | grep -v "is not executable" >"$scratch/verify"
  [ ! -s "$scratch/verify" ] && ok || bad "systemd-analyze verify: $(cat "$scratch/verify")"
fi
"$cli" serve --help | grep -q -- "--tls-cert" && ok || bad "serve --help"
finish "server-api"

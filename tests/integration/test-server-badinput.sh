#!/usr/bin/env bash
# tierwise serve and bad input: invalid JSON (400 with its position), wrong
# types, missing fields, huge numbers, deep nesting, bodies over the cap
# (413, announced or chunked), wrong content types (415), unknown routes
# (404) and methods (405), paths that try to leave the web directory: the
# documented error as {"error":{"code","message"}}, and the server keeps
# serving (healthz after each).  Needs curl and jq (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-bad-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
reader=$(make_token reader)
start_server main --body-max 512KiB
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# check NAME STATUS CODE: the last answer had STATUS and error code CODE,
# and the server still answers /healthz.
check() {
  local name=$1 want=$2 code=$3 got=$4
  cp "$scratch/body" "$scratch/last_body"
  cp "$scratch/headers" "$scratch/last_headers"
  if [ "$got" != "$want" ]; then
    bad "$name: status $got, want $want: $(head -c 300 "$scratch/body")"
  elif [ -n "$code" ] && ! jq -e --arg c "$code" '.error.code == $c and (.error.message | length > 0)' "$scratch/body" >/dev/null 2>&1; then
    bad "$name: error body is not code $code: $(head -c 300 "$scratch/body")"
  else
    ok
  fi
  healthy && ok || bad "$name: /healthz failed afterwards"
}

# post_body NAME STATUS CODE BODY: posts BODY (a string) as JSON.
post_body() {
  printf '%s' "$4" >"$scratch/in.json"
  check "$1" "$2" "$3" "$(post_report "$scratch/in.json" "$agent")"
}

# edit NAME STATUS CODE JQ: posts the valid report changed by the jq program.
edit() {
  report "$(uuid 7)"
  jq -c "$4" "$scratch/r-$(uuid 7).json" >"$scratch/in.json" || { bad "$1: jq $4"; return; }
  check "$1" "$2" "$3" "$(post_report "$scratch/in.json" "$agent")"
}

# ---- JSON that does not parse: 400 with line and column ----
post_body "truncated JSON" 400 invalid_report '{"schema_version": "tierwise.report/1", "id":'
jq -e '.error.line == 1 and .error.column > 0' "$scratch/last_body" >/dev/null && ok || bad "no position: $(cat "$scratch/last_body")"
printf '{\n  "a": 1,\n  "b": ]\n}' >"$scratch/in.json"
check "JSON error on line 3" 400 invalid_report "$(post_report "$scratch/in.json" "$agent")"
jq -e '.error.line == 3' "$scratch/last_body" >/dev/null && ok || bad "line 3 not reported: $(cat "$scratch/last_body")"
post_body "empty body" 400 invalid_report ''
post_body "not an object" 400 invalid_report '[1,2,3]'
post_body "a bare string" 400 invalid_report '"report"'
post_body "invalid UTF-8" 400 invalid_report $'{"id": "\xff\xfe"}'
printf '{"id": "a\0b"}' >"$scratch/in.json"
check "NUL byte" 400 invalid_report "$(post_report "$scratch/in.json" "$agent")"
post_body "trailing garbage" 400 invalid_report "$(jq -c . "$template") x"

# ---- valid JSON, not a valid report ----
post_body "empty object" 400 invalid_report '{}'
edit "missing id" 400 invalid_report 'del(.id)'
edit "missing inventory" 400 invalid_report 'del(.inventory)'
edit "wrong schema" 400 invalid_report '.schema_version = "tierwise.report/9"'
edit "id not a UUID" 400 invalid_report '.id = "not-a-uuid"'
edit "id a number" 400 invalid_report '.id = 12345'
edit "results not an array" 400 invalid_report '.results = {}'
edit "queue depth a string" 400 invalid_report '.results[0].method.queue_depth = "deep"'
edit "huge integer" 400 invalid_report '.results[0].method.queue_depth = 123456789012345678901234567890'
edit "negative size" 400 invalid_report '.inventory.disks[0].size_gib = -5'
edit "over-long name" 400 invalid_report ".inventory.vm.name = \"$(head -c 5000 /dev/zero | tr '\0' v)\""
edit "too many results" 400 invalid_report '.results = [range(300) as $i | .results[0]]'
# Deep nesting: 10,000 arrays inside each other.
printf '{"id":' >"$scratch/in.json"
head -c 10000 /dev/zero | tr '\0' '[' >>"$scratch/in.json"
head -c 10000 /dev/zero | tr '\0' ']' >>"$scratch/in.json"
echo '}' >>"$scratch/in.json"
check "deep nesting" 400 invalid_report "$(post_report "$scratch/in.json" "$agent")"
# A message names the field.
edit "field named" 400 invalid_report '.results[0].method.queue_depth = "deep"'
grep -q 'queue_depth' "$scratch/last_body" && ok || bad "message does not name the field: $(cat "$scratch/last_body")"

# ---- bodies over the cap (512 KiB here) ----
head -c 600000 /dev/zero | tr '\0' ' ' >"$scratch/big.json"
check "body over the cap" 413 body_too_large "$(post_report "$scratch/big.json" "$agent")"
check "chunked body over the cap" 413 body_too_large \
  "$(req POST /api/v1/reports "$agent" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary "@$scratch/big.json")"
# The cap itself is fine (the body is JSON whitespace around a report).
report "$(uuid 8)"
check "a report under the cap" 201 "" "$(post_report "$scratch/r-$(uuid 8).json" "$agent")"

# ---- content types ----
report "$(uuid 9)"
check "text/plain" 415 unsupported_media_type \
  "$(req POST /api/v1/reports "$agent" -H 'Content-Type: text/plain' --data-binary "@$scratch/r-$(uuid 9).json")"
check "no content type" 415 unsupported_media_type \
  "$(req POST /api/v1/reports "$agent" -H 'Content-Type:' --data-binary "@$scratch/r-$(uuid 9).json")"
check "form" 415 unsupported_media_type \
  "$(req POST /api/v1/reports "$agent" -d 'a=b')"
check "charset parameter" 201 "" \
  "$(req POST /api/v1/reports "$agent" -H 'Content-Type: application/json; charset=utf-8' --data-binary "@$scratch/r-$(uuid 9).json")"

# ---- routes and methods ----
check "unknown route" 404 not_found "$(req GET /api/v1/nothing "$reader")"
check "unknown version" 404 not_found "$(req GET /api/v2/vms "$reader")"
check "trailing slash" 404 not_found "$(req GET /api/v1/vms/ "$reader")"
check "id not a number" 404 not_found "$(req GET /api/v1/vms/abc "$reader")"
check "id zero" 404 not_found "$(req GET /api/v1/vms/0 "$reader")"
check "id too large" 404 not_found "$(req GET /api/v1/vms/99999999999999999999 "$reader")"
check "no such VM" 404 not_found "$(req GET /api/v1/vms/424242 "$reader")"
check "no such disk" 404 not_found "$(req GET /api/v1/disks/424242 "$reader")"
check "PUT on vms" 405 method_not_allowed "$(req PUT /api/v1/vms "$reader" -d x)"
grep -qi '^Allow: GET, HEAD' "$scratch/last_headers" && ok || bad "405 without Allow: $(cat "$scratch/last_headers")"
check "GET on reports" 405 method_not_allowed "$(req GET /api/v1/reports "$agent")"
grep -qi '^Allow: POST' "$scratch/last_headers" && ok || bad "405 without Allow: POST"
check "an invented method" 405 method_not_allowed "$(req BREW /api/v1/vms "$reader")"
check "POST on a file" 405 method_not_allowed "$(req POST /index.html - -d x)"
check "a body on a GET" 400 unexpected_body "$(req GET /api/v1/vms "$reader" -H 'Content-Type: application/json' -d '{}')"
check "HEAD healthz" 200 "" "$(req HEAD /healthz - -I)"

# ---- paths that try to leave web/ ----
check "dot-dot" 404 not_found "$(req GET /../../../../etc/passwd -)"
check "encoded dot-dot" 404 not_found "$(req GET /%2e%2e/%2e%2e/etc/passwd -)"
check "hidden file" 404 not_found "$(req GET /.git/config -)"
check "double slash" 404 not_found "$(req GET //etc/passwd -)"
check "backslash" 404 not_found "$(req GET '/..%5c..%5cetc%5cpasswd' -)"
check "a directory" 404 not_found "$(req GET /nothing/ -)"
check "the dashboard" 200 "" "$(req GET / -)"
grep -qi '^Content-Type: text/html' "$scratch/last_headers" && ok || bad "index.html content type"
check "the script" 200 "" "$(req GET /app.js -)"
grep -qi '^Content-Type: text/javascript' "$scratch/last_headers" && ok || bad "app.js content type"

# ---- bytes that are not UTF-8 in the path or query: the error, not a 500 ----
check "invalid UTF-8 in an API path" 404 not_found "$(req GET '/api/%ff%fe' "$reader")"
check "invalid UTF-8 in a file path" 404 not_found "$(req GET '/%ff.js' -)"
check "invalid UTF-8, another method" 405 method_not_allowed "$(req DELETE '/healthz%c3' -)"
got=$(req GET '/api/v1/prices?region=%ff' "$reader")
[ "$got" -ge 400 ] && [ "$got" -lt 500 ] && ok || bad "invalid UTF-8 in a query: $got $(cat "$scratch/body")"

# ---- bodies no one asked for are not kept ----
# Without a token, a body sent with a GET of a dashboard file must not make
# the server hold it: 60 connections each sending 1 MB and waiting would
# hold 60 MB if it did.  The server's resident memory may not grow by half
# of that.  (A body announced to /healthz is refused from the headers.)
spid=$pid
rss() { awk '/^VmRSS/ {print $2}' "/proc/$spid/status"; }
if [ -n "$spid" ] && [ -r "/proc/$spid/status" ]; then
  before=$(rss)
  head -c 1000000 /dev/zero | tr '\0' x >"$scratch/mb"
  fds=()
  for i in $(seq 60); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$port" || break
    fds+=("$fd")
    path=/app.js; [ $((i % 2)) = 0 ] && path=/index.html
    # (a subshell: a connection closed early must not take the test down)
    ( printf 'GET %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n' "$path"
      timeout 10 cat "$scratch/mb" ) >&"$fd" 2>/dev/null
  done
  sleep 1
  after=$(rss)
  for fd in "${fds[@]}"; do exec {fd}>&-; done
  [ $((after - before)) -lt 30000 ] && ok ||
    bad "60 unauthenticated bodies of 1 MB grew the server by $((after - before)) KiB"
else
  echo "# no /proc/PID/status for the server: memory check skipped"
fi
check "a body on healthz" 400 unexpected_body "$(req GET /healthz - -d x)"
# Refused before it is read: curl reports how much it could upload.
head -c 20000000 /dev/zero >"$scratch/20mb"
got=$(curl -s --noproxy '*' -o "$scratch/body" -w '%{http_code} %{size_upload}' -X GET \
  -H 'Transfer-Encoding: chunked' --data-binary "@$scratch/20mb" "$base/healthz")
[ "${got% *}" = 400 ] && [ "${got#* }" -lt 10000000 ] && ok ||
  bad "a chunked 20 MB body on healthz was read before the answer: $got"
rm -f "$scratch/20mb"
check "a body on a file is ignored" 200 "" "$(req GET /app.js - -d x)"

# Garbage on the socket: the server stays up.
if command -v timeout >/dev/null; then
  printf 'GARBAGE\r\n\r\n' | timeout 5 bash -c "cat >/dev/tcp/127.0.0.1/$port" 2>/dev/null
  printf 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n' | timeout 5 bash -c "cat >/dev/tcp/127.0.0.1/$port" 2>/dev/null
fi
healthy && ok || bad "/healthz failed after garbage"
# A very long URL.
long=$(head -c 20000 /dev/zero | tr '\0' a)
got=$(req GET "/api/v1/$long" "$reader")
[ "$got" -ge 400 ] && [ "$got" -lt 500 ] && ok || bad "long URL: $got"
healthy && ok || bad "/healthz failed after a long URL"

stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"
finish "server-badinput"

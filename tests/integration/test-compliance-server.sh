#!/usr/bin/env bash
# tierwise compliance --server: the verdicts of every VM's latest results,
# read back from tierwise serve with a reader token, as text and as JSON;
# and its failures (token file too open, a bad token, nothing listening,
# options mixed with the file mode).  Needs curl and jq.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-compl-srv-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
trap 'cleanup_servers; rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1

agent=$(make_token agent)
(umask 077; make_token reader >"$scratch/reader.tok"; make_token agent >"$scratch/agent.tok")
start_server main
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
[ "$(post_report "$fixtures/reports/sap-db-01.json" "$agent")" = 201 ] && ok || bad "post: $(cat "$scratch/body")"

"$cli" compliance --server "$base/" --token-file "$scratch/reader.tok" >"$scratch/text" 2>"$scratch/err" &&
  ok || bad "compliance --server: $(cat "$scratch/err")"
grep -q '^1 VM(s) at ' "$scratch/text" && ok || bad "header: $(head -1 "$scratch/text")"
grep -q '^VM sap-db-01' "$scratch/text" && ok || bad "no VM line: $(cat "$scratch/text")"
n_text=$(grep -cE '^  (delivers|under|vm-capped|burst|cached|inconclusive) ' "$scratch/text")
"$cli" compliance --server "$base" --token-file "$scratch/reader.tok" --json >"$scratch/json" 2>"$scratch/err" &&
  ok || bad "--json: $(cat "$scratch/err")"
n_json=$(jq '.verdicts | length' "$scratch/json")
[ "$n_json" -ge 1 ] && [ "$n_text" = "$n_json" ] && ok || bad "verdicts: text $n_text, json $n_json"
# The same verdicts the API gives.
req GET /api/v1/compliance "$(cat "$scratch/reader.tok")" >/dev/null
jq -S .verdicts "$scratch/body" >"$scratch/api.v"; jq -S .verdicts "$scratch/json" >"$scratch/cli.v"
cmp -s "$scratch/api.v" "$scratch/cli.v" && ok || bad "--json differs from the API"
# --csv: a header and a record per verdict, CRLF ends, the verdicts in the
# order and with the words of the JSON.
"$cli" compliance --server "$base" --token-file "$scratch/reader.tok" --csv >"$scratch/csv" 2>"$scratch/err" &&
  ok || bad "--csv: $(cat "$scratch/err")"
[ "$(head -1 "$scratch/csv" | cut -d, -f1,2)" = "vm,vm_size" ] && ok || bad "csv header: $(head -1 "$scratch/csv")"
[ "$(wc -l <"$scratch/csv")" = $((n_json + 1)) ] && ok || bad "csv records: $(wc -l <"$scratch/csv")"
[ "$(grep -c $'\r$' "$scratch/csv")" = $((n_json + 1)) ] && ok || bad "csv lines do not end in CRLF"
[ "$(tail -n +2 "$scratch/csv" | cut -d, -f1 | sort -u)" = sap-db-01 ] && ok || bad "csv vm column"

# Failures: one message, nothing on stdout.
expect 1 "403" -- "$cli" compliance --server "$base" --token-file "$scratch/agent.tok"
chmod 644 "$scratch/reader.tok"
expect 2 "too open" -- "$cli" compliance --server "$base" --token-file "$scratch/reader.tok"
chmod 600 "$scratch/reader.tok"
expect 2 "needs --server URL and --token-file" -- "$cli" compliance --server "$base"
expect 2 "no --inventory" -- "$cli" compliance --server "$base" --token-file "$scratch/reader.tok" \
  --inventory "$fixtures/compliance/inventory.json"
expect 2 "http:// or https://" -- "$cli" compliance --server "ftp://x" --token-file "$scratch/reader.tok"
stop_server TERM
expect 1 "compliance from" -- "$cli" compliance --server "$base" --token-file "$scratch/reader.tok"
finish compliance-server

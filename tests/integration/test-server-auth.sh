#!/usr/bin/env bash
# tierwise serve: every route x {no token, bad token, agent, reader, admin}
# answers the documented status (the same table is in README, "tierwise
# serve: the backend"), 401s carry WWW-Authenticate: Bearer, a revoked token
# is refused, and a 403 names the roles.  Needs curl and jq (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-auth-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
reader=$(make_token reader)
admin=$(make_token admin)
bad="tw_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
[ ${#agent} = 46 ] && [ "${agent#tw_}" != "$agent" ] && ok || bad "token format: $agent"

# Prices refresh goes to a closed loopback port: admins get 202 and an
# operation (which fails with upstream_failed); its id is read back for the
# operations row.
start_server main --prices-url http://127.0.0.1:9
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }

# A report so that /vms/1 and /disks/1 exist.
report "$(uuid 1)"
[ "$(post_report "$scratch/r-$(uuid 1).json" "$agent")" = 201 ] && ok || bad "first report: $(cat "$scratch/body")"

# method path                  none bad  agent reader admin
matrix="
GET    /healthz                200  200  200   200    200
GET    /metrics                200  200  200   200    200
POST   /api/v1/reports         401  401  201   403    201
GET    /api/v1/vms             401  401  403   200    200
GET    /api/v1/vms/1           401  401  403   200    200
GET    /api/v1/disks           401  401  403   200    200
GET    /api/v1/disks/1         401  401  403   200    200
GET    /api/v1/compliance      401  401  403   200    200
GET    /api/v1/prices?region=westeurope&currency=USD  401  401  403  200  200
POST   /api/v1/prices/refresh  401  401  403   403    202
POST   /api/v1/savings/whatif  401  401  403   200    200
GET    /api/v1/operations/OP   401  401  403   200    200
GET    /api/v1/operations/00000000-0000-4000-8000-000000000000  401  401  403  404  404
GET    /api/v1/policies        401  401  403   200    200
GET    /api/v1/policies/any    401  401  403   404    404
GET    /api/v1/savings/opportunities?policy=any&month=2026-12  401  401  403  404  404
GET    /api/v1/plan?policy=any  401  401  403  404  404
GET    /api/v1/plan.ics?policy=any  401  401  403  404  404
GET    /api/v1/reports/monthly?month=2026-11  401  401  403  422  422
GET    /api/v1/actions/1       401  401  403   404    404
GET    /                       200  200  200   200    200
GET    /app.js                 200  200  200   200    200
GET    /api/v1/nothing         404  404  404   404    404
DELETE /api/v1/vms             405  405  405   405    405
"
n=100
op=none
while read -r method path s_none s_bad s_agent s_reader s_admin; do
  [ -z "$method" ] && continue
  i=0
  for who in none bad agent reader admin; do
    case $who in
      none) tok=- want=$s_none ;;
      bad) tok=$bad want=$s_bad ;;
      agent) tok=$agent want=$s_agent ;;
      reader) tok=$reader want=$s_reader ;;
      admin) tok=$admin want=$s_admin ;;
    esac
    args=()
    [ "$path" = /api/v1/operations/OP ] && path=/api/v1/operations/$op
    if [ "$path" = /api/v1/prices/refresh ]; then
      args=(-H 'Content-Type: application/json' --data-binary '{"region":"westeurope","currency":"USD"}')
    elif [ "$path" = /api/v1/savings/whatif ]; then
      args=(-H 'Content-Type: application/json' --data-binary '{"region":"westeurope","currency":"USD","from_tier":"P10","to_tier":"E10","windows":["Sat 00:00-Mon 00:00"],"period":"2026-01-01..2027-01-01"}')
    elif [ "$method" = POST ]; then
      n=$((n + 1))
      report "$(uuid $n)"
      args=(-H 'Content-Type: application/json' --data-binary "@$scratch/r-$(uuid $n).json")
    fi
    got=$(req "$method" "$path" "$tok" "${args[@]}")
    [ "$path" = /api/v1/prices/refresh ] && [ "$got" = 202 ] && op=$(jq -r .id "$scratch/body")
    if [ "$got" = "$want" ]; then ok; else bad "$method $path as $who: $got, want $want: $(cat "$scratch/body")"; fi
    # Errors are JSON with a code and a message.
    if [ "$got" -ge 400 ]; then
      jq -e '.error.code and .error.message' "$scratch/body" >/dev/null && ok || bad "$method $path as $who: error body $(cat "$scratch/body")"
    fi
    if [ "$got" = 401 ]; then
      grep -qi '^WWW-Authenticate: Bearer' "$scratch/headers" && ok || bad "$method $path as $who: 401 without WWW-Authenticate"
    fi
    if [ "$got" = 405 ]; then
      grep -qi '^Allow: GET, HEAD' "$scratch/headers" && ok || bad "$method $path: 405 without Allow"
    fi
  done
done <<<"$matrix"

# The 403 says which roles a route is for.
req GET /api/v1/vms "$agent" >/dev/null
grep -q 'reader or admin' "$scratch/body" && ok || bad "403 message: $(cat "$scratch/body")"
# Not a bearer token at all; a token in another scheme.
[ "$(req GET /api/v1/vms - -H 'Authorization: Basic dXNlcjpwYXNz')" = 401 ] && ok || bad "Basic auth accepted"
[ "$(req GET /api/v1/vms - -H "Authorization: Bearer")" = 401 ] && ok || bad "empty Bearer accepted"
[ "$(req GET /api/v1/vms - -H "Authorization: Bearer ${reader}x")" = 401 ] && ok || bad "longer token accepted"
[ "$(req GET /api/v1/vms - -H "Authorization: Bearer ${reader:0:45}")" = 401 ] && ok || bad "shorter token accepted"

# A revoked token (never used, so not remembered) is refused at once.
fresh=$(make_token reader)
id=$("$cli" token list --db "$db" --json | jq '[.[] | select(.role == "reader")] | last | .id')
[ "$(req GET /api/v1/vms "$fresh")" = 200 ] && ok || bad "fresh token refused"
"$cli" token revoke --db "$db" "$id" 2>/dev/null && ok || bad "token revoke $id failed"
# A running server forgets what it remembered within 5 s.
sleep 5.5
[ "$(req GET /api/v1/vms "$fresh")" = 401 ] && ok || bad "revoked token still accepted after 5 s"

# token CLI: bad usage exits 2 with one message and nothing on stdout.
expect 2 "--role" -- "$cli" token create --db "$db"
expect 2 "not agent, reader or admin" -- "$cli" token create --db "$db" --role root
expect 2 "not a token ID" -- "$cli" token revoke --db "$db" abc
expect 2 "unknown action" -- "$cli" token rotate --db "$db"
expect 2 "needs --db" -- "$cli" token list
# A --db that is not there (a typo) is said, not created empty.
expect 2 "no database at" -- "$cli" token list --db "$scratch/typo.db"
expect 2 "no database at" -- "$cli" token revoke --db "$scratch/typo.db" 1
[ ! -e "$scratch/typo.db" ] && ok || bad "token list created $scratch/typo.db"
"$cli" token revoke --db "$db" 99999 >/dev/null 2>&1; [ $? = 2 ] && ok || bad "revoking a missing token: not exit 2"
"$cli" token --help | grep -q "token create" && ok || bad "token --help"
# list never shows a secret or a hash.
"$cli" token list --db "$db" >"$scratch/list.txt" && ok || bad "token list failed"
! grep -q "tw_" "$scratch/list.txt" && ok || bad "token list shows a token"
[ "$(wc -l <"$scratch/list.txt")" = 5 ] && ok || bad "token list lines: $(cat "$scratch/list.txt")"

stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"
finish "server-auth"

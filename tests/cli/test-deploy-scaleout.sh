#!/usr/bin/env bash
# Several backends' deployment files: deploy/haproxy-tierwise.cfg and
# deploy/tierwise-server@.service.
#
# Without a part: haproxy accepts the configuration (haproxy -c) and says
# so of a broken copy; then the configuration runs, its ports moved to
# free ones, in front of three tierwise serve (each on a SQLite file of its
# own: only the routing is tested here, not the shared database): GET
# /healthz answers 200 through it, still 200 on every try after one
# backend is SIGKILLed (the checks take it out; a request sent to it
# before that goes to another), and 503 once all are gone.  Before that,
# POSTs through it: reports of one token are spread over the backends,
# the starts of operations of one token go to one.  Exit 77 without
# haproxy.
#
# Part "unit": systemd-analyze verify accepts an instance of the template
# (tierwise-server@8081) and reports a misspelt key in a copy; the unit
# reads the database's location from its EnvironmentFile, the password
# file through PGPASSFILE, and listens on loopback on the instance's port;
# its example location checks the server's certificate against named CAs.
# Exit 77 without systemd-analyze.
# ctest-parts: unit
set -u
src=${TW_SOURCE_DIR:?run through ctest}
cli=${TW_CLI:?run through ctest}
cfg="$src/deploy/haproxy-tierwise.cfg"
unit="$src/deploy/tierwise-server@.service"
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-deploy-scaleout-XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"

if [ "${1:-}" = unit ]; then
  command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
  mkdir "$scratch/u"
  cp "$unit" "$scratch/u/"
  systemd-analyze verify --man=no "$scratch/u/tierwise-server@8081.service" 2>&1 |
    grep -v "is not executable" >"$scratch/verify"
  [ ! -s "$scratch/verify" ] && ok || bad "systemd-analyze verify: $(cat "$scratch/verify")"
  # ... and it would say so: a misspelt key is reported
  mkdir "$scratch/b"
  sed 's/^ProtectHome=/ProtectHomee=/' "$unit" >"$scratch/b/tierwise-server@.service"
  systemd-analyze verify --man=no "$scratch/b/tierwise-server@8081.service" 2>&1 |
    grep -q "Unknown key" && ok || bad "systemd-analyze verify does not report a bad key"
  grep -qx 'EnvironmentFile=/etc/tierwise/backend.env' "$unit" && ok || bad "no EnvironmentFile="
  grep -q -- '--db ${TIERWISE_DB}' "$unit" && ok || bad "ExecStart does not take --db from TIERWISE_DB"
  grep -qx 'Environment=PGPASSFILE=%d/pgpass' "$unit" && ok || bad "no PGPASSFILE in the credentials"
  grep -q -- '--listen 127.0.0.1:%i' "$unit" && ok || bad "the instance is not the port on loopback"
  grep -qiE 'password=' "$unit" && bad "a password in the unit" || ok
  # verify-full needs the CAs named: the user has no ~/.postgresql/root.crt
  grep -q 'sslmode=verify-full sslrootcert=/' "$unit" && ok || bad "the example's verify-full names no sslrootcert"
  # hardened as the single backend's unit is: every sandboxing line of it
  while read -r line; do
    grep -qxF -- "$line" "$unit" && ok || bad "not hardened as tierwise-server.service: $line missing"
  done < <(sed -n '/^# Sandboxing/,/^\[Install\]/p' "$src/deploy/tierwise-server.service" |
             grep -E '^[A-Z][A-Za-z]+=')
  finish "deploy-scaleout/unit"
  exit
fi

command -v haproxy >/dev/null || { echo "SKIP: haproxy is not installed"; exit 77; }
command -v curl >/dev/null || { echo "SKIP: curl is not installed"; exit 77; }
haproxy -c -f "$cfg" >"$scratch/check" 2>&1 && ok || bad "haproxy -c: $(cat "$scratch/check")"
grep -q 'http-check expect status 200' "$cfg" && ok || bad "the checks do not expect 200"
grep -q 'uri /healthz' "$cfg" && ok || bad "the checks do not ask /healthz"
[ "$(grep -cE '^\s+server backend[0-9] 127\.0\.0\.1:808[1-3]$' "$cfg")" = 6 ] && ok ||
  bad "not three backends on 127.0.0.1:8081-8083"
# ... and it would say so of a broken one
sed 's/balance leastconn/balance fewestconn/' "$cfg" >"$scratch/broken.cfg"
haproxy -c -f "$scratch/broken.cfg" >/dev/null 2>&1 && bad "haproxy -c accepts an unknown balance" || ok

# Three backends, each its own SQLite file (the routing only).
start_backend() {
  local n=$1
  "$cli" serve --db "$scratch/b$n.db" --listen 127.0.0.1:0 --port-file "$scratch/b$n.port" -q \
    >"$scratch/b$n.out" 2>"$scratch/b$n.err" &
  pids+=($!)
  bpid[$n]=$!
  for _ in $(seq 100); do
    [ -s "$scratch/b$n.port" ] && return 0
    sleep 0.1
  done
  bad "backend $n did not start: $(cat "$scratch/b$n.err")"
  return 1
}
declare -a bpid
for n in 1 2 3; do start_backend "$n" || { finish "deploy-scaleout"; exit; }; done
# A free port for the front (bound and let go: haproxy binds it next).
front=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null) ||
  { echo "SKIP: python3 is needed to find a free port"; exit 77; }
sed -e "s/127\.0\.0\.1:8081/127.0.0.1:$(cat "$scratch/b1.port")/" \
    -e "s/127\.0\.0\.1:8082/127.0.0.1:$(cat "$scratch/b2.port")/" \
    -e "s/127\.0\.0\.1:8083/127.0.0.1:$(cat "$scratch/b3.port")/" \
    -e "s/bind 127\.0\.0\.1:8080/bind 127.0.0.1:$front/" \
    -e 's/maxconn 20000/maxconn 2000/' -e '/^\s*log /d' -e '/option httplog/d' "$cfg" >"$scratch/run.cfg"
haproxy -db -f "$scratch/run.cfg" >"$scratch/haproxy.out" 2>&1 &
pids+=($!)
hpid=$!
code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$front/healthz"; }
got=""
for _ in $(seq 100); do
  got=$(code)
  [ "$got" = 200 ] && break
  sleep 0.1
done
[ "$got" = 200 ] && ok || bad "GET /healthz through haproxy: $got ($(cat "$scratch/haproxy.out"))"
body=$(curl -s --max-time 10 "http://127.0.0.1:$front/healthz")
jq -e '.status == "ok"' <<<"$body" >/dev/null && ok || bad "/healthz through haproxy: $body"

# POSTs through it: reports are spread over the backends (leastconn),
# while the starts of operations (a prices refresh, a run of actions) of
# one token all go to one backend (the one its polls go to).  Which backend
# answered is read from each one's /metrics: it counts every request it
# answered by route, here 401s (the token is no backend's).
answered() { # backend number, route -> how many requests of that route it answered
  curl -s --max-time 10 "http://127.0.0.1:$(cat "$scratch/b$1.port")/metrics" |
    awk -v r="route=\"$2\"" 'index($0, "tierwise_http_requests_total{") == 1 && index($0, r) {n += $NF}
                             END {print n + 0}'
}
post() { # path
  curl -s -o /dev/null -w '%{http_code}' --max-time 10 -X POST -H 'Authorization: Bearer tw_not_a_token' \
    -H 'Content-Type: application/json' -d '{}' "http://127.0.0.1:$front$1"
}
spread() { # route -> how many backends answered it, and the most one did
  local most=0 some=0 k
  for n in 1 2 3; do
    k=$(answered "$n" "$1")
    [ "$k" -gt 0 ] && some=$((some + 1))
    [ "$k" -gt "$most" ] && most=$k
  done
  echo "$some $most"
}
codes=""
for _ in $(seq 9); do codes+="$(post /api/v1/reports) "; done
[ -z "$(tr ' ' '\n' <<<"$codes" | grep -v '^401$' | grep -v '^$')" ] && ok ||
  bad "POST /api/v1/reports through haproxy answered: $codes"
read -r some most <<<"$(spread "POST /api/v1/reports")"
[ "$some" -ge 2 ] && ok || bad "9 reports of one token all went to one backend ($most of them)"
for path in /api/v1/actions /api/v1/prices/refresh; do
  for _ in $(seq 6); do post "$path" >/dev/null; done
  read -r some most <<<"$(spread "POST $path")"
  [ "$some" = 1 ] && [ "$most" = 6 ] && ok ||
    bad "POST $path of one token went to $some backends (at most $most of 6 on one)"
done

# One backend killed: every request still answered (before the checks
# notice, haproxy sends a refused one to another: retries, redispatch).
kill -9 "${bpid[1]}"
wait "${bpid[1]}" 2>/dev/null
codes=""
for _ in $(seq 30); do
  codes+="$(code) "
  sleep 0.2
done
[ -z "$(tr ' ' '\n' <<<"$codes" | grep -v '^200$' | grep -v '^$')" ] && ok ||
  bad "with one backend killed, /healthz through haproxy answered: $codes"
kill -0 "$hpid" 2>/dev/null && ok || bad "haproxy ended: $(cat "$scratch/haproxy.out")"

# All gone: haproxy answers 503 itself (an agent spools and sends again).
kill -9 "${bpid[2]}" "${bpid[3]}"
wait "${bpid[2]}" "${bpid[3]}" 2>/dev/null
got=""
for _ in $(seq 50); do
  got=$(code)
  [ "$got" = 503 ] && break
  sleep 0.2
done
[ "$got" = 503 ] && ok || bad "with every backend gone, /healthz through haproxy answered $got"
finish "deploy-scaleout"

#!/usr/bin/env bash
# tierwise serve's connection options from the command line and the
# config file: --help names them, a bad value is refused (exit 2, naming
# it), --header-timeout from the config file answers a head that does not
# come with 408, --max-connections-per-client refuses the next connection
# with 503 and gives the place back when one closes, and the open-files
# limit is raised to its hard limit at start.  Needs curl (77 without).
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-limits-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

# ---- --help and refusals ----
"$cli" serve --help >"$scratch/help"
for o in --max-connections --max-connections-per-client --header-timeout --body-memory-max; do
  grep -q -- "$o" "$scratch/help" && ok || bad "serve --help does not name $o"
done
expect 2 "--header-timeout \"0\"" -- "$cli" serve --db "$db" --header-timeout 0
expect 2 "--header-timeout \"301\"" -- "$cli" serve --db "$db" --header-timeout 301
expect 2 "--max-connections \"many\"" -- "$cli" serve --db "$db" --max-connections many
expect 2 "--max-connections-per-client \"0\"" -- "$cli" serve --db "$db" --max-connections-per-client 0
expect 2 "--body-memory-max \"12abc\"" -- "$cli" serve --db "$db" --body-memory-max 12abc
expect 2 "below --body-max" -- "$cli" serve --db "$db" --listen 127.0.0.1:0 --body-memory-max 64KiB
echo '{"header-timeout": true}' >"$scratch/bad.json"
expect 2 '"header-timeout" must be a number or a string' -- "$cli" serve --config "$scratch/bad.json" --db "$db"
expect 2 'must be a whole number from 1 to 1000000' -- "$cli" serve --db "$db" --listen 127.0.0.1:0 --max-connections 0

# ---- the header deadline, from the config file ----
echo '{"header-timeout": 1}' >"$scratch/cfg.json"
start_server deadline --config "$scratch/cfg.json"
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/deadline.err")"; exit 1; }
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /healthz HTTP/1.1\r\nHost: t\r\n' >&3
t0=$(date +%s%N)
line=""
IFS= read -r -t 5 line <&3
t1=$(date +%s%N)
exec 3>&-
[[ "$line" == "HTTP/1.1 408 "* ]] && ok || bad "a head not finished: '$line', want 408"
ms=$(( (t1 - t0) / 1000000 ))
[ "$ms" -ge 700 ] && [ "$ms" -lt 4000 ] && ok || bad "408 after $ms ms, want about 1000"
healthy && ok || bad "/healthz after the 408"
grep -q "request heads within 1 s" "$scratch/deadline.err" && ok || bad "the start line does not give the limits: $(cat "$scratch/deadline.err")"
stop_server TERM

# ---- connections per client ----
start_server perclient --max-connections-per-client 2
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/perclient.err")"; exit 1; }
exec 4<>"/dev/tcp/127.0.0.1/$port" 5<>"/dev/tcp/127.0.0.1/$port"
sleep 0.3
exec 6<>"/dev/tcp/127.0.0.1/$port"
line=""
IFS= read -r -t 5 line <&6
exec 6>&-
[[ "$line" == "HTTP/1.1 503 "* ]] && ok || bad "a third connection: '$line', want 503"
exec 4>&- 5>&-
st=""
for _ in $(seq 30); do
  st=$(req GET /healthz -)
  [ "$st" = 200 ] && break
  sleep 0.1
done
[ "$st" = 200 ] && ok || bad "/healthz once the two closed: $st"

# ---- the open-files limit: raised to the hard one ----
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -gt 512 ]; then
  kill -TERM "$pid"; wait "$pid"
  ulimit -Sn 256
  start_server fds
  [ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/fds.err")"; exit 1; }
  soft=$(awk '/^Max open files/ {print $4}' "/proc/$pid/limits")
  [ "$soft" = "$hard" ] && ok || bad "open files of the server: $soft, want the hard limit $hard"
fi
finish "server-limits"

#!/usr/bin/env bash
# tierwise serve over HTTPS: a throwaway self-signed certificate for
# 127.0.0.1 (openssl, or GnuTLS's certtool), /healthz and a report over
# TLS, plain HTTP refused on that port, a key that does not match the
# certificate refused at start.  Skipped (77) without curl, jq and one of
# openssl or certtool.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-tls-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

# make_cert NAME: NAME.crt and NAME.key for CN=127.0.0.1, valid one day.
make_cert() {
  if command -v openssl >/dev/null; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
      -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
      -keyout "$scratch/$1.key" -out "$scratch/$1.crt" >/dev/null 2>&1
  elif command -v certtool >/dev/null; then
    certtool --generate-privkey --key-type ecdsa --outfile "$scratch/$1.key" >/dev/null 2>&1
    printf 'cn = 127.0.0.1\nip_address = 127.0.0.1\nexpiration_days = 1\ntls_www_server\n' >"$scratch/$1.tmpl"
    certtool --generate-self-signed --load-privkey "$scratch/$1.key" \
      --template "$scratch/$1.tmpl" --outfile "$scratch/$1.crt" >/dev/null 2>&1
  else
    return 77
  fi
}
make_cert a
rc=$?
[ $rc = 77 ] && { echo "neither openssl nor certtool is installed: skipped"; exit 77; }
[ $rc = 0 ] && [ -s "$scratch/a.crt" ] && [ -s "$scratch/a.key" ] || { echo "FAIL: could not make a certificate"; exit 1; }
make_cert b

agent=$(make_token agent)
start_server main --tls-cert "$scratch/a.crt" --tls-key "$scratch/a.key" --header-timeout 2
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start with TLS: $(cat "$scratch/main.err")"; exit 1; }
https="https://127.0.0.1:$port"
grep -q "listening on $https" "$scratch/main.err" && ok || bad "listening line: $(cat "$scratch/main.err")"
[ "$(curl -s --noproxy '*' --cacert "$scratch/a.crt" -o /dev/null -w '%{http_code}' "$https/healthz")" = 200 ] && ok || bad "healthz over TLS"
# The certificate is checked: another CA fails.
curl -s --noproxy '*' --cacert "$scratch/b.crt" -o /dev/null "$https/healthz"
[ $? = 60 ] && ok || bad "a certificate from another CA was accepted"
report "$(uuid 1)"
st=$(curl -s --noproxy '*' --cacert "$scratch/a.crt" -o "$scratch/body" -w '%{http_code}' \
  -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
  --data-binary "@$scratch/r-$(uuid 1).json" "$https/api/v1/reports")
[ "$st" = 201 ] && ok || bad "report over TLS: $st $(cat "$scratch/body")"
# Plain HTTP on the TLS port gets no HTTP answer.
st=$(curl -s --noproxy '*' -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/healthz")
[ "$st" != 200 ] && ok || bad "plain HTTP answered on the TLS port"
[ "$(curl -s --noproxy '*' --cacert "$scratch/a.crt" -o /dev/null -w '%{http_code}' "$https/healthz")" = 200 ] && ok || bad "healthz after plain HTTP"
# A TLS client that sends nothing is closed after the header deadline
# (2 s here), not held for the 60 s a request's body may take.
exec 3<>"/dev/tcp/127.0.0.1/$port"
t0=$SECONDS
timeout 10 cat <&3 >/dev/null
rc=$?
exec 3<&-
[ $rc = 0 ] && [ $((SECONDS - t0)) -le 6 ] && ok || bad "an idle TLS connection was held $((SECONDS - t0)) s (rc $rc) with --header-timeout 2"
stop_server TERM
[ "$stop_status" = 0 ] && ok || bad "exit status $stop_status after SIGTERM"

# A key that does not belong to the certificate: refused at start.
"$cli" serve --db "$db" --listen 127.0.0.1:0 --tls-cert "$scratch/a.crt" --tls-key "$scratch/b.key" >/dev/null 2>"$scratch/mismatch.err" &
p=$!
server_pids+=("$p")
for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$p" 2>/dev/null; then
  bad "started with a key that does not match the certificate"
else
  wait "$p"; st=$?
  [ "$st" = 1 ] && ok || bad "mismatched key: exit $st"
  grep -q "certificate" "$scratch/mismatch.err" && ok || bad "mismatched key message: $(cat "$scratch/mismatch.err")"
fi
expect 2 "is empty" -- "$cli" serve --db "$db" --tls-cert /dev/null --tls-key "$scratch/a.key"
expect 2 "both --tls-cert" -- "$cli" serve --db "$db" --tls-key "$scratch/a.key"
finish "server-tls"

#!/usr/bin/env bash
# deploy/Containerfile, the backend's container.
#
# ctest-parts: build
#   (no part)  what the file promises, read from it: Debian bases only; the
#              final stage runs as a user that is not root; the database
#              given to serve lies on a VOLUME; HEALTHCHECK asks /healthz on
#              the port serve listens on, which is EXPOSEd; the final stage
#              installs the Debian package of every library the programs
#              link directly (read from the built binaries with readelf and
#              dpkg -S); every COPY source exists.
#   build      builds the image and runs it: /healthz answers through the
#              published port, the process is not root, the image declares
#              the volume and the health check.  Exits 77 (skipped) without
#              a container tool whose daemon answers (podman, docker), or
#              without TW_CONTAINER_NETWORK=1: the build downloads the
#              Debian base image and packages, and no test reaches past
#              127.0.0.1 unless told it may.
set -u
part=${1:-}
case "$part" in
  ""|build) ;;
  *) echo "unknown part \"$part\" (none, or build)"; exit 2 ;;
esac
src=${TW_SOURCE_DIR:?run through ctest, or set TW_SOURCE_DIR and TW_CLI}
cli=${TW_CLI:?}
file=$src/deploy/Containerfile
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-ctr-XXXXXX")
tool= image= ctr=
cleanup() {
  [ -n "$ctr" ] && "$tool" rm -f "$ctr" >/dev/null 2>&1
  [ -n "$image" ] && "$tool" rmi -f "$image" >/dev/null 2>&1
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"

[ -s "$file" ] || { echo "no $file"; exit 1; }
# Instructions with their continuation lines joined, comments dropped.
sed -e '/^[[:space:]]*#/d' "$file" | sed -e ':a' -e '/\\$/{N; s/\\\n/ /; ba' -e '}' >"$scratch/instr"
# The final stage: from the last FROM on.
last_from=$(grep -n '^FROM ' "$scratch/instr" | tail -1 | cut -d: -f1)
tail -n +"$last_from" "$scratch/instr" >"$scratch/final"
entry=$(grep '^ENTRYPOINT ' "$scratch/final" | tail -1)
listen_port=$(grep -oE '"--listen", *"[^"]*:[0-9]+"' <<<"$entry" | grep -oE '[0-9]+"$' | tr -d '"')
db=$(grep -oE '"--db", *"[^"]+"' <<<"$entry" | sed -E 's/.*"([^"]+)"$/\1/')

if [ -z "$part" ]; then
  # Debian bases, and only Debian.
  froms=$(grep '^FROM ' "$scratch/instr" | awk '{ print $2 }')
  [ -n "$froms" ] && ! grep -qv '^debian:' <<<"$froms" && ok || bad "bases that are not Debian: $froms"
  # A user that is not root, set in the final stage before it starts.
  user=$(grep '^USER ' "$scratch/final" | tail -1 | awk '{ print $2 }')
  [ -n "$user" ] && [ "$user" != root ] && [ "${user%%:*}" != 0 ] && ok || bad "final stage USER: '$user'"
  grep -qE "useradd .* $user( |\$)" "$scratch/final" && ok || bad "the final stage does not make user $user"
  # The database on a volume.
  [ -n "$db" ] && ok || bad "ENTRYPOINT gives serve no --db: $entry"
  vols=$(grep '^VOLUME ' "$scratch/final" | grep -oE '/[^" ,]+' )
  on_volume=0
  for v in $vols; do [[ $db == "$v"/* ]] && on_volume=1; done
  [ $on_volume = 1 ] && ok || bad "the database $db is on no VOLUME ($vols)"
  grep -q "install -d -o $user -g $user -m 0700 $(dirname "$db")" "$scratch/final" && ok ||
    bad "the database's folder is not made $user's (0700)"
  # The health check asks /healthz on the port serve listens on.
  [ -n "$listen_port" ] && ok || bad "ENTRYPOINT gives serve no --listen HOST:PORT: $entry"
  hc=$(grep '^HEALTHCHECK ' "$scratch/final")
  url=$(sed -n 's/^ENV TIERWISE_HEALTH_URL=//p' "$scratch/final")
  grep -q 'TIERWISE_HEALTH_URL' <<<"$hc" && [ "$url" = "http://127.0.0.1:$listen_port/healthz" ] && ok ||
    bad "HEALTHCHECK does not ask /healthz on port $listen_port: $hc ($url)"
  grep -qE "^EXPOSE ($listen_port|.* $listen_port)( |\$)" "$scratch/final" && ok || bad "port $listen_port is not EXPOSEd"
  # The health check's client is installed in the final stage.
  grep -qE '^RUN .*apt-get install .* curl( |$)' "$scratch/final" && ok || bad "curl is not installed for the health check"
  # The Debian package of every library the programs link directly.
  if command -v readelf >/dev/null && command -v dpkg >/dev/null; then
    for exe in "$cli"; do
      for so in $(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        case $so in libasan.so*|libubsan.so*|libc.so*|libm.so*|ld-linux*) continue ;; esac
        path=$(ldd "$exe" | awk -v so="$so" '$1 == so { print $3 }')
        pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
        [ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
        if [ -z "$pkg" ]; then bad "no Debian package holds $so ($path)"; continue; fi
        grep -qE "^RUN .*apt-get install .* $pkg( |\$)" "$scratch/final" && ok ||
          bad "the final stage does not install $pkg ($so)"
      done
    done
  fi
  # Every COPY source is in the tree (a context path), except --from stages.
  grep '^COPY ' "$scratch/instr" | grep -v -- '--from=' | while read -r _ rest; do
    set -- $rest
    while [ $# -gt 1 ]; do
      [ -e "$src/$1" ] || echo "$1"
      shift
    done
  done >"$scratch/missing"
  [ ! -s "$scratch/missing" ] && ok || bad "COPY sources not in the tree: $(cat "$scratch/missing")"
  # What the build configures from is copied: the top-level CMakeLists.txt's
  # includes and subdirectories, and the data the install rules take.
  for need in src deploy pricing web CMakeLists.txt README.md; do
    grep -qE "^COPY (.* )?$need( |/|\$)" "$scratch/instr" && ok || bad "the build stage does not copy $need"
  done
  [ ! -d "$src/policies" ] || grep -qE '^COPY (.* )?policies( |/|$)' "$scratch/instr" && ok ||
    bad "policies/ exists but is not copied into the build"
  finish install-container
  exit
fi

# ---- build: a real image, where a tool and permission are there ----
for t in podman docker; do
  command -v "$t" >/dev/null || continue
  if timeout 15 "$t" info >/dev/null 2>&1; then tool=$t; break; fi
done
if [ -z "$tool" ]; then
  echo "install-container/build: no podman or docker whose daemon answers"
  exit 77
fi
if [ "${TW_CONTAINER_NETWORK:-0}" != 1 ]; then
  echo "install-container/build: building fetches debian:bookworm-slim and Debian packages; set TW_CONTAINER_NETWORK=1 to allow it"
  exit 77
fi
image=localhost/tierwise-test:$$
fmt=()
[ "$tool" = podman ] && fmt=(--format docker)
if ! "$tool" build "${fmt[@]}" -f "$file" -t "$image" "$src" >"$scratch/build.log" 2>&1; then
  bad "$tool build: $(tail -15 "$scratch/build.log")"
  image=
  finish install-container-build
  exit 1
fi
ok
"$tool" inspect --format '{{json .Config.Healthcheck}}' "$image" | grep -q /healthz && ok ||
  bad "the image has no /healthz health check"
"$tool" inspect --format '{{json .Config.Volumes}}' "$image" | grep -qF "\"$(dirname "$db")\"" && ok ||
  bad "the image declares no volume $(dirname "$db")"
ctr=tierwise-test-$$
if ! "$tool" run -d --name "$ctr" -p "127.0.0.1::$listen_port" "$image" >"$scratch/run.log" 2>&1; then
  bad "$tool run: $(cat "$scratch/run.log")"
else
  hostport=$("$tool" port "$ctr" "$listen_port/tcp" | head -1 | sed 's/.*://')
  body=
  for _ in $(seq 50); do
    body=$(curl -s --noproxy '*' --max-time 2 "http://127.0.0.1:$hostport/healthz") && [ -n "$body" ] && break
    sleep 0.2
  done
  grep -q '"ok"' <<<"$body" && ok || bad "/healthz through port $hostport: '$body' ($("$tool" logs "$ctr" 2>&1 | tail -3))"
  uid=$("$tool" exec "$ctr" id -u)
  [ -n "$uid" ] && [ "$uid" != 0 ] && ok || bad "the server runs as uid '$uid'"
  "$tool" exec "$ctr" test -s "$db" && ok || bad "no database at $db in the container"
fi
finish install-container-build

#!/usr/bin/env bash
# cmake --install into a DESTDIR, twice (prefix /usr as the .deb has it, and
# an unusual /opt/tw prefix, whose bin/ and share/ no unit names by chance):
# every program runs --help from the tree; web/, pricing/, the examples, the
# man pages and the completions are there; every path the installed systemd
# units name under the prefix exists in the tree; the installed tierwise
# serve finds the installed dashboard on its own (no --web), on 127.0.0.1
# port 0.  Needs the whole build (ctest after `cmake --build`).
set -u
build=${TW_BUILD_DIR:?run through ctest, or set TW_BUILD_DIR and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-install-XXXXXX")
srv=
cleanup() {
  [ -n "$srv" ] && kill -TERM "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
unset http_proxy HTTP_PROXY https_proxy HTTPS_PROXY all_proxy ALL_PROXY

programs=(tierwise tierwise-agent)
[ -n "${TW_AZSIM:-}" ] && programs+=(tierwise-azsim)

check_tree() { # PREFIX
  local prefix=$1 root="$scratch/root${1//\//_}" p
  if ! DESTDIR="$root" cmake --install "$build" --prefix "$prefix" >"$scratch/install.log" 2>&1; then
    bad "cmake --install --prefix $prefix: $(tail -5 "$scratch/install.log")"
    return
  fi
  ok
  local top="$root$prefix"
  # Nothing outside DESTDIR: every installed path lies under it.
  if grep -E '^-- (Installing|Up-to-date): ' "$scratch/install.log" | grep -vF -- "-- Installing: $root/" |
     grep -vF -- "-- Up-to-date: $root/" | grep -q .; then
    bad "installed outside DESTDIR: $(grep -vF "$root/" "$scratch/install.log" | head -3)"
  else
    ok
  fi
  for p in "${programs[@]}"; do
    if [ -x "$top/bin/$p" ] && "$top/bin/$p" --help >"$scratch/help" 2>&1 && grep -q "^usage: $p" "$scratch/help"; then
      ok
    else
      bad "$prefix/bin/$p --help from the tree: $(head -3 "$scratch/help" 2>/dev/null)"
    fi
    [ -s "$top/share/man/man1/$p.1" ] && ok || bad "no man page $prefix/share/man/man1/$p.1"
    [ -s "$top/share/bash-completion/completions/$p" ] && ok ||
      bad "no completion $prefix/share/bash-completion/completions/$p"
  done
  for f in web/index.html web/app.js web/style.css examples/demo-scenario.json pricing/README.md; do
    [ -s "$top/share/tierwise/$f" ] && ok || bad "$prefix/share/tierwise/$f missing"
  done
  # Every bundled data file, including any added since this test was written.
  for f in "$src"/pricing/*.json; do
    cmp -s "$f" "$top/share/tierwise/pricing/$(basename "$f")" && ok ||
      bad "pricing/$(basename "$f") not installed as it is"
  done
  if [ -d "$src/policies" ]; then
    (cd "$src/policies" && find . -type f) | while read -r f; do
      [ -f "$top/share/tierwise/policies/$f" ] || echo "$f"
    done >"$scratch/missing"
    [ ! -s "$scratch/missing" ] && ok || bad "policies not installed: $(head -3 "$scratch/missing")"
  fi
  [ -s "$top/share/doc/tierwise/README.md" ] && ok || bad "no README in $prefix/share/doc/tierwise"
  # The units: each one of deploy/, and every path their settings (not
  # their comments) name under the prefix (ExecStart's programs, --web)
  # exists in the tree; none names /usr/local any more unless that is the
  # prefix.
  local u units=0
  for u in "$src"/deploy/*.service "$src"/deploy/*.timer; do
    units=$((units + 1))
    local inst="$top/lib/systemd/system/$(basename "$u")"
    [ -s "$inst" ] || { bad "unit $(basename "$u") not installed in $prefix/lib/systemd/system"; continue; }
    grep -v '^[[:space:]]*#' "$inst" >"$scratch/settings"
    if [ "$prefix" != /usr/local ] && grep -q '/usr/local/' "$scratch/settings"; then
      bad "$(basename "$u") still names /usr/local: $(grep -m1 /usr/local/ "$scratch/settings")"
    else
      ok
    fi
    grep -oE "$prefix/[A-Za-z0-9_./-]+" "$scratch/settings" | sort -u >"$scratch/paths"
    while read -r path; do
      [ -e "$root$path" ] && ok || bad "$(basename "$u") names $path, not in the tree"
    done <"$scratch/paths"
  done
  [ "$units" -ge 3 ] && ok || bad "only $units units in deploy/"
  grep -q "^ExecStart=$prefix/bin/tierwise serve " "$top/lib/systemd/system/tierwise-server.service" && ok ||
    bad "server unit's ExecStart: $(grep -m1 ExecStart "$top/lib/systemd/system/tierwise-server.service")"
  grep -q -- "--web $prefix/share/tierwise/web" "$top/lib/systemd/system/tierwise-server.service" && ok ||
    bad "the server unit does not name the installed dashboard"
  grep -q "^ExecStart=$prefix/bin/tierwise-agent run " "$top/lib/systemd/system/tierwise-agent.service" && ok ||
    bad "agent unit's ExecStart: $(grep -m1 ExecStart "$top/lib/systemd/system/tierwise-agent.service")"
  if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify --man=no "$top"/lib/systemd/system/* 2>&1 |
      grep -v -e "is not executable" -e "No such file or directory" >"$scratch/verify"
    [ ! -s "$scratch/verify" ] && ok || bad "systemd-analyze verify ($prefix): $(cat "$scratch/verify")"
  fi

  # The installed server serves the installed dashboard without --web.
  rm -f "$scratch/port"
  "$top/bin/tierwise" serve --db "$scratch/serve${prefix//\//_}.db" --listen 127.0.0.1:0 \
    --port-file "$scratch/port" >"$scratch/serve.out" 2>"$scratch/serve.err" &
  srv=$!
  for _ in $(seq 100); do [ -s "$scratch/port" ] && break; sleep 0.1; done
  if [ ! -s "$scratch/port" ]; then
    bad "installed tierwise serve did not start: $(cat "$scratch/serve.err")"
  else
    local body
    body=$(curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$(cat "$scratch/port")/")
    [ "$body" = "$(cat "$top/share/tierwise/web/index.html")" ] && ok ||
      bad "installed serve, GET /: not the installed index.html ($(head -c 200 <<<"$body"); $(cat "$scratch/serve.err"))"
    grep -qF "$top/bin/../share/tierwise/web" "$scratch/serve.err" "$scratch/serve.out" && ok ||
      bad "the start line does not name the installed web dir: $(cat "$scratch/serve.err")"
  fi
  kill -TERM "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=
}

command -v curl >/dev/null || { echo "install-tree: needs curl (deploy/setup.sh installs it)"; exit 77; }
check_tree /usr
check_tree /opt/tw
finish install-tree

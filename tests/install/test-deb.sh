#!/usr/bin/env bash
# cpack -G DEB, then what dpkg-deb says of the package: its name and
# version, a Depends line with the Debian packages of every library the
# programs link (and adduser, which postinst uses), the files (programs,
# units, dashboard, pricing data, man pages, completions) under /usr, and
# maintainer scripts that parse and make the users the units run as.  The
# package's contents, extracted, run --help and the units' paths exist in
# them.  Exits 77 without dpkg-deb or cpack.  Needs the whole build (cpack
# runs the build's preinstall step, which is quick on a built tree).
set -u
build=${TW_BUILD_DIR:?run through ctest, or set TW_BUILD_DIR and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
for tool in dpkg-deb cpack; do
  command -v "$tool" >/dev/null || { echo "install-deb: $tool is not installed"; exit 77; }
done
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-deb-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"

if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$scratch/out" >"$scratch/cpack.log" 2>&1; then
  bad "cpack -G DEB: $(tail -10 "$scratch/cpack.log")"
  # cpack first builds the whole tree (its preinstall step): say what failed.
  pre=$(find "$scratch/out" -name PreinstallOutput.log 2>/dev/null | head -1)
  [ -n "$pre" ] && echo "the build cpack runs first failed: $(grep -m5 -E 'error|Error' "$pre")"
  finish install-deb
  exit 1
fi
debs=("$scratch"/out/*.deb)
[ ${#debs[@]} -eq 1 ] && [ -f "${debs[0]}" ] && ok || { bad "cpack made ${#debs[@]} packages"; finish install-deb; exit 1; }
deb=${debs[0]}
version=$(sed -n 's/^project(tierwise VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
[ "$(basename "$deb")" = "tierwise_${version}_${arch}.deb" ] && ok || bad "package file name $(basename "$deb")"

# ---- control ----
dpkg-deb -f "$deb" Package >"$scratch/f" && [ "$(cat "$scratch/f")" = tierwise ] && ok || bad "Package: $(cat "$scratch/f")"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] && ok || bad "Version: $(dpkg-deb -f "$deb" Version), want $version"
[ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] && ok || bad "Architecture: $(dpkg-deb -f "$deb" Architecture)"
[ -n "$(dpkg-deb -f "$deb" Maintainer)" ] && ok || bad "no Maintainer"
dpkg-deb -f "$deb" Description >"$scratch/desc"
[ "$(wc -l <"$scratch/desc")" -ge 3 ] && ok || bad "Description has no extended text: $(cat "$scratch/desc")"
depends=$(dpkg-deb -f "$deb" Depends)
# Each library the programs link, by its Debian package (Debian 12 names).
for pkg in adduser libc6 libaio1 libjansson4 libcurl4 libsqlite3-0 libpq5 libmicrohttpd12 libgnutls30; do
  grep -qE "(^|, )$pkg( |,|$)" <<<"$depends" && ok || bad "Depends lacks $pkg: $depends"
done
# ... and nothing of the build machine's -dev packages.
grep -q -- '-dev' <<<"$depends" && bad "Depends names a -dev package: $depends" || ok
dpkg-deb -I "$deb" >"$scratch/info"
for script in postinst prerm postrm; do
  grep -qE "^ +[0-9]+ bytes, +[0-9]+ lines +\* +$script " "$scratch/info" && ok ||
    bad "no executable $script in the control archive: $(cat "$scratch/info")"
done

# ---- contents ----
dpkg-deb -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >"$scratch/files"
for f in /usr/bin/tierwise /usr/bin/tierwise-agent \
         /usr/lib/systemd/system/tierwise-server.service /usr/lib/systemd/system/tierwise-agent.service \
         /usr/lib/systemd/system/tierwise-agent.timer /usr/share/tierwise/web/index.html \
         /usr/share/tierwise/pricing/azure-disk-tiers.json /usr/share/tierwise/pricing/azure-vm-disk-caps.json \
         /usr/share/tierwise/pricing/azure-disk-prices.json /usr/share/man/man1/tierwise.1 \
         /usr/share/man/man1/tierwise-agent.1 /usr/share/bash-completion/completions/tierwise \
         /usr/share/bash-completion/completions/tierwise-agent /usr/share/doc/tierwise/README.md; do
  grep -qxF "$f" "$scratch/files" && ok || bad "the package lacks $f"
done
# Everything under /usr (nothing in /etc to become a conffile by accident,
# nothing under /usr/local, which is the administrator's).
grep -v -e '^/$' -e '^/usr/' -e '^/usr$' "$scratch/files" >"$scratch/outside"
[ ! -s "$scratch/outside" ] && ok || bad "files outside /usr: $(head -3 "$scratch/outside")"
grep -q '^/usr/local' "$scratch/files" && bad "files under /usr/local" || ok

dpkg-deb -x "$deb" "$scratch/root"
for p in tierwise tierwise-agent; do
  "$scratch/root/usr/bin/$p" --help >"$scratch/help" 2>&1 && grep -q "^usage: $p" "$scratch/help" && ok ||
    bad "the package's $p --help: $(head -3 "$scratch/help")"
done
for u in "$scratch"/root/usr/lib/systemd/system/*; do
  grep -v '^[[:space:]]*#' "$u" | grep -oE '/usr/(bin|share)/[A-Za-z0-9_./-]+' | sort -u >"$scratch/paths"
  [ -s "$scratch/paths" ] || [[ $u == *.timer ]] || bad "$(basename "$u") names nothing under /usr"
  while read -r path; do
    [ -e "$scratch/root$path" ] && ok || bad "$(basename "$u") names $path, not in the package"
  done <"$scratch/paths"
done

# ---- maintainer scripts ----
dpkg-deb -e "$deb" "$scratch/control"
for script in postinst prerm postrm; do
  sh -n "$scratch/control/$script" && ok || bad "$script does not parse"
done
# postinst run with stand-ins for the commands it changes the system with
# (they log their arguments), on a system without the users yet: it makes
# the user each shipped unit runs as, and the state folders as the units
# declare them (owner, 0700).
mkdir -p "$scratch/bin"
for cmd in adduser install systemctl; do
  printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$cmd" "$scratch/calls" >"$scratch/bin/$cmd"
done
printf '#!/bin/sh\nexit 2\n' >"$scratch/bin/getent"
chmod +x "$scratch"/bin/*
PATH="$scratch/bin:$PATH" sh "$scratch/control/postinst" configure && ok || bad "postinst configure failed"
for unit in "$src"/deploy/*.service; do
  user=$(sed -n 's/^User=//p' "$unit")
  state=$(sed -n 's/^StateDirectory=//p' "$unit")
  grep -qE "^adduser --system --group .* $user\$" "$scratch/calls" && ok ||
    bad "postinst did not make $user ($(basename "$unit")): $(cat "$scratch/calls")"
  # A unit without a state folder (tierwise-server@: its database is
  # PostgreSQL's) needs none made.
  if [ -n "$state" ]; then
    grep -qxF "install -d -o $user -g $user -m 0700 /var/lib/$state" "$scratch/calls" && ok ||
      bad "postinst did not make /var/lib/$state for $user: $(cat "$scratch/calls")"
  fi
done
grep -qxF "install -d -m 0700 /etc/tierwise" "$scratch/calls" && ok || bad "postinst: /etc/tierwise 0700"
# A user already there is kept (getent finds it): no adduser.
printf '#!/bin/sh\necho "$2:x:999:999::/nonexistent:/usr/sbin/nologin"\n' >"$scratch/bin/getent"
: >"$scratch/calls"
PATH="$scratch/bin:$PATH" sh "$scratch/control/postinst" configure && ! grep -q '^adduser' "$scratch/calls" &&
  ok || bad "postinst with the users present: $(cat "$scratch/calls")"
# Other actions (abort-upgrade, ...) change nothing.
: >"$scratch/calls"
PATH="$scratch/bin:$PATH" sh "$scratch/control/postinst" abort-upgrade && [ ! -s "$scratch/calls" ] &&
  ok || bad "postinst abort-upgrade: $(cat "$scratch/calls")"

finish install-deb

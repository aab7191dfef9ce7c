#!/usr/bin/env bash
# The man pages the build made from the programs' --help (deploy/help-docs.sh)
# render without a warning (groff -ww, and man -l where man is), have NAME,
# SYNOPSIS and DESCRIPTION, and hold every line of `PROG --help` and of each
# command's --help (so every option in them) as the program prints it now.
# Without groff, the .1 file itself is read (its \- unescaped).
set -u
build=${TW_BUILD_DIR:?run through ctest, or set TW_BUILD_DIR and TW_CLI, TW_AGENT}
cli=${TW_CLI:?}
agent=${TW_AGENT:?}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-man-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
export LC_ALL=C MANWIDTH=200
dir=$build/generated/docs/man1

render() { # PAGE: the text, formatting removed
  if command -v groff >/dev/null; then
    groff -man -ww -Tascii -P-cbou "$1" 2>"$scratch/warnings"
  else
    sed -e '/^\.\\"/d' -e 's/^\.S[HS] "\{0,1\}\([^"]*\)"\{0,1\}$/\1/' -e 's/^\.B[IR]\{0,1\} //' \
        -e '/^\./d' -e 's/\\-/-/g' -e 's/\\e/\\/g' -e 's/^\\&//' "$1"
  fi
}
# Lines compared with their blanks squeezed (the page indents them), and
# without "usage: " (the top-level usage is the SYNOPSIS).
squeeze() { sed -e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' -e 's/ $//' -e 's/^usage: //' | grep -v '^$'; }

check_page() { # PROG EXE
  local prog=$1 exe=$2 page=$dir/$1.1 c
  [ -s "$page" ] || { bad "no man page $page"; return; }
  render "$page" >"$scratch/text"
  if command -v groff >/dev/null; then
    [ ! -s "$scratch/warnings" ] && ok || bad "groff warns on $prog.1: $(head -3 "$scratch/warnings")"
  fi
  [ "$(head -c 300 "$scratch/text" | grep -c .)" -gt 0 ] && ok || bad "$prog.1 renders empty"
  for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
    grep -q "^$s\$" "$scratch/text" && ok || bad "$prog.1 has no $s section"
  done
  grep -qE "^ *$prog - [a-z]" "$scratch/text" && ok || bad "$prog.1: no NAME line '$prog - ...'"
  squeeze <"$scratch/text" >"$scratch/page"
  local helps=("$exe --help")
  for c in $("$exe" --help | sed -n '/^Commands:/,/^[^ ]/p' | sed -n 's/^  \([a-z][a-z0-9-]*\)  .*/\1/p'); do
    helps+=("$exe $c --help")
    grep -qx "$prog $c" "$scratch/page" && ok || bad "$prog.1 has no section for $prog $c"
  done
  local h missing
  for h in "${helps[@]}"; do
    $h 2>&1 | squeeze >"$scratch/help"
    # Every line of the help is a line of the page ...
    missing=$(grep -vxF -f "$scratch/page" "$scratch/help" | head -3)
    [ -z "$missing" ] && ok || bad "$prog.1 lacks lines of '${h#"$exe" }': $missing"
    # ... so every option in it is on the page (said once more, plainly).
    for o in $($h 2>&1 | grep -oE -- '(^|[^A-Za-z0-9-])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[^-]*//' | sort -u); do
      grep -qF -- "$o" "$scratch/page" && ok || bad "$prog.1 lacks $o of '${h#"$exe" }'"
    done
  done
  if command -v man >/dev/null; then
    man -l "$page" >"$scratch/man" 2>"$scratch/man.err" && grep -q "^NAME" "$scratch/man" &&
      [ ! -s "$scratch/man.err" ] && ok || bad "man -l $prog.1: $(head -3 "$scratch/man.err")"
  fi
}

check_page tierwise "$cli"
check_page tierwise-agent "$agent"
[ -n "${TW_AZSIM:-}" ] && check_page tierwise-azsim "$TW_AZSIM"
finish install-man

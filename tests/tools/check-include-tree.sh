#!/usr/bin/env bash
# Checks that the build enforces the module table: for every module the
# build knows (MODULES, from src/CMakeLists.txt), its include tree
# INCLUDE_ROOT/<module>/ holds a link to exactly the modules check-deps.sh's
# table lets it use, each pointing at src/<module>; and, with the compiler
# CC, that an #include of a header of a module it may not use fails to
# compile while one of its own compiles.
set -u
check=${1:?usage: check-include-tree.sh CHECK_DEPS INCLUDE_ROOT CC MODULES...}
root=${2:?} cc=${3:?}
shift 3
[ $# -gt 0 ] || { echo "FAIL: no modules given"; exit 1; }
declare -A table=()
while IFS=': ' read -r m uses; do table[$m]=$uses; done < <("$check" --table)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-include-tree-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
fail=0 compiled=0
bad() { echo "FAIL: $*"; fail=1; }
[ "${#table[@]}" -eq $# ] || bad "the build has $# modules ($*), check-deps.sh's table ${#table[@]} (${!table[*]})"
for m in "$@"; do
  [ -n "${table[$m]+x}" ] || { bad "module $m is not in check-deps.sh's table"; continue; }
  tree=$root/$m
  want=$(tr ' ' '\n' <<<"${table[$m]}" | sort | tr '\n' ' ')
  have=$(ls "$tree" 2>/dev/null | sort | tr '\n' ' ')
  [ "$have" = "$want" ] || bad "$tree holds [$have], the table says [$want]"
  for u in ${table[$m]}; do
    dest=$(readlink "$tree/$u")
    [ "$(basename "$dest")" = "$u" ] && [ "$(basename "$(dirname "$dest")")" = src ] ||
      bad "$tree/$u points at $dest, not src/$u"
  done
  # A header of each module: one of its own compiles, one of another it
  # may not use does not.
  own=$(cd "$tree/$m" 2>/dev/null && ls *.h 2>/dev/null | head -1)
  if [ -n "$own" ]; then
    printf '#include "%s/%s"\n' "$m" "$own" >"$scratch/own.c"
    "$cc" -fsyntax-only -D_GNU_SOURCE -I "$tree" "$scratch/own.c" 2>"$scratch/err" ||
      bad "$m can't compile its own $m/$own: $(head -3 "$scratch/err")"
  fi
  for o in "$@"; do
    [[ " ${table[$m]} " == *" $o "* ]] && continue
    h=$(cd "$root/$o/$o" 2>/dev/null && ls *.h 2>/dev/null | head -1)
    [ -n "$h" ] || continue
    printf '#include "%s/%s"\n' "$o" "$h" >"$scratch/t.c"
    if "$cc" -fsyntax-only -I "$tree" "$scratch/t.c" 2>"$scratch/err"; then
      bad "$m compiles #include \"$o/$h\", which it may not use"
    elif ! grep -q "$o/$h: No such file" "$scratch/err"; then
      bad "$m: #include \"$o/$h\" failed, but not for want of the file: $(head -3 "$scratch/err")"
    fi
    compiled=$((compiled + 1))
  done
done
[ $fail -eq 0 ] && echo "include-tree: $# modules' trees are the table; $compiled forbidden #includes do not compile"
exit $fail

#!/usr/bin/env bash
# Checks the one-way module dependencies (README "Design notes"):
# every #include "<module>/..." in src/<folder>/ must name a module that
# folder may use.  Prints each violation and exits 1 if there is any.
set -u
src=${1:?usage: check-deps.sh SRC_DIR}

declare -A allowed=(
  [core]="core"
  [bench]="core bench"
  [azure]="core azure"
  [store]="core store"
  [server]="core store azure server"
  [sim]="core sim"
  [app]="core app"
  [agent]="core bench azure app agent"
  [cli]="core bench azure store server app cli"
)
# Libraries each module may include with <...>, beyond libc.
declare -A libs=(
  [core]="jansson.h"
  [bench]="jansson.h libaio.h"
  [store]="jansson.h sqlite3.h"
)
bad=0
for dir in "$src"/*/; do
  mod=$(basename "$dir")
  if [ -z "${allowed[$mod]+x}" ]; then
    echo "check-deps: src/$mod is not in the dependency table; add it here and to README"
    bad=1
    continue
  fi
  while IFS=: read -r file line inc; do
    used=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$inc")
    if [[ " ${allowed[$mod]} " != *" $used "* ]]; then
      echo "check-deps: ${file#"$src"/}:$line includes $used/, which $mod may not use"
      bad=1
    fi
  done < <(grep -Hn -E '^#include "[a-z_]+/' "$dir"*.[ch] 2>/dev/null)
  # Foreign libraries in the modules that must stay free of them.
  if [ -n "${libs[$mod]+x}" ]; then
    while IFS=: read -r file line inc; do
      h=$(sed -E 's/.*#include <([^>]+)>.*/\1/' <<<"$inc")
      case "$h" in
        curl/*|sqlite3.h|microhttpd.h|libaio.h|jansson.h)
          if [[ " ${libs[$mod]} " != *" $h "* ]]; then
            echo "check-deps: ${file#"$src"/}:$line includes <$h>, which $mod may not use"
            bad=1
          fi ;;
      esac
    done < <(grep -Hn -E '^#include <' "$dir"*.[ch] 2>/dev/null)
  fi
done
[ $bad -eq 0 ] && echo "check-deps: all includes follow the dependency table"
exit $bad

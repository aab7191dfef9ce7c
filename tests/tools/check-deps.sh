#!/usr/bin/env bash
# Checks the one-way module dependencies (README "Design notes") in every
# module folder of SRC_DIR:
#   - each #include "<module>/..." names a module that folder may use;
#   - no #include "..." climbs out of its folder ("../");
#   - each #include <...> is libc (C, POSIX, Linux) or a foreign library
#     that folder may use; a library not in the table is a violation too.
# Prints each violation and exits 1 if there is any.  The build enforces the
# module part as well (src/CMakeLists.txt: one include tree per module);
# tests/tools/check-include-tree.sh checks that both hold the same table.
#
#   check-deps.sh SRC_DIR     check
#   check-deps.sh --table     print the table: "module: modules it may use"
set -u
src=${1:?usage: check-deps.sh SRC_DIR | --table}

# The modules each module may include headers of (itself among them).  The
# table is transitive: a module may use what the modules it uses use, since
# their headers include those.
declare -A allowed=(
  [core]="core"
  [bench]="core bench"
  [azure]="core azure"
  [store]="core store"
  [httpd]="core httpd"
  [service]="core store azure service"
  [server]="core service store azure httpd server"
  [app]="core app"
  [agent]="core bench azure app agent"
  [cli]="core bench azure store service server httpd app cli"
  [sim]="core httpd sim"
)
# The foreign libraries each module may include, beyond libc.  JSON is
# core's (jansson), and every module may read and write it.
declare -A libs=(
  [core]="jansson"
  [bench]="jansson libaio"
  [azure]="jansson curl"
  [store]="jansson sqlite3 libpq"
  [httpd]="jansson microhttpd"
  [service]="jansson"
  [server]="jansson microhttpd gnutls"
  [app]="jansson"
  [agent]="jansson sqlite3"
  [cli]="jansson"
  [sim]="jansson microhttpd"
)
order="core bench azure store httpd service server app agent cli sim"

if [ "$src" = --table ]; then
  for m in $order; do echo "$m: ${allowed[$m]}"; done
  exit 0
fi

# lib_of HEADER: the foreign library a <HEADER> belongs to, "libc" for the
# C library, POSIX and Linux headers, "" for one this table does not know.
lib_of() {
  case "$1" in
    jansson.h|jansson_config.h) echo jansson ;;
    curl/*) echo curl ;;
    sqlite3.h|sqlite3ext.h) echo sqlite3 ;;
    microhttpd.h) echo microhttpd ;;
    gnutls/*) echo gnutls ;;
    libaio.h) echo libaio ;;
    cmocka.h|cmocka_pbc.h) echo cmocka ;;
    libpq-fe.h|libpq/*|postgresql/*) echo libpq ;;
    openssl/*) echo openssl ;;
    zlib.h) echo zlib ;;
    systemd/*) echo systemd ;;
    sys/*|linux/*|asm/*|asm-generic/*|bits/*|netinet/*|arpa/*|net/*|scsi/*) echo libc ;;
    assert.h|complex.h|ctype.h|errno.h|fenv.h|float.h|inttypes.h|iso646.h|limits.h|locale.h|\
    math.h|setjmp.h|signal.h|stdalign.h|stdarg.h|stdatomic.h|stdbool.h|stddef.h|stdint.h|\
    stdio.h|stdlib.h|stdnoreturn.h|string.h|tgmath.h|threads.h|time.h|uchar.h|wchar.h|wctype.h|\
    aio.h|cpio.h|dirent.h|dlfcn.h|fcntl.h|fmtmsg.h|fnmatch.h|ftw.h|glob.h|grp.h|iconv.h|\
    langinfo.h|libgen.h|monetary.h|mqueue.h|netdb.h|nl_types.h|poll.h|pthread.h|pwd.h|regex.h|\
    sched.h|search.h|semaphore.h|spawn.h|strings.h|syslog.h|tar.h|termios.h|ulimit.h|unistd.h|\
    utime.h|utmpx.h|wordexp.h|alloca.h|byteswap.h|endian.h|err.h|error.h|execinfo.h|features.h|\
    getopt.h|ifaddrs.h|malloc.h|mntent.h|paths.h|pty.h|shadow.h|sysexits.h|ucontext.h|utmp.h)
      echo libc ;;
    *) echo "" ;;
  esac
}

bad=0
say() { echo "check-deps: $*"; bad=1; }
checked=()
for dir in "$src"/*/; do
  mod=$(basename "$dir")
  if [ -z "${allowed[$mod]+x}" ]; then
    say "src/$mod is not in the dependency table; add it here, to src/CMakeLists.txt and to README"
    continue
  fi
  checked+=("$mod")
  while IFS=: read -r file line inc; do
    rel=${file#"$src"/}
    if [[ $inc =~ ^#include\ *\"([^\"]*)\" ]]; then
      path=${BASH_REMATCH[1]}
      if [[ $path == ../* || $path == */../* ]]; then
        say "$rel:$line includes \"$path\", out of its folder; name the module: \"<module>/<header>\""
      elif [[ $path == */* ]]; then
        used=${path%%/*}
        if [[ " ${allowed[$mod]} " != *" $used "* ]]; then
          say "$rel:$line includes $used/, which $mod may not use"
        fi
      fi
    elif [[ $inc =~ ^#include\ *\<([^\>]*)\> ]]; then
      h=${BASH_REMATCH[1]}
      lib=$(lib_of "$h")
      if [ -z "$lib" ]; then
        say "$rel:$line includes <$h>, a library not in the dependency table"
      elif [ "$lib" != libc ] && [[ " ${libs[$mod]} " != *" $lib "* ]]; then
        say "$rel:$line includes <$h> ($lib), which $mod may not use"
      fi
    fi
  done < <(grep -Hn -E '^[[:space:]]*#[[:space:]]*include' "$dir"*.[ch] 2>/dev/null |
           sed -E 's/:[[:space:]]*#[[:space:]]*include[[:space:]]*/:#include /')
done
# The store's interface speaks domain rows, never the API's JSON: its
# public headers must not reach jansson, not even through core's headers.
for h in store/store.h store/store_ops.h; do
  [ -f "$src/$h" ] || continue
  if printf '#include "%s"\n' "$h" | ${CC:-cc} -std=c11 -D_GNU_SOURCE -I"$src" -E -x c - 2>/dev/null |
     grep -q 'jansson\.h'; then
    say "src/$h reaches <jansson.h>; the store's interface answers domain structs, not JSON"
  fi
done
if [ $bad -eq 0 ]; then
  echo "check-deps: ${#checked[@]} modules (${checked[*]}): all includes follow the dependency table"
fi
exit $bad

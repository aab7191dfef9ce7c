# testlib.sh - what the shell tests share; sourced after `scratch` is set.
#
#   ok                    count a passed check
#   bad MESSAGE           count a failed check and say why
#   expect STATUS WORDS -- CMD...
#                         CMD exits STATUS, prints one line on stderr that
#                         contains WORDS, and nothing on stdout
#   finish NAME           print "NAME: N passed, N failed"; status 1 on failures
#   need_faketime         set faketime_lib to libfaketime's path, or exit 77

pass=0 fail=0

# jq -e is how the tests check a JSON answer, but jq 1.6 exits 0 under -e
# when its input holds no JSON at all (an empty body, an empty file), so a
# check of an answer that never came would pass.  Under -e, no output at
# all is a failure here (status 4, what later jq versions answer).
jq() {
  case " $* " in
    *" -e "*) ;;
    *) command jq "$@"; return ;;
  esac
  local out st
  out=$(command jq "$@"); st=$?
  if [ -z "$out" ] && [ "$st" -eq 0 ]; then
    echo "jq -e: no JSON to check" >&2
    return 4
  fi
  [ -z "$out" ] || printf '%s\n' "$out"
  return "$st"
}

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

expect() {
  local want=$1 words=$2; shift 3
  local out err st
  out=$("$@" 2>"$scratch/expect.err"); st=$?
  err=$(cat "$scratch/expect.err")
  if [ "$st" != "$want" ]; then bad "$* -> exit $st, want $want ($err)"; return; fi
  if ! grep -qF -- "$words" <<<"$err"; then bad "$* -> stderr lacks '$words': $err"; return; fi
  if [ -n "$out" ]; then bad "$* -> wrote to stdout on failure: $out"; return; fi
  if [ "$(wc -l <<<"$err")" -gt 1 ]; then bad "$* -> more than one message: $err"; return; fi
  ok
}

finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

# libfaketime itself, preloaded by the tests (LD_PRELOAD=$faketime_lib,
# FAKETIME=...), never the faketime(1) wrapper: the wrapper forks, so a
# signal to $! would miss the command, and it names a POSIX semaphore and
# a shared-memory segment after its own pid, which a killed run leaves in
# /dev/shm for the next process of that pid to fail on ("sem_open: File
# exists").
faketime_lib=""
need_faketime() {
  local d
  for d in /usr/lib/x86_64-linux-gnu/faketime /usr/lib/aarch64-linux-gnu/faketime /usr/lib/faketime; do
    [ -e "$d/libfaketimeMT.so.1" ] && { faketime_lib="$d/libfaketimeMT.so.1"; return; }
  done
  echo "SKIP: libfaketime is not installed (deploy/setup.sh installs faketime)"
  exit 77
}

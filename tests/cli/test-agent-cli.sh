#!/usr/bin/env bash
# Command-line contract of tierwise-agent bench and import-fio: --help,
# exit statuses, one clear message on stderr for each bad input, JSON on
# stdout only, and short runs on a file.
#
# ctest-parts: direct
#   (no part)  everything that needs no O_DIRECT (runs with --buffered or
#              the null engine): always runs
#   direct     real libaio/psync runs with O_DIRECT on a file under $TMPDIR
#              (or /var/tmp): exits 77 (skipped) where its filesystem lacks
#              O_DIRECT
set -u
part=${1:-}
case "$part" in
  ""|direct) ;;
  *) echo "unknown part \"$part\" (none, or direct)"; exit 2 ;;
esac
agent=${TW_AGENT:?run through ctest, or set TW_AGENT, TW_CLI and TW_FIXTURES}
fixtures=${TW_FIXTURES:?}
tierwise=${TW_CLI:?}
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-cli-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$(dirname "$0")/../helpers/testlib.sh"
f="$scratch/t.bench"

if [ "$part" = direct ]; then
  if ! dd if=/dev/zero of="$scratch/probe" bs=4096 count=1 oflag=direct 2>/dev/null; then
    echo "O_DIRECT not supported under $scratch: skipped"
    exit 77
  fi
  # A real short run: JSON on stdout only, valid against the record's reader.
  if "$agent" bench --target "$f" --size 8M --rw randread --bs 4k --qd 8 --jobs 2 \
       --runtime 1 --ramp 0 --json >"$scratch/r.json" 2>"$scratch/err"; then
    if "$tierwise" result "$scratch/r.json" >"$scratch/r.txt" 2>&1 &&
       grep -q '"profile": "custom"' "$scratch/r.json" &&
       grep -q '"engine": "libaio"' "$scratch/r.json" &&
       grep -q '"direct": true' "$scratch/r.json" && grep -q IOPS "$scratch/r.txt"; then ok
    else bad "bench --json output is not a valid record: $(cat "$scratch/r.txt")"; fi
    grep -q "laid out" "$scratch/err" && ok || bad "no layout message on stderr: $(cat "$scratch/err")"
  else
    bad "short bench run failed: $(cat "$scratch/err")"
  fi
  # Same file again: reused, no layout.
  if "$agent" bench --target "$f" --profile db-scan-16k --runtime 1 --ramp 0 >"$scratch/o.txt" 2>"$scratch/err"; then
    grep -q "laid out" "$scratch/err" && bad "file laid out twice" || ok
    grep -q "QD 1" "$scratch/o.txt" && grep -q psync "$scratch/o.txt" && ok || bad "db-scan-16k text: $(cat "$scratch/o.txt")"
  else
    bad "db-scan-16k failed: $(cat "$scratch/err")"
  fi
  # A write profile on a file is allowed; size-based end.
  if "$agent" bench --target "$f" --profile oltp-8k-mixed --runtime 0 --io-size 1M --ramp 0 --json >"$scratch/w.json" 2>"$scratch/err"; then
    grep -q '"pattern": "randrw"' "$scratch/w.json" && grep -q '"read_pct": 75' "$scratch/w.json" && ok || bad "oltp json"
  else
    bad "oltp-8k-mixed on a file failed: $(cat "$scratch/err")"
  fi
  finish agent-cli/direct
  exit
fi

# --help everywhere, exit 0, on stdout.
for args in "--help" "bench --help" "import-fio --help"; do
  # shellcheck disable=SC2086
  if "$agent" $args | grep -q usage; then ok; else bad "$agent $args has no usage"; fi
done
if "$tierwise" --help | grep -q usage && "$tierwise" result --help | grep -q usage; then ok; else bad "tierwise --help"; fi
"$agent" bench --list-profiles | grep -q rated-throughput && ok || bad "--list-profiles"
# --list-profiles --json (either order) is a JSON array of the profiles.
for args in "--list-profiles --json" "--json --list-profiles"; do
  # shellcheck disable=SC2086
  "$agent" bench $args >"$scratch/prof.json" 2>"$scratch/err"
  if python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
assert isinstance(p, list) and len(p) == 8, p
r = [x for x in p if x["name"] == "rated-iops"][0]
assert (r["queue_depth"], r["jobs"], r["block_size"], r["runtime_s"], r["writes"]) == (256, 4, 8192, 30, False), r
' "$scratch/prof.json" 2>"$scratch/py.err"; then ok
  else bad "bench $args is not the profiles as JSON: $(head -c 300 "$scratch/prof.json") $(cat "$scratch/py.err")"; fi
done
# --version on the command and every subcommand: the version on stdout, 0.
for args in "--version" "bench --version" "import-fio --version" "inventory --version" \
            "run --version" "bench --target x --version"; do
  # shellcheck disable=SC2086
  out=$("$agent" $args 2>&1); st=$?
  [ $st -eq 0 ] && grep -qx "tierwise-agent [0-9][0-9.]*" <<<"$out" && ok ||
    bad "$agent $args: exit $st: $out"
done

# Bad input: exit 2 and one clear message.
expect 2 "no target" -- "$agent" bench --profile rated-iops
expect 2 "unknown profile \"nope\"" -- "$agent" bench --target "$f" --profile nope
expect 2 "--qd 0" -- "$agent" bench --target "$f" --rw randread --bs 8k --qd 0
expect 2 "not a multiple of 512" -- "$agent" bench --target "$f" --rw randread --bs 1000
expect 2 "smaller than one block" -- "$agent" bench --target "$f" --size 4k --rw randread --bs 8k --runtime 1 --ramp 0
expect 2 "memory filesystem" -- "$agent" bench --target /dev/shm/tw-cli-$$ --size 1M --profile rated-iops
expect 2 "does its folder exist" -- "$agent" bench --target "$scratch/none/f" --size 1M --profile rated-iops
expect 2 "does not exist" -- "$agent" bench --target /dev/sdzz --profile rated-iops
expect 2 "unknown engine" -- "$agent" bench --target "$f" --rw read --bs 8k --engine io_uring
expect 2 "--read-pct" -- "$agent" bench --target "$f" --rw randrw --bs 8k --read-pct 120
expect 2 "--rw \"trim\"" -- "$agent" bench --target "$f" --rw trim --bs 8k
expect 2 "size" -- "$agent" bench --target "$f" --size lots --profile rated-iops
expect 2 "--size \"abc\" is not a size" -- "$agent" bench --target "$f" --size abc --profile rated-iops
expect 2 "give more than 0 bytes" -- "$agent" bench --target "$f" --size 0 --profile rated-iops
expect 2 "from 1 to 65536" -- "$agent" bench --target "$f" --rw randread --bs 8k --qd -1
expect 2 "from 1 to 65536" -- "$agent" bench --target "$f" --rw randread --bs 8k --qd 65537
expect 2 "give 1 to 65536" -- "$agent" bench --target "$f" --rw randread --bs 8k --qd 0
expect 2 "unknown command" -- "$agent" frobnicate
[ -e /dev/shm/tw-cli-$$ ] && bad "tmpfs file left behind" || ok

# import-fio bad input.
expect 2 "import-fio takes one FILE" -- "$agent" import-fio
expect 2 "can't open" -- "$agent" import-fio "$scratch/missing.json"
for b in "$fixtures"/fio/constructed-truncated.json "$fixtures"/fio/constructed-foreign.csv \
         "$fixtures"/fio/constructed-truncated.txt "$fixtures"/fio/constructed-stripe-65.txt \
         "$fixtures"/fio/constructed-fio2-no-options.json "$fixtures"/fio/two-sections.txt; do
  expect 2 "$(basename "$b")" -- "$agent" import-fio "$b"
done
# What the output leaves out, from the run's job file or command line.
"$agent" import-fio --json --job-file "$fixtures"/fio/fioread.ini "$fixtures"/fio/fioread-4jobs.txt \
  >"$scratch/jf.json" 2>"$scratch/err" && grep -q '"direct_basis": "job file"' "$scratch/jf.json" &&
  ok || bad "import-fio --job-file: $(cat "$scratch/err")"
"$agent" import-fio --fio-args "--direct=0" --section writes "$fixtures"/fio/two-sections.txt \
  >"$scratch/fa.txt" 2>"$scratch/err" && grep -q "buffered" "$scratch/fa.txt" &&
  ok || bad "import-fio --fio-args --section: $(cat "$scratch/err")"
expect 2 "quote open" -- "$agent" import-fio --fio-args "--direct='1" "$fixtures"/fio/fioread-4jobs.txt
# A bad job file with a text output: the message names the job file's line,
# not a line of the output.
printf 'direct=1\n[reader1]\n' > "$scratch/bad.fio"
expect 2 "fioread-4jobs.txt: line 1 of the job file" -- "$agent" import-fio \
  --job-file "$scratch/bad.fio" "$fixtures"/fio/fioread-4jobs.txt
# A FIFO given as the job file is refused at once, never waited on.
mkfifo "$scratch/job.fifo"
expect 2 "not a regular file" -- timeout 20 "$agent" import-fio --job-file "$scratch/job.fifo" \
  "$fixtures"/fio/fioread-4jobs.txt
: > "$scratch/empty"
expect 2 "empty" -- "$agent" import-fio "$scratch/empty"

# The null engine on a buffered file: no O_DIRECT needed.  The first run
# lays the file out.
nul=("$agent" bench --target "$f" --size 8M --buffered --engine null)
# Errors are counted and the run goes on (null engine, every 10th I/O fails).
if "${nul[@]}" --rw randread --bs 4k --qd 4 --runtime 0 --io-size 400k \
     --ramp 0 --null-fail-every 10 --json >"$scratch/e.json" 2>"$scratch/err"; then
  grep -q '"count": 10' "$scratch/e.json" && grep -q "I/O errors" "$scratch/err" && ok || bad "error count: $(cat "$scratch/e.json")"
else
  bad "null engine run failed: $(cat "$scratch/err")"
fi
# Every I/O failed: the record is printed, but the run failed (exit 1).
"${nul[@]}" --rw randread --bs 4k --qd 4 --runtime 0 --io-size 40k \
  --ramp 0 --null-fail-every 1 --json >"$scratch/allfail.json" 2>"$scratch/err"
st=$?
[ $st -eq 1 ] && grep -q '"count": 10' "$scratch/allfail.json" && ok || bad "all I/O failed: exit $st"
# A size-based run used up during the ramp measured nothing: exit 2, no record.
expect 2 "during the" -- "${nul[@]}" --rw randread --bs 4k \
  --runtime 0 --io-size 1M --ramp 300ms
# An existing file that isn't fully written is not overwritten without permission.
sparse="$scratch/sparse.db"
truncate -s 4M "$sparse"
expect 2 "--allow-destructive" -- "$agent" bench --target "$sparse" --buffered --profile rated-iops --runtime 1 --ramp 0
[ "$(du -k "$sparse" | cut -f1)" -lt 100 ] && ok || bad "the sparse file was written"

# A result that can't be written out (a full disk behind stdout) is a
# failure.  /dev/full is part of every Linux system.
"${nul[@]}" --rw randread --bs 4k --runtime 0 --io-size 40k \
  --ramp 0 --json >/dev/full 2>"$scratch/err"
st=$?
[ $st -eq 1 ] && grep -q "standard output" "$scratch/err" && ok || bad "stdout full: exit $st: $(cat "$scratch/err")"

# import-fio of every real fixture: JSON that the reader accepts.
for fx in "$fixtures"/fio/*.json "$fixtures"/fio/*.txt; do
  case "$(basename "$fx")" in
    constructed-truncated*|constructed-foreign*|constructed-stripe-65*) continue ;;
    constructed-fio2-no-options*|two-sections*) continue ;; # refused, above
  esac
  if "$agent" import-fio --json "$fx" >"$scratch/i.json" 2>"$scratch/err" &&
     "$tierwise" result "$scratch/i.json" >/dev/null 2>&1; then ok
  else bad "import-fio $fx: $(cat "$scratch/err")"; fi
done
# The progress line: drawn on a terminal (script(1), of util-linux, which
# every Debian system has, gives the run a pty), absent when stdout is a pipe.
script -qec "${nul[*]} --rw randread --bs 4k --runtime 2 --ramp 0" \
  /dev/null >"$scratch/tty.txt" 2>&1
grep -q "IOPS.*ETA" "$scratch/tty.txt" && ok || bad "no progress line on a terminal: $(head -c 300 "$scratch/tty.txt")"
"${nul[@]}" --rw randread --bs 4k --runtime 2 --ramp 0 >"$scratch/pipe.txt" 2>&1
grep -q "ETA" "$scratch/pipe.txt" && bad "progress line printed into a pipe" || ok
# -q: no progress line even on a terminal; -v: the method said even into a pipe.
script -qec "${nul[*]} --rw randread --bs 4k --runtime 1 --ramp 0 -q" \
  /dev/null >"$scratch/tty-q.txt" 2>&1
grep -q "ETA" "$scratch/tty-q.txt" && bad "-q drew a progress line: $(head -c 300 "$scratch/tty-q.txt")" || ok
grep -q "IOPS" "$scratch/tty-q.txt" && ok || bad "-q dropped the result: $(head -c 300 "$scratch/tty-q.txt")"
"${nul[@]}" --rw randread --bs 4k --runtime 1 --ramp 0 -v >"$scratch/v.txt" 2>"$scratch/v.err"
grep -q "method: null randread, 4096 bytes per I/O, QD 32 x 1 jobs" "$scratch/v.err" && ok ||
  bad "-v did not say the method: $(cat "$scratch/v.err")"
rm -f "$scratch/q.bench"
"$agent" bench --target "$scratch/q.bench" --size 1M --buffered --engine null --rw read --bs 4k \
  --runtime 0 --io-size 64k --ramp 0 -q >/dev/null 2>"$scratch/q.err"
[ ! -s "$scratch/q.err" ] && ok || bad "-q still said: $(cat "$scratch/q.err")"
# SIGINT stops a run with status 130 and no result on stdout.
"${nul[@]}" --rw randread --bs 4k --runtime 30 --ramp 0 --json >"$scratch/int.json" 2>/dev/null &
pid=$!
sleep 0.5; kill -INT $pid; wait $pid; st=$?
[ $st -eq 130 ] && [ ! -s "$scratch/int.json" ] && ok || bad "SIGINT: exit $st, stdout $(head -c 100 "$scratch/int.json")"

finish agent-cli

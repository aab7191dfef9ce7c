#!/usr/bin/env bash
# The monthly report's systemd example (deploy/tierwise-report.service and
# .timer): the shell line of the service's ExecStart, run as systemd would
# (its %% and $$ read as % and $) at chosen wall-clock times under
# faketime, names the month before the current one in UTC, even on the
# 31st (where `date -d 'last month'` alone lands in the same month) and
# across a year, and writes that month's HTML page into the reports'
# folder, with TIERWISE_REPORT_OPTS passed on.  Part "verify":
# systemd-analyze verify accepts both units and the timer fires on the
# first of a month at 06:00 UTC.
# ctest-parts: verify
set -u
src=${TW_SOURCE_DIR:?run through ctest}
unit="$src/deploy/tierwise-report.service"
timer="$src/deploy/tierwise-report.timer"
scratch=$(mktemp -d "${TMPDIR:-/var/tmp}/tw-report-timer-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"

if [ "${1:-}" = verify ]; then
  command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
  systemd-analyze verify --man=no "$unit" "$timer" 2>&1 | grep -v "is not executable" >"$scratch/verify"
  [ ! -s "$scratch/verify" ] && ok || bad "systemd-analyze verify: $(cat "$scratch/verify")"
  # ... and it would say so: a misspelt key is reported
  sed 's/^Nice=/Nicee=/' "$unit" >"$scratch/tierwise-report.service"
  cp "$timer" "$scratch/"
  systemd-analyze verify --man=no "$scratch/tierwise-report.service" "$scratch/tierwise-report.timer" \
    2>&1 | grep -q "Unknown key" && ok || bad "systemd-analyze verify does not report a bad key"
  cal=$(sed -n 's/^OnCalendar=//p' "$timer")
  grep -qx 'Persistent=true' "$timer" && ok || bad "the timer is not Persistent=true"
  systemd-analyze calendar --iterations=3 "$cal" >"$scratch/cal" 2>&1 || bad "calendar $cal: $(cat "$scratch/cal")"
  n=$(grep -cE '(Next elapse|Iter\. #[0-9]+): [A-Z][a-z]{2} [0-9]{4}-[0-9]{2}-01 06:00:00 UTC' "$scratch/cal")
  [ "$n" = 3 ] && ok || bad "the timer's next elapses are not firsts of a month at 06:00 UTC: $(cat "$scratch/cal")"
  finish "report-timer/verify"
  exit
fi

need_faketime
line=$(sed -n 's/^ExecStart=//p' "$unit")
[ -n "$line" ] && ok || bad "no ExecStart= in $unit"
# systemd's own expansions: %% is %, $$ is $; nothing else may be left for
# it to expand (a lone % specifier or $VAR would be systemd's, not the shell's)
rest=${line//%%/}
rest=${rest//\$\$/}
if grep -q '%' <<<"$rest" || grep -q '\$' <<<"$rest"; then
  bad "ExecStart has a % or \$ systemd would expand itself: $line"
else
  ok
fi
cmd=${line//%%/%}
cmd=${cmd//\$\$/\$}
case $cmd in
  "/bin/sh -c '"*"'") ok ;;
  *) bad "ExecStart is not one /bin/sh -c '...' line: $cmd" ;;
esac
# the program stands in for tierwise: it writes its arguments down
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/args"\n' "$scratch" >"$scratch/tierwise"
chmod +x "$scratch/tierwise"
grep -q '/usr/local/bin/tierwise report monthly ' <<<"$cmd" && ok || bad "ExecStart does not run tierwise report monthly: $cmd"
cmd=${cmd//\/usr\/local\/bin\/tierwise/$scratch/tierwise}

# NOW (UTC) -> the month the page is for
while read -r now want; do
  rm -f "$scratch/args"
  TZ=UTC TIERWISE_REPORT_OPTS="--currency EUR --group-by subscription" \
    LD_PRELOAD="$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME="@${now/T/ }" \
    bash -c "$cmd" 2>"$scratch/err"
  got=$(tr '\n' ' ' <"$scratch/args" 2>/dev/null)
  exp="report monthly --db /var/lib/tierwise-server/tierwise.db --month $want --format html"
  exp+=" --out /var/lib/tierwise-reports/tierwise-$want.html --currency EUR --group-by subscription "
  [ "$got" = "$exp" ] && ok || bad "at $now: '$got', want '$exp' ($(cat "$scratch/err"))"
done <<'TIMES'
2026-12-01T06:00:00 2026-11
2026-01-01T06:03:00 2025-12
2026-03-31T23:59:00 2026-02
2026-03-01T00:00:00 2026-02
2024-03-01T06:00:00 2024-02
2026-05-31T12:00:00 2026-04
2026-10-01T06:00:00 2026-09
TIMES
# without the options file, nothing more is passed
rm -f "$scratch/args"
TZ=UTC LD_PRELOAD="$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}" FAKETIME="@2026-12-01 06:00:00" \
  env -u TIERWISE_REPORT_OPTS bash -c "$cmd"
[ "$(tail -n1 "$scratch/args")" = /var/lib/tierwise-reports/tierwise-2026-11.html ] && ok ||
  bad "without TIERWISE_REPORT_OPTS: $(tr '\n' ' ' <"$scratch/args")"
# the service writes where the timer's folder is
grep -qx 'StateDirectory=tierwise-reports' "$unit" && ok || bad "the reports' folder is not the unit's StateDirectory"
finish "report-timer"

#!/usr/bin/env bash
# monthly-html-check.sh PROG DIR - the monthly report's HTML page checked
# with a parser that refuses broken markup (tests/tools/html-check.py):
# PROG (test_service_monthly_html) writes its sample pages into DIR (a full
# month, an empty one, 2,500 disks collapsed, a month still running), each
# must be well-formed and self-contained and hold the sections it should.
# The checker first proves it refuses broken pages.  Exit 77 without
# python3.
set -euo pipefail
prog=$1
dir=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
check="python3 $here/html-check.py"
$check --self-test
mkdir -p "$dir"
for kind in full empty collapsed partial; do
  "$prog" --sample "$kind" "$dir/monthly-report-$kind.html"
done
$check "$dir/monthly-report-full.html" \
  --require-id headline --require-id unpriced --require-id saving-chart \
  --require-id measured-table --require-id week-table --require-id groups-table \
  --require-id books-table --require-id missing-table --require-id notes --require-id method
$check "$dir/monthly-report-empty.html" \
  --require-id headline --require-id saving-chart-empty --require-id measured-empty \
  --require-id week-empty --require-id groups-empty --require-id books-empty --require-id method
$check "$dir/monthly-report-collapsed.html" \
  --require-id disks-left-out --require-id groups-table --require-id fleet-total
$check "$dir/monthly-report-partial.html" \
  --require-id headline --require-id saving-chart --require-id groups-table
echo "monthly-html-check: the four pages are well-formed (in $dir)"

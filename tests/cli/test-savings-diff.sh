#!/usr/bin/env bash
# tierwise savings against an independent model: a few hundred random
# what-ifs (windows that wrap the week, overlap, last the whole week or 167
# hours, times at the hours clocks change; zones with 30- and 45-minute
# offsets and changes, Europe/London, America/New_York,
# Australia/Lord_Howe, Pacific/Chatham; periods across the changes; counts;
# currencies with 2 and 0 decimals; target tiers that cost more) run
# through `tierwise savings --json` and through tests/tools/savings_model.py
# (Python's fractions and zoneinfo, no tierwise code), which must agree
# exactly on the seconds, the hours (micro-hours), the unrounded and
# rounded savings, the baseline and with_plan per disk, the transactions
# and the total baseline.  Cases include ZRS disks (--from-sku
# Premium_ZRS) and running VMs' I/O (--io-per-hour, --io-size) priced on
# files that hold some of the target's three transaction meters (its own,
# the family's 4-tier one, the tier-less one; none: refused, exit 2).
# The seed is printed; TW_SEED=N repeats a run, TW_SAVINGS_CASES=N sets
# how many cases (default 300).  Skipped without python3, its zoneinfo or
# the zone files.
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
command -v python3 >/dev/null || { echo "python3 is not installed: skipped"; exit 77; }
python3 -c 'import zoneinfo, fractions; zoneinfo.ZoneInfo("Pacific/Chatham")' 2>/dev/null ||
  { echo "python3 has no zoneinfo or the zone files are missing: skipped"; exit 77; }
[ -f "${TZDIR:-/usr/share/zoneinfo}/Australia/Lord_Howe" ] ||
  { echo "no zone files in ${TZDIR:-/usr/share/zoneinfo} (tzdata): skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-savings-diff-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export TIERWISE_LOOPBACK_ONLY=1
seed=()
[ -n "${TW_SEED:-}" ] && seed=(--seed "$TW_SEED")
python3 "$src/tests/tools/savings_model.py" diff --cli "$cli" --work "$scratch" \
  --cases "${TW_SAVINGS_CASES:-300}" "${seed[@]}"

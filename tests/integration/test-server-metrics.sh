#!/usr/bin/env bash
# tierwise serve's /metrics as Prometheus reads it: the exposition passes
# `promtool check metrics` (its parser and its lint), carries the standard
# process_* metrics and the fleet's gauges (verdicts by verdict and disk
# SKU, VMs by size, disks by SKU and tier, agents not heard from in 2 days,
# reports stored) with the figures of the reports posted; agents whose
# newest report came in 3 days ago count as not heard from.  Needs curl,
# jq, sqlite3 and promtool (Debian's prometheus package); 77 without.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-srv-metrics-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/integration/server-lib.sh"
need curl jq sqlite3 promtool
trap 'cleanup_servers; rm -rf "$scratch"' EXIT

agent=$(make_token agent)
start_server main
[ -n "$port" ] || { echo "FAIL: tierwise serve did not start: $(cat "$scratch/main.err")"; exit 1; }
for f in "$fixtures"/reports/*.json; do
  [ "$(post_report "$f" "$agent")" = 201 ] && ok || bad "$f: $(cat "$scratch/body")"
done

# scrape FILE: GET /metrics into FILE, checked by promtool.
scrape() {
  [ "$(req GET /metrics -)" = 200 ] && ok || bad "GET /metrics: $(head -c 300 "$scratch/body")"
  cp "$scratch/body" "$1"
  grep -qi '^Content-Type: text/plain; version=0.0.4' "$scratch/headers" && ok || bad "content type"
  if promtool check metrics <"$1" >"$scratch/promtool.out" 2>&1; then ok; else
    bad "promtool check metrics: $(cat "$scratch/promtool.out")"
  fi
}
# val FILE NAME{LABELS}: the value of that series (empty when absent).
val() { awk -v n="$2" '$1 == n {print $2}' "$1"; }
# sum FILE NAME: the sum of every series of NAME.
sum() { awk -v n="$2" 'index($1, n "{") == 1 {s += $2} END {print s + 0}' "$1"; }

scrape "$scratch/m1"
m="$scratch/m1"
for name in process_cpu_seconds_total process_resident_memory_bytes process_open_fds \
            process_max_fds process_start_time_seconds process_virtual_memory_bytes; do
  v=$(val "$m" "$name")
  [ -n "$v" ] && ok || bad "no $name"
done
[ "$(awk '$1 == "process_resident_memory_bytes" {print ($2 > 1048576)}' "$m")" = 1 ] && ok ||
  bad "resident memory: $(val "$m" process_resident_memory_bytes)"
# The start time is this server's: within the test's minutes, by the system clock.
now=$(date +%s)
awk -v now="$now" '$1 == "process_start_time_seconds" {exit !($2 > now - 600 && $2 <= now + 1)}' "$m" &&
  ok || bad "start time $(val "$m" process_start_time_seconds), now $now"
[ "$(val "$m" process_open_fds)" -ge 3 ] && [ "$(val "$m" process_max_fds)" -ge "$(val "$m" process_open_fds)" ] &&
  ok || bad "fds: $(val "$m" process_open_fds) of $(val "$m" process_max_fds)"

# The fleet: 3 reports, 3 VMs of 3 sizes, 16 attached disks.
[ "$(val "$m" tierwise_reports_stored)" = 3 ] && ok || bad "reports stored: $(val "$m" tierwise_reports_stored)"
[ "$(val "$m" 'tierwise_vms_by_size{size="Standard_D4ds_v5"}')" = 1 ] && ok || bad "VMs by size: $(grep vms_by_size "$m")"
[ "$(sum "$m" tierwise_vms_by_size)" = 3 ] && ok || bad "VMs by size add up to $(sum "$m" tierwise_vms_by_size)"
[ "$(val "$m" 'tierwise_disks_by_sku{sku="Premium_LRS",tier="P10"}')" = 5 ] && ok || bad "disks by SKU: $(grep disks_by_sku "$m")"
[ "$(sum "$m" tierwise_disks_by_sku)" = 16 ] && ok || bad "disks by SKU add up to $(sum "$m" tierwise_disks_by_sku)"
[ "$(val "$m" tierwise_agents_not_heard_from)" = 0 ] && ok || bad "agents not heard from: $(val "$m" tierwise_agents_not_heard_from)"
[ "$(val "$m" tierwise_vms_judged)" = 3 ] && ok || bad "VMs judged: $(val "$m" tierwise_vms_judged)"
# Verdicts by disk SKU: the compliance summary's counts, series for series.
reader=$(make_token reader)
[ "$(req GET /api/v1/compliance/summary "$reader")" = 200 ] && ok || bad "summary: $(cat "$scratch/body")"
jq -r '.by_sku[] | .sku as $s | to_entries[] | select(.key != "sku") |
       "tierwise_disk_verdicts{verdict=\"\(.key)\",sku=\"\($s)\"} \(.value)"' "$scratch/body" |
  sort >"$scratch/want"
grep '^tierwise_disk_verdicts{' "$m" | sort >"$scratch/got"
[ -s "$scratch/want" ] && cmp -s "$scratch/want" "$scratch/got" && ok ||
  bad "disk verdicts differ from the summary: $(diff "$scratch/want" "$scratch/got")"
[ "$(sum "$m" tierwise_disk_verdicts)" -gt 0 ] && ok || bad "no verdicts counted"
age=$(val "$m" tierwise_fleet_figures_age_seconds)
[ -n "$age" ] && [ "$age" -lt 60 ] && ok || bad "figures' age: '$age'"
[ "$(val "$m" tierwise_fleet_figures_refresh_failures_total)" = 0 ] && ok || bad "failed refreshes"
stop_server TERM

# Three days later (as far as the database says): every agent is silent.
sqlite3 "$db" "UPDATE reports SET received_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '-3 days')" ||
  bad "sqlite3 update"
start_server again
[ -n "$port" ] || { echo "FAIL: tierwise serve did not restart: $(cat "$scratch/again.err")"; exit 1; }
scrape "$scratch/m2"
[ "$(val "$scratch/m2" tierwise_agents_not_heard_from)" = 3 ] && ok ||
  bad "3 days on, agents not heard from: $(val "$scratch/m2" tierwise_agents_not_heard_from)"
# One of them reports again: heard from (a new server, so the figures are new).
jq -c --arg at "$(date -u +%Y-%m-%dT%H:%M:%SZ)" '.id = "7d0e8a6c-1111-4222-8333-444455556666" |
  .created_at = $at' "$template" >"$scratch/new.json"
[ "$(post_report "$scratch/new.json" "$agent")" = 201 ] && ok ||
  bad "a new report: $(cat "$scratch/body")"
stop_server TERM
start_server third
scrape "$scratch/m3"
[ "$(val "$scratch/m3" tierwise_agents_not_heard_from)" = 2 ] && ok ||
  bad "after web-03 reported, agents not heard from: $(val "$scratch/m3" tierwise_agents_not_heard_from)"
[ "$(val "$scratch/m3" tierwise_reports_stored)" = 4 ] && ok || bad "reports stored: $(val "$scratch/m3" tierwise_reports_stored)"
stop_server TERM

finish server-metrics

#!/usr/bin/env bash
# Three backends on one PostgreSQL database, one of them SIGKILLed twice,
# while a month of weekend tier switches runs against the simulator:
#  - twelve deallocated VMs with one Premium data disk each and the weekend
#    policy (down Friday 20:10, up Monday 05:30): four weekends, 96 actions,
#    the month's plan (GET /api/v1/plan) taken before anything runs;
#  - three `tierwise serve --scheduler --sync` on the database, their
#    clocks and the simulator's driven together (one libfaketime offset
#    file, the simulator's /_sim/clock), so the month passes in a minute or
#    two; at each switching time, besides the scheduler (the periodic work
#    of one backend), an executing POST /api/v1/actions on every backend,
#    so runs on three backends race for the same actions;
#  - a backend SIGKILLed twice while it holds live claims on actions in
#    flight (the first time the one running the ARM sync, the scheduler's
#    holder the first or the second time), restarted; its claims are left
#    alone while their lease lives (still its own, no move logged after
#    the kill) and finished by another backend once the clock has passed
#    it;
#  - agents' reports POSTed round-robin to the three backends throughout,
#    three posters at once, reports of six VMs.
# Checks: the actions recorded are the month's plan, every one done exactly
# once (one move to sent each, one attempt, or two for one a killed
# backend counted and died before sending, the simulator's PATCH count of
# each disk its number of switches, no conflict, no quota refusal); none
# left claimed or in flight; the audit log of each a chain from its
# planning through verified to done; every acknowledged (2xx) report
# stored with the results it carried, and one posted to one backend
# known to the others; the ARM sync run by one backend at a time and
# taken over after its holder's kill (its log says so), the scheduler
# too (one of the kills is its holder's); the survivors stop cleanly on
# SIGTERM.
#
# Needs TW_TEST_PG (a PostgreSQL server's base connection string in
# keyword=value form, e.g. "host=/tmp/pg user=tierwise"; tests/run.sh
# starts one): a fresh database is created there and dropped at the end.
# Without it: skipped (77).  TW_SCALE_OUT_SQLITE=1 runs the same over one
# SQLite file instead (the test's own mechanics; a SQLite store's work
# lock is always held, so the one-backend-at-a-time checks are skipped).
# TW_KEEP_SCRATCH=1 keeps the scratch folder of a failed run.  Needs jq,
# curl, psql (or sqlite3) and libfaketime.
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-scale-out-XXXXXX")
. "$TW_SOURCE_DIR/tests/helpers/testlib.sh"
. "$TW_SOURCE_DIR/tests/tools/switch-lib.sh"

mode=pg
[ "${TW_SCALE_OUT_SQLITE:-}" = 1 ] && mode=sqlite
if [ "$mode" = pg ] && [ -z "${TW_TEST_PG:-}" ]; then
  echo "SKIP: TW_TEST_PG names no PostgreSQL server (tests/run.sh starts one)"
  exit 77
fi
tools="jq curl"
[ "$mode" = pg ] && tools="$tools psql" || tools="$tools sqlite3"
for t in $tools; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed"; exit 77; }
done
need_faketime

n_vms=12          # one data disk each
weekends=4        # Fridays 4, 11, 18, 25 December 2026
op_delay_ms=3000  # a PATCH stays InProgress this long: claims are held a while
kill_phases="2 5" # the phases (1-based) whose switches see a backend killed

# ---- cleanup: every process this test started, also on failure ----
poster_pids=()
declare -A bpid=()
pgname=""
cleanup() {
  touch "$scratch/posts.stop"
  for p in "${poster_pids[@]}"; do
    pkill -9 -P "$p" 2>/dev/null # its curl in flight
    kill -9 "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  for k in "${!bpid[@]}"; do
    [ -n "${bpid[$k]}" ] || continue
    kill -9 "${bpid[$k]}" 2>/dev/null
    wait "${bpid[$k]}" 2>/dev/null
  done
  stop_sim
  if [ -n "$pgname" ]; then
    psql "$TW_TEST_PG dbname=postgres" -XAtq -c "DROP DATABASE IF EXISTS $pgname WITH (FORCE)" \
      >/dev/null 2>&1
  fi
  if [ "$fail" -gt 0 ] && [ -n "${TW_KEEP_SCRATCH:-}" ]; then
    echo "kept $scratch"
  else
    rm -rf "$scratch"
  fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# ---- the database ----
if [ "$mode" = pg ]; then
  pgname="tw_scaleout_$$_$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  if ! psql "$TW_TEST_PG dbname=postgres" -XAtq -c "CREATE DATABASE $pgname TEMPLATE template0" \
    >/dev/null 2>"$scratch/createdb.err"; then
    echo "FAIL: creating the database $pgname on \"$TW_TEST_PG\": $(cat "$scratch/createdb.err")"
    pgname=""
    exit 1
  fi
  loc="$TW_TEST_PG dbname=$pgname"
  q() { psql "$loc" -XAtq -F ' ' -c "$1"; }
else
  loc="$scratch/tw.db"
  q() { sqlite3 -separator ' ' "$loc" ".timeout 5000" "$1"; }
fi

# ---- the fleet and the simulator, at Friday 4 December 2026 20:00 ----
start_at="2026-12-04T20:00:00Z"
jq -n --arg sub "$sub" --argjson n "$n_vms" --argjson delay "$op_delay_ms" --arg clock "$start_at" '
  {schema: "tierwise.azsim-scenario/1",
   settings: {operation_delay_ms: $delay, retry_after_s: 1, sku_changes_per_day: 2, clock: $clock},
   self: "vm-01",
   vms: [range(1; $n + 1) | (if . < 10 then "vm-0\(.)" else "vm-\(.)" end) as $name |
         {subscription_id: $sub, resource_group: "rg-dev", name: $name,
          vm_size: "Standard_D2s_v3", location: "eastus", power_state: "deallocated",
          disks: [{name: ($name + "-os"), role: "os", sku: "Premium_LRS", size_gib: 30},
                  {name: ($name + "-data0"), role: "data", lun: 0, sku: "Premium_LRS",
                   size_gib: 128}]}]}' >"$scratch/scenario.json"
start_sim
disks=()
for i in $(seq "$n_vms"); do disks+=("$(printf 'vm-%02d-data0' "$i")"); done

# The one clock: every backend and command reads its offset from the real
# clock in $clock_file (libfaketime re-reads it at most once a second); the
# simulator's clock is moved by the same amounts.  off is that offset.
clock_file="$scratch/clock"
off=$(sim GET /_sim/state | jq -r '.offset_s')
[[ "$off" =~ ^-?[0-9]+$ ]] || { echo "FAIL: the simulator's clock offset: $off"; exit 1; }
printf '%+d\n' "$off" >"$clock_file"
FAKED=(env -u FAKETIME "LD_PRELOAD=$faketime_lib${LD_PRELOAD:+:$LD_PRELOAD}"
       "FAKETIME_TIMESTAMP_FILE=$clock_file" FAKETIME_CACHE_DURATION=1 TZ=UTC)
now_s() { echo $(($(date +%s) + off)); }
# jump_to "YYYY-MM-DD hh:mm:ss": moves every clock forward to that instant
jump_to() {
  local target d
  target=$(date -u -d "$1" +%s)
  d=$((target - $(now_s)))
  [ "$d" -gt 0 ] || return 0
  off=$((off + d))
  printf '%+d\n' "$off" >"$clock_file.new" && mv "$clock_file.new" "$clock_file"
  sim POST /_sim/clock "{\"advance_s\": $d}" >/dev/null
  sleep 1.2 # every process has read the file again
}

jq '.Items |= map(select(.currencyCode == "USD"))' "$TW_SOURCE_DIR/pricing/azure-disk-prices.json" \
  >"$scratch/prices-usd.json"
"${FAKED[@]}" "$cli" prices import --db "$loc" "$scratch/prices-usd.json" >/dev/null \
  2>"$scratch/setup.err" || { echo "FAIL: importing the prices: $(cat "$scratch/setup.err")"; exit 1; }
"${FAKED[@]}" "$cli" sync --db "$loc" --subscription "$sub" "${ARM[@]}" >/dev/null \
  2>"$scratch/setup.err" || { echo "FAIL: tierwise sync: $(cat "$scratch/setup.err")"; exit 1; }
agent=$("$cli" token create --db "$loc" --role agent --name agents 2>"$scratch/setup.err")
reader=$("$cli" token create --db "$loc" --role reader --name reader 2>>"$scratch/setup.err")
admin=$("$cli" token create --db "$loc" --role admin --name admin 2>>"$scratch/setup.err")
[ -n "$agent" ] && [ -n "$reader" ] && [ -n "$admin" ] || { echo "FAIL: tokens: $(cat "$scratch/setup.err")"; exit 1; }
mkdir -p "$scratch/policies"
weekend_policy
cp "$scratch/policy.json" "$scratch/policies/dev-weekends.json"

# ---- three backends ----
declare -A gen=() bport=()
# start_backend K: backend K (1..3), a new generation of its log
start_backend() {
  local k=$1
  gen[$k]=$((${gen[$k]:-0} + 1))
  rm -f "$scratch/b$k.port"
  "${FAKED[@]}" "$cli" serve --db "$loc" --listen 127.0.0.1:0 --port-file "$scratch/b$k.port" \
    --policies "$scratch/policies" --scheduler --scheduler-interval 1s --scheduler-currency USD \
    --sync --sync-interval 1s --subscription "$sub" \
    --arm-url "http://127.0.0.1:$sim_port" --imds-url "http://127.0.0.1:$sim_port" \
    >"$scratch/b$k.${gen[$k]}.out" 2>"$scratch/b$k.${gen[$k]}.err" &
  bpid[$k]=$!
  bport[$k]=""
  for _ in $(seq 150); do
    [ -s "$scratch/b$k.port" ] && { bport[$k]=$(cat "$scratch/b$k.port"); return 0; }
    kill -0 "${bpid[$k]}" 2>/dev/null || break
    sleep 0.1
  done
  echo "FAIL: backend $k did not start: $(tail -5 "$scratch/b$k.${gen[$k]}.err")"
  exit 1
}
for k in 1 2 3; do start_backend "$k"; done
url() { echo "http://127.0.0.1:${bport[$1]}"; }

# the month's plan, as a backend has it before anything runs: the actions
# expected (GET /api/v1/plan, the planner the backends run)
last_mon=$(date -u -d "2026-12-07 + $(((weekends - 1) * 7)) days" +%F)
st=$(curl -s --noproxy '*' -m 30 -o "$scratch/plan.json" -w '%{http_code}' \
  -H "Authorization: Bearer $reader" \
  "$(url 2)/api/v1/plan?policy=dev-weekends&from=2026-12-04&to=$(date -u -d "$last_mon + 1 day" +%F)&currency=USD")
[ "$st" = 200 ] || { echo "FAIL: GET /api/v1/plan: $st $(head -c 300 "$scratch/plan.json")"; exit 1; }
jq -r '.actions[] | "\(.disk) \(.kind) \(.due_at)"' "$scratch/plan.json" | sort >"$scratch/planned"

# syncs K: the ARM syncs backend K logged, over all its generations
syncs() { cat "$scratch"/b"$1".*.err 2>/dev/null | grep -c 'sync from ARM: ' ; }
# takeovers K [KIND]: the times backend K's log says it took KIND of
# periodic work (default the ARM sync, "sync") over
takeovers() {
  cat "$scratch"/b"$1".*.err 2>/dev/null |
    grep -c "periodic ${2:-sync}: this backend runs it now (taken over from another backend)"
}
# holds K KIND: whether backend K's running process holds KIND of periodic
# work ("sync", "scheduler"), as its log's last line about it says
holds() {
  grep "periodic $2: " "$scratch/b$1.${gen[$1]}.err" 2>/dev/null | tail -1 |
    grep -q "periodic $2: this backend runs it now"
}
# pick_victim: the backend the next kill is aimed at, among the running
# ones: the first kill's holds the ARM sync (its takeover is checked
# then), and the scheduler too when one backend holds both; the second's
# holds the scheduler if the first's did not (so that its takeover is
# checked by one of the two); otherwise the current victim
pick_victim() {
  local k sync="" sched="" both=""
  for k in 1 2 3; do
    holds "$k" sync && sync="$sync $k"
    holds "$k" scheduler && sched="$sched $k"
    holds "$k" sync && holds "$k" scheduler && both="$both $k"
  done
  sync=${sync# } sched=${sched# } both=${both# }
  if [ "$kills" = 0 ]; then
    echo "${both%% *}" | grep . || echo "${sync%% *}" | grep . || echo "$victim"
  elif [ "$sched_kills" = 0 ]; then
    echo "${sched%% *}" | grep . || echo "$victim"
  else
    echo "$victim"
  fi
}
sync_counts() { echo "$(syncs 1) $(syncs 2) $(syncs 3)"; }
# sync_window S [MAX]: which backends synced in the next S seconds ("2",
# "1 3"); with MAX, a window that saw none grows a second at a time up to
# MAX seconds (a sync under load may take longer than S)
sync_window() {
  local before after k who="" waited=0
  read -r -a before <<<"$(sync_counts)"
  sleep "$1"
  while :; do
    read -r -a after <<<"$(sync_counts)"
    for k in 1 2 3; do
      [ "${after[$((k - 1))]}" -gt "${before[$((k - 1))]}" ] && who="$who $k"
    done
    [ -z "$who" ] && [ "$waited" -lt "${2:-0}" ] || break
    sleep 1
    waited=$((waited + 1))
  done
  echo "${who# }"
}

# ---- reports round-robin to the three backends, all along ----
# Three agents' posters at once, each going round the backends; the
# reports are of six VMs (the fixture's renamed), so two backends often
# store reports of one VM at the same moment, and each VM's first.
n_agents=6
for v in $(seq 0 $((n_agents - 1))); do
  jq -c '.id = "@ID@"' "$TW_SOURCE_DIR/tests/fixtures/reports/web-03.json" |
    sed "s/web-03/agent-$v/g" >"$scratch/report-$v.tmpl"
done
prefix=$(od -An -N4 -tx4 /dev/urandom | tr -d ' \n')
# report_id N: the UUID of this run's report N
report_id() {
  printf '%s-%04x-4%03x-8%03x-%012x' "$prefix" $(($1 >> 24 & 0xffff)) $(($1 >> 12 & 0xfff)) \
    $(($1 & 0xfff)) "$1"
}
# poster J: posts reports J, J+3, J+6... to backends J+1, J+2, J+3...
# until posts.stop appears; "ID BACKEND STATUS RESULTS" lines in
# posts.J.log (RESULTS: how many results the report carries)
poster() {
  local j=$1 i=$1 k p id st n=0
  local -a tmpl
  local -a nres
  for v in $(seq 0 $((n_agents - 1))); do
    tmpl[$v]=$(cat "$scratch/report-$v.tmpl")
    nres[$v]=$(jq '.results | length' "$scratch/report-$v.tmpl")
  done
  while [ ! -e "$scratch/posts.stop" ]; do
    i=$((i + 3)) n=$((n + 1))
    k=$(((j + n) % 3 + 1))
    id=$(report_id "$i")
    p=$(cat "$scratch/b$k.port" 2>/dev/null)
    if [ -n "$p" ]; then
      printf '%s' "${tmpl[$((i % n_agents))]/@ID@/$id}" >"$scratch/post.$j.json"
      st=$(curl -s --noproxy '*' -m 10 -o /dev/null -w '%{http_code}' -X POST \
        -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
        --data-binary "@$scratch/post.$j.json" "http://127.0.0.1:$p/api/v1/reports")
    else
      st=down
    fi
    echo "$id $k $st ${nres[$((i % n_agents))]}" >>"$scratch/posts.$j.log"
    sleep 0.05
  done
}
for j in 0 1 2; do
  poster "$j" &
  poster_pids+=($!)
done

# ---- the month ----
# phases: "when|kind" the clock is moved to and what falls due
phases=()
for w in $(seq 0 $((weekends - 1))); do
  fri=$(date -u -d "2026-12-04 + $((w * 7)) days" +%F)
  mon=$(date -u -d "2026-12-07 + $((w * 7)) days" +%F)
  phases+=("$fri 20:15:00|downgrade" "$mon 05:35:00|upgrade")
done
total=$((n_vms * weekends * 2))

# api_run K: POSTs an executing run of the policy to backend K; the status
api_run() {
  curl -s --noproxy '*' -m 10 -o "$scratch/body" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
    --data-binary '{"policy": "dev-weekends", "execute": true}' "$(url "$1")/api/v1/actions"
}
# api_runs K...: api_run on each, each answer checked (202)
api_runs() {
  local k st
  for k in "$@"; do
    st=$(api_run "$k")
    [ "$st" = 202 ] && ok ||
      bad "phase $p: POST /api/v1/actions to backend $k answered $st: $(cat "$scratch/body")"
  done
}
done_count() { q "SELECT count(*) FROM actions WHERE state = 'done'"; }
# wait_done N SECONDS: until N actions are done (status 1 if not in time)
wait_done() {
  local i
  for i in $(seq $(($2 * 5))); do
    [ "$(done_count)" -ge "$1" ] && return 0
    sleep 0.2
  done
  return 1
}
# live_claims PID STATE...: ids of actions in those states PID's scheduler holds
live_claims() {
  local pid=$1 states; shift
  states=$(printf "'%s'," "$@")
  q "SELECT id FROM actions WHERE claim_owner LIKE '%:$pid:%' AND state IN (${states%,})
     AND claim_until_ms > $(($(now_s) * 1000)) ORDER BY id" | tr '\n' ' '
}

# Before anything is due: the sync is one backend's.
sleep 3
holder=$(sync_window 3 15)
if [ "$mode" = pg ]; then
  [ -n "$holder" ] && [ "${holder// /}" = "$holder" ] && ok ||
    bad "before the first switch, backends \"$holder\" ran the ARM sync (one expected)"
fi
victim=${holder%% *}
[ -n "$victim" ] || victim=1
kills=0
sched_kills=0 # kills whose victim held the scheduler
expected=0
held_all=""
kill_log=""

for p in $(seq ${#phases[@]}); do
  when=${phases[$((p - 1))]%|*}
  kind=${phases[$((p - 1))]#*|}
  expected=$((expected + n_vms))
  jump_to "$when"
  # a kill is due at each of kill_phases; one that found no claim to
  # interrupt moves to the next phase
  due_kills=0
  for kp in $kill_phases; do [ "$kp" -le "$p" ] && due_kills=$((due_kills + 1)); done
  want_kill=0
  [ "$kills" -lt "$due_kills" ] && want_kill=1
  [ "$want_kill" = 1 ] && [ "$mode" = pg ] && victim=$(pick_victim)
  # besides the scheduler (one backend's), an executing run of the policy
  # on every backend: runs on three backends race for the same actions.
  # Before a kill the victim's comes first, alone until it holds a claim.
  others=$(printf '%s\n' 1 2 3 | grep -vx "$victim" | tr '\n' ' ')
  runs="$victim $others"
  [ "$want_kill" = 1 ] && runs=$victim
  api_runs $runs
  if [ "$want_kill" = 1 ]; then
    vp=${bpid[$victim]}
    held=""
    for _ in $(seq 100); do
      held=$(live_claims "$vp" sent)
      [ -n "$held" ] && break
      sleep 0.1
    done
    if [ -z "$held" ]; then
      echo "phase $p: backend $victim held no claim in 10 s: its kill moves on"
      api_runs $others
    fi
    if [ -n "$held" ]; then
      declare -A takeovers_before=() sched_before=()
      for k in 1 2 3; do
        takeovers_before[$k]=$(takeovers "$k")
        sched_before[$k]=$(takeovers "$k" scheduler)
      done
      vsched=0
      [ "$mode" = pg ] && holds "$victim" scheduler && vsched=1
      kill -9 "$vp"
      wait "$vp" 2>/dev/null
      t_kill=$(date +%s%N)
      # the kill's instant on the backends' clock, as the audit log writes it
      kill_ms=$((t_kill / 1000000 + off * 1000))
      kill_at="$(date -u -d "@$((kill_ms / 1000))" +%FT%T).$(printf '%03d' $((kill_ms % 1000)))Z"
      kills=$((kills + 1))
      # what it held when it died (in flight, not finished)
      held=$(live_claims "$vp" planned checked sent verified)
      kill_log="$kill_log backend $victim (pid $vp) at $when holding [$held];"
      for id in $held; do held_all="$held_all $id@$vp"; done
      [ -n "$held" ] && ok || bad "backend $victim finished its claims before the kill landed"
      api_runs $others
      if [ "$vsched" = 1 ]; then
        # the scheduler it ran: another backend's log says it took it over
        sched_kills=$((sched_kills + 1))
        staken=""
        for _ in $(seq 100); do
          for k in $others; do
            [ "$(takeovers "$k" scheduler)" -gt "${sched_before[$k]}" ] && staken="$staken $k"
          done
          [ -n "$staken" ] && break
          sleep 0.1
        done
        staken=${staken# }
        [ -n "$staken" ] && [ "${staken// /}" = "$staken" ] && ok ||
          bad "in 10 s after backend $victim's kill (it ran the scheduler), backends \"$staken\" took the scheduler over (one expected)"
        echo "the scheduler taken over by backend ${staken:-none} $((($(date +%s%N) - t_kill) / 1000000)) ms after backend $victim's kill"
      fi
      if [ "$kills" = 1 ] && [ "$mode" = pg ]; then
        # another backend takes the sync over within an interval or two
        # (its log says so when it asks); the victim restarted only then,
        # so that the sync is another's
        t0=$t_kill
        taken=""
        for _ in $(seq 100); do
          for k in $others; do
            [ "$(takeovers "$k")" -gt "${takeovers_before[$k]}" ] && taken="$taken $k"
          done
          [ -n "$taken" ] && break
          sleep 0.1
        done
        t1=$(date +%s%N)
        taken=${taken# }
        [ -n "$taken" ] && [ "${taken// /}" = "$taken" ] && ok ||
          bad "in 10 s after backend $victim's kill, backends \"$taken\" took the ARM sync over (one expected)"
        echo "the ARM sync taken over by backend ${taken:-none} $(((t1 - t0) / 1000000)) ms after backend $victim's kill"
        start_backend "$victim"
        who=$(sync_window 3 15)
        [ -n "$who" ] && [ "$who" = "$taken" ] && ok ||
          bad "after backend $taken took the ARM sync over, backends \"$who\" ran it"
      else
        start_backend "$victim"
      fi
      # the dead backend's claims live on their lease: nobody touches them,
      # each still the dead pid's, unexpired, and no move of it logged
      # since the kill's instant
      sleep 4
      touched=""
      for id in $held; do
        r=$(q "SELECT CASE WHEN claim_owner LIKE '%:$vp:%' THEN 'dead' ELSE coalesce(claim_owner, 'none') END,
                      CASE WHEN claim_until_ms > $(($(now_s) * 1000)) THEN 'live' ELSE 'expired' END,
                      (SELECT count(*) FROM action_transitions t
                       WHERE t.action_id = a.id AND t.at > '$kill_at')
               FROM actions a WHERE id = $id")
        [ "$r" = "dead live 0" ] || touched="$touched $id: $r;"
      done
      [ -z "$touched" ] && ok ||
        bad "a live claim of the killed backend (pid $vp) was touched before its lease ended (action: owner, lease, moves since $kill_at):$touched"
      # past the lease (10 minutes): the others resume them
      jump_to "$(date -u -d "@$(($(now_s) + 660))" '+%F %T')"
    fi
  fi
  wait_done "$expected" 60 && ok && echo "phase $p ($kind at $when): done at ${SECONDS} s" ||
    bad "phase $p ($kind at $when): $(done_count) actions done, $expected expected;" \
      "states: $(q "SELECT state, count(*) FROM actions GROUP BY state ORDER BY state" | tr '\n' ',')"
  [ "$(done_count)" -ge "$expected" ] || break
done
[ "$kills" = 2 ] && ok || bad "the victim was killed $kills times holding claims (2 expected)"
[ -n "$kill_log" ] && echo "kills:$kill_log"

# ---- reports: stop posting, then every 2xx stored ----
touch "$scratch/posts.stop"
for p in "${poster_pids[@]}"; do wait "$p"; done
poster_pids=()
cat "$scratch"/posts.*.log >"$scratch/posts.log"

# a report posted to one backend is known to the other two
probe=$(jq -c --arg id "$(printf '%s-0000-4000-8000-ffffffffffff' "$prefix")" '.id = $id' \
  "$TW_SOURCE_DIR/tests/fixtures/reports/web-03.json" | sed 's/web-03/probe-vm/g')
post() {
  curl -s --noproxy '*' -m 10 -o "$scratch/body" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $agent" -H 'Content-Type: application/json' \
    --data-binary "$2" "$(url "$1")/api/v1/reports"
}
st=$(post 1 "$probe")
[ "$st" = 201 ] && ok || bad "the probe report to backend 1: $st $(cat "$scratch/body")"
for k in 2 3; do
  st=$(post "$k" "$probe")
  [ "$st" = 200 ] && jq -e '.status == "already stored"' "$scratch/body" >/dev/null && ok ||
    bad "backend $k did not know the report backend 1 stored: $st $(cat "$scratch/body")"
  st=$(curl -s --noproxy '*' -m 10 -o "$scratch/body" -w '%{http_code}' \
    -H "Authorization: Bearer $reader" "$(url "$k")/api/v1/vms?vm=probe-vm")
  [ "$st" = 200 ] && jq -e '[.vms[].name] == ["probe-vm"]' "$scratch/body" >/dev/null && ok ||
    bad "backend $k does not list the VM of backend 1's report: $st $(cat "$scratch/body")"
done

awk '$3 ~ /^2/ {print $1}' "$scratch/posts.log" | sort >"$scratch/acked"
q "SELECT id FROM reports" | sort >"$scratch/stored"
n_acked=$(wc -l <"$scratch/acked")
missing=$(comm -23 "$scratch/acked" "$scratch/stored" | wc -l)
echo "reports: $n_acked acknowledged of $(wc -l <"$scratch/posts.log") posted, $(wc -l <"$scratch/stored") stored"
[ "$n_acked" -ge 100 ] && ok || bad "only $n_acked reports were acknowledged: $(cut -d' ' -f3 "$scratch/posts.log" | sort | uniq -c | tr '\n' ' ')"
for k in 1 2 3; do
  n=$(awk -v k="$k" '$2 == k && $3 ~ /^2/' "$scratch/posts.log" | wc -l)
  [ "$n" -gt 0 ] && ok || bad "backend $k acknowledged no report"
done
[ "$missing" = 0 ] && ok ||
  bad "$missing of $n_acked acknowledged reports are not stored: $(comm -23 "$scratch/acked" "$scratch/stored" | head -3 | tr '\n' ' ')"
# each stored whole: as many results as it carried when posted
awk '$3 ~ /^2/ {print $1, $4}' "$scratch/posts.log" | sort >"$scratch/acked-results"
q "SELECT r.id, count(x.id) FROM reports r LEFT JOIN results x ON x.report_id = r.id
   GROUP BY r.id" | sort >"$scratch/stored-results"
short=$(join "$scratch/acked-results" "$scratch/stored-results" | awk '$2 != $3')
[ -z "$short" ] && ok ||
  bad "$(wc -l <<<"$short") acknowledged reports are stored with another number of results than posted (id posted stored): $(head -3 <<<"$short" | tr '\n' ';')"
errs=$(awk '$3 !~ /^2/ && $3 != "000" && $3 != "down"' "$scratch/posts.log" | wc -l)
[ "$errs" = 0 ] && ok || bad "$errs posts were answered with an error: $(awk '$3 !~ /^2/ {print $3}' "$scratch/posts.log" | sort | uniq -c | tr '\n' ' ')"

# ---- the actions ----
n=$(q "SELECT count(*) FROM actions")
[ "$n" = "$total" ] && ok || bad "$n actions recorded, $total planned over the month"
[ "$(wc -l <"$scratch/planned")" = "$total" ] && ok ||
  bad "the month's plan has $(wc -l <"$scratch/planned") actions, $total expected"
q "SELECT d.name, a.kind, a.due_at FROM actions a JOIN disks d ON d.id = a.disk_id" |
  sort >"$scratch/recorded"
cmp -s "$scratch/planned" "$scratch/recorded" && ok ||
  bad "the actions recorded are not the month's plan: $(diff "$scratch/planned" "$scratch/recorded" | head -4 | tr '\n' ' ')"
n=$(q "SELECT count(*) FROM actions WHERE state <> 'done'")
[ "$n" = 0 ] && ok || bad "$n actions are not done: $(q "SELECT id, kind, state, last_error FROM actions WHERE state <> 'done'" | head -5 | tr '\n' ';')"
n=$(q "SELECT count(*) FROM actions WHERE state IN ('planned', 'checked', 'sent', 'verified')")
[ "$n" = 0 ] && ok || bad "$n actions left in flight"
n=$(q "SELECT count(*) FROM actions WHERE claim_owner IS NOT NULL AND claim_until_ms > $(($(now_s) * 1000))")
[ "$n" = 0 ] && ok || bad "$n actions left claimed: $(q "SELECT id, state, claim_owner FROM actions WHERE claim_owner IS NOT NULL" | head -5 | tr '\n' ';')"
n=$(q "SELECT count(*) FROM actions a WHERE (SELECT count(*) FROM action_transitions t
       WHERE t.action_id = a.id AND t.to_state = 'sent') <> 1")
[ "$n" = 0 ] && ok || bad "$n actions were not moved to sent exactly once"
# One attempt each, but for an action a killed backend had counted a send
# of and died before its PATCH left: the resumer reads the disk back, sees
# it never went and sends it (a second attempt, the simulator's PATCH
# count per disk below still exact).
held_ids=" $(for h in $held_all; do printf '%s ' "${h%@*}"; done)"
if multi=$(q "SELECT id, attempts FROM actions WHERE attempts <> 1"); then
  ok
  while read -r id att; do
    [ -n "$id" ] || continue
    case "$held_ids" in
      *" $id "*) [ "$att" = 2 ] && ok || bad "action $id, held by a killed backend, took $att attempts" ;;
      *) bad "action $id took $att attempts (held by no killed backend)" ;;
    esac
  done <<<"$multi"
else
  bad "reading the actions' attempts failed"
fi
# the audit log: each action's moves a chain from (nothing -> planned) to done
n=$(q "SELECT count(*) FROM (SELECT from_state, to_state,
         lag(to_state) OVER (PARTITION BY action_id ORDER BY id) AS prev,
         row_number() OVER (PARTITION BY action_id ORDER BY id) AS nth
       FROM action_transitions) t
       WHERE (nth = 1 AND NOT (from_state IS NULL AND to_state = 'planned'))
          OR (nth > 1 AND (from_state IS NULL OR from_state <> prev))")
[ "$n" = 0 ] && ok || bad "$n moves of the audit log do not follow the one before"
n=$(q "SELECT count(*) FROM actions a WHERE coalesce((SELECT t.to_state FROM action_transitions t
       WHERE t.action_id = a.id ORDER BY t.id DESC LIMIT 1), '') <> a.state
       OR NOT EXISTS (SELECT 1 FROM action_transitions t WHERE t.action_id = a.id
                      AND t.to_state = 'verified')")
[ "$n" = 0 ] && ok || bad "$n actions' audit logs do not end in their state through verified"
# the killed backend's actions were finished by another one, not sent again
for h in $held_all; do
  id=${h%@*} dead=${h#*@}
  o=$(q "SELECT owner FROM action_transitions WHERE action_id = $id AND to_state = 'done'")
  [ -n "$o" ] && [ "$o" = "${o/:$dead:/}" ] && ok ||
    bad "action $id, held by the killed pid $dead: done by \"$o\" (another backend resumes it)"
done
n=0
for h in $held_all; do
  s=$(q "SELECT owner FROM action_transitions WHERE action_id = ${h%@*} AND to_state = 'sent'")
  [ "$s" != "${s/:${h#*@}:/}" ] && n=$((n + 1))
done
[ "$n" -gt 0 ] && ok || bad "no action the killed backend had sent was in flight at its death"

# the scheduler (periodic work too) taken over when its holder died: each
# kill of its holder checked that above; one of the two kills must have been
if [ "$mode" = pg ]; then
  [ "$sched_kills" -ge 1 ] && ok ||
    bad "neither kill's victim held the scheduler, so its takeover was never checked (kills:${kill_log:- none})"
fi

# the simulator: one PATCH per switch, none refused
counters=$(sim GET /_sim/counters)
per=$((weekends * 2))
for d in "${disks[@]}"; do
  id="/subscriptions/$sub/resourcegroups/rg-dev/providers/microsoft.compute/disks/$d"
  c=$(jq --arg id "$id" '.patches[$id] // 0' <<<"$counters")
  [ "$c" = "$per" ] && ok || bad "disk $d got $c PATCHes for $per switches"
done
jq -e '.conflicts == 0 and .quota_refusals == 0' <<<"$counters" >/dev/null && ok ||
  bad "the simulator refused writes: $(jq -c '{conflicts, quota_refusals}' <<<"$counters")"
for d in "${disks[@]}"; do
  s=$(sim_sku "$d")
  [ "$s" = Premium_LRS ] || bad "disk $d ends the month on $s"
done

# ---- the survivors: healthy, then stopped cleanly ----
for k in 1 2 3; do
  st=$(curl -s --noproxy '*' -m 10 -o "$scratch/body" -w '%{http_code}' "$(url "$k")/healthz")
  [ "$st" = 200 ] && ok || bad "backend $k's /healthz answered $st: $(cat "$scratch/body")"
done
for k in 1 2 3; do
  kill -TERM "${bpid[$k]}" 2>/dev/null
  wait "${bpid[$k]}"
  st=$?
  bpid[$k]=""
  [ "$st" = 0 ] && ok || bad "backend $k stopped with $st: $(tail -3 "$scratch/b$k.${gen[$k]}.err")"
done

finish test-scale-out

#!/usr/bin/env bash
# tierwise policy check and show: the shipped examples pass; a bad file
# gives every problem with its exact line and column (text and --json);
# broken JSON, a missing file and bad usage; show of a list policy in
# London over the October and the March clock changes (exact output), of a
# tag policy reading a VM's Custodian tag from a database, and of an
# observed policy learning from power states stored there; the schema is
# a valid draft 2020-12 schema the examples satisfy (when python3 has
# jsonschema).  Zones come from a folder of the test's own (TZDIR), so the
# machine's tzdata does not matter.  Needs jq and sqlite3 (else skipped).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_FIXTURES and TW_SOURCE_DIR}
fixtures=${TW_FIXTURES:?}
src=${TW_SOURCE_DIR:?}
command -v jq >/dev/null || { echo "jq is not installed: skipped"; exit 77; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed: skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-policy-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
. "$src/tests/helpers/testlib.sh"
mkdir -p "$scratch/zi/Europe"
cp "$src/tests/fuzz/corpus/tz/Europe_London" "$scratch/zi/Europe/London"
cp "$src/tests/fuzz/corpus/tz/UTC" "$scratch/zi/UTC"
# The examples' other zone, where the machine has it.
berlin=0
if [ -f /usr/share/zoneinfo/Europe/Berlin ]; then
  cp /usr/share/zoneinfo/Europe/Berlin "$scratch/zi/Europe/Berlin" && berlin=1
fi
export TZDIR="$scratch/zi"
ex="$src/policies"

# same WHAT WANT GOT: the texts are equal.
same() {
  if [ "$2" = "$3" ]; then ok; else bad "$1:"$'\n'"--- want"$'\n'"$2"$'\n'"--- got"$'\n'"$3"; fi
}
# check WHAT JSON EXPR: JSON is one document and EXPR is true of it.
check() {
  if jq -se "length == 1 and (.[0] | ($3))" >/dev/null 2>&1 <<<"$2"; then ok
  else bad "$1: $3 is not true of: ${2:0:800}"; fi
}

# ---- help and usage ----
out=$("$cli" policy --help); st=$?
[ $st = 0 ] && grep -q "usage: tierwise policy check FILE" <<<"$out" && grep -q -- "--from DATE" <<<"$out" \
  && ok || bad "policy --help ($st)"
expect 2 "policy needs check or show" -- "$cli" policy
expect 2 "no subcommand \"frob\"" -- "$cli" policy frob
expect 2 "policy check needs at least one FILE" -- "$cli" policy check
expect 2 "takes FILE... and --json only" -- "$cli" policy check "$ex/dev-weekends.json" --vm x
expect 2 "needs one FILE and --vm NAME" -- "$cli" policy show "$ex/dev-weekends.json"

# ---- check ----
# (check loads each policy's zone: the Berlin ones need Berlin's file.)
if [ $berlin = 1 ]; then
  out=$("$cli" policy check "$ex/dev-weekends.json" "$ex/test-nightly.json" "$ex/sap-production.json" 2>&1); st=$?
  same "check of the examples ($st)" "0:$ex/dev-weekends.json: ok (policy dev-weekends)
$ex/test-nightly.json: ok (policy test-nightly)
$ex/sap-production.json: ok (policy sap-production)" "$st:$out"
  # The folder as a glob: the schema beside the examples is skipped, said so.
  out=$("$cli" policy check "$ex"/*.json 2>&1); st=$?
  [ $st = 0 ] && grep -qx "$ex/policy.schema.json: skipped (the policies' JSON Schema, not a policy; serve --policies skips it too)" <<<"$out" \
    && [ "$(grep -c ': ok (policy ' <<<"$out")" -ge 3 ] && ok || bad "check of policies/*.json: exit $st: $out"
  out=$("$cli" policy check --json "$ex"/*.json); st=$?
  check "check --json of policies/*.json ($st)" "$out" '.ok and ([.files[] | select(.skipped) | .file] | length) == 1
    and ([.files[] | select(.skipped) | .file][0] | endswith("/policy.schema.json"))'
else
  echo "note: no /usr/share/zoneinfo/Europe/Berlin: only dev-weekends is checked"
  out=$("$cli" policy check "$ex/dev-weekends.json" 2>&1); st=$?
  same "check of an example ($st)" "0:$ex/dev-weekends.json: ok (policy dev-weekends)" "$st:$out"
fi
# A zone that does not exist is a problem at $.timezone (its line and
# column), not "ok": the savings and serve --policies would refuse it.
sed 's|"Europe/London"|"Europe/Lndon"|' "$ex/dev-weekends.json" >"$scratch/typo.json"
line=$(grep -n '"timezone"' "$scratch/typo.json" | cut -d: -f1)
col=$(( $(grep '"timezone"' "$scratch/typo.json" | sed 's/"Europe.*//' | wc -c) ))
out=$("$cli" policy check "$scratch/typo.json" 2>&1); st=$?
same "check of a zone that does not exist ($st)" "2:$scratch/typo.json:$line:$col: \$.timezone: the zone \"Europe/Lndon\" does not load here: no time zone Europe/Lndon in $scratch/zi: check the name (e.g. Europe/London), or install the package tzdata" "$st:$out"
out=$("$cli" policy check --json "$scratch/typo.json"); st=$?
check "check --json of a zone that does not exist ($st)" "$out" ".ok == false and .files[0].ok == false and
  .files[0].problems == [{\"path\": \"\$.timezone\", \"line\": $line, \"column\": $col, \"message\": .files[0].problems[0].message}]"
# Without "timezone" the zone is UTC: where it does not load, the problem is
# at the policy's object.
printf '\n  {"schema_version": "tierwise.policy/1", "name": "x", "match": {}, "target": "none"}\n' >"$scratch/utc.json"
out=$(TZDIR="$scratch/zi/Europe" "$cli" policy check "$scratch/utc.json" 2>&1); st=$?
same "check of the default UTC where it does not load ($st)" "2:$scratch/utc.json:2:3: \$.timezone: the zone \"UTC\" does not load here: no time zone UTC in $scratch/zi/Europe: check the name (e.g. Europe/London), or install the package tzdata" "$st:$out"
out=$("$cli" policy check -q "$ex/dev-weekends.json" 2>&1); st=$?
[ $st = 0 ] && [ -z "$out" ] && ok || bad "check -q of a good file: $st '$out'"

cat >"$scratch/bad.json" <<'JSON'
{
  "schema_version": "tierwise.policy/1",
  "name": "dev weekends",
  "match": { "skus": ["Premium_LRS", "Premium"], "tag": {"env": "dev"} },
  "target": "UltraSSD_LRS",
  "windows": ["Fri 20:00-Mon 06:00", "Sat 25:00-Sun 01:00"],
  "timezone": "Europe/London",
  "margins": { "after_deallocate_minutes": -5, "before_start_minutes": 30 },
  "min_saving": 0.10,
  "quota": { "changes": 2, "hours": 24, "per": "day" },
  "allow_running": true
}
JSON
out=$("$cli" policy check "$scratch/good.json" 2>/dev/null); st=$?
[ $st = 2 ] && ok || bad "check of a missing file: exit $st"
out=$("$cli" policy check "$scratch/bad.json" 2>"$scratch/err"); st=$?
f="$scratch/bad.json"
same "check of a bad file: exit $st and stdout" "2:" "$st:$out"
same "check of a bad file: the problems" "$f:3:11: \$.name: must be 1 to 64 of the characters A-Z a-z 0-9 . _ -, the first not a dot (it names the policy in the API and the store), got \"dev weekends\"
$f:4:38: \$.match.skus[1]: \"Premium\" is not a disk SKU; one of Premium_LRS, Premium_ZRS, StandardSSD_LRS, StandardSSD_ZRS, Standard_LRS, PremiumV2_LRS, UltraSSD_LRS
$f:4:50: \$.match.tag: unknown member; match has tags, skus, resource_groups, subscriptions, vms and exclude
$f:5:13: \$.target: UltraSSD_LRS can't be a target: a disk can't be switched to Premium SSD v2 or Ultra and back; use StandardSSD_LRS, Standard_LRS or Premium_LRS
$f:6:43: \$.windows[1]: window \"Sat 25:00-Sun 01:00\": at byte 5 expected an hour 00..23 (a day ends at 23:59; write the next day's 00:00) (e.g. \"Sat 00:00-Mon 00:00\")
$f:8:44: \$.margins.after_deallocate_minutes: must be an integer from 0 to 1440, got -5
$f:9:17: \$.min_saving: must be a decimal string (\"0.10\"), so the amount is read exactly; write it in quotes
$f:10:41: \$.quota.per: unknown member; quota has changes (2 to 10: a window takes two, down and back) and hours
$f:11:20: \$.running_io: is missing: \"allow_running\": true needs the I/O to price, {\"iops\": N, \"io_kib\": K}" "$(cat "$scratch/err")"

out=$("$cli" policy check --json "$ex/dev-weekends.json" "$scratch/bad.json" 2>"$scratch/err"); st=$?
[ $st = 2 ] && [ ! -s "$scratch/err" ] && ok || bad "check --json: exit $st, stderr $(cat "$scratch/err")"
check "check --json" "$out" '.ok == false and (.files | length) == 2 and .files[0].ok and
  .files[0].name == "dev-weekends" and (.files[0].problems | length) == 0 and
  (.files[1].ok | not) and .files[1].name == null and (.files[1].problems | length) == 9 and
  .files[1].problems[0] == {"path": "$.name", "line": 3, "column": 11, "message": .files[1].problems[0].message} and
  .files[1].problems[8].path == "$.running_io" and .files[1].more == false'

printf '{"schema_version": "tierwise.policy/1",\n "name": "x", }\n' >"$scratch/broken.json"
out=$("$cli" policy check "$scratch/broken.json" 2>&1); st=$?
same "broken JSON ($st)" "2:$scratch/broken.json:2:15: \$: not valid JSON at line 2, column 15: a string was expected" "$st:$out"
out=$("$cli" policy check "$ex/dev-weekends.json" "$scratch/none.json" 2>&1); st=$?
[ $st = 2 ] && grep -q "^$ex/dev-weekends.json: ok" <<<"$out" && grep -q "none.json" <<<"$out" \
  && ok || bad "a good and a missing file: $st $out"

# A name may not start with a dot (it is a segment of the API's paths).
printf '{"schema_version": "tierwise.policy/1", "name": ".dot", "match": {}, "target": "none"}\n' >"$scratch/dot.json"
out=$("$cli" policy check "$scratch/dot.json" 2>&1); st=$?
same "a name starting with a dot ($st)" "2:$scratch/dot.json:1:49: \$.name: must be 1 to 64 of the characters A-Z a-z 0-9 . _ -, the first not a dot (it names the policy in the API and the store), got \".dot\"" "$st:$out"
# A byte order mark, said as such.
printf '\xef\xbb\xbf' >"$scratch/bom.json"; cat "$ex/dev-weekends.json" >>"$scratch/bom.json"
out=$("$cli" policy check "$scratch/bom.json" 2>&1); st=$?
same "a byte order mark ($st)" "2:$scratch/bom.json:1:1: \$: a byte order mark (BOM) is not allowed: save the file as UTF-8 without BOM" "$st:$out"
# A key repeated in a nested object: its path.
printf '{"schema_version": "tierwise.policy/1", "name": "x",\n "match": {"tags": {"env": "a", "env": "b"}}, "target": "none"}\n' >"$scratch/dup.json"
out=$("$cli" policy check "$scratch/dup.json" 2>&1); st=$?
same "a nested duplicate key ($st)" "2:$scratch/dup.json:2:33: \$.match.tags.env: has a duplicate key \"env\" at line 2, column 33: a key may appear only once in an object" "$st:$out"

# ---- show: a list, in London, over both clock changes ----
out=$("$cli" policy show "$ex/dev-weekends.json" --vm any-vm --from 2026-10-19 2>&1); st=$?
same "show over the October change ($st)" "0:policy dev-weekends, VM any-vm: windows from the policy's list
  the policy's list: the same for every VM it covers (VM \"any-vm\" is not looked up)
zone Europe/London; the two weeks from Mon 2026-10-19 00:00 BST to Mon 2026-11-02 00:00 GMT
weekly: Fri 20:00-Mon 06:00
  Mon 2026-10-19 00:00 BST to Mon 2026-10-19 06:00 BST  6 h  (UTC 2026-10-18 23:00Z to 2026-10-19 05:00Z)
  Fri 2026-10-23 20:00 BST to Mon 2026-10-26 06:00 GMT  59 h  (UTC 2026-10-23 19:00Z to 2026-10-26 06:00Z)
  Fri 2026-10-30 20:00 GMT to Mon 2026-11-02 00:00 GMT  52 h  (UTC 2026-10-30 20:00Z to 2026-11-02 00:00Z)" "$st:$out"
out=$("$cli" policy show "$ex/dev-weekends.json" --vm any-vm --from 2027-03-22T10:00:00Z 2>&1); st=$?
same "show over the March change ($st)" "0:policy dev-weekends, VM any-vm: windows from the policy's list
  the policy's list: the same for every VM it covers (VM \"any-vm\" is not looked up)
zone Europe/London; the two weeks from Mon 2027-03-22 10:00 GMT to Mon 2027-04-05 10:00 BST
weekly: Fri 20:00-Mon 06:00
  Fri 2027-03-26 20:00 GMT to Mon 2027-03-29 06:00 BST  57 h  (UTC 2027-03-26 20:00Z to 2027-03-29 05:00Z)
  Fri 2027-04-02 20:00 BST to Mon 2027-04-05 06:00 BST  58 h  (UTC 2027-04-02 19:00Z to 2027-04-05 05:00Z)" "$st:$out"
out=$("$cli" policy show "$ex/dev-weekends.json" --vm any-vm --from 2026-10-19 --json); st=$?
check "show --json ($st)" "$out" '.policy == "dev-weekends" and .source == "list" and
  .timezone == "Europe/London" and .from == "2026-10-18T23:00:00Z" and .to == "2026-11-02T00:00:00Z" and
  (.windows | length) == 3 and .windows[1] == {"start": "2026-10-23T20:00:00+01:00",
  "end": "2026-10-26T06:00:00Z", "start_utc": "2026-10-23T19:00:00Z",
  "end_utc": "2026-10-26T06:00:00Z", "hours": "59"}'
# A --from with a fraction of a second keeps it, in from, to and the
# windows it cuts.
out=$("$cli" policy show "$ex/dev-weekends.json" --vm any-vm --from 2026-10-19T04:00:00.5Z --json); st=$?
check "show --json from a fraction of a second ($st)" "$out" '.from == "2026-10-19T04:00:00.5Z" and
  .to == "2026-11-02T05:00:00.5Z" and .windows[0].start == "2026-10-19T05:00:00.5+01:00" and
  .windows[0].start_utc == "2026-10-19T04:00:00.5Z" and .windows[0].end == "2026-10-19T06:00:00+01:00" and
  .windows[2].end == "2026-11-02T05:00:00.5Z" and .windows[2].end_utc == "2026-11-02T05:00:00.5Z" and
  .windows[1].end == "2026-10-26T06:00:00Z"'
# Now (the system clock): two weeks of windows from this moment.
out=$("$cli" policy show "$ex/dev-weekends.json" --vm any-vm --json); st=$?
now=$(date -u +%s)
check "show from now ($st)" "$out" "(.from | sub(\"Z\$\"; \"Z\") | fromdateiso8601? // (.[0:19] + \"Z\" | fromdateiso8601)) as \$f |
  (\$f - $now | fabs) < 120 and (.windows | length) >= 2"
if [ $berlin = 1 ]; then
  out=$("$cli" policy show "$ex/sap-production.json" --vm sap-db-01 --from 2026-10-19 --json); st=$?
  check "show of a policy that never switches ($st)" "$out" '.source == "none" and .windows == [] and
    (.note | test("never switches")) and .timezone == "Europe/Berlin"'
else
  echo "note: no /usr/share/zoneinfo/Europe/Berlin: sap-production is not shown"
fi
expect 2 "no time zone Europe/Berlin" -- env TZDIR="$scratch/zi/Europe" "$cli" policy show "$ex/sap-production.json" --vm x
expect 2 "is neither a date" -- "$cli" policy show "$ex/dev-weekends.json" --vm x --from tomorrow
expect 2 "is not a date" -- "$cli" policy show "$ex/dev-weekends.json" --vm x --from 2026-02-30
out=$("$cli" policy show "$scratch/bad.json" --vm x 2>&1); st=$?
[ $st = 2 ] && grep -q "^$scratch/bad.json:3:11: " <<<"$out" && ok || bad "show of a bad policy: $st $out"

# ---- show: a tag, and learned windows, from a database ----
db="$scratch/t.db"
cp "$fixtures/store/v3.db" "$db"
cat >"$scratch/tag.json" <<'JSON'
{"schema_version": "tierwise.policy/1", "name": "by-tag", "match": {},
 "target": "StandardSSD_LRS", "windows": "tag:schedule", "timezone": "UTC"}
JSON
cat >"$scratch/learned.json" <<'JSON'
{"schema_version": "tierwise.policy/1", "name": "learned", "match": {},
 "target": "StandardSSD_LRS", "windows": "observed", "observed": {"weeks": 4, "min_weeks": 3}}
JSON
expect 2 "give --db" -- "$cli" policy show "$scratch/tag.json" --vm web-03
expect 2 "does not exist" -- "$cli" policy show "$scratch/tag.json" --vm web-03 --db "$scratch/none.db"
# The database opens (and moves to this build's schema) before it is edited.
"$cli" policy show "$scratch/tag.json" --vm web-03 --db "$db" >/dev/null 2>&1
sqlite3 "$db" "UPDATE vms SET tags = json_set(tags, '\$.schedule',
  'off=(M-F,19);on=(M-F,7);tz=Europe/London') WHERE name = 'web-03'" || bad "sqlite3 tags"
out=$("$cli" policy show "$scratch/tag.json" --vm WEB-03 --db "$db" --from 2026-10-26 --json); st=$?
check "show of a tag policy ($st)" "$out" '.source == "tag" and .timezone == "Europe/London" and
  .weekly == "Mon 19:00-Tue 07:00, Tue 19:00-Wed 07:00, Wed 19:00-Thu 07:00, Thu 19:00-Fri 07:00, Fri 19:00-Mon 07:00" and
  (.note | test("web-03.s tag schedule=")) and .windows[0].start == "2026-10-26T00:00:00Z" and
  .windows[0].end == "2026-10-26T07:00:00Z" and .windows[1].hours == "12"'
out=$("$cli" policy show "$scratch/tag.json" --vm sap-db-01 --db "$db" --json); st=$?
check "a VM without the tag ($st)" "$out" '.windows == [] and (.note | test("has no tag \"schedule\""))'
expect 2 "no VM called \"nobody\"" -- "$cli" policy show "$scratch/tag.json" --vm nobody --db "$db"
sqlite3 "$db" "UPDATE vms SET tags = json_set(tags, '\$.schedule', 'off=(M-F,19') WHERE name = 'sap-app-02'"
expect 2 "VM sap-app-02's tag schedule=" -- "$cli" policy show "$scratch/tag.json" --vm sap-app-02 --db "$db"
# A tag whose tz= names a zone that does not load: the VM and the tag are named.
sqlite3 "$db" "UPDATE vms SET tags = json_set(tags, '\$.schedule', 'off=(M-F,19);on=(M-F,7);tz=Mars/Olympus') WHERE name = 'sap-app-02'"
expect 2 "VM sap-app-02's tag schedule=\"off=(M-F,19);on=(M-F,7);tz=Mars/Olympus\": time zone: " -- \
  "$cli" policy show "$scratch/tag.json" --vm sap-app-02 --db "$db"

# Four weekends deallocated, Sat 00:00 to Mon 06:00 UTC, the last ending
# 2026-11-02; one Wednesday night only once.
ins() { echo "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) VALUES (1, '$1', $(date -u -d "$1" +%s)000, '$2', 'arm');"; }
{
  for sat in 2026-10-10 2026-10-17 2026-10-24 2026-10-31; do
    ins "${sat}T00:00:00Z" deallocated
    ins "$(date -u -d "$sat + 2 days" +%F)T06:00:00Z" running
  done
  ins 2026-10-14T20:00:00Z PowerState/deallocated
  ins 2026-10-15T06:00:00Z PowerState/running
} | sqlite3 "$db" || bad "sqlite3 power states"
out=$("$cli" policy show "$scratch/learned.json" --vm sap-db-01 --db "$db" --from 2026-11-04T12:00:00Z --json); st=$?
check "show of learned windows ($st)" "$out" '.source == "observed" and .timezone == "UTC" and
  .weekly == "Sat 00:00-Mon 06:00" and (.note | test("at least 3 of the 4 weeks")) and
  .windows[0].start_utc == "2026-11-07T00:00:00Z" and .windows[0].hours == "54" and (.windows | length) == 2'
# A power state observed in 1653 (a report said so) is the state in force at
# the weeks' start, as the savings read it: deallocated since, the whole week
# (it once overflowed, multiplied into nanoseconds).
sqlite3 "$db" "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) VALUES
  (3, '1653-01-01T00:00:00Z', CAST(strftime('%s', '1653-01-01') AS INTEGER) * 1000, 'deallocated', 'agent')" \
  || bad "sqlite3 an ancient power state"
out=$("$cli" policy show "$scratch/learned.json" --vm web-03 --db "$db" --from 2026-11-04T12:00:00Z --json 2>"$scratch/err"); st=$?
check "show of learned windows from 1653 ($st: $(head -c 300 "$scratch/err"))" "$out" '.source == "observed" and
  .weekly == "Mon 00:00-Mon 00:00" and (.windows | length) == 1 and .windows[0].hours == "336"'
# History that recurs in more than 64 windows a week (30 minutes every
# other hour, ten a day, all October): said once, as what it is.
sqlite3 "$db" "WITH RECURSIVE d(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM d WHERE i < 33),
  h(j) AS (SELECT 0 UNION ALL SELECT j + 1 FROM h WHERE j < 9),
  t(ms, state) AS (SELECT $(date -u -d 2026-10-01 +%s)000 + i * 86400000 + j * 7200000, 'deallocated' FROM d, h
    UNION ALL SELECT $(date -u -d 2026-10-01 +%s)000 + i * 86400000 + j * 7200000 + 1800000, 'running' FROM d, h)
  INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) SELECT 2,
  strftime('%Y-%m-%dT%H:%M:%SZ', ms / 1000, 'unixepoch'), ms, state, 'arm' FROM t" || bad "sqlite3 a busy history"
expect 2 "tierwise: observed windows: the deallocated spans that recur make more than 64 windows a week" -- \
  "$cli" policy show "$scratch/learned.json" --vm sap-app-02 --db "$db" --from 2026-11-04T12:00:00Z

# ---- the schema: a draft 2020-12 schema the examples satisfy ----
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import jsonschema' 2>/dev/null; then py=$p; break; fi
done
if [ -n "$py" ]; then
  if "$py" - "$ex" "$scratch/bad.json" <<'PY'
import json, sys, glob
import jsonschema
d, bad = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/policy.schema.json"))
jsonschema.Draft202012Validator.check_schema(s)
v = jsonschema.Draft202012Validator(s)
files = [f for f in sorted(glob.glob(d + "/*.json")) if not f.endswith("policy.schema.json")]
assert len(files) >= 3, files
for f in files:
    v.validate(json.load(open(f)))
assert not v.is_valid(json.load(open(bad)))
# Names: none starting with a dot, as the reader says.
ex = json.load(open(files[0]))
for name, valid in ((".dot", False), ("..", False), (".", False), ("a.b", True), ("-x", True),
                    ("x" * 64, True), ("x" * 65, False)):
    ex["name"] = name
    assert v.is_valid(ex) == valid, name
PY
  then ok; else bad "the schema or an example does not validate"; fi
else
  echo "note: python3 has no jsonschema module: the schema's own check is skipped"
fi
finish test-policy

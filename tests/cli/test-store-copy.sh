#!/usr/bin/env bash
# tierwise store copy: a real month (deploy/demo-month.sh: the simulated
# fleet's weekends of switches, a drift, agent reports with results and
# verdicts, price books, a token, a policy) plus rows that test the
# encoding (a plan whose body holds a tab, a line end, a backslash and
# non-ASCII text, an empty text beside a NULL, VM sizes whose names sort
# differently with and without case, reals at their edges), copied
# SQLite -> SQLite, and with TW_TEST_PG (a libpq base string such as
# "host=/tmp/pgdev user=tierwise") SQLite -> a new PostgreSQL database ->
# a new SQLite file: every table's rows identical to the source's
# (sqlite3's quote mode, so types count, in key order) and the checksums
# of both copies the same.  Refused (exit 2, one line naming the reason,
# the target untouched): a target holding rows (the table named), the same
# location twice (the same string, the same file by another path, the
# same PostgreSQL database by another spelling), a --from that is not
# there.  A value of the wrong type in the source fails the copy (2,
# naming the table and the column) and leaves the target empty.  --help,
# usage errors, --json.  Needs jq, sqlite3, curl, faketime and
# tierwise-azsim (77 without); the PostgreSQL part is skipped without
# TW_TEST_PG (said so), or the whole test exits 77 when nothing but the
# PostgreSQL part was asked for (TW_TEST_STORE=pg).
set -u
cli=${TW_CLI:?run through ctest, or set TW_CLI, TW_AZSIM and TW_SOURCE_DIR}
src=${TW_SOURCE_DIR:?}
azsim=${TW_AZSIM:-}
for tool in jq sqlite3 curl faketime; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed: skipped"; exit 77; }
done
[ -n "$azsim" ] && [ -x "$azsim" ] || { echo "no tierwise-azsim (TW_AZSIM): skipped"; exit 77; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/tw-store-copy-XXXXXX")
pgdb=""
cleanup() {
  if [ -n "$pgdb" ]; then
    for d in "$pgdb" "${pgdb}_b" "${pgdb}_c"; do
      psql "$TW_TEST_PG dbname=postgres" -qXc "DROP DATABASE IF EXISTS $d" >/dev/null 2>&1
    done
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
. "$src/tests/helpers/testlib.sh"
export TIERWISE_LOOPBACK_ONLY=1
unset TIERWISE_PRICES_URL TIERWISE_CONFIG

# Every table and its key (the copy's order), for the dumps.
tables="tokens:id vms:id reports:id disks:id results:id result_disks:disk_id,result_id
power_states:id plans:id disk_sku_history:id price_books:id policies:id actions:id
action_transitions:id result_latest:vm_id,target,profile vm_sizes:region,name
disk_originals:disk_id drift:id"

# dump DB OUT: every table's rows, typed (quote mode), in key order by bytes
dump() {
  local t key cols
  : >"$2"
  for tk in $tables; do
    t=${tk%%:*} key=${tk#*:}
    cols=$(sqlite3 "$1" "SELECT group_concat(name, ',') FROM pragma_table_info('$t')")
    { echo "== $t ($cols)"
      sqlite3 -batch "$1" ".mode quote" \
        "SELECT * FROM $t ORDER BY $(sed 's/,/ COLLATE BINARY, /g; s/$/ COLLATE BINARY/' <<<"$key")"
    } >>"$2"
  done
}
# rows DB: the rows of every table, one line "table count"
rows() {
  for tk in $tables; do
    printf '%s %s\n' "${tk%%:*}" "$(sqlite3 "$1" "SELECT count(*) FROM ${tk%%:*}")"
  done
}
# sums JSON: "table rows checksum target_checksum match" per table
sums() { jq -r '.tables[] | "\(.table) \(.rows) \(.checksum) \(.target_checksum) \(.match)"' "$1"; }

# ---- --help and usage ----
h=$("$cli" store --help); st=$?
[ $st = 0 ] && grep -q "tierwise store copy --from LOCATION --to LOCATION \[--json\]" <<<"$h" \
  && ok || bad "store --help: $st $h"
h=$("$cli" store copy --help); st=$?
for opt in --from --to --json -q, -v, --help "Exit status" "empty"; do
  grep -q -- "$opt" <<<"$h" && ok || bad "store copy --help lacks $opt"
done
"$cli" --help | grep -q "^  store " && ok || bad "tierwise --help does not list store"
out=$("$cli" store copy --version 2>&1); [ "$out" = "$("$cli" --version)" ] && ok \
  || bad "store copy --version: $out"
expect 2 "which action? the one there is: copy" -- "$cli" store
expect 2 'unknown action "move"' -- "$cli" store move
expect 2 "needs --from LOCATION and --to LOCATION" -- "$cli" store copy --from "$scratch/a.db"
expect 2 'unexpected argument "extra"' -- "$cli" store copy --from a --to b extra
expect 2 "no database at $scratch/none.db" -- "$cli" store copy --from "$scratch/none.db" \
  --to "$scratch/x.db"
[ ! -e "$scratch/x.db" ] && ok || bad "a refused copy from nothing created its target"

# ---- the month ----
a=$scratch/a.db
"$src/deploy/demo-month.sh" --db "$a" --work "$scratch/month" --month 2026-11 --cli "$cli" \
  --azsim "$azsim" >"$scratch/month.out" 2>&1; st=$?
[ $st = 77 ] && { echo "demo-month.sh: $(tail -1 "$scratch/month.out"): skipped"; exit 77; }
[ $st = 0 ] || { echo "FAIL: demo-month.sh: exit $st: $(tail -5 "$scratch/month.out")"; exit 1; }
"$cli" token create --db "$a" --role reader --name "copy's reader" >/dev/null 2>&1 || bad "token create"
# What the month has not: a plan with awkward text, VM sizes whose order
# differs with case, reals at their edges, an empty text beside a NULL.
sqlite3 "$a" <<'EOF' || bad "seeding the edge rows"
INSERT INTO plans(policy, created_at, body, period_from, period_to)
  VALUES ('weekend-downgrade', '2026-11-30T23:00:00.000Z',
          'tab' || char(9) || 'line' || char(10) || 'cr' || char(13) || 'back\slash \N é 漢字 ' || char(128169),
          '', NULL);
INSERT INTO vm_sizes(region, name, caps, source, fetched_at, fetched_ms) VALUES
  ('westeurope', 'standard_a1', '{"iops":500}', 'test', '2026-11-01T00:00:00.000Z', 1793491200000),
  ('westeurope', 'Standard_D2s_v5', '{"iops":3750}', 'test', '2026-11-01T00:00:00.000Z', 1793491200000),
  ('eastus', 'Standard_E4s_v5', '{}', 'test', '2026-11-01T00:00:00.000Z', -1);
UPDATE results SET read_iops = 0.1, read_mbps = 1e-300, read_lat_mean_ns = 1.7976931348623157e308,
  write_iops = -2.5, write_mbps = 4503599627370497.0, write_lat_mean_ns = NULL
  WHERE id = (SELECT min(id) FROM results);
EOF
rows "$a" >"$scratch/a.rows"
for t in tokens reports results result_latest policies plans vm_sizes actions drift; do
  grep -q "^$t [1-9]" "$scratch/a.rows" && ok || bad "the seeded month has no $t: $(cat "$scratch/a.rows")"
done
dump "$a" "$scratch/a.dump"

# ---- SQLite -> SQLite ----
b=$scratch/b.db
"$cli" store copy --from "$a" --to "$b" >"$scratch/ab.out" 2>"$scratch/ab.err"; st=$?
[ $st = 0 ] && grep -q "copied and verified" "$scratch/ab.err" && ok \
  || bad "copy to SQLite: exit $st $(cat "$scratch/ab.err")"
grep -q "^TABLE  *ROWS  *SOURCE  *TARGET" "$scratch/ab.out" && ok || bad "copy's table: $(cat "$scratch/ab.out")"
n=$(grep -c " ok$" "$scratch/ab.out"); [ "$n" = 17 ] && ok || bad "$n tables ok of 17: $(cat "$scratch/ab.out")"
dump "$b" "$scratch/b.dump"
cmp -s "$scratch/a.dump" "$scratch/b.dump" && ok \
  || bad "SQLite copy differs: $(diff "$scratch/a.dump" "$scratch/b.dump" | head -5)"
[ "$(sqlite3 "$b" 'PRAGMA foreign_key_check' | wc -l)" = 0 ] && ok || bad "the copy breaks a foreign key"
# the copy's next ids follow the copied ones
"$cli" token create --db "$b" --role agent --name next >/dev/null 2>&1
[ "$(sqlite3 "$b" "SELECT id FROM tokens WHERE name = 'next'")" = \
  "$(( $(sqlite3 "$a" 'SELECT max(id) FROM tokens') + 1 ))" ] && ok || bad "SQLite copy's next token id"

# --json
c=$scratch/c.db
"$cli" store copy --from "$a" --to "$c" --json -q >"$scratch/ac.json" 2>"$scratch/ac.err"; st=$?
[ $st = 0 ] && [ ! -s "$scratch/ac.err" ] && ok || bad "copy --json -q: exit $st $(cat "$scratch/ac.err")"
jq -e '.verified == true and .checksum == "fnv1a-64" and (.tables | length) == 17
       and all(.tables[]; .match and .rows == .target_rows and .checksum == .target_checksum
               and (.checksum | test("^[0-9a-f]{16}$")))' "$scratch/ac.json" >/dev/null && ok \
  || bad "copy --json: $(head -c 600 "$scratch/ac.json")"
[ "$(jq -r '.tables[] | "\(.table) \(.rows)"' "$scratch/ac.json")" = "$(cat "$scratch/a.rows")" ] \
  && ok || bad "copy --json rows differ from the source's counts"
[ "$(jq .rows "$scratch/ac.json")" = "$(awk '{s += $2} END {print s}' "$scratch/a.rows")" ] && ok \
  || bad "copy --json total rows"
# the same rows give the same checksums whatever the target
"$cli" store copy --from "$c" --to "$scratch/d.db" --json -q >"$scratch/bd.json" 2>/dev/null
[ "$(sums "$scratch/ac.json")" = "$(sums "$scratch/bd.json")" ] && ok \
  || bad "checksums of one content differ between copies"

# ---- refusals ----
dump "$b" "$scratch/b1.dump"
sum_b=$(md5sum <"$scratch/b1.dump")
expect 2 "already holds rows in table tokens" -- "$cli" store copy --from "$a" --to "$b"
# a target whose only rows are in the last table
mkdir -p "$scratch/e" && "$cli" store copy --from "$a" --to "$scratch/e/e.db" -q >/dev/null 2>&1
sqlite3 "$scratch/e/e.db" "$(for tk in $tables; do [ "${tk%%:*}" = drift ] || echo "DELETE FROM ${tk%%:*};"; done | tac)"
expect 2 "already holds rows in table drift" -- "$cli" store copy --from "$a" --to "$scratch/e/e.db"
dump "$b" "$scratch/b2.dump"
[ "$(md5sum <"$scratch/b2.dump")" = "$sum_b" ] && ok || bad "a refused copy changed its target"
expect 2 "name the same database" -- "$cli" store copy --from "$a" --to "$a"
ln -s "$a" "$scratch/link.db"
expect 2 "name the same database" -- "$cli" store copy --from "$a" --to "$scratch/link.db"
expect 2 "name the same database" -- "$cli" store copy --from "$a" --to "$scratch/../$(basename "$scratch")/a.db"

# ---- a value the target can't keep: the copy fails, the target stays empty ----
cp "$a" "$scratch/bad.db"
sqlite3 "$scratch/bad.db" "UPDATE disks SET size_gib = 'lots' WHERE id = (SELECT max(id) FROM disks)"
expect 2 "table disks" -- "$cli" store copy --from "$scratch/bad.db" --to "$scratch/f.db"
grep -q "column size_gib holds a text" "$scratch/expect.err" && ok || bad "bad type: $(cat "$scratch/expect.err")"
[ "$(rows "$scratch/f.db" | awk '{s += $2} END {print s}')" = 0 ] && ok \
  || bad "a failed copy left rows in its target: $(rows "$scratch/f.db" | grep -v ' 0$')"

# ---- a target that keeps other rows than it was given: the mismatch is
# found on reading back, said per table, and nothing is committed ----
g=$scratch/g.db
cp "$a" "$g" && sqlite3 "$g" "$(for tk in $tables; do echo "DELETE FROM ${tk%%:*};"; done | tac)
  CREATE TRIGGER skew AFTER INSERT ON vms BEGIN UPDATE vms SET name = name || '!' WHERE id = NEW.id; END;"
"$cli" store copy --from "$a" --to "$g" >"$scratch/g.out" 2>"$scratch/g.err"; st=$?
[ $st = 1 ] && grep -q "1 table read back from $g differs from the source; nothing was committed" \
  "$scratch/g.err" && ok || bad "a skewed target: exit $st $(cat "$scratch/g.err")"
grep -q "^vms .* DIFFERS (5 rows)$" "$scratch/g.out" && [ "$(grep -c ' ok$' "$scratch/g.out")" = 16 ] \
  && ok || bad "a skewed target's table: $(cat "$scratch/g.out")"
[ "$(rows "$g" | awk '{s += $2} END {print s}')" = 0 ] && ok || bad "a skewed copy was committed"
"$cli" store copy --from "$a" --to "$g" --json >"$scratch/g.json" 2>/dev/null
jq -e '.verified == false and ([.tables[] | select(.match | not) | .table] == ["vms"])' \
  "$scratch/g.json" >/dev/null && ok || bad "a skewed target's JSON: $(head -c 300 "$scratch/g.json")"

# ---- SQLite -> PostgreSQL -> SQLite ----
if [ -z "${TW_TEST_PG:-}" ]; then
  echo "TW_TEST_PG not set: the PostgreSQL copies skipped"
  [ "${TW_TEST_STORE:-}" = pg ] && exit 77
elif ! command -v psql >/dev/null; then
  echo "psql is not installed: the PostgreSQL copies skipped"
  [ "${TW_TEST_STORE:-}" = pg ] && exit 77
else
  pgdb=tw_copy_test_$$_$RANDOM
  psql "$TW_TEST_PG dbname=postgres" -qXc "CREATE DATABASE $pgdb" >/dev/null 2>"$scratch/psql.err" \
    || { echo "FAIL: createdb: $(cat "$scratch/psql.err")"; exit 1; }
  pg="$TW_TEST_PG dbname=$pgdb"
  "$cli" store copy --from "$a" --to "$pg" --json >"$scratch/to-pg.json" 2>"$scratch/to-pg.err"; st=$?
  [ $st = 0 ] && jq -e .verified "$scratch/to-pg.json" >/dev/null && ok \
    || bad "copy to PostgreSQL: exit $st $(cat "$scratch/to-pg.err")"
  [ "$(sums "$scratch/to-pg.json")" = "$(sums "$scratch/ac.json")" ] && ok \
    || bad "PostgreSQL's checksums differ from SQLite's: $(diff <(sums "$scratch/ac.json") <(sums "$scratch/to-pg.json"))"
  for tk in $tables; do
    t=${tk%%:*}
    [ "$(psql "$pg" -qXAtc "SELECT count(*) FROM $t")" = "$(sqlite3 "$a" "SELECT count(*) FROM $t")" ] \
      && ok || bad "PostgreSQL's $t count"
  done
  [ "$(psql "$pg" -qXAtc "SELECT body FROM plans ORDER BY id DESC LIMIT 1")" = \
    "$(sqlite3 "$a" "SELECT body FROM plans ORDER BY id DESC LIMIT 1")" ] && ok || bad "the plan's awkward body"
  [ "$(psql "$pg" -qXAtc "SELECT period_from = '' AND period_to IS NULL FROM plans ORDER BY id DESC LIMIT 1")" = t ] \
    && ok || bad "'' and NULL kept apart in PostgreSQL"
  # PostgreSQL's next ids follow the copied ones
  "$cli" token create --db "$pg" --role agent --name next >/dev/null 2>"$scratch/tok.err" \
    || bad "token create on the copy: $(cat "$scratch/tok.err")"
  [ "$(psql "$pg" -qXAtc "SELECT id FROM tokens WHERE name = 'next'")" = \
    "$(( $(sqlite3 "$a" 'SELECT max(id) FROM tokens') + 1 ))" ] && ok || bad "PostgreSQL copy's next token id"
  psql "$pg" -qXc "DELETE FROM tokens WHERE name = 'next'" >/dev/null

  back=$scratch/back.db
  "$cli" store copy --from "$pg" --to "$back" --json >"$scratch/back.json" 2>"$scratch/back.err"; st=$?
  [ $st = 0 ] && ok || bad "copy back from PostgreSQL: exit $st $(cat "$scratch/back.err")"
  [ "$(sums "$scratch/back.json")" = "$(sums "$scratch/to-pg.json")" ] && ok \
    || bad "the way back's checksums differ"
  dump "$back" "$scratch/back.dump"
  cmp -s "$scratch/a.dump" "$scratch/back.dump" && ok \
    || bad "SQLite -> PostgreSQL -> SQLite differs: $(diff "$scratch/a.dump" "$scratch/back.dump" | head -6)"

  # refusals: a target with rows, the same database twice
  before=$(psql "$pg" -qXAtc "SELECT count(*) FROM vms")
  expect 2 "already holds rows in table tokens" -- "$cli" store copy --from "$a" --to "$pg"
  [ "$(psql "$pg" -qXAtc "SELECT count(*) FROM vms")" = "$before" ] && ok || bad "a refused copy changed PostgreSQL"
  expect 2 "name the same database" -- "$cli" store copy --from "$pg" --to "$pg"
  # the same database by another spelling: one with rows is refused as a
  # target that holds rows (checked before the source is opened), an
  # empty one as the same database
  expect 2 "already holds rows" -- "$cli" store copy --from "$pg" --to "dbname=$pgdb $TW_TEST_PG"
  pgdb3=${pgdb}_c
  psql "$TW_TEST_PG dbname=postgres" -qXc "CREATE DATABASE $pgdb3" >/dev/null 2>&1
  expect 2 "reach the same database" -- "$cli" store copy --from "$TW_TEST_PG dbname=$pgdb3" \
    --to "dbname=$pgdb3 $TW_TEST_PG"
  psql "$TW_TEST_PG dbname=postgres" -qXc "DROP DATABASE IF EXISTS $pgdb3" >/dev/null 2>&1
  # a copy refused for its target leaves an older source as it was (no
  # upgrade of a database nothing was copied from)
  cp "$TW_FIXTURES/store/v4.db" "$scratch/v4.db"
  expect 2 "already holds rows" -- "$cli" store copy --from "$scratch/v4.db" --to "$pg"
  [ "$(sqlite3 "$scratch/v4.db" 'PRAGMA user_version')" = 4 ] && ok \
    || bad "a copy refused for its target upgraded its source"
  # a failed copy into PostgreSQL leaves it empty
  pgdb2=${pgdb}_b
  psql "$TW_TEST_PG dbname=postgres" -qXc "CREATE DATABASE $pgdb2" >/dev/null 2>&1
  expect 2 "table disks" -- "$cli" store copy --from "$scratch/bad.db" --to "$TW_TEST_PG dbname=$pgdb2"
  [ "$(psql "$TW_TEST_PG dbname=$pgdb2" -qXAtc "SELECT (SELECT count(*) FROM vms) + (SELECT count(*) FROM tokens)")" = 0 ] \
    && ok || bad "a failed copy left rows in PostgreSQL"
  psql "$TW_TEST_PG dbname=postgres" -qXc "DROP DATABASE IF EXISTS $pgdb2" >/dev/null 2>&1
fi

finish test-store-copy

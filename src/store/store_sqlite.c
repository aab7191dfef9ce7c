/*
 * store_sqlite.c - the SQLite store: opening, the schema and its
 * migrations, the statement cache, tokens, price books and checks.
 * Storing reports is in store_ingest.c, the read queries in store_query.c.
 *
 * Durability: WAL with synchronous=FULL, so a transaction that COMMIT
 * returned for is on disk (the WAL is fsynced) and survives a crash or a
 * power loss.  Reports come in batches (one transaction, one fsync, for
 * dozens of reports), which is what keeps that affordable.
 */
#include "store/store_sqlite.h"

#include "store/store_copy.h"

#include "core/time.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- schema ---------------------------------------------------------- */

/*
 * MIGRATIONS[i] brings a database from user_version i to i + 1.  A step,
 * once released, is never edited: a change is a new step.
 */
static const char *const migrations[] = {
    /* 0 -> 1: the first schema. */
    "CREATE TABLE tokens ("
    "  id INTEGER PRIMARY KEY,"
    "  sha256 BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),"
    "  name TEXT NOT NULL DEFAULT '',"
    "  role TEXT NOT NULL CHECK (role IN ('agent', 'reader', 'admin')),"
    "  created_at TEXT NOT NULL,"
    "  revoked_at TEXT);"
    "CREATE TABLE vms ("
    "  id INTEGER PRIMARY KEY,"
    "  identity TEXT NOT NULL UNIQUE,"
    "  name TEXT NOT NULL,"
    "  resource_id TEXT NOT NULL DEFAULT '',"
    "  subscription_id TEXT NOT NULL DEFAULT '',"
    "  resource_group TEXT NOT NULL DEFAULT '',"
    "  location TEXT NOT NULL,"
    "  vm_size TEXT NOT NULL,"
    "  tags TEXT NOT NULL DEFAULT '{}',"
    "  power_state TEXT,"
    "  power_state_at TEXT,"
    "  power_state_ms INTEGER,"
    "  last_report_id TEXT NOT NULL,"
    "  last_report_at TEXT NOT NULL,"
    "  last_report_ms INTEGER NOT NULL);"
    "CREATE INDEX vms_name ON vms(name);"
    "CREATE TABLE reports ("
    "  id TEXT PRIMARY KEY,"
    "  created_at TEXT NOT NULL,"
    "  created_ms INTEGER NOT NULL,"
    "  received_at TEXT NOT NULL,"
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  agent_version TEXT NOT NULL,"
    "  agent_hostname TEXT NOT NULL,"
    "  power_state TEXT,"
    "  body TEXT NOT NULL);"
    "CREATE TABLE disks ("
    "  id INTEGER PRIMARY KEY,"
    "  identity TEXT NOT NULL UNIQUE,"
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  name TEXT NOT NULL,"
    "  role TEXT NOT NULL CHECK (role IN ('os', 'data')),"
    "  lun INTEGER,"
    "  sku TEXT NOT NULL,"
    "  size_gib INTEGER NOT NULL,"
    "  tier TEXT,"
    "  caching TEXT NOT NULL,"
    "  managed_disk_id TEXT NOT NULL DEFAULT '',"
    "  write_accelerator INTEGER NOT NULL DEFAULT 0,"
    "  device TEXT,"
    "  last_seen_at TEXT NOT NULL,"
    "  last_seen_ms INTEGER NOT NULL,"
    "  detached_at TEXT,"
    "  detached_ms INTEGER);"
    "CREATE INDEX disks_vm ON disks(vm_id, lun);"
    "CREATE TABLE disk_sku_history ("
    "  id INTEGER PRIMARY KEY,"
    "  disk_id INTEGER NOT NULL REFERENCES disks(id),"
    "  observed_at TEXT NOT NULL,"
    "  observed_ms INTEGER NOT NULL,"
    "  sku TEXT NOT NULL,"
    "  tier TEXT,"
    "  size_gib INTEGER NOT NULL,"
    "  report_id TEXT NOT NULL REFERENCES reports(id));"
    "CREATE INDEX disk_sku_history_disk ON disk_sku_history(disk_id, observed_ms);"
    "CREATE TABLE results ("
    "  id INTEGER PRIMARY KEY,"
    "  report_id TEXT NOT NULL REFERENCES reports(id),"
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  result_uuid TEXT NOT NULL,"
    "  profile TEXT NOT NULL,"
    "  target TEXT NOT NULL,"
    "  target_path TEXT NOT NULL,"
    "  target_device TEXT,"
    "  started_at TEXT NOT NULL,"
    "  started_ms INTEGER NOT NULL,"
    "  source TEXT NOT NULL,"
    "  engine TEXT NOT NULL,"
    "  pattern TEXT NOT NULL,"
    "  block_size_bytes INTEGER NOT NULL,"
    "  queue_depth INTEGER NOT NULL,"
    "  jobs INTEGER NOT NULL,"
    "  direct INTEGER NOT NULL,"
    "  runtime_ms INTEGER NOT NULL,"
    "  read_iops REAL,"
    "  read_mbps REAL,"
    "  read_lat_mean_ns REAL,"
    "  write_iops REAL,"
    "  write_mbps REAL,"
    "  write_lat_mean_ns REAL,"
    "  errors INTEGER NOT NULL,"
    "  record TEXT,"
    "  record_at INTEGER,"
    "  record_len INTEGER,"
    "  CHECK (record IS NOT NULL OR (record_at > 0 AND record_len > 0)));"
    "CREATE INDEX results_vm ON results(vm_id, target, profile, started_ms);"
    "CREATE TABLE result_disks ("
    "  disk_id INTEGER NOT NULL REFERENCES disks(id),"
    "  result_id INTEGER NOT NULL REFERENCES results(id),"
    "  PRIMARY KEY (disk_id, result_id)) WITHOUT ROWID;"
    "CREATE TABLE power_states ("
    "  id INTEGER PRIMARY KEY,"
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  observed_at TEXT NOT NULL,"
    "  observed_ms INTEGER NOT NULL,"
    "  state TEXT NOT NULL,"
    "  report_id TEXT REFERENCES reports(id));"
    "CREATE INDEX power_states_vm ON power_states(vm_id, observed_ms);"
    "CREATE TABLE price_books ("
    "  region TEXT NOT NULL,"
    "  currency TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  fetched_at TEXT NOT NULL,"
    "  items TEXT NOT NULL,"
    "  PRIMARY KEY (region, currency));"
    "CREATE TABLE plans ("
    "  id INTEGER PRIMARY KEY,"
    "  policy TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  body TEXT NOT NULL);"
    "CREATE TABLE actions ("
    "  id INTEGER PRIMARY KEY,"
    "  plan_id INTEGER REFERENCES plans(id),"
    "  disk_id INTEGER REFERENCES disks(id),"
    "  kind TEXT NOT NULL,"
    "  from_sku TEXT,"
    "  to_sku TEXT,"
    "  state TEXT NOT NULL,"
    "  requested_at TEXT NOT NULL,"
    "  finished_at TEXT,"
    "  dry_run INTEGER NOT NULL DEFAULT 1,"
    "  detail TEXT);"
    "CREATE INDEX actions_disk ON actions(disk_id, requested_at);",

    /* 1 -> 2: histories with their sources, price history, the action
     * state machine with its audit log, plans' periods, policies by name,
     * result records as their own text. */
    /* SKU history may come from ARM too: report_id nullable, a source. */
    "CREATE TABLE disk_sku_history_2 ("
    "  id INTEGER PRIMARY KEY,"
    "  disk_id INTEGER NOT NULL REFERENCES disks(id),"
    "  observed_at TEXT NOT NULL,"
    "  observed_ms INTEGER NOT NULL,"
    "  sku TEXT NOT NULL,"
    "  tier TEXT,"
    "  size_gib INTEGER NOT NULL,"
    "  report_id TEXT REFERENCES reports(id),"
    "  source TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('agent', 'arm')),"
    "  CHECK (source <> 'agent' OR report_id IS NOT NULL));"
    "INSERT INTO disk_sku_history_2(id, disk_id, observed_at, observed_ms, sku, tier, size_gib,"
    "  report_id, source) SELECT id, disk_id, observed_at, observed_ms, sku, tier, size_gib,"
    "  report_id, 'agent' FROM disk_sku_history;"
    "DROP TABLE disk_sku_history;"
    "ALTER TABLE disk_sku_history_2 RENAME TO disk_sku_history;"
    "CREATE INDEX disk_sku_history_disk ON disk_sku_history(disk_id, observed_ms);"
    /* Power states: the agent's reports or ARM's instance view. */
    "ALTER TABLE power_states ADD COLUMN source TEXT NOT NULL DEFAULT 'agent'"
    "  CHECK (source IN ('agent', 'arm'));"
    /* Price history: every refresh or import keeps its book; the latest
     * (the highest id) is the default, a lookup as of an instant takes the
     * last one fetched by then. */
    "CREATE TABLE price_books_2 ("
    "  id INTEGER PRIMARY KEY,"
    "  region TEXT NOT NULL,"
    "  currency TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  fetched_at TEXT NOT NULL,"
    "  fetched_ms INTEGER,"
    "  items TEXT NOT NULL);"
    "INSERT INTO price_books_2(region, currency, source, fetched_at, fetched_ms, items)"
    "  SELECT region, currency, source, fetched_at,"
    "  CAST(round((julianday(nullif(fetched_at, '')) - 2440587.5) * 86400000) AS INTEGER), items"
    "  FROM price_books;"
    "DROP TABLE price_books;"
    "ALTER TABLE price_books_2 RENAME TO price_books;"
    "CREATE INDEX price_books_key ON price_books(region, currency, fetched_ms);"
    /* Result records as their own text, no longer places in the bodies. */
    "UPDATE results SET record = substr((SELECT body FROM reports p WHERE p.id = results.report_id),"
    "  record_at, record_len), record_at = NULL, record_len = NULL WHERE record IS NULL;"
    /* A disk's place in its VM's newest inventory, so that the inventory
     * compliance judges against is read from the rows in the order the
     * agent listed it (no report body is read); a migrated disk takes its
     * place from its VM's last report. */
    "ALTER TABLE disks ADD COLUMN position INTEGER;"
    "UPDATE disks SET position = (SELECT CAST(j.key AS INTEGER) FROM vms v"
    "  JOIN reports p ON p.id = v.last_report_id,"
    "  json_each(CASE WHEN json_valid(p.body) THEN p.body ELSE '{}' END, '$.inventory.disks') j"
    "  WHERE v.id = disks.vm_id AND disks.identity = CASE"
    "  WHEN coalesce(json_extract(j.value, '$.managed_disk_id'), '') <> ''"
    "  THEN 'id:' || lower(json_extract(j.value, '$.managed_disk_id'))"
    "  ELSE 'vm:' || disks.vm_id || '/' || lower(json_extract(j.value, '$.name')) END"
    "  ORDER BY j.key LIMIT 1) WHERE detached_ms IS NULL;"
    /* Policies by name; plans of a policy over a period. */
    "CREATE TABLE policies ("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  body TEXT NOT NULL,"
    "  created_at TEXT NOT NULL,"
    "  updated_at TEXT NOT NULL);"
    "ALTER TABLE plans ADD COLUMN period_from TEXT;"
    "ALTER TABLE plans ADD COLUMN period_to TEXT;"
    /* Actions as a state machine: planned -> checked -> sent -> verified ->
     * done, or skipped / failed; moved by compare-and-set on (state,
     * version), every move in action_transitions. */
    "CREATE TABLE actions_2 ("
    "  id INTEGER PRIMARY KEY,"
    "  plan_id INTEGER REFERENCES plans(id),"
    "  disk_id INTEGER REFERENCES disks(id),"
    "  kind TEXT NOT NULL,"
    "  from_sku TEXT,"
    "  to_sku TEXT,"
    "  state TEXT NOT NULL DEFAULT 'planned' CHECK (state IN ('planned', 'checked', 'sent',"
    "    'verified', 'done', 'skipped', 'failed')),"
    "  due_at TEXT,"
    "  due_ms INTEGER,"
    "  requested_at TEXT NOT NULL,"
    "  finished_at TEXT,"
    "  dry_run INTEGER NOT NULL DEFAULT 1,"
    "  detail TEXT,"
    "  arm_operation_url TEXT,"
    "  attempts INTEGER NOT NULL DEFAULT 0,"
    "  last_error TEXT,"
    "  idempotency_key TEXT UNIQUE,"
    "  claim_owner TEXT,"
    "  claim_until_ms INTEGER,"
    "  version INTEGER NOT NULL DEFAULT 0);"
    "INSERT INTO actions_2(id, plan_id, disk_id, kind, from_sku, to_sku, state, requested_at,"
    "  finished_at, dry_run, detail) SELECT id, plan_id, disk_id, kind, from_sku, to_sku,"
    "  CASE WHEN state IN ('planned', 'checked', 'sent', 'verified', 'done', 'skipped',"
    "  'failed') THEN state ELSE 'failed' END, requested_at, finished_at, dry_run, detail"
    "  FROM actions;"
    "DROP TABLE actions;"
    "ALTER TABLE actions_2 RENAME TO actions;"
    "CREATE INDEX actions_disk ON actions(disk_id, requested_at);"
    "CREATE INDEX actions_due ON actions(state, due_ms);"
    "CREATE TABLE action_transitions ("
    "  id INTEGER PRIMARY KEY,"
    "  action_id INTEGER NOT NULL REFERENCES actions(id),"
    "  from_state TEXT,"
    "  to_state TEXT NOT NULL,"
    "  at TEXT NOT NULL,"
    "  owner TEXT NOT NULL DEFAULT '',"
    "  detail TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX action_transitions_action ON action_transitions(action_id, id);",

    /* 2 -> 3: the latest result of each VM, target and profile kept in a
     * table of its own, with the verdict judged when its report was stored;
     * a region's VM sizes as ARM's Resource SKUs give them; how far a
     * report's created_at ran ahead of the server's clock. */
    /* ORDER_MS is the result's start, bounded by the allowance for the
     * agent's clock (store_ingest.c): what "latest" is ordered by.  A
     * verdict counts only while it was judged against the VM's newest
     * report (VERDICT_REPORT, the report whose inventory it was judged
     * against, is the VM's last_report_id) under the rules, catalog and
     * caps in use (VERDICT_BASIS); SKUS are the SKUs of the disks it
     * covered, comma-separated, one per disk; no VERDICT with a basis: it
     * could not be judged.  Migrated rows have no verdict yet: they are
     * judged when read, and kept by the server's re-judging. */
    "CREATE TABLE result_latest ("
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  target TEXT NOT NULL,"
    "  profile TEXT NOT NULL,"
    "  result_id INTEGER NOT NULL REFERENCES results(id),"
    "  order_ms INTEGER NOT NULL,"
    "  report_id TEXT NOT NULL REFERENCES reports(id),"
    "  verdict TEXT,"
    "  verdict_skus TEXT,"
    "  verdict_basis TEXT,"
    "  verdict_report TEXT,"
    "  PRIMARY KEY (vm_id, target, profile)) WITHOUT ROWID;"
    /* The clock allowance for what is stored already: a report's or
     * result's time past its receipt by more than five minutes is ordered
     * at that bound, and the VM whose newest report it made is no longer
     * pinned by it (the next report on time is newer). */
    "CREATE TEMP TABLE received_ms AS SELECT id, CAST(round((julianday(received_at) -"
    "  2440587.5) * 86400000) AS INTEGER) + 300000 AS bound FROM reports"
    "  WHERE julianday(received_at) IS NOT NULL;"
    "UPDATE results SET started_ms = (SELECT bound FROM received_ms b WHERE"
    "  b.id = results.report_id) WHERE started_ms > (SELECT bound FROM received_ms b"
    "  WHERE b.id = results.report_id);"
    "UPDATE vms SET last_report_ms = (SELECT bound FROM received_ms b WHERE"
    "  b.id = vms.last_report_id) WHERE last_report_ms > (SELECT bound FROM received_ms b"
    "  WHERE b.id = vms.last_report_id);"
    "UPDATE vms SET power_state_ms = last_report_ms WHERE power_state_ms > last_report_ms"
    "  AND power_state_at = last_report_at;"
    "INSERT INTO result_latest(vm_id, target, profile, result_id, order_ms, report_id)"
    "  SELECT vm_id, target, profile, id, started_ms, report_id FROM (SELECT id, vm_id, target,"
    "  profile, started_ms, report_id, row_number() OVER (PARTITION BY vm_id, target, profile"
    "  ORDER BY started_ms DESC, id DESC) AS n FROM results) WHERE n = 1;"
    "CREATE TABLE vm_sizes ("
    "  region TEXT NOT NULL,"
    "  name TEXT NOT NULL COLLATE NOCASE,"
    "  caps TEXT NOT NULL,"
    "  source TEXT NOT NULL,"
    "  fetched_at TEXT NOT NULL,"
    "  fetched_ms INTEGER NOT NULL,"
    "  PRIMARY KEY (region, name)) WITHOUT ROWID;"
    "ALTER TABLE reports ADD COLUMN ahead_ms INTEGER;"
    "UPDATE reports SET ahead_ms = created_ms - ((SELECT bound FROM received_ms b WHERE"
    "  b.id = reports.id) - 300000) WHERE created_ms > (SELECT bound FROM received_ms b"
    "  WHERE b.id = reports.id);"
    "DROP TABLE received_ms;",

    /* 3 -> 4: what savings needs of a disk that a report can't say, as
     * ARM shows it: maxShares (a shared disk: > 1), on-demand bursting,
     * its diskState, and when and by what that was observed.  NULL is
     * unknown (no ARM sync yet): every existing disk starts so. */
    "ALTER TABLE disks ADD COLUMN max_shares INTEGER CHECK (max_shares >= 1);"
    "ALTER TABLE disks ADD COLUMN bursting INTEGER CHECK (bursting IN (0, 1));"
    "ALTER TABLE disks ADD COLUMN disk_state TEXT;"
    "ALTER TABLE disks ADD COLUMN attrs_observed_at TEXT;"
    "ALTER TABLE disks ADD COLUMN attrs_observed_ms INTEGER;"
    "ALTER TABLE disks ADD COLUMN attrs_source TEXT CHECK (attrs_source IN ('agent', 'arm'));",

    /* 4 -> 5: the fleet from ARM, the executor's audit log and queue, a
     * disk's original SKU, drift.
     * A VM ARM lists that no agent ever reported is a row like any other
     * with last_report_id '', last_report_at '' and last_report_ms 0
     * ("never reported"): the columns stay NOT NULL (no table rebuilt, and
     * every query that orders or joins by them keeps its meaning: no report
     * joins, 0 is older than any report).  ARM_SEEN_* is the last sync
     * that listed it.  A VM is found by its resource id (the identity) or
     * by subscription, group and name, without regard to case: indexed. */
    "ALTER TABLE vms ADD COLUMN arm_seen_at TEXT;"
    "ALTER TABLE vms ADD COLUMN arm_seen_ms INTEGER;"
    "CREATE INDEX vms_place ON vms(name COLLATE NOCASE, resource_group COLLATE NOCASE,"
    "  subscription_id COLLATE NOCASE);"
    "ALTER TABLE disks ADD COLUMN last_ownership_update TEXT;"
    /* Actions: their VM, why and by which policy, the expected saving,
     * and when they last moved (migrated ones: their last logged move). */
    "ALTER TABLE actions ADD COLUMN vm_id INTEGER REFERENCES vms(id);"
    "ALTER TABLE actions ADD COLUMN policy TEXT;"
    "ALTER TABLE actions ADD COLUMN reason TEXT;"
    "ALTER TABLE actions ADD COLUMN saving TEXT;"
    "ALTER TABLE actions ADD COLUMN currency TEXT;"
    "ALTER TABLE actions ADD COLUMN updated_at TEXT;"
    "UPDATE actions SET vm_id = (SELECT d.vm_id FROM disks d WHERE d.id = actions.disk_id),"
    "  updated_at = coalesce((SELECT max(t.at) FROM action_transitions t"
    "  WHERE t.action_id = actions.id), finished_at, requested_at);"
    "CREATE INDEX actions_vm ON actions(vm_id, id);"
    "CREATE TABLE disk_originals ("
    "  disk_id INTEGER PRIMARY KEY REFERENCES disks(id),"
    "  sku TEXT NOT NULL,"
    "  tier TEXT NOT NULL DEFAULT '',"
    "  action_id INTEGER REFERENCES actions(id),"
    "  set_at TEXT NOT NULL);"
    "CREATE TABLE drift ("
    "  id INTEGER PRIMARY KEY,"
    "  disk_id INTEGER NOT NULL REFERENCES disks(id),"
    "  vm_id INTEGER NOT NULL REFERENCES vms(id),"
    "  sku TEXT NOT NULL,"
    "  required_sku TEXT NOT NULL,"
    "  policy TEXT NOT NULL DEFAULT '',"
    "  since TEXT NOT NULL,"
    "  since_ms INTEGER NOT NULL,"
    "  seen_at TEXT NOT NULL,"
    "  ended_at TEXT,"
    "  ended_ms INTEGER);"
    "CREATE UNIQUE INDEX drift_open ON drift(disk_id) WHERE ended_at IS NULL;",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == TW_STORE_SQLITE_VERSION,
               "one migration step per schema version");

/* ---- helpers shared by the SQLite files ------------------------------ */

static const char *const sq_sql[SQ_COUNT] = {
#define TW_SQ_TEXT(id, sql) [id] = sql,
    TW_SQ_STATEMENTS(TW_SQ_TEXT)
#undef TW_SQ_TEXT
};

enum tw_err tw_sq_fail(struct tw_sqlite *s, sqlite3_stmt *stmt, struct tw_error *err,
                       const char *what)
{
    int rc = sqlite3_extended_errcode(s->db);
    char msg[256];
    snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(s->db));
    if (stmt)
        sqlite3_reset(stmt);
    enum tw_err code = TW_EIO;
    const char *hint = "";
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        code = TW_ENOMEM;
        break;
    case SQLITE_CONSTRAINT:
        code = TW_EINVAL;
        break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        hint = "; another process holds the database for longer than the busy timeout";
        break;
    case SQLITE_FULL:
        hint = "; free some disk space";
        break;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_CANTOPEN:
        hint = "; check the permissions of the file and its folder";
        break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        hint = "; restore the database from a backup";
        break;
    default:
        break;
    }
    return tw_error_set(err, code, "%s: %s: %s%s", s->path, what, msg, hint);
}

sqlite3_stmt *tw_sq_stmt(struct tw_sqlite *s, enum tw_sq_id id, struct tw_error *err)
{
    if (!s->stmt[id] &&
        sqlite3_prepare_v3(s->db, sq_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[id],
                           NULL) != SQLITE_OK) {
        tw_sq_fail(s, NULL, err, "preparing a statement");
        s->stmt[id] = NULL;
        return NULL;
    }
    return s->stmt[id];
}

int tw_sq_text(sqlite3_stmt *st, int i, const char *s, bool empty_null)
{
    if (!s || (empty_null && !s[0]))
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
}

/* Binds TEXT's instant in milliseconds at I (NULL when TEXT is NULL or
 * empty): read by core's RFC 3339 reader, the same one observations go
 * through, never by SQL's julianday (which loses a millisecond half the
 * time and stores NULL for text it can't read).  Text that is no RFC 3339
 * time fails with TW_EPARSE naming WHAT, and ST is reset and unbound. */
enum tw_err tw_sq_bind_instant(sqlite3_stmt *st, int i, const char *text, const char *what,
                               struct tw_error *err)
{
    if (!text || !text[0]) {
        sqlite3_bind_null(st, i);
        return TW_OK;
    }
    int64_t ms;
    if (!tw_rfc3339_ms(text, &ms)) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return tw_error_set(err, TW_EPARSE,
                            "%s \"%.60s\" is not an RFC 3339 time (e.g. 2026-11-14T09:30:00Z)",
                            what, text);
    }
    sqlite3_bind_int64(st, i, ms);
    return TW_OK;
}

/* Runs one statement (or several) that return nothing worth reading. */
static enum tw_err exec(struct tw_sqlite *s, const char *sql, const char *what,
                        struct tw_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, what);
    return TW_OK;
}

/* The integer a one-value statement (a PRAGMA) answers. */
static enum tw_err query_int(struct tw_sqlite *s, const char *sql, int64_t *out,
                             struct tw_error *err)
{
    sqlite3_stmt *st;
    *out = 0;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tw_sq_fail(s, NULL, err, "reading the database header");
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE) {
        enum tw_err e = tw_sq_fail(s, NULL, err, "reading the database header");
        sqlite3_finalize(st);
        return e;
    }
    sqlite3_finalize(st);
    return TW_OK;
}

/* ---- open, migrate, close -------------------------------------------- */

static void ckpt_stop(struct tw_sqlite *s);

static void sq_close(struct tw_store *st)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    ckpt_stop(s);
    for (int i = 0; i < SQ_COUNT; i++)
        sqlite3_finalize(s->stmt[i]);
    sqlite3_close(s->db);
    free(s);
}

/* Whether the file is one of ours, someone else's, or newer than us. */
static enum tw_err identity(struct tw_sqlite *s, int64_t *version, struct tw_error *err)
{
    int64_t app_id = 0, tables = 0;
    enum tw_err rc = query_int(s, "PRAGMA user_version", version, err);
    if (rc == TW_OK)
        rc = query_int(s, "PRAGMA application_id", &app_id, err);
    if (rc != TW_OK) {
        int sq = sqlite3_extended_errcode(s->db) & 0xff;
        if (sq == SQLITE_NOTADB)
            return tw_error_set(err, TW_EINVAL,
                                "%s is not a tierwise database (not an SQLite file at all); "
                                "give --db the path of a tierwise database or of a new file",
                                s->path);
        return rc;
    }
    if (app_id != 0 && app_id != TW_STORE_APP_ID)
        return tw_error_set(err, TW_EINVAL,
                            "%s is an SQLite database of another application "
                            "(application_id 0x%08llx); give --db a tierwise database or a "
                            "new file", s->path, (unsigned long long)app_id);
    if (*version > TW_STORE_SQLITE_VERSION)
        return tw_error_set(err, TW_EUNSUPPORTED,
                            "%s has schema version %lld, written by a newer tierwise; this "
                            "one knows versions up to %d: upgrade tierwise to open it",
                            s->path, (long long)*version, TW_STORE_SQLITE_VERSION);
    if (*version == 0 && app_id == 0) {
        rc = query_int(s, "SELECT count(*) FROM sqlite_master", &tables, err);
        if (rc != TW_OK)
            return rc;
        if (tables > 0)
            return tw_error_set(err, TW_EINVAL,
                                "%s is an SQLite database but not a tierwise one (tables of "
                                "its own, no tierwise schema version); give --db a tierwise "
                                "database or a new file",
                                s->path);
    }
    return TW_OK;
}

/* The three looks of identity() in one read transaction: read one at a
 * time, a handle migrating the new file meanwhile could show its version
 * 0 to the first and its tables to the last, which looks like another
 * application's database. */
static enum tw_err check_identity(struct tw_sqlite *s, int64_t *version, struct tw_error *err)
{
    enum tw_err rc = exec(s, "BEGIN", "reading the database's identity", err);
    if (rc != TW_OK)
        return rc;
    rc = identity(s, version, err);
    sqlite3_exec(s->db, rc == TW_OK ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Brings the schema to our version in one write transaction; another
 * handle opening at the same time waits, then finds the work done. */
static enum tw_err migrate(struct tw_sqlite *s, struct tw_error *err)
{
    enum tw_err rc = exec(s, "BEGIN IMMEDIATE", "starting the schema migration", err);
    if (rc != TW_OK)
        return rc;
    int64_t version;
    rc = identity(s, &version, err);
    for (int64_t v = version; rc == TW_OK && v < TW_STORE_SQLITE_VERSION; v++) {
        char what[64];
        snprintf(what, sizeof(what), "migrating the schema from version %lld", (long long)v);
        rc = exec(s, migrations[v], what, err);
    }
    if (rc == TW_OK && version < TW_STORE_SQLITE_VERSION) {
        char sql[96];
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA application_id = %d",
                 TW_STORE_SQLITE_VERSION, TW_STORE_APP_ID);
        rc = exec(s, sql, "recording the schema version", err);
    }
    if (rc == TW_OK)
        rc = exec(s, "COMMIT", "committing the schema migration", err);
    if (rc != TW_OK && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* ---- the writer's checkpointer ---------------------------------------- */

/*
 * How often the checkpointer copies the log into the database, and the log
 * size at which the writer's own commit runs a checkpoint.  The thread does
 * the bulk of the copying beside the writer (a passive checkpoint blocks
 * nobody), but a log only starts over when everything in it has been
 * copied at the moment the writer begins a transaction, which under a
 * steady stream of reports happens only if the writer checkpoints between
 * two of its commits.  Then only what came in since the thread's last pass
 * is left to copy, so the pause is short, and the log stays near this size.
 * (With the writer's checkpoints off altogether the log never starts over
 * while reports keep coming.)
 */
#define TW_SQ_CHECKPOINT_EVERY_MS 50
#define TW_SQ_CHECKPOINT_WRITER_PAGES 4096

static void *checkpointer(void *arg)
{
    struct tw_sqlite *s = arg;
    bool warned = false;
    pthread_mutex_lock(&s->ckpt_lock);
    while (!s->ckpt_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += TW_SQ_CHECKPOINT_EVERY_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&s->ckpt_wake, &s->ckpt_lock, &until);
        if (s->ckpt_stop)
            break;
        pthread_mutex_unlock(&s->ckpt_lock);
        int rc = sqlite3_wal_checkpoint_v2(s->ckpt_db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL,
                                           NULL);
        /* BUSY: another checkpoint runs; it does the work.  Anything else
         * is said once, and the log is left to grow until the handle
         * closes (it is copied then), rather than stop the writer. */
        if (rc != SQLITE_OK && rc != SQLITE_BUSY && !warned) {
            fprintf(stderr, "tierwise: %s: checkpointing the write-ahead log failed: %s\n",
                    s->path, sqlite3_errmsg(s->ckpt_db));
            warned = true;
        }
        pthread_mutex_lock(&s->ckpt_lock);
    }
    pthread_mutex_unlock(&s->ckpt_lock);
    return NULL;
}

/* Starts the checkpointer of a writer's handle; without one (a second
 * connection or the thread can't be had) the writer keeps SQLite's own
 * checkpoints: slower commits now and then, nothing else. */
static void ckpt_start(struct tw_sqlite *s)
{
    pthread_mutex_init(&s->ckpt_lock, NULL);
    pthread_cond_init(&s->ckpt_wake, NULL);
    if (sqlite3_open_v2(s->path, &s->ckpt_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        NULL) == SQLITE_OK) {
        sqlite3_busy_timeout(s->ckpt_db, 5000);
        if (pthread_create(&s->ckpt_thread, NULL, checkpointer, s) == 0) {
            s->ckpt_running = true;
            sqlite3_wal_autocheckpoint(s->db, TW_SQ_CHECKPOINT_WRITER_PAGES);
            return;
        }
    }
    sqlite3_close(s->ckpt_db);
    s->ckpt_db = NULL;
    sqlite3_wal_autocheckpoint(s->db, 1000);
}

static void ckpt_stop(struct tw_sqlite *s)
{
    if (!s->ckpt_running)
        return;
    pthread_mutex_lock(&s->ckpt_lock);
    s->ckpt_stop = true;
    pthread_cond_signal(&s->ckpt_wake);
    pthread_mutex_unlock(&s->ckpt_lock);
    pthread_join(s->ckpt_thread, NULL);
    s->ckpt_running = false;
    /* Closed first: the last connection to close copies the rest of the
     * log, and that is the writer's. */
    sqlite3_close(s->ckpt_db);
    s->ckpt_db = NULL;
    pthread_mutex_destroy(&s->ckpt_lock);
    pthread_cond_destroy(&s->ckpt_wake);
}

static const struct tw_store_ops sqlite_ops;

int tw_store_schema_version(void)
{
    return TW_STORE_SQLITE_VERSION;
}

enum tw_err tw_store_sqlite_open(const char *path, const struct tw_store_open_opts *opts,
                                 struct tw_store **out, struct tw_error *err)
{
    struct tw_sqlite *s = calloc(1, sizeof(*s));
    if (!s)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening %s", path);
    s->base.ops = &sqlite_ops;
    snprintf(s->path, sizeof(s->path), "%s", path);
    /* A new database holds the fleet and its tokens' hashes: it is made
     * readable by its owner only, whatever the umask (SQLite would make it
     * 0644 under the usual 022, and its -wal and -shm files take the mode
     * of the database's).  An empty file is a new database to SQLite. */
    if (strcmp(path, ":memory:") != 0 && path[0]) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            (void)fchmod(fd, 0600); /* whatever a default ACL made of it */
            close(fd);
        }
    }
    /* One thread uses a handle at a time (store.h): no per-call mutex. */
    int rc = sqlite3_open_v2(path, &s->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                             NULL);
    if (rc != SQLITE_OK) {
        enum tw_err e = s->db ? tw_sq_fail(s, NULL, err, "can't open the database")
                              : tw_error_set(err, TW_ENOMEM, "out of memory opening %s", path);
        sq_close(&s->base);
        return e;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);

    /* Look before touching anything: a foreign or newer file is left as
     * it is (switching it to WAL would already change it). */
    int64_t version = 0;
    enum tw_err e = check_identity(s, &version, err);
    /* 4 KiB pages for a new file: larger ones hold a report body without
     * an overflow page, but every small change (an index entry, a VM row)
     * then writes a larger page to the WAL, and ingest measured slower. */
    if (e == TW_OK && version == 0)
        e = exec(s, "PRAGMA page_size = 4096", "choosing the page size", err);
    if (e == TW_OK) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) != SQLITE_OK)
            e = tw_sq_fail(s, NULL, err, "switching to WAL mode");
        else {
            /* Changing the journal mode needs the file to itself, and
             * SQLite answers BUSY at once, without the busy timeout, while
             * another handle opening the same new file holds it: retry
             * for as long as the busy timeout would wait. */
            for (int tries = 0; (rc = sqlite3_step(st)) == SQLITE_BUSY && tries < 500; tries++) {
                sqlite3_reset(st);
                sqlite3_sleep(10);
            }
            const unsigned char *mode = rc == SQLITE_ROW ? sqlite3_column_text(st, 0) : NULL;
            if (rc != SQLITE_ROW)
                e = tw_sq_fail(s, NULL, err, "switching to WAL mode");
            else if (!mode || strcmp((const char *)mode, "wal") != 0)
                e = tw_error_set(err, TW_EUNSUPPORTED,
                                 "%s: the database stays in journal mode \"%s\" instead of WAL; "
                                 "put it on a local filesystem", path,
                                 mode ? (const char *)mode : "?");
            sqlite3_finalize(st);
        }
    }
    if (e == TW_OK)
        /* A checkpoint (WAL pages copied into the database, fsynced) every
         * ~40 MiB of WAL rather than SQLite's 4 MiB: batches of reports
         * touch many pages, and a page changed by several batches is then
         * copied once.  The WAL file is cut back to 64 MiB afterwards. */
        e = exec(s, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; "
                    "PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY; "
                    "PRAGMA wal_autocheckpoint = 10000; PRAGMA journal_size_limit = 67108864",
                 "setting the connection up", err);
    if (e == TW_OK && version < TW_STORE_SQLITE_VERSION)
        e = migrate(s, err);
    if (e != TW_OK) {
        sq_close(&s->base);
        return e;
    }
    if (opts->writer)
        ckpt_start(s);
    *out = &s->base;
    return TW_OK;
}

/* ---- tokens ---------------------------------------------------------- */

static enum tw_err sq_token_add(struct tw_store *st, const char *name, enum tw_role role,
                                const uint8_t sha256[32], int64_t *id_out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_TOKEN_ADD, err);
    if (!q)
        return err ? err->code : TW_EIO;
    sqlite3_bind_blob(q, 1, sha256, 32, SQLITE_STATIC);
    tw_sq_text(q, 2, name, false);
    tw_sq_text(q, 3, tw_role_name(role), false);
    int rc = sqlite3_step(q);
    if (rc != SQLITE_DONE) {
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE) {
            sqlite3_reset(q);
            return tw_error_set(err, TW_EINVAL,
                                "a token with this secret is already stored; create a new one");
        }
        return tw_sq_fail(s, q, err, "storing a token");
    }
    sqlite3_reset(q);
    if (id_out)
        *id_out = sqlite3_last_insert_rowid(s->db);
    return TW_OK;
}

static enum tw_err sq_token_lookup(struct tw_store *st, const uint8_t sha256[32],
                                   enum tw_role *role_out, char *name_out, size_t name_len,
                                   struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_TOKEN_LOOKUP, err);
    if (!q)
        return err ? err->code : TW_EIO;
    sqlite3_bind_blob(q, 1, sha256, 32, SQLITE_STATIC);
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "no such token, or it was revoked");
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "looking a token up");
    enum tw_role role;
    if (tw_role_parse((const char *)sqlite3_column_text(q, 0), &role) != TW_OK) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_EIO, "%s: a token has an unknown role", s->path);
    }
    if (role_out)
        *role_out = role;
    if (name_out && name_len)
        snprintf(name_out, name_len, "%s", (const char *)sqlite3_column_text(q, 1));
    sqlite3_reset(q);
    return TW_OK;
}

static enum tw_err sq_token_list(struct tw_store *st, struct tw_store_token_row **out, size_t *n,
                                 struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_TOKEN_LIST, err);
    if (!q)
        return err ? err->code : TW_EIO;
    struct tw_store_token_row *arr = NULL;
    size_t k = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
        if (k == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            struct tw_store_token_row *p = realloc(arr, ncap * sizeof(*p));
            if (!p) {
                sqlite3_reset(q);
                free(arr);
                return tw_error_set(err, TW_ENOMEM, "out of memory listing tokens");
            }
            arr = p;
            cap = ncap;
        }
        struct tw_store_token_row *t = &arr[k++];
        memset(t, 0, sizeof(*t));
        t->id = sqlite3_column_int64(q, 0);
        tw_sq_copy(q, 1, t->name, sizeof(t->name));
        if (tw_role_parse((const char *)sqlite3_column_text(q, 2), &t->role) != TW_OK) {
            long long bad = (long long)t->id;
            sqlite3_reset(q);
            free(arr);
            return tw_error_set(err, TW_EIO, "%s: token %lld has an unknown role", s->path, bad);
        }
        tw_sq_copy(q, 3, t->created_at, sizeof(t->created_at));
        tw_sq_copy(q, 4, t->revoked_at, sizeof(t->revoked_at));
    }
    if (rc != SQLITE_DONE) {
        free(arr);
        return tw_sq_fail(s, q, err, "listing tokens");
    }
    sqlite3_reset(q);
    *out = arr;
    *n = k;
    return TW_OK;
}

static enum tw_err sq_token_revoke(struct tw_store *st, int64_t id, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_TOKEN_REVOKE, err);
    if (!q)
        return err ? err->code : TW_EIO;
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "revoking a token");
    sqlite3_reset(q);
    if (sqlite3_changes(s->db) > 0)
        return TW_OK;
    /* Revoking twice is fine; revoking what never existed is not. */
    q = tw_sq_stmt(s, SQ_TOKEN_EXISTS, err);
    if (!q)
        return err ? err->code : TW_EIO;
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q);
    sqlite3_reset(q);
    if (rc == SQLITE_ROW)
        return TW_OK;
    if (rc != SQLITE_DONE)
        return tw_sq_fail(s, NULL, err, "revoking a token");
    return tw_error_set(err, TW_ENOENT, "there is no token %lld", (long long)id);
}

/* ---- price books ----------------------------------------------------- */

static enum tw_err sq_pricebook_put(struct tw_store *st, const char *region, const char *currency,
                                    const char *source, const char *fetched_at,
                                    const char *items, size_t items_len, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_PRICE_PUT, err);
    if (!q)
        return err ? err->code : TW_EIO;
    if (items_len > 0x7fffffff)
        return tw_error_set(err, TW_ERANGE, "a price book of %zu bytes is too large", items_len);
    /* One statement is one transaction: the old book stays until the new
     * one is wholly written. */
    tw_sq_text(q, 1, region, false);
    tw_sq_text(q, 2, currency, false);
    tw_sq_text(q, 3, source, false);
    tw_sq_text(q, 4, fetched_at, false);
    enum tw_err rc = tw_sq_bind_instant(q, 6, fetched_at, "the price book's fetch time", err);
    if (rc != TW_OK)
        return rc;
    sqlite3_bind_text(q, 5, items, (int)items_len, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_DONE)
        return tw_sq_fail(s, q, err, "storing a price book");
    sqlite3_reset(q);
    return TW_OK;
}

/* The book Q (bound: region, currency, and for GET_AT the instant) finds. */
static enum tw_err price_read(struct tw_sqlite *s, sqlite3_stmt *q, const char *region,
                              const char *currency, char **items, size_t *items_len,
                              char *source, size_t source_len, char *fetched_at,
                              size_t fetched_len, struct tw_error *err)
{
    int rc = sqlite3_step(q);
    if (rc == SQLITE_DONE) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOENT, "no price book for %s in %s is stored", region,
                            currency);
    }
    if (rc != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "reading a price book");
    const char *t = (const char *)sqlite3_column_text(q, 2);
    size_t n = (size_t)sqlite3_column_bytes(q, 2);
    char *copy = malloc(n + 1);
    if (!copy) {
        sqlite3_reset(q);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading a price book of %zu bytes", n);
    }
    memcpy(copy, t ? t : "", t ? n : 0);
    copy[t ? n : 0] = '\0';
    if (source && source_len)
        snprintf(source, source_len, "%s", (const char *)sqlite3_column_text(q, 0));
    if (fetched_at && fetched_len)
        snprintf(fetched_at, fetched_len, "%s", (const char *)sqlite3_column_text(q, 1));
    sqlite3_reset(q);
    *items = copy;
    if (items_len)
        *items_len = t ? n : 0;
    return TW_OK;
}

static enum tw_err sq_pricebook_get(struct tw_store *st, const char *region, const char *currency,
                                    char **items, size_t *items_len, char *source,
                                    size_t source_len, char *fetched_at, size_t fetched_len,
                                    struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_PRICE_GET, err);
    if (!q)
        return err ? err->code : TW_EIO;
    tw_sq_text(q, 1, region, false);
    tw_sq_text(q, 2, currency, false);
    return price_read(s, q, region, currency, items, items_len, source, source_len, fetched_at,
                      fetched_len, err);
}

static enum tw_err sq_pricebook_get_at(struct tw_store *st, const char *region,
                                       const char *currency, const char *at, char **items,
                                       size_t *items_len, char *source, size_t source_len,
                                       char *fetched_at, size_t fetched_len,
                                       struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    if (!at || !at[0])
        return tw_error_set(err, TW_EINVAL, "a price lookup needs an instant");
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_PRICE_GET_AT, err);
    if (!q)
        return err ? err->code : TW_EIO;
    tw_sq_text(q, 1, region, false);
    tw_sq_text(q, 2, currency, false);
    enum tw_err rc = tw_sq_bind_instant(q, 3, at, "the instant of a price lookup", err);
    if (rc != TW_OK)
        return rc;
    return price_read(s, q, region, currency, items, items_len, source, source_len, fetched_at,
                      fetched_len, err);
}

/* ---- counters and checks --------------------------------------------- */

static enum tw_err sq_stats(struct tw_store *st, struct tw_store_stats *out, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_STATS, err);
    if (!q)
        return err ? err->code : TW_EIO;
    if (sqlite3_step(q) != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "counting what is stored");
    out->reports = sqlite3_column_int64(q, 0);
    out->vms = sqlite3_column_int64(q, 1);
    out->disks = sqlite3_column_int64(q, 2);
    out->results = sqlite3_column_int64(q, 3);
    out->db_bytes = sqlite3_column_int64(q, 4);
    sqlite3_reset(q);
    return TW_OK;
}

static enum tw_err sq_check(struct tw_store *st, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    sqlite3_stmt *q = tw_sq_stmt(s, SQ_CHECK, err);
    if (!q)
        return err ? err->code : TW_EIO;
    if (sqlite3_step(q) != SQLITE_ROW)
        return tw_sq_fail(s, q, err, "checking the database's integrity");
    const char *msg = (const char *)sqlite3_column_text(q, 0);
    enum tw_err rc = TW_OK;
    if (!msg || strcmp(msg, "ok") != 0)
        rc = tw_error_set(err, TW_EIO, "%s fails its integrity check: %s", s->path,
                          msg ? msg : "(no answer)");
    sqlite3_reset(q);
    return rc;
}

/* The store's health (tw_store_probe): a page-sized file written, synced
 * and removed beside the database.  A full disk, a read-only mount or a
 * quota fails it as it fails the next commit.  The file is new (a unique
 * name, created exclusively: no file of the user's is touched) and
 * removed at once, before the write. */
static enum tw_err sq_probe(struct tw_store *st, struct tw_error *err)
{
    struct tw_sqlite *s = (struct tw_sqlite *)st;
    char path[sizeof(s->path) + 32];
    int pn = snprintf(path, sizeof(path), "%s-healthz-XXXXXX", s->path);
    if (pn < 0 || (size_t)pn >= sizeof(path))
        return tw_error_set(err, TW_EINVAL, "the database's path is too long for the write "
                                            "probe");
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return tw_error_set(err, TW_EIO, "can't create a file beside the database (%.300s): %s",
                            path, strerror(errno));
    unlink(path);
    static const char page[4096];
    ssize_t w = write(fd, page, sizeof(page));
    int e = w < 0 ? errno : w < (ssize_t)sizeof(page) ? ENOSPC : 0;
    if (!e && fdatasync(fd) != 0)
        e = errno;
    close(fd);
    if (e)
        return tw_error_set(err, TW_EIO, "writing beside the database failed: %s%s",
                            strerror(e),
                            e == ENOSPC || e == EFBIG || e == EDQUOT
                                ? " (the disk is full: free space, or move the database)"
                                : "");
    return TW_OK;
}

/* One process serves a SQLite file: its periodic work is always its own. */
static enum tw_err sq_work_lock(struct tw_store *st, const char *kind, bool *held,
                                struct tw_error *err)
{
    (void)st;
    (void)kind;
    (void)err;
    *held = true;
    return TW_OK;
}

static const struct tw_store_ops sqlite_ops = {
    .name = "sqlite",
    .close = sq_close,
    .token_add = sq_token_add,
    .token_lookup = sq_token_lookup,
    .token_list = sq_token_list,
    .token_revoke = sq_token_revoke,
    .put_reports = tw_sq_put_reports,
    .vms = tw_sq_vms,
    .vm = tw_sq_vm,
    .vm_disks = tw_sq_vm_disks,
    .disks = tw_sq_disks,
    .disk = tw_sq_disk,
    .disk_history = tw_sq_disk_history,
    .disk_results = tw_sq_disk_results,
    .vms_page = tw_sq_vms_page,
    .disks_page = tw_sq_disks_page,
    .vm_ids_page = tw_sq_vm_ids_page,
    .vm_latest = tw_sq_vm_latest,
    .fleet_latest = tw_sq_fleet_latest,
    .vm_ids = tw_sq_vm_ids,
    .stats = sq_stats,
    .pricebook_put = sq_pricebook_put,
    .pricebook_get = sq_pricebook_get,
    .pricebook_get_at = sq_pricebook_get_at,
    .action_add = tw_sq_action_add,
    .action_move = tw_sq_action_move,
    .action_claim = tw_sq_action_claim,
    .action_release = tw_sq_action_release,
    .action_state = tw_sq_action_state,
    .action_log_count = tw_sq_action_log_count,
    .power_observe = tw_sq_power_observe,
    .sku_observe = tw_sq_sku_observe,
    .policy_put = tw_sq_policy_put,
    .policy_get = tw_sq_policy_get,
    .plan_add = tw_sq_plan_add,
    .fleet_verdicts = tw_sq_fleet_verdicts,
    .latest_page = tw_sq_latest_page,
    .verdicts_stale = tw_sq_verdicts_stale,
    .verdicts_keep = tw_sq_verdicts_keep,
    .vm_sizes_put = tw_sq_vm_sizes_put,
    .vm_sizes_get = tw_sq_vm_sizes_get,
    .check = sq_check,
    .fleet_counts = tw_sq_fleet_counts,
    .disk_attrs_observe = tw_sq_disk_attrs_observe,
    .savings_open = tw_sq_savings_open,
    .savings_next = tw_sq_savings_next,
    .savings_close = tw_sq_savings_close,
    .pricebook_currencies = tw_sq_pricebook_currencies,
    .actions_list = tw_sq_actions_list,
    .action_get = tw_sq_action_get,
    .action_moves = tw_sq_action_moves,
    .actions_due = tw_sq_actions_due,
    .action_set_operation = tw_sq_action_set_operation,
    .action_count_attempt = tw_sq_action_count_attempt,
    .action_set_due = tw_sq_action_set_due,
    .disk_original_set = tw_sq_disk_original_set,
    .disk_original_get = tw_sq_disk_original_get,
    .disk_original_clear = tw_sq_disk_original_clear,
    .arm_vm_put = tw_sq_arm_vm_put,
    .vm_by_resource_id = tw_sq_vm_by_resource_id,
    .vm_by_name = tw_sq_vm_by_name,
    .drift_open = tw_sq_drift_open,
    .drift_close = tw_sq_drift_close,
    .drift_list = tw_sq_drift_list,
    .vm_power_before = tw_sq_vm_power_before,
    .policy_names = tw_sq_policy_names,
    .drift_sync = tw_sq_drift_sync,
    .report_read = tw_sq_report_read,
    .report_book_items = tw_sq_report_book_items,
    .report_begin = tw_sq_report_begin,
    .report_end = tw_sq_report_end,
    .report_fleet_open = tw_sq_report_fleet_open,
    .report_fleet_next = tw_sq_report_fleet_next,
    .report_fleet_close = tw_sq_report_fleet_close,
    .report_attached = tw_sq_report_attached,
    .probe = sq_probe,
    .work_lock = sq_work_lock,
    .copy = &tw_sqlite_copy_ops,
};

/* spool.c - the agent's undelivered reports, in a SQLite file of its own. */
#include "agent/spool.h"
#include "core/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

struct tw_spool {
    sqlite3 *db;
    char path[4096];
    int64_t max_reports, max_bytes;
};

static const char schema_sql[] =
    "CREATE TABLE reports ("
    " seq INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE,"
    " body BLOB NOT NULL,"
    " bytes INTEGER NOT NULL,"
    " queued_ms INTEGER NOT NULL,"
    " attempts INTEGER NOT NULL DEFAULT 0,"
    " state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'rejected')),"
    " http_status INTEGER NOT NULL DEFAULT 0,"
    " last_error TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX reports_state ON reports (state, seq);";

static enum tw_err db_error(struct tw_spool *sp, struct tw_error *err, const char *what)
{
    int rc = sqlite3_errcode(sp->db);
    enum tw_err code = rc == SQLITE_NOMEM ? TW_ENOMEM : TW_EIO;
    return tw_error_set(err, code, "spool %s: %s failed: %s", sp->path, what,
                        sqlite3_errmsg(sp->db));
}

/* Column I of the current row as text, "" for NULL. */
static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* Runs SQL that returns at most one integer; *OUT gets it (0 for no row). */
static int query_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    *out = 0;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        rc = SQLITE_DONE;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static enum tw_err not_a_spool(const char *path, int rc, struct tw_error *err)
{
    if (rc == SQLITE_NOTADB)
        return tw_error_set(err, TW_EINVAL,
                            "%s is not a tierwise spool (not a SQLite database); move it "
                            "away or give --spool another file",
                            path);
    if (rc == SQLITE_CORRUPT)
        return tw_error_set(err, TW_EINVAL,
                            "the spool %s is damaged (SQLite says the database is malformed); "
                            "keep it for inspection, move it away and start a new one",
                            path);
    return TW_OK;
}

/* Checks that the file is ours, creating the table in a new one. */
static enum tw_err check_or_create(struct tw_spool *sp, struct tw_error *err)
{
    int64_t app = 0, ver = 0, tables = 0;
    int rc = query_int(sp->db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK)
        rc = query_int(sp->db, "PRAGMA user_version", &ver);
    if (rc == SQLITE_OK)
        rc = query_int(sp->db, "SELECT count(*) FROM sqlite_master", &tables);
    if (rc != SQLITE_OK) {
        if (not_a_spool(sp->path, rc, err) != TW_OK)
            return err ? err->code : TW_EINVAL;
        return db_error(sp, err, "reading the header");
    }
    if (app == 0 && ver == 0 && tables == 0) {
        /* A new file (or an empty one): make it a spool, in one transaction
         * so a second agent starting at the same moment sees all or nothing. */
        char sql[sizeof(schema_sql) + 128];
        snprintf(sql, sizeof(sql),
                 "BEGIN IMMEDIATE; %s PRAGMA application_id = %d; PRAGMA user_version = %d; "
                 "COMMIT;",
                 schema_sql, TW_SPOOL_APPLICATION_ID, TW_SPOOL_SCHEMA_VERSION);
        if (sqlite3_exec(sp->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
            enum tw_err e = db_error(sp, err, "creating the table");
            sqlite3_exec(sp->db, "ROLLBACK", NULL, NULL, NULL);
            /* The other agent won the race: check what it made. */
            if (query_int(sp->db, "PRAGMA application_id", &app) == SQLITE_OK &&
                app == TW_SPOOL_APPLICATION_ID)
                return TW_OK;
            return e;
        }
        return TW_OK;
    }
    if (app != TW_SPOOL_APPLICATION_ID)
        return tw_error_set(err, TW_EINVAL,
                            "%s is not a tierwise spool (a SQLite database of another "
                            "program: application id 0x%llx, %lld tables); move it away or "
                            "give --spool another file",
                            sp->path, (unsigned long long)app, (long long)tables);
    if (ver > TW_SPOOL_SCHEMA_VERSION)
        return tw_error_set(err, TW_EUNSUPPORTED,
                            "the spool %s was written by a newer tierwise-agent (spool version "
                            "%lld, this one knows %d); run the newer agent, or give --spool "
                            "another file",
                            sp->path, (long long)ver, TW_SPOOL_SCHEMA_VERSION);
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(sp->db, "PRAGMA quick_check", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        bool good = rc == SQLITE_ROW &&
                    strcmp(col_text(st, 0), "ok") == 0;
        sqlite3_finalize(st);
        if (good)
            return TW_OK;
        rc = SQLITE_CORRUPT;
    }
    if (not_a_spool(sp->path, rc == SQLITE_ROW ? SQLITE_CORRUPT : rc, err) != TW_OK)
        return err ? err->code : TW_EINVAL;
    return db_error(sp, err, "checking the file");
}

enum tw_err tw_spool_open(const char *path, const struct tw_spool_opts *o, struct tw_spool **out,
                          struct tw_error *err)
{
    *out = NULL;
    if (!path || !*path)
        return tw_error_set(err, TW_EINVAL, "no spool file given");
    struct tw_spool *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return tw_error_set(err, TW_ENOMEM, "out of memory opening the spool");
    if (snprintf(sp->path, sizeof(sp->path), "%s", path) >= (int)sizeof(sp->path)) {
        free(sp);
        return tw_error_set(err, TW_EINVAL, "the spool path is longer than %zu bytes",
                            sizeof(sp->path) - 1);
    }
    sp->max_reports = o && o->max_reports > 0 ? o->max_reports : TW_SPOOL_DEFAULT_MAX_REPORTS;
    sp->max_bytes = o && o->max_bytes > 0 ? o->max_bytes : TW_SPOOL_DEFAULT_MAX_BYTES;

    /* Create the file ourselves so it is private from the start (reports
     * name VMs, subscriptions and resource groups). */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0) {
        int e = errno;
        free(sp);
        if (e == EISDIR)
            return tw_error_set(err, TW_EINVAL,
                                "the spool %s is a directory; give --spool a file name such as "
                                "%s/spool.db",
                                path, path);
        return tw_error_set(err, TW_EIO,
                            "can't open or create the spool %s: %s; give --spool a file in a "
                            "directory this user can write",
                            path, strerror(e));
    }
    struct stat stt;
    bool regular = fstat(fd, &stt) == 0 && S_ISREG(stt.st_mode);
    close(fd);
    if (!regular) {
        free(sp);
        return tw_error_set(err, TW_EINVAL, "the spool %s is not a regular file", path);
    }

    int rc = sqlite3_open_v2(path, &sp->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL);
    if (rc != SQLITE_OK) {
        tw_error_set(err, rc == SQLITE_NOMEM ? TW_ENOMEM : TW_EIO, "can't open the spool %s: %s",
                     path, sp->db ? sqlite3_errmsg(sp->db) : sqlite3_errstr(rc));
        sqlite3_close(sp->db);
        free(sp);
        return err ? err->code : TW_EIO;
    }
    sqlite3_busy_timeout(sp->db, 10000);
    /* Every change is on disk before the agent goes on (and, for a
     * delivered report, before the next one is sent). */
    sqlite3_exec(sp->db, "PRAGMA synchronous = FULL", NULL, NULL, NULL);
    enum tw_err e = check_or_create(sp, err);
    if (e != TW_OK) {
        tw_spool_close(sp);
        return e;
    }
    *out = sp;
    return TW_OK;
}

void tw_spool_close(struct tw_spool *sp)
{
    if (!sp)
        return;
    sqlite3_close(sp->db);
    free(sp);
}

static enum tw_err prepare(struct tw_spool *sp, const char *sql, sqlite3_stmt **st,
                           struct tw_error *err)
{
    if (sqlite3_prepare_v2(sp->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_error(sp, err, "preparing a statement");
    return TW_OK;
}

static void rollback(struct tw_spool *sp)
{
    sqlite3_exec(sp->db, "ROLLBACK", NULL, NULL, NULL);
}

static enum tw_err count_all(struct tw_spool *sp, int64_t *n, int64_t *bytes,
                             struct tw_error *err)
{
    sqlite3_stmt *st;
    if (prepare(sp, "SELECT count(*), coalesce(sum(bytes), 0) FROM reports", &st, err) != TW_OK)
        return err ? err->code : TW_EIO;
    enum tw_err e = TW_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        *n = sqlite3_column_int64(st, 0);
        *bytes = sqlite3_column_int64(st, 1);
    } else {
        e = db_error(sp, err, "counting the reports");
    }
    sqlite3_finalize(st);
    return e;
}

enum tw_err tw_spool_put(struct tw_spool *sp, const char *id, const char *body, size_t len,
                         int64_t now_ms, struct tw_error *err)
{
    if (sqlite3_exec(sp->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_error(sp, err, "starting a transaction");
    sqlite3_stmt *st = NULL;
    enum tw_err e = prepare(sp, "SELECT 1 FROM reports WHERE id = ?1", &st, err);
    if (e != TW_OK)
        goto fail;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    st = NULL;
    if (rc == SQLITE_ROW) { /* already spooled: nothing to do */
        rollback(sp);
        return TW_OK;
    }
    if (rc != SQLITE_DONE) {
        e = db_error(sp, err, "looking up the report");
        goto fail;
    }
    int64_t n = 0, bytes = 0;
    if ((e = count_all(sp, &n, &bytes, err)) != TW_OK)
        goto fail;
    if (n + 1 > sp->max_reports || bytes + (int64_t)len > sp->max_bytes) {
        int64_t rej = 0;
        (void)query_int(sp->db, "SELECT count(*) FROM reports WHERE state = 'rejected'", &rej);
        rollback(sp);
        return tw_error_set(err, TW_ERANGE,
                            "the spool %s is full (%lld reports, %lld bytes, %lld of them "
                            "rejected by the server; the bound is %lld reports or %lld bytes): "
                            "report %s (%zu bytes) is not kept; get the backend reachable, or "
                            "raise --spool-max / --spool-max-bytes",
                            sp->path, (long long)n, (long long)bytes, (long long)rej,
                            (long long)sp->max_reports, (long long)sp->max_bytes, id, len);
    }
    e = prepare(sp, "INSERT INTO reports (id, body, bytes, queued_ms) VALUES (?1, ?2, ?3, ?4)",
                &st, err);
    if (e != TW_OK)
        goto fail;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_blob64(st, 2, body, len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (sqlite3_int64)len);
    sqlite3_bind_int64(st, 4, now_ms);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        e = db_error(sp, err, "storing the report");
        goto fail;
    }
    if (sqlite3_exec(sp->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        e = db_error(sp, err, "committing the report");
        goto fail;
    }
    return TW_OK;
fail:
    rollback(sp);
    return e;
}

void tw_spool_entry_cleanup(struct tw_spool_entry *e)
{
    free(e->body);
    e->body = NULL;
    e->len = 0;
}

enum tw_err tw_spool_oldest(struct tw_spool *sp, struct tw_spool_entry *e, struct tw_error *err)
{
    memset(e, 0, sizeof(*e));
    sqlite3_stmt *st;
    if (prepare(sp,
                "SELECT seq, id, body, queued_ms, attempts, http_status, last_error "
                "FROM reports WHERE state = 'pending' ORDER BY seq LIMIT 1",
                &st, err) != TW_OK)
        return err ? err->code : TW_EIO;
    int rc = sqlite3_step(st);
    enum tw_err res = TW_OK;
    if (rc == SQLITE_ROW) {
        e->seq = sqlite3_column_int64(st, 0);
        snprintf(e->id, sizeof(e->id), "%s", col_text(st, 1));
        const void *b = sqlite3_column_blob(st, 2);
        size_t n = (size_t)sqlite3_column_bytes(st, 2);
        e->body = malloc(n + 1);
        if (!e->body) {
            res = tw_error_set(err, TW_ENOMEM, "out of memory reading a spooled report");
        } else {
            if (n)
                memcpy(e->body, b, n);
            e->body[n] = '\0';
            e->len = n;
        }
        e->queued_ms = sqlite3_column_int64(st, 3);
        e->attempts = sqlite3_column_int(st, 4);
        e->http_status = (long)sqlite3_column_int64(st, 5);
        snprintf(e->last_error, sizeof(e->last_error), "%s",
                 col_text(st, 6));
    } else if (rc == SQLITE_DONE) {
        res = tw_error_set(err, TW_ENOENT, "the spool %s holds no pending report", sp->path);
    } else {
        res = db_error(sp, err, "reading the oldest report");
    }
    sqlite3_finalize(st);
    return res;
}

/* Runs an UPDATE/DELETE on entry SEQ with optional status and message. */
static enum tw_err change(struct tw_spool *sp, const char *sql, int64_t seq, long status,
                          const char *msg, const char *what, struct tw_error *err)
{
    sqlite3_stmt *st;
    if (prepare(sp, sql, &st, err) != TW_OK)
        return err ? err->code : TW_EIO;
    sqlite3_bind_int64(st, 1, seq);
    if (sqlite3_bind_parameter_count(st) >= 3) {
        sqlite3_bind_int64(st, 2, status);
        sqlite3_bind_text(st, 3, msg ? msg : "", -1, SQLITE_STATIC);
    }
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return db_error(sp, err, what);
    return TW_OK;
}

enum tw_err tw_spool_delivered(struct tw_spool *sp, int64_t seq, struct tw_error *err)
{
    return change(sp, "DELETE FROM reports WHERE seq = ?1", seq, 0, NULL,
                  "removing a delivered report", err);
}

enum tw_err tw_spool_failed(struct tw_spool *sp, int64_t seq, long http_status, const char *msg,
                            struct tw_error *err)
{
    return change(sp,
                  "UPDATE reports SET attempts = attempts + 1, http_status = ?2, "
                  "last_error = ?3 WHERE seq = ?1",
                  seq, http_status, msg, "recording a failed delivery", err);
}

enum tw_err tw_spool_reject(struct tw_spool *sp, int64_t seq, long http_status, const char *msg,
                            struct tw_error *err)
{
    return change(sp,
                  "UPDATE reports SET state = 'rejected', attempts = attempts + 1, "
                  "http_status = ?2, last_error = ?3 WHERE seq = ?1",
                  seq, http_status, msg, "setting a rejected report aside", err);
}

enum tw_err tw_spool_retry_rejected(struct tw_spool *sp, int64_t *n, struct tw_error *err)
{
    *n = 0;
    if (sqlite3_exec(sp->db, "UPDATE reports SET state = 'pending' WHERE state = 'rejected'",
                     NULL, NULL, NULL) != SQLITE_OK)
        return db_error(sp, err, "queueing the rejected reports again");
    *n = sqlite3_changes(sp->db);
    return TW_OK;
}

enum tw_err tw_spool_stats(struct tw_spool *sp, struct tw_spool_stats *s, struct tw_error *err)
{
    memset(s, 0, sizeof(*s));
    s->max_reports = sp->max_reports;
    s->max_bytes = sp->max_bytes;
    sqlite3_stmt *st;
    if (prepare(sp,
                "SELECT coalesce(sum(state = 'pending'), 0), coalesce(sum(state = 'rejected'), 0),"
                " coalesce(sum(bytes), 0),"
                " coalesce(min(CASE WHEN state = 'pending' THEN queued_ms END), 0) FROM reports",
                &st, err) != TW_OK)
        return err ? err->code : TW_EIO;
    enum tw_err e = TW_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        s->pending = sqlite3_column_int64(st, 0);
        s->rejected = sqlite3_column_int64(st, 1);
        s->bytes = sqlite3_column_int64(st, 2);
        s->oldest_ms = sqlite3_column_int64(st, 3);
    } else {
        e = db_error(sp, err, "counting the reports");
    }
    sqlite3_finalize(st);
    return e;
}

static void format_ms(int64_t ms, char *out, size_t outlen)
{
    if (!tw_rfc3339_format(ms / 1000, out, outlen))
        snprintf(out, outlen, "%lld", (long long)ms);
}

enum tw_err tw_spool_list(struct tw_spool *sp, json_t **out, struct tw_error *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    if (prepare(sp,
                "SELECT seq, id, state, queued_ms, bytes, attempts, http_status, last_error "
                "FROM reports ORDER BY seq",
                &st, err) != TW_OK)
        return err ? err->code : TW_EIO;
    json_t *arr = json_array();
    enum tw_err e = arr ? TW_OK : tw_error_set(err, TW_ENOMEM, "out of memory listing the spool");
    int rc;
    while (e == TW_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        char when[32];
        format_ms(sqlite3_column_int64(st, 3), when, sizeof(when));
        json_t *o = json_pack(
            "{s:I, s:s, s:s, s:s, s:I, s:I, s:I, s:s}", "seq",
            (json_int_t)sqlite3_column_int64(st, 0), "id",
            col_text(st, 1), "state",
            col_text(st, 2), "queued_at", when, "bytes",
            (json_int_t)sqlite3_column_int64(st, 4), "attempts",
            (json_int_t)sqlite3_column_int64(st, 5), "http_status",
            (json_int_t)sqlite3_column_int64(st, 6), "last_error",
            col_text(st, 7));
        if (!o || json_array_append_new(arr, o) != 0)
            e = tw_error_set(err, TW_ENOMEM, "out of memory listing the spool");
    }
    if (e == TW_OK && rc != SQLITE_DONE)
        e = db_error(sp, err, "listing the reports");
    sqlite3_finalize(st);
    if (e != TW_OK) {
        json_decref(arr);
        return e;
    }
    *out = arr;
    return TW_OK;
}

int64_t tw_spool_backoff_ms(int failures, int64_t base_ms, int64_t max_ms, uint64_t *rng)
{
    if (base_ms < 1)
        base_ms = 1;
    if (max_ms < base_ms)
        max_ms = base_ms;
    int64_t step = base_ms;
    for (int i = 1; i < failures && step < max_ms; i++)
        step = step > max_ms / 2 ? max_ms : step * 2;
    if (step > max_ms)
        step = max_ms;
    uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ULL;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    return step / 2 + (int64_t)(x % (uint64_t)(step - step / 2 + 1));
}

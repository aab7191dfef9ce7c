/* test_durability.c - README "Durability and speed": a 2xx survives a power
 * loss because every handle the store opens runs synchronous=FULL in WAL
 * mode, so a commit returns only after the WAL is fsynced; and that
 * fsync is paid once per batch, not per report.
 *
 * Two looks from outside the store, no seam in it: an SQLite
 * auto-extension hands the test the connection of every handle
 * tw_store_open(_with) opens, to read the pragmas back on it, and a
 * pass-through VFS, registered as the default, counts the syncs of the WAL
 * file while a batch commits. */
#include "testhelp.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/report.h"
#include "store/store.h"
#include "th_store.h"

/* ---- every connection opened ------------------------------------------ */

#define MAX_CONNS 16
static sqlite3 *conns[MAX_CONNS];
static int n_conns;

static int capture_conn(sqlite3 *db, const char **errmsg, const struct sqlite3_api_routines *api)
{
    (void)errmsg;
    (void)api;
    if (n_conns < MAX_CONNS)
        conns[n_conns++] = db;
    return SQLITE_OK;
}

/* ---- a VFS that counts syncs -------------------------------------------- */

static sqlite3_vfs *real_vfs;
static sqlite3_vfs count_vfs;
static int wal_syncs, db_syncs;

struct count_file {
    sqlite3_file base;
    sqlite3_file *real; /* right after this struct, real_vfs->szOsFile bytes */
    int is_wal;
};

#define REAL(f) (((struct count_file *)(f))->real)

static int c_close(sqlite3_file *f)
{
    return REAL(f)->pMethods->xClose(REAL(f));
}
static int c_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xRead(REAL(f), buf, n, off);
}
static int c_write(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xWrite(REAL(f), buf, n, off);
}
static int c_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return REAL(f)->pMethods->xTruncate(REAL(f), size);
}
static int c_sync(sqlite3_file *f, int flags)
{
    if (((struct count_file *)f)->is_wal)
        wal_syncs++;
    else
        db_syncs++;
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}
static int c_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}
static int c_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}
static int c_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}
static int c_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}
static int c_fcntl(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}
static int c_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}
static int c_devchar(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int c_shmmap(sqlite3_file *f, int pg, int sz, int extend, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, p);
}
static int c_shmlock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}
static void c_shmbarrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}
static int c_shmunmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}
static int c_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, p);
}
static int c_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods count_io = {
    3,         c_close,    c_read,       c_write,   c_truncate, c_sync,
    c_size,    c_lock,     c_unlock,     c_reserved, c_fcntl,   c_sector,
    c_devchar, c_shmmap,   c_shmlock,    c_shmbarrier, c_shmunmap, c_fetch,
    c_unfetch,
};

static int c_open(sqlite3_vfs *vfs, sqlite3_filename name, sqlite3_file *f, int flags,
                  int *out_flags)
{
    (void)vfs;
    struct count_file *cf = (struct count_file *)f;
    cf->real = (sqlite3_file *)(cf + 1);
    cf->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
    int rc = real_vfs->xOpen(real_vfs, name, cf->real, flags, out_flags);
    /* SQLite closes a file whose pMethods is set, even after a failure. */
    cf->base.pMethods = cf->real->pMethods ? &count_io : NULL;
    return rc;
}

static void install_count_vfs(void)
{
    if (real_vfs)
        return;
    real_vfs = sqlite3_vfs_find(NULL);
    assert_non_null(real_vfs);
    assert_true(real_vfs->iVersion >= 1);
    count_vfs = *real_vfs;
    count_vfs.zName = "tierwise-count";
    count_vfs.szOsFile = (int)sizeof(struct count_file) + real_vfs->szOsFile;
    count_vfs.xOpen = c_open;
    count_vfs.pNext = NULL;
    assert_int_equal(sqlite3_vfs_register(&count_vfs, 1), SQLITE_OK);
}

/* ---- helpers -------------------------------------------------------------- */

static long long pragma(sqlite3 *db, const char *sql, char *text, size_t text_len)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    long long v = sqlite3_column_int64(st, 0);
    if (text)
        snprintf(text, text_len, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* Opens PATH (a writer's handle when WRITER) and checks its connection. */
static struct tw_store *open_checked(const char *path, bool writer)
{
    n_conns = 0;
    struct tw_store *st;
    struct tw_error err = {0};
    struct tw_store_open_opts o = {.writer = writer};
    if (tw_store_open_with(path, &o, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* The handle's own connection is opened first.  A writer's handle has
     * a second one, its checkpointer's, used by a thread of its own
     * without a mutex: not to be queried from here. */
    assert_true(n_conns >= 1);
    char mode[16];
    /* 2 is FULL: NORMAL (1) in WAL mode leaves the last commits to the
     * next checkpoint's fsync, OFF (0) to the kernel. */
    long long sync = pragma(conns[0], "PRAGMA synchronous", NULL, 0);
    if (sync != 2)
        fail_msg("%s%s: synchronous is %lld, not FULL (2)", path, writer ? " (writer)" : "", sync);
    pragma(conns[0], "PRAGMA journal_mode", mode, sizeof(mode));
    assert_string_equal(mode, "wal");
    assert_int_equal(pragma(conns[0], "PRAGMA foreign_keys", NULL, 0), 1);
    return st;
}

static void test_every_connection_syncs_fully(void **state)
{
    (void)state;
    assert_int_equal(sqlite3_auto_extension((void (*)(void))capture_conn), SQLITE_OK);
    char *dir = th_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/tw.db", dir);
    struct tw_store *st = open_checked(path, false); /* a new file: created and migrated */
    struct tw_store *again = open_checked(path, false); /* an existing one, beside the first */
    tw_store_close(again);
    tw_store_close(st);
    st = open_checked(path, true); /* the server's writer */
    tw_store_close(st);
    st = open_checked(path, false); /* alone, reopened */
    tw_store_close(st);
    sqlite3_cancel_auto_extension((void (*)(void))capture_conn);
    th_rmtree(dir);
    free(dir);
}

static void test_a_batch_is_one_wal_fsync(void **state)
{
    (void)state;
    install_count_vfs();
    size_t len;
    char *doc = th_fixture("reports/web-03.json", &len);
    enum { N = 10 };
    struct tw_report *reps[N + 1];
    const char *raw[N + 1];
    size_t raw_len[N + 1];
    for (int i = 0; i <= N; i++) {
        struct tw_error e = {0};
        reps[i] = tw_report_new();
        assert_non_null(reps[i]);
        assert_int_equal(tw_report_from_json(doc, len, reps[i], &e), TW_OK);
        snprintf(reps[i]->id, sizeof(reps[i]->id), "00000000-0000-4000-8000-%012d", i + 1);
        raw[i] = doc;
        raw_len[i] = len;
    }
    char *dir = th_tmpdir();
    char path[4200];
    snprintf(path, sizeof(path), "%s/tw.db", dir);
    struct tw_store *st;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(path, &st, &err), TW_OK);
    enum tw_put_status status[N + 1];
    struct tw_error errs[N + 1];
    /* A first report starts the WAL (its header is synced too). */
    assert_int_equal(tw_store_put_reports(st, (const struct tw_report *const *)reps, raw, raw_len,
                                          1, "2026-12-01T00:00:00Z", status, errs, &err),
                     TW_OK);
    assert_int_equal(status[0], TW_PUT_STORED);

    /* Ten reports in one batch: the commit returns after one fsync of the
     * WAL, and the database file itself is not synced (no checkpoint). */
    wal_syncs = db_syncs = 0;
    assert_int_equal(tw_store_put_reports(st, (const struct tw_report *const *)reps + 1, raw + 1,
                                          raw_len + 1, N, "2026-12-01T00:00:01Z", status, errs,
                                          &err),
                     TW_OK);
    for (int i = 0; i < N; i++)
        assert_int_equal(status[i], TW_PUT_STORED);
    assert_int_equal(wal_syncs, 1);
    assert_int_equal(db_syncs, 0);

    /* A batch of repeats changes nothing and syncs nothing extra: at most
     * the one commit. */
    wal_syncs = 0;
    assert_int_equal(tw_store_put_reports(st, (const struct tw_report *const *)reps + 1, raw + 1,
                                          raw_len + 1, N, "2026-12-01T00:00:02Z", status, errs,
                                          &err),
                     TW_OK);
    assert_int_equal(status[0], TW_PUT_REPEAT);
    assert_true(wal_syncs <= 1);

    tw_store_close(st);
    for (int i = 0; i <= N; i++)
        tw_report_free(reps[i]);
    free(doc);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    /* All of it is SQLite's own: its pragmas, its WAL file, its VFS. */
    if (th_store_pg()) {
        fprintf(stderr, "skipped: the durability checks are SQLite's (WAL, synchronous, VFS); "
                        "a PostgreSQL store's are the server's settings\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_connection_syncs_fully),
        cmocka_unit_test(test_a_batch_is_one_wal_fsync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

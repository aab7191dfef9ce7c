/* test_rejudge.c - the server keeps the kept verdicts standing: on a store
 * migrated from version 1 (no verdict kept), its worker judges every VM's
 * latest results again at the start and keeps them, so the summary counts
 * kept verdicts; then it stops with nothing left running. */
#include "testhelp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

static int kept(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *q;
    int n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h,
                           "SELECT count(*) FROM result_latest l JOIN vms v ON v.id = l.vm_id "
                           "WHERE l.verdict IS NOT NULL AND l.verdict_report = v.last_report_id",
                           -1, &q, NULL) == SQLITE_OK) {
        if (sqlite3_step(q) == SQLITE_ROW)
            n = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
    }
    sqlite3_close(h);
    return n;
}

static void test_kept_at_start(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char db[4200];
    snprintf(db, sizeof(db), "%s/v1.db", dir);
    th_fixture_copy("store/v1.db", db);
    struct tw_server_options o = {.db_path = db, .listen = "127.0.0.1:0", .threads = 2};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    assert_int_equal(tw_server_start(&o, &srv, &err), TW_OK);
    /* v1.db's last report of sap-db-01 has no results: its 2 latest
     * results are judged against that report's inventory; all 7 kept. */
    int n = 0;
    for (int i = 0; i < 100 && (n = kept(db)) != 7; i++)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_int_equal(n, 7);
    tw_server_stop(srv, 1000);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_at_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_savings_fleet.c - tierwise savings --db --policy --month writing to
 * a stdout whose first write fails and whose later ones succeed (a full
 * disk that is freed, a pipe that was full): the flush at the end then
 * succeeds, and only the stream's error flag says that output was lost.
 * Each form (text, CSV, JSON) must exit 1 then, and 0 when every write
 * goes through. */
#include "testhelp.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/store.h"

struct fx {
    char *dir;
    char db[4096], policy[4096];
};

/* The writes of the stream: the first FAIL_FIRST fail, the rest land. */
struct sink {
    int calls, fail_first;
    size_t bytes;
};

static ssize_t sink_write(void *c, const char *buf, size_t n)
{
    (void)buf;
    struct sink *s = c;
    if (s->calls++ < s->fail_first) {
        errno = ENOSPC;
        return -1;
    }
    s->bytes += n;
    return (ssize_t)n;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->db, sizeof(f->db), "%s/tw.db", f->dir);
    snprintf(f->policy, sizeof(f->policy), "%s/p.json", f->dir);
    struct tw_store *st;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(f->db, &st, &err), TW_OK);
    const char *items =
        "[{\"currencyCode\":\"GBP\",\"tierMinimumUnits\":0,\"retailPrice\":16.16,"
        "\"unitPrice\":16.16,\"armRegionName\":\"westeurope\",\"location\":\"EU West\","
        "\"effectiveStartDate\":\"2020-01-01T00:00:00Z\",\"meterName\":\"P10 LRS Disk\","
        "\"productName\":\"Premium SSD Managed Disks\",\"skuName\":\"P10 LRS\","
        "\"serviceName\":\"Storage\",\"unitOfMeasure\":\"1/Month\",\"type\":\"Consumption\"},"
        "{\"currencyCode\":\"GBP\",\"tierMinimumUnits\":0,\"retailPrice\":7.16,"
        "\"unitPrice\":7.16,\"armRegionName\":\"westeurope\",\"location\":\"EU West\","
        "\"effectiveStartDate\":\"2020-01-01T00:00:00Z\",\"meterName\":\"E10 LRS Disk\","
        "\"productName\":\"Standard SSD Managed Disks\",\"skuName\":\"E10 LRS\","
        "\"serviceName\":\"Storage\",\"unitOfMeasure\":\"1/Month\",\"type\":\"Consumption\"}]";
    if (tw_store_pricebook_put(st, "westeurope", "GBP", "test", "2026-11-01T00:00:00Z", items,
                               strlen(items), &err) != TW_OK)
        fail_msg("%s", err.msg);
    tw_store_close(st);
    /* One VM with 40 Premium data disks: some 8 KiB of text. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
    char *msg = NULL;
    const char *q =
        "INSERT INTO vms(id, identity, name, subscription_id, resource_group, location, "
        "vm_size, tags, last_report_id, last_report_at, last_report_ms) VALUES (1, 'vm:a', "
        "'vm-a', 'sub-1', 'rg-1', 'westeurope', 'Standard_D4s_v3', '{}', 'r1', "
        "'2026-11-20T00:00:00Z', 1795132800000);"
        "WITH RECURSIVE k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < 40) "
        "INSERT INTO disks(id, identity, vm_id, name, role, lun, sku, size_gib, tier, caching, "
        "last_seen_at, last_seen_ms, position, max_shares, bursting) SELECT j, 'd' || j, 1, "
        "'disk-' || j, 'data', j, 'Premium_LRS', 128, 'P10', 'None', '2026-11-20T00:00:00Z', "
        "1795132800000, j, 1, 0 FROM k";
    if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s", msg);
    sqlite3_close(db);
    FILE *p = fopen(f->policy, "w");
    assert_non_null(p);
    fputs("{\"schema_version\": \"tierwise.policy/1\", \"name\": \"w\", \"match\": {},\n"
          " \"target\": \"StandardSSD_LRS\", \"windows\": [\"Sat 00:00-Mon 00:00\"],\n"
          " \"margins\": {\"after_deallocate_minutes\": 0, \"before_start_minutes\": 0}}\n",
          p);
    fclose(p);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* The command's status with stdout a stream whose first FAIL_FIRST writes
 * fail; *BYTES gets what landed. */
static int run(struct fx *f, const char *form, int fail_first, size_t *bytes)
{
    struct sink s = {.fail_first = fail_first};
    cookie_io_functions_t io = {.write = sink_write};
    FILE *out = fopencookie(&s, "w", io);
    assert_non_null(out);
    static char vbuf[512];
    setvbuf(out, vbuf, _IOFBF, sizeof(vbuf)); /* the first write comes early */
    char *argv[] = {"savings", "--db", f->db, "--policy", f->policy, "--month", "2026-12",
                    (char *)form, NULL};
    int argc = form ? 8 : 7;
    FILE *saved = stdout;
    fflush(stdout);
    stdout = out;
    int status = tw_cli_savings_fleet(argc, argv);
    stdout = saved;
    fclose(out);
    *bytes = s.bytes;
    return status;
}

static void test_lost_write(void **state)
{
    struct fx *f = *state;
    const char *forms[] = {NULL, "--csv", "--json"};
    for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
        size_t bytes = 0;
        assert_int_equal(run(f, forms[i], 0, &bytes), 0);
        assert_true(bytes > 2048);
        size_t some = 0;
        int status = run(f, forms[i], 1, &some);
        if (status != 1)
            fail_msg("%s: a lost write exits %d, want 1", forms[i] ? forms[i] : "text", status);
        /* Text and CSV went on writing (the JSON writer stops at once). */
        if (forms[i] && strcmp(forms[i], "--json") == 0)
            continue;
        if (!(some > 0 && some < bytes))
            fail_msg("%s: %zu of %zu bytes landed", forms[i] ? forms[i] : "text", some, bytes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_write, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_copy.c - tw_store_copy (store_copy.c) on either store (TW_TEST_STORE=pg
 * for PostgreSQL): the checksum is FNV-1a over the canonical encoding
 * store_copy.h documents, recomputed here by hand for VM sizes whose
 * names sort one way by bytes and another without case; an empty store
 * copies as 17 empty tables with FNV's start as checksum; the copy's ids
 * and rows arrive; a second copy into the filled target is refused naming
 * the first table with rows. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fnv.h"
#include "store/store_copy.h"
#include "th_store.h"

static const struct tw_store_copy_table *entry(const struct tw_store_copy_result *r,
                                               const char *name)
{
    for (size_t i = 0; i < r->n_tables; i++)
        if (strcmp(r->tables[i].name, name) == 0)
            return &r->tables[i];
    fail_msg("no table %s in the copy", name);
    return NULL;
}

static uint64_t text(uint64_t h, const char *s)
{
    char head[32];
    int n = snprintf(head, sizeof(head), "T%zu:", strlen(s));
    h = tw_fnv_bytes(h, head, (size_t)n);
    return tw_fnv_bytes(h, s, strlen(s));
}

static void test_copy(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char from[4096], to[4096];
    th_store_location(dir, "from.db", from, sizeof(from));
    th_store_location(dir, "to.db", to, sizeof(to));
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    if (tw_store_open(from, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    /* "b" after "A" by bytes ('A' 0x41 < 'b' 0x62), and after "B" too. */
    struct tw_store_vm_size rows[] = {{"b", (char *)"{}"}, {"A", (char *)"{\"iops\":500}"}};
    if (tw_store_vm_sizes_put(st, "westeurope", "test", "2026-11-01T00:00:00Z", rows, 2, &err) !=
        TW_OK)
        fail_msg("%s", err.msg);
    tw_store_close(st);

    struct tw_store_copy_result *r = calloc(1, sizeof(*r));
    if (tw_store_copy(from, to, r, NULL, NULL, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_true(r->verified);
    assert_int_equal(r->n_tables, tw_copy_n_tables);
    assert_int_equal(r->n_tables, 17);
    assert_int_equal(r->rows, 2);

    /* The encoding of store_copy.h, by hand: region, name, caps, source,
     * fetched_at, fetched_ms, each row ending in a line end. */
    const char *names[] = {"A", "b"}, *caps[] = {"{\"iops\":500}", "{}"};
    uint64_t h = TW_FNV_START;
    for (int i = 0; i < 2; i++) {
        h = text(h, "westeurope");
        h = text(h, names[i]);
        h = text(h, caps[i]);
        h = text(h, "test");
        h = text(h, "2026-11-01T00:00:00Z");
        h = tw_fnv_bytes(h, "I1793491200000;\n", 16);
    }
    const struct tw_store_copy_table *v = entry(r, "vm_sizes");
    assert_int_equal(v->rows, 2);
    assert_true(v->match);
    assert_true(v->checksum == h);
    assert_true(v->target_checksum == h);
    /* Every other table empty: FNV's start, read back the same. */
    for (size_t i = 0; i < r->n_tables; i++) {
        if (&r->tables[i] == v)
            continue;
        assert_int_equal(r->tables[i].rows, 0);
        assert_true(r->tables[i].checksum == TW_FNV_START);
        assert_true(r->tables[i].match);
    }

    /* The rows arrived, and the filled target is refused next time. */
    if (tw_store_open(to, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    struct tw_store_vm_size *got = NULL;
    size_t n = 0;
    if (tw_store_vm_sizes_get(st, "westeurope", &got, &n, NULL, 0, NULL, 0, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(n, 2);
    tw_store_vm_sizes_free(got, n);
    tw_store_close(st);
    assert_int_equal(tw_store_copy(from, to, r, NULL, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "already holds rows in table vm_sizes"));
    assert_int_equal(tw_store_copy(from, from, r, NULL, NULL, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "same database"));
    free(r);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

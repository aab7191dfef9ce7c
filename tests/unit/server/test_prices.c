/* test_prices.c - price books for the backend: refresh into the store
 * (one transaction: a failure midway leaves the stored book as it was),
 * import, the snapshot fallback, the JSON of GET /api/v1/prices, the HTTP
 * statuses of the failures, and the fleet's books kept fresh (serve
 * --prices-refresh's walk).  On PostgreSQL too (unit/server/prices/pg). */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../azure/fakesrv.h"
#include "server/prices_status.h"
#include "core/time.h"
#include "service/fleet.h"
#include "service/prices.h"
#include "th_store.h"

struct env {
    char *dir;
    char path[512];
    struct tw_store *st;
};

static int setup(void **state)
{
    struct env *e = calloc(1, sizeof(*e));
    if (!e)
        return -1;
    e->dir = th_tmpdir();
    th_store_location(e->dir, "tw.db", e->path, sizeof(e->path));
    struct tw_error err = {0};
    if (tw_store_open(e->path, &e->st, &err) != TW_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return -1;
    }
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    struct env *e = *state;
    tw_store_close(e->st);
    th_rmtree(e->dir);
    free(e->dir);
    free(e);
    return 0;
}

static struct tw_az_http_opts http_opts(void)
{
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    o.loopback_only = true;
    o.max_attempts = 1;
    return o;
}

static double p15(json_t *j)
{
    json_t *p = json_array_get(json_object_get(j, "prices"), 0);
    return json_real_value(json_object_get(p, "per_month"));
}

static void test_refresh_is_one_transaction(void **state)
{
    struct env *e = *state;
    size_t len;
    char *page = th_fixture("prices/real-p15-eastus-usd.json", &len);
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, page, NULL, 0}, {0}});
    assert_non_null(s);
    struct tw_az_http_opts o = http_opts();
    struct tw_svc_refresh rq = {
        .prices_url = s->base, .region = "EastUS", .currency = "usd", .http = &o};
    struct tw_svc_refresh_result res;
    struct tw_error err = {0};
    if (tw_svc_prices_refresh(e->st, &rq, &res, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(res.items, 2);
    assert_int_equal(res.prices, 2);
    json_t *j;
    assert_int_equal(tw_svc_prices_show(e->st, "eastus", "USD", "P15", &j, &err), TW_OK);
    char want[128];
    snprintf(want, sizeof(want), "api %s", s->base);
    assert_string_equal(json_string_value(json_object_get(j, "source")), want);
    char fetched[32];
    snprintf(fetched, sizeof(fetched), "%s", json_string_value(json_object_get(j, "fetched_at")));
    assert_true(p15(j) == 38.012142);
    json_decref(j);

    /* Page 1 fine, page 2 not JSON: an error, and the book stays. */
    char link[256];
    snprintf(link, sizeof(link), "%s/api/retail/prices?$skip=2", s->base);
    char *p1 = malloc(len + 256);
    assert_non_null(p1);
    snprintf(p1, len + 256, "%s", page);
    char *nl = strstr(p1, "\"NextPageLink\": null");
    assert_non_null(nl);
    snprintf(nl, len + 256 - (size_t)(nl - p1), "\"NextPageLink\": \"%s\", \"Count\": 2}", link);
    fs_script(s, (struct fs_reply[]){{200, p1, NULL, 0}, {200, "{\"Items\": [", NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh(e->st, &rq, &res, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "page 2"));
    unsigned st = tw_srv_prices_status(TW_EPARSE, NULL);
    assert_int_equal(st, 502);
    /* The API failing outright: the same. */
    fs_script(s, (struct fs_reply[]){
                     {500, "{\"Error\": {\"Code\": \"X\", \"Message\": \"down\"}}", NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh(e->st, &rq, &res, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "X: down"));
    /* Nothing usable in the answer: nothing stored. */
    fs_script(s,
              (struct fs_reply[]){{200, "{\"Items\": [], \"NextPageLink\": null}", NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh(e->st, &rq, &res, &err), TW_ENOENT);
    assert_int_equal(tw_svc_prices_show(e->st, "eastus", "USD", "P15", &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "fetched_at")), fetched);
    assert_true(p15(j) == 38.012142);
    /* The Mount meter stayed the shared-disk fee. */
    json_t *p = json_array_get(json_object_get(j, "prices"), 0);
    assert_true(json_real_value(json_object_get(p, "shared_mount_per_month")) == 1.825);
    json_decref(j);
    free(p1);
    free(page);
    fs_stop(s);
}

static void test_import_and_fallback(void **state)
{
    struct env *e = *state;
    struct tw_error err = {0};
    json_t *j;
    /* No stored book: the snapshot, and it says so. */
    assert_int_equal(tw_svc_prices_show(e->st, "uksouth", "GBP", NULL, &j, &err), TW_OK);
    const char *src = json_string_value(json_object_get(j, "source"));
    assert_non_null(strstr(src, "snapshot pricing/azure-disk-prices.json"));
    json_decref(j);
    assert_int_equal(tw_svc_prices_show(NULL, "westeurope", "USD", "P10", &j, &err), TW_OK);
    json_decref(j);
    /* Import a real GBP answer: it takes over from the snapshot. */
    size_t len;
    char *doc = th_fixture("prices/real-p6-uksouth-gbp.json", &len);
    struct tw_svc_refresh_result res;
    assert_int_equal(tw_svc_prices_import(e->st, doc, len, "p6.json", &res, &err), TW_OK);
    free(doc);
    assert_int_equal(res.books, 1);
    assert_int_equal(tw_svc_prices_show(e->st, "uksouth", "GBP", NULL, &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "source")), "import p6.json");
    assert_int_equal(json_array_size(json_object_get(j, "prices")), 1);
    json_decref(j);
    /* The P10 of the snapshot is not in the imported book: missing, 404. */
    enum tw_err rc = tw_svc_prices_show(e->st, "uksouth", "GBP", "P10", &j, &err);
    assert_int_equal(rc, TW_ENOENT);
    const char *code;
    assert_int_equal(tw_srv_prices_status(rc, &code), 404);
    assert_string_equal(code, "price_missing");
    /* An error body is not prices: 400 for an import. */
    doc = th_fixture("prices/real-error-odata.json", &len);
    rc = tw_svc_prices_import(e->st, doc, len, "err.json", &res, &err);
    free(doc);
    assert_int_not_equal(rc, TW_OK);
    assert_int_equal(tw_srv_prices_import_status(rc, &code), 400);
    rc = tw_svc_prices_import(e->st, "[1]", 3, "bad.json", &res, &err);
    assert_int_equal(rc, TW_EPARSE);
    assert_int_equal(tw_srv_prices_import_status(rc, &code), 400);
    assert_string_equal(code, "bad_request");
}

/* A VM of the fleet in REGION (SUB "" for none). */
static void add_vm(const char *path, const char *name, const char *region, const char *sub)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "INSERT INTO vms(identity, name, subscription_id, location, vm_size, last_report_id,"
             " last_report_at, last_report_ms) VALUES ('id-%s', '%s', '%s', '%s', "
             "'Standard_D2s_v3', 'r-%s', '2026-11-01T00:00:00Z', 1793491200000)",
             name, name, sub, region, name);
    th_sql_exec(path, sql);
}

static bool never(void *arg)
{
    (void)arg;
    return false;
}

static bool always(void *arg)
{
    (void)arg;
    return true;
}

/* serve --prices-refresh's walk: each region of the fleet once, in each
 * currency the store has books in (USD without any), fetched only when
 * its book is not a fresh one from the API; a failing book is counted
 * and kept, and the others go on. */
static void test_refresh_fleet(void **state)
{
    struct env *e = *state;
    size_t len;
    char *page = th_fixture("prices/real-p15-eastus-usd.json", &len);
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, page, NULL, 0}, {0}});
    assert_non_null(s);
    struct tw_az_http_opts o = http_opts();
    struct tw_svc_refresh rq = {.prices_url = s->base, .region = "ignored", .http = &o};
    struct tw_svc_prices_fleet_report rep;
    struct tw_error err = {0};

    /* No VM: nothing to fetch. */
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 86400, never, NULL, &rep, &err),
                     TW_OK);
    assert_int_equal(rep.books, 0);
    assert_int_equal(fs_requests(s), 0);

    /* Three VMs in eastus (spelt three ways, one without a subscription:
     * a region's prices are everyone's) and one without a location: one
     * book, USD, fetched. */
    add_vm(e->path, "a", "eastus", "5a1e0000-7e57-4d3e-a000-000000000001");
    add_vm(e->path, "b", "EastUS", "5a1e0000-7e57-4d3e-a000-000000000001");
    add_vm(e->path, "c", "EASTUS", "");
    add_vm(e->path, "d", "", "5a1e0000-7e57-4d3e-a000-000000000001");
    if (tw_svc_prices_refresh_fleet(e->st, &rq, 86400, never, NULL, &rep, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(rep.books, 1);
    assert_int_equal(rep.refreshed, 1);
    assert_int_equal(rep.failed, 0);
    assert_int_equal(fs_requests(s), 1);
    json_t *j;
    assert_int_equal(tw_svc_prices_show(e->st, "eastus", "USD", "P15", &j, &err), TW_OK);
    char want[128];
    snprintf(want, sizeof(want), "api %s", s->base);
    assert_string_equal(json_string_value(json_object_get(j, "source")), want);
    json_decref(j);

    /* Fresh within the age: not fetched again.  Age 0: fetched again. */
    fs_script(s, (struct fs_reply[]){{200, page, NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 86400, NULL, NULL, &rep, &err),
                     TW_OK);
    assert_int_equal(rep.fresh, 1);
    assert_int_equal(rep.refreshed, 0);
    assert_int_equal(fs_requests(s), 0);
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 0, NULL, NULL, &rep, &err), TW_OK);
    assert_int_equal(rep.refreshed, 1);
    assert_int_equal(fs_requests(s), 1);

    /* A book imported in GBP (of another region) brings its currency in:
     * eastus GBP is asked for too, and the page answered (USD) is
     * refused: failed, counted, said; eastus USD stays fresh. */
    char *gbp = th_fixture("prices/real-p6-uksouth-gbp.json", &len);
    struct tw_svc_refresh_result res;
    assert_int_equal(tw_svc_prices_import(e->st, gbp, len, "p6.json", &res, &err), TW_OK);
    free(gbp);
    fs_script(s, (struct fs_reply[]){{200, page, NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 86400, NULL, NULL, &rep, &err),
                     TW_OK);
    assert_int_equal(rep.books, 2);
    assert_int_equal(rep.fresh, 1);
    assert_int_equal(rep.failed, 1);
    assert_int_equal(rep.refreshed, 0);
    assert_non_null(strstr(rep.first_error, "eastus GBP: "));
    assert_non_null(strstr(rep.first_error, "in USD but GBP was asked for"));

    /* A region whose VMs name no subscription: its prices count (the VM
     * sizes' walk, per subscription, leaves it out). */
    add_vm(e->path, "w", "westus", "");
    struct tw_svc_place *pl = NULL;
    size_t np = 0;
    assert_int_equal(tw_svc_fleet_places(e->st, false, &pl, &np, &err), TW_OK);
    assert_int_equal(np, 2);
    assert_string_equal(pl[1].region, "westus");
    free(pl);
    assert_int_equal(tw_svc_fleet_places(e->st, true, &pl, &np, &err), TW_OK);
    assert_int_equal(np, 1);
    assert_string_equal(pl[0].region, "eastus");
    free(pl);

    /* The API down: two books in a row failed outright, the walk ends
     * there (an outage costs two books' retries, not one per book), the
     * stored books kept. */
    fs_script(s, (struct fs_reply[]){
                     {500, "{\"Error\": {\"Code\": \"X\", \"Message\": \"down\"}}", NULL, 0},
                     {0}});
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 0, NULL, NULL, &rep, &err), TW_OK);
    assert_int_equal(rep.books, 4);
    assert_int_equal(rep.failed, 2);
    assert_int_equal(rep.not_tried, 2);
    assert_int_equal(fs_requests(s), 2);
    assert_non_null(strstr(rep.first_error, "X: down"));
    assert_int_equal(tw_svc_prices_show(e->st, "eastus", "USD", "P15", &j, &err), TW_OK);
    assert_string_equal(json_string_value(json_object_get(j, "source")), want);
    json_decref(j);

    /* One book failing outright alone (the first) does not keep the
     * others from being tried: eastus USD is fetched after it. */
    fs_script(s, (struct fs_reply[]){
                     {500, "{\"Error\": {\"Code\": \"X\", \"Message\": \"down\"}}", NULL, 0},
                     {200, page, NULL, 0},
                     {0}});
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 0, NULL, NULL, &rep, &err), TW_OK);
    assert_int_equal(rep.not_tried, 0);
    assert_int_equal(rep.refreshed, 1);
    assert_int_equal(rep.failed, 3);
    assert_int_equal(fs_requests(s), 4);
    assert_non_null(strstr(rep.first_error, "eastus GBP: "));

    /* A book a little ahead of this clock (another backend's) is fresh;
     * one further ahead (a clock set back) is fetched again. */
    for (int ahead = 200; ahead <= 400; ahead += 200) {
        char at[32];
        assert_true(tw_rfc3339_format(time(NULL) + ahead, at, sizeof(at)));
        assert_int_equal(
            tw_store_pricebook_put(e->st, "eastus", "USD", want, at, "[]", 2, &err), TW_OK);
        fs_script(s, (struct fs_reply[]){{200, page, NULL, 0}, {0}});
        assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 86400, NULL, NULL, &rep, &err),
                         TW_OK);
        assert_int_equal(rep.fresh, ahead == 200 ? 1 : 0);
    }

    /* Stopping: nothing more is fetched. */
    fs_script(s, (struct fs_reply[]){{200, page, NULL, 0}, {0}});
    assert_int_equal(tw_svc_prices_refresh_fleet(e->st, &rq, 0, always, NULL, &rep, &err), TW_OK);
    assert_true(rep.stopped);
    assert_int_equal(rep.refreshed + rep.failed + rep.fresh, 0);
    assert_int_equal(fs_requests(s), 0);
    free(page);
    fs_stop(s);
}

static void test_bad_parameters(void **state)
{
    struct env *e = *state;
    struct tw_error err = {0};
    json_t *j;
    const char *code;
    assert_int_equal(tw_svc_prices_show(e->st, "west europe", "USD", NULL, &j, &err), TW_EINVAL);
    assert_int_equal(tw_srv_prices_status(TW_EINVAL, &code), 400);
    assert_int_equal(tw_svc_prices_show(e->st, "westeurope", "EURO", NULL, &j, &err), TW_EINVAL);
    assert_int_equal(tw_svc_prices_show(e->st, "westeurope", NULL, NULL, &j, &err), TW_EINVAL);
    assert_int_equal(tw_svc_prices_show(e->st, "westeurope", "USD", "", &j, &err), TW_EINVAL);
    assert_int_equal(tw_srv_prices_status(TW_EPERM, &code), 502);
    assert_string_equal(code, "upstream_refused");
    assert_int_equal(tw_srv_prices_status(TW_ENOMEM, &code), 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refresh_is_one_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(test_import_and_fallback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_parameters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refresh_fleet, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_vmsizes.c - ARM's VM sizes refreshed from a fake IMDS and ARM on
 * loopback: the token asked of the managed identity and sent to ARM, each
 * region of the fleet stored and held, a refusal kept out of the store;
 * and the server's refresh job, which runs at start when an ARM endpoint is
 * given, serves the sizes to verdicts and is cancelled by the stop. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../azure/fakesrv.h"
#include "server/server_int.h"
#include "service/compliance.h"
#include "service/vmsizes.h"

static const char token[] =
    "{\"access_token\": \"tok-1\", \"expires_in\": \"3599\", \"token_type\": \"Bearer\", "
    "\"resource\": \"https://management.azure.com/\"}";

/* A Resource SKUs page with Standard_E16ds_v5 at IOPS. */
static char *skus_page(int iops)
{
    char *s = malloc(1024);
    assert_non_null(s);
    snprintf(s, 1024,
             "{\"value\": [{\"resourceType\": \"virtualMachines\", \"name\": "
             "\"Standard_E16ds_v5\", \"capabilities\": ["
             "{\"name\": \"UncachedDiskIOPS\", \"value\": \"%d\"},"
             "{\"name\": \"UncachedDiskBytesPerSecond\", \"value\": \"629145600\"},"
             "{\"name\": \"PremiumIO\", \"value\": \"True\"}]},"
             "{\"resourceType\": \"virtualMachines\", \"name\": \"Standard_A0\", "
             "\"capabilities\": [{\"name\": \"PremiumIO\", \"value\": \"False\"}]}], "
             "\"nextLink\": null}",
             iops);
    return s;
}

static char *copy_db(char **dir)
{
    *dir = th_tmpdir();
    char *path = malloc(4096);
    assert_non_null(path);
    snprintf(path, 4096, "%s/v1.db", *dir);
    th_fixture_copy("store/v1.db", path); /* VMs in westeurope and northeurope */
    return path;
}

static void test_refresh_fleet(void **state)
{
    (void)state;
    char *dir, *path = copy_db(&dir);
    struct tw_store *st;
    struct tw_error err = {0};
    assert_int_equal(tw_store_open(path, &st, &err), TW_OK);
    char *page = skus_page(30000);
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, token, NULL, 0},
                                                     {200, page, NULL, 0},
                                                     {200, page, NULL, 0},
                                                     {0}});
    assert_non_null(s);
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    o.loopback_only = true;
    struct tw_svc_arm arm = {.arm_url = s->base, .imds_url = s->base, .http = &o};
    struct tw_svc_vmsizes *vs = tw_svc_vmsizes_new();
    struct tw_svc_vmsizes_report rep;
    if (tw_svc_vmsizes_refresh_fleet(st, &arm, vs, NULL, NULL, &rep, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(fs_requests(s), 3); /* one token, one page per region */
    assert_int_equal(rep.regions, 2);
    assert_int_equal(rep.refreshed, 2);
    assert_int_equal(rep.sizes, 4);
    assert_string_equal(s->authorization, "Bearer tok-1");
    assert_string_equal(s->path, "/subscriptions/3f2b8c1e-7d4a-4e5b-9c6d-0a1b2c3d4e5f/providers/"
                                 "Microsoft.Compute/skus");
    assert_int_equal(tw_svc_vmsizes_regions(vs), 2);
    assert_int_equal(tw_svc_vmsizes_count(vs, "westeurope"), 2);

    /* Stored: a fresh copy reads the same from the store. */
    struct tw_svc_vmsizes *again = tw_svc_vmsizes_new();
    assert_int_equal(tw_svc_vmsizes_load_fleet(again, st, &err), TW_OK);
    struct tw_vmcap buf;
    char why[512];
    const struct tw_vmcap *c =
        tw_svc_vmcap_pick(again, NULL, "northeurope", "standard_e16ds_v5", &buf, why, 512);
    assert_non_null(c);
    assert_int_equal(c->iops, 30000);
    assert_int_equal(c->bytes_per_s, 600000000); /* 600 x 2^20 read as 600 MB/s */
    assert_int_equal(c->premium, TW_VMCAP_PREMIUM_YES);
    assert_null(tw_svc_vmcap_pick(again, NULL, "northeurope", "Standard_A0", &buf, why, 512));
    if (!strstr(why, "list it without uncached disk limits"))
        fail_msg("why: %s", why);
    tw_svc_vmsizes_unref(again);

    /* ARM refuses the token for the next refresh: nothing stored, the
     * sizes held stay, and the why says what happened. */
    fs_script(s, (struct fs_reply[]){
                     {200, token, NULL, 0},
                     {403, "{\"error\": {\"code\": \"AuthorizationFailed\", \"message\": \"no\"}}",
                      NULL, 0},
                     {0}});
    assert_int_not_equal(tw_svc_vmsizes_refresh_fleet(st, &arm, vs, NULL, NULL, &rep, &err),
                         TW_OK);
    assert_int_equal(rep.failed, 2);
    assert_non_null(strstr(rep.first_error, "AuthorizationFailed"));
    assert_int_equal(tw_svc_vmsizes_count(vs, "westeurope"), 2);
    c = tw_svc_vmcap_pick(vs, NULL, "westeurope", "Standard_E16ds_v5", &buf, why, 512);
    assert_non_null(c);
    assert_int_equal(c->iops, 30000);

    /* No token from IMDS: every region says so. */
    fs_script(s, (struct fs_reply[]){{400, "{\"error\": \"invalid_request\", "
                                           "\"error_description\": \"Identity not found\"}",
                                      NULL, 0},
                                     {0}});
    tw_svc_vmsizes_unref(vs);
    vs = tw_svc_vmsizes_new();
    assert_int_not_equal(tw_svc_vmsizes_refresh_fleet(st, &arm, vs, NULL, NULL, &rep, &err),
                         TW_OK);
    assert_non_null(strstr(err.msg, "no token for ARM from the managed identity"));
    assert_null(tw_svc_vmcap_pick(vs, NULL, "westeurope", "Standard_Zz", &buf, why, 512));
    if (!strstr(why, "not cached yet: no token for ARM"))
        fail_msg("why: %s", why);

    tw_svc_vmsizes_unref(vs);
    fs_stop(s);
    free(page);
    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
    free(path);
}

/* The server refreshes at start, and its verdicts use what it read. */
static void test_server_job(void **state)
{
    (void)state;
    char *dir, *path = copy_db(&dir);
    char *page = skus_page(777);
    struct fakesrv *s = fs_start((struct fs_reply[]){{200, token, NULL, 0},
                                                     {200, page, NULL, 0},
                                                     {200, page, NULL, 0},
                                                     {0}});
    assert_non_null(s);
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    struct tw_server_options opt = {.db_path = path,
                                    .listen = "127.0.0.1:0",
                                    .threads = 2,
                                    .arm_url = s->base,
                                    .imds_url = s->base};
    struct tw_server *srv = NULL;
    struct tw_error err = {0};
    if (tw_server_start(&opt, &srv, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_non_null(srv->vmsizes);
    for (int i = 0; i < 500 && tw_svc_vmsizes_regions(srv->vmsizes) < 2; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(tw_svc_vmsizes_regions(srv->vmsizes), 2);
    /* The verdicts of the API's context apply ARM's 777 IOPS. */
    struct tw_svc_compliance_ctx ctx = {&srv->cat, &srv->caps, srv->vmsizes, NULL};
    struct tw_vmcap buf;
    const struct tw_vmcap *c = tw_svc_vmcap_pick(ctx.arm, ctx.caps, "westeurope",
                                                 "Standard_E16ds_v5", &buf, NULL, 0);
    assert_non_null(c);
    assert_int_equal(c->iops, 777);
    /* The next refresh waits a day on the worker (beside whatever else the
     * server keeps queued there); the stop cancels it, and LeakSanitizer
     * would see a job left behind. */
    for (int i = 0; i < 500 && tw_worker_depth(srv->worker) < 1; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(tw_worker_depth(srv->worker) >= 1);
    tw_server_stop(srv, 1000);
    fs_stop(s);

    /* Without an ARM endpoint nothing is read. */
    opt.arm_url = NULL;
    assert_int_equal(tw_server_start(&opt, &srv, &err), TW_OK);
    assert_null(srv->vmsizes);
    tw_server_stop(srv, 1000);
    free(page);
    th_rmtree(dir);
    free(dir);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refresh_fleet),
        cmocka_unit_test(test_server_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

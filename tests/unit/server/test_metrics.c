/* test_metrics.c - counters and their Prometheus text; the fleet's
 * gauges taken from a store (and kept for the TTL); the process_*
 * metrics and the /proc readers under them. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/time.h"
#include "server/metrics.h"

static void test_render(void **state)
{
    (void)state;
    const char *labels[] = {"GET /healthz", "POST /api/v1/reports", "odd \"label\"\\"};
    struct tw_metrics *m = tw_metrics_new(labels, 3);
    assert_non_null(m);
    tw_metrics_observe(m, 0, 200, 0.0002);
    tw_metrics_observe(m, 0, 200, 0.003);
    tw_metrics_observe(m, 1, 201, 0.02);
    tw_metrics_observe(m, 1, 400, 0.0004);
    tw_metrics_observe(m, 1, 418, 20.0); /* an unlisted status, beyond the last bucket */
    tw_metrics_observe(m, 2, 404, 0.001);
    tw_metrics_observe(m, 2, 502, 0.001); /* the prices refresh's upstream failure */
    tw_metrics_observe(m, 9, 200, 0.001); /* no such route: ignored */
    tw_metrics_batch(m, 3, 2, 1, 0);
    tw_metrics_batch(m, 64, 64, 0, 0);
    assert_int_equal(tw_metrics_requests(m), 7);
    uint64_t stored, repeat;
    tw_metrics_ingest_counts(m, &stored, &repeat);
    assert_int_equal(stored, 66);
    assert_int_equal(repeat, 1);

    struct tw_metrics_store st = {
        .reports = 66, .vms = 2, .disks = 5, .results = 9, .db_bytes = 4096, .queue_depth = 0};
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, &st, &out), TW_OK);
    const char *t = out.data;
    assert_non_null(strstr(t, "# TYPE tierwise_http_requests_total counter\n"));
    assert_non_null(
        strstr(t, "tierwise_http_requests_total{route=\"GET /healthz\",status=\"200\"} 2\n"));
    assert_non_null(strstr(
        t, "tierwise_http_requests_total{route=\"POST /api/v1/reports\",status=\"other\"} 1\n"));
    assert_non_null(strstr(t, "route=\"odd \\\"label\\\"\\\\\",status=\"502\"} 1\n"));
    /* Label values escaped. */
    assert_non_null(strstr(t, "route=\"odd \\\"label\\\"\\\\\",status=\"404\"} 1\n"));
    /* Cumulative buckets, +Inf = count. */
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_bucket{route=\"GET "
                              "/healthz\",le=\"0.0005\"} 1\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_bucket{route=\"GET "
                              "/healthz\",le=\"0.0025\"} 1\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_bucket{route=\"GET "
                              "/healthz\",le=\"0.005\"} 2\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_bucket{route=\"POST "
                              "/api/v1/reports\",le=\"10\"} 2\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_bucket{route=\"POST "
                              "/api/v1/reports\",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_count{route=\"POST "
                              "/api/v1/reports\"} 3\n"));
    assert_non_null(strstr(t, "tierwise_http_request_duration_seconds_sum{route=\"GET "
                              "/healthz\"} 0.003200\n"));
    assert_non_null(strstr(t, "tierwise_ingest_batches_total 2\n"));
    assert_non_null(strstr(t, "tierwise_ingest_reports_total{outcome=\"stored\"} 66\n"));
    assert_non_null(strstr(t, "tierwise_ingest_batch_size_bucket{le=\"3\"} 1\n"));
    assert_non_null(strstr(t, "tierwise_ingest_batch_size_bucket{le=\"63\"} 1\n"));
    assert_non_null(strstr(t, "tierwise_ingest_batch_size_bucket{le=\"127\"} 2\n"));
    assert_non_null(strstr(t, "tierwise_ingest_batch_size_sum 67\n"));
    assert_non_null(strstr(t, "tierwise_reports_stored 66\n"));
    assert_non_null(strstr(t, "tierwise_database_size_bytes 4096\n"));
    assert_non_null(strstr(t, "tierwise_ingest_queue_depth 0\n"));
    /* Every line is a comment or "name{labels} value". */
    for (const char *line = t; *line;) {
        const char *nl = strchr(line, '\n');
        assert_non_null(nl);
        if (line[0] != '#') {
            /* tierwise_ or process_ */
            assert_true(strncmp(line, "tierwise_", 9) == 0 || strncmp(line, "process_", 8) == 0);
            const char *sp = memchr(line, ' ', (size_t)(nl - line));
            assert_non_null(sp);
        }
        line = nl + 1;
    }
    /* Unknown store figures are left out. */
    struct tw_buf out2;
    tw_buf_init(&out2, 1 << 20);
    struct tw_metrics_store none = {.reports = -1, .vms = -1, .disks = -1, .results = -1,
                                    .db_bytes = -1, .queue_depth = -1};
    assert_int_equal(tw_metrics_render(m, &none, &out2), TW_OK);
    assert_null(strstr(out2.data, "tierwise_reports_stored"));
    assert_null(strstr(out2.data, "tierwise_drift_errors_total"));
    tw_buf_cleanup(&out2);
    /* A drift job: its failures and its last success, the gauge as it was. */
    struct tw_buf out3;
    tw_buf_init(&out3, 1 << 20);
    struct tw_metrics_store drift = none;
    drift.drift_known = true;
    drift.drift_disks = 4;
    drift.drift_job = true;
    drift.drift_errors = 3;
    drift.drift_last_success_s = 1796400000;
    assert_int_equal(tw_metrics_render(m, &drift, &out3), TW_OK);
    assert_non_null(strstr(out3.data, "\ntierwise_drift_disks 4\n"));
    assert_non_null(strstr(out3.data, "# TYPE tierwise_drift_errors_total counter\n"
                                      "tierwise_drift_errors_total 3\n"));
    assert_non_null(strstr(out3.data, "\ntierwise_drift_last_success_timestamp_seconds "
                                      "1796400000\n"));
    tw_buf_cleanup(&out3);
    /* Too small a buffer: an error, not a truncated page. */
    struct tw_buf small;
    tw_buf_init(&small, 100);
    assert_int_equal(tw_metrics_render(m, &st, &small), TW_ENOMEM);
    tw_buf_cleanup(&small);
    tw_buf_cleanup(&out);
    tw_metrics_free(m);
}

/* A metric's value in the exposition T (the line "NAME VALUE"); -1 when absent. */
static double value_of(const char *t, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = t; line && *line;) {
        if (strncmp(line, name, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

static void test_process(void **state)
{
    (void)state;
    const char *labels[] = {"GET /metrics"};
    struct tw_metrics *m = tw_metrics_new(labels, 1);
    assert_non_null(m);
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    const char *t = out.data;
    assert_non_null(strstr(t, "# TYPE process_cpu_seconds_total counter\n"));
    assert_true(value_of(t, "process_cpu_seconds_total") >= 0);
    /* This test runs under the sanitizers: more than a MiB resident and virtual. */
    assert_true(value_of(t, "process_resident_memory_bytes") > 1 << 20);
    assert_true(value_of(t, "process_virtual_memory_bytes") > 1 << 20);
    double start = value_of(t, "process_start_time_seconds");
    time_t now = time(NULL);
    assert_true(start > (double)now - 600 && start <= (double)now + 1);
    /* An fd opened shows in process_open_fds. */
    double fds = value_of(t, "process_open_fds");
    assert_true(fds >= 3);
    int fd = dup(0);
    assert_true(fd >= 0);
    struct tw_buf out2;
    tw_buf_init(&out2, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out2), TW_OK);
    assert_true(value_of(out2.data, "process_open_fds") == fds + 1);
    close(fd);
    assert_true(value_of(t, "process_max_fds") >= fds);
    tw_buf_cleanup(&out2);
    tw_buf_cleanup(&out);
    tw_metrics_free(m);
}

static void test_proc_parsers(void **state)
{
    (void)state;
    /* A command with spaces and parentheses: fields count from the last ')'. */
    const char stat[] = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 1200 0 3 0 "
                        "150 25 0 0 20 0 4 0 98765 123456789 2048 18446744073709551615 "
                        "1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0\n";
    struct tw_proc_stat ps;
    struct tw_error err = {0};
    assert_int_equal(tw_proc_stat_parse(stat, strlen(stat), &ps, &err), TW_OK);
    assert_int_equal(ps.utime_ticks, 150);
    assert_int_equal(ps.stime_ticks, 25);
    assert_int_equal(ps.start_ticks, 98765);
    assert_int_equal(ps.vsize_bytes, 123456789);
    assert_int_equal(ps.rss_pages, 2048);
    /* Cut short, a field that is no number, no command: refused, naming the field. */
    size_t cut = (size_t)(strstr(stat, " 150 ") - stat);
    assert_int_equal(tw_proc_stat_parse(stat, cut, &ps, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "field 14"));
    const char bad[] = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 1x 2 0 0 20 0 1 0 5 6 7\n";
    assert_int_equal(tw_proc_stat_parse(bad, strlen(bad), &ps, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "field 14"));
    assert_int_equal(tw_proc_stat_parse("1 x S", 5, &ps, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "command"));

    const char ps_stat[] = "cpu  1 2 3\ncpu0 1 2 3\nintr 5 0 0\nctxt 99\nbtime 1764500000\n"
                           "processes 7\n";
    int64_t btime;
    assert_int_equal(tw_proc_btime_parse(ps_stat, strlen(ps_stat), &btime, &err), TW_OK);
    assert_int_equal(btime, 1764500000);
    assert_int_equal(tw_proc_btime_parse("btime x\n", 8, &btime, &err), TW_EPARSE);
    assert_int_equal(tw_proc_btime_parse("cpu 1\n", 6, &btime, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "no btime"));
}

/* The fleet's gauges from the fixture database (3 VMs, 16 disks, their
 * results judged), kept for the TTL, taken again after it. */
static void test_fleet(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char path[4096];
    snprintf(path, sizeof(path), "%s/tierwise.db", dir);
    th_fixture_copy("store/v1.db", path);
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    if (tw_store_open(path, &st, &err) != TW_OK)
        fail_msg("%s", err.msg);
    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
    assert_int_equal(tw_tier_catalog_builtin(&cat, &err), TW_OK);
    assert_int_equal(tw_vmcap_table_builtin(&caps, &err), TW_OK);
    struct tw_svc_compliance_ctx ctx = {.cat = &cat, .caps = &caps};

    const char *labels[] = {"GET /metrics"};
    struct tw_metrics *m = tw_metrics_new(labels, 1);
    assert_non_null(m);
    struct tw_buf out;
    tw_buf_init(&out, 1 << 20);
    /* Before any refresh: no fleet gauges, none made up. */
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    assert_null(strstr(out.data, "tierwise_disk_verdicts{"));
    assert_null(strstr(out.data, "tierwise_agents_not_heard_from "));
    tw_buf_cleanup(&out);

    /* The fixture's reports were received 2026-12-01T10:21:08Z. */
    int64_t recv_ms;
    assert_true(tw_rfc3339_ms("2026-12-01T10:21:08Z", &recv_ms));
    int64_t day = 86400000;
    assert_true(tw_metrics_fleet_due(m, 1000));
    assert_int_equal(tw_metrics_fleet_refresh(m, st, &ctx, 1000, recv_ms + day, &err), TW_OK);
    assert_false(tw_metrics_fleet_due(m, 1000 + TW_METRICS_FLEET_TTL_S - 1));
    assert_true(tw_metrics_fleet_due(m, 1000 + TW_METRICS_FLEET_TTL_S));
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    const char *t = out.data;
    assert_non_null(strstr(t, "# TYPE tierwise_disk_verdicts gauge\n"));
    assert_non_null(strstr(t, "tierwise_disk_verdicts{verdict=\"delivers\",sku=\"Premium_LRS\"} "));
    assert_non_null(strstr(t, "tierwise_disk_verdicts{verdict=\"inconclusive\",sku=\"Premium_LRS\"} "));
    assert_true(value_of(t, "tierwise_vms_judged") == 3);
    assert_non_null(strstr(t, "tierwise_vms_by_size{size=\"Standard_D4ds_v5\"} 1\n"));
    assert_non_null(strstr(t, "tierwise_disks_by_sku{sku=\"Premium_LRS\",tier=\"P10\"} 5\n"));
    assert_non_null(strstr(t, "tierwise_disks_by_sku{sku=\"PremiumV2_LRS\",tier=\"unknown\"} 1\n"));
    /* A day after: heard from within 2 days. */
    assert_true(value_of(t, "tierwise_agents_not_heard_from") == 0);
    assert_true(value_of(t, "tierwise_fleet_figures_refresh_failures_total") == 0);
    assert_true(value_of(t, "tierwise_fleet_figures_age_seconds") >= 0);
    /* The verdict counts add up to the summary's. */
    struct tw_svc_compliance_summary sum;
    assert_int_equal(tw_svc_compliance_summary(st, &ctx, &sum, &err), TW_OK);
    size_t total = 0, rendered = 0;
    for (size_t i = 0; i < sum.n_skus; i++)
        for (int k = 0; k <= TW_VERDICT_INCONCLUSIVE; k++)
            total += sum.skus[i].count[k];
    for (const char *l = strstr(t, "tierwise_disk_verdicts{"); l;
         l = strstr(l + 1, "\ntierwise_disk_verdicts{")) {
        const char *sp = strchr(l + 1, ' ');
        rendered += strtoul(sp + 1, NULL, 10);
    }
    assert_true(total > 0);
    assert_int_equal(rendered, total);
    tw_buf_cleanup(&out);

    /* Fresh figures are not taken again; three days on, after the TTL, the
     * agents are silent. */
    assert_int_equal(tw_metrics_fleet_refresh(m, st, &ctx, 1010, recv_ms + 3 * day, &err), TW_OK);
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    assert_true(value_of(out.data, "tierwise_agents_not_heard_from") == 0);
    tw_buf_cleanup(&out);
    assert_int_equal(tw_metrics_fleet_refresh(m, st, &ctx, 1000 + TW_METRICS_FLEET_TTL_S,
                                              recv_ms + 3 * day, &err), TW_OK);
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    assert_true(value_of(out.data, "tierwise_agents_not_heard_from") == 3);
    tw_buf_cleanup(&out);

    /* A refresh without a store fails, is counted, and keeps the figures. */
    assert_int_not_equal(tw_metrics_fleet_refresh(m, NULL, &ctx, 2000, recv_ms, &err), TW_OK);
    tw_buf_init(&out, 1 << 20);
    assert_int_equal(tw_metrics_render(m, NULL, &out), TW_OK);
    assert_true(value_of(out.data, "tierwise_fleet_figures_refresh_failures_total") == 1);
    assert_true(value_of(out.data, "tierwise_agents_not_heard_from") == 3);
    tw_buf_cleanup(&out);
    /* ... and is not tried again before the TTL. */
    assert_false(tw_metrics_fleet_due(m, 2001));

    tw_metrics_free(m);
    tw_tier_catalog_cleanup(&cat);
    tw_vmcap_table_cleanup(&caps);
    tw_store_close(st);
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_process),
        cmocka_unit_test(test_proc_parsers),
        cmocka_unit_test(test_fleet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

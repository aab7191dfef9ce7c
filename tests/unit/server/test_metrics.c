/* test_metrics.c - counters and their Prometheus text. */
#include "testhelp.h"

#include <stdio.h>
#include <string.h>

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
            assert_true(line[0] == 't'); /* tierwise_ */
            const char *sp = memchr(line, ' ', (size_t)(nl - line));
            assert_non_null(sp);
        }
        line = nl + 1;
    }
    /* Unknown store figures are left out. */
    struct tw_buf out2;
    tw_buf_init(&out2, 1 << 20);
    struct tw_metrics_store none = {-1, -1, -1, -1, -1, -1};
    assert_int_equal(tw_metrics_render(m, &none, &out2), TW_OK);
    assert_null(strstr(out2.data, "tierwise_reports_stored"));
    tw_buf_cleanup(&out2);
    /* Too small a buffer: an error, not a truncated page. */
    struct tw_buf small;
    tw_buf_init(&small, 100);
    assert_int_equal(tw_metrics_render(m, &st, &small), TW_ENOMEM);
    tw_buf_cleanup(&small);
    tw_buf_cleanup(&out);
    tw_metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

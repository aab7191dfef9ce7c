/* test_failures.c - the answer to a report the store refuses as bad:
 * 400 report_rejected, as JSON, without Retry-After.
 *
 * The store refuses a body past what one row holds (SQLite's length
 * limit, 1,000,000,000 bytes, less 1 MiB for the other columns: TW_ERANGE,
 * "too large to store"), below --body-max's ceiling of 1 GiB, so a body
 * between the two is answered 400 and not retried as a store failure.
 * Sending a gigabyte here is too heavy, so the refusal is made for real one
 * level down: the writer and a real store on a scratch file get a report
 * whose body is announced one byte past that limit (the store checks the
 * length before it reads a byte), beside
 * a normal report in the same run; the writer's verdict on each job is
 * then answered by the report handler's own code.  The response body is
 * read back by standing in for libmicrohttpd's buffer constructor. */
#include "testhelp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

#include "core/report.h"
#include "server/ingest.h"
#include "server/server_int.h"

/* ---- the answer's body: every response the handler builds passes here ---- */

static char *last_body;

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode);
struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
    free(last_body);
    last_body = strndup(buffer, size);
    assert_int_equal(mode, MHD_RESPMEM_MUST_FREE); /* server.c hands its buffer over */
    return MHD_create_response_from_buffer_with_free_callback(size, buffer, free);
}

/* ---- jobs ---- */

static atomic_int n_done;

static void on_done(struct tw_ingest_job *job)
{
    (void)job;
    atomic_fetch_add(&n_done, 1);
}

/* The fixture report with id ID and no results (so that nothing in the
 * body is looked at before its length). */
static char *report_json(const char *id)
{
    size_t len;
    char *text = th_fixture("reports/web-03.json", &len);
    json_error_t jerr;
    json_t *v = json_loadb(text, len, 0, &jerr);
    free(text);
    assert_non_null(v);
    json_object_set_new(v, "id", json_string(id));
    json_object_set_new(v, "results", json_array());
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    assert_non_null(s);
    return s;
}

static void fill_job(struct tw_ingest_job *j, const char *body, size_t announced)
{
    memset(j, 0, sizeof(*j));
    j->rep = tw_report_new();
    assert_non_null(j->rep);
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(body, strlen(body), j->rep, &err), TW_OK);
    j->raw = body;
    j->raw_len = announced;
    j->done = on_done;
}

/* The handler's answer to J, as a resumed POST /reports gets it. */
static unsigned answer(struct tw_req *rq, const struct tw_ingest_job *j)
{
    memset(rq, 0, sizeof(*rq));
    rq->job = *j;
    tw_api_report_done(rq);
    assert_non_null(rq->resp);
    assert_non_null(last_body);
    return rq->status;
}

static void test_rejected_report(void **state)
{
    (void)state;
    char *dir = th_tmpdir();
    char db[4096];
    snprintf(db, sizeof(db), "%s/tw.db", dir);
    struct tw_error err = {0};
    struct tw_ingest *in = NULL;
    assert_int_equal(tw_ingest_start(db, NULL, &in, &err), TW_OK);

    char *big = report_json("6b1f3c2e-0000-4000-8000-000000000001");
    char *fine = report_json("6b1f3c2e-0000-4000-8000-000000000002");
    struct tw_ingest_job jbig, jfine;
    fill_job(&jbig, big, (size_t)1000000000 - (1u << 20) + 1); /* a byte past a row */
    fill_job(&jfine, fine, strlen(fine));
    atomic_store(&n_done, 0);
    assert_int_equal(tw_ingest_submit(in, &jbig), TW_OK);
    assert_int_equal(tw_ingest_submit(in, &jfine), TW_OK);
    for (int i = 0; i < 10000 && atomic_load(&n_done) < 2; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&n_done), 2);

    /* The store refused the one report; its transaction committed. */
    assert_true(jbig.committed);
    assert_int_equal(jbig.status, TW_PUT_FAILED);
    assert_int_equal(jbig.err.code, TW_ERANGE);
    assert_true(jfine.committed);
    assert_int_equal(jfine.status, TW_PUT_STORED);

    struct tw_req rq;
    assert_int_equal(answer(&rq, &jbig), 400);
    json_error_t jerr;
    json_t *v = json_loads(last_body, 0, &jerr);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(json_object_get(v, "error"), "code")),
                        "report_rejected");
    const char *msg =
        json_string_value(json_object_get(json_object_get(v, "error"), "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "6b1f3c2e-0000-4000-8000-000000000001"));
    assert_non_null(strstr(msg, "too large"));
    json_decref(v);
    const char *ct = MHD_get_response_header(rq.resp, MHD_HTTP_HEADER_CONTENT_TYPE);
    assert_non_null(ct);
    assert_string_equal(ct, "application/json");
    /* Not a 503: sending it again would get the same answer. */
    assert_null(MHD_get_response_header(rq.resp, MHD_HTTP_HEADER_RETRY_AFTER));
    MHD_destroy_response(rq.resp);

    /* Its neighbour: 201 stored. */
    assert_int_equal(answer(&rq, &jfine), 201);
    v = json_loads(last_body, 0, &jerr);
    assert_non_null(v);
    assert_string_equal(json_string_value(json_object_get(v, "status")), "stored");
    json_decref(v);
    MHD_destroy_response(rq.resp);

    tw_ingest_stop(in);
    tw_ingest_free(in);
    tw_report_free(jbig.rep);
    tw_report_free(jfine.rep);
    free(big);
    free(fine);
    free(last_body);
    last_body = NULL;
    th_rmtree(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rejected_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * api.c - the route table of /api/v1 and its handlers.
 *
 * Handlers answer through tw_req_json / tw_req_error (server_int.h).
 * Reads take a store handle from the pool for the length of the request.
 * Verdicts come from the service room (service/compliance.h), computed
 * from each VM's latest inventory and results against the built-in
 * catalog and VM caps; this file only shapes them as JSON.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/verdict.h"
#include "service/compliance.h"
#include "server/json_shape.h"
#include "server/static.h"

/* ---- verdicts ---- */

/* Verdicts as the API shows them: into two JSON arrays. */
struct verdict_json {
    json_t *verdicts, *errors;
};

static enum tw_err on_verdict(void *arg, int64_t vm_id, const char *vm_name,
                              const struct tw_result *r, const struct tw_verdict *v)
{
    struct verdict_json *vj = arg;
    json_t *o = tw_verdict_to_value(v);
    if (!o)
        return TW_ENOMEM;
    json_object_set_new(o, "profile", json_string(r->profile));
    json_object_set_new(o, "started_at", json_string(r->started_at));
    json_object_set_new(o, "vm_id", json_integer(vm_id));
    json_object_set_new(o, "vm_name", json_string(vm_name));
    return json_array_append_new(vj->verdicts, o) == 0 ? TW_OK : TW_ENOMEM;
}

static enum tw_err on_verdict_error(void *arg, const struct tw_svc_compliance_error *e)
{
    struct verdict_json *vj = arg;
    json_t *o;
    if (!e->vm_name) /* the VM itself did not read */
        o = json_pack("{s:I, s:n, s:n, s:n, s:s}", "vm_id", (json_int_t)e->vm_id, "vm_name",
                      "result_id", "profile", "message", e->message);
    else
        o = json_pack("{s:s, s:s, s:s, s:I, s:s}", "result_id", e->result_id, "profile",
                      e->profile, "message", e->message, "vm_id", (json_int_t)e->vm_id,
                      "vm_name", e->vm_name);
    return o && json_array_append_new(vj->errors, o) == 0 ? TW_OK : TW_ENOMEM;
}

static void compliance_ctx(const struct tw_server *srv, struct tw_svc_compliance_ctx *ctx)
{
    ctx->cat = &srv->cat;
    ctx->caps = &srv->caps;
}

/*
 * Appends a verdict for each latest result of VM VM_ID to VERDICTS (with
 * "vm_id" and "vm_name"), and {"vm_id", "vm_name", "result_id", "message"}
 * for each result that can't be judged to ERRORS.  TW_ENOENT when there is
 * no such VM; other store errors in ERR.
 */
static enum tw_err vm_verdicts(struct tw_server *srv, struct tw_store *st, int64_t vm_id,
                               json_t *verdicts, json_t *errors, struct tw_error *err)
{
    struct verdict_json vj = {verdicts, errors};
    struct tw_svc_compliance_sink sink = {on_verdict, on_verdict_error, &vj};
    struct tw_svc_compliance_ctx ctx;
    compliance_ctx(srv, &ctx);
    if (!verdicts || !errors)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    return tw_svc_compliance_vm(st, &ctx, vm_id, &sink, err);
}

/* Whether verdict V covers disk NAME of VM VM_ID. */
static bool verdict_covers(const json_t *v, int64_t vm_id, const char *name)
{
    if (json_integer_value(json_object_get(v, "vm_id")) != vm_id)
        return false;
    size_t i;
    const json_t *d;
    json_array_foreach(json_object_get(v, "disks"), i, d)
    {
        const char *s = json_is_string(d) ? json_string_value(d)
                                          : json_string_value(json_object_get(d, "name"));
        if (s && name && strcmp(s, name) == 0)
            return true;
    }
    return false;
}

/* Sets "verdicts" on each disk object of DISKS: those of ALL covering it. */
static void attach_disk_verdicts(json_t *disks, const json_t *all)
{
    size_t i, k;
    json_t *disk;
    const json_t *v;
    json_array_foreach(disks, i, disk)
    {
        json_t *mine = json_array();
        int64_t vm_id = json_integer_value(json_object_get(disk, "vm_id"));
        const char *name = json_string_value(json_object_get(disk, "name"));
        json_array_foreach(all, k, v)
        {
            if (verdict_covers(v, vm_id, name))
                json_array_append(mine, (json_t *)v);
        }
        json_object_set_new(disk, "verdicts", mine);
    }
}

/* How long /metrics may reuse the store's counts when no report came. */
#define METRICS_STATS_TTL_S 5

/* ---- handlers ---- */

static void h_healthz(struct tw_req *rq)
{
    tw_req_json(rq, 200, json_pack("{s:s}", "status", "ok"));
}

static void h_metrics(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    struct tw_metrics_store ms = {-1, -1, -1, -1, -1, -1};
    struct tw_error err = {0};
    /* The counts are whole-table scans: they are taken again only after
     * the writer stored a new report, or after METRICS_STATS_TTL_S (the
     * database size also moves with other writers), so a scraper polling
     * without a token can't make the server count a large table on every
     * request. */
    struct tw_store_stats ss;
    bool have = false;
    uint64_t commits = tw_ingest_commits(srv->ingest);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    pthread_mutex_lock(&srv->stats_lock);
    if (srv->stats_valid && srv->stats_commits == commits &&
        now.tv_sec - srv->stats_at < METRICS_STATS_TTL_S) {
        ss = srv->stats;
        have = true;
    }
    pthread_mutex_unlock(&srv->stats_lock);
    if (!have) {
        struct tw_store *st = tw_srv_store_get(srv, &err);
        if (st && tw_store_stats(st, &ss, &err) == TW_OK) {
            have = true;
            pthread_mutex_lock(&srv->stats_lock);
            srv->stats = ss;
            srv->stats_commits = commits;
            srv->stats_at = now.tv_sec;
            srv->stats_valid = true;
            pthread_mutex_unlock(&srv->stats_lock);
        }
        tw_srv_store_put(srv, st);
    }
    if (have) {
        ms.reports = ss.reports;
        ms.vms = ss.vms;
        ms.disks = ss.disks;
        ms.results = ss.results;
        ms.db_bytes = ss.db_bytes;
    }
    ms.queue_depth = (int64_t)tw_ingest_depth(srv->ingest);
    struct tw_buf out;
    tw_buf_init(&out, 4u << 20);
    if (tw_metrics_render(srv->metrics, &ms, &out) != TW_OK || !out.data) {
        tw_buf_cleanup(&out);
        tw_req_error(rq, 500, "internal", "out of memory rendering the metrics");
        return;
    }
    tw_req_body(rq, 200, "text/plain; version=0.0.4; charset=utf-8", out.data, out.len);
}

static void h_post_report(struct tw_req *rq)
{
    struct tw_error err = {0};
    if (!rq->body.len) {
        tw_req_error(rq, 400, "invalid_report",
                     "the body is empty; POST a tierwise.report/1 document");
        return;
    }
    rq->job.rep = tw_report_new();
    if (!rq->job.rep) {
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    enum tw_err rc = tw_report_from_json(rq->body.data, rq->body.len, rq->job.rep, &err);
    if (rc != TW_OK) {
        tw_req_error_at(rq, rc == TW_ENOMEM ? 500 : 400,
                        rc == TW_ENOMEM ? "internal" : "invalid_report", err.line, err.column,
                        err.msg[0] ? err.msg : tw_strerror(rc));
        return;
    }
    tw_req_submit_report(rq);
}

void tw_api_report_done(struct tw_req *rq)
{
    const struct tw_ingest_job *j = &rq->job;
    const char *id = j->rep ? j->rep->id : "";
    const char *msg = j->err.msg[0] ? j->err.msg : tw_strerror(j->err.code);
    if (!j->committed) {
        tw_req_error(rq, 503, "store_unavailable",
                     "report %s was not stored (%s); send it again later", id, msg);
        return;
    }
    switch (j->status) {
    case TW_PUT_STORED:
        tw_req_json(rq, 201, json_pack("{s:s, s:s}", "id", id, "status", "stored"));
        return;
    case TW_PUT_REPEAT:
        tw_req_json(rq, 200, json_pack("{s:s, s:s}", "id", id, "status", "already stored"));
        return;
    case TW_PUT_FAILED:
    default:
        /* The parser has checked the report already, so a failure here is
         * the store's (a constraint is a bug or an inconsistency, not the
         * agent's fault): 500, and the agent keeps the report and retries.
         * Only a report too large or malformed for the store is refused. */
        if (j->err.code == TW_EPARSE || j->err.code == TW_ERANGE)
            tw_req_error(rq, 400, "report_rejected", "report %s was refused: %s", id, msg);
        else
            tw_req_error(rq, 500, "store_failed", "report %s was not stored: %s", id, msg);
        return;
    }
}

static void h_vms(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    struct tw_store_vm_row *rows = NULL;
    size_t n = 0;
    enum tw_err rc = tw_store_vms(st, &rows, &n, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_t *vms = json_array();
    for (size_t i = 0; vms && i < n; i++)
        if (json_array_append_new(vms, tw_shape_vm(&rows[i])) != 0) {
            json_decref(vms);
            vms = NULL;
        }
    tw_store_vm_rows_free(rows, n);
    tw_req_json(rq, 200, vms ? json_pack("{s:o}", "vms", vms) : NULL);
}

/* VM ID with its attached disks as GET /vms/{id} shows it. */
static enum tw_err vm_object(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
{
    struct tw_store_vm_row row;
    struct tw_store_disk_row *disks = NULL;
    size_t n = 0;
    *out = NULL;
    enum tw_err rc = tw_store_vm(st, id, &row, err);
    if (rc != TW_OK)
        return rc;
    rc = tw_store_vm_disks(st, id, &disks, &n, err);
    if (rc == TW_OK) {
        json_t *vm = tw_shape_vm(&row);
        json_t *list = tw_shape_disks(disks, n);
        if (!vm || !list || json_object_set_new(vm, "disks", list) != 0) {
            json_decref(vm);
            rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        } else {
            *out = vm;
        }
    }
    free(disks);
    free(row.tags);
    return rc;
}

static void h_vm(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *vm = NULL, *verdicts = json_array(), *errors = json_array();
    enum tw_err rc = vm_object(st, rq->id, &vm, &err);
    if (rc == TW_OK)
        rc = vm_verdicts(rq->srv, st, rq->id, verdicts, errors, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(vm);
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_object_set_new(vm, "verdicts", verdicts);
    json_object_set_new(vm, "verdict_errors", errors);
    tw_req_json(rq, 200, vm);
}

/* Verdicts of every VM into VERDICTS/ERRORS; *N_VMS counts the VMs. */
static enum tw_err all_verdicts(struct tw_server *srv, struct tw_store *st, json_t *verdicts,
                                json_t *errors, size_t *n_vms, struct tw_error *err)
{
    struct verdict_json vj = {verdicts, errors};
    struct tw_svc_compliance_sink sink = {on_verdict, on_verdict_error, &vj};
    struct tw_svc_compliance_ctx ctx;
    compliance_ctx(srv, &ctx);
    if (!verdicts || !errors)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    return tw_svc_compliance_fleet(st, &ctx, &sink, n_vms, err);
}

static void h_disks(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *disks = NULL, *verdicts = json_array(), *errors = json_array();
    struct tw_store_disk_row *rows = NULL;
    size_t n = 0;
    enum tw_err rc = tw_store_disks(st, &rows, &n, &err);
    if (rc == TW_OK && !(disks = tw_shape_disks(rows, n)))
        rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
    free(rows);
    if (rc == TW_OK)
        rc = all_verdicts(rq->srv, st, verdicts, errors, NULL, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(disks);
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc == TW_ENOENT ? TW_EIO : rc, &err);
        return;
    }
    attach_disk_verdicts(disks, verdicts);
    json_decref(verdicts);
    json_decref(errors);
    tw_req_json(rq, 200, json_pack("{s:o}", "disks", disks));
}

/* Disk ROW with its SKU history and latest results, as GET /disks/{id}
 * shows it. */
static enum tw_err disk_object(struct tw_store *st, const struct tw_store_disk_row *row,
                               json_t **out, struct tw_error *err)
{
    struct tw_store_sku_hist_row *hist = NULL;
    struct tw_store_result_rec *recs = NULL;
    size_t nh = 0, nr = 0;
    *out = NULL;
    enum tw_err rc = tw_store_disk_history(st, row->id, &hist, &nh, err);
    if (rc == TW_OK)
        rc = tw_store_disk_results(st, row->id, &recs, &nr, err);
    if (rc == TW_OK) {
        /* The _new setters take their value even when they fail. */
        json_t *d = tw_shape_disk(row, true);
        bool ok = d &&
                  json_object_set_new(d, "sku_history", tw_shape_sku_history(hist, nh)) == 0 &&
                  json_object_set_new(d, "results", tw_shape_results(recs, nr)) == 0;
        if (!ok) {
            json_decref(d);
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading a disk's results");
        } else {
            *out = d;
        }
    }
    free(hist);
    tw_store_result_recs_free(recs, nr);
    return rc;
}

static void h_disk(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *disk = NULL, *verdicts = json_array(), *errors = json_array();
    struct tw_store_disk_row row;
    enum tw_err rc = tw_store_disk(st, rq->id, &row, &err);
    if (rc == TW_OK)
        rc = disk_object(st, &row, &disk, &err);
    if (rc == TW_OK)
        rc = vm_verdicts(rq->srv, st, row.vm_id, verdicts, errors, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(disk);
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_t *one = json_array();
    json_array_append(one, disk);
    attach_disk_verdicts(one, verdicts);
    json_decref(one);
    json_decref(verdicts);
    json_decref(errors);
    tw_req_json(rq, 200, disk);
}

static void h_compliance(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *verdicts = json_array(), *errors = json_array();
    size_t n_vms = 0;
    enum tw_err rc = all_verdicts(rq->srv, st, verdicts, errors, &n_vms, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc == TW_ENOENT ? TW_EIO : rc, &err);
        return;
    }
    tw_req_json(rq, 200,
                json_pack("{s:I, s:o, s:o}", "vms", (json_int_t)n_vms, "verdicts", verdicts,
                          "errors", errors));
}

void tw_api_static(struct tw_req *rq)
{
    int fd;
    size_t size;
    const char *type;
    struct tw_error err = {0};
    enum tw_err rc = tw_static_open(rq->srv->web_root, rq->path, &fd, &size, &type, &err);
    if (rc == TW_ENOENT) {
        tw_req_error(rq, 404, "not_found", "no such file: %s", rq->path);
        return;
    }
    if (rc != TW_OK) {
        tw_req_error(rq, 500, "internal", "%s", err.msg);
        return;
    }
    struct MHD_Response *r = MHD_create_response_from_fd(size, fd);
    if (!r) {
        close(fd);
        tw_req_error(rq, 500, "internal", "out of memory");
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'self'; connect-src 'self'; img-src 'self' data:; "
                            "frame-ancestors 'none'");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    if (rq->resp)
        MHD_destroy_response(rq->resp);
    rq->resp = r;
    rq->status = 200;
}

/*
 * The routes.  Roles: agents post reports, readers read, admins may do
 * everything (tw_auth_role_allowed); PUBLIC answers without a token.
 * Dashboard files (GET outside /api/) are not in the table: they carry
 * no data and answer without a token.
 */
const struct tw_route tw_api_routes[] = {
    {"GET", "/healthz", TW_AUTH_PUBLIC, h_healthz, false},
    {"GET", "/metrics", TW_AUTH_PUBLIC, h_metrics, false},
    {"POST", "/api/v1/reports", TW_AUTH_AGENT, h_post_report, true},
    {"GET", "/api/v1/vms", TW_AUTH_READER, h_vms, false},
    {"GET", "/api/v1/vms/{id}", TW_AUTH_READER, h_vm, false},
    {"GET", "/api/v1/disks", TW_AUTH_READER, h_disks, false},
    {"GET", "/api/v1/disks/{id}", TW_AUTH_READER, h_disk, false},
    {"GET", "/api/v1/compliance", TW_AUTH_READER, h_compliance, false},
    {"GET", "/api/v1/prices", TW_AUTH_READER, tw_api_prices, false},
    {"POST", "/api/v1/prices/refresh", TW_AUTH_ADMIN, tw_api_prices_refresh, true},
};
const size_t tw_api_n_routes = sizeof(tw_api_routes) / sizeof(tw_api_routes[0]);

/*
 * v1_reports.c - POST /api/v1/reports: the body parsed and validated in the
 * request's thread, then handed to the writer (ingest.h); the answer once
 * it is committed.
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tw_v1_post_report(struct tw_req *rq)
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
    /* Judged here, in the request's thread, against the report's own
     * inventory: kept beside the results, so the fleet's summary need not
     * judge them again.  A report that can't be judged is stored all the
     * same (its results are judged when read). */
    struct tw_svc_compliance_ctx ctx;
    tw_srv_compliance_ctx(rq->srv, &ctx);
    struct tw_error jerr = {0};
    if (tw_svc_compliance_judge_report(&ctx, rq->job.rep, &rq->job.judged, &jerr) != TW_OK)
        tw_svc_judged_cleanup(&rq->job.judged);
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


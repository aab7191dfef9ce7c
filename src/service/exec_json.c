/*
 * exec_json.c - actions and the executor's results as JSON, one shape for
 * `tierwise actions`, `tierwise apply --json`, GET and POST /api/v1/actions.
 */
#include <jansson.h>
#include <string.h>

#include "service/exec.h"

static int set_str(json_t *o, const char *k, const char *v)
{
    return json_object_set_new(o, k, v && v[0] ? json_string(v) : json_null());
}

static int set_str_empty(json_t *o, const char *k, const char *v)
{
    return json_object_set_new(o, k, json_string(v ? v : ""));
}

static json_t *row_fields(const struct tw_store_action_row *r)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "id", r->id ? json_integer(r->id) : json_null());
    bad |= set_str(o, "vm", r->vm);
    bad |= set_str(o, "disk", r->disk);
    bad |= json_object_set_new(o, "vm_id", r->vm_id ? json_integer(r->vm_id) : json_null());
    bad |= json_object_set_new(o, "disk_id", r->disk_id ? json_integer(r->disk_id) : json_null());
    bad |= set_str(o, "vm_resource_id", r->vm_resource_id);
    bad |= set_str(o, "disk_resource_id", r->disk_resource_id);
    bad |= set_str_empty(o, "kind", r->kind);
    bad |= set_str(o, "from_sku", r->from_sku);
    bad |= set_str(o, "to_sku", r->to_sku);
    bad |= set_str(o, "due_at", r->due_at);
    bad |= set_str_empty(o, "state", r->state);
    bad |= set_str(o, "policy", r->policy);
    bad |= set_str_empty(o, "reason", r->reason);
    bad |= set_str(o, "saving", r->saving);
    bad |= set_str(o, "currency", r->currency);
    bad |= json_object_set_new(o, "attempts", json_integer(r->attempts));
    bad |= set_str(o, "updated_at", r->updated_at);
    bad |= set_str(o, "requested_at", r->requested_at);
    bad |= json_object_set_new(o, "dry_run", json_boolean(r->dry_run));
    bad |= set_str(o, "operation_url", r->operation_url);
    bad |= json_object_set_new(o, "plan_id", r->plan_id ? json_integer(r->plan_id) : json_null());
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tw_exec_action_json(const struct tw_store_action_row *row,
                            const struct tw_store_action_move_row *moves, size_t n)
{
    json_t *o = row_fields(row);
    json_t *tr = json_array();
    if (!o || !tr) {
        json_decref(o);
        json_decref(tr);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_object();
        if (!m || set_str(m, "from", moves[i].from_state) ||
            set_str_empty(m, "to", moves[i].to_state) || set_str(m, "at", moves[i].at) ||
            set_str(m, "owner", moves[i].owner) || set_str_empty(m, "detail", moves[i].detail) ||
            json_array_append_new(tr, m)) {
            json_decref(m);
            json_decref(tr);
            json_decref(o);
            return NULL;
        }
    }
    if (json_object_set_new(o, "transitions", tr)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tw_exec_result_json(const struct tw_exec_result *r)
{
    json_t *o = row_fields(r->action);
    if (!o)
        return NULL;
    int bad = 0;
    bad |= set_str_empty(o, "state", r->state);
    bad |= set_str_empty(o, "outcome", r->outcome);
    bad |= set_str_empty(o, "reason", r->reason && r->reason[0] ? r->reason : r->action->reason);
    bad |= json_object_set_new(o, "already", json_boolean(r->already));
    if (r->method) {
        json_t *q = json_pack("{s:s, s:s, s:s}", "method", r->method, "url", r->url ? r->url : "",
                              "body", r->body ? r->body : "");
        bad |= json_object_set_new(o, "request", q ? q : json_null());
    } else {
        bad |= json_object_set_new(o, "request", json_null());
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *tw_exec_summary_json(const struct tw_exec_summary *s)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "actions", (json_int_t)s->actions,
                     "done", (json_int_t)s->done, "skipped", (json_int_t)s->skipped, "failed",
                     (json_int_t)s->failed, "waiting", (json_int_t)s->waiting, "retry",
                     (json_int_t)s->retry, "held", (json_int_t)s->held, "would_send",
                     (json_int_t)s->would_send, "nothing_to_send", (json_int_t)s->nothing_to_send);
}

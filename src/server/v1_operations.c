/*
 * v1_operations.c - the table of long operations (operations.h) and GET
 * /api/v1/operations/{id}[?wait=SECONDS].
 *
 * The table is the worker's context (server.c), so it lives as long as
 * the worker: a refresh still running when a stop's timeout passed may
 * write its outcome after the server is gone.
 */
#include "server/operations.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/time.h"
#include "server/server_int.h"
#include "server/worker.h"

struct op {
    bool used;
    char id[TW_UUID_STRLEN + 1];
    char kind[32];
    char key[96];
    enum tw_op_state state;
    uint64_t seq;                                /* creation order */
    int64_t created_ns, started_ns, finished_ns; /* CLOCK_REALTIME; 0: not yet */
    json_t *request;
    json_t *result; /* succeeded */
    char code[48];  /* failed */
    char message[768];
};

struct tw_ops {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a state changed */
    struct op *v;
    size_t max;
    uint64_t seq;
    atomic_uint waiters;
};

static const char *state_name[] = {"queued", "running", "succeeded", "failed"};

struct tw_ops *tw_ops_new(size_t max)
{
    struct tw_ops *ops = calloc(1, sizeof(*ops));
    if (!ops)
        return NULL;
    ops->max = max ? max : TW_OPS_MAX;
    ops->v = calloc(ops->max, sizeof(*ops->v));
    if (!ops->v) {
        free(ops);
        return NULL;
    }
    pthread_mutex_init(&ops->lock, NULL);
    pthread_cond_init(&ops->changed, NULL);
    return ops;
}

static void op_clear(struct op *o)
{
    json_decref(o->request);
    json_decref(o->result);
    memset(o, 0, sizeof(*o));
}

void tw_ops_free(void *p)
{
    struct tw_ops *ops = p;
    if (!ops)
        return;
    for (size_t i = 0; i < ops->max; i++)
        op_clear(&ops->v[i]);
    free(ops->v);
    pthread_mutex_destroy(&ops->lock);
    pthread_cond_destroy(&ops->changed);
    free(ops);
}

static bool finished(const struct op *o)
{
    return o->state == TW_OP_SUCCEEDED || o->state == TW_OP_FAILED;
}

static struct op *find(struct tw_ops *ops, const char *id)
{
    for (size_t i = 0; i < ops->max; i++)
        if (ops->v[i].used && strcmp(ops->v[i].id, id) == 0)
            return &ops->v[i];
    return NULL;
}

enum tw_err tw_ops_create(struct tw_ops *ops, const char *kind, const char *key, json_t *request,
                          char id[TW_UUID_STRLEN + 1], bool *joined, struct tw_error *err)
{
    *joined = false;
    uint8_t r[16];
    size_t got = 0;
    while (got < sizeof(r)) {
        ssize_t n = getrandom(r + got, sizeof(r) - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            json_decref(request);
            return tw_error_set(err, TW_EIO, "can't read the random source for an operation id");
        }
        got += (size_t)n;
    }
    pthread_mutex_lock(&ops->lock);
    struct op *slot = NULL, *oldest = NULL;
    for (size_t i = 0; i < ops->max; i++) {
        struct op *o = &ops->v[i];
        if (!o->used) {
            if (!slot)
                slot = o;
            continue;
        }
        if (!finished(o) && strcmp(o->kind, kind) == 0 && strcmp(o->key, key) == 0) {
            memcpy(id, o->id, sizeof(o->id));
            *joined = true;
            pthread_mutex_unlock(&ops->lock);
            json_decref(request);
            return TW_OK;
        }
        if (finished(o) && (!oldest || o->seq < oldest->seq))
            oldest = o;
    }
    if (!slot && oldest) {
        op_clear(oldest);
        slot = oldest;
    }
    if (!slot) {
        pthread_mutex_unlock(&ops->lock);
        json_decref(request);
        return tw_error_set(err, TW_ENOMEM,
                            "%zu operations are queued or running, the most the server keeps; "
                            "try again when one has finished",
                            ops->max);
    }
    slot->used = true;
    tw_uuid_format(r, slot->id);
    snprintf(slot->kind, sizeof(slot->kind), "%s", kind);
    snprintf(slot->key, sizeof(slot->key), "%s", key);
    slot->state = TW_OP_QUEUED;
    slot->seq = ++ops->seq;
    slot->created_ns = tw_worker_now_ns();
    slot->request = request;
    memcpy(id, slot->id, sizeof(slot->id));
    pthread_mutex_unlock(&ops->lock);
    return TW_OK;
}

void tw_ops_start(struct tw_ops *ops, const char *id)
{
    pthread_mutex_lock(&ops->lock);
    struct op *o = find(ops, id);
    if (o && o->state == TW_OP_QUEUED) {
        o->state = TW_OP_RUNNING;
        o->started_ns = tw_worker_now_ns();
        pthread_cond_broadcast(&ops->changed);
    }
    pthread_mutex_unlock(&ops->lock);
}

static void finish(struct tw_ops *ops, const char *id, json_t *result, const char *code,
                   const char *message)
{
    pthread_mutex_lock(&ops->lock);
    struct op *o = find(ops, id);
    if (o && !finished(o)) {
        o->finished_ns = tw_worker_now_ns();
        if (result) {
            o->state = TW_OP_SUCCEEDED;
            o->result = result;
            result = NULL;
        } else {
            o->state = TW_OP_FAILED;
            snprintf(o->code, sizeof(o->code), "%s", code);
            tw_srv_clean_text(message ? message : "", o->message, sizeof(o->message));
        }
        pthread_cond_broadcast(&ops->changed);
    }
    pthread_mutex_unlock(&ops->lock);
    json_decref(result);
}

void tw_ops_succeed(struct tw_ops *ops, const char *id, json_t *result)
{
    /* No result (out of memory building it): failed, but finished. */
    finish(ops, id, result, "internal", "out of memory building the operation's result");
}

void tw_ops_fail(struct tw_ops *ops, const char *id, const char *code, const char *message)
{
    finish(ops, id, NULL, code, message);
}

static json_t *time_json(int64_t ns)
{
    char s[40];
    if (!ns || !tw_rfc3339_format_ns(ns, 0, 3, s, sizeof(s)))
        return json_null();
    return json_string(s);
}

static json_t *op_json(const struct op *o)
{
    json_t *err = o->state == TW_OP_FAILED
                      ? json_pack("{s:s, s:s}", "code", o->code, "message", o->message)
                      : json_null();
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:O, s:O, s:o}", "id", o->id, "kind", o->kind,
                     "state", state_name[o->state], "created_at", time_json(o->created_ns),
                     "started_at", time_json(o->started_ns), "finished_at",
                     time_json(o->finished_ns), "request", o->request ? o->request : json_null(),
                     "result", o->result ? o->result : json_null(), "error", err);
}

json_t *tw_ops_get(struct tw_ops *ops, const char *id, int64_t until_ns,
                   const atomic_bool *stopping)
{
    pthread_mutex_lock(&ops->lock);
    struct op *o = find(ops, id);
    while (o && until_ns > 0 && !finished(o) && !(stopping && atomic_load(stopping))) {
        int64_t now = tw_worker_now_ns();
        if (now >= until_ns)
            break;
        int64_t next = now + 100 * TW_NS_PER_MS;
        if (next > until_ns)
            next = until_ns;
        struct timespec ts = {.tv_sec = (time_t)(next / TW_NS_PER_S),
                              .tv_nsec = (long)(next % TW_NS_PER_S)};
        pthread_cond_timedwait(&ops->changed, &ops->lock, &ts);
        o = find(ops, id); /* evicted meanwhile: gone */
    }
    json_t *v = o ? op_json(o) : NULL;
    pthread_mutex_unlock(&ops->lock);
    return v;
}

bool tw_ops_wait_claim(struct tw_ops *ops, unsigned max)
{
    unsigned n = atomic_load(&ops->waiters);
    do {
        if (n >= max)
            return false;
    } while (!atomic_compare_exchange_weak(&ops->waiters, &n, n + 1));
    return true;
}

void tw_ops_wait_release(struct tw_ops *ops)
{
    atomic_fetch_sub(&ops->waiters, 1);
}

/* GET /api/v1/operations/{id}[?wait=SECONDS] */
void tw_v1_operation(struct tw_req *rq)
{
    struct tw_server *srv = rq->srv;
    const char *w = MHD_lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, "wait");
    long wait_s = 0;
    if (w) {
        char *end;
        errno = 0;
        wait_s = strtol(w, &end, 10);
        if (!w[0] || *end || errno || wait_s < 0 || wait_s > TW_OPS_WAIT_MAX_S) {
            tw_req_error(rq, 400, "bad_request",
                         "wait must be a whole number of seconds from 0 to %d", TW_OPS_WAIT_MAX_S);
            return;
        }
    }
    /* A wait holds a request thread: at most all of them but one wait at
     * once, the others are answered at once (a client polls again). */
    bool claimed = wait_s > 0 && srv->threads > 1 && tw_ops_wait_claim(srv->ops, srv->threads - 1);
    int64_t until = claimed ? tw_worker_now_ns() + wait_s * TW_NS_PER_S : 0;
    json_t *v = tw_ops_get(srv->ops, rq->name, until, &srv->stopping);
    if (claimed)
        tw_ops_wait_release(srv->ops);
    if (!v) {
        tw_req_error(rq, 404, "not_found",
                     "no operation %s (operations are kept in memory: the %d latest, until "
                     "the server restarts)",
                     rq->name, TW_OPS_MAX);
        return;
    }
    tw_req_json(rq, 200, v);
}

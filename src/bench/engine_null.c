/*
 * engine_null.c - an engine that moves no data.
 *
 * Every unit completes at once with its full length.  Tests use it to check
 * the runner (offsets, counts, ramp, sampling) without a disk, and it
 * measures the runner's own overhead per I/O.  With fail_every = N it fails
 * every Nth I/O with EIO, to test error accounting.
 */
#include "bench/engine.h"

#include <errno.h>
#include <stdlib.h>

struct null_state {
    struct tw_io **queued;  /* queued units, completed by the next getevents */
    unsigned nqueued;
    struct tw_io **done;    /* what the last getevents returned */
    uint64_t count;         /* I/Os seen, for fail_every */
};

static enum tw_err null_init(struct tw_engine_ctx *c, struct tw_error *err)
{
    struct null_state *s = calloc(1, sizeof(*s));
    if (!s)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the null engine");
    c->priv = s;
    s->queued = calloc(c->depth, sizeof(*s->queued));
    s->done = calloc(c->depth, sizeof(*s->done));
    if (!s->queued || !s->done)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the null engine");
    return TW_OK;
}

static enum tw_q null_queue(struct tw_engine_ctx *c, struct tw_io *io)
{
    struct null_state *s = c->priv;
    s->count++;
    io->res = (c->fail_every && s->count % c->fail_every == 0) ? -EIO
                                                                : (int64_t)io->len;
    s->queued[s->nqueued++] = io;
    return TW_Q_QUEUED;
}

static int null_commit(struct tw_engine_ctx *c)
{
    (void)c;
    return 0;
}

static int null_getevents(struct tw_engine_ctx *c, unsigned min, unsigned max,
                          unsigned timeout_ms)
{
    (void)min;
    (void)timeout_ms;
    struct null_state *s = c->priv;
    unsigned n = s->nqueued < max ? s->nqueued : max;
    for (unsigned i = 0; i < n; i++)
        s->done[i] = s->queued[i];
    for (unsigned i = n; i < s->nqueued; i++)
        s->queued[i - n] = s->queued[i];
    s->nqueued -= n;
    return (int)n;
}

static struct tw_io *null_event(struct tw_engine_ctx *c, unsigned i)
{
    struct null_state *s = c->priv;
    return s->done[i];
}

static void null_cleanup(struct tw_engine_ctx *c)
{
    struct null_state *s = c->priv;
    if (!s)
        return;
    free(s->queued);
    free(s->done);
    free(s);
    c->priv = NULL;
}

const struct tw_engine_ops tw_engine_null = {
    .name = "null",
    .version = TW_ENGINE_VERSION,
    .flags = TW_ENG_NOIO,
    .init = null_init,
    .queue = null_queue,
    .commit = null_commit,
    .getevents = null_getevents,
    .event = null_event,
    .cleanup = null_cleanup,
};

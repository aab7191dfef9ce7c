/*
 * engine_libaio.c - Linux native asynchronous I/O through libaio.
 *
 * One io_context per job.  Units queued between two commits are handed to
 * the kernel in one io_submit; completions are reaped in batches of up to
 * the queue depth.  Submitting in batches is what keeps the CPU cost per
 * I/O low at high queue depth.
 */
#include "bench/engine.h"

#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct aio_state {
    io_context_t ctx;
    struct iocb *iocbs;        /* one per unit, indexed by tw_io.idx */
    struct iocb **pending;     /* queued, not yet submitted: pending[0..npending) */
    unsigned npending;
    struct io_event *events;   /* filled by io_getevents */
    struct tw_io **failed;     /* units io_submit refused: completed with an error */
    unsigned nfailed;
    struct tw_io **ready;      /* refused units handed out by the last getevents */
    unsigned nready;
    unsigned inkernel;         /* submitted and not yet reaped */
};

static enum tw_err aio_init(struct tw_engine_ctx *c, struct tw_error *err)
{
    struct aio_state *s = calloc(1, sizeof(*s));
    if (!s)
        return tw_error_set(err, TW_ENOMEM, "out of memory for libaio state");
    c->priv = s;
    s->iocbs = calloc(c->depth, sizeof(*s->iocbs));
    s->pending = calloc(c->depth, sizeof(*s->pending));
    s->events = calloc(c->depth, sizeof(*s->events));
    s->failed = calloc(c->depth, sizeof(*s->failed));
    s->ready = calloc(c->depth, sizeof(*s->ready));
    if (!s->iocbs || !s->pending || !s->events || !s->failed || !s->ready)
        return tw_error_set(err, TW_ENOMEM, "out of memory for %u libaio units",
                            c->depth);
    int r = io_setup((int)c->depth, &s->ctx);
    if (r < 0) {
        s->ctx = 0;
        if (r == -EAGAIN)
            return tw_error_set(err, TW_EUNSUPPORTED,
                                "io_setup(%u) failed: the system-wide limit of "
                                "in-flight AIO requests is reached; raise "
                                "fs.aio-max-nr or lower --qd/--jobs",
                                c->depth);
        return tw_error_set(err, TW_EIO, "io_setup(%u) failed: %s", c->depth,
                            strerror(-r));
    }
    return TW_OK;
}

static enum tw_q aio_queue(struct tw_engine_ctx *c, struct tw_io *io)
{
    struct aio_state *s = c->priv;
    struct iocb *cb = &s->iocbs[io->idx];
    if (io->write)
        io_prep_pwrite(cb, c->fd, io->buf, io->len, (long long)io->offset);
    else
        io_prep_pread(cb, c->fd, io->buf, io->len, (long long)io->offset);
    cb->data = io;
    s->pending[s->npending++] = cb;
    return TW_Q_QUEUED;
}

static int aio_commit(struct tw_engine_ctx *c)
{
    struct aio_state *s = c->priv;
    unsigned done = 0;
    while (done < s->npending) {
        int r = io_submit(s->ctx, (long)(s->npending - done), s->pending + done);
        if (r > 0) {
            done += (unsigned)r;
            s->inkernel += (unsigned)r;
            continue;
        }
        if (r == -EINTR)
            continue;
        if (r == -EAGAIN && s->inkernel > 0) {
            /* The kernel is out of request slots; what was not taken is
             * retried on the next commit, after completions were reaped. */
            memmove(s->pending, s->pending + done,
                    (s->npending - done) * sizeof(*s->pending));
            s->npending -= done;
            return 0;
        }
        /* The first remaining unit was refused (EINVAL for a misaligned
         * buffer, EBADF ..., or EAGAIN with nothing in the kernel that
         * could free a slot): complete it with that error and go on. */
        struct tw_io *io = s->pending[done]->data;
        io->res = r < 0 ? r : -EIO;
        s->failed[s->nfailed++] = io;
        done++;
    }
    s->npending = 0;
    return 0;
}

static int aio_getevents(struct tw_engine_ctx *c, unsigned min, unsigned max,
                         unsigned timeout_ms)
{
    struct aio_state *s = c->priv;
    if (s->nfailed) {
        /* Hand out the refused units first, as completions of their own.
         * They move to READY at once: the caller may refill and submit
         * them before it has read them all, and a second refusal must
         * find room in FAILED. */
        s->nready = s->nfailed < max ? s->nfailed : max;
        memcpy(s->ready, s->failed, s->nready * sizeof(*s->ready));
        memmove(s->failed, s->failed + s->nready, (s->nfailed - s->nready) * sizeof(*s->failed));
        s->nfailed -= s->nready;
        return (int)s->nready;
    }
    s->nready = 0;
    if (s->npending)
        aio_commit(c);
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    int r;
    do {
        r = io_getevents(s->ctx, min, max, s->events, &ts);
    } while (r == -EINTR);
    if (r > 0)
        s->inkernel -= (unsigned)r;
    return r;
}

static struct tw_io *aio_event(struct tw_engine_ctx *c, unsigned i)
{
    struct aio_state *s = c->priv;
    if (s->nready)
        return s->ready[i];
    struct io_event *ev = &s->events[i];
    struct tw_io *io = ev->data;
    /* res is the byte count or a negative errno; res2 is unused by most
     * drivers. */
    io->res = (long)ev->res;
    return io;
}

static void aio_cleanup(struct tw_engine_ctx *c)
{
    struct aio_state *s = c->priv;
    if (!s)
        return;
    if (s->ctx)
        io_destroy(s->ctx);
    free(s->iocbs);
    free(s->pending);
    free(s->events);
    free(s->failed);
    free(s->ready);
    free(s);
    c->priv = NULL;
}

const struct tw_engine_ops tw_engine_libaio = {
    .name = "libaio",
    .version = TW_ENGINE_VERSION,
    .flags = 0,
    .init = aio_init,
    .queue = aio_queue,
    .commit = aio_commit,
    .getevents = aio_getevents,
    .event = aio_event,
    .cleanup = aio_cleanup,
};

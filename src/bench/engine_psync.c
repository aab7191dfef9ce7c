/*
 * engine_psync.c - pread/pwrite, one I/O at a time.
 *
 * It can only keep one I/O in flight whatever queue depth was asked for,
 * which is how a database without read-ahead scans a table.  The runner
 * records effective_queue_depth 1 for it, and the verdict knows that a
 * QD-1 run can't prove a high-IOPS rating.
 */
#include "bench/engine.h"

#include <errno.h>
#include <unistd.h>

static enum tw_q psync_queue(struct tw_engine_ctx *c, struct tw_io *io)
{
    uint32_t done = 0;
    while (done < io->len) {
        ssize_t r = io->write
                        ? pwrite(c->fd, (char *)io->buf + done, io->len - done,
                                 (off_t)(io->offset + done))
                        : pread(c->fd, (char *)io->buf + done, io->len - done,
                                (off_t)(io->offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            io->res = -errno;
            return TW_Q_COMPLETED;
        }
        if (r == 0)
            break; /* end of file: a short I/O, reported as such */
        done += (uint32_t)r;
    }
    io->res = done;
    return TW_Q_COMPLETED;
}

const struct tw_engine_ops tw_engine_psync = {
    .name = "psync",
    .version = TW_ENGINE_VERSION,
    .flags = TW_ENG_SYNC,
    .queue = psync_queue,
};

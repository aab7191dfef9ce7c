/*
 * run_loop.c - tierwise-agent run without --once: a cycle every
 * --interval and, in between, the spool retried with exponential backoff
 * and jitter until it is empty, until SIGTERM or SIGINT.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "agent/run_int.h"
#include "bench/sys.h"

/* Sleeps until DEADLINE (monotonic ms) or a signal. */
static void sleep_until(uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = tw_now_ns() / 1000000u;
        if (run_stop || now >= deadline_ms)
            return;
        uint64_t left = deadline_ms - now;
        if (left > 200)
            left = 200;
        struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

int run_serve_forever(struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http)
{
    uint64_t rng = (uint64_t)run_wall_ms() ^ ((uint64_t)getpid() << 32);
    int failures = 0;
    uint64_t now = tw_now_ns() / 1000000u;
    uint64_t next_cycle = now, next_drain = 0;
    bool pending = false, first = true;
    while (!run_stop) {
        now = tw_now_ns() / 1000000u;
        enum drain_end end = DRAIN_EMPTY;
        bool acted = false;
        if (now >= next_cycle) {
            int st = run_cycle(c, sp, http, &end);
            /* A setting that is wrong from the start (a --file-target for a
             * LUN the VM lacks) ends the service, so it shows as failed;
             * later it may come from a detached disk, and the loop goes on. */
            if (st == TW_EXIT_USAGE && first)
                return st;
            first = false;
            if (st != TW_EXIT_OK && st != TW_EXIT_INTERRUPTED)
                fprintf(stderr, "%s: this cycle ended with status %d; the next in %llu s\n",
                        TW_AGENT_PROG, st, (unsigned long long)(c->interval_ms / 1000));
            next_cycle = now + c->interval_ms;
            acted = true;
        } else if (pending && now >= next_drain) {
            struct drain_sum sum = {0};
            end = run_drain(c, sp, http, &sum);
            (void)run_drain_status(c, sp, end, &sum);
            acted = true;
        }
        if (acted) {
            if (end == DRAIN_EMPTY || end == DRAIN_STOPPED) {
                failures = 0;
                pending = false;
            } else {
                failures++;
                pending = true;
                int64_t wait =
                    tw_spool_backoff_ms(failures, (int64_t)c->retry_min_ms,
                                        (int64_t)c->retry_max_ms, &rng);
                next_drain = tw_now_ns() / 1000000u + (uint64_t)wait;
                fprintf(stderr, "%s: next delivery attempt in %lld s\n", TW_AGENT_PROG,
                        (long long)(wait / 1000));
            }
        }
        sleep_until(pending && next_drain < next_cycle ? next_drain : next_cycle);
    }
    fprintf(stderr, "%s: stopping (signal)\n", TW_AGENT_PROG);
    return TW_EXIT_OK;
}

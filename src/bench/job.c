/*
 * job.c - the benchmark runner (see job.h for the model).
 *
 * The hot path is run_async(): reap a batch of completions, account them,
 * refill the same units with new offsets and submit them, several to a
 * commit.  The clock is read once per reap and once per commit, not per
 * I/O.
 */
#include "bench/job.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/hist.h"
#include "bench/stat.h"
#include "bench/sys.h"

enum phase { PH_RAMP, PH_MEASURE, PH_STOP };

/*
 * Most completions taken by one reap.  Reaping a whole deep queue at once
 * (256) and refilling it in one submit makes the job's I/O arrive in
 * bursts, which widened the latency tail (p99 about 25 % above fio's on
 * rated-iops, tests/perf/bench-vs-fio.sh); batches of 32 keep the tail as
 * fio's while still handing the kernel many I/Os per system call.
 */
#define REAP_MAX 32u

/*
 * Most bytes handed to the kernel in one submit.  A submit is plugged: the
 * device sees none of its I/Os until all are prepared, so 32 x 1 MiB in one
 * call left the device idle meanwhile and cost about 5 % of sequential
 * throughput against fio's one-at-a-time submits.  Small I/Os still go
 * many to a call.
 */
#define SUBMIT_BYTES (256u * 1024u)
/* The longest runtime or ramp a job takes: a day. */
#define TW_JOB_MAX_PHASE_MS (86400ull * 1000)

/* Figures of one direction in one job. */
struct dirstat {
    struct tw_hist *hist;  /* latency, ns (heap: 59 KiB) */
    struct tw_stat lat;    /* mean and variance of the same samples */
    uint64_t ios, bytes;
};

struct job {
    const struct tw_job_params *p;
    unsigned id;
    pthread_t thread;
    struct tw_engine_ctx eng;
    struct tw_io *units;
    struct tw_io **requeued;      /* units refilled in the current batch */
    void *bufs;
    struct tw_offsets off;
    struct tw_rng mix;            /* read/write choice */
    struct dirstat d[2];          /* [0] reads, [1] writes */
    uint64_t t_start_ns;          /* when this job saw the measured phase begin */
    uint64_t t_end_ns;            /* when it saw the stop */
    uint64_t issued_bytes;        /* for io_limit */
    uint64_t errors;
    uint64_t first_err_ns;
    char first_err[200];
    enum tw_err fatal;            /* engine failure that ended the job */
    char fatal_msg[512];
    /* Written by the job, read by the runner's sampler: counted I/Os and
     * bytes of the measured phase, and whether the job has finished. */
    _Atomic uint64_t live_ios[2];   /* [0] reads, [1] writes */
    _Atomic uint64_t live_bytes;
    atomic_bool done;
    char pad[64];
};

struct run {
    const struct tw_job_params *p;
    atomic_int phase;
    struct job *jobs;
};

/* ---- PRNG and offsets ---- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tw_rng_seed(struct tw_rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t tw_rng_next(struct tw_rng *g)
{
    uint64_t *s = g->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

void tw_offsets_init(struct tw_offsets *o, const struct tw_job_params *p,
                     unsigned job, uint64_t seed)
{
    uint64_t total = p->region_size / p->block_size;
    memset(o, 0, sizeof(*o));
    tw_rng_seed(&o->rng, seed);
    o->bs = p->block_size;
    o->random = tw_pattern_is_random(p->pattern);
    if (o->random || p->jobs <= 1 || total < p->jobs) {
        o->base = p->region_offset;
        o->nblocks = total;
        /* Sequential jobs that can't have a slice each start staggered. */
        o->next = o->random ? 0 : (total * job / (p->jobs ? p->jobs : 1)) % total;
    } else {
        uint64_t per = total / p->jobs;
        o->base = p->region_offset + (uint64_t)job * per * p->block_size;
        o->nblocks = per;
    }
}

/* ---- checks ---- */

enum tw_err tw_job_check(const struct tw_job_params *p, struct tw_error *err)
{
    if (!p->engine)
        return tw_error_set(err, TW_EINVAL, "no engine given");
    if (p->block_size == 0)
        return tw_error_set(err, TW_EINVAL, "block size 0: give --bs, e.g. 8k");
    if (p->align && p->block_size % p->align)
        return tw_error_set(err, TW_EINVAL,
                            "block size %u is not a multiple of the target's "
                            "logical block size %u: use a multiple, e.g. %u",
                            p->block_size, p->align,
                            (p->block_size / p->align + 1) * p->align);
    if (p->queue_depth == 0)
        return tw_error_set(err, TW_EINVAL,
                            "queue depth 0: give --qd 1 or more (rated figures "
                            "need 32 or more)");
    if (p->queue_depth > 65536)
        return tw_error_set(err, TW_EINVAL, "queue depth %u is above 65536",
                            p->queue_depth);
    if (p->jobs == 0 || p->jobs > 1024)
        return tw_error_set(err, TW_EINVAL, "--jobs %u: give 1 to 1024", p->jobs);
    if (p->read_pct > 100)
        return tw_error_set(err, TW_EINVAL, "--read-pct %u: give 0 to 100",
                            p->read_pct);
    if (p->region_size < p->block_size)
        return tw_error_set(err, TW_EINVAL,
                            "the target (%llu bytes) is smaller than one block "
                            "(%u bytes): use a bigger target or a smaller --bs",
                            (unsigned long long)p->region_size, p->block_size);
    if (p->runtime_ms == 0 && p->io_limit_bytes == 0)
        return tw_error_set(err, TW_EINVAL,
                            "the run has no end: give a runtime or an I/O size");
    /* A day each at most: the deadlines in nanoseconds can't wrap round. */
    if (p->runtime_ms > TW_JOB_MAX_PHASE_MS || p->ramp_ms > TW_JOB_MAX_PHASE_MS)
        return tw_error_set(err, TW_EINVAL,
                            "a runtime of %llu ms and a ramp of %llu ms: give at most %llu s "
                            "each",
                            (unsigned long long)p->runtime_ms, (unsigned long long)p->ramp_ms,
                            (unsigned long long)(TW_JOB_MAX_PHASE_MS / 1000));
    return TW_OK;
}

/* ---- the jobs ---- */

static void note_error(struct job *j, const struct tw_io *io, uint64_t now)
{
    j->errors++;
    if (j->errors > 1)
        return;
    j->first_err_ns = now;
    if (io->res < 0)
        snprintf(j->first_err, sizeof(j->first_err),
                 "%s of %u bytes at offset %llu failed: %s (job %u)",
                 io->write ? "write" : "read", io->len,
                 (unsigned long long)io->offset, strerror((int)-io->res), j->id);
    else
        snprintf(j->first_err, sizeof(j->first_err),
                 "short %s: %lld of %u bytes at offset %llu (job %u)",
                 io->write ? "write" : "read", (long long)io->res, io->len,
                 (unsigned long long)io->offset, j->id);
}

static inline void account(struct job *j, const struct tw_io *io, uint64_t now)
{
    if (io->res != (int64_t)io->len) {
        note_error(j, io, now);
        return;
    }
    struct dirstat *d = &j->d[io->write];
    uint64_t lat = now > io->start_ns ? now - io->start_ns : 0;
    tw_hist_add(d->hist, lat);
    tw_stat_add(&d->lat, (double)lat);
    d->ios++;
    d->bytes += io->len;
}

static void reset_stats(struct job *j, uint64_t now)
{
    for (int k = 0; k < 2; k++) {
        tw_hist_init(j->d[k].hist);
        tw_stat_init(&j->d[k].lat);
        j->d[k].ios = 0;
        j->d[k].bytes = 0;
    }
    j->errors = 0;
    j->first_err[0] = '\0';
    j->t_start_ns = now;
}

static inline void publish(struct job *j)
{
    atomic_store_explicit(&j->live_ios[0], j->d[0].ios, memory_order_relaxed);
    atomic_store_explicit(&j->live_ios[1], j->d[1].ios, memory_order_relaxed);
    atomic_store_explicit(&j->live_bytes, j->d[0].bytes + j->d[1].bytes,
                          memory_order_relaxed);
}

/* Gives IO its next offset and direction; false when the job's I/O size is
 * used up. */
static inline bool prep(struct job *j, struct tw_io *io)
{
    const struct tw_job_params *p = j->p;
    if (p->io_limit_bytes && j->issued_bytes >= p->io_limit_bytes)
        return false;
    j->issued_bytes += p->block_size;
    io->offset = tw_offsets_next(&j->off);
    switch (p->pattern) {
    case TW_PAT_RANDREAD:
    case TW_PAT_READ:
        io->write = false;
        break;
    case TW_PAT_RANDWRITE:
    case TW_PAT_WRITE:
        io->write = true;
        break;
    default:
        io->write = tw_rng_below(&j->mix, 100) >= p->read_pct;
        break;
    }
    return true;
}

/* Follows the runner's phase; returns whether to keep issuing I/O. */
static inline bool follow_phase(struct job *j, struct run *run, int *local,
                                uint64_t now)
{
    int ph = atomic_load_explicit(&run->phase, memory_order_acquire);
    if (ph != *local) {
        if (*local == PH_RAMP && ph >= PH_MEASURE)
            reset_stats(j, now);
        if (ph == PH_STOP && !j->t_end_ns)
            j->t_end_ns = now;
        *local = ph;
    }
    return ph != PH_STOP;
}

static void run_sync(struct job *j, struct run *run)
{
    int local = PH_RAMP;
    struct tw_io *io = &j->units[0];
    if (!follow_phase(j, run, &local, tw_now_ns()))
        return; /* stopped before it began (another job failed to start) */
    unsigned n = 0;
    for (;;) {
        if (!prep(j, io))
            break;
        io->start_ns = tw_now_ns();
        j->eng.ops->queue(&j->eng, io);
        uint64_t now = tw_now_ns();
        if (local == PH_MEASURE)
            account(j, io, now);
        /* The phase and the live counters are checked every 16 I/Os: often
         * enough for a prompt stop, rarely enough to cost nothing. */
        if ((++n & 15) == 0) {
            publish(j);
            if (!follow_phase(j, run, &local, now))
                break;
        }
    }
    if (!j->t_end_ns)
        j->t_end_ns = tw_now_ns();
}

/* Hands the queued units requeued[from..to) to the kernel, stamped with one
 * clock read: queued units only reach the device at commit. */
static void submit(struct job *j, unsigned from, unsigned to)
{
    uint64_t ts = tw_now_ns();
    for (unsigned i = from; i < to; i++)
        j->requeued[i]->start_ns = ts;
    int rc = j->eng.ops->commit(&j->eng);
    if (rc < 0 && j->fatal == TW_OK) {
        j->fatal = TW_EIO;
        snprintf(j->fatal_msg, sizeof(j->fatal_msg), "%s: submitting I/O failed: %s",
                 j->eng.ops->name, strerror(-rc));
    }
}

static void run_async(struct job *j, struct run *run)
{
    const struct tw_engine_ops *ops = j->eng.ops;
    unsigned depth = j->eng.depth;
    unsigned inflight = 0;
    int local = PH_RAMP;
    bool issuing = follow_phase(j, run, &local, tw_now_ns());

    unsigned filled = 0; /* units of the first fill already submitted */
    for (unsigned i = 0; i < depth && issuing; i++) {
        struct tw_io *io = &j->units[i];
        if (!prep(j, io))
            break;
        ops->queue(&j->eng, io);
        j->requeued[inflight++] = io;
        if ((uint64_t)(inflight - filled) * io->len >= SUBMIT_BYTES) {
            submit(j, filled, inflight);
            filled = inflight;
        }
    }
    if (inflight > filled)
        submit(j, filled, inflight);
    while (inflight > 0) {
        int n = ops->getevents(&j->eng, 1, depth < REAP_MAX ? depth : REAP_MAX, 250);
        if (n < 0) {
            j->fatal = TW_EIO;
            snprintf(j->fatal_msg, sizeof(j->fatal_msg),
                     "%s: waiting for completions failed: %s", ops->name,
                     strerror(-n));
            break;
        }
        uint64_t now = tw_now_ns();
        if (issuing)
            issuing = follow_phase(j, run, &local, now);
        bool measuring = local == PH_MEASURE;
        unsigned requeue = 0, sent = 0;
        for (int i = 0; i < n; i++) {
            struct tw_io *io = ops->event(&j->eng, (unsigned)i);
            inflight--;
            if (measuring)
                account(j, io, now);
            if (issuing && prep(j, io)) {
                ops->queue(&j->eng, io);
                j->requeued[requeue++] = io;
                if ((uint64_t)(requeue - sent) * io->len >= SUBMIT_BYTES) {
                    submit(j, sent, requeue);
                    sent = requeue;
                }
            }
        }
        if (requeue > sent)
            submit(j, sent, requeue);
        inflight += requeue;
        if (measuring)
            publish(j);
    }
    if (!j->t_end_ns)
        j->t_end_ns = tw_now_ns();
}

static void *job_main(void *arg)
{
    struct job *j = arg;
    struct run *run = (struct run *)j->eng.priv; /* stashed until init */
    j->eng.priv = NULL;
    struct tw_error err = {0};
    if (j->eng.ops->init && j->eng.ops->init(&j->eng, &err) != TW_OK) {
        j->fatal = err.code;
        snprintf(j->fatal_msg, sizeof(j->fatal_msg), "%s", err.msg);
    } else if (j->eng.ops->flags & TW_ENG_SYNC) {
        run_sync(j, run);
    } else {
        run_async(j, run);
    }
    if (j->eng.ops->cleanup)
        j->eng.ops->cleanup(&j->eng);
    publish(j);
    atomic_store(&j->done, true);
    return NULL;
}

/* ---- the runner ---- */

static void free_jobs(struct job *jobs, unsigned n)
{
    if (!jobs)
        return;
    for (unsigned i = 0; i < n; i++) {
        free(jobs[i].units);
        free(jobs[i].requeued);
        free(jobs[i].bufs);
        free(jobs[i].d[0].hist);
        free(jobs[i].d[1].hist);
    }
    free(jobs);
}

static enum tw_err setup_job(struct job *j, const struct tw_job_params *p,
                             unsigned id, unsigned depth, uint64_t seed,
                             struct tw_error *err)
{
    j->p = p;
    j->id = id;
    j->eng.ops = p->engine;
    j->eng.fd = p->fd;
    j->eng.depth = depth;
    j->eng.fail_every = p->fail_every;
    j->units = calloc(depth, sizeof(*j->units));
    j->requeued = calloc(depth, sizeof(*j->requeued));
    j->d[0].hist = malloc(sizeof(struct tw_hist));
    j->d[1].hist = malloc(sizeof(struct tw_hist));
    size_t align = p->align > 4096 ? p->align : 4096;
    size_t total = (size_t)depth * p->block_size;
    if (!j->units || !j->requeued || !j->d[0].hist || !j->d[1].hist ||
        posix_memalign(&j->bufs, align, total) != 0) {
        j->bufs = NULL;
        return tw_error_set(err, TW_ENOMEM,
                            "out of memory for %u buffers of %u bytes (job %u): "
                            "lower --qd or --bs",
                            depth, p->block_size, id);
    }
    /* Buffers hold random bytes, so written data does not compress. */
    struct tw_rng g;
    tw_rng_seed(&g, seed ^ 0x5bd1e995u);
    uint64_t *w = j->bufs;
    for (size_t k = 0; k < total / sizeof(uint64_t); k++)
        w[k] = tw_rng_next(&g);
    for (unsigned k = 0; k < depth; k++) {
        j->units[k].buf = (char *)j->bufs + (size_t)k * p->block_size;
        j->units[k].len = p->block_size;
        j->units[k].idx = k;
    }
    tw_offsets_init(&j->off, p, id, seed);
    tw_rng_seed(&j->mix, seed * 31 + 7);
    for (int k = 0; k < 2; k++) {
        tw_hist_init(j->d[k].hist);
        tw_stat_init(&j->d[k].lat);
    }
    return TW_OK;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Fills one direction of R from the merged figures. */
static void fill_dir(struct tw_dir *out, const struct tw_hist *h,
                     const struct tw_stat *lat, uint64_t ios, uint64_t bytes,
                     double secs)
{
    memset(out, 0, sizeof(*out));
    out->present = true;
    out->ios = (int64_t)ios;
    out->bytes = (int64_t)bytes;
    out->iops = secs > 0 ? (double)ios / secs : 0;
    out->bw_bytes_per_s = secs > 0 ? (double)bytes / secs : 0;
    out->mbps = out->bw_bytes_per_s / 1e6;
    if (h->count) {
        out->lat.min_ns = (double)h->min_ns;
        out->lat.max_ns = (double)h->max_ns;
        out->lat.mean_ns = lat->mean;
        out->lat.stdev_ns = tw_stat_stdev(lat);
        for (size_t i = 0; i < tw_result_std_pct_count; i++)
            tw_lat_add_pct(&out->lat, tw_result_std_pct[i],
                           (double)tw_hist_percentile(h, tw_result_std_pct[i]));
    }
}

enum tw_err tw_job_run(const struct tw_job_params *p, struct tw_result *r,
                       struct tw_error *err)
{
    enum tw_err rc = tw_job_check(p, err);
    if (rc != TW_OK)
        return rc;
    bool sync = p->engine->flags & TW_ENG_SYNC;
    unsigned depth = sync ? 1 : p->queue_depth;
    uint64_t seed = p->seed;
    if (!seed && tw_sys_random(&seed, sizeof(seed)) != 0)
        seed = tw_now_ns();

    struct run run = {.p = p};
    atomic_init(&run.phase, p->ramp_ms ? PH_RAMP : PH_MEASURE);
    struct job *jobs = calloc(p->jobs, sizeof(*jobs));
    if (!jobs)
        return tw_error_set(err, TW_ENOMEM, "out of memory for %u jobs", p->jobs);
    run.jobs = jobs;
    for (unsigned i = 0; i < p->jobs; i++) {
        rc = setup_job(&jobs[i], p, i, depth, seed + i * 0x632be59bd9b4e019ULL, err);
        if (rc != TW_OK) {
            free_jobs(jobs, p->jobs);
            return rc;
        }
    }

    double cpu_u0 = 0, cpu_s0 = 0, cpu_u1 = 0, cpu_s1 = 0;
    uint64_t t0 = tw_now_ns();
    uint64_t t_measure = t0;
    if (!p->ramp_ms) {
        tw_sys_rfc3339_now(r->started_at, sizeof(r->started_at));
        tw_sys_cpu(&cpu_u0, &cpu_s0);
    }
    unsigned started = 0;
    for (unsigned i = 0; i < p->jobs; i++) {
        jobs[i].eng.priv = &run; /* handed to job_main, which clears it */
        int prc = pthread_create(&jobs[i].thread, NULL, job_main, &jobs[i]);
        if (prc != 0) {
            tw_error_set(err, TW_EIO, "can't start job thread %u: %s", i, strerror(prc));
            atomic_store(&run.phase, PH_STOP);
            break;
        }
        started++;
    }

    /* The timekeeper: ramp -> measure -> stop, sampling once a second. */
    struct tw_stat per_s[2]; /* per-second IOPS of reads, of writes */
    tw_stat_init(&per_s[0]);
    tw_stat_init(&per_s[1]);
    uint64_t ramp_end = t0 + p->ramp_ms * 1000000ULL;
    uint64_t run_end = p->runtime_ms ? ramp_end + p->runtime_ms * 1000000ULL : 0;
    uint64_t last_tick = t0, last_ios[2] = {0, 0}, last_bytes = 0;
    uint64_t next_tick = t0 + 1000000000ULL;
    bool interrupted = false;
    while (started == p->jobs) {
        uint64_t now = tw_now_ns();
        int ph = atomic_load(&run.phase);
        if (ph == PH_RAMP && now >= ramp_end) {
            tw_sys_cpu(&cpu_u0, &cpu_s0);
            tw_sys_rfc3339_now(r->started_at, sizeof(r->started_at));
            atomic_store_explicit(&run.phase, PH_MEASURE, memory_order_release);
            t_measure = now;
            last_tick = now;
            last_ios[0] = last_ios[1] = last_bytes = 0;
            next_tick = now + 1000000000ULL;
            continue;
        }
        bool all_done = true;
        for (unsigned i = 0; i < p->jobs; i++)
            all_done = all_done && atomic_load(&jobs[i].done);
        if (p->interrupt && *p->interrupt)
            interrupted = true;
        if (all_done || interrupted || (run_end && now >= run_end))
            break;
        if (now >= next_tick) {
            uint64_t ios[2] = {0, 0}, bytes = 0;
            for (unsigned i = 0; i < p->jobs; i++) {
                for (int k = 0; k < 2; k++)
                    ios[k] += atomic_load_explicit(&jobs[i].live_ios[k], memory_order_relaxed);
                bytes += atomic_load_explicit(&jobs[i].live_bytes, memory_order_relaxed);
            }
            double dt = (double)(now - last_tick) / 1e9;
            double dir_iops[2] = {(double)(ios[0] - last_ios[0]) / dt,
                                  (double)(ios[1] - last_ios[1]) / dt};
            double iops = dir_iops[0] + dir_iops[1];
            double mbps = (double)(bytes - last_bytes) / dt / 1e6;
            if (ph == PH_MEASURE) {
                tw_stat_add(&per_s[0], dir_iops[0]);
                tw_stat_add(&per_s[1], dir_iops[1]);
            }
            if (p->progress) {
                struct tw_progress pr = {
                    .elapsed_s = (double)(now - t0) / 1e9,
                    .total_s = p->runtime_ms ? (double)(p->ramp_ms + p->runtime_ms) / 1e3 : 0,
                    .ramping = ph == PH_RAMP,
                    .iops = ph == PH_MEASURE ? iops : 0,
                    .mbps = ph == PH_MEASURE ? mbps : 0,
                };
                p->progress(&pr, p->progress_arg);
            }
            last_tick = now;
            last_ios[0] = ios[0];
            last_ios[1] = ios[1];
            last_bytes = bytes;
            next_tick += 1000000000ULL;
            if (next_tick <= now)
                next_tick = now + 1000000000ULL;
        }
        uint64_t wake = next_tick;
        if (atomic_load(&run.phase) == PH_RAMP && ramp_end < wake)
            wake = ramp_end;
        if (run_end && run_end < wake)
            wake = run_end;
        uint64_t nap = wake > now ? wake - now : 0;
        if (nap > 100000000ULL) /* look at size-based jobs and signals often */
            nap = 100000000ULL;
        sleep_ns(nap);
    }
    atomic_store_explicit(&run.phase, PH_STOP, memory_order_release);
    for (unsigned i = 0; i < started; i++)
        pthread_join(jobs[i].thread, NULL);
    /* Measured only if some job saw the measured phase begin: a size-based
     * job can finish during the ramp even when the switch came just after. */
    bool never_measured = true;
    for (unsigned i = 0; i < started; i++)
        never_measured = never_measured && !jobs[i].t_start_ns;
    tw_sys_cpu(&cpu_u1, &cpu_s1);

    if (started != p->jobs) {
        free_jobs(jobs, p->jobs);
        return TW_EIO;
    }
    for (unsigned i = 0; i < p->jobs; i++) {
        if (jobs[i].fatal != TW_OK) {
            rc = tw_error_set(err, jobs[i].fatal, "job %u: %s", i, jobs[i].fatal_msg);
            free_jobs(jobs, p->jobs);
            return rc;
        }
    }
    if (interrupted) {
        free_jobs(jobs, p->jobs);
        return tw_error_set(err, TW_EINVAL, "interrupted: no result recorded");
    }
    if (never_measured) {
        free_jobs(jobs, p->jobs);
        return tw_error_set(err, TW_EINVAL,
                            "the I/O size was used up during the %llu ms ramp: "
                            "nothing was measured; lower --ramp or raise the "
                            "I/O size",
                            (unsigned long long)p->ramp_ms);
    }

    /* Merge the jobs.  Each job's measured time runs from when it saw the
     * measured phase begin to when it stopped; the run's rate is the sum of
     * I/Os over the longest of those, as fio's group figures are. */
    struct tw_hist *h = malloc(sizeof(*h));
    if (!h) {
        free_jobs(jobs, p->jobs);
        return tw_error_set(err, TW_ENOMEM, "out of memory merging results");
    }
    double secs = 0;
    for (unsigned i = 0; i < p->jobs; i++) {
        uint64_t start = jobs[i].t_start_ns ? jobs[i].t_start_ns : t_measure;
        double s = jobs[i].t_end_ns > start ? (double)(jobs[i].t_end_ns - start) / 1e9 : 0;
        if (s > secs)
            secs = s;
    }
    for (int k = 0; k < 2; k++) {
        struct tw_stat lat;
        uint64_t ios = 0, bytes = 0;
        tw_hist_init(h);
        tw_stat_init(&lat);
        for (unsigned i = 0; i < p->jobs; i++) {
            tw_hist_merge(h, jobs[i].d[k].hist);
            tw_stat_merge(&lat, &jobs[i].d[k].lat);
            ios += jobs[i].d[k].ios;
            bytes += jobs[i].d[k].bytes;
        }
        bool dir_used = k == 0 ? tw_pattern_reads(p->pattern) : tw_pattern_writes(p->pattern);
        struct tw_dir *out = k == 0 ? &r->read : &r->write;
        bool mixed = dir_used && tw_pattern_reads(p->pattern) && tw_pattern_writes(p->pattern);
        /* A mixed run whose share for this direction is 0 did none of it. */
        if (dir_used && (ios > 0 || !mixed))
            fill_dir(out, h, &lat, ios, bytes, secs);
        else
            memset(out, 0, sizeof(*out));
    }
    free(h);

    /* Per-second samples, taken by the timekeeper for each direction. */
    for (int k = 0; k < 2; k++) {
        struct tw_dir *out = k == 0 ? &r->read : &r->write;
        if (!out->present || !per_s[k].n)
            continue;
        out->iops_per_s.present = true;
        out->iops_per_s.min = per_s[k].min;
        out->iops_per_s.max = per_s[k].max;
        out->iops_per_s.mean = per_s[k].mean;
        out->iops_per_s.stdev = tw_stat_stdev(&per_s[k]);
        out->iops_per_s.samples = (int64_t)per_s[k].n;
    }

    uint64_t errors = 0, first_ns = UINT64_MAX;
    r->errors.first[0] = '\0';
    for (unsigned i = 0; i < p->jobs; i++) {
        errors += jobs[i].errors;
        if (jobs[i].errors && jobs[i].first_err_ns < first_ns) {
            first_ns = jobs[i].first_err_ns;
            snprintf(r->errors.first, sizeof(r->errors.first), "%s", jobs[i].first_err);
        }
    }
    r->errors.count = (int64_t)errors;
    r->cpu.usr_s = cpu_u1 - cpu_u0;
    r->cpu.sys_s = cpu_s1 - cpu_s0;

    snprintf(r->method.engine, sizeof(r->method.engine), "%s", p->engine->name);
    r->method.direct = p->direct;
    r->method.pattern = p->pattern;
    r->method.block_size_bytes = p->block_size;
    r->method.queue_depth = (int)p->queue_depth;
    r->method.effective_queue_depth = (int)depth;
    r->method.jobs = (int)p->jobs;
    r->method.read_pct = tw_pattern_reads(p->pattern)
                             ? (tw_pattern_writes(p->pattern) ? (int)p->read_pct : 100)
                             : 0;
    r->method.runtime_ms = (int64_t)llround(secs * 1000);
    r->method.ramp_ms = (int64_t)p->ramp_ms;
    free_jobs(jobs, p->jobs);
    return TW_OK;
}

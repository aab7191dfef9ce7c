/*
 * pace.c - keeping tierwise below ARM's limits: a token bucket per region
 * for reads and one for writes, and a budget of start/deallocate calls per
 * VM a minute.
 *
 * The buckets are kept as "theoretical arrival times" (GCRA, the virtual
 * scheduling form of a token bucket): a bucket holds the instant its next
 * token is due; taking one moves it by one interval, and a caller waits
 * while it is more than the bucket's depth ahead of now.  So a wait is
 * known, and the token reserved, under the lock at once, and the caller
 * sleeps outside it: threads that share the pacer queue in order without
 * holding it.  A 429 puts its region on hold until its Retry-After
 * (tw_arm_pacer_hold): every thread's next request of that region waits
 * for the hold to end, not only the thread that was told.  The region ""
 * is the calls whose region the client can't tell: each takes a token of
 * every region's bucket (it may be any region's at ARM), and a region seen
 * for the first time starts from the "" bucket's schedule.  The clock is an
 * interval clock (CLOCK_MONOTONIC), never a
 * time of day; tests inject one.
 */
#include "azure/arm.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ARM's per-VM window is a minute; ours is two seconds longer, so a
 * fifth action never lands in the server's minute of the first because
 * the first travelled slower than the fifth. */
#define VM_WINDOW_MS 62000
/* The defaults: below ARM's per-region 25 reads/s and 10 writes/s
 * (the figures), so a client with its defaults never trips them
 * even when the server's buckets start a little later than ours. */
#define DEFAULT_READS 20
#define DEFAULT_WRITES 8

struct bucket {
    char region[64];
    double tat_read, tat_write; /* ms on the pacer's clock */
    int64_t hold_until;         /* no request before this (a 429's Retry-After); 0 none */
};

struct vm_budget {
    char id[TW_ARM_ID_MAX];
    int64_t *at; /* the last N actions' instants, a ring */
    int next;    /* the ring's oldest slot */
    int used;
};

struct tw_arm_pacer {
    pthread_mutex_t mu;
    struct tw_arm_pace_opts o;
    struct bucket *b;
    size_t nb, capb;
    struct vm_budget *vm;
    size_t nvm, capvm;
    int64_t waited_ms, taken, holds;
};

static int64_t mono_ms(void *arg)
{
    (void)arg;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

enum tw_err tw_arm_pacer_new(const struct tw_arm_pace_opts *o, struct tw_arm_pacer **out,
                             struct tw_error *err)
{
    *out = NULL;
    struct tw_arm_pace_opts d = {0};
    if (o)
        d = *o;
    if (d.reads_per_s == 0)
        d.reads_per_s = DEFAULT_READS;
    if (d.writes_per_s == 0)
        d.writes_per_s = DEFAULT_WRITES;
    if (d.burst == 0)
        d.burst = 1;
    if (d.vm_actions_per_min == 0)
        d.vm_actions_per_min = 4;
    if (!(d.reads_per_s > 0 && d.reads_per_s <= 100000) ||
        !(d.writes_per_s > 0 && d.writes_per_s <= 100000) || !(d.burst > 0 && d.burst <= 3600) ||
        d.vm_actions_per_min < 1 || d.vm_actions_per_min > 10000)
        return tw_error_set(err, TW_EINVAL,
                            "pacing: rates must be above 0 and at most 100000 a second, the "
                            "burst 0 to 3600 s and the VM actions 1 to 10000 a minute");
    if (!d.now_ms)
        d.now_ms = mono_ms;
    struct tw_arm_pacer *p = calloc(1, sizeof(*p));
    if (!p)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the ARM pacer");
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return tw_error_set(err, TW_ENOMEM, "the ARM pacer's lock can't be made");
    }
    p->o = d;
    *out = p;
    return TW_OK;
}

void tw_arm_pacer_free(struct tw_arm_pacer *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nvm; i++)
        free(p->vm[i].at);
    free(p->vm);
    free(p->b);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int64_t tw_arm_pacer_waited_ms(const struct tw_arm_pacer *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    int64_t w = p->waited_ms;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
    return w;
}

int64_t tw_arm_pacer_taken(const struct tw_arm_pacer *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    int64_t t = p->taken;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
    return t;
}

/* The bucket of REGION, made when first used; NULL when out of memory. */
static struct bucket *bucket_of(struct tw_arm_pacer *p, const char *region, double now)
{
    for (size_t i = 0; i < p->nb; i++)
        if (strncasecmp(p->b[i].region, region, sizeof(p->b[i].region) - 1) == 0 &&
            strlen(region) <= sizeof(p->b[i].region) - 1 &&
            strlen(p->b[i].region) == strlen(region))
            return &p->b[i];
    if (p->nb == p->capb) {
        size_t cap = p->capb ? p->capb * 2 : 8;
        struct bucket *nb = realloc(p->b, cap * sizeof(*nb));
        if (!nb)
            return NULL;
        p->b = nb;
        p->capb = cap;
    }
    /* A new region inherits the unknown region's schedule: the calls of
     * unknown region made so far may have been this region's. */
    double tr = now, tw = now;
    int64_t hold = 0;
    for (size_t i = 0; region[0] && i < p->nb; i++)
        if (!p->b[i].region[0]) {
            tr = p->b[i].tat_read > now ? p->b[i].tat_read : now;
            tw = p->b[i].tat_write > now ? p->b[i].tat_write : now;
            hold = p->b[i].hold_until;
        }
    struct bucket *b = &p->b[p->nb++];
    memset(b, 0, sizeof(*b));
    strncpy(b->region, region, sizeof(b->region) - 1);
    b->tat_read = tr;
    b->tat_write = tw;
    b->hold_until = hold;
    return b;
}

static struct vm_budget *vm_of(struct tw_arm_pacer *p, const char *id)
{
    for (size_t i = 0; i < p->nvm; i++)
        if (tw_arm_id_equal(p->vm[i].id, id))
            return &p->vm[i];
    if (strlen(id) >= TW_ARM_ID_MAX)
        return NULL;
    if (p->nvm == p->capvm) {
        size_t cap = p->capvm ? p->capvm * 2 : 16;
        struct vm_budget *nv = realloc(p->vm, cap * sizeof(*nv));
        if (!nv)
            return NULL;
        p->vm = nv;
        p->capvm = cap;
    }
    struct vm_budget *v = &p->vm[p->nvm];
    memset(v, 0, sizeof(*v));
    v->at = calloc((size_t)p->o.vm_actions_per_min, sizeof(*v->at));
    if (!v->at)
        return NULL;
    memcpy(v->id, id, strlen(id) + 1);
    p->nvm++;
    return v;
}

/* GCRA: the wait before a request at NOW from a bucket whose next token
 * is due at *TAT, the token taken.  The bucket is one token shallower than
 * the server's: its bucket starts when our first request arrives, later
 * than ours by that request's latency (a new connection's, the longest),
 * so a schedule exactly at the limit would find the server's bucket a
 * fraction of a token short whenever a later request travels faster.  One
 * token is one interval of slack for that. */
static double gcra(double *tat, double now, double rate, double burst)
{
    double interval = 1000.0 / rate;
    double depth = burst * rate; /* tokens */
    double tolerance = (depth > 2 ? depth - 2 : 0) * interval;
    if (*tat < now)
        *tat = now;
    double wait = *tat - tolerance - now;
    *tat += interval;
    return wait > 0 ? wait : 0;
}

/* Moves *TAT so the next request waits until UNTIL and the ones after
 * it one interval each. */
static void hold_tat(double *tat, double until, double rate, double burst)
{
    double interval = 1000.0 / rate;
    double depth = burst * rate;
    double tolerance = (depth > 2 ? depth - 2 : 0) * interval;
    if (*tat < until + tolerance)
        *tat = until + tolerance;
}

int64_t tw_arm_pacer_now_ms(const struct tw_arm_pacer *p)
{
    if (!p)
        return 0;
    return p->o.now_ms(p->o.now_arg);
}

void tw_arm_pacer_hold(struct tw_arm_pacer *p, const char *region, int64_t until_ms)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    if (!p->o.off) {
        int64_t now = p->o.now_ms(p->o.now_arg);
        const char *r = region ? region : "";
        struct bucket *b = bucket_of(p, r, (double)now);
        if (b && until_ms > b->hold_until) {
            /* Both buckets empty at the hold's end: the callers queued
             * behind it go one interval apart from then, not all at once
             * into a server that just said it is full.  A 429 of unknown
             * region ("") may have been any region's: all are held. */
            for (size_t i = 0; i < p->nb; i++) {
                struct bucket *x = &p->b[i];
                if (x != b && r[0])
                    continue;
                if (until_ms > x->hold_until)
                    x->hold_until = until_ms;
                hold_tat(&x->tat_read, (double)until_ms, p->o.reads_per_s, p->o.burst);
                hold_tat(&x->tat_write, (double)until_ms, p->o.writes_per_s, p->o.burst);
            }
            p->holds++;
        }
    }
    pthread_mutex_unlock(&p->mu);
}

int64_t tw_arm_pacer_holds(const struct tw_arm_pacer *p)
{
    if (!p)
        return 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->mu);
    int64_t n = p->holds;
    pthread_mutex_unlock((pthread_mutex_t *)&p->mu);
    return n;
}

long tw_arm_pacer_take(struct tw_arm_pacer *p, const char *region, bool write, const char *vm_id)
{
    if (!p)
        return 0;
    pthread_mutex_lock(&p->mu);
    p->taken++;
    if (p->o.off) {
        pthread_mutex_unlock(&p->mu);
        return 0;
    }
    int64_t now = p->o.now_ms(p->o.now_arg);
    double wait = 0;
    const char *r = region ? region : "";
    struct bucket *b = bucket_of(p, r, (double)now);
    /* A call of unknown region ("": a list, a resource not read yet) may
     * land in any region's bucket at ARM: it takes a token of every
     * bucket and goes when all have one, so a region's calls and the
     * unknown ones together stay within the region's rate. */
    for (size_t i = 0; b && i < p->nb; i++) {
        struct bucket *x = &p->b[i];
        if (x != b && r[0])
            continue;
        double w = write ? gcra(&x->tat_write, (double)now, p->o.writes_per_s, p->o.burst)
                         : gcra(&x->tat_read, (double)now, p->o.reads_per_s, p->o.burst);
        if (w > wait)
            wait = w;
    }
    long w = (long)(wait + 0.999);
    struct vm_budget *v = vm_id && vm_id[0] ? vm_of(p, vm_id) : NULL;
    if (v) {
        int n = p->o.vm_actions_per_min;
        int64_t at = now + w;
        if (v->used == n) {
            /* The oldest of the last N: this one may go a window after it. */
            int64_t free_at = v->at[v->next] + VM_WINDOW_MS;
            if (free_at > at)
                at = free_at;
            v->at[v->next] = at;
            v->next = (v->next + 1) % n;
        } else {
            v->at[(v->next + v->used) % n] = at;
            v->used++;
        }
        w = (long)(at - now);
    }
    p->waited_ms += w;
    pthread_mutex_unlock(&p->mu);
    return w;
}

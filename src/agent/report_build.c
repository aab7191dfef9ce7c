/* report_build.c - a report's identity and its benchmark results. */
#include "agent/report_build.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "app/app.h"
#include "bench/job.h"
#include "bench/sys.h"
#include "bench/target.h"
#include "core/uuid.h"

enum tw_err tw_agent_plan_profiles(struct tw_agent_bench_plan *plan, const char *list,
                                   struct tw_error *err)
{
    plan->n_profiles = 0;
    if (strcmp(list, "none") == 0)
        return TW_OK;
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        char name[64];
        if (n == 0 || n >= sizeof(name))
            return tw_error_set(err, TW_EINVAL,
                                "--profiles \"%s\": give profile names separated by commas "
                                "(bench --list-profiles shows them), or \"none\"",
                                list);
        memcpy(name, p, n);
        name[n] = '\0';
        const struct tw_profile *prof = tw_profile_find(name, err);
        if (!prof)
            return TW_EINVAL;
        bool dup = false;
        for (size_t i = 0; i < plan->n_profiles; i++)
            dup = dup || plan->profiles[i] == prof;
        if (!dup) {
            if (plan->n_profiles == TW_AGENT_MAX_PROFILES)
                return tw_error_set(err, TW_EINVAL, "--profiles: more than %d profiles",
                                    TW_AGENT_MAX_PROFILES);
            plan->profiles[plan->n_profiles++] = prof;
        }
        if (!p[n])
            return TW_OK;
        p += n + 1;
    }
}

enum tw_err tw_agent_plan_file(struct tw_agent_bench_plan *plan, const char *s,
                               struct tw_error *err)
{
    const char *eq = strchr(s, '=');
    char *end;
    errno = 0;
    long lun = eq ? strtol(s, &end, 10) : -1;
    if (!eq || errno || end != eq || end == s || lun < 0 || lun > 63 || !eq[1])
        return tw_error_set(err, TW_EINVAL,
                            "--file-target \"%s\": give LUN=PATH, e.g. 0=/data/tierwise.bench "
                            "(a file on the filesystem of data disk LUN 0; LUNs are 0 to 63)",
                            s);
    for (size_t i = 0; i < plan->n_files; i++)
        if (plan->files[i].lun == (int)lun)
            return tw_error_set(err, TW_EINVAL, "--file-target: LUN %ld is given twice", lun);
    if (plan->n_files == TW_AGENT_MAX_FILE_TARGETS)
        return tw_error_set(err, TW_EINVAL, "--file-target: more than %d",
                            TW_AGENT_MAX_FILE_TARGETS);
    plan->files[plan->n_files].lun = (int)lun;
    plan->files[plan->n_files].path = eq + 1;
    plan->n_files++;
    return TW_OK;
}

static const struct tw_disk *data_disk_at(const struct tw_inventory *inv, int lun)
{
    for (size_t i = 0; i < inv->n_disks; i++)
        if (inv->disks[i].role == TW_DISK_DATA && inv->disks[i].lun == lun)
            return &inv->disks[i];
    return NULL;
}

enum tw_err tw_agent_plan_check(const struct tw_agent_bench_plan *plan,
                                const struct tw_inventory *inv, struct tw_error *err)
{
    for (size_t i = 0; i < plan->n_files; i++) {
        if (data_disk_at(inv, plan->files[i].lun))
            continue;
        char luns[256] = "";
        size_t o = 0;
        for (size_t d = 0; d < inv->n_disks && o + 8 < sizeof(luns); d++)
            if (inv->disks[d].role == TW_DISK_DATA && inv->disks[d].lun >= 0)
                o += (size_t)snprintf(luns + o, sizeof(luns) - o, "%s%d", o ? ", " : "",
                                      inv->disks[d].lun);
        return tw_error_set(err, TW_EINVAL,
                            "--file-target %d=%s: this VM has no data disk at LUN %d "
                            "(its data disks: %s)",
                            plan->files[i].lun, plan->files[i].path, plan->files[i].lun,
                            o ? luns : "none");
    }
    return TW_OK;
}

static void new_id(char *id, size_t idlen)
{
    uint8_t rnd[16];
    char uuid[TW_UUID_STRLEN + 1];
    if (tw_sys_random(rnd, sizeof(rnd)) != 0) {
        /* No kernel randomness: time, pid and a counter keep ids apart. */
        static unsigned counter;
        uint64_t t = tw_now_ns() ^ ((uint64_t)getpid() << 40) ^ ((uint64_t)++counter << 20);
        for (int i = 0; i < 16; i++)
            rnd[i] = (uint8_t)(t >> ((i % 8) * 8)) ^ (uint8_t)(i * 37);
    }
    tw_uuid_format(rnd, uuid);
    snprintf(id, idlen, "%s", uuid);
}

void tw_agent_report_identity(struct tw_report *r)
{
    new_id(r->id, sizeof(r->id));
    tw_sys_rfc3339_now(r->created_at, sizeof(r->created_at));
    snprintf(r->agent_version, sizeof(r->agent_version), "%s", TW_VERSION);
    char host[HOST_NAME_MAX + 1] = "";
    if (gethostname(host, sizeof(host)) != 0 || !host[0])
        snprintf(host, sizeof(host), "unknown");
    host[sizeof(host) - 1] = '\0';
    snprintf(r->agent_hostname, sizeof(r->agent_hostname), "%s", host);
    snprintf(r->power_state, sizeof(r->power_state), "running");
}

/* What the progress line names: the disk, the profile, its place. */
struct progress_ctx {
    const struct tw_disk *disk;
    const char *profile;
    size_t k, n;
};

/* The progress line of tierwise-agent run on a terminal: disk, profile,
 * seconds left of this profile, and the last second's figures. */
static void run_progress(const struct tw_progress *p, void *arg)
{
    const struct progress_ctx *x = arg;
    double left = p->total_s > p->elapsed_s ? p->total_s - p->elapsed_s : 0;
    if (p->ramping)
        fprintf(stderr, "\r\033[K  %s (LUN %d) %s [%zu/%zu]: ramping up, %.0f s left", x->disk->name,
                x->disk->lun, x->profile, x->k, x->n, left);
    else
        fprintf(stderr, "\r\033[K  %s (LUN %d) %s [%zu/%zu]: %.0f s left, %.0f IOPS, %.2f MB/s",
                x->disk->name, x->disk->lun, x->profile, x->k, x->n, left, p->iops, p->mbps);
    fflush(stderr);
}

/* One profile on one target; the result into RES.  A run in which no I/O
 * succeeded is a failure, though its record is kept for the errors. */
static enum tw_err run_one(const struct tw_agent_bench_plan *plan, const struct tw_profile *prof,
                           const char *path, bool file, FILE *log, struct tw_result *res,
                           struct progress_ctx *pc, struct tw_error *err)
{
    struct tw_job_params p = {0};
    p.engine = tw_engine_find(plan->engine ? plan->engine : prof->engine, err);
    if (!p.engine)
        return TW_EINVAL;
    p.pattern = prof->pattern;
    p.block_size = prof->block_size;
    p.queue_depth = prof->queue_depth;
    p.jobs = prof->jobs;
    p.read_pct = prof->read_pct;
    p.runtime_ms = plan->runtime_set ? plan->runtime_ms : prof->runtime_ms;
    p.ramp_ms = plan->ramp_set ? plan->ramp_ms : prof->ramp_ms;
    p.interrupt = plan->interrupt;
    if (plan->progress) {
        p.progress = run_progress;
        p.progress_arg = pc;
    }

    struct tw_target_opts to = {
        .size = file ? (plan->file_size ? plan->file_size : TW_TARGET_DEFAULT_SIZE) : 0,
        .write = tw_profile_writes(prof),
        .buffered = plan->buffered,
        .sysfs_root = plan->sysfs_root ? plan->sysfs_root : getenv("TW_SYSFS_ROOT"),
        .mounts_path = plan->mounts_path ? plan->mounts_path : getenv("TW_MOUNTS_FILE"),
    };
    struct tw_target t;
    enum tw_err rc = tw_target_open(path, &to, &t, err);
    if (rc != TW_OK)
        return rc;
    if (t.laid_out)
        fprintf(log, TW_AGENT_PROG ": laid out %s with %llu bytes of random data\n", path,
                (unsigned long long)t.size);
    p.fd = t.fd;
    p.direct = t.direct;
    p.region_size = t.size;
    p.align = t.lbs;
    tw_result_init(res);
    rc = tw_job_run(&p, res, err);
    if (plan->progress)
        fputs("\r\033[K", stderr);
    tw_target_close(&t);
    if (rc != TW_OK)
        return rc;
    new_id(res->id, sizeof(res->id));
    res->source = TW_SRC_TIERWISE;
    snprintf(res->tool_version, sizeof(res->tool_version), "tierwise %s", TW_VERSION);
    snprintf(res->profile, sizeof(res->profile), "%s", prof->name);
    tw_target_to_result(&t, res);
    return TW_OK;
}

enum tw_err tw_agent_bench_disks(const struct tw_agent_bench_plan *plan, struct tw_report *r,
                                 FILE *log, int *failed, struct tw_error *err)
{
    *failed = 0;
    if (plan->n_profiles == 0)
        return TW_OK;
    struct tw_result *res = malloc(sizeof(*res));
    if (!res)
        return tw_error_set(err, TW_ENOMEM, "out of memory for a benchmark result");
    enum tw_err rc = TW_OK;
    for (size_t d = 0; d < r->inv.n_disks && rc == TW_OK; d++) {
        const struct tw_disk *disk = &r->inv.disks[d];
        if (disk->role != TW_DISK_DATA)
            continue;
        const char *path = NULL;
        bool file = false;
        for (size_t i = 0; i < plan->n_files; i++)
            if (plan->files[i].lun == disk->lun) {
                path = plan->files[i].path;
                file = true;
            }
        if (!path && disk->device[0] && d < TW_INV_MAX_DISKS && plan->skip_disk[d]) {
            fprintf(log, TW_AGENT_PROG ": %s (LUN %d): not measured: %s\n", disk->name, disk->lun,
                    plan->skip_why[d] ? plan->skip_why[d] : "its device is not known for certain");
            continue;
        }
        if (!path && disk->device[0])
            path = disk->device;
        if (!path) {
            fprintf(log,
                    TW_AGENT_PROG ": %s (LUN %d): not measured: no Linux device found for it (a disk attached "
                    "since boot needs a udev rescan), and no --file-target %d=PATH\n",
                    disk->name, disk->lun, disk->lun);
            continue;
        }
        for (size_t k = 0; k < plan->n_profiles && rc == TW_OK; k++) {
            const struct tw_profile *prof = plan->profiles[k];
            if (!file && tw_profile_writes(prof)) {
                fprintf(log,
                        TW_AGENT_PROG ": %s (LUN %d): %s not run: it writes, and %s is a block device that "
                        "is only read; give --file-target %d=PATH to run it on a file\n",
                        disk->name, disk->lun, prof->name, path, disk->lun);
                continue;
            }
            struct tw_error e = {0};
            struct progress_ctx pc = {disk, prof->name, k + 1, plan->n_profiles};
            enum tw_err one = run_one(plan, prof, path, file, log, res, &pc, &e);
            if (plan->interrupt && *plan->interrupt) {
                rc = tw_error_set(err, TW_EINVAL, "interrupted during %s on %s", prof->name,
                                  path);
                break;
            }
            if (one == TW_EPERM && file && strstr(e.msg, "not fully written")) {
                /* The bench command's way out (--allow-destructive) is not
                 * offered here: a mistyped path must never cost data. */
                fprintf(log,
                        TW_AGENT_PROG ": %s (LUN %d): %s on %s failed: the file exists but "
                        "is not fully written over the %llu bytes needed (sparse, "
                        "preallocated or shorter), and the agent never overwrites a file it "
                        "did not lay out; remove it (the next run lays it out) or give "
                        "--file-target %d= another file\n",
                        disk->name, disk->lun, prof->name, path,
                        (unsigned long long)(plan->file_size ? plan->file_size
                                                             : TW_TARGET_DEFAULT_SIZE),
                        disk->lun);
                (*failed)++;
                continue;
            }
            if (one != TW_OK) {
                fprintf(log, TW_AGENT_PROG ": %s (LUN %d): %s on %s failed: %s\n", disk->name, disk->lun,
                        prof->name, path, e.msg);
                (*failed)++;
                continue;
            }
            if (res->errors.count && res->read.ios + res->write.ios == 0)
                (*failed)++;
            const struct tw_dir *dir = res->read.present ? &res->read : &res->write;
            if (res->errors.count || tw_app_get_verbosity() != TW_APP_QUIET)
                fprintf(log, TW_AGENT_PROG ": %s (LUN %d): %s on %s: %.0f IOPS, %.2f MB/s%s%s\n",
                        disk->name, disk->lun, prof->name, path, dir->iops, dir->mbps,
                        res->errors.count ? "; I/O errors, the first: " : "", res->errors.first);
            enum tw_err add = tw_report_add_result(r, res);
            if (add == TW_ERANGE) {
                fprintf(log, TW_AGENT_PROG ": %s (LUN %d): %s not reported: a report carries at most %d "
                        "results\n", disk->name, disk->lun, prof->name, TW_REPORT_MAX_RESULTS);
                (*failed)++;
            } else if (add != TW_OK) {
                rc = tw_error_set(err, TW_ENOMEM, "out of memory adding a result");
            }
        }
    }
    free(res);
    return rc;
}

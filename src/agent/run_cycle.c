/*
 * run_cycle.c - one cycle of tierwise-agent run: drain what the spool
 * still holds (oldest first), read the inventory, run the configured
 * profiles on each data disk, write the new report into the spool, and
 * drain again, which posts it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/run_int.h"
#include "core/report.h"

int64_t run_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The size in bytes of block device DEV ("/dev/sdc") from sysfs (512-byte
 * sectors in class/block/NAME/size); -1 when it can't be read. */
static int64_t device_bytes(const struct run_cfg *c, const char *dev)
{
    const char *root = c->dm.sysfs_root ? c->dm.sysfs_root : getenv("TW_SYSFS_ROOT");
    const char *name = strrchr(dev, '/');
    name = name ? name + 1 : dev;
    char path[4400];
    snprintf(path, sizeof(path), "%s/class/block/%s/size", root && *root ? root : "/sys", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[64] = "";
    bool got = fgets(line, sizeof(line), f) != NULL;
    fclose(f);
    char *end;
    unsigned long long sectors = got ? strtoull(line, &end, 10) : 0;
    if (!got || end == line || (*end && *end != '\n') || sectors > (UINT64_MAX >> 10))
        return -1;
    return (int64_t)(sectors * 512);
}

/*
 * The data disks whose block device is not known for certain are marked in
 * C's plan, each with why, so they are not measured: a device mapped to two
 * disks (which is which?), and a device whose size is not the disk's (the
 * link or the inventory is stale, or it is another disk).  A disk measured
 * on a --file-target is the user's word and is not doubted.
 */
static void doubt_devices(struct run_cfg *c, const struct tw_inventory *inv)
{
    struct tw_agent_bench_plan *p = &c->plan;
    memset(p->skip_disk, 0, sizeof(p->skip_disk));
    memset(p->skip_why, 0, sizeof(p->skip_why));
    /* By the disk's index: every data disk is checked, whatever its LUN. */
    for (size_t i = 0; i < inv->n_disks && i < TW_INV_MAX_DISKS; i++) {
        const struct tw_disk *d = &inv->disks[i];
        if (d->role != TW_DISK_DATA || !d->device[0])
            continue;
        char *why = c->doubt[i];
        why[0] = '\0';
        for (size_t j = 0; j < inv->n_disks && !why[0]; j++)
            if (j != i && strcmp(inv->disks[j].device, d->device) == 0)
                snprintf(why, sizeof(c->doubt[0]),
                         "its device %s is also found for %s (LUN %d): which disk it is is not "
                         "certain; check the /dev/disk/azure links (a udev rescan)",
                         d->device, inv->disks[j].name, inv->disks[j].lun);
        if (!why[0]) {
            int64_t bytes = device_bytes(c, d->device);
            int64_t gib = bytes < 0 ? -1 : (bytes + (1LL << 30) - 1) >> 30;
            if (bytes < 0)
                snprintf(why, sizeof(c->doubt[0]),
                         "the size of its device %s can't be read from sysfs, so that it is "
                         "this %" PRId64 " GiB disk is not certain",
                         d->device, d->size_gib);
            else if (d->size_gib > 0 && gib != d->size_gib)
                snprintf(why, sizeof(c->doubt[0]),
                         "its device %s holds %" PRId64 " GiB, not the %" PRId64
                         " GiB of this disk: it may be another disk (a stale link or "
                         "inventory)",
                         d->device, gib, d->size_gib);
        }
        if (why[0]) {
            p->skip_disk[i] = true;
            p->skip_why[i] = why;
        }
    }
}

/* Inventory + benchmarks into a new report in *OUT; an exit status. */
static int make_report(struct run_cfg *c, struct tw_report **out)
{
    *out = NULL;
    struct tw_report *r = tw_report_new();
    if (!r) {
        say("out of memory for a report");
        return TW_EXIT_FAIL;
    }
    tw_inventory_init(&r->inv);
    int status = c->inventory_file ? tw_agent_inventory_file(c->inventory_file, &r->inv)
                                   : tw_agent_inventory_imds(c->imds, c->config, &r->inv);
    struct tw_error err = {0};
    if (status == TW_EXIT_OK && tw_devmap_apply(&r->inv, &c->dm, NULL, &err) != TW_OK) {
        say("%s", err.msg);
        status = err.code == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
    }
    if (status == TW_EXIT_OK && tw_agent_plan_check(&c->plan, &r->inv, &err) != TW_OK) {
        say("%s", err.msg);
        status = TW_EXIT_USAGE;
    }
    if (status != TW_EXIT_OK) {
        tw_report_free(r);
        return status;
    }
    tw_agent_report_identity(r);
    doubt_devices(c, &r->inv);
    int failed = 0;
    enum tw_err rc = tw_agent_bench_disks(&c->plan, r, stderr, &failed, &err);
    if (rc != TW_OK) {
        say("%s", err.msg);
        tw_report_free(r);
        return run_stop ? TW_EXIT_INTERRUPTED : TW_EXIT_FAIL;
    }
    if (failed)
        say("%d benchmark run(s) failed; the report carries the others", failed);
    *out = r;
    return failed ? TW_EXIT_FAIL : TW_EXIT_OK;
}

int run_cycle(struct run_cfg *c, struct tw_spool *sp, struct tw_az_http *http,
              enum drain_end *end_out)
{
    struct drain_sum sum = {0};
    enum drain_end end = run_drain(c, sp, http, &sum);
    int status = TW_EXIT_OK;
    *end_out = end;
    if (end == DRAIN_STOPPED)
        return TW_EXIT_INTERRUPTED;
    if (end == DRAIN_FAILED)
        return TW_EXIT_FAIL;

    /* A full spool that could not be drained can't take this cycle's
     * report: say so now rather than after the benchmarks. */
    struct tw_spool_stats st;
    struct tw_error err = {0};
    if (tw_spool_stats(sp, &st, &err) != TW_OK) {
        say("%s", err.msg);
        return TW_EXIT_FAIL;
    }
    if (st.pending + st.rejected >= st.max_reports || st.bytes >= st.max_bytes) {
        int ds = run_drain_status(c, sp, end, &sum);
        say("the spool %s is full (%lld pending, %lld rejected, %lld bytes; the bound is %lld "
            "reports or %lld bytes) and the backend does not take them: no new report is made "
            "this time; get the backend reachable, or raise --spool-max / --spool-max-bytes",
            c->spool_path, (long long)st.pending, (long long)st.rejected, (long long)st.bytes,
            (long long)st.max_reports, (long long)st.max_bytes);
        return run_worse(ds, EXIT_SPOOL_FULL);
    }

    struct tw_report *r = NULL;
    status = make_report(c, &r);
    if (!r)
        return run_worse(status, run_drain_status(c, sp, end, &sum));
    char *json = tw_report_to_json(r, 0);
    char id[40];
    snprintf(id, sizeof(id), "%s", r->id);
    size_t n_results = r->n_results;
    tw_report_free(r);
    if (!json) {
        say("out of memory writing the report");
        return TW_EXIT_FAIL;
    }
    enum tw_err rc = tw_spool_put(sp, id, json, strlen(json), run_wall_ms(), &err);
    free(json);
    if (rc != TW_OK) {
        say("%s", err.msg);
        return run_worse(status, rc == TW_ERANGE ? EXIT_SPOOL_FULL : TW_EXIT_FAIL);
    }
    tw_app_note(TW_AGENT_PROG, "report %s made (%zu results)", id, n_results);
    /* Send it now, after any older ones, unless the backend just failed. */
    if (end == DRAIN_EMPTY)
        end = run_drain(c, sp, http, &sum);
    *end_out = end;
    status = run_worse(status, run_drain_status(c, sp, end, &sum));
    /* The backend could not be reached (or was busy): this cycle's report
     * is safe in the spool but delivered nowhere, which a timer or cron
     * must be able to tell from a delivery. */
    if (end == DRAIN_DOWN)
        status = run_worse(status, EXIT_SPOOLED);
    return status;
}

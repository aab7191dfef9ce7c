/*
 * sim_arm.c - Azure Resource Manager: managed disks (GET, PATCH, list),
 * VMs (GET, lists, instance view, power actions), long-running operations
 * and Resource SKUs; the api-versions each provider answers; lists paged
 * by settings.arm_page_size with nextLink.
 *
 * Concurrent writes are refused as Compute refuses them: a PATCH of a disk
 * while an operation on it or a power action of its VM runs, and a power
 * action while the VM's own operation or one of its disks' runs, are 409
 * Conflict "being used by another operation" (busy()).  A hibernated VM's
 * disks are Frozen and refuse every change.
 *
 * The rules a tier switch must respect are enforced as Azure documents
 * them (arm.md 1): a disk's SKU changes only while its VM is deallocated
 * or it is unattached; at most settings.sku_changes_per_day SKU changes per
 * disk in any 24 hours (the docs say "twice per day" without saying
 * whether a calendar or a rolling day; the rolling day is the stricter
 * reading); Ultra and Premium SSD v2 can't be switched to or from.  A
 * change is a long-running operation: 202 with Azure-AsyncOperation and
 * Location, InProgress for settings.operation_delay_ms, then applied.
 *
 * Error bodies are ARM's real ones where a capture exists
 * (MissingApiVersionParameter, ResourceNotFound, ResourceGroupNotFound,
 * SubscriptionNotFound, the resize Conflict); the others are marked
 * CONSTRUCTED below, following ../shared/azure-api/arm-errors-samples.json.
 */
#include "sim/sim_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DAY_MS (86400LL * 1000)

/* ---- lookups and common answers ---- */

static bool sub_known(const struct tw_sim *sim, const char *sub)
{
    for (size_t i = 0; i < sim->sc->n_vms; i++) {
        if (strcasecmp(sim->sc->vms[i].subscription_id, sub) == 0)
            return true;
    }
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        if (strcasecmp(sim->sc->disks[i].subscription_id, sub) == 0)
            return true;
    }
    return false;
}

static bool rg_known(const struct tw_sim *sim, const char *sub, const char *rg)
{
    for (size_t i = 0; i < sim->sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sim->sc->vms[i];
        if (strcasecmp(v->subscription_id, sub) == 0 && strcasecmp(v->resource_group, rg) == 0)
            return true;
    }
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sim->sc->disks[i];
        if (strcasecmp(d->subscription_id, sub) == 0 && strcasecmp(d->resource_group, rg) == 0)
            return true;
    }
    return false;
}

long sim_find_disk(const struct tw_sim *sim, const char *sub, const char *rg, const char *name)
{
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sim->sc->disks[i];
        if (strcasecmp(d->name, name) == 0 && strcasecmp(d->resource_group, rg) == 0 &&
            strcasecmp(d->subscription_id, sub) == 0)
            return (long)i;
    }
    return -1;
}

long sim_find_vm(const struct tw_sim *sim, const char *sub, const char *rg, const char *name)
{
    for (size_t i = 0; i < sim->sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sim->sc->vms[i];
        if (strcasecmp(v->name, name) == 0 && strcasecmp(v->resource_group, rg) == 0 &&
            strcasecmp(v->subscription_id, sub) == 0)
            return (long)i;
    }
    return -1;
}

/* ARM's 404 for a missing subscription, resource group or resource
 * (texts as ARM sends them). */
static void not_found(const struct tw_sim *sim, struct sim_resp *rs, const char *sub,
                      const char *rg, const char *type, const char *name)
{
    if (!sub_known(sim, sub))
        sim_arm_error(rs, 404, "SubscriptionNotFound", NULL,
                      "The subscription '%s' could not be found.", sub);
    else if (rg && !rg_known(sim, sub, rg))
        sim_arm_error(rs, 404, "ResourceGroupNotFound", NULL,
                      "Resource group '%s' could not be found.", rg);
    else
        sim_arm_error(rs, 404, "ResourceNotFound", NULL,
                      "The Resource '%s/%s' under resource group '%s' was not found. For more "
                      "details please go to https://aka.ms/ARMResourceNotFoundFix",
                      type, name, rg ? rg : "");
}

/*
 * The api-versions each resource provider answers (arm.md 1-3): DiskRP's
 * for disks and their DiskOperations, ComputeRP's for VMs and their
 * operations, the Resource SKUs' own.  Newest first; the first is what
 * tierwise sends (azure/arm.h, azure/skus.h).
 */
enum sim_api { SIM_API_DISK, SIM_API_COMPUTE, SIM_API_SKUS };

static const char *const disk_apis[] = {
    "2024-03-02", "2023-10-02", "2023-04-02", "2023-01-02", "2022-07-02", "2022-03-02",
    "2021-12-01", "2021-08-01", "2021-04-01", "2020-12-01", "2020-09-30", "2020-06-30",
    "2020-05-01", "2019-11-01", "2019-07-01", "2019-03-01", "2018-09-30", "2018-06-01",
    "2018-04-01", "2017-03-30", NULL};
static const char *const compute_apis[] = {
    "2024-07-01", "2024-03-01", "2023-09-01", "2023-07-01", "2023-03-01", "2022-11-01",
    "2022-08-01", "2022-03-01", "2021-11-01", "2021-07-01", "2021-04-01", "2021-03-01",
    "2020-12-01", "2020-06-01", "2019-12-01", "2019-07-01", "2019-03-01", "2018-10-01",
    "2018-06-01", "2018-04-01", "2017-12-01", "2017-03-30", NULL};
static const char *const sku_apis[] = {"2021-07-01", "2019-04-01", "2017-09-01", NULL};

/* What every ARM call checks first: the bearer token, then api-version. */
static bool prelude(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs,
                    enum sim_api api)
{
    if (!sim_token_check(sim, rq, rs))
        return false;
    const char *ver = sim_arg(rq, "api-version");
    if (!ver) {
        /* ARM's real text. */
        sim_arm_error(rs, 400, "MissingApiVersionParameter", NULL,
                      "The api-version query parameter (?api-version=) is required for all "
                      "requests.");
        return false;
    }
    const char *const *list = api == SIM_API_DISK      ? disk_apis
                              : api == SIM_API_COMPUTE ? compute_apis
                                                       : sku_apis;
    char all[512];
    size_t n = 0;
    for (size_t i = 0; list[i]; i++) {
        if (strcmp(ver, list[i]) == 0)
            return true;
        n += (size_t)snprintf(all + n, sizeof(all) - n, "%s%s", i ? ", " : "", list[i]);
    }
    /* ARM's code; the text is CONSTRUCTED after the one ARM sends for a
     * resource group call with an unknown version. */
    sim_arm_error(rs, 400, "InvalidApiVersionParameter", NULL,
                  "The api-version '%.64s' is invalid. The supported versions are '%s'.", ver, all);
    return false;
}

/* A write while another operation on the resource (or on its VM, or on a
 * disk of the VM) is in progress: 409 Conflict.  CONSTRUCTED text: ARM's
 * concurrent-write refusals say the resource "is being used by another
 * operation"; no verbatim body of DiskRP's was captured. */
static void busy(struct tw_sim *sim, struct sim_resp *rs, long op, const char *what,
                 const char *name)
{
    static const char *const kinds[] = {"update", "start", "deallocate", "powerOff"};
    const struct sim_op *o = &sim->ops[op];
    int64_t left = o->end_ms - sim_now_ms(sim);
    sim_header(rs, "Retry-After", "%lld", (long long)(left > 0 ? (left + 999) / 1000 : 1));
    sim_arm_error(rs, 409, "Conflict", NULL,
                  "The %s '%s' is being used by another operation ('%s', id %s) and can't be "
                  "changed until it completes. Retry after it has finished.",
                  what, name, (unsigned)o->kind < 4 ? kinds[o->kind] : "?", o->id);
    sim->n_conflicts++;
}

static const char *sku_tier_word(const char *sku)
{
    if (strncmp(sku, "StandardSSD_", 12) == 0 || strcmp(sku, "Standard_LRS") == 0)
        return "Standard";
    if (strcmp(sku, "UltraSSD_LRS") == 0)
        return "Ultra";
    return "Premium";
}

static bool vm_live(const struct tw_sim *sim, const struct tw_sim_disk *d)
{
    return d->vm >= 0 && sim->sc->vms[d->vm].power != TW_SIM_POWER_DEALLOCATED;
}

const char *sim_disk_state(const struct tw_sim *sim, size_t di)
{
    const struct tw_sim_disk *d = &sim->sc->disks[di];
    if (d->vm < 0)
        return "Unattached";
    /* Reserved: attached to a stopped-deallocated VM; Frozen: to a
     * hibernated one (arm.md 1). */
    const struct tw_sim_vm *vm = &sim->sc->vms[d->vm];
    if (vm->power != TW_SIM_POWER_DEALLOCATED)
        return "Attached";
    return vm->hibernated ? "Frozen" : "Reserved";
}

void sim_vm_owner_changed(struct tw_sim *sim, long vi, int64_t now)
{
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        if (sim->sc->disks[i].vm == vi)
            sim->disk_rt[i].owner_ms = now;
    }
}

void sim_resource_id(const char *sub, const char *rg, const char *type, const char *name, char *out,
                     size_t n)
{
    snprintf(out, n, "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/%s/%s", sub,
             rg, type, name);
}

json_t *sim_disk_json(struct tw_sim *sim, size_t di)
{
    const struct tw_sim_disk *d = &sim->sc->disks[di];
    const struct sim_disk_rt *rt = &sim->disk_rt[di];
    char id[400], created[40];
    sim_resource_id(d->subscription_id, d->resource_group, "disks", d->name, id, sizeof(id));
    sim_iso_time(sim->started_ms, created);
    /* Field order of arm-disk-samples.json "get_disk_attached_constructed". */
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:{}}", "name", d->name, "id", id, "type",
                          "Microsoft.Compute/disks", "location", d->location, "tags");
    if (!o)
        return NULL;
    if (d->vm >= 0) {
        const struct tw_sim_vm *vm = &sim->sc->vms[d->vm];
        char vid[400];
        sim_resource_id(vm->subscription_id, vm->resource_group, "virtualMachines", vm->name, vid,
                        sizeof(vid));
        json_object_set_new(o, "managedBy", json_string(vid));
    }
    json_object_set_new(o, "sku",
                        json_pack("{s:s, s:s}", "name", d->sku, "tier", sku_tier_word(d->sku)));
    if (d->zone[0])
        json_object_set_new(o, "zones", json_pack("[s]", d->zone));
    json_t *p = json_object();
    if (d->os)
        json_object_set_new(p, "osType", json_string(sim->sc->vms[d->vm].os_type));
    json_object_set_new(p, "creationData", json_pack("{s:s}", "createOption", d->create_option));
    json_object_set_new(p, "diskSizeGB", json_integer(d->size_gib));
    json_object_set_new(p, "encryption",
                        json_pack("{s:s}", "type", "EncryptionAtRestWithPlatformKey"));
    json_object_set_new(p, "networkAccessPolicy", json_string("AllowAll"));
    json_object_set_new(p, "publicNetworkAccess", json_string("Enabled"));
    json_object_set_new(p, "timeCreated", json_string(created));
    json_object_set_new(p, "provisioningState",
                        json_string(rt->op >= 0 ? "Updating" : "Succeeded"));
    json_object_set_new(p, "diskState", json_string(sim_disk_state(sim, di)));
    json_object_set_new(p, "diskSizeBytes", json_integer(d->size_gib * 1073741824LL));
    json_object_set_new(p, "uniqueId", json_string(rt->unique_id));
    if (d->tier[0])
        json_object_set_new(p, "tier", json_string(d->tier));
    /* The performance the disk is provisioned with: its tier's rating
     * (a performance tier's, when one is set), or what an Ultra or
     * Premium SSD v2 disk was given. */
    int64_t iops = d->iops, mbps = d->mbps;
    if (d->tier[0] && !tw_sim_tier_rating(d->tier, &iops, &mbps))
        iops = mbps = 0;
    if (iops > 0) {
        json_object_set_new(p, "diskIOPSReadWrite", json_integer(iops));
        json_object_set_new(p, "diskMBpsReadWrite", json_integer(mbps));
    }
    if (d->max_shares > 0)
        json_object_set_new(p, "maxShares", json_integer(d->max_shares));
    if (d->bursting >= 0)
        json_object_set_new(p, "burstingEnabled", json_boolean(d->bursting));
    if (rt->owner_ms) {
        char owner[40];
        sim_iso_time(rt->owner_ms, owner);
        json_object_set_new(p, "LastOwnershipUpdateTime", json_string(owner));
    }
    /* Disk_Update_ChangeTier: a performance-tier change shows its target
     * while it is applied (a SKU change does not, as in
     * patch_change_sku_constructed). */
    if (rt->op >= 0 && strcmp(sim->ops[rt->op].sku, d->sku) == 0 &&
        strcmp(sim->ops[rt->op].tier, d->tier) != 0 && sim->ops[rt->op].tier[0])
        json_object_set_new(p, "propertyUpdatesInProgress",
                            json_pack("{s:s}", "targetTier", sim->ops[rt->op].tier));
    json_object_set_new(o, "properties", p);
    return o;
}

/* ---- long-running operations ---- */

static struct sim_op *new_op(struct tw_sim *sim, enum sim_op_kind kind, long target,
                             const char *sub, const char *location)
{
    if (sim->n_ops == sim->cap_ops) {
        size_t cap = sim->cap_ops ? sim->cap_ops * 2 : 64;
        if (cap > SIM_MAX_OPS)
            return NULL;
        struct sim_op *ops = realloc(sim->ops, cap * sizeof(*ops));
        if (!ops)
            return NULL;
        sim->ops = ops;
        sim->cap_ops = cap;
    }
    struct sim_op *op = &sim->ops[sim->n_ops++];
    memset(op, 0, sizeof(*op));
    sim_uuid(op->id);
    op->kind = kind;
    op->target = target;
    op->start_ms = sim_now_ms(sim);
    op->end_ms = op->start_ms + sim->sc->settings.operation_delay_ms;
    snprintf(op->subscription_id, sizeof(op->subscription_id), "%s", sub);
    snprintf(op->location, sizeof(op->location), "%s", location);
    return op;
}

void sim_settle(struct tw_sim *sim)
{
    int64_t now = sim_now_ms(sim);
    for (size_t i = 0; i < sim->n_ops; i++) {
        struct sim_op *op = &sim->ops[i];
        if (op->done || op->end_ms > now)
            continue;
        op->done = true;
        if (op->fail) {
            /* Nothing applied: the disk keeps its SKU, the VM its state. */
            if (op->kind == SIM_OP_DISK_UPDATE) {
                sim->disk_rt[op->target].op = -1;
            } else if (sim->vm_rt[op->target].op == (long)i) {
                sim->sc->vms[op->target].power = op->before;
                sim->vm_rt[op->target].op = -1;
            }
        } else if (op->kind == SIM_OP_DISK_UPDATE) {
            struct tw_sim_disk *d = &sim->sc->disks[op->target];
            memcpy(d->sku, op->sku, sizeof(d->sku));
            memcpy(d->tier, op->tier, sizeof(d->tier));
            d->size_gib = op->size_gib;
            sim->disk_rt[op->target].op = -1;
        } else if (sim->vm_rt[op->target].op == (long)i) {
            /* (an admin power change may have overtaken it) */
            struct tw_sim_vm *vm = &sim->sc->vms[op->target];
            vm->power = op->power;
            sim->vm_rt[op->target].op = -1;
            if (op->kind == SIM_OP_VM_DEALLOCATE)
                vm->hibernated = op->hibernate;
            else if (op->kind == SIM_OP_VM_START)
                vm->hibernated = false; /* (while starting, its disks are Attached already) */
            if (op->kind == SIM_OP_VM_START || op->kind == SIM_OP_VM_DEALLOCATE)
                sim_vm_owner_changed(sim, op->target, op->end_ms);
        }
    }
}

/* Azure-AsyncOperation, Location, Retry-After and x-ms-request-id of a
 * 202 (arm-disk-samples.json "patch_change_sku_constructed"). */
static void op_headers(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs,
                       const struct sim_op *op)
{
    char ver[128], sub[160], loc[160];
    sim_url_encode(sim_arg(rq, "api-version"), ver, sizeof(ver));
    sim_url_encode(op->subscription_id, sub, sizeof(sub));
    sim_url_encode(op->location, loc, sizeof(loc));
    const char *kind = op->kind == SIM_OP_DISK_UPDATE ? "DiskOperations" : "operations";
    sim_header(rs, "Azure-AsyncOperation",
               "%s/subscriptions/%s/providers/Microsoft.Compute/locations/%s/%s/%s?api-version=%s",
               sim->url, sub, loc, kind, op->id, ver);
    sim_header(rs, "Location",
               "%s/subscriptions/%s/providers/Microsoft.Compute/locations/%s/%s/%s?monitor=true&"
               "api-version=%s",
               sim->url, sub, loc, kind, op->id, ver);
    sim_header(rs, "Retry-After", "%ld", sim->sc->settings.retry_after_s);
    sim_header(rs, "x-ms-request-id", "%s", op->id);
}

/* The error of a failed operation (the shape of arm-errors-samples.json
 * "lro_failed_status_doc_shape"; code and text CONSTRUCTED). */
static json_t *op_error(const struct sim_op *op)
{
    return json_pack("{s:s, s:s}", "code", "InternalExecutionError", "message",
                     op->kind == SIM_OP_DISK_UPDATE
                         ? "The disk update failed and was not applied (a fail-operation fault "
                           "of the simulator). Retry the operation."
                         : "The virtual machine operation failed and was not applied (a "
                           "fail-operation fault of the simulator). Retry the operation.");
}

/* Location polling of a failed operation: its status with the error. */
static void op_failed(struct sim_resp *rs, unsigned status, const struct sim_op *op)
{
    json_t *e = op_error(op);
    sim_json(rs, status, e ? json_pack("{s:o}", "error", e) : NULL);
}

void sim_arm_operation(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    bool disk_path = strcasestr(rq->path, "/DiskOperations/") != NULL;
    if (!prelude(sim, rq, rs, disk_path ? SIM_API_DISK : SIM_API_COMPUTE))
        return;
    const struct sim_op *op = NULL;
    for (size_t i = 0; i < sim->n_ops && !op; i++) {
        const struct sim_op *o = &sim->ops[i];
        if (strcasecmp(o->id, rq->params[2]) == 0 &&
            strcasecmp(o->subscription_id, rq->params[0]) == 0 &&
            (o->kind == SIM_OP_DISK_UPDATE) == disk_path)
            op = o;
    }
    if (!op) {
        sim_arm_error(rs, 404, "NotFound", NULL,
                      "The entity was not found in this Azure location.");
        return;
    }
    const char *monitor = sim_arg(rq, "monitor");
    if (monitor && strcasecmp(monitor, "true") == 0) {
        /* Location polling: 202 while running, then 200 with the result
         * (the disk for a disk update, nothing for a VM action). */
        if (!op->done) {
            op_headers(sim, rq, rs, op);
            rs->status = 202;
            return;
        }
        if (op->fail)
            op_failed(rs, 500, op);
        else if (op->kind == SIM_OP_DISK_UPDATE)
            sim_json(rs, 200, sim_disk_json(sim, (size_t)op->target));
        else
            rs->status = 200;
        return;
    }
    char start[40], end[40];
    sim_iso_time(op->start_ms, start);
    if (!op->done) {
        sim_header(rs, "Retry-After", "%ld", sim->sc->settings.retry_after_s);
        sim_json(rs, 200,
                 json_pack("{s:s, s:s, s:s}", "startTime", start, "status", "InProgress", "name",
                           op->id));
        return;
    }
    sim_iso_time(op->end_ms, end);
    json_t *body = json_pack("{s:s, s:s, s:s, s:s}", "startTime", start, "endTime", end, "status",
                             op->fail ? "Failed" : "Succeeded", "name", op->id);
    if (body && op->fail)
        json_object_set_new(body, "error", op_error(op));
    sim_json(rs, 200, body);
}

/* ---- disks ---- */

void sim_arm_disk_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!prelude(sim, rq, rs, SIM_API_DISK))
        return;
    long di = sim_find_disk(sim, rq->params[0], rq->params[1], rq->params[2]);
    if (di < 0) {
        not_found(sim, rs, rq->params[0], rq->params[1], "Microsoft.Compute/disks", rq->params[2]);
        return;
    }
    sim_json(rs, 200, sim_disk_json(sim, (size_t)di));
}

/* ---- list pages ---- */

/* The $skiptoken of a list request (the index of its first item; 0 when
 * absent); false when RS has been set to the refusal. */
static bool page_start(const struct sim_req *rq, struct sim_resp *rs, size_t *skip)
{
    const char *t = sim_arg(rq, "$skiptoken");
    *skip = 0;
    if (!t)
        return true;
    char *end;
    errno = 0;
    unsigned long v = strtoul(t, &end, 10);
    if (!*t || *end || errno || t[0] == '-' || v > 1000000) {
        /* CONSTRUCTED: ARM's tokens are opaque; ours are item indexes. */
        sim_arm_error(rs, 400, "InvalidParameter", "$skiptoken",
                      "The $skiptoken '%.64s' is not one this service issued; start the list "
                      "again without it.",
                      t);
        return false;
    }
    *skip = (size_t)v;
    return true;
}

/* {"value": VALUE, "nextLink": ...}: the link back to the simulator with
 * the request's api-version (and $expand) and $skiptoken NEXT, when MORE. */
static void list_answer(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs,
                        json_t *value, bool more, size_t next)
{
    if (!value) {
        sim_json(rs, 200, NULL);
        return;
    }
    json_t *o = json_pack("{s:o}", "value", value);
    if (o && more) {
        char ver[128], exp[64] = "", link[1024];
        const char *e = sim_arg(rq, "$expand");
        sim_url_encode(sim_arg(rq, "api-version"), ver, sizeof(ver));
        if (e)
            snprintf(exp, sizeof(exp), "&$expand=instanceView");
        snprintf(link, sizeof(link), "%s%s?api-version=%s%s&$skiptoken=%zu", sim->url, rq->path,
                 ver, exp, next);
        json_object_set_new(o, "nextLink", json_string(link));
    }
    sim_json(rs, 200, o);
}

void sim_arm_disk_list(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!prelude(sim, rq, rs, SIM_API_DISK))
        return;
    const char *sub = rq->params[0], *rg = rq->n_params > 1 ? rq->params[1] : NULL;
    if (!sub_known(sim, sub) || (rg && !rg_known(sim, sub, rg))) {
        not_found(sim, rs, sub, rg, "", "");
        return;
    }
    size_t skip, seen = 0, page = (size_t)sim->sc->settings.arm_page_size;
    if (!page_start(rq, rs, &skip))
        return;
    json_t *value = json_array();
    bool more = false;
    for (size_t i = 0; value && i < sim->sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sim->sc->disks[i];
        if (strcasecmp(d->subscription_id, sub) != 0 ||
            (rg && strcasecmp(d->resource_group, rg) != 0))
            continue;
        if (seen++ < skip)
            continue;
        if (json_array_size(value) == page) {
            more = true;
            break;
        }
        json_array_append_new(value, sim_disk_json(sim, i));
    }
    list_answer(sim, rq, rs, value, more, skip + page);
}

/* Recorded SKU changes of disk DI in the 24 hours before NOW, and the
 * earliest of them. */
static int changes_today(const struct tw_sim *sim, size_t di, int64_t now, int64_t *oldest)
{
    const struct sim_disk_rt *rt = &sim->disk_rt[di];
    int n = 0;
    *oldest = 0;
    for (int i = 0; i < rt->n_changes && i < TW_SIM_MAX_DAILY_CHANGES; i++) {
        int64_t t = rt->changes_ms[i];
        if (t > now - DAY_MS) {
            n++;
            if (!*oldest || t < *oldest)
                *oldest = t;
        }
    }
    return n;
}

static void record_change(struct tw_sim *sim, size_t di, int64_t now)
{
    struct sim_disk_rt *rt = &sim->disk_rt[di];
    rt->changes_ms[rt->n_changes % TW_SIM_MAX_DAILY_CHANGES] = now;
    rt->n_changes++;
    if (rt->n_changes >= 2 * TW_SIM_MAX_DAILY_CHANGES)
        rt->n_changes -= TW_SIM_MAX_DAILY_CHANGES; /* keep the ring index, never overflow */
}

static bool tierless(const char *sku)
{
    return strcmp(sku, "UltraSSD_LRS") == 0 || strcmp(sku, "PremiumV2_LRS") == 0;
}

static void invalid_content(struct tw_sim *sim, struct sim_resp *rs, const char *why)
{
    (void)sim;
    /* ARM's code for a body it can't read; the detail is ours. */
    sim_arm_error(rs, 400, "InvalidRequestContent", NULL,
                  "The request content was invalid and could not be deserialized: '%s'.", why);
}

void sim_arm_disk_patch(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!prelude(sim, rq, rs, SIM_API_DISK))
        return;
    long di = sim_find_disk(sim, rq->params[0], rq->params[1], rq->params[2]);
    if (di < 0) {
        not_found(sim, rs, rq->params[0], rq->params[1], "Microsoft.Compute/disks", rq->params[2]);
        return;
    }
    struct tw_sim_disk *d = &sim->sc->disks[di];
    sim->disk_rt[di].patches++;
    json_error_t je;
    json_t *body = json_loadb(rq->body, rq->body_len, 0, &je);
    if (!body || !json_is_object(body)) {
        char why[200];
        snprintf(why, sizeof(why), "%s at line %d, column %d",
                 body ? "the body is not a JSON object" : je.text, je.line, je.column);
        json_decref(body);
        invalid_content(sim, rs, why);
        return;
    }
    const json_t *jsku = json_object_get(body, "sku"), *props = json_object_get(body, "properties");
    const json_t *jname = json_object_get(jsku, "name"), *jtier = json_object_get(props, "tier"),
                 *jsize = json_object_get(props, "diskSizeGB");
    if ((jsku && !json_is_object(jsku)) || (props && !json_is_object(props)) ||
        (jname && !json_is_string(jname)) || (jtier && !json_is_string(jtier)) ||
        (jsize && !json_is_integer(jsize))) {
        json_decref(body);
        invalid_content(sim, rs,
                        "sku must be an object with a string name; properties.tier a "
                        "string; properties.diskSizeGB an integer");
        return;
    }
    if (sim->disk_rt[di].op >= 0 || (d->vm >= 0 && sim->vm_rt[d->vm].op >= 0)) {
        json_decref(body);
        busy(sim, rs, sim->disk_rt[di].op >= 0 ? sim->disk_rt[di].op : sim->vm_rt[d->vm].op, "disk",
             d->name);
        return;
    }

    char sku[24], tier[8];
    memcpy(sku, d->sku, sizeof(sku));
    if (jname) {
        const char *want = json_string_value(jname);
        static const char *const known[] = {"Standard_LRS", "Premium_LRS", "StandardSSD_LRS",
                                            "UltraSSD_LRS", "Premium_ZRS", "StandardSSD_ZRS",
                                            "PremiumV2_LRS"};
        size_t k;
        for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
            if (strcasecmp(want, known[k]) == 0)
                break;
        }
        if (k == sizeof(known) / sizeof(known[0])) {
            /* CONSTRUCTED text (ARM's code for a bad enum value). */
            sim_arm_error(rs, 400, "InvalidParameter", "sku.name",
                          "The value '%.64s' of parameter 'sku.name' is not valid. Allowed values "
                          "are 'Standard_LRS, Premium_LRS, StandardSSD_LRS, UltraSSD_LRS, "
                          "Premium_ZRS, StandardSSD_ZRS, PremiumV2_LRS'.",
                          want);
            json_decref(body);
            return;
        }
        snprintf(sku, sizeof(sku), "%s", known[k]);
    }
    int64_t size = jsize ? json_integer_value(jsize) : d->size_gib;
    bool sku_change = strcmp(sku, d->sku) != 0, size_change = size != d->size_gib;
    const struct tw_sim_vm *vm = d->vm >= 0 ? &sim->sc->vms[d->vm] : NULL;
    int64_t now = sim_now_ms(sim), oldest;

    bool frozen = strcmp(sim_disk_state(sim, (size_t)di), "Frozen") == 0;
    bool tier_change = jtier && strcmp(json_string_value(jtier), d->tier) != 0;
    if (frozen && (sku_change || size_change || tier_change)) {
        /* CONSTRUCTED: Azure documents no changes to a hibernated VM's disks. */
        sim_arm_error(rs, 409, "OperationNotAllowed", sku_change ? "sku.name" : NULL,
                      "Disk '%s' is attached to VM '%s', which is hibernated; a disk of a "
                      "hibernated VM can't be changed. Start the VM, or deallocate it without "
                      "hibernation, first.",
                      d->name, vm->name);
    } else if (size_change && vm_live(sim, d)) {
        /* arm-errors-samples.json "disk_resize_while_running_409" (real). */
        sim_arm_error(rs, 409, "Conflict", "disk.diskSizeGB",
                      "Disk resizing is allowed only when creating a VM or when the VM is "
                      "deallocated.");
    } else if (size_change && (size < d->size_gib || size > (tierless(sku) ? 65536 : 32767))) {
        /* CONSTRUCTED: managed disks only grow, up to the type's maximum. */
        sim_arm_error(rs, 400, "InvalidParameter", "disk.diskSizeGB",
                      "Disk '%s' is %lld GiB; its size can only be increased, up to %d GiB.",
                      d->name, (long long)d->size_gib, tierless(sku) ? 65536 : 32767);
    } else if (sku_change && (tierless(sku) || tierless(d->sku))) {
        /* CONSTRUCTED: documented rule (arm.md 1), no captured text. */
        sim_arm_error(rs, 409, "OperationNotAllowed", "sku.name",
                      "Changing the type of disk '%s' from %s to %s is not supported: Ultra "
                      "Disks and Premium SSD v2 can't be converted; migrate through a snapshot.",
                      d->name, d->sku, sku);
    } else if (sku_change && vm_live(sim, d)) {
        /* arm-errors-samples.json "sku_change_on_disk_attached_to_running_vm_CONSTRUCTED". */
        sim_arm_error(rs, 409, "OperationNotAllowed", "sku.name",
                      "Cannot change the SKU of disk '%s' while it is attached to running VM "
                      "'%s'. Deallocate the VM or detach the disk and try again.",
                      d->name, vm->name);
    } else if (sku_change && changes_today(sim, (size_t)di, now, &oldest) >=
                                 sim->sc->settings.sku_changes_per_day) {
        /* CONSTRUCTED: "You can only change disk type twice per day" (arm.md 1). */
        char next[40];
        sim_iso_time(oldest + DAY_MS, next);
        sim->n_quota++;
        sim_arm_error(rs, 409, "OperationNotAllowed", "sku.name",
                      "The type of disk '%s' has been changed %d times in the last 24 hours; a "
                      "disk's type can be changed at most %d times per day. Try again after %s.",
                      d->name, changes_today(sim, (size_t)di, now, &oldest),
                      sim->sc->settings.sku_changes_per_day, next);
    } else {
        char base[8];
        tw_sim_tier_for(sku, size, base, sizeof(base));
        if (jtier) {
            const char *want = json_string_value(jtier);
            int64_t ts = tw_sim_tier_size(want), bs = tw_sim_tier_size(base);
            bool ok = base[0] && ts > 0 && want[0] == base[0] &&
                      (strcmp(want, base) == 0 || (want[0] == 'P' && ts > bs));
            if (!ok) {
                /* CONSTRUCTED: performance tiers are Premium SSD's, never below
                 * the size's own (catalog/README.md). */
                sim_arm_error(rs, 400, "InvalidParameter", "properties.tier",
                              "Tier '%.16s' is not valid for a %lld GiB %s disk; its baseline "
                              "tier is %s%s.",
                              want, (long long)size, sku,
                              base[0] ? base : "(none: the type has no tiers)",
                              base[0] == 'P' ? " and only higher P tiers can be set" : "");
                json_decref(body);
                return;
            }
            snprintf(tier, sizeof(tier), "%s", want);
        } else if (sku_change || size_change) {
            /* A Premium disk keeps a performance tier above its new size's. */
            bool keep = !sku_change && d->tier[0] == 'P' &&
                        tw_sim_tier_size(d->tier) > tw_sim_tier_size(base);
            snprintf(tier, sizeof(tier), "%s", keep ? d->tier : base);
        } else {
            memcpy(tier, d->tier, sizeof(tier));
        }
        if (!sku_change && !size_change && strcmp(tier, d->tier) == 0) {
            sim_json(rs, 200, sim_disk_json(sim, (size_t)di)); /* nothing to do */
        } else {
            struct sim_op *op =
                new_op(sim, SIM_OP_DISK_UPDATE, di, d->subscription_id, d->location);
            if (!op) {
                sim_arm_error(rs, 500, "InternalServerError", NULL,
                              "The simulator keeps at most %d operations.", SIM_MAX_OPS);
            } else {
                memcpy(op->sku, sku, sizeof(op->sku));
                memcpy(op->tier, tier, sizeof(op->tier));
                op->size_gib = size;
                op->fail = rq->fail_op;
                sim->disk_rt[di].op = (long)(op - sim->ops);
                if (sku_change)
                    record_change(sim, (size_t)di, now);
                op_headers(sim, rq, rs, op);
                sim_json(rs, 202, sim_disk_json(sim, (size_t)di));
            }
        }
    }
    json_decref(body);
}

/* ---- virtual machines ---- */

static const char *power_display(enum tw_sim_power p)
{
    static const char *const names[] = {"VM starting", "VM running",      "VM stopping",
                                        "VM stopped",  "VM deallocating", "VM deallocated"};
    return (unsigned)p < 6 ? names[p] : "VM unknown";
}

/* A VM's instance view (arm-vm-instanceview-samples.json): its disks'
 * provisioning states, a ProvisioningState entry, the PowerState one
 * (power_state_status_objects_doc) and, for a hibernated VM, the
 * HibernationState one. */
static json_t *instance_view_json(struct tw_sim *sim, long vi)
{
    const struct tw_sim_vm *vm = &sim->sc->vms[vi];
    bool busy_vm = sim->vm_rt[vi].op >= 0;
    char created[40];
    sim_iso_time(sim->started_ms, created);
    json_t *disks = json_array();
    for (size_t i = 0; disks && i < sim->sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sim->sc->disks[i];
        if (d->vm != vi)
            continue;
        bool upd = sim->disk_rt[i].op >= 0;
        json_array_append_new(
            disks, json_pack("{s:s, s:[{s:s, s:s, s:s, s:s}]}", "name", d->name, "statuses", "code",
                             upd ? "ProvisioningState/updating" : "ProvisioningState/succeeded",
                             "level", "Info", "displayStatus",
                             upd ? "Updating" : "Provisioning succeeded", "time", created));
    }
    char code[40];
    snprintf(code, sizeof(code), "PowerState/%s", tw_sim_power_name(vm->power));
    json_t *o = json_pack(
        "{s:s, s:s, s:o, s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s}]}", "computerName",
        vm->computer_name, "hyperVGeneration", "V2", "disks", disks, "statuses", "code",
        busy_vm ? "ProvisioningState/updating" : "ProvisioningState/succeeded", "level", "Info",
        "displayStatus", busy_vm ? "Updating" : "Provisioning succeeded", "time", created, "code",
        code, "level", "Info", "displayStatus", power_display(vm->power));
    if (o && vm->hibernated && vm->power == TW_SIM_POWER_DEALLOCATED)
        json_array_append_new(json_object_get(o, "statuses"),
                              json_pack("{s:s, s:s, s:s}", "code", "HibernationState/Hibernated",
                                        "level", "Info", "displayStatus", "VM hibernated"));
    return o;
}

void sim_arm_vm_instance_view(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!prelude(sim, rq, rs, SIM_API_COMPUTE))
        return;
    long vi = sim_find_vm(sim, rq->params[0], rq->params[1], rq->params[2]);
    if (vi < 0) {
        not_found(sim, rs, rq->params[0], rq->params[1], "Microsoft.Compute/virtualMachines",
                  rq->params[2]);
        return;
    }
    sim_json(rs, 200, instance_view_json(sim, vi));
}

/* One managed disk as a VM's storageProfile names it. */
static json_t *vm_disk_json(const struct tw_sim *sim, size_t di)
{
    const struct tw_sim_disk *d = &sim->sc->disks[di];
    char id[400];
    sim_resource_id(d->subscription_id, d->resource_group, "disks", d->name, id, sizeof(id));
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (d->os)
        json_object_set_new(o, "osType", json_string(sim->sc->vms[d->vm].os_type));
    else
        json_object_set_new(o, "lun", json_integer(d->lun));
    json_object_set_new(o, "name", json_string(d->name));
    json_object_set_new(o, "createOption", json_string(d->create_option));
    json_object_set_new(o, "caching", json_string(d->caching));
    if (!d->os)
        json_object_set_new(o, "writeAcceleratorEnabled", json_boolean(d->write_accelerator));
    json_object_set_new(o, "managedDisk",
                        json_pack("{s:s, s:s}", "storageAccountType", d->sku, "id", id));
    json_object_set_new(o, "diskSizeGB", json_integer(d->size_gib));
    json_object_set_new(o, "deleteOption", json_string("Detach"));
    return o;
}

/* A VM as ARM shapes it (ComputeRP 2024-07-01 VirtualMachine_Get): id,
 * name, type, location, tags, zones and the properties tierwise reads;
 * with EXPAND its instance view under properties.instanceView. */
static json_t *vm_json(struct tw_sim *sim, long vi, bool expand)
{
    const struct tw_sim_vm *vm = &sim->sc->vms[vi];
    char id[400], created[40];
    sim_resource_id(vm->subscription_id, vm->resource_group, "virtualMachines", vm->name, id,
                    sizeof(id));
    sim_iso_time(sim->started_ms, created);
    json_t *o =
        json_pack("{s:s, s:s, s:s, s:s, s:O}", "name", vm->name, "id", id, "type",
                  "Microsoft.Compute/virtualMachines", "location", vm->location, "tags", vm->tags);
    if (!o)
        return NULL;
    if (vm->zone[0])
        json_object_set_new(o, "zones", json_pack("[s]", vm->zone));
    json_t *os = NULL, *data = json_array();
    /* dataDisks in LUN order, as ARM lists them. */
    for (int lun = 0; lun < 64 && data; lun++) {
        for (size_t i = 0; i < sim->sc->n_disks; i++) {
            const struct tw_sim_disk *d = &sim->sc->disks[i];
            if (d->vm == vi && !d->os && d->lun == lun)
                json_array_append_new(data, vm_disk_json(sim, i));
        }
    }
    for (size_t i = 0; i < sim->sc->n_disks && !os; i++) {
        if (sim->sc->disks[i].vm == vi && sim->sc->disks[i].os)
            os = vm_disk_json(sim, i);
    }
    json_t *storage =
        json_pack("{s:{s:s, s:s, s:s, s:s}}", "imageReference", "publisher", vm->image_publisher,
                  "offer", vm->image_offer, "sku", vm->image_sku, "version", vm->image_version);
    if (storage) {
        if (os)
            json_object_set_new(storage, "osDisk", os);
        else
            json_decref(os);
        json_object_set_new(storage, "dataDisks", data ? data : json_array());
        json_object_set_new(storage, "diskControllerType", json_string("SCSI"));
    } else {
        json_decref(os);
        json_decref(data);
    }
    json_t *p = json_pack("{s:s, s:{s:s}, s:o, s:{s:s, s:s}}", "vmId", vm->vm_id, "hardwareProfile",
                          "vmSize", vm->vm_size, "storageProfile",
                          storage ? storage : json_object(), "osProfile", "computerName",
                          vm->computer_name, "adminUsername", vm->admin_username);
    if (p) {
        if (vm->hibernated)
            json_object_set_new(p, "additionalCapabilities",
                                json_pack("{s:b}", "hibernationEnabled", 1));
        json_object_set_new(p, "provisioningState",
                            json_string(sim->vm_rt[vi].op >= 0 ? "Updating" : "Succeeded"));
        json_object_set_new(p, "timeCreated", json_string(created));
        if (expand)
            json_object_set_new(p, "instanceView", instance_view_json(sim, vi));
        json_object_set_new(o, "properties", p);
    }
    return o;
}

/* $expand: absent, or instanceView (any case); false when RS has been set
 * to the refusal. */
static bool expand_arg(const struct sim_req *rq, struct sim_resp *rs, bool *expand)
{
    const char *e = sim_arg(rq, "$expand");
    *expand = false;
    if (!e)
        return true;
    if (strcasecmp(e, "instanceView") == 0) {
        *expand = true;
        return true;
    }
    /* CONSTRUCTED text; ARM's code for a bad parameter value. */
    sim_arm_error(rs, 400, "InvalidParameter", "$expand",
                  "The value '%.64s' of parameter '$expand' is not valid. The allowed value is "
                  "'instanceView'.",
                  e);
    return false;
}

void sim_arm_vm_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    bool expand;
    if (!prelude(sim, rq, rs, SIM_API_COMPUTE) || !expand_arg(rq, rs, &expand))
        return;
    long vi = sim_find_vm(sim, rq->params[0], rq->params[1], rq->params[2]);
    if (vi < 0) {
        not_found(sim, rs, rq->params[0], rq->params[1], "Microsoft.Compute/virtualMachines",
                  rq->params[2]);
        return;
    }
    sim_json(rs, 200, vm_json(sim, vi, expand));
}

void sim_arm_vm_list(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    bool expand;
    if (!prelude(sim, rq, rs, SIM_API_COMPUTE) || !expand_arg(rq, rs, &expand))
        return;
    const char *sub = rq->params[0], *rg = rq->n_params > 1 ? rq->params[1] : NULL;
    if (!sub_known(sim, sub) || (rg && !rg_known(sim, sub, rg))) {
        not_found(sim, rs, sub, rg, "", "");
        return;
    }
    size_t skip, seen = 0, page = (size_t)sim->sc->settings.arm_page_size;
    if (!page_start(rq, rs, &skip))
        return;
    json_t *value = json_array();
    bool more = false;
    for (size_t i = 0; value && i < sim->sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sim->sc->vms[i];
        if (strcasecmp(v->subscription_id, sub) != 0 ||
            (rg && strcasecmp(v->resource_group, rg) != 0))
            continue;
        if (seen++ < skip)
            continue;
        if (json_array_size(value) == page) {
            more = true;
            break;
        }
        json_array_append_new(value, vm_json(sim, (long)i, expand));
    }
    list_answer(sim, rq, rs, value, more, skip + page);
}

/* start, deallocate and powerOff: 202 with an operation; the VM passes
 * through the transitional state (starting, deallocating, stopping) until
 * the operation is done.  An action that changes nothing still answers
 * 202 and completes. */
static void vm_action(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs,
                      enum sim_op_kind kind)
{
    if (!prelude(sim, rq, rs, SIM_API_COMPUTE))
        return;
    long vi = sim_find_vm(sim, rq->params[0], rq->params[1], rq->params[2]);
    if (vi < 0) {
        not_found(sim, rs, rq->params[0], rq->params[1], "Microsoft.Compute/virtualMachines",
                  rq->params[2]);
        return;
    }
    struct tw_sim_vm *vm = &sim->sc->vms[vi];
    sim->vm_rt[vi].actions++;
    if (sim->vm_rt[vi].op >= 0) {
        busy(sim, rs, sim->vm_rt[vi].op, "virtual machine", vm->name);
        return;
    }
    for (size_t i = 0; i < sim->sc->n_disks; i++) {
        if (sim->sc->disks[i].vm == vi && sim->disk_rt[i].op >= 0) {
            busy(sim, rs, sim->disk_rt[i].op, "disk", sim->sc->disks[i].name);
            return;
        }
    }
    const char *hib = sim_arg(rq, "hibernate");
    bool hibernate = hib && strcasecmp(hib, "true") == 0;
    if (hib && !hibernate && strcasecmp(hib, "false") != 0) {
        /* CONSTRUCTED text; ARM's code for a bad parameter value. */
        sim_arm_error(rs, 400, "InvalidParameter", "hibernate",
                      "The value '%.32s' of parameter 'hibernate' is not valid; it is true or "
                      "false.",
                      hib);
        return;
    }
    enum tw_sim_power via = vm->power, final = vm->power;
    if (kind == SIM_OP_VM_START && vm->power != TW_SIM_POWER_RUNNING) {
        via = TW_SIM_POWER_STARTING;
        final = TW_SIM_POWER_RUNNING;
    } else if (kind == SIM_OP_VM_DEALLOCATE && vm->power != TW_SIM_POWER_DEALLOCATED) {
        via = TW_SIM_POWER_DEALLOCATING;
        final = TW_SIM_POWER_DEALLOCATED;
    } else if (kind == SIM_OP_VM_POWEROFF && vm->power == TW_SIM_POWER_RUNNING) {
        via = TW_SIM_POWER_STOPPING;
        final = TW_SIM_POWER_STOPPED;
    }
    struct sim_op *op = new_op(sim, kind, vi, vm->subscription_id, vm->location);
    if (!op) {
        sim_arm_error(rs, 500, "InternalServerError", NULL,
                      "The simulator keeps at most %d operations.", SIM_MAX_OPS);
        return;
    }
    op->power = final;
    op->before = vm->power;
    op->fail = rq->fail_op;
    op->hibernate = kind == SIM_OP_VM_DEALLOCATE && hibernate;
    vm->power = via;
    sim->vm_rt[vi].op = (long)(op - sim->ops);
    op_headers(sim, rq, rs, op);
    rs->status = 202;
}

void sim_arm_vm_start(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    vm_action(sim, rq, rs, SIM_OP_VM_START);
}

void sim_arm_vm_deallocate(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    vm_action(sim, rq, rs, SIM_OP_VM_DEALLOCATE);
}

void sim_arm_vm_power_off(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    vm_action(sim, rq, rs, SIM_OP_VM_POWEROFF);
}

/* ---- Resource SKUs ---- */

/* "location eq 'westeurope'" -> westeurope; the only filter clients use
 * (arm.md 3).  False for anything else. */
static bool location_filter(const char *f, char *loc, size_t n)
{
    while (*f == ' ')
        f++;
    if (strncasecmp(f, "location", 8) != 0)
        return false;
    f += 8;
    while (*f == ' ')
        f++;
    if (strncasecmp(f, "eq", 2) != 0)
        return false;
    f += 2;
    while (*f == ' ')
        f++;
    if (*f != '\'')
        return false;
    const char *end = strchr(f + 1, '\'');
    if (!end || (size_t)(end - f - 1) >= n)
        return false;
    memcpy(loc, f + 1, (size_t)(end - f - 1));
    loc[end - f - 1] = '\0';
    for (end++; *end == ' '; end++)
        ;
    return *end == '\0';
}

void sim_arm_skus(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!prelude(sim, rq, rs, SIM_API_SKUS))
        return;
    if (!sub_known(sim, rq->params[0])) {
        not_found(sim, rs, rq->params[0], NULL, "", "");
        return;
    }
    const char *filter = sim_arg(rq, "$filter");
    char loc[64] = "";
    if (filter && *filter && !location_filter(filter, loc, sizeof(loc))) {
        /* CONSTRUCTED: only the location filter is modelled. */
        sim_arm_error(rs, 400, "InvalidParameter", "$filter",
                      "The $filter '%.200s' is not supported; use location eq '<region>'.", filter);
        return;
    }
    json_t *value = json_array();
    size_t i;
    json_t *s;
    json_array_foreach(sim->sc->resource_skus, i, s)
    {
        bool match = !loc[0];
        size_t j;
        json_t *l;
        json_array_foreach(json_object_get(s, "locations"), j, l)
        {
            if (strcasecmp(json_string_value(l), loc) == 0)
                match = true;
        }
        if (match && value)
            json_array_append(value, s);
    }
    /* ListAvailableResourceSkus.json: {"value": [...], "nextLink": null}. */
    sim_json(rs, 200, value ? json_pack("{s:o, s:n}", "value", value, "nextLink") : NULL);
}

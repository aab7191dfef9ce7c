/*
 * sync.h - the fleet from ARM: every VM and disk of some subscriptions
 * (agents or not: a deallocated VM has no agent to report) into the store,
 * with source arm (tw_store_arm_vm_put, one transaction per VM).
 *
 * Disks are listed once per subscription (or resource group) and grouped
 * by their VM: managedBy, else the VM's storage profile.  The OS disk's
 * role, each data disk's LUN and caching come from the VM's storage
 * profile.  A disk attached to no VM is counted (unattached_disks) and not
 * stored: the store keeps disks by their VM.  A disk attached to a VM out
 * of the listed scope (another resource group, a scale set) is left alone.
 * A VM of the scope whose profile names a disk outside it (in a
 * --resource-group sync, a disk of another group) has that disk read by
 * its id (disk_get): never detached because the scope's list lacks it;
 * only a 404 says it is gone.
 *
 * Memory: the disks of one subscription or group, slim (their ids and what
 * the store keeps, a few hundred bytes each), while its VMs are listed.
 *
 * No HTTP here beyond the ARM client (through a table, so a test stands a
 * fake in); the CLI (tierwise sync) and the server (serve --sync) call it.
 */
#ifndef TW_SERVICE_SYNC_H
#define TW_SERVICE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/arm.h"
#include "azure/http.h"
#include "core/err.h"
#include "store/store.h"

struct json_t;

/* The ARM calls a sync makes (azure/arm.h's of the same names). */
struct tw_sync_arm {
    enum tw_err (*disks_list)(void *ctx, const char *sub, const char *rg,
                              enum tw_err (*fn)(void *arg, const struct tw_arm_disk *d),
                              void *arg, struct tw_error *err);
    enum tw_err (*vms_list)(void *ctx, const char *sub, const char *rg,
                            enum tw_err (*fn)(void *arg, const struct tw_arm_vm *vm), void *arg,
                            struct tw_error *err);
    const struct tw_arm_error *(*last_error)(void *ctx);
    /* One disk by id (tw_arm_disk_get; may be NULL): a scoped sync reads
     * the disks a VM's storage profile names that the scope's list lacks
     * (a disk in another resource group).  Without it, or when the GET
     * fails other than 404, such a disk is left as stored. */
    enum tw_err (*disk_get)(void *ctx, const char *id, struct tw_arm_disk *d,
                            struct tw_error *err);
    void *ctx;
};
/* The table over client A (borrowed). */
struct tw_sync_arm tw_sync_arm_real(struct tw_arm *a);

/* One change, as `tierwise sync --json` shows it. */
struct tw_sync_change {
    char what[16];                 /* tw_store_arm_what_name */
    char vm[128], disk[128];       /* disk "" for a VM's change */
    char from[64], to[64];
};

struct tw_sync_summary {
    size_t vms, vms_new, disks, disks_new, sku_changes, power_changes, detached;
    size_t unattached_disks;
    size_t n_changes;
    struct tw_sync_change *changes; /* malloc'd, in the order made; tw_sync_summary_free */
};
void tw_sync_summary_free(struct tw_sync_summary *s); /* its arrays; S itself is the caller's */

struct tw_sync_opts {
    struct tw_store *st;
    struct tw_sync_arm arm;
    const char *const *subscriptions; /* at least one (tw_sync_default_subscription) */
    size_t n_subscriptions;
    const char *const *resource_groups; /* NULL/0: the whole subscriptions */
    size_t n_resource_groups;
    const char *observed_at;       /* RFC 3339; NULL: the system clock now */
    /* Each change as it is stored (may be NULL), after the summary counted it. */
    void (*on_change)(void *arg, const struct tw_sync_change *c);
    void *arg;
    /* Asked before each VM is stored (may be NULL): true stops the sync
     * with TW_EIO "stopped" (a server stopping); what is stored stays. */
    bool (*stopping)(void *arg);
    void *stop_arg;
};

/*
 * Syncs O's subscriptions (each resource group of O when given) into the
 * store.  Each VM is put in one transaction; a failure stops the sync with
 * what was stored before it kept (OUT counts it).  Errors: TW_EINVAL for a
 * subscription id that is no GUID or a bad resource group name (nothing
 * sent); TW_EPERM when ARM refuses (401/403: the message names the role to
 * assign, deploy/azure-role.json); TW_ENOENT for a subscription or group
 * ARM does not know; TW_EIO when ARM can't be reached or keeps failing;
 * the store's errors as they are.  OUT is filled (and must be freed) also
 * on an error.
 */
enum tw_err tw_sync_run(const struct tw_sync_opts *o, struct tw_sync_summary *out,
                        struct tw_error *err);

/* Whether S is a subscription id (a GUID, any case). */
bool tw_sync_subscription_valid(const char *s);
/* Whether G is a resource group name by Azure's rule (1 to 90 letters,
 * digits, _ - . ( ), not ending in a period). */
bool tw_sync_resource_group_valid(const char *g);

/* The subscription of the VM this runs on, as IMDS (at IMDS_URL) says it,
 * into OUT (64 bytes).  TW_EIO when IMDS can't be reached (not on Azure:
 * give --subscription), TW_EINVAL when its answer names none. */
enum tw_err tw_sync_default_subscription(const struct tw_az_http_opts *h, const char *imds_url,
                                         char *out, size_t cap, struct tw_error *err);

/* OUT as JSON: {"vms", "vms_new", "disks", "disks_new", "sku_changes",
 * "power_changes", "detached", "unattached_disks", "changes": [{"what",
 * "vm", "disk", "from", "to"}]} (disk, from, to null when ""); new
 * reference, NULL when out of memory. */
struct json_t *tw_sync_summary_json(const struct tw_sync_summary *s);

#endif

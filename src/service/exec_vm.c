/*
 * exec_vm.c - vm stop and vm start (exec.h): the pre-stop and pre-start
 * steps of a runbook, each step an action of the audit log run by the
 * executor like any other.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/policy.h"
#include "core/time.h"
#include "service/exec.h"

static void now_text(char *out, size_t cap)
{
    if (!tw_rfc3339_format((int64_t)time(NULL), out, cap) && cap)
        out[0] = '\0';
}

/* A new action: recorded and read back (executing), or a row in memory
 * (dry run). */
static enum tw_err make_row(struct tw_store *st, bool dry_run, const struct tw_store_vm_row *vm,
                            const struct tw_store_disk_row *disk, const char *kind,
                            const char *from, const char *to, const char *reason,
                            const char *policy, struct tw_store_action_row *row,
                            struct tw_error *err)
{
    char now[40];
    now_text(now, sizeof now);
    memset(row, 0, sizeof *row);
    if (!dry_run) {
        struct tw_store_action_new a;
        memset(&a, 0, sizeof a);
        a.disk_id = disk ? disk->id : 0;
        a.vm_id = vm->id;
        a.kind = kind;
        a.from_sku = from;
        a.to_sku = to;
        a.due_at = now;
        a.reason = reason;
        a.policy = policy && policy[0] ? policy : NULL;
        int64_t id = 0;
        enum tw_err rc = tw_store_action_add(st, &a, &id, err);
        if (rc != TW_OK)
            return rc;
        return tw_store_action_get(st, id, row, err);
    }
    row->vm_id = vm->id;
    row->disk_id = disk ? disk->id : 0;
    snprintf(row->vm, sizeof row->vm, "%s", vm->name);
    snprintf(row->vm_resource_id, sizeof row->vm_resource_id, "%s", vm->resource_id);
    if (disk) {
        snprintf(row->disk, sizeof row->disk, "%s", disk->disk.name);
        snprintf(row->disk_resource_id, sizeof row->disk_resource_id, "%s",
                 disk->disk.managed_disk_id);
    }
    snprintf(row->kind, sizeof row->kind, "%s", kind);
    snprintf(row->from_sku, sizeof row->from_sku, "%s", from ? from : "");
    snprintf(row->to_sku, sizeof row->to_sku, "%s", to ? to : "");
    snprintf(row->due_at, sizeof row->due_at, "%s", now);
    row->due_ms = (int64_t)time(NULL) * 1000;
    snprintf(row->state, sizeof row->state, "planned");
    snprintf(row->reason, sizeof row->reason, "%s", reason);
    snprintf(row->policy, sizeof row->policy, "%s", policy ? policy : "");
    row->dry_run = true;
    return TW_OK;
}

static void sum_add(struct tw_exec_summary *a, const struct tw_exec_summary *b)
{
    a->actions += b->actions;
    a->done += b->done;
    a->skipped += b->skipped;
    a->failed += b->failed;
    a->waiting += b->waiting;
    a->retry += b->retry;
    a->held += b->held;
    a->would_send += b->would_send;
    a->nothing_to_send += b->nothing_to_send;
}

/* The state of a stored action after a run ("" when unread). */
static void state_of(struct tw_store *st, int64_t id, char *out, size_t cap)
{
    enum tw_action_state s;
    int attempts = 0;
    struct tw_error e = {0};
    out[0] = '\0';
    if (id && tw_store_action_state(st, id, &s, &attempts, &e) == TW_OK)
        snprintf(out, cap, "%s", tw_action_state_name(s));
}

/* The reason an action ended as it did (its last detail). */
static void reason_of(struct tw_store *st, int64_t id, char *out, size_t cap)
{
    struct tw_store_action_row r;
    struct tw_error e = {0};
    out[0] = '\0';
    if (tw_store_action_get(st, id, &r, &e) == TW_OK) {
        snprintf(out, cap, "%s", r.reason);
        free(r.operation_url);
    }
}

static enum tw_err open_vm(const struct tw_exec_opts *o, int64_t vm_id, struct tw_store **st,
                           struct tw_store_vm_row *vm, struct tw_error *err)
{
    if (!o || !o->db_path)
        return tw_error_set(err, TW_EINVAL, "vm stop and start need a database (--db)");
    enum tw_err rc = tw_store_open(o->db_path, st, err);
    if (rc != TW_OK)
        return rc;
    memset(vm, 0, sizeof *vm);
    rc = tw_store_vm(*st, vm_id, vm, err);
    if (rc == TW_OK && !vm->resource_id[0])
        rc = tw_error_set(err, TW_EINVAL, "VM %s has no ARM resource id in the store; run "
                          "`tierwise sync` first", vm->name);
    return rc;
}

/* The disk's SKU as last seen: the newest row of its SKU history (ARM's
 * observations, the executor's own among them, go there; the disk's row
 * follows the agents' reports), else the row's. */
static void current_sku(struct tw_store *st, const struct tw_store_disk_row *d, char *out,
                        size_t cap)
{
    struct tw_store_sku_hist_row *h = NULL;
    size_t n = 0;
    struct tw_error e = {0};
    snprintf(out, cap, "%s", d->disk.sku);
    if (tw_store_disk_history(st, d->id, &h, &n, &e) == TW_OK && n > 0 && h[n - 1].sku[0])
        snprintf(out, cap, "%s", h[n - 1].sku);
    free(h);
}

enum tw_err tw_exec_vm_stop(const struct tw_exec_opts *o, int64_t vm_id,
                            const struct tw_exec_stop_disk *disks, size_t n,
                            struct tw_exec_summary *out, struct tw_error *err)
{
    struct tw_store *st = NULL;
    struct tw_store_vm_row vm;
    struct tw_exec_summary total, s;
    memset(&total, 0, sizeof total);
    struct tw_store_action_row *rows = calloc(n + 1, sizeof *rows);
    size_t nr = 0;
    struct tw_store_disk_row *drows = NULL;
    size_t nd = 0;
    enum tw_err rc = rows ? open_vm(o, vm_id, &st, &vm, err)
                          : tw_error_set(err, TW_ENOMEM, "out of memory");
    if (rc != TW_OK)
        goto out;
    /* the deallocation first, alone: the disks wait for it */
    rc = make_row(st, o->dry_run, &vm, NULL, "deallocate", NULL, NULL,
                  "vm stop: deallocate before the disks are switched",
                  n ? disks[0].policy : NULL, &rows[0], err);
    if (rc != TW_OK)
        goto out;
    nr = 1;
    memset(&s, 0, sizeof s);
    rc = tw_exec_run(o, rows, 1, &s, err);
    sum_add(&total, &s);
    if (rc != TW_OK)
        goto out;
    /* a dry run: the deallocation would be sent (or is not needed), so the
     * disks' PATCHes come after it, not "waiting" for it */
    struct tw_exec_opts dry = *o;
    dry.dry_after_deallocate = o->dry_run && (s.would_send == 1 || s.nothing_to_send == 1);
    if (!o->dry_run) {
        char state[16];
        state_of(st, rows[0].id, state, sizeof state);
        if (strcmp(state, "done")) {
            char why[512];
            reason_of(st, rows[0].id, why, sizeof why);
            rc = tw_error_set(err, TW_EIO, "VM %s was not deallocated (action %lld is %s: %.300s); "
                              "its disks were left as they are", vm.name,
                              (long long)rows[0].id, state, why);
            goto out;
        }
    }
    rc = tw_store_vm_disks(st, vm_id, &drows, &nd, err);
    if (rc != TW_OK)
        goto out;
    size_t first = nr;
    for (size_t i = 0; i < n; i++) {
        if (!disks[i].to_sku || !disks[i].to_sku[0])
            continue;
        const struct tw_store_disk_row *d = NULL;
        for (size_t k = 0; k < nd; k++)
            if (drows[k].id == disks[i].disk_id)
                d = &drows[k];
        if (!d) {
            rc = tw_error_set(err, TW_ENOENT, "disk %lld is not attached to VM %s",
                              (long long)disks[i].disk_id, vm.name);
            goto out;
        }
        char from[32];
        current_sku(st, d, from, sizeof from);
        if (!strcasecmp(from, disks[i].to_sku))
            continue;
        rc = make_row(st, o->dry_run, &vm, d, "downgrade", from, disks[i].to_sku,
                      "vm stop: downgrade while deallocated", disks[i].policy, &rows[nr], err);
        if (rc != TW_OK)
            goto out;
        nr++;
    }
    if (nr > first) {
        memset(&s, 0, sizeof s);
        rc = tw_exec_run(&dry, rows + first, nr - first, &s, err);
        sum_add(&total, &s);
    }
out:
    if (out)
        *out = total;
    free(drows);
    free(vm.tags);
    tw_store_action_rows_free(rows, nr);
    tw_store_close(st);
    return rc;
}

/*
 * Whether disk DISK_ID's original SKU must be back before its VM starts:
 * require_original_before_start of the policy of the downgrade that
 * recorded the original (the first one sent since the disk was last
 * restored from that SKU: the original is recorded at the move to sent and
 * kept by the first), read from the stored policies; DEFAULT when that action has no
 * policy or the policy is not stored.  *POLICY (65 bytes) its name, "".
 */
static bool disk_requires_original(struct tw_store *st, int64_t disk_id, bool def, char *policy)
{
    struct tw_store_action_filter f = {0};
    f.disk_id = disk_id;
    struct tw_store_action_row *rows = NULL;
    size_t n = 0;
    struct tw_error e = {0};
    policy[0] = '\0';
    if (tw_store_actions_list(st, &f, &rows, &n, NULL, &e) != TW_OK)
        return def;
    /* the recorder left the original it found: its from_sku is the
     * original; a failed one (its original forgotten when the disk never
     * moved) only when no later one fits */
    char orig[32] = "", tier[16] = "";
    bool found = false;
    if (tw_store_disk_original_get(st, disk_id, orig, tier, &found, &e) != TW_OK)
        found = false;
    const struct tw_store_action_row *rec = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rows[i].kind, "upgrade") && !strcmp(rows[i].state, "done"))
            rec = NULL; /* restored: the original was cleared */
        else if (!strcmp(rows[i].kind, "downgrade") && rows[i].attempts > 0 &&
                 (!found || !strcasecmp(rows[i].from_sku, orig)) &&
                 (!rec || (!strcmp(rec->state, "failed") && strcmp(rows[i].state, "failed"))))
            rec = &rows[i];
    }
    bool req = def;
    if (rec && rec->policy[0]) {
        snprintf(policy, 65, "%s", rec->policy);
        char *body = NULL;
        if (tw_store_policy_get(st, rec->policy, &body, &e) == TW_OK && body) {
            struct tw_policy p;
            memset(&p, 0, sizeof p);
            if (tw_policy_parse(body, strlen(body), &p, NULL, &e) == TW_OK)
                req = p.require_original_before_start;
            tw_policy_cleanup(&p);
        }
        free(body);
    }
    tw_store_action_rows_free(rows, n);
    return req;
}

enum tw_err tw_exec_vm_start(const struct tw_exec_opts *o, int64_t vm_id, bool require_original,
                             struct tw_exec_summary *out, struct tw_exec_start_info *info,
                             struct tw_error *err)
{
    struct tw_exec_start_info dummy;
    if (!info)
        info = &dummy;
    memset(info, 0, sizeof *info);
    struct tw_store *st = NULL;
    struct tw_store_vm_row vm;
    struct tw_exec_summary total, s;
    memset(&total, 0, sizeof total);
    memset(&vm, 0, sizeof vm);
    struct tw_store_disk_row *drows = NULL;
    size_t nd = 0, nr = 0;
    struct tw_store_action_row *rows = NULL;
    enum tw_err rc = open_vm(o, vm_id, &st, &vm, err);
    if (rc == TW_OK)
        rc = tw_store_vm_disks(st, vm_id, &drows, &nd, err);
    if (rc != TW_OK)
        goto out;
    rows = calloc(nd + 1, sizeof *rows);
    if (!rows) {
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nd; i++) {
        char sku[32] = "", tier[16] = "";
        bool found = false;
        rc = tw_store_disk_original_get(st, drows[i].id, sku, tier, &found, err);
        if (rc != TW_OK)
            goto out;
        if (!found)
            continue;
        char from[32];
        current_sku(st, &drows[i], from, sizeof from);
        rc = make_row(st, o->dry_run, &vm, &drows[i], "upgrade", from, sku,
                      "vm start: restore the original SKU before the start", NULL, &rows[nr],
                      err);
        if (rc != TW_OK)
            goto out;
        nr++;
    }
    if (nr) {
        memset(&s, 0, sizeof s);
        rc = tw_exec_run(o, rows, nr, &s, err);
        sum_add(&total, &s);
        if (rc != TW_OK)
            goto out;
    }
    if (!o->dry_run) {
        /* each disk not restored by the policy that downgraded it */
        char bad[400] = "", allowed[400] = "";
        size_t used = 0, aused = 0;
        for (size_t i = 0; i < nr; i++) {
            char state[16];
            state_of(st, rows[i].id, state, sizeof state);
            if (!strcmp(state, "done"))
                continue;
            char pol[65];
            bool req = disk_requires_original(st, rows[i].disk_id, require_original, pol);
            char *buf = req ? bad : allowed;
            size_t *u = req ? &used : &aused;
            int k = snprintf(buf + *u, sizeof bad - *u, "%s%s (%s; policy %s %s)",
                             *u ? ", " : "", rows[i].disk, state, pol[0] ? pol : "(none)",
                             req ? "requires the original SKU before a start"
                                 : "allows a start without it");
            if (k > 0 && (size_t)k < sizeof bad - *u)
                *u += (size_t)k;
        }
        if (used) {
            snprintf(info->why, sizeof info->why, "%s could not be restored to the original SKU",
                     bad);
            rc = tw_error_set(err, TW_EPERM, "VM %s was not started: %s could not be restored "
                              "to the original SKU (tierwise actions --db ... --vm %s says why)",
                              vm.name, bad, vm.name);
            goto out;
        }
        if (aused)
            snprintf(info->why, sizeof info->why, "started although %s is not restored",
                     allowed);
    }
    rc = make_row(st, o->dry_run, &vm, NULL, "start", NULL, NULL,
                  "vm start: start after the disks are restored", NULL, &rows[nr], err);
    if (rc != TW_OK)
        goto out;
    nr++;
    memset(&s, 0, sizeof s);
    rc = tw_exec_run(o, &rows[nr - 1], 1, &s, err);
    sum_add(&total, &s);
    if (rc == TW_OK && !o->dry_run) {
        char state[16];
        state_of(st, rows[nr - 1].id, state, sizeof state);
        if (strcmp(state, "done")) {
            char why[512];
            reason_of(st, rows[nr - 1].id, why, sizeof why);
            rc = tw_error_set(err, TW_EIO, "VM %s was not started (action %lld is %s: %.300s)",
                              vm.name, (long long)rows[nr - 1].id, state, why);
            snprintf(info->why, sizeof info->why, "the start is %s: %.300s", state, why);
        } else {
            info->started = true;
        }
    }
out:
    if (out)
        *out = total;
    free(drows);
    free(vm.tags);
    tw_store_action_rows_free(rows, nr);
    tw_store_close(st);
    return rc;
}

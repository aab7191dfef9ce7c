/*
 * sim_admin.c - the simulator's own surface under /_sim/, for tests and
 * the demo: the ARM state, the clock, faults, power states and the log of
 * requests.  Never faulted, never logged, no auth (loopback only).
 * Errors use tierwise's envelope {"error":{"code","message"}}.
 */
#include "sim/sim_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static json_t *load_body(const struct sim_req *rq, struct sim_resp *rs)
{
    json_error_t je;
    json_t *v = json_loadb(rq->body, rq->body_len, 0, &je);
    if (!v) {
        char msg[256];
        snprintf(msg, sizeof(msg), "The body is not valid JSON at line %d, column %d: %s", je.line,
                 je.column, je.text);
        sim_surface_error(rs, SIM_ADMIN, 400, "BadRequest", msg);
    }
    return v;
}

static json_t *clock_json(const struct tw_sim *sim)
{
    char now[40];
    sim_iso_time(sim_now_ms(sim), now);
    return json_pack("{s:s, s:I}", "now", now, "offset_s",
                     (json_int_t)(sim->clock_offset_ms / 1000));
}

static const char *op_kind(enum sim_op_kind k)
{
    switch (k) {
    case SIM_OP_DISK_UPDATE: return "disk-update";
    case SIM_OP_VM_START: return "start";
    case SIM_OP_VM_DEALLOCATE: return "deallocate";
    case SIM_OP_VM_POWEROFF: return "powerOff";
    }
    return "?";
}

void sim_admin_state(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    (void)rq;
    const struct tw_sim_scenario *sc = sim->sc;
    int64_t now = sim_now_ms(sim);
    json_t *vms = json_array(), *disks = json_array(), *ops = json_array();
    for (size_t i = 0; vms && i < sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sc->vms[i];
        json_array_append_new(
            vms, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "subscription_id",
                           v->subscription_id, "resource_group", v->resource_group, "name", v->name,
                           "vm_size", v->vm_size, "location", v->location, "power_state",
                           v->hibernated ? "hibernated" : tw_sim_power_name(v->power),
                           "pending_operation",
                           sim->vm_rt[i].op >= 0 ? json_string(sim->ops[sim->vm_rt[i].op].id)
                                                 : json_null()));
    }
    for (size_t i = 0; disks && i < sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sc->disks[i];
        int changes = 0;
        const struct sim_disk_rt *rt = &sim->disk_rt[i];
        for (int k = 0; k < rt->n_changes && k < TW_SIM_MAX_DAILY_CHANGES; k++)
            changes += rt->changes_ms[k] > now - 86400000LL;
        json_array_append_new(
            disks,
            json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:I, s:s, s:s, s:i, s:o}", "subscription_id",
                      d->subscription_id, "resource_group", d->resource_group, "name", d->name,
                      "vm", d->vm >= 0 ? json_string(sc->vms[d->vm].name) : json_null(), "sku",
                      d->sku, "tier", d->tier, "size_gib", (json_int_t)d->size_gib, "disk_state",
                      sim_disk_state(sim, i), "provisioning_state",
                      rt->op >= 0 ? "Updating" : "Succeeded", "sku_changes_24h", changes,
                      "pending_operation",
                      rt->op >= 0 ? json_string(sim->ops[rt->op].id) : json_null()));
    }
    for (size_t i = 0; ops && i < sim->n_ops; i++) {
        const struct sim_op *op = &sim->ops[i];
        char start[40], end[40];
        sim_iso_time(op->start_ms, start);
        sim_iso_time(op->end_ms, end);
        const char *target =
            op->kind == SIM_OP_DISK_UPDATE ? sc->disks[op->target].name : sc->vms[op->target].name;
        json_array_append_new(ops, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", op->id, "kind",
                                             op_kind(op->kind), "target", target, "status",
                                             !op->done  ? "InProgress"
                                             : op->fail ? "Failed"
                                                        : "Succeeded",
                                             "start", start, "end", end));
    }
    json_t *o = clock_json(sim);
    if (o) {
        json_object_set_new(o, "vms", vms);
        json_object_set_new(o, "disks", disks);
        json_object_set_new(o, "operations", ops);
        json_object_set_new(o, "tokens_issued", json_integer((json_int_t)sim->n_tokens));
        json_object_set_new(o, "prices", json_integer((json_int_t)json_array_size(sc->prices)));
    } else {
        json_decref(vms);
        json_decref(disks);
        json_decref(ops);
    }
    sim_json(rs, 200, o);
}

void sim_admin_clock(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    json_t *b = load_body(rq, rs);
    if (!b)
        return;
    const json_t *adv = json_object_get(b, "advance_s");
    /* Only forward: operations and change counters assume time moves on. */
    if (!json_is_integer(adv) || json_integer_value(adv) < 0 ||
        json_integer_value(adv) > 10LL * 366 * 86400) {
        sim_surface_error(rs, SIM_ADMIN, 400, "BadRequest",
                          "Send {\"advance_s\": N}: N whole seconds to move the clock forward "
                          "(86400 is a day).");
    } else {
        sim->clock_offset_ms += json_integer_value(adv) * 1000;
        sim_settle(sim);
        sim_json(rs, 200, clock_json(sim));
    }
    json_decref(b);
}

void sim_admin_faults_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    (void)rq;
    json_t *a = json_array();
    for (size_t i = 0; a && i < sim->n_faults; i++)
        json_array_append_new(a, tw_sim_fault_to_value(&sim->faults[i]));
    sim_json(rs, 200, a ? json_pack("{s:o}", "faults", a) : NULL);
}

void sim_admin_faults_post(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    json_t *b = load_body(rq, rs);
    if (!b)
        return;
    /* One fault object, an array of them, or {"faults": [...]}. */
    json_t *list = json_is_array(b) ? b : json_object_get(b, "faults");
    size_t n = list ? json_array_size(list) : 1;
    struct tw_sim_fault fs[TW_SIM_MAX_FAULTS];
    struct tw_error err;
    if (n > TW_SIM_MAX_FAULTS || sim->n_faults + n > TW_SIM_MAX_FAULTS) {
        sim_surface_error(rs, SIM_ADMIN, 409, "TooManyFaults",
                          "At most 64 faults can be active; DELETE /_sim/faults clears them.");
        json_decref(b);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char where[32];
        snprintf(where, sizeof(where), list ? "faults[%zu]" : "fault", i);
        if (tw_sim_fault_from_value(list ? json_array_get(list, i) : b, where, &fs[i], &err) !=
            TW_OK) {
            sim_surface_error(rs, SIM_ADMIN, 400, "BadRequest", err.msg);
            json_decref(b);
            return;
        }
    }
    memcpy(&sim->faults[sim->n_faults], fs, n * sizeof(fs[0]));
    sim->n_faults += n;
    json_decref(b);
    sim_admin_faults_get(sim, rq, rs);
}

void sim_admin_faults_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    sim->n_faults = 0;
    sim_admin_faults_get(sim, rq, rs);
}

void sim_admin_power(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    json_t *b = load_body(rq, rs);
    if (!b)
        return;
    const char *name = json_string_value(json_object_get(b, "vm")),
               *rg = json_string_value(json_object_get(b, "resource_group")),
               *state = json_string_value(json_object_get(b, "state"));
    enum tw_sim_power p;
    /* "hibernated": deallocated with the memory saved, its disks Frozen. */
    bool hibernate = state && strcasecmp(state, "hibernated") == 0;
    if (hibernate)
        state = "deallocated";
    long vi = -1;
    size_t hits = 0;
    for (size_t i = 0; name && i < sim->sc->n_vms; i++) {
        const struct tw_sim_vm *v = &sim->sc->vms[i];
        if (strcasecmp(v->name, name) == 0 && (!rg || strcasecmp(v->resource_group, rg) == 0)) {
            vi = (long)i;
            hits++;
        }
    }
    if (!name || !state || tw_sim_power_parse(state, &p) != TW_OK) {
        sim_surface_error(rs, SIM_ADMIN, 400, "BadRequest",
                          "Send {\"vm\": NAME, \"state\": running|stopped|deallocated|hibernated|"
                          "starting|stopping|deallocating} (and \"resource_group\" when names "
                          "repeat).");
    } else if (hits != 1) {
        sim_surface_error(rs, SIM_ADMIN, hits ? 409 : 404, hits ? "Ambiguous" : "NotFound",
                          hits ? "More than one VM has that name; add \"resource_group\"."
                               : "No VM of that name in the scenario.");
    } else {
        /* A power change from outside (a person, a schedule) overtakes any
         * operation in flight. */
        struct tw_sim_vm *vm = &sim->sc->vms[vi];
        bool owner = (p == TW_SIM_POWER_RUNNING || p == TW_SIM_POWER_DEALLOCATED) &&
                     (vm->power != p || vm->hibernated != hibernate);
        vm->power = p;
        vm->hibernated = hibernate;
        sim->vm_rt[vi].op = -1;
        if (owner) /* LastOwnershipUpdateTime: the VM started or was deallocated */
            sim_vm_owner_changed(sim, vi, sim_now_ms(sim));
        sim_json(rs, 200,
                 json_pack("{s:s, s:s, s:b}", "vm", vm->name, "power_state", tw_sim_power_name(p),
                           "hibernated", hibernate));
    }
    json_decref(b);
}

void sim_admin_requests_get(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    (void)rq;
    json_t *a = json_array();
    size_t n = sim->log_total < SIM_LOG_SIZE ? (size_t)sim->log_total : SIM_LOG_SIZE;
    size_t first = (sim->log_next + SIM_LOG_SIZE - n) % SIM_LOG_SIZE;
    for (size_t i = 0; a && i < n; i++) {
        const struct sim_log *l = &sim->log[(first + i) % SIM_LOG_SIZE];
        char at[40];
        sim_iso_time(l->at_ms, at);
        json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:i, s:s}", "at", at, "method",
                                           l->method, "path", l->path, "status", (int)l->status,
                                           "fault", l->fault));
    }
    sim_json(rs, 200,
             a ? json_pack("{s:I, s:o}", "total", (json_int_t)sim->log_total, "requests", a)
               : NULL);
}

void sim_admin_requests_delete(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    sim->log_total = 0;
    sim->log_next = 0;
    sim_admin_requests_get(sim, rq, rs);
}

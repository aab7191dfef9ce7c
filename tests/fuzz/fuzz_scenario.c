/*
 * fuzz_scenario.c - the simulator's scenario parser on arbitrary bytes.
 *
 * The replay and fuzz binaries link only tw_core (and tw_bench, tw_azure),
 * not tw_sim, so the parser's file is compiled in here: it is pure (no I/O,
 * no libmicrohttpd) for that reason.  The input is used at its exact size
 * with no terminator.  Checks what the parser promises: a scenario whose
 * references and tiers hold together, or an error with a message; and the
 * same bytes as a prices file and as a --fault spec.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/sim/sim_scenario.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct tw_sim_scenario *sc)
{
    if (sc->n_vms > TW_SIM_MAX_VMS || sc->n_disks > TW_SIM_MAX_DISKS ||
        sc->self >= (long)sc->n_vms || sc->n_faults > TW_SIM_MAX_FAULTS)
        abort();
    for (size_t i = 0; i < sc->n_disks; i++) {
        const struct tw_sim_disk *d = &sc->disks[i];
        char base[8];
        if (d->vm >= (long)sc->n_vms || !tw_sim_sku_known(d->sku) ||
            tw_sim_tier_for(d->sku, d->size_gib, base, sizeof(base)) != TW_OK)
            abort();
        /* A tier is the size's own or (Premium only) a higher one. */
        if (strcmp(d->tier, base) != 0 &&
            (d->tier[0] != 'P' || tw_sim_tier_size(d->tier) < tw_sim_tier_size(base)))
            abort();
        if (!d->os && d->vm >= 0 && (d->lun < 0 || d->lun > 63))
            abort();
        /* Provisioned performance only where there are no tiers. */
        if (d->bursting < -1 || d->bursting > 1 || d->max_shares < 0 ||
            (d->tier[0] && (d->iops || d->mbps)) || (!d->tier[0] && (d->iops < 100 || d->mbps < 1)))
            abort();
    }
    for (size_t i = 0; i < sc->n_vms; i++) {
        if (!json_is_object(sc->vms[i].tags) ||
            (sc->vms[i].hibernated && sc->vms[i].power != TW_SIM_POWER_DEALLOCATED))
            abort();
    }
    const struct tw_sim_arm_limits *l = &sc->settings.arm_limits;
    if (l->reads_per_s < 0 || l->writes_per_s < 0 || l->vm_actions_per_min < 0 ||
        l->vm_actions_per_min > TW_SIM_MAX_VM_ACTIONS || sc->settings.arm_page_size < 1)
        abort();
    /* Every price item carries isPrimaryMeterRegion and armSkuName. */
    for (size_t i = 0; i < json_array_size(sc->prices); i++) {
        const json_t *it = json_array_get(sc->prices, i);
        if (!json_object_get(it, "isPrimaryMeterRegion") || !json_object_get(it, "armSkuName"))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_sim_scenario *sc = NULL;
    struct tw_error err = {0};
    if (tw_sim_scenario_parse((const char *)data, size, &sc, &err) == TW_OK) {
        check(sc);
        size_t before = json_array_size(sc->prices);
        /* The same bytes as a prices file: all or nothing. */
        if (tw_sim_scenario_add_prices(sc, (const char *)data, size, &err) != TW_OK &&
            json_array_size(sc->prices) != before)
            abort();
        tw_sim_scenario_free(sc);
    } else if (sc || !err.msg[0]) {
        abort(); /* every refusal says what is wrong */
    }
    /* And as a --fault spec (a C string). */
    char spec[512];
    size_t n = size < sizeof(spec) - 1 ? size : sizeof(spec) - 1;
    memcpy(spec, data, n);
    spec[n] = '\0';
    struct tw_sim_fault f;
    memset(&err, 0, sizeof(err));
    if (tw_sim_fault_parse(spec, &f, &err) == TW_OK) {
        if (f.path[0] != '/' || f.probability <= 0.0 || f.probability > 1.0 || f.count == 0)
            abort();
    } else if (!err.msg[0]) {
        abort();
    }
    /* And as an --arm-limits value. */
    struct tw_sim_arm_limits lim;
    memset(&err, 0, sizeof(err));
    if (tw_sim_arm_limits_parse(spec, &lim, &err) == TW_OK) {
        if (lim.reads_per_s < 0 || lim.writes_per_s < 0 || lim.burst < 0 ||
            lim.vm_actions_per_min < 0 || lim.vm_actions_per_min > TW_SIM_MAX_VM_ACTIONS)
            abort();
    } else if (!err.msg[0]) {
        abort();
    }
    return 0;
}

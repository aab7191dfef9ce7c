/* test_sim_scenario.c - the simulator's scenario parser, tier ladder and
 * fault specs. */
#include "testhelp.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/sim_scenario.h"

static struct tw_sim_scenario *parse_ok(const char *text)
{
    struct tw_sim_scenario *sc = NULL;
    struct tw_error err = {0};
    if (tw_sim_scenario_parse(text, strlen(text), &sc, &err) != TW_OK)
        fail_msg("parse failed: %s\n%s", err.msg, text);
    return sc;
}

static const struct tw_sim_disk *disk(const struct tw_sim_scenario *sc, const char *name)
{
    for (size_t i = 0; i < sc->n_disks; i++) {
        if (strcmp(sc->disks[i].name, name) == 0)
            return &sc->disks[i];
    }
    fail_msg("no disk %s", name);
    return NULL;
}

static void test_example(void **state)
{
    (void)state;
    size_t len;
    char *text = th_fixture("sim/scenario-basic.json", &len);
    struct tw_sim_scenario *sc = parse_ok(text);
    free(text);
    assert_int_equal(sc->n_vms, 2);
    assert_int_equal(sc->n_disks, 6);
    assert_int_equal(sc->self, 0);
    assert_string_equal(sc->vms[0].name, "advisor-vm-01");
    assert_int_equal(sc->vms[0].power, TW_SIM_POWER_RUNNING);
    assert_int_equal(sc->vms[1].power, TW_SIM_POWER_DEALLOCATED);
    assert_string_equal(json_string_value(json_object_get(sc->vms[0].tags, "owner")), "advisor");
    /* Tiers: given (P10) or from the size (30 GiB -> P4, 256 -> E15, 64 -> E6). */
    const struct tw_sim_disk *os =
        disk(sc, "advisor-vm-01_OsDisk_1_0123456789abcdef0123456789abcdef");
    assert_true(os->os);
    assert_int_equal(os->lun, -1);
    assert_string_equal(os->tier, "P4");
    assert_string_equal(os->caching, "ReadWrite");
    assert_string_equal(os->create_option, "FromImage");
    assert_string_equal(disk(sc, "advisor-vm-01-data0")->tier, "P10");
    assert_string_equal(disk(sc, "advisor-vm-01-data0")->caching, "ReadOnly");
    assert_string_equal(disk(sc, "advisor-vm-01-data1")->tier, "E15");
    assert_int_equal(disk(sc, "advisor-vm-01-data1")->lun, 1);
    assert_string_equal(disk(sc, "advisor-vm-02-data0")->tier, "P40");
    const struct tw_sim_disk *spare = disk(sc, "spare-disk");
    assert_int_equal(spare->vm, -1);
    assert_string_equal(spare->tier, "E6");
    /* Provenance stays out of what is served. */
    assert_int_equal(json_array_size(sc->prices), 15);
    for (size_t i = 0; i < json_array_size(sc->prices); i++)
        assert_null(json_object_get(json_array_get(sc->prices, i), "_source"));
    assert_int_equal(json_array_size(sc->resource_skus), 2);
    assert_null(json_object_get(json_array_get(sc->resource_skus, 0), "_source"));
    assert_int_equal(json_array_size(sc->principals), 1);
    assert_int_equal(sc->settings.operation_delay_ms, 300);
    assert_int_equal(sc->settings.sku_changes_per_day, 2);
    assert_int_equal(sc->n_faults, 0);
    tw_sim_scenario_free(sc);
}

static void test_demo(void **state)
{
    (void)state;
    size_t len;
    char *text = th_fixture("../../deploy/demo-scenario.json", &len);
    struct tw_sim_scenario *sc = parse_ok(text);
    free(text);
    assert_int_equal(sc->n_vms, 1);
    assert_string_equal(sc->vms[0].vm_size, "Standard_D8s_v3");
    assert_string_equal(sc->vms[0].location, "westeurope");
    assert_string_equal(disk(sc, "tw-demo-data0")->tier, "P10");
    assert_string_equal(disk(sc, "tw-demo-data1")->tier, "P40");
    assert_string_equal(disk(sc, "tw-demo-data2")->tier, "E10");
    /* Every price is a real westeurope item in USD. */
    assert_true(json_array_size(sc->prices) >= 9);
    for (size_t i = 0; i < json_array_size(sc->prices); i++) {
        const json_t *it = json_array_get(sc->prices, i);
        assert_string_equal(json_string_value(json_object_get(it, "armRegionName")), "westeurope");
        assert_string_equal(json_string_value(json_object_get(it, "currencyCode")), "USD");
    }
    tw_sim_scenario_free(sc);
}

/* The tier switches' scenario: one VM of each case, ARM's limits on. */
static void test_switches(void **state)
{
    (void)state;
    size_t len;
    char *text = th_fixture("sim/scenario-switches.json", &len);
    struct tw_sim_scenario *sc = parse_ok(text);
    free(text);
    assert_int_equal(sc->n_vms, 5);
    assert_int_equal(sc->vms[0].power, TW_SIM_POWER_DEALLOCATED);
    assert_int_equal(sc->vms[1].power, TW_SIM_POWER_RUNNING);
    assert_true(sc->vms[2].hibernated);
    assert_int_equal(disk(sc, "shared-vm-data0")->max_shares, 2);
    assert_int_equal(disk(sc, "burst-vm-data0")->bursting, 1);
    assert_int_equal(disk(sc, "weekend-vm-data0")->bursting, -1);
    assert_string_equal(disk(sc, "weekend-vm-data0")->tier, "P30");
    assert_true(sc->settings.arm_limits.reads_per_s == 25 &&
                sc->settings.arm_limits.writes_per_s == 10 &&
                sc->settings.arm_limits.vm_actions_per_min == 4);
    tw_sim_scenario_free(sc);
}

static void test_minimal_defaults(void **state)
{
    (void)state;
    struct tw_sim_scenario *sc = parse_ok("{}");
    assert_int_equal(sc->n_vms, 0);
    assert_int_equal(sc->self, -1);
    assert_int_equal(sc->settings.prices_page_size, 100);
    assert_int_equal(sc->settings.operation_delay_ms, 1000);
    assert_int_equal(sc->settings.token_lifetime_s, 86399);
    tw_sim_scenario_free(sc);
    sc = parse_ok("{\"settings\": {\"clock\": \"2025-01-06T08:00:00Z\"}}");
    assert_int_equal(sc->settings.clock_start_ms, 1736150400000LL);
    /* No ARM limits unless asked for; lists page by 50. */
    assert_int_equal(sc->settings.arm_page_size, 50);
    assert_true(sc->settings.arm_limits.reads_per_s == 0 &&
                sc->settings.arm_limits.writes_per_s == 0 &&
                sc->settings.arm_limits.vm_actions_per_min == 0);
    tw_sim_scenario_free(sc);
    sc = parse_ok("{\"settings\": {\"arm_page_size\": 3, \"arm_limits\": {\"reads_per_s\": 25, "
                  "\"writes_per_s\": 10, \"vm_actions_per_min\": 4}}}");
    assert_int_equal(sc->settings.arm_page_size, 3);
    assert_true(sc->settings.arm_limits.reads_per_s == 25 &&
                sc->settings.arm_limits.writes_per_s == 10 && sc->settings.arm_limits.burst == 1 &&
                sc->settings.arm_limits.vm_actions_per_min == 4);
    tw_sim_scenario_free(sc);
}

static void test_new_fields(void **state)
{
    (void)state;
    struct tw_sim_scenario *sc = parse_ok(
        "{\"vms\": [{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"vm\", "
        "\"vm_size\": \"Standard_D2s_v3\", \"location\": \"eastus\", \"hibernated\": true, "
        "\"disks\": [{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
        "\"size_gib\": 1024, \"max_shares\": 3, \"bursting\": true}]}], "
        "\"disks\": [{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"u\", "
        "\"location\": \"eastus\", \"sku\": \"UltraSSD_LRS\", \"size_gib\": 64, \"iops\": 6400}]}");
    assert_true(sc->vms[0].hibernated);
    assert_int_equal(sc->vms[0].power, TW_SIM_POWER_DEALLOCATED);
    assert_int_equal(sc->disks[0].max_shares, 3);
    assert_int_equal(sc->disks[0].bursting, 1);
    assert_int_equal(sc->disks[0].iops, 0); /* a tier's rating, not provisioned */
    assert_int_equal(sc->disks[1].bursting, -1);
    assert_int_equal(sc->disks[1].iops, 6400);
    assert_int_equal(sc->disks[1].mbps, 125);
    tw_sim_scenario_free(sc);
    int64_t iops, mbps;
    assert_true(tw_sim_tier_rating("P30", &iops, &mbps) && iops == 5000 && mbps == 200);
    assert_true(tw_sim_tier_rating("E60", &iops, &mbps) && iops == 2000 && mbps == 400);
    assert_true(tw_sim_tier_rating("S4", &iops, &mbps) && iops == 500 && mbps == 60);
    assert_true(tw_sim_tier_rating("P1", &iops, &mbps) && iops == 120 && mbps == 25);
    assert_false(tw_sim_tier_rating("S1", &iops, &mbps));
    assert_false(tw_sim_tier_rating("X10", &iops, &mbps));
}

static void test_prices_filled(void **state)
{
    (void)state;
    /* Items without isPrimaryMeterRegion and armSkuName get them the way
     * the live API sets them; items that have them keep theirs. */
    struct tw_sim_scenario *sc = parse_ok("{}");
    static const char items[] =
        "[{\"productName\": \"Premium SSD Managed Disks\", \"serviceName\": \"Storage\", "
        "\"skuName\": \"P10 LRS\", \"meterName\": \"P10 LRS Disk\", \"unitOfMeasure\": "
        "\"1/Month\"},"
        "{\"productName\": \"Standard SSD Managed Disks\", \"serviceName\": \"Storage\", "
        "\"skuName\": \"E10 LRS\", \"meterName\": \"E10 LRS Disk Operations\", "
        "\"unitOfMeasure\": \"10K\"},"
        "{\"productName\": \"Virtual Machines Dsv3 Series\", \"serviceName\": \"Virtual "
        "Machines\", "
        "\"skuName\": \"D2s v3 Spot\", \"meterName\": \"D2s v3 Spot\", \"unitOfMeasure\": \"1 "
        "Hour\"},"
        "{\"productName\": \"Premium SSD Managed Disks\", \"skuName\": \"P6 LRS\", "
        "\"isPrimaryMeterRegion\": false, \"armSkuName\": \"kept\"}]";
    struct tw_error err = {0};
    assert_int_equal(tw_sim_scenario_add_prices(sc, items, strlen(items), &err), TW_OK);
    static const struct {
        bool primary;
        const char *arm;
    } want[] = {{true, "Premium_SSD_Managed_Disk_P10"},
                {false, ""},
                {true, "Standard_D2s_v3"},
                {false, "kept"}};
    for (size_t i = 0; i < 4; i++) {
        json_t *it = json_array_get(sc->prices, i);
        assert_true(json_is_boolean(json_object_get(it, "isPrimaryMeterRegion")));
        assert_int_equal(json_is_true(json_object_get(it, "isPrimaryMeterRegion")),
                         want[i].primary);
        assert_string_equal(json_string_value(json_object_get(it, "armSkuName")), want[i].arm);
    }
    tw_sim_scenario_free(sc);
}

#define VM(extra, disks)                                                                           \
    "{\"vms\": [{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"vm\", "       \
    "\"vm_size\": \"Standard_D2s_v3\", \"location\": \"eastus\"" extra ", \"disks\": [" disks      \
    "]}]}"

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *words;
    } cases[] = {
        {"{\"vms\": [", "not valid JSON at line 1"},
        {"[]", "must be a JSON object"},
        {"{\"vmz\": []}", "vmz is not a known key (known: schema, settings"},
        {"{\"schema\": \"v2\"}", "schema must be \"tierwise.azsim-scenario/1\""},
        {"{\"settings\": {\"delay\": 1}}", "settings.delay is not a known key"},
        {"{\"settings\": {\"prices_page_size\": 0}}",
         "settings.prices_page_size must be an integer from 1"},
        {"{\"settings\": {\"clock\": \"yesterday\"}}",
         "settings.clock \"yesterday\" is not a UTC time"},
        {"{\"vms\": [{\"name\": \"vm\"}]}", "vms[0].subscription_id is missing"},
        {VM(", \"power_state\": \"starting\"", ""),
         "vms[0].power_state \"starting\" is not running"},
        {VM(", \"tags\": {\"a\": 1}", ""), "vms[0].tags.a must be a string"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium\", "
                "\"size_gib\": 128}"),
         "vms[0].disks[0].sku \"Premium\" is not a managed disk SKU"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\"}"),
         "vms[0].disks[0].size_gib is missing"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 40000}"),
         "size_gib 40000 is beyond the largest tier (32767 GiB) of Premium_LRS"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 128, \"tier\": \"E10\"}"),
         "tier \"E10\" is not a tier of Premium_LRS"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 128, \"tier\": \"P6\"}"),
         "tier \"P6\" does not fit 128 GiB: the size's tier is P10"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"StandardSSD_LRS\", "
                "\"size_gib\": 128, \"tier\": \"E20\"}"),
         "tier \"E20\" does not fit 128 GiB"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"UltraSSD_LRS\", "
                "\"size_gib\": 128, \"tier\": \"P10\"}"),
         "UltraSSD_LRS disks have no tiers"},
        {VM("",
            "{\"name\": \"d\", \"role\": \"data\", \"sku\": \"Premium_LRS\", \"size_gib\": 128}"),
         "vms[0].disks[0].lun is missing"},
        {VM("", "{\"name\": \"a\", \"role\": \"data\", \"lun\": 3, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8},"
                "{\"name\": \"b\", \"role\": \"data\", \"lun\": 3, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8}"),
         "vms[0].disks[1].lun 3 is already used on VM vm"},
        {VM("", "{\"name\": \"a\", \"role\": \"os\", \"sku\": \"Premium_LRS\", \"size_gib\": 8},"
                "{\"name\": \"b\", \"role\": \"os\", \"sku\": \"Premium_LRS\", \"size_gib\": 8}"),
         "vms[0].disks[1] is a second OS disk of VM vm"},
        {VM("", "{\"name\": \"a\", \"role\": \"os\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8}"),
         "an OS disk has no LUN"},
        {VM("", "{\"name\": \"a\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8},"
                "{\"name\": \"A\", \"role\": \"data\", \"lun\": 1, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8}"),
         "name \"A\" is a second disk of that name in resource group rg"},
        {VM("", "{\"name\": \"a\", \"role\": \"root\", \"sku\": \"Premium_LRS\", \"size_gib\": 8}"),
         "role \"root\" is neither os nor data"},
        {VM("", "{\"name\": \"a\", \"role\": \"data\", \"lun\": 64, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8}"),
         "lun must be an integer from 0 to 63"},
        {VM("", "{\"name\": \"a\", \"role\": \"data\", \"lun\": 1, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8, \"caching\": \"Full\"}"),
         "caching \"Full\" is not None, ReadOnly or ReadWrite"},
        {"{\"self\": \"nope\"}", "self \"nope\" is not the name of a VM in vms"},
        {"{\"vms\": [{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"a\", "
         "\"vm_size\": \"x\", \"location\": \"l\"},"
         "{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"b\", \"vm_size\": "
         "\"x\", \"location\": \"l\"}]}",
         "self is missing: with 2 VMs"},
        {"{\"faults\": [{\"kind\": \"boom\"}]}", "faults[0].kind \"boom\" is not latency"},
        {"{\"resource_skus\": [{\"resourceType\": \"virtualMachines\", \"name\": \"x\", "
         "\"locations\": [\"eastus\"], "
         "\"capabilities\": [{\"name\": \"UncachedDiskIOPS\", \"value\": 3200}]}]}",
         "ARM sends numbers as strings"},
        {"{\"resource_skus\": [{\"resourceType\": \"virtualMachines\", \"name\": \"x\"}]}",
         "resource_skus[0].locations must be a non-empty array"},
        {"{\"prices\": {}}", "prices must be an array"},
        {"{\"prices\": [{\"currencyCode\": 1}]}", "prices[0].currencyCode must be a string"},
        {"{\"service_principals\": [{\"client_id\": \"x\"}]}",
         "service_principals[0].client_secret is missing"},
        {"{\"settings\": {\"arm_limits\": 25}}", "settings.arm_limits must be an object"},
        {"{\"settings\": {\"arm_limits\": {\"reads\": 25}}}",
         "settings.arm_limits.reads is not a known key"},
        {"{\"settings\": {\"arm_limits\": {\"reads_per_s\": 0}}}",
         "settings.arm_limits.reads_per_s must be a number"},
        {"{\"settings\": {\"arm_limits\": {\"vm_actions_per_min\": 65}}}",
         "settings.arm_limits.vm_actions_per_min"},
        {"{\"settings\": {\"arm_page_size\": 0}}", "settings.arm_page_size"},
        {VM(", \"power_state\": \"running\", \"hibernated\": true", ""),
         "vms[0].hibernated: a hibernated VM is deallocated"},
        {VM(", \"hibernated\": 1", ""), "vms[0].hibernated"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8, \"iops\": 500}"),
         "vms[0].disks[0].iops: only UltraSSD_LRS and PremiumV2_LRS"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8, \"max_shares\": 0}"),
         "vms[0].disks[0].max_shares"},
        {VM("", "{\"name\": \"d\", \"role\": \"data\", \"lun\": 0, \"sku\": \"Premium_LRS\", "
                "\"size_gib\": 8, \"bursting\": \"yes\"}"),
         "vms[0].disks[0].bursting"},
        {"{\"disks\": [{\"subscription_id\": \"s\", \"resource_group\": \"rg\", \"name\": \"d\", "
         "\"sku\": \"Standard_LRS\", \"size_gib\": 8}]}",
         "disks[0].location is missing"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tw_sim_scenario *sc = (void *)1;
        struct tw_error err = {0};
        enum tw_err rc = tw_sim_scenario_parse(cases[i].json, strlen(cases[i].json), &sc, &err);
        if (rc == TW_OK)
            fail_msg("case %zu parsed: %s", i, cases[i].json);
        assert_null(sc);
        if (!strstr(err.msg, cases[i].words))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.msg, cases[i].words);
    }
}

static void test_tiers(void **state)
{
    (void)state;
    static const struct {
        const char *sku;
        int64_t gib;
        enum tw_err rc;
        const char *tier;
    } cases[] = {
        {"Premium_LRS", 1, TW_OK, "P1"},       {"Premium_LRS", 4, TW_OK, "P1"},
        {"Premium_LRS", 5, TW_OK, "P2"},       {"Premium_LRS", 30, TW_OK, "P4"},
        {"Premium_LRS", 32, TW_OK, "P4"},      {"Premium_LRS", 33, TW_OK, "P6"},
        {"Premium_LRS", 128, TW_OK, "P10"},    {"Premium_LRS", 129, TW_OK, "P15"},
        {"Premium_ZRS", 4096, TW_OK, "P50"},   {"Premium_LRS", 32767, TW_OK, "P80"},
        {"Premium_LRS", 32768, TW_ERANGE, ""}, {"Premium_LRS", 0, TW_ERANGE, ""},
        {"Standard_LRS", 1, TW_OK, "S4"},      {"Standard_LRS", 32, TW_OK, "S4"},
        {"Standard_LRS", 64, TW_OK, "S6"},     {"StandardSSD_ZRS", 200, TW_OK, "E15"},
        {"StandardSSD_LRS", 8, TW_OK, "E2"},   {"UltraSSD_LRS", 1000, TW_OK, ""},
        {"PremiumV2_LRS", 65536, TW_OK, ""},   {"PremiumV2_LRS", 65537, TW_ERANGE, ""},
        {"Bogus_LRS", 10, TW_EINVAL, ""},      {"premium_lrs", 10, TW_EINVAL, ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char tier[8];
        enum tw_err rc = tw_sim_tier_for(cases[i].sku, cases[i].gib, tier, sizeof(tier));
        if (rc != cases[i].rc || strcmp(tier, cases[i].tier) != 0)
            fail_msg("%s %lld GiB: %d \"%s\", want %d \"%s\"", cases[i].sku,
                     (long long)cases[i].gib, rc, tier, cases[i].rc, cases[i].tier);
    }
    assert_int_equal(tw_sim_tier_size("P10"), 128);
    assert_int_equal(tw_sim_tier_size("E80"), 32767);
    assert_int_equal(tw_sim_tier_size("S4"), 32);
    assert_int_equal(tw_sim_tier_size("S1"), -1);
    assert_int_equal(tw_sim_tier_size("P11"), -1);
    assert_int_equal(tw_sim_tier_size("X10"), -1);
    assert_int_equal(tw_sim_tier_size("P"), -1);
    assert_int_equal(tw_sim_tier_size("P10x"), -1);
    assert_true(tw_sim_sku_known("StandardSSD_ZRS"));
    assert_false(tw_sim_sku_known("Premium"));
}

static void test_fault_specs(void **state)
{
    (void)state;
    struct tw_sim_fault f;
    struct tw_error err = {0};
    assert_int_equal(
        tw_sim_fault_parse("kind=error,path=/metadata/instance,status=503,count=2", &f, &err),
        TW_OK);
    assert_int_equal(f.kind, TW_SIM_FAULT_ERROR);
    assert_string_equal(f.path, "/metadata/instance");
    assert_int_equal(f.status, 503);
    assert_int_equal(f.count, 2);
    assert_int_equal(f.skip, 0);
    assert_true(f.probability == 1.0);
    assert_int_equal(
        tw_sim_fault_parse("kind=throttle,retry_after=7,method=PATCH,skip=1", &f, &err), TW_OK);
    assert_int_equal(f.kind, TW_SIM_FAULT_THROTTLE);
    assert_int_equal(f.status, 429);
    assert_int_equal(f.retry_after_s, 7);
    assert_string_equal(f.method, "PATCH");
    assert_string_equal(f.path, "/");
    assert_int_equal(f.count, -1);
    assert_int_equal(tw_sim_fault_parse("kind=latency,ms=250,probability=0.5,seed=9", &f, &err),
                     TW_OK);
    assert_int_equal(f.ms, 250);
    assert_true(f.probability == 0.5);
    assert_int_equal(tw_sim_fault_parse("kind=truncate,bytes=10", &f, &err), TW_OK);
    assert_int_equal(f.bytes, 10);
    assert_int_equal(tw_sim_fault_parse("kind=no-next-link,path=/api/retail/prices", &f, &err),
                     TW_OK);
    assert_int_equal(tw_sim_fault_parse("kind=drop", &f, &err), TW_OK);
    assert_int_equal(f.kind, TW_SIM_FAULT_DROP);

    static const struct {
        const char *spec;
        const char *words;
    } bad[] = {
        {"kind=boom", "kind \"boom\" is not latency"},
        {"path=/x", "kind is missing"},
        {"kind=error,path=x", "path \"x\" must start with /"},
        {"kind=latency", "ms is missing: a latency fault needs it"},
        {"kind=error,count=0", "count must be -1 (always) or at least 1"},
        {"kind=throttle,status=500", "status of a throttle fault is 429"},
        {"kind=error,status=200", "status must be an integer from 400 to 599"},
        {"kind=error,kind=drop", "gives kind twice"},
        {"kind=error,oops", "\"oops\" is not key=value"},
        {"kind=error,probability=2", "probability must be a number above 0, at most 1"},
        {"kind=error,method=GOT", "method \"GOT\" is not GET"},
        {"kind=error,color=red", "color is not a known key"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tw_sim_fault_parse(bad[i].spec, &f, &err) == TW_OK)
            fail_msg("\"%s\" was accepted", bad[i].spec);
        if (!strstr(err.msg, bad[i].words) || !strstr(err.msg, "--fault"))
            fail_msg("\"%s\": message \"%s\" lacks \"%s\"", bad[i].spec, err.msg, bad[i].words);
    }
    /* Round trip through JSON (the admin API lists faults this way). */
    assert_int_equal(tw_sim_fault_parse("kind=error,path=/a,status=502,count=3", &f, &err), TW_OK);
    json_t *v = tw_sim_fault_to_value(&f);
    struct tw_sim_fault g;
    json_object_del(v, "matched");
    json_object_del(v, "fired");
    assert_int_equal(tw_sim_fault_from_value(v, "x", &g, &err), TW_OK);
    assert_int_equal(g.status, 502);
    assert_int_equal(g.count, 3);
    json_decref(v);
}

static void test_add_prices(void **state)
{
    (void)state;
    struct tw_sim_scenario *sc = parse_ok("{\"prices\": [{\"currencyCode\": \"USD\"}]}");
    struct tw_error err = {0};
    const char *arr =
        "[{\"currencyCode\": \"USD\", \"_source\": \"x\", \"meterName\": \"P10 LRS Disk\"}]";
    assert_int_equal(tw_sim_scenario_add_prices(sc, arr, strlen(arr), &err), TW_OK);
    const char *page = "{\"BillingCurrency\": \"GBP\", \"Items\": [{\"currencyCode\": \"GBP\"}, "
                       "{\"currencyCode\": \"GBP\"}], \"NextPageLink\": null, \"Count\": 2}";
    assert_int_equal(tw_sim_scenario_add_prices(sc, page, strlen(page), &err), TW_OK);
    const char *data = "{\"_about\": \"x\", \"items\": [{\"retailPrice\": 1.5}]}";
    assert_int_equal(tw_sim_scenario_add_prices(sc, data, strlen(data), &err), TW_OK);
    assert_int_equal(json_array_size(sc->prices), 5);
    assert_null(json_object_get(json_array_get(sc->prices, 1), "_source"));
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(sc->prices, 1), "meterName")),
        "P10 LRS Disk");
    /* A bad file adds nothing. */
    const char *bad = "[{\"currencyCode\": \"USD\"}, {\"currencyCode\": 7}]";
    assert_int_equal(tw_sim_scenario_add_prices(sc, bad, strlen(bad), &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "items[1].currencyCode must be a string"));
    assert_int_equal(tw_sim_scenario_add_prices(sc, "{}", 2, &err), TW_EPARSE);
    assert_int_equal(tw_sim_scenario_add_prices(sc, "[1]", 3, &err), TW_EPARSE);
    assert_int_equal(tw_sim_scenario_add_prices(sc, "nope", 4, &err), TW_EPARSE);
    assert_int_equal(json_array_size(sc->prices), 5);
    tw_sim_scenario_free(sc);
    tw_sim_scenario_free(NULL);
}

static void test_power_names(void **state)
{
    (void)state;
    enum tw_sim_power p;
    assert_int_equal(tw_sim_power_parse("Deallocated", &p), TW_OK);
    assert_int_equal(p, TW_SIM_POWER_DEALLOCATED);
    assert_string_equal(tw_sim_power_name(TW_SIM_POWER_STARTING), "starting");
    assert_int_equal(tw_sim_power_parse("hibernated", &p), TW_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example),
        cmocka_unit_test(test_demo),
        cmocka_unit_test(test_switches),
        cmocka_unit_test(test_minimal_defaults),
        cmocka_unit_test(test_new_fields),
        cmocka_unit_test(test_prices_filled),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tiers),
        cmocka_unit_test(test_fault_specs),
        cmocka_unit_test(test_add_prices),
        cmocka_unit_test(test_power_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

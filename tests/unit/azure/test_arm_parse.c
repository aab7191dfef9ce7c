/* test_arm_parse.c - the ARM answer parsers on the samples (real and
 * constructed, tests/fixtures/arm/), their refusals, the error classes,
 * operation bodies, Retry-After, the login answer and resource ids. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "azure/arm.h"

/* The JSON text at PATH ("a.b.0.c": members and array indexes) of fixture
 * REL, malloc'd. */
static char *sample(const char *rel, const char *path)
{
    size_t len;
    char *doc = th_fixture(rel, &len);
    json_t *root = json_loadb(doc, len, 0, NULL);
    free(doc);
    assert_non_null(root);
    const json_t *v = root;
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, ".")) {
        if (json_is_array(v))
            v = json_array_get(v, (size_t)atoi(tok));
        else
            v = json_object_get(v, tok);
        assert_non_null(v);
    }
    char *s = json_dumps(v, JSON_COMPACT);
    json_decref(root);
    assert_non_null(s);
    return s;
}

static void test_disk_samples(void **state)
{
    (void)state;
    struct tw_arm_disk d;
    struct tw_error err = {0};
    char *s = sample("arm/arm-disk-samples.json", "get_disk_spec.body");
    assert_int_equal(tw_arm_disk_parse(s, strlen(s), &d, &err), TW_OK);
    free(s);
    assert_string_equal(d.name, "myManagedDisk");
    assert_string_equal(d.sku, "Standard_LRS");
    assert_int_equal(d.size_gib, 10);
    assert_string_equal(d.location, "westus");
    assert_string_equal(d.provisioning_state, "Succeeded");
    assert_string_equal(d.last_ownership_update, "2016-12-28T04:41:35.079872+00:00");
    assert_string_equal(d.resource_group, "myResourceGroup");
    assert_string_equal(d.subscription_id, "{subscriptionId}");
    assert_true(strstr(d.managed_by, "/virtualMachines/TestVM414689371c88843d65ec") != NULL);
    assert_int_equal(d.n_tags, 2);
    assert_false(d.update_in_progress);
    assert_int_equal(d.bursting, -1);
    assert_int_equal(d.iops, 0);

    s = sample("arm/arm-disk-samples.json", "get_disk_attached_constructed.body");
    assert_int_equal(tw_arm_disk_parse(s, strlen(s), &d, &err), TW_OK);
    free(s);
    assert_string_equal(d.sku, "Premium_LRS");
    assert_string_equal(d.tier, "P10");
    assert_int_equal(d.size_gib, 128);
    assert_int_equal(d.iops, 500);
    assert_int_equal(d.mbps, 100);
    assert_string_equal(d.disk_state, "Attached");
    assert_string_equal(d.subscription_id, "00000000-1111-2222-3333-444444444444");
    assert_int_equal(d.n_tags, 0);

    /* The tier change's 202: in progress, with the target tier. */
    const char *upd = "{\"name\":\"myDisk\",\"sku\":{\"name\":\"Premium_LRS\"},"
                      "\"properties\":{\"provisioningState\":\"Updating\",\"tier\":\"P10\","
                      "\"propertyUpdatesInProgress\":{\"targetTier\":\"P30\"},"
                      "\"burstingEnabled\":true,\"maxShares\":2}}";
    assert_int_equal(tw_arm_disk_parse(upd, strlen(upd), &d, &err), TW_OK);
    assert_true(d.update_in_progress);
    assert_string_equal(d.target_tier, "P30");
    assert_int_equal(d.bursting, 1);
    assert_int_equal(d.max_shares, 2);
    assert_string_equal(d.id, "");

    s = sample("arm/arm-disk-samples.json", "patch_change_sku_constructed.responses.3.body");
    assert_int_equal(tw_arm_disk_parse(s, strlen(s), &d, &err), TW_OK);
    free(s);
    assert_string_equal(d.sku, "StandardSSD_LRS");
    assert_string_equal(d.disk_state, "Reserved");
    assert_string_equal(d.tier, "E10");
}

static void test_disk_refusals(void **state)
{
    (void)state;
    struct tw_arm_disk d;
    struct tw_error err = {0};
    static const struct {
        const char *doc, *says;
    } bad[] = {
        {"[1]", "a disk must be a JSON object"},
        {"{\"name\":\"d\",\"properties\":{}}", "sku is missing"},
        {"{\"name\":\"d\",\"sku\":{},\"properties\":{}}", "sku.name is missing"},
        {"{\"sku\":{\"name\":\"x\"},\"properties\":{}}", "name is missing"},
        {"{\"name\":\"d\",\"sku\":{\"name\":\"x\"},\"properties\":{\"diskSizeGB\":-1}}",
         "properties.diskSizeGB"},
        {"{\"name\":\"d\",\"sku\":{\"name\":\"x\"},\"properties\":{\"burstingEnabled\":1}}",
         "properties.burstingEnabled"},
        {"{\"name\":\"d\",\"id\":\"/subscriptions/s\",\"sku\":{\"name\":\"x\"},\"properties\":{}}",
         "not a disk's resource id"},
        {"{\"name\":\"d\",\"sku\":{\"name\":\"x\"},\"properties\":{},\"tags\":{\"a\":1}}",
         "tags.a"},
        {"{\"name\":", "not valid JSON"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(tw_arm_disk_parse(bad[i].doc, strlen(bad[i].doc), &d, &err), TW_EPARSE);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("%zu: \"%s\" does not say \"%s\"", i, err.msg, bad[i].says);
        assert_string_equal(d.name, "");
    }
}

static enum tw_err count_disk(void *arg, const struct tw_arm_disk *d)
{
    (void)d;
    ++*(int *)arg;
    return strcmp(d->name, "stop") == 0 ? TW_EINVAL : TW_OK;
}

static void test_disk_page(void **state)
{
    (void)state;
    char next[256];
    struct tw_error err = {0};
    int n = 0;
    const char *page = "{\"value\":[{\"name\":\"a\",\"sku\":{\"name\":\"Premium_LRS\"},"
                       "\"properties\":{}},{\"name\":\"b\",\"sku\":{\"name\":\"Standard_LRS\"},"
                       "\"properties\":{}}],\"nextLink\":\"http://127.0.0.1:1/next\"}";
    assert_int_equal(tw_arm_disk_page_parse(page, strlen(page), count_disk, &n, next,
                                            sizeof(next), &err),
                     TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(next, "http://127.0.0.1:1/next");
    /* The last page: null nextLink. */
    const char *last = "{\"value\":[],\"nextLink\":null}";
    assert_int_equal(tw_arm_disk_page_parse(last, strlen(last), count_disk, &n, next,
                                            sizeof(next), &err),
                     TW_OK);
    assert_string_equal(next, "");
    /* A bad item names its index; the callback's error stops. */
    const char *bad = "{\"value\":[{\"name\":\"a\",\"sku\":{\"name\":\"x\"},\"properties\":{}},"
                      "{\"name\":\"b\",\"properties\":{}}]}";
    n = 0;
    assert_int_equal(tw_arm_disk_page_parse(bad, strlen(bad), count_disk, &n, next,
                                            sizeof(next), &err),
                     TW_EPARSE);
    assert_non_null(strstr(err.msg, "value[1].sku is missing"));
    assert_int_equal(n, 1);
    const char *stop = "{\"value\":[{\"name\":\"stop\",\"sku\":{\"name\":\"x\"},\"properties\":{}},"
                       "{\"name\":\"b\",\"sku\":{\"name\":\"x\"},\"properties\":{}}]}";
    n = 0;
    assert_int_equal(tw_arm_disk_page_parse(stop, strlen(stop), count_disk, &n, next,
                                            sizeof(next), &err),
                     TW_EINVAL);
    assert_int_equal(n, 1);
    const char *nolist = "{\"values\":[]}";
    assert_int_equal(tw_arm_disk_page_parse(nolist, strlen(nolist), count_disk, &n, next,
                                            sizeof(next), &err),
                     TW_EPARSE);
    char small[8];
    assert_int_equal(tw_arm_disk_page_parse(page, strlen(page), count_disk, &n, small,
                                            sizeof(small), &err),
                     TW_EPARSE);
    assert_non_null(strstr(err.msg, "nextLink"));
}

#define VM_ID "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-a/providers/Microsoft.Compute/virtualMachines/vm1"

static const char vm_doc[] =
    "{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"location\":\"eastus\",\"tags\":{\"env\":\"prod\"},"
    "\"properties\":{\"provisioningState\":\"Succeeded\","
    "\"hardwareProfile\":{\"vmSize\":\"Standard_E4s_v5\"},"
    "\"storageProfile\":{\"osDisk\":{\"name\":\"vm1-os\",\"caching\":\"ReadWrite\","
    "\"managedDisk\":{\"id\":\"/subscriptions/00000000-1111-2222-3333-444444444444/"
    "resourceGroups/rg-a/providers/Microsoft.Compute/disks/vm1-os\"}},"
    "\"dataDisks\":[{\"lun\":0,\"name\":\"vm1-d0\",\"caching\":\"ReadOnly\",\"managedDisk\":"
    "{\"id\":\"/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/rg-a/"
    "providers/Microsoft.Compute/disks/vm1-d0\"}},{\"lun\":\"3\",\"name\":\"vm1-d3\","
    "\"caching\":\"None\",\"managedDisk\":{\"id\":\"/subscriptions/x/resourceGroups/rg-a/"
    "providers/Microsoft.Compute/disks/vm1-d3\"}}]},"
    "\"instanceView\":{\"statuses\":[{\"code\":\"ProvisioningState/succeeded\"},"
    "{\"code\":\"PowerState/deallocated\"},{\"code\":\"HibernationState/Hibernated\"}]}}}";

static void test_vm(void **state)
{
    (void)state;
    struct tw_arm_vm *vm = malloc(sizeof(*vm));
    struct tw_error err = {0};
    assert_int_equal(tw_arm_vm_parse(vm_doc, strlen(vm_doc), vm, &err), TW_OK);
    assert_string_equal(vm->vm.name, "vm1");
    assert_string_equal(vm->vm.resource_id, VM_ID);
    assert_string_equal(vm->vm.subscription_id, "00000000-1111-2222-3333-444444444444");
    assert_string_equal(vm->vm.resource_group, "rg-a");
    assert_string_equal(vm->vm.vm_size, "Standard_E4s_v5");
    assert_string_equal(vm->vm.location, "eastus");
    assert_int_equal(vm->vm.n_tags, 1);
    assert_string_equal(vm->power_state, "deallocated");
    assert_true(vm->hibernated);
    assert_string_equal(vm->provisioning_state, "Succeeded");
    assert_string_equal(vm->os_disk_name, "vm1-os");
    assert_string_equal(vm->os_disk_caching, "ReadWrite");
    assert_non_null(strstr(vm->os_disk_id, "/disks/vm1-os"));
    assert_int_equal(vm->n_data, 2);
    assert_int_equal(vm->data[0].lun, 0);
    assert_string_equal(vm->data[0].caching, "ReadOnly");
    assert_string_equal(vm->data[1].name, "vm1-d3");
    assert_int_equal(vm->data[1].lun, 3);
    assert_string_equal(vm->data[1].caching, "None");

    /* Without an instance view: no power state, not hibernated. */
    const char *bare = "{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"properties\":{}}";
    assert_int_equal(tw_arm_vm_parse(bare, strlen(bare), vm, &err), TW_OK);
    assert_string_equal(vm->power_state, "");
    assert_false(vm->hibernated);
    assert_int_equal(vm->n_data, 0);

    static const struct {
        const char *doc, *says;
    } bad[] = {
        {"{\"name\":\"vm1\"}", "id is missing"},
        {"{\"id\":\"/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/d\","
         "\"name\":\"x\",\"properties\":{\"storageProfile\":{\"dataDisks\":[{\"name\":\"a\"}]}}}",
         "dataDisks[0].lun is missing"},
        {"{\"id\":\"/x\",\"name\":\"vm1\"}", "not a VM's resource id"},
        {"{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"properties\":{\"instanceView\":"
         "{\"statuses\":[{\"code\":1}]}}}",
         "instanceView.statuses"},
        {"{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"properties\":{\"storageProfile\":"
         "{\"osDisk\":{\"managedDisk\":[]}}}}",
         "osDisk.managedDisk must be an object"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memset(&err, 0, sizeof(err));
        assert_int_equal(tw_arm_vm_parse(bad[i].doc, strlen(bad[i].doc), vm, &err), TW_EPARSE);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("%zu: \"%s\" does not say \"%s\"", i, err.msg, bad[i].says);
    }
    /* More data disks than a VM can have. */
    char *many = malloc(64 * 1024);
    int o = snprintf(many, 64 * 1024,
                     "{\"id\":\"" VM_ID "\",\"name\":\"v\",\"properties\":{\"storageProfile\":"
                     "{\"dataDisks\":[");
    for (int i = 0; i < 65; i++)
        o += snprintf(many + o, (size_t)(64 * 1024 - o), "%s{\"lun\":%d}", i ? "," : "", i % 64);
    snprintf(many + o, (size_t)(64 * 1024 - o), "]}}}");
    assert_int_equal(tw_arm_vm_parse(many, strlen(many), vm, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "more than 64"));
    free(many);
    free(vm);
}

static enum tw_err count_vm(void *arg, const struct tw_arm_vm *vm)
{
    (void)vm;
    ++*(int *)arg;
    return TW_OK;
}

static void test_vm_page(void **state)
{
    (void)state;
    char next[128];
    struct tw_error err = {0};
    char *page = malloc(8192);
    snprintf(page, 8192, "{\"value\":[%s,%s],\"nextLink\":\"http://127.0.0.1:9/p2\"}", vm_doc,
             vm_doc);
    int n = 0;
    assert_int_equal(
        tw_arm_vm_page_parse(page, strlen(page), count_vm, &n, next, sizeof(next), &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(next, "http://127.0.0.1:9/p2");
    snprintf(page, 8192, "{\"value\":[%s,{\"name\":\"x\"}]}", vm_doc);
    assert_int_equal(
        tw_arm_vm_page_parse(page, strlen(page), count_vm, &n, next, sizeof(next), &err),
        TW_EPARSE);
    assert_non_null(strstr(err.msg, "value[1].id is missing"));
    free(page);
}

static void test_instance_view(void **state)
{
    (void)state;
    char power[32], prov[32];
    bool hib = true;
    struct tw_error err = {0};
    char *s = sample("arm/arm-vm-instanceview-samples.json", "running_spec");
    assert_int_equal(tw_arm_instance_view_parse2(s, strlen(s), power, sizeof(power), &hib, prov,
                                                 sizeof(prov), &err),
                     TW_OK);
    free(s);
    assert_string_equal(power, "running");
    assert_string_equal(prov, "succeeded");
    assert_false(hib);
    s = sample("arm/arm-vm-instanceview-samples.json", "deallocated_constructed");
    assert_int_equal(tw_arm_instance_view_parse(s, strlen(s), power, sizeof(power), &err), TW_OK);
    free(s);
    assert_string_equal(power, "deallocated");
    /* Each documented status object. */
    static const char *const want[] = {"starting",     "running",     "stopping",
                                       "stopped",      "deallocating", "deallocated"};
    for (int i = 0; i < 6; i++) {
        char path[64];
        snprintf(path, sizeof(path), "power_state_status_objects_doc.%d", i);
        char *st = sample("arm/arm-vm-instanceview-samples.json", path);
        char doc[256];
        snprintf(doc, sizeof(doc), "{\"statuses\":[%s]}", st);
        free(st);
        assert_int_equal(tw_arm_instance_view_parse(doc, strlen(doc), power, sizeof(power), &err),
                         TW_OK);
        assert_string_equal(power, want[i]);
    }
    const char *hibdoc = "{\"statuses\":[{\"code\":\"PowerState/stopped\"},"
                         "{\"code\":\"HibernationState/Hibernated\"}]}";
    assert_int_equal(tw_arm_instance_view_parse2(hibdoc, strlen(hibdoc), power, sizeof(power),
                                                 &hib, NULL, 0, &err),
                     TW_OK);
    assert_true(hib);
    const char *none = "{\"statuses\":[{\"code\":\"ProvisioningState/updating\"}]}";
    assert_int_equal(tw_arm_instance_view_parse(none, strlen(none), power, sizeof(power), &err),
                     TW_OK);
    assert_string_equal(power, "");
    const char *bad = "{\"statuses\":{}}";
    assert_int_equal(tw_arm_instance_view_parse(bad, strlen(bad), power, sizeof(power), &err),
                     TW_EPARSE);
    char tiny[4];
    const char *longer = "{\"statuses\":[{\"code\":\"PowerState/deallocated\"}]}";
    assert_int_equal(tw_arm_instance_view_parse(longer, strlen(longer), tiny, sizeof(tiny), &err),
                     TW_EPARSE);
    assert_string_equal(tiny, "");
}

/* The error samples, each to its class. */
static void test_error_samples(void **state)
{
    (void)state;
    static const struct {
        const char *label;
        enum tw_arm_fault fault;
        const char *code, *detail;
    } want[] = {
        {"compute_throttled_429", TW_ARM_FAULT_THROTTLED, "OperationNotAllowed", "TooManyRequests"},
        {"compute_throttled_429_wrapped_constructed", TW_ARM_FAULT_THROTTLED,
         "OperationNotAllowed", "TooManyRequests"},
        {"disk_resize_while_running_409", TW_ARM_FAULT_CONFLICT, "Conflict", ""},
        {"sku_change_via_vm_resource_409", TW_ARM_FAULT_NOT_ALLOWED, "OperationNotAllowed", ""},
        {"sku_change_on_disk_attached_to_running_vm_CONSTRUCTED", TW_ARM_FAULT_CONFLICT,
         "OperationNotAllowed", ""},
        {"retryable_network_429_doc", TW_ARM_FAULT_BUSY, "RetryableErrorDueToAnotherOperation", ""},
    };
    size_t len;
    char *doc = th_fixture("arm/arm-errors-samples.json", &len);
    json_t *all = json_loadb(doc, len, 0, NULL);
    free(doc);
    assert_true(json_is_array(all));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        size_t k;
        json_t *e;
        bool found = false;
        json_array_foreach(all, k, e)
        {
            if (strcmp(json_string_value(json_object_get(e, "label")), want[i].label) != 0)
                continue;
            found = true;
            char *body = json_dumps(json_object_get(e, "body"), JSON_COMPACT);
            struct tw_arm_error out;
            long status = (long)json_integer_value(json_object_get(e, "status"));
            tw_arm_error_classify(status, body, strlen(body), &out);
            free(body);
            if (out.fault != want[i].fault)
                fail_msg("%s: %s, not %s", want[i].label, tw_arm_fault_name(out.fault),
                         tw_arm_fault_name(want[i].fault));
            assert_string_equal(out.code, want[i].code);
            assert_string_equal(out.detail_code, want[i].detail);
            assert_int_equal(out.status, status);
            assert_true(out.message[0] != '\0');
        }
        assert_true(found);
    }
    json_decref(all);

    /* Constructed refusals of the simulator's texts and by status alone. */
    static const struct {
        long status;
        const char *body;
        enum tw_arm_fault fault;
    } more[] = {
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
         "\"The type of disk 'd' has been changed 2 times in the last 24 hours; a disk's type can "
         "be changed at most 2 times per day.\"}}",
         TW_ARM_FAULT_NOT_ALLOWED},
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
         "\"Changing the type of disk 'd' from UltraSSD_LRS to Premium_LRS is not supported: "
         "Ultra Disks and Premium SSD v2 can't be converted; migrate through a snapshot.\"}}",
         TW_ARM_FAULT_TYPE_REFUSED},
        {400,
         "{\"error\":{\"code\":\"InvalidParameter\",\"target\":\"sku.name\",\"message\":"
         "\"The value 'Gold_LRS' of parameter 'sku.name' is not valid.\"}}",
         TW_ARM_FAULT_TYPE_REFUSED},
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"Disk d is being used by "
         "another operation.\"}}",
         TW_ARM_FAULT_BUSY},
        {429, "", TW_ARM_FAULT_THROTTLED},
        {409, "not json", TW_ARM_FAULT_CONFLICT},
        {404, "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"gone\"}}",
         TW_ARM_FAULT_NOT_FOUND},
        {403, "{\"error\":{\"code\":\"AuthorizationFailed\",\"message\":\"no\"}}",
         TW_ARM_FAULT_AUTH},
        {401, NULL, TW_ARM_FAULT_AUTH},
        {503, "{}", TW_ARM_FAULT_SERVER},
        {0, NULL, TW_ARM_FAULT_NETWORK},
        {200, "{}", TW_ARM_FAULT_NONE},
        {400, "{\"error\":{\"code\":\"MissingApiVersionParameter\"}}", TW_ARM_FAULT_OTHER},
        /* The quota refusal of disks whose names hold "running" or
         * "deallocate" is still the quota, not a conflict... */
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
         "\"The type of disk 'sap-running-data0' has been changed 2 times in the last 24 hours; "
         "a disk's type can be changed at most 2 times per day. Try again after "
         "2026-12-05T20:15:00Z.\"}}",
         TW_ARM_FAULT_NOT_ALLOWED},
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
         "\"The type of disk 'deallocate-test' has been changed 2 times in the last 24 hours; a "
         "disk's type can be changed at most 2 times per day.\"}}",
         TW_ARM_FAULT_NOT_ALLOWED},
        /* ...the quota's wording first even when the VM's state is named... */
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"You can only change disk "
         "type twice per day; deallocate the VM later.\"}}",
         TW_ARM_FAULT_NOT_ALLOWED},
        /* ...and a name alone makes no conflict... */
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"Operation on disk "
         "'running-deallocate-01' is not allowed.\"}}",
         TW_ARM_FAULT_NOT_ALLOWED},
        /* ...while the running VM's refusal still is one, even of a VM
         * called 'running'. */
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
         "\"Cannot change the SKU of disk 'running-d' while it is attached to running VM "
         "'running'. Deallocate the VM or detach the disk and try again.\"}}",
         TW_ARM_FAULT_CONFLICT},
        {409,
         "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"Disk x cannot be "
         "changed\",\"details\":[{\"code\":\"VMRunning\"}]}}",
         TW_ARM_FAULT_CONFLICT},
    };
    for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
        struct tw_arm_error out;
        tw_arm_error_classify(more[i].status, more[i].body,
                              more[i].body ? strlen(more[i].body) : 0, &out);
        if (out.fault != more[i].fault)
            fail_msg("%zu: %s, not %s", i, tw_arm_fault_name(out.fault),
                     tw_arm_fault_name(more[i].fault));
    }
    assert_string_equal(tw_arm_fault_name(TW_ARM_FAULT_THROTTLED), "throttled");
    assert_string_equal(tw_arm_fault_name(TW_ARM_FAULT_BUSY), "busy");
}

static void test_op_status(void **state)
{
    (void)state;
    char st[32];
    struct tw_arm_error fail;
    struct tw_error err = {0};
    char *s = sample("arm/arm-disk-samples.json", "patch_change_sku_constructed.responses.1.body");
    assert_int_equal(tw_arm_op_status_parse(s, strlen(s), st, sizeof(st), &fail, &err), TW_OK);
    free(s);
    assert_string_equal(st, "InProgress");
    assert_string_equal(fail.code, "");
    s = sample("arm/arm-disk-samples.json", "patch_change_sku_constructed.responses.2.body");
    assert_int_equal(tw_arm_op_status_parse(s, strlen(s), st, sizeof(st), &fail, &err), TW_OK);
    free(s);
    assert_string_equal(st, "Succeeded");
    s = sample("arm/arm-errors-samples.json", "6.body");
    assert_int_equal(tw_arm_op_status_parse(s, strlen(s), st, sizeof(st), &fail, &err), TW_OK);
    free(s);
    assert_string_equal(st, "Failed");
    assert_string_equal(fail.code, "OperationNotAllowed");
    assert_string_equal(fail.message, "constructed example message");
    assert_int_equal(fail.fault, TW_ARM_FAULT_NOT_ALLOWED);
    const char *canceled = "{\"status\":\"Canceled\"}";
    assert_int_equal(
        tw_arm_op_status_parse(canceled, strlen(canceled), st, sizeof(st), &fail, &err), TW_OK);
    assert_string_equal(fail.code, "Canceled");
    const char *bad[] = {"{}", "{\"status\":3}", "{\"status\":\"\"}", "[]", "{"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(
            tw_arm_op_status_parse(bad[i], strlen(bad[i]), st, sizeof(st), &fail, &err),
            TW_EPARSE);
        assert_string_equal(st, "");
    }
}

static void test_retry_after(void **state)
{
    (void)state;
    long ms;
    /* 1994-11-06 08:49:37 UTC is 784111777. */
    const int64_t at = 784111777;
    assert_true(tw_arm_retry_after_parse("10", 0, &ms));
    assert_int_equal(ms, 10000);
    assert_true(tw_arm_retry_after_parse(" 0 ", 0, &ms));
    assert_int_equal(ms, 0);
    assert_true(tw_arm_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", at - 30, &ms));
    assert_int_equal(ms, 30000);
    assert_true(tw_arm_retry_after_parse("Sunday, 06-Nov-94 08:49:37 GMT", at - 5, &ms));
    assert_int_equal(ms, 5000);
    assert_true(tw_arm_retry_after_parse("Sun Nov  6 08:49:37 1994", at - 1, &ms));
    assert_int_equal(ms, 1000);
    /* A date passed: go now. */
    assert_true(tw_arm_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", at + 100, &ms));
    assert_int_equal(ms, 0);
    /* A day at most. */
    assert_true(tw_arm_retry_after_parse("99999999999999999", 0, &ms));
    assert_int_equal(ms, 86400000L);
    static const char *const bad[] = {"",
                                      "-1",
                                      "1.5",
                                      "10s",
                                      "Sun, 06 Nov 1994 08:49:37 UTC",
                                      "Sun, 31 Feb 1994 08:49:37 GMT",
                                      "Sun, 06 Nov 1994 25:49:37 GMT",
                                      "Foo, 06 Nov 1994 08:49:37 GMT",
                                      "soon"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tw_arm_retry_after_parse(bad[i], at, &ms))
            fail_msg("\"%s\" was read as %ld ms", bad[i], ms);
        assert_int_equal(ms, 0);
    }
    assert_false(tw_arm_retry_after_parse(NULL, at, &ms));
}

static void test_login(void **state)
{
    (void)state;
    char tok[64];
    int64_t life;
    struct tw_error err = {0};
    const char *ok = "{\"token_type\":\"Bearer\",\"expires_in\":3599,\"ext_expires_in\":3599,"
                     "\"access_token\":\"eyJ0eXAi.abc.def\"}";
    assert_int_equal(tw_arm_login_parse(ok, strlen(ok), tok, sizeof(tok), &life, &err), TW_OK);
    assert_string_equal(tok, "eyJ0eXAi.abc.def");
    assert_int_equal(life, 3599);
    const char *str = "{\"expires_in\":\"600\",\"access_token\":\"t\"}";
    assert_int_equal(tw_arm_login_parse(str, strlen(str), tok, sizeof(tok), &life, &err), TW_OK);
    assert_int_equal(life, 600);
    const char *refused =
        "{\"error\":\"invalid_client\",\"error_description\":\"AADSTS7000215: Invalid client "
        "secret provided.\\r\\nTrace ID: 1\\r\\nCorrelation ID: 2\",\"error_codes\":[7000215]}";
    assert_int_equal(
        tw_arm_login_parse(refused, strlen(refused), tok, sizeof(tok), &life, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "invalid_client: AADSTS7000215: Invalid client secret"));
    assert_null(strstr(err.msg, "Trace ID"));
    assert_string_equal(tok, "");
    static const char *const bad[] = {
        "{\"access_token\":\"t\"}",                             /* no lifetime */
        "{\"expires_in\":1,\"access_token\":\"\"}",             /* empty */
        "{\"expires_in\":1,\"access_token\":\"a b\"}",          /* a space */
        "{\"expires_in\":1,\"access_token\":\"a\\r\\nX: y\"}",  /* a header */
        "{\"expires_in\":1,\"access_token\":\"t\",\"token_type\":\"mac\"}",
        "{\"expires_in\":-5,\"access_token\":\"t\"}",
        "[]",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (tw_arm_login_parse(bad[i], strlen(bad[i]), tok, sizeof(tok), &life, &err) !=
            TW_EPARSE)
            fail_msg("%zu: %s was taken", i, bad[i]);
        assert_string_equal(tok, "");
    }
    /* Longer than the caller's room. */
    char tiny[4];
    assert_int_equal(tw_arm_login_parse(ok, strlen(ok), tiny, sizeof(tiny), &life, &err),
                     TW_EPARSE);
}

static void test_ids(void **state)
{
    (void)state;
    char s[64], g[64], n[64];
    assert_true(tw_arm_id_split(VM_ID, s, sizeof(s), g, sizeof(g), n, sizeof(n)));
    assert_string_equal(s, "00000000-1111-2222-3333-444444444444");
    assert_string_equal(g, "rg-a");
    assert_string_equal(n, "vm1");
    assert_true(tw_arm_id_split("/SUBSCRIPTIONS/a/resourcegroups/B/providers/microsoft.compute/"
                                "DISKS/d1",
                                s, sizeof(s), g, sizeof(g), n, sizeof(n)));
    assert_string_equal(g, "B");
    assert_string_equal(n, "d1");
    static const char *const bad[] = {
        "",
        "subscriptions/a/resourceGroups/b/providers/Microsoft.Compute/disks/d",
        "/subscriptions/a/resourceGroups/b/providers/Microsoft.Compute/disks/",
        "/subscriptions/a/resourceGroups/b/providers/Microsoft.Compute/disks/d/x",
        "/subscriptions/a/resourceGroups/b/providers/Microsoft.Network/disks/d",
        "/subscriptions/a/resourceGroups/b/providers/Microsoft.Compute/snapshots/d",
        "/subscriptions//resourceGroups/b/providers/Microsoft.Compute/disks/d",
        "/subscriptions/a/resourceGroups/b/providers/Microsoft.Compute/disks/d?x=1",
        "/subscriptions/a/resourceGroups/b c/providers/Microsoft.Compute/disks/d",
        /* Dot segments the URL would resolve away, a backslash, a query's '&'. */
        "/subscriptions/S/resourceGroups/../providers/Microsoft.Compute/disks/d",
        "/subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/disks/..",
        "/subscriptions/../resourceGroups/G/providers/Microsoft.Compute/virtualMachines/.",
        "/subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/disks/a\\b",
        "/subscriptions/S/resourceGroups/G/providers/Microsoft.Compute/disks/d&api-version=1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (tw_arm_id_split(bad[i], s, sizeof(s), g, sizeof(g), n, sizeof(n)))
            fail_msg("%s was split", bad[i]);
    assert_false(tw_arm_id_split(VM_ID, s, 4, g, sizeof(g), n, sizeof(n)));
    assert_true(tw_arm_id_equal(VM_ID, "/SUBSCRIPTIONS/00000000-1111-2222-3333-444444444444/"
                                       "resourcegroups/RG-A/providers/microsoft.compute/"
                                       "virtualmachines/VM1/"));
    assert_false(tw_arm_id_equal(VM_ID, VM_ID "2"));
    assert_false(tw_arm_id_equal(NULL, VM_ID));
}

static void test_same_origin(void **state)
{
    (void)state;
    const char *base = "https://management.azure.com";
    assert_true(tw_arm_url_same_origin("https://management.azure.com/subscriptions/s?x=1", base));
    assert_true(tw_arm_url_same_origin("https://management.azure.com:443/subscriptions/s", base));
    assert_true(tw_arm_url_same_origin("HTTPS://Management.Azure.com/x", base));
    assert_true(tw_arm_url_same_origin("https://management.azure.com?x", base));
    assert_true(tw_arm_url_same_origin("http://127.0.0.1:8080/a", "http://127.0.0.1:8080"));
    assert_true(tw_arm_url_same_origin("http://127.0.0.1/a", "http://127.0.0.1:80"));
    assert_true(tw_arm_url_same_origin("http://[::1]:9/a", "http://[::1]:9"));
    static const char *const bad[] = {
        "https://management.azure.com.evil.example/x",
        "https://management.azure.com:444/x",
        "http://management.azure.com/x",
        "https://evil.example/https://management.azure.com/x",
        "https://user@management.azure.com/x",
        "https://management.azure.com:0/x",
        "https://management.azure.com:x/x",
        "https://management.azure.com",
        "management.azure.com/x",
        "ftp://management.azure.com/x",
        "",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (tw_arm_url_same_origin(bad[i], base))
            fail_msg("%s was taken for %s", bad[i], base);
    assert_false(tw_arm_url_same_origin("http://127.0.0.1:8081/a", "http://127.0.0.1:8080"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_samples),  cmocka_unit_test(test_disk_refusals),
        cmocka_unit_test(test_disk_page),     cmocka_unit_test(test_vm),
        cmocka_unit_test(test_vm_page),       cmocka_unit_test(test_instance_view),
        cmocka_unit_test(test_error_samples), cmocka_unit_test(test_op_status),
        cmocka_unit_test(test_retry_after),   cmocka_unit_test(test_login),
        cmocka_unit_test(test_ids),           cmocka_unit_test(test_same_origin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

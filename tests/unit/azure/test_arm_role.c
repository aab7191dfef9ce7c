/* test_arm_role.c - deploy/azure-role.json grants exactly what the ARM
 * clients call: every call of azure/arm.h (and the Resource SKUs of
 * azure/skus.h) is made against a loopback fake, each request is turned
 * into the RBAC action it needs (from its method and path, the way ARM
 * names them), and the set must equal the role's Actions, no more (least
 * privilege) and no less (a call the role forgot fails on Azure). */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "azure/arm.h"
#include "azure/skus.h"
#include "fakesrv.h"

/* A reply with more headers: fakesrv's own replies carry none but
 * Retry-After, so these go through fs_script_headers. */
struct reply {
    unsigned status;
    const char *body, *retry_after;
    long delay_ms;
    const char *headers;
};

static void arm_script(struct fakesrv *s, const struct reply *r)
{
    struct fs_reply f[FS_MAX_REPLIES + 1];
    const char *h[FS_MAX_REPLIES];
    size_t n = 0;
    for (; n < FS_MAX_REPLIES && r[n].status; n++) {
        f[n] = (struct fs_reply){r[n].status, r[n].body, r[n].retry_after, r[n].delay_ms};
        h[n] = r[n].headers;
    }
    f[n] = (struct fs_reply){0, NULL, NULL, 0};
    fs_script_headers(s, f, h);
}

static struct fakesrv *start(const struct reply *r)
{
    struct fs_reply none[] = {{200, "{}", NULL, 0}, {0, NULL, NULL, 0}};
    struct fakesrv *s = fs_start(none);
    if (s)
        arm_script(s, r);
    return s;
}

#define SUB "00000000-1111-2222-3333-444444444444"
#define RG "/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute"
#define DISK_ID RG "/disks/d1"
#define VM_ID RG "/virtualMachines/vm1"
#define DISK_JSON                                                                                  \
    "{\"id\":\"" DISK_ID "\",\"name\":\"d1\",\"sku\":{\"name\":\"Premium_LRS\"},"                  \
    "\"properties\":{\"provisioningState\":\"Succeeded\"}}"
#define VM_JSON "{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"properties\":{}}"

struct actions {
    size_t n;
    char a[32][128];
};

static void add(struct actions *s, const char *a)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcasecmp(s->a[i], a) == 0)
            return;
    assert_true(s->n < 32);
    snprintf(s->a[s->n++], sizeof(s->a[0]), "%s", a);
}

/*
 * The RBAC action of METHOD on PATH: the provider, then the resource
 * types (every other segment after it, names skipped), then "read" for a
 * GET, "write" for a PATCH or PUT, and for a POST its last segment with
 * "action" ("virtualMachines/{vm}/deallocate" ->
 * "virtualMachines/deallocate/action").
 */
static void action_of(const char *method, const char *path, char *out, size_t cap)
{
    const char *p = strcasestr(path, "/providers/Microsoft.Compute/");
    assert_non_null(p);
    p += strlen("/providers/");
    char segs[8][128];
    int n = 0;
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", p);
    for (char *t = strtok(buf, "/"); t && n < 8; t = strtok(NULL, "/"))
        snprintf(segs[n++], sizeof(segs[0]), "%s", t);
    /* segs[0] "Microsoft.Compute", then type, name, type, name, ... */
    snprintf(out, cap, "%s", segs[0]);
    for (int i = 1; i < n; i += 2)
        snprintf(out + strlen(out), cap - strlen(out), "/%s", segs[i]);
    if (strcmp(method, "GET") == 0)
        snprintf(out + strlen(out), cap - strlen(out), "/read");
    else if (strcmp(method, "PATCH") == 0 || strcmp(method, "PUT") == 0)
        snprintf(out + strlen(out), cap - strlen(out), "/write");
    else if (strcmp(method, "POST") == 0)
        snprintf(out + strlen(out), cap - strlen(out), "/action");
    else
        fail_msg("%s %s: no action for this method", method, path);
}

static void seen(struct actions *s, struct fakesrv *f)
{
    char a[256];
    action_of(f->method, f->path, a, sizeof(a));
    add(s, a);
}

static void test_role_is_the_calls(void **state)
{
    (void)state;
    struct reply none[] = {{200, "{}", NULL, 0, NULL}, {0}};
    struct fakesrv *f = start(none);
    assert_non_null(f);
    struct tw_error err = {0};
    struct tw_arm_cred *cred;
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_BEARER, .bearer = "t"};
    assert_int_equal(tw_arm_cred_new(&co, NULL, &cred, &err), TW_OK);
    struct tw_arm_opts o = {.arm_url = f->base};
    tw_az_http_opts_default(&o.http);
    o.http.loopback_only = true;
    o.http.max_attempts = 1;
    struct tw_arm *a;
    assert_int_equal(tw_arm_new(&o, cred, NULL, &a, &err), TW_OK);
    struct actions got = {0};
    struct tw_arm_disk d;
    struct tw_arm_vm *vm = malloc(sizeof(*vm));
    struct tw_arm_op op;
    bool done, ok;
    char power[32];

    struct reply disks[] = {{200, "{\"value\":[" DISK_JSON "]}", NULL, 0, NULL}, {0}};
    arm_script(f, disks);
    assert_int_equal(tw_arm_disks_list(a, SUB, NULL, NULL, NULL, &err), TW_OK);
    seen(&got, f);
    arm_script(f, disks);
    assert_int_equal(tw_arm_disks_list(a, SUB, "rg-a", NULL, NULL, &err), TW_OK);
    seen(&got, f);
    struct reply disk[] = {{200, DISK_JSON, NULL, 0, NULL}, {0}};
    arm_script(f, disk);
    assert_int_equal(tw_arm_disk_get(a, DISK_ID, &d, &err), TW_OK);
    seen(&got, f);
    arm_script(f, disk);
    assert_int_equal(tw_arm_disk_verify(a, DISK_ID, "Premium_LRS", &ok, NULL, &err), TW_OK);
    seen(&got, f);

    char async[512];
    snprintf(async, sizeof(async),
             "Azure-AsyncOperation: %s/subscriptions/" SUB
             "/providers/Microsoft.Compute/locations/eastus/DiskOperations/op1?api-version=x",
             f->base);
    struct reply patch[] = {{202, "", NULL, 0, async},
                               {200, "{\"status\":\"Succeeded\"}", NULL, 0, NULL},
                               {0}};
    arm_script(f, patch);
    assert_int_equal(tw_arm_disk_set_sku(a, DISK_ID, "Standard_LRS", &op, &err), TW_OK);
    seen(&got, f);
    assert_int_equal(tw_arm_op_poll(a, &op, &done, &err), TW_OK);
    seen(&got, f);

    /* A VM list with instance views, then one without (each VM's view). */
    struct reply vms[] = {
        {200, "{\"value\":[{\"id\":\"" VM_ID "\",\"name\":\"vm1\",\"properties\":{\"instanceView\""
              ":{\"statuses\":[{\"code\":\"PowerState/running\"}]}}}]}",
         NULL, 0, NULL},
        {0}};
    arm_script(f, vms);
    assert_int_equal(tw_arm_vms_list(a, SUB, NULL, NULL, NULL, &err), TW_OK);
    seen(&got, f);
    struct reply vm_get[] = {{200, VM_JSON, NULL, 0, NULL}, {0}};
    arm_script(f, vm_get);
    assert_int_equal(tw_arm_vm_get(a, VM_ID, vm, &err), TW_OK);
    seen(&got, f);
    struct reply iv[] = {{200, "{\"statuses\":[]}", NULL, 0, NULL}, {0}};
    arm_script(f, iv);
    assert_int_equal(tw_arm_vm_power(a, VM_ID, power, sizeof(power), &err), TW_OK);
    seen(&got, f);

    snprintf(async, sizeof(async),
             "Azure-AsyncOperation: %s/subscriptions/" SUB
             "/providers/Microsoft.Compute/locations/eastus/operations/op2?api-version=x",
             f->base);
    struct reply post[] = {{202, "", NULL, 0, async},
                              {200, "{\"status\":\"Succeeded\"}", NULL, 0, NULL},
                              {0}};
    arm_script(f, post);
    assert_int_equal(tw_arm_vm_deallocate(a, VM_ID, &op, &err), TW_OK);
    seen(&got, f);
    assert_int_equal(tw_arm_op_poll(a, &op, &done, &err), TW_OK);
    seen(&got, f);
    arm_script(f, post);
    assert_int_equal(tw_arm_vm_start(a, VM_ID, &op, &err), TW_OK);
    seen(&got, f);

    /* The VM sizes' Resource SKUs (azure/skus.h). */
    struct reply skus[] = {{200, "{\"value\":[]}", NULL, 0, NULL}, {0}};
    arm_script(f, skus);
    struct tw_vmcap_table t = {0};
    assert_int_equal(tw_az_skus_fetch(&o.http, f->base, SUB, "eastus", "t", NULL, &t, &err),
                     TW_OK);
    tw_vmcap_table_cleanup(&t);
    seen(&got, f);

    free(vm);
    tw_arm_free(a);
    tw_arm_cred_free(cred);
    fs_stop(f);

    /* The role. */
    char path[1024];
    snprintf(path, sizeof(path), "%s/../../deploy/azure-role.json", TW_FIXTURES);
    json_error_t je;
    json_t *role = json_load_file(path, 0, &je);
    if (!role)
        fail_msg("%s: %s", path, je.text);
    const json_t *acts = json_object_get(role, "Actions");
    assert_true(json_is_array(acts));
    struct actions granted = {0};
    size_t i;
    const json_t *v;
    json_array_foreach(acts, i, v)
    {
        assert_true(json_is_string(v));
        assert_null(strchr(json_string_value(v), '*')); /* no wildcards */
        add(&granted, json_string_value(v));
    }
    assert_int_equal(granted.n, json_array_size(acts)); /* no duplicates */
    for (i = 0; i < got.n; i++) {
        bool in = false;
        for (size_t k = 0; k < granted.n; k++)
            in = in || strcasecmp(got.a[i], granted.a[k]) == 0;
        if (!in)
            fail_msg("the client calls %s, which the role does not grant", got.a[i]);
    }
    for (i = 0; i < granted.n; i++) {
        bool in = false;
        for (size_t k = 0; k < got.n; k++)
            in = in || strcasecmp(got.a[k], granted.a[i]) == 0;
        if (!in)
            fail_msg("the role grants %s, which no call needs", granted.a[i]);
    }
    assert_int_equal(got.n, 9);
    const char *none_keys[] = {"NotActions", "DataActions", "NotDataActions"};
    for (int k = 0; k < 3; k++)
        assert_int_equal(json_array_size(json_object_get(role, none_keys[k])), 0);
    const json_t *scopes = json_object_get(role, "AssignableScopes");
    assert_int_equal(json_array_size(scopes), 1);
    assert_non_null(strstr(json_string_value(json_array_get(scopes, 0)), "/subscriptions/"));
    assert_true(json_is_true(json_object_get(role, "IsCustom")));
    json_decref(role);
}

int main(void)
{
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_role_is_the_calls)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_arm.c - the ARM client against loopback servers (fakesrv.h): paging
 * and its refusals, VM lists with and without instance views, long-running
 * operations through Azure-AsyncOperation and Location, Retry-After as a
 * date, 429/5xx storms retried and given up, the pacer (injected clock and
 * sleeps: N calls cost the expected waits, a token per attempt, the per-VM
 * budget), the token cache, client credentials, and the secret kept out of
 * every message. */
#include "testhelp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "azure/arm.h"
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
#define DISK_ID "/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/disks/d1"
#define VM_ID                                                                                      \
    "/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/virtualMachines/vm1"
#define VM2_ID                                                                                     \
    "/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/virtualMachines/vm2"

#define DISK_JSON(name, sku, prov)                                                                 \
    "{\"id\":\"/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/disks/" name \
    "\",\"name\":\"" name "\",\"location\":\"eastus\",\"sku\":{\"name\":\"" sku "\"},"             \
    "\"properties\":{\"diskSizeGB\":128,\"provisioningState\":\"" prov "\","                       \
    "\"diskState\":\"Reserved\"}}"

#define DISK_JSON_AT(name, sku, loc)                                                               \
    "{\"id\":\"/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/disks/" name \
    "\",\"name\":\"" name "\",\"location\":\"" loc "\",\"sku\":{\"name\":\"" sku "\"},"     \
    "\"properties\":{\"diskSizeGB\":128,\"provisioningState\":\"Succeeded\","                   \
    "\"diskState\":\"Reserved\"}}"

/* An injected clock that the injected sleep moves. */
struct vclock {
    int64_t now;
    struct fs_sleeps z;
    long total;
};

/* test_hold: a take of another thread, made while the client sleeps. */
struct hold_probe {
    struct tw_arm_pacer *p;
    const char *region;
    long seen;
};
static struct vclock *probe_clock;
static struct hold_probe *probe_at;

static void v_sleep(long ms, void *arg)
{
    struct vclock *c = arg;
    if (probe_at && c == probe_clock && !probe_at->seen)
        probe_at->seen = tw_arm_pacer_take(probe_at->p, probe_at->region, false, NULL);
    c->now += ms;
    c->total += ms;
    fs_sleep(ms, &c->z);
}

static int64_t v_now(void *arg)
{
    return ((struct vclock *)arg)->now;
}

static void http_opts(struct tw_az_http_opts *h, struct vclock *c)
{
    tw_az_http_opts_default(h);
    h->loopback_only = true;
    h->connect_timeout_ms = 2000;
    h->attempt_timeout_ms = 5000;
    h->budget_ms = 20000;
    h->backoff_base_ms = 10;
    h->backoff_max_ms = 100;
    h->sleep_ms = v_sleep;
    h->sleep_arg = c;
}

struct rig {
    struct fakesrv *arm;
    struct tw_arm_cred *cred;
    struct tw_arm_pacer *pacer;
    struct tw_arm *a;
    struct vclock clock;
};

/* A client of a fake ARM with a fixed token and PACE (NULL: no pacer). */
static void rig_up(struct rig *r, const struct reply *script, const struct tw_arm_pace_opts *pace,
                   const char *region)
{
    memset(r, 0, sizeof(*r));
    r->arm = start(script);
    assert_non_null(r->arm);
    struct tw_error err = {0};
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_BEARER, .bearer = "tok-fixed"};
    assert_int_equal(tw_arm_cred_new(&co, NULL, &r->cred, &err), TW_OK);
    if (pace) {
        struct tw_arm_pace_opts p = *pace;
        p.now_ms = v_now;
        p.now_arg = &r->clock;
        assert_int_equal(tw_arm_pacer_new(&p, &r->pacer, &err), TW_OK);
    }
    struct tw_arm_opts o = {.arm_url = r->arm->base, .region = region, .poll_ms = 250,
                            .op_timeout_ms = 60000};
    http_opts(&o.http, &r->clock);
    assert_int_equal(tw_arm_new(&o, r->cred, r->pacer, &r->a, &err), TW_OK);
}

static void rig_down(struct rig *r)
{
    tw_arm_free(r->a);
    tw_arm_pacer_free(r->pacer);
    tw_arm_cred_free(r->cred);
    fs_stop(r->arm);
}

static enum tw_err keep_disk(void *arg, const struct tw_arm_disk *d)
{
    char *names = arg;
    strcat(names, d->name);
    strcat(names, ",");
    return TW_OK;
}

static void test_disks_paging(void **state)
{
    (void)state;
    struct rig r;
    struct reply none[] = {{200, "{}", NULL, 0, NULL}, {0}};
    rig_up(&r, none, NULL, NULL);
    char p1[1024];
    snprintf(p1, sizeof(p1),
             "{\"value\":[" DISK_JSON("d1", "Premium_LRS", "Succeeded") "," DISK_JSON(
                 "d2", "Standard_LRS", "Succeeded") "],\"nextLink\":\"%s/subscriptions/" SUB
                                                    "/providers/Microsoft.Compute/disks?api-"
                                                    "version=2024-03-02&%%24skiptoken=2\"}",
             r.arm->base);
    struct reply script[] = {
        {200, p1, NULL, 0, NULL},
        {200, "{\"value\":[" DISK_JSON("d3", "Premium_LRS", "Succeeded") "],\"nextLink\":null}",
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, script);
    char names[128] = "";
    struct tw_error err = {0};
    assert_int_equal(tw_arm_disks_list(r.a, SUB, NULL, keep_disk, names, &err), TW_OK);
    assert_string_equal(names, "d1,d2,d3,");
    assert_int_equal(fs_requests(r.arm), 2);
    assert_string_equal(r.arm->method, "GET");
    assert_string_equal(r.arm->path, "/subscriptions/" SUB "/providers/Microsoft.Compute/disks");
    assert_string_equal(r.arm->api_version, TW_ARM_DISK_API);
    assert_string_equal(r.arm->authorization, "Bearer tok-fixed");

    /* One group's list. */
    struct reply one[] = {{200, "{\"value\":[]}", NULL, 0, NULL}, {0}};
    arm_script(r.arm, one);
    assert_int_equal(tw_arm_disks_list(r.a, SUB, "rg-a", keep_disk, names, &err), TW_OK);
    assert_string_equal(r.arm->path,
                        "/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/"
                        "disks");

    /* A next link to another host is not followed with the token. */
    struct reply away[] = {
        {200, "{\"value\":[],\"nextLink\":\"https://elsewhere.example/steal?x=1\"}", NULL, 0, NULL},
        {0}};
    arm_script(r.arm, away);
    assert_int_equal(tw_arm_disks_list(r.a, SUB, NULL, keep_disk, names, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "elsewhere.example"));
    assert_int_equal(fs_requests(r.arm), 1);

    /* A next link that repeats the page. */
    char self[512];
    snprintf(self, sizeof(self),
             "{\"value\":[],\"nextLink\":\"%s/subscriptions/" SUB
             "/providers/Microsoft.Compute/disks?api-version=" TW_ARM_DISK_API "\"}",
             r.arm->base);
    struct reply loop[] = {{200, self, NULL, 0, NULL}, {0}};
    arm_script(r.arm, loop);
    assert_int_equal(tw_arm_disks_list(r.a, SUB, NULL, keep_disk, names, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "repeats"));
    assert_int_equal(fs_requests(r.arm), 1); /* the link is the page just read */

    /* Bad arguments are refused before anything is sent. */
    arm_script(r.arm, one);
    assert_int_equal(tw_arm_disks_list(r.a, "a/b", NULL, keep_disk, names, &err), TW_EINVAL);
    assert_int_equal(tw_arm_disks_list(r.a, SUB, "g?x", keep_disk, names, &err), TW_EINVAL);
    assert_int_equal(fs_requests(r.arm), 0);
    rig_down(&r);
}

static enum tw_err keep_vm(void *arg, const struct tw_arm_vm *vm)
{
    char *out = arg;
    strcat(out, vm->vm.name);
    strcat(out, "=");
    strcat(out, vm->power_state);
    strcat(out, vm->hibernated ? "(hibernated)," : ",");
    return TW_OK;
}

#define VM_JSON(name, iv)                                                                          \
    "{\"id\":\"/subscriptions/" SUB "/resourceGroups/rg-a/providers/Microsoft.Compute/"            \
    "virtualMachines/" name "\",\"name\":\"" name "\",\"location\":\"eastus\","                    \
    "\"properties\":{\"hardwareProfile\":{\"vmSize\":\"Standard_D2s_v5\"}" iv "}}"

static void test_vms_list(void **state)
{
    (void)state;
    struct rig r;
    /* The list has the instance views: one request. */
    struct reply with[] = {
        {200,
         "{\"value\":[" VM_JSON("vm1", ",\"instanceView\":{\"statuses\":[{\"code\":"
                                       "\"PowerState/running\"}]}") "]}",
         NULL, 0, NULL},
        {0}};
    rig_up(&r, with, NULL, NULL);
    char out[256] = "";
    struct tw_error err = {0};
    assert_int_equal(tw_arm_vms_list(r.a, SUB, "rg-a", keep_vm, out, &err), TW_OK);
    assert_string_equal(out, "vm1=running,");
    assert_int_equal(fs_requests(r.arm), 1);
    assert_string_equal(r.arm->expand, "instanceView");
    assert_string_equal(r.arm->api_version, TW_ARM_COMPUTE_API);
    assert_string_equal(r.arm->path, "/subscriptions/" SUB
                                     "/resourceGroups/rg-a/providers/Microsoft.Compute/"
                                     "virtualMachines");

    /* Without them: the instance view of each VM. */
    struct reply without[] = {
        {200, "{\"value\":[" VM_JSON("vm1", "") "," VM_JSON("vm2", "") "]}", NULL, 0, NULL},
        {200, "{\"statuses\":[{\"code\":\"PowerState/stopped\"},{\"code\":"
              "\"HibernationState/Hibernated\"}]}",
         NULL, 0, NULL},
        {200, "{\"statuses\":[{\"code\":\"PowerState/running\"}]}", NULL, 0, NULL},
        {0}};
    arm_script(r.arm, without);
    out[0] = '\0';
    assert_int_equal(tw_arm_vms_list(r.a, SUB, NULL, keep_vm, out, &err), TW_OK);
    assert_string_equal(out, "vm1=stopped(hibernated),vm2=running,");
    assert_int_equal(fs_requests(r.arm), 3);
    assert_string_equal(r.arm->path, VM2_ID "/instanceView");

    /* One VM with its instance view, and the view alone. */
    struct reply get[] = {
        {200, VM_JSON("vm1", ",\"instanceView\":{\"statuses\":[{\"code\":\"PowerState/stopped\"},"
                             "{\"code\":\"HibernationState/Hibernated\"}]}"),
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, get);
    struct tw_arm_vm *vm = malloc(sizeof(*vm));
    assert_int_equal(tw_arm_vm_get(r.a, VM_ID, vm, &err), TW_OK);
    assert_string_equal(r.arm->expand, "instanceView");
    assert_string_equal(r.arm->path, VM_ID);
    assert_string_equal(vm->power_state, "stopped");
    assert_true(vm->hibernated);
    assert_string_equal(vm->vm.vm_size, "Standard_D2s_v5");
    free(vm);

    /* 404 is TW_ENOENT with the fault. */
    struct reply gone[] = {
        {404, "{\"error\":{\"code\":\"ResourceNotFound\",\"message\":\"The Resource was not "
              "found.\"}}",
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, gone);
    char power[32];
    assert_int_equal(tw_arm_vm_power(r.a, VM_ID, power, sizeof(power), &err), TW_ENOENT);
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_NOT_FOUND);
    assert_string_equal(tw_arm_last_error(r.a)->code, "ResourceNotFound");
    /* Not a VM's id: nothing sent. */
    arm_script(r.arm, gone);
    assert_int_equal(tw_arm_vm_power(r.a, DISK_ID, power, sizeof(power), &err), TW_EINVAL);
    assert_int_equal(fs_requests(r.arm), 0);
    rig_down(&r);
}

static void test_lro_async(void **state)
{
    (void)state;
    struct rig r;
    struct reply none[] = {{200, "{}", NULL, 0, NULL}, {0}};
    rig_up(&r, none, NULL, NULL);
    char hdr[1024];
    snprintf(hdr, sizeof(hdr),
             "Azure-AsyncOperation: %s/subscriptions/" SUB
             "/providers/Microsoft.Compute/locations/eastus/DiskOperations/op1?api-version="
             "2024-03-02\nLocation: %s/subscriptions/" SUB
             "/providers/Microsoft.Compute/locations/eastus/DiskOperations/op1?monitor=true",
             r.arm->base, r.arm->base);
    struct reply script[] = {
        {202, DISK_JSON("d1", "Premium_LRS", "Updating"), "1", 0, hdr},
        {200, "{\"status\":\"InProgress\",\"name\":\"op1\"}", "2", 0, NULL},
        {200, "{\"status\":\"Succeeded\",\"name\":\"op1\"}", NULL, 0, NULL},
        {200, DISK_JSON("d1", "StandardSSD_LRS", "Succeeded"), NULL, 0, NULL},
        {0}};
    arm_script(r.arm, script);
    struct tw_arm_op op;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "StandardSSD_LRS", &op, &err), TW_OK);
    assert_string_equal(r.arm->method, "PATCH");
    assert_string_equal(r.arm->path, DISK_ID);
    assert_string_equal(r.arm->api_version, TW_ARM_DISK_API);
    assert_string_equal(r.arm->body, "{\"sku\":{\"name\":\"StandardSSD_LRS\"}}");
    assert_string_equal(r.arm->content_type, "application/json");
    assert_true(op.async_operation);
    assert_non_null(strstr(op.url, "/DiskOperations/op1?api-version="));
    assert_int_equal(op.retry_after_ms, 1000);
    assert_int_equal(tw_arm_op_wait(r.a, &op, &err), TW_OK);
    assert_int_equal(fs_requests(r.arm), 3);
    assert_string_equal(r.arm->path,
                        "/subscriptions/" SUB
                        "/providers/Microsoft.Compute/locations/eastus/DiskOperations/op1");
    /* Slept the 202's Retry-After, then the poll's. */
    assert_int_equal(r.clock.z.n, 2);
    assert_int_equal(r.clock.z.ms[0], 1000);
    assert_int_equal(r.clock.z.ms[1], 2000);
    bool ok = false;
    struct tw_arm_disk d;
    assert_int_equal(tw_arm_disk_verify(r.a, DISK_ID, "StandardSSD_LRS", &ok, &d, &err), TW_OK);
    assert_true(ok);
    assert_string_equal(d.sku, "StandardSSD_LRS");

    /* A failed operation: the error, with ARM's code, in last_error. */
    struct reply failing[] = {
        {202, "{}", NULL, 0, hdr},
        {200, "{\"status\":\"Failed\",\"error\":{\"code\":\"OperationNotAllowed\",\"message\":"
              "\"The type of disk 'd1' has been changed 2 times in the last 24 hours\"}}",
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, failing);
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Standard_LRS", &op, &err), TW_OK);
    assert_int_equal(tw_arm_op_wait(r.a, &op, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "failed: OperationNotAllowed"));
    assert_string_equal(tw_arm_last_error(r.a)->code, "OperationNotAllowed");
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_NOT_ALLOWED);

    /* The disk still moving is not done. */
    struct reply moving[] = {
        {200, "{\"name\":\"d1\",\"sku\":{\"name\":\"StandardSSD_LRS\"},\"properties\":{"
              "\"provisioningState\":\"Succeeded\",\"propertyUpdatesInProgress\":{}}}",
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, moving);
    assert_int_equal(tw_arm_disk_verify(r.a, DISK_ID, "StandardSSD_LRS", &ok, NULL, &err), TW_OK);
    assert_false(ok);
    struct reply updating[] = {{200, DISK_JSON("d1", "StandardSSD_LRS", "Updating"), NULL, 0,
                                   NULL},
                                  {0}};
    arm_script(r.arm, updating);
    assert_int_equal(tw_arm_disk_verify(r.a, DISK_ID, "StandardSSD_LRS", &ok, NULL, &err), TW_OK);
    assert_false(ok);
    struct reply other[] = {{200, DISK_JSON("d1", "Premium_LRS", "Succeeded"), NULL, 0, NULL},
                               {0}};
    arm_script(r.arm, other);
    assert_int_equal(tw_arm_disk_verify(r.a, DISK_ID, "StandardSSD_LRS", &ok, NULL, &err), TW_OK);
    assert_false(ok);

    /* 200 at once: nothing to poll. */
    arm_script(r.arm, other);
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Premium_LRS", &op, &err), TW_OK);
    assert_string_equal(op.url, "");
    assert_int_equal(tw_arm_op_wait(r.a, &op, &err), TW_OK);
    assert_int_equal(fs_requests(r.arm), 1);

    /* A bad SKU or id is refused before sending. */
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Premium\"LRS", &op, &err), TW_EINVAL);
    assert_int_equal(tw_arm_disk_set_sku(r.a, VM_ID, "Premium_LRS", &op, &err), TW_EINVAL);
    assert_int_equal(fs_requests(r.arm), 1);
    rig_down(&r);
}

static void test_lro_location(void **state)
{
    (void)state;
    struct rig r;
    struct reply none[] = {{200, "{}", NULL, 0, NULL}, {0}};
    rig_up(&r, none, NULL, NULL);
    char hdr[512];
    snprintf(hdr, sizeof(hdr),
             "Location: %s/subscriptions/" SUB
             "/providers/Microsoft.Compute/locations/eastus/operations/op2?api-version=" TW_ARM_COMPUTE_API,
             r.arm->base);
    struct reply script[] = {{202, "", NULL, 0, hdr},
                                {202, "", NULL, 0, NULL},
                                {202, "", NULL, 0, NULL},
                                {200, "", NULL, 0, NULL},
                                {0}};
    arm_script(r.arm, script);
    struct tw_arm_op op;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_vm_deallocate(r.a, VM_ID, &op, &err), TW_OK);
    assert_string_equal(r.arm->method, "POST");
    assert_string_equal(r.arm->path, VM_ID "/deallocate");
    assert_string_equal(r.arm->api_version, TW_ARM_COMPUTE_API);
    assert_false(op.async_operation);
    assert_non_null(strstr(op.url, "/operations/op2"));
    assert_int_equal(tw_arm_op_wait(r.a, &op, &err), TW_OK);
    assert_int_equal(fs_requests(r.arm), 4);
    /* No Retry-After: the poll interval between polls, none before the first. */
    assert_int_equal(r.clock.z.n, 2);
    assert_int_equal(r.clock.z.ms[0], 250);

    /* The start, and an operation that outlives the timeout. */
    struct reply slow[] = {{202, "", NULL, 0, hdr}, {202, "", "30", 0, NULL}, {0}};
    arm_script(r.arm, slow);
    assert_int_equal(tw_arm_vm_start(r.a, VM_ID, &op, &err), TW_OK);
    assert_string_equal(r.arm->path, VM_ID "/start");
    assert_int_equal(tw_arm_op_wait(r.a, &op, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "did not end within 60000 ms"));

    /* Retry-After as an HTTP date, a few seconds ahead of the system clock. */
    char when[64], hdr2[700];
    time_t t = time(NULL) + 5;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    snprintf(hdr2, sizeof(hdr2), "%s\nRetry-After: %s", hdr, when);
    struct reply dated[] = {{202, "", NULL, 0, hdr2}, {0}};
    arm_script(r.arm, dated);
    assert_int_equal(tw_arm_vm_start(r.a, VM_ID, &op, &err), TW_OK);
    assert_true(op.retry_after_ms >= 3000 && op.retry_after_ms <= 5000);

    /* An operation URL on another host is not polled. */
    struct reply away[] = {
        {202, "", NULL, 0, "Azure-AsyncOperation: https://elsewhere.example/op?x=1"}, {0}};
    arm_script(r.arm, away);
    assert_int_equal(tw_arm_vm_start(r.a, VM_ID, &op, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "elsewhere.example"));
    assert_string_equal(op.url, "");
    /* A 202 with nowhere to poll. */
    struct reply nowhere[] = {{202, "", NULL, 0, NULL}, {0}};
    arm_script(r.arm, nowhere);
    assert_int_equal(tw_arm_vm_start(r.a, VM_ID, &op, &err), TW_EIO);
    assert_non_null(strstr(err.msg, "without an Azure-AsyncOperation or Location"));
    rig_down(&r);
}

static void test_storms(void **state)
{
    (void)state;
    struct rig r;
    struct tw_arm_pace_opts pace = {.reads_per_s = 1000};
    struct reply storm[] = {
        {429, "{\"error\":{\"code\":\"OperationNotAllowed\",\"message\":\"too many\",\"details\":"
              "[{\"code\":\"TooManyRequests\"}]}}",
         "1", 0, NULL},
        {503, "{\"error\":{\"code\":\"ServiceUnavailable\",\"message\":\"later\"}}", NULL, 0, NULL},
        {429, "", "2", 0, NULL},
        {200, DISK_JSON("d1", "Premium_LRS", "Succeeded"), NULL, 0, NULL},
        {0}};
    rig_up(&r, storm, &pace, NULL);
    struct tw_arm_disk d;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(fs_requests(r.arm), 4);
    assert_string_equal(d.name, "d1");
    /* A pacer token per attempt, not per call. */
    assert_int_equal(tw_arm_pacer_taken(r.pacer), 4);
    /* The waits honoured Retry-After. */
    assert_true(r.clock.z.n >= 3);
    assert_true(r.clock.z.ms[0] >= 1000);
    assert_true(r.clock.z.ms[2] >= 2000);
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_NONE);

    /* A storm that does not end: given up within the budget, the fault said. */
    struct reply endless[] = {
        {503, "{\"error\":{\"code\":\"ServiceUnavailable\",\"message\":\"down\"}}", "5", 0, NULL},
        {0}};
    arm_script(r.arm, endless);
    long before = r.clock.total;
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_EIO);
    assert_true(fs_requests(r.arm) <= 4);
    assert_true(r.clock.total - before < 20000);
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_SERVER);
    assert_int_equal(tw_arm_last_error(r.a)->status, 503);
    assert_non_null(strstr(err.msg, "ServiceUnavailable"));

    /* Throttling left after the retries: throttled. */
    struct reply throttled[] = {{429, "", "1", 0, NULL}, {0}};
    arm_script(r.arm, throttled);
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_EIO);
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_THROTTLED);

    /* A write's refusals are classified for the executor. */
    struct reply busy[] = {
        {409, "{\"error\":{\"code\":\"OperationNotAllowed\",\"target\":\"sku.name\",\"message\":"
              "\"Cannot change the SKU of disk 'd1' while it is attached to running VM 'vm1'. "
              "Deallocate the VM or detach the disk and try again.\"}}",
         NULL, 0, NULL},
        {0}};
    arm_script(r.arm, busy);
    struct tw_arm_op op;
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Standard_LRS", &op, &err), TW_EINVAL);
    assert_int_equal(fs_requests(r.arm), 1); /* a 409 is not retried */
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_CONFLICT);

    /* Nothing listening: network. */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)fs_closed_port());
    struct tw_arm_opts o = {.arm_url = url};
    http_opts(&o.http, &r.clock);
    o.http.max_attempts = 1;
    struct tw_arm *dead;
    assert_int_equal(tw_arm_new(&o, r.cred, NULL, &dead, &err), TW_OK);
    assert_int_equal(tw_arm_disk_get(dead, DISK_ID, &d, &err), TW_EIO);
    assert_int_equal(tw_arm_last_error(dead)->fault, TW_ARM_FAULT_NETWORK);
    tw_arm_free(dead);
    rig_down(&r);
}

static void test_pacing(void **state)
{
    (void)state;
    struct rig r;
    /* 10 reads/s with a second of depth: 9 go at once (a token of margin),
     * then one each 100 ms. */
    struct tw_arm_pace_opts pace = {.reads_per_s = 10, .writes_per_s = 5};
    struct reply ok[] = {{200, DISK_JSON("d1", "Premium_LRS", "Succeeded"), NULL, 0, NULL},
                            {0}};
    rig_up(&r, ok, &pace, "eastus");
    struct tw_arm_disk d;
    struct tw_error err = {0};
    for (int i = 0; i < 30; i++)
        assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(tw_arm_pacer_waited_ms(r.pacer), 2100);
    assert_int_equal(r.clock.total, 2100);
    assert_int_equal(r.clock.z.n, 21);
    assert_int_equal(r.clock.z.ms[0], 100);
    assert_int_equal(tw_arm_pacer_taken(r.pacer), 30);

    /* Writes have their own bucket: 4 at once, then 200 ms each. */
    struct tw_arm_op op;
    long before = r.clock.total;
    for (int i = 0; i < 7; i++)
        assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Premium_LRS", &op, &err), TW_OK);
    assert_int_equal(r.clock.total - before, 600);

    /* A disk in another region does not wait on this one's bucket (the
     * first read is paced in the caller's region, the rest in the disk's
     * own, as read). */
    struct reply west_disk[] = {{200, DISK_JSON_AT("d1", "Premium_LRS", "westus"), NULL, 0, NULL},
                                {0}};
    arm_script(r.arm, west_disk);
    struct tw_arm_opts o = {.arm_url = r.arm->base, .region = "westus"};
    http_opts(&o.http, &r.clock);
    struct tw_arm *west;
    assert_int_equal(tw_arm_new(&o, r.cred, r.pacer, &west, &err), TW_OK);
    before = r.clock.total;
    for (int i = 0; i < 9; i++)
        assert_int_equal(tw_arm_disk_get(west, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, before);
    assert_int_equal(tw_arm_disk_get(west, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total - before, 100);
    tw_arm_free(west);
    arm_script(r.arm, ok);

    /* Time that passes refills the bucket: no wait after a second's pause. */
    r.clock.now += 5000;
    before = r.clock.total;
    for (int i = 0; i < 9; i++)
        assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, before);
    rig_down(&r);

    /* Off: no waits at all. */
    struct tw_arm_pace_opts off = {.off = true};
    rig_up(&r, ok, &off, NULL);
    for (int i = 0; i < 40; i++)
        assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, 0);
    assert_int_equal(tw_arm_pacer_waited_ms(r.pacer), 0);
    rig_down(&r);

    /* Bad settings are refused. */
    struct tw_arm_pacer *p;
    struct tw_arm_pace_opts bad = {.reads_per_s = -1};
    assert_int_equal(tw_arm_pacer_new(&bad, &p, &err), TW_EINVAL);
    struct tw_arm_pace_opts bad2 = {.vm_actions_per_min = -3};
    assert_int_equal(tw_arm_pacer_new(&bad2, &p, &err), TW_EINVAL);
}

static void test_vm_budget(void **state)
{
    (void)state;
    struct rig r;
    /* Writes plentiful: only the VM's budget makes anyone wait. */
    struct tw_arm_pace_opts pace = {.writes_per_s = 1000};
    struct reply ok[] = {{200, "", NULL, 0, NULL}, {0}};
    rig_up(&r, ok, &pace, NULL);
    struct tw_arm_op op;
    struct tw_error err = {0};
    for (int i = 0; i < 4; i++)
        assert_int_equal(i % 2 ? tw_arm_vm_start(r.a, VM_ID, &op, &err)
                               : tw_arm_vm_deallocate(r.a, VM_ID, &op, &err),
                         TW_OK);
    assert_int_equal(r.clock.total, 0);
    /* The fifth within the window (62 s: ARM's minute and a margin)
     * waits for the first to leave it. */
    assert_int_equal(tw_arm_vm_deallocate(r.a, VM_ID, &op, &err), TW_OK);
    assert_int_equal(r.clock.total, 62000);
    /* Another VM has its own budget (ids compare without case). */
    for (int i = 0; i < 4; i++)
        assert_int_equal(tw_arm_vm_start(r.a, VM2_ID, &op, &err), TW_OK);
    assert_int_equal(r.clock.total, 62000);
    /* Disk writes and reads don't count against a VM. */
    assert_int_equal(tw_arm_disk_set_sku(r.a, DISK_ID, "Premium_LRS", &op, &err), TW_OK);
    assert_int_equal(r.clock.total, 62000);
    /* At 62 s the first VM's actions of t=0 have left the window (three of
     * them: the fifth took the first's place at 62 s), so three more go at
     * once and the next waits for the one of 62 s.  The id in capitals is
     * the same VM. */
    char upper[sizeof(VM_ID)];
    for (size_t i = 0; i < sizeof(VM_ID); i++)
        upper[i] = (char)(VM_ID[i] >= 'a' && VM_ID[i] <= 'z' ? VM_ID[i] - 32 : VM_ID[i]);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_arm_pacer_take(r.pacer, "", true, upper), 0);
    assert_int_equal(tw_arm_pacer_take(r.pacer, "", true, upper), 62000);
    rig_down(&r);
}

/* Fills REGION's read bucket of P (10 reads/s, a second deep: 9 at
 * once) so its next read waits 100 ms. */
static void fill(struct tw_arm_pacer *p, const char *region)
{
    for (int i = 0; i < 9; i++)
        assert_int_equal(tw_arm_pacer_take(p, region, false, NULL), 0);
}

/* Each call is paced in its own region's bucket: an operation URL's
 * locations/{region}, the location of a resource the client has read,
 * else the caller's region; a list of a subscription in "". */
static void test_region_buckets(void **state)
{
    (void)state;
    struct rig r;
    struct tw_arm_pace_opts pace = {.reads_per_s = 10, .writes_per_s = 1000};
    struct reply east[] = {{200, DISK_JSON_AT("d1", "Premium_LRS", "eastus"), NULL, 0, NULL},
                           {0}};
    rig_up(&r, east, &pace, "westus");
    struct tw_arm_disk d;
    struct tw_error err = {0};
    /* Not read yet: the caller's region. */
    fill(r.pacer, "westus");
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, 100);
    /* Read once: its location, eastus, from then on (a PATCH too). */
    r.clock.now += 5000;
    fill(r.pacer, "eastus");
    long before = r.clock.total;
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total - before, 100);
    r.clock.now += 5000;
    fill(r.pacer, "westus");
    before = r.clock.total;
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, before); /* westus full, eastus not */
    /* An operation URL names its region. */
    r.clock.now += 5000;
    struct reply running[] = {{200, "{\"status\":\"InProgress\"}", NULL, 0, NULL}, {0}};
    arm_script(r.arm, running);
    struct tw_arm_op op = {.async_operation = true};
    snprintf(op.url, sizeof(op.url),
             "%s/subscriptions/" SUB "/providers/Microsoft.Compute/locations/NorthEurope/"
             "DiskOperations/op1?api-version=" TW_ARM_DISK_API,
             r.arm->base);
    fill(r.pacer, "northeurope");
    bool done = true;
    before = r.clock.total;
    assert_int_equal(tw_arm_op_poll(r.a, &op, &done, &err), TW_OK);
    assert_false(done);
    assert_int_equal(r.clock.total - before, 100);
    /* A list of the subscription: "", and each disk it lists is known
     * after it (d2 in japaneast). */
    r.clock.now += 5000;
    char page[1024];
    snprintf(page, sizeof(page), "{\"value\":[%s]}",
             DISK_JSON_AT("d2", "Premium_LRS", "japaneast"));
    struct reply list1[] = {{200, page, NULL, 0, NULL}, {0}};
    arm_script(r.arm, list1);
    fill(r.pacer, "");
    before = r.clock.total;
    char names[256] = "";
    assert_int_equal(tw_arm_disks_list(r.a, SUB, NULL, keep_disk, names, &err), TW_OK);
    assert_string_equal(names, "d2,");
    assert_int_equal(r.clock.total - before, 100);
    r.clock.now += 5000;
    fill(r.pacer, "japaneast");
    struct reply d2[] = {{200, DISK_JSON_AT("d2", "Premium_LRS", "japaneast"), NULL, 0, NULL},
                         {0}};
    arm_script(r.arm, d2);
    before = r.clock.total;
    assert_int_equal(tw_arm_disk_get(r.a, "/subscriptions/" SUB "/resourceGroups/RG-A/providers/"
                                          "Microsoft.Compute/disks/D2",
                                     &d, &err),
                     TW_OK);
    assert_int_equal(r.clock.total - before, 100);
    rig_down(&r);
}

/* A 429's Retry-After holds its region for every caller of the pacer. */
static void test_hold(void **state)
{
    (void)state;
    struct vclock c = {0};
    struct tw_arm_pace_opts o = {.reads_per_s = 10, .now_ms = v_now, .now_arg = &c};
    struct tw_arm_pacer *p;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_pacer_new(&o, &p, &err), TW_OK);
    assert_int_equal(tw_arm_pacer_now_ms(p), 0);
    tw_arm_pacer_hold(p, "eastus", 5000);
    assert_int_equal(tw_arm_pacer_holds(p), 1);
    /* The held region's next request waits the hold out, the ones after it
     * one interval each; writes are held too; another region is not. */
    assert_int_equal(tw_arm_pacer_take(p, "EastUS", false, NULL), 5000);
    assert_int_equal(tw_arm_pacer_take(p, "eastus", false, NULL), 5100);
    assert_true(tw_arm_pacer_take(p, "eastus", true, NULL) >= 5000);
    assert_int_equal(tw_arm_pacer_take(p, "westus", false, NULL), 0);
    /* A shorter hold does not shorten it. */
    tw_arm_pacer_hold(p, "eastus", 1000);
    assert_int_equal(tw_arm_pacer_holds(p), 1);
    tw_arm_pacer_free(p);

    /* Through the client: a 429 whose Retry-After is beyond the call's
     * budget gives up at once (as before), and the next call of the
     * region, by another client of the pacer, waits it out. */
    struct rig r;
    struct tw_arm_pace_opts pace = {.reads_per_s = 1000, .writes_per_s = 1000};
    struct reply slow[] = {{429, "{\"error\":{\"code\":\"TooManyRequests\",\"message\":\"x\"}}",
                            "60", 0, NULL},
                           {0}};
    rig_up(&r, slow, &pace, "eastus");
    struct tw_arm_disk d;
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_EIO);
    assert_int_equal(tw_arm_last_error(r.a)->fault, TW_ARM_FAULT_THROTTLED);
    assert_int_equal(fs_requests(r.arm), 1);
    assert_int_equal(r.clock.total, 0);
    assert_int_equal(tw_arm_pacer_holds(r.pacer), 1);
    struct reply ok[] = {{200, DISK_JSON_AT("d1", "Premium_LRS", "eastus"), NULL, 0, NULL},
                         {0}};
    arm_script(r.arm, ok);
    struct tw_arm_opts ao = {.arm_url = r.arm->base, .region = "eastus"};
    http_opts(&ao.http, &r.clock);
    struct tw_arm *other;
    assert_int_equal(tw_arm_new(&ao, r.cred, r.pacer, &other, &err), TW_OK);
    assert_int_equal(tw_arm_disk_get(other, DISK_ID, &d, &err), TW_OK);
    assert_true(r.clock.total >= 60000);
    /* Another region's client goes at once. */
    ao.region = "westus";
    struct tw_arm *west;
    assert_int_equal(tw_arm_new(&ao, r.cred, r.pacer, &west, &err), TW_OK);
    long before = r.clock.total;
    assert_int_equal(tw_arm_disk_get(west, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(r.clock.total, before);
    tw_arm_free(west);
    tw_arm_free(other);

    /* A 429 retried within the call sets the hold before its wait, so the
     * others hold with it. */
    struct reply brief[] = {
        {429, "{\"error\":{\"code\":\"TooManyRequests\",\"message\":\"x\"}}", "3", 0, NULL},
        {200, DISK_JSON_AT("d1", "Premium_LRS", "eastus"), NULL, 0, NULL},
        {0}};
    r.clock.now += 120000;
    arm_script(r.arm, brief);
    int64_t holds = tw_arm_pacer_holds(r.pacer);
    struct hold_probe probe = {.p = r.pacer, .region = "eastus"};
    r.clock.z.n = 0;
    probe_clock = &r.clock;
    probe_at = &probe;
    assert_int_equal(tw_arm_disk_get(r.a, DISK_ID, &d, &err), TW_OK);
    probe_at = NULL;
    assert_int_equal(fs_requests(r.arm), 2);
    assert_int_equal(tw_arm_pacer_holds(r.pacer), holds + 1);
    /* While the client slept its 3 s, a take of its region waited them. */
    assert_true(probe.seen >= 2900);
    rig_down(&r);
}

/* A call of unknown region ("") may be any region's at ARM: it counts in
 * every region's bucket, and a region seen later starts from its
 * schedule, so a region's calls and the unknown ones stay within one
 * region's rate together. */
static void test_unknown_region(void **state)
{
    (void)state;
    struct vclock c = {0};
    struct tw_arm_pace_opts o = {.reads_per_s = 10, .now_ms = v_now, .now_arg = &c};
    struct tw_arm_pacer *p;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_pacer_new(&o, &p, &err), TW_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(tw_arm_pacer_take(p, "eastus", false, NULL), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tw_arm_pacer_take(p, "", false, NULL), 0);
    /* eastus has had 9: the 10th waits. */
    assert_int_equal(tw_arm_pacer_take(p, "eastus", false, NULL), 100);
    /* westus, new, inherits the 4 unknown ones: 5 more at once. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(tw_arm_pacer_take(p, "westus", false, NULL), 0);
    assert_int_equal(tw_arm_pacer_take(p, "westus", false, NULL), 100);
    /* A hold of unknown region holds them all. */
    tw_arm_pacer_hold(p, "", 10000);
    assert_true(tw_arm_pacer_take(p, "westus", false, NULL) >= 10000);
    assert_true(tw_arm_pacer_take(p, "eastus", false, NULL) >= 10000);
    tw_arm_pacer_free(p);
}

/* Real sleeps (none injected): the client's wait hook sleeps them, and the
 * call's budget counts each once. Two 1 s Retry-Afters fit a 2.8 s budget;
 * counted twice they would not. */
static void test_real_sleep_budget(void **state)
{
    (void)state;
    struct reply two[] = {{503, "{}", "1", 0, NULL}, {503, "{}", "1", 0, NULL},
                          {200, DISK_JSON("d1", "Premium_LRS", "Succeeded"), NULL, 0, NULL},
                          {0}};
    struct fakesrv *arm = start(two);
    assert_non_null(arm);
    struct tw_error err = {0};
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_BEARER, .bearer = "tok-fixed"};
    struct tw_arm_cred *cred;
    assert_int_equal(tw_arm_cred_new(&co, NULL, &cred, &err), TW_OK);
    struct tw_arm_pacer *p;
    assert_int_equal(tw_arm_pacer_new(NULL, &p, &err), TW_OK);
    struct tw_arm_opts o = {.arm_url = arm->base};
    tw_az_http_opts_default(&o.http);
    o.http.loopback_only = true;
    o.http.budget_ms = 2800;
    o.http.backoff_base_ms = 10;
    o.http.backoff_max_ms = 100;
    struct tw_arm *a;
    assert_int_equal(tw_arm_new(&o, cred, p, &a, &err), TW_OK);
    struct tw_arm_disk d;
    if (tw_arm_disk_get(a, DISK_ID, &d, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(fs_requests(arm), 3);
    tw_arm_free(a);
    tw_arm_pacer_free(p);
    tw_arm_cred_free(cred);
    fs_stop(arm);
}

/* The defaults leave headroom below ARM's 25 reads/s, 10 writes/s and 4
 * VM actions a minute. */
static void test_default_headroom(void **state)
{
    (void)state;
    struct vclock c = {0};
    struct tw_arm_pace_opts o = {.now_ms = v_now, .now_arg = &c};
    struct tw_arm_pacer *p;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_pacer_new(&o, &p, &err), TW_OK);
    /* 20 reads/s a second deep: 19 at once, then one each 50 ms. */
    for (int i = 0; i < 19; i++)
        assert_int_equal(tw_arm_pacer_take(p, "eastus", false, NULL), 0);
    assert_int_equal(tw_arm_pacer_take(p, "eastus", false, NULL), 50);
    /* 8 writes/s: 7 at once, then one each 125 ms. */
    for (int i = 0; i < 7; i++)
        assert_int_equal(tw_arm_pacer_take(p, "eastus", true, NULL), 0);
    assert_int_equal(tw_arm_pacer_take(p, "eastus", true, NULL), 125);
    /* 4 start/deallocate per VM in any 62 s. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(tw_arm_pacer_take(p, "westus", true, VM_ID), 0);
    assert_int_equal(tw_arm_pacer_take(p, "westus", true, VM_ID), 62000);
    tw_arm_pacer_free(p);
}

/* ---- credentials ---- */

static void test_token_cache(void **state)
{
    (void)state;
    struct vclock clock = {0};
    struct reply tok[] = {
        {200, "{\"access_token\":\"mi-token\",\"expires_in\":\"3599\",\"expires_on\":\"1\","
              "\"resource\":\"https://management.azure.com/\",\"token_type\":\"Bearer\"}",
         NULL, 0, NULL},
        {0}};
    struct fakesrv *imds = start(tok);
    struct reply ok[] = {{200, DISK_JSON("d1", "Premium_LRS", "Succeeded"), NULL, 0, NULL},
                            {0}};
    struct fakesrv *arm = start(ok);
    assert_non_null(imds);
    assert_non_null(arm);
    struct tw_az_http_opts h;
    http_opts(&h, &clock);
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_MANAGED_IDENTITY, .imds_url = imds->base};
    struct tw_arm_cred *cred;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    struct tw_arm_opts o = {.arm_url = arm->base, .http = h};
    struct tw_arm *a;
    assert_int_equal(tw_arm_new(&o, cred, NULL, &a, &err), TW_OK);
    struct tw_arm_disk d;
    for (int i = 0; i < 5; i++)
        assert_int_equal(tw_arm_disk_get(a, DISK_ID, &d, &err), TW_OK);
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    assert_int_equal(fs_requests(imds), 1);
    assert_string_equal(imds->path, "/metadata/identity/oauth2/token");
    assert_string_equal(imds->metadata, "true");
    assert_string_equal(imds->resource, "https://management.azure.com/");
    assert_string_equal(arm->authorization, "Bearer mi-token");
    tw_arm_free(a);
    tw_arm_cred_free(cred);

    /* A token with less to live than the margin (300 s) is still reused:
     * the margin is half its life then. */
    struct reply shortlived[] = {
        {200, "{\"access_token\":\"short\",\"expires_in\":\"100\"}", NULL, 0, NULL}, {0}};
    arm_script(imds, shortlived);
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    char t[64];
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_string_equal(t, "short");
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    tw_arm_cred_free(cred);
    /* ...and renewed at half its life: a token of 1 s is kept 0.5 s. */
    struct reply onesec[] = {
        {200, "{\"access_token\":\"brief\",\"expires_in\":\"1\"}", NULL, 0, NULL}, {0}};
    arm_script(imds, onesec);
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    struct timespec half = {0, 650 * 1000000L};
    nanosleep(&half, NULL);
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_int_equal(tw_arm_cred_fetches(cred), 2);
    tw_arm_cred_free(cred);
    /* ...and kept with a margin below its life. */
    co.refresh_before_s = 30;
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    tw_arm_cred_free(cred);

    /* IMDS refusing: TW_EPERM with its words, the ARM call not sent. */
    struct reply refused[] = {
        {400, "{\"error\":\"invalid_request\",\"error_description\":\"Identity not found\"}",
         NULL, 0, NULL},
        {0}};
    arm_script(imds, refused);
    arm_script(arm, ok);
    co.refresh_before_s = 0;
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    assert_int_equal(tw_arm_new(&o, cred, NULL, &a, &err), TW_OK);
    assert_int_not_equal(tw_arm_disk_get(a, DISK_ID, &d, &err), TW_OK);
    assert_non_null(strstr(err.msg, "Identity not found"));
    assert_int_equal(fs_requests(arm), 0);
    tw_arm_free(a);
    tw_arm_cred_free(cred);
    fs_stop(imds);
    fs_stop(arm);
}

struct racer {
    struct tw_arm_cred *cred;
    char tok[64];
    enum tw_err rc;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    struct tw_error err = {0};
    r->rc = tw_arm_cred_token(r->cred, r->tok, sizeof(r->tok), &err);
    return NULL;
}

/* Threads that want a token at once wait for one fetch, not one each. */
static void test_token_threads(void **state)
{
    (void)state;
    struct reply tok[] = {
        {200, "{\"access_token\":\"shared\",\"expires_in\":\"3599\"}", NULL, 300, NULL}, {0}};
    struct fakesrv *imds = start(tok);
    assert_non_null(imds);
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_MANAGED_IDENTITY, .imds_url = imds->base};
    struct tw_az_http_opts h;
    tw_az_http_opts_default(&h);
    h.loopback_only = true;
    struct tw_arm_cred *cred;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    struct racer r[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        r[i] = (struct racer){.cred = cred};
        assert_int_equal(pthread_create(&th[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(r[i].rc, TW_OK);
        assert_string_equal(r[i].tok, "shared");
    }
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    assert_int_equal(fs_requests(imds), 1);
    tw_arm_cred_free(cred);
    fs_stop(imds);
}

#define SECRET "s3cr+t/Value=="

static void test_client_credentials(void **state)
{
    (void)state;
    struct vclock clock = {0};
    struct reply tok[] = {
        {200, "{\"token_type\":\"Bearer\",\"expires_in\":3599,\"ext_expires_in\":3599,"
              "\"access_token\":\"sp-token\"}",
         NULL, 0, NULL},
        {0}};
    struct fakesrv *login = start(tok);
    assert_non_null(login);
    struct tw_az_http_opts h;
    http_opts(&h, &clock);
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_CLIENT_SECRET,
                                  .login_url = login->base,
                                  .tenant_id = "72f988bf-86f1-41af-91ab-2d7cd011db47",
                                  .client_id = "app-1",
                                  .client_secret = SECRET};
    struct tw_arm_cred *cred;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    char t[64];
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_OK);
    assert_string_equal(t, "sp-token");
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    assert_string_equal(login->method, "POST");
    assert_string_equal(login->path, "/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token");
    assert_string_equal(login->content_type, "application/x-www-form-urlencoded");
    assert_string_equal(login->body,
                        "grant_type=client_credentials&client_id=app-1&client_secret="
                        "s3cr%2Bt%2FValue%3D%3D&scope=https%3A%2F%2Fmanagement.azure.com%2F."
                        "default");
    tw_arm_cred_free(cred);

    /* Refusals: the secret is in no message, even when the login echoes it. */
    struct reply refusals[][2] = {
        {{401, "{\"error\":\"invalid_client\",\"error_description\":\"AADSTS7000215: Invalid "
               "client secret provided: " SECRET "\"}",
          NULL, 0, NULL},
         {0}},
        {{400, "{\"error\":\"unauthorized_client\",\"error_description\":\"AADSTS700016: "
               "Application with identifier 'app-1' was not found.\"}",
          NULL, 0, NULL},
         {0}},
        {{500, "upstream said " SECRET, NULL, 0, NULL}, {0}},
        {{200, "{\"oops\":\"" SECRET "\"}", NULL, 0, NULL}, {0}},
        {{200, "not json " SECRET, NULL, 0, NULL}, {0}},
        /* A login (or a proxy) that echoes the request's form body. */
        {{400, "bad request: grant_type=client_credentials&client_id=app-1&client_secret="
               "s3cr%2Bt%2FValue%3D%3D&scope=x",
          NULL, 0, NULL},
         {0}},
        {{502, "gateway: client_secret=s3cr%2Bt%2FValue%3D%3D", NULL, 0, NULL}, {0}},
        {{200, "{\"client_secret\": s3cr%2Bt%2FValue%3D%3D}", NULL, 0, NULL}, {0}},
        /* The encoded form in the parsed description, hex in lower case. */
        {{400, "{\"error\":\"invalid_request\",\"error_description\":\"AADSTS900144: bad "
               "body client_secret=s3cr%2bt%2fValue%3d%3d\"}",
          NULL, 0, NULL},
         {0}},
    };
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
        arm_script(login, refusals[i]);
        assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
        memset(&err, 0, sizeof(err));
        enum tw_err rc = tw_arm_cred_token(cred, t, sizeof(t), &err);
        assert_int_not_equal(rc, TW_OK);
        if (strstr(err.msg, SECRET) || strcasestr(err.msg, "s3cr%2Bt") ||
            strcasestr(err.msg, "Value%3D") || strstr(err.msg, "client_secret=s"))
            fail_msg("%zu: the secret is in \"%s\"", i, err.msg);
        assert_true(err.msg[0] != '\0');
        if (i < 2) {
            assert_int_equal(rc, TW_EPERM);
            assert_non_null(strstr(err.msg, i == 0 ? "invalid_client" : "AADSTS700016"));
        }
        if (i == 5 || i == 8) /* any 4xx of the login is a refusal */
            assert_int_equal(rc, TW_EPERM);
        if (i == 8)
            assert_non_null(strstr(err.msg, "AADSTS900144"));
        if (i == 6)
            assert_int_equal(rc, TW_EIO);
        tw_arm_cred_free(cred);
    }
    /* Through the ARM client a login's 4xx is an auth fault, not network. */
    struct reply echo[] = {{400, "bad request: client_secret=s3cr%2Bt%2FValue%3D%3D", NULL, 0,
                            NULL},
                           {0}};
    arm_script(login, echo);
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    struct tw_arm_opts ao = {.arm_url = login->base, .http = h};
    struct tw_arm *a;
    assert_int_equal(tw_arm_new(&ao, cred, NULL, &a, &err), TW_OK);
    struct tw_arm_disk d;
    assert_int_equal(tw_arm_disk_get(a, DISK_ID, &d, &err), TW_EPERM);
    assert_int_equal(tw_arm_last_error(a)->fault, TW_ARM_FAULT_AUTH);
    assert_null(strcasestr(err.msg, "s3cr%2B"));
    tw_arm_free(a);
    tw_arm_cred_free(cred);
    fs_stop(login);

    /* Nothing listens: TW_EIO, and still no secret. */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)fs_closed_port());
    co.login_url = url;
    h.max_attempts = 1;
    assert_int_equal(tw_arm_cred_new(&co, &h, &cred, &err), TW_OK);
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_EIO);
    assert_null(strstr(err.msg, SECRET));
    tw_arm_cred_free(cred);

    /* Settings refused up front. */
    struct tw_arm_cred_opts bad = co;
    bad.tenant_id = "../x";
    assert_int_equal(tw_arm_cred_new(&bad, &h, &cred, &err), TW_EINVAL);
    bad = co;
    bad.client_secret = "";
    assert_int_equal(tw_arm_cred_new(&bad, &h, &cred, &err), TW_EINVAL);
    struct tw_arm_cred_opts bearer = {.kind = TW_ARM_CRED_BEARER, .bearer = "a\r\nX: y"};
    assert_int_equal(tw_arm_cred_new(&bearer, &h, &cred, &err), TW_EINVAL);
}

static void test_cred_from_env(void **state)
{
    (void)state;
    struct tw_arm_cred_opts o;
    char buf[128];
    struct tw_error err = {0};
    unsetenv("AZURE_TENANT_ID");
    unsetenv("AZURE_CLIENT_ID");
    unsetenv("AZURE_CLIENT_SECRET");
    assert_int_equal(tw_arm_cred_from_env(&o, NULL, buf, sizeof(buf), &err), TW_OK);
    assert_int_equal(o.kind, TW_ARM_CRED_MANAGED_IDENTITY);
    setenv("AZURE_TENANT_ID", "t1", 1);
    assert_int_equal(tw_arm_cred_from_env(&o, NULL, buf, sizeof(buf), &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "AZURE_CLIENT_ID and AZURE_CLIENT_SECRET"));
    assert_non_null(strstr(err.msg, "are not set"));
    setenv("AZURE_CLIENT_ID", "c1", 1);
    setenv("AZURE_CLIENT_SECRET", "", 1); /* empty counts as unset */
    assert_int_equal(tw_arm_cred_from_env(&o, NULL, buf, sizeof(buf), &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "AZURE_CLIENT_SECRET (or --client-secret-file) is not set"));
    setenv("AZURE_CLIENT_SECRET", "envsecret", 1);
    assert_int_equal(tw_arm_cred_from_env(&o, NULL, buf, sizeof(buf), &err), TW_OK);
    assert_int_equal(o.kind, TW_ARM_CRED_CLIENT_SECRET);
    assert_string_equal(o.client_secret, "envsecret");
    assert_string_equal(o.tenant_id, "t1");
    /* The file's first line wins over the variable. */
    char *dir = th_tmpdir();
    char path[512];
    snprintf(path, sizeof(path), "%s/secret", dir);
    FILE *f = fopen(path, "w");
    fputs("filesecret\r\nsecond line\n", f);
    fclose(f);
    assert_int_equal(tw_arm_cred_from_env(&o, path, buf, sizeof(buf), &err), TW_OK);
    assert_string_equal(o.client_secret, "filesecret");
    f = fopen(path, "w");
    fclose(f);
    assert_int_equal(tw_arm_cred_from_env(&o, path, buf, sizeof(buf), &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "is empty"));
    f = fopen(path, "w");
    for (int i = 0; i < 200; i++)
        fputc('x', f);
    fclose(f);
    assert_int_equal(tw_arm_cred_from_env(&o, path, buf, sizeof(buf), &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
    snprintf(path, sizeof(path), "%s/none", dir);
    assert_int_equal(tw_arm_cred_from_env(&o, path, buf, sizeof(buf), &err), TW_ENOENT);
    th_rmtree(dir);
    free(dir);
    unsetenv("AZURE_TENANT_ID");
    unsetenv("AZURE_CLIENT_ID");
    unsetenv("AZURE_CLIENT_SECRET");
}

static void test_new_refusals(void **state)
{
    (void)state;
    struct tw_arm_cred *cred;
    struct tw_error err = {0};
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_BEARER, .bearer = "x"};
    assert_int_equal(tw_arm_cred_new(&co, NULL, &cred, &err), TW_OK);
    struct tw_arm *a;
    struct tw_arm_opts o = {.arm_url = "http://127.0.0.1:1", .disk_api = "latest"};
    assert_int_equal(tw_arm_new(&o, cred, NULL, &a, &err), TW_EINVAL);
    o.disk_api = NULL;
    assert_int_equal(tw_arm_new(&o, NULL, NULL, &a, &err), TW_EINVAL);
    o.arm_url = NULL;
    assert_int_equal(tw_arm_new(&o, cred, NULL, &a, &err), TW_EINVAL);
    tw_arm_cred_free(cred);
    tw_arm_free(NULL);
    tw_arm_pacer_free(NULL);
    tw_arm_cred_free(NULL);
}

int main(void)
{
    /* Whatever the environment says, nothing here leaves the machine. */
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disks_paging),   cmocka_unit_test(test_vms_list),
        cmocka_unit_test(test_lro_async),      cmocka_unit_test(test_lro_location),
        cmocka_unit_test(test_storms),         cmocka_unit_test(test_pacing),
        cmocka_unit_test(test_vm_budget),      cmocka_unit_test(test_region_buckets),
        cmocka_unit_test(test_hold),           cmocka_unit_test(test_default_headroom),
        cmocka_unit_test(test_real_sleep_budget), cmocka_unit_test(test_unknown_region),      cmocka_unit_test(test_token_cache),
        cmocka_unit_test(test_token_threads),
        cmocka_unit_test(test_client_credentials), cmocka_unit_test(test_cred_from_env),
        cmocka_unit_test(test_new_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

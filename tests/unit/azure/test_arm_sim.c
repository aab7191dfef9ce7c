/* test_arm_sim.c - the ARM client against tierwise-azsim (TW_AZSIM, set by
 * tests/CMakeLists.txt; exit 77 without it), started on 127.0.0.1 port 0
 * with tests/fixtures/sim/scenario-basic.json: client credentials at its
 * login, the disk and VM lists, a SKU switch there and back verified, the
 * quota's refusal, a running VM's refusal, a write while another runs
 * (busy), deallocate and start.  Part
 * "limits": the simulator set to ARM's limits (25 reads/s a region) never
 * answers the paced client 429, and does answer an unpaced one.
 * ctest-parts: limits */
#include "testhelp.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "azure/arm.h"

#define SUB "00000000-1111-2222-3333-444444444444"
#define RG "/subscriptions/" SUB "/resourceGroups/rg-advisor-test/providers/Microsoft.Compute"
#define VM1 RG "/virtualMachines/advisor-vm-01"
#define VM2 RG "/virtualMachines/advisor-vm-02"
#define VM1_DATA0 RG "/disks/advisor-vm-01-data0"
#define VM2_DATA0 RG "/disks/advisor-vm-02-data0"
#define TENANT "99999999-8888-7777-6666-555555555555"
#define CLIENT "11111111-2222-3333-4444-555555555555"
#define SECRET "constructed-test-secret"

static pid_t sim_pid;
static char sim_url[64];
static char *sim_dir;

/* Starts the simulator with LIMITS (NULL: none): 0 when it listens, 77
 * when TW_AZSIM is not there (the caller skips), 1 when it failed. */
static int sim_up(const char *limits)
{
    const char *bin = getenv("TW_AZSIM");
    if (!bin || access(bin, X_OK) != 0)
        return 77;
    sim_dir = th_tmpdir();
    char port_file[512], scenario[512];
    snprintf(port_file, sizeof(port_file), "%s/port", sim_dir);
    snprintf(scenario, sizeof(scenario), "%s/sim/scenario-basic.json", TW_FIXTURES);
    sim_pid = fork();
    if (sim_pid < 0)
        return 1;
    if (sim_pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        if (limits)
            execl(bin, bin, "--scenario", scenario, "--listen", "127.0.0.1:0", "--port-file",
                  port_file, "-q", "--arm-limits", limits, (char *)NULL);
        else
            execl(bin, bin, "--scenario", scenario, "--listen", "127.0.0.1:0", "--port-file",
                  port_file, "-q", (char *)NULL);
        _exit(127);
    }
    unsigned port = 0;
    for (int i = 0; i < 500 && !port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%u", &port) != 1)
                port = 0;
            fclose(f);
        }
        if (!port) {
            int st;
            if (waitpid(sim_pid, &st, WNOHANG) == sim_pid) {
                fprintf(stderr, "tierwise-azsim exited (status %d) before listening\n", st);
                return 1;
            }
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (!port) {
        fprintf(stderr, "tierwise-azsim wrote no port in 10 s\n");
        kill(sim_pid, SIGTERM);
        waitpid(sim_pid, NULL, 0);
        return 1;
    }
    snprintf(sim_url, sizeof(sim_url), "http://127.0.0.1:%u", port);
    return 0;
}

static void sim_down(void)
{
    kill(sim_pid, SIGTERM);
    int st;
    waitpid(sim_pid, &st, 0);
    th_rmtree(sim_dir);
    free(sim_dir);
}

static struct tw_arm_cred *login(struct tw_error *err)
{
    struct tw_az_http_opts h;
    tw_az_http_opts_default(&h);
    h.loopback_only = true;
    struct tw_arm_cred_opts co = {.kind = TW_ARM_CRED_CLIENT_SECRET, .login_url = sim_url,
                                  .tenant_id = TENANT, .client_id = CLIENT,
                                  .client_secret = SECRET};
    struct tw_arm_cred *c;
    assert_int_equal(tw_arm_cred_new(&co, &h, &c, err), TW_OK);
    return c;
}

static struct tw_arm *client(struct tw_arm_cred *cred, struct tw_arm_pacer *p, int attempts)
{
    struct tw_arm_opts o = {.arm_url = sim_url, .region = "eastus", .poll_ms = 50,
                            .op_timeout_ms = 20000};
    tw_az_http_opts_default(&o.http);
    o.http.loopback_only = true;
    o.http.max_attempts = attempts;
    struct tw_arm *a;
    struct tw_error err = {0};
    assert_int_equal(tw_arm_new(&o, cred, p, &a, &err), TW_OK);
    return a;
}

struct seen {
    int n;
    char reserved[128];
    struct tw_arm_vm *vm1;
    char vm2_power[32];
};

static enum tw_err on_disk(void *arg, const struct tw_arm_disk *d)
{
    struct seen *s = arg;
    s->n++;
    if (tw_arm_id_equal(d->id, VM2_DATA0))
        snprintf(s->reserved, sizeof(s->reserved), "%s %s %lld", d->disk_state, d->sku,
                 (long long)d->size_gib);
    return TW_OK;
}

static enum tw_err on_vm(void *arg, const struct tw_arm_vm *vm)
{
    struct seen *s = arg;
    s->n++;
    if (tw_arm_id_equal(vm->vm.resource_id, VM1))
        *s->vm1 = *vm;
    if (tw_arm_id_equal(vm->vm.resource_id, VM2))
        snprintf(s->vm2_power, sizeof(s->vm2_power), "%s", vm->power_state);
    return TW_OK;
}

static void switch_sku(struct tw_arm *a, const char *disk, const char *sku)
{
    struct tw_arm_op op;
    struct tw_error err = {0};
    if (tw_arm_disk_set_sku(a, disk, sku, &op, &err) != TW_OK ||
        tw_arm_op_wait(a, &op, &err) != TW_OK)
        fail_msg("%s to %s: %s", disk, sku, err.msg);
    bool ok = false;
    struct tw_arm_disk d;
    assert_int_equal(tw_arm_disk_verify(a, disk, sku, &ok, &d, &err), TW_OK);
    if (!ok)
        fail_msg("%s reads back %s %s", disk, d.sku, d.provisioning_state);
}

static void test_against_sim(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_arm_cred *cred = login(&err);
    struct tw_arm_pacer *pacer;
    assert_int_equal(tw_arm_pacer_new(NULL, &pacer, &err), TW_OK);
    struct tw_arm *a = client(cred, pacer, 4);

    struct seen s = {0};
    s.vm1 = calloc(1, sizeof(*s.vm1));
    assert_int_equal(tw_arm_disks_list(a, SUB, NULL, on_disk, &s, &err), TW_OK);
    assert_int_equal(s.n, 6);
    assert_string_equal(s.reserved, "Reserved Premium_LRS 2048");
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    s.n = 0;
    assert_int_equal(tw_arm_disks_list(a, SUB, "rg-advisor-test", on_disk, &s, &err), TW_OK);
    assert_true(s.n >= 5);

    s.n = 0;
    if (tw_arm_vms_list(a, SUB, NULL, on_vm, &s, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.vm1->power_state, "running");
    assert_string_equal(s.vm1->vm.vm_size, "Standard_D2s_v3");
    assert_string_equal(s.vm1->os_disk_caching, "ReadWrite");
    assert_non_null(strstr(s.vm1->os_disk_name, "advisor-vm-01_OsDisk"));
    assert_int_equal(s.vm1->n_data, 2);
    assert_string_equal(s.vm1->data[0].caching, "ReadOnly");
    assert_true(tw_arm_id_equal(s.vm1->data[0].id, VM1_DATA0));
    assert_string_equal(s.vm2_power, "deallocated");
    free(s.vm1);

    struct tw_arm_vm *vm = malloc(sizeof(*vm));
    assert_int_equal(tw_arm_vm_get(a, VM2, vm, &err), TW_OK);
    assert_string_equal(vm->power_state, "deallocated");
    free(vm);

    /* A switch while deallocated, there and back: the quota's two. */
    switch_sku(a, VM2_DATA0, "StandardSSD_LRS");
    switch_sku(a, VM2_DATA0, "Premium_LRS");
    struct tw_arm_op op;
    assert_int_not_equal(tw_arm_disk_set_sku(a, VM2_DATA0, "Standard_LRS", &op, &err), TW_OK);
    assert_int_equal(tw_arm_last_error(a)->fault, TW_ARM_FAULT_NOT_ALLOWED);
    assert_string_equal(tw_arm_last_error(a)->code, "OperationNotAllowed");
    /* A running VM's disk: a conflict. */
    assert_int_not_equal(tw_arm_disk_set_sku(a, VM1_DATA0, "StandardSSD_LRS", &op, &err), TW_OK);
    assert_int_equal(tw_arm_last_error(a)->fault, TW_ARM_FAULT_CONFLICT);

    /* Deallocate and start, each followed to its end. */
    char power[32];
    assert_int_equal(tw_arm_vm_deallocate(a, VM1, &op, &err), TW_OK);
    assert_int_equal(tw_arm_op_wait(a, &op, &err), TW_OK);
    assert_int_equal(tw_arm_vm_power(a, VM1, power, sizeof(power), &err), TW_OK);
    assert_string_equal(power, "deallocated");
    /* A second write while the first runs: busy, retry later. */
    assert_int_equal(tw_arm_disk_set_sku(a, VM1_DATA0, "StandardSSD_LRS", &op, &err), TW_OK);
    struct tw_arm_op op2;
    assert_int_not_equal(tw_arm_disk_set_sku(a, VM1_DATA0, "Standard_LRS", &op2, &err), TW_OK);
    assert_int_equal(tw_arm_last_error(a)->fault, TW_ARM_FAULT_BUSY);
    assert_int_equal(tw_arm_op_wait(a, &op, &err), TW_OK);
    bool ok = false;
    assert_int_equal(tw_arm_disk_verify(a, VM1_DATA0, "StandardSSD_LRS", &ok, NULL, &err), TW_OK);
    assert_true(ok);
    assert_int_equal(tw_arm_vm_start(a, VM1, &op, &err), TW_OK);
    assert_int_equal(tw_arm_op_wait(a, &op, &err), TW_OK);
    assert_int_equal(tw_arm_vm_power(a, VM1, power, sizeof(power), &err), TW_OK);
    assert_string_equal(power, "running");
    assert_int_equal(tw_arm_cred_fetches(cred), 1);
    tw_arm_free(a);
    tw_arm_pacer_free(pacer);
    tw_arm_cred_free(cred);

    /* A wrong secret: the login's refusal, not the secret. */
    struct tw_az_http_opts h;
    tw_az_http_opts_default(&h);
    h.loopback_only = true;
    struct tw_arm_cred_opts bad = {.kind = TW_ARM_CRED_CLIENT_SECRET, .login_url = sim_url,
                                   .tenant_id = TENANT, .client_id = CLIENT,
                                   .client_secret = "wrong-Secret-77"};
    assert_int_equal(tw_arm_cred_new(&bad, &h, &cred, &err), TW_OK);
    char t[64];
    assert_int_equal(tw_arm_cred_token(cred, t, sizeof(t), &err), TW_EPERM);
    assert_null(strstr(err.msg, "wrong-Secret-77"));
    assert_non_null(strstr(err.msg, "invalid_client"));
    tw_arm_cred_free(cred);
}

/* The simulator's counters: how many 429s it answered. */
static long throttled(bool reset)
{
    struct tw_az_http_opts h;
    tw_az_http_opts_default(&h);
    h.loopback_only = true;
    struct tw_error err = {0};
    struct tw_az_http *c = tw_az_http_new(&h, &err);
    char url[128];
    snprintf(url, sizeof(url), "%s/_sim/counters", sim_url);
    struct tw_az_http_resp r;
    assert_int_equal(tw_az_http_request(c, reset ? "DELETE" : "GET", url, NULL, NULL, 0, &r, &err),
                     TW_OK);
    json_t *doc = json_loadb(r.body.data, r.body.len, 0, NULL);
    assert_non_null(doc);
    long n = (long)json_integer_value(json_object_get(doc, "throttled"));
    json_decref(doc);
    tw_az_http_resp_cleanup(&r);
    tw_az_http_free(c);
    return n;
}

static void test_limits(void **state)
{
    (void)state;
    struct tw_error err = {0};
    struct tw_arm_cred *cred = login(&err);
    struct tw_arm_pacer *paced, *unpaced;
    assert_int_equal(tw_arm_pacer_new(NULL, &paced, &err), TW_OK);
    struct tw_arm_pace_opts off = {.off = true};
    assert_int_equal(tw_arm_pacer_new(&off, &unpaced, &err), TW_OK);
    struct tw_arm_disk d;
    /* Paced: 70 reads at ARM's 25 a second, not one 429 (a pacer token
     * per attempt, so 70 tokens means no attempt was retried). */
    struct tw_arm *a = client(cred, paced, 8);
    throttled(true);
    for (int i = 0; i < 70; i++)
        if (tw_arm_disk_get(a, VM2_DATA0, &d, &err) != TW_OK)
            fail_msg("read %d: %s", i, err.msg);
    assert_int_equal(throttled(false), 0);
    assert_int_equal(tw_arm_pacer_taken(paced), 70);
    assert_true(tw_arm_pacer_waited_ms(paced) >= 1500);
    tw_arm_free(a);
    /* Unpaced: the same reads trip the limit (and are retried through it). */
    a = client(cred, unpaced, 8);
    throttled(true);
    for (int i = 0; i < 70; i++)
        if (tw_arm_disk_get(a, VM2_DATA0, &d, &err) != TW_OK)
            fail_msg("read %d: %s", i, err.msg);
    assert_true(throttled(false) > 0);
    assert_true(tw_arm_pacer_taken(unpaced) > 70);
    tw_arm_free(a);
    tw_arm_pacer_free(paced);
    tw_arm_pacer_free(unpaced);
    tw_arm_cred_free(cred);
}

int main(int argc, char **argv)
{
    setenv("TIERWISE_LOOPBACK_ONLY", "1", 1);
    bool limits = argc > 1 && strcmp(argv[1], "limits") == 0;
    if (argc > 1 && !limits) {
        fprintf(stderr, "unknown part %s\n", argv[1]);
        return 2;
    }
    int up = sim_up(limits ? "25,10,1,4" : NULL);
    if (up == 77)
        fprintf(stderr, "test_arm_sim: TW_AZSIM is not an executable; skipped\n");
    if (up != 0)
        return up;
    const struct CMUnitTest main_tests[] = {cmocka_unit_test(test_against_sim)};
    const struct CMUnitTest limit_tests[] = {cmocka_unit_test(test_limits)};
    int rc = limits ? cmocka_run_group_tests(limit_tests, NULL, NULL)
                    : cmocka_run_group_tests(main_tests, NULL, NULL);
    sim_down();
    return rc;
}

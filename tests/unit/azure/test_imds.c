/* test_imds.c - the IMDS instance parser on the documented samples and on
 * broken documents, and the fetch against a loopback server. */
#include "testhelp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "azure/imds.h"
#include "fakesrv.h"

static struct tw_inventory inv; /* ~110 KiB: not on the stack */

static const char *tag(const struct tw_vm *vm, const char *key)
{
    for (size_t i = 0; i < vm->n_tags; i++)
        if (strcmp(vm->tags[i].key, key) == 0)
            return vm->tags[i].value;
    return NULL;
}

/* What was parsed must write out and read back the same. */
static void round_trip(const struct tw_inventory *a)
{
    static struct tw_inventory b;
    struct tw_error err = {0};
    json_t *v = tw_inventory_to_value(a);
    assert_non_null(v);
    char *s = json_dumps(v, 0);
    json_decref(v);
    assert_non_null(s);
    if (tw_inventory_from_json(s, strlen(s), &b, &err) != TW_OK)
        fail_msg("round trip: %s", err.msg);
    free(s);
    assert_int_equal(b.n_disks, a->n_disks);
    assert_int_equal(b.vm.n_tags, a->vm.n_tags);
    assert_string_equal(b.vm.name, a->vm.name);
    for (size_t i = 0; i < a->n_disks; i++) {
        assert_string_equal(b.disks[i].name, a->disks[i].name);
        assert_int_equal(b.disks[i].lun, a->disks[i].lun);
        assert_int_equal(b.disks[i].size_gib, a->disks[i].size_gib);
        assert_int_equal(b.disks[i].caching, a->disks[i].caching);
        assert_string_equal(b.disks[i].sku, a->disks[i].sku);
    }
}

static void test_real_docs_sample(void **state)
{
    (void)state;
    size_t len;
    char *doc = th_fixture("imds/real-docs-linux-instance.json", &len);
    struct tw_error err = {0};
    if (tw_az_imds_parse(doc, len, &inv, &err) != TW_OK)
        fail_msg("%s", err.msg);
    free(doc);
    const struct tw_vm *vm = &inv.vm;
    assert_string_equal(vm->name, "examplevmname");
    assert_string_equal(vm->vm_size, "Standard_A3");
    assert_string_equal(vm->location, "westus");
    assert_string_equal(vm->subscription_id, "xxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxx");
    assert_string_equal(vm->resource_group, "macikgo-test-may-23");
    assert_string_equal(vm->resource_id,
                        "/subscriptions/xxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxx/resourceGroups/"
                        "macikgo-test-may-23/providers/Microsoft.Compute/virtualMachines/"
                        "examplevmname");
    /* Only the "k:v;k2:v2" string here. */
    assert_int_equal(vm->n_tags, 2);
    assert_string_equal(tag(vm, "baz"), "bash");
    assert_string_equal(tag(vm, "foo"), "bar");

    assert_int_equal(inv.n_disks, 2);
    const struct tw_disk *os = &inv.disks[0], *d = &inv.disks[1];
    assert_string_equal(os->name, "exampleosdiskname");
    assert_int_equal(os->role, TW_DISK_OS);
    assert_int_equal(os->lun, -1);
    assert_string_equal(os->sku, "StandardSSD_LRS");
    assert_int_equal(os->size_gib, 30);
    assert_int_equal(os->caching, TW_CACHE_READWRITE);
    assert_false(os->write_accelerator);
    assert_non_null(strstr(os->managed_disk_id, "/disks/exampleosdiskname"));
    assert_string_equal(os->tier, "");
    assert_string_equal(os->device, "");

    assert_string_equal(d->name, "exampledatadiskname");
    assert_int_equal(d->role, TW_DISK_DATA);
    assert_int_equal(d->lun, 0);
    assert_string_equal(d->sku, "StandardSSD_LRS");
    assert_int_equal(d->size_gib, 1024);
    assert_int_equal(d->caching, TW_CACHE_NONE);
    assert_false(d->write_accelerator);
    assert_non_null(strstr(d->managed_disk_id, "/disks/exampledatadiskname"));
    round_trip(&inv);
}

static void test_constructed_sample(void **state)
{
    (void)state;
    size_t len;
    char *doc = th_fixture("imds/constructed-d2s-v3-two-data-disks.json", &len);
    struct tw_error err = {0};
    if (tw_az_imds_parse(doc, len, &inv, &err) != TW_OK)
        fail_msg("%s", err.msg);
    free(doc);
    assert_string_equal(inv.vm.name, "advisor-vm-01");
    assert_string_equal(inv.vm.vm_size, "Standard_D2s_v3");
    assert_string_equal(inv.vm.location, "eastus");
    assert_string_equal(inv.vm.resource_group, "rg-advisor-test");
    assert_string_equal(inv.vm.subscription_id, "00000000-1111-2222-3333-444444444444");
    assert_int_equal(inv.vm.n_tags, 2);
    assert_string_equal(tag(&inv.vm, "env"), "test");
    assert_string_equal(tag(&inv.vm, "owner"), "advisor");
    assert_int_equal(inv.n_disks, 3);
    assert_int_equal(inv.disks[0].role, TW_DISK_OS);
    assert_string_equal(inv.disks[0].sku, "Premium_LRS");
    assert_int_equal(inv.disks[0].size_gib, 30);
    assert_string_equal(inv.disks[1].name, "advisor-vm-01-data0");
    assert_int_equal(inv.disks[1].lun, 0);
    assert_string_equal(inv.disks[1].sku, "Premium_LRS");
    assert_int_equal(inv.disks[1].size_gib, 128);
    assert_int_equal(inv.disks[1].caching, TW_CACHE_READONLY);
    assert_string_equal(inv.disks[2].name, "advisor-vm-01-data1");
    assert_int_equal(inv.disks[2].lun, 1);
    assert_string_equal(inv.disks[2].sku, "StandardSSD_LRS");
    assert_int_equal(inv.disks[2].size_gib, 256);
    assert_int_equal(inv.disks[2].caching, TW_CACHE_NONE);
    round_trip(&inv);
}

/* A minimal document with COMPUTE_EXTRA spliced into compute and DISKS as
 * dataDisks. */
static char *doc_with(const char *compute_extra, const char *disks)
{
    char *s = malloc(16384);
    assert_non_null(s);
    snprintf(s, 16384,
             "{\"compute\": {\"name\": \"vm1\", \"vmSize\": \"Standard_E8s_v3\", "
             "\"location\": \"westeurope\"%s, \"storageProfile\": {\"osDisk\": {\"name\": "
             "\"os\", \"caching\": \"ReadWrite\", \"diskSizeGB\": \"64\", \"managedDisk\": "
             "{\"id\": \"\", \"storageAccountType\": \"Premium_LRS\"}}, \"dataDisks\": %s}}}",
             compute_extra, disks);
    return s;
}

static void test_strings_and_tags(void **state)
{
    (void)state;
    struct tw_error err = {0};
    /* IMDS strings in any case, JSON numbers and booleans leniently. */
    char *d = doc_with(", \"tags\": \"a:1;b:2:3;;c;:x;a:dup\"",
                       "[{\"name\": \"d0\", \"lun\": \"3\", \"diskSizeGB\": \"1024\", "
                       "\"caching\": \"readonly\", \"writeAcceleratorEnabled\": \"TRUE\", "
                       "\"managedDisk\": {\"storageAccountType\": \"Premium_LRS\"}},"
                       "{\"name\": \"d1\", \"lun\": 4, \"diskSizeGB\": 2048, \"caching\": \"\","
                       " \"writeAcceleratorEnabled\": false, \"tier\": \"P50\"},"
                       "{\"name\": \"d2\", \"lun\": \"5\", \"diskSizeGB\": \"\", "
                       "\"managedDisk\": {\"id\": \"\", \"storageAccountType\": \"\"}}]");
    if (tw_az_imds_parse(d, strlen(d), &inv, &err) != TW_OK)
        fail_msg("%s", err.msg);
    free(d);
    assert_int_equal(inv.vm.n_tags, 3);
    assert_string_equal(tag(&inv.vm, "a"), "1");   /* the repeat is dropped */
    assert_string_equal(tag(&inv.vm, "b"), "2:3"); /* value keeps its colons */
    assert_string_equal(tag(&inv.vm, "c"), "");    /* a name without a value */
    assert_int_equal(inv.n_disks, 4);
    assert_int_equal(inv.disks[1].lun, 3);
    assert_int_equal(inv.disks[1].caching, TW_CACHE_READONLY);
    assert_true(inv.disks[1].write_accelerator);
    assert_int_equal(inv.disks[2].lun, 4);
    assert_int_equal(inv.disks[2].size_gib, 2048);
    assert_string_equal(inv.disks[2].tier, "P50");
    assert_int_equal(inv.disks[2].caching, TW_CACHE_NONE);
    assert_string_equal(inv.disks[2].sku, "");  /* no managedDisk at all */
    assert_int_equal(inv.disks[3].size_gib, 0); /* "" = unknown */
    round_trip(&inv);

    /* tagsList wins over the string, and can carry ';' and ':'. */
    d = doc_with(", \"tags\": \"x:y\", \"tagsList\": [{\"name\": \"k;1\", \"value\": \"v:2;3\"},"
                 "{\"name\": \"empty\", \"value\": \"\"}]",
                 "[]");
    if (tw_az_imds_parse(d, strlen(d), &inv, &err) != TW_OK)
        fail_msg("%s", err.msg);
    free(d);
    assert_int_equal(inv.vm.n_tags, 2);
    assert_string_equal(tag(&inv.vm, "k;1"), "v:2;3");
    assert_string_equal(tag(&inv.vm, "empty"), "");
    assert_null(tag(&inv.vm, "x"));
    assert_int_equal(inv.n_disks, 1);

    /* Keys in another case (the docs' "Priority" typo) still count. */
    const char *odd = "{\"Compute\": {\"Name\": \"vm\", \"VMSize\": \"S\", \"location\": \"l\", "
                      "\"storageprofile\": {\"OSDisk\": {\"name\": \"o\"}}}}";
    assert_int_equal(tw_az_imds_parse(odd, strlen(odd), &inv, &err), TW_OK);
    assert_string_equal(inv.vm.vm_size, "S");
    assert_int_equal(inv.n_disks, 1);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *extra, *disks, *words;
    } cases[] = {
        {"", "[{\"lun\": \"0\"}]", "dataDisks[0].name is missing"},
        {"", "[{\"name\": \"a\"}]", "dataDisks[0].lun is missing"},
        {"", "[{\"name\": \"a\", \"lun\": \"\"}]", "dataDisks[0].lun must not be empty"},
        {"", "[{\"name\": \"a\", \"lun\": \"x1\"}]", "dataDisks[0].lun must be an integer from 0 to 255, got \"x1\""},
        {"", "[{\"name\": \"a\", \"lun\": \"-1\"}]", "dataDisks[0].lun must be an integer from 0 to 255, got \"-1\""},
        {"", "[{\"name\": \"a\", \"lun\": \"300\"}]", "dataDisks[0].lun must be an integer from 0 to 255, got 300"},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"diskSizeGB\": \"12GB\"}]",
         "dataDisks[0].diskSizeGB must be an integer from 0 to 1048576 or null, got \"12GB\""},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"diskSizeGB\": \"99999999\"}]",
         "diskSizeGB must be an integer from 0 to 1048576 or null, got 99999999"},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"caching\": \"Sometimes\"}]",
         "dataDisks[0].caching \"Sometimes\" is not None, ReadOnly or ReadWrite"},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"writeAcceleratorEnabled\": \"maybe\"}]",
         "dataDisks[0].writeAcceleratorEnabled must be \"true\" or \"false\""},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"managedDisk\": \"x\"}]",
         "dataDisks[0].managedDisk must be an object"},
        {"", "[{\"name\": \"a\", \"lun\": \"0\", \"managedDisk\": {\"id\": 7}}]",
         "dataDisks[0].managedDisk.id must be a string"},
        {"", "[{\"name\": \"a\", \"lun\": \"1\"}, {\"name\": \"b\", \"lun\": \"1\"}]",
         "dataDisks[1].lun 1 is also dataDisks[0]'s"},
        {"", "[7]", "dataDisks[0] must be an object"},
        {"", "{}", "dataDisks must be an array"},
        {", \"tags\": 5", "[]", "compute.tags must be a string"},
        {", \"tagsList\": [{\"name\": 1}]", "[]", "compute.tagsList[0] must be"},
        {", \"tagsList\": {}", "[]", "compute.tagsList must be an array"},
        {", \"resourceGroupName\": false", "[]", "compute.resourceGroupName must be a string"},
    };
    struct tw_error err = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *d = doc_with(cases[i].extra, cases[i].disks);
        enum tw_err rc = tw_az_imds_parse(d, strlen(d), &inv, &err);
        free(d);
        if (rc != TW_EPARSE || !strstr(err.msg, cases[i].words))
            fail_msg("case %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, cases[i].words);
        assert_int_equal(inv.n_disks, 0); /* emptied on failure */
        assert_string_equal(inv.vm.name, "");
    }

    static const struct {
        const char *doc, *words;
    } docs[] = {
        {"", "not valid JSON"},
        {"[1, 2]", "not a JSON object"},
        {"{}", "compute is missing"},
        {"{\"compute\": []}", "compute must be an object"},
        {"{\"compute\": {\"vmSize\": \"S\", \"location\": \"l\"}}", "compute.name is missing"},
        {"{\"compute\": {\"name\": \"\", \"vmSize\": \"S\", \"location\": \"l\"}}",
         "compute.name must not be empty"},
        {"{\"compute\": {\"name\": \"v\", \"vmSize\": 3, \"location\": \"l\"}}",
         "compute.vmSize must be a string"},
        {"{\"compute\": {\"name\": \"v\", \"vmSize\": \"S\"}}", "compute.location is missing"},
        {"{\"compute\": {\"name\": \"v\", \"vmSize\": \"S\", \"location\": \"l\"}}",
         "compute.storageProfile is missing (IMDS gives it from api-version 2019-06-01"},
        {"{\"compute\": {\"name\": \"v\", \"vmSize\": \"S\", \"location\": \"l\", "
         "\"storageProfile\": {}}}",
         "compute.storageProfile.osDisk is missing"},
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
        enum tw_err rc = tw_az_imds_parse(docs[i].doc, strlen(docs[i].doc), &inv, &err);
        if (rc != TW_EPARSE || !strstr(err.msg, docs[i].words))
            fail_msg("doc %zu: rc %d, \"%s\" lacks \"%s\"", i, rc, err.msg, docs[i].words);
    }
}

static void test_truncated_and_limits(void **state)
{
    (void)state;
    size_t len;
    char *doc = th_fixture("imds/constructed-d2s-v3-two-data-disks.json", &len);
    struct tw_error err = {0};
    /* Cut in the middle: a JSON error with its position. */
    assert_int_equal(tw_az_imds_parse(doc, len / 2, &inv, &err), TW_EPARSE);
    assert_true(err.line > 1);
    assert_non_null(strstr(err.msg, "not valid JSON at line"));
    free(doc);

    /* More data disks than an inventory holds. */
    char *disks = malloc(8192), *p = disks;
    p += sprintf(p, "[");
    for (int i = 0; i < TW_INV_MAX_DISKS; i++)
        p += sprintf(p, "%s{\"name\": \"d%d\", \"lun\": \"%d\"}", i ? "," : "", i, i);
    sprintf(p, "]");
    char *d = doc_with("", disks);
    assert_int_equal(tw_az_imds_parse(d, strlen(d), &inv, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "dataDisks has 72 disks"));
    free(d);
    free(disks);

    /* A name longer than the model holds is refused, not cut. */
    char longname[300];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    char extra[400];
    snprintf(extra, sizeof(extra), "[{\"name\": \"%s\", \"lun\": \"0\"}]", longname);
    d = doc_with("", extra);
    assert_int_equal(tw_az_imds_parse(d, strlen(d), &inv, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "dataDisks[0].name is too long (299 bytes, at most 127)"));
    free(d);

    /* 65 tags are more than the model keeps. */
    char tags[2048] = ", \"tags\": \"";
    for (int i = 0; i < 65; i++)
        snprintf(tags + strlen(tags), sizeof(tags) - strlen(tags), "t%d:v;", i);
    strcat(tags, "\"");
    d = doc_with(tags, "[]");
    assert_int_equal(tw_az_imds_parse(d, strlen(d), &inv, &err), TW_EPARSE);
    assert_non_null(strstr(err.msg, "more than 64 tags"));
    free(d);
}

static void test_fetch(void **state)
{
    (void)state;
    size_t len;
    char *doc = th_fixture("imds/constructed-d2s-v3-two-data-disks.json", &len);
    /* IMDS busy once (it limits callers to 5 requests a second), then the
     * document. */
    struct fakesrv *s = fs_start((struct fs_reply[]){{429, "", NULL, 0}, {200, doc, NULL, 0}, {0}});
    free(doc);
    assert_non_null(s);
    struct fs_sleeps z = {0};
    struct tw_az_http_opts o;
    tw_az_http_opts_imds(&o);
    o.loopback_only = true;
    o.sleep_ms = fs_sleep;
    o.sleep_arg = &z;
    struct tw_error err = {0};
    bool unreachable = true;
    if (tw_az_imds_fetch(&o, s->base, &inv, &unreachable, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_false(unreachable);
    assert_int_equal(fs_requests(s), 2);
    assert_string_equal(s->path, "/metadata/instance");
    assert_string_equal(s->api_version, "2021-02-01");
    assert_string_equal(s->metadata, "true");
    assert_string_equal(s->forwarded, "");
    assert_string_equal(inv.vm.name, "advisor-vm-01");
    assert_int_equal(inv.n_disks, 3);

    /* IMDS answers, but with an error: reachable, and not OK. */
    fs_script(
        s, (struct fs_reply[]){
               {400, "{\"error\": \"Bad request. api-version was not specified in the request\"}",
                NULL, 0},
               {0}});
    assert_int_equal(tw_az_imds_fetch(&o, s->base, &inv, &unreachable, &err), TW_EINVAL);
    assert_false(unreachable);
    assert_non_null(strstr(err.msg, "api-version was not specified"));

    /* IMDS answers nonsense: a parse error naming the field. */
    fs_script(s, (struct fs_reply[]){{200, "{\"compute\": {}}", NULL, 0}, {0}});
    assert_int_equal(tw_az_imds_fetch(&o, s->base, &inv, &unreachable, &err), TW_EPARSE);
    assert_false(unreachable);
    assert_non_null(strstr(err.msg, "compute.name is missing"));
    fs_stop(s);

    /* Nothing listening: unreachable, which the agent reports as "not on
     * Azure". */
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u", (unsigned)fs_closed_port());
    assert_int_equal(tw_az_imds_fetch(&o, url, &inv, &unreachable, &err), TW_EIO);
    assert_true(unreachable);
    assert_non_null(strstr(err.msg, "connection refused"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_docs_sample),     cmocka_unit_test(test_constructed_sample),
        cmocka_unit_test(test_strings_and_tags),     cmocka_unit_test(test_errors),
        cmocka_unit_test(test_truncated_and_limits), cmocka_unit_test(test_fetch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

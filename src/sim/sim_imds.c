/*
 * sim_imds.c - the Instance Metadata Service: /metadata/instance (and its
 * sub-paths) and /metadata/versions, for the scenario's "self" VM.
 *
 * Shape and order follow ../shared/azure-api/imds-instance-constructed.json
 * (api-version >= 2021-11-15); every primitive is a string, as IMDS sends
 * them ("lun": "0", "diskSizeGB": "128"), and values that don't apply are
 * "".  The whole shape is served whatever the api-version.  Disks show
 * their current SKU, so a switch made through ARM shows here too.
 */
#include "sim/sim_int.h"

#include "core/buf.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Versions named in imds.md (the docs' table and examples). */
static const char *const versions[] = {
    "2017-03-01", "2017-04-02", "2017-08-01", "2019-03-11", "2019-06-01", "2019-06-04",
    "2020-07-15", "2020-09-01", "2020-10-01", "2021-02-01", "2021-03-01", "2021-05-01",
    "2021-08-01", "2021-10-01", "2021-11-01", "2021-11-15", "2021-12-13",
};

struct dup_scan {
    const char *keys[32];
    size_t n;
    const char *dup;
};

static enum MHD_Result scan_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    struct dup_scan *d = cls;
    (void)kind;
    (void)value;
    for (size_t i = 0; i < d->n; i++) {
        if (strcmp(d->keys[i], key) == 0) {
            d->dup = d->keys[i];
            return MHD_NO;
        }
    }
    if (d->n < sizeof(d->keys) / sizeof(d->keys[0]))
        d->keys[d->n++] = key;
    return MHD_YES;
}

bool sim_imds_check(const struct sim_req *rq, struct sim_resp *rs, bool identity)
{
    /* IMDS refuses requests that came through a proxy (imds.md 1).  The
     * body text is constructed; only the refusal is documented. */
    if (sim_hdr(rq, "X-Forwarded-For")) {
        if (identity)
            sim_json(rs, 400,
                     json_pack("{s:s, s:s}", "error", "invalid_request", "error_description",
                               "Requests with an X-Forwarded-For header are refused"));
        else
            sim_json(rs, 400,
                     json_pack("{s:s}", "error",
                               "Bad request. Requests with an X-Forwarded-For header "
                               "are refused"));
        return false;
    }
    const char *md = sim_hdr(rq, "Metadata");
    /* The identity endpoint wants exactly "true" (imds.md 3). */
    if (!md || (identity ? strcmp(md, "true") != 0 : strcasecmp(md, "true") != 0)) {
        if (identity) /* imds-token-sample.json "error_missing_metadata_header" */
            sim_json(rs, 400,
                     json_pack("{s:s, s:s}", "error", "bad_request_102", "error_description",
                               "Required metadata header not specified"));
        else /* the FAQ's wording, in the {"error": ...} shape (imds.md 4) */
            sim_json(
                rs, 400,
                json_pack("{s:s}", "error", "Bad request. Required metadata header not specified"));
        return false;
    }
    struct dup_scan d = {.n = 0};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, scan_arg, &d);
    if (d.dup) {
        char msg[200];
        snprintf(msg, sizeof(msg), "Bad request. Query parameter '%.64s' is given more than once",
                 d.dup);
        sim_json(rs, 400,
                 identity
                     ? json_pack("{s:s, s:s}", "error", "invalid_request", "error_description", msg)
                     : json_pack("{s:s}", "error", msg));
        return false;
    }
    return true;
}

static json_t *s_empty(void)
{
    return json_string("");
}

static void disk_id(const struct tw_sim_disk *d, char *out, size_t n)
{
    snprintf(out, n, "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/disks/%s",
             d->subscription_id, d->resource_group, d->name);
}

static json_t *data_disk(const struct tw_sim_disk *d)
{
    char id[400], size[24], lun[8];
    disk_id(d, id, sizeof(id));
    snprintf(size, sizeof(size), "%lld", (long long)d->size_gib);
    snprintf(lun, sizeof(lun), "%d", d->lun);
    bool ultra = strcmp(d->sku, "UltraSSD_LRS") == 0;
    /* Throttle and capacity fields are only filled for Ultra Disks
     * (imds.md 2); the sim has no provisioned figures, so they stay "". */
    return json_pack("{s:o, s:s, s:s, s:o, s:s, s:{s:s}, s:s, s:s, s:s, s:{s:s, s:s}, s:s, s:o, "
                     "s:{s:s}, s:s}",
                     "bytesPerSecondThrottle", s_empty(), "caching", d->caching, "createOption",
                     d->create_option, "diskCapacityBytes", s_empty(), "diskSizeGB", size, "image",
                     "uri", "", "isSharedDisk", "false", "isUltraDisk", ultra ? "true" : "false",
                     "lun", lun, "managedDisk", "id", id, "storageAccountType", d->sku, "name",
                     d->name, "opsPerSecondThrottle", s_empty(), "vhd", "uri", "",
                     "writeAcceleratorEnabled", d->write_accelerator ? "true" : "false");
}

static json_t *os_disk(const struct tw_sim_vm *vm, const struct tw_sim_disk *d)
{
    char id[400] = "", size[24] = "";
    if (d) {
        disk_id(d, id, sizeof(id));
        snprintf(size, sizeof(size), "%lld", (long long)d->size_gib);
    }
    return json_pack("{s:s, s:s, s:{s:s}, s:s, s:{s:s}, s:{s:s}, s:{s:s, s:s}, s:s, s:s, s:{s:s}, "
                     "s:s}",
                     "caching", d ? d->caching : "", "createOption", d ? d->create_option : "",
                     "diffDiskSettings", "option", "", "diskSizeGB", size, "encryptionSettings",
                     "enabled", "false", "image", "uri", "", "managedDisk", "id", id,
                     "storageAccountType", d ? d->sku : "", "name", d ? d->name : "", "osType",
                     vm->os_type, "vhd", "uri", "", "writeAcceleratorEnabled",
                     d && d->write_accelerator ? "true" : "false");
}

static json_t *build_instance(const struct tw_sim *sim, long vi)
{
    const struct tw_sim_scenario *sc = sim->sc;
    const struct tw_sim_vm *vm = &sc->vms[vi];
    char rid[400];
    struct tw_buf tags; /* 50 tags of 512 + 256 bytes fit; more is cut at a tag */
    tw_buf_init(&tags, 64 * 1024);
    snprintf(rid, sizeof(rid),
             "/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Compute/virtualMachines/%s",
             vm->subscription_id, vm->resource_group, vm->name);

    /* tags is one "name:value;name:value" string; tagsList the same as
     * objects (imds.md 2). */
    json_t *tags_list = json_array();
    const char *k;
    json_t *v;
    size_t tl = 0;
    json_object_foreach(vm->tags, k, v)
    {
        size_t before = tags.len;
        if ((tl && tw_buf_puts(&tags, ";") != TW_OK) || tw_buf_puts(&tags, k) != TW_OK ||
            tw_buf_puts(&tags, ":") != TW_OK ||
            tw_buf_puts(&tags, json_string_value(v)) != TW_OK) {
            tags.len = before; /* keep whole tags only */
            if (tags.data)
                tags.data[before] = '\0';
        }
        tl = tags.len;
        json_array_append_new(tags_list, json_pack("{s:s, s:O}", "name", k, "value", v));
    }
    json_t *tags_str = json_string(tags.data ? tags.data : "");
    tw_buf_cleanup(&tags);

    json_t *data = json_array();
    const struct tw_sim_disk *os = NULL;
    for (int lun = -1; lun < 64; lun++) {
        for (size_t i = 0; i < sc->n_disks; i++) {
            const struct tw_sim_disk *d = &sc->disks[i];
            if (d->vm != vi)
                continue;
            if (lun < 0 && d->os)
                os = d;
            else if (!d->os && d->lun == lun)
                json_array_append_new(data, data_disk(d));
        }
    }

    char subnet[46];
    snprintf(subnet, sizeof(subnet), "%s", vm->private_ip);
    char *dot = strrchr(subnet, '.');
    if (dot)
        snprintf(dot, sizeof(subnet) - (size_t)(dot - subnet), ".0");

    json_t *compute = json_pack(
        "{s:s, s:{s:s}, s:s, s:{s:s, s:s}, s:{s:s}, s:{s:s}, s:s, s:s, s:s, s:s, s:s, "
        "s:{s:s, s:s, s:s}, s:s, s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:[], s:s, "
        "s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:s}",
        "azEnvironment", "AzurePublicCloud", "additionalCapabilities", "hibernationEnabled",
        "false", "evictionPolicy", "", "extendedLocation", "type", "", "name", "", "host", "id", "",
        "hostGroup", "id", "", "isHostCompatibilityLayerVm", "false", "licenseType", "", "location",
        vm->location, "name", vm->name, "offer", vm->image_offer, "osProfile", "adminUsername",
        vm->admin_username, "computerName", vm->computer_name, "disablePasswordAuthentication",
        "true", "osType", vm->os_type, "placementGroupId", "", "plan", "name", "", "product", "",
        "publisher", "", "platformFaultDomain", "0", "platformSubFaultDomain", "",
        "platformUpdateDomain", "0", "priority", "Regular", "provider", "Microsoft.Compute",
        "publicKeys", "publisher", vm->image_publisher, "resourceGroupName", vm->resource_group,
        "resourceId", rid, "securityProfile", "secureBootEnabled", "true", "virtualTpmEnabled",
        "true", "encryptionAtHost", "false", "securityType", "TrustedLaunch", "sku", vm->image_sku);
    if (!compute || !tags_list || !data || !tags_str) {
        json_decref(compute);
        json_decref(tags_list);
        json_decref(data);
        json_decref(tags_str);
        return NULL;
    }
    json_object_set_new(compute, "storageProfile",
                        json_pack("{s:o, s:{s:s, s:s, s:s, s:s, s:s}, s:o, s:{s:s}}", "dataDisks",
                                  data, "imageReference", "id", "", "offer", vm->image_offer,
                                  "publisher", vm->image_publisher, "sku", vm->image_sku, "version",
                                  vm->image_version, "osDisk", os_disk(vm, os), "resourceDisk",
                                  "size", "16384"));
    json_object_set_new(compute, "subscriptionId", json_string(vm->subscription_id));
    json_object_set_new(compute, "tags", tags_str);
    json_object_set_new(compute, "tagsList", tags_list);
    json_object_set_new(compute, "userData", json_string(""));
    json_object_set_new(compute, "version", json_string("22.04.202401010"));
    json_object_set_new(compute, "virtualMachineScaleSet", json_pack("{s:s}", "id", ""));
    json_object_set_new(compute, "vmId", json_string(vm->vm_id));
    json_object_set_new(compute, "vmScaleSetName", json_string(""));
    json_object_set_new(compute, "vmSize", json_string(vm->vm_size));
    json_object_set_new(compute, "zone", json_string(vm->zone));

    json_t *network =
        json_pack("{s:[{s:{s:[{s:s, s:s}], s:[{s:s, s:s}]}, s:{s:[]}, s:s}]}", "interface", "ipv4",
                  "ipAddress", "privateIpAddress", vm->private_ip, "publicIpAddress", "", "subnet",
                  "address", subnet, "prefix", "24", "ipv6", "ipAddress", "macAddress", vm->mac);
    return json_pack("{s:o, s:o}", "compute", compute, "network", network);
}

/* The node of ROOT named by the path segments after /metadata/instance
 * (object keys, array indexes); NULL when there is none. */
static json_t *walk(json_t *root, const char *rest)
{
    json_t *cur = root;
    char seg[128];
    while (cur && *rest) {
        while (*rest == '/')
            rest++;
        if (!*rest)
            break;
        size_t n = strcspn(rest, "/");
        if (n >= sizeof(seg))
            return NULL;
        memcpy(seg, rest, n);
        seg[n] = '\0';
        rest += n;
        if (json_is_object(cur)) {
            json_t *next = json_object_get(cur, seg);
            if (!next) { /* IMDS paths are not case-sensitive in practice */
                const char *k;
                json_t *v;
                json_object_foreach(cur, k, v)
                {
                    if (strcasecmp(k, seg) == 0)
                        next = v;
                }
            }
            cur = next;
        } else if (json_is_array(cur)) {
            char *end;
            long i = strtol(seg, &end, 10);
            cur = (*end || i < 0) ? NULL : json_array_get(cur, (size_t)i);
        } else {
            return NULL;
        }
    }
    return cur;
}

void sim_imds_instance(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    if (!sim_imds_check(rq, rs, false))
        return;
    if (!sim_arg(rq, "api-version")) {
        /* imds.md 1: the documented body, verbatim. */
        sim_json(rs, 400,
                 json_pack("{s:s, s:[s, s, s]}", "error",
                           "Bad request. api-version was not specified in the request. "
                           "For more information refer to aka.ms/azureimds",
                           "newest-versions", "2020-10-01", "2020-09-01", "2020-07-15"));
        return;
    }
    if (sim->sc->self < 0) {
        sim_json(rs, 404,
                 json_pack("{s:s}", "error",
                           "Not found. The simulator's scenario has "
                           "no VM for IMDS to describe (\"self\")"));
        return;
    }
    json_t *root = build_instance(sim, sim->sc->self);
    if (!root) {
        sim_json(rs, 500, NULL);
        return;
    }
    const char *rest = rq->path + strlen("/metadata/instance");
    json_t *node = walk(root, rest);
    const char *format = sim_arg(rq, "format");
    bool text = format && strcmp(format, "text") == 0;
    if (!node) {
        sim_json(rs, 404, json_pack("{s:s}", "error", "Not found"));
    } else if (json_is_string(node)) {
        if (text) {
            rs->status = 200;
            rs->body = strdup(json_string_value(node));
            rs->len = rs->body ? strlen(rs->body) : 0;
            sim_header(rs, "Content-Type", "text/plain; charset=utf-8");
        } else {
            /* imds.md 4: 400 for a leaf without format=text. */
            sim_json(rs, 400,
                     json_pack("{s:s}", "error",
                               "Bad request. Leaf nodes need "
                               "format=text"));
        }
    } else if (text) {
        sim_json(rs, 400,
                 json_pack("{s:s}", "error",
                           "Bad request. format=text is only for "
                           "leaf nodes in the simulator"));
    } else {
        sim_json(rs, 200, json_incref(node));
    }
    json_decref(root);
}

void sim_imds_versions(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    (void)sim;
    if (!sim_imds_check(rq, rs, false))
        return;
    json_t *a = json_array();
    for (size_t i = 0; a && i < sizeof(versions) / sizeof(versions[0]); i++)
        json_array_append_new(a, json_string(versions[i]));
    sim_json(rs, 200, a ? json_pack("{s:o}", "apiVersions", a) : NULL);
}

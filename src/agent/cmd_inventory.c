/*
 * cmd_inventory.c - tierwise-agent inventory: this VM and its managed
 * disks, each with its Linux device.
 *
 * The VM and disks come from IMDS (or, off Azure or for a test, from a
 * file given with --inventory-file); the devices from the device map.
 * Output is a table for people or, with --json, the `inventory` object of
 * tierwise.report/1 and nothing else on stdout.  A machine where IMDS does
 * not answer is most likely not an Azure VM: that is said in one line and
 * the status is 3, so scripts can tell it from a failure.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/devmap.h"
#include "app/app.h"
#include "azure/endpoints.h"
#include "azure/imds.h"
#include "core/inventory.h"
#include "core/tier.h"

#define INVENTORY_FILE_MAX (4u << 20)
#define MAX_STACKS 32

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s inventory [--json] [--imds-url URL] [--config FILE] [-q|-v]\n"
            "       %s inventory --inventory-file FILE [--json] [-q|-v]\n\n"
            "Shows this VM (name, size, region, subscription, resource group, tags) and\n"
            "its managed disks (name, role, LUN, SKU, size, tier, caching) with the Linux\n"
            "device of each, read from the Azure Instance Metadata Service (IMDS).\n\n"
            "TIER is the disk's size tier (the smallest tier of its SKU holding its size:\n"
            "a 2 TiB Premium SSD is P40, a 200 GiB Standard SSD E15), PERF the performance\n"
            "tier Azure reports, if any; IOPS and MB/S are the rated figures of the tier in\n"
            "use (the performance tier when it is higher), from the built-in catalog\n"
            "(pricing/azure-disk-tiers.json; Standard figures are \"up to\").  Premium SSD\n"
            "v2 and Ultra disks have no tiers: their figures are provisioned per disk, and\n"
            "the table says so under Ratings instead of guessing.\n\n"
            "Options:\n"
            "  --json                 the inventory as JSON (the \"inventory\" object of\n"
            "                         tierwise.report/1) on stdout, nothing else; each disk\n"
            "                         has tier (in use), size_tier, performance_tier,\n"
            "                         rating (tier, provisioned, none), rated_iops,\n"
            "                         rated_mbps and rated_why\n"
            "  --imds-url URL         IMDS base URL (default: $TIERWISE_IMDS_URL, then the\n"
            "                         config file's imds_url, then http://169.254.169.254)\n"
            "  --config FILE          JSON config file; inventory reads its imds_url\n"
            "                         (default: $TIERWISE_CONFIG, if set)\n"
            "  --inventory-file FILE  use this inventory (JSON, an inventory object or a\n"
            "                         whole report) instead of asking IMDS; devices it leaves\n"
            "                         out are looked up on this machine\n"
            "  --sysfs-root DIR       where sysfs is (default: $TW_SYSFS_ROOT, then /sys)\n"
            "  --dev-root DIR         where /dev is (default: $TW_DEV_ROOT, then /dev)\n"
            "  -q, --quiet            nothing on stderr but errors\n"
            "  -v, --verbose          also say on stderr where the inventory came from\n"
            "                         (the IMDS URL and which setting gave it, or the file),\n"
            "                         the VM and its disks, and how each disk's device was\n"
            "                         found or why not\n"
            "  --version              print the version and exit\n"
            "  -h, --help             this text\n\n"
            "Devices are found through /dev/disk/azure/data/by-lun/N, /dev/disk/azure/scsi1/\n"
            "lunN and /dev/disk/azure/os|root, else through sysfs (SCSI address, NVMe\n"
            "namespace: LUN = nsid - 2).  Stripes (LVM, MD) are listed with their disks.\n\n"
            "Exit status: 0 done, 1 IMDS failed or answered nonsense, 2 bad input or usage\n"
            "(a bad URL, config or inventory file), 3 IMDS unreachable: not an Azure VM.\n",
            TW_AGENT_PROG, TW_AGENT_PROG);
}

static const char *how_words(enum tw_devmap_how h)
{
    switch (h) {
    case TW_DEVMAP_GIVEN: return "given";
    case TW_DEVMAP_LINK: return "udev link";
    case TW_DEVMAP_SCSI: return "SCSI address";
    case TW_DEVMAP_NVME: return "NVMe namespace";
    case TW_DEVMAP_NONE: break;
    }
    return "not found";
}

static void print_table(const struct tw_inventory *inv, const enum tw_devmap_how *how,
                        const struct tw_devmap_stack *st, size_t n_st)
{
    const struct tw_vm *vm = &inv->vm;
    printf("VM            %s\n", vm->name);
    printf("Size          %s\n", vm->vm_size);
    printf("Location      %s\n", vm->location);
    if (vm->subscription_id[0])
        printf("Subscription  %s\n", vm->subscription_id);
    if (vm->resource_group[0])
        printf("Group         %s\n", vm->resource_group);
    printf("Tags          ");
    for (size_t i = 0; i < vm->n_tags; i++)
        printf("%s%s=%s", i ? ", " : "", vm->tags[i].key, vm->tags[i].value);
    printf("%s\n\n", vm->n_tags ? "" : "(none)");

    int w = 4;
    for (size_t i = 0; i < inv->n_disks; i++) {
        int len = (int)strlen(inv->disks[i].name);
        if (len > w)
            w = len;
    }
    if (w > 64)
        w = 64;
    printf("%-*s  %-4s  %-3s  %-15s  %9s  %-4s  %-4s  %6s  %5s  %-12s  %s\n", w, "DISK", "ROLE",
           "LUN", "SKU", "SIZE", "TIER", "PERF", "IOPS", "MB/S", "CACHING", "DEVICE");
    size_t n_why = 0;
    for (size_t i = 0; i < inv->n_disks; i++) {
        const struct tw_disk *d = &inv->disks[i];
        char lun[8], size[24], cache[24], iops[24] = "-", mbps[24] = "-";
        n_why += d->rated_why[0] != '\0';
        if (d->rated_iops > 0)
            snprintf(iops, sizeof(iops), "%lld", (long long)d->rated_iops);
        if (d->rated_mbps > 0)
            snprintf(mbps, sizeof(mbps), "%g", d->rated_mbps);
        snprintf(lun, sizeof(lun), "%d", d->lun);
        if (d->size_gib > 0)
            snprintf(size, sizeof(size), "%lld GiB", (long long)d->size_gib);
        else
            snprintf(size, sizeof(size), "?");
        snprintf(cache, sizeof(cache), "%s%s", tw_caching_name(d->caching),
                 d->write_accelerator ? "+WA" : "");
        printf("%-*s  %-4s  %-3s  %-15s  %9s  %-4s  %-4s  %6s  %5s  %-12s  %s", w, d->name,
               d->role == TW_DISK_OS ? "os" : "data", d->lun >= 0 ? lun : "-",
               d->sku[0] ? d->sku : "-", size, d->size_tier[0] ? d->size_tier : "-",
               d->perf_tier[0] ? d->perf_tier : "-", iops, mbps, cache,
               d->device[0] ? d->device : "-");
        if (how && how[i] != TW_DEVMAP_LINK && how[i] != TW_DEVMAP_GIVEN)
            printf("  (%s)", how_words(how[i]));
        printf("\n");
    }
    /* TIER is the size tier, PERF the performance tier Azure reports; IOPS
     * and MB/S are the rating of the tier in use.  What has none says why. */
    if (n_why)
        printf("\nRatings\n");
    for (size_t i = 0; i < inv->n_disks; i++)
        if (inv->disks[i].rated_why[0])
            printf("  %s: %s\n", inv->disks[i].name, inv->disks[i].rated_why);
    if (n_st)
        printf("\nStacked devices\n");
    for (size_t i = 0; i < n_st; i++) {
        const struct tw_devmap_stack *s = &st[i];
        printf("  /dev/%s%s%s%s over", s->device, s->label[0] ? " (" : "", s->label,
               s->label[0] ? ")" : "");
        for (size_t m = 0; m < s->n_members; m++) {
            const struct tw_disk *d = s->disk[m] >= 0 ? &inv->disks[s->disk[m]] : NULL;
            if (d && d->lun >= 0)
                printf(" %s (%s, LUN %d)", s->members[m], d->name, d->lun);
            else if (d)
                printf(" %s (%s)", s->members[m], d->name);
            else
                printf(" %s (not an Azure disk of this VM)", s->members[m]);
        }
        printf("\n");
    }
}

/* -v: the VM and, per disk, how its device was found (the table says so
 * only for the exceptions, the JSON not at all). */
static void say_details(const struct tw_inventory *inv, const enum tw_devmap_how *how)
{
    tw_app_detail(TW_AGENT_PROG, "VM %s (%s, %s), %zu disk(s)", inv->vm.name,
                  inv->vm.vm_size[0] ? inv->vm.vm_size : "size unknown",
                  inv->vm.location[0] ? inv->vm.location : "region unknown", inv->n_disks);
    for (size_t i = 0; i < inv->n_disks; i++) {
        const struct tw_disk *d = &inv->disks[i];
        char lun[24] = "";
        if (d->lun >= 0)
            snprintf(lun, sizeof(lun), ", LUN %d", d->lun);
        if (d->device[0])
            tw_app_detail(TW_AGENT_PROG, "disk %s (%s%s): %s, %s", d->name,
                          d->role == TW_DISK_OS ? "os" : "data", lun, d->device,
                          how[i] == TW_DEVMAP_GIVEN ? "named by the inventory"
                                                    : how_words(how[i]));
        else
            tw_app_detail(TW_AGENT_PROG,
                          "disk %s (%s%s): no device found on this machine (no "
                          "/dev/disk/azure link, SCSI address or NVMe namespace for it)",
                          d->name, d->role == TW_DISK_OS ? "os" : "data", lun);
    }
}

static int print_json(const struct tw_inventory *inv)
{
    json_t *v = tw_inventory_to_value(inv);
    char *s = v ? json_dumps(v, JSON_INDENT(2)) : NULL;
    json_decref(v);
    if (!s) {
        tw_app_error(TW_AGENT_PROG, "out of memory writing the inventory");
        return TW_EXIT_FAIL;
    }
    printf("%s\n", s);
    free(s);
    return TW_EXIT_OK;
}

/* Each disk's size tier, tier in use and rated figures, from the built-in
 * catalog (pricing/azure-disk-tiers.json): IMDS gives none of them. */
static int rate(struct tw_inventory *inv)
{
    struct tw_tier_catalog cat = {0};
    struct tw_error err = {0};
    if (tw_tier_catalog_builtin(&cat, &err) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "the built-in tier catalog: %s", err.msg);
        tw_tier_catalog_cleanup(&cat);
        return TW_EXIT_FAIL;
    }
    tw_inventory_rate(inv, &cat);
    tw_tier_catalog_cleanup(&cat);
    return TW_EXIT_OK;
}

int tw_agent_inventory_file(const char *path, struct tw_inventory *inv)
{
    struct tw_buf b;
    struct tw_error err = {0};
    tw_buf_init(&b, INVENTORY_FILE_MAX);
    enum tw_err rc = tw_app_read_file(path, &b, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--inventory-file: %s", err.msg);
    } else if (b.len == 0) {
        rc = TW_EINVAL;
        tw_app_error(TW_AGENT_PROG, "--inventory-file %s is empty: give an inventory in JSON",
                     path);
    } else if ((rc = tw_inventory_from_json(b.data, b.len, inv, &err)) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "--inventory-file %s: %s", path, err.msg);
    } else {
        tw_app_detail(TW_AGENT_PROG, "inventory from the file %s (%zu bytes), not from IMDS",
                      path, b.len);
    }
    tw_buf_cleanup(&b);
    /* Whatever is wrong with a file the user named (missing, unreadable,
     * not an inventory) is bad input; only memory is a failure. */
    return rc == TW_OK ? rate(inv) : rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
}

int tw_agent_inventory_imds(const char *imds_flag, const char *config,
                            struct tw_inventory *inv)
{
    struct tw_error err = {0};
    struct tw_az_ep_args args = {.config_path = config, .only = 1u << TW_AZ_EP_IMDS};
    args.url[TW_AZ_EP_IMDS] = imds_flag;
    struct tw_az_endpoints ep;
    enum tw_err rc = tw_az_endpoints_resolve(&args, &ep, &err);
    if (rc != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "%s", err.msg);
        return rc == TW_ENOMEM ? TW_EXIT_FAIL : TW_EXIT_USAGE;
    }
    struct tw_az_http_opts o;
    tw_az_http_opts_imds(&o);
    if (o.loopback_only && !tw_az_url_is_loopback(ep.url[TW_AZ_EP_IMDS])) {
        /* The client would refuse the socket anyway; say it before trying. */
        tw_app_error(TW_AGENT_PROG,
                     "the IMDS URL %s (from %s) is not on 127.0.0.0/8 or ::1, "
                     "and TIERWISE_LOOPBACK_ONLY is set",
                     ep.url[TW_AZ_EP_IMDS], tw_az_ep_source_name(&ep, TW_AZ_EP_IMDS));
        return TW_EXIT_USAGE;
    }
    tw_app_detail(TW_AGENT_PROG, "asking IMDS at %s (the URL from %s)", ep.url[TW_AZ_EP_IMDS],
                  tw_az_ep_source_name(&ep, TW_AZ_EP_IMDS));
    bool unreachable = false;
    rc = tw_az_imds_fetch(&o, ep.url[TW_AZ_EP_IMDS], inv, &unreachable, &err);
    if (rc == TW_OK)
        return rate(inv);
    if (unreachable) {
        tw_app_error(TW_AGENT_PROG,
                     "not an Azure VM? the Instance Metadata Service did not answer (%s; "
                     "URL from %s); give --inventory-file to describe the disks by hand",
                     err.msg, tw_az_ep_source_name(&ep, TW_AZ_EP_IMDS));
        return TW_AGENT_EXIT_OFF_AZURE;
    }
    tw_app_error(TW_AGENT_PROG, "%s", err.msg);
    return TW_EXIT_FAIL;
}

int tw_agent_cmd_inventory(int argc, char **argv)
{
    enum { O_JSON = 256, O_IMDS, O_CONFIG, O_FILE, O_SYSFS, O_DEV };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON},
        {"imds-url", required_argument, NULL, O_IMDS},
        {"config", required_argument, NULL, O_CONFIG},
        {"inventory-file", required_argument, NULL, O_FILE},
        {"sysfs-root", required_argument, NULL, O_SYSFS},
        {"dev-root", required_argument, NULL, O_DEV},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *imds = NULL, *config = NULL, *file = NULL;
    struct tw_devmap_opts dm = {0};
    bool json = false;
    int c;
    optind = 1;
    opterr = 0; /* one message of our own instead of getopt's plus the usage */
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'q': tw_app_set_verbosity(TW_APP_QUIET); break;
        case 'v': tw_app_set_verbosity(TW_APP_VERBOSE); break;
        case O_JSON: json = true; break;
        case O_IMDS: imds = optarg; break;
        case O_CONFIG: config = optarg; break;
        case O_FILE: file = optarg; break;
        case O_SYSFS: dm.sysfs_root = optarg; break;
        case O_DEV: dm.dev_root = optarg; break;
        case 'h': usage(stdout); return TW_EXIT_OK;
        default:
            tw_app_error(TW_AGENT_PROG,
                         "inventory: \"%s\" is an unknown option or lacks "
                         "its value; inventory --help lists the options",
                         argv[optind - 1]);
            return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_AGENT_PROG, "unexpected argument \"%s\"; see inventory --help",
                     argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (file && (imds || config)) {
        tw_app_error(TW_AGENT_PROG, "--inventory-file replaces IMDS: leave out --imds-url "
                                    "and --config");
        return TW_EXIT_USAGE;
    }

    struct tw_inventory *inv = malloc(sizeof(*inv));
    enum tw_devmap_how *how = calloc(TW_INV_MAX_DISKS, sizeof(*how));
    struct tw_devmap_stack *st = calloc(MAX_STACKS, sizeof(*st));
    int status = TW_EXIT_FAIL;
    if (!inv || !how || !st) {
        tw_app_error(TW_AGENT_PROG, "out of memory");
        goto out;
    }
    tw_inventory_init(inv);
    status = file ? tw_agent_inventory_file(file, inv)
                  : tw_agent_inventory_imds(imds, config, inv);
    if (status != TW_EXIT_OK)
        goto out;

    struct tw_error err = {0};
    size_t n_st = 0;
    if (tw_devmap_apply(inv, &dm, how, &err) != TW_OK ||
        tw_devmap_stacks(inv, &dm, st, MAX_STACKS, &n_st, &err) != TW_OK) {
        tw_app_error(TW_AGENT_PROG, "%s", err.msg);
        status = err.code == TW_EINVAL ? TW_EXIT_USAGE : TW_EXIT_FAIL;
        goto out;
    }
    if (tw_app_get_verbosity() == TW_APP_VERBOSE)
        say_details(inv, how);
    if (json) {
        status = print_json(inv);
    } else {
        print_table(inv, how, st, n_st);
        status = TW_EXIT_OK;
    }
    if (fflush(stdout) != 0) {
        tw_app_error(TW_AGENT_PROG, "writing the inventory failed");
        status = TW_EXIT_FAIL;
    }
out:
    free(inv);
    free(how);
    free(st);
    return status;
}

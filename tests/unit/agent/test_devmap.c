/* test_devmap.c - the device map on fixture sysfs and /dev trees built in a
 * scratch directory: SCSI with udev links, SCSI by sysfs address only,
 * NVMe namespaces, and an LVM stripe over three LUNs. */
#include "testhelp.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/devmap.h"

#define VMBUS "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00"
#define SCSI0 "f8b3781a-1e82-4818-a1c3-63d806ec15bb"
#define SCSI1 "f8b3781b-1e82-4818-a1c3-63d806ec15bb"
#define GEN1_OS "00000000-0000-8899-0000-000000000000"

struct tree {
    char *root;
    char sys[PATH_MAX];
    char dev[PATH_MAX];
};

static struct tw_inventory inv;

/* mkdir -p of ROOT/REL. */
static void mkdirs(const char *root, const char *rel)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                fail_msg("mkdir %s: %s", p, strerror(errno));
            *s = '/';
        }
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", p, strerror(errno));
}

static void put(const char *root, const char *rel, const char *text)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    if ((size_t)(slash - p) > strlen(root)) {
        *slash = '\0';
        mkdirs(root, p + strlen(root) + 1);
        *slash = '/';
    }
    FILE *f = fopen(p, "w");
    if (!f)
        fail_msg("can't write %s: %s", p, strerror(errno));
    fputs(text, f);
    fclose(f);
}

static void link_to(const char *root, const char *rel, const char *target)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    char *slash = strrchr(p, '/');
    if ((size_t)(slash - p) > strlen(root)) {
        *slash = '\0';
        mkdirs(root, p + strlen(root) + 1);
        *slash = '/';
    }
    if (symlink(target, p) != 0)
        fail_msg("symlink %s -> %s: %s", p, target, strerror(errno));
}

/*
 * A SCSI disk NAME at H:0:0:LUN on the VMBus controller CTRL, laid out as
 * the kernel does: the device folder under devices/, block/NAME and
 * class/block/NAME and dev/block/M:m links to it, device -> the SCSI
 * address folder (whose last component is H:C:T:L).
 */
static void scsi_disk(struct tree *t, const char *ctrl, int host, int lun, const char *name,
                      int minor)
{
    char dir[512], rel[700], target[700], s[64];
    snprintf(dir, sizeof(dir), VMBUS "/%s/host%d/target%d:0:0/%d:0:0:%d", ctrl, host, host, host,
             lun);
    snprintf(rel, sizeof(rel), VMBUS "/%s/device_id", ctrl);
    snprintf(s, sizeof(s), "{%s}\n", ctrl);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/vendor", dir);
    put(t->sys, rel, "Msft    \n");
    snprintf(rel, sizeof(rel), "%s/model", dir);
    put(t->sys, rel, "Virtual Disk    \n");
    snprintf(rel, sizeof(rel), "%s/block/%s/dev", dir, name);
    snprintf(s, sizeof(s), "8:%d\n", minor);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/block/%s/device", dir, name);
    snprintf(target, sizeof(target), "../../../%d:0:0:%d", host, lun);
    link_to(t->sys, rel, target);
    snprintf(rel, sizeof(rel), "block/%s", name);
    snprintf(target, sizeof(target), "../%s/block/%s", dir, name);
    link_to(t->sys, rel, target);
    snprintf(rel, sizeof(rel), "class/block/%s", name);
    snprintf(target, sizeof(target), "../../%s/block/%s", dir, name);
    link_to(t->sys, rel, target);
    snprintf(rel, sizeof(rel), "dev/block/8:%d", minor);
    snprintf(target, sizeof(target), "../../%s/block/%s", dir, name);
    link_to(t->sys, rel, target);
    put(t->dev, name, "");
}

/* An NVMe namespace NAME (nsid NSID) of controller nvme0 with MODEL. */
static void nvme_ns(struct tree *t, const char *model, const char *name, int nsid)
{
    char rel[512], target[512], s[64];
    const char *ctrl = "devices/pci0000:00/0000:00:00.0/nvme/nvme0";
    snprintf(rel, sizeof(rel), "%s/model", ctrl);
    snprintf(s, sizeof(s), "%-40s\n", model);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/%s/nsid", ctrl, name);
    snprintf(s, sizeof(s), "%d\n", nsid);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/%s/dev", ctrl, name);
    snprintf(s, sizeof(s), "259:%d\n", nsid);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/%s/device", ctrl, name);
    link_to(t->sys, rel, "../../nvme0");
    snprintf(rel, sizeof(rel), "block/%s", name);
    snprintf(target, sizeof(target), "../%s/%s", ctrl, name);
    link_to(t->sys, rel, target);
    snprintf(rel, sizeof(rel), "dev/block/259:%d", nsid);
    snprintf(target, sizeof(target), "../../%s/%s", ctrl, name);
    link_to(t->sys, rel, target);
    put(t->dev, name, "");
}

/* A device-mapper device dm-MINOR named DMNAME over the disks in SLAVES
 * (which must already exist), with /dev/mapper/DMNAME. */
static void dm_dev(struct tree *t, int minor, const char *dmname, const char *const *slaves)
{
    char name[32], dir[128], rel[512], target[512], s[64];
    snprintf(name, sizeof(name), "dm-%d", minor);
    snprintf(dir, sizeof(dir), "devices/virtual/block/%s", name);
    snprintf(rel, sizeof(rel), "%s/dev", dir);
    snprintf(s, sizeof(s), "253:%d\n", minor);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/dm/name", dir);
    snprintf(s, sizeof(s), "%s\n", dmname);
    put(t->sys, rel, s);
    snprintf(rel, sizeof(rel), "%s/slaves", dir);
    mkdirs(t->sys, rel);
    for (const char *const *sl = slaves; *sl; sl++) {
        char real[PATH_MAX], p[PATH_MAX + 64];
        snprintf(p, sizeof(p), "%s/block/%s", t->sys, *sl);
        assert_non_null(realpath(p, real));
        snprintf(rel, sizeof(rel), "%s/slaves/%s", dir, *sl);
        link_to(t->sys, rel, real);
        (void)p;
    }
    snprintf(rel, sizeof(rel), "block/%s", name);
    snprintf(target, sizeof(target), "../%s", dir);
    link_to(t->sys, rel, target);
    snprintf(rel, sizeof(rel), "dev/block/253:%d", minor);
    snprintf(target, sizeof(target), "../../%s", dir);
    link_to(t->sys, rel, target);
    put(t->dev, name, "");
    snprintf(rel, sizeof(rel), "mapper/%s", dmname);
    snprintf(target, sizeof(target), "../%s", name);
    link_to(t->dev, rel, target);
}

static int setup(void **state)
{
    struct tree *t = calloc(1, sizeof(*t));
    t->root = th_tmpdir();
    snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
    snprintf(t->dev, sizeof(t->dev), "%s/dev", t->root);
    mkdirs(t->root, "sys/block");
    mkdirs(t->root, "dev");
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct tree *t = *state;
    th_rmtree(t->root);
    free(t->root);
    free(t);
    return 0;
}

/* An inventory with an OS disk and data disks at the LUNS given. */
static void make_inv(const int *luns, size_t n)
{
    tw_inventory_init(&inv);
    snprintf(inv.vm.name, sizeof(inv.vm.name), "vm1");
    struct tw_disk *os = &inv.disks[inv.n_disks++];
    snprintf(os->name, sizeof(os->name), "osdisk");
    os->role = TW_DISK_OS;
    os->lun = -1;
    for (size_t i = 0; i < n; i++) {
        struct tw_disk *d = &inv.disks[inv.n_disks++];
        snprintf(d->name, sizeof(d->name), "data%d", luns[i]);
        d->role = TW_DISK_DATA;
        d->lun = luns[i];
        snprintf(d->sku, sizeof(d->sku), "Premium_LRS");
    }
}

static void test_scsi_links(void **state)
{
    struct tree *t = *state;
    scsi_disk(t, GEN1_OS, 0, 0, "sda", 0);
    scsi_disk(t, SCSI1, 3, 0, "sdc", 32);
    scsi_disk(t, SCSI1, 3, 1, "sdd", 48);
    /* WALinuxAgent's links (relative, as udev makes them). */
    link_to(t->dev, "disk/azure/root", "../../sda");
    link_to(t->dev, "disk/azure/scsi1/lun0", "../../../sdc");
    link_to(t->dev, "disk/azure/scsi1/lun1", "../../../sdd");
    make_inv((int[]){0, 1, 5}, 3);
    /* A device the inventory already names is kept. */
    snprintf(inv.disks[0].device, sizeof(inv.disks[0].device), "/dev/given");
    struct tw_devmap_opts o = {t->sys, t->dev};
    enum tw_devmap_how how[8];
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, how, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "/dev/given");
    assert_int_equal(how[0], TW_DEVMAP_GIVEN);
    assert_string_equal(inv.disks[1].device, "/dev/sdc");
    assert_int_equal(how[1], TW_DEVMAP_LINK);
    assert_string_equal(inv.disks[2].device, "/dev/sdd");
    /* LUN 5 is attached in Azure but not here (yet): left unmapped. */
    assert_string_equal(inv.disks[3].device, "");
    assert_int_equal(how[3], TW_DEVMAP_NONE);

    /* Now the OS disk through its link. */
    inv.disks[0].device[0] = '\0';
    assert_int_equal(tw_devmap_apply(&inv, &o, how, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "/dev/sda");
    assert_int_equal(how[0], TW_DEVMAP_LINK);
}

static void test_link_order(void **state)
{
    struct tree *t = *state;
    scsi_disk(t, SCSI1, 3, 2, "sde", 64);
    scsi_disk(t, SCSI1, 3, 7, "sdf", 80);
    scsi_disk(t, SCSI0, 2, 0, "sdb", 16);
    /* azure-vm-utils' data/by-lun comes before WALinuxAgent's scsi1, and the
     * old datadisks/ form still counts; os before root. */
    link_to(t->dev, "disk/azure/data/by-lun/2", "../../../../sde");
    link_to(t->dev, "disk/azure/scsi1/lun2", "../../../sdf");
    link_to(t->dev, "disk/azure/datadisks/lun7", "../../../sdf");
    link_to(t->dev, "disk/azure/os", "../../sdb");
    link_to(t->dev, "disk/azure/root", "../../sde");
    /* A link to a device sysfs does not know is stale: ignored. */
    link_to(t->dev, "disk/azure/data/by-lun/9", "../../../../sdq");
    make_inv((int[]){2, 7, 9}, 3);
    struct tw_devmap_opts o = {t->sys, t->dev};
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, NULL, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "/dev/sdb");
    assert_string_equal(inv.disks[1].device, "/dev/sde");
    assert_string_equal(inv.disks[2].device, "/dev/sdf");
    assert_string_equal(inv.disks[3].device, "");
}

static void test_scsi_sysfs_only(void **state)
{
    struct tree *t = *state;
    /* No udev links at all: the SCSI addresses decide.  sdb is the Gen1
     * resource disk (not a managed disk), sdg an iSCSI disk at "LUN 1" of
     * some other controller, which must not be taken for data LUN 1. */
    scsi_disk(t, GEN1_OS, 0, 0, "sda", 0);
    scsi_disk(t, "00000000-0001-8899-0000-000000000000", 1, 0, "sdb", 16);
    scsi_disk(t, SCSI1, 3, 0, "sdd", 48);
    scsi_disk(t, SCSI1, 3, 1, "sdc", 32);
    scsi_disk(t, "9a9b9c9d-0000-0000-0000-000000000000", 5, 1, "sdg", 96);
    put(t->sys, "block/sdg/device/vendor", "LIO-ORG \n");
    make_inv((int[]){0, 1}, 2);
    struct tw_devmap_opts o = {t->sys, t->dev};
    enum tw_devmap_how how[8];
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, how, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "/dev/sda");
    assert_int_equal(how[0], TW_DEVMAP_SCSI);
    assert_string_equal(inv.disks[1].device, "/dev/sdd"); /* LUN 0, whatever its name */
    assert_string_equal(inv.disks[2].device, "/dev/sdc");
    assert_int_equal(how[2], TW_DEVMAP_SCSI);
}

static void test_nvme(void **state)
{
    struct tree *t = *state;
    nvme_ns(t, "MSFT NVMe Accelerator v1.0", "nvme0n1", 1);
    nvme_ns(t, "MSFT NVMe Accelerator v1.0", "nvme0n2", 2);
    nvme_ns(t, "MSFT NVMe Accelerator v1.0", "nvme0n4", 4);
    make_inv((int[]){0, 2, 1}, 3);
    struct tw_devmap_opts o = {t->sys, t->dev};
    enum tw_devmap_how how[8];
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, how, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "/dev/nvme0n1"); /* nsid 1: OS */
    assert_int_equal(how[0], TW_DEVMAP_NVME);
    assert_string_equal(inv.disks[1].device, "/dev/nvme0n2"); /* LUN 0 = nsid 2 */
    assert_string_equal(inv.disks[2].device, "/dev/nvme0n4"); /* LUN 2 = nsid 4 */
    assert_string_equal(inv.disks[3].device, "");             /* LUN 1: no nsid 3 */
    assert_int_equal(how[3], TW_DEVMAP_NONE);

    /* With azure-vm-utils' link, which covers NVMe too, the link wins. */
    link_to(t->dev, "disk/azure/data/by-lun/1", "../../../../nvme0n4");
    make_inv((int[]){1}, 1);
    assert_int_equal(tw_devmap_apply(&inv, &o, how, &err), TW_OK);
    assert_string_equal(inv.disks[1].device, "/dev/nvme0n4");
    assert_int_equal(how[1], TW_DEVMAP_LINK);
}

static void test_nvme_local_disks_ignored(void **state)
{
    struct tree *t = *state;
    /* Local (ephemeral) NVMe disks have another model: never managed disks. */
    nvme_ns(t, "Microsoft NVMe Direct Disk v2", "nvme0n1", 1);
    nvme_ns(t, "Microsoft NVMe Direct Disk v2", "nvme0n2", 2);
    make_inv((int[]){0}, 1);
    struct tw_devmap_opts o = {t->sys, t->dev};
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, NULL, &err), TW_OK);
    assert_string_equal(inv.disks[0].device, "");
    assert_string_equal(inv.disks[1].device, "");
}

static void test_lvm_stripe(void **state)
{
    struct tree *t = *state;
    scsi_disk(t, GEN1_OS, 0, 0, "sda", 0);
    scsi_disk(t, SCSI1, 3, 0, "sdg", 96);
    scsi_disk(t, SCSI1, 3, 1, "sdh", 112);
    scsi_disk(t, SCSI1, 3, 2, "sdi", 128);
    scsi_disk(t, SCSI1, 3, 3, "sdj", 144);
    link_to(t->dev, "disk/azure/scsi1/lun0", "../../../sdg");
    link_to(t->dev, "disk/azure/scsi1/lun1", "../../../sdh");
    link_to(t->dev, "disk/azure/scsi1/lun2", "../../../sdi");
    link_to(t->dev, "disk/azure/scsi1/lun3", "../../../sdj");
    /* An LVM stripe over LUNs 0-2, and a linear LV on LUN 3. */
    dm_dev(t, 8, "vg_data-lv_stripe", (const char *const[]){"sdg", "sdh", "sdi", NULL});
    dm_dev(t, 9, "vg_log-lv_log", (const char *const[]){"sdj", NULL});
    make_inv((int[]){0, 1, 2, 3}, 4);
    struct tw_devmap_opts o = {t->sys, t->dev};
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, &o, NULL, &err), TW_OK);

    struct tw_devmap_stack s;
    /* By its /dev/mapper name, its dm name, or a bare kernel name. */
    static const char *const names[] = {"/dev/mapper/vg_data-lv_stripe", "/dev/dm-8", "dm-8"};
    for (size_t n = 0; n < 3; n++) {
        if (tw_devmap_resolve(&inv, names[n], &o, &s, &err) != TW_OK)
            fail_msg("%s: %s", names[n], err.msg);
        assert_string_equal(s.device, "dm-8");
        assert_string_equal(s.label, "vg_data-lv_stripe");
        assert_int_equal(s.n_members, 3);
        int seen = 0;
        for (size_t m = 0; m < s.n_members; m++) {
            assert_true(s.disk[m] >= 1);
            const struct tw_disk *d = &inv.disks[s.disk[m]];
            char want[48];
            snprintf(want, sizeof(want), "/dev/%s", s.members[m]);
            assert_string_equal(d->device, want);
            seen |= 1 << d->lun;
        }
        assert_int_equal(seen, 7); /* LUNs 0, 1 and 2 */
    }
    /* A plain disk is its own single member. */
    assert_int_equal(tw_devmap_resolve(&inv, "/dev/sdh", &o, &s, &err), TW_OK);
    assert_int_equal(s.n_members, 1);
    assert_string_equal(s.members[0], "sdh");
    assert_int_equal(inv.disks[s.disk[0]].lun, 1);
    /* Unknown devices are named in the error. */
    assert_int_equal(tw_devmap_resolve(&inv, "/dev/mapper/nope", &o, &s, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "nope"));

    /* The listing finds both stacks, in name order. */
    struct tw_devmap_stack st[4];
    size_t n = 0;
    assert_int_equal(tw_devmap_stacks(&inv, &o, st, 4, &n, &err), TW_OK);
    assert_int_equal(n, 2);
    assert_string_equal(st[0].device, "dm-8");
    assert_int_equal(st[0].n_members, 3);
    assert_string_equal(st[1].device, "dm-9");
    assert_string_equal(st[1].label, "vg_log-lv_log");
    assert_int_equal(inv.disks[st[1].disk[0]].lun, 3);
    assert_int_equal(tw_devmap_stacks(&inv, &o, st, 1, &n, &err), TW_OK);
    assert_int_equal(n, 1);
}

static void test_roots_from_env(void **state)
{
    struct tree *t = *state;
    scsi_disk(t, SCSI1, 3, 4, "sdk", 160);
    link_to(t->dev, "disk/azure/scsi1/lun4", "../../../sdk");
    make_inv((int[]){4}, 1);
    setenv("TW_SYSFS_ROOT", t->sys, 1);
    setenv("TW_DEV_ROOT", t->dev, 1);
    struct tw_error err = {0};
    assert_int_equal(tw_devmap_apply(&inv, NULL, NULL, &err), TW_OK);
    unsetenv("TW_SYSFS_ROOT");
    unsetenv("TW_DEV_ROOT");
    assert_string_equal(inv.disks[1].device, "/dev/sdk");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scsi_links, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scsi_sysfs_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvme, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nvme_local_disks_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lvm_stripe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_roots_from_env, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

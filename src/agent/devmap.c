/* devmap.c - Azure disks to Linux block devices, through udev links and sysfs. */
#include "agent/devmap.h"

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/target.h"

#define PATHBUF 4096
#define NAMELEN 32 /* kernel block device names are short: sdzz, nvme10n12, dm-123 */

/* The VMBus SCSI controllers of an Azure VM (WALinuxAgent's udev rules). */
#define SCSI0_ID "{f8b3781a-1e82-4818-a1c3-63d806ec15bb}" /* Gen2: OS (LUN 0), resource (1) */
#define SCSI1_ID "{f8b3781b-1e82-4818-a1c3-63d806ec15bb}" /* data disks */
#define NVME_REMOTE_MODEL "MSFT NVMe Accelerator v1.0"    /* OS and data disks */

struct roots {
    char sys[PATHBUF];
    char dev[PATHBUF];
};

static enum tw_err get_roots(const struct tw_devmap_opts *o, struct roots *r, struct tw_error *err)
{
    const char *s = o && o->sysfs_root ? o->sysfs_root : getenv("TW_SYSFS_ROOT");
    const char *d = o && o->dev_root ? o->dev_root : getenv("TW_DEV_ROOT");
    if (!s || !*s)
        s = "/sys";
    if (!d || !*d)
        d = "/dev";
    if (strlen(s) >= PATHBUF / 2 || strlen(d) >= PATHBUF / 2)
        return tw_error_set(err, TW_EINVAL, "the sysfs or /dev root path is too long");
    memcpy(r->sys, s, strlen(s) + 1);
    memcpy(r->dev, d, strlen(d) + 1);
    return TW_OK;
}

/* OUT = A "/" B; false when it would not fit (the lookup then finds nothing). */
static bool join(char out[PATHBUF], const char *a, const char *b)
{
    int n = snprintf(out, PATHBUF, "%s/%s", a, b);
    if (n < 0 || n >= PATHBUF) {
        out[0] = '\0';
        return false;
    }
    return true;
}

/* OUT = the sysfs folder of block device NAME ({sys}/block/NAME). */
static bool block_dir(const struct roots *r, const char *name, char out[PATHBUF])
{
    int n = snprintf(out, PATHBUF, "%s/block/%s", r->sys, name);
    return n > 0 && n < PATHBUF;
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Reads a small sysfs attribute, trailing whitespace removed (SCSI pads
 * vendor and model with spaces).  False when absent or empty. */
static bool read_attr(const char *path, char *out, size_t outlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(out, 1, outlen - 1, f);
    fclose(f);
    out[n] = '\0';
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' ' || out[n - 1] == '\t'))
        out[--n] = '\0';
    return n > 0;
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n < NAMELEN && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

/* Whether sysfs knows block device NAME; true when there is no sysfs to
 * ask (a container with /dev but no /sys/block). */
static bool sysfs_has(const struct roots *r, const char *name)
{
    char p[PATHBUF];
    if (!join(p, r->sys, "block") || !is_dir(p))
        return true;
    char q[PATHBUF];
    return (join(q, p, name) && access(q, F_OK) == 0) ||
           (join(p, r->sys, "class/block") && join(q, p, name) && access(q, F_OK) == 0);
}

/*
 * The kernel name a /dev link at PATH points to (following link chains),
 * in NAME.  udev's links are relative ("../../../sdc"), so under a fixture
 * root they resolve inside it; a dangling link still names its target.
 */
static bool link_name(const struct roots *r, const char *path, char name[NAMELEN])
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
        return false;
    char target[PATHBUF];
    const char *base = NULL;
    char *real = realpath(path, NULL);
    if (real) {
        base = strrchr(real, '/');
        base = base ? base + 1 : real;
    } else {
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
            return false;
        target[n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
    }
    bool ok = name_ok(base) && sysfs_has(r, base);
    if (ok)
        memcpy(name, base, strlen(base) + 1);
    free(real);
    return ok;
}

/* ---- sysfs scan ---- */

struct found {
    char name[NAMELEN];
    bool os; /* the OS disk */
    int lun; /* data disk LUN, -1 when not a data disk */
    enum tw_devmap_how how;
};

struct scan {
    bool done;
    size_t n;
    struct found f[TW_INV_MAX_DISKS * 2];
};

static void add_found(struct scan *s, const char *name, bool os, int lun, enum tw_devmap_how how)
{
    if (s->n < sizeof(s->f) / sizeof(s->f[0])) {
        struct found *f = &s->f[s->n++];
        memcpy(f->name, name, strlen(name) + 1);
        f->os = os;
        f->lun = lun;
        f->how = how;
    }
}

/* The device_id of the VMBus device above sysfs folder DIR: the first
 * ancestor that has one, stopping at the sysfs root. */
static bool vmbus_id(const struct roots *r, const char *dir, char *out, size_t outlen)
{
    char cur[PATHBUF], p[PATHBUF];
    char *rootreal = realpath(r->sys, NULL);
    size_t rootlen = rootreal ? strlen(rootreal) : 0;
    snprintf(cur, sizeof(cur), "%s", dir);
    bool ok = false;
    for (int depth = 0; depth < 16 && !ok; depth++) {
        if (join(p, cur, "device_id") && read_attr(p, out, outlen))
            ok = true;
        char *slash = strrchr(cur, '/');
        if (!slash || (size_t)(slash - cur) <= rootlen)
            break;
        *slash = '\0';
    }
    free(rootreal);
    return ok;
}

static void scan_scsi(const struct roots *r, const char *name, struct scan *s)
{
    char blk[PATHBUF], p[PATHBUF], link[PATHBUF], attr[128];
    if (!block_dir(r, name, blk))
        return;
    /* A disk that says who made it must be Hyper-V's ("Msft"); iSCSI or
     * USB disks are not Azure managed disks. */
    if (join(p, blk, "device/vendor") && read_attr(p, attr, sizeof(attr)) &&
        strcmp(attr, "Msft") != 0)
        return;
    if (!join(p, blk, "device"))
        return;
    ssize_t n = readlink(p, link, sizeof(link) - 1);
    if (n <= 0)
        return;
    link[n] = '\0';
    const char *hctl = strrchr(link, '/');
    hctl = hctl ? hctl + 1 : link;
    unsigned h, c, t, l;
    char extra;
    if (sscanf(hctl, "%u:%u:%u:%u%c", &h, &c, &t, &l, &extra) != 4)
        return;
    char *dev = realpath(p, NULL);
    if (!dev)
        return;
    char id[128];
    bool have_id = vmbus_id(r, dev, id, sizeof(id));
    free(dev);
    if (!have_id)
        return;
    if (strcasecmp(id, SCSI1_ID) == 0 && l <= 255)
        add_found(s, name, false, (int)l, TW_DEVMAP_SCSI);
    else if ((strcasecmp(id, SCSI0_ID) == 0 && l == 0) ||
             (strlen(id) > 15 && strncmp(id + 1, "00000000-0000-", 14) == 0))
        add_found(s, name, true, -1, TW_DEVMAP_SCSI);
}

static void scan_nvme(const struct roots *r, const char *name, struct scan *s)
{
    char blk[PATHBUF], p[PATHBUF], attr[128];
    if (!block_dir(r, name, blk))
        return;
    /* Only the remote-disk controller carries managed disks; "Microsoft
     * NVMe Direct Disk" namespaces are local, ephemeral disks. */
    if (!join(p, blk, "device/model") || !read_attr(p, attr, sizeof(attr)) ||
        strcmp(attr, NVME_REMOTE_MODEL) != 0)
        return;
    unsigned long nsid = 0;
    if (join(p, blk, "nsid") && read_attr(p, attr, sizeof(attr))) {
        char *end;
        nsid = strtoul(attr, &end, 10);
        if (*end)
            return;
    } else {
        /* Older kernels have no nsid attribute; nvmeXnY names namespace Y. */
        const char *np = strrchr(name, 'n');
        if (!np || sscanf(np + 1, "%lu", &nsid) != 1)
            return;
    }
    if (nsid == 1)
        add_found(s, name, true, -1, TW_DEVMAP_NVME);
    else if (nsid >= 2 && nsid - 2 <= 255)
        add_found(s, name, false, (int)(nsid - 2), TW_DEVMAP_NVME);
}

static void scan_sysfs(const struct roots *r, struct scan *s)
{
    s->done = true;
    char p[PATHBUF];
    if (!join(p, r->sys, "block"))
        return;
    DIR *d = opendir(p);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!name_ok(e->d_name))
            continue;
        if (strncmp(e->d_name, "sd", 2) == 0)
            scan_scsi(r, e->d_name, s);
        else if (strncmp(e->d_name, "nvme", 4) == 0)
            scan_nvme(r, e->d_name, s);
    }
    if (d)
        closedir(d);
}

/* ---- apply ---- */

static bool by_link(const struct roots *r, const struct tw_disk *d, char name[NAMELEN])
{
    char rel[64], p[PATHBUF];
    if (d->role == TW_DISK_OS) {
        static const char *const os[] = {"disk/azure/os", "disk/azure/root"};
        for (size_t i = 0; i < 2; i++)
            if (join(p, r->dev, os[i]) && link_name(r, p, name))
                return true;
        return false;
    }
    if (d->lun < 0)
        return false;
    static const char *const fmt[] = {"disk/azure/data/by-lun/%d", "disk/azure/scsi1/lun%d",
                                      "disk/azure/datadisks/lun%d"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(rel, sizeof(rel), fmt[i], d->lun);
        if (join(p, r->dev, rel) && link_name(r, p, name))
            return true;
    }
    return false;
}

static const struct found *by_scan(const struct scan *s, const struct tw_disk *d)
{
    for (size_t i = 0; i < s->n; i++) {
        const struct found *f = &s->f[i];
        if (d->role == TW_DISK_OS ? f->os : (d->lun >= 0 && f->lun == d->lun))
            return f;
    }
    return NULL;
}

enum tw_err tw_devmap_apply(struct tw_inventory *inv, const struct tw_devmap_opts *o,
                            enum tw_devmap_how *how, struct tw_error *err)
{
    struct roots r;
    enum tw_err rc = get_roots(o, &r, err);
    if (rc != TW_OK)
        return rc;
    struct scan *s = calloc(1, sizeof(*s));
    if (!s)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the device map");
    for (size_t i = 0; i < inv->n_disks; i++) {
        struct tw_disk *d = &inv->disks[i];
        char name[NAMELEN];
        enum tw_devmap_how h = TW_DEVMAP_NONE;
        if (d->device[0]) {
            h = TW_DEVMAP_GIVEN;
        } else if (by_link(&r, d, name)) {
            snprintf(d->device, sizeof(d->device), "/dev/%s", name);
            h = TW_DEVMAP_LINK;
        } else {
            if (!s->done)
                scan_sysfs(&r, s);
            const struct found *f = by_scan(s, d);
            if (f) {
                snprintf(d->device, sizeof(d->device), "/dev/%s", f->name);
                h = f->how;
            }
        }
        if (how)
            how[i] = h;
    }
    free(s);
    return TW_OK;
}

/* ---- stacked devices ---- */

/* The kernel name behind DEVICE: a /dev path (possibly a link such as
 * /dev/mapper/vg-lv), a path elsewhere, or a bare name. */
static bool kernel_name(const struct roots *r, const char *device, char name[NAMELEN])
{
    const char *base;
    if (strncmp(device, "/dev/", 5) == 0) {
        char p[PATHBUF];
        if (join(p, r->dev, device + 5) && link_name(r, p, name))
            return true;
    }
    base = strrchr(device, '/');
    base = base ? base + 1 : device;
    if (!name_ok(base))
        return false;
    memcpy(name, base, strlen(base) + 1);
    return true;
}

static bool dev_numbers(const struct roots *r, const char *name, unsigned *maj, unsigned *min)
{
    static const char *const where[] = {"class/block", "block"};
    char p[PATHBUF], q[PATHBUF], attr[32];
    for (size_t i = 0; i < 2; i++) {
        if (join(p, r->sys, where[i]) && join(q, p, name) && join(p, q, "dev") &&
            read_attr(p, attr, sizeof(attr)) && sscanf(attr, "%u:%u", maj, min) == 2)
            return true;
    }
    return false;
}

static enum tw_err resolve_name(const struct tw_inventory *inv, const struct roots *r,
                                const char *name, const char *asked, struct tw_devmap_stack *out,
                                struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    unsigned maj, min;
    if (!dev_numbers(r, name, &maj, &min))
        return tw_error_set(err, TW_ENOENT, "%s: sysfs (%s) has no block device %s", asked, r->sys,
                            name);
    struct tw_target *t = calloc(1, sizeof(*t));
    if (!t)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    tw_target_devinfo(r->sys, maj, min, t);
    if (!t->device[0]) {
        free(t);
        return tw_error_set(err, TW_ENOENT, "%s: sysfs has no device %u:%u", asked, maj, min);
    }
    snprintf(out->device, sizeof(out->device), "%s", t->device);
    char p[PATHBUF], q[PATHBUF];
    if (join(p, r->sys, "block") && join(q, p, t->device) && join(p, q, "dm/name"))
        read_attr(p, out->label, sizeof(out->label));
    out->n_members = t->n_members;
    for (size_t i = 0; i < t->n_members; i++) {
        memcpy(out->members[i], t->members[i], sizeof(out->members[i]));
        const struct tw_disk *d = tw_inventory_disk_by_device(inv, t->members[i]);
        out->disk[i] = d ? (int)(d - inv->disks) : -1;
    }
    free(t);
    return TW_OK;
}

enum tw_err tw_devmap_resolve(const struct tw_inventory *inv, const char *device,
                              const struct tw_devmap_opts *o, struct tw_devmap_stack *out,
                              struct tw_error *err)
{
    struct roots r;
    char name[NAMELEN];
    enum tw_err rc = get_roots(o, &r, err);
    if (rc != TW_OK)
        return rc;
    if (!device || !kernel_name(&r, device, name))
        return tw_error_set(err, TW_EINVAL, "\"%s\" does not name a block device",
                            device ? device : "");
    return resolve_name(inv, &r, name, device, out, err);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

enum tw_err tw_devmap_stacks(const struct tw_inventory *inv, const struct tw_devmap_opts *o,
                             struct tw_devmap_stack *out, size_t max, size_t *n,
                             struct tw_error *err)
{
    struct roots r;
    *n = 0;
    enum tw_err rc = get_roots(o, &r, err);
    if (rc != TW_OK)
        return rc;
    char p[PATHBUF];
    enum { MAXDEV = 512 };
    char(*names)[NAMELEN] = calloc(MAXDEV, NAMELEN);
    if (!names)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    size_t count = 0;
    DIR *d = join(p, r.sys, "block") ? opendir(p) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) && count < MAXDEV) {
        if (name_ok(e->d_name) &&
            (strncmp(e->d_name, "dm-", 3) == 0 || strncmp(e->d_name, "md", 2) == 0))
            memcpy(names[count++], e->d_name, strlen(e->d_name) + 1);
    }
    if (d)
        closedir(d);
    qsort(names, count, NAMELEN, by_name);
    for (size_t i = 0; i < count && *n < max; i++) {
        struct tw_devmap_stack *s = &out[*n];
        if (resolve_name(inv, &r, names[i], names[i], s, NULL) != TW_OK)
            continue;
        bool ours = false;
        for (size_t m = 0; m < s->n_members; m++)
            ours = ours || s->disk[m] >= 0;
        /* A device that is its own only member has no slaves: not stacked. */
        if (ours && !(s->n_members == 1 && strcmp(s->members[0], s->device) == 0))
            (*n)++;
    }
    free(names);
    return TW_OK;
}

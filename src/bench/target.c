/* target.c - opening, laying out and identifying benchmark targets. */
#include "bench/target.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bench/job.h"
#include "bench/sys.h"

#define LAYOUT_CHUNK (1U << 20)

#define PATHBUF 4096

/* OUT = A + "/" + B when it fits in PATHBUF bytes; false (OUT empty) when
 * not.  Sysfs paths are short, so a miss means a strange root or name, and
 * the lookup just finds nothing. */
static bool join(char out[PATHBUF], const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + 1 + lb + 1 > PATHBUF) {
        out[0] = '\0';
        return false;
    }
    memmove(out, a, la);
    out[la] = '/';
    memcpy(out + la + 1, b, lb + 1);
    return true;
}

static const char *sysroot(const struct tw_target_opts *o)
{
    return o && o->sysfs_root ? o->sysfs_root : "/sys";
}

/* Reads a small sysfs attribute as an unsigned number; 0 if absent. */
static unsigned long long read_ull(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0;
    if (f) {
        if (fscanf(f, "%llu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

static bool exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/*
 * The sysfs folder of block device MAJOR:MINOR, resolved to its real place
 * (…/block/sdc or …/block/sdc/sdc1).  False when sysfs doesn't know it.
 */
static bool dev_dir(const char *root, unsigned major, unsigned minor, char *out,
                    size_t outlen)
{
    char name[64], link[PATHBUF];
    snprintf(name, sizeof(name), "dev/block/%u:%u", major, minor);
    if (!join(link, root, name))
        return false;
    char *real = realpath(link, NULL);
    if (!real)
        return false;
    bool fits = strlen(real) < outlen;
    if (fits)
        memcpy(out, real, strlen(real) + 1);
    free(real);
    return fits;
}

/* The whole disk a sysfs device folder belongs to (itself unless it is a
 * partition). */
static void whole_disk(char *dir)
{
    char p[PATHBUF];
    if (join(p, dir, "partition") && exists(p)) {
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
    }
}

static void add_member(struct tw_target *t, const char *name)
{
    for (size_t i = 0; i < t->n_members; i++)
        if (strcmp(t->members[i], name) == 0)
            return;
    if (t->n_members < TW_RESULT_MAX_MEMBERS && strlen(name) < sizeof(t->members[0]))
        memcpy(t->members[t->n_members++], name, strlen(name) + 1);
}

/* Walks slaves/ down to the physical disks (depth-limited against loops). */
static void collect_members(const char *dir, struct tw_target *t, int depth)
{
    char disk[PATHBUF];
    if (strlen(dir) >= sizeof(disk))
        return;
    memcpy(disk, dir, strlen(dir) + 1);
    whole_disk(disk);
    char slaves[PATHBUF];
    DIR *d = depth < 8 && join(slaves, disk, "slaves") ? opendir(slaves) : NULL;
    bool any = false;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[PATHBUF];
        char *real = join(sub, slaves, e->d_name) ? realpath(sub, NULL) : NULL;
        if (!real)
            continue;
        collect_members(real, t, depth + 1);
        free(real);
        any = true;
    }
    if (d)
        closedir(d);
    if (!any) {
        const char *slash = strrchr(disk, '/');
        add_member(t, slash ? slash + 1 : disk);
    }
}

void tw_target_devinfo(const char *root, unsigned major, unsigned minor,
                       struct tw_target *t)
{
    char dir[PATHBUF];
    t->device[0] = '\0';
    t->n_members = 0;
    if (!dev_dir(root, major, minor, dir, sizeof(dir)))
        return;
    const char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : dir;
    if (strlen(name) < sizeof(t->device))
        memcpy(t->device, name, strlen(name) + 1);
    collect_members(dir, t, 0);
}

static uint32_t lbs_of(const char *root, unsigned major, unsigned minor)
{
    char dir[PATHBUF], p[PATHBUF];
    if (!dev_dir(root, major, minor, dir, sizeof(dir)))
        return 512;
    whole_disk(dir);
    unsigned long long v = join(p, dir, "queue/logical_block_size") ? read_ull(p) : 0;
    return v >= 512 && v <= 65536 ? (uint32_t)v : 512;
}

/*
 * Whether the first SIZE bytes of FD are written data: no holes and no
 * unwritten (fallocated) extents.  Asks the filesystem with FIEMAP; where
 * that is not supported, falls back to comparing allocated blocks.
 */
static bool laid_out(int fd, uint64_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < size)
        return false;
    enum { N = 256 };
    size_t bytes = sizeof(struct fiemap) + N * sizeof(struct fiemap_extent);
    struct fiemap *fm = calloc(1, bytes);
    if (!fm)
        return false;
    uint64_t covered = 0; /* contiguous written bytes from offset 0 */
    bool ok = true;
    for (;;) {
        memset(fm, 0, bytes);
        fm->fm_start = covered;
        fm->fm_length = size - covered;
        fm->fm_flags = FIEMAP_FLAG_SYNC;
        fm->fm_extent_count = N;
        if (ioctl(fd, FS_IOC_FIEMAP, fm) != 0) {
            free(fm);
            return (uint64_t)st.st_blocks * 512 >= size;
        }
        if (fm->fm_mapped_extents == 0)
            break;
        bool last = false;
        for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
            struct fiemap_extent *x = &fm->fm_extents[i];
            if (x->fe_logical > covered ||
                (x->fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC))) {
                ok = false;
                break;
            }
            if (x->fe_logical + x->fe_length > covered)
                covered = x->fe_logical + x->fe_length;
            if (x->fe_flags & FIEMAP_EXTENT_LAST)
                last = true;
        }
        if (!ok || last || covered >= size)
            break;
    }
    free(fm);
    return ok && covered >= size;
}

/* Allocates and fills the first SIZE bytes of the file at FD with random
 * data, through FD (opened O_DIRECT when possible, which keeps the page
 * cache from filling up with a file we are about to read uncached). */
static enum tw_err layout(int fd, const char *path, uint64_t size,
                          const struct tw_target_opts *o, struct tw_error *err)
{
    int r = posix_fallocate(fd, 0, (off_t)size);
    if (r == ENOSPC)
        return tw_error_set(err, TW_EIO,
                            "not enough free space for a %llu-byte file at %s: "
                            "free space or give a smaller --size",
                            (unsigned long long)size, path);
    if (r != 0 && r != EOPNOTSUPP && r != EINVAL)
        return tw_error_set(err, TW_EIO, "allocating %s failed: %s", path, strerror(r));
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, LAYOUT_CHUNK) != 0)
        return tw_error_set(err, TW_ENOMEM, "out of memory for the layout buffer");
    struct tw_rng g;
    uint64_t seed;
    if (tw_sys_random(&seed, sizeof(seed)) != 0)
        seed = tw_now_ns();
    tw_rng_seed(&g, seed);
    enum tw_err rc = TW_OK;
    for (uint64_t done = 0; done < size;) {
        uint64_t *w = buf;
        for (size_t k = 0; k < LAYOUT_CHUNK / sizeof(uint64_t); k++)
            w[k] = tw_rng_next(&g);
        size_t n = size - done < LAYOUT_CHUNK ? (size_t)(size - done) : LAYOUT_CHUNK;
        ssize_t wr = pwrite(fd, buf, n, (off_t)done);
        if (wr < 0 && errno == EINTR)
            continue;
        if (wr < 0 && errno == EINVAL && n % 512) {
            /* A tail shorter than a sector can't go through O_DIRECT. */
            int fd2 = open(path, O_WRONLY);
            wr = fd2 >= 0 ? pwrite(fd2, buf, n, (off_t)done) : -1;
            if (fd2 >= 0)
                close(fd2);
        }
        if (wr <= 0) {
            rc = tw_error_set(err, TW_EIO, "writing %s at offset %llu failed: %s", path,
                              (unsigned long long)done,
                              wr < 0 ? strerror(errno) : "no progress");
            break;
        }
        done += (uint64_t)wr;
        if (o->layout_progress)
            o->layout_progress(done, size, o->layout_arg);
    }
    free(buf);
    if (rc == TW_OK && fdatasync(fd) != 0)
        rc = tw_error_set(err, TW_EIO, "flushing %s failed: %s", path, strerror(errno));
    return rc;
}

static enum tw_err refuse_memory_fs(const char *path, struct tw_error *err)
{
    struct statfs sf;
    if (statfs(path, &sf) != 0)
        return TW_OK;
    if (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC)
        return tw_error_set(err, TW_EUNSUPPORTED,
                            "%s is on a memory filesystem (tmpfs/ramfs), which "
                            "keeps files in RAM: a benchmark there measures "
                            "memory, not a disk; put the file on the disk under "
                            "test",
                            path);
    return TW_OK;
}

static enum tw_err open_direct(const char *path, int flags, bool direct, int *fd,
                               struct tw_error *err)
{
    *fd = open(path, flags | (direct ? O_DIRECT : 0) | O_CLOEXEC);
    if (*fd >= 0)
        return TW_OK;
    if (direct && errno == EINVAL)
        return tw_error_set(err, TW_EUNSUPPORTED,
                            "the filesystem of %s does not support O_DIRECT, so "
                            "the page cache would be measured instead of the "
                            "disk; put the file on another filesystem, or pass "
                            "--buffered (the result then says direct=false)",
                            path);
    if (errno == EBUSY)
        return tw_error_set(err, TW_EPERM,
                            "%s is in use (mounted, or part of an LVM/MD "
                            "device): refusing to write to it",
                            path);
    if (errno == EACCES || errno == EPERM)
        return tw_error_set(err, TW_EPERM, "no permission to open %s%s: %s", path,
                            (flags & O_ACCMODE) == O_RDONLY ? "" : " for writing",
                            strerror(errno));
    return tw_error_set(err, TW_EIO, "can't open %s: %s", path, strerror(errno));
}

static enum tw_err open_file(const char *path, const struct tw_target_opts *o,
                             struct tw_target *t, struct tw_error *err)
{
    struct stat st;
    bool fresh = stat(path, &st) != 0;
    if (fresh && errno != ENOENT)
        return tw_error_set(err, TW_EIO, "can't look at %s: %s", path, strerror(errno));
    uint64_t size = o->size;
    if (!size)
        size = fresh || st.st_size == 0 ? TW_TARGET_DEFAULT_SIZE : (uint64_t)st.st_size;
    enum tw_err rc;
    if (fresh) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0)
            return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO,
                                "can't create %s: %s%s", path, strerror(errno),
                                errno == ENOENT ? " (does its folder exist?)" : "");
        close(fd);
    }
    if ((rc = refuse_memory_fs(path, err)) != TW_OK) {
        if (fresh)
            unlink(path);
        return rc;
    }
    int fd;
    rc = open_direct(path, O_RDWR, !o->buffered, &fd, err);
    if (rc == TW_EPERM && !fresh && !o->write) /* read-only file: reading is enough */
        rc = open_direct(path, O_RDONLY, !o->buffered, &fd, err);
    if (rc != TW_OK) {
        if (fresh)
            unlink(path);
        return rc;
    }
    if (!laid_out(fd, size)) {
        /* Laying out writes random data over [0, size): only ever over a
         * file this call created, an empty one, or with permission. */
        struct stat cur;
        if (!fresh && !o->allow_destructive && fstat(fd, &cur) == 0 && cur.st_size > 0) {
            close(fd);
            return tw_error_set(err, TW_EPERM,
                                "%s exists but is not fully written over the first %llu "
                                "bytes (it is sparse, preallocated or shorter), so it would "
                                "have to be overwritten with random data first; give a new "
                                "file name, or pass --allow-destructive to overwrite it",
                                path, (unsigned long long)size);
        }
        rc = layout(fd, path, size, o, err);
        if (rc != TW_OK) {
            close(fd);
            if (fresh)
                unlink(path);
            return rc;
        }
        t->laid_out = true;
    }
    if (fstat(fd, &st) != 0) {
        close(fd);
        return tw_error_set(err, TW_EIO, "can't stat %s: %s", path, strerror(errno));
    }
    t->fd = fd;
    t->direct = !o->buffered;
    t->size = size;
    t->kind = TW_TARGET_FILE;
    t->lbs = lbs_of(sysroot(o), major(st.st_dev), minor(st.st_dev));
    tw_target_devinfo(sysroot(o), major(st.st_dev), minor(st.st_dev), t);
    return TW_OK;
}

/* Why writing to the device DEV (sysfs folder DIR) must be refused, or
 * NULL: it or a partition is mounted, or something is built on it. */
static const char *in_use(const char *root, const char *dir, dev_t dev,
                          const char *mounts, char *why, size_t whylen)
{
    char holders[PATHBUF];
    DIR *d = join(holders, dir, "holders") ? opendir(holders) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] != '.') {
            snprintf(why, whylen, "it is part of %.200s (LVM, MD or another mapping)",
                     e->d_name);
            closedir(d);
            return why;
        }
    }
    if (d)
        closedir(d);
    FILE *f = fopen(mounts, "r");
    if (!f)
        return NULL;
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        char src[4096], at[4096];
        if (sscanf(line, "%4095s %4095s", src, at) != 2 || src[0] != '/')
            continue;
        struct stat st;
        if (stat(src, &st) != 0 || !S_ISBLK(st.st_mode))
            continue;
        /* The device itself, or a partition of it (same disk, minor above). */
        bool same = st.st_rdev == dev;
        char pdir[PATHBUF], ppart[PATHBUF];
        if (!same && dev_dir(root, major(st.st_rdev), minor(st.st_rdev), pdir,
                             sizeof(pdir))) {
            if (join(ppart, pdir, "partition") && exists(ppart)) {
                whole_disk(pdir);
                same = strcmp(pdir, dir) == 0;
            }
        }
        if (same) {
            snprintf(why, whylen, "%.1000s is mounted at %.1000s", src, at);
            fclose(f);
            return why;
        }
    }
    fclose(f);
    return NULL;
}

static enum tw_err open_block(const char *path, const struct stat *st,
                              const struct tw_target_opts *o, struct tw_target *t,
                              struct tw_error *err)
{
    if (o->write && !o->allow_destructive)
        return tw_error_set(err, TW_EPERM,
                            "refusing to write to block device %s: it would "
                            "destroy the data on it; use a read profile, or "
                            "pass --allow-destructive if it holds nothing you need",
                            path);
    char dir[PATHBUF];
    if (o->write) {
        char why[2400];
        bool known = dev_dir(sysroot(o), major(st->st_rdev), minor(st->st_rdev), dir,
                             sizeof(dir));
        const char *mounts = o->mounts_path ? o->mounts_path : "/proc/self/mounts";
        if (known && in_use(sysroot(o), dir, st->st_rdev, mounts, why, sizeof(why)))
            return tw_error_set(err, TW_EPERM,
                                "refusing to write to %s even with "
                                "--allow-destructive: %s",
                                path, why);
    }
    int fd;
    /* O_EXCL on a block device fails with EBUSY while the kernel has it
     * claimed (mounted, or held by device-mapper/MD): the last guard. */
    enum tw_err rc = open_direct(path, o->write ? O_RDWR | O_EXCL : O_RDONLY,
                                 !o->buffered, &fd, err);
    if (rc != TW_OK)
        return rc;
    uint64_t bytes = 0;
    int lbs = 512;
    if (ioctl(fd, BLKGETSIZE64, &bytes) != 0 || ioctl(fd, BLKSSZGET, &lbs) != 0) {
        close(fd);
        return tw_error_set(err, TW_EIO, "can't read the size of %s: %s", path,
                            strerror(errno));
    }
    t->fd = fd;
    t->direct = !o->buffered;
    t->kind = TW_TARGET_BLOCK;
    t->size = o->size && o->size < bytes ? o->size : bytes;
    t->lbs = (uint32_t)lbs;
    tw_target_devinfo(sysroot(o), major(st->st_rdev), minor(st->st_rdev), t);
    return TW_OK;
}

enum tw_err tw_target_open(const char *path, const struct tw_target_opts *o,
                           struct tw_target *t, struct tw_error *err)
{
    memset(t, 0, sizeof(*t));
    t->fd = -1;
    if (!path || !*path)
        return tw_error_set(err, TW_EINVAL,
                            "no target: give --target with a file on the disk to "
                            "test, or a block device like /dev/sdc");
    if (strlen(path) >= sizeof(t->path))
        return tw_error_set(err, TW_EINVAL, "target path is too long");
    snprintf(t->path, sizeof(t->path), "%s", path);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
        return open_block(path, &st, o, t, err);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return tw_error_set(err, TW_EINVAL,
                            "%s is neither a regular file nor a block device", path);
    /* A missing name under /dev is a disk that isn't there, not a file to
     * create (but /dev/shm is a filesystem, refused as such later). */
    if (stat(path, &st) != 0 && errno == ENOENT && strncmp(path, "/dev/", 5) == 0 &&
        strncmp(path, "/dev/shm/", 9) != 0)
        return tw_error_set(err, TW_ENOENT,
                            "%s does not exist: is the disk attached? "
                            "(tierwise-agent inventory lists the devices)",
                            path);
    return open_file(path, o, t, err);
}

void tw_target_close(struct tw_target *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

void tw_target_to_result(const struct tw_target *t, struct tw_result *r)
{
    snprintf(r->target.path, sizeof(r->target.path), "%s", t->path);
    r->target.kind = t->kind;
    r->target.size_bytes = (int64_t)t->size;
    snprintf(r->target.device, sizeof(r->target.device), "%s", t->device);
    r->target.n_members = t->n_members;
    memcpy(r->target.members, t->members, sizeof(r->target.members));
}

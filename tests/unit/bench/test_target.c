/*
 * test_target.c - file layout and reuse, refusals, and the device map on a
 * fixture sysfs tree.
 *
 * ctest-parts: direct fallocate tmpfs blockdev
 *   (no part)  refusals and the device map: always run
 *   direct     layout and reuse of files, with O_DIRECT on $TMPDIR (or
 *              /var/tmp)
 *   fallocate  a preallocated file, which also needs posix_fallocate there
 *   tmpfs      a file in memory refused, which needs /dev/shm on tmpfs
 *   blockdev   a write to a block device refused, which needs /dev/loop0
 * A part whose need the machine lacks exits 77 (skipped), saying why.
 */
#include "testhelp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "bench/target.h"

static char *dir;

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

static void test_new_file_laid_out_then_reused(void **state)
{
    (void)state;
    char p[4200];
    path_in(p, sizeof(p), "new.bench");
    struct tw_target_opts o = {.size = 4 << 20};
    struct tw_target t;
    struct tw_error err = {0};
    if (tw_target_open(p, &o, &t, &err) != TW_OK)
        fail_msg("%s", err.msg);
    assert_true(t.laid_out);
    assert_true(t.direct);
    assert_int_equal(t.kind, TW_TARGET_FILE);
    assert_int_equal(t.size, 4 << 20);
    assert_true(t.lbs >= 512);
    tw_target_close(&t);
    /* Not sparse: every block is allocated. */
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true((uint64_t)st.st_blocks * 512 >= 4u << 20);
    /* Random data: no 4 KiB block is all zeros, and two blocks differ. */
    FILE *f = fopen(p, "rb");
    static unsigned char a[4096], b[4096], zero[4096];
    assert_int_equal(fread(a, 1, sizeof(a), f), sizeof(a));
    fseek(f, 3 << 20, SEEK_SET);
    assert_int_equal(fread(b, 1, sizeof(b), f), sizeof(b));
    fclose(f);
    assert_true(memcmp(a, zero, sizeof(a)) != 0);
    assert_true(memcmp(a, b, sizeof(a)) != 0);
    /* Opened again: reused as it is. */
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_OK);
    assert_false(t.laid_out);
    tw_target_close(&t);
    /* A larger --size would mean writing over it: refused without
     * permission, and the file is left as it was. */
    o.size = 8 << 20;
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_EPERM);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 4 << 20);
    o.size = 4 << 20;
    /* Without --size an existing file is used whole. */
    o.size = 0;
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_OK);
    assert_int_equal(t.size, 4 << 20);
    assert_false(t.laid_out);
    tw_target_close(&t);
}

static void test_sparse_file_is_laid_out(void **state)
{
    (void)state;
    char p[4200];
    path_in(p, sizeof(p), "sparse.bench");
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, 2 << 20), 0);
    close(fd);
    struct tw_target_opts o = {.size = 2 << 20};
    struct tw_target t;
    struct tw_error err = {0};
    /* Someone else's sparse file is not overwritten without permission. */
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "--allow-destructive"));
    o.allow_destructive = true;
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_OK);
    assert_true(t.laid_out);
    tw_target_close(&t);
}

static void test_fallocated_file_is_laid_out(void **state)
{
    (void)state;
    char p[4200];
    path_in(p, sizeof(p), "falloc.bench");
    int fd = open(p, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(posix_fallocate(fd, 0, 2 << 20), 0);
    close(fd);
    struct tw_target_opts o = {.size = 2 << 20, .allow_destructive = true};
    struct tw_target t;
    struct tw_error err = {0};
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_OK);
    /* Allocated but never written reads back zeros without disk I/O. */
    assert_true(t.laid_out);
    tw_target_close(&t);
    /* A bigger --size than the file extends and lays it out again. */
    o.size = 3 << 20;
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_OK);
    assert_true(t.laid_out);
    assert_int_equal(t.size, 3 << 20);
    tw_target_close(&t);
}

static void test_refusals(void **state)
{
    (void)state;
    struct tw_target_opts o = {.size = 1 << 20};
    struct tw_target t;
    struct tw_error err = {0};
    assert_int_equal(tw_target_open(NULL, &o, &t, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "--target"));
    char p[4200];
    path_in(p, sizeof(p), "no/such/folder/f");
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "does its folder exist"));
    assert_int_equal(tw_target_open("/dev/sdzz9", &o, &t, &err), TW_ENOENT);
    assert_non_null(strstr(err.msg, "attached"));
    assert_int_equal(tw_target_open("/dev/null", &o, &t, &err), TW_EINVAL);
}

static void test_tmpfs_refused(void **state)
{
    (void)state;
    struct tw_target_opts o = {.size = 1 << 20};
    struct tw_target t;
    struct tw_error err = {0};
    char p[64];
    snprintf(p, sizeof(p), "/dev/shm/tw-test-%d", (int)getpid());
    assert_int_equal(tw_target_open(p, &o, &t, &err), TW_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "memory filesystem"));
    assert_int_not_equal(access(p, F_OK), 0); /* nothing left behind */
}

static void test_block_device_write_refused(void **state)
{
    (void)state;
    struct tw_target_opts o = {.write = true};
    struct tw_target t;
    struct tw_error err = {0};
    assert_int_equal(tw_target_open("/dev/loop0", &o, &t, &err), TW_EPERM);
    assert_non_null(strstr(err.msg, "--allow-destructive"));
}

/* A fixture sysfs: dm-8 over sdg, sdh and a partition sdi1 of sdi; sdc
 * alone; sdc1 a partition of it. */
static void mk(const char *rel)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/sys/%s", dir, rel);
    char *s = p + strlen(dir) + 1;
    for (char *q = strchr(s, '/'); q; q = strchr(q + 1, '/')) {
        *q = '\0';
        mkdir(p, 0755);
        *q = '/';
    }
    mkdir(p, 0755);
}

static void ln(const char *target, const char *rel)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/sys/%s", dir, rel);
    assert_int_equal(symlink(target, p), 0);
}

static void touch(const char *rel)
{
    char p[4200];
    snprintf(p, sizeof(p), "%s/sys/%s", dir, rel);
    FILE *f = fopen(p, "w");
    fputs("1\n", f);
    fclose(f);
}

static void test_devinfo_fixture(void **state)
{
    (void)state;
    mk("dev/block");
    mk("devices/virtual/block/dm-8/slaves");
    mk("devices/scsi/block/sdg");
    mk("devices/scsi/block/sdh");
    mk("devices/scsi/block/sdi/sdi1");
    touch("devices/scsi/block/sdi/sdi1/partition");
    mk("devices/scsi/block/sdc/sdc1");
    touch("devices/scsi/block/sdc/sdc1/partition");
    ln("../../../../scsi/block/sdg", "devices/virtual/block/dm-8/slaves/sdg");
    ln("../../../../scsi/block/sdh", "devices/virtual/block/dm-8/slaves/sdh");
    ln("../../../../scsi/block/sdi/sdi1", "devices/virtual/block/dm-8/slaves/sdi1");
    ln("../../devices/virtual/block/dm-8", "dev/block/253:8");
    ln("../../devices/scsi/block/sdc", "dev/block/8:32");
    ln("../../devices/scsi/block/sdc/sdc1", "dev/block/8:33");
    char root[4200];
    snprintf(root, sizeof(root), "%s/sys", dir);

    struct tw_target t;
    memset(&t, 0, sizeof(t));
    tw_target_devinfo(root, 253, 8, &t);
    assert_string_equal(t.device, "dm-8");
    assert_int_equal(t.n_members, 3);
    /* readdir order is not fixed: look for each. */
    const char *want[] = {"sdg", "sdh", "sdi"};
    for (int i = 0; i < 3; i++) {
        bool found = false;
        for (size_t k = 0; k < t.n_members; k++)
            found = found || strcmp(t.members[k], want[i]) == 0;
        if (!found)
            fail_msg("member %s missing", want[i]);
    }
    tw_target_devinfo(root, 8, 33, &t);
    assert_string_equal(t.device, "sdc1");
    assert_int_equal(t.n_members, 1);
    assert_string_equal(t.members[0], "sdc");
    tw_target_devinfo(root, 8, 32, &t);
    assert_string_equal(t.device, "sdc");
    assert_string_equal(t.members[0], "sdc");
    tw_target_devinfo(root, 9, 9, &t); /* unknown device */
    assert_string_equal(t.device, "");
    assert_int_equal(t.n_members, 0);
}

/* What each part needs: NULL when the machine has it, else why not. */
static const char *lacks_direct(void)
{
    char probe[4200];
    snprintf(probe, sizeof(probe), "%s/probe", dir);
    int fd = open(probe, O_CREAT | O_RDWR | O_DIRECT, 0600);
    if (fd < 0)
        return "O_DIRECT is not supported in the scratch folder";
    close(fd);
    unlink(probe);
    return NULL;
}

static const char *lacks_fallocate(void)
{
    const char *why = lacks_direct();
    if (why)
        return why;
    char probe[4200];
    snprintf(probe, sizeof(probe), "%s/probe", dir);
    int fd = open(probe, O_CREAT | O_WRONLY, 0600);
    int rc = fd >= 0 ? posix_fallocate(fd, 0, 4096) : -1;
    if (fd >= 0)
        close(fd);
    unlink(probe);
    return rc == 0 ? NULL : "posix_fallocate is not supported in the scratch folder";
}

static const char *lacks_tmpfs(void)
{
    struct statfs sf;
    return statfs("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC
               ? NULL : "/dev/shm is not a tmpfs";
}

static const char *lacks_blockdev(void)
{
    struct stat st;
    return stat("/dev/loop0", &st) == 0 && S_ISBLK(st.st_mode)
               ? NULL : "/dev/loop0 is not a block device";
}

static int run_always(void)
{
    static const struct CMUnitTest t[] = {
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_devinfo_fixture),
    };
    return cmocka_run_group_tests_name("target", t, NULL, NULL);
}

static int run_direct(void)
{
    static const struct CMUnitTest t[] = {
        cmocka_unit_test(test_new_file_laid_out_then_reused),
        cmocka_unit_test(test_sparse_file_is_laid_out),
    };
    return cmocka_run_group_tests_name("target/direct", t, NULL, NULL);
}

static int run_fallocate(void)
{
    static const struct CMUnitTest t[] = {cmocka_unit_test(test_fallocated_file_is_laid_out)};
    return cmocka_run_group_tests_name("target/fallocate", t, NULL, NULL);
}

static int run_tmpfs(void)
{
    static const struct CMUnitTest t[] = {cmocka_unit_test(test_tmpfs_refused)};
    return cmocka_run_group_tests_name("target/tmpfs", t, NULL, NULL);
}

static int run_blockdev(void)
{
    static const struct CMUnitTest t[] = {cmocka_unit_test(test_block_device_write_refused)};
    return cmocka_run_group_tests_name("target/blockdev", t, NULL, NULL);
}

/* argv[1] names the part (see the top); none runs the checks that need
 * nothing special. */
int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        const char *(*lacks)(void);
        int (*run)(void);
    } parts[] = {
        {"", NULL, run_always},
        {"direct", lacks_direct, run_direct},
        {"fallocate", lacks_fallocate, run_fallocate},
        {"tmpfs", lacks_tmpfs, run_tmpfs},
        {"blockdev", lacks_blockdev, run_blockdev},
    };
    const size_t n = sizeof(parts) / sizeof(parts[0]);
    const char *want = argc > 1 ? argv[1] : "";
    size_t i = 0;
    while (i < n && strcmp(parts[i].name, want) != 0)
        i++;
    if (i == n) {
        fprintf(stderr, "unknown part \"%s\"\n", want);
        return 2;
    }
    dir = th_tmpdir();
    const char *why = parts[i].lacks ? parts[i].lacks() : NULL;
    int status;
    if (why) {
        fprintf(stderr, "%s (%s): skipped\n", why, dir);
        status = 77;
    } else {
        status = parts[i].run();
    }
    th_rmtree(dir);
    free(dir);
    return status;
}

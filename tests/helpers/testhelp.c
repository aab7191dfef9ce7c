/* testhelp.c - fixtures and scratch directories for the unit tests. */
#include "testhelp.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *th_fixture(const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", TW_FIXTURES, rel);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("fixture %s can't be opened", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n)
        fail_msg("fixture %s can't be read", path);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

void th_fixture_copy(const char *rel, const char *path)
{
    size_t len;
    char *bytes = th_fixture(rel, &len);
    FILE *out = fopen(path, "wb");
    if (!out)
        fail_msg("can't create %s for fixture %s", path, rel);
    if (fwrite(bytes, 1, len, out) != len || fclose(out) != 0)
        fail_msg("can't write %s for fixture %s", path, rel);
    free(bytes);
}

char *th_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof(tmpl), "%s/tw-test-XXXXXX", base && *base ? base : "/var/tmp");
    char *d = mkdtemp(tmpl);
    if (!d)
        fail_msg("mkdtemp(%s) failed", tmpl);
    return strdup(d);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void th_rmtree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

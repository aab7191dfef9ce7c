/*
 * static.c - serving the dashboard's files without leaving the web
 * directory.
 */
#include "server/static.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    const char *ext, *type;
} types[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"json", "application/json"},
    {"svg", "image/svg+xml"},
    {"png", "image/png"},
    {"ico", "image/x-icon"},
    {"txt", "text/plain; charset=utf-8"},
    {"map", "application/json"},
    {"woff2", "font/woff2"},
};

const char *tw_static_content_type(const char *name)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    const char *dot = strrchr(base, '.');
    if (dot && dot != base)
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
            if (strcasecmp(dot + 1, types[i].ext) == 0)
                return types[i].type;
    return "application/octet-stream";
}

bool tw_static_rel_path(const char *url_path, char *rel, size_t rellen)
{
    if (!url_path || url_path[0] != '/' || rellen == 0)
        return false;
    if (strcmp(url_path, "/") == 0) {
        if (rellen < sizeof("index.html"))
            return false;
        memcpy(rel, "index.html", sizeof("index.html"));
        return true;
    }
    const char *s = url_path + 1;
    size_t len = strlen(s);
    if (len == 0 || len >= rellen || len > 512)
        return false;
    /* Segment by segment: plain names only. */
    const char *seg = s;
    for (size_t i = 0; i <= len; i++) {
        char c = s[i];
        if (c == '/' || c == '\0') {
            size_t sl = (size_t)(s + i - seg);
            if (sl == 0 || seg[0] == '.')
                return false; /* empty, ".", "..", hidden files */
            seg = s + i + 1;
            continue;
        }
        if ((unsigned char)c < 0x20 || c == 0x7f || c == '\\' || c == ':')
            return false;
    }
    memcpy(rel, s, len + 1);
    return true;
}

enum tw_err tw_static_root(const char *dir, char *out, size_t outlen, struct tw_error *err)
{
    char real[PATH_MAX];
    struct stat sb;
    if (!realpath(dir, real))
        return tw_error_set(err, TW_ENOENT, "web directory %s: %s", dir, strerror(errno));
    if (stat(real, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tw_error_set(err, TW_ENOENT, "web directory %s is not a directory", dir);
    if (strlen(real) + 1 > outlen)
        return tw_error_set(err, TW_EINVAL, "web directory path %s is too long", real);
    memcpy(out, real, strlen(real) + 1);
    return TW_OK;
}

enum tw_err tw_static_open(const char *root, const char *url_path, int *fd, size_t *size,
                           const char **type, struct tw_error *err)
{
    *fd = -1;
    char rel[600], joined[PATH_MAX + 8], real[PATH_MAX];
    if (!tw_static_rel_path(url_path, rel, sizeof(rel)))
        return tw_error_set(err, TW_ENOENT, "no such file");
    int n = snprintf(joined, sizeof(joined), "%s/%s", root, rel);
    if (n < 0 || (size_t)n >= sizeof(joined))
        return tw_error_set(err, TW_ENOENT, "no such file");
    if (!realpath(joined, real))
        return tw_error_set(err, TW_ENOENT, "no such file");
    size_t rl = strlen(root);
    /* The resolved file must lie below ROOT (a link may point elsewhere). */
    if (strncmp(real, root, rl) != 0 || (real[rl] != '/' && !(rl == 1 && root[0] == '/')))
        return tw_error_set(err, TW_ENOENT, "no such file");
    /* O_NONBLOCK: a FIFO left in the directory must not hang the
     * request's thread in open() (it is refused below as not a file). */
    int f = open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (f < 0)
        return tw_error_set(err, errno == ENOENT || errno == ELOOP ? TW_ENOENT : TW_EIO,
                            "can't open %s: %s", real, strerror(errno));
    struct stat sb;
    if (fstat(f, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (off_t)TW_STATIC_MAX_FILE) {
        close(f);
        return tw_error_set(err, TW_ENOENT, "no such file");
    }
    *fd = f;
    *size = (size_t)sb.st_size;
    *type = tw_static_content_type(rel);
    return TW_OK;
}

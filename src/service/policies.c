/*
 * policies.c - the policies a backend serves (policies.h): every *.json
 * file of a folder, parsed at start, sorted by name, kept read-only.
 */
#include "service/policies.h"

#include "core/jcheck.h"
#include "core/jsonread.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tw_svc_policies_cleanup(struct tw_svc_policies *ps)
{
    if (!ps)
        return;
    for (size_t i = 0; i < ps->n; i++) {
        tw_policy_cleanup(&ps->v[i].policy);
        free(ps->v[i].text);
    }
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}

static int by_file(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_name(const void *a, const void *b)
{
    const struct tw_svc_policy *x = a, *y = b;
    return strcmp(x->policy.name, y->policy.name);
}

/* Reads PATH (a regular file of at most TW_POLICY_FILE_MAX bytes) into a
 * new NUL-terminated buffer.  A symbolic link is followed: a Kubernetes
 * ConfigMap mounted as a folder is links (NAME.json -> ..data/NAME.json),
 * and the folder is the operator's to fill.  What is opened must be a
 * regular file (fstat, so a link swapped for something else between the
 * listing and the open is still refused); O_NONBLOCK so a FIFO put there
 * can't hang the start before that check. */
static enum tw_err read_text(const char *path, char **out, size_t *len, struct tw_error *err)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO, "%s: can't open: %s",
                            path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return tw_error_set(err, TW_EIO, "%s: not a regular file", path);
    }
    if (sb.st_size > TW_POLICY_FILE_MAX) {
        close(fd);
        return tw_error_set(err, TW_EPARSE, "%s: larger than %d bytes; a policy is smaller",
                            path, TW_POLICY_FILE_MAX);
    }
    char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        close(fd);
        return tw_error_set(err, TW_ENOMEM, "%s: out of memory", path);
    }
    size_t n = 0;
    for (;;) {
        ssize_t k = read(fd, buf + n, (size_t)sb.st_size + 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return tw_error_set(err, TW_EIO, "%s: can't read: %s", path, strerror(e));
        }
        if (k == 0)
            break;
        n += (size_t)k;
        if (n > (size_t)sb.st_size) { /* grew while read */
            free(buf);
            close(fd);
            return tw_error_set(err, TW_EIO, "%s: changed while it was read", path);
        }
    }
    close(fd);
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return TW_OK;
}

/* The byte offset of the value of the top-level MEMBER in TEXT (a
 * document the policy parser accepted), or of the document's object when
 * it has no such member. */
static size_t member_off(const char *text, size_t len, const char *member)
{
    struct tw_jr r;
    struct tw_error e = {0};
    tw_jr_init(&r, text, len, NULL, TW_JR_STRICT, TW_JR_MAX_DEPTH, &e);
    tw_jr_peek(&r);
    size_t off = (size_t)(r.p - r.base);
    struct tw_jr_obj o = {0};
    char key[64];
    while (tw_jr_member(&r, &o, key, sizeof(key))) {
        if (!o.key_over && strcmp(key, member) == 0) {
            tw_jr_peek(&r);
            off = (size_t)(r.p - r.base);
            break;
        }
        if (!tw_jr_skip(&r))
            break;
    }
    tw_jr_done(&r);
    return off;
}

enum tw_err tw_svc_policy_zone_check(const struct tw_policy *p, const char *text, size_t len,
                                     tw_svc_tz_load_fn load, struct tw_policy_diag *d,
                                     struct tw_error *err)
{
    memset(d, 0, sizeof(*d));
    if (!load)
        return TW_OK;
    const char *name = p->timezone[0] ? p->timezone : "UTC";
    struct tw_tz *z = NULL;
    struct tw_error lerr = {0};
    enum tw_err rc = load(name, &z, &lerr);
    tw_tz_free(z);
    if (rc == TW_OK)
        return TW_OK;
    if (rc != TW_EIO && rc != TW_ENOMEM)
        rc = TW_EPARSE;
    snprintf(d->path, sizeof(d->path), "$.timezone");
    tw_jc_position(text, len, member_off(text, len, "timezone"), &d->line, &d->column);
    snprintf(d->msg, sizeof(d->msg), "the zone \"%.60s\" does not load here: %.220s", name,
             lerr.msg[0] ? lerr.msg : tw_strerror(lerr.code));
    return tw_error_set_at(err, rc, d->line, d->column, "%s (line %ld, column %ld): %s",
                           d->path, d->line, d->column, d->msg);
}

enum tw_err tw_svc_policies_load(const char *dir, struct tw_store *st,
                                 struct tw_svc_policies *out, struct tw_policy_diags *diags,
                                 struct tw_error *err)
{
    return tw_svc_policies_load_zones(dir, st, NULL, out, diags, err);
}

enum tw_err tw_svc_policies_load_zones(const char *dir, struct tw_store *st,
                                       tw_svc_tz_load_fn load, struct tw_svc_policies *out,
                                       struct tw_policy_diags *diags, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    if (diags) {
        diags->n = 0;
        diags->more = false;
    }
    if (!dir || !*dir)
        return tw_error_set(err, TW_EINVAL, "no policies folder named");
    if (strlen(dir) >= sizeof(out->dir) - 256)
        return tw_error_set(err, TW_EINVAL, "the policies folder's path is too long");
    snprintf(out->dir, sizeof(out->dir), "%s", dir);
    DIR *d = opendir(dir);
    if (!d)
        return tw_error_set(err, errno == ENOENT || errno == ENOTDIR ? TW_ENOENT : TW_EIO,
                            "policies folder %s: can't open: %s", dir, strerror(errno));
    char **files = NULL;
    size_t nf = 0;
    enum tw_err rc = TW_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t k = strlen(e->d_name);
        if (k < 6 || strcmp(e->d_name + k - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (tw_svc_policy_is_schema(e->d_name))
            continue;
        char path[sizeof(out->dir) + 256];
        snprintf(path, sizeof(path), "%s/%.255s", dir, e->d_name);
        /* stat follows a link (a ConfigMap's files are links); one that
         * leads nowhere is a policy that can't be read, not one to skip. */
        struct stat sb;
        if (stat(path, &sb) != 0) {
            int why = errno;
            if (why == ENOENT && lstat(path, &sb) != 0)
                continue; /* gone since the listing */
            rc = tw_error_set(err, TW_EIO, "%s: can't read: %s%s", path, strerror(why),
                              why == ENOENT  ? " (a symbolic link to nothing)"
                              : why == ELOOP ? " (a loop of symbolic links)"
                                             : "");
            break;
        }
        if (!S_ISREG(sb.st_mode))
            continue;
        char **nv = realloc(files, (nf + 1) * sizeof(*nv));
        char *dup = nv ? strdup(path) : NULL;
        if (!dup) {
            files = nv ? nv : files;
            rc = tw_error_set(err, TW_ENOMEM, "out of memory listing %s", dir);
            break;
        }
        files = nv;
        files[nf++] = dup;
    }
    closedir(d);
    if (rc == TW_OK && nf) {
        qsort(files, nf, sizeof(*files), by_file);
        out->v = calloc(nf, sizeof(*out->v));
        if (!out->v)
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading %s", dir);
    }
    for (size_t i = 0; rc == TW_OK && i < nf; i++) {
        struct tw_svc_policy *sp = &out->v[out->n];
        rc = read_text(files[i], &sp->text, &sp->len, err);
        if (rc != TW_OK)
            break;
        snprintf(sp->path, sizeof(sp->path), "%s", files[i]);
        struct tw_error perr = {0};
        struct tw_policy_diags local;
        struct tw_policy_diags *dg = diags ? diags : &local;
        rc = tw_policy_parse(sp->text, sp->len, &sp->policy, dg, &perr);
        if (rc != TW_OK) {
            if (rc == TW_EPARSE && dg->n > 0)
                tw_error_set_at(err, rc, dg->d[0].line, dg->d[0].column, "%s:%ld:%ld: %s: %s",
                                files[i], dg->d[0].line, dg->d[0].column, dg->d[0].path,
                                dg->d[0].msg);
            else
                tw_error_set(err, rc, "%s: %s", files[i], perr.msg);
            tw_policy_cleanup(&sp->policy);
            free(sp->text);
            sp->text = NULL;
            break;
        }
        struct tw_policy_diag zd;
        rc = tw_svc_policy_zone_check(&sp->policy, sp->text, sp->len, load, &zd, &perr);
        if (rc != TW_OK) {
            tw_error_set_at(err, rc, zd.line, zd.column, "%s:%ld:%ld: %s: %s", files[i], zd.line,
                            zd.column, zd.path, zd.msg);
            if (diags) {
                diags->d[0] = zd;
                diags->n = 1;
            }
            tw_policy_cleanup(&sp->policy);
            free(sp->text);
            sp->text = NULL;
            break;
        }
        out->n++;
        for (size_t k = 0; k + 1 < out->n; k++)
            if (strcmp(out->v[k].policy.name, sp->policy.name) == 0) {
                rc = tw_error_set(err, TW_EINVAL,
                                  "two policies are named \"%s\": %s and %s; a name must be "
                                  "unique in the folder",
                                  sp->policy.name, out->v[k].path, sp->path);
                break;
            }
    }
    for (size_t i = 0; i < nf; i++)
        free(files[i]);
    free(files);
    if (rc == TW_OK && out->n > 1)
        qsort(out->v, out->n, sizeof(*out->v), by_name);
    for (size_t i = 0; rc == TW_OK && st && i < out->n; i++) {
        char *body = tw_policy_to_json(&out->v[i].policy);
        if (!body) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory storing the policies");
            break;
        }
        rc = tw_store_policy_put(st, out->v[i].policy.name, body, err);
        free(body);
    }
    if (rc != TW_OK) {
        char dirsave[sizeof(out->dir)];
        memcpy(dirsave, out->dir, sizeof(dirsave));
        tw_svc_policies_cleanup(out);
        memcpy(out->dir, dirsave, sizeof(dirsave));
    }
    return rc;
}

const struct tw_svc_policy *tw_svc_policies_find(const struct tw_svc_policies *ps,
                                                 const char *name)
{
    if (!ps || !name || !ps->v)
        return NULL;
    size_t lo = 0, hi = ps->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ps->v[mid].policy.name, name);
        if (c == 0)
            return &ps->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool tw_svc_policy_is_schema(const char *file)
{
    const char *base = strrchr(file, '/');
    return strcmp(base ? base + 1 : file, "policy.schema.json") == 0;
}

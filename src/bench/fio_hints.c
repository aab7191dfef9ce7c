/*
 * fio_hints.c - what a run's job file or command line says, for what fio's
 * output leaves out.
 *
 * fio's normal text shows rw, bs, ioengine and iodepth on its job header
 * line, but not direct=, filename=/directory= or rwmixread=; fio 2.x's JSON
 * may carry no job options at all.  The user usually still has the job file
 * (Microsoft's fioread.ini) or the command line, and import-fio takes them
 * (--job-file, --fio-args).  Both are read here into one shape: an array of
 * sections in their order, each {"name": NAME, "options": {KEY: "VALUE"}},
 * where a section named "global" holds options for the jobs after it.  fio's
 * own rules, as far as they matter here:
 *  - a job file is INI: "[name]" starts a section, "key=value" or a bare
 *    "key" (a flag, "1") sets an option, lines starting with ';' or '#' are
 *    comments; "include" lines are left alone (the file is not read);
 *  - on the command line, "--name=X" starts job X and options before the
 *    first --name are global; "-opt" works like "--opt", "--opt value" like
 *    "--opt=value" for the options read here; other words (job file names,
 *    "fio" itself) are skipped.
 * Both parsers take a buffer and a length (they are fuzzed).
 */
#include "bench/fio_import.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#define HINT_LINE_CAP 4096   /* a job file's longest line */
#define HINT_MAX_SECTIONS 256
#define HINT_MAX_OPTIONS 512 /* per section */

/* Appends a new section NAME to SECS; returns its options (borrowed). */
static json_t *new_section(json_t *secs, const char *name, struct tw_error *err)
{
    if (json_array_size(secs) >= HINT_MAX_SECTIONS) {
        tw_error_set(err, TW_EPARSE, "more than %d job sections: not a job file of one run",
                     HINT_MAX_SECTIONS);
        return NULL;
    }
    /* Names are bytes from outside: only printable ASCII is kept, so the
     * name is valid UTF-8 for jansson (else its refusal would read as
     * running out of memory). */
    char safe[HINT_LINE_CAP];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof(safe); n++) {
        unsigned char c = (unsigned char)name[n];
        safe[n] = c >= 32 && c < 127 ? (char)c : '?';
    }
    safe[n] = '\0';
    json_t *opts = json_object();
    json_t *s = json_pack("{s:s,s:o}", "name", safe, "options", opts);
    if (!s || json_array_append_new(secs, s) != 0) {
        tw_error_set(err, TW_ENOMEM, "out of memory reading the job options");
        return NULL;
    }
    return opts;
}

/* Sets KEY (lower-cased, fio's options are) to VALUE in OPTS. */
static bool set_opt(json_t *opts, const char *key, size_t klen, const char *val, size_t vlen,
                    struct tw_error *err)
{
    char k[64];
    if (klen == 0 || klen >= sizeof(k))
        return true; /* no option tierwise reads is that long */
    for (size_t i = 0; i < klen; i++) {
        unsigned char c = (unsigned char)key[i];
        /* printable ASCII only, as for values: a key jansson can hold */
        k[i] = c >= 32 && c < 127 ? (char)tolower(c) : '?';
    }
    k[klen] = '\0';
    if (json_object_size(opts) >= HINT_MAX_OPTIONS && !json_object_get(opts, k)) {
        tw_error_set(err, TW_EPARSE, "a job section sets more than %d options",
                     HINT_MAX_OPTIONS);
        return false;
    }
    /* Values are bytes from outside: only printable ASCII is kept (fio's
     * option values are), so every string stays valid UTF-8. */
    char v[HINT_LINE_CAP];
    size_t n = 0;
    for (size_t i = 0; i < vlen && n + 1 < sizeof(v); i++) {
        unsigned char c = (unsigned char)val[i];
        v[n++] = c >= 32 && c < 127 ? (char)c : '?';
    }
    v[n] = '\0';
    if (json_object_set_new(opts, k, json_string(v)) != 0) {
        tw_error_set(err, TW_ENOMEM, "out of memory reading the job options");
        return false;
    }
    return true;
}

static void trim(const char **s, size_t *n)
{
    while (*n > 0 && isspace((unsigned char)**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && isspace((unsigned char)(*s)[*n - 1]))
        (*n)--;
}

enum tw_err tw_fio_jobfile_parse(const char *buf, size_t len, struct json_t **out,
                                 struct tw_error *err)
{
    *out = NULL;
    if (!buf)
        len = 0;
    json_t *secs = json_array();
    if (!secs)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the job file");
    json_t *opts = NULL;
    long no = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - s) : len - pos;
        pos += nl ? n + 1 : n;
        no++;
        if (n > HINT_LINE_CAP) {
            json_decref(secs);
            return tw_error_set_at(err, TW_EPARSE, no, 0,
                                   "line %ld of the job file is longer than %d bytes: is it "
                                   "fio's job file?",
                                   no, HINT_LINE_CAP);
        }
        trim(&s, &n);
        if (n == 0 || s[0] == ';' || s[0] == '#')
            continue;
        if (s[0] == '[') {
            const char *close = memchr(s, ']', n);
            if (!close) {
                json_decref(secs);
                return tw_error_set_at(err, TW_EPARSE, no, 1,
                                       "line %ld of the job file opens a section with '[' "
                                       "but never closes it with ']'",
                                       no);
            }
            const char *name = s + 1;
            size_t nn = (size_t)(close - name);
            trim(&name, &nn);
            char nm[128];
            size_t k = nn < sizeof(nm) - 1 ? nn : sizeof(nm) - 1;
            for (size_t i = 0; i < k; i++) {
                unsigned char c = (unsigned char)name[i];
                nm[i] = c >= 32 && c < 127 ? (char)c : '?';
            }
            nm[k] = '\0';
            if (!(opts = new_section(secs, nm, err))) {
                json_decref(secs);
                return err ? err->code : TW_EPARSE;
            }
            continue;
        }
        if (n >= 8 && strncmp(s, "include ", 8) == 0)
            continue;
        if (!opts) {
            json_decref(secs);
            return tw_error_set_at(err, TW_EPARSE, no, 1,
                                   "line %ld of the job file sets an option before any "
                                   "[section]: give fio's job file (INI, [global] and one "
                                   "[name] per job)",
                                   no);
        }
        const char *eq = memchr(s, '=', n);
        const char *key = s, *val = "1";
        size_t kl = eq ? (size_t)(eq - s) : n, vl = 1;
        if (eq) {
            val = eq + 1;
            vl = n - kl - 1;
            trim(&val, &vl);
        }
        trim(&key, &kl);
        if (!set_opt(opts, key, kl, val, vl, err)) {
            json_decref(secs);
            return err ? err->code : TW_EPARSE;
        }
    }
    if (json_array_size(secs) == 0) {
        json_decref(secs);
        return tw_error_set(err, TW_EPARSE,
                            "the job file has no [section]: give fio's job file (INI, "
                            "[global] and one [name] per job)");
    }
    *out = secs;
    return TW_OK;
}

/* The next shell word of S[0..N) from *POS into W (quotes and backslashes
 * as sh reads them).  False at the end; *BAD when a quote is left open. */
static bool next_word(const char *s, size_t n, size_t *pos, char *w, size_t cap, bool *bad)
{
    size_t p = *pos, k = 0;
    while (p < n && isspace((unsigned char)s[p]))
        p++;
    if (p >= n) {
        *pos = p;
        return false;
    }
    char q = 0;
    for (; p < n; p++) {
        char c = s[p];
        if (q) {
            if (c == q)
                q = 0;
            else if (c == '\\' && q == '"' && p + 1 < n) {
                p++;
                if (k + 1 < cap)
                    w[k++] = s[p];
            } else if (k + 1 < cap)
                w[k++] = c;
            continue;
        }
        if (isspace((unsigned char)c))
            break;
        if (c == '\'' || c == '"')
            q = c;
        else if (c == '\\' && p + 1 < n) {
            if (k + 1 < cap)
                w[k++] = s[++p];
            else
                p++;
        } else if (k + 1 < cap)
            w[k++] = c;
    }
    w[k] = '\0';
    *bad = q != 0;
    *pos = p;
    return true;
}

/* Options that take a value, so that "--direct 1" reads as "--direct=1". */
static bool takes_value(const char *key)
{
    static const char *const keys[] = {"name",      "direct",    "buffered", "filename",
                                       "directory", "rwmixread", "rwmixwrite", "rw",
                                       "readwrite", "ioengine",  "bs",       "blocksize",
                                       "iodepth",   "numjobs",   "size"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(key, keys[i]) == 0)
            return true;
    return false;
}

enum tw_err tw_fio_args_parse(const char *buf, size_t len, struct json_t **out,
                              struct tw_error *err)
{
    *out = NULL;
    if (!buf)
        len = 0;
    json_t *secs = json_array();
    json_t *opts = secs ? new_section(secs, "global", err) : NULL;
    if (!opts) {
        json_decref(secs);
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the fio arguments");
    }
    char w[HINT_LINE_CAP], nextw[HINT_LINE_CAP];
    size_t pos = 0;
    bool bad = false;
    while (next_word(buf, len, &pos, w, sizeof(w), &bad)) {
        if (bad)
            break;
        if (w[0] != '-' || !w[1])
            continue; /* "fio", a job file's name */
        const char *key = w + (w[1] == '-' ? 2 : 1);
        const char *eq = strchr(key, '=');
        size_t kl = eq ? (size_t)(eq - key) : strlen(key);
        char k[64];
        if (kl == 0 || kl >= sizeof(k))
            continue;
        memcpy(k, key, kl);
        k[kl] = '\0';
        const char *val = eq ? eq + 1 : "1";
        if (!eq && takes_value(k)) {
            size_t save = pos;
            if (next_word(buf, len, &pos, nextw, sizeof(nextw), &bad) && !bad &&
                nextw[0] != '-')
                val = nextw;
            else
                pos = save;
        }
        if (strcmp(k, "name") == 0) {
            if (!(opts = new_section(secs, val, err))) {
                json_decref(secs);
                return err ? err->code : TW_EPARSE;
            }
            continue;
        }
        if (!set_opt(opts, k, kl, val, strlen(val), err)) {
            json_decref(secs);
            return err ? err->code : TW_EPARSE;
        }
    }
    if (bad) {
        json_decref(secs);
        return tw_error_set(err, TW_EPARSE,
                            "the fio arguments leave a quote open: give fio's command line as "
                            "the shell would see it, e.g. --fio-args \"--direct=1 "
                            "--filename=/dev/sdc\"");
    }
    *out = secs;
    return TW_OK;
}

/*
 * The options of job NAME: the global sections before it, then its own
 * section, later ones overriding earlier.  When no section has that name
 * and exactly one job section exists, that one is taken (a job file whose
 * section was renamed on the command line).  Returns a new object, or
 * NULL when nothing matches (*SECTIONS then names the job sections, for a
 * message) or out of memory.
 */
/* Whether section name N (printable ASCII, '?' for other bytes) is job
 * NAME of fio's output. */
static bool same_name(const char *n, const char *name)
{
    for (; *n && *name; n++, name++) {
        unsigned char c = (unsigned char)*name;
        if (*n != (c >= 32 && c < 127 ? (char)c : '?'))
            return false;
    }
    return !*n && !*name;
}

struct json_t *tw_fio_hint_options(const struct json_t *secs, const char *name, char *sections,
                                   size_t cap)
{
    size_t i, jobs = 0, only = 0, match = (size_t)-1;
    const json_t *s;
    if (sections && cap)
        sections[0] = '\0';
    json_array_foreach((json_t *)secs, i, s) {
        const char *n = json_string_value(json_object_get(s, "name"));
        if (!n || strcmp(n, "global") == 0)
            continue;
        if (sections && cap) {
            size_t used = strlen(sections);
            snprintf(sections + used, cap - used, "%s[%s]", used ? ", " : "", n);
        }
        jobs++;
        only = i;
        if (match == (size_t)-1 && same_name(n, name))
            match = i;
    }
    if (match == (size_t)-1) {
        if (jobs == 1)
            match = only;
        else if (jobs == 0)
            match = json_array_size(secs); /* globals only: all of them apply */
        else
            return NULL;
    }
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_array_foreach((json_t *)secs, i, s) {
        const char *n = json_string_value(json_object_get(s, "name"));
        if (i > match)
            break;
        if (i == match || (n && strcmp(n, "global") == 0))
            json_object_update(o, json_object_get(s, "options"));
    }
    return o;
}

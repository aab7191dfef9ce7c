/*
 * fuzz_fio_import.c - fio output import on arbitrary bytes.
 *
 * Runs the auto-detecting entry point and the text parser directly (the
 * detection would send most mutated JSON to the JSON side only), and the
 * two parsers of what a user adds (a job file, fio's command line).  An
 * input holding a line "====" is split there: the part before is fio's
 * output, the part after is given as its job file and as its fio
 * arguments.  Every part is used at its exact size with no terminator, so
 * a read past its end shows up under ASan.  Checks what the import
 * promises: a result that is either TW_OK with sane figures, or an error
 * with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "bench/fio_import.h"
#include "core/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(enum tw_err rc, const struct tw_result *r, const struct tw_error *err)
{
    if (rc != TW_OK) {
        if (err->msg[0] == '\0')
            abort(); /* every failure says what is wrong */
        return;
    }
    const struct tw_dir *dirs[2] = {&r->read, &r->write};
    for (int i = 0; i < 2; i++) {
        const struct tw_dir *d = dirs[i];
        if (!d->present)
            continue;
        if (d->ios <= 0 || d->bytes < 0 || !isfinite(d->iops) || d->iops < 0 ||
            !isfinite(d->bw_bytes_per_s) || !isfinite(d->lat.mean_ns) ||
            !isfinite(d->lat.stdev_ns) || d->lat.n_pct > TW_RESULT_MAX_PCT)
            abort();
    }
    if (r->method.jobs < 1 || r->method.queue_depth < 1 || r->method.effective_queue_depth < 1 ||
        r->method.block_size_bytes < 1 || r->method.read_pct < 0 || r->method.read_pct > 100 ||
        !isfinite(r->cpu.usr_s) || !isfinite(r->cpu.sys_s) ||
        r->target.n_members > TW_RESULT_MAX_MEMBERS ||
        (r->method.direct == TW_DIRECT_UNKNOWN) != (r->method.direct_basis == TW_DIRECT_BY_NONE))
        abort();
    /* What was imported must be a record that can be written and read
     * back (jansson refuses strings that are not valid UTF-8). */
    char *s = tw_result_to_json(r, 0);
    if (!s)
        abort();
    struct tw_result *back = malloc(sizeof(*back));
    struct tw_error e2 = {0};
    if (back && tw_result_from_json(s, strlen(s), back, &e2) != TW_OK)
        abort();
    free(back);
    free(s);
}

/* A parser of hints: a new array of sections, or an error with a message. */
static void check_hints(enum tw_err rc, json_t *secs, const struct tw_error *err)
{
    if (rc != TW_OK) {
        if (secs || err->msg[0] == '\0')
            abort();
        return;
    }
    if (!json_is_array(secs) || json_array_size(secs) == 0)
        abort();
    /* Every section's options merge, for any name. */
    char names[256];
    json_t *o = tw_fio_hint_options(secs, "global", names, sizeof(names));
    json_decref(o);
    json_decref(secs);
}

/* An exact-size heap copy of N bytes at P (no terminator). */
static char *dup_exact(const char *p, size_t n)
{
    char *c = malloc(n ? n : 1);
    if (c && n)
        memcpy(c, p, n);
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tw_result *r = malloc(sizeof(*r));
    if (!r)
        return 0;
    struct tw_error err = {0};
    const char *buf = (const char *)data;
    check(tw_fio_import(buf, size, r, &err), r, &err);
    memset(&err, 0, sizeof(err));
    check(tw_fio_import_text(buf, size, r, &err), r, &err);

    /* The call before the check: the parser sets SECS. */
    json_t *secs = NULL;
    memset(&err, 0, sizeof(err));
    enum tw_err rc = tw_fio_jobfile_parse(buf, size, &secs, &err);
    check_hints(rc, secs, &err);
    secs = NULL;
    memset(&err, 0, sizeof(err));
    rc = tw_fio_args_parse(buf, size, &secs, &err);
    check_hints(rc, secs, &err);

    const char *sep = size >= 6 ? memmem(buf, size, "\n====\n", 6) : NULL;
    if (sep) {
        size_t out_len = (size_t)(sep - buf) + 1, hint_len = size - out_len - 5;
        char *out = dup_exact(buf, out_len);
        char *hint = dup_exact(sep + 6, hint_len);
        struct tw_fio_hints h = {.job_file = hint,
                                 .job_file_len = hint_len,
                                 .fio_args = hint,
                                 .fio_args_len = hint_len,
                                 .section = NULL};
        if (out && hint) {
            memset(&err, 0, sizeof(err));
            check(tw_fio_import_with(out, out_len, &h, r, &err), r, &err);
            h.fio_args = NULL;
            memset(&err, 0, sizeof(err));
            check(tw_fio_import_with(out, out_len, &h, r, &err), r, &err);
        }
        free(out);
        free(hint);
    }
    free(r);
    return 0;
}

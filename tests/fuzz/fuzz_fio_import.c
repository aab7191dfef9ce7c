/*
 * fuzz_fio_import.c - fio output import on arbitrary bytes.
 *
 * Runs the auto-detecting entry point and the text parser directly (the
 * detection would send most mutated JSON to the JSON side only).  The input
 * is used at its exact size with no terminator, so a read past LEN shows
 * up under ASan.  Checks what the import promises: a result that is either
 * TW_OK with sane figures, or an error with a message.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
        r->target.n_members > TW_RESULT_MAX_MEMBERS)
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
    free(r);
    return 0;
}

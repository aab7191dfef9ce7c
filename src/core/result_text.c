/* result_text.c - human-readable result summaries. */
#include "core/result_text.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/size.h"

static enum tw_err put(struct tw_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum tw_err put(struct tw_buf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0)
        return TW_EINVAL;
    return tw_buf_append(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Latency in the unit that reads best. */
static const char *lat_str(double ns, char *out, size_t n)
{
    if (ns < 1000)
        snprintf(out, n, "%.0f ns", ns);
    else if (ns < 1000000)
        snprintf(out, n, "%.1f us", ns / 1e3);
    else
        snprintf(out, n, "%.2f ms", ns / 1e6);
    return out;
}

/* " (total)", " (completion, without submission)", "" when unknown. */
static const char *kind_str(enum tw_lat_kind k)
{
    return k == TW_LAT_TOTAL        ? " (total latency)"
           : k == TW_LAT_COMPLETION ? " (completion latency, fio's clat)"
                                    : "";
}

static enum tw_err dir_text(const char *name, const struct tw_dir *d,
                            struct tw_buf *b)
{
    char a[32], c[32], e[32], f[32];
    enum tw_err rc = put(b, "  %s: %.0f IOPS, %.2f MB/s (%lld I/Os, %lld bytes)\n",
                         name, d->iops, d->mbps, (long long)d->ios, (long long)d->bytes);
    rc = rc ? rc
            : put(b, "    latency%s: min %s, mean %s, max %s, stdev %s\n", kind_str(d->lat.kind),
                  lat_str(d->lat.min_ns, a, sizeof(a)), lat_str(d->lat.mean_ns, c, sizeof(c)),
                  lat_str(d->lat.max_ns, e, sizeof(e)), lat_str(d->lat.stdev_ns, f, sizeof(f)));
    if (!rc && d->lat.n_pct) {
        rc = put(b, "    percentiles%s:", kind_str(d->lat.pct_kind));
        for (size_t i = 0; !rc && i < d->lat.n_pct; i++) {
            double p = d->lat.pct[i].pct;
            /* The ones people quote; all of them are in the JSON. */
            if (p != 1 && p != 10 && p != 50 && p != 90 && p != 99 && p != 99.9 &&
                p != 99.99)
                continue;
            char key[32];
            tw_pct_key(p, key, sizeof(key));
            rc = put(b, " %s %s", key, lat_str(d->lat.pct[i].ns, a, sizeof(a)));
        }
        rc = rc ? rc : put(b, "\n");
    }
    if (!rc && d->iops_per_s.present)
        rc = put(b, "    IOPS per second: min %.0f, mean %.0f, max %.0f, stdev %.0f (%lld samples)\n",
                 d->iops_per_s.min, d->iops_per_s.mean, d->iops_per_s.max,
                 d->iops_per_s.stdev, (long long)d->iops_per_s.samples);
    return rc;
}

enum tw_err tw_result_format_text(const struct tw_result *r, struct tw_buf *b)
{
    char sz[32], bs[32], how[160];
    const struct tw_method *m = &r->method;
    if (m->direct == TW_DIRECT_YES)
        snprintf(how, sizeof(how), "direct (basis: %s)", tw_direct_basis_name(m->direct_basis));
    else if (m->direct == TW_DIRECT_NO)
        snprintf(how, sizeof(how), "buffered, page cache in the way (basis: %s)",
                 tw_direct_basis_name(m->direct_basis));
    else
        snprintf(how, sizeof(how), "direct I/O unknown (give import-fio --job-file or "
                                   "--fio-args)");
    enum tw_err rc = put(b, "%s on %s", r->profile[0] ? r->profile : "imported run",
                         r->target.path[0] ? r->target.path : "(target not recorded)");
    if (!rc && r->target.size_bytes >= 0)
        rc = put(b, " (%s, %s", r->target.kind == TW_TARGET_BLOCK ? "block device" : "file",
                 tw_size_format((uint64_t)r->target.size_bytes, sz, sizeof(sz)));
    if (!rc && r->target.size_bytes >= 0) {
        if (r->target.device[0])
            rc = put(b, ", device %s", r->target.device);
        for (size_t i = 0; !rc && i < r->target.n_members; i++)
            rc = put(b, "%s%s", i ? " " : " over ", r->target.members[i]);
        rc = rc ? rc : put(b, ")");
    }
    rc = rc ? rc : put(b, "\n");
    if (!rc)
        rc = put(b, "  method: %s, %s, %s %s, QD %d", m->engine, how, tw_pattern_name(m->pattern),
                 tw_size_format((uint64_t)m->block_size_bytes, bs, sizeof(bs)),
                 m->queue_depth);
    if (!rc && m->effective_queue_depth != m->queue_depth)
        rc = put(b, " (effective %d)", m->effective_queue_depth);
    if (!rc && m->jobs > 1)
        rc = put(b, " x %d jobs", m->jobs);
    if (!rc && tw_pattern_reads(m->pattern) && tw_pattern_writes(m->pattern))
        rc = put(b, ", %d %% reads", m->read_pct);
    if (!rc)
        rc = put(b, ", %.1f s measured after %.1f s ramp\n", (double)m->runtime_ms / 1e3,
                 (double)m->ramp_ms / 1e3);
    if (!rc && r->read.present)
        rc = dir_text("read", &r->read, b);
    if (!rc && r->write.present)
        rc = dir_text("write", &r->write, b);
    if (!rc)
        rc = put(b, "  cpu: usr %.2f s, sys %.2f s\n", r->cpu.usr_s, r->cpu.sys_s);
    if (!rc && r->errors.count)
        rc = put(b, "  errors: %lld I/O errors; first: %s\n", (long long)r->errors.count,
                 r->errors.first);
    if (!rc)
        rc = put(b, "  source: %s (%s), result %s, started %s\n", tw_source_name(r->source),
                 r->tool_version, r->id[0] ? r->id : "-",
                 r->started_at[0] ? r->started_at : "-");
    return rc;
}

/*
 * store_copy.c - `tierwise store copy` without knowing either database:
 * the table list of schema 5, the canonical encoding and its checksum,
 * and the copy itself (store_copy.h) over each store's table-level
 * operations.
 */
#include "store/store_copy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/fnv.h"
#include "store/store_ops.h"

/* ---- the tables ------------------------------------------------------- */

#define I TW_COPY_INT
#define R TW_COPY_REAL
#define T TW_COPY_TEXT
#define B TW_COPY_BLOB
#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const key_id[] = {"id"};

static const struct tw_copy_column c_tokens[] = {
    {"id", I}, {"sha256", B}, {"name", T}, {"role", T}, {"created_at", T}, {"revoked_at", T},
};
static const struct tw_copy_column c_vms[] = {
    {"id", I},
    {"identity", T},
    {"name", T},
    {"resource_id", T},
    {"subscription_id", T},
    {"resource_group", T},
    {"location", T},
    {"vm_size", T},
    {"tags", T},
    {"power_state", T},
    {"power_state_at", T},
    {"power_state_ms", I},
    {"last_report_id", T},
    {"last_report_at", T},
    {"last_report_ms", I},
    {"arm_seen_at", T},
    {"arm_seen_ms", I},
};
static const struct tw_copy_column c_reports[] = {
    {"id", T},    {"created_at", T},    {"created_ms", I},     {"received_at", T},
    {"vm_id", I}, {"agent_version", T}, {"agent_hostname", T}, {"power_state", T},
    {"body", T},  {"ahead_ms", I},
};
static const struct tw_copy_column c_disks[] = {
    {"id", I},
    {"identity", T},
    {"vm_id", I},
    {"name", T},
    {"role", T},
    {"lun", I},
    {"sku", T},
    {"size_gib", I},
    {"tier", T},
    {"caching", T},
    {"managed_disk_id", T},
    {"write_accelerator", I},
    {"device", T},
    {"last_seen_at", T},
    {"last_seen_ms", I},
    {"detached_at", T},
    {"detached_ms", I},
    {"position", I},
    {"max_shares", I},
    {"bursting", I},
    {"disk_state", T},
    {"attrs_observed_at", T},
    {"attrs_observed_ms", I},
    {"attrs_source", T},
    {"last_ownership_update", T},
};
static const struct tw_copy_column c_results[] = {
    {"id", I},          {"report_id", T},        {"vm_id", I},
    {"result_uuid", T}, {"profile", T},          {"target", T},
    {"target_path", T}, {"target_device", T},    {"started_at", T},
    {"started_ms", I},  {"source", T},           {"engine", T},
    {"pattern", T},     {"block_size_bytes", I}, {"queue_depth", I},
    {"jobs", I},        {"direct", I},           {"runtime_ms", I},
    {"read_iops", R},   {"read_mbps", R},        {"read_lat_mean_ns", R},
    {"write_iops", R},  {"write_mbps", R},       {"write_lat_mean_ns", R},
    {"errors", I},      {"record", T},           {"record_at", I},
    {"record_len", I},
};
static const struct tw_copy_column c_result_disks[] = {{"disk_id", I}, {"result_id", I}};
static const char *const k_result_disks[] = {"disk_id", "result_id"};
static const struct tw_copy_column c_power_states[] = {
    {"id", I},    {"vm_id", I},     {"observed_at", T}, {"observed_ms", I},
    {"state", T}, {"report_id", T}, {"source", T},
};
static const struct tw_copy_column c_plans[] = {
    {"id", I}, {"policy", T}, {"created_at", T}, {"body", T}, {"period_from", T}, {"period_to", T},
};
static const struct tw_copy_column c_disk_sku_history[] = {
    {"id", I},   {"disk_id", I},  {"observed_at", T}, {"observed_ms", I}, {"sku", T},
    {"tier", T}, {"size_gib", I}, {"report_id", T},   {"source", T},
};
static const struct tw_copy_column c_price_books[] = {
    {"id", I},         {"region", T},     {"currency", T}, {"source", T},
    {"fetched_at", T}, {"fetched_ms", I}, {"items", T},
};
static const struct tw_copy_column c_policies[] = {
    {"id", I}, {"name", T}, {"body", T}, {"created_at", T}, {"updated_at", T},
};
static const struct tw_copy_column c_actions[] = {
    {"id", I},
    {"plan_id", I},
    {"disk_id", I},
    {"kind", T},
    {"from_sku", T},
    {"to_sku", T},
    {"state", T},
    {"due_at", T},
    {"due_ms", I},
    {"requested_at", T},
    {"finished_at", T},
    {"dry_run", I},
    {"detail", T},
    {"arm_operation_url", T},
    {"attempts", I},
    {"last_error", T},
    {"idempotency_key", T},
    {"claim_owner", T},
    {"claim_until_ms", I},
    {"version", I},
    {"vm_id", I},
    {"policy", T},
    {"reason", T},
    {"saving", T},
    {"currency", T},
    {"updated_at", T},
};
static const struct tw_copy_column c_action_transitions[] = {
    {"id", I}, {"action_id", I}, {"from_state", T}, {"to_state", T},
    {"at", T}, {"owner", T},     {"detail", T},
};
static const struct tw_copy_column c_result_latest[] = {
    {"vm_id", I},         {"target", T},         {"profile", T}, {"result_id", I},
    {"order_ms", I},      {"report_id", T},      {"verdict", T}, {"verdict_skus", T},
    {"verdict_basis", T}, {"verdict_report", T},
};
static const char *const k_result_latest[] = {"vm_id", "target", "profile"};
static const struct tw_copy_column c_vm_sizes[] = {
    {"region", T}, {"name", T}, {"caps", T}, {"source", T}, {"fetched_at", T}, {"fetched_ms", I},
};
static const char *const k_vm_sizes[] = {"region", "name"};
static const struct tw_copy_column c_disk_originals[] = {
    {"disk_id", I}, {"sku", T}, {"tier", T}, {"action_id", I}, {"set_at", T},
};
static const char *const k_disk_originals[] = {"disk_id"};
static const struct tw_copy_column c_drift[] = {
    {"id", I},           {"disk_id", I},  {"vm_id", I},    {"sku", T},
    {"required_sku", T}, {"policy", T},   {"since", T},    {"since_ms", I},
    {"seen_at", T},      {"ended_at", T}, {"ended_ms", I},
};

#define TABLE(t, k, serial)                                                                        \
    {                                                                                              \
#t, c_##t, N(c_##t), k, N(k), serial                                                       \
    }

const struct tw_copy_table tw_copy_tables[] = {
    TABLE(tokens, key_id, "id"),
    TABLE(vms, key_id, "id"),
    TABLE(reports, key_id, NULL),
    TABLE(disks, key_id, "id"),
    TABLE(results, key_id, "id"),
    TABLE(result_disks, k_result_disks, NULL),
    TABLE(power_states, key_id, "id"),
    TABLE(plans, key_id, "id"),
    TABLE(disk_sku_history, key_id, "id"),
    TABLE(price_books, key_id, "id"),
    TABLE(policies, key_id, "id"),
    TABLE(actions, key_id, "id"),
    TABLE(action_transitions, key_id, "id"),
    TABLE(result_latest, k_result_latest, NULL),
    TABLE(vm_sizes, k_vm_sizes, NULL),
    TABLE(disk_originals, k_disk_originals, NULL),
    TABLE(drift, key_id, "id"),
};
const size_t tw_copy_n_tables = N(tw_copy_tables);

#undef I
#undef R
#undef T
#undef B

/* ---- the checksum ----------------------------------------------------- */

/* H with ROW (T's columns) folded in by the canonical encoding
 * (store_copy.h). */
static uint64_t row_sum(uint64_t h, const struct tw_copy_table *t, const struct tw_copy_value *row)
{
    char num[32];
    for (size_t c = 0; c < t->n_cols; c++) {
        const struct tw_copy_value *v = &row[c];
        int n = 0;
        if (v->null) {
            h = tw_fnv_bytes(h, "N", 1);
            continue;
        }
        switch (t->cols[c].type) {
        case TW_COPY_INT:
            n = snprintf(num, sizeof(num), "I%" PRId64 ";", v->i);
            h = tw_fnv_bytes(h, num, (size_t)n);
            break;
        case TW_COPY_REAL: {
            uint64_t bits;
            memcpy(&bits, &v->r, sizeof(bits));
            n = snprintf(num, sizeof(num), "R%016" PRIx64 ";", bits);
            h = tw_fnv_bytes(h, num, (size_t)n);
            break;
        }
        case TW_COPY_TEXT:
        case TW_COPY_BLOB:
            n = snprintf(num, sizeof(num), "%c%zu:", t->cols[c].type == TW_COPY_TEXT ? 'T' : 'B',
                         v->len);
            h = tw_fnv_bytes(h, num, (size_t)n);
            if (v->len)
                h = tw_fnv_bytes(h, v->p, v->len);
            break;
        }
    }
    return tw_fnv_bytes(h, "\n", 1);
}

/* ---- the batch -------------------------------------------------------- */

/* Rows are gathered here (their texts copied, since a reader's values
 * live for one call) and written when the batch is full. */
#define BATCH_ROWS 1000
#define BATCH_BYTES (8u << 20)

struct copy_state {
    const struct tw_copy_table *t;
    struct tw_store *dst; /* NULL: only counting (the read back) */
    uint64_t sum;
    int64_t rows;
    struct tw_copy_value *vals; /* BATCH_ROWS * t->n_cols */
    size_t n;                   /* rows in the batch */
    char *bytes;                /* the batch's texts and blobs */
    size_t used, cap;
};

static enum tw_err flush(struct copy_state *cs, struct tw_error *err)
{
    if (cs->n == 0)
        return TW_OK;
    /* The values point into BYTES by offset until now: BYTES may have
     * moved as it grew. */
    size_t nv = cs->n * cs->t->n_cols;
    for (size_t i = 0; i < nv; i++)
        if (!cs->vals[i].null && cs->t->cols[i % cs->t->n_cols].type >= TW_COPY_TEXT)
            cs->vals[i].p = cs->bytes + (uintptr_t)cs->vals[i].p;
    enum tw_err rc = cs->dst->ops->copy->write(cs->dst, cs->t, cs->vals, cs->n, err);
    cs->n = 0;
    cs->used = 0;
    return rc;
}

static enum tw_err on_row(void *arg, const struct tw_copy_value *row, struct tw_error *err)
{
    struct copy_state *cs = arg;
    const struct tw_copy_table *t = cs->t;
    cs->sum = row_sum(cs->sum, t, row);
    cs->rows++;
    if (!cs->dst)
        return TW_OK;
    size_t need = 0;
    for (size_t c = 0; c < t->n_cols; c++)
        if (!row[c].null && t->cols[c].type >= TW_COPY_TEXT)
            need += row[c].len;
    if (cs->n > 0 && cs->used + need > BATCH_BYTES) {
        enum tw_err rc = flush(cs, err);
        if (rc != TW_OK)
            return rc;
    }
    if (cs->used + need > cs->cap) {
        size_t cap = cs->cap ? cs->cap : 65536;
        while (cap < cs->used + need)
            cap *= 2;
        char *b = realloc(cs->bytes, cap);
        if (!b)
            return tw_error_set(err, TW_ENOMEM, "out of memory copying table %s", t->name);
        cs->bytes = b;
        cs->cap = cap;
    }
    struct tw_copy_value *out = &cs->vals[cs->n * t->n_cols];
    for (size_t c = 0; c < t->n_cols; c++) {
        out[c] = row[c];
        if (!row[c].null && t->cols[c].type >= TW_COPY_TEXT) {
            if (row[c].len)
                memcpy(cs->bytes + cs->used, row[c].p, row[c].len);
            out[c].p = (const void *)(uintptr_t)cs->used; /* an offset until flush */
            cs->used += row[c].len;
        }
    }
    if (++cs->n == BATCH_ROWS)
        return flush(cs, err);
    return TW_OK;
}

/* ---- the copy --------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Whether two locations are certainly one SQLite file before either is
 * opened (opening the target could create it). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (tw_store_location_is_pg(a, strlen(a)) || tw_store_location_is_pg(b, strlen(b)))
        return false;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Copies table T from SRC to DST, its figures into E. */
static enum tw_err copy_table(struct tw_store *src, struct tw_store *dst,
                              const struct tw_copy_table *t, struct tw_store_copy_table *e,
                              struct tw_error *err)
{
    const struct tw_store_copy_ops *so = src->ops->copy, *d = dst->ops->copy;
    struct copy_state cs = {.t = t, .dst = dst, .sum = TW_FNV_START};
    int64_t counted = 0;
    enum tw_err rc = so->count(src, t, &counted, err);
    if (rc != TW_OK)
        return rc;
    cs.vals = calloc((size_t)BATCH_ROWS * t->n_cols, sizeof(*cs.vals));
    if (!cs.vals)
        return tw_error_set(err, TW_ENOMEM, "out of memory copying table %s", t->name);
    rc = so->read(src, t, on_row, &cs, err);
    if (rc == TW_OK)
        rc = flush(&cs, err);
    if (rc == TW_OK && d->done)
        rc = d->done(dst, t, err);
    free(cs.vals);
    free(cs.bytes);
    if (rc == TW_OK && counted != cs.rows)
        rc = tw_error_set(err, TW_EIO,
                          "table %s: the source counts %" PRId64 " rows but %" PRId64
                          " were read; is something writing to it?",
                          t->name, counted, cs.rows);
    e->rows = cs.rows;
    e->checksum = cs.sum;
    return rc;
}

/* Reads T back from DST into E's target figures. */
static enum tw_err verify_table(struct tw_store *dst, const struct tw_copy_table *t,
                                struct tw_store_copy_table *e, struct tw_error *err)
{
    struct copy_state cs = {.t = t, .sum = TW_FNV_START};
    enum tw_err rc = dst->ops->copy->read(dst, t, on_row, &cs, err);
    e->target_rows = cs.rows;
    e->target_checksum = cs.sum;
    e->match = rc == TW_OK && cs.rows == e->rows && cs.sum == e->checksum;
    return rc;
}

enum tw_err tw_store_copy(const char *from, const char *to, struct tw_store_copy_result *out,
                          void (*progress)(void *arg, const struct tw_store_copy_table *t),
                          void *arg, struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    int64_t t0 = now_ms();
    if (strcmp(from, to) == 0 || same_file(from, to))
        return tw_error_set(err, TW_EINVAL,
                            "--from and --to name the same database; copy into a new, empty one");
    if (tw_copy_n_tables > sizeof(out->tables) / sizeof(out->tables[0]))
        return tw_error_set(err, TW_EUNSUPPORTED, "the copy knows more tables than it can report");
    /* Opening a SQLite file that is not there would make an empty one:
     * a mistyped --from is said, not copied. */
    struct stat sb;
    if (!tw_store_location_is_pg(from, strlen(from)) && stat(from, &sb) != 0)
        return tw_error_set(err, TW_ENOENT,
                            "no database at %s (%s); give --from an existing "
                            "database",
                            from, strerror(errno));
    struct tw_store *src = NULL, *dst = NULL;
    bool dst_tx = false, src_tx = false;
    /* The target first, and its emptiness: a copy refused for a target
     * that holds rows opens (and so upgrades) no source.  Its transaction
     * holds the target against other writers, so that the emptiness seen
     * is still true at the commit. */
    const struct tw_store_copy_ops *so = NULL, *d = NULL;
    enum tw_err rc = tw_store_open(to, &dst, err);
    if (rc == TW_OK && (!dst->ops->copy || !dst->ops->copy->write))
        rc = tw_error_set(err, TW_EUNSUPPORTED, "the %s store can't be copied yet",
                          dst->ops->name);
    if (rc != TW_OK)
        goto out;
    d = dst->ops->copy;
    rc = d->begin(dst, true, err);
    dst_tx = rc == TW_OK;
    for (size_t i = 0; rc == TW_OK && i < tw_copy_n_tables; i++) {
        bool empty = false;
        rc = d->empty(dst, &tw_copy_tables[i], &empty, err);
        if (rc == TW_OK && !empty)
            rc = tw_error_set(err, TW_EINVAL,
                              "the target %s already holds rows in table %s; store copy "
                              "writes only into an empty database (create a new one)",
                              to, tw_copy_tables[i].name);
    }
    if (rc == TW_OK)
        rc = tw_store_open(from, &src, err);
    if (rc == TW_OK && (!src->ops->copy || !src->ops->copy->read))
        rc = tw_error_set(err, TW_EUNSUPPORTED, "the %s store can't be copied yet",
                          src->ops->name);
    if (rc != TW_OK)
        goto out;
    so = src->ops->copy;
    char id_a[512], id_b[512];
    rc = so->identity(src, id_a, sizeof(id_a), err);
    if (rc == TW_OK)
        rc = d->identity(dst, id_b, sizeof(id_b), err);
    if (rc == TW_OK && strcmp(id_a, id_b) == 0)
        rc = tw_error_set(err, TW_EINVAL,
                          "--from and --to reach the same database (%s); copy into a new, "
                          "empty one",
                          id_a);
    if (rc == TW_OK) {
        rc = so->begin(src, false, err);
        src_tx = rc == TW_OK;
    }
    for (size_t i = 0; rc == TW_OK && i < tw_copy_n_tables; i++) {
        struct tw_store_copy_table *e = &out->tables[i];
        e->name = tw_copy_tables[i].name;
        out->n_tables = i + 1;
        rc = copy_table(src, dst, &tw_copy_tables[i], e, err);
        out->rows += e->rows;
        if (rc == TW_OK && progress)
            progress(arg, e);
    }
    if (src_tx) {
        so->rollback(src); /* it only read */
        src_tx = false;
    }
    size_t bad = 0;
    for (size_t i = 0; rc == TW_OK && i < out->n_tables; i++) {
        rc = verify_table(dst, &tw_copy_tables[i], &out->tables[i], err);
        if (rc == TW_OK && !out->tables[i].match)
            bad++;
    }
    if (rc == TW_OK && bad)
        rc = tw_error_set(err, TW_EIO,
                          "%zu table%s read back from %s differ%s from the source; nothing was "
                          "committed",
                          bad, bad == 1 ? "" : "s", to, bad == 1 ? "s" : "");
    if (rc == TW_OK) {
        rc = d->commit(dst, err);
        dst_tx = false;
        out->verified = rc == TW_OK;
    }
out:
    if (src_tx)
        src->ops->copy->rollback(src);
    if (dst_tx)
        dst->ops->copy->rollback(dst);
    tw_store_close(dst);
    tw_store_close(src);
    out->elapsed_ms = now_ms() - t0;
    return rc;
}

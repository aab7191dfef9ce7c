/*
 * store_pg_ingest.c - storing reports in the PostgreSQL store, as
 * store_ingest.c stores them in SQLite (the same rows, the same rules for
 * late reports and moved disks; read that file's comments for the why).
 *
 * A batch is one transaction, and a report that fails is rolled back
 * alone: each report is a savepoint when the batch holds a report that
 * fails after writing (batch(): a first run without savepoints, which
 * cost two round trips a report, is rolled back and run again so).
 * Several backends ingest at once (READ COMMITTED), so what SQLite's one
 * writer serialised is made safe here:
 *
 *   - a report is idempotent on its id: its row goes in with ON CONFLICT
 *     (id) DO NOTHING; none inserted means another copy is stored (or is
 *     being stored, and the insert waited for it) and the report is a
 *     repeat, and whatever was written for it is undone;
 *   - the report's VM row is locked (SELECT ... FOR NO KEY UPDATE: rows
 *     that only refer to the VM are not held up) before its
 *     newest report is decided, so two reports of one VM arriving at two
 *     backends are stored one after the other; a new VM goes in with ON
 *     CONFLICT (identity) DO NOTHING and is looked up again, locked, when
 *     another backend stored it first;
 *   - a disk found by its identity on another VM is locked with its row;
 *     a new disk goes in with ON CONFLICT (identity) DO NOTHING, and is
 *     found again when another backend stored it first; updates and
 *     detaches of the VM's own disks compare the row's VM (and attachment)
 *     in their WHERE clause, so one moved meanwhile by another backend is
 *     left where that backend put it;
 *   - a deadlock between two backends' batches rolls the whole batch back
 *     and runs it again (up to three times).
 *
 * Round trips, not rows, are what a report costs here: a report of a known
 * VM whose disks say what they said is three statements (its VM found and
 * locked; the report with its power state, the VM's row and the VM's disks
 * read back; its results, their latest rows and their disks over arrays,
 * unnest, whatever their number).
 */
#include "store/store_pg.h"
#include "store/store_shared.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- statements ---- */

/*
 * The report's VM, locked, in one statement: by its identity ($1), else
 * ($6 = 1: the report names its group and subscription) by its place: a
 * VM stored by ARM (or by a report that knew its id) with the same name
 * ($2), group ($3) and subscription ($4), and no other resource id ($5).
 * Column 3: whether the report ($7) is stored already; 4: found by place.
 */
TW_PG_STMT(q_vm_find,
           "WITH c AS ((SELECT id, 0 AS by_place FROM vms WHERE identity = $1) UNION ALL "
           "(SELECT id, 1 FROM vms WHERE $6::bigint = 1 AND lower(name) = lower($2::text "
           "COLLATE \"C\") AND lower(resource_group) = lower($3::text COLLATE \"C\") AND "
           "lower(subscription_id) = lower($4::text COLLATE \"C\") AND (resource_id = '' OR "
           "$5::text = '' OR lower(resource_id) = lower($5::text COLLATE \"C\")) ORDER BY id "
           "LIMIT 1) ORDER BY by_place LIMIT 1) "
           "SELECT v.id, v.last_report_ms, v.last_report_at, EXISTS (SELECT 1 FROM reports "
           "WHERE id = $7), c.by_place FROM vms v JOIN c ON v.id = c.id FOR NO KEY UPDATE OF v");
TW_PG_STMT(q_vm_set_identity, "UPDATE vms SET identity = $2 WHERE id = $1");
TW_PG_STMT(q_vm_insert,
           "INSERT INTO vms(identity, name, resource_id, subscription_id, resource_group, "
           "location, vm_size, tags, last_report_id, last_report_at, last_report_ms, "
           "power_state, power_state_at, power_state_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, "
           "$8, $9, $10::text, $11::bigint, $12::text, CASE WHEN $12::text IS NULL THEN NULL "
           "ELSE $10::text END, CASE WHEN $12::text IS NULL THEN NULL ELSE $11::bigint END) "
           "ON CONFLICT (identity) DO NOTHING RETURNING id");
/*
 * The report in one statement with what goes with it:
 *   - the report's row ($1..$10), ON CONFLICT (id) DO NOTHING;
 *   - its power state, at $11 (its order);
 *   - the VM's row ($13 = 1: the report is its newest) from $14..$20; what
 *     a report does not know (its resource id, group, subscription) stays
 *     as ARM gave it, and a power state observed later (by ARM) stands;
 *   - or, $12 = 1 for a late report, the VM's power state unless a later
 *     one is known;
 *   - and ($21 = 1) the VM's disks as they were before the report (the
 *     columns of SQ_VM_DISKS_ALL, 16: whether the disk's SKU history holds
 *     an observation after $11), at least one row (a NULL id: none).
 * Column 17 is the count of reports inserted: 0 means a copy is stored,
 * and nothing else was written (each part depends on the insert).  The VM's
 * row is locked already (find_vm).
 */
#define PG_VM_NOW "$8::text IS NOT NULL AND (power_state_ms IS NULL OR power_state_ms <= $11::bigint)"
TW_PG_STMT(q_report_insert,
           "WITH rep AS (INSERT INTO reports(id, created_at, created_ms, received_at, vm_id, "
           "agent_version, agent_hostname, power_state, body, ahead_ms) VALUES ($1, $2, $3, $4, "
           "$5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING RETURNING id), "
           "ps AS (INSERT INTO power_states(vm_id, observed_at, observed_ms, state, report_id) "
           "SELECT $5::bigint, $2::text, $11::bigint, $8::text, id FROM rep WHERE $8::text IS "
           "NOT NULL), "
           "vu AS (UPDATE vms SET name = $14, resource_id = coalesce(nullif($15::text, ''), "
           "resource_id), subscription_id = coalesce(nullif($16::text, ''), subscription_id), "
           "resource_group = coalesce(nullif($17::text, ''), resource_group), location = $18, "
           "vm_size = $19, tags = $20, last_report_id = $1, last_report_at = $2, "
           "last_report_ms = $11, power_state = CASE WHEN " PG_VM_NOW " THEN $8::text ELSE "
           "power_state END, power_state_at = CASE WHEN " PG_VM_NOW " THEN $2::text ELSE "
           "power_state_at END, power_state_ms = CASE WHEN " PG_VM_NOW " THEN $11::bigint ELSE "
           "power_state_ms END WHERE id = $5::bigint AND $13::bigint = 1 AND EXISTS (SELECT 1 "
           "FROM rep)), "
           "vp AS (UPDATE vms SET power_state = $8::text, power_state_at = $2::text, "
           "power_state_ms = $11::bigint WHERE id = $5::bigint AND $12::bigint = 1 AND "
           PG_VM_NOW " AND EXISTS (SELECT 1 FROM rep)) "
           "SELECT d.id, d.vm_id, d.detached_ms, NULL, d.name, d.role, d.lun, d.sku, "
           "d.size_gib, d.tier, d.caching, d.managed_disk_id, d.write_accelerator, d.device, "
           "d.identity, d.position, EXISTS (SELECT 1 FROM disk_sku_history h WHERE h.disk_id "
           "= d.id AND h.observed_ms > $11::bigint), (SELECT count(*) FROM rep) FROM (SELECT 1) "
           "one LEFT JOIN disks d ON d.vm_id = $5::bigint AND $21::bigint = 1 ORDER BY d.lun "
           "NULLS FIRST, d.id");
/* A disk's row (columns as SQ_DISK_FIND's, 16: whether its SKU history
 * holds an observation after $2), locked with its VM's: it may be another
 * VM's, whose newer report in flight on another backend (listing the
 * disk) is then waited for, and its newest report read as committed. */
TW_PG_STMT(q_disk_find,
           "SELECT d.id, d.vm_id, d.detached_ms, v.last_report_ms, d.name, d.role, d.lun, "
           "d.sku, d.size_gib, d.tier, d.caching, d.managed_disk_id, d.write_accelerator, "
           "d.device, NULL, d.position, EXISTS (SELECT 1 FROM disk_sku_history h WHERE "
           "h.disk_id = d.id AND h.observed_ms > $2::bigint) FROM disks d JOIN vms v ON v.id = "
           "d.vm_id WHERE d.identity = $1 FOR NO KEY UPDATE OF d, v");
/* The report's disks not among its VM's, by identity ($1, an array), locked;
 * 17: the identity. */
TW_PG_STMT(q_disks_find,
           "SELECT d.id, d.vm_id, d.detached_ms, v.last_report_ms, d.name, d.role, d.lun, "
           "d.sku, d.size_gib, d.tier, d.caching, d.managed_disk_id, d.write_accelerator, "
           "d.device, NULL, d.position, EXISTS (SELECT 1 FROM disk_sku_history h WHERE "
           "h.disk_id = d.id AND h.observed_ms > $2::bigint), d.identity FROM disks d JOIN vms "
           "v ON v.id = d.vm_id WHERE d.identity = ANY ($1::text[]) ORDER BY d.id FOR NO KEY "
           "UPDATE OF d, v");
/* The report's new disks (arrays $6..$17, in the report's order) and
 * their first SKU observations, at once; a disk stored meanwhile (by
 * another backend, or an earlier one of this report with the same
 * identity) is not returned, and goes through q_disk_insert alone. */
TW_PG_STMT(q_disks_insert,
           "WITH d AS (INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, tier, "
           "caching, managed_disk_id, write_accelerator, device, last_seen_at, last_seen_ms, "
           "detached_at, detached_ms, position) SELECT identity, $1::bigint, name, role, lun, "
           "sku, size_gib, tier, caching, mid, wa, device, $2::text, $3::bigint, $4::text, "
           "$5::bigint, position FROM unnest($6::text[], $7::text[], $8::text[], $9::bigint[], "
           "$10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[], $15::bigint[], "
           "$16::text[], $17::bigint[]) WITH ORDINALITY AS u(identity, name, role, lun, sku, "
           "size_gib, tier, caching, mid, wa, device, position, ord) ORDER BY ord ON CONFLICT "
           "(identity) DO NOTHING RETURNING id, identity, sku, tier, size_gib), "
           "h AS (INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, tier, "
           "size_gib, report_id) SELECT id, $2::text, $3::bigint, sku, tier, size_gib, $18 FROM "
           "d) SELECT id, identity FROM d");
/* A new disk and its first SKU observation ($18: the report). */
TW_PG_STMT(q_disk_insert,
           "WITH d AS (INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, tier, caching, "
           "managed_disk_id, write_accelerator, device, last_seen_at, last_seen_ms, "
           "detached_at, detached_ms, position) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
           "$10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT (identity) DO NOTHING "
           "RETURNING id), h AS (INSERT INTO disk_sku_history(disk_id, observed_at, "
           "observed_ms, sku, tier, size_gib, report_id) SELECT id, $13, $14, $6, $8, $7, $18 "
           "FROM d) SELECT id FROM d");
/* $16: the VM the row was read as being of (a disk moved meanwhile by
 * another backend is left as it put it). */
TW_PG_STMT(q_disk_update,
           "UPDATE disks SET vm_id = $2, name = $3, role = $4, lun = $5, sku = $6, size_gib = "
           "$7, tier = $8, caching = $9, managed_disk_id = coalesce(nullif($10::text, ''), "
           "managed_disk_id), write_accelerator = $11, device = $12, last_seen_at = $13, "
           "last_seen_ms = $14, detached_at = NULL, detached_ms = NULL, position = $15 "
           "WHERE id = $1 AND vm_id = $16");
TW_PG_STMT(q_disk_detach,
           "UPDATE disks SET detached_at = $2, detached_ms = $3, last_seen_at = $4, "
           "last_seen_ms = $5 WHERE id = $1 AND vm_id = $6 AND detached_ms IS NULL");
TW_PG_STMT(q_hist_insert,
           "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, tier, "
           "size_gib, report_id) VALUES ($1, $2, $3, $4, $5, $6, $7)");
TW_PG_STMT(q_hist_prev, "SELECT sku, tier, size_gib FROM disk_sku_history WHERE disk_id = $1 "
                        "AND observed_ms <= $2 ORDER BY observed_ms DESC, id DESC LIMIT 1");
TW_PG_STMT(q_hist_next, "SELECT id, sku, tier, size_gib FROM disk_sku_history WHERE disk_id = "
                        "$1 AND observed_ms > $2 ORDER BY observed_ms, id LIMIT 1");
TW_PG_STMT(q_hist_delete, "DELETE FROM disk_sku_history WHERE id = $1");
TW_PG_STMT(q_latest_unkeep,
           "UPDATE result_latest SET verdict_report = NULL WHERE vm_id IN ($1, $2)");

/*
 * A report's results in one statement: each row of the arrays is a
 * result, numbered from the sequence in the report's order (so that, as
 * in SQLite, a later one of the same start wins); the latest row of each
 * (target, profile) takes the report's newest of them unless a newer one
 * is stored (the VM's row is locked, so no other backend writes them
 * now); each result is linked to the disks it covered ($29, $30: the
 * result's place in the arrays and a disk id).
 */
TW_PG_STMT(q_results,
           "WITH src AS MATERIALIZED (SELECT nextval(pg_get_serial_sequence('results', 'id')) "
           "AS id, u.* FROM (SELECT * FROM unnest($3::text[], $4::text[], $5::text[], "
           "$6::text[], $7::text[], $8::text[], $9::bigint[], $10::text[], $11::text[], "
           "$12::text[], $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[], "
           "$17::bigint[], $18::float8[], $19::float8[], $20::float8[], $21::float8[], "
           "$22::float8[], $23::float8[], $24::bigint[], $25::text[], $26::text[], "
           "$27::text[], $28::text[]) WITH ORDINALITY AS t(result_uuid, profile, target, "
           "target_path, target_device, started_at, started_ms, source, engine, pattern, "
           "block_size_bytes, queue_depth, jobs, direct, runtime_ms, read_iops, read_mbps, "
           "read_lat_mean_ns, write_iops, write_mbps, write_lat_mean_ns, errors, record, "
           "verdict, verdict_skus, verdict_basis, ord) ORDER BY ord) u), "
           "ins AS (INSERT INTO results(id, report_id, vm_id, result_uuid, profile, target, "
           "target_path, target_device, started_at, started_ms, source, engine, pattern, "
           "block_size_bytes, queue_depth, jobs, direct, runtime_ms, read_iops, read_mbps, "
           "read_lat_mean_ns, write_iops, write_mbps, write_lat_mean_ns, errors, record) "
           "OVERRIDING SYSTEM VALUE SELECT id, $1, $2::bigint, result_uuid, profile, target, "
           "target_path, target_device, started_at, started_ms, source, engine, pattern, "
           "block_size_bytes, queue_depth, jobs, direct, runtime_ms, read_iops, read_mbps, "
           "read_lat_mean_ns, write_iops, write_mbps, write_lat_mean_ns, errors, record FROM "
           "src ORDER BY ord), "
           "lat AS (INSERT INTO result_latest(vm_id, target, profile, result_id, order_ms, "
           "report_id, verdict, verdict_skus, verdict_basis, verdict_report) SELECT * FROM "
           "(SELECT DISTINCT ON (target, profile) $2::bigint, target, profile, id, started_ms, "
           "$1::text, verdict, verdict_skus, verdict_basis, $31::text FROM src ORDER BY "
           "target, profile, started_ms DESC, id DESC) w ON CONFLICT (vm_id, target, profile) "
           "DO UPDATE SET result_id = excluded.result_id, order_ms = excluded.order_ms, "
           "report_id = excluded.report_id, verdict = excluded.verdict, verdict_skus = "
           "excluded.verdict_skus, verdict_basis = excluded.verdict_basis, verdict_report = "
           "excluded.verdict_report WHERE excluded.order_ms > result_latest.order_ms OR "
           "(excluded.order_ms = result_latest.order_ms AND excluded.result_id > "
           "result_latest.result_id)) "
           "INSERT INTO result_disks(disk_id, result_id) SELECT l.disk_id, s.id FROM "
           "unnest($29::bigint[], $30::bigint[]) AS l(ord, disk_id) JOIN src s ON s.ord = "
           "l.ord ON CONFLICT DO NOTHING");

/* ---- arrays as parameters ---- */

/* A PostgreSQL array literal being built: {"a","b",NULL,...}. */
struct arr {
    char *b;
    size_t len, cap;
    bool oom;
};

static void arr_put(struct arr *a, const char *s, size_t n)
{
    if (a->oom)
        return;
    if (a->len + n + 2 > a->cap) {
        size_t nc = a->cap ? a->cap : 256;
        while (a->len + n + 2 > nc)
            nc *= 2;
        char *p = realloc(a->b, nc);
        if (!p) {
            a->oom = true;
            return;
        }
        a->b = p;
        a->cap = nc;
    }
    memcpy(a->b + a->len, s, n);
    a->len += n;
    a->b[a->len] = '\0';
}

static void arr_sep(struct arr *a)
{
    arr_put(a, a->len ? "," : "{", 1);
}

/* LEN bytes of S, quoted (a NULL S: SQL NULL). */
static void arr_textn(struct arr *a, const char *s, size_t len)
{
    arr_sep(a);
    if (!s) {
        arr_put(a, "NULL", 4);
        return;
    }
    arr_put(a, "\"", 1);
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            arr_put(a, s + from, i - from);
            arr_put(a, "\\", 1);
            from = i;
        }
    }
    arr_put(a, s + from, len - from);
    arr_put(a, "\"", 1);
}

static void arr_text(struct arr *a, const char *s, bool empty_null)
{
    if (s && empty_null && !s[0])
        s = NULL;
    arr_textn(a, s, s ? strlen(s) : 0);
}

static void arr_int(struct arr *a, int64_t v)
{
    char t[32];
    int n = snprintf(t, sizeof(t), "%" PRId64, v);
    arr_sep(a);
    arr_put(a, t, (size_t)n);
}

static void arr_real(struct arr *a, bool present, double v)
{
    if (!present) {
        arr_sep(a);
        arr_put(a, "NULL", 4);
        return;
    }
    char t[40];
    int n = snprintf(t, sizeof(t), "%.17g", v);
    arr_sep(a);
    arr_put(a, t, (size_t)n);
}

/* The finished literal ("{}" when empty); NULL when out of memory. */
static const char *arr_done(struct arr *a)
{
    if (!a->len)
        arr_put(a, "{", 1);
    arr_put(a, "}", 1);
    return a->oom ? NULL : a->b;
}

struct ingest {
    struct tw_pg *pg;
    const struct tw_report *r;
    const char *body;
    size_t body_len;
    const char *received_at;
    const struct tw_store_judged *judged;
    int64_t created_ms;
    int64_t ms;
    int64_t limit_ms;
    int64_t vm_id;
    bool vm_existed, newest;
    bool inv_partial;
    int64_t prev_ms;
    char prev_at[32];
    int64_t disk_ids[TW_INV_MAX_DISKS];
    struct tw_span *records;
};

/* ---- the VM ---- */

static void p_vm(struct tw_pg_params *p, const struct ingest *in, const char *tags)
{
    const struct tw_vm *vm = &in->r->inv.vm;
    tw_pg_p_text(p, vm->name);
    tw_pg_p_text(p, vm->resource_id);
    tw_pg_p_text(p, vm->subscription_id);
    tw_pg_p_text(p, vm->resource_group);
    tw_pg_p_text(p, vm->location);
    tw_pg_p_text(p, vm->vm_size);
    tw_pg_p_text(p, tags);
    tw_pg_p_text(p, in->r->id);
    tw_pg_p_text(p, in->r->created_at);
    tw_pg_p_int(p, in->ms);
    tw_pg_p_text0(p, in->r->power_state);
}

/* Finds the report's VM and locks its row; *REPEAT when the report is
 * stored already (then nothing is written). */
static enum tw_err find_vm(struct ingest *in, const char *identity, bool *by_place, bool *repeat,
                           struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    const struct tw_vm *vm = &in->r->inv.vm;
    struct tw_pg_params p;
    PGresult *res = NULL;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, identity);
    tw_pg_p_text(&p, vm->name);
    tw_pg_p_text(&p, vm->resource_group);
    tw_pg_p_text(&p, vm->subscription_id);
    tw_pg_p_text(&p, vm->resource_id);
    tw_pg_p_int(&p, vm->subscription_id[0] && vm->resource_group[0] ? 1 : 0);
    tw_pg_p_text(&p, in->r->id);
    /* A VM found by its place: an ARM put of it on another backend waits,
     * or is waited for (tw_pg_lock_place). */
    enum tw_err e = TW_OK;
    if (vm->subscription_id[0] && vm->resource_group[0])
        e = tw_pg_lock_place(pg, vm->name, vm->resource_group, vm->subscription_id, err);
    if (e == TW_OK)
        e = tw_pg_run(pg, &q_vm_find, &p, &res, "finding the report's VM", err);
    if (e != TW_OK)
        return e;
    *by_place = PQntuples(res) > 0 && tw_pg_int(res, 0, 4) == 1;
    if (PQntuples(res) > 0) {
        in->vm_existed = true;
        in->vm_id = tw_pg_int(res, 0, 0);
        in->prev_ms = tw_pg_int(res, 0, 1);
        tw_pg_copy(in->prev_at, sizeof(in->prev_at), res, 0, 2);
        in->newest = in->ms >= in->prev_ms;
        *repeat = strcmp(tw_pg_text(res, 0, 3), "t") == 0;
    } else {
        in->vm_existed = false;
        /* No VM: the report can't be stored yet, but a copy being stored
         * by another backend is caught by the report's own insert. */
        *repeat = false;
    }
    PQclear(res);
    return TW_OK;
}

static enum tw_err put_vm(struct ingest *in, bool *repeat, struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    char identity[1024];
    tw_sh_vm_identity(&in->r->inv.vm, identity, sizeof(identity));
    struct tw_pg_params p;
    bool by_place = false;
    enum tw_err e;
    /* Twice at most: a VM inserted by another backend meanwhile is found
     * (and locked) the second time. */
    for (int round = 0;; round++) {
        if ((e = find_vm(in, identity, &by_place, repeat, err)) != TW_OK || *repeat)
            return e;
        if (in->vm_existed)
            break;
        if (round == 1)
            return tw_error_set(err, TW_EIO, "%s: the report's VM was stored by another "
                                "backend and then could not be found; send the report again",
                                pg->label);
        char *tags = tw_sh_tags_json(&in->r->inv.vm);
        if (!tags)
            return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
        PGresult *res = NULL;
        tw_pg_p_init(&p);
        tw_pg_p_text(&p, identity);
        p_vm(&p, in, tags);
        e = tw_pg_run(pg, &q_vm_insert, &p, &res, "storing a new VM", err);
        free(tags);
        if (e != TW_OK)
            return e;
        bool inserted = PQntuples(res) > 0;
        if (inserted)
            in->vm_id = tw_pg_int(res, 0, 0);
        PQclear(res);
        if (inserted) {
            in->newest = true;
            return TW_OK;
        }
    }
    if (by_place && in->r->inv.vm.resource_id[0]) {
        /* Found by its place, and the report knows its id: the id is its
         * identity from now on. */
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, in->vm_id);
        tw_pg_p_text(&p, identity);
        if ((e = tw_pg_run_n(pg, &q_vm_set_identity, &p, NULL, "giving the VM its resource id",
                             err)) != TW_OK)
            return e;
    }
    /* The VM's row itself follows the report when it is the newest: with
     * the report's insert (put_one). */
    return TW_OK;
}

/* ---- disks and their SKU history ---- */

struct sku_obs {
    const char *sku, *tier;
    int64_t size;
};

static bool text_is(const PGresult *r, int row, int col, const char *want)
{
    return strcmp(tw_pg_text(r, row, col), want) == 0;
}

/* As store_ingest.c's same_obs: a tier not known on one side is no change. */
static bool same_obs(const PGresult *r, int col, const struct sku_obs *o)
{
    const char *tier = tw_pg_text(r, 0, col + 1);
    return text_is(r, 0, col, o->sku) && (!tier[0] || !o->tier[0] || strcmp(tier, o->tier) == 0) &&
           tw_pg_int(r, 0, col + 2) == o->size;
}

static enum tw_err hist_insert(struct ingest *in, int64_t disk_id, const struct sku_obs *o,
                               struct tw_error *err)
{
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    tw_pg_p_text(&p, in->r->created_at);
    tw_pg_p_int(&p, in->ms);
    tw_pg_p_text(&p, o->sku);
    tw_pg_p_text0(&p, o->tier);
    tw_pg_p_int(&p, o->size);
    tw_pg_p_text(&p, in->r->id);
    return tw_pg_run_n(in->pg, &q_hist_insert, &p, NULL, "recording a disk's SKU", err);
}

/* A late observation where it belongs in time (store_ingest.c's hist_late). */
static enum tw_err hist_late(struct ingest *in, int64_t disk_id, const struct sku_obs *o,
                             struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    struct tw_pg_params p;
    PGresult *res = NULL;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, disk_id);
    tw_pg_p_int(&p, in->ms);
    enum tw_err e = tw_pg_run(pg, &q_hist_prev, &p, &res, "reading a disk's SKU history", err);
    if (e != TW_OK)
        return e;
    bool same = PQntuples(res) > 0 && same_obs(res, 0, o);
    PQclear(res);
    if (same)
        return TW_OK;
    if ((e = hist_insert(in, disk_id, o, err)) != TW_OK)
        return e;
    e = tw_pg_run(pg, &q_hist_next, &p, &res, "reading a disk's SKU history", err);
    if (e != TW_OK)
        return e;
    int64_t next_id = PQntuples(res) > 0 && same_obs(res, 1, o) ? tw_pg_int(res, 0, 0) : 0;
    PQclear(res);
    if (!next_id)
        return TW_OK;
    tw_pg_p_init(&p);
    tw_pg_p_int(&p, next_id);
    return tw_pg_run_n(pg, &q_hist_delete, &p, NULL, "tidying a disk's SKU history", err);
}

/* Parameters 2..17 of q_disk_insert (after $1), or 2..15 of q_disk_update
 * (without the detachment, INSERT false). */
/* SKU, SIZE and TIER are the report's, or the row's own when a later
 * observation of them is known. */
static void p_disk(struct tw_pg_params *p, const struct ingest *in, const struct tw_disk *d,
                   bool insert, bool detached_prev, const char *sku, int64_t size,
                   const char *tier)
{
    tw_pg_p_int(p, in->vm_id);
    tw_pg_p_text(p, d->name);
    tw_pg_p_text(p, d->role == TW_DISK_OS ? "os" : "data");
    if (d->lun >= 0)
        tw_pg_p_int(p, d->lun);
    else
        tw_pg_p_null(p);
    tw_pg_p_text(p, sku);
    tw_pg_p_int(p, size);
    tw_pg_p_text0(p, tier);
    tw_pg_p_text(p, tw_caching_name(d->caching));
    tw_pg_p_text(p, d->managed_disk_id);
    tw_pg_p_int(p, d->write_accelerator ? 1 : 0);
    tw_pg_p_text0(p, d->device);
    tw_pg_p_text(p, in->r->created_at);
    tw_pg_p_int(p, in->ms);
    if (insert && detached_prev) {
        tw_pg_p_text(p, in->prev_at);
        tw_pg_p_int(p, in->prev_ms);
    } else if (insert) {
        tw_pg_p_null(p);
        tw_pg_p_null(p);
    }
    tw_pg_p_int(p, (int64_t)(d - in->r->inv.disks));
}

/* Whether row ROW (q_disk_find's columns 4..13, its place 15) says what D,
 * disk POS of the report, says. */
static bool disk_same(const PGresult *q, int row, const struct tw_disk *d, size_t pos)
{
    bool lun_null = tw_pg_null(q, row, 6);
    if (tw_pg_null(q, row, 15) || tw_pg_int(q, row, 15) != (int64_t)pos)
        return false;
    return text_is(q, row, 4, d->name) &&
           text_is(q, row, 5, d->role == TW_DISK_OS ? "os" : "data") &&
           (d->lun < 0 ? lun_null : !lun_null && tw_pg_int(q, row, 6) == d->lun) &&
           text_is(q, row, 7, d->sku) && tw_pg_int(q, row, 8) == d->size_gib &&
           text_is(q, row, 9, d->tier) && text_is(q, row, 10, tw_caching_name(d->caching)) &&
           (!d->managed_disk_id[0] || text_is(q, row, 11, d->managed_disk_id)) &&
           tw_pg_int(q, row, 12) == (d->write_accelerator ? 1 : 0) &&
           text_is(q, row, 13, d->device);
}

struct disk_state {
    bool found;
    int64_t id;
    int64_t vm_id;
    bool attached;
    bool newer;
    bool same;
    bool same_sku;
    bool hist_after;  /* its SKU history holds an observation after the report */
    bool looked;      /* looked up by identity (found or not) with the report's others */
    bool stored;      /* new, stored with the report's other new disks (ID) */
    char sku[32], tier[16];
    int64_t size_gib;
};

static void judge(const struct ingest *in, const PGresult *q, int row, const struct tw_disk *d,
                  struct disk_state *ds)
{
    int64_t vm_id = tw_pg_int(q, row, 1);
    bool attached = tw_pg_null(q, row, 2);
    ds->found = true;
    ds->id = tw_pg_int(q, row, 0);
    ds->vm_id = vm_id;
    ds->attached = attached;
    if (attached && vm_id == in->vm_id)
        ds->newer = in->newest;
    else
        ds->newer = in->ms >= tw_pg_int(q, row, attached ? 3 : 2);
    ds->same = attached && vm_id == in->vm_id &&
               disk_same(q, row, d, (size_t)(d - in->r->inv.disks));
    const char *tier = tw_pg_text(q, row, 9);
    tw_pg_copy(ds->sku, sizeof(ds->sku), q, row, 7);
    tw_pg_copy(ds->tier, sizeof(ds->tier), q, row, 9);
    ds->size_gib = tw_pg_int(q, row, 8);
    ds->same_sku = text_is(q, row, 7, d->sku) &&
                   (!tier[0] || !d->tier[0] || strcmp(tier, d->tier) == 0) &&
                   tw_pg_int(q, row, 8) == d->size_gib;
    ds->hist_after = strcmp(tw_pg_text(q, row, 16), "t") == 0;
}

/* Looks the disk up by its identity (another VM's, or detached), locked. */
static enum tw_err find_disk(struct ingest *in, size_t i, const char *identity,
                             struct disk_state *ds, struct tw_error *err)
{
    struct tw_pg_params p;
    PGresult *res = NULL;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, identity);
    tw_pg_p_int(&p, in->ms);
    enum tw_err e = tw_pg_run(in->pg, &q_disk_find, &p, &res, "finding a disk", err);
    if (e != TW_OK)
        return e;
    if (PQntuples(res) > 0)
        judge(in, res, 0, &in->r->inv.disks[i], ds);
    PQclear(res);
    return TW_OK;
}

static enum tw_err apply_disk(struct ingest *in, size_t i, const char *identity,
                              struct disk_state *ds, struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    const struct tw_disk *d = &in->r->inv.disks[i];
    const struct sku_obs obs = {d->sku, d->tier, d->size_gib};
    struct tw_pg_params p;
    enum tw_err e;
    /* Not one of the VM's disks: a new disk, or one that moved here (looked
     * up already with the report's others, put_disks). */
    if (ds->stored) {
        in->disk_ids[i] = ds->id; /* with its first SKU observation */
        return TW_OK;
    }
    bool looked = ds->looked;
    for (int round = 0; !ds->found; round++) {
        if (!looked) {
            if ((e = find_disk(in, i, identity, ds, err)) != TW_OK)
                return e;
            if (ds->found)
                break;
        }
        looked = false;
        if (round == 1)
            return tw_error_set(err, TW_EIO, "%s: disk %s was stored by another backend and "
                                "then could not be found; send the report again",
                                pg->label, d->name);
        PGresult *res = NULL;
        tw_pg_p_init(&p);
        tw_pg_p_text(&p, identity);
        /* First seen in a late report: not attached now as far as anyone
         * knows. */
        p_disk(&p, in, d, true, !in->newest, d->sku, d->size_gib, d->tier);
        tw_pg_p_text(&p, in->r->id);
        if ((e = tw_pg_run(pg, &q_disk_insert, &p, &res, "storing a new disk", err)) != TW_OK)
            return e;
        bool inserted = PQntuples(res) > 0;
        if (inserted)
            in->disk_ids[i] = tw_pg_int(res, 0, 0);
        PQclear(res);
        if (inserted)
            return TW_OK; /* with its first SKU observation */
        /* Stored meanwhile (by another backend, or by a disk of this report
         * with the same identity): found (locked) next round. */
    }
    in->disk_ids[i] = ds->id;
    if (!ds->newer) {
        if (ds->vm_id != in->vm_id || !ds->attached)
            in->inv_partial = true;
        return hist_late(in, ds->id, &obs, err);
    }
    /* A later look at the disk's SKU (ARM's) keeps the SKU, tier and size
     * it says; the report's goes into the history where it belongs. */
    bool sku_newest = !ds->hist_after;
    e = TW_OK;
    if (ds->vm_id != in->vm_id && ds->attached) {
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, ds->vm_id);
        tw_pg_p_int(&p, in->vm_id);
        if ((e = tw_pg_run_n(pg, &q_latest_unkeep, &p, NULL, "setting kept verdicts aside",
                             err)) != TW_OK)
            return e;
    }
    if (!ds->same) {
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, ds->id);
        if (sku_newest)
            p_disk(&p, in, d, false, false, d->sku, d->size_gib, d->tier);
        else
            p_disk(&p, in, d, false, false, ds->sku, ds->size_gib, ds->tier);
        tw_pg_p_int(&p, ds->vm_id);
        e = tw_pg_run_n(pg, &q_disk_update, &p, NULL, "updating a disk", err);
    }
    if (e == TW_OK && !sku_newest)
        e = hist_late(in, ds->id, &obs, err);
    else if (e == TW_OK && !ds->same_sku)
        e = hist_insert(in, ds->id, &obs, err);
    return e;
}

/* The report's disks that are not its VM's, looked up by their identities
 * in one statement; a row goes to the first such disk of its identity (a
 * later one of the same identity is looked up again after that one is
 * stored, as SQLite looks each up in turn). */
static enum tw_err find_disks(struct ingest *in, const char *idents, size_t idlen,
                              struct disk_state *ds, struct tw_error *err)
{
    const struct tw_inventory *inv = &in->r->inv;
    struct arr a = {0};
    size_t want = 0;
    for (size_t i = 0; i < inv->n_disks; i++) {
        if (ds[i].found)
            continue;
        arr_text(&a, idents + i * idlen, false);
        want++;
    }
    if (!want)
        return TW_OK;
    const char *lit = arr_done(&a);
    if (!lit) {
        free(a.b);
        return tw_error_set(err, TW_ENOMEM, "out of memory storing disks");
    }
    struct tw_pg_params p;
    PGresult *res = NULL;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, lit);
    tw_pg_p_int(&p, in->ms);
    enum tw_err e = tw_pg_run(in->pg, &q_disks_find, &p, &res, "finding disks", err);
    free(a.b);
    if (e != TW_OK)
        return e;
    bool asked[TW_INV_MAX_DISKS] = {false};
    for (size_t i = 0; i < inv->n_disks; i++)
        asked[i] = !ds[i].found;
    for (size_t i = 0; i < inv->n_disks; i++) {
        if (!asked[i])
            continue;
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            if (asked[k] && strcmp(idents + k * idlen, idents + i * idlen) == 0)
                first = false;
        if (!first)
            continue; /* looked up in apply_disk, after the first is stored */
        for (int row = 0; row < PQntuples(res); row++) {
            if (strcmp(tw_pg_text(res, row, 17), idents + i * idlen) == 0) {
                judge(in, res, row, &inv->disks[i], &ds[i]);
                break;
            }
        }
        ds[i].looked = true;
    }
    PQclear(res);
    return TW_OK;
}

/* The disks looked up and not found, in one statement (the first of an
 * identity; a later one of the same identity finds it in apply_disk). */
static enum tw_err insert_disks(struct ingest *in, const char *idents, size_t idlen,
                                struct disk_state *ds, struct tw_error *err)
{
    const struct tw_inventory *inv = &in->r->inv;
    enum { C_IDENT, C_NAME, C_ROLE, C_LUN, C_SKU, C_SIZE, C_TIER, C_CACHE, C_MID, C_WA, C_DEV,
           C_POS, C_N };
    struct arr a[C_N];
    memset(a, 0, sizeof(a));
    size_t want = 0;
    for (size_t i = 0; i < inv->n_disks; i++) {
        if (ds[i].found || !ds[i].looked)
            continue;
        const struct tw_disk *d = &inv->disks[i];
        arr_text(&a[C_IDENT], idents + i * idlen, false);
        arr_text(&a[C_NAME], d->name, false);
        arr_text(&a[C_ROLE], d->role == TW_DISK_OS ? "os" : "data", false);
        if (d->lun >= 0)
            arr_int(&a[C_LUN], d->lun);
        else
            arr_real(&a[C_LUN], false, 0); /* NULL */
        arr_text(&a[C_SKU], d->sku, false);
        arr_int(&a[C_SIZE], d->size_gib);
        arr_text(&a[C_TIER], d->tier, true);
        arr_text(&a[C_CACHE], tw_caching_name(d->caching), false);
        arr_text(&a[C_MID], d->managed_disk_id, false);
        arr_int(&a[C_WA], d->write_accelerator ? 1 : 0);
        arr_text(&a[C_DEV], d->device, true);
        arr_int(&a[C_POS], (int64_t)i);
        want++;
    }
    enum tw_err e = TW_OK;
    if (want) {
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, in->vm_id);
        tw_pg_p_text(&p, in->r->created_at);
        tw_pg_p_int(&p, in->ms);
        /* First seen in a late report: not attached now as far as anyone
         * knows. */
        if (in->newest) {
            tw_pg_p_null(&p);
            tw_pg_p_null(&p);
        } else {
            tw_pg_p_text(&p, in->prev_at);
            tw_pg_p_int(&p, in->prev_ms);
        }
        for (int k = 0; k < C_N && e == TW_OK; k++) {
            const char *lit = arr_done(&a[k]);
            if (!lit)
                e = tw_error_set(err, TW_ENOMEM, "out of memory storing disks");
            tw_pg_p_text(&p, lit);
        }
        tw_pg_p_text(&p, in->r->id);
        PGresult *res = NULL;
        if (e == TW_OK)
            e = tw_pg_run(in->pg, &q_disks_insert, &p, &res, "storing new disks", err);
        for (int row = 0; e == TW_OK && row < PQntuples(res); row++) {
            const char *ident = tw_pg_text(res, row, 1);
            for (size_t i = 0; i < inv->n_disks; i++) {
                if (!ds[i].found && ds[i].looked && !ds[i].stored &&
                    strcmp(idents + i * idlen, ident) == 0) {
                    ds[i].stored = true;
                    ds[i].id = tw_pg_int(res, row, 0);
                    break;
                }
            }
        }
        PQclear(res);
    }
    for (int k = 0; k < C_N; k++)
        free(a[k].b);
    return e;
}

/* OWN: the VM's disks before the report (q_report_insert's rows), NULL for
 * a new VM. */
static enum tw_err put_disks(struct ingest *in, const PGresult *own, struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    const struct tw_inventory *inv = &in->r->inv;
    enum { IDLEN = 600 };
    char *idents = malloc(inv->n_disks ? inv->n_disks * IDLEN : 1);
    if (!idents)
        return tw_error_set(err, TW_ENOMEM, "out of memory storing disks");
    struct disk_state ds[TW_INV_MAX_DISKS];
    memset(ds, 0, sizeof(ds));
    for (size_t i = 0; i < inv->n_disks; i++)
        tw_sh_disk_identity(&inv->disks[i], in->vm_id, idents + i * IDLEN, IDLEN);

    int64_t gone[TW_INV_MAX_DISKS];
    size_t n_gone = 0;
    enum tw_err e = TW_OK;
    if (own) {
        const PGresult *q = own;
        for (int row = 0; row < PQntuples(q); row++) {
            if (tw_pg_null(q, row, 0))
                continue; /* no disk (the row that carries the count) */
            const char *ident = tw_pg_text(q, row, 14);
            size_t j = 0;
            while (j < inv->n_disks && (ds[j].found || strcmp(idents + j * IDLEN, ident) != 0))
                j++;
            /* A disk ARM stored by its id, reported without it: its name. */
            const char *rid = tw_pg_text(q, row, 11);
            const char *rname = tw_pg_text(q, row, 4);
            if (j == inv->n_disks && rid[0])
                for (j = 0; j < inv->n_disks; j++)
                    if (!ds[j].found && !inv->disks[j].managed_disk_id[0] &&
                        strcasecmp(inv->disks[j].name, rname) == 0)
                        break;
            if (j < inv->n_disks)
                judge(in, q, row, &inv->disks[j], &ds[j]);
            else if (in->newest && tw_pg_null(q, row, 2) && n_gone < TW_INV_MAX_DISKS)
                gone[n_gone++] = tw_pg_int(q, row, 0);
        }
    }
    if (e == TW_OK)
        e = find_disks(in, idents, IDLEN, ds, err);
    if (e == TW_OK)
        e = insert_disks(in, idents, IDLEN, ds, err);
    for (size_t i = 0; i < inv->n_disks && e == TW_OK; i++)
        e = apply_disk(in, i, idents + i * IDLEN, &ds[i], err);
    free(idents);
    for (size_t k = 0; k < n_gone && e == TW_OK; k++) {
        struct tw_pg_params p;
        tw_pg_p_init(&p);
        tw_pg_p_int(&p, gone[k]);
        tw_pg_p_text(&p, in->r->created_at);
        tw_pg_p_int(&p, in->ms);
        tw_pg_p_text(&p, in->prev_at);
        tw_pg_p_int(&p, in->prev_ms);
        tw_pg_p_int(&p, in->vm_id);
        e = tw_pg_run_n(pg, &q_disk_detach, &p, NULL, "marking a detached disk", err);
    }
    return e;
}

/* ---- results ---- */

enum {
    A_UUID, A_PROFILE, A_TARGET, A_PATH, A_DEVICE, A_STARTED_AT, A_STARTED_MS, A_SOURCE,
    A_ENGINE, A_PATTERN, A_BLOCK, A_QD, A_JOBS, A_DIRECT, A_RUNTIME, A_RIOPS, A_RMBPS, A_RLAT,
    A_WIOPS, A_WMBPS, A_WLAT, A_ERRORS, A_RECORD, A_VERDICT, A_SKUS, A_BASIS, A_LINK_ORD,
    A_LINK_DISK, A_COUNT
};

static void link_disk(struct ingest *in, struct arr *a, size_t i, const char *dev)
{
    const struct tw_disk *d = tw_inventory_disk_by_device(&in->r->inv, dev);
    if (!d)
        return; /* a device the inventory doesn't map: kept, unlinked */
    arr_int(&a[A_LINK_ORD], (int64_t)i + 1);
    arr_int(&a[A_LINK_DISK], in->disk_ids[d - in->r->inv.disks]);
}

static enum tw_err put_results(struct ingest *in, struct tw_error *err)
{
    const struct tw_report *r = in->r;
    if (!r->n_results)
        return TW_OK;
    struct arr a[A_COUNT];
    memset(a, 0, sizeof(a));
    enum tw_err e = TW_OK;
    for (size_t i = 0; i < r->n_results && e == TW_OK; i++) {
        const struct tw_result *x = &r->results[i];
        int64_t started_ms;
        if (!x->started_at[0] || !tw_rfc3339_ms(x->started_at, &started_ms))
            started_ms = in->ms;
        if (started_ms > in->limit_ms) /* the text keeps what was sent */
            started_ms = in->limit_ms;
        const char *target = x->target.device[0] ? x->target.device : x->target.path;
        arr_text(&a[A_UUID], x->id, false);
        arr_text(&a[A_PROFILE], x->profile, false);
        arr_text(&a[A_TARGET], target, false);
        arr_text(&a[A_PATH], x->target.path, false);
        arr_text(&a[A_DEVICE], x->target.device, true);
        arr_text(&a[A_STARTED_AT], x->started_at, false);
        arr_int(&a[A_STARTED_MS], started_ms);
        arr_text(&a[A_SOURCE], tw_source_name(x->source), false);
        arr_text(&a[A_ENGINE], x->method.engine, false);
        arr_text(&a[A_PATTERN], tw_pattern_name(x->method.pattern), false);
        arr_int(&a[A_BLOCK], x->method.block_size_bytes);
        arr_int(&a[A_QD], x->method.queue_depth);
        arr_int(&a[A_JOBS], x->method.jobs);
        arr_int(&a[A_DIRECT], x->method.direct);
        arr_int(&a[A_RUNTIME], x->method.runtime_ms);
        arr_real(&a[A_RIOPS], x->read.present, x->read.iops);
        arr_real(&a[A_RMBPS], x->read.present, x->read.mbps);
        arr_real(&a[A_RLAT], x->read.present, x->read.lat.mean_ns);
        arr_real(&a[A_WIOPS], x->write.present, x->write.iops);
        arr_real(&a[A_WMBPS], x->write.present, x->write.mbps);
        arr_real(&a[A_WLAT], x->write.present, x->write.lat.mean_ns);
        arr_int(&a[A_ERRORS], x->errors.count);
        /* The record as its own text: cut from the body as the agent sent
         * it when it was found there, else rendered. */
        if (in->records) {
            arr_textn(&a[A_RECORD], in->records[i].p, in->records[i].n);
        } else {
            char *record = tw_result_to_json(x, JSON_COMPACT);
            if (!record) {
                e = tw_error_set(err, TW_ENOMEM, "out of memory storing result %s", x->id);
                break;
            }
            arr_text(&a[A_RECORD], record, false);
            free(record);
        }
        /* Judged: the basis is kept, with the kind when there is one. */
        const struct tw_store_verdict *v =
            in->judged && i < in->judged->n && in->judged->v ? &in->judged->v[i] : NULL;
        bool judged = v && in->judged->basis;
        bool kept = judged && v->kind;
        arr_text(&a[A_VERDICT], kept ? v->kind : NULL, true);
        arr_text(&a[A_SKUS], kept ? (v->skus ? v->skus : "") : NULL, true);
        arr_text(&a[A_BASIS], judged ? in->judged->basis : NULL, true);
        /* The disks it covered: the members of a stripe, else the device. */
        if (x->target.n_members) {
            for (size_t k = 0; k < x->target.n_members; k++)
                link_disk(in, a, i, x->target.members[k]);
        } else {
            link_disk(in, a, i, x->target.device);
        }
    }
    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, r->id);
    tw_pg_p_int(&p, in->vm_id);
    for (int k = 0; k < A_COUNT && e == TW_OK; k++) {
        const char *lit = arr_done(&a[k]);
        if (!lit)
            e = tw_error_set(err, TW_ENOMEM, "out of memory storing report %s's results",
                             r->id);
        tw_pg_p_text(&p, lit);
    }
    /* Judged against the report's inventory: it stands while that is the
     * VM's stored one. */
    tw_pg_p_text0(&p, in->inv_partial ? NULL : r->id);
    if (e == TW_OK)
        e = tw_pg_run_n(in->pg, &q_results, &p, NULL, "storing the results", err);
    for (int k = 0; k < A_COUNT; k++)
        free(a[k].b);
    return e;
}

/* ---- one report ---- */

/* *WROTE: whether a statement that writes may have run (then a failure
 * leaves something of the report behind, to be undone). */
static enum tw_err put_one(struct ingest *in, enum tw_put_status *status, bool *wrote,
                           struct tw_error *err)
{
    struct tw_pg *pg = in->pg;
    const struct tw_report *r = in->r;
    *wrote = false;
    if (!tw_uuid_valid(r->id))
        return tw_error_set(err, TW_EINVAL, "report id \"%s\" is not a UUID", r->id);
    if (!tw_rfc3339_ms(r->created_at, &in->created_ms))
        return tw_error_set(err, TW_EINVAL, "report %s: created_at \"%s\" is not an RFC 3339 "
                            "time", r->id, r->created_at);
    int64_t received_ms;
    if (!tw_rfc3339_ms(in->received_at, &received_ms))
        return tw_error_set(err, TW_EINVAL, "report %s: the time it was received, \"%s\", is "
                            "not an RFC 3339 time", r->id, in->received_at);
    in->limit_ms = received_ms + TW_STORE_CLOCK_AHEAD_MS;
    in->ms = in->created_ms < in->limit_ms ? in->created_ms : in->limit_ms;
    if (r->inv.n_disks > TW_INV_MAX_DISKS)
        return tw_error_set(err, TW_EINVAL, "report %s has too many disks", r->id);

    bool repeat = false;
    *wrote = true;
    enum tw_err e = put_vm(in, &repeat, err);
    if (e != TW_OK)
        return e;
    if (repeat) {
        /* Found stored before anything was written. */
        *status = TW_PUT_REPEAT;
        *wrote = false;
        return TW_OK;
    }

    struct tw_pg_params p;
    tw_pg_p_init(&p);
    tw_pg_p_text(&p, r->id);
    tw_pg_p_text(&p, r->created_at);
    tw_pg_p_int(&p, in->created_ms);
    tw_pg_p_text(&p, in->received_at);
    tw_pg_p_int(&p, in->vm_id);
    tw_pg_p_text(&p, r->agent_version);
    tw_pg_p_text(&p, r->agent_hostname);
    tw_pg_p_text0(&p, r->power_state);
    tw_pg_p_textn(&p, in->body, in->body_len);
    if (in->created_ms > in->limit_ms)
        tw_pg_p_int(&p, in->created_ms - (in->limit_ms - TW_STORE_CLOCK_AHEAD_MS));
    else
        tw_pg_p_null(&p);
    tw_pg_p_int(&p, in->ms);
    tw_pg_p_int(&p, in->newest ? 0 : 1);
    tw_pg_p_int(&p, in->vm_existed && in->newest ? 1 : 0);
    const struct tw_vm *vm = &r->inv.vm;
    char *tags = NULL;
    if (in->vm_existed && in->newest && !(tags = tw_sh_tags_json(vm)))
        return tw_error_set(err, TW_ENOMEM, "out of memory storing the VM's tags");
    tw_pg_p_text(&p, vm->name);
    tw_pg_p_text(&p, vm->resource_id);
    tw_pg_p_text(&p, vm->subscription_id);
    tw_pg_p_text(&p, vm->resource_group);
    tw_pg_p_text(&p, vm->location);
    tw_pg_p_text(&p, vm->vm_size);
    tw_pg_p_text(&p, tags ? tags : "{}");
    tw_pg_p_int(&p, in->vm_existed ? 1 : 0);
    PGresult *res = NULL;
    e = tw_pg_run(pg, &q_report_insert, &p, &res, "storing the report", err);
    free(tags);
    if (e != TW_OK)
        return e;
    int64_t n = PQntuples(res) > 0 ? tw_pg_int(res, 0, 17) : 0;
    if (n == 0) {
        PQclear(res);
        /* Stored meanwhile by another backend (the insert waited for it):
         * a repeat; what this one wrote of its VM is undone by the caller. */
        *status = TW_PUT_REPEAT;
        return TW_OK;
    }

    e = put_disks(in, in->vm_existed ? res : NULL, err);
    PQclear(res);
    if (e != TW_OK)
        return e;
    if ((e = put_results(in, err)) != TW_OK)
        return e;
    /* (The power state went in with the report.) */
    *status = TW_PUT_STORED;
    return TW_OK;
}

/* The batch failed as a whole: nothing of it is stored. */
static enum tw_err fail_batch(struct tw_pg *pg, size_t n, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err)
{
    while (pg->tx_depth > 0)
        tw_pg_rollback(pg);
    for (size_t i = 0; i < n; i++) {
        status[i] = TW_PUT_FAILED;
        if (errs && err)
            errs[i] = *err;
    }
    return err && err->code ? err->code : TW_EIO;
}

/* The largest body a report row holds: PostgreSQL's limit on a value
 * (1 GB) less room for the row's other columns.  A body past it is refused
 * as too large, never sent to fail as a store failure retried for ever. */
#define BODY_MAX ((size_t)(1u << 30) - (1u << 20))

/* How a run of the batch ended short of storing it. */
enum again {
    AGAIN_NO,       /* finished (stored, or failed as a whole) */
    AGAIN_RETRY,    /* collided with another backend's transaction: run it again */
    AGAIN_CAREFUL,  /* a report failed after writing: run it again, each report a savepoint */
};

/*
 * One run of the batch.  A savepoint per report costs two round trips, and
 * most batches fail nowhere: the first run has none (a report refused by
 * the checks before any statement leaves nothing behind), and a report
 * that fails after writing (or a repeat found after writing) rolls the run
 * back and asks for a CAREFUL one, each report in its savepoint, as SQLite
 * stores them.  LAST: the last run allowed (no retry asked).
 */
static enum tw_err batch(struct tw_pg *pg, const struct tw_report *const *reps,
                         const char *const *raw, const size_t *raw_len,
                         const struct tw_store_judged *const *judged, size_t n,
                         const char *received_at, enum tw_put_status *status,
                         struct tw_error *errs, bool careful, bool last, enum again *again,
                         struct tw_error *err)
{
    *again = AGAIN_NO;
    if (tw_pg_begin(pg, "starting to store reports", err) != TW_OK)
        return fail_batch(pg, n, status, errs, err);
    for (size_t i = 0; i < n; i++) {
        struct tw_error one = {0};
        const struct tw_report *r = reps[i];
        status[i] = TW_PUT_FAILED;
        if (!r) {
            tw_error_set(&one, TW_EINVAL, "report %zu of the batch is missing", i);
            if (errs)
                errs[i] = one;
            continue;
        }
        if (careful && tw_pg_begin(pg, "starting a report", err) != TW_OK)
            return fail_batch(pg, n, status, errs, err);
        struct ingest in = {.pg = pg, .r = r, .received_at = received_at,
                            .judged = judged ? judged[i] : NULL};
        char *own = NULL;
        if (raw && raw[i]) {
            in.body = raw[i];
            in.body_len = raw_len ? raw_len[i] : strlen(raw[i]);
        } else {
            own = tw_report_to_json(r, JSON_COMPACT);
            in.body = own;
            in.body_len = own ? strlen(own) : 0;
        }
        /* The records as sent when the body is the report's own text. */
        struct tw_span spans[16];
        struct tw_span *many = NULL;
        if (own == NULL && in.body && r->n_results) {
            struct tw_span *sp = spans;
            if (r->n_results > 16)
                sp = many = malloc(r->n_results * sizeof(*many));
            if (sp && tw_sh_find_records(in.body, in.body_len, sp, r->n_results))
                in.records = sp;
        }
        enum tw_err e;
        bool wrote = false;
        if (!in.body)
            e = tw_error_set(&one, TW_ENOMEM, "out of memory rendering report %s", r->id);
        else if (in.body_len > BODY_MAX)
            e = tw_error_set(&one, TW_ERANGE,
                             "report %s is too large to store: %zu bytes, past the %zu that "
                             "one row holds; send a smaller report",
                             r->id, in.body_len, BODY_MAX);
        else if (memchr(in.body, '\0', in.body_len))
            e = tw_error_set(&one, TW_EINVAL,
                             "report %s holds a NUL byte, which a text column can't store",
                             r->id);
        else
            e = put_one(&in, &status[i], &wrote, &one);
        free(own);
        free(many);
        if (e == TW_OK && (status[i] == TW_PUT_STORED || !wrote)) {
            /* Stored, or a repeat found before anything was written. */
            if (careful && tw_pg_commit(pg, "finishing a report", err) != TW_OK)
                return fail_batch(pg, n, status, errs, err);
            continue;
        }
        if (e != TW_OK) {
            status[i] = TW_PUT_FAILED;
            if (errs)
                errs[i] = one;
        }
        if (!last && e != TW_OK && tw_pg_retryable(pg)) {
            /* Collided with another backend's batch: all of it again. */
            *again = AGAIN_RETRY;
            *err = one;
            while (pg->tx_depth > 0)
                tw_pg_rollback(pg);
            return one.code ? one.code : TW_EIO;
        }
        if (!careful && (wrote || PQstatus(pg->conn) != CONNECTION_OK)) {
            /* Something of the report is written (a repeat stored meanwhile
             * by another backend, or a failure): undone with the run. */
            *again = AGAIN_CAREFUL;
            while (pg->tx_depth > 0)
                tw_pg_rollback(pg);
            *err = one;
            return one.code ? one.code : TW_EIO;
        }
        if (careful)
            tw_pg_rollback(pg);
        /* A lost connection ends the transaction itself: then the whole
         * batch is lost and says so. */
        if (pg->tx_depth == 0 || PQstatus(pg->conn) != CONNECTION_OK) {
            if (e == TW_OK)
                tw_error_set(&one, TW_EIO, "%s: the transaction storing the reports was lost",
                             pg->label);
            *err = one;
            return fail_batch(pg, n, status, errs, err);
        }
    }
    if (tw_pg_commit(pg, "committing the reports", err) != TW_OK) {
        if (!last && tw_pg_retryable(pg))
            *again = AGAIN_RETRY;
        return fail_batch(pg, n, status, errs, err);
    }
    return TW_OK;
}

enum tw_err tw_pg_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                              const char *const *raw, const size_t *raw_len,
                              const struct tw_store_judged *const *judged, size_t n,
                              const char *received_at, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err)
{
    struct tw_pg *pg = (struct tw_pg *)st;
    struct tw_error local;
    if (!err)
        err = &local;
    enum tw_err e = TW_OK;
    bool careful = false;
    /* Three runs at most on collisions, and one more to run it carefully. */
    for (int attempt = 0, runs = 0; attempt < 3 && runs < 4; runs++) {
        enum again again = AGAIN_NO;
        tw_error_clear(err);
        e = batch(pg, reps, raw, raw_len, judged, n, received_at, status, errs, careful,
                  attempt == 2, &again, err);
        if (again == AGAIN_NO)
            break;
        if (again == AGAIN_CAREFUL)
            careful = true;
        else
            attempt++;
        for (size_t i = 0; errs && i < n; i++)
            tw_error_clear(&errs[i]);
    }
    return e;
}

/* test_kept_verdicts.c - verdicts judged when a report is stored and kept
 * beside its results: the fleet's summary counts them as kept while they
 * stand, and judges again what doesn't (another basis, an older inventory,
 * a result that could not be judged), so its counts are always those of
 * judging every latest result now.  And the pages of /compliance counted
 * in verdicts. */
#include "testhelp.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/compliance.h"

struct fx {
    char *dir;
    char path[4096];
    struct tw_store *st;
    struct tw_tier_catalog cat;
    struct tw_vmcap_table caps;
    struct tw_svc_compliance_ctx ctx;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    f->dir = th_tmpdir();
    snprintf(f->path, sizeof(f->path), "%s/kept.db", f->dir);
    struct tw_error err = {0};
    if (tw_store_open(f->path, &f->st, &err) != TW_OK ||
        tw_tier_catalog_builtin(&f->cat, &err) != TW_OK ||
        tw_vmcap_table_builtin(&f->caps, &err) != TW_OK)
        fail_msg("%s", err.msg);
    f->ctx.cat = &f->cat;
    f->ctx.caps = &f->caps;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_store_close(f->st);
    tw_tier_catalog_cleanup(&f->cat);
    tw_vmcap_table_cleanup(&f->caps);
    th_rmtree(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Posts fixture REL as the server does: judged under CTX (NULL: not
 * judged), received at RECEIVED. */
static void put(struct fx *f, const struct tw_svc_compliance_ctx *ctx, const char *rel,
                const char *received)
{
    size_t len;
    char *body = th_fixture(rel, &len);
    struct tw_report *rep = tw_report_new();
    struct tw_error err = {0};
    if (tw_report_from_json(body, len, rep, &err) != TW_OK)
        fail_msg("%s: %s", rel, err.msg);
    struct tw_svc_judged j;
    memset(&j, 0, sizeof(j));
    if (ctx)
        assert_int_equal(tw_svc_compliance_judge_report(ctx, rep, &j, &err), TW_OK);
    const struct tw_report *reps[1] = {rep};
    const char *raw[1] = {body};
    const struct tw_store_judged *judged[1] = {ctx ? &j.judged : NULL};
    enum tw_put_status status;
    struct tw_error errs[1];
    assert_int_equal(tw_store_put_reports_judged(f->st, reps, raw, &len, judged, 1, received,
                                                 &status, errs, &err),
                     TW_OK);
    assert_int_equal(status, TW_PUT_STORED);
    tw_svc_judged_cleanup(&j);
    tw_report_free(rep);
    free(body);
}

static void put_fleet(struct fx *f, const struct tw_svc_compliance_ctx *ctx)
{
    put(f, ctx, "reports/sap-db-01.json", "2026-11-30T08:00:00Z");
    put(f, ctx, "reports/sap-app-02.json", "2026-11-30T08:00:00Z");
    put(f, ctx, "reports/web-03.json", "2026-11-30T08:00:00Z");
}

static void sql(struct fx *f, const char *q)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", q, msg);
    sqlite3_close(db);
}

static int count(struct fx *f, const char *q)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The summary as judging every latest result now makes it (the walk of
 * the fleet, no kept verdict read). */
static enum tw_err live_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                const struct tw_result *r, const struct tw_verdict *v)
{
    struct tw_svc_compliance_summary *sum = arg;
    (void)vm_id;
    (void)r;
    sum->verdicts++;
    for (size_t k = 0; k < v->n_disks; k++) {
        const char *sku = "unknown";
        for (size_t d = 0; d < inv->n_disks; d++)
            if (strcmp(inv->disks[d].name, v->disks[k].name) == 0)
                sku = inv->disks[d].sku;
        tw_svc_compliance_summary_add(sum, sku, v->kind);
    }
    return TW_OK;
}

static enum tw_err live_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)e;
    ((struct tw_svc_compliance_summary *)arg)->errors++;
    return TW_OK;
}

static void live_summary(struct fx *f, const struct tw_svc_compliance_ctx *ctx,
                         struct tw_svc_compliance_summary *sum)
{
    memset(sum, 0, sizeof(*sum));
    struct tw_svc_compliance_sink sink = {live_verdict, live_error, sum};
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_fleet(f->st, ctx, &sink, &sum->vms, &err), TW_OK);
}

/* KEPT (the summary) counts what LIVE (judging every latest result now,
 * in VM order) counts, row by row; the summary's rows are by SKU name. */
static void same_summary(const struct tw_svc_compliance_summary *kept,
                         const struct tw_svc_compliance_summary *live)
{
    assert_int_equal(kept->vms, live->vms);
    assert_int_equal(kept->verdicts, live->verdicts);
    assert_int_equal(kept->errors, live->errors);
    assert_int_equal(kept->n_skus, live->n_skus);
    for (size_t i = 0; i + 1 < kept->n_skus; i++)
        assert_true(strcmp(kept->skus[i].sku, kept->skus[i + 1].sku) < 0);
    for (size_t i = 0; i < kept->n_skus; i++) {
        size_t j = 0;
        while (j < live->n_skus && strcmp(kept->skus[i].sku, live->skus[j].sku) != 0)
            j++;
        assert_true(j < live->n_skus);
        for (int k = 0; k <= TW_VERDICT_INCONCLUSIVE; k++)
            assert_int_equal(kept->skus[i].count[k], live->skus[j].count[k]);
    }
}

static void test_kept_and_counted(void **state)
{
    struct fx *f = *state;
    put_fleet(f, &f->ctx);
    char basis[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(&f->ctx, basis);
    char prefix[16];
    snprintf(prefix, sizeof(prefix), "v%d-", TW_VERDICT_RULES_VERSION);
    assert_int_equal(strncmp(basis, prefix, strlen(prefix)), 0);
    assert_int_equal(strlen(basis), strlen(prefix) + 16);
    /* The share of the catalog and caps kept by the caller is the same. */
    uint64_t fixed = tw_svc_compliance_fixed_hash(&f->cat, &f->caps);
    struct tw_svc_compliance_ctx kept_ctx = f->ctx;
    kept_ctx.fixed = &fixed;
    char again[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(&kept_ctx, again);
    assert_string_equal(again, basis);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict IS NOT NULL"), 7);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict_skus = "
                              "'Premium_LRS,StandardSSD_LRS,Premium_LRS' OR verdict_skus = "
                              "'Premium_LRS,Premium_LRS,Premium_LRS'"),
                     1);
    struct tw_svc_compliance_summary live, kept;
    live_summary(f, &f->ctx, &live);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    assert_int_equal(kept.verdicts, 7);
    same_summary(&kept, &live);

    /* Kept verdicts are what is counted: with every record damaged, the
     * summary still counts them all (none read), while judging them now
     * can't. */
    sql(f, "UPDATE results SET record = '{\"broken\": true}'");
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    assert_int_equal(kept.verdicts, 7);
    assert_int_equal(kept.errors, 0);
    live_summary(f, &f->ctx, &live);
    assert_int_equal(live.verdicts, 0);
}

/* Under another catalog (another basis) every kept verdict is judged
 * again: here every tier rated ten times its IOPS and MB/s. */
static void test_other_basis(void **state)
{
    struct fx *f = *state;
    put_fleet(f, &f->ctx);
    struct tw_tier_catalog cat = f->cat;
    cat.tiers = malloc(f->cat.n_tiers * sizeof(*cat.tiers));
    memcpy(cat.tiers, f->cat.tiers, f->cat.n_tiers * sizeof(*cat.tiers));
    for (size_t i = 0; i < cat.n_tiers; i++) {
        cat.tiers[i].iops *= 10;
        cat.tiers[i].mbps *= 10;
        cat.tiers[i].burst_iops *= 10;
        cat.tiers[i].burst_mbps *= 10;
    }
    struct tw_svc_compliance_ctx other = {.cat = &cat, .caps = &f->caps};
    char a[TW_SVC_BASIS_LEN], b[TW_SVC_BASIS_LEN];
    tw_svc_compliance_basis(&f->ctx, a);
    tw_svc_compliance_basis(&other, b);
    assert_string_not_equal(a, b);
    struct tw_svc_compliance_summary live, kept, first;
    live_summary(f, &other, &live);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &other, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    /* The two judge differently, so counting the kept verdicts would
     * have been wrong. */
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &first, &err), TW_OK);
    size_t under_first = 0, under_other = 0;
    for (size_t i = 0; i < first.n_skus; i++)
        under_first += first.skus[i].count[TW_VERDICT_UNDER];
    for (size_t i = 0; i < kept.n_skus; i++)
        under_other += kept.skus[i].count[TW_VERDICT_UNDER];
    assert_true(under_other > under_first);
    free(cat.tiers);
}

/* A newer report without results (sap-db-01 deallocated, a disk turned
 * E40): its VM's kept verdicts were judged against the older inventory,
 * so they are judged again, against the new one. */
static void test_newer_inventory(void **state)
{
    struct fx *f = *state;
    put_fleet(f, &f->ctx);
    put(f, &f->ctx, "store/late.json", "2026-12-01T09:00:00Z");
    struct tw_svc_compliance_summary live, kept;
    live_summary(f, &f->ctx, &live);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    bool e40 = false; /* the stripe's member now counts under StandardSSD */
    for (size_t i = 0; i < kept.n_skus; i++)
        if (strcmp(kept.skus[i].sku, "StandardSSD_LRS") == 0)
            e40 = true;
    assert_true(e40);
}

static void set_field(char *body, const char *key, const char *val);

/* Posts fixture REL with its text edited: FROM replaced by TO (the
 * same length or not), the report id's first 8 digits by ID8, created_at
 * by CREATED. */
static void put_edited(struct fx *f, const char *rel, const char *from, const char *to,
                       const char *id8, const char *created, const char *received)
{
    size_t len;
    char *body = th_fixture(rel, &len);
    char *out = malloc(len * 2 + 64);
    size_t o = 0;
    for (const char *p = body; *p;) {
        if (from && strncmp(p, from, strlen(from)) == 0) {
            memcpy(out + o, to, strlen(to));
            o += strlen(to);
            p += strlen(from);
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    set_field(out, "\"id\"", id8);
    set_field(out, "\"created_at\"", created);
    struct tw_report *rep = tw_report_new();
    struct tw_error err = {0};
    if (tw_report_from_json(out, o, rep, &err) != TW_OK)
        fail_msg("%s: %s", rel, err.msg);
    struct tw_svc_judged j;
    assert_int_equal(tw_svc_compliance_judge_report(&f->ctx, rep, &j, &err), TW_OK);
    const struct tw_report *reps[1] = {rep};
    const char *raw[1] = {out};
    const struct tw_store_judged *judged[1] = {&j.judged};
    enum tw_put_status status;
    struct tw_error errs[1];
    assert_int_equal(tw_store_put_reports_judged(f->st, reps, raw, &o, judged, 1, received,
                                                 &status, errs, &err),
                     TW_OK);
    assert_int_equal(status, TW_PUT_STORED);
    tw_svc_judged_cleanup(&j);
    tw_report_free(rep);
    free(out);
    free(body);
}

/* Disks that move between VMs without a report of the VM they leave (a VM
 * seen again under another resource id takes its managed disks; an older
 * report of the first VM then can't take them back): both VMs' kept
 * verdicts are judged again, and the counts are those of judging now. */
static void test_disks_move(void **state)
{
    struct fx *f = *state;
    put_fleet(f, &f->ctx);
    put_edited(f, "reports/sap-db-01.json", "virtualMachines/sap-db-01",
               "virtualMachines/sap-db-01x", "11111111", "2026-12-01T08:00:00.000Z",
               "2026-12-01T08:00:01Z");
    struct tw_svc_compliance_summary live, kept;
    live_summary(f, &f->ctx, &live);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    assert_int_equal(kept.vms, 4);
    /* The old VM's report again, late (older than the move): its disks
     * stay with the new VM, so its verdicts are not kept as standing. */
    put_edited(f, "reports/sap-db-01.json", NULL, NULL, "22222222", "2026-11-30T09:00:00.000Z",
               "2026-12-01T09:00:00Z");
    live_summary(f, &f->ctx, &live);
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    /* And judging again keeps what now stands, with the same counts. */
    int64_t after = 0;
    size_t n;
    bool more;
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &f->ctx, &after, 100, &n, &more, &err),
                     TW_OK);
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
}

/* A result stamped in 2099 is the latest only until the next one on time. */
static void test_result_from_the_future(void **state)
{
    struct fx *f = *state;
    put_edited(f, "reports/web-03.json", "2026-11-29T12:00:00", "2099-11-29T12:00:00",
               "33333333", "2026-11-29T12:05:00Z", "2026-11-29T12:06:00Z");
    put_edited(f, "reports/web-03.json", "2026-11-29T12:0", "2026-11-30T12:0", "44444444",
               "2026-11-30T12:05:00Z", "2026-11-30T12:06:00Z");
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest l JOIN results r ON r.id = "
                              "l.result_id WHERE r.report_id LIKE '44444444%'"),
                     count(f, "SELECT count(*) FROM result_latest"));
    assert_true(count(f, "SELECT count(*) FROM result_latest") > 0);
}

/* Reports stored without verdicts (another writer, or a migrated store)
 * are judged when read, with the same counts. */
static void test_not_judged(void **state)
{
    struct fx *f = *state;
    put(f, NULL, "reports/sap-db-01.json", "2026-11-30T08:00:00Z");
    put(f, &f->ctx, "reports/web-03.json", "2026-11-30T08:00:00Z");
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest WHERE verdict IS NULL"),
                     count(f, "SELECT count(*) FROM results WHERE vm_id = 1"));
    struct tw_svc_compliance_summary live, kept;
    live_summary(f, &f->ctx, &live);
    struct tw_error err = {0};
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    assert_int_equal(kept.vms, 2);
    assert_int_equal(kept.verdicts, count(f, "SELECT count(*) FROM results"));
}

/* A clock in 2099 does not pin a VM's state: the next report, on time,
 * is its newest; the one from the future is kept and flagged. */
/* Sets the value of the first string field KEY in BODY to VAL (as long
 * as the value it replaces, or its first bytes). */
static void set_field(char *body, const char *key, const char *val)
{
    char *p = strstr(body, key);
    assert_non_null(p);
    p = strchr(p + strlen(key), '"');
    assert_non_null(p);
    memcpy(p + 1, val, strlen(val));
}

static void put_text(struct fx *f, char *body, size_t len, const char *received)
{
    struct tw_report *rep = tw_report_new();
    struct tw_error err = {0};
    assert_int_equal(tw_report_from_json(body, len, rep, &err), TW_OK);
    const struct tw_report *reps[1] = {rep};
    const char *raw[1] = {body};
    enum tw_put_status status;
    struct tw_error errs[1];
    assert_int_equal(tw_store_put_reports(f->st, reps, raw, &len, 1, received, &status, errs,
                                          &err),
                     TW_OK);
    assert_int_equal(status, TW_PUT_STORED);
    tw_report_free(rep);
}

static void test_clock_ahead(void **state)
{
    struct fx *f = *state;
    size_t len;
    char *body = th_fixture("reports/web-03.json", &len);
    set_field(body, "\"created_at\"", "2099");
    put_text(f, body, len, "2026-11-30T08:00:00Z");
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE ahead_ms > 0"), 1);
    /* The same VM reports again, on time, a day later. */
    free(body);
    body = th_fixture("reports/web-03.json", &len);
    set_field(body, "\"id\"", "00000000");
    set_field(body, "\"created_at\"", "2026-12-01T08:00:00Z");
    put_text(f, body, len, "2026-12-01T08:00:01Z");
    free(body);
    struct tw_store_vm_row vm;
    struct tw_error err = {0};
    assert_int_equal(tw_store_vm(f->st, 1, &vm, &err), TW_OK);
    assert_string_equal(vm.last_report_at, "2026-12-01T08:00:00Z");
    free(vm.tags);
    assert_int_equal(count(f, "SELECT count(*) FROM reports WHERE ahead_ms IS NULL"), 1);
}

/* Pages of /compliance hold LIMIT verdicts, a VM's results split over
 * two pages when it comes to that, each result once. */
struct page_seen {
    int verdicts, errors;
    char ids[16][64];
};

static enum tw_err page_verdict(void *arg, int64_t vm_id, const struct tw_inventory *inv,
                                const struct tw_result *r, const struct tw_verdict *v)
{
    struct page_seen *s = arg;
    (void)vm_id;
    (void)inv;
    (void)v;
    if (s->verdicts < 16)
        snprintf(s->ids[s->verdicts], sizeof(s->ids[0]), "%s", r->id);
    s->verdicts++;
    return TW_OK;
}

static enum tw_err page_error(void *arg, const struct tw_svc_compliance_error *e)
{
    (void)e;
    ((struct page_seen *)arg)->errors++;
    return TW_OK;
}

static void test_pages_count_verdicts(void **state)
{
    struct fx *f = *state;
    put_fleet(f, &f->ctx);
    char seen[16][64];
    int total = 0, pages = 0;
    for (size_t off = 0;; off += 3) {
        struct tw_store_page pg = {.limit = 3, .offset = off};
        struct page_seen s = {0};
        struct tw_svc_compliance_sink sink = {page_verdict, page_error, &s};
        size_t n_vms = 0;
        bool more = false;
        struct tw_error err = {0};
        assert_int_equal(tw_svc_compliance_page(f->st, &f->ctx, &pg, &sink, &n_vms, &more, &err),
                         TW_OK);
        pages++;
        assert_true(s.verdicts <= 3);
        assert_true(n_vms >= 1 && n_vms <= 3);
        for (int i = 0; i < s.verdicts; i++) {
            for (int k = 0; k < total; k++)
                assert_string_not_equal(seen[k], s.ids[i]);
            snprintf(seen[total++], sizeof(seen[0]), "%s", s.ids[i]);
        }
        if (!more)
            break;
        assert_int_equal(s.verdicts, 3);
    }
    assert_int_equal(total, 7);
    assert_int_equal(pages, 3);

    /* A VM whose records no longer read: its one error on one page. */
    sql(f, "UPDATE results SET record = '{\"broken\": true}' WHERE vm_id = 1");
    int errors = 0;
    for (size_t off = 0; off < 7; off++) {
        struct tw_store_page pg = {.limit = 1, .offset = off};
        struct page_seen s = {0};
        struct tw_svc_compliance_sink sink = {page_verdict, page_error, &s};
        bool more;
        struct tw_error err = {0};
        assert_int_equal(tw_svc_compliance_page(f->st, &f->ctx, &pg, &sink, NULL, &more, &err),
                         TW_OK);
        errors += s.errors;
    }
    assert_int_equal(errors, 1);
}

/* Judging again keeps what was never kept (a migrated store), what a new
 * basis leaves standing no longer, and what a report without results made
 * old; a VM that can't be read is marked, not listed again and again. */
static void test_rejudge(void **state)
{
    struct fx *f = *state;
    put(f, NULL, "reports/sap-db-01.json", "2026-11-30T08:00:00Z");
    put(f, NULL, "reports/sap-app-02.json", "2026-11-30T08:00:00Z");
    put(f, &f->ctx, "reports/web-03.json", "2026-11-30T08:00:00Z");
    put(f, &f->ctx, "store/late.json", "2026-12-01T09:00:00Z");
    struct tw_error err = {0};
    size_t n = 0;
    bool more = true;
    int64_t after = 0;
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &f->ctx, &after, 1, &n, &more, &err),
                     TW_OK);
    assert_int_equal(n, 1);
    assert_true(more);
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &f->ctx, &after, 100, &n, &more, &err),
                     TW_OK);
    assert_int_equal(n, 1); /* web-03's were kept when stored */
    assert_false(more);
    assert_int_equal(count(f, "SELECT count(*) FROM result_latest l JOIN vms v ON v.id = "
                              "l.vm_id WHERE l.verdict IS NOT NULL AND l.verdict_report = "
                              "v.last_report_id"),
                     7);
    /* Now the summary judges nothing: with the records damaged it still
     * counts all 7 (and they are what judging them now gives, above). */
    struct tw_svc_compliance_summary live, kept;
    live_summary(f, &f->ctx, &live);
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    same_summary(&kept, &live);
    sql(f, "UPDATE results SET record = '{\"broken\": true}' WHERE vm_id = 2");
    assert_int_equal(tw_svc_compliance_summary(f->st, &f->ctx, &kept, &err), TW_OK);
    assert_int_equal(kept.verdicts, 7);

    /* Another basis: all judged again; VM 2 no longer reads: marked, its
     * error shown by the summary, and not listed again. */
    struct tw_vmcap_table none = {0};
    struct tw_svc_compliance_ctx other = {.cat = &f->cat, .caps = &none};
    after = 0;
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &other, &after, 100, &n, &more, &err),
                     TW_OK);
    assert_int_equal(n, 3);
    after = 0;
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &other, &after, 100, &n, &more, &err),
                     TW_OK);
    assert_int_equal(n, 0);
    assert_int_equal(tw_svc_compliance_summary(f->st, &other, &kept, &err), TW_OK);
    live_summary(f, &other, &live);
    same_summary(&kept, &live);
    assert_int_equal(kept.errors, 1);
    assert_int_equal(tw_svc_compliance_rejudge(f->st, &other, &after, 0, &n, &more, &err),
                     TW_EINVAL);
}

static void test_vm_sizes(void **state)
{
    struct fx *f = *state;
    struct tw_store_vm_size rows[2] = {{"Standard_D8s_v3", (char *)"{\"iops\":12800}"},
                                       {"Standard_E4s_v5", (char *)"{\"iops\":6400}"}};
    struct tw_error err = {0};
    struct tw_store_vm_size *got = NULL;
    size_t n = 0;
    char source[64], at[40];
    assert_int_equal(tw_store_vm_sizes_get(f->st, "westeurope", &got, &n, source, sizeof(source),
                                           at, sizeof(at), &err),
                     TW_ENOENT);
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm test", "2026-12-01T10:00:00Z",
                                           rows, 2, &err),
                     TW_OK);
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm test", "2026-12-02T10:00:00Z",
                                           rows + 1, 1, &err),
                     TW_OK);
    assert_int_equal(tw_store_vm_sizes_get(f->st, "westeurope", &got, &n, source, sizeof(source),
                                           at, sizeof(at), &err),
                     TW_OK);
    assert_int_equal(n, 1); /* replaced, not added to */
    assert_string_equal(got[0].name, "Standard_E4s_v5");
    assert_string_equal(got[0].caps, "{\"iops\":6400}");
    assert_string_equal(source, "arm test");
    assert_string_equal(at, "2026-12-02T10:00:00Z");
    tw_store_vm_sizes_free(got, n);
    /* A bad time leaves the region as it was. */
    assert_int_equal(tw_store_vm_sizes_put(f->st, "westeurope", "arm test", "yesterday", rows, 2,
                                           &err),
                     TW_EPARSE);
    assert_int_equal(tw_store_vm_sizes_get(f->st, "westeurope", &got, &n, NULL, 0, NULL, 0, &err),
                     TW_OK);
    assert_int_equal(n, 1);
    tw_store_vm_sizes_free(got, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kept_and_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_basis, setup, teardown),
        cmocka_unit_test_setup_teardown(test_newer_inventory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_judged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_ahead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pages_count_verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rejudge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disks_move, setup, teardown),
        cmocka_unit_test_setup_teardown(test_result_from_the_future, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vm_sizes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

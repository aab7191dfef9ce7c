/* test_verdict.c - every verdict, the LVM stripe example, matching results
 * to inventory disks, and the JSON form. */
#include "testhelp.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/verdict.h"

struct fx {
    struct tw_tier_catalog cat;
    struct tw_inventory inv;
    struct tw_result r;
    struct tw_verdict v;
};

static void add_disk(struct tw_inventory *inv, const char *name, const char *sku, int64_t gib,
                     const char *tier, enum tw_caching caching, const char *dev)
{
    struct tw_disk *d = &inv->disks[inv->n_disks];
    memset(d, 0, sizeof(*d));
    snprintf(d->name, sizeof(d->name), "%s", name);
    d->role = TW_DISK_DATA;
    d->lun = (int)inv->n_disks;
    snprintf(d->sku, sizeof(d->sku), "%s", sku);
    d->size_gib = gib;
    snprintf(d->tier, sizeof(d->tier), "%s", tier ? tier : "");
    d->caching = caching;
    snprintf(d->device, sizeof(d->device), "%s", dev ? dev : "");
    inv->n_disks++;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    struct tw_error err = {0};
    if (!f || tw_tier_catalog_builtin(&f->cat, &err) != TW_OK) {
        free(f);
        return -1;
    }
    tw_inventory_init(&f->inv);
    strcpy(f->inv.vm.name, "sap-db-01");
    strcpy(f->inv.vm.vm_size, "Standard_E16ds_v5");
    add_disk(&f->inv, "data0", "Premium_LRS", 2048, "P40", TW_CACHE_NONE, "/dev/sdg");
    add_disk(&f->inv, "data1", "Premium_LRS", 2048, "P40", TW_CACHE_NONE, "/dev/sdh");
    add_disk(&f->inv, "data2", "Premium_LRS", 2048, NULL, TW_CACHE_NONE, "/dev/sdi");
    add_disk(&f->inv, "apps", "Premium_LRS", 100, NULL, TW_CACHE_NONE, "/dev/sdc");
    add_disk(&f->inv, "shared", "StandardSSD_LRS", 200, NULL, TW_CACHE_READONLY, "/dev/sdd");
    add_disk(&f->inv, "v2", "PremiumV2_LRS", 512, NULL, TW_CACHE_NONE, "/dev/sde");
    add_disk(&f->inv, "archive", "StandardSSD_LRS", 1024, NULL, TW_CACHE_NONE, "nvme0n3");
    add_disk(&f->inv, "odd", "Premium_XRS", 128, NULL, TW_CACHE_NONE, "/dev/sdj");
    add_disk(&f->inv, "huge", "Standard_LRS", 40000, NULL, TW_CACHE_NONE, "/dev/sdk");
    add_disk(&f->inv, "spare", "Standard_LRS", 64, NULL, TW_CACHE_NONE, NULL);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tw_tier_catalog_cleanup(&f->cat);
    free(f);
    return 0;
}

/*
 * A result on DEV over MEMBERS (space-separated, "" for none) with the
 * measured IOPS and a mean latency consistent with Little's law for the
 * queue it had, as a real closed-loop run would show.
 */
static struct tw_result *run(struct fx *f, const char *dev, const char *members,
                             enum tw_pattern pat, int64_t bs, int qd, int jobs, double iops)
{
    struct tw_result *r = &f->r;
    tw_result_init(r);
    strcpy(r->id, "0b7e8a4e-54a4-4e0c-9f37-2f8a6f1b2c3d");
    strcpy(r->profile, "rated-iops");
    snprintf(r->target.device, sizeof(r->target.device), "%s", dev);
    char list[1024];
    snprintf(list, sizeof(list), "%s", members);
    for (char *save = NULL, *tok = strtok_r(list, " ", &save); tok;
         tok = strtok_r(NULL, " ", &save))
        snprintf(r->target.members[r->target.n_members++], sizeof(r->target.members[0]), "%s",
                 tok);
    strcpy(r->method.engine, qd == 1 ? "psync" : "libaio");
    r->method.direct = true;
    r->method.pattern = pat;
    r->method.block_size_bytes = bs;
    r->method.queue_depth = qd;
    r->method.effective_queue_depth = qd;
    r->method.jobs = jobs;
    r->method.runtime_ms = 30000;
    r->method.ramp_ms = 5000;
    struct tw_dir *d = tw_pattern_reads(pat) ? &r->read : &r->write;
    d->present = true;
    d->iops = iops;
    d->ios = (int64_t)(iops * 30);
    d->bytes = d->ios * bs;
    d->bw_bytes_per_s = iops * (double)bs;
    d->mbps = d->bw_bytes_per_s / 1e6;
    d->lat.mean_ns = (double)qd * jobs / iops * 1e9;
    return r;
}

static const struct tw_vmcap *cap(struct tw_vmcap *c, int64_t iops, int64_t mbps)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->vm_size, sizeof(c->vm_size), "Standard_Test_%lld", (long long)iops);
    c->iops = iops;
    c->bytes_per_s = mbps * 1000000;
    strcpy(c->source, "test");
    return c;
}

/* Judges F's result against the inventory; fails the test on an error. */
static const struct tw_verdict *judge(struct fx *f, const struct tw_vmcap *c)
{
    struct tw_error err = {0};
    if (tw_verdict_check(&f->r, &f->inv, &f->cat, c, &f->v, &err) != TW_OK)
        fail_msg("verdict: %s", err.msg);
    return &f->v;
}

static void expect_reason(const struct tw_verdict *v, const char *words)
{
    if (!strstr(v->reason, words))
        fail_msg("reason \"%s\" lacks \"%s\"", v->reason, words);
}

#define STRIPE "dm-8", "sdg sdh sdi"

/* The example: an LVM stripe over three P40s, rated-iops method. */
static void test_stripe_under(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16300);
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    assert_int_equal(v->judged, TW_METRIC_IOPS);
    assert_int_equal(v->bound_by, TW_BOUND_DISKS);
    assert_true(v->expected_known);
    assert_true(v->expected_iops == 22500);
    assert_true(v->ratio_iops > 0.724 && v->ratio_iops < 0.725);
    assert_int_equal(v->n_disks, 3);
    assert_string_equal(v->disks[2].name, "data2");
    assert_string_equal(v->disks[2].tier, "P40"); /* from its size: no tier recorded */
    assert_string_equal(v->reason,
                        "measured 16,300 IOPS is 72 % of 22,500 expected (3 × P40 at 7,500)");
    /* No cap known: still under, and the reason says the cap may bind. */
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    expect_reason(v, "cap is not known");
    /* A cap that only limits MB/s doesn't bind an 8 KiB IOPS run. */
    v = judge(f, cap(&c, 0, 600));
    assert_int_equal(v->bound_by, TW_BOUND_DISKS);
}

static void test_stripe_vm_capped(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16300);
    const struct tw_verdict *v = judge(f, cap(&c, 16600, 600));
    assert_int_equal(v->kind, TW_VERDICT_VM_CAPPED);
    assert_int_equal(v->bound_by, TW_BOUND_VM);
    assert_true(v->expected_iops == 16600);
    expect_reason(v, "measured 16,300 IOPS is 98 % of 16,600 expected");
    expect_reason(v, "Standard_Test_16600");
    expect_reason(v, "below the disks' 22,500 (3 × P40 at 7,500)");
    /* Slightly above a cap of 16,000 is still the cap. */
    v = judge(f, cap(&c, 16000, 600));
    assert_int_equal(v->kind, TW_VERDICT_VM_CAPPED);
    /* Below 90 % of a binding VM cap: under, bound by the VM. */
    v = judge(f, cap(&c, 20000, 600));
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    assert_int_equal(v->bound_by, TW_BOUND_VM);
    expect_reason(v, "81 % of 20,000 expected");
}

static void test_stripe_qd1_inconclusive(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    /* psync at QD 1: ~0.95 ms per read gives ~1,050 IOPS whatever the disks. */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 1, 1, 1050);
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    assert_true(v->expected_iops == 22500);
    expect_reason(v, "1 I/O in flight (QD 1 × 1 job, psync) at 0.95 ms mean latency can't "
                     "exceed 1,050 IOPS (Little's law)");
    expect_reason(v, "22,500 expected (3 × P40 at 7,500)");
    /* A slow disk at QD 1 is no evidence either: queueing can't explain
     * its latency, and 1 in flight at even 10 ms is 100 IOPS. */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 1, 1, 40);
    v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "even at 10 ms per I/O");
    /* QD 16 is short of 22,500 unless the disks answer in 0.7 ms. */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 16, 1, 8000);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    /* A run that reaches the rating needs no bound, however shallow. */
    run(f, "sdc", "sdc", TW_PAT_RANDREAD, 8192, 1, 1, 480);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
}

static void test_method_problems(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    struct tw_result *r = run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 30000);
    r->method.direct = false;
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "buffered I/O (direct: false)");
    r = run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 22400);
    r->method.runtime_ms = 5000;
    v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "lasted 5.0 s, under the 10 s");
    r->method.runtime_ms = 0;
    v = judge(f, NULL);
    expect_reason(v, "no measured time");
    /* Both at once are both said. */
    r->method.direct = false;
    v = judge(f, NULL);
    expect_reason(v, "buffered");
    expect_reason(v, "; the record gives no measured time");
}

static void test_delivers_edges(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 22400);
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "measured 22,400 IOPS is 99 % of 22,500 expected (3 × P40 at 7,500)");
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 20250); /* exactly 90 % */
    assert_int_equal(judge(f, NULL)->kind, TW_VERDICT_DELIVERS);
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 20249);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    expect_reason(v, "is 89 % of"); /* never rounded up to 90 */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 23600); /* within 5 %: noise */
    assert_int_equal(judge(f, NULL)->kind, TW_VERDICT_DELIVERS);
    /* A Premium disk's performance tier: 100 GiB set to P30 is rated 5,000. */
    strcpy(f->inv.disks[3].tier, "P30");
    run(f, "sdc", "sdc", TW_PAT_RANDREAD, 8192, 256, 4, 4900);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "(P30 at 5,000)");
    f->inv.disks[3].tier[0] = '\0';
}

/*
 * README: "up to 105 % is still the rating"; above it needs bursting, a
 * cache or performance plus.  The edge in both places it applies: against
 * the disks (3 × P40, 22,500) and against a binding VM cap (16,000).
 */
static void test_above_rating_edge(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 23625); /* exactly 105 % */
    const struct tw_verdict *v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "measured 23,625 IOPS is 105 % of 22,500 expected");
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 23626); /* just above */
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "above the rated 22,500");
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16800); /* 105 % of the VM's cap */
    v = judge(f, cap(&c, 16000, 600));
    assert_int_equal(v->kind, TW_VERDICT_VM_CAPPED);
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16801);
    v = judge(f, cap(&c, 16000, 600));
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "VM-level bursting");
}

/* README: vm-capped when measured reaches >= 90 % of the VM's cap; exactly
 * 90 % is reached, one I/O per second less is not. */
static void test_vm_capped_edge(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 14400); /* exactly 90 % of 16,000 */
    const struct tw_verdict *v = judge(f, cap(&c, 16000, 600));
    assert_int_equal(v->bound_by, TW_BOUND_VM);
    assert_int_equal(v->kind, TW_VERDICT_VM_CAPPED);
    expect_reason(v, "measured 14,400 IOPS is 90 % of 16,000 expected");
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 14399);
    v = judge(f, cap(&c, 16000, 600));
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    assert_int_equal(v->bound_by, TW_BOUND_VM);
    expect_reason(v, "is 89 % of 16,000 expected");
}

/*
 * Little's law counts every job's queue: in flight = QD × jobs.  Against
 * 22,500 expected, 90 % is 20,250 IOPS, which at the 10 ms granted to an
 * unqueued I/O needs 202.5 I/Os in flight.  26 × 8 = 208 is enough (judged,
 * though QD 26 alone would not be); 25 × 8 = 200 is not (inconclusive,
 * though 8 jobs of QD 26 are only 8 more).
 */
static void test_littles_law_jobs(void **state)
{
    struct fx *f = *state;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 26, 8, 16300);
    const struct tw_verdict *v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 25, 8, 16300);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "200 I/Os in flight (QD 25 × 8 jobs, libaio) can't exceed 20,000 IOPS even "
                     "at 10 ms per I/O (the 12.27 ms mean includes queueing)");
    /* One job per queue: the same 208 in flight as QD 208 × 1 is judged,
     * 8 jobs at QD 1 (psync) are 8 in flight. */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 208, 1, 16300);
    assert_int_equal(judge(f, NULL)->kind, TW_VERDICT_UNDER);
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 1, 8, 700);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "8 I/Os in flight (QD 1 × 8 jobs, psync)");
}

static void test_burst(void **state)
{
    struct fx *f = *state;
    /* P10 (100 GiB): 500 IOPS rated, credit burst to 3,500. */
    run(f, "sdc", "sdc", TW_PAT_RANDREAD, 8192, 256, 4, 3400);
    const struct tw_verdict *v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "above the rated 500 (P10 at 500) but within the burst ceiling of 3,500");
    expect_reason(v, "credit bursting");
    /* Beyond the burst ceiling: not the disk. */
    run(f, "sdc", "sdc", TW_PAT_RANDREAD, 8192, 256, 4, 9000);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "above anything");
    /* P40s burst only on demand (opt-in, billed). */
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 40000);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "on-demand bursting");
    /* Above a binding VM cap but within the disks: the VM bursts. */
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16300);
    v = judge(f, cap(&c, 12800, 192));
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "VM-level bursting");
    /* With the VM's burst limit known (D8s_v3: 20,000 IOPS, 400 MB/s; at
     * 8 KiB: 20,000), within it is still VM bursting, and says so ... */
    cap(&c, 12800, 192);
    c.burst_iops = 20000;
    c.burst_bytes_per_s = 400000000;
    v = judge(f, &c);
    assert_int_equal(v->kind, TW_VERDICT_BURST);
    expect_reason(v, "and within its burst limit of 20,000, but within the disks'");
    /* ... and above it the VM can't have bursted: not called a burst. */
    c.burst_iops = 14000;
    v = judge(f, &c);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    expect_reason(v, "and above its burst limit of 14,000, though within the disks' 22,500");
    /* E30 (1 TiB): burst 1,000, performance plus 1,500. */
    run(f, "nvme0n3", "", TW_PAT_RANDREAD, 8192, 256, 4, 1400);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "performance plus");
}

static void test_cached(void **state)
{
    struct fx *f = *state;
    /* E15 with ReadOnly caching reading 9,000 IOPS: the cache, not the disk. */
    run(f, "sdd", "sdd", TW_PAT_RANDREAD, 8192, 256, 4, 9000);
    const struct tw_verdict *v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_CACHED);
    expect_reason(v, "1,800 % of 500 expected with host caching ReadOnly on disk shared");
    /* Within the rating the cache changes nothing, but it is said. */
    run(f, "sdd", "sdd", TW_PAT_RANDREAD, 8192, 256, 4, 480);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "host caching ReadOnly on disk shared");
    /* A ReadOnly cache doesn't take writes: beyond the burst is unexplained. */
    run(f, "sdd", "sdd", TW_PAT_RANDWRITE, 8192, 256, 4, 9000);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
}

static void test_throughput_and_block_size(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    /* Sequential 1 MiB is judged on MB/s: 3 x 250 = 750, VM 600 binds. */
    run(f, STRIPE, TW_PAT_READ, 1048576, 64, 1, 565);
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    assert_int_equal(v->judged, TW_METRIC_MBPS);
    assert_int_equal(v->kind, TW_VERDICT_VM_CAPPED);
    assert_true(v->expected_mbps > 599.99 && v->expected_mbps < 600.01);
    expect_reason(v, "measured 592 MB/s is 98 % of 600 expected");
    expect_reason(v, "below the disks' 750 (3 × P40 at 250)");
    v = judge(f, cap(&c, 25600, 1200));
    assert_int_equal(v->kind, TW_VERDICT_UNDER);
    assert_int_equal(v->bound_by, TW_BOUND_DISKS);
    /* Random 64 KiB on one P40: 250 MB/s allows only 3,815 IOPS. */
    run(f, "sdg", "sdg", TW_PAT_RANDREAD, 65536, 256, 4, 3700);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    assert_true(v->expected_iops > 3814 && v->expected_iops < 3815);
    expect_reason(v, "P40 at 250 MB/s, which allows 3,815 IOPS of 64 KiB I/O");
    /* Sequential 16 KiB on one P40: 7,500 IOPS allow only 122.9 MB/s. */
    run(f, "sdg", "sdg", TW_PAT_READ, 16384, 64, 1, 7400);
    v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
    expect_reason(v, "P40 at 7,500 IOPS, which allows 123 MB/s of 16 KiB I/O");
    /* Azure counts 1 MiB as four 256 KiB I/Os. */
    run(f, "sdg", "sdg", TW_PAT_RANDREAD, 1048576, 64, 1, 200);
    v = judge(f, NULL);
    assert_true(v->expected_iops > 238 && v->expected_iops < 239); /* MB/s binds first */
    /* Mixed reads and writes add up. */
    struct tw_result *r = run(f, "sdg", "sdg", TW_PAT_RANDRW, 8192, 256, 4, 5000);
    r->write = r->read;
    r->write.iops = 2400;
    v = judge(f, NULL);
    assert_true(v->measured_iops == 7400);
    assert_int_equal(v->kind, TW_VERDICT_DELIVERS);
}

static void test_provisioned(void **state)
{
    struct fx *f = *state;
    run(f, "sde", "sde", TW_PAT_RANDREAD, 8192, 256, 4, 12000);
    const struct tw_verdict *v = judge(f, NULL);
    assert_int_equal(v->kind, TW_VERDICT_INCONCLUSIVE);
    assert_false(v->expected_known);
    assert_string_equal(v->disks[0].tier, "");
    expect_reason(v, "disk v2 is PremiumV2_LRS: its IOPS and MB/s are provisioned per disk "
                     "(3,000 to 80,000 IOPS, 125 to 2,000 MB/s at 512 GiB)");
}

static void test_bad_disks(void **state)
{
    struct fx *f = *state;
    struct tw_error err = {0};
    run(f, "sdj", "sdj", TW_PAT_RANDREAD, 8192, 256, 4, 500);
    assert_int_equal(tw_verdict_check(&f->r, &f->inv, &f->cat, NULL, &f->v, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "disk odd: unknown disk SKU \"Premium_XRS\""));
    run(f, "sdk", "sdk", TW_PAT_RANDREAD, 8192, 256, 4, 500);
    assert_int_equal(tw_verdict_check(&f->r, &f->inv, &f->cat, NULL, &f->v, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "beyond the largest tier (S80"));
    assert_int_equal(tw_verdict_judge(&f->r, NULL, 0, &f->cat, NULL, &f->v, &err), TW_EINVAL);
    /* I/O errors are said. */
    run(f, "sdg", "sdg", TW_PAT_RANDREAD, 8192, 256, 4, 7400);
    f->r.errors.count = 3;
    expect_reason(judge(f, NULL), "; 3 I/O errors in the run");
}

static void test_matching(void **state)
{
    struct fx *f = *state;
    const struct tw_disk *d[TW_VERDICT_MAX_DISKS];
    size_t n;
    struct tw_error err = {0};
    run(f, "dm-8", "sdg sdh sdi sdg", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_OK);
    assert_int_equal(n, 3); /* each disk once */
    assert_string_equal(d[1]->name, "data1");
    /* No members: the device is the disk (an NVMe namespace here). */
    run(f, "nvme0n3", "", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_OK);
    assert_int_equal(n, 1);
    assert_string_equal(d[0]->name, "archive");
    /* Members unknown but the device is a disk. */
    run(f, "sdc", "sdc1", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_OK);
    assert_string_equal(d[0]->name, "apps");
    /* A stripe with one member unknown is an error, not a smaller stripe. */
    run(f, "dm-9", "sdg sdx", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_EINVAL);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err.msg, "member sdx of dm-9 matches no disk"));
    assert_non_null(strstr(err.msg, "sdg, sdh, sdi"));
    run(f, "dm-3", "sdx sdy", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "none of the target's disks (dm-3 over sdx, sdy)"));
    run(f, "sdz", "", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "device sdz is no disk"));
    run(f, "", "", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, &f->inv, d, &n, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "names no device"));
    /* An inventory without devices says how to get them. */
    struct tw_inventory *empty = calloc(1, sizeof(*empty));
    assert_non_null(empty);
    run(f, "sdc", "sdc", TW_PAT_RANDREAD, 8192, 256, 4, 1);
    assert_int_equal(tw_verdict_disks(&f->r, empty, d, &n, &err), TW_EINVAL);
    assert_non_null(strstr(err.msg, "tierwise-agent inventory"));
    free(empty);
}

static void test_json(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    struct tw_verdict v[2];
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16300);
    v[0] = *judge(f, cap(&c, 25600, 600));
    run(f, "sde", "sde", TW_PAT_RANDREAD, 8192, 256, 4, 12000);
    v[1] = *judge(f, NULL);
    char *s = tw_verdicts_to_json(v, 2, 0);
    assert_non_null(s);
    json_error_t je;
    json_t *root = json_loads(s, 0, &je);
    assert_non_null(root);
    json_t *a = json_object_get(root, "verdicts");
    assert_int_equal(json_array_size(a), 2);
    json_t *o = json_array_get(a, 0);
    assert_string_equal(json_string_value(json_object_get(o, "result_id")), v[0].result_id);
    assert_string_equal(json_string_value(json_object_get(o, "verdict")), "under");
    assert_string_equal(json_string_value(json_object_get(o, "target")), "dm-8");
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "disks"), 0)),
                        "data0");
    assert_string_equal(json_string_value(json_array_get(json_object_get(o, "tiers"), 2)), "P40");
    json_t *exp = json_object_get(o, "expected");
    assert_true(json_number_value(json_object_get(exp, "iops")) == 22500);
    assert_string_equal(json_string_value(json_object_get(exp, "bound_by")), "disks");
    assert_true(json_number_value(json_object_get(json_object_get(o, "measured"), "iops")) ==
                16300);
    assert_true(json_number_value(json_object_get(json_object_get(o, "ratio"), "iops")) == 0.724);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "vm"), "size")),
                        "Standard_Test_25600");
    assert_string_equal(json_string_value(json_object_get(o, "reason")), v[0].reason);
    o = json_array_get(a, 1);
    assert_string_equal(json_string_value(json_object_get(o, "verdict")), "inconclusive");
    assert_true(json_is_null(json_object_get(json_object_get(o, "expected"), "iops")));
    assert_true(json_is_null(json_object_get(json_object_get(o, "expected"), "bound_by")));
    /* No cap given: the vm object says so, never a bare null. */
    json_t *vm = json_object_get(o, "vm");
    assert_true(json_is_object(vm));
    assert_string_equal(json_string_value(json_object_get(vm, "size")), "Standard_E16ds_v5");
    assert_true(json_is_null(json_object_get(vm, "cap")));
    assert_non_null(strstr(json_string_value(json_object_get(vm, "why")), "do not list"));
    assert_true(json_is_null(json_array_get(json_object_get(o, "tiers"), 0)));
    /* Figures print short, not as the nearest double. */
    assert_null(strstr(s, "0000000"));
    json_decref(root);
    free(s);
    s = tw_verdicts_to_json(NULL, 0, 0);
    assert_string_equal(s, "{\"verdicts\": []}");
    free(s);
    assert_string_equal(tw_verdict_name(TW_VERDICT_VM_CAPPED), "vm-capped");
    assert_string_equal(tw_bound_name(TW_BOUND_VM), "vm");
    assert_string_equal(tw_metric_name(TW_METRIC_MBPS), "mbps");
}

/* The verdict's vm object: the cap applied and its source, or no cap and
 * why (from the caller, from the inventory, from a source without figures). */
static void test_vm_object(void **state)
{
    struct fx *f = *state;
    struct tw_vmcap c;
    run(f, STRIPE, TW_PAT_RANDREAD, 8192, 256, 4, 16300);
    const struct tw_verdict *v = judge(f, cap(&c, 25600, 600));
    json_t *o = tw_verdict_to_value(v);
    assert_non_null(o);
    json_t *vm = json_object_get(o, "vm");
    assert_int_equal(json_object_size(vm), 5);
    json_t *jc = json_object_get(vm, "cap");
    assert_true(json_number_value(json_object_get(jc, "iops")) == 25600);
    assert_true(json_number_value(json_object_get(jc, "mbps")) == 600);
    assert_string_equal(json_string_value(json_object_get(jc, "source")), "test");
    assert_true(json_number_value(json_object_get(vm, "iops")) == 25600);
    assert_true(json_is_null(json_object_get(vm, "why")));
    json_decref(o);
    /* A caller that knows more says it; a cap applied is never overridden. */
    tw_verdict_set_vm_unknown(&f->v, "Standard_X", "ignored");
    assert_string_equal(f->v.vm_size, "Standard_Test_25600");
    assert_string_equal(f->v.vm_why, "");

    v = judge(f, NULL);
    tw_verdict_set_vm_unknown(&f->v, "Standard_Z9", "not in the bundled table (1,112 sizes)");
    o = tw_verdict_to_value(v);
    vm = json_object_get(o, "vm");
    assert_int_equal(json_object_size(vm), 5);
    assert_string_equal(json_string_value(json_object_get(vm, "size")), "Standard_Z9");
    assert_true(json_is_null(json_object_get(vm, "cap")));
    assert_true(json_is_null(json_object_get(vm, "iops")));
    assert_string_equal(json_string_value(json_object_get(vm, "why")),
                        "not in the bundled table (1,112 sizes)");
    json_decref(o);

    /* An inventory without a VM size. */
    char keep[64];
    strcpy(keep, f->inv.vm.vm_size);
    f->inv.vm.vm_size[0] = '\0';
    v = judge(f, NULL);
    o = tw_verdict_to_value(v);
    vm = json_object_get(o, "vm");
    assert_true(json_is_null(json_object_get(vm, "size")));
    assert_string_equal(json_string_value(json_object_get(vm, "why")),
                        "the inventory names no VM size");
    json_decref(o);
    strcpy(f->inv.vm.vm_size, keep);

    /* A source that knows the size but gives no figures (ARM's PremiumIO
     * alone): no cap, and the verdict names the source. */
    cap(&c, 0, 0);
    strcpy(c.vm_size, "Standard_A0");
    strcpy(c.source, "arm");
    v = judge(f, &c);
    assert_string_equal(v->vm_size, "Standard_A0");
    assert_non_null(strstr(v->vm_why, "arm gives no uncached disk limits for Standard_A0"));
    o = tw_verdict_to_value(v);
    assert_true(json_is_null(json_object_get(json_object_get(o, "vm"), "cap")));
    json_decref(o);

    /* A long reason is cut on a whole UTF-8 character. */
    char why[600];
    memset(why, 'x', sizeof(why));
    for (size_t i = 0; i + 2 < sizeof(why); i += 2)
        memcpy(why + i, "\xc3\x97", 2); /* U+00D7 */
    why[sizeof(why) - 1] = '\0';
    /* 256 bytes of room: the cut falls after the first half of a pair. */
    v = judge(f, NULL);
    tw_verdict_set_vm_unknown(&f->v, "S", why);
    assert_int_equal(strlen(f->v.vm_why), 254);
    o = tw_verdict_to_value(v);
    assert_non_null(o);
    assert_non_null(json_string_value(json_object_get(json_object_get(o, "vm"), "why")));
    json_decref(o);
}

/* A reason cut at its buffer's end still holds whole UTF-8 characters. */
static void test_long_reason(void **state)
{
    struct fx *f = *state;
    static const int64_t sizes[] = {4,   8,    16,   32,   64,   128,  256,
                                    512, 1024, 2048, 4096, 8192, 16384, 32767};
    static const char *const skus[] = {"Premium_LRS", "StandardSSD_LRS", "Standard_LRS"};
    struct tw_inventory *inv = calloc(1, sizeof(*inv));
    assert_non_null(inv);
    char members[1024] = "";
    /* 64 disks over some 35 tiers: their description outgrows the reason. */
    for (int i = 0; i < TW_VERDICT_MAX_DISKS; i++) {
        char name[32], dev[16];
        snprintf(name, sizeof(name), "disk-with-a-long-name-%02d", i);
        snprintf(dev, sizeof(dev), "sd%c%c", 'a' + i / 26, 'a' + i % 26);
        add_disk(inv, name, skus[i % 3], sizes[(i / 3) % 14], NULL, TW_CACHE_NONE, dev);
        strcat(members, dev);
        strcat(members, " ");
    }
    run(f, "md0", members, TW_PAT_RANDREAD, 8192, 256, 4, 100);
    assert_int_equal(f->r.target.n_members, TW_VERDICT_MAX_DISKS);
    struct tw_error err = {0};
    assert_int_equal(tw_verdict_check(&f->r, inv, &f->cat, NULL, &f->v, &err), TW_OK);
    assert_int_equal(f->v.n_disks, TW_VERDICT_MAX_DISKS);
    assert_true(strlen(f->v.reason) >= sizeof(f->v.reason) - 4);
    char *s = tw_verdicts_to_json(&f->v, 1, 0);
    assert_non_null(s); /* jansson refuses invalid UTF-8 */
    free(s);
    free(inv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stripe_under),
        cmocka_unit_test(test_stripe_vm_capped),
        cmocka_unit_test(test_stripe_qd1_inconclusive),
        cmocka_unit_test(test_method_problems),
        cmocka_unit_test(test_delivers_edges),
        cmocka_unit_test(test_above_rating_edge),
        cmocka_unit_test(test_vm_capped_edge),
        cmocka_unit_test(test_littles_law_jobs),
        cmocka_unit_test(test_burst),
        cmocka_unit_test(test_cached),
        cmocka_unit_test(test_throughput_and_block_size),
        cmocka_unit_test(test_provisioned),
        cmocka_unit_test(test_bad_disks),
        cmocka_unit_test(test_matching),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_vm_object),
        cmocka_unit_test(test_long_reason),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

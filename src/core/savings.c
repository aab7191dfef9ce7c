/*
 * savings.c - a disk's windows on the cheaper SKU: where the switches go,
 * which windows are skipped and why, what the taken ones save
 * (savings.h).  The decimal text of amounts and hours is money.c's.
 */
#include "core/savings.h"

#include <stdlib.h>
#include <string.h>

/* ---- amounts ---------------------------------------------------------- */

static const struct tw_amount zero_amount = {0, 1};

/* The saving of DUR_NS on the cheaper SKU: DIFF per month prorated, less
 * the transactions of IO under TX.  *TX_OUT gets those. */
static enum tw_err span_saving(struct tw_money diff, const struct tw_tx_rule *tx,
                               const struct tw_io_rate *io, int64_t dur_ns,
                               struct tw_amount *out, struct tw_amount *tx_out,
                               struct tw_error *err)
{
    struct tw_amount s, t = zero_amount;
    enum tw_err rc = tw_money_ratio(diff, dur_ns, TW_BILL_MONTH_NS, &s, err);
    if (rc == TW_OK && tx)
        rc = tw_tx_cost(tx, io, dur_ns, &t, err);
    if (rc == TW_OK)
        rc = tw_amount_sub(s, t, &s, err);
    if (rc != TW_OK)
        return rc;
    *out = s;
    *tx_out = t;
    return TW_OK;
}

/* ---- the quota -------------------------------------------------------- */

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* The first index of sorted V[N] whose value is >= X. */
static size_t lower(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Changes of sorted V[N] in [LO, HI). */
static size_t count_in(const int64_t *v, size_t n, int64_t lo, int64_t hi)
{
    return hi <= lo ? 0 : lower(v, n, hi) - lower(v, n, lo);
}

struct changes {
    const int64_t *a; /* sorted */
    size_t n;
};

/* Whether two new changes at D < U keep every span shorter than QNS that
 * holds either of them to at most Q changes, counting the changes of the
 * two sorted lists L[2].  A span holding the most changes can be moved
 * until a change opens it, so the spans to try start at D, at U, or at an
 * existing change in (D - QNS, U]. */
static bool quota_fits(const struct changes l[2], int64_t d, int64_t u, int q, int64_t qns,
                       bool d_new)
{
    int64_t from = sat_add(d, -qns);
    if (from != INT64_MIN)
        from++; /* (D - QNS, ...: a span opening at D - QNS ends at D */
    for (int pass = 0; pass < 3; pass++) {
        size_t i = 0, end = 1;
        const int64_t *starts = NULL;
        if (pass < 2) {
            starts = l[pass].a;
            i = lower(l[pass].a, l[pass].n, from);
            end = u == INT64_MAX ? l[pass].n : lower(l[pass].a, l[pass].n, u + 1);
        }
        for (; i < end; i++) {
            for (int k = 0; k < (pass < 2 ? 1 : 2); k++) {
                int64_t s = pass < 2 ? starts[i] : (k == 0 ? d : u);
                int64_t e = sat_add(s, qns);
                bool has_d = d_new && d >= s && d < e, has_u = u >= s && u < e;
                if (!has_d && !has_u)
                    continue;
                size_t c = count_in(l[0].a, l[0].n, s, e) + count_in(l[1].a, l[1].n, s, e) +
                           (size_t)has_d + (size_t)has_u;
                if (c > (size_t)q)
                    return false;
            }
        }
    }
    return true;
}

/* ---- a disk's windows -------------------------------------------------- */

const char *tw_window_skip_name(enum tw_window_skip s)
{
    switch (s) {
    case TW_WINDOW_TAKEN: return "taken";
    case TW_WINDOW_TOO_SHORT: return "too_short";
    case TW_WINDOW_MIN_SAVING: return "min_saving";
    case TW_WINDOW_QUOTA: return "quota";
    case TW_WINDOW_OUTSIDE: return "outside";
    }
    return "?";
}

static enum tw_err check_opts(const struct tw_switch_opts *o, struct tw_error *err)
{
    if (o->after_deallocate_ns < 0 || o->before_start_ns < 0)
        return tw_error_set(err, TW_EINVAL,
                            "the margins after deallocation and before the start may not be "
                            "negative");
    if (o->min_saving.micros < 0)
        return tw_error_set(err, TW_EINVAL,
                            "min_saving may not be negative (0: no minimum)");
    if (o->quota_ns < 0 || o->quota_changes < 0)
        return tw_error_set(err, TW_EINVAL,
                            "a quota of %d changes in %lld ns: neither may be negative",
                            o->quota_changes, (long long)o->quota_ns);
    if (o->n_prior && !o->prior_changes)
        return tw_error_set(err, TW_EINVAL, "%zu prior changes given without their instants",
                            o->n_prior);
    for (size_t i = 1; i < o->n_prior; i++)
        if (o->prior_changes[i] < o->prior_changes[i - 1])
            return tw_error_set(err, TW_EINVAL,
                                "the prior type changes must be sorted (change %zu is before "
                                "change %zu)",
                                i, i - 1);
    if (o->io.ios_per_hour < 0 || o->io.io_bytes < 0)
        return tw_error_set(err, TW_EINVAL, "an I/O rate may not be negative");
    return TW_OK;
}

enum tw_err tw_savings_windows(const struct tw_interval *win, size_t n, int64_t period_from,
                               int64_t period_to, struct tw_money from_per_month,
                               struct tw_money to_per_month, const struct tw_tx_rule *tx,
                               const struct tw_switch_opts *o, struct tw_window_saving *out,
                               struct tw_disk_saving *total, struct tw_error *err)
{
    static const struct tw_switch_opts none = {0};
    struct tw_disk_saving sum = {0, zero_amount, zero_amount, zero_amount, 0, 0};
    if (total)
        *total = sum;
    if (!o)
        o = &none;
    if (n && !win)
        return tw_error_set(err, TW_EINVAL, "%zu windows given without their instants", n);
    if (period_to < period_from)
        return tw_error_set(err, TW_EINVAL, "the period ends before it starts");
    enum tw_err rc = check_opts(o, err);
    if (rc != TW_OK)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (win[i].to_ns < win[i].from_ns)
            return tw_error_set(err, TW_EINVAL, "window %zu ends before it opens", i);
        if (i && win[i].from_ns < win[i - 1].to_ns)
            return tw_error_set(err, TW_EINVAL,
                                "windows must be sorted and disjoint: window %zu opens before "
                                "window %zu closes",
                                i, i - 1);
    }
    struct tw_money diff;
    int64_t period_ns;
    if ((rc = tw_money_sub(from_per_month, to_per_month, &diff, err)) != TW_OK)
        return rc;
    if (__builtin_sub_overflow(period_to, period_from, &period_ns))
        return tw_error_set(err, TW_ERANGE, "the period is longer than the instant range");
    if ((rc = tw_money_ratio(from_per_month, period_ns, TW_BILL_MONTH_NS, &sum.baseline, err)) !=
        TW_OK)
        return rc;

    bool quota = o->quota_ns > 0;
    int64_t *taken = NULL;
    size_t n_taken_changes = 0;
    if (quota && n && !(taken = malloc(2 * n * sizeof(*taken))))
        return tw_error_set(err, TW_ENOMEM, "out of memory for the changes of %zu windows", n);
    struct tw_amount min_saving = tw_amount_of(o->min_saving);

    for (size_t i = 0; i < n; i++) {
        struct tw_window_saving ws;
        memset(&ws, 0, sizeof(ws));
        ws.open_ns = win[i].from_ns;
        ws.close_ns = win[i].to_ns;
        ws.saving = ws.tx_cost = ws.whole_saving = zero_amount;
        ws.skip = TW_WINDOW_TAKEN;
        if (__builtin_add_overflow(ws.open_ns, o->after_deallocate_ns, &ws.down_ns) ||
            __builtin_sub_overflow(ws.close_ns, o->before_start_ns, &ws.up_ns)) {
            rc = tw_error_set(err, TW_ERANGE, "window %zu's margins leave the instant range", i);
            goto out;
        }
        /* The span that counts in the period: the downgraded one, or the
         * window itself when the margins leave nothing. */
        int64_t lo = ws.up_ns > ws.down_ns ? ws.down_ns : ws.open_ns;
        int64_t hi = ws.up_ns > ws.down_ns ? ws.up_ns : ws.close_ns;
        ws.from_ns = lo > period_from ? lo : period_from;
        ws.to_ns = hi < period_to ? hi : period_to;
        if (ws.to_ns < ws.from_ns)
            ws.to_ns = ws.from_ns;
        bool outside = ws.to_ns == ws.from_ns;
        if (ws.up_ns <= ws.down_ns) {
            ws.skip = TW_WINDOW_TOO_SHORT;
        } else {
            struct tw_amount t, gap;
            if ((rc = span_saving(diff, tx, &o->io, ws.up_ns - ws.down_ns, &ws.whole_saving, &t,
                                  err)) != TW_OK)
                goto out;
            if (o->min_saving.micros > 0) {
                if ((rc = tw_amount_sub(ws.whole_saving, min_saving, &gap, err)) != TW_OK)
                    goto out;
                if (gap.num < 0)
                    ws.skip = TW_WINDOW_MIN_SAVING;
            }
            if (ws.skip == TW_WINDOW_TAKEN && quota) {
                struct changes l[2] = {{o->prior_changes, o->n_prior}, {taken, n_taken_changes}};
                /* A switch due before real_until is the history's (in
                 * prior_changes at its real time, or not made). */
                bool d_new = !o->real_until || ws.down_ns >= o->real_until_ns;
                bool u_new = !o->real_until || ws.up_ns >= o->real_until_ns;
                if (u_new &&
                    !quota_fits(l, d_new ? ws.down_ns : ws.up_ns, ws.up_ns, o->quota_changes,
                                o->quota_ns, d_new))
                    ws.skip = TW_WINDOW_QUOTA;
            }
            if (ws.skip == TW_WINDOW_TAKEN && quota) {
                /* The plan makes these changes, in or out of the period.
                 * Windows are sorted and disjoint and margins are not
                 * negative, so the list stays sorted. */
                if (!o->real_until || ws.down_ns >= o->real_until_ns)
                    taken[n_taken_changes++] = ws.down_ns;
                if (!o->real_until || ws.up_ns >= o->real_until_ns)
                    taken[n_taken_changes++] = ws.up_ns;
            }
        }
        if (outside) {
            ws.skip = TW_WINDOW_OUTSIDE;
        } else if (ws.skip == TW_WINDOW_TAKEN) {
            ws.downgraded_ns = ws.to_ns - ws.from_ns;
            if ((rc = span_saving(diff, tx, &o->io, ws.downgraded_ns, &ws.saving, &ws.tx_cost,
                                  err)) != TW_OK ||
                (rc = tw_amount_add(sum.saving, ws.saving, &sum.saving, err)) != TW_OK ||
                (rc = tw_amount_add(sum.tx_cost, ws.tx_cost, &sum.tx_cost, err)) != TW_OK)
                goto out;
            if (__builtin_add_overflow(sum.downgraded_ns, ws.downgraded_ns, &sum.downgraded_ns)) {
                rc = tw_error_set(err, TW_ERANGE, "the downgraded time overflows");
                goto out;
            }
            sum.n_taken++;
        } else {
            sum.n_skipped++;
        }
        if (out)
            out[i] = ws;
    }
    if (total)
        *total = sum;
out:
    free(taken);
    return rc;
}

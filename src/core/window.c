/*
 * window.c - weekly windows: the grammar, Custodian's tag form, the
 * weekly union, and the instants of a period.
 *
 * Instants: for each week whose Monday lies from a week before the
 * period's first local day to its last one, each window's local start and
 * end (whole minutes, read as local nanoseconds) become instants through
 * tw_tz_local_to_ns; the intervals are clipped to the period, sorted and
 * merged.  Windows are united as instants rather than as wall-clock
 * minutes, so the answer is exact whatever the zone does.
 */
#include "core/window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const day_names[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};

struct wp {
    const char *s;
    size_t len, i;
    struct tw_error *err;
};

static enum tw_err wp_fail(struct wp *p, const char *what)
{
    return tw_error_set_at(p->err, TW_EPARSE, 1, (long)p->i + 1,
                           "window \"%.*s\": at byte %zu expected %s (e.g. \"Sat 00:00-Mon "
                           "00:00\")",
                           (int)(p->len > 80 ? 80 : p->len), p->s, p->i + 1, what);
}

static void wp_space(struct wp *p)
{
    while (p->i < p->len && (p->s[p->i] == ' ' || p->s[p->i] == '\t'))
        p->i++;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* "Sat 00:00" into minutes of the week. */
static enum tw_err wp_point(struct wp *p, int *min)
{
    wp_space(p);
    int day = -1;
    if (p->len - p->i >= 3) {
        for (int d = 0; d < 7; d++) {
            if (lower(p->s[p->i]) == lower(day_names[d][0]) &&
                lower(p->s[p->i + 1]) == day_names[d][1] &&
                lower(p->s[p->i + 2]) == day_names[d][2])
                day = d;
        }
    }
    if (day < 0)
        return wp_fail(p, "a day: Mon, Tue, Wed, Thu, Fri, Sat or Sun");
    p->i += 3;
    if (p->i < p->len && ((p->s[p->i] >= 'a' && p->s[p->i] <= 'z') ||
                          (p->s[p->i] >= 'A' && p->s[p->i] <= 'Z')))
        return wp_fail(p, "a space after the three-letter day");
    size_t before = p->i;
    wp_space(p);
    if (p->i == before)
        return wp_fail(p, "a space between the day and the time");
    int h = 0, nd = 0;
    size_t at = p->i;
    while (p->i < p->len && p->s[p->i] >= '0' && p->s[p->i] <= '9' && nd < 2) {
        h = h * 10 + (p->s[p->i++] - '0');
        nd++;
    }
    if (nd == 0 || p->i >= p->len || p->s[p->i] != ':') {
        if (nd > 0)
            return wp_fail(p, "':' between hours and minutes (HH:MM)");
        return wp_fail(p, "a time HH:MM");
    }
    if (h > 23) {
        p->i = at;
        return wp_fail(p, "an hour 00..23 (a day ends at 23:59; write the next day's 00:00)");
    }
    p->i++;
    if (p->len - p->i < 2 || p->s[p->i] < '0' || p->s[p->i] > '9' || p->s[p->i + 1] < '0' ||
        p->s[p->i + 1] > '9')
        return wp_fail(p, "two digits of minutes");
    int m = (p->s[p->i] - '0') * 10 + (p->s[p->i + 1] - '0');
    if (m > 59)
        return wp_fail(p, "minutes 00..59");
    p->i += 2;
    *min = day * 1440 + h * 60 + m;
    return TW_OK;
}

static int window_len(int start, int end)
{
    /* The next END strictly after START: 1..10080 minutes. */
    return (end - start + TW_WEEK_MIN - 1) % TW_WEEK_MIN + 1;
}

static enum tw_err parse_list(struct wp *pp, struct tw_windows *out, struct tw_error *err)
{
    struct wp p = *pp;
    for (;;) {
        int a, b;
        enum tw_err rc = wp_point(&p, &a);
        if (rc != TW_OK)
            return rc;
        wp_space(&p);
        if (p.i >= p.len || p.s[p.i] != '-')
            return wp_fail(&p, "'-' between the start and the end");
        p.i++;
        if ((rc = wp_point(&p, &b)) != TW_OK)
            return rc;
        if (out->n == TW_WINDOWS_MAX) {
            return tw_error_set_at(err, TW_ERANGE, 1, (long)p.i,
                                   "more than %d windows in one list", TW_WINDOWS_MAX);
        }
        out->w[out->n].start_min = (uint16_t)a;
        out->w[out->n].len_min = (uint16_t)window_len(a, b);
        out->n++;
        wp_space(&p);
        if (p.i == p.len)
            return TW_OK;
        if (p.s[p.i] != ',')
            return wp_fail(&p, "',' before another window, or the end");
        p.i++;
    }
}

enum tw_err tw_windows_parse(const char *buf, size_t len, struct tw_windows *out,
                             struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    struct wp p = {buf ? buf : "", buf ? len : 0, 0, err};
    enum tw_err rc = parse_list(&p, out, err);
    if (rc != TW_OK)
        memset(out, 0, sizeof(*out)); /* nothing half-read */
    return rc;
}

bool tw_windows_format(const struct tw_windows *w, char *out, size_t outlen)
{
    if (!out || outlen == 0)
        return false;
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < w->n; i++) {
        int a = w->w[i].start_min % TW_WEEK_MIN;
        int b = (a + w->w[i].len_min) % TW_WEEK_MIN;
        int k = snprintf(out + n, outlen - n, "%s%s %02d:%02d-%s %02d:%02d", i ? ", " : "",
                         day_names[a / 1440], a % 1440 / 60, a % 60, day_names[b / 1440],
                         b % 1440 / 60, b % 60);
        if (k < 0 || (size_t)k >= outlen - n) {
            out[0] = '\0';
            return false;
        }
        n += (size_t)k;
    }
    return true;
}

void tw_windows_union(struct tw_windows *w)
{
    static const int W = TW_WEEK_MIN;
    unsigned char on[TW_WEEK_MIN];
    memset(on, 0, sizeof(on));
    for (size_t i = 0; i < w->n; i++)
        for (int k = 0; k < w->w[i].len_min; k++)
            on[(w->w[i].start_min + k) % W] = 1;
    size_t had = w->n;
    w->n = 0;
    if (had == 0)
        return;
    int free_min = -1;
    for (int m = 0; m < W && free_min < 0; m++)
        if (!on[m])
            free_min = m;
    if (free_min < 0) {
        w->w[0].start_min = 0;
        w->w[0].len_min = (uint16_t)W;
        w->n = 1;
        return;
    }
    /* Runs, starting just after a free minute so none is cut at the end. */
    struct tw_window runs[TW_WINDOWS_MAX];
    size_t nr = 0;
    for (int k = 1; k <= W; k++) {
        int m = (free_min + k) % W;
        if (on[m] && !on[(m + W - 1) % W]) {
            int len = 0;
            while (on[(m + len) % W])
                len++;
            runs[nr].start_min = (uint16_t)m;
            runs[nr].len_min = (uint16_t)len;
            nr++; /* never more runs than windows */
        }
    }
    /* Sorted by start. */
    for (size_t i = 1; i < nr; i++) {
        struct tw_window x = runs[i];
        size_t j = i;
        while (j > 0 && runs[j - 1].start_min > x.start_min) {
            runs[j] = runs[j - 1];
            j--;
        }
        runs[j] = x;
    }
    memcpy(w->w, runs, nr * sizeof(runs[0]));
    w->n = nr;
}

/* ---- Cloud Custodian ---- */

static const struct {
    const char *alias, *zone;
} tz_aliases[] = {
    {"pdt", "America/Los_Angeles"}, {"pt", "America/Los_Angeles"},
    {"pst", "America/Los_Angeles"}, {"ast", "America/Phoenix"},
    {"at", "America/Phoenix"},      {"est", "America/New_York"},
    {"edt", "America/New_York"},    {"et", "America/New_York"},
    {"cst", "America/Chicago"},     {"cdt", "America/Chicago"},
    {"ct", "America/Chicago"},      {"mst", "America/Denver"},
    {"mdt", "America/Denver"},      {"mt", "America/Denver"},
    {"gmt", "Etc/GMT"},             {"gt", "Etc/GMT"},
    {"bst", "Europe/London"},       {"ist", "Europe/Dublin"},
    {"cet", "Europe/Berlin"},       {"it", "Asia/Kolkata"},
    {"jst", "Asia/Tokyo"},          {"kst", "Asia/Seoul"},
    {"sgt", "Asia/Singapore"},      {"aet", "Australia/Sydney"},
    {"brt", "America/Sao_Paulo"},   {"utc", "Etc/UTC"},
};

static int c7n_day(char c)
{
    static const char days[] = "mtwhfsu";
    const char *d = strchr(days, lower(c));
    return c && d ? (int)(d - days) : -1;
}

/* One "(days,hour)" at P: adds a minute of the week per day to EV. */
static enum tw_err c7n_spec(struct wp *p, size_t end, int *ev, size_t *nev)
{
    if (p->i >= end || p->s[p->i] != '(')
        return wp_fail(p, "'(' starting (days,hour), e.g. (M-F,19)");
    p->i++;
    int d1 = p->i < end ? c7n_day(p->s[p->i]) : -1;
    if (d1 < 0)
        return wp_fail(p, "a day letter: M T W H F S U");
    p->i++;
    int d2 = d1;
    if (p->i < end && p->s[p->i] == '-') {
        p->i++;
        d2 = p->i < end ? c7n_day(p->s[p->i]) : -1;
        if (d2 < 0)
            return wp_fail(p, "a day letter ending the range: M T W H F S U");
        p->i++;
    }
    if (p->i >= end || p->s[p->i] != ',')
        return wp_fail(p, "',' between the days and the hour");
    p->i++;
    int h = 0, nd = 0;
    size_t at = p->i;
    while (p->i < end && p->s[p->i] >= '0' && p->s[p->i] <= '9' && nd < 3) {
        h = h * 10 + (p->s[p->i++] - '0');
        nd++;
    }
    if (nd == 0 || h > 23) {
        p->i = at;
        return wp_fail(p, "an hour 0..23");
    }
    if (p->i >= end || p->s[p->i] != ')')
        return wp_fail(p, "')' closing (days,hour)");
    p->i++;
    for (int d = d1;; d = (d + 1) % 7) {
        if (*nev == 7 * TW_WINDOWS_MAX)
            return wp_fail(p, "fewer times");
        ev[(*nev)++] = d * 1440 + h * 60;
        if (d == d2)
            break;
    }
    return TW_OK;
}

/* The value of off= or on=: a spec or a [list] of them, up to END. */
static enum tw_err c7n_times(struct wp *p, size_t end, int *ev, size_t *nev)
{
    bool list = p->i < end && p->s[p->i] == '[';
    if (list)
        p->i++;
    for (;;) {
        enum tw_err rc = c7n_spec(p, end, ev, nev);
        if (rc != TW_OK)
            return rc;
        if (!list)
            break;
        if (p->i < end && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < end && p->s[p->i] == ']') {
            p->i++;
            break;
        }
        return wp_fail(p, "',' and another (days,hour), or ']'");
    }
    if (p->i != end)
        return wp_fail(p, "';' after the times");
    return TW_OK;
}

static bool key_is(const char *s, size_t n, const char *key)
{
    size_t k = strlen(key);
    if (n != k)
        return false;
    for (size_t i = 0; i < k; i++)
        if (lower(s[i]) != key[i])
            return false;
    return true;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static enum tw_err custodian_parse(const char *buf, size_t len, struct tw_windows *out,
                                   struct tw_error *err)
{
    struct wp p = {buf ? buf : "", buf ? len : 0, 0, err};
    size_t end = p.len;
    /* Custodian strips quotes that people copy from its documentation. */
    while (p.i < end && (p.s[p.i] == '\'' || p.s[p.i] == '"'))
        p.i++;
    while (end > p.i && (p.s[end - 1] == '\'' || p.s[end - 1] == '"'))
        end--;
    int offs[7 * TW_WINDOWS_MAX], ons[7 * TW_WINDOWS_MAX];
    size_t noff = 0, non = 0;
    bool seen_off = false, seen_on = false, seen_tz = false;
    enum tw_err rc;
    while (p.i < end) {
        size_t semi = p.i;
        while (semi < end && p.s[semi] != ';')
            semi++;
        if (semi == p.i) {
            p.i++; /* an empty piece */
            continue;
        }
        size_t eq = p.i;
        while (eq < semi && p.s[eq] != '=')
            eq++;
        if (eq == semi) {
            if (key_is(p.s + p.i, semi - p.i, "on") || key_is(p.s + p.i, semi - p.i, "off"))
                return wp_fail(&p, "off=(days,hour);on=(days,hour): \"on\" and \"off\" alone "
                                   "mean the policy's defaults, which a tag can't give");
            return wp_fail(&p, "key=value: off=, on= or tz=");
        }
        const char *k = p.s + p.i;
        size_t kl = eq - p.i;
        if (key_is(k, kl, "off") || key_is(k, kl, "on")) {
            bool is_off = key_is(k, kl, "off");
            if (is_off ? seen_off : seen_on)
                return wp_fail(&p, is_off ? "one off= only" : "one on= only");
            p.i = eq + 1;
            rc = c7n_times(&p, semi, is_off ? offs : ons, is_off ? &noff : &non);
            if (rc != TW_OK)
                return rc;
            *(is_off ? &seen_off : &seen_on) = true;
        } else if (key_is(k, kl, "tz")) {
            if (seen_tz)
                return wp_fail(&p, "one tz= only");
            seen_tz = true;
            p.i = eq + 1;
            size_t vl = semi - p.i;
            if (vl == 0 || vl >= sizeof(out->tz))
                return wp_fail(&p, "a time zone name (Europe/London, or pt, et, ...)");
            const char *zone = NULL;
            for (size_t a = 0; a < sizeof(tz_aliases) / sizeof(tz_aliases[0]); a++)
                if (key_is(p.s + p.i, vl, tz_aliases[a].alias))
                    zone = tz_aliases[a].zone;
            if (zone) {
                snprintf(out->tz, sizeof(out->tz), "%s", zone);
            } else {
                for (size_t c = p.i; c < semi; c++) {
                    char ch = p.s[c];
                    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                          (ch >= '0' && ch <= '9') || ch == '/' || ch == '_' || ch == '-' ||
                          ch == '+')) {
                        p.i = c;
                        return wp_fail(&p, "a time zone name (letters, digits, / _ - +)");
                    }
                }
                memcpy(out->tz, p.s + p.i, vl);
                out->tz[vl] = '\0';
            }
            p.i = semi;
        } else {
            return wp_fail(&p, "off=, on= or tz=");
        }
    }
    if (!seen_off || !seen_on) {
        memset(out, 0, sizeof(*out));
        return tw_error_set_at(err, TW_EPARSE, 1, (long)p.i + 1,
                               "offhours tag \"%.*s\": needs both off=(days,hour) and "
                               "on=(days,hour), e.g. off=(M-F,19);on=(M-F,7)",
                               (int)(p.len > 80 ? 80 : p.len), p.s);
    }
    qsort(offs, noff, sizeof(int), cmp_int);
    qsort(ons, non, sizeof(int), cmp_int);
    for (size_t i = 0; i < noff; i++) {
        for (size_t j = 0; j < non; j++) {
            if (ons[j] == offs[i]) {
                memset(out, 0, sizeof(*out));
                return tw_error_set(err, TW_EPARSE,
                                    "offhours tag: off and on at the same time (%s %02d:00)",
                                    day_names[offs[i] / 1440], offs[i] % 1440 / 60);
            }
        }
    }
    /* Each off ends at the first on after it (round the week). */
    struct tw_windows raw;
    memset(&raw, 0, sizeof(raw));
    for (size_t i = 0; i < noff; i++) {
        if (i > 0 && offs[i] == offs[i - 1])
            continue;
        int best = -1;
        for (size_t j = 0; j < non; j++) {
            int len_min = window_len(offs[i], ons[j]);
            if (best < 0 || len_min < best)
                best = len_min;
        }
        if (raw.n == TW_WINDOWS_MAX) {
            memset(out, 0, sizeof(*out));
            return tw_error_set(err, TW_ERANGE, "offhours tag: more than %d windows",
                                TW_WINDOWS_MAX);
        }
        raw.w[raw.n].start_min = (uint16_t)offs[i];
        raw.w[raw.n].len_min = (uint16_t)best;
        raw.n++;
    }
    tw_windows_union(&raw);
    out->n = raw.n;
    memcpy(out->w, raw.w, sizeof(raw.w));
    return TW_OK;
}

enum tw_err tw_windows_parse_custodian(const char *buf, size_t len, struct tw_windows *out,
                                       struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    enum tw_err rc = custodian_parse(buf, len, out, err);
    if (rc != TW_OK)
        memset(out, 0, sizeof(*out)); /* nothing half-read */
    return rc;
}

/* ---- instants ---- */

static int cmp_interval(const void *a, const void *b)
{
    const struct tw_interval *x = a, *y = b;
    if (x->from_ns != y->from_ns)
        return (x->from_ns > y->from_ns) - (x->from_ns < y->from_ns);
    return (x->to_ns > y->to_ns) - (x->to_ns < y->to_ns);
}

enum tw_err tw_windows_instants(const struct tw_windows *w, const struct tw_tz *z,
                                int64_t from_ns, int64_t to_ns, struct tw_interval **out,
                                size_t *n, struct tw_error *err)
{
    *out = NULL;
    *n = 0;
    if (to_ns < from_ns)
        return tw_error_set(err, TW_EINVAL, "the period ends before it starts");
    int64_t span;
    if (__builtin_sub_overflow(to_ns, from_ns, &span) ||
        span > (int64_t)TW_WINDOW_PERIOD_MAX_DAYS * TW_NS_PER_DAY)
        return tw_error_set(err, TW_ERANGE, "a period of more than %d days: ask for less",
                            TW_WINDOW_PERIOD_MAX_DAYS);
    if (w->n == 0 || to_ns == from_ns)
        return TW_OK;
    struct tw_civil c;
    tw_tz_ns_to_civil(z, from_ns, &c, NULL);
    int64_t first = tw_days_from_civil(c.year, c.month, c.day);
    tw_tz_ns_to_civil(z, to_ns, &c, NULL);
    int64_t last = tw_days_from_civil(c.year, c.month, c.day);
    /* A window may start up to a week before the period and reach into it. */
    int64_t monday = first - tw_weekday_from_days(first) - 7;
    size_t weeks = (size_t)((last - monday) / 7 + 1);
    size_t cap = weeks * w->n, k = 0;
    struct tw_interval *iv = malloc(cap * sizeof(*iv));
    if (!iv)
        return tw_error_set(err, TW_ENOMEM, "out of memory for %zu intervals", cap);
    for (size_t wk = 0; wk < weeks; wk++) {
        for (size_t i = 0; i < w->n; i++) {
            int64_t a_min = (monday + 7 * (int64_t)wk) * 1440 + w->w[i].start_min;
            int64_t b_min = a_min + w->w[i].len_min;
            int64_t la, lb, a, b;
            if (__builtin_mul_overflow(a_min, TW_NS_PER_MIN, &la) ||
                __builtin_mul_overflow(b_min, TW_NS_PER_MIN, &lb) ||
                tw_tz_local_to_ns(z, la, &a, NULL) != TW_OK ||
                tw_tz_local_to_ns(z, lb, &b, NULL) != TW_OK) {
                free(iv);
                return tw_error_set(err, TW_ERANGE,
                                    "the period reaches the end of the instants tierwise "
                                    "handles (2262)");
            }
            if (a < from_ns)
                a = from_ns;
            if (b > to_ns)
                b = to_ns;
            if (b > a) {
                iv[k].from_ns = a;
                iv[k].to_ns = b;
                k++;
            }
        }
    }
    qsort(iv, k, sizeof(*iv), cmp_interval);
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m > 0 && iv[i].from_ns <= iv[m - 1].to_ns) {
            if (iv[i].to_ns > iv[m - 1].to_ns)
                iv[m - 1].to_ns = iv[i].to_ns;
        } else {
            iv[m++] = iv[i];
        }
    }
    if (m == 0) {
        free(iv);
        return TW_OK;
    }
    *out = iv;
    *n = m;
    return TW_OK;
}

enum tw_err tw_windows_elapsed(const struct tw_windows *w, const struct tw_tz *z,
                               int64_t from_ns, int64_t to_ns, int64_t *ns,
                               struct tw_error *err)
{
    struct tw_interval *iv;
    size_t n;
    enum tw_err rc = tw_windows_instants(w, z, from_ns, to_ns, &iv, &n, err);
    if (rc != TW_OK)
        return rc;
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += iv[i].to_ns - iv[i].from_ns;
    free(iv);
    *ns = sum;
    return TW_OK;
}

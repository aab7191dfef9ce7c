/*
 * sim_scenario.c - the simulator's scenario file: parsing, checking and
 * the disk tier ladder.
 *
 * Pure: no I/O and no libmicrohttpd, so the fuzz target can include this
 * file as it is.  Unknown keys are refused (a typo would otherwise be a
 * silently ignored setting); keys starting with "_" are comments or
 * provenance and are skipped everywhere.
 */
#include "sim/sim_scenario.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/jsonx.h"
#include "core/uuid.h"

/* ---- names and the tier ladder ---- */

static const char *const power_names[] = {"starting", "running",      "stopping",
                                          "stopped",  "deallocating", "deallocated"};

const char *tw_sim_power_name(enum tw_sim_power p)
{
    return (unsigned)p < sizeof(power_names) / sizeof(power_names[0]) ? power_names[p] : "unknown";
}

enum tw_err tw_sim_power_parse(const char *s, enum tw_sim_power *out)
{
    for (size_t i = 0; i < sizeof(power_names) / sizeof(power_names[0]); i++) {
        if (strcasecmp(s, power_names[i]) == 0) {
            *out = (enum tw_sim_power)i;
            return TW_OK;
        }
    }
    return TW_EINVAL;
}

/* DiskStorageAccountTypes (arm.md 1) and the letter of their tiers. */
static const struct {
    const char *name;
    char letter; /* 0: no tiers (provisioned IOPS/MB/s instead) */
} skus[] = {
    {"Standard_LRS", 'S'}, {"Premium_LRS", 'P'},     {"StandardSSD_LRS", 'E'}, {"UltraSSD_LRS", 0},
    {"Premium_ZRS", 'P'},  {"StandardSSD_ZRS", 'E'}, {"PremiumV2_LRS", 0},
};

static int sku_index(const char *sku)
{
    for (size_t i = 0; i < sizeof(skus) / sizeof(skus[0]); i++) {
        if (strcmp(sku, skus[i].name) == 0)
            return (int)i;
    }
    return -1;
}

bool tw_sim_sku_known(const char *sku)
{
    return sku_index(sku) >= 0;
}

/*
 * The offered sizes and their tier numbers, the same for P, E and S
 * (../shared/catalog/azure-disk-tiers.json); Standard HDD has no S1-S3, so
 * a small HDD is billed as S4.
 */
static const struct {
    int64_t gib;
    int num;
    int p_iops, p_mbps; /* Premium SSD's rating of the step */
    int e_iops, e_mbps; /* Standard SSD's ("up to") */
    int s_iops, s_mbps; /* Standard HDD's ("up to"; S4 and above) */
} steps[] = {
    {4, 1, 120, 25, 500, 60, 500, 60},
    {8, 2, 120, 25, 500, 60, 500, 60},
    {16, 3, 120, 25, 500, 60, 500, 60},
    {32, 4, 120, 25, 500, 60, 500, 60},
    {64, 6, 240, 50, 500, 60, 500, 60},
    {128, 10, 500, 100, 500, 60, 500, 60},
    {256, 15, 1100, 125, 500, 60, 500, 60},
    {512, 20, 2300, 150, 500, 60, 500, 60},
    {1024, 30, 5000, 200, 500, 60, 500, 60},
    {2048, 40, 7500, 250, 500, 60, 500, 60},
    {4096, 50, 7500, 250, 500, 60, 500, 60},
    {8192, 60, 16000, 500, 2000, 400, 1300, 300},
    {16384, 70, 18000, 750, 4000, 600, 2000, 500},
    {32767, 80, 20000, 900, 6000, 750, 2000, 500},
};
#define N_STEPS (sizeof(steps) / sizeof(steps[0]))

enum tw_err tw_sim_tier_for(const char *sku, int64_t size_gib, char *tier, size_t tierlen)
{
    int si = sku_index(sku);
    tier[0] = '\0';
    if (si < 0)
        return TW_EINVAL;
    if (size_gib < 1)
        return TW_ERANGE;
    if (!skus[si].letter) /* Ultra and Premium v2 go to 64 TiB, tierless */
        return size_gib > 65536 ? TW_ERANGE : TW_OK;
    if (size_gib > TW_SIM_MAX_DISK_GIB)
        return TW_ERANGE;
    for (size_t i = 0; i < N_STEPS; i++) {
        if (size_gib <= steps[i].gib) {
            int num = steps[i].num;
            if (skus[si].letter == 'S' && num < 4)
                num = 4;
            snprintf(tier, tierlen, "%c%d", skus[si].letter, num);
            return TW_OK;
        }
    }
    return TW_ERANGE;
}

int64_t tw_sim_tier_size(const char *tier)
{
    if (!tier || !strchr("PES", tier[0]) || tier[1] < '1' || tier[1] > '9')
        return -1;
    char *end;
    errno = 0;
    long num = strtol(tier + 1, &end, 10);
    if (*end || errno)
        return -1;
    for (size_t i = 0; i < N_STEPS; i++) {
        if (steps[i].num == num)
            return tier[0] == 'S' && num < 4 ? -1 : steps[i].gib;
    }
    return -1;
}

bool tw_sim_tier_rating(const char *tier, int64_t *iops, int64_t *mbps)
{
    int64_t gib = tw_sim_tier_size(tier);
    for (size_t i = 0; gib > 0 && i < N_STEPS; i++) {
        if (steps[i].gib != gib)
            continue;
        *iops = tier[0] == 'P'   ? steps[i].p_iops
                : tier[0] == 'E' ? steps[i].e_iops
                                 : steps[i].s_iops;
        *mbps = tier[0] == 'P'   ? steps[i].p_mbps
                : tier[0] == 'E' ? steps[i].e_mbps
                                 : steps[i].s_mbps;
        return true;
    }
    return false;
}

/* ---- JSON helpers: each fills ERR with the field's path ---- */

/* A path prefix ("vms[0].") without its final dot, for "%.*s". */
#define BARE(w) (int)(strlen(w) - 1), (w)

/* Refuses keys of O outside ALLOWED (NULL-terminated); "_" keys pass. */
static enum tw_err check_keys(const json_t *o, const char *where, const char *const *allowed,
                              struct tw_error *err)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)o, k, v)
    {
        if (k[0] == '_')
            continue;
        bool ok = false;
        for (size_t i = 0; allowed[i] && !ok; i++)
            ok = strcmp(k, allowed[i]) == 0;
        if (!ok) {
            char list[512] = "";
            size_t n = 0;
            for (size_t i = 0; allowed[i] && n < sizeof(list); i++)
                n +=
                    (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", allowed[i]);
            return tw_error_set(err, TW_EPARSE, "%s%s is not a known key (known: %s)", where, k,
                                list);
        }
    }
    return TW_OK;
}

/* The getters of core/jsonx; an absent member leaves its default. */
static enum tw_err get_str(const json_t *o, const char *where, const char *key, bool required,
                           char *dst, size_t dstlen, struct tw_error *err)
{
    unsigned opt = TW_JX_NULLABLE | (required ? TW_JX_REQUIRED : 0);
    return tw_jx_str(json_object_get(o, key), where, key, opt, dst, dstlen, err) ? TW_OK
                                                                                 : TW_EPARSE;
}

static enum tw_err get_int(const json_t *o, const char *where, const char *key, int64_t min,
                           int64_t max, int64_t *out, struct tw_error *err)
{
    return tw_jx_int(json_object_get(o, key), where, key, min, max, 0, out, err) ? TW_OK
                                                                                 : TW_EPARSE;
}

static enum tw_err get_bool(const json_t *o, const char *where, const char *key, bool *out,
                            struct tw_error *err)
{
    return tw_jx_bool(json_object_get(o, key), where, key, 0, out, err) ? TW_OK : TW_EPARSE;
}

/* A copy of object O without its "_" keys (provenance never goes on the
 * wire); NULL when out of memory. */
static json_t *strip_private(const json_t *o)
{
    json_t *c = json_object();
    const char *k;
    json_t *v;
    if (!c)
        return NULL;
    json_object_foreach((json_t *)o, k, v)
    {
        if (k[0] != '_' && json_object_set(c, k, v) != 0) {
            json_decref(c);
            return NULL;
        }
    }
    return c;
}

/* A stable UUID made from TEXT, so a scenario without ids still answers
 * the same ids on every run. */
static void stable_uuid(const char *a, const char *b, char out[TW_UUID_STRLEN + 1])
{
    uint8_t r[16];
    uint64_t h1 = 1469598103934665603ull, h2 = 1099511628211ull * 31;
    for (const char *s = a; *s; s++) {
        h1 = (h1 ^ (uint8_t)*s) * 1099511628211ull;
        h2 = (h2 ^ (uint8_t)*s) * 0x100000001b3ull + 7;
    }
    for (const char *s = b; *s; s++) {
        h1 = (h1 ^ (uint8_t)*s) * 1099511628211ull;
        h2 = (h2 ^ (uint8_t)*s) * 0x100000001b3ull + 7;
    }
    for (int i = 0; i < 8; i++) {
        r[i] = (uint8_t)(h1 >> (i * 8));
        r[8 + i] = (uint8_t)(h2 >> (i * 8));
    }
    tw_uuid_format(r, out);
}

/* The N decimal digits at P (already checked to be digits). */
static int digits(const char *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++)
        v = v * 10 + (p[i] - '0');
    return v;
}

/* "2025-01-06T08:00:00Z" as Unix milliseconds; exactly that form. */
static enum tw_err parse_time(const char *s, int64_t *ms)
{
    static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(s) != sizeof(form) - 1)
        return TW_EINVAL;
    for (size_t i = 0; form[i]; i++) {
        if (form[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != form[i])
            return TW_EINVAL;
    }
    int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2), h = digits(s + 11, 2),
        mi = digits(s + 14, 2), sec = digits(s + 17, 2);
    if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        return TW_EINVAL;
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return TW_EINVAL;
    *ms = (int64_t)t * 1000;
    return TW_OK;
}

/* ---- faults ---- */

static const char *const fault_kinds[] = {"latency", "throttle",     "error",         "truncate",
                                          "drop",    "no-next-link", "fail-operation"};

const char *tw_sim_fault_kind_name(enum tw_sim_fault_kind k)
{
    return (unsigned)k < sizeof(fault_kinds) / sizeof(fault_kinds[0]) ? fault_kinds[k] : "?";
}

static const char *const fault_keys[] = {"kind",        "path",        "method", "status",
                                         "retry_after", "ms",          "bytes",  "skip",
                                         "count",       "probability", "seed",   NULL};

enum tw_err tw_sim_fault_from_value(const json_t *v, const char *where, struct tw_sim_fault *f,
                                    struct tw_error *err)
{
    char w[300], kind[24] = "";
    enum tw_err rc;
    snprintf(w, sizeof(w), "%s.", where);
    memset(f, 0, sizeof(*f));
    if (!json_is_object(v))
        return tw_error_set(err, TW_EPARSE, "%s must be an object", where);
    if ((rc = check_keys(v, w, fault_keys, err)) != TW_OK ||
        (rc = get_str(v, w, "kind", true, kind, sizeof(kind), err)) != TW_OK)
        return rc;
    size_t k;
    for (k = 0; k < sizeof(fault_kinds) / sizeof(fault_kinds[0]); k++) {
        if (strcmp(kind, fault_kinds[k]) == 0)
            break;
    }
    if (k == sizeof(fault_kinds) / sizeof(fault_kinds[0]))
        return tw_error_set(err, TW_EPARSE,
                            "%skind \"%s\" is not latency, throttle, error, truncate, drop, "
                            "no-next-link or fail-operation",
                            w, kind);
    f->kind = (enum tw_sim_fault_kind)k;
    strcpy(f->path, "/");
    if ((rc = get_str(v, w, "path", false, f->path, sizeof(f->path), err)) != TW_OK ||
        (rc = get_str(v, w, "method", false, f->method, sizeof(f->method), err)) != TW_OK)
        return rc;
    if (f->path[0] != '/')
        return tw_error_set(err, TW_EPARSE, "%spath \"%s\" must start with /", w, f->path);
    if (f->method[0] && strcmp(f->method, "GET") != 0 && strcmp(f->method, "POST") != 0 &&
        strcmp(f->method, "PATCH") != 0 && strcmp(f->method, "PUT") != 0 &&
        strcmp(f->method, "DELETE") != 0)
        return tw_error_set(err, TW_EPARSE,
                            "%smethod \"%s\" is not GET, POST, PATCH, PUT or DELETE", w, f->method);
    int64_t status = f->kind == TW_SIM_FAULT_THROTTLE ? 429 : 500, retry = 1, ms = 0, bytes = -1,
            skip = 0, count = -1, seed = 1;
    if ((rc = get_int(v, w, "status", 400, 599, &status, err)) != TW_OK ||
        (rc = get_int(v, w, "retry_after", 0, 86400, &retry, err)) != TW_OK ||
        (rc = get_int(v, w, "ms", 0, 60000, &ms, err)) != TW_OK ||
        (rc = get_int(v, w, "bytes", -1, 1 << 30, &bytes, err)) != TW_OK ||
        (rc = get_int(v, w, "skip", 0, 1L << 40, &skip, err)) != TW_OK ||
        (rc = get_int(v, w, "count", -1, 1L << 40, &count, err)) != TW_OK ||
        (rc = get_int(v, w, "seed", 0, INT64_MAX, &seed, err)) != TW_OK)
        return rc;
    if (count == 0)
        return tw_error_set(err, TW_EPARSE, "%scount must be -1 (always) or at least 1", w);
    if (f->kind == TW_SIM_FAULT_LATENCY && !json_object_get(v, "ms"))
        return tw_error_set(err, TW_EPARSE, "%sms is missing: a latency fault needs it", w);
    if (f->kind == TW_SIM_FAULT_THROTTLE && status != 429)
        return tw_error_set(err, TW_EPARSE,
                            "%sstatus of a throttle fault is 429; use kind error "
                            "for other statuses",
                            w);
    f->probability = 1.0;
    const json_t *p = json_object_get(v, "probability");
    if (p) {
        if (!json_is_number(p) || !(json_number_value(p) > 0.0) || json_number_value(p) > 1.0)
            return tw_error_set(err, TW_EPARSE, "%sprobability must be a number above 0, at most 1",
                                w);
        f->probability = json_number_value(p);
    }
    f->status = (int)status;
    f->retry_after_s = (long)retry;
    f->ms = (long)ms;
    f->bytes = (long)bytes;
    f->skip = (long)skip;
    f->count = (long)count;
    /* xorshift64 must not start at 0; mix so nearby seeds differ at once. */
    f->rng = ((uint64_t)seed + 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    if (f->rng == 0)
        f->rng = 0x9E3779B97F4A7C15ull;
    return TW_OK;
}

/* One value of a --fault spec: a whole integer, a number, or a string. */
static json_t *spec_value(const char *s)
{
    char *end;
    errno = 0;
    long long i = strtoll(s, &end, 10);
    if (*s && !*end && !errno)
        return json_integer(i);
    double d = strtod(s, &end);
    if (*s && !*end && isfinite(d))
        return json_real(d);
    return json_string(s);
}

enum tw_err tw_sim_fault_parse(const char *spec, struct tw_sim_fault *f, struct tw_error *err)
{
    char buf[1024], where[300];
    snprintf(where, sizeof(where), "--fault \"%.200s\"", spec);
    if (strlen(spec) >= sizeof(buf))
        return tw_error_set(err, TW_EPARSE, "%s is longer than %zu bytes", where, sizeof(buf) - 1);
    strcpy(buf, spec);
    json_t *o = json_object();
    if (!o)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    char *save = NULL;
    for (char *pair = strtok_r(buf, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(pair, '=');
        if (!eq || eq == pair) {
            json_decref(o);
            return tw_error_set(err, TW_EPARSE,
                                "%s: \"%s\" is not key=value (e.g. "
                                "kind=error,path=/metadata/instance,status=503,count=2)",
                                where, pair);
        }
        *eq = '\0';
        if (json_object_get(o, pair)) {
            json_decref(o);
            return tw_error_set(err, TW_EPARSE, "%s gives %s twice", where, pair);
        }
        json_t *val =
            strcmp(pair, "path") == 0 || strcmp(pair, "method") == 0 || strcmp(pair, "kind") == 0
                ? json_string(eq + 1) /* never numbers, even "/1" */
                : spec_value(eq + 1);
        /* (jansson refuses text that is not UTF-8; set_new consumes VAL
         * even when it fails) */
        if (!val || json_object_set_new(o, pair, val) != 0) {
            json_decref(o);
            return tw_error_set(err, TW_EPARSE, "%s: \"%s\" is not valid UTF-8 text", where, pair);
        }
    }
    enum tw_err rc = tw_sim_fault_from_value(o, where, f, err);
    json_decref(o);
    return rc;
}

json_t *tw_sim_fault_to_value(const struct tw_sim_fault *f)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "kind", json_string(tw_sim_fault_kind_name(f->kind)));
    json_object_set_new(o, "path", json_string(f->path));
    if (f->method[0])
        json_object_set_new(o, "method", json_string(f->method));
    if (f->kind == TW_SIM_FAULT_ERROR)
        json_object_set_new(o, "status", json_integer(f->status));
    if (f->kind == TW_SIM_FAULT_THROTTLE)
        json_object_set_new(o, "retry_after", json_integer(f->retry_after_s));
    if (f->kind == TW_SIM_FAULT_LATENCY)
        json_object_set_new(o, "ms", json_integer(f->ms));
    if (f->kind == TW_SIM_FAULT_TRUNCATE)
        json_object_set_new(o, "bytes", json_integer(f->bytes));
    json_object_set_new(o, "skip", json_integer(f->skip));
    json_object_set_new(o, "count", json_integer(f->count));
    json_object_set_new(o, "probability", json_real(f->probability));
    json_object_set_new(o, "matched", json_integer(f->matched));
    json_object_set_new(o, "fired", json_integer(f->fired));
    return o;
}

/* ---- settings, VMs, disks ---- */

static const char *const top_keys[] = {
    "schema", "settings",           "self",   "vms", "disks", "resource_skus",
    "prices", "service_principals", "faults", NULL};
static const char *const settings_keys[] = {
    "operation_delay_ms", "retry_after_s",    "sku_changes_per_day",
    "prices_page_size",   "token_lifetime_s", "clock",
    "arm_page_size",      "arm_limits",       NULL};
static const char *const limits_keys[] = {"reads_per_s", "writes_per_s", "burst",
                                          "vm_actions_per_min", NULL};
static const char *const vm_keys[] = {
    "subscription_id", "resource_group", "name",           "vm_size", "location",   "zone", "vm_id",
    "os_type",         "computer_name",  "admin_username", "image",   "private_ip", "mac",  "tags",
    "power_state",     "hibernated",     "disks",          NULL};
static const char *const image_keys[] = {"publisher", "offer", "sku", "version", NULL};
static const char *const vm_disk_keys[] = {
    "name",          "role",           "lun",     "sku",
    "size_gib",      "tier",           "caching", "write_accelerator",
    "create_option", "resource_group", "zone",    "max_shares",
    "bursting",      "iops",           "mbps",    NULL};
static const char *const free_disk_keys[] = {
    "subscription_id", "resource_group", "name",     "location", "zone", "sku", "size_gib", "tier",
    "create_option",   "max_shares",     "bursting", "iops",     "mbps", NULL};
static const char *const principal_keys[] = {"tenant_id", "client_id", "client_secret", NULL};

static enum tw_err parse_settings(const json_t *s, struct tw_sim_settings *st, struct tw_error *err)
{
    st->operation_delay_ms = 1000;
    st->retry_after_s = 1;
    st->sku_changes_per_day = 2;
    st->prices_page_size = 100;
    st->token_lifetime_s = 86399;
    st->clock_start_ms = 0;
    st->arm_page_size = 50;
    memset(&st->arm_limits, 0, sizeof(st->arm_limits));
    if (!s)
        return TW_OK;
    if (!json_is_object(s))
        return tw_error_set(err, TW_EPARSE, "settings must be an object");
    enum tw_err rc = check_keys(s, "settings.", settings_keys, err);
    int64_t delay = st->operation_delay_ms, retry = st->retry_after_s,
            changes = st->sku_changes_per_day, page = st->prices_page_size,
            life = st->token_lifetime_s;
    if (rc != TW_OK ||
        (rc = get_int(s, "settings.", "operation_delay_ms", 0, 3600000, &delay, err)) != TW_OK ||
        (rc = get_int(s, "settings.", "retry_after_s", 0, 3600, &retry, err)) != TW_OK ||
        (rc = get_int(s, "settings.", "sku_changes_per_day", 0, TW_SIM_MAX_DAILY_CHANGES, &changes,
                      err)) != TW_OK ||
        (rc = get_int(s, "settings.", "prices_page_size", 1, 100000, &page, err)) != TW_OK ||
        (rc = get_int(s, "settings.", "token_lifetime_s", 60, 31LL * 86400, &life, err)) != TW_OK)
        return rc;
    st->operation_delay_ms = (long)delay;
    st->retry_after_s = (long)retry;
    st->sku_changes_per_day = (int)changes;
    st->prices_page_size = (long)page;
    st->token_lifetime_s = (long)life;
    char clock[32] = "";
    if ((rc = get_str(s, "settings.", "clock", false, clock, sizeof(clock), err)) != TW_OK)
        return rc;
    if (clock[0] && parse_time(clock, &st->clock_start_ms) != TW_OK)
        return tw_error_set(err, TW_EPARSE,
                            "settings.clock \"%s\" is not a UTC time like 2025-01-06T08:00:00Z",
                            clock);
    int64_t arm_page = st->arm_page_size;
    if ((rc = get_int(s, "settings.", "arm_page_size", 1, 1000, &arm_page, err)) != TW_OK)
        return rc;
    st->arm_page_size = (long)arm_page;
    const json_t *lim = json_object_get(s, "arm_limits");
    if (!lim || json_is_null(lim))
        return TW_OK;
    if (!json_is_object(lim))
        return tw_error_set(err, TW_EPARSE,
                            "settings.arm_limits must be an object {reads_per_s, writes_per_s, "
                            "burst, vm_actions_per_min}");
    static const char lw[] = "settings.arm_limits.";
    struct tw_sim_arm_limits *l = &st->arm_limits;
    int64_t vma = 0;
    l->burst = 1;
    if ((rc = check_keys(lim, lw, limits_keys, err)) != TW_OK)
        return rc;
    if (!tw_jx_num(json_object_get(lim, "reads_per_s"), lw, "reads_per_s", 0.001, 1e6, 0,
                   &l->reads_per_s, err) ||
        !tw_jx_num(json_object_get(lim, "writes_per_s"), lw, "writes_per_s", 0.001, 1e6, 0,
                   &l->writes_per_s, err) ||
        !tw_jx_num(json_object_get(lim, "burst"), lw, "burst", 0.001, 3600, 0, &l->burst, err))
        return TW_EPARSE;
    if ((rc = get_int(lim, lw, "vm_actions_per_min", 1, TW_SIM_MAX_VM_ACTIONS, &vma, err)) != TW_OK)
        return rc;
    l->vm_actions_per_min = (int)vma;
    return TW_OK;
}

enum tw_err tw_sim_arm_limits_parse(const char *spec, struct tw_sim_arm_limits *out,
                                    struct tw_error *err)
{
    memset(out, 0, sizeof(*out));
    if (strcmp(spec, "off") == 0)
        return TW_OK;
    double v[4] = {0, 0, 1, 0};
    int n = 0;
    const char *p = spec;
    while (n < 4) {
        char *end;
        errno = 0;
        double d = strtod(p, &end);
        if (end == p || errno || !isfinite(d) || d <= 0 || d > 1e6 || (*end && *end != ','))
            break;
        v[n++] = d;
        if (!*end) {
            p = end;
            break;
        }
        p = end + 1;
    }
    if (n < 2 || *p || v[2] > 3600 || v[3] != floor(v[3]) || v[3] > TW_SIM_MAX_VM_ACTIONS)
        return tw_error_set(err, TW_EPARSE,
                            "--arm-limits \"%.100s\" is not READS,WRITES[,BURST[,VM_ACTIONS]]: "
                            "positive reads and writes a second per region (ARM's are about "
                            "25,10), the bucket depth in seconds (1) and start/deallocate calls "
                            "per VM a minute (a whole number up to 64), or \"off\"",
                            spec);
    out->reads_per_s = v[0];
    out->writes_per_s = v[1];
    out->burst = v[2];
    out->vm_actions_per_min = (int)v[3];
    return TW_OK;
}

/* SKU, size and tier of a disk, checked together. */
static enum tw_err disk_sku_tier(const json_t *o, const char *w, struct tw_sim_disk *d,
                                 struct tw_error *err)
{
    enum tw_err rc;
    char sku[32] = "";
    if ((rc = get_str(o, w, "sku", true, sku, sizeof(sku), err)) != TW_OK)
        return rc;
    int si = -1;
    for (size_t i = 0; i < sizeof(skus) / sizeof(skus[0]) && si < 0; i++) {
        if (strcasecmp(sku, skus[i].name) == 0)
            si = (int)i;
    }
    if (si < 0)
        return tw_error_set(err, TW_EPARSE,
                            "%ssku \"%s\" is not a managed disk SKU (Premium_LRS, StandardSSD_LRS, "
                            "Standard_LRS, Premium_ZRS, StandardSSD_ZRS, UltraSSD_LRS, "
                            "PremiumV2_LRS)",
                            w, sku);
    strcpy(d->sku, skus[si].name); /* Azure's own spelling */
    int64_t size = 0;
    if (!json_object_get(o, "size_gib"))
        return tw_error_set(err, TW_EPARSE, "%ssize_gib is missing", w);
    if ((rc = get_int(o, w, "size_gib", 1, 65536, &size, err)) != TW_OK)
        return rc;
    d->size_gib = size;
    char base[8];
    rc = tw_sim_tier_for(d->sku, size, base, sizeof(base));
    if (rc == TW_ERANGE)
        return tw_error_set(err, TW_EPARSE,
                            "%ssize_gib %lld is beyond the largest tier "
                            "(%d GiB) of %s",
                            w, (long long)size, TW_SIM_MAX_DISK_GIB, d->sku);
    char tier[16] = "";
    if ((rc = get_str(o, w, "tier", false, tier, sizeof(tier), err)) != TW_OK)
        return rc;
    if (!tier[0]) {
        strcpy(d->tier, base);
        return TW_OK;
    }
    if (!base[0])
        return tw_error_set(err, TW_EPARSE, "%stier \"%s\": %s disks have no tiers", w, tier,
                            d->sku);
    int64_t tsize = tw_sim_tier_size(tier);
    if (tsize < 0 || tier[0] != base[0])
        return tw_error_set(err, TW_EPARSE, "%stier \"%s\" is not a tier of %s (%c1..%c80)", w,
                            tier, d->sku, base[0], base[0]);
    /* Only Premium SSD has performance tiers above the size's own. */
    if (strcmp(tier, base) != 0 && (tier[0] != 'P' || tsize < tw_sim_tier_size(base)))
        return tw_error_set(err, TW_EPARSE,
                            "%stier \"%s\" does not fit %lld GiB: the size's tier is %s%s", w, tier,
                            (long long)size, base,
                            tier[0] == 'P' ? " (a performance tier can only be higher)" : "");
    strcpy(d->tier, tier);
    return TW_OK;
}

/* A disk's optional max_shares, bursting, iops and mbps (after its SKU). */
static enum tw_err disk_extras(const json_t *o, const char *w, struct tw_sim_disk *d,
                               struct tw_error *err)
{
    enum tw_err rc;
    bool burst = false;
    d->bursting = -1;
    d->max_shares = 0;
    d->iops = d->mbps = 0;
    if ((rc = get_int(o, w, "max_shares", 1, 15, &d->max_shares, err)) != TW_OK)
        return rc;
    if (json_object_get(o, "bursting")) {
        if ((rc = get_bool(o, w, "bursting", &burst, err)) != TW_OK)
            return rc;
        d->bursting = burst ? 1 : 0;
    }
    bool tierless = !d->tier[0];
    if ((json_object_get(o, "iops") || json_object_get(o, "mbps")) && !tierless)
        return tw_error_set(err, TW_EPARSE,
                            "%s%s: only UltraSSD_LRS and PremiumV2_LRS disks have provisioned "
                            "IOPS and MB/s; a %s disk has its tier's (%s)",
                            w, json_object_get(o, "iops") ? "iops" : "mbps", d->sku, d->tier);
    if ((rc = get_int(o, w, "iops", 100, 400000, &d->iops, err)) != TW_OK ||
        (rc = get_int(o, w, "mbps", 1, 10000, &d->mbps, err)) != TW_OK)
        return rc;
    if (tierless && !d->iops)
        d->iops = 3000; /* Premium SSD v2's free baseline (azure-disk-tiers.json) */
    if (tierless && !d->mbps)
        d->mbps = 125;
    return TW_OK;
}

static bool disk_same(const struct tw_sim_disk *a, const struct tw_sim_disk *b)
{
    return strcasecmp(a->name, b->name) == 0 &&
           strcasecmp(a->resource_group, b->resource_group) == 0 &&
           strcasecmp(a->subscription_id, b->subscription_id) == 0;
}

static enum tw_err add_disk(struct tw_sim_scenario *sc, const struct tw_sim_disk *d, const char *w,
                            struct tw_error *err)
{
    if (sc->n_disks >= TW_SIM_MAX_DISKS)
        return tw_error_set(err, TW_EPARSE, "%.*s: more than %d disks", BARE(w), TW_SIM_MAX_DISKS);
    for (size_t i = 0; i < sc->n_disks; i++) {
        if (disk_same(&sc->disks[i], d))
            return tw_error_set(err, TW_EPARSE,
                                "%sname \"%s\" is a second disk of that name in "
                                "resource group %s",
                                w, d->name, d->resource_group);
    }
    sc->disks[sc->n_disks++] = *d;
    return TW_OK;
}

static enum tw_err parse_vm_disk(struct tw_sim_scenario *sc, long vmi, const json_t *o,
                                 const char *w, bool *has_os, bool luns[64], struct tw_error *err)
{
    const struct tw_sim_vm *vm = &sc->vms[vmi];
    struct tw_sim_disk d;
    enum tw_err rc;
    memset(&d, 0, sizeof(d));
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "%.*s must be an object", BARE(w));
    if ((rc = check_keys(o, w, vm_disk_keys, err)) != TW_OK)
        return rc;
    d.vm = vmi;
    strcpy(d.subscription_id, vm->subscription_id);
    strcpy(d.resource_group, vm->resource_group);
    strcpy(d.location, vm->location);
    strcpy(d.zone, vm->zone);
    char role[8] = "";
    if ((rc = get_str(o, w, "name", true, d.name, sizeof(d.name), err)) != TW_OK ||
        (rc = get_str(o, w, "role", true, role, sizeof(role), err)) != TW_OK ||
        (rc = get_str(o, w, "resource_group", false, d.resource_group, sizeof(d.resource_group),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "zone", false, d.zone, sizeof(d.zone), err)) != TW_OK)
        return rc;
    if (!d.name[0])
        return tw_error_set(err, TW_EPARSE, "%sname is empty", w);
    if (strcmp(role, "os") == 0)
        d.os = true;
    else if (strcmp(role, "data") != 0)
        return tw_error_set(err, TW_EPARSE, "%srole \"%s\" is neither os nor data", w, role);
    int64_t lun = -1;
    if ((rc = get_int(o, w, "lun", 0, 63, &lun, err)) != TW_OK)
        return rc;
    if (d.os) {
        if (*has_os)
            return tw_error_set(err, TW_EPARSE, "%.*s is a second OS disk of VM %s", BARE(w),
                                vm->name);
        if (json_object_get(o, "lun"))
            return tw_error_set(err, TW_EPARSE, "%slun: an OS disk has no LUN", w);
        *has_os = true;
    } else {
        if (lun < 0)
            return tw_error_set(err, TW_EPARSE, "%slun is missing: a data disk needs one (0..63)",
                                w);
        if (luns[lun])
            return tw_error_set(err, TW_EPARSE, "%slun %lld is already used on VM %s", w,
                                (long long)lun, vm->name);
        luns[lun] = true;
    }
    d.lun = (int)lun;
    if ((rc = disk_sku_tier(o, w, &d, err)) != TW_OK)
        return rc;
    strcpy(d.caching, d.os ? "ReadWrite" : "None");
    strcpy(d.create_option, d.os ? "FromImage" : "Attach");
    if ((rc = get_str(o, w, "caching", false, d.caching, sizeof(d.caching), err)) != TW_OK ||
        (rc = get_str(o, w, "create_option", false, d.create_option, sizeof(d.create_option),
                      err)) != TW_OK ||
        (rc = get_bool(o, w, "write_accelerator", &d.write_accelerator, err)) != TW_OK ||
        (rc = disk_extras(o, w, &d, err)) != TW_OK)
        return rc;
    if (strcmp(d.caching, "None") != 0 && strcmp(d.caching, "ReadOnly") != 0 &&
        strcmp(d.caching, "ReadWrite") != 0)
        return tw_error_set(err, TW_EPARSE, "%scaching \"%s\" is not None, ReadOnly or ReadWrite",
                            w, d.caching);
    return add_disk(sc, &d, w, err);
}

static enum tw_err parse_vm(struct tw_sim_scenario *sc, const json_t *o, size_t idx,
                            struct tw_error *err)
{
    char w[48];
    enum tw_err rc;
    snprintf(w, sizeof(w), "vms[%zu].", idx);
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "vms[%zu] must be an object", idx);
    if ((rc = check_keys(o, w, vm_keys, err)) != TW_OK)
        return rc;
    struct tw_sim_vm *vm = &sc->vms[idx];
    memset(vm, 0, sizeof(*vm));
    sc->n_vms = idx + 1; /* so a failure frees its tags */
    /* Defaults for what IMDS reports but tierwise never reads; they follow
     * ../shared/azure-api/imds-instance-constructed.json. */
    strcpy(vm->os_type, "Linux");
    strcpy(vm->admin_username, "azureuser");
    strcpy(vm->image_publisher, "canonical");
    strcpy(vm->image_offer, "0001-com-ubuntu-server-jammy");
    strcpy(vm->image_sku, "22_04-lts-gen2");
    strcpy(vm->image_version, "latest");
    strcpy(vm->private_ip, "10.0.0.4");
    strcpy(vm->mac, "000D3A1B2C3D");
    vm->power = TW_SIM_POWER_RUNNING;
    char power[16] = "";
    if ((rc = get_str(o, w, "subscription_id", true, vm->subscription_id,
                      sizeof(vm->subscription_id), err)) != TW_OK ||
        (rc = get_str(o, w, "resource_group", true, vm->resource_group, sizeof(vm->resource_group),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "name", true, vm->name, sizeof(vm->name), err)) != TW_OK ||
        (rc = get_str(o, w, "vm_size", true, vm->vm_size, sizeof(vm->vm_size), err)) != TW_OK ||
        (rc = get_str(o, w, "location", true, vm->location, sizeof(vm->location), err)) != TW_OK ||
        (rc = get_str(o, w, "zone", false, vm->zone, sizeof(vm->zone), err)) != TW_OK ||
        (rc = get_str(o, w, "vm_id", false, vm->vm_id, sizeof(vm->vm_id), err)) != TW_OK ||
        (rc = get_str(o, w, "os_type", false, vm->os_type, sizeof(vm->os_type), err)) != TW_OK ||
        (rc = get_str(o, w, "computer_name", false, vm->computer_name, sizeof(vm->computer_name),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "admin_username", false, vm->admin_username, sizeof(vm->admin_username),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "private_ip", false, vm->private_ip, sizeof(vm->private_ip), err)) !=
            TW_OK ||
        (rc = get_str(o, w, "mac", false, vm->mac, sizeof(vm->mac), err)) != TW_OK ||
        (rc = get_str(o, w, "power_state", false, power, sizeof(power), err)) != TW_OK)
        return rc;
    if (!vm->subscription_id[0] || !vm->resource_group[0] || !vm->name[0] || !vm->vm_size[0] ||
        !vm->location[0])
        return tw_error_set(err, TW_EPARSE,
                            "%.*s: subscription_id, resource_group, name, vm_size "
                            "and location must not be empty",
                            BARE(w));
    if (strchr(vm->name, '/') || strchr(vm->resource_group, '/') ||
        strchr(vm->subscription_id, '/'))
        return tw_error_set(err, TW_EPARSE, "%.*s: names must not contain /", BARE(w));
    for (size_t i = 0; i < idx; i++) {
        if (strcasecmp(sc->vms[i].name, vm->name) == 0 &&
            strcasecmp(sc->vms[i].resource_group, vm->resource_group) == 0 &&
            strcasecmp(sc->vms[i].subscription_id, vm->subscription_id) == 0)
            return tw_error_set(err, TW_EPARSE,
                                "%sname \"%s\" is a second VM of that name in "
                                "resource group %s",
                                w, vm->name, vm->resource_group);
    }
    if (!vm->vm_id[0])
        stable_uuid(vm->subscription_id, vm->name, vm->vm_id);
    if (!vm->computer_name[0])
        strcpy(vm->computer_name, vm->name);
    if (power[0]) {
        if (tw_sim_power_parse(power, &vm->power) != TW_OK ||
            (vm->power != TW_SIM_POWER_RUNNING && vm->power != TW_SIM_POWER_STOPPED &&
             vm->power != TW_SIM_POWER_DEALLOCATED))
            return tw_error_set(err, TW_EPARSE,
                                "%spower_state \"%s\" is not running, stopped or "
                                "deallocated",
                                w, power);
    }
    if ((rc = get_bool(o, w, "hibernated", &vm->hibernated, err)) != TW_OK)
        return rc;
    if (vm->hibernated) {
        /* A hibernated VM is deallocated (its memory saved to the OS disk). */
        if (power[0] && vm->power != TW_SIM_POWER_DEALLOCATED)
            return tw_error_set(err, TW_EPARSE,
                                "%shibernated: a hibernated VM is deallocated, but power_state "
                                "is \"%s\" (leave it out or say deallocated)",
                                w, power);
        vm->power = TW_SIM_POWER_DEALLOCATED;
    }
    const json_t *img = json_object_get(o, "image");
    if (img) {
        char iw[64];
        snprintf(iw, sizeof(iw), "%simage.", w);
        if (!json_is_object(img))
            return tw_error_set(err, TW_EPARSE, "%simage must be an object", w);
        if ((rc = check_keys(img, iw, image_keys, err)) != TW_OK ||
            (rc = get_str(img, iw, "publisher", false, vm->image_publisher,
                          sizeof(vm->image_publisher), err)) != TW_OK ||
            (rc = get_str(img, iw, "offer", false, vm->image_offer, sizeof(vm->image_offer),
                          err)) != TW_OK ||
            (rc = get_str(img, iw, "sku", false, vm->image_sku, sizeof(vm->image_sku), err)) !=
                TW_OK ||
            (rc = get_str(img, iw, "version", false, vm->image_version, sizeof(vm->image_version),
                          err)) != TW_OK)
            return rc;
    }
    const json_t *tags = json_object_get(o, "tags");
    vm->tags = json_object();
    if (!vm->tags)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    if (tags) {
        if (!json_is_object(tags))
            return tw_error_set(err, TW_EPARSE, "%stags must be an object of strings", w);
        if (json_object_size(tags) > TW_SIM_MAX_TAGS)
            return tw_error_set(err, TW_EPARSE, "%stags has %zu tags; Azure allows %d", w,
                                json_object_size(tags), TW_SIM_MAX_TAGS);
        const char *k;
        json_t *tv;
        json_object_foreach((json_t *)tags, k, tv)
        {
            if (!json_is_string(tv))
                return tw_error_set(err, TW_EPARSE, "%stags.%s must be a string", w, k);
            if (json_object_set(vm->tags, k, tv) != 0)
                return tw_error_set(err, TW_ENOMEM, "out of memory");
        }
    }
    const json_t *disks = json_object_get(o, "disks");
    if (disks && !json_is_array(disks))
        return tw_error_set(err, TW_EPARSE, "%sdisks must be an array", w);
    if (json_array_size(disks) > TW_SIM_MAX_VM_DISKS)
        return tw_error_set(err, TW_EPARSE, "%sdisks has %zu disks, at most %d", w,
                            json_array_size(disks), TW_SIM_MAX_VM_DISKS);
    bool has_os = false, luns[64] = {false};
    size_t i;
    const json_t *d;
    json_array_foreach(disks, i, d)
    {
        char dw[96];
        snprintf(dw, sizeof(dw), "%sdisks[%zu].", w, i);
        if ((rc = parse_vm_disk(sc, (long)idx, d, dw, &has_os, luns, err)) != TW_OK)
            return rc;
    }
    return TW_OK;
}

static enum tw_err parse_free_disk(struct tw_sim_scenario *sc, const json_t *o, size_t idx,
                                   struct tw_error *err)
{
    char w[48];
    enum tw_err rc;
    struct tw_sim_disk d;
    snprintf(w, sizeof(w), "disks[%zu].", idx);
    memset(&d, 0, sizeof(d));
    if (!json_is_object(o))
        return tw_error_set(err, TW_EPARSE, "disks[%zu] must be an object", idx);
    if ((rc = check_keys(o, w, free_disk_keys, err)) != TW_OK)
        return rc;
    d.vm = -1;
    d.lun = -1;
    strcpy(d.caching, "None");
    strcpy(d.create_option, "Empty");
    if ((rc = get_str(o, w, "subscription_id", true, d.subscription_id, sizeof(d.subscription_id),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "resource_group", true, d.resource_group, sizeof(d.resource_group),
                      err)) != TW_OK ||
        (rc = get_str(o, w, "name", true, d.name, sizeof(d.name), err)) != TW_OK ||
        (rc = get_str(o, w, "location", true, d.location, sizeof(d.location), err)) != TW_OK ||
        (rc = get_str(o, w, "zone", false, d.zone, sizeof(d.zone), err)) != TW_OK ||
        (rc = get_str(o, w, "create_option", false, d.create_option, sizeof(d.create_option),
                      err)) != TW_OK ||
        (rc = disk_sku_tier(o, w, &d, err)) != TW_OK || (rc = disk_extras(o, w, &d, err)) != TW_OK)
        return rc;
    if (!d.name[0] || !d.subscription_id[0] || !d.resource_group[0])
        return tw_error_set(err, TW_EPARSE,
                            "%.*s: subscription_id, resource_group and name must "
                            "not be empty",
                            BARE(w));
    return add_disk(sc, &d, w, err);
}

/* Copies the items of array A (each without "_" keys) onto DST. */
static enum tw_err append_objects(json_t *dst, const json_t *a, const char *what, size_t max,
                                  struct tw_error *err)
{
    if (json_array_size(dst) + json_array_size(a) > max)
        return tw_error_set(err, TW_EPARSE, "%s: more than %zu entries", what, max);
    size_t i;
    const json_t *it;
    json_array_foreach(a, i, it)
    {
        if (!json_is_object(it))
            return tw_error_set(err, TW_EPARSE, "%s[%zu] must be an object", what, i);
        json_t *c = strip_private(it);
        if (!c || json_array_append_new(dst, c) != 0)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    return TW_OK;
}

static enum tw_err check_prices(const json_t *items, size_t from, const char *what,
                                struct tw_error *err)
{
    for (size_t i = from; i < json_array_size(items); i++) {
        const json_t *c = json_object_get(json_array_get(items, i), "currencyCode");
        /* Everything else is served as given, so a client's handling of odd
         * items can be tested; the currency picks which requests see it. */
        if (c && !json_is_string(c))
            return tw_error_set(err, TW_EPARSE, "%s[%zu].currencyCode must be a string", what,
                                i - from);
    }
    return TW_OK;
}

/*
 * isPrimaryMeterRegion and armSkuName on the items that lack them, the way
 * the live API sets them (retail-prices-sample.json, prices-real.json):
 * a Disk Operations meter (unit "10K") is not primary, every other meter
 * is; armSkuName is "Premium_SSD_Managed_Disk_<tier>" for Premium SSD's
 * meters, "Standard_<size>" for a VM's ("D2s v3" -> Standard_D2s_v3, a
 * Spot or Low Priority meter naming the same size) and "" otherwise
 * (Standard SSD and HDD carry "").  Items that have them keep theirs.
 */
static enum tw_err fill_prices(json_t *items, size_t from, struct tw_error *err)
{
    for (size_t i = from; i < json_array_size(items); i++) {
        json_t *it = json_array_get(items, i);
        const char *meter = json_string_value(json_object_get(it, "meterName")),
                   *unit = json_string_value(json_object_get(it, "unitOfMeasure")),
                   *product = json_string_value(json_object_get(it, "productName")),
                   *service = json_string_value(json_object_get(it, "serviceName")),
                   *skuname = json_string_value(json_object_get(it, "skuName"));
        if (!json_object_get(it, "isPrimaryMeterRegion")) {
            bool ops = (unit && strcmp(unit, "10K") == 0) ||
                       (meter && strstr(meter, "Disk Operations") != NULL);
            if (json_object_set_new(it, "isPrimaryMeterRegion", json_boolean(!ops)) != 0)
                return tw_error_set(err, TW_ENOMEM, "out of memory");
        }
        if (json_object_get(it, "armSkuName"))
            continue;
        char arm[128] = "";
        if (product && skuname && strcmp(product, "Premium SSD Managed Disks") == 0) {
            snprintf(arm, sizeof(arm), "Premium_SSD_Managed_Disk_%.*s", (int)strcspn(skuname, " "),
                     skuname);
        } else if (service && skuname && strcmp(service, "Virtual Machines") == 0 && *skuname) {
            size_t n = strlen(skuname);
            static const char *const variants[] = {" Spot", " Low Priority"};
            for (size_t k = 0; k < 2; k++) {
                size_t vl = strlen(variants[k]);
                if (n > vl && strcmp(skuname + n - vl, variants[k]) == 0)
                    n -= vl;
            }
            int o = snprintf(arm, sizeof(arm), "Standard_");
            for (size_t k = 0; k < n && (size_t)o + 1 < sizeof(arm); k++)
                arm[o++] = skuname[k] == ' ' ? '_' : skuname[k];
            arm[o] = '\0';
        }
        if (json_object_set_new(it, "armSkuName", json_string(arm)) != 0)
            return tw_error_set(err, TW_ENOMEM, "out of memory");
    }
    return TW_OK;
}

static enum tw_err check_skus(const json_t *a, struct tw_error *err)
{
    size_t i;
    const json_t *s;
    json_array_foreach(a, i, s)
    {
        const json_t *rt = json_object_get(s, "resourceType"), *nm = json_object_get(s, "name"),
                     *locs = json_object_get(s, "locations");
        if (!json_is_string(rt) || !json_is_string(nm))
            return tw_error_set(err, TW_EPARSE,
                                "resource_skus[%zu] needs string resourceType "
                                "and name",
                                i);
        if (!json_is_array(locs) || json_array_size(locs) == 0)
            return tw_error_set(err, TW_EPARSE,
                                "resource_skus[%zu].locations must be a "
                                "non-empty array of region names",
                                i);
        size_t j;
        const json_t *l;
        json_array_foreach(locs, j, l)
        {
            if (!json_is_string(l))
                return tw_error_set(err, TW_EPARSE,
                                    "resource_skus[%zu].locations[%zu] must be "
                                    "a string",
                                    i, j);
        }
        const json_t *caps = json_object_get(s, "capabilities");
        json_array_foreach(caps, j, l)
        {
            /* ARM's capability values are always strings ("12800"). */
            if (!json_is_string(json_object_get(l, "name")) ||
                !json_is_string(json_object_get(l, "value")))
                return tw_error_set(err, TW_EPARSE,
                                    "resource_skus[%zu].capabilities[%zu] needs "
                                    "string name and value (ARM sends numbers as strings)",
                                    i, j);
        }
    }
    return TW_OK;
}

static enum tw_err parse_principals(struct tw_sim_scenario *sc, const json_t *a,
                                    struct tw_error *err)
{
    size_t i;
    const json_t *p;
    json_array_foreach(a, i, p)
    {
        char w[48], buf[256] = "";
        enum tw_err rc;
        snprintf(w, sizeof(w), "service_principals[%zu].", i);
        if (!json_is_object(p))
            return tw_error_set(err, TW_EPARSE, "service_principals[%zu] must be an object", i);
        if ((rc = check_keys(p, w, principal_keys, err)) != TW_OK ||
            (rc = get_str(p, w, "tenant_id", false, buf, sizeof(buf), err)) != TW_OK ||
            (rc = get_str(p, w, "client_id", true, buf, sizeof(buf), err)) != TW_OK ||
            (rc = get_str(p, w, "client_secret", true, buf, sizeof(buf), err)) != TW_OK)
            return rc;
    }
    return append_objects(sc->principals, a, "service_principals", 1024, err);
}

static enum tw_err parse_root(struct tw_sim_scenario *sc, const json_t *root, struct tw_error *err)
{
    enum tw_err rc;
    if (!json_is_object(root))
        return tw_error_set(err, TW_EPARSE, "a scenario must be a JSON object");
    if ((rc = check_keys(root, "", top_keys, err)) != TW_OK)
        return rc;
    const json_t *schema = json_object_get(root, "schema");
    if (schema &&
        (!json_is_string(schema) || strcmp(json_string_value(schema), TW_SIM_SCENARIO_SCHEMA) != 0))
        return tw_error_set(err, TW_EPARSE, "schema must be \"%s\"", TW_SIM_SCENARIO_SCHEMA);
    if ((rc = parse_settings(json_object_get(root, "settings"), &sc->settings, err)) != TW_OK)
        return rc;

    const json_t *vms = json_object_get(root, "vms"), *disks = json_object_get(root, "disks");
    if (vms && !json_is_array(vms))
        return tw_error_set(err, TW_EPARSE, "vms must be an array");
    if (disks && !json_is_array(disks))
        return tw_error_set(err, TW_EPARSE, "disks must be an array");
    if (json_array_size(vms) > TW_SIM_MAX_VMS)
        return tw_error_set(err, TW_EPARSE, "vms has %zu VMs, at most %d", json_array_size(vms),
                            TW_SIM_MAX_VMS);
    size_t ndisks = json_array_size(disks);
    for (size_t i = 0; i < json_array_size(vms); i++)
        ndisks += json_array_size(json_object_get(json_array_get(vms, i), "disks"));
    if (ndisks > TW_SIM_MAX_DISKS)
        return tw_error_set(err, TW_EPARSE, "the scenario has %zu disks, at most %d", ndisks,
                            TW_SIM_MAX_DISKS);
    sc->vms = calloc(json_array_size(vms) + 1, sizeof(*sc->vms));
    sc->disks = calloc(ndisks + 1, sizeof(*sc->disks));
    if (!sc->vms || !sc->disks)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    size_t i;
    const json_t *v;
    json_array_foreach(vms, i, v)
    {
        if ((rc = parse_vm(sc, v, i, err)) != TW_OK)
            return rc;
    }
    json_array_foreach(disks, i, v)
    {
        if ((rc = parse_free_disk(sc, v, i, err)) != TW_OK)
            return rc;
    }

    sc->self = sc->n_vms == 1 ? 0 : -1;
    const json_t *self = json_object_get(root, "self");
    if (self) {
        if (!json_is_string(self))
            return tw_error_set(err, TW_EPARSE, "self must be the name of a VM in vms");
        sc->self = -1;
        for (size_t k = 0; k < sc->n_vms; k++) {
            if (strcasecmp(sc->vms[k].name, json_string_value(self)) != 0)
                continue;
            if (sc->self >= 0)
                return tw_error_set(err, TW_EPARSE, "self \"%s\" names more than one VM",
                                    json_string_value(self));
            sc->self = (long)k;
        }
        if (sc->self < 0)
            return tw_error_set(err, TW_EPARSE, "self \"%s\" is not the name of a VM in vms",
                                json_string_value(self));
    } else if (sc->n_vms > 1) {
        return tw_error_set(err, TW_EPARSE,
                            "self is missing: with %zu VMs, say which one IMDS "
                            "answers for",
                            sc->n_vms);
    }

    const json_t *a;
    if ((a = json_object_get(root, "resource_skus")) && !json_is_array(a))
        return tw_error_set(err, TW_EPARSE, "resource_skus must be an array");
    if ((rc = append_objects(sc->resource_skus, a, "resource_skus", TW_SIM_MAX_SKUS, err)) !=
            TW_OK ||
        (rc = check_skus(sc->resource_skus, err)) != TW_OK)
        return rc;
    if ((a = json_object_get(root, "prices")) && !json_is_array(a))
        return tw_error_set(err, TW_EPARSE, "prices must be an array of Retail Prices items");
    if ((rc = append_objects(sc->prices, a, "prices", TW_SIM_MAX_PRICES, err)) != TW_OK ||
        (rc = check_prices(sc->prices, 0, "prices", err)) != TW_OK ||
        (rc = fill_prices(sc->prices, 0, err)) != TW_OK)
        return rc;
    if ((a = json_object_get(root, "service_principals")) && !json_is_array(a))
        return tw_error_set(err, TW_EPARSE, "service_principals must be an array");
    if (a && (rc = parse_principals(sc, a, err)) != TW_OK)
        return rc;
    if ((a = json_object_get(root, "faults")) && !json_is_array(a))
        return tw_error_set(err, TW_EPARSE, "faults must be an array");
    if (json_array_size(a) > TW_SIM_MAX_FAULTS)
        return tw_error_set(err, TW_EPARSE, "faults has %zu entries, at most %d",
                            json_array_size(a), TW_SIM_MAX_FAULTS);
    json_array_foreach(a, i, v)
    {
        char w[32];
        snprintf(w, sizeof(w), "faults[%zu]", i);
        if ((rc = tw_sim_fault_from_value(v, w, &sc->faults[i], err)) != TW_OK)
            return rc;
        sc->n_faults = i + 1;
    }
    return TW_OK;
}

static struct tw_sim_scenario *scenario_new(void)
{
    struct tw_sim_scenario *sc = calloc(1, sizeof(*sc));
    if (!sc)
        return NULL;
    sc->self = -1;
    sc->resource_skus = json_array();
    sc->prices = json_array();
    sc->principals = json_array();
    if (!sc->resource_skus || !sc->prices || !sc->principals) {
        tw_sim_scenario_free(sc);
        return NULL;
    }
    return sc;
}

enum tw_err tw_sim_scenario_parse(const char *buf, size_t len, struct tw_sim_scenario **out,
                                  struct tw_error *err)
{
    *out = NULL;
    json_error_t je;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return tw_error_set_at(err, TW_EPARSE, je.line, je.column,
                               "the scenario is not valid JSON at line %d, column %d: %s", je.line,
                               je.column, je.text);
    struct tw_sim_scenario *sc = scenario_new();
    enum tw_err rc = sc ? parse_root(sc, root, err) : tw_error_set(err, TW_ENOMEM, "out of memory");
    json_decref(root);
    if (rc != TW_OK) {
        tw_sim_scenario_free(sc);
        return rc;
    }
    *out = sc;
    return TW_OK;
}

enum tw_err tw_sim_scenario_add_prices(struct tw_sim_scenario *sc, const char *buf, size_t len,
                                       struct tw_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    if (!root)
        return tw_error_set_at(err, TW_EPARSE, je.line, je.column,
                               "the prices file is not valid JSON at line %d, column %d: %s",
                               je.line, je.column, je.text);
    const json_t *items = root;
    if (json_is_object(root)) {
        items = json_object_get(root, "Items");
        if (!items)
            items = json_object_get(root, "items");
    }
    enum tw_err rc;
    size_t before = json_array_size(sc->prices);
    if (!json_is_array(items))
        rc = tw_error_set(err, TW_EPARSE,
                          "the prices file must be an array of Retail Prices "
                          "items, an API page with \"Items\", or an object with \"items\"");
    else if ((rc = append_objects(sc->prices, items, "items", TW_SIM_MAX_PRICES, err)) == TW_OK &&
             (rc = check_prices(sc->prices, before, "items", err)) == TW_OK)
        rc = fill_prices(sc->prices, before, err);
    if (rc != TW_OK) {
        while (json_array_size(sc->prices) > before)
            json_array_remove(sc->prices, json_array_size(sc->prices) - 1);
    }
    json_decref(root);
    return rc;
}

void tw_sim_scenario_free(struct tw_sim_scenario *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->n_vms; i++)
        json_decref(sc->vms[i].tags);
    free(sc->vms);
    free(sc->disks);
    json_decref(sc->resource_skus);
    json_decref(sc->prices);
    json_decref(sc->principals);
    free(sc);
}

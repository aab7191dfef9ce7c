/*
 * store_shared.c - the C both stores share (store_shared.h): the VM and
 * disk identities, the tags' JSON (and back), the scan that cuts each result's
 * record out of a report's body, and the helpers of ARM's puts.
 */
#include "store/store_shared.h"

#include "core/time.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tw_sh_lower_into(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < len; i++)
        dst[i] = (char)tolower((unsigned char)src[i]);
    dst[i] = '\0';
}

void tw_sh_vm_identity(const struct tw_vm *vm, char *out, size_t len)
{
    if (vm->resource_id[0]) {
        char rid[sizeof(vm->resource_id)];
        tw_sh_lower_into(rid, sizeof(rid), vm->resource_id);
        snprintf(out, len, "id:%s", rid);
        return;
    }
    char a[sizeof(vm->subscription_id)], b[sizeof(vm->resource_group)], c[sizeof(vm->name)];
    tw_sh_lower_into(a, sizeof(a), vm->subscription_id);
    tw_sh_lower_into(b, sizeof(b), vm->resource_group);
    tw_sh_lower_into(c, sizeof(c), vm->name);
    snprintf(out, len, "vm:%s/%s/%s", a, b, c);
}

void tw_sh_disk_identity(const struct tw_disk *d, int64_t vm_id, char *out, size_t len)
{
    if (d->managed_disk_id[0]) {
        char mid[sizeof(d->managed_disk_id)];
        tw_sh_lower_into(mid, sizeof(mid), d->managed_disk_id);
        snprintf(out, len, "id:%s", mid);
        return;
    }
    char name[sizeof(d->name)];
    tw_sh_lower_into(name, sizeof(name), d->name);
    snprintf(out, len, "vm:%lld/%s", (long long)vm_id, name);
}

char *tw_sh_tags_json(const struct tw_vm *vm)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    for (size_t i = 0; i < vm->n_tags; i++)
        json_object_set_new(o, vm->tags[i].key, json_string(vm->tags[i].value));
    char *s =
        json_object_size(o) == vm->n_tags ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return s;
}

/* ---- each result's text, cut from the body ---- */

/*
 * Rendering a result record again costs more than storing the rest of the
 * report (printing doubles is slow), and the body already holds each
 * record as the agent sent it.  These find the elements of the top-level
 * "results" array in a body the parser has accepted (so it is valid JSON);
 * anything unexpected makes them give up, and the records are rendered.
 */
static size_t skip_ws(const char *b, size_t n, size_t i)
{
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i;
}

/* Past the string starting at B[I] (a quote); N when unterminated.  A
 * quote ends it unless an odd run of backslashes comes before it. */
static size_t skip_string(const char *b, size_t n, size_t i)
{
    size_t from = i + 1;
    while (from < n) {
        const char *q = memchr(b + from, '"', n - from);
        if (!q)
            return n;
        size_t k = (size_t)(q - b), bs = 0;
        while (k - bs > from && b[k - bs - 1] == '\\')
            bs++;
        if (bs % 2 == 0)
            return k + 1;
        from = k + 1;
    }
    return n;
}

/* Past the value starting at B[I]. */
static size_t skip_value(const char *b, size_t n, size_t i)
{
    if (i >= n)
        return n;
    if (b[i] == '"')
        return skip_string(b, n, i);
    if (b[i] == '{' || b[i] == '[') {
        int depth = 0;
        while (i < n) {
            char c = b[i];
            if (c == '"') {
                i = skip_string(b, n, i);
                continue;
            }
            if (c == '{' || c == '[')
                depth++;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            i++;
        }
        return n;
    }
    while (i < n && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' &&
           b[i] != '\n' && b[i] != '\r')
        i++;
    return i;
}

bool tw_sh_find_records(const char *b, size_t n, struct tw_span *out, size_t want)
{
    size_t i = skip_ws(b, n, 0);
    if (i >= n || b[i] != '{')
        return false;
    i++;
    for (;;) {
        i = skip_ws(b, n, i);
        if (i >= n || b[i] != '"')
            return false;
        size_t key = i;
        i = skip_string(b, n, i);
        bool results = i - key == 9 && memcmp(b + key, "\"results\"", 9) == 0;
        i = skip_ws(b, n, i);
        if (i >= n || b[i] != ':')
            return false;
        i = skip_ws(b, n, i + 1);
        if (!results) {
            i = skip_ws(b, n, skip_value(b, n, i));
            if (i >= n || b[i] != ',')
                return false;
            i++;
            continue;
        }
        if (i >= n || b[i] != '[')
            return false;
        size_t got = 0;
        i = skip_ws(b, n, i + 1);
        if (i < n && b[i] == ']')
            return want == 0;
        while (i < n && got < want) {
            if (b[i] != '{')
                return false;
            size_t end = skip_value(b, n, i);
            out[got].p = b + i;
            out[got].n = end - i;
            got++;
            i = skip_ws(b, n, end);
            if (i < n && b[i] == ']')
                return got == want;
            if (i >= n || b[i] != ',')
                return false;
            i = skip_ws(b, n, i + 1);
        }
        return false;
    }
}

/* ---- ARM's look at a VM ---- */

void tw_sh_identity_of(const char *prefix, const char *id, char *out, size_t len)
{
    size_t k = (size_t)snprintf(out, len, "%s", prefix);
    for (size_t i = 0; id[i] && k + 1 < len; i++)
        out[k++] = (char)tolower((unsigned char)id[i]);
    out[k < len ? k : len - 1] = '\0';
}

void tw_sh_fields_said(char *from, size_t fcap, char *to, size_t tcap, const char *what,
                       const char *old, const char *new_)
{
    if (strcmp(old ? old : "", new_ ? new_ : "") == 0)
        return;
    char *out[2] = {from, to};
    size_t cap[2] = {fcap, tcap};
    const char *val[2] = {old && old[0] ? old : "(none)", new_ && new_[0] ? new_ : "(none)"};
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(out[k]);
        int w = snprintf(out[k] + n, cap[k] - n, "%s%s %s", n ? "; " : "", what, val[k]);
        if (w < 0 || (size_t)w >= cap[k] - n) {
            if (cap[k] > 4)
                memcpy(out[k] + cap[k] - 4, "...", 4);
        }
    }
}

bool tw_sh_same_sku(const char *sku, const char *tier, int64_t size, const char *sku2,
                    const char *tier2, int64_t size2)
{
    return strcmp(sku, sku2) == 0 && (!tier[0] || !tier2[0] || strcmp(tier, tier2) == 0) &&
           size == size2;
}

enum tw_err tw_sh_arm_note(struct tw_sh_arm_change **ch, size_t *n, size_t *cap,
                           enum tw_store_arm_what what, int64_t vm_id, const char *vm,
                           int64_t disk_id, const char *disk, const char *from, const char *to,
                           struct tw_error *err)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        struct tw_sh_arm_change *c = realloc(*ch, ncap * sizeof(*c));
        if (!c)
            return tw_error_set(err, TW_ENOMEM, "out of memory noting what a sync changed");
        *ch = c;
        *cap = ncap;
    }
    struct tw_sh_arm_change *c = &(*ch)[(*n)++];
    c->what = what;
    c->vm_id = vm_id;
    c->disk_id = disk_id;
    snprintf(c->vm, sizeof(c->vm), "%s", vm ? vm : "");
    snprintf(c->disk, sizeof(c->disk), "%s", disk ? disk : "");
    snprintf(c->from, sizeof(c->from), "%s", from ? from : "");
    snprintf(c->to, sizeof(c->to), "%s", to ? to : "");
    return TW_OK;
}

bool tw_sh_arm_same_attrs(const struct tw_sh_arm_disk *r, const struct tw_store_disk_attrs *a)
{
    int64_t shares = r->shares_null ? 0 : r->max_shares;
    enum tw_tri b = r->bursting_null ? TW_TRI_UNKNOWN : r->bursting ? TW_TRI_YES : TW_TRI_NO;
    return shares == a->max_shares && b == a->bursting && strcmp(r->disk_state, a->disk_state) == 0;
}

/* ---- rows read back ---- */

bool tw_sh_tags_row(const char *text, struct tw_store_vm_row *r)
{
    r->n_tags = 0;
    r->tags = NULL;
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return true; /* a damaged column reads as no tags */
    }
    size_t n = json_object_size(o);
    if (n > TW_INV_MAX_TAGS)
        n = TW_INV_MAX_TAGS;
    if (n && !(r->tags = calloc(n, sizeof(*r->tags)))) {
        json_decref(o);
        return false;
    }
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v)
    {
        if (r->n_tags == n)
            break;
        if (!json_is_string(v))
            continue;
        snprintf(r->tags[r->n_tags].key, sizeof(r->tags[0].key), "%s", k);
        snprintf(r->tags[r->n_tags].value, sizeof(r->tags[0].value), "%s", json_string_value(v));
        r->n_tags++;
    }
    json_decref(o);
    return true;
}

void tw_sh_vm_into(const struct tw_store_vm_row *vm, struct tw_vm *v)
{
    memcpy(v->name, vm->name, sizeof(v->name));
    memcpy(v->resource_id, vm->resource_id, sizeof(v->resource_id));
    memcpy(v->subscription_id, vm->subscription_id, sizeof(v->subscription_id));
    memcpy(v->resource_group, vm->resource_group, sizeof(v->resource_group));
    memcpy(v->location, vm->location, sizeof(v->location));
    memcpy(v->vm_size, vm->vm_size, sizeof(v->vm_size));
    v->n_tags = vm->n_tags;
    if (vm->n_tags)
        memcpy(v->tags, vm->tags, vm->n_tags * sizeof(v->tags[0]));
}

/* ---- the monthly report's reads ---- */

void *tw_sh_grow(void **v, size_t n, size_t *cap, size_t size)
{
    if (n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 64;
        void *p = realloc(*v, ncap * size);
        if (!p)
            return NULL;
        *v = p;
        *cap = ncap;
    }
    return (char *)*v + n * size;
}

void tw_sh_text_at(int64_t ns, char *out, size_t cap)
{
    if (!tw_rfc3339_format_ns(ns, 0, 3, out, cap))
        snprintf(out, cap, "%s", ns < 0 ? "0000" : "9999");
}

int64_t tw_sh_ns_to_ms(int64_t ns)
{
    return tw_floor_div(ns, TW_NS_PER_MS);
}

enum tw_err tw_sh_intern(struct tw_store_report *r, struct tw_sh_itab *t, const char *name,
                         uint16_t *out, struct tw_error *err)
{
    *out = 0;
    if (!name || !*name)
        return TW_OK;
    uint32_t h = 2166136261u;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 16777619u;
    size_t i = h & (TW_SH_ITAB_SLOTS - 1);
    for (; t->slot[i]; i = (i + 1) & (TW_SH_ITAB_SLOTS - 1))
        if (strncmp(r->strs[t->slot[i]], name, sizeof(*r->strs) - 1) == 0) {
            *out = t->slot[i];
            return TW_OK;
        }
    if (r->n_strs >= TW_SH_ITAB_SLOTS / 2)
        return tw_error_set(err, TW_ERANGE, "more than %d SKU, tier and policy names in the month",
                            TW_SH_ITAB_SLOTS / 2);
    char(*p)[65] = tw_sh_grow((void **)&r->strs, r->n_strs, &t->cap, sizeof(*r->strs));
    if (!p)
        return tw_error_set(err, TW_ENOMEM, "out of memory reading the month");
    snprintf(*p, sizeof(*p), "%s", name);
    t->slot[i] = (uint16_t)r->n_strs;
    *out = (uint16_t)r->n_strs++;
    return TW_OK;
}

int tw_sh_mark_cmp(const void *a, const void *b)
{
    const struct tw_store_rp_mark *x = a, *y = b;
    if (x->vm_id != y->vm_id)
        return x->vm_id < y->vm_id ? -1 : 1;
    if (x->at_ns != y->at_ns)
        return x->at_ns < y->at_ns ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

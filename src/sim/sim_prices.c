/*
 * sim_prices.c - the Azure Retail Prices API: GET /api/retail/prices with
 * $filter, currencyCode, meterRegion, $skip and paging by NextPageLink.
 *
 * As the live API (../shared/azure-api/retail-prices.md): no auth;
 * api-version optional, 2021-10-01-preview or 2023-01-01-preview, anything
 * else 400 "Unsupported API version"; filter values compared without case
 * before 2023-01-01-preview and with case from it; the savingsPlan array
 * only with 2023-01-01-preview; the envelope BillingCurrency,
 * CustomerEntityId, CustomerEntityType, Items, NextPageLink, Count (items
 * in this page).  The next page's link keeps the query and appends $skip,
 * as real links do, but points at the simulator itself: a client must
 * never be led off its configured endpoint.
 *
 * Prices are the scenario's items, never converted: a currency the
 * scenario has no items in answers an empty page.
 */
#include "sim/sim_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/sim_odata.h"

/* The currencies the API documents. */
static const char *const currencies[] = {"USD", "AUD", "BRL", "CAD", "CHF", "CNY",
                                         "DKK", "EUR", "GBP", "INR", "JPY", "KRW",
                                         "NOK", "NZD", "RUB", "SEK", "TWD"};

static void bad_request(struct sim_resp *rs, const char *message)
{
    /* Real bodies (retail-prices-sample.json entries 7 and 8). */
    sim_surface_error(rs, SIM_PRICES, 400, "BadRequest", message);
}

static const char *item_field(const void *item, const char *key)
{
    return json_string_value(json_object_get((const json_t *)item, key));
}

/* 'EUR' or EUR, as both are seen; upper-cased into OUT. */
static bool currency_param(const char *v, char out[4])
{
    size_t n = strlen(v);
    if (n == 5 && v[0] == '\'' && v[4] == '\'') {
        v++;
        n = 3;
    }
    if (n != 3)
        return false;
    for (int i = 0; i < 3; i++)
        out[i] = (char)((v[i] >= 'a' && v[i] <= 'z') ? v[i] - 32 : v[i]);
    out[3] = '\0';
    for (size_t i = 0; i < sizeof(currencies) / sizeof(currencies[0]); i++) {
        if (strcmp(out, currencies[i]) == 0)
            return true;
    }
    return false;
}

struct link_ctx {
    char *out;
    size_t len, cap;
};

/* Appends one query parameter (but $skip) to the next page's link. */
static enum MHD_Result link_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    struct link_ctx *l = cls;
    char k[256], v[4096];
    (void)kind;
    if (strcmp(key, "$skip") == 0)
        return MHD_YES;
    /* '$' stays as it is in real links ("$filter=...&$skip=1000"). */
    size_t o = 0;
    for (const char *p = key; *p && o + 4 < sizeof(k); p++) {
        if (*p == '$') {
            k[o++] = '$';
        } else {
            char one[2] = {*p, '\0'}, enc[4];
            sim_url_encode(one, enc, sizeof(enc));
            o += (size_t)snprintf(k + o, sizeof(k) - o, "%s", enc);
        }
    }
    k[o] = '\0';
    sim_url_encode(value ? value : "", v, sizeof(v));
    if (l->len >= l->cap)
        return MHD_YES; /* already full: the caller answers 400 */
    int n = snprintf(l->out + l->len, l->cap - l->len, "%s=%s&", k, v);
    l->len = n < 0 || (size_t)n >= l->cap - l->len ? l->cap : l->len + (size_t)n;
    return MHD_YES;
}

void sim_prices(struct tw_sim *sim, const struct sim_req *rq, struct sim_resp *rs)
{
    const char *ver = sim_arg(rq, "api-version");
    if (ver && strcmp(ver, "2021-10-01-preview") != 0 && strcmp(ver, "2023-01-01-preview") != 0) {
        bad_request(rs, "Unsupported API version");
        return;
    }
    bool v2023 = ver && strcmp(ver, "2023-01-01-preview") == 0;
    char currency[4] = "USD";
    const char *cur = sim_arg(rq, "currencyCode");
    /* An unsupported currency is refused like a bad filter (the API's
     * answer to it was not captured). */
    if (cur && !currency_param(cur, currency)) {
        bad_request(rs, "Invalid OData parameters supplied");
        return;
    }
    const char *region = sim_arg(rq, "meterRegion");
    bool primary = false;
    if (region) {
        if (strcmp(region, "'primary'") != 0 && strcmp(region, "primary") != 0) {
            bad_request(rs, "Invalid OData parameters supplied");
            return;
        }
        primary = true;
    }
    long skip = 0;
    const char *sk = sim_arg(rq, "$skip");
    if (sk) {
        char *end;
        errno = 0;
        skip = strtol(sk, &end, 10);
        /* No store holds more than a few hundred thousand prices: a larger
         * $skip is refused rather than summed into an overflow. */
        if (!*sk || *end || errno || skip < 0 || skip > 100000000L) {
            bad_request(rs, "Invalid OData parameters supplied");
            return;
        }
    }
    const char *fs = sim_arg(rq, "$filter");
    struct tw_odata_filter *f = malloc(sizeof(*f));
    struct tw_error err;
    if (!f) {
        sim_json(rs, 500, NULL);
        return;
    }
    if (tw_odata_parse(fs ? fs : "", fs ? strlen(fs) : 0, v2023, f, &err) != TW_OK) {
        free(f);
        bad_request(rs, "Invalid OData parameters supplied");
        return;
    }

    long page = sim->sc->settings.prices_page_size, matched = 0;
    json_t *items = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(sim->sc->prices, i, it)
    {
        const char *c = item_field(it, "currencyCode");
        if ((c && strcmp(c, currency) != 0) || !tw_odata_match(f, it, item_field))
            continue;
        if (primary && !json_is_true(json_object_get(it, "isPrimaryMeterRegion")))
            continue;
        matched++;
        if (matched <= skip || matched > skip + page || !items)
            continue;
        if (!v2023 && json_object_get(it, "savingsPlan")) {
            /* savingsPlan only comes with 2023-01-01-preview. */
            json_t *copy = json_copy(it);
            json_object_del(copy, "savingsPlan");
            json_array_append_new(items, copy);
        } else {
            json_array_append(items, it);
        }
    }
    free(f);

    json_t *next = json_null();
    if (matched > skip + page && !rq->no_next_link) {
        struct link_ctx l = {.cap = 8192};
        l.out = malloc(l.cap);
        if (l.out) {
            l.len = (size_t)snprintf(l.out, l.cap, "%s/api/retail/prices?", sim->url);
            MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, link_arg, &l);
            int n = l.len < l.cap ? snprintf(l.out + l.len, l.cap - l.len, "$skip=%ld",
                                             skip + page)
                                  : -1;
            if (n < 0 || (size_t)n >= l.cap - l.len) {
                /* A link without its $skip would send clients back to the
                 * first page forever: refuse the query instead. */
                free(l.out);
                json_decref(items);
                bad_request(rs, "Invalid OData parameters supplied");
                return;
            }
            next = json_string(l.out);
            free(l.out);
        }
    }
    if (!items || !next) {
        json_decref(items);
        json_decref(next);
        sim_json(rs, 500, NULL);
        return;
    }
    size_t count = json_array_size(items);
    /* Key order of the captures; "o" hands ITEMS and NEXT over. */
    sim_json(rs, 200,
             json_pack("{s:s, s:s, s:s, s:o, s:o, s:I}", "BillingCurrency", currency,
                       "CustomerEntityId", "Default", "CustomerEntityType", "Retail", "Items",
                       items, "NextPageLink", next, "Count", (json_int_t)count));
}

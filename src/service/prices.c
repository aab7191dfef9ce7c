/*
 * prices.c - refresh, import, load and show price books (see prices.h).
 */
#include "service/prices.h"
#include "core/report.h"
#include "core/time.h"
#include "service/fleet.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void tw_svc_prices_now(char out[32])
{
    tw_rfc3339_format(time(NULL), out, 32);
}

enum tw_err tw_svc_prices_key(const char *region, const char *currency, char reg[48], char cur[4],
                              struct tw_error *err)
{
    if (!region || !*region)
        return tw_error_set(err, TW_EINVAL, "no region given (e.g. westeurope)");
    if (!currency || !*currency)
        return tw_error_set(err, TW_EINVAL, "no currency given (e.g. USD)");
    size_t n = strlen(region);
    if (n >= 48)
        n = 47;
    for (size_t i = 0; i < n; i++)
        reg[i] = (char)(region[i] >= 'A' && region[i] <= 'Z' ? region[i] + 32 : region[i]);
    reg[n] = '\0';
    if (!tw_pb_region_ok(reg) || strlen(region) >= 48)
        return tw_error_set(err, TW_EINVAL,
                            "region \"%.60s\" is not an Azure region name (letters and digits, "
                            "e.g. westeurope)",
                            region);
    n = strlen(currency);
    for (size_t i = 0; i < 3 && i < n; i++)
        cur[i] = (char)(currency[i] >= 'a' && currency[i] <= 'z' ? currency[i] - 32 : currency[i]);
    cur[n < 3 ? n : 3] = '\0';
    if (n != 3 || !tw_pb_currency_ok(cur))
        return tw_error_set(err, TW_EINVAL,
                            "currency \"%.20s\" is not one the Retail Prices API offers (USD AUD "
                            "BRL CAD CHF CNY DKK EUR GBP INR JPY KRW NOK NZD RUB SEK TWD)",
                            currency);
    return TW_OK;
}

/* The bundled snapshot, parsed once per process. */
static pthread_once_t snap_once = PTHREAD_ONCE_INIT;
static struct tw_price_items snap_items;
static struct tw_price_page snap_page;
static enum tw_err snap_rc;
static struct tw_error snap_err;

static void snap_load(void)
{
    snap_rc =
        tw_price_page_parse((const char *)tw_builtin_disk_prices_json,
                            tw_builtin_disk_prices_json_len, &snap_items, &snap_page, &snap_err);
}

/* A copy of the snapshot's items of REGION and CURRENCY. */
static enum tw_err snapshot_items(const char *region, const char *currency,
                                  struct tw_price_items *out, char fetched_at[32],
                                  struct tw_error *err)
{
    pthread_once(&snap_once, snap_load);
    if (snap_rc != TW_OK)
        return tw_error_set(err, snap_rc, "the bundled price snapshot is damaged: %s",
                            snap_err.msg);
    size_t n = 0;
    for (size_t i = 0; i < snap_items.n; i++)
        n += strcmp(snap_items.v[i].region, region) == 0 &&
             strcmp(snap_items.v[i].currency, currency) == 0;
    out->v = malloc((n ? n : 1) * sizeof(*out->v));
    if (!out->v)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    out->cap = n ? n : 1;
    out->n = 0;
    for (size_t i = 0; i < snap_items.n; i++)
        if (strcmp(snap_items.v[i].region, region) == 0 &&
            strcmp(snap_items.v[i].currency, currency) == 0)
            out->v[out->n++] = snap_items.v[i];
    snprintf(fetched_at, 32, "%s", snap_page.fetched_at);
    return TW_OK;
}

enum tw_err tw_svc_prices_load(struct tw_store *st, const char *region, const char *currency,
                               struct tw_pricebook **out, struct tw_error *err)
{
    *out = NULL;
    char reg[48], cur[4], now[32], source[256] = "", fetched[32] = "";
    enum tw_err rc = tw_svc_prices_key(region, currency, reg, cur, err);
    if (rc != TW_OK)
        return rc;
    tw_svc_prices_now(now);
    struct tw_price_items items = {0};
    char *text = NULL;
    size_t len = 0;
    rc = st ? tw_store_pricebook_get(st, reg, cur, &text, &len, source, sizeof(source), fetched,
                                     sizeof(fetched), err)
            : TW_ENOENT;
    if (rc == TW_OK) {
        struct tw_error perr = {0};
        rc = tw_price_page_parse(text, len, &items, NULL, &perr);
        free(text);
        if (rc != TW_OK) {
            tw_price_items_cleanup(&items);
            return tw_error_set(err, rc,
                                "the stored price book of %s %s does not parse (%s); refresh or "
                                "import it again",
                                reg, cur, perr.msg);
        }
    } else if (rc == TW_ENOENT) {
        tw_error_clear(err);
        if ((rc = snapshot_items(reg, cur, &items, fetched, err)) != TW_OK)
            return rc;
        snprintf(source, sizeof(source), "snapshot %s (bundled; no refreshed prices for %s %s)",
                 TW_PB_SNAPSHOT_NAME, reg, cur);
    } else {
        return rc;
    }
    return tw_pricebook_build(&items, reg, cur, source, fetched, now, out, err);
}

/* Edit distance of A and B (short names; capped at 9). */
static int distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 47 || nb > 47)
        return 9;
    int row[48];
    for (size_t j = 0; j <= nb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= na; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= nb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb] < 9 ? row[nb] : 9;
}

/* (prices.h) Without this, a tier asked of an empty book was reported
 * missing, as if the tier were the mistake. */
enum tw_err tw_svc_prices_no_book(const char *region, const char *currency, struct tw_error *err)
{
    pthread_once(&snap_once, snap_load);
    bool known = false;
    const char *near = NULL;
    char in_cur[64] = ""; /* the snapshot's currencies of REGION, "USD GBP" */
    int best = 3;         /* two edits or fewer are a likely typo */
    for (size_t i = 0; snap_rc == TW_OK && i < snap_items.n; i++) {
        const char *r = snap_items.v[i].region;
        if (strcmp(r, region) == 0) {
            known = true;
            const char *c = snap_items.v[i].currency;
            size_t l = strlen(in_cur);
            if (!strstr(in_cur, c) && l + 5 < sizeof(in_cur))
                snprintf(in_cur + l, sizeof(in_cur) - l, "%s%s", l ? " " : "", c);
            continue;
        }
        if (!tw_pb_region_ok(r))
            continue;
        int d = distance(region, r);
        if (d < best) {
            best = d;
            near = r;
        }
    }
    if (known)
        return tw_error_set(err, TW_ENOENT,
                            "no price book for %s %s: the database holds none and the bundled "
                            "snapshot has %s in %s only; fetch one with prices refresh --region "
                            "%s --currency %s",
                            region, currency, region, in_cur, region, currency);
    return tw_error_set(err, TW_ENOENT,
                        "no price book for %s %s: %s is not a known Azure region (not in the "
                        "database, nor among the bundled snapshot's regions)%s%s%s; check the "
                        "region name",
                        region, currency, region, near ? "; did you mean " : "",
                        near ? near : "", near ? "?" : "");
}

enum tw_err tw_svc_prices_show(struct tw_store *st, const char *region, const char *currency,
                               const char *sku, json_t **out, struct tw_error *err)
{
    *out = NULL;
    char reg[48], cur[4];
    struct tw_pricebook *b = NULL;
    enum tw_err rc = tw_svc_prices_key(region, currency, reg, cur, err);
    if (rc == TW_OK && sku && (!*sku || strlen(sku) > 32))
        rc = tw_error_set(err, TW_EINVAL,
                          "sku \"%.40s\" is not a tier (P10) or SKU name "
                          "(Premium_LRS)",
                          sku);
    if (rc == TW_OK)
        rc = tw_svc_prices_load(st, reg, cur, &b, err);
    /* A SKU asked of a book with no item at all: the region (or currency)
     * is what is missing, not the SKU. */
    if (rc == TW_OK && sku && b->items.n == 0)
        rc = tw_svc_prices_no_book(reg, cur, err);
    if (rc == TW_OK)
        rc = tw_pricebook_json(b, reg, cur, sku, out, err);
    tw_pricebook_free(b);
    return rc;
}

/* Counts the prices ITEMS would give for (REGION, CURRENCY). */
static enum tw_err count_prices(const struct tw_price_items *items, const char *region,
                                const char *currency, size_t *n, struct tw_error *err)
{
    struct tw_price_items copy = {0};
    char now[32];
    *n = 0;
    copy.v = malloc((items->n ? items->n : 1) * sizeof(*copy.v));
    if (!copy.v)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    if (items->n)
        memcpy(copy.v, items->v, items->n * sizeof(*copy.v));
    copy.n = copy.cap = items->n;
    tw_svc_prices_now(now);
    struct tw_pricebook *b;
    enum tw_err rc = tw_pricebook_build(&copy, region, currency, "", "", now, &b, err);
    if (rc == TW_OK)
        *n = b->n;
    tw_pricebook_free(b);
    return rc;
}

/* Stores ITEMS as the book of (REGION, CURRENCY) in one transaction. */
static enum tw_err put_book(struct tw_store *st, const char *region, const char *currency,
                            const char *source, const char *fetched_at,
                            const struct tw_price_item *items, size_t n, struct tw_error *err)
{
    size_t len;
    char *text = tw_price_items_dump(items, n, &len);
    if (!text)
        return tw_error_set(err, TW_ENOMEM, "out of memory for %zu price items", n);
    enum tw_err rc =
        tw_store_pricebook_put(st, region, currency, source, fetched_at, text, len, err);
    free(text);
    return rc;
}

enum tw_err tw_svc_prices_refresh(struct tw_store *st, const struct tw_svc_refresh *rq,
                                  struct tw_svc_refresh_result *res, struct tw_error *err)
{
    struct tw_svc_refresh_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof(*res));
    char reg[48], cur[4];
    enum tw_err rc = tw_svc_prices_key(rq->region, rq->currency, reg, cur, err);
    if (rc != TW_OK)
        return rc;
    struct tw_az_prices_req frq = {.base = rq->prices_url,
                                   .region = reg,
                                   .currency = cur,
                                   .http = rq->http,
                                   .deadline_ms = rq->deadline_ms,
                                   .log = rq->log,
                                   .log_arg = rq->log_arg};
    struct tw_price_items items = {0};
    if ((rc = tw_az_prices_fetch(&frq, &items, &res->fetch, err)) != TW_OK)
        goto out;
    if ((rc = count_prices(&items, reg, cur, &res->prices, err)) != TW_OK)
        goto out;
    if (res->prices == 0) {
        rc = tw_error_set(err, TW_ENOENT,
                          "the Retail Prices API at %s answered %zu items but no managed-disk "
                          "price for %s %s; the stored book is left as it was",
                          rq->prices_url, items.n, reg, cur);
        goto out;
    }
    tw_svc_prices_now(res->fetched_at);
    snprintf(res->source, sizeof(res->source), "api %.200s", rq->prices_url);
    if ((rc = put_book(st, reg, cur, res->source, res->fetched_at, items.v, items.n, err)) !=
        TW_OK) {
        res->store_failed = true;
        goto out;
    }
    res->items = items.n;
    res->books = 1;
out:
    tw_price_items_cleanup(&items);
    return rc;
}

/* How far in the future a book's fetched_at may be and still count as
 * fresh: another backend's clock a little ahead. */
#define FUTURE_SLACK_S 300

/* Whether the stored book of (REG, CUR) came from the API less than
 * MAX_AGE_S seconds ago (a snapshot's or a file's is never fresh: its
 * fetched_at is the file's, and the API is the source to follow). */
static enum tw_err book_fresh(struct tw_store *st, const char *reg, const char *cur,
                              long max_age_s, bool *fresh, struct tw_error *err)
{
    *fresh = false;
    char *items = NULL, source[256], fetched[40];
    size_t len = 0;
    enum tw_err rc = tw_store_pricebook_get(st, reg, cur, &items, &len, source, sizeof(source),
                                            fetched, sizeof(fetched), err);
    free(items);
    if (rc == TW_ENOENT) {
        tw_error_clear(err);
        return TW_OK;
    }
    if (rc != TW_OK)
        return rc;
    int64_t at_ms;
    if (strncmp(source, "api ", 4) != 0 || !tw_rfc3339_ms(fetched, &at_ms))
        return TW_OK;
    int64_t age_s = (int64_t)time(NULL) - at_ms / 1000;
    *fresh = age_s > -FUTURE_SLACK_S && age_s < max_age_s;
    return TW_OK;
}

static void note_failure(struct tw_svc_prices_fleet_report *rep, const char *region,
                         const char *currency, const struct tw_error *e, enum tw_err rc)
{
    if (!rep->failed++)
        snprintf(rep->first_error, sizeof(rep->first_error), "%.63s %.3s: %.400s", region,
                 currency, e->msg[0] ? e->msg : tw_strerror(rc));
}

enum tw_err tw_svc_prices_refresh_fleet(struct tw_store *st, const struct tw_svc_refresh *rq,
                                        long max_age_s, bool (*stop)(void *arg), void *stop_arg,
                                        struct tw_svc_prices_fleet_report *rep,
                                        struct tw_error *err)
{
    memset(rep, 0, sizeof(*rep));
    struct tw_svc_place *pl = NULL;
    size_t np = 0;
    enum tw_err rc = tw_svc_fleet_places(st, false, &pl, &np, err);
    if (rc != TW_OK)
        return rc;
    char (*cur)[4] = NULL;
    size_t nc = 0, want = 16;
    for (;;) {
        char (*buf)[4] = realloc(cur, want * sizeof(*buf));
        if (!buf) {
            rc = tw_error_set(err, TW_ENOMEM, "out of memory");
            goto out;
        }
        cur = buf;
        if ((rc = tw_store_pricebook_currencies(st, cur, want, &nc, err)) != TW_OK)
            goto out;
        if (nc <= want)
            break;
        want = nc;
    }
    if (nc == 0) {
        memcpy(cur[0], "USD", 4);
        nc = 1;
    }
    rep->books = np * nc;
    int eio_run = 0; /* books in a row the API failed outright */
    for (size_t i = 0, done = 0; i < np; i++) {
        for (size_t k = 0; k < nc; k++, done++) {
            if (stop && stop(stop_arg)) {
                rep->stopped = true;
                goto out;
            }
            struct tw_error e = {0};
            char reg[48], cu[4];
            if (tw_svc_prices_key(pl[i].region, cur[k], reg, cu, &e) != TW_OK) {
                note_failure(rep, pl[i].region, cur[k], &e, TW_EINVAL);
                continue;
            }
            bool fresh = false;
            if ((rc = book_fresh(st, reg, cu, max_age_s, &fresh, err)) != TW_OK)
                goto out;
            if (fresh) {
                rep->fresh++;
                continue;
            }
            struct tw_svc_refresh one = *rq;
            one.region = reg;
            one.currency = cu;
            struct tw_svc_refresh_result res;
            enum tw_err brc = tw_svc_prices_refresh(st, &one, &res, &e);
            if (brc == TW_OK) {
                rep->refreshed++;
                eio_run = 0;
                continue;
            }
            if (res.store_failed) {
                rc = brc;
                *err = e;
                rep->store_failed = true;
                goto out;
            }
            note_failure(rep, reg, cu, &e, brc);
            /* One book may fail alone (its deadline, a loop of links); two
             * in a row are the API down: the look ends there. */
            eio_run = brc == TW_EIO ? eio_run + 1 : 0;
            if (eio_run == 2) {
                rep->not_tried = rep->books - done - 1;
                goto out;
            }
        }
    }
out:
    free(pl);
    free(cur);
    return rc;
}

static int cmp_item_key(const void *pa, const void *pb)
{
    const struct tw_price_item *a = pa, *b = pb;
    int c = strcmp(a->region, b->region);
    return c ? c : strcmp(a->currency, b->currency);
}

enum tw_err tw_svc_prices_import(struct tw_store *st, const char *buf, size_t len, const char *name,
                                 struct tw_svc_refresh_result *res, struct tw_error *err)
{
    return tw_svc_prices_import_opt(st, buf, len, name, false, res, err);
}

enum tw_err tw_svc_prices_import_opt(struct tw_store *st, const char *buf, size_t len,
                                     const char *name, bool partial,
                                     struct tw_svc_refresh_result *res, struct tw_error *err)
{
    struct tw_svc_refresh_result local;
    if (!res)
        res = &local;
    memset(res, 0, sizeof(*res));
    struct tw_price_items items = {0};
    struct tw_price_page page;
    struct tw_error perr = {0};
    enum tw_err rc = tw_price_page_parse(buf, len, &items, &page, &perr);
    if (rc != TW_OK) {
        tw_price_items_cleanup(&items);
        return tw_error_set(err, rc, "%s: %s", name, perr.msg);
    }
    if (page.next[0] && !partial) {
        tw_price_items_cleanup(&items);
        return tw_error_set(err, TW_EINVAL,
                            "%.200s is one page of a multi-page answer (its NextPageLink is set): "
                            "importing it would replace each price book it holds with a part; "
                            "nothing imported. Fetch every page with prices refresh, or give "
                            "--partial to store this page alone",
                            name);
    }
    res->partial = page.next[0] != '\0';
    snprintf(res->source, sizeof(res->source), "%s %.200s%s",
             page.fetched_at[0] ? "snapshot" : "import", name, res->partial ? " (partial)" : "");
    /* A snapshot says when its prices were taken; a saved page does not,
     * so the import's own time stands for it.  (Copied from a buffer of
     * its own: an earlier build copied res->fetched_at onto itself and
     * stored an empty time for a saved page.) */
    char now[32];
    tw_svc_prices_now(now);
    snprintf(res->fetched_at, sizeof(res->fetched_at), "%s",
             page.fetched_at[0] ? page.fetched_at : now);
    const char *fetched = res->fetched_at;
    qsort(items.v, items.n, sizeof(*items.v), cmp_item_key);
    size_t books = 0;
    for (size_t i = 0; i < items.n;) {
        size_t j = i;
        while (j < items.n && cmp_item_key(&items.v[i], &items.v[j]) == 0)
            j++;
        /* "Global" and other pseudo-regions hold no usable disk price. */
        if (tw_pb_region_ok(items.v[i].region) && tw_pb_currency_ok(items.v[i].currency))
            books++;
        i = j;
    }
    if (books == 0) {
        rc = tw_error_set(err, TW_EPARSE,
                          "%s holds no price item of an Azure region in a supported currency; "
                          "nothing imported",
                          name);
        goto out;
    }
    for (size_t i = 0; i < items.n;) {
        size_t j = i;
        while (j < items.n && cmp_item_key(&items.v[i], &items.v[j]) == 0)
            j++;
        if (tw_pb_region_ok(items.v[i].region) && tw_pb_currency_ok(items.v[i].currency)) {
            size_t np;
            if ((rc = count_prices(&items, items.v[i].region, items.v[i].currency, &np, err)) !=
                    TW_OK ||
                (rc = put_book(st, items.v[i].region, items.v[i].currency, res->source, fetched,
                               items.v + i, j - i, err)) != TW_OK) {
                res->store_failed = true;
                goto out;
            }
            res->prices += np;
            res->items += j - i;
            res->books++;
        }
        i = j;
    }
out:
    tw_price_items_cleanup(&items);
    return rc;
}

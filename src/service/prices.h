/*
 * prices.h - price books for the backend and the CLI: refresh one from the
 * Retail Prices API into the store, import a saved page or snapshot, load
 * the book of a region and currency (the store's, else the bundled
 * snapshot), and the JSON of GET /api/v1/prices and `prices show --json`.
 *
 * `tierwise prices` and the REST handlers call the same functions, so the
 * two never disagree.  A refresh fetches every page first and writes the
 * book in one transaction afterwards: a failure anywhere (network, a bad
 * page, a link off the endpoint, the store) leaves the stored book as it
 * was.
 *
 * HTTP statuses for the errors (tw_srv_prices_status):
 *   TW_EINVAL   400 bad_request      a bad region, currency or SKU parameter
 *   TW_ENOENT   404 price_missing    no price for what was asked (never a zero)
 *   TW_EPARSE   502 upstream_invalid the Retail Prices API sent a bad page
 *   TW_EPERM    502 upstream_refused a NextPageLink off the configured endpoint
 *   TW_EIO      502 upstream_failed  the API failed, timed out or looped
 *   TW_ENOMEM   500 internal
 *   others      500 internal
 * For import (a body the caller sent), TW_EPARSE is the caller's fault:
 * tw_srv_prices_import_status maps it to 400.  When a refresh or import
 * fails in the store (the result's store_failed), the answer is 500
 * internal whatever the code.
 */
#ifndef TW_SERVER_PRICES_H
#define TW_SERVER_PRICES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "azure/http.h"
#include "azure/prices.h"
#include "core/err.h"
#include "core/pricebook.h"
#include "store/store.h"

struct tw_srv_refresh {
    const char *prices_url;                   /* the endpoint's base URL (resolved by the caller) */
    const char *region;                       /* "westeurope" (lower case) */
    const char *currency;                     /* "USD" (upper case) */
    const struct tw_az_http_opts *http;       /* NULL: the defaults */
    long deadline_ms;                         /* 0: TW_AZ_PRICES_DEADLINE_MS */
    void (*log)(void *arg, const char *line); /* e.g. the $skip fallback; may be NULL */
    void *log_arg;
};

/* What a refresh or an import did. */
struct tw_srv_refresh_result {
    size_t items;        /* items stored */
    size_t prices;       /* prices the book maps */
    size_t books;        /* books written (import: one per region and currency) */
    char fetched_at[32]; /* RFC 3339 UTC */
    char source[256];
    struct tw_az_prices_stats fetch;
    bool store_failed; /* the failure was the store's, not the API's: answer 500 */
};

/*
 * Fetches REGION's managed-disk prices in CURRENCY from the Retail Prices
 * API and replaces the stored book of (REGION, CURRENCY) in one
 * transaction.  RES (may be NULL) gets counts and timings.  Errors as
 * tw_az_prices_fetch and the store; the stored book is then unchanged.
 * A fetch that returns no disk price at all is TW_ENOENT and stores nothing.
 */
enum tw_err tw_srv_prices_refresh(struct tw_store *st, const struct tw_srv_refresh *rq,
                                  struct tw_srv_refresh_result *res, struct tw_error *err);

/*
 * Imports LEN bytes at BUF named NAME (a saved API page, a snapshot file
 * like pricing/azure-disk-prices.json, or an array of items): one book per
 * (region, currency) found, each replaced in its own transaction.
 * TW_EPARSE for a file that is not prices (nothing stored).
 */
enum tw_err tw_srv_prices_import(struct tw_store *st, const char *buf, size_t len, const char *name,
                                 struct tw_srv_refresh_result *res, struct tw_error *err);

/*
 * The book of (REGION, CURRENCY): the stored one, else the bundled
 * snapshot's items for them (source "snapshot pricing/azure-disk-prices.json
 * (bundled)").  ST may be NULL (snapshot only).  *OUT is freed with
 * tw_pricebook_free.  TW_EINVAL for a bad region or currency; a region the
 * snapshot lacks gives an empty book (every lookup then names what is
 * missing).
 */
enum tw_err tw_srv_prices_load(struct tw_store *st, const char *region, const char *currency,
                               struct tw_pricebook **out, struct tw_error *err);

/*
 * The JSON of GET /api/v1/prices?region=&currency=&sku= and of `prices
 * show --json` (shape in core/pricebook.h); SKU may be NULL.  The region
 * is lower-cased and the currency upper-cased first.  TW_ENOENT when SKU
 * names no price of the book; TW_EINVAL for bad parameters.
 */
enum tw_err tw_srv_prices_show(struct tw_store *st, const char *region, const char *currency,
                               const char *sku, json_t **out, struct tw_error *err);

/* HTTP status and error code for a failure of refresh, load or show. */
unsigned tw_srv_prices_status(enum tw_err rc, const char **code);
/* The same for import, where a body that does not parse is a 400. */
unsigned tw_srv_prices_import_status(enum tw_err rc, const char **code);

/* Normalises a region (lower case) and currency (upper case) into the
 * buffers and checks them; TW_EINVAL naming the bad one. */
enum tw_err tw_srv_prices_key(const char *region, const char *currency, char reg[48], char cur[4],
                              struct tw_error *err);

/* The current time, RFC 3339 UTC ("2026-11-30T01:02:03Z"). */
void tw_srv_prices_now(char out[32]);

#endif

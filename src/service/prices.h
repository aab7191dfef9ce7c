/*
 * prices.h - price books, as the backend and the CLI both use them:
 * refresh one from the Retail Prices API into the store, import a saved
 * page or snapshot, load the book of a region and currency (the store's,
 * else the bundled snapshot), and the price book document of GET
 * /api/v1/prices and `prices show --json` (core's tw_pricebook_json).
 *
 * `tierwise prices` and the REST handlers call the same functions, so the
 * two never disagree.  A refresh fetches every page first and writes the
 * book in one transaction afterwards: a failure anywhere (network, a bad
 * page, a link off the endpoint, the store) leaves the stored book as it
 * was.
 *
 * Errors (the server maps them to HTTP statuses, server/prices_status.h):
 *   TW_EINVAL   a bad region, currency or SKU parameter
 *   TW_ENOENT   no price for what was asked (never a zero)
 *   TW_EPARSE   the Retail Prices API sent a bad page (for import: the
 *               caller's file or body does not parse)
 *   TW_EPERM    a NextPageLink off the configured endpoint
 *   TW_EIO      the API failed, timed out or looped
 *   TW_ENOMEM   out of memory
 * When a refresh or import fails in the store, the result's store_failed
 * says so whatever the code.
 */
#ifndef TW_SERVICE_PRICES_H
#define TW_SERVICE_PRICES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "azure/http.h"
#include "azure/prices.h"
#include "core/err.h"
#include "core/pricebook.h"
#include "store/store.h"

struct tw_svc_refresh {
    const char *prices_url;                   /* the endpoint's base URL (resolved by the caller) */
    const char *region;                       /* "westeurope" (lower case) */
    const char *currency;                     /* "USD" (upper case) */
    const struct tw_az_http_opts *http;       /* NULL: the defaults */
    long deadline_ms;                         /* 0: TW_AZ_PRICES_DEADLINE_MS */
    void (*log)(void *arg, const char *line); /* e.g. the $skip fallback; may be NULL */
    void *log_arg;
};

/* What a refresh or an import did. */
struct tw_svc_refresh_result {
    size_t items;        /* items stored */
    size_t prices;       /* prices the book maps */
    size_t books;        /* books written (import: one per region and currency) */
    char fetched_at[32]; /* RFC 3339 UTC */
    char source[256];
    struct tw_az_prices_stats fetch;
    bool store_failed; /* the failure was the store's, not the API's: answer 500 */
    bool partial;      /* import: one page of a multi-page answer, stored as asked */
};

/*
 * Fetches REGION's managed-disk prices in CURRENCY from the Retail Prices
 * API and replaces the stored book of (REGION, CURRENCY) in one
 * transaction.  RES (may be NULL) gets counts and timings.  Errors as
 * tw_az_prices_fetch and the store; the stored book is then unchanged.
 * A fetch that returns no disk price at all is TW_ENOENT and stores nothing.
 */
enum tw_err tw_svc_prices_refresh(struct tw_store *st, const struct tw_svc_refresh *rq,
                                  struct tw_svc_refresh_result *res, struct tw_error *err);

/*
 * The price books a backend keeps fresh: each region of the fleet
 * (service/fleet.h, VMs with a location, a subscription or not) in each
 * currency the store holds books in (USD when it holds none).  A book
 * fetched from the API less than MAX_AGE_S seconds ago is left alone (one
 * up to 5 minutes in the future too: another machine's clock); any other
 * (none yet, older, from further in the future, or imported from a
 * snapshot or a file) is refreshed as tw_svc_prices_refresh does, through
 * RQ's endpoint and options (its region and currency are ignored).
 *
 * A book the API refuses (a bad page, no price, a link off the endpoint)
 * is counted in FAILED with its reason (the first one) and the walk goes
 * on; the API failing outright (TW_EIO: down, timing out, 5xx or 429
 * past the retries, a deadline, a loop of links) for two books in a row
 * ends the walk there, the books left counted in NOT_TRIED, so that an
 * outage holds the caller's worker for two books' deadlines, not one per
 * book, while one book failing alone does not keep the others from
 * being tried.  STOP (may be NULL) is asked before each
 * book; when it says so the walk ends and STOPPED is set.  Errors (the
 * walk ends, REP says what was done until then): the store's (reading
 * the fleet, the currencies or a book, or writing one: STORE_FAILED),
 * TW_ENOMEM here (a body too large from the API is one book's failure).
 */
struct tw_svc_prices_fleet_report {
    size_t books;     /* books the fleet needs (regions x currencies) */
    size_t fresh;     /* fetched from the API within MAX_AGE_S: left alone */
    size_t refreshed; /* fetched and stored now */
    size_t failed;    /* whose refresh failed: nothing stored was changed */
    size_t not_tried;  /* left when the API failed outright */
    bool stopped;      /* STOP said so */
    bool store_failed; /* the walk ended on a store write failing */
    char first_error[512];
};
enum tw_err tw_svc_prices_refresh_fleet(struct tw_store *st, const struct tw_svc_refresh *rq,
                                        long max_age_s, bool (*stop)(void *arg), void *stop_arg,
                                        struct tw_svc_prices_fleet_report *rep,
                                        struct tw_error *err);
/*
 * Imports LEN bytes at BUF named NAME (a saved API page, a snapshot file
 * like pricing/azure-disk-prices.json, or an array of items): one book per
 * (region, currency) found, each replaced in its own transaction.
 * TW_EPARSE for a file that is not prices (nothing stored).  A page whose
 * NextPageLink is set is one page of a multi-page answer: storing it would
 * replace each whole book with a part, so it is refused (TW_EINVAL,
 * nothing stored) unless PARTIAL; then it is stored, its source says
 * "(partial)" and RES->partial is set.  tw_svc_prices_import is the same
 * with PARTIAL false.
 */
enum tw_err tw_svc_prices_import_opt(struct tw_store *st, const char *buf, size_t len,
                                     const char *name, bool partial,
                                     struct tw_svc_refresh_result *res, struct tw_error *err);
enum tw_err tw_svc_prices_import(struct tw_store *st, const char *buf, size_t len, const char *name,
                                 struct tw_svc_refresh_result *res, struct tw_error *err);

/*
 * The book of (REGION, CURRENCY): the stored one, else the bundled
 * snapshot's items for them (source "snapshot pricing/azure-disk-prices.json
 * (bundled)").  ST may be NULL (snapshot only).  *OUT is freed with
 * tw_pricebook_free.  TW_EINVAL for a bad region or currency; a region the
 * snapshot lacks gives an empty book (every lookup then names what is
 * missing).
 */
enum tw_err tw_svc_prices_load(struct tw_store *st, const char *region, const char *currency,
                               struct tw_pricebook **out, struct tw_error *err);

/*
 * The JSON of GET /api/v1/prices?region=&currency=&sku= and of `prices
 * show --json` (shape in core/pricebook.h); SKU may be NULL.  The region
 * is lower-cased and the currency upper-cased first.  TW_ENOENT when SKU
 * names no price of the book; TW_EINVAL for bad parameters.
 */
enum tw_err tw_svc_prices_show(struct tw_store *st, const char *region, const char *currency,
                               const char *sku, json_t **out, struct tw_error *err);

/*
 * Why the book of REGION and CURRENCY (normalised) holds nothing, in ERR,
 * and TW_ENOENT: a region the bundled snapshot does not know (a typo; the
 * nearest known name is suggested), or a known region without a book in
 * that currency.  tw_svc_prices_show says this when a SKU is asked of an
 * empty book.
 */
enum tw_err tw_svc_prices_no_book(const char *region, const char *currency, struct tw_error *err);

/* Normalises a region (lower case) and currency (upper case) into the
 * buffers and checks them; TW_EINVAL naming the bad one. */
enum tw_err tw_svc_prices_key(const char *region, const char *currency, char reg[48], char cur[4],
                              struct tw_error *err);

/* The current time, RFC 3339 UTC ("2026-11-30T01:02:03Z"). */
void tw_svc_prices_now(char out[32]);

#endif

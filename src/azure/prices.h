/*
 * prices.h - the Azure Retail Prices API client: one region's managed-disk
 * prices in one currency, every page of them.
 *
 * GET {prices}/api/retail/prices?currencyCode='EUR'&$filter=... asks for
 * serviceName 'Storage', the region's armRegionName, the five managed-disk
 * products and the Consumption and Reservation price types, with values
 * quoted as OData wants (a quote doubled) and the whole query
 * percent-encoded.  Pages are followed through NextPageLink, whatever
 * their size (100 and 1,000 both occur), but only while the link stays on
 * the configured endpoint (same scheme, host and port; the explicit :443
 * or :80 of the same URL counts as the same) and never back to a page
 * already read.  A full page without a NextPageLink (the API did this in
 * March 2023) goes on with $skip, and the log says so.  Each request
 * retries 429 and 5xx answers with backoff, jitter and Retry-After
 * (azure/http.c); the whole fetch has a deadline.  The API's own error
 * body ({"Error": {"Code", "Message"}}) is in the message of a failure.
 */
#ifndef TW_AZURE_PRICES_H
#define TW_AZURE_PRICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/http.h"
#include "core/err.h"
#include "core/pricebook.h"

#define TW_AZ_PRICES_PATH "/api/retail/prices"
#define TW_AZ_PRICES_MAX_PAGES 5000      /* 5 million items at 1,000 a page */
#define TW_AZ_PRICES_DEADLINE_MS 300000L /* a whole fetch, by default */

struct tw_az_prices_req {
    const char *base;                   /* the Retail Prices endpoint, "https://prices.azure.com" */
    const char *region;                 /* armRegionName, "westeurope" */
    const char *currency;               /* "USD", "EUR", ... */
    const struct tw_az_http_opts *http; /* NULL: tw_az_http_opts_default */
    long deadline_ms;                   /* the whole fetch; 0: TW_AZ_PRICES_DEADLINE_MS */
    /* Receives one line per notable event ($skip fallback); may be NULL. */
    void (*log)(void *arg, const char *line);
    void *log_arg;
};

struct tw_az_prices_stats {
    int pages;          /* pages read */
    int skip_fallbacks; /* pages asked for with $skip because a link was missing */
    int attempts;       /* HTTP requests sent, retries included */
    long waited_ms;     /* backoff waits */
    size_t bytes;       /* JSON read */
    double parse_s;     /* seconds spent parsing it */
    double total_s;     /* seconds for the whole fetch */
};

/*
 * The first page's URL for REGION and CURRENCY under BASE in OUT.
 * TW_EINVAL for a region or currency that is not one, or a URL longer than
 * OUTLEN.
 */
enum tw_err tw_az_prices_url(const char *base, const char *region, const char *currency, char *out,
                             size_t outlen, struct tw_error *err);

/* Whether LINK is a Retail Prices URL on BASE's scheme, host and port
 * (a port equal to the scheme's default matches its absence). */
bool tw_az_prices_link_ok(const char *link, const char *base);

/*
 * Fetches every page into OUT (items appended; the caller cleans up).
 * STATS may be NULL.  On failure OUT holds nothing new and ERR says what:
 * the HTTP failure with the API's error text (codes as tw_az_http_request),
 * a page that does not parse (TW_EPARSE), a page in another currency
 * (TW_EPARSE), a link off the endpoint (TW_EPERM), a loop of links or too
 * many pages (TW_EIO), the deadline (TW_EIO).
 */
enum tw_err tw_az_prices_fetch(const struct tw_az_prices_req *rq, struct tw_price_items *out,
                               struct tw_az_prices_stats *stats, struct tw_error *err);

#endif

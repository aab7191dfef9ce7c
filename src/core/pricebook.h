/*
 * pricebook.h - managed-disk prices from Azure Retail Prices items.
 *
 * Two parts.  The page parser reads what the Retail Prices API sends (an
 * envelope {"BillingCurrency", "Items", "NextPageLink", "Count"}), a
 * bundled snapshot ({"Items": [...]} whose items carry "_date_seen"), a
 * pricing-data file ({"items": [...]}) or a bare array of items, from a
 * buffer and a length, into plain structs; anything malformed is refused
 * with the item's index and the field.
 *
 * The price book maps items to prices by product and meter name, exactly
 * (never by substring, the mistake behind peers pricing Premium disks with
 * the shared-disk "Disk Mount" fee):
 *
 *   "<tier> LRS Disk" / "<tier> ZRS Disk", 1/Month   the tier's price per month
 *   "<tier> LRS Disk Mount", 1/Month                 per-VM fee of a shared disk
 *   "<tier> LRS Disk Operations", 10K                Standard SSD/HDD transactions
 *   "Disk Transactions LRS Disk Operations", 10K     the same, the newer tier-less
 *                                                    meter (TW_PB_TX_10K, tier "")
 *   "Premium LRS Provisioned Capacity" (Azure Premium SSD v2), 1 GiB/Hour,
 *   "... Provisioned IOPS" and "... Provisioned Throughput (MBps)", 1/Hour,
 *   the same for Ultra Disks ("Ultra LRS Provisioned ...")
 *   Reservation items of "<tier> LRS Disk" with a 1 or 3 year term: kept
 *   apart (their price is the whole term's), never a monthly price.
 *
 * Items with a zero price (the "Global" pseudo-region) or outside their
 * effective dates are not used; every other item that matches no rule is
 * kept in the book's list of unknown meters rather than guessed at.
 * Lookups by (region, currency, family, tier, redundancy, kind) go through
 * an open-addressing hash table: O(1), no allocation.  A missing price is
 * an error naming what is missing, never a zero.
 */
#ifndef TW_CORE_PRICEBOOK_H
#define TW_CORE_PRICEBOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"
#include "core/money.h"
#include "core/sku.h"

#define TW_PRICES_LINK_MAX 8192 /* a NextPageLink, NUL included */
#define TW_PRICES_MAX_ITEMS 2000000

/* Families and redundancies are the SKU vocabulary's (core/sku.h). */

/* What a price is for. */
enum tw_pb_kind {
    TW_PB_MONTH,       /* a tier, per month */
    TW_PB_MOUNT,       /* shared disk, per VM it is mounted on, per month */
    TW_PB_OPS_10K,     /* per 10,000 transactions (Standard SSD/HDD) */
    TW_PB_GIB_HOUR,    /* provisioned capacity, per GiB and hour (v2, Ultra) */
    TW_PB_IOPS_HOUR,   /* provisioned IOPS, per IOPS and hour */
    TW_PB_MBPS_HOUR,   /* provisioned throughput, per MB/s and hour */
    TW_PB_RESERVED_1Y, /* a one-year reservation of the tier, the term's total */
    TW_PB_RESERVED_3Y, /* a three-year reservation, the term's total */
    TW_PB_TX_10K,      /* per 10,000 transactions, the tier-less "Disk Transactions
                        * <LRS|ZRS> Disk Operations" meter (Standard SSD/HDD); tier "" */
    TW_PB_KIND_COUNT
};

/* One Retail Prices item, the fields tierwise reads.  Strings longer than
 * their field are refused by the parser. */
struct tw_price_item {
    char currency[4];   /* currencyCode */
    char region[48];    /* armRegionName */
    char product[128];  /* productName */
    char meter[128];    /* meterName */
    char sku_name[128]; /* skuName; "" when absent */
    char unit[32];      /* unitOfMeasure */
    char type[32];      /* Consumption, Reservation, DevTestConsumption */
    char term[16];      /* reservationTerm; "" when absent */
    char meter_id[40];  /* meterId; "" when absent (some snapshot rows) */
    char start[32];     /* effectiveStartDate; "" when absent */
    char end[32];       /* effectiveEndDate; "" when absent */
    char seen[16];      /* snapshot rows: _date_seen; "" otherwise */
    struct tw_money price; /* retailPrice, >= 0, exactly as the item wrote it */
    double tier_min;       /* tierMinimumUnits (a count of units); 0 when absent */
};

/* A growing list of items. */
struct tw_price_items {
    struct tw_price_item *v;
    size_t n, cap;
};

void tw_price_items_cleanup(struct tw_price_items *l);

/* What a page says besides its items. */
struct tw_price_page {
    char currency[4];              /* BillingCurrency; "" when absent */
    char next[TW_PRICES_LINK_MAX]; /* NextPageLink; "" when null, empty or absent */
    long count;                    /* Count; -1 when absent */
    char fetched_at[32];           /* a snapshot's "_fetched_at"; "" otherwise */
    size_t items;                  /* items this page added */
};

/*
 * Parses LEN bytes at BUF (an API page, a snapshot, a pricing-data file or
 * a bare array of items) and appends its items to OUT.  PAGE (may be NULL)
 * gets the envelope.  Required per item: currencyCode (3 letters),
 * retailPrice (a number >= 0 that money holds exactly: at most 6 decimals,
 * read from its digits; see core/money.h), armRegionName, meterName,
 * productName, unitOfMeasure and type; the others are optional.  A page
 * whose BillingCurrency differs from an item's currency, whose Count
 * differs from its items, or whose NextPageLink is neither a string nor
 * null is refused.  TW_EPARSE naming the item and field; on failure OUT is
 * as before the call.
 */
enum tw_err tw_price_page_parse(const char *buf, size_t len, struct tw_price_items *out,
                                struct tw_price_page *page, struct tw_error *err);

/* ITEMS (N of them) as a JSON array in the API's item format (only the
 * fields above; retailPrice as its exact decimal text, "21.68"), a new
 * NUL-terminated string; NULL when out of memory. */
char *tw_price_items_dump(const struct tw_price_item *items, size_t n, size_t *len);

/* "per month", "per 10,000 transactions" ... for messages. */
const char *tw_pb_kind_name(enum tw_pb_kind k);

/* One price in the book. */
struct tw_price_entry {
    uint64_t hash; /* 0: empty slot */
    char region[48];
    char currency[4];
    char tier[8];       /* "P10"; "" for v2 and Ultra meters */
    uint8_t family;     /* enum tw_sku_family */
    uint8_t redundancy; /* enum tw_sku_redundancy */
    uint8_t kind;       /* enum tw_pb_kind */
    struct tw_money price; /* in CURRENCY, per the kind's unit, exact */
    double from_units;  /* tierMinimumUnits of the item (v2's free IOPS and MB/s) */
    size_t item;        /* index into the book's items */
};

/* Why an item was not used. */
enum tw_pb_unused {
    TW_PB_UNUSED_UNKNOWN,
    TW_PB_UNUSED_ZERO,
    TW_PB_UNUSED_EXPIRED,
    TW_PB_UNUSED_NOT_YET,
    TW_PB_UNUSED_SUPERSEDED
};

struct tw_pricebook {
    char source[256];             /* "api http://...", "snapshot FILE", ... */
    char fetched_at[32];          /* RFC 3339 UTC */
    struct tw_price_items items;  /* every item read (owned) */
    struct tw_price_entry *slots; /* hash table, a power of two long */
    size_t nslots, n;             /* slots, prices in them */
    size_t *unused;               /* indexes of items not used ... */
    uint8_t *unused_why;          /* ... and why (enum tw_pb_unused) */
    size_t n_unused;
};

/*
 * An item's effectiveStartDate or effectiveEndDate S as an instant (ns
 * since 1970): RFC 3339 with Z or an offset, and, since the Retail Prices
 * API's dates are UTC, a bare date "2026-07-01" (midnight UTC) or a time
 * without offset "2026-07-01T00:00:00" (UTC).  False when S is none of
 * these.
 */
bool tw_price_date(const char *s, int64_t *ns);

/*
 * Item IT's dates as the instants [*FROM, *TO) it is in effect: no
 * effectiveStartDate is INT64_MIN, no effectiveEndDate INT64_MAX, and the
 * end is the second after effectiveEndDate (its second is counted in).  A
 * date tw_price_date does not read counts as none; a book's items have
 * none such (tw_pricebook_build refuses them).
 */
void tw_price_item_span(const struct tw_price_item *it, int64_t *from, int64_t *to);

/*
 * Builds *OUT (free with tw_pricebook_free) from ITEMS, which it takes
 * over (ITEMS is left empty, even on failure).  Only items of REGION and
 * CURRENCY are kept when those are non-NULL.  NOW (RFC 3339) decides
 * which items are in effect, dates compared as instants (tw_price_date):
 * an item starts at its effectiveStartDate and ends the second after its
 * effectiveEndDate (the end's second is counted in).  Two items for the
 * same price: the later effectiveStartDate wins, the other is listed as
 * superseded.  TW_EPARSE naming the item (its index in ITEMS) and the
 * field for a kept item whose date tw_price_date does not read.
 */
enum tw_err tw_pricebook_build(struct tw_price_items *items, const char *region,
                               const char *currency, const char *source, const char *fetched_at,
                               const char *now, struct tw_pricebook **out, struct tw_error *err);
void tw_pricebook_free(struct tw_pricebook *b);

/* The price for the key, or NULL when the book has none.  TIER is "" for
 * the hourly kinds and TW_PB_TX_10K.  No allocation; O(1). */
const struct tw_price_entry *tw_pricebook_find(const struct tw_pricebook *b, const char *region,
                                               const char *currency, enum tw_sku_family family,
                                               const char *tier, enum tw_sku_redundancy red,
                                               enum tw_pb_kind kind);

/* As tw_pricebook_find, with the exact price in *OUT; TW_ENOENT (and *OUT
 * zero) and a message such as "no price per month for E15 ZRS
 * (StandardSSD_ZRS) in uksouth GBP in the price book (source ...)" when
 * there is none. */
enum tw_err tw_pricebook_money(const struct tw_pricebook *b, const char *region,
                               const char *currency, enum tw_sku_family family, const char *tier,
                               enum tw_sku_redundancy red, enum tw_pb_kind kind,
                               struct tw_money *out, struct tw_error *err);

/* As tw_pricebook_money with the price as the nearest double (the one
 * strtod makes of the API's text), NAN when there is none. */
enum tw_err tw_pricebook_price(const struct tw_pricebook *b, const char *region,
                               const char *currency, enum tw_sku_family family, const char *tier,
                               enum tw_sku_redundancy red, enum tw_pb_kind kind, double *out,
                               struct tw_error *err);

/* As tw_pricebook_price with the disk's SKU name ("Premium_LRS",
 * "StandardSSD_ZRS", ...) instead of family and redundancy; TW_EINVAL for
 * an unknown SKU name. */
enum tw_err tw_pricebook_price_sku(const struct tw_pricebook *b, const char *region,
                                   const char *currency, const char *sku, const char *tier,
                                   enum tw_pb_kind kind, double *out, struct tw_error *err);
enum tw_err tw_pricebook_money_sku(const struct tw_pricebook *b, const char *region,
                                   const char *currency, const char *sku, const char *tier,
                                   enum tw_pb_kind kind, struct tw_money *out,
                                   struct tw_error *err);

/*
 * The book's prices of REGION and CURRENCY as the JSON of `prices show
 * --json` and GET /api/v1/prices: {"region", "currency", "source",
 * "fetched_at", "prices": [{"tier", "sku", "redundancy", "per_month",
 * "per_10k_transactions" (the tier's own meter), "disk_transactions_per_10k"
 * (the family's tier-less meter; null when none), "shared_mount_per_month", "reserved_1y",
 * "reserved_3y", "meter_id", "effective_from", "seen"}], "provisioned":
 * [{"sku", "per_gib_hour", "per_iops_hour", "per_mbps_hour", ...}],
 * "unknown_meters": [...], "unused": {...}}.  SKU (NULL: all) filters by
 * tier ("P10") or SKU name ("Premium_LRS") and leaves unknown_meters
 * empty; a filter that matches no price is TW_ENOENT naming what is
 * missing.  NULL out with TW_ENOMEM.  Prices are JSON reals holding the
 * double nearest the exact price: dumped with 12 or more significant
 * digits (the server's and the CLI's JSON) each prints as the item's own
 * text ("21.68", "0.0005").
 */
enum tw_err tw_pricebook_json(const struct tw_pricebook *b, const char *region,
                              const char *currency, const char *sku, json_t **out,
                              struct tw_error *err);

/* Whether S is a currency code the API documents (upper case). */
bool tw_pb_currency_ok(const char *s);
/* Whether S looks like an armRegionName: 2-47 lower-case letters and digits. */
bool tw_pb_region_ok(const char *s);

/* The bundled snapshot (pricing/azure-disk-prices.json), compiled in. */
extern const unsigned char tw_builtin_disk_prices_json[];
extern const size_t tw_builtin_disk_prices_json_len;
#define TW_PB_SNAPSHOT_NAME "pricing/azure-disk-prices.json"

#endif

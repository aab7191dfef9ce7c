/*
 * sim_odata.h - the part of OData $filter that the Azure Retail Prices API
 * answers, parsed into a small expression tree and matched against items.
 *
 * Supported (../shared/azure-api/retail-prices.md 1): `field eq 'value'`,
 * `and`, `or`, parentheses, and the functions contains(field, 'x'),
 * startswith(...) and endswith(...), which clients use against the live
 * API.  Field names are the API's filterable ones, in any case
 * (armRegionName, Location, meterId, meterName, productid, skuId,
 * productName, skuName, serviceName, serviceId, serviceFamily, priceType,
 * armSkuName) plus currencyCode.  Everything else (ne, gt, not, lambdas,
 * numbers, unknown fields, a priceType that is not Consumption,
 * Reservation, DevTestConsumption or SavingsPlan) is refused, as the API
 * answers 400 "Invalid OData parameters supplied".
 *
 * Pure (no I/O, no JSON library), so it can be fuzzed on raw bytes.
 */
#ifndef TW_SIM_ODATA_H
#define TW_SIM_ODATA_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

#define TW_ODATA_MAX_NODES 128 /* comparisons and and/or nodes in one filter */
#define TW_ODATA_MAX_VALUE 256 /* bytes of one quoted value, NUL included */
#define TW_ODATA_MAX_DEPTH 32  /* nested parentheses */

enum tw_odata_op {
    TW_ODATA_EQ,
    TW_ODATA_CONTAINS,
    TW_ODATA_STARTSWITH,
    TW_ODATA_ENDSWITH,
    TW_ODATA_AND,
    TW_ODATA_OR
};

struct tw_odata_node {
    enum tw_odata_op op;
    int field;                      /* comparisons: index of the field */
    char value[TW_ODATA_MAX_VALUE]; /* comparisons: the unquoted value */
    int left, right;                /* and/or: node indexes */
};

struct tw_odata_filter {
    size_t n;            /* nodes used */
    int root;            /* -1: no filter, every item matches */
    bool case_sensitive; /* values compared as given (api-version >= 2023-01-01-preview) */
    struct tw_odata_node nodes[TW_ODATA_MAX_NODES];
};

/*
 * Parses LEN bytes of a $filter value (already URL-decoded) into F.  An
 * empty filter matches everything.  CASE_SENSITIVE as in the struct.
 * TW_EPARSE with the byte offset (column) and what was expected.
 */
enum tw_err tw_odata_parse(const char *s, size_t len, bool case_sensitive,
                           struct tw_odata_filter *f, struct tw_error *err);

/* Reads the item field named KEY ("meterName", "type", ...) as a string;
 * NULL when the item has none. */
typedef const char *(*tw_odata_get_fn)(const void *item, const char *key);

/* Whether ITEM satisfies F; a comparison on a field the item lacks is
 * false. */
bool tw_odata_match(const struct tw_odata_filter *f, const void *item, tw_odata_get_fn get);

/* The item key a field index reads ("type" for priceType). */
const char *tw_odata_field_key(int field);

#endif

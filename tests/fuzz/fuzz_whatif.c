/* fuzz_whatif.c - the body of POST /api/v1/savings/whatif
 * (service/whatif.c: tw_whatif_req_parse, and tw_whatif_period_parse on
 * the same bytes) on arbitrary bytes.  A refusal names the field and says
 * why; what parses is in range, and runs against a small price book in
 * UTC to a result whose figures hold together (seconds within the
 * period, the total the per-disk saving times the count) and whose JSON
 * is made (an amount too large to write is refused by the run, naming
 * count or io, so the JSON is always made).  The bytes are also read as a
 * price file (tw_whatif_book), and the field example is run on the book
 * they make: its dates (any form tw_price_date reads) cut the period into
 * parts that follow each other and hold all its hours. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/whatif.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char book_json[] =
    "{\"Items\": ["
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 16.16, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"P10 LRS Disk\", \"productName\": \"Premium SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 7.16, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"E10 LRS Disk\", \"productName\": \"Standard SSD Managed Disks\","
    " \"unitOfMeasure\": \"1/Month\", \"type\": \"Consumption\"},"
    "{\"currencyCode\": \"GBP\", \"retailPrice\": 0.001, \"armRegionName\": \"westeurope\","
    " \"meterName\": \"E10 LRS Disk Operations\", \"productName\": \"Standard SSD Managed Disks\","
    " \"unitOfMeasure\": \"10K\", \"type\": \"Consumption\"}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_pricebook *book;
    static struct tw_tier_catalog cat;
    if (!cat.n_tiers && tw_tier_catalog_builtin(&cat, NULL) != TW_OK)
        abort();
    if (!book && tw_whatif_book(book_json, sizeof(book_json) - 1, "fuzz", "westeurope", "GBP", "",
                                "2026-12-01T00:00:00Z", &book, NULL) != TW_OK)
        abort();
    static struct tw_whatif_req rq;
    static struct tw_whatif_result res;
    char field[TW_WHATIF_FIELD_MAX];
    struct tw_error err = {0};
    /* The period alone. */
    if (tw_whatif_period_parse((const char *)data, size, &rq, &err) == TW_OK) {
        if (rq.to_day <= rq.from_day || rq.to_day - rq.from_day > TW_WHATIF_PERIOD_MAX_DAYS)
            abort();
    } else if (!err.msg[0]) {
        abort();
    }
    /* The same bytes as a price file: a book, or a refusal that says why
     * (one page of several, an array of pages, not prices). */
    struct tw_pricebook *pb = NULL;
    memset(&err, 0, sizeof(err));
    if (tw_whatif_book((const char *)data, size, "fuzz", "westeurope", "GBP", "",
                       "2026-12-01T00:00:00Z", &pb, &err) == TW_OK) {
        /* The field example on that book: priced by time from its dates
         * (each part inside the period, in order, the parts' hours the
         * whole), or refused saying why. */
        tw_whatif_req_init(&rq);
        strcpy(rq.region, "westeurope");
        strcpy(rq.currency, "GBP");
        strcpy(rq.from_tier, "P10");
        strcpy(rq.to_tier, "E10");
        strcpy(rq.window[0], "Sat 00:00-Mon 00:00");
        rq.n_windows = 1;
        const char *per = "2026-01-01..2027-01-01";
        if (tw_whatif_period_parse(per, strlen(per), &rq, NULL) != TW_OK)
            abort();
        memset(&err, 0, sizeof(err));
        if (tw_whatif_run(&rq, &cat, pb, NULL, &res, field, &err) == TW_OK) {
            int64_t at = res.period_from_ns, hours = 0;
            for (size_t k = 0; k < res.n_pieces; k++) {
                if (res.pieces[k].from_ns != at || res.pieces[k].to_ns <= at)
                    abort();
                at = res.pieces[k].to_ns;
                hours += res.pieces[k].downgraded_ns;
            }
            if (at != res.period_to_ns || hours != res.downgraded_ns)
                abort();
            json_t *j = NULL;
            if (tw_whatif_json(&res, &j, &err) != TW_OK)
                abort();
            json_decref(j);
        } else if (!err.msg[0]) {
            abort();
        }
        tw_pricebook_free(pb);
    } else if (!err.msg[0] || pb) {
        abort();
    }
    memset(&err, 0, sizeof(err));
    enum tw_err rc = tw_whatif_req_parse((const char *)data, size, &rq, field, &err);
    if (rc != TW_OK) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    if (rq.n_windows < 1 || rq.n_windows > TW_WINDOWS_MAX || rq.count < 1 ||
        rq.count > TW_WHATIF_COUNT_MAX || rq.to_day <= rq.from_day)
        abort();
    /* Short periods only: a ten-year run of 64 windows is slow, not wrong. */
    if (rq.to_day - rq.from_day > 400)
        rq.to_day = rq.from_day + 400;
    rq.tz[0] = '\0';
    memset(&err, 0, sizeof(err));
    rc = tw_whatif_run(&rq, &cat, book, NULL, &res, field, &err);
    if (rc != TW_OK) {
        if (!err.msg[0])
            abort();
        return 0;
    }
    if (res.downgraded_ns < 0 || res.downgraded_ns > res.period_to_ns - res.period_from_ns)
        abort();
    struct tw_amount want;
    if (tw_amount_scale(res.saving, res.count, 1, &want, NULL) != TW_OK ||
        want.num != res.total_saving.num || want.den != res.total_saving.den)
        abort();
    json_t *j = NULL;
    if (tw_whatif_json(&res, &j, &err) != TW_OK)
        abort();
    json_decref(j);
    return 0;
}

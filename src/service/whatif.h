/*
 * whatif.h - the what-if calculator: what moving one disk (or N alike)
 * from one SKU to a cheaper one during weekly windows saves over a period.
 *
 * `tierwise savings --price-file F|--db F ...` and POST
 * /api/v1/savings/whatif both call this, so they answer the same JSON.
 * The arithmetic is core/savings.h's: the windows become instants in the
 * zone over the period widened by a week on each side (so a window
 * crossing an edge is whole before it is clipped), tw_savings_windows with
 * zero margins and no quota clips them to the period and prices them, and
 * tw_bill_cost gives the period's cost at the original SKU (the baseline).
 *
 *   saving per disk = (from per month - to per month) x hours / 730
 *                     - the cheaper SKU's transactions in those hours
 *   total           = saving per disk (unrounded) x count, rounded once
 *
 * The transactions are zero while the VM is deallocated (no I/O); an I/O
 * rate (io_set) prices a VM that keeps running on the cheaper SKU.
 *
 * Amounts stay exact (struct tw_amount) until the JSON or the text shows
 * them: "saving" rounded once to the currency's minor unit, half away from
 * zero, "saving_unrounded" with 12 decimals, both decimal strings.
 *
 * The period is two dates, midnights in the zone (UTC without one), the
 * end excluded: "2026-01-01..2027-01-01" is the year 2026.
 */
#ifndef TW_SERVICE_WHATIF_H
#define TW_SERVICE_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"
#include "core/money.h"
#include "core/pricebook.h"
#include "core/savings.h"
#include "core/tier.h"
#include "core/tz.h"
#include "core/window.h"

#define TW_WHATIF_WINDOW_TEXT_MAX 512  /* one window text (one --window), NUL included */
#define TW_WHATIF_COUNT_MAX 10000000   /* disks in one what-if */
/* The longest period: what tw_windows_instants takes, less the week
 * added on each side and a day for the zone's offset. */
#define TW_WHATIF_PERIOD_MAX_DAYS (TW_WINDOW_PERIOD_MAX_DAYS - 16)
#define TW_WHATIF_NOTES_MAX 8
#define TW_WHATIF_FIELD_MAX 64

/* What is asked (the CLI's options, the POST body's fields). */
struct tw_whatif_req {
    char region[48];                 /* "westeurope" */
    char currency[4];                /* "GBP" */
    char from_tier[8];               /* "P10" */
    char from_sku[32];               /* "" : the tier letter's family, LRS */
    char to_tier[8];                 /* "E10" */
    char to_sku[32];                 /* "" : the tier letter's family, from's redundancy */
    size_t n_windows;                /* texts in window (each may hold several windows) */
    char window[TW_WINDOWS_MAX][TW_WHATIF_WINDOW_TEXT_MAX];
    char tz[TW_TZ_NAME_MAX];         /* "" : UTC */
    int64_t from_day, to_day;        /* the period's dates, days since 1970-01-01 */
    int64_t count;                   /* disks, 1..TW_WHATIF_COUNT_MAX */
    bool io_set;                     /* a running VM's I/O on the cheaper SKU */
    struct tw_io_rate io;
};

/* Sets the defaults: count 1, no windows, no zone. */
void tw_whatif_req_init(struct tw_whatif_req *rq);

/*
 * Parses LEN bytes at BUF, "YYYY-MM-DD..YYYY-MM-DD", into RQ's period.
 * TW_EPARSE with the byte (ERR's column, 1-based) and what was expected;
 * TW_EINVAL for an end not after the start (the end date is excluded);
 * TW_ERANGE for a year outside 1900..2199 or a period longer than
 * TW_WHATIF_PERIOD_MAX_DAYS.
 */
enum tw_err tw_whatif_period_parse(const char *buf, size_t len, struct tw_whatif_req *rq,
                                   struct tw_error *err);

/*
 * Parses LEN bytes at BUF, the JSON body of POST /api/v1/savings/whatif:
 * {"region", "currency", "from_tier", "to_tier", "from_sku"?, "to_sku"?,
 *  "windows": ["Sat 00:00-Mon 00:00", ...], "tz"?, "period": "A..B" or
 *  {"from": "A", "to": "B"}, "count"?, "io"?: {"ios_per_hour", "io_bytes"}}
 * into *RQ (initialised first).  Unknown members are refused.  On failure
 * FIELD (FIELD_MAX bytes) names the member ("windows[1]", "period.to"),
 * and ERR says what is wrong: TW_EPARSE for JSON that does not parse or a
 * member of the wrong type, TW_EINVAL / TW_ERANGE as tw_whatif_period_parse.
 */
enum tw_err tw_whatif_req_parse(const char *buf, size_t len, struct tw_whatif_req *rq,
                                char field[TW_WHATIF_FIELD_MAX], struct tw_error *err);

/* One side of the move: a SKU, its tier and its price with where it came
 * from. */
struct tw_whatif_price {
    char tier[8];               /* "P10" */
    char sku[32];               /* "Premium_LRS" */
    struct tw_money per_month;
    char meter[128];            /* "P10 LRS Disk" */
    char effective_from[32];    /* the item's effectiveStartDate; "" when none */
};

/* A piece of the period with one price on each side: the period is cut at
 * each effectiveStartDate and effectiveEndDate (the second after it: the
 * book counts the end second in) of the two tiers' items, and the
 * transaction meters', that falls inside it, and each piece is priced by
 * the book as it stood at the piece's start (the items in effect then). */
#define TW_WHATIF_PIECES_MAX 16
struct tw_whatif_piece {
    int64_t from_ns, to_ns;
    struct tw_money from_per_month, to_per_month;
    char from_effective[32], to_effective[32]; /* the items' effectiveStartDate */
    bool tx_priced;
    struct tw_money tx_per_10k;                /* tx_priced: the target's */
    char tx_meter[64];                         /* the meter used ("" when none) */
    int64_t downgraded_ns;                     /* the windows' time in the piece */
    struct tw_amount saving;                   /* net of transactions, per disk */
    struct tw_amount tx_cost;                  /* the transactions in the piece, per disk */
};

struct tw_whatif_result {
    char region[48], currency[4];
    char tz[TW_TZ_NAME_MAX];             /* the zone's name, "UTC" without one */
    char source[256], fetched_at[32];    /* the price book's */
    struct tw_whatif_price from, to;
    int64_t from_day, to_day;            /* the period's dates */
    int64_t period_from_ns, period_to_ns;/* their midnights in the zone */
    struct tw_windows windows;           /* every window asked, as parsed (not united) */
    size_t n_spans;                      /* downgraded spans in the period */
    int64_t downgraded_ns;               /* their total */
    int64_t count;
    struct tw_amount saving;             /* per disk, net of transactions */
    struct tw_amount tx_cost;            /* per disk: the transactions in the windows */
    struct tw_amount baseline;           /* per disk: the period at the original SKU */
    struct tw_amount with_plan;          /* per disk: baseline - saving */
    struct tw_amount total_saving;       /* saving x count */
    struct tw_amount total_baseline;     /* baseline x count */
    bool tx_priced;                      /* tx holds the target's transaction rule */
    struct tw_tx_rule tx;
    bool io_set;
    struct tw_io_rate io;
    size_t n_notes;
    char notes[TW_WHATIF_NOTES_MAX][400];
    size_t n_pieces;                     /* 1 when the prices hold over the period */
    struct tw_whatif_piece pieces[TW_WHATIF_PIECES_MAX]; /* from and to: the first's */
};

/*
 * Runs RQ against the price book B in zone Z (NULL: UTC; its name should be
 * RQ->tz) into *OUT, the tiers and SKUs checked against the rated catalog
 * CAT (tw_tier_catalog_builtin, loaded once by the caller: the server's,
 * the command's; NULL is TW_EINVAL).  On failure FIELD names the input at
 * fault ("from_tier", "windows[0]", "period", "io") or is "" (a price the
 * book lacks: the message names it), and ERR says what: TW_EINVAL an
 * unknown tier or SKU, a
 * tier of another family than the SKU, no window; TW_EPARSE a window that
 * does not parse (the byte in the message and ERR's column); TW_ENOENT a
 * price the book lacks (never a zero); TW_ERANGE an amount beyond what
 * can be written (field "count" for a total, "io" for the transactions,
 * else "period"), or prices that change more than TW_WHATIF_PIECES_MAX - 1
 * times in the period.
 *
 * Prices are taken by time: the period is cut where the two tiers' items
 * (and the transaction meters') start or end, and each piece is priced by
 * B's items as they stood at its start (tw_pricebook_build as of then), so
 * the cost is the sum over time of the price in effect, and a piece with
 * no price in effect is TW_ENOENT naming its start.
 */
enum tw_err tw_whatif_run(const struct tw_whatif_req *rq, const struct tw_tier_catalog *cat,
                          const struct tw_pricebook *b, const struct tw_tz *z,
                          struct tw_whatif_result *out, char field[TW_WHATIF_FIELD_MAX],
                          struct tw_error *err);

/*
 * The result as the JSON of `savings --json` and of the route: {"currency",
 * "region", "from": {"tier", "sku", "per_month", "meter", "effective_from",
 * "source", "fetched_at"}, "to": {...}, "period": {"from", "to", "tz",
 * "from_utc", "to_utc"}, "windows": [...], "hours_downgraded",
 * "seconds_downgraded", "per_disk": {"saving", "saving_unrounded",
 * "baseline", "baseline_unrounded", "with_plan", "with_plan_unrounded",
 * "transactions", "transactions_unrounded"}, "total": {"disks", "saving",
 * "saving_unrounded", "baseline", "baseline_unrounded"}, "prices": [{"from",
 * "to", "from_per_month", "to_per_month", "from_effective_from",
 * "to_effective_from", "hours_downgraded", "saving_unrounded", "tx_per_10k"
 * (a string, null when the book has no transaction price then), "tx_meter",
 * "transactions_unrounded"}, ...] (one a piece; "from", "to" and
 * calculation.transactions above are the first piece's), "calculation":
 * {...}, "notes": [...]}.  Amounts are decimal strings; per_month prices
 * are strings of their exact text; "hours_downgraded" is a number rounded
 * to 6 decimals (micro-hours), calculation.hours_downgraded the same as a
 * string, "seconds_downgraded" exact.  NULL *OUT with TW_ENOMEM or
 * TW_ERANGE.
 */
enum tw_err tw_whatif_json(const struct tw_whatif_result *r, json_t **out, struct tw_error *err);

/*
 * The price book of REGION and CURRENCY from LEN bytes at BUF, a saved
 * Retail Prices API answer or a pricing/ snapshot, named NAME (its path).
 * Its source says "file NAME (a snapshot)" or "file NAME (a saved Retail
 * Prices API answer, modified FILE_TIME)" (FILE_TIME: the file's time, the
 * caller's to find; "" or NULL: not said); its fetched_at is a snapshot's
 * _fetched_at, else "" (a saved answer carries no time of its own).  NOW
 * (RFC 3339) decides which items are in effect (tw_whatif_run prices by
 * time from the book's items whatever NOW).
 * TW_EPARSE for a file that is not prices (an array of saved pages among
 * them: they must be merged into one {"Items": [...]}), TW_EINVAL for a
 * bad region or currency or one page of a multi-page answer (its
 * NextPageLink set: the other pages' prices would be missing).
 */
enum tw_err tw_whatif_book(const char *buf, size_t len, const char *name, const char *region,
                           const char *currency, const char *file_time, const char *now,
                           struct tw_pricebook **out, struct tw_error *err);

/*
 * Whether B holds a disk price at some time: an item that maps to a price,
 * in effect now or not (expired, not yet in effect, superseded).  A book of
 * only expired items still prices a past period: tw_whatif_run then says
 * which piece of the period has no price in effect, with its date.
 */
bool tw_whatif_book_has_prices(const struct tw_pricebook *b);

#endif

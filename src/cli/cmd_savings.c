/*
 * cmd_savings.c - tierwise savings: the what-if calculator (one SKU move
 * during weekly windows, for one disk and N alike), and the door to the
 * fleet's opportunities (--policy, --month: tw_cli_savings_fleet).
 *
 * The work is src/service/whatif.c's, which POST /api/v1/savings/whatif
 * calls too; this file reads options, finds the prices and the zone, and
 * prints.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/cli.h"
#include "core/pricebook.h"
#include "core/tier.h"
#include "service/prices.h"
#include "service/whatif.h"
#include "store/store.h"

#define MAX_PRICE_FILE (256u << 20) /* a saved answer or a snapshot: pricing-data's 4.5 MB and more */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s savings (--price-file F | --db F) --region R --currency C\n"
            "                --from-tier P10 --to-tier E10 --window \"Sat 00:00-Mon 00:00\"\n"
            "                [--window ...] [--tz ZONE] --period 2026-01-01..2027-01-01\n"
            "                [--count N] [--from-sku S] [--to-sku S]\n"
            "                [--io-per-hour N --io-size BYTES] [--json]\n"
            "       %s savings --db F --policy FILE --month YYYY-MM [--reservations FILE]\n"
            "                [--currency C] [--json | --csv]\n\n"
            "What moving a disk to a cheaper SKU while its VM is deallocated saves.\n\n"
            "The what-if calculator (the first form): one disk of --from-tier moved to\n"
            "--to-tier during the windows, every week of the period, and N disks alike.\n"
            "It prints the hours downgraded, the saving per disk and for N disks, and the\n"
            "calculation: the prices with their source and date, the hours, the formula\n"
            "  saving = (from per month - to per month) x hours / 730 - transactions\n"
            "Amounts are exact until shown, and rounded once, at the end, to the\n"
            "currency's minor unit (half away from zero).\n\n"
            "  --price-file F    the prices: a saved Retail Prices API answer\n"
            "                    ({\"Items\":[...], ...}, every page's items in one; a\n"
            "                    page whose NextPageLink is set is refused) or a pricing/\n"
            "                    snapshot; prices that change within the period (their\n"
            "                    effective dates) price each part by those then in effect\n"
            "  --db F            the prices: the database's book of R and C (prices refresh\n"
            "                    or import), else the bundled snapshot's; the source says which\n"
            "  --region R        Azure region name, e.g. westeurope\n"
            "  --currency C      USD AUD BRL CAD CHF CNY DKK EUR GBP INR JPY KRW NOK NZD RUB\n"
            "                    SEK TWD\n"
            "  --from-tier T     the disk's tier and size: P10 is Premium_LRS, E10\n"
            "                    StandardSSD_LRS, S10 Standard_LRS\n"
            "  --to-tier T       the cheaper tier it moves to during the windows: the step\n"
            "                    of its family that holds the disk's size (P10 -> E10, S10)\n"
            "  --from-sku S      the disk's SKU when not LRS (Premium_ZRS, StandardSSD_ZRS)\n"
            "  --to-sku S        the target's SKU; default: the to-tier's family with the\n"
            "                    disk's redundancy (ZRS stays ZRS)\n"
            "  --window W        a weekly window, \"Sat 00:00-Mon 00:00\" (days Mon..Sun, times\n"
            "                    HH:MM; several in one, comma-separated, or the option\n"
            "                    repeated); overlapping windows count once\n"
            "  --tz ZONE         the windows' and the period's zone (IANA, Europe/London);\n"
            "                    default UTC (an empty ZONE is refused)\n"
            "  --period A..B     the dates, midnights in the zone, the end date excluded\n"
            "                    (2026-01-01..2027-01-01 is the year 2026); windows clipped\n"
            "                    by the period count in part\n"
            "  --count N         disks alike (default 1): the total is the per-disk saving,\n"
            "                    unrounded, times N, rounded once\n"
            "  --io-per-hour N   the VM keeps running on the cheaper SKU during the windows\n"
            "  --io-size BYTES   with N I/Os an hour of BYTES each: their transactions are\n"
            "                    charged (default: none, a deallocated VM does no I/O)\n"
            "  --json            print JSON (the answer of POST /api/v1/savings/whatif)\n\n"
            "The fleet's opportunities (the second form): every disk a policy covers, the\n"
            "windows it would get, its hours, target and saving, and each excluded disk\n"
            "with its reason, for the month M, from the database's disks and power-state\n"
            "history. Its options in full: savings --policy FILE --month M --help.\n\n"
            "  --policy FILE     a policy file (policies/*.json)\n"
            "  --month M         the month, YYYY-MM\n"
            "  --reservations F  reservations held (tierwise.reservations/1)\n"
            "  --csv             print CSV\n" TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 the database failed or out of memory; 2 bad usage or\n"
            "input (an unknown tier, a window or period that does not parse, a zone that\n"
            "does not exist, a price the book lacks, one page of a multi-page answer,\n"
            "a result too large to write for --count or --io-per-hour: the message\n"
            "names it).\n",
            TW_CLI_PROG, TW_CLI_PROG);
}

/* Whether ARGV holds an option of the fleet's form. */
/* Whether ARG ("--name" or "--name=value") names option NAME, in full or
 * abbreviated as getopt_long reads it. */
static bool names_option(const char *arg, const char *name)
{
    if (strncmp(arg, "--", 2) != 0)
        return false;
    const char *a = arg + 2;
    size_t n = strcspn(a, "=");
    return n > 0 && strncmp(a, name, n) == 0;
}

/* The fleet's form is chosen by one of its own options, written in full or
 * abbreviated (getopt_long's rule: "--pol", "--mon") as long as the
 * abbreviation names none of the what-if's options. */
static bool fleet_mode(int argc, char **argv)
{
    static const char *const fleet[] = {"policy", "month", "reservations", "csv"};
    static const char *const whatif[] = {
        "price-file", "db",    "region",      "currency", "from-tier", "to-tier",
        "from-sku",   "to-sku", "window",     "tz",       "period",    "count",
        "io-per-hour", "io-size", "json",     "help",     "quiet",     "verbose",
        "version"};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        for (size_t k = 0; k < sizeof(fleet) / sizeof(fleet[0]); k++) {
            if (!names_option(argv[i], fleet[k]))
                continue;
            size_t n = strcspn(argv[i] + 2, "=");
            if (n == strlen(fleet[k]))
                return true; /* the whole name */
            bool other = false;
            for (size_t w = 0; w < sizeof(whatif) / sizeof(whatif[0]) && !other; w++)
                other = names_option(argv[i], whatif[w]);
            if (!other)
                return true;
        }
    }
    return false;
}

static int fail(enum tw_err rc, const struct tw_error *err)
{
    tw_app_error(TW_CLI_PROG, "%s", err->msg[0] ? err->msg : tw_strerror(rc));
    return tw_app_exit_code(rc);
}

/* NUM ("2154.08", "-3", "2496") with its integer digits grouped by
 * thousands ("2,154.08"). */
static void grouped(const char *num, char *out, size_t cap)
{
    const char *p = num;
    size_t o = 0;
    if (*p == '-' && o + 1 < cap)
        out[o++] = *p++;
    size_t digits = strspn(p, "0123456789");
    for (size_t i = 0; i < digits && o + 2 < cap; i++) {
        out[o++] = p[i];
        size_t left = digits - i - 1;
        if (left > 0 && left % 3 == 0)
            out[o++] = ',';
    }
    snprintf(out + o, cap > o ? cap - o : 0, "%s", p + digits);
}

/* A, rounded to CURRENCY's minor unit or EXACT with 12 decimals, grouped
 * by thousands; false (OUT "") when it can't be written. */
static bool amount(struct tw_amount a, const char *currency, bool exact, char *out, size_t cap)
{
    char s[64];
    struct tw_error e = {0};
    if (exact ? !tw_amount_decimal(a, 12, s, sizeof(s))
              : tw_amount_format(a, currency, s, sizeof(s), &e) != TW_OK) {
        if (cap)
            out[0] = '\0';
        return false;
    }
    grouped(s, out, cap);
    return true;
}

/* N grouped by thousands. */
static void count_text(int64_t n, char *out, size_t cap)
{
    char s[32];
    snprintf(s, sizeof(s), "%lld", (long long)n);
    grouped(s, out, cap);
}

static void print_side(const char *what, const struct tw_whatif_price *p, const char *currency)
{
    char m[TW_MONEY_TEXT_MAX], g[48];
    tw_money_text(p->per_month, m, sizeof(m));
    grouped(m, g, sizeof(g));
    printf("  %-5s %-4s %-16s %10s %s a month (%s%s%s)\n", what, p->tier, p->sku, g, currency,
           p->meter[0] ? p->meter : "meter unknown", p->effective_from[0] ? ", effective from " : "",
           p->effective_from);
}

static int print_text(const struct tw_whatif_result *r)
{
    const char *cur = r->currency;
    char hours[48], hg[64], s1[96], s2[96], s3[96], s4[96], s5[96];
    char fromd[16], tod[16];
    int64_t y;
    int mo, d;
    tw_civil_from_days(r->from_day, &y, &mo, &d);
    snprintf(fromd, sizeof(fromd), "%04d-%02d-%02d", (int)y, mo, d);
    tw_civil_from_days(r->to_day, &y, &mo, &d);
    snprintf(tod, sizeof(tod), "%04d-%02d-%02d", (int)y, mo, d);
    char wins[TW_WINDOWS_MAX * 24];
    if (!tw_windows_format(&r->windows, wins, sizeof(wins)))
        snprintf(wins, sizeof(wins), "%zu windows", r->windows.n);
    /* Every figure is checked before a line is printed: tw_whatif_run
     * refuses what can't be written, so this is a last guard. */
    const struct tw_amount all[] = {r->saving,   r->total_saving, r->tx_cost,
                                    r->baseline, r->with_plan,    r->total_baseline};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!amount(all[i], cur, false, s1, sizeof(s1)) || !amount(all[i], cur, true, s1, sizeof(s1))) {
            tw_app_error(TW_CLI_PROG, "an amount of the result can't be written (out of range)");
            return TW_EXIT_FAIL;
        }
    if (!tw_hours_decimal(r->downgraded_ns, hours, sizeof(hours))) {
        tw_app_error(TW_CLI_PROG, "the hours downgraded can't be written (out of range)");
        return TW_EXIT_FAIL;
    }
    grouped(hours, hg, sizeof(hg));
    char cnt[32];
    count_text(r->count, cnt, sizeof(cnt));
    printf("%s %s: %s %s -> %s %s during %s (%s), %s..%s\n", r->region, cur, r->from.tier,
           r->from.sku, r->to.tier, r->to.sku, wins, r->tz, fromd, tod);
    printf("hours downgraded: %s hours (%zu span%s)\n", hg, r->n_spans, r->n_spans == 1 ? "" : "s");
    amount(r->saving, cur, false, s1, sizeof(s1));
    printf("saving per disk: %s %s\n", s1, cur);
    amount(r->total_saving, cur, false, s2, sizeof(s2));
    printf("saving for %s disk%s: %s %s\n", cnt, r->count == 1 ? "" : "s", s2, cur);
    printf("\ncalculation\n");
    print_side("from", &r->from, cur);
    print_side("to", &r->to, cur);
    printf("  prices: %s, fetched_at %s\n", r->source, r->fetched_at[0] ? r->fetched_at : "unknown");
    char fm[TW_MONEY_TEXT_MAX], tm[TW_MONEY_TEXT_MAX];
    tw_money_text(r->from.per_month, fm, sizeof(fm));
    tw_money_text(r->to.per_month, tm, sizeof(tm));
    if (r->tx_cost.num == 0)
        snprintf(s3, sizeof(s3), "0");
    else
        amount(r->tx_cost, cur, true, s3, sizeof(s3));
    amount(r->saving, cur, true, s1, sizeof(s1));
    if (r->n_pieces <= 1) {
        printf("  saving per disk = (%s - %s) x %s h / %d h - %s transactions\n", fm, tm, hg,
               TW_BILL_HOURS_PER_MONTH, s3);
    } else {
        /* The prices change within the period: a term a part. */
        printf("  saving per disk = sum over the %zu parts of (from - to) x hours / %d h - %s "
               "transactions\n",
               r->n_pieces, TW_BILL_HOURS_PER_MONTH, s3);
        for (size_t k = 0; k < r->n_pieces; k++) {
            const struct tw_whatif_piece *pc = &r->pieces[k];
            char a[48], b[48], ph[48], phg[64];
            if (!tw_rfc3339_format_ns(pc->from_ns, 0, pc->from_ns % TW_NS_PER_S ? 9 : 0, a,
                                      sizeof(a)))
                a[0] = '\0';
            if (!tw_rfc3339_format_ns(pc->to_ns, 0, pc->to_ns % TW_NS_PER_S ? 9 : 0, b, sizeof(b)))
                b[0] = '\0';
            if (!tw_hours_decimal(pc->downgraded_ns, ph, sizeof(ph)))
                ph[0] = '\0';
            grouped(ph, phg, sizeof(phg));
            tw_money_text(pc->from_per_month, fm, sizeof(fm));
            tw_money_text(pc->to_per_month, tm, sizeof(tm));
            char tx10k[TW_MONEY_TEXT_MAX], ptx[96];
            if (pc->tx_cost.num == 0)
                snprintf(ptx, sizeof(ptx), "0");
            else
                amount(pc->tx_cost, cur, true, ptx, sizeof(ptx));
            if (pc->tx_priced)
                printf("    %s..%s: (%s - %s) x %s h / %d h - %s transactions (%s %s per 10,000, "
                       "%s)\n",
                       a, b, fm, tm, phg, TW_BILL_HOURS_PER_MONTH, ptx,
                       tw_money_text(pc->tx_per_10k, tx10k, sizeof(tx10k)), cur,
                       pc->tx_meter[0] ? pc->tx_meter : "no meter");
            else
                printf("    %s..%s: (%s - %s) x %s h / %d h - %s transactions (no transaction "
                       "price in the book then)\n",
                       a, b, fm, tm, phg, TW_BILL_HOURS_PER_MONTH, ptx);
        }
    }
    printf("                  = %s %s (unrounded)\n", s1, cur);
    amount(r->total_saving, cur, true, s2, sizeof(s2));
    printf("  for %s disk%s     = %s x %s = %s %s (unrounded)\n", cnt,
           r->count == 1 ? " " : "s", s1, cnt, s2, cur);
    amount(r->saving, cur, false, s4, sizeof(s4));
    amount(r->total_saving, cur, false, s5, sizeof(s5));
    int dec = tw_currency_decimals(cur);
    printf("  rounded once, at the end, to %d decimal%s, half away from zero: %s and %s %s\n", dec,
           dec == 1 ? "" : "s", s4, s5, cur);
    amount(r->baseline, cur, false, s3, sizeof(s3));
    amount(r->with_plan, cur, false, s4, sizeof(s4));
    printf("  the period per disk: %s %s at %s, %s %s with the move\n", s3, cur, r->from.tier, s4,
           cur);
    if (r->n_notes)
        printf("\nnotes\n");
    for (size_t i = 0; i < r->n_notes; i++)
        printf("  - %s\n", r->notes[i]);
    return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
}

static int print_json(const struct tw_whatif_result *r)
{
    struct tw_error err = {0};
    json_t *j = NULL;
    enum tw_err rc = tw_whatif_json(r, &j, &err);
    if (rc != TW_OK)
        return fail(rc, &err);
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    json_decref(j);
    if (!s) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    puts(s);
    free(s);
    return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
}

/* A whole number from LO to HI for option NAME. */
static bool number(const char *name, const char *v, long long lo, long long hi, int64_t *out)
{
    char *end;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        tw_app_error(TW_CLI_PROG, "--%s %s is not a whole number from %lld to %lld", name, v, lo,
                     hi);
        return false;
    }
    *out = n;
    return true;
}

/* Copies V into DST (CAP bytes) for option NAME; false when too long. */
static bool text(const char *name, const char *v, char *dst, size_t cap)
{
    if (strlen(v) >= cap) {
        tw_app_error(TW_CLI_PROG, "--%s \"%.40s...\" is too long (at most %zu bytes)", name, v,
                     cap - 1);
        return false;
    }
    memcpy(dst, v, strlen(v) + 1);
    return true;
}

/* The book from --price-file or --db. */
static enum tw_err load_book(const char *price_file, const char *db, const struct tw_whatif_req *rq,
                             struct tw_pricebook **b, struct tw_error *err)
{
    char now[32];
    tw_svc_prices_now(now);
    if (price_file) {
        struct stat ds;
        if (strcmp(price_file, "-") != 0 && stat(price_file, &ds) == 0 && S_ISDIR(ds.st_mode))
            return tw_error_set(err, TW_EINVAL,
                                "--price-file %s is a directory: give a file, a saved Retail "
                                "Prices API answer or a pricing/ snapshot",
                                price_file);
        struct tw_buf in;
        tw_buf_init(&in, MAX_PRICE_FILE);
        enum tw_err rc = tw_app_read_file(price_file, &in, err);
        if (rc == TW_OK) {
            char mtime[32] = "";
            struct stat sb;
            if (strcmp(price_file, "-") != 0 && stat(price_file, &sb) == 0 &&
                !tw_rfc3339_format((int64_t)sb.st_mtime, mtime, sizeof(mtime)))
                mtime[0] = '\0';
            rc = tw_whatif_book(in.data ? in.data : "", in.len, price_file, rq->region,
                                rq->currency, mtime, now, b, err);
        }
        tw_buf_cleanup(&in);
        return rc;
    }
    if (!tw_store_location_is_pg(db, strlen(db)) && access(db, F_OK) != 0)
        return tw_error_set(err, TW_ENOENT,
                            "database %s does not exist; create it with prices refresh or import, "
                            "or give --price-file",
                            db);
    struct tw_store *st = NULL;
    enum tw_err rc = tw_store_open(db, &st, err);
    if (rc == TW_OK)
        rc = tw_svc_prices_load(st, rq->region, rq->currency, b, err);
    tw_store_close(st);
    if (rc == TW_OK && !tw_whatif_book_has_prices(*b)) {
        struct tw_error e = {0};
        char reg[48], cur[4];
        if (tw_svc_prices_key(rq->region, rq->currency, reg, cur, &e) == TW_OK)
            tw_svc_prices_no_book(reg, cur, &e);
        tw_pricebook_free(*b);
        *b = NULL;
        return tw_error_set(err, TW_ENOENT, "%s (database %s)", e.msg, db);
    }
    return rc;
}

int tw_cli_cmd_savings(int argc, char **argv)
{
    if (fleet_mode(argc, argv))
        return tw_cli_savings_fleet(argc, argv);
    enum {
        O_PRICE_FILE = 0x100,
        O_DB,
        O_REGION,
        O_CURRENCY,
        O_FROM_TIER,
        O_TO_TIER,
        O_FROM_SKU,
        O_TO_SKU,
        O_WINDOW,
        O_TZ,
        O_PERIOD,
        O_COUNT,
        O_IO_PER_HOUR,
        O_IO_SIZE,
        O_JSON
    };
    static const struct option lopts[] = {
        {"price-file", required_argument, NULL, O_PRICE_FILE},
        {"db", required_argument, NULL, O_DB},
        {"region", required_argument, NULL, O_REGION},
        {"currency", required_argument, NULL, O_CURRENCY},
        {"from-tier", required_argument, NULL, O_FROM_TIER},
        {"to-tier", required_argument, NULL, O_TO_TIER},
        {"from-sku", required_argument, NULL, O_FROM_SKU},
        {"to-sku", required_argument, NULL, O_TO_SKU},
        {"window", required_argument, NULL, O_WINDOW},
        {"tz", required_argument, NULL, O_TZ},
        {"period", required_argument, NULL, O_PERIOD},
        {"count", required_argument, NULL, O_COUNT},
        {"io-per-hour", required_argument, NULL, O_IO_PER_HOUR},
        {"io-size", required_argument, NULL, O_IO_SIZE},
        {"json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    struct tw_whatif_req *rq = malloc(sizeof(*rq));
    if (!rq) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    tw_whatif_req_init(rq);
    const char *price_file = NULL, *db = NULL, *period = NULL;
    bool json = false, have_io = false, have_size = false;
    int status = TW_EXIT_USAGE, c;
    struct tw_error err = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", lopts, NULL)) != -1) {
        switch (c) {
        case O_PRICE_FILE: price_file = optarg; break;
        case O_DB: db = optarg; break;
        case O_REGION:
            if (!text("region", optarg, rq->region, sizeof(rq->region)))
                goto out;
            break;
        case O_CURRENCY:
            if (!text("currency", optarg, rq->currency, sizeof(rq->currency)))
                goto out;
            break;
        case O_FROM_TIER:
            if (!text("from-tier", optarg, rq->from_tier, sizeof(rq->from_tier)))
                goto out;
            break;
        case O_TO_TIER:
            if (!text("to-tier", optarg, rq->to_tier, sizeof(rq->to_tier)))
                goto out;
            break;
        case O_FROM_SKU:
            if (!text("from-sku", optarg, rq->from_sku, sizeof(rq->from_sku)))
                goto out;
            break;
        case O_TO_SKU:
            if (!text("to-sku", optarg, rq->to_sku, sizeof(rq->to_sku)))
                goto out;
            break;
        case O_WINDOW:
            if (rq->n_windows >= TW_WINDOWS_MAX) {
                tw_app_error(TW_CLI_PROG, "at most %d --window options", TW_WINDOWS_MAX);
                goto out;
            }
            if (!text("window", optarg, rq->window[rq->n_windows], TW_WHATIF_WINDOW_TEXT_MAX))
                goto out;
            rq->n_windows++;
            break;
        case O_TZ:
            if (!optarg[0]) {
                tw_app_error(TW_CLI_PROG, "--tz \"\" names no zone: give an IANA zone such as "
                                          "Europe/London, or leave --tz out for UTC");
                goto out;
            }
            if (!text("tz", optarg, rq->tz, sizeof(rq->tz)))
                goto out;
            break;
        case O_PERIOD: period = optarg; break;
        case O_COUNT:
            if (!number("count", optarg, 1, TW_WHATIF_COUNT_MAX, &rq->count))
                goto out;
            break;
        case O_IO_PER_HOUR:
            if (!number("io-per-hour", optarg, 0, 100000000000LL, &rq->io.ios_per_hour))
                goto out;
            have_io = true;
            break;
        case O_IO_SIZE:
            if (!number("io-size", optarg, 1, 1LL << 30, &rq->io.io_bytes))
                goto out;
            have_size = true;
            break;
        case O_JSON: json = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION:
            free(rq);
            return tw_app_print_version(TW_CLI_PROG);
        case 'h':
            usage(stdout);
            status = TW_EXIT_OK;
            goto out;
        default: usage(stderr); goto out;
        }
    }
    if (optind != argc) {
        tw_app_error(TW_CLI_PROG, "savings: unexpected argument \"%s\"; see savings --help",
                     argv[optind]);
        goto out;
    }
    if (!price_file == !db) {
        tw_app_error(TW_CLI_PROG, price_file ? "savings takes --price-file or --db, not both"
                                             : "savings needs the prices: --price-file F (a saved "
                                               "Retail Prices answer or a pricing/ snapshot) or "
                                               "--db F");
        goto out;
    }
    static const char *const need[] = {"--region R", "--currency C", "--from-tier T",
                                       "--to-tier T"};
    const char *have[] = {rq->region, rq->currency, rq->from_tier, rq->to_tier};
    for (size_t i = 0; i < 4; i++)
        if (!have[i][0]) {
            tw_app_error(TW_CLI_PROG,
                         "savings needs %s (e.g. --region westeurope --currency GBP "
                         "--from-tier P10 --to-tier E10)",
                         need[i]);
            goto out;
        }
    if (!rq->n_windows) {
        tw_app_error(TW_CLI_PROG, "savings needs at least one --window, such as --window \"Sat "
                                  "00:00-Mon 00:00\"");
        goto out;
    }
    if (!period) {
        tw_app_error(TW_CLI_PROG, "savings needs --period A..B, such as --period "
                                  "2026-01-01..2027-01-01 (the end date excluded)");
        goto out;
    }
    if (have_io != have_size) {
        tw_app_error(TW_CLI_PROG, "--io-per-hour and --io-size go together: a running VM's I/O "
                                  "rate and the size of its I/Os");
        goto out;
    }
    rq->io_set = have_io;
    enum tw_err rc = tw_whatif_period_parse(period, strlen(period), rq, &err);
    if (rc != TW_OK) {
        status = fail(rc, &err);
        goto out;
    }
    struct tw_tz *z = NULL;
    if (rq->tz[0] && (rc = tw_tz_load(rq->tz, &z, &err)) != TW_OK) {
        tw_app_error(TW_CLI_PROG, "--tz %s: %s", rq->tz, err.msg);
        status = tw_app_exit_code(rc);
        goto out;
    }
    struct tw_pricebook *b = NULL;
    if ((rc = load_book(price_file, db, rq, &b, &err)) != TW_OK) {
        tw_tz_free(z);
        status = fail(rc, &err);
        goto out;
    }
    tw_app_detail(TW_CLI_PROG, "savings: prices from %s (fetched_at %s)", b->source,
                  b->fetched_at[0] ? b->fetched_at : "unknown");
    struct tw_whatif_result *r = malloc(sizeof(*r));
    struct tw_tier_catalog cat = {0};
    char field[TW_WHATIF_FIELD_MAX];
    rc = r ? tw_tier_catalog_builtin(&cat, &err) : tw_error_set(&err, TW_ENOMEM, "out of memory");
    if (rc == TW_OK)
        rc = tw_whatif_run(rq, &cat, b, z, r, field, &err);
    tw_tier_catalog_cleanup(&cat);
    tw_pricebook_free(b);
    tw_tz_free(z);
    if (rc != TW_OK)
        status = fail(rc, &err);
    else
        status = json ? print_json(r) : print_text(r);
    free(r);
out:
    free(rq);
    return status;
}

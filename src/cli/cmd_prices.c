/*
 * cmd_prices.c - tierwise prices: refresh a region's disk prices from the
 * Azure Retail Prices API into the database, import a saved answer or a
 * snapshot, show a price book, and time lookups (the benchmark).
 *
 * The work is done by src/service/prices.c, which the REST handlers call
 * too; this file reads options and prints.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "azure/endpoints.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "core/pricebook.h"
#include "service/prices.h"
#include "store/store.h"

#define MAX_IMPORT (256u << 20) /* an import file: pricing-data's 4.5 MB and far more */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s prices refresh --db FILE --region R --currency C [--prices-url URL]\n"
            "                         [--config FILE] [--json]\n"
            "       %s prices show [--db FILE] --region R --currency C [--tier P10 | --sku S]\n"
            "                      [--json | --csv]\n"
            "       %s prices import --db FILE [--partial] [--json] FILE\n"
            "       %s prices bench --region R --currency C [--db FILE] [--lookups N] [--json]\n\n"
            "Managed-disk prices from the Azure Retail Prices API, kept per region and\n"
            "currency in the database. Without refreshed prices, the bundled snapshot\n"
            "(%s: real captured prices, every region's monthly tier prices\n"
            "in USD) is used, and \"source\" says so.\n\n"
            "  refresh   fetch every page of R's disk prices in C and replace the stored\n"
            "            book in one transaction (left as it was on any failure)\n"
            "  show      print the book of R and C: the database's, else the snapshot's\n"
            "  import    store a saved API answer or a snapshot file (one book per region\n"
            "            and currency it holds); one page of a multi-page answer (its\n"
            "            NextPageLink set) is refused unless --partial\n"
            "  bench     build the book of R and C and time N lookups (default 1,000,000)\n\n"
            "  --db DB           the tierwise database: a SQLite file or a PostgreSQL\n"
            "                    connection string (postgresql://...)\n"
            "  --region R        Azure region name, e.g. westeurope\n"
            "  --currency C      USD AUD BRL CAD CHF CNY DKK EUR GBP INR JPY KRW NOK NZD RUB\n"
            "                    SEK TWD\n"
            "  --tier T          show only tier T (P10, E15, S4 ...)\n"
            "  --sku S           show only tier S or SKU S (Premium_LRS)\n"
            "  --partial         import: store one page of a multi-page answer anyway (the\n"
            "                    book then holds that page only, and its source says so)\n"
            "  --prices-url URL  the Retail Prices endpoint (else TIERWISE_PRICES_URL, the\n"
            "                    config file's prices_url, https://prices.azure.com)\n"
            "  --config FILE     the config file (else TIERWISE_CONFIG)\n"
            "  --lookups N       bench: lookups to time\n"
            "  --json            print JSON\n"
            "  --csv             show: the prices as CSV (RFC 4180, a header row, CRLF):\n"
            "                    region,currency,tier,sku,redundancy,per_month,\n"
            "                    per_10k_transactions,shared_mount_per_month,per_gib_hour,\n"
            "                    per_iops_hour,per_mbps_hour,source,fetched_at\n"
            TW_CLI_SAY_HELP
            "                    (refresh -v: where the endpoint came from; -q: no note of\n"
            "                    a page fetched with $skip)\n"
            "  -h, --help        this text\n\n"
            "Exit status: 0 done; 1 the API or the database failed (network, a bad page, a\n"
            "link off the endpoint, a loop of links), out of memory; 2 bad usage or input\n"
            "(a bad region or currency, a file that is not prices, a price the book lacks).\n",
            TW_CLI_PROG, TW_CLI_PROG, TW_CLI_PROG, TW_CLI_PROG, TW_PB_SNAPSHOT_NAME);
}

struct opts {
    const char *db, *region, *currency, *sku, *config;
    const char *prices_url;
    long lookups;
    bool json, csv, partial, tier;
};

static void log_line(void *arg, const char *line)
{
    (void)arg;
    tw_app_note(TW_CLI_PROG, "%s", line);
}

static int fail(enum tw_err rc, const struct tw_error *err, bool upstream)
{
    tw_app_error(TW_CLI_PROG, "%s", err->msg[0] ? err->msg : tw_strerror(rc));
    /* A bad page, a refused link or a loop is the API's fault, not the
     * user's input: the work failed. */
    if (upstream && (rc == TW_EPARSE || rc == TW_EPERM || rc == TW_EIO))
        return TW_EXIT_FAIL;
    return tw_app_exit_code(rc);
}

static int print_json(json_t *o)
{
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    if (!s) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    puts(s);
    free(s);
    return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
}

/* Opens an existing database: show and bench must not create one. */
static enum tw_err open_db(const char *path, bool must_exist, struct tw_store **st,
                           struct tw_error *err)
{
    if (must_exist && access(path, F_OK) != 0)
        return tw_error_set(err, TW_ENOENT,
                            "database %s does not exist; create it with prices refresh or "
                            "import, or leave --db out to see the bundled snapshot",
                            path);
    return tw_store_open(path, st, err);
}

static int cmd_refresh(const struct opts *o)
{
    struct tw_error err = {0};
    struct tw_az_ep_args args = {.only = 1u << TW_AZ_EP_PRICES, .config_path = o->config};
    args.url[TW_AZ_EP_PRICES] = o->prices_url;
    struct tw_az_endpoints ep;
    enum tw_err rc = tw_az_endpoints_resolve(&args, &ep, &err);
    if (rc != TW_OK)
        return fail(rc, &err, false);
    tw_app_detail(TW_CLI_PROG, "prices refresh: Retail Prices endpoint %s (from %s), database %s",
                  ep.url[TW_AZ_EP_PRICES], tw_az_ep_source_name(&ep, TW_AZ_EP_PRICES),
                  o->db);
    char reg[48], cur[4];
    if ((rc = tw_svc_prices_key(o->region, o->currency, reg, cur, &err)) != TW_OK)
        return fail(rc, &err, false);
    struct tw_store *st = NULL;
    if ((rc = tw_store_open(o->db, &st, &err)) != TW_OK)
        return fail(rc, &err, false);
    struct tw_svc_refresh rq = {
        .prices_url = ep.url[TW_AZ_EP_PRICES], .region = reg, .currency = cur, .log = log_line};
    struct tw_svc_refresh_result res;
    rc = tw_svc_prices_refresh(st, &rq, &res, &err);
    tw_store_close(st);
    if (rc != TW_OK)
        return fail(rc, &err, true);
    const struct tw_az_prices_stats *f = &res.fetch;
    if (!o->json) {
        printf("%s %s: %zu items, %zu prices from %s (%d pages, %zu bytes, %.3f s), stored at "
               "%s\n",
               reg, cur, res.items, res.prices, ep.url[TW_AZ_EP_PRICES], f->pages, f->bytes,
               f->total_s, res.fetched_at);
        return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
    }
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:i, s:i, s:i, s:I, s:I, s:f, s:f, s:f}",
                  "region", reg, "currency", cur, "source", res.source, "fetched_at",
                  res.fetched_at, "items", (json_int_t)res.items, "prices", (json_int_t)res.prices,
                  "pages", f->pages, "skip_fallbacks", f->skip_fallbacks, "attempts", f->attempts,
                  "waited_ms", (json_int_t)f->waited_ms, "bytes", (json_int_t)f->bytes, "seconds",
                  f->total_s, "parse_seconds", f->parse_s, "parse_mb_per_s",
                  f->parse_s > 0 ? (double)f->bytes / 1e6 / f->parse_s : 0.0);
    if (!j) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    int status = print_json(j);
    json_decref(j);
    return status;
}

static int cmd_import(const struct opts *o, const char *file)
{
    struct tw_error err = {0};
    struct tw_buf in;
    tw_buf_init(&in, MAX_IMPORT);
    enum tw_err rc = tw_app_read_file(file, &in, &err);
    if (rc != TW_OK) {
        tw_buf_cleanup(&in);
        return fail(rc, &err, false);
    }
    struct tw_store *st = NULL;
    struct tw_svc_refresh_result res;
    if ((rc = tw_store_open(o->db, &st, &err)) == TW_OK)
        rc = tw_svc_prices_import_opt(st, in.data ? in.data : "", in.len, file, o->partial, &res,
                                      &err);
    tw_store_close(st);
    tw_buf_cleanup(&in);
    if (rc != TW_OK)
        return fail(rc, &err, false);
    if (res.partial)
        tw_app_note(TW_CLI_PROG,
                    "note: %s is one page of a multi-page answer (--partial): the book now "
                    "holds that page's prices only",
                    file);
    if (!o->json) {
        printf("%s: %zu items into %zu price books (%zu prices), source \"%s\", fetched_at %s\n",
               file, res.items, res.books, res.prices, res.source, res.fetched_at);
        return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
    }
    json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:s, s:s, s:b}", "file", file, "items",
                          (json_int_t)res.items, "books", (json_int_t)res.books, "prices",
                          (json_int_t)res.prices, "source", res.source, "fetched_at",
                          res.fetched_at, "partial", res.partial);
    if (!j) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    int status = print_json(j);
    json_decref(j);
    return status;
}

static void print_price(double v, const char *unit)
{
    if (v != v)
        printf("  %-24s", "-");
    else {
        char s[48];
        snprintf(s, sizeof(s), "%.10g%s", v, unit);
        printf("  %-24s", s);
    }
}


static void print_text(const json_t *j)
{
    printf("prices %s %s, source: %s, fetched_at: %s\n",
           json_string_value(json_object_get(j, "region")),
           json_string_value(json_object_get(j, "currency")),
           json_string_value(json_object_get(j, "source")),
           json_string_value(json_object_get(j, "fetched_at")));
    size_t i;
    const json_t *r;
    const json_t *prices = json_object_get(j, "prices");
    if (json_array_size(prices))
        printf("%-5s %-16s  %-24s  %-24s  %-24s\n", "tier", "sku", "per month",
               "per 10,000 transactions", "shared disk, per VM month");
    json_array_foreach(prices, i, r)
    {
        printf("%-5s %-16s", json_string_value(json_object_get(r, "tier")),
               json_string_value(json_object_get(r, "sku")));
        print_price(tw_cli_num_or_nan(json_object_get(r, "per_month")), "");
        print_price(tw_cli_num_or_nan(json_object_get(r, "per_10k_transactions")), "");
        print_price(tw_cli_num_or_nan(json_object_get(r, "shared_mount_per_month")), "");
        printf("\n");
    }
    json_array_foreach(json_object_get(j, "provisioned"), i, r)
    {
        printf("%-22s", json_string_value(json_object_get(r, "sku")));
        print_price(tw_cli_num_or_nan(json_object_get(r, "per_gib_hour")), " /GiB/h");
        print_price(tw_cli_num_or_nan(json_object_get(r, "per_iops_hour")), " /IOPS/h");
        print_price(tw_cli_num_or_nan(json_object_get(r, "per_mbps_hour")), " /MBps/h");
        printf("\n");
    }
    if (!json_array_size(prices) && !json_array_size(json_object_get(j, "provisioned")))
        printf("no disk prices for this region and currency in this book\n");
    size_t nu = json_array_size(json_object_get(j, "unknown_meters"));
    if (nu)
        printf("%zu meters not used for disk prices (unknown_meters in --json)\n", nu);
}

/* The book as CSV (csv.h): a record per tier price, then one per
 * provisioned SKU (the per-hour columns), source and time on each. */
static void print_csv(const json_t *j)
{
    static const char *const head[] = {
        "region",       "currency",      "tier",          "sku",       "redundancy",
        "per_month",    "per_10k_transactions",           "shared_mount_per_month",
        "per_gib_hour", "per_iops_hour", "per_mbps_hour", "source",    "fetched_at"};
    const char *region = json_string_value(json_object_get(j, "region"));
    const char *currency = json_string_value(json_object_get(j, "currency"));
    const char *source = json_string_value(json_object_get(j, "source"));
    const char *fetched = json_string_value(json_object_get(j, "fetched_at"));
    double nan = 0.0 / 0.0;
    tw_cli_csv_row(stdout, head, sizeof(head) / sizeof(head[0]));
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(j, "prices"), i, r)
    {
        tw_cli_csv_field(stdout, region, 0);
        tw_cli_csv_field(stdout, currency, 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(r, "tier")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(r, "sku")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(r, "redundancy")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "per_month")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "per_10k_transactions")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "shared_mount_per_month")), 0);
        for (int k = 0; k < 3; k++)
            tw_cli_csv_num(stdout, nan, 0);
        tw_cli_csv_field(stdout, source, 0);
        tw_cli_csv_field(stdout, fetched, 1);
    }
    json_array_foreach(json_object_get(j, "provisioned"), i, r)
    {
        tw_cli_csv_field(stdout, region, 0);
        tw_cli_csv_field(stdout, currency, 0);
        tw_cli_csv_field(stdout, "", 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(r, "sku")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(r, "redundancy")), 0);
        for (int k = 0; k < 3; k++)
            tw_cli_csv_num(stdout, nan, 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "per_gib_hour")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "per_iops_hour")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "per_mbps_hour")), 0);
        tw_cli_csv_field(stdout, source, 0);
        tw_cli_csv_field(stdout, fetched, 1);
    }
}

static int cmd_show(const struct opts *o)
{
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    enum tw_err rc = TW_OK;
    if (o->db && (rc = open_db(o->db, true, &st, &err)) != TW_OK)
        return fail(rc, &err, false);
    json_t *j = NULL;
    rc = tw_svc_prices_show(st, o->region, o->currency, o->sku, &j, &err);
    tw_store_close(st);
    if (rc != TW_OK)
        return fail(rc, &err, false);
    tw_app_detail(TW_CLI_PROG, "prices show: the book of %s",
                  json_string_value(json_object_get(j, "source")));
    /* A book with nothing in it answers nothing a person asked: say why
     * (a region typo, or a currency never fetched) instead of an empty
     * table.  The JSON is the document as the API serves it. */
    if (!o->json && !json_array_size(json_object_get(j, "prices")) &&
        !json_array_size(json_object_get(j, "provisioned")) &&
        !json_array_size(json_object_get(j, "unknown_meters"))) {
        rc = tw_svc_prices_no_book(json_string_value(json_object_get(j, "region")),
                                   json_string_value(json_object_get(j, "currency")), &err);
        json_decref(j);
        return fail(rc, &err, false);
    }
    int status = TW_EXIT_OK;
    if (o->json) {
        status = print_json(j);
    } else if (o->csv) {
        print_csv(j);
        status = fflush(stdout) == 0 && !ferror(stdout) ? TW_EXIT_OK : TW_EXIT_FAIL;
    } else {
        print_text(j);
        status = fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
    }
    json_decref(j);
    return status;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_bench(const struct opts *o)
{
    struct tw_error err = {0};
    struct tw_store *st = NULL;
    enum tw_err rc = TW_OK;
    if (o->db && (rc = open_db(o->db, true, &st, &err)) != TW_OK)
        return fail(rc, &err, false);
    struct tw_pricebook *b = NULL;
    double t0 = now_s();
    rc = tw_svc_prices_load(st, o->region, o->currency, &b, &err);
    double load_s = now_s() - t0;
    tw_store_close(st);
    if (rc != TW_OK)
        return fail(rc, &err, false);
    /* The keys to look up: every price of the book, round robin. */
    size_t nk = 0;
    const struct tw_price_entry **keys = malloc((b->n ? b->n : 1) * sizeof(*keys));
    if (!keys) {
        tw_pricebook_free(b);
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    for (size_t i = 0; i < b->nslots; i++)
        if (b->slots[i].hash)
            keys[nk++] = &b->slots[i];
    if (!nk) {
        free(keys);
        tw_error_set(&err, TW_ENOENT, "the price book of %s %s (%s) holds no price to look up",
                     o->region, o->currency, b->source);
        tw_pricebook_free(b);
        return fail(TW_ENOENT, &err, false);
    }
    /* Copies of the key strings, so the lookups compare real strings and
     * not the table's own pointers. */
    char(*tiers)[8] = malloc(nk * sizeof(*tiers));
    char region[48], currency[4];
    snprintf(region, sizeof(region), "%s", keys[0]->region);
    snprintf(currency, sizeof(currency), "%s", keys[0]->currency);
    if (!tiers) {
        free(keys);
        tw_pricebook_free(b);
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    for (size_t i = 0; i < nk; i++)
        memcpy(tiers[i], keys[i]->tier, sizeof(tiers[i]));
    long found = 0;
    double sum = 0;
    t0 = now_s();
    for (long i = 0; i < o->lookups; i++) {
        size_t k = (size_t)i % nk;
        const struct tw_price_entry *e = tw_pricebook_find(
            b, region, currency, (enum tw_sku_family)keys[k]->family, tiers[k],
            (enum tw_sku_redundancy)keys[k]->redundancy, (enum tw_pb_kind)keys[k]->kind);
        if (e) {
            found++;
            sum += tw_money_to_double(e->price);
        }
    }
    double look_s = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    size_t items = b->items.n, prices = b->n;
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:I, s:I, s:f, s:f, s:I, s:f}", "region", region,
                  "currency", currency, "source", b->source, "items", (json_int_t)items, "prices",
                  (json_int_t)prices, "load_seconds", load_s, "lookups", (json_int_t)o->lookups,
                  "found", (json_int_t)found, "lookup_seconds", look_s, "lookups_per_s",
                  look_s > 0 ? (double)o->lookups / look_s : 0.0, "max_rss_kib",
                  (json_int_t)ru.ru_maxrss, "checksum", sum);
    free(keys);
    free(tiers);
    tw_pricebook_free(b);
    if (!j) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        return TW_EXIT_FAIL;
    }
    int status;
    if (o->json) {
        status = print_json(j);
    } else {
        printf("%ld lookups in %.3f s: %.0f lookups/s (%zu prices, book built in %.3f s, max "
               "RSS %ld KiB)\n",
               o->lookups, look_s, look_s > 0 ? (double)o->lookups / look_s : 0.0, prices, load_s,
               (long)ru.ru_maxrss);
        status = fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
    }
    json_decref(j);
    return status;
}

int tw_cli_cmd_prices(int argc, char **argv)
{
    static const struct option lopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"region", required_argument, NULL, 'r'},
        {"currency", required_argument, NULL, 'c'},
        {"sku", required_argument, NULL, 's'},
        {"prices-url", required_argument, NULL, 'u'},
        {"config", required_argument, NULL, 'C'},
        {"lookups", required_argument, NULL, 'n'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'x'},
        {"tier", required_argument, NULL, 't'},
        {"partial", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    if (argc < 2) {
        tw_app_error(TW_CLI_PROG, "prices needs refresh, show, import or bench; see prices "
                                  "--help");
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage(stdout);
        return TW_EXIT_OK;
    }
    if (strcmp(sub, "refresh") != 0 && strcmp(sub, "show") != 0 && strcmp(sub, "import") != 0 &&
        strcmp(sub, "bench") != 0) {
        tw_app_error(TW_CLI_PROG,
                     "prices: unknown subcommand \"%s\"; use refresh, show, "
                     "import or bench",
                     sub);
        return TW_EXIT_USAGE;
    }
    struct opts o = {.lookups = 1000000};
    int c;
    optind = 2;
    while ((c = getopt_long(argc, argv, "hqv", lopts, NULL)) != -1) {
        switch (c) {
        case 'd': o.db = optarg; break;
        case 'r': o.region = optarg; break;
        case 'c': o.currency = optarg; break;
        case 's':
        case 't':
            if (o.sku) {
                tw_app_error(TW_CLI_PROG, "prices show takes one --tier or --sku");
                return TW_EXIT_USAGE;
            }
            o.sku = optarg;
            o.tier = c == 't';
            break;
        case 'x': o.csv = true; break;
        case 'P': o.partial = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'u': o.prices_url = optarg; break;
        case 'C': o.config = optarg; break;
        case 'j': o.json = true; break;
        case 'n': {
            char *end;
            o.lookups = strtol(optarg, &end, 10);
            if (!*optarg || *end || o.lookups < 1 || o.lookups > 1000000000L) {
                tw_app_error(TW_CLI_PROG, "--lookups %s is not a count from 1 to 1000000000",
                             optarg);
                return TW_EXIT_USAGE;
            }
            break;
        }
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    bool import = strcmp(sub, "import") == 0;
    if (import ? optind != argc - 1 : optind != argc) {
        tw_app_error(TW_CLI_PROG,
                     import ? "prices import takes one FILE; see prices --help"
                            : "prices %s: unexpected argument \"%s\"",
                     sub, optind < argc ? argv[optind] : "");
        return TW_EXIT_USAGE;
    }
    bool needs_db = import || strcmp(sub, "refresh") == 0;
    if (needs_db && !o.db) {
        tw_app_error(TW_CLI_PROG, "prices %s needs --db FILE", sub);
        return TW_EXIT_USAGE;
    }
    if (!import && (!o.region || !o.currency)) {
        tw_app_error(TW_CLI_PROG,
                     "prices %s needs --region R and --currency C (e.g. --region "
                     "westeurope --currency USD)",
                     sub);
        return TW_EXIT_USAGE;
    }
    if (o.sku && strcmp(sub, "show") != 0) {
        tw_app_error(TW_CLI_PROG, "--%s is for prices show", o.tier ? "tier" : "sku");
        return TW_EXIT_USAGE;
    }
    if (o.tier && strchr(o.sku, '_')) {
        tw_app_error(TW_CLI_PROG,
                     "--tier %s is a SKU name, not a tier: give --sku %s, or a tier such as "
                     "--tier P10",
                     o.sku, o.sku);
        return TW_EXIT_USAGE;
    }
    if (o.csv && (strcmp(sub, "show") != 0 || o.json)) {
        tw_app_error(TW_CLI_PROG, "--csv is for prices show, without --json");
        return TW_EXIT_USAGE;
    }
    if (o.partial && !import) {
        tw_app_error(TW_CLI_PROG, "--partial is for prices import");
        return TW_EXIT_USAGE;
    }
    if (strcmp(sub, "refresh") == 0)
        return cmd_refresh(&o);
    if (import)
        return cmd_import(&o, argv[optind]);
    if (strcmp(sub, "show") == 0)
        return cmd_show(&o);
    return cmd_bench(&o);
}

/*
 * cmd_store.c - tierwise store: moving a backend's database.
 *
 *   tierwise store copy --from LOC --to LOC [--json]
 *
 * copy writes every table of one store into another, empty one (a SQLite
 * file or a PostgreSQL database, either way), reads the target back and
 * compares each table's row count and checksum with the source's
 * (store/store_copy.h); the target is committed only when all agree.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "app/app.h"
#include "cli/cli.h"
#include "store/store_copy.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s store copy --from LOCATION --to LOCATION [--json]\n\n"
            "Copies every table of a tierwise database into another, empty one: a SQLite\n"
            "file to PostgreSQL, PostgreSQL to a SQLite file, or file to file.  Both are\n"
            "first brought to this version's schema.  The source is read in one snapshot;\n"
            "the target is written in one transaction, read back and compared table by\n"
            "table (rows and a checksum of their contents), and committed only when every\n"
            "table agrees: on any failure the target is left empty.  Stop the backends\n"
            "writing to the source first, or the copy is of the moment it started.\n\n"
            "  --from LOCATION  the database to copy: a SQLite file, or a PostgreSQL\n"
            "                   postgresql://HOST/DB URI or \"host=... dbname=...\" string\n"
            "                   (the password in PGPASSFILE or ~/.pgpass, never here)\n"
            "  --to LOCATION    the database to fill: a new SQLite file (created), or an\n"
            "                   empty PostgreSQL database (createdb it first); a database\n"
            "                   holding any row is refused\n"
            "  --json           the tables' figures as a JSON object on stdout\n" TW_CLI_SAY_HELP
            "                    (-q: no summary on stderr; -v: each table as it is copied)\n"
            "  -h, --help       this text\n\n"
            "Exit status: 0 copied and verified; 1 a database failed or a table read back\n"
            "differs (nothing committed); 2 bad usage, the same database twice, or a\n"
            "target that is not empty.\n",
            TW_CLI_PROG);
}

static void progress(void *arg, const struct tw_store_copy_table *t)
{
    (void)arg;
    tw_app_detail(TW_CLI_PROG, "store copy: %s: %" PRId64 " rows, checksum %016" PRIx64, t->name,
                  t->rows, t->checksum);
}

static void print_table(const struct tw_store_copy_result *r)
{
    printf("%-20s %10s  %-16s  %s\n", "TABLE", "ROWS", "SOURCE", "TARGET");
    for (size_t i = 0; i < r->n_tables; i++) {
        const struct tw_store_copy_table *t = &r->tables[i];
        printf("%-20s %10" PRId64 "  %016" PRIx64 "  ", t->name, t->rows, t->checksum);
        if (t->match)
            printf("%016" PRIx64 "  ok\n", t->target_checksum);
        else if (t->target_checksum) /* read back (FNV never sums to 0 from its start) */
            printf("%016" PRIx64 "  DIFFERS (%" PRId64 " rows)\n", t->target_checksum,
                   t->target_rows);
        else
            printf("%-16s  not verified\n", "-");
    }
    printf("%-20s %10" PRId64 "\n", "total", r->rows);
}

static char *result_json(const char *from, const char *to, const struct tw_store_copy_result *r)
{
    json_t *tables = json_array();
    for (size_t i = 0; tables && i < r->n_tables; i++) {
        const struct tw_store_copy_table *t = &r->tables[i];
        char a[17], b[17];
        snprintf(a, sizeof(a), "%016" PRIx64, t->checksum);
        snprintf(b, sizeof(b), "%016" PRIx64, t->target_checksum);
        json_t *o = json_pack("{s:s, s:I, s:s, s:I, s:s, s:b}", "table", t->name, "rows",
                              (json_int_t)t->rows, "checksum", a, "target_rows",
                              (json_int_t)t->target_rows, "target_checksum", b, "match", t->match);
        if (json_array_append_new(tables, o) != 0) {
            json_decref(tables);
            tables = NULL;
        }
    }
    json_t *all =
        tables ? json_pack("{s:s, s:s, s:s, s:o, s:I, s:b, s:I}", "from", from, "to", to,
                           "checksum", "fnv1a-64", "tables", tables, "rows", (json_int_t)r->rows,
                           "verified", r->verified, "elapsed_ms", (json_int_t)r->elapsed_ms)
               : NULL;
    char *s = all ? json_dumps(all, JSON_INDENT(2)) : NULL;
    json_decref(all);
    return s;
}

static int cmd_copy(int argc, char **argv)
{
    static const struct option opts[] = {
        {"from", required_argument, NULL, 'f'},
        {"to", required_argument, NULL, 't'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *from = NULL, *to = NULL;
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
            TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'f': from = optarg; break;
        case 't': to = optarg; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "store copy: unexpected argument \"%s\"", argv[optind]);
        return TW_EXIT_USAGE;
    }
    if (!from || !to || !from[0] || !to[0]) {
        tw_app_error(TW_CLI_PROG, "store copy needs --from LOCATION and --to LOCATION");
        return TW_EXIT_USAGE;
    }
    /* A PostgreSQL location is not repeated before the store has read it:
     * it may carry a secret the store then refuses. */
    tw_app_detail(TW_CLI_PROG, "store copy: from %s to %s",
                  tw_store_location_is_pg(from, strlen(from)) ? "a PostgreSQL database" : from,
                  tw_store_location_is_pg(to, strlen(to)) ? "a PostgreSQL database" : to);
    struct tw_store_copy_result *r = calloc(1, sizeof(*r));
    if (!r) {
        tw_app_error(TW_CLI_PROG, "store copy: out of memory");
        return TW_EXIT_FAIL;
    }
    struct tw_error err = {0};
    enum tw_err rc = tw_store_copy(from, to, r, progress, NULL, &err);
    int status = tw_app_exit_code(rc);
    /* The figures are shown when the copy was read back (a mismatch then
     * says where), never after a failure before that. */
    bool compared = r->n_tables > 0 && r->tables[0].target_checksum != 0;
    if (compared) {
        if (json) {
            char *s = result_json(from, to, r);
            if (s)
                puts(s);
            else {
                tw_app_error(TW_CLI_PROG, "store copy: out of memory");
                status = TW_EXIT_FAIL;
            }
            free(s);
        } else {
            print_table(r);
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
            tw_app_error(TW_CLI_PROG, "store copy: can't write the figures on stdout");
            if (status == TW_EXIT_OK)
                status = TW_EXIT_FAIL;
        }
    }
    if (rc != TW_OK)
        tw_app_error(TW_CLI_PROG, "store copy: %s", err.msg[0] ? err.msg : tw_strerror(rc));
    else
        tw_app_note(TW_CLI_PROG,
                    "store copy: %" PRId64 " rows in %zu tables copied and verified in %.2f s",
                    r->rows, r->n_tables, (double)r->elapsed_ms / 1000.0);
    free(r);
    return status;
}

int tw_cli_cmd_store(int argc, char **argv)
{
    if (argc < 2) {
        tw_app_error(TW_CLI_PROG, "store: which action? the one there is: copy (tierwise store "
                                  "--help)");
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage(stdout);
        return TW_EXIT_OK;
    }
    if (strcmp(sub, "--version") == 0)
        return tw_app_print_version(TW_CLI_PROG);
    if (strcmp(sub, "copy") != 0) {
        tw_app_error(TW_CLI_PROG, "store: unknown action \"%s\"; the one action is copy", sub);
        return TW_EXIT_USAGE;
    }
    return cmd_copy(argc - 1, argv + 1);
}

/*
 * cmd_token.c - tierwise token: the backend's API tokens.
 *
 *   tierwise token create --db F --role agent|reader|admin [--name N]
 *   tierwise token list --db F [--json]
 *   tierwise token revoke --db F ID
 *
 * create prints the new token once on stdout (and nothing else there); the
 * database keeps only its SHA-256, so a lost token can't be shown again:
 * revoke it and make another.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "app/app.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "server/auth.h"
#include "store/store.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s token create --db FILE --role agent|reader|admin [--name NAME]\n"
            "       %s token list --db FILE [--json | --csv]\n"
            "       %s token revoke --db FILE ID\n\n"
            "Manages the API tokens of tierwise serve.  Roles: agent (posts reports only),\n"
            "reader (reads the API and the dashboard), admin (everything).\n\n"
            "  create   makes a random token (\"tw_\" and 43 base64url characters), stores its\n"
            "           SHA-256 and prints the token once on stdout; keep it (it can't be\n"
            "           shown again)\n"
            "  list     id, name, role, creation time and revocation of every token; never\n"
            "           the tokens themselves\n"
            "  revoke   refuses token ID from now on (a running server within 5 s)\n\n"
            "  --db DB       the backend's database: a SQLite file (created if needed) or a\n"
            "                PostgreSQL connection string (postgresql://...)\n"
            "  --role ROLE   agent, reader or admin\n"
            "  --name NAME   a label for the token (e.g. the VM or person it is for)\n"
            "  --json        list as a JSON array\n"
            "  --csv         list as CSV (RFC 4180, a header, CRLF): id,role,name,\n"
            "                created_at,revoked_at (empty when not revoked)\n"
            TW_CLI_SAY_HELP
            "                    (-q: no line on stderr saying what was created or revoked;\n"
            "                    -v: also the database used)\n"
            "  -h, --help    this text\n\n"
            "Exit status: 0 done, 1 the database failed, 2 bad usage or no such token.\n",
            TW_CLI_PROG, TW_CLI_PROG, TW_CLI_PROG);
}

static int fail(enum tw_err rc, const struct tw_error *err)
{
    tw_app_error(TW_CLI_PROG, "token: %s", err->msg[0] ? err->msg : tw_strerror(rc));
    return rc == TW_ENOENT || rc == TW_EINVAL ? TW_EXIT_USAGE : tw_app_exit_code(rc);
}

/* The list as CSV (cli/csv.h): id,role,name,created_at,revoked_at. */
static void print_csv(const struct tw_store_token_row *rows, size_t n)
{
    static const char *const head[] = {"id", "role", "name", "created_at", "revoked_at"};
    tw_cli_csv_row(stdout, head, 5);
    for (size_t i = 0; i < n; i++) {
        char id[24];
        snprintf(id, sizeof(id), "%lld", (long long)rows[i].id);
        const char *f[] = {id, tw_role_name(rows[i].role), rows[i].name, rows[i].created_at,
                           rows[i].revoked_at};
        tw_cli_csv_row(stdout, f, 5);
    }
}

static void print_list(const struct tw_store_token_row *rows, size_t n)
{
    printf("%-6s %-8s %-24s %-22s %s\n", "ID", "ROLE", "NAME", "CREATED", "REVOKED");
    for (size_t i = 0; i < n; i++)
        printf("%-6lld %-8s %-24s %-22s %s\n", (long long)rows[i].id, tw_role_name(rows[i].role),
               rows[i].name[0] ? rows[i].name : "-", rows[i].created_at,
               rows[i].revoked_at[0] ? "yes" : "-");
}

/* `token list --json`: [{"id", "name", "role", "created_at", "revoked",
 * "revoked_at"}]; NULL when out of memory. */
static json_t *list_json(const struct tw_store_token_row *rows, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        const struct tw_store_token_row *t = &rows[i];
        json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:b, s:o}", "id", (json_int_t)t->id, "name",
                              t->name, "role", tw_role_name(t->role), "created_at", t->created_at,
                              "revoked", t->revoked_at[0] != 0, "revoked_at",
                              t->revoked_at[0] ? json_string(t->revoked_at) : json_null());
        if (json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

int tw_cli_cmd_token(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},   {"role", required_argument, NULL, 'r'},
        {"name", required_argument, NULL, 'n'}, {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},       TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    if (argc < 2) {
        usage(stderr);
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        usage(stdout);
        return TW_EXIT_OK;
    }
    if (strcmp(sub, "create") != 0 && strcmp(sub, "list") != 0 && strcmp(sub, "revoke") != 0) {
        tw_app_error(TW_CLI_PROG, "token: unknown action \"%s\"; use create, list or revoke", sub);
        return TW_EXIT_USAGE;
    }
    const char *db = NULL, *role_s = NULL, *name = NULL;
    bool json = false, csv = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc - 1, argv + 1, "hqv", opts, NULL)) != -1) {
        switch (c) {
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'd': db = optarg; break;
        case 'r': role_s = optarg; break;
        case 'n': name = optarg; break;
        case 'j': json = true; break;
        case 'x': csv = true; break;
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    int rest = argc - 1 - optind;
    char **args = argv + 1 + optind;
    bool create = strcmp(sub, "create") == 0, list = strcmp(sub, "list") == 0;
    if (!db) {
        tw_app_error(TW_CLI_PROG, "token %s needs --db FILE", sub);
        return TW_EXIT_USAGE;
    }
    if ((create || list) && rest > 0) {
        tw_app_error(TW_CLI_PROG, "token %s: unexpected argument \"%s\"", sub, args[0]);
        return TW_EXIT_USAGE;
    }
    if (!create && (role_s || name)) {
        tw_app_error(TW_CLI_PROG, "token %s takes no --role or --name", sub);
        return TW_EXIT_USAGE;
    }
    if (!list && (json || csv)) {
        tw_app_error(TW_CLI_PROG, "token %s takes no --json or --csv", sub);
        return TW_EXIT_USAGE;
    }
    if (json && csv) {
        tw_app_error(TW_CLI_PROG, "token list: give --json or --csv, not both");
        return TW_EXIT_USAGE;
    }
    enum tw_role role = TW_ROLE_READER;
    struct tw_error err = {0};
    if (create) {
        if (!role_s) {
            tw_app_error(TW_CLI_PROG, "token create needs --role agent, reader or admin");
            return TW_EXIT_USAGE;
        }
        if (tw_role_parse(role_s, &role) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "token create: --role \"%s\" is not agent, reader or admin",
                         role_s);
            return TW_EXIT_USAGE;
        }
        if (name && strlen(name) > 200) {
            tw_app_error(TW_CLI_PROG, "token create: --name is longer than 200 characters");
            return TW_EXIT_USAGE;
        }
    }
    int64_t id = 0;
    if (!create && !list) {
        if (rest != 1) {
            tw_app_error(TW_CLI_PROG, "token revoke needs one token ID (token list shows them)");
            return TW_EXIT_USAGE;
        }
        char *end;
        errno = 0;
        long long v = strtoll(args[0], &end, 10);
        if (!args[0][0] || *end || errno || v < 1) {
            tw_app_error(TW_CLI_PROG,
                         "token revoke: \"%s\" is not a token ID (token list "
                         "shows them)",
                         args[0]);
            return TW_EXIT_USAGE;
        }
        id = v;
    }

    /* Listing or revoking in a file that is not there is a typo in --db:
     * say so rather than create an empty database. */
    struct stat sb;
    if (!create && !tw_store_location_is_pg(db, strlen(db)) && stat(db, &sb) != 0) {
        tw_app_error(TW_CLI_PROG,
                     "token %s: no database at %s (%s); give --db the serve "
                     "database (token create makes a new one)",
                     sub, db, strerror(errno));
        return TW_EXIT_USAGE;
    }
    struct tw_store *st = NULL;
    tw_app_detail(TW_CLI_PROG, "token %s: database %s", sub, db);
    enum tw_err rc = tw_store_open(db, &st, &err);
    if (rc != TW_OK)
        return fail(rc, &err);
    int status = TW_EXIT_OK;
    if (create) {
        char tok[TW_TOKEN_LEN + 1];
        uint8_t hash[32];
        int64_t new_id = 0;
        rc = tw_auth_token_new(tok, &err);
        if (rc == TW_OK)
            rc = tw_auth_hash(tok, strlen(tok), hash, &err);
        if (rc == TW_OK)
            rc = tw_store_token_add(st, name ? name : "", role, hash, &new_id, &err);
        if (rc == TW_OK) {
            printf("%s\n", tok);
            if (fflush(stdout) != 0 || ferror(stdout)) {
                tw_app_error(TW_CLI_PROG,
                             "token create: can't write the token on stdout; "
                             "revoke token %lld",
                             (long long)new_id);
                status = TW_EXIT_FAIL;
            } else {
                tw_app_note(TW_CLI_PROG,
                            "token: created %s token %lld%s%s; it is shown only this once",
                            tw_role_name(role), (long long)new_id, name ? " " : "",
                            name ? name : "");
            }
        }
        memset(tok, 0, sizeof(tok));
    } else if (list) {
        struct tw_store_token_row *rows = NULL;
        size_t n = 0;
        rc = tw_store_token_list(st, &rows, &n, &err);
        if (rc == TW_OK) {
            if (json) {
                json_t *all = list_json(rows, n);
                char *s = all ? json_dumps(all, JSON_INDENT(2)) : NULL;
                if (s)
                    puts(s);
                else
                    rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
                free(s);
                json_decref(all);
            } else if (csv) {
                print_csv(rows, n);
            } else {
                print_list(rows, n);
            }
        }
        free(rows);
    } else {
        rc = tw_store_token_revoke(st, id, &err);
        if (rc == TW_OK)
            tw_app_note(TW_CLI_PROG, "token: revoked token %lld", (long long)id);
    }
    tw_store_close(st);
    if (rc != TW_OK)
        return fail(rc, &err);
    return status;
}

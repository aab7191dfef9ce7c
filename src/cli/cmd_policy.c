/*
 * cmd_policy.c - tierwise policy check FILE... | policy show FILE --vm NAME:
 * validate policy files (every problem as FILE:LINE:COLUMN: $.path:
 * message), and show the windows a policy gives one VM in the next two
 * weeks, in the policy's (or the tag's) zone and in UTC.
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "app/app.h"
#include "app/tzload.h"
#include "cli/cli.h"
#include "core/buf.h"
#include "core/observed.h"
#include "core/policy.h"
#include "core/time.h"
#include "core/tz.h"
#include "core/window.h"
#include "service/opportunities.h"
#include "service/policies.h"
#include "store/store.h"

#define SHOW_DAYS 14

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s policy check FILE... [--json] [-q] [-v]\n"
            "       %s policy show FILE --vm NAME [--db F] [--from DATE] [--json] [-q] [-v]\n\n"
            "Policies are tierwise.policy/1 files (README \"Policies\";\n"
            "policies/policy.schema.json).\n\n"
            "check  reads each FILE and says every problem as\n"
            "       FILE:LINE:COLUMN: $.path: what is wrong and what is allowed\n"
            "       (up to 32 a file), or \"FILE: ok\"; the timezone must load from\n"
            "       this machine's zone files. A file named policy.schema.json (the\n"
            "       schema beside the examples) is skipped, as serve --policies does.\n"
            "show   prints the windows the policy gives the VM NAME in the two weeks\n"
            "       from now (or from --from), each in the zone and in UTC. A list of\n"
            "       windows is the same for every VM (NAME is not looked up, any name\n"
            "       will do); \"tag:NAME\" reads the VM's tag from --db; \"observed\" learns\n"
            "       them from the VM's power states in --db.\n\n"
            "  --json            print JSON instead of text\n"
            "  --vm NAME         the VM (show)\n"
            "  --db F            the backend's database, where show reads the VM's tags\n"
            "                    and power states (tag and observed windows)\n"
            "  --from DATE       start of the two weeks: YYYY-MM-DD (midnight in the\n"
            "                    zone) or an RFC 3339 time; default now\n"
            TW_CLI_SAY_HELP
            "  -h, --help        this text\n\n"
            "Exit status: 0 every policy valid (check) or shown (show), 1 a file or the\n"
            "database could not be read, 2 a policy with problems, a missing file or a\n"
            "usage error.\n",
            TW_CLI_PROG, TW_CLI_PROG);
}

/* Reads and parses FILE (P is cleaned up by the caller in any case).
 * With ZONE, a policy that parses also has its timezone loaded from this
 * machine's zone files: one that does not load is its problem at
 * $.timezone (what the savings and serve --policies would refuse). */
static enum tw_err load(const char *file, struct tw_policy *p, struct tw_policy_diags *d,
                        bool zone, struct tw_error *err)
{
    memset(p, 0, sizeof(*p));
    struct tw_buf in;
    tw_buf_init(&in, TW_POLICY_FILE_MAX);
    enum tw_err rc = tw_app_read_file(file, &in, err);
    d->n = 0;
    d->more = false;
    const char *text = in.data ? in.data : "";
    if (rc == TW_OK)
        rc = tw_policy_parse(text, in.len, p, d, err);
    if (rc == TW_OK && zone &&
        (rc = tw_svc_policy_zone_check(p, text, in.len, tw_tz_load, &d->d[0], err)) != TW_OK)
        d->n = 1;
    tw_buf_cleanup(&in);
    return rc;
}

static void say_problems(const char *file, const struct tw_policy_diags *d,
                         const struct tw_error *err)
{
    if (d->n == 0) {
        fprintf(stderr, "%s: %s\n", file, err->msg);
        return;
    }
    for (size_t i = 0; i < d->n; i++)
        fprintf(stderr, "%s:%ld:%ld: %s: %s\n", file, d->d[i].line, d->d[i].column,
                d->d[i].path, d->d[i].msg);
    if (d->more)
        fprintf(stderr, "%s: more problems than the %d shown; fix these and check again\n", file,
                TW_POLICY_DIAG_MAX);
}

static int worse(int status, enum tw_err rc)
{
    int s = tw_app_exit_code(rc);
    return status == TW_EXIT_FAIL || s == TW_EXIT_OK ? status : s;
}

static int check(int argc, char **argv, bool json)
{
    int status = TW_EXIT_OK;
    json_t *files = json ? json_array() : NULL;
    if (json && !files)
        return TW_EXIT_FAIL;
    for (int i = 0; i < argc; i++) {
        if (tw_svc_policy_is_schema(argv[i])) {
            if (!json && tw_app_get_verbosity() != TW_APP_QUIET)
                printf("%s: skipped (the policies' JSON Schema, not a policy; serve --policies "
                       "skips it too)\n",
                       argv[i]);
            else if (json)
                json_array_append_new(files, json_pack("{s:s, s:b, s:n, s:[], s:b, s:b}", "file",
                                                       argv[i], "ok", 1, "name", "problems",
                                                       "more", 0, "skipped", 1));
            continue;
        }
        struct tw_policy p;
        struct tw_policy_diags d;
        struct tw_error err = {0};
        enum tw_err rc = load(argv[i], &p, &d, true, &err);
        status = worse(status, rc);
        if (!json) {
            if (rc == TW_OK && tw_app_get_verbosity() != TW_APP_QUIET)
                printf("%s: ok (policy %s)\n", argv[i], p.name);
            else if (rc != TW_OK)
                say_problems(argv[i], &d, &err);
        } else {
            json_t *f = json_object(), *probs = json_array();
            json_object_set_new(f, "file", json_string(argv[i]));
            json_object_set_new(f, "ok", json_boolean(rc == TW_OK));
            json_object_set_new(f, "name", rc == TW_OK ? json_string(p.name) : json_null());
            for (size_t k = 0; k < d.n; k++)
                json_array_append_new(probs, json_pack("{s:s, s:I, s:I, s:s}", "path", d.d[k].path,
                                                       "line", (json_int_t)d.d[k].line, "column",
                                                       (json_int_t)d.d[k].column, "message",
                                                       d.d[k].msg));
            if (rc != TW_OK && d.n == 0)
                json_array_append_new(probs, json_pack("{s:n, s:n, s:n, s:s}", "path", "line",
                                                       "column", "message", err.msg));
            json_object_set_new(f, "problems", probs);
            json_object_set_new(f, "more", json_boolean(d.more));
            json_array_append_new(files, f);
        }
        tw_policy_cleanup(&p);
    }
    if (json) {
        json_t *o = json_pack("{s:b, s:o}", "ok", status == TW_EXIT_OK, "files", files);
        char *s = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
        json_decref(o);
        if (!s)
            return TW_EXIT_FAIL;
        puts(s);
        free(s);
    }
    return fflush(stdout) == 0 ? status : TW_EXIT_FAIL;
}

/* ---- show --------------------------------------------------------------- */

struct show {
    const char *file, *vm, *db, *from;
    bool json;
};

/* The VM called NAME in ST (its row into *ROW); TW_ENOENT / TW_EINVAL for
 * none or several. */
static enum tw_err find_vm(struct tw_store *st, const char *name, struct tw_store_vm_row *row,
                           struct tw_error *err)
{
    struct tw_store_vm_row *rows;
    size_t n;
    enum tw_err rc = tw_store_vms(st, &rows, &n, err);
    if (rc != TW_OK)
        return rc;
    size_t hit = n, hits = 0;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(rows[i].name, name) == 0) {
            hits++;
            if (hit == n)
                hit = i;
        }
    if (hits == 0)
        rc = tw_error_set(err, TW_ENOENT, "the database has no VM called \"%s\"", name);
    else if (hits > 1)
        rc = tw_error_set(err, TW_EINVAL,
                          "the database has %zu VMs called \"%s\" (in different resource groups "
                          "or subscriptions); policy show can't tell which",
                          hits, name);
    if (rc == TW_OK) {
        *row = rows[hit];
        rows[hit].tags = NULL; /* moved */
        rows[hit].n_tags = 0;
    }
    tw_store_vm_rows_free(rows, n);
    return rc;
}

static void local_text(const struct tw_tz *z, int64_t t, char *buf, size_t cap)
{
    static const char *const days[] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
    struct tw_civil c;
    struct tw_tz_info info;
    tw_tz_ns_to_civil(z, t, &c, &info);
    int wd = tw_weekday_from_days(tw_days_from_civil(c.year, c.month, c.day));
    snprintf(buf, cap, "%s %04d-%02d-%02d %02d:%02d %s", days[wd], (int)c.year, c.month, c.day,
             c.hour, c.minute, info.abbr);
}

static void utc_text(int64_t t, char *buf, size_t cap)
{
    struct tw_civil c;
    tw_civil_from_ns(t, &c);
    snprintf(buf, cap, "%04d-%02d-%02d %02d:%02dZ", (int)c.year, c.month, c.day, c.hour,
             c.minute);
}

static enum tw_err parse_from(const char *s, const struct tw_tz *z, int64_t *out,
                              struct tw_error *err)
{
    struct tw_civil c = {0};
    if (strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d", &c.year, &c.month, &c.day) == 3 &&
        s[4] == '-' && s[7] == '-') {
        if (!tw_civil_valid(&c))
            return tw_error_set(err, TW_EINVAL, "--from %s is not a date", s);
        return tw_tz_civil_to_ns(z, &c, out, NULL) == TW_OK
                   ? TW_OK
                   : tw_error_set(err, TW_EINVAL, "--from %s is out of range", s);
    }
    if (tw_rfc3339_parse(s, strlen(s), out, NULL) != TW_OK)
        return tw_error_set(err, TW_EINVAL,
                            "--from %s is neither a date (2026-10-19) nor an RFC 3339 time "
                            "(2026-10-19T08:00:00Z)",
                            s);
    return TW_OK;
}

/* NS as RFC 3339 with offset UTOFF_S and as many fraction digits as it
 * needs, none for a whole second ("2026-10-19T08:00:00.25Z"): a --from
 * with a fraction, or now, is not cut to the second. */
static void rfc3339_exact(int64_t ns, int32_t utoff_s, char *buf, size_t cap)
{
    int64_t frac = ns % TW_NS_PER_S;
    if (frac < 0)
        frac += TW_NS_PER_S;
    int digits = 9;
    while (digits > 0 && frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    tw_rfc3339_format_ns(ns, utoff_s, digits, buf, cap);
}

static int fail(enum tw_err rc, const char *what, const struct tw_error *err)
{
    tw_app_error(TW_CLI_PROG, "%s%s%s", what ? what : "", what ? ": " : "", err->msg);
    return tw_app_exit_code(rc);
}

static int show(const struct show *o)
{
    struct tw_policy p;
    struct tw_policy_diags d;
    struct tw_error err = {0};
    enum tw_err rc = load(o->file, &p, &d, false, &err);
    if (rc != TW_OK) {
        say_problems(o->file, &d, &err);
        tw_policy_cleanup(&p);
        return tw_app_exit_code(rc);
    }
    int status = TW_EXIT_OK;
    struct tw_tz *z = NULL;
    struct tw_store *st = NULL;
    struct tw_store_vm_row row;
    memset(&row, 0, sizeof(row));
    bool have_row = false;
    struct tw_windows w;
    memset(&w, 0, sizeof(w));
    const char *source = !p.switches                      ? "none"
                         : p.windows_kind == TW_PW_LIST ? "list"
                         : p.windows_kind == TW_PW_TAG  ? "tag"
                                                        : "observed";
    char zone[TW_TZ_NAME_MAX], note[2048] = "";
    snprintf(zone, sizeof(zone), "%s", p.timezone);
    /* The tag the zone came from (its tz=), for the message when it does
     * not load; NULL when the zone is the policy's. */
    const char *zone_tag = NULL;
    struct tw_interval *iv = NULL;
    size_t niv = 0;
    int64_t from = 0, to = 0;

    if (p.switches && p.windows_kind != TW_PW_LIST) {
        if (!o->db) {
            tw_app_error(TW_CLI_PROG,
                         "%s: the windows come from %s: give --db with the backend's database",
                         o->file,
                         p.windows_kind == TW_PW_TAG ? "each VM's tag" : "the power states");
            status = TW_EXIT_USAGE;
            goto out;
        }
        if (!tw_store_location_is_pg(o->db, strlen(o->db)) && access(o->db, F_OK) != 0) {
            tw_app_error(TW_CLI_PROG, "database %s does not exist", o->db);
            status = TW_EXIT_USAGE;
            goto out;
        }
        if ((rc = tw_store_open(o->db, &st, &err)) != TW_OK ||
            (rc = find_vm(st, o->vm, &row, &err)) != TW_OK) {
            status = fail(rc, o->db, &err);
            goto out;
        }
        have_row = true;
    }
    if (p.switches && p.windows_kind == TW_PW_LIST) {
        w = p.windows;
        snprintf(note, sizeof(note),
                 "the policy's list: the same for every VM it covers (VM \"%s\" is not looked "
                 "up)",
                 o->vm);
    } else if (p.switches && p.windows_kind == TW_PW_TAG) {
        const struct tw_tag *t = tw_tag_find(row.tags, row.n_tags, p.windows_tag);
        const char *tag = t ? t->value : NULL;
        if (!tag) {
            snprintf(note, sizeof(note), "VM %s has no tag \"%s\": it gets no windows", row.name,
                     p.windows_tag);
        } else if ((rc = tw_windows_parse_custodian(tag, strlen(tag), &w, &err)) != TW_OK) {
            tw_app_error(TW_CLI_PROG, "VM %s's tag %s=\"%s\": %s", row.name, p.windows_tag, tag,
                         err.msg);
            status = TW_EXIT_USAGE;
            goto out;
        } else {
            if (w.tz[0]) {
                snprintf(zone, sizeof(zone), "%s", w.tz);
                zone_tag = tag;
            }
            snprintf(note, sizeof(note), "VM %s's tag %s=\"%s\"%s", row.name, p.windows_tag, tag,
                     w.tz[0] ? "" : " (no tz=: the policy's zone)");
        }
    }
    if ((rc = tw_tz_load(zone, &z, &err)) != TW_OK) {
        if (zone_tag)
            tw_app_error(TW_CLI_PROG, "VM %s's tag %s=\"%s\": time zone: %s", row.name,
                         p.windows_tag, zone_tag, err.msg);
        status = zone_tag ? tw_app_exit_code(rc) : fail(rc, "time zone", &err);
        goto out;
    }
    if (o->from) {
        if ((rc = parse_from(o->from, z, &from, &err)) != TW_OK) {
            status = fail(rc, NULL, &err);
            goto out;
        }
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        from = (int64_t)ts.tv_sec * TW_NS_PER_S + ts.tv_nsec;
    }
    /* Two weeks of the zone's wall clock (336 h give or take a change). */
    struct tw_tz_info at_from;
    tw_tz_at(z, from, &at_from);
    if (tw_tz_local_to_ns(z, from + at_from.utoff_s * TW_NS_PER_S + SHOW_DAYS * TW_NS_PER_DAY, &to,
                          NULL) != TW_OK || to <= from) {
        tw_error_set(&err, TW_ERANGE, "--from %s is out of range", o->from ? o->from : "");
        status = fail(TW_ERANGE, NULL, &err);
        goto out;
    }
    if (p.switches && p.windows_kind == TW_PW_OBSERVED) {
        int64_t back = (int64_t)(p.observed_weeks + 1) * TW_NS_PER_WEEK, span;
        if (!tw_time_add(from, -back, &span)) {
            tw_error_set(&err, TW_ERANGE, "--from %s is out of range", o->from ? o->from : "");
            status = fail(TW_ERANGE, NULL, &err);
            goto out;
        }
        int64_t span_ms = tw_floor_div(span, TW_NS_PER_MS);
        struct tw_store_sv_power *sp = NULL;
        size_t nsp = 0, nob = 0;
        rc = tw_store_vm_power_states(st, row.id, span_ms, tw_floor_div(from, TW_NS_PER_MS) + 1,
                                      &sp, &nsp, &err);
        if (rc != TW_OK) {
            status = fail(rc, o->db, &err);
            goto out;
        }
        struct tw_power_obs *ob = nsp ? calloc(nsp, sizeof(*ob)) : NULL;
        if (nsp && !ob)
            rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
        /* Read as the savings run reads them (the state in force at the
         * span's start placed there). */
        if (rc == TW_OK)
            nob = tw_opp_power_obs(sp, nsp, span, ob);
        free(sp);
        /* tw_observed_windows says "observed windows: ..." itself. */
        if (rc == TW_OK)
            rc = tw_observed_windows(ob, nob, from, p.observed_weeks, p.observed_min_weeks, z, &w,
                                     &err);
        free(ob);
        if (rc != TW_OK) {
            status = fail(rc, NULL, &err);
            goto out;
        }
        snprintf(note, sizeof(note),
                 "learned from VM %s's %zu power states: the quarter-hours it was deallocated "
                 "throughout in at least %d of the %d weeks before %s",
                 row.name, nsp, p.observed_min_weeks, p.observed_weeks, "the last Monday");
    }
    if (!p.switches)
        snprintf(note, sizeof(note),
                 "the policy never switches (\"target\": \"none\")%s",
                 p.require_original_before_start
                     ? "; its disks must stay on their own SKU whenever the VM runs"
                     : "");
    if (w.n && (rc = tw_windows_instants(&w, z, from, to, &iv, &niv, &err)) != TW_OK) {
        status = fail(rc, NULL, &err);
        goto out;
    }

    char weekly[TW_WINDOWS_MAX * 24] = "";
    if (w.n)
        tw_windows_format(&w, weekly, sizeof(weekly));
    char a[64], b[64], c[64], e[64], hours[32];
    if (!o->json) {
        local_text(z, from, a, sizeof(a));
        local_text(z, to, b, sizeof(b));
        static const char *const said[] = {"list", "windows from the policy's list", "tag",
                                           "windows from the VM's tag", "observed",
                                           "windows learned from the VM's power states",
                                           "none", "no windows"};
        const char *what = source;
        for (size_t k = 0; k < 8; k += 2)
            if (strcmp(said[k], source) == 0)
                what = said[k + 1];
        printf("policy %s, VM %s: %s\n", p.name, o->vm, what);
        printf("  %s\n", note);
        printf("zone %s; the two weeks from %s to %s\n", zone, a, b);
        if (w.n)
            printf("weekly: %s\n", weekly);
        if (niv == 0)
            printf("no windows in these two weeks\n");
        for (size_t i = 0; i < niv; i++) {
            local_text(z, iv[i].from_ns, a, sizeof(a));
            local_text(z, iv[i].to_ns, b, sizeof(b));
            utc_text(iv[i].from_ns, c, sizeof(c));
            utc_text(iv[i].to_ns, e, sizeof(e));
            tw_hours_decimal(iv[i].to_ns - iv[i].from_ns, hours, sizeof(hours));
            printf("  %s to %s  %s h  (UTC %s to %s)\n", a, b, hours, c, e);
        }
    } else {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < niv; i++) {
            struct tw_tz_info fi, ti;
            tw_tz_at(z, iv[i].from_ns, &fi);
            tw_tz_at(z, iv[i].to_ns, &ti);
            rfc3339_exact(iv[i].from_ns, fi.utoff_s, a, sizeof(a));
            rfc3339_exact(iv[i].to_ns, ti.utoff_s, b, sizeof(b));
            rfc3339_exact(iv[i].from_ns, 0, c, sizeof(c));
            rfc3339_exact(iv[i].to_ns, 0, e, sizeof(e));
            tw_hours_decimal(iv[i].to_ns - iv[i].from_ns, hours, sizeof(hours));
            json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "start", a, "end",
                                                 b, "start_utc", c, "end_utc", e, "hours", hours));
        }
        rfc3339_exact(from, 0, a, sizeof(a));
        rfc3339_exact(to, 0, b, sizeof(b));
        json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "policy", p.name,
                                "vm", o->vm, "source", source, "note", note, "timezone", zone,
                                "from", a, "to", b, "weekly", weekly, "windows", arr);
        char *s = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
        json_decref(doc);
        if (!s) {
            status = TW_EXIT_FAIL;
            goto out;
        }
        puts(s);
        free(s);
    }
    if (fflush(stdout) != 0)
        status = TW_EXIT_FAIL;
out:
    free(iv);
    if (have_row)
        free(row.tags); /* the row is ours, its tags the store's allocation */
    tw_store_close(st);
    tw_tz_free(z);
    tw_policy_cleanup(&p);
    return status;
}

int tw_cli_cmd_policy(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},     {"vm", required_argument, NULL, 'm'},
        {"db", required_argument, NULL, 'd'}, {"from", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},     TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    struct show o = {0};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'j': o.json = true; break;
        case 'm': o.vm = optarg; break;
        case 'd': o.db = optarg; break;
        case 'f': o.from = optarg; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION: return tw_app_print_version(TW_CLI_PROG);
        case 'h': usage(stdout); return TW_EXIT_OK;
        default: usage(stderr); return TW_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        tw_app_error(TW_CLI_PROG, "policy needs check or show; see policy --help");
        return TW_EXIT_USAGE;
    }
    const char *sub = argv[optind++];
    if (strcmp(sub, "check") == 0) {
        if (optind >= argc || o.vm || o.db || o.from) {
            tw_app_error(TW_CLI_PROG, optind >= argc
                                          ? "policy check needs at least one FILE"
                                          : "policy check takes FILE... and --json only");
            return TW_EXIT_USAGE;
        }
        return check(argc - optind, argv + optind, o.json);
    }
    if (strcmp(sub, "show") == 0) {
        if (optind + 1 != argc || !o.vm || !*o.vm) {
            tw_app_error(TW_CLI_PROG, "policy show needs one FILE and --vm NAME; see policy "
                                      "--help");
            return TW_EXIT_USAGE;
        }
        o.file = argv[optind];
        return show(&o);
    }
    tw_app_error(TW_CLI_PROG, "policy has no subcommand \"%s\": check or show", sub);
    return TW_EXIT_USAGE;
}

/*
 * cmd_compliance.c - tierwise compliance: does each disk deliver its tier?
 *
 * Offline on files: an inventory (which disks, which devices), result
 * records, and the rated catalog and VM caps (built in, or given).  Every
 * input is read and every verdict computed before anything is printed, so
 * bad input gives one message and an empty stdout.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/app.h"
#include "cli/cli.h"
#include "cli/csv.h"
#include "core/inventory.h"
#include "core/result.h"
#include "core/tier.h"
#include "core/verdict.h"
#include "core/vmcap.h"
#include "azure/endpoints.h"
#include "azure/http.h"
#include "azure/imds.h"
#include "azure/skus.h"

#define MAX_INPUT (16u << 20)  /* ceiling on each input file */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s compliance --inventory FILE --result FILE [--result FILE ...]\n"
            "                [--vm-size SIZE] [--catalog FILE] [--vm-caps FILE] [--json | --csv]\n"
            "       %s compliance --server URL --token-file FILE [--json | --csv]\n\n"
            "Judges bench results against the rated tier of the Azure disks they ran on:\n"
            "expected = min(sum of the member disks' rated figures, the VM's uncached cap),\n"
            "IOPS for random I/O, MB/s for sequential I/O. Works offline on files, or reads\n"
            "the verdicts of every VM's latest results from a tierwise backend.\n\n"
            "  --inventory FILE  the VM and its disks with their devices (tierwise-agent\n"
            "                    inventory --json, or a report holding an inventory)\n"
            "  --result FILE     a result record (tierwise-agent bench --json or import-fio\n"
            "                    --json); repeat for more. Its device or member devices\n"
            "                    (sdg, sdh ...) are matched to the inventory's devices\n"
            "  --vm-size SIZE    the VM size whose cap applies (default: the inventory's)\n"
            "  --catalog FILE    a tier catalog instead of the built-in one\n"
            "                    (pricing/azure-disk-tiers.json)\n"
            "  --vm-caps FILE    a VM caps table instead of the built-in one\n"
            "                    (pricing/azure-vm-disk-caps.json)\n"
            "  --caps-from-arm   take the VM size's caps from ARM's Resource SKUs instead\n"
            "                    (token from the managed identity, through IMDS)\n"
            "  --imds-url URL, --arm-url URL, --config FILE\n"
            "                    Azure endpoints (README \"Azure endpoints\")\n"
            "  --server URL      the backend (tierwise serve), e.g. http://127.0.0.1:8080:\n"
            "                    GET URL/api/v1/compliance instead of files\n"
            "  --token-file FILE a reader (or admin) token, in a file only you can read\n"
            "  --json            print {\"verdicts\": [...]} on stdout (with --server: the\n"
            "                    backend's answer, with \"vms\" and \"errors\")\n"
            "  --csv             print the verdicts as CSV (RFC 4180, a header row, CRLF):\n"
            "                    vm,vm_size,profile,result_id,target,disks,tiers,verdict,\n"
            "                    judged,measured_iops,measured_mbps,expected_iops,\n"
            "                    expected_mbps,bound_by,ratio_iops,ratio_mbps,reason\n"
            "                    (disks and tiers separated by spaces)\n"
            TW_CLI_SAY_HELP
            "                    (-v: the files, tables and URL read; -q: no note of a VM\n"
            "                    size the caps table lacks)\n"
            "  -h, --help        this text\n\n"
            "Text groups the verdicts by VM (name and size), each line naming the profile.\n\n"
            "Verdicts: delivers (>= 90 %% of expected), under, vm-capped (the VM's cap binds\n"
            "and is reached), burst (above the rating, within burst figures), cached (host\n"
            "caching served the reads), inconclusive (the method can't reach the rating:\n"
            "buffered I/O, a run under 10 s, too few I/Os in flight by Little's law; or a\n"
            "provisioned disk whose figures the inventory lacks).\n\n"
            "Exit status: 0 verdicts printed, whatever they say; 1 a file that exists can't\n"
            "be read (an I/O error) or out of memory; 2 bad input (a file that does not\n"
            "exist, is empty or malformed, an unknown SKU, a size beyond the largest tier, a\n"
            "result that matches no disk): the message says which; with --server, 1 also\n"
            "when the backend can't be reached or refuses the token.\n",
            TW_CLI_PROG, TW_CLI_PROG);
}

/* Reads PATH into OUT (initialised here); "PATH: why" in ERR on failure. */
static enum tw_err read_input(const char *path, struct tw_buf *out, struct tw_error *err)
{
    tw_buf_init(out, MAX_INPUT);
    enum tw_err rc = tw_app_read_file(path, out, err);
    if (rc == TW_OK && out->len == 0)
        rc = tw_error_set(err, TW_EINVAL, "%s is empty", path);
    return rc;
}

/* Parses a FILE with PARSE into whatever ARG is, naming the file on error. */
static enum tw_err load(const char *path, struct tw_error *err,
                        enum tw_err (*parse)(const char *, size_t, void *, struct tw_error *),
                        void *arg)
{
    struct tw_buf in;
    enum tw_err rc = read_input(path, &in, err);
    if (rc == TW_OK) {
        rc = parse(in.data, in.len, arg, err);
        if (rc != TW_OK) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            tw_error_set(err, rc, "%s: %s", path, msg);
        }
    }
    tw_buf_cleanup(&in);
    return rc;
}

static enum tw_err parse_catalog(const char *b, size_t n, void *a, struct tw_error *e)
{
    return tw_tier_catalog_parse(b, n, a, e);
}

static enum tw_err parse_caps(const char *b, size_t n, void *a, struct tw_error *e)
{
    return tw_vmcap_table_parse(b, n, a, e);
}

static enum tw_err parse_inventory(const char *b, size_t n, void *a, struct tw_error *e)
{
    return tw_inventory_from_json(b, n, a, e);
}

static enum tw_err parse_result(const char *b, size_t n, void *a, struct tw_error *e)
{
    return tw_result_from_json(b, n, a, e);
}

/* One verdict of the backend's answer as a line (the same as print_text). */
static void print_served(const json_t *v, const char *profile)
{
    const json_t *disks = json_object_get(v, "disks"), *tiers = json_object_get(v, "tiers");
    const char *kind = json_string_value(json_object_get(v, "verdict"));
    const char *target = json_string_value(json_object_get(v, "target"));
    const char *id = json_string_value(json_object_get(v, "result_id"));
    const char *reason = json_string_value(json_object_get(v, "reason"));
    printf("  %-12s %s [", kind ? kind : "?", target ? target : "?");
    for (size_t i = 0; i < json_array_size(disks); i++) {
        const char *name = json_string_value(json_array_get(disks, i));
        const char *tier = json_string_value(json_array_get(tiers, i));
        printf("%s%s%s%s", i ? ", " : "", name ? name : "?", tier ? " " : "", tier ? tier : "");
    }
    printf("] %s%sresult %s: %s\n", profile && profile[0] ? profile : "",
           profile && profile[0] ? " " : "", id ? id : "?", reason ? reason : "");
}

/* A VM's line: its name and size, and when its verdicts apply no cap of
 * the VM, that and why (the verdict's "vm" object). */
static void print_vm(const char *name, const json_t *vm)
{
    const char *size = json_string_value(json_object_get(vm, "size"));
    if (json_is_object(json_object_get(vm, "cap"))) {
        printf("VM %s (%s)\n", name, size ? size : "size unknown");
    } else {
        const char *why = json_string_value(json_object_get(vm, "why"));
        printf("VM %s (%s; uncached cap unknown: %s)\n", name, size ? size : "size unknown",
               why ? why : "not given");
    }
}

/* Appends the strings of array A to OUT (CAP bytes), separated by spaces. */
static void join(const json_t *a, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < json_array_size(a) && o < cap; i++) {
        const char *v = json_string_value(json_array_get(a, i));
        int n = snprintf(out + o, cap - o, "%s%s", i ? " " : "", v ? v : "");
        if (n < 0)
            break;
        o += (size_t)n;
    }
}


/* The verdicts of DOC ({"verdicts": [...]}, the backend's or built from
 * files) as CSV, one record per verdict (csv.h). */
static void print_csv(const json_t *doc)
{
    static const char *const head[] = {
        "vm",            "vm_size",       "vm_cap_iops",   "vm_cap_mbps",   "vm_cap_why",
        "profile",       "result_id",     "target",
        "disks",         "tiers",         "verdict",       "judged",        "measured_iops",
        "measured_mbps", "expected_iops", "expected_mbps", "bound_by",      "ratio_iops",
        "ratio_mbps",    "reason"};
    tw_cli_csv_row(stdout, head, sizeof(head) / sizeof(head[0]));
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(doc, "verdicts"), i, v)
    {
        const json_t *m = json_object_get(v, "measured"), *e = json_object_get(v, "expected");
        const json_t *r = json_object_get(v, "ratio");
        char disks[4096], tiers[1024];
        join(json_object_get(v, "disks"), disks, sizeof(disks));
        join(json_object_get(v, "tiers"), tiers, sizeof(tiers));
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "vm_name")), 0);
        const json_t *vm = json_object_get(v, "vm"), *cap = json_object_get(vm, "cap");
        tw_cli_csv_field(stdout, json_string_value(json_object_get(vm, "size")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(cap, "iops")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(cap, "mbps")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(vm, "why")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "profile")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "result_id")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "target")), 0);
        tw_cli_csv_field(stdout, disks, 0);
        tw_cli_csv_field(stdout, tiers, 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "verdict")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "judged")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(m, "iops")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(m, "mbps")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(e, "iops")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(e, "mbps")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(e, "bound_by")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "iops")), 0);
        tw_cli_csv_num(stdout, tw_cli_num_or_nan(json_object_get(r, "mbps")), 0);
        tw_cli_csv_field(stdout, json_string_value(json_object_get(v, "reason")), 1);
    }
}

/* The verdicts of DOC as text: a line per VM (name and size), then its
 * verdicts, each naming its profile; then what could not be judged.
 * The same for files and for --server. */
static void print_doc(const json_t *doc)
{
    const json_t *verdicts = json_object_get(doc, "verdicts");
    const json_t *errors = json_object_get(doc, "errors");
    const char *last = NULL;
    for (size_t i = 0; i < json_array_size(verdicts); i++) {
        const json_t *v = json_array_get(verdicts, i);
        const char *vm = json_string_value(json_object_get(v, "vm_name"));
        const char *profile = json_string_value(json_object_get(v, "profile"));
        if (vm && (!last || strcmp(vm, last) != 0)) {
            print_vm(vm, json_object_get(v, "vm"));
            last = vm;
        }
        print_served(v, profile);
    }
    for (size_t i = 0; i < json_array_size(errors); i++) {
        const json_t *e = json_array_get(errors, i);
        const char *vm = json_string_value(json_object_get(e, "vm_name"));
        const char *id = json_string_value(json_object_get(e, "result_id"));
        const char *msg = json_string_value(json_object_get(e, "message"));
        printf("not judged: VM %s result %s: %s\n", vm ? vm : "?", id ? id : "?",
               msg ? msg : "");
    }
}

/* {"verdicts": [...]} of N verdicts with each one's "profile" and
 * "vm_name", as the backend's verdicts have them; NULL when out of memory. */
static json_t *verdicts_doc(const struct tw_verdict *v, size_t n, const char *vm_name,
                            const char (*profiles)[64])
{
    json_t *arr = json_array(), *doc = json_pack("{s:o}", "verdicts", arr);
    if (!doc)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        json_t *o = tw_verdict_to_value(&v[i]);
        if (!o || json_array_append_new(arr, o) ||
            json_object_set_new(o, "profile",
                                profiles[i][0] ? json_string(profiles[i]) : json_null()) ||
            json_object_set_new(o, "vm_name", vm_name[0] ? json_string(vm_name) : json_null())) {
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

/*
 * GET SERVER/api/v1/compliance with the token in TOKEN_FILE, printed as
 * text (grouped by VM), CSV or the backend's JSON.  Returns an exit status.
 */
static int from_server(const char *server, const char *token_file, bool json, bool csv)
{
    char token[512], url[2048], auth[600];
    struct tw_error err = {0};
    enum tw_err rc = tw_app_read_token(token_file, token, sizeof(token), &err);
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "%s", err.msg);
        return tw_app_exit_code(rc);
    }
    size_t n = strlen(server);
    while (n > 0 && server[n - 1] == '/')
        n--;
    if ((strncmp(server, "http://", 7) != 0 && strncmp(server, "https://", 8) != 0) ||
        n + sizeof("/api/v1/compliance") > sizeof(url)) {
        memset(token, 0, sizeof(token));
        tw_app_error(TW_CLI_PROG, "--server \"%s\": give the backend's http:// or https:// URL, "
                     "e.g. http://127.0.0.1:8080", server);
        return TW_EXIT_USAGE;
    }
    snprintf(url, sizeof(url), "%.*s/api/v1/compliance", (int)n, server);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
    memset(token, 0, sizeof(token));
    const char *headers[] = {auth, "Accept: application/json", NULL};
    struct tw_az_http_opts o;
    tw_az_http_opts_default(&o);
    struct tw_az_http *h = tw_az_http_new(&o, &err);
    struct tw_az_http_resp resp;
    memset(&resp, 0, sizeof(resp));
    tw_app_detail(TW_CLI_PROG, "compliance: GET %s", url);
    rc = h ? tw_az_http_request(h, "GET", url, headers, NULL, 0, &resp, &err) : TW_ENOMEM;
    memset(auth, 0, sizeof(auth));
    if (rc == TW_OK)
        tw_app_detail(TW_CLI_PROG, "compliance: HTTP %ld, %zu bytes", resp.status,
                      resp.body.len);
    tw_az_http_free(h);
    int status = TW_EXIT_OK;
    json_t *doc = NULL;
    if (rc != TW_OK) {
        tw_app_error(TW_CLI_PROG, "compliance from %s: %s", url,
                     err.msg[0] ? err.msg : tw_strerror(rc));
        status = TW_EXIT_FAIL;
        goto out;
    }
    doc = json_loadb(resp.body.data ? resp.body.data : "", resp.body.len, 0, NULL);
    const json_t *verdicts = json_object_get(doc, "verdicts");
    if (!json_is_array(verdicts)) {
        tw_app_error(TW_CLI_PROG, "compliance from %s: the answer is not the backend's "
                     "{\"verdicts\": [...]}; is --server a tierwise backend?", url);
        status = TW_EXIT_FAIL;
        goto out;
    }
    if (json) {
        char *s = json_dumps(doc, JSON_INDENT(2));
        if (!s || puts(s) == EOF)
            status = TW_EXIT_FAIL;
        free(s);
        goto out;
    }
    if (csv) {
        print_csv(doc);
    } else {
        printf("%lld VM(s) at %.*s, %zu verdict(s)\n",
               (long long)json_integer_value(json_object_get(doc, "vms")), (int)n, server,
               json_array_size(verdicts));
        print_doc(doc);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        status = TW_EXIT_FAIL;
out:
    json_decref(doc);
    tw_az_http_resp_cleanup(&resp);
    return status;
}

/*
 * The uncached caps of VM size SIZE from ARM's Resource SKUs, for the
 * inventory's subscription and region, with a managed-identity token from
 * IMDS (so this runs on an Azure VM, or against the simulator).
 */
static enum tw_err caps_from_arm(const struct tw_az_ep_args *args, const struct tw_inventory *inv,
                                 const char *size, struct tw_vmcap *out, struct tw_error *err)
{
    struct tw_az_endpoints ep;
    enum tw_err rc = tw_az_endpoints_resolve(args, &ep, err);
    if (rc != TW_OK)
        return rc;
    if (!inv->vm.subscription_id[0] || !inv->vm.location[0] || !size[0])
        return tw_error_set(err, TW_EINVAL,
                            "--caps-from-arm needs the inventory's subscription, location and "
                            "VM size");
    struct tw_az_token *tok = malloc(sizeof(*tok));
    if (!tok)
        return tw_error_set(err, TW_ENOMEM, "out of memory");
    struct tw_az_http_opts imds_o, arm_o;
    tw_az_http_opts_imds(&imds_o);
    tw_az_http_opts_default(&arm_o);
    rc = tw_az_token_fetch(&imds_o, ep.url[TW_AZ_EP_IMDS], "https://management.azure.com/", NULL,
                           tok, err);
    struct tw_vmcap_table t = {0};
    if (rc == TW_OK)
        rc = tw_az_skus_fetch(&arm_o, ep.url[TW_AZ_EP_ARM], inv->vm.subscription_id,
                              inv->vm.location, tok->access_token, size, &t, err);
    free(tok);
    if (rc != TW_OK)
        return rc;
    const struct tw_vmcap *c = tw_vmcap_find(&t, size);
    if (!c) {
        tw_vmcap_table_cleanup(&t);
        return tw_error_set(err, TW_ENOENT,
                            "ARM's Resource SKUs for %s list no VM size %s: check the "
                            "inventory's location and size",
                            inv->vm.location, size);
    }
    *out = *c;
    tw_vmcap_table_cleanup(&t);
    return TW_OK;
}

int tw_cli_cmd_compliance(int argc, char **argv)
{
    static const struct option opts[] = {
        {"inventory", required_argument, NULL, 'i'},
        {"result", required_argument, NULL, 'r'},
        {"vm-size", required_argument, NULL, 's'},
        {"catalog", required_argument, NULL, 'c'},
        {"vm-caps", required_argument, NULL, 'K'},
        {"caps-from-arm", no_argument, NULL, 'A'},
        {"imds-url", required_argument, NULL, 'I'},
        {"arm-url", required_argument, NULL, 'M'},
        {"config", required_argument, NULL, 'C'},
        {"server", required_argument, NULL, 'S'},
        {"token-file", required_argument, NULL, 'T'},
        {"json", no_argument, NULL, 'j'},
        {"csv", no_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},
        TW_CLI_SAY_OPTS,
        {NULL, 0, NULL, 0},
    };
    const char *inv_path = NULL, *vm_size = NULL, *cat_path = NULL, *caps_path = NULL;
    const char *server = NULL, *token_file = NULL;
    bool file_opts = false;
    struct tw_az_ep_args ep_args = {.only = (1u << TW_AZ_EP_IMDS) | (1u << TW_AZ_EP_ARM)};
    bool json = false, csv = false, from_arm = false;
    struct tw_vmcap arm_cap;
    size_t n_results = 0;
    const char **results = calloc((size_t)argc + 1, sizeof(*results));
    struct tw_tier_catalog cat = {0};
    struct tw_vmcap_table caps = {0};
    struct tw_inventory *inv = malloc(sizeof(*inv));
    struct tw_result *r = malloc(sizeof(*r));
    struct tw_verdict *verdicts = calloc((size_t)argc + 1, sizeof(*verdicts));
    char(*profiles)[64] = calloc((size_t)argc + 1, sizeof(*profiles));
    json_t *doc = NULL;
    struct tw_error err = {0};
    enum tw_err rc = TW_OK;
    int status = TW_EXIT_OK;
    if (!results || !inv || !r || !verdicts || !profiles) {
        tw_app_error(TW_CLI_PROG, "out of memory");
        status = TW_EXIT_FAIL;
        goto out;
    }
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hqv", opts, NULL)) != -1) {
        switch (c) {
        case 'i': inv_path = optarg; break;
        case 'r': results[n_results++] = optarg; break;
        case 's': vm_size = optarg; break;
        case 'c': cat_path = optarg; break;
        case 'K': caps_path = optarg; break;
        case 'A': from_arm = true; break;
        case 'I': ep_args.url[TW_AZ_EP_IMDS] = optarg; break;
        case 'M': ep_args.url[TW_AZ_EP_ARM] = optarg; break;
        case 'C': ep_args.config_path = optarg; break;
        case 'S': server = optarg; break;
        case 'T': token_file = optarg; break;
        case 'j': json = true; break;
        case 'x': csv = true; break;
        TW_CLI_SAY_CASES;
        case TW_CLI_OPT_VERSION:
            status = tw_app_print_version(TW_CLI_PROG);
            goto out;
        case 'h':
            usage(stdout);
            goto out;
        default:
            usage(stderr);
            status = TW_EXIT_USAGE;
            goto out;
        }
    }
    if (optind < argc) {
        tw_app_error(TW_CLI_PROG, "compliance: unexpected argument \"%s\"; give results with "
                     "--result FILE", argv[optind]);
        status = TW_EXIT_USAGE;
        goto out;
    }
    if (json && csv) {
        tw_app_error(TW_CLI_PROG, "compliance: give --json or --csv, not both");
        status = TW_EXIT_USAGE;
        goto out;
    }
    file_opts = inv_path || n_results || vm_size || cat_path || caps_path || from_arm;
    if (server || token_file) {
        if (!server || !token_file || file_opts) {
            tw_app_error(TW_CLI_PROG, "compliance from a backend needs --server URL and "
                         "--token-file FILE, and no --inventory, --result or catalog options; "
                         "see compliance --help");
            status = TW_EXIT_USAGE;
        } else {
            status = from_server(server, token_file, json, csv);
        }
        goto out;
    }
    if (!inv_path || !n_results) {
        tw_app_error(TW_CLI_PROG, "compliance needs --inventory FILE and at least one --result "
                     "FILE; see compliance --help");
        status = TW_EXIT_USAGE;
        goto out;
    }

    rc = cat_path ? load(cat_path, &err, parse_catalog, &cat) : tw_tier_catalog_builtin(&cat, &err);
    if (rc == TW_OK)
        rc = caps_path ? load(caps_path, &err, parse_caps, &caps)
                       : tw_vmcap_table_builtin(&caps, &err);
    if (rc == TW_OK)
        rc = load(inv_path, &err, parse_inventory, inv);
    if (rc != TW_OK)
        goto fail;
    tw_app_detail(TW_CLI_PROG, "compliance: tier catalog %s, VM caps %s (%zu sizes), inventory %s "
                  "(VM %s, %zu disks)",
                  cat_path ? cat_path : "built in", caps_path ? caps_path : "built in", caps.n,
                  inv_path, inv->vm.name[0] ? inv->vm.name : "unnamed", inv->n_disks);

    /* The VM's cap: the size asked for must be known; the inventory's may
     * not be (then the verdict says the cap was not applied). */
    const char *size = vm_size ? vm_size : inv->vm.vm_size;
    const struct tw_vmcap *cap = tw_vmcap_find(&caps, size);
    if (from_arm) {
        rc = caps_from_arm(&ep_args, inv, size, &arm_cap, &err);
        if (rc != TW_OK)
            goto fail;
        cap = &arm_cap;
    }
    if (!cap && vm_size) {
        rc = tw_error_set(&err, TW_EINVAL, "--vm-size %s is not in the VM caps table (%zu "
                          "sizes); give its caps with --vm-caps FILE", vm_size, caps.n);
        goto fail;
    }
    if (!cap && size[0])
        tw_app_note(TW_CLI_PROG, "note: VM size %s is not in the VM caps table: expected "
                    "figures leave its uncached cap out", size);
    /* What each verdict says instead of a cap. */
    char cap_why[512];
    if (!size[0])
        snprintf(cap_why, sizeof(cap_why), "the inventory names no VM size; give --vm-size SIZE");
    else
        snprintf(cap_why, sizeof(cap_why), "%s is not in %s%s (%zu sizes); give its caps with "
                 "--vm-caps FILE, or --caps-from-arm", size, caps_path ? "" : "the bundled caps table",
                 caps_path ? caps_path : "", caps.n);

    for (size_t i = 0; i < n_results; i++) {
        rc = load(results[i], &err, parse_result, r);
        if (rc == TW_OK) {
            snprintf(profiles[i], sizeof(profiles[i]), "%s", r->profile);
            rc = tw_verdict_check(r, inv, &cat, cap, &verdicts[i], &err);
            if (rc == TW_OK && !cap)
                tw_verdict_set_vm_unknown(&verdicts[i], size, cap_why);
        }
        if (rc == TW_OK)
            tw_app_detail(TW_CLI_PROG, "compliance: %s: result %s, %s", results[i],
                          verdicts[i].result_id, tw_verdict_name(verdicts[i].kind));
        if (rc != TW_OK) {
            if (err.msg[0] && !strstr(err.msg, results[i])) {
                char msg[sizeof(err.msg)];
                snprintf(msg, sizeof(msg), "%s", err.msg);
                tw_error_set(&err, rc, "%s: %s", results[i], msg);
            }
            goto fail;
        }
    }

    /* One document, shaped as the backend's verdicts (with "vm_name" and
     * "profile"), for every output: text and CSV print it as they print
     * the backend's. */
    doc = verdicts_doc(verdicts, n_results, inv->vm.name, (const char(*)[64])profiles);
    if (!doc) {
        rc = tw_error_set(&err, TW_ENOMEM, "out of memory writing the verdicts");
        goto fail;
    }
    if (json) {
        /* Figures are rounded to 0.1 or 0.001: short, as core prints them. */
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        if (!s) {
            rc = tw_error_set(&err, TW_ENOMEM, "out of memory writing the verdicts");
            goto fail;
        }
        puts(s);
        free(s);
    } else if (csv) {
        print_csv(doc);
    } else {
        print_doc(doc);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        rc = tw_error_set(&err, TW_EIO, "writing the verdicts to standard output failed");
        goto fail;
    }
    goto out;
fail:
    tw_app_error(TW_CLI_PROG, "%s", err.msg[0] ? err.msg : tw_strerror(rc));
    status = tw_app_exit_code(rc);
out:
    tw_tier_catalog_cleanup(&cat);
    tw_vmcap_table_cleanup(&caps);
    json_decref(doc);
    free(results);
    free(inv);
    free(r);
    free(verdicts);
    free(profiles);
    return status;
}

/*
 * arm_args.h - the options every command that calls ARM shares (sync,
 * apply, vm stop|start, ...), parsed alike everywhere:
 *
 *   --arm-url URL, --imds-url URL, --login-url URL, --config FILE
 *       where ARM, IMDS and the Entra ID login are (azure/endpoints.h:
 *       flag, TIERWISE_*_URL, the config file, Azure's default)
 *   --client-secret-file FILE
 *       the client secret of AZURE_TENANT_ID/AZURE_CLIENT_ID, read from
 *       the first line of FILE rather than AZURE_CLIENT_SECRET
 *   --no-pacing
 *       no token buckets (the benchmark's reference; ARM may answer 429)
 *
 * A command puts TW_ARM_ARGS_OPTS in its getopt_long table, hands every
 * option to tw_arm_args_take first (true: it was one of these), and calls
 * tw_arm_args_open once its options are read: the endpoints resolved, the
 * credential (managed identity through IMDS unless the AZURE_* variables
 * say client credentials) and the pacer built.  tw_arm_env_client gives a
 * client per thread; tw_arm_env_close frees it all.
 */
#ifndef TW_CLI_ARM_ARGS_H
#define TW_CLI_ARM_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "azure/arm.h"
#include "azure/endpoints.h"
#include "azure/http.h"
#include "core/err.h"

/* getopt_long values of the shared options (outside every command's own). */
#define TW_ARM_OPT_ARM_URL 0x7a01
#define TW_ARM_OPT_IMDS_URL 0x7a02
#define TW_ARM_OPT_LOGIN_URL 0x7a03
#define TW_ARM_OPT_CONFIG 0x7a04
#define TW_ARM_OPT_SECRET_FILE 0x7a05
#define TW_ARM_OPT_NO_PACING 0x7a06

/* The struct option lines (a command's table lists them, then its own). */
#define TW_ARM_ARGS_OPTS                                                                           \
    {"arm-url", required_argument, NULL, TW_ARM_OPT_ARM_URL},                                      \
        {"imds-url", required_argument, NULL, TW_ARM_OPT_IMDS_URL},                                \
        {"login-url", required_argument, NULL, TW_ARM_OPT_LOGIN_URL},                              \
        {"config", required_argument, NULL, TW_ARM_OPT_CONFIG},                                    \
        {"client-secret-file", required_argument, NULL, TW_ARM_OPT_SECRET_FILE},                   \
        {"no-pacing", no_argument, NULL, TW_ARM_OPT_NO_PACING}

/* Their --help lines. */
#define TW_ARM_ARGS_HELP                                                                           \
    "  --arm-url URL     Azure Resource Manager (else TIERWISE_ARM_URL, the config\n"              \
    "                    file's arm_url, https://management.azure.com)\n"                          \
    "  --imds-url URL    IMDS, for the managed identity's token (else\n"                           \
    "                    TIERWISE_IMDS_URL, imds_url, http://169.254.169.254)\n"                   \
    "  --login-url URL   the Entra ID login, for client credentials (else\n"                       \
    "                    TIERWISE_LOGIN_URL, login_url, https://login.microsoftonline.com)\n"      \
    "  --config FILE     the config file of the endpoints (else TIERWISE_CONFIG)\n"                \
    "  --client-secret-file FILE\n"                                                                \
    "                    the client secret, the first line of FILE (instead of\n"                  \
    "                    AZURE_CLIENT_SECRET; AZURE_TENANT_ID and AZURE_CLIENT_ID give\n"          \
    "                    the rest); without client credentials the managed identity\n"             \
    "                    (IMDS) is used\n"                                                         \
    "  --no-pacing       do not pace ARM calls (20 reads/s and 8 writes/s per region,\n"           \
    "                    4 starts/deallocates per VM in 62 s otherwise: below ARM's\n"             \
    "                    limits)\n"

/* What the command line gave; NULL/false members were not given. */
struct tw_arm_args {
    const char *arm_url, *imds_url, *login_url, *config;
    const char *client_secret_file;
    bool no_pacing;
    /* Endpoints the command needs besides those of its credential and ARM
     * (bits 1u << TW_AZ_EP_*, e.g. IMDS for the default subscription). */
    unsigned also;
};

/* When C (getopt_long's answer) is one of TW_ARM_ARGS_OPTS, stores ARG
 * (optarg) in A and returns true; else false, A untouched. */
bool tw_arm_args_take(struct tw_arm_args *a, int c, const char *arg);

/* What tw_arm_args_open builds. */
struct tw_arm_env {
    struct tw_az_endpoints ep;     /* ARM's, the credential's, and A->also's */
    struct tw_arm_cred_opts cred_opts;
    struct tw_arm_cred *cred;
    struct tw_arm_pacer *pacer;    /* NULL with --no-pacing */
    struct tw_az_http_opts http;   /* tw_az_http_opts_default's */
    char secret[1024];             /* --client-secret-file's line, wiped by close */
};

/* Resolves the endpoints, reads the credential's settings (environment,
 * --client-secret-file) and builds the credential and the pacer into ENV.
 * TW_EINVAL (naming the option or variable) for a bad value, the
 * endpoints' errors for a config file that can't be read.  Nothing is
 * sent.  ENV is closed again on failure. */
enum tw_err tw_arm_args_open(const struct tw_arm_args *a, struct tw_arm_env *env,
                             struct tw_error *err);

/* A client (one per thread) of ENV's ARM with its credential and pacer,
 * counting against REGION's bucket (NULL: the shared one). */
enum tw_err tw_arm_env_client(const struct tw_arm_env *env, const char *region,
                              struct tw_arm **out, struct tw_error *err);

/* Frees what open built (ENV zeroed; the secret wiped).  Safe twice. */
void tw_arm_env_close(struct tw_arm_env *env);

/* Words for the credential in use, for --verbose: "managed identity
 * (IMDS http://...)" or "client credentials of client C in tenant T
 * (login https://...)"; never the secret. */
const char *tw_arm_env_cred_words(const struct tw_arm_env *env, char *buf, size_t cap);

#endif

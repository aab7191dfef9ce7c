/*
 * endpoints.h - where each Azure API is: the base URLs of IMDS, ARM, the
 * Entra ID login and the Retail Prices API.
 *
 * Each base URL comes from, in this order (DESIGN.md "Configuration and
 * endpoints"): a command-line flag (--imds-url ...), an environment
 * variable (TIERWISE_IMDS_URL ...), the config file (a JSON object with
 * "imds_url", "arm_url", "login_url", "prices_url"; its path from --config
 * or TIERWISE_CONFIG), and Azure's real endpoint as the default.  The
 * clients append the APIs' own paths, so a base URL is only scheme, host
 * and optional port: anything else is refused with a message naming where
 * the bad value came from.  Tests and the demo point every endpoint at a
 * server on 127.0.0.1.
 */
#ifndef TW_AZURE_ENDPOINTS_H
#define TW_AZURE_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"

enum tw_az_ep { TW_AZ_EP_IMDS, TW_AZ_EP_ARM, TW_AZ_EP_LOGIN, TW_AZ_EP_PRICES, TW_AZ_EP_COUNT };

#define TW_AZ_URL_MAX 256           /* a base URL, NUL included */
#define TW_AZ_CONFIG_MAX (1u << 20) /* config file ceiling, bytes */

/* Where a resolved value came from. */
enum tw_az_ep_source { TW_AZ_FROM_DEFAULT, TW_AZ_FROM_CONFIG, TW_AZ_FROM_ENV, TW_AZ_FROM_FLAG };

struct tw_az_endpoints {
    char url[TW_AZ_EP_COUNT][TW_AZ_URL_MAX]; /* "http://127.0.0.1:8080", no trailing slash */
    enum tw_az_ep_source from[TW_AZ_EP_COUNT];
    char config_path[4096]; /* the config file read, "" when none */
};

/* What the command line gave; NULL members were not given. */
struct tw_az_ep_args {
    const char *url[TW_AZ_EP_COUNT]; /* --imds-url, --arm-url, --login-url, --prices-url */
    const char *config_path;         /* --config */
    unsigned only;                   /* bit (1u << ep) per endpoint wanted; 0: all */
};

/* Names for messages and docs: "imds", "--imds-url", "TIERWISE_IMDS_URL",
 * "imds_url", "http://169.254.169.254". */
const char *tw_az_ep_name(enum tw_az_ep ep);
const char *tw_az_ep_flag(enum tw_az_ep ep);
const char *tw_az_ep_env(enum tw_az_ep ep);
const char *tw_az_ep_key(enum tw_az_ep ep);
const char *tw_az_ep_default(enum tw_az_ep ep);

/*
 * Checks that URL is a base URL: http or https (any case), a host name,
 * IPv4 address or [IPv6] address, an optional port 1-65535, and at most a
 * trailing "/".  OUT (OUTLEN bytes) gets it with the scheme lower-cased and
 * without the slash.  TW_EINVAL with a message starting with WHERE (e.g.
 * "--imds-url") otherwise.
 */
enum tw_err tw_az_url_validate(const char *url, const char *where, char *out, size_t outlen,
                               struct tw_error *err);

/*
 * Reads the endpoint keys of a config file's LEN bytes of JSON into VALS
 * ("" where absent).  Keys other than the four are left for other parts of
 * tierwise.  TW_EPARSE naming NAME (the file) for bad JSON, a non-object,
 * or a key that is not a string; values are checked by the resolver.
 */
enum tw_err tw_az_endpoints_parse_config(const char *buf, size_t len, const char *name,
                                         char vals[TW_AZ_EP_COUNT][TW_AZ_URL_MAX],
                                         struct tw_error *err);

/*
 * Resolves the base URLs (all four, or those ARGS->only names; the others
 * stay "") from ARGS (may be NULL), the environment and the config file, so
 * a command is not stopped by a bad value for an API it does not call.  A config file named by
 * --config or TIERWISE_CONFIG that can't be read or parsed is an error (TW_ENOENT, TW_EIO,
 * TW_EPARSE); an invalid winning value is TW_EINVAL naming its source.  Values that lose to a
 * higher source are not looked at.
 */
enum tw_err tw_az_endpoints_resolve(const struct tw_az_ep_args *args, struct tw_az_endpoints *out,
                                    struct tw_error *err);

/* Words for where a value came from, e.g. "TIERWISE_IMDS_URL" or
 * "the default"; for messages and --verbose output. */
const char *tw_az_ep_source_name(const struct tw_az_endpoints *e, enum tw_az_ep ep);

#endif

/*
 * agent_config.h - what tierwise-agent run reads from the config file:
 * the backend's URL and the token file.
 *
 * The config file is the JSON object that also holds the Azure endpoints
 * (README "Azure endpoints"; --config FILE or TIERWISE_CONFIG).  The agent
 * reads two more keys of it:
 *
 *   "server"      the backend's base URL, as --server
 *   "token_file"  the agent token's file, as --token-file (an absolute
 *                 path: the config file may be read from any folder)
 *
 * Other keys are left for other parts of tierwise.  Each setting comes
 * from, in this order: its flag, its environment variable
 * (TIERWISE_SERVER, TIERWISE_TOKEN_FILE; empty counts as unset), the
 * config file.
 */
#ifndef TW_AGENT_CONFIG_H
#define TW_AGENT_CONFIG_H

#include <stddef.h>

#include "core/err.h"

#define TW_AGENT_CONFIG_SERVER_MAX 2048 /* bytes with the NUL */
#define TW_AGENT_CONFIG_PATH_MAX 4096

struct tw_agent_config {
    char server[TW_AGENT_CONFIG_SERVER_MAX];   /* "" when the file has none */
    char token_file[TW_AGENT_CONFIG_PATH_MAX]; /* "" when the file has none */
};

/*
 * Reads "server" and "token_file" of a config file's LEN bytes of JSON
 * into OUT (both "" where absent).  TW_EPARSE naming NAME (the file) for
 * bad JSON or a root that is not an object; TW_EINVAL naming NAME and the
 * key for a value that is not a string, is empty, holds a NUL or control
 * character, is too long, or (token_file) is not an absolute path.  OUT is
 * all "" after a failure.
 */
enum tw_err tw_agent_config_parse(const char *buf, size_t len, const char *name,
                                  struct tw_agent_config *out, struct tw_error *err);

#endif

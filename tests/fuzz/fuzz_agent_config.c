/* fuzz_agent_config.c - the agent's keys of the config file on arbitrary
 * bytes.  The agent is a program, not a library the replays link, so its
 * pure parser is built in here from its source. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_config.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tw_agent_config c;
    struct tw_error err = {0};
    if (tw_agent_config_parse((const char *)data, size, "fuzz.json", &c, &err) != TW_OK) {
        /* A refusal says why and leaves nothing half-filled. */
        if (!err.msg[0] || c.server[0] || c.token_file[0])
            abort();
        return 0;
    }
    /* What is taken is a terminated string without control characters;
     * a token file is an absolute path. */
    if (strlen(c.server) >= sizeof(c.server) || strlen(c.token_file) >= sizeof(c.token_file))
        abort();
    if (c.token_file[0] && c.token_file[0] != '/')
        abort();
    for (const char *p = c.server; *p; p++)
        if ((unsigned char)*p < 0x20)
            abort();
    return 0;
}

/* uuid.c - version-4 UUIDs from caller-supplied random bytes. */
#include "core/uuid.h"

#include <stdio.h>

void tw_uuid_format(const uint8_t random16[16], char out[TW_UUID_STRLEN + 1])
{
    uint8_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = random16[i];
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, TW_UUID_STRLEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10],
             b[11], b[12], b[13], b[14], b[15]);
}

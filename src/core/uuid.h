/*
 * uuid.h - formatting random UUIDs (version 4).
 *
 * core does no I/O, so the caller supplies the 16 random bytes (the agent
 * reads them with getrandom()).
 */
#ifndef TW_CORE_UUID_H
#define TW_CORE_UUID_H

#include <stdint.h>

#define TW_UUID_STRLEN 36

/* Writes the version-4 UUID made of RANDOM16 into OUT (37 bytes). */
void tw_uuid_format(const uint8_t random16[16], char out[TW_UUID_STRLEN + 1]);

#endif

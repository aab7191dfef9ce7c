/*
 * size.h - sizes and durations as people write them.
 *
 * "8k", "8KiB", "1M", "4G", "512" are sizes; k, M, G, T and KiB, MiB, ...
 * are powers of 1024, KB, MB, GB are powers of 1000 (SI).  fio reads some
 * of these the other way round by default (its "8KiB" is 8000 bytes); the
 * fio importer follows fio's rules, this parser the SI/IEC ones.
 * Durations are seconds with an optional unit: "30", "30s", "500ms", "2m"
 * ("min" too), "1h", "1d".
 */
#ifndef TW_CORE_SIZE_H
#define TW_CORE_SIZE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

/* Parses a size into bytes; TW_EINVAL or TW_ERANGE with a message in ERR. */
enum tw_err tw_size_parse(const char *s, uint64_t *out, struct tw_error *err);

/* Parses a duration into milliseconds. */
enum tw_err tw_duration_parse(const char *s, uint64_t *out_ms,
                              struct tw_error *err);

/* Formats BYTES with a binary unit ("8 KiB", "1.5 GiB"); returns OUT. */
char *tw_size_format(uint64_t bytes, char *out, size_t outlen);

#endif

/*
 * reservation.h - reserved disk capacity held, as an input: a disk covered
 * by a reservation saves nothing when it moves (the reservation is paid
 * anyway), so it is excluded from savings.
 *
 * A file (`tierwise savings --reservations FILE`):
 *     { "schema_version": "tierwise.reservations/1",
 *       "reservations": [ {"region": "westeurope", "tier": "P30",
 *                          "redundancy": "LRS", "count": 4} ] }
 * and a policy's "reservations" member, the same array.  Azure sells them
 * for Premium SSD P30..P80 only, one year, per tier and region; a
 * reservation of N covers N disks of that tier in that region (README
 * "Savings" says which disks are taken as covered).
 */
#ifndef TW_CORE_RESERVATION_H
#define TW_CORE_RESERVATION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/sku.h"

#define TW_RESERVATIONS_SCHEMA "tierwise.reservations/1"
#define TW_RESERVATIONS_MAX 4096

struct tw_reservation {
    char region[48];                  /* armRegionName, lower case */
    char tier[8];                     /* "P30" */
    enum tw_sku_redundancy redundancy; /* default LRS */
    int64_t count;                    /* disks covered, >= 1 */
};

struct tw_reservations {
    size_t n;
    struct tw_reservation *v;         /* malloc'd */
};

/* Parses a reservations file (LEN bytes at BUF) into *OUT (reset first;
 * free with tw_reservations_cleanup).  TW_EPARSE naming the entry, field,
 * line and column. */
enum tw_err tw_reservations_parse(const char *buf, size_t len, struct tw_reservations *out,
                                  struct tw_error *err);

/* Appends B's entries to A (a policy's and a file's together); counts of
 * the same region, tier and redundancy add up. */
enum tw_err tw_reservations_merge(struct tw_reservations *a, const struct tw_reservations *b,
                                  struct tw_error *err);

/* Disks of TIER and RED in REGION the reservations cover (0 when none). */
int64_t tw_reservations_count(const struct tw_reservations *r, const char *region,
                              const char *tier, enum tw_sku_redundancy red);

/* The index in R->v of the entry of REGION (any case), TIER and RED (at
 * most one: entries are merged), or -1 when there is none. */
long tw_reservations_find(const struct tw_reservations *r, const char *region, const char *tier,
                          enum tw_sku_redundancy red);

void tw_reservations_cleanup(struct tw_reservations *r);

/*
 * For a document that holds the array (a policy's "reservations"): reads
 * the array at C's reader into *OUT (appended), every problem of every
 * entry reported to C under PATH ("$.reservations[1].tier").  Returns 1
 * when the array was read (problems or not: C->n counts them), -1 when the
 * reader failed.  The text must be valid JSON (core/jcheck.h).
 */
struct tw_jc;
int tw_reservations_read(struct tw_jc *c, const char *path, struct tw_reservations *out);

#endif

/*
 * store_shared.h - what both stores compute the same way, in C (private to
 * src/store, as store_sqlite.h and store_pg.h are).
 *
 * The room for pure C that must give the same answer in the SQLite store
 * and in the PostgreSQL store: no SQL, no sqlite3 or libpq call.  What is
 * here is written once so the two can't drift apart.  The identities in
 * particular are stored (vms.identity, disks.identity) and must stay byte
 * for byte what they are: a change here renames every VM and disk.
 */
#ifndef TW_STORE_STORE_SHARED_H
#define TW_STORE_STORE_SHARED_H

#include "store/store_ops.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A piece of a larger text (not NUL-terminated). */
struct tw_span {
    const char *p; /* its first byte, inside the text */
    size_t n;      /* its length in bytes */
};

/* Copies SRC into DST[0..LEN) folded to lower case (ASCII), cut to fit
 * and always terminated.  LEN must be at least 1. */
void tw_sh_lower_into(char *dst, size_t len, const char *src);

/* A VM's identity into OUT[0..LEN): "id:" and its ARM resource id (any
 * case) when the agent knows it, else "vm:" subscription/group/name, all
 * lower case (Azure names ignore case). */
void tw_sh_vm_identity(const struct tw_vm *vm, char *out, size_t len);

/* A disk's identity into OUT[0..LEN): "id:" and its managed disk id when
 * known, else "vm:" the stored VM's row id VM_ID and its name, lower case. */
void tw_sh_disk_identity(const struct tw_disk *d, int64_t vm_id, char *out, size_t len);

/* The VM's tags as one compact JSON object, keys sorted; NULL when out of
 * memory or when two tags have one key.  The caller frees it with free(). */
char *tw_sh_tags_json(const struct tw_vm *vm);

/* Fills OUT[0..WANT) with the elements of the top-level "results" array
 * of BODY[0..N), a body the report parser accepted (so valid JSON), each
 * as the agent sent it.  False when they aren't exactly WANT objects or
 * anything else is unexpected: the caller renders the records instead. */
bool tw_sh_find_records(const char *body, size_t n, struct tw_span *out, size_t want);

#endif

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

/* ---- ARM's look at a VM (store_arm.c, store_pg_arm.c) ---- */

/* "PREFIX" and ID in lower case into OUT[0..LEN), cut to fit: the
 * identity a put by ARM gives a VM or a disk it knows the id of. */
void tw_sh_identity_of(const char *prefix, const char *id, char *out, size_t len);

/* Appends "WHAT OLD" to FROM[0..FCAP) and "WHAT NEW" to TO[0..TCAP) ("; "
 * between fields) when OLD and NEW differ (NULL reads as ""); cut with
 * "..." where they do not fit. */
void tw_sh_fields_said(char *from, size_t fcap, char *to, size_t tcap, const char *what,
                       const char *old, const char *new_);

/* Whether two (SKU, tier, size) observations are the same, as ingest
 * rules: a tier not known on one side is no change. */
bool tw_sh_same_sku(const char *sku, const char *tier, int64_t size, const char *sku2,
                    const char *tier2, int64_t size2);

/* One change a put by ARM made, kept until its commit. */
struct tw_sh_arm_change {
    enum tw_store_arm_what what;
    int64_t vm_id, disk_id;  /* the rows changed (disk_id 0: the VM's own) */
    char vm[128], disk[128]; /* their names, cut to fit */
    char from[64], to[64];   /* what was stored, what ARM said */
};

/* Appends a change to *CH[0..*N) (growing it, *CAP its room); TW_ENOMEM
 * when it can't grow (the list is then as it was).  NULL strings are "". */
enum tw_err tw_sh_arm_note(struct tw_sh_arm_change **ch, size_t *n, size_t *cap,
                           enum tw_store_arm_what what, int64_t vm_id, const char *vm,
                           int64_t disk_id, const char *disk, const char *from, const char *to,
                           struct tw_error *err);

/* A stored disk, as both stores' ARM puts read it. */
struct tw_sh_arm_disk {
    int64_t id, vm_id;
    char identity[600], name[128], role[8], sku[32], tier[16], caching[16];
    char managed_disk_id[512], disk_state[32], lou[40];
    bool lun_null, attached, wa, shares_null, bursting_null;
    int lun, bursting;
    int64_t size_gib, max_shares;
    bool listed; /* ARM lists it in this put */
};

/* Whether the stored disk's shares, bursting and state are ARM's A. */
bool tw_sh_arm_same_attrs(const struct tw_sh_arm_disk *r, const struct tw_store_disk_attrs *a);

/* ---- rows read back (store_query.c, store_pg_query.c) ---- */

/* The tags column TEXT (a JSON object of strings, sorted by key; NULL for
 * none) into R's tags, at most TW_INV_MAX_TAGS, values not strings passed
 * over; a damaged column reads as no tags.  False only when out of memory.
 * R->tags is then the caller's, freed with the row. */
bool tw_sh_tags_row(const char *text, struct tw_store_vm_row *r);

/* A VM row's fields as the inventory's VM (V's disks untouched). */
void tw_sh_vm_into(const struct tw_store_vm_row *vm, struct tw_vm *v);

/* ---- the monthly report's reads (store_report_sqlite.c, store_pg_report.c) ---- */

/* Grows *V (N used, *CAP room) by one element of SIZE: the new element's
 * place, NULL when out of memory (*V then as it was). */
void *tw_sh_grow(void **v, size_t n, size_t *cap, size_t size);

/* NS as the action log writes instants, to the millisecond, into
 * OUT[0..CAP) ("0000" / "9999" when out of range). */
void tw_sh_text_at(int64_t ns, char *out, size_t cap);

/* NS in milliseconds, rounded down. */
int64_t tw_sh_ns_to_ms(int64_t ns);

/* The read's string table: a hash of the report's strs. */
#define TW_SH_ITAB_SLOTS 8192 /* a power of two, past what UINT16_MAX names fill */
struct tw_sh_itab {
    size_t cap;                      /* the room of strs */
    uint16_t slot[TW_SH_ITAB_SLOTS]; /* an index into strs; 0 empty */
};

/* The index of NAME in R's string table into *OUT, added when new; 0 is
 * "".  TW_ERANGE past TW_SH_ITAB_SLOTS / 2 names, TW_ENOMEM. */
enum tw_err tw_sh_intern(struct tw_store_report *r, struct tw_sh_itab *t, const char *name,
                         uint16_t *out, struct tw_error *err);

/* qsort's order of marks: by VM, then time, then id. */
int tw_sh_mark_cmp(const void *a, const void *b);

#endif

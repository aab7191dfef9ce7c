/*
 * store_copy.h - the table-level reads and writes of `tierwise store
 * copy` (store_copy.c), which each implementation fills (being written).
 */
#ifndef TW_STORE_STORE_COPY_H
#define TW_STORE_STORE_COPY_H

#include "store/store_ops.h"

struct tw_store_copy_ops {
    int unused;
};

extern const struct tw_store_copy_ops tw_sqlite_copy_ops; /* store_sqlite_copy.c */
extern const struct tw_store_copy_ops tw_pg_copy_ops;     /* store_pg_copy.c */

#endif

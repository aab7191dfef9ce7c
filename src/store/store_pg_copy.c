/*
 * store_pg_copy.c - the PostgreSQL store's table reads and writes for
 * `tierwise store copy` (being written).
 */
#include "store/store_copy.h"

const struct tw_store_copy_ops tw_pg_copy_ops = {0};

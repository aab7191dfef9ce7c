/*
 * store_sqlite_copy.c - the SQLite store's table reads and writes for
 * `tierwise store copy` (being written).
 */
#include "store/store_copy.h"

const struct tw_store_copy_ops tw_sqlite_copy_ops = {0};

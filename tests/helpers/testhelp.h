/*
 * testhelp.h - what every unit test includes: cmocka with its required
 * headers, fixture loading and scratch directories.
 */
#ifndef TW_TESTHELP_H
#define TW_TESTHELP_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Reads TW_FIXTURES/REL into a new NUL-terminated buffer; fails the test if
 * it can't.  *LEN gets the size.  Caller frees. */
char *th_fixture(const char *rel, size_t *len);

/* Copies TW_FIXTURES/REL to the file PATH (made or replaced); fails the
 * test if it can't. */
void th_fixture_copy(const char *rel, const char *path);

/* Makes a fresh directory under $TMPDIR (or /var/tmp, which supports
 * O_DIRECT more often than /tmp); returns a new string, caller frees and
 * removes it with th_rmtree. */
char *th_tmpdir(void);

/* Removes DIR and everything below it. */
void th_rmtree(const char *dir);

#endif

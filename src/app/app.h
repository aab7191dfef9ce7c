/*
 * app.h - what both executables share: reading an input file with a
 * ceiling, turning error codes into exit statuses, and printing errors.
 *
 * Exit statuses (documented in README and every --help):
 *   0  done
 *   1  the work failed (an I/O error, out of memory)
 *   2  bad input or usage: the message says what to change
 *   130 interrupted (SIGINT/SIGTERM) before a result was complete
 */
#ifndef TW_APP_H
#define TW_APP_H

#include <stdbool.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "core/buf.h"
#include "core/err.h"

#define TW_EXIT_OK 0
#define TW_EXIT_FAIL 1
#define TW_EXIT_USAGE 2
#define TW_EXIT_INTERRUPTED 130

/* The exit status for a failure of kind CODE. */
int tw_app_exit_code(enum tw_err code);

/* Prints "PROG: MSG" on stderr. */
void tw_app_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reads PATH ("-" for stdin) into OUT (initialised by the caller with its
 * ceiling); TW_ENOENT, TW_EIO or TW_ENOMEM (too big) with a message. */
enum tw_err tw_app_read_file(const char *path, struct tw_buf *out,
                             struct tw_error *err);

/* Writes LEN bytes to PATH atomically (temporary file, fsync, rename). */
enum tw_err tw_app_write_file(const char *path, const char *data, size_t len,
                              struct tw_error *err);

/* One subcommand of an executable. */
struct tw_app_cmd {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *summary;               /* one line for --help */
};

/*
 * The main() of an executable with subcommands: --help (usage on stdout,
 * status 0), --version (also after any subcommand: "PROG VERSION" on
 * stdout, status 0), the command's run(), or a usage error (status 2).
 * ABOUT is the one-line description, EXITS the exit-status paragraph.
 */
int tw_app_main(const char *prog, const char *about, const char *exits,
                const struct tw_app_cmd *cmds, size_t ncmds, int argc, char **argv);

/*
 * Prints a result on stdout: indented JSON (tierwise.bench-result/1) or the
 * text summary.  Returns an exit status (1 when out of memory, with a
 * message from PROG).
 */
struct tw_result;
int tw_app_print_result(const char *prog, const struct tw_result *r, bool json);

/*
 * Parses the options of a command whose only ones are --json and --help
 * (-h).  Returns -1 to go on (files start at optind, *JSON set), or the exit
 * status to return: 0 after --help (HELP on stdout), 2 for an unknown
 * option (HELP on stderr).
 */
int tw_app_json_options(int argc, char **argv, void (*help)(FILE *f), bool *json);

/*
 * Reads an API token from PATH into TOK (TOKLEN bytes with the NUL).  Like
 * ssh with a private key, a file others may read or change is refused, and
 * so is one owned by another user than this one or root; a file under
 * $CREDENTIALS_DIRECTORY (systemd's LoadCredential=, access by ACL) is
 * exempt.  One line of printable characters; a trailing newline is fine.
 * TW_EINVAL (the file is wrong: the message says how to fix it) or TW_EIO;
 * messages start with "--token-file PATH".  TOK is zeroed on failure.
 */
enum tw_err tw_app_read_token(const char *path, char *tok, size_t toklen,
                              struct tw_error *err);

/* Installs SIGINT/SIGTERM handlers that set *FLAG. */
void tw_app_catch_signals(volatile sig_atomic_t *flag);

/*
 * How much a command says on stderr beyond its errors and warnings, set by
 * -q/--quiet (TW_APP_QUIET) and -v/--verbose (TW_APP_VERBOSE) where a
 * command takes them (each --help says what they change there).  Errors
 * are always said.  The process's one setting: a command sets it while
 * reading its options (tw_app_set_verbosity), tw_app_main resets it.
 */
enum tw_app_verbosity { TW_APP_QUIET = -1, TW_APP_NORMAL = 0, TW_APP_VERBOSE = 1 };
void tw_app_set_verbosity(enum tw_app_verbosity v);
enum tw_app_verbosity tw_app_get_verbosity(void);

/* "PROG: MSG" on stderr unless quiet (progress, what was done). */
void tw_app_note(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "PROG: MSG" on stderr only when verbose (where settings came from, the
 * plan in detail). */
void tw_app_detail(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "PROG VERSION" on stdout (--version of a command or subcommand);
 * returns TW_EXIT_OK. */
int tw_app_print_version(const char *prog);

#endif

/* app.c - shared helpers of the executables. */
#include "app/app.h"

#include "core/result.h"
#include "core/result_text.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tw_app_exit_code(enum tw_err code)
{
    switch (code) {
    case TW_OK:
        return TW_EXIT_OK;
    case TW_EIO:
    case TW_ENOMEM:
        return TW_EXIT_FAIL;
    default:
        return TW_EXIT_USAGE;
    }
}

void tw_app_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

enum tw_err tw_app_read_file(const char *path, struct tw_buf *out, struct tw_error *err)
{
    int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tw_error_set(err, errno == ENOENT ? TW_ENOENT : TW_EIO, "can't open %s: %s",
                            path, strerror(errno));
    char chunk[65536];
    enum tw_err rc = TW_OK;
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = tw_error_set(err, TW_EIO, "reading %s failed: %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        if (tw_buf_append(out, chunk, (size_t)n) != TW_OK) {
            rc = tw_error_set(err, TW_EINVAL, "%s is larger than %zu bytes: is it the right file?",
                              path, out->max);
            break;
        }
    }
    if (fd != STDIN_FILENO)
        close(fd);
    /* An empty file still gets a (empty) NUL-terminated buffer. */
    if (rc == TW_OK && !out->data && tw_buf_append(out, "", 0) != TW_OK)
        rc = tw_error_set(err, TW_ENOMEM, "out of memory");
    return rc;
}

enum tw_err tw_app_write_file(const char *path, const char *data, size_t len,
                              struct tw_error *err)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return tw_error_set(err, TW_EIO, "can't create a file beside %s: %s", path,
                            strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    int saved = errno;
    if (done != len || fsync(fd) != 0 || close(fd) != 0) {
        if (done == len)
            saved = errno;
        unlink(tmp);
        return tw_error_set(err, TW_EIO, "writing %s failed: %s", path, strerror(saved));
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        return tw_error_set(err, TW_EIO, "can't replace %s: %s", path, strerror(saved));
    }
    return TW_OK;
}

static volatile sig_atomic_t *signal_flag;

static void on_signal(int sig)
{
    (void)sig;
    if (signal_flag)
        *signal_flag = 1;
}

void tw_app_catch_signals(volatile sig_atomic_t *flag)
{
    signal_flag = flag;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void usage(FILE *f, const char *prog, const char *about, const char *exits,
                  const struct tw_app_cmd *cmds, size_t ncmds)
{
    fprintf(f, "usage: %s COMMAND [OPTIONS]\n\n%s\n\nCommands:\n", prog, about);
    for (size_t i = 0; i < ncmds; i++)
        fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].summary);
    fprintf(f, "\n%s COMMAND --help describes a command's options.\n%s\n", prog, exits);
}

int tw_app_main(const char *prog, const char *about, const char *exits,
                const struct tw_app_cmd *cmds, size_t ncmds, int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr, prog, about, exits, cmds, ncmds);
        return TW_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout, prog, about, exits, cmds, ncmds);
        return TW_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0)
        return tw_app_print_version(prog);
    for (size_t i = 0; i < ncmds; i++) {
        if (strcmp(argv[1], cmds[i].name) != 0)
            continue;
        /* --version is every subcommand's: it wins over the rest of the
         * line, as --help does (up to a "--", after which all is data). */
        for (int a = 2; a < argc && strcmp(argv[a], "--") != 0; a++)
            if (strcmp(argv[a], "--version") == 0)
                return tw_app_print_version(prog);
        tw_app_set_verbosity(TW_APP_NORMAL);
        return cmds[i].run(argc - 1, argv + 1);
    }
    tw_app_error(prog, "unknown command \"%s\"; %s --help lists the commands", argv[1], prog);
    return TW_EXIT_USAGE;
}

int tw_app_print_result(const char *prog, const struct tw_result *r, bool json)
{
    int status = TW_EXIT_OK;
    if (json) {
        char *s = tw_result_to_json(r, JSON_INDENT(2));
        if (s)
            puts(s);
        else
            status = TW_EXIT_FAIL;
        free(s);
    } else {
        struct tw_buf out;
        tw_buf_init(&out, 1 << 20);
        if (tw_result_format_text(r, &out) == TW_OK)
            fputs(out.data, stdout);
        else
            status = TW_EXIT_FAIL;
        tw_buf_cleanup(&out);
    }
    if (status != TW_EXIT_OK) {
        tw_app_error(prog, "out of memory formatting the result");
    } else if (fflush(stdout) != 0 || ferror(stdout)) {
        /* A full disk behind a redirect must not pass for a saved result. */
        tw_app_error(prog, "writing the result to standard output failed: %s", strerror(errno));
        status = TW_EXIT_FAIL;
    }
    return status;
}

int tw_app_json_options(int argc, char **argv, void (*help)(FILE *f), bool *json)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    *json = false;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'j') {
            *json = true;
        } else if (c == 'h') {
            help(stdout);
            return TW_EXIT_OK;
        } else {
            help(stderr);
            return TW_EXIT_USAGE;
        }
    }
    return -1;
}

enum tw_err tw_app_read_token(const char *path, char *tok, size_t toklen,
                              struct tw_error *err)
{
    /* O_NONBLOCK: a FIFO (or a device) given by mistake must not hang the
     * open waiting for a writer; it is refused below as not a regular file.
     * On a regular file the flag changes nothing. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return tw_error_set(err, TW_EINVAL,
                            "--token-file %s: %s; give the file holding the token (tierwise "
                            "token create)",
                            path, strerror(errno));
    /* systemd's LoadCredential= puts the token in a directory only the
     * service can enter and grants read through an ACL, which shows in the
     * group bits: there the file's mode says nothing about others. */
    const char *cred = getenv("CREDENTIALS_DIRECTORY");
    size_t cl = cred ? strlen(cred) : 0;
    bool credential = cl > 1 && strncmp(path, cred, cl) == 0 && path[cl] == '/' &&
                      !strstr(path + cl, "/../");
    struct stat st;
    enum tw_err rc = TW_EINVAL;
    ssize_t n = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        tw_error_set(err, rc,
                     "--token-file %s is not a regular file (a FIFO, device or folder); give "
                     "the file holding the token",
                     path);
    } else if (!credential && (st.st_mode & (S_IRWXG | S_IRWXO))) {
        tw_error_set(err, rc,
                     "--token-file %s: permissions %04o are too open: others than its owner "
                     "may read or change the token; chmod 600 %s",
                     path, (unsigned)(st.st_mode & 07777), path);
    } else if (!credential && st.st_uid != geteuid() && st.st_uid != 0) {
        tw_error_set(err, rc,
                     "--token-file %s belongs to uid %u, not to this user (uid %u) nor root; "
                     "chown it to the user this runs as",
                     path, (unsigned)st.st_uid, (unsigned)geteuid());
    } else if ((n = read(fd, tok, toklen)) < 0) {
        rc = tw_error_set(err, TW_EIO, "--token-file %s: %s", path, strerror(errno));
    } else if ((size_t)n >= toklen) {
        tw_error_set(err, rc, "--token-file %s is larger than %zu bytes: that is not a token",
                     path, toklen - 1);
    } else {
        tok[n] = '\0';
        while (n > 0 && (tok[n - 1] == '\n' || tok[n - 1] == '\r' || tok[n - 1] == ' ' ||
                         tok[n - 1] == '\t'))
            tok[--n] = '\0';
        bool clean = n > 0;
        for (ssize_t i = 0; i < n && clean; i++)
            clean = tok[i] > ' ' && tok[i] < 0x7f;
        if (n == 0)
            tw_error_set(err, rc,
                         "--token-file %s is empty; put the token printed by tierwise token "
                         "create in it",
                         path);
        else if (!clean)
            tw_error_set(err, rc,
                         "--token-file %s holds more than one word or line, or control "
                         "characters; a token is one line of printable characters",
                         path);
        else
            rc = TW_OK;
    }
    close(fd);
    if (rc != TW_OK)
        memset(tok, 0, toklen);
    return rc;
}

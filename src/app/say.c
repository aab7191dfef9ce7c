/* say.c - how much the executables say on stderr (-q/--quiet,
 * -v/--verbose), and --version. */
#include "app/app.h"

#include <stdarg.h>
#include <stdio.h>

static enum tw_app_verbosity verbosity = TW_APP_NORMAL;

void tw_app_set_verbosity(enum tw_app_verbosity v)
{
    verbosity = v;
}

enum tw_app_verbosity tw_app_get_verbosity(void)
{
    return verbosity;
}

static void vsay(const char *prog, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void tw_app_note(const char *prog, const char *fmt, ...)
{
    if (verbosity == TW_APP_QUIET)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsay(prog, fmt, ap);
    va_end(ap);
}

void tw_app_detail(const char *prog, const char *fmt, ...)
{
    if (verbosity != TW_APP_VERBOSE)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsay(prog, fmt, ap);
    va_end(ap);
}

int tw_app_print_version(const char *prog)
{
    printf("%s %s\n", prog, TW_VERSION);
    return fflush(stdout) == 0 ? TW_EXIT_OK : TW_EXIT_FAIL;
}

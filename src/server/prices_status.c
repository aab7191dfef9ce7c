/*
 * prices_status.c - prices failures as HTTP statuses (prices_status.h).
 */
#include "server/prices_status.h"

#include <stddef.h>

unsigned tw_srv_prices_status(enum tw_err rc, const char **code)
{
    const char *c;
    unsigned s;
    switch (rc) {
    case TW_OK:
        c = "ok";
        s = 200;
        break;
    case TW_EINVAL:
        c = "bad_request";
        s = 400;
        break;
    case TW_ERANGE:
        c = "bad_request";
        s = 400;
        break;
    case TW_ENOENT:
        c = "price_missing";
        s = 404;
        break;
    case TW_EPARSE:
        c = "upstream_invalid";
        s = 502;
        break;
    case TW_EPERM:
        c = "upstream_refused";
        s = 502;
        break;
    case TW_EIO:
        c = "upstream_failed";
        s = 502;
        break;
    default:
        c = "internal";
        s = 500;
        break;
    }
    if (code)
        *code = c;
    return s;
}

unsigned tw_srv_prices_import_status(enum tw_err rc, const char **code)
{
    if (rc == TW_EPARSE) {
        if (code)
            *code = "bad_request";
        return 400;
    }
    return tw_srv_prices_status(rc, code);
}

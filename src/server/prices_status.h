/*
 * prices_status.h - the HTTP status and error code of a prices failure
 * (service/prices.h names the codes):
 *   TW_EINVAL, TW_ERANGE  400 bad_request
 *   TW_ENOENT             404 price_missing
 *   TW_EPARSE             502 upstream_invalid
 *   TW_EPERM              502 upstream_refused
 *   TW_EIO                502 upstream_failed
 *   others                500 internal
 * For an import (a body the caller sent) TW_EPARSE is a 400 bad_request.
 */
#ifndef TW_SERVER_PRICES_STATUS_H
#define TW_SERVER_PRICES_STATUS_H

#include "core/err.h"

unsigned tw_srv_prices_status(enum tw_err rc, const char **code);
unsigned tw_srv_prices_import_status(enum tw_err rc, const char **code);

#endif

/*
 * imds.h - the Azure Instance Metadata Service: which VM this is, which
 * managed disks are attached to it, and a managed-identity token.
 *
 * IMDS answers only from inside an Azure VM, at a link-local address, over
 * plain HTTP and never through a proxy; a request must carry "Metadata:
 * true".  Every JSON value it sends is a string ("lun": "0", "diskSizeGB":
 * "128", "writeAcceleratorEnabled": "false"), and values that don't apply
 * are "" (see shared azure-api/imds.md).  The parsers take a buffer and a
 * length, so they are fuzzed; the fetchers go through azure/http.
 */
#ifndef TW_AZURE_IMDS_H
#define TW_AZURE_IMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "azure/http.h"
#include "core/err.h"
#include "core/inventory.h"

/* 2021-02-01 has everything the inventory needs (storageProfile from
 * 2019-06-01, tagsList from 2019-06-04, resourceId from 2019-03-11). */
#define TW_AZ_IMDS_API_VERSION "2021-02-01"
#define TW_AZ_IMDS_TOKEN_API_VERSION "2018-02-01"

/*
 * Reads LEN bytes of an IMDS /metadata/instance answer into INV: the VM
 * (name, size, location, subscription, resource group, resource id, tags
 * from tagsList or else the "k:v;k2:v2" tags string) and its OS and data
 * disks (name, LUN, SKU = storageAccountType, size, caching, managed disk
 * id, write accelerator, and the tier when IMDS gives one; "" otherwise, for
 * the verdict to derive from the size).  Numbers and booleans are accepted
 * as IMDS sends them (strings) and as JSON numbers/booleans; "" means
 * unknown (size 0).  Devices are left empty for the device map.
 *
 * TW_EPARSE for JSON that does not parse (line and column) and for a
 * missing, mistyped or out-of-range field, naming its path, e.g.
 * "compute.storageProfile.dataDisks[1].lun".  INV is emptied on failure.
 */
enum tw_err tw_az_imds_parse(const char *buf, size_t len, struct tw_inventory *inv,
                             struct tw_error *err);

/*
 * GET {IMDS_BASE}/metadata/instance?api-version=2021-02-01 with
 * "Metadata: true" and parses it into INV.  O may be NULL (IMDS defaults:
 * no proxy, about two seconds in all).  *UNREACHABLE (may be NULL) is set
 * when nothing answered at all (refused, timed out, no route): the machine
 * is most likely not an Azure VM.  Errors as tw_az_http_request and
 * tw_az_imds_parse.
 */
enum tw_err tw_az_imds_fetch(const struct tw_az_http_opts *o, const char *imds_base,
                             struct tw_inventory *inv, bool *unreachable, struct tw_error *err);

/* A managed-identity access token. */
struct tw_az_token {
    char access_token[16384]; /* a JWT; Entra tokens run to a few KiB */
    char token_type[32];      /* "Bearer" (assumed when IMDS leaves it out) */
    char resource[256];       /* what the token is for, as IMDS echoes it */
    int64_t expires_on;       /* Unix seconds; 0 when not given */
    int64_t expires_in;       /* seconds from issue; 0 when not given */
};

/*
 * Reads an IMDS token answer (LEN bytes): access_token is required,
 * expires_in / expires_on / not_before are decimal strings (or numbers).
 * An error answer ({"error": ..., "error_description": ...}) is TW_EPERM
 * with IMDS's words; anything else malformed is TW_EPARSE.
 */
enum tw_err tw_az_token_parse(const char *buf, size_t len, struct tw_az_token *t,
                              struct tw_error *err);

/*
 * GET {IMDS_BASE}/metadata/identity/oauth2/token?api-version=2018-02-01&
 * resource=RESOURCE (URL-encoded) [&client_id=CLIENT_ID for a user-assigned
 * identity; NULL for the system one] with "Metadata: true".  Retries 404
 * and 410 as well (IMDS answers them while it updates, per Azure's
 * guidance).  O may be NULL (IMDS defaults).
 */
enum tw_err tw_az_token_fetch(const struct tw_az_http_opts *o, const char *imds_base,
                              const char *resource, const char *client_id, struct tw_az_token *t,
                              struct tw_error *err);

#endif

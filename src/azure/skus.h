/*
 * skus.h - the ARM Resource SKUs API: each VM size's uncached disk limits.
 *
 * GET {arm}/subscriptions/{sub}/providers/Microsoft.Compute/skus
 *     ?api-version=2021-07-01&$filter=location eq '{location}'
 * with a bearer token answers pages of {"value": [...], "nextLink": ...}.
 * Of each "virtualMachines" entry tierwise keeps the capabilities
 * UncachedDiskIOPS and UncachedDiskBytesPerSecond (decimal strings), the
 * latter converted by tw_vmcap_arm_bytes_per_s because ARM encodes it in
 * two different units (core/vmcap.h), CombinedTempDiskAndCachedIOPS and
 * CombinedTempDiskAndCachedReadBytesPerSecond as the cached limits, and
 * PremiumIO ("True"/"False") as whether the size takes Premium storage.
 * ARM gives no burst figures.  Entries are tw_vmcap with source "arm", so
 * they stand in for the bundled table when ARM is reachable.
 */
#ifndef TW_AZURE_SKUS_H
#define TW_AZURE_SKUS_H

#include <stddef.h>

#include "azure/http.h"
#include "core/err.h"
#include "core/vmcap.h"

#define TW_AZ_SKUS_API_VERSION "2021-07-01"
#define TW_AZ_SKUS_MAX_PAGES 200 /* a region lists ~1,000 SKUs, ARM pages them */
#define TW_AZ_NEXTLINK_MAX 4096  /* ARM URLs can be up to 4 KB */

/*
 * Appends the virtualMachines entries of one page (LEN bytes: the REST
 * page, or az's bare array) to T (which is then not sorted), skipping
 * sizes already in T and entries with no figure and no PremiumIO.  NEXT (NEXTLEN bytes) gets nextLink, "" when
 * there is none.  TW_EPARSE, naming the entry, for a malformed page, a
 * capability value that is not a whole number, or an over-long name; T
 * keeps what it had before the call.  TW_ENOMEM when T can't grow.
 */
enum tw_err tw_az_skus_parse_page(const char *buf, size_t len, struct tw_vmcap_table *t, char *next,
                                  size_t nextlen, struct tw_error *err);

/*
 * Fetches the Resource SKUs of LOCATION in SUBSCRIPTION from ARM_BASE with
 * BEARER (an access token for https://management.azure.com/), following
 * nextLink, into T (initialised by the caller, possibly empty; freed with
 * tw_vmcap_table_cleanup; sorted by name at the end, also on failure).  With VM_SIZE non-NULL it stops at the first
 * page that lists that size.  A nextLink pointing anywhere but ARM_BASE is
 * refused (TW_EPERM): the token must not leave for another host.  O may be
 * NULL (ARM defaults).  Errors as tw_az_http_request and the parser; on
 * failure T holds the pages read so far.
 */
enum tw_err tw_az_skus_fetch(const struct tw_az_http_opts *o, const char *arm_base,
                             const char *subscription, const char *location, const char *bearer,
                             const char *vm_size, struct tw_vmcap_table *t, struct tw_error *err);

#endif

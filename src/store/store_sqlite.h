/*
 * store_sqlite.h - the SQLite store's private header (store_sqlite.c,
 * store_ingest.c, store_query.c and nothing else): its statements, its
 * handle, and the helpers its files share.  Nothing outside these files
 * sees sqlite3.h; the rest of the program reaches the SQLite store only
 * through the neutral table of store_ops.h.
 */
#ifndef TW_STORE_STORE_SQLITE_H
#define TW_STORE_STORE_SQLITE_H

#include "store/store_ops.h"

#include <pthread.h>
#include <sqlite3.h>

#define TW_STORE_SQLITE_VERSION 5
/* PRAGMA application_id of a tierwise database: "TWSD". */
#define TW_STORE_APP_ID 0x54575344

/* An attached disk was last seen in its VM's newest report; a detached
 * one keeps the time of the last report that had it; a disk of a VM no
 * agent reported (ARM's, schema 5), the last sync that listed it. */
#define TW_SQ_LAST_SEEN \
    "CASE WHEN d.detached_ms IS NOT NULL THEN d.last_seen_at WHEN v.last_report_id <> '' " \
    "THEN v.last_report_at ELSE coalesce(v.arm_seen_at, d.last_seen_at) END"

/* A result's record: its own text (schema 2 stores every record so, and
 * migration 2 cut version 1's places in the bodies out into it). */
#define TW_SQ_RECORD "r.record"

/* The filters of the paged lists: ?2 the VM's name, ?4 its resource
 * group (both without regard to case; ?3 is the SKU or tier). */
#define TW_SQ_VM_FILTER \
    "(?2 IS NULL OR v.name = ?2 COLLATE NOCASE) AND (?4 IS NULL OR v.resource_group = ?4 " \
    "COLLATE NOCASE)"

/* A VM's place: ?1 its name, ?2 its resource group, ?3 its subscription,
 * without regard to case (the index vms_place). */
#define TW_SQ_VM_PLACE \
    "name = ?1 COLLATE NOCASE AND resource_group = ?2 COLLATE NOCASE AND " \
    "subscription_id = ?3 COLLATE NOCASE"
/* A VM and a disk as an ARM put compares them (store_arm.c). */
#define TW_SQ_ARM_VM \
    "SELECT id, identity, name, resource_id, location, vm_size, tags, last_report_id, " \
    "last_report_at, last_report_ms, power_state, power_state_ms, arm_seen_at, arm_seen_ms " \
    "FROM vms"
#define TW_SQ_ARM_DISK \
    "SELECT id, identity, vm_id, name, role, lun, sku, tier, size_gib, caching, " \
    "managed_disk_id, write_accelerator, detached_ms, max_shares, bursting, disk_state, " \
    "last_ownership_update FROM disks"

/* An action as the audit log shows it (struct tw_store_action_row, in its
 * members' order; store_actions.c reads it). */
#define TW_SQ_ACTION_ROW \
    "SELECT a.id, a.plan_id, a.vm_id, a.disk_id, v.name, d.name, v.resource_id, " \
    "d.managed_disk_id, a.kind, a.from_sku, a.to_sku, a.due_at, a.due_ms, a.state, a.policy, " \
    "a.reason, a.saving, a.currency, a.attempts, a.updated_at, a.requested_at, a.dry_run, " \
    "a.arm_operation_url, a.last_error, a.claim_owner, a.claim_until_ms FROM actions a " \
    "LEFT JOIN vms v ON v.id = a.vm_id LEFT JOIN disks d ON d.id = a.disk_id"

/*
 * Every statement the SQLite store runs, prepared once per handle on first
 * use and kept.  X(id, sql).
 */
#define TW_SQ_STATEMENTS(X)                                                                  \
    X(SQ_BEGIN, "BEGIN IMMEDIATE")                                                           \
    X(SQ_COMMIT, "COMMIT")                                                                   \
    X(SQ_ROLLBACK, "ROLLBACK")                                                               \
    X(SQ_SAVEPOINT, "SAVEPOINT report")                                                      \
    X(SQ_RELEASE, "RELEASE report")                                                          \
    X(SQ_ROLLBACK_TO, "ROLLBACK TO report")                                                  \
    X(SQ_TOKEN_ADD, "INSERT INTO tokens(sha256, name, role, created_at) "                    \
                    "VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))")            \
    X(SQ_TOKEN_LOOKUP, "SELECT role, name FROM tokens WHERE sha256 = ?1 AND revoked_at IS NULL") \
    X(SQ_TOKEN_LIST, "SELECT id, name, role, created_at, revoked_at FROM tokens ORDER BY id") \
    X(SQ_TOKEN_REVOKE, "UPDATE tokens SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') " \
                       "WHERE id = ?1 AND revoked_at IS NULL")                              \
    X(SQ_TOKEN_EXISTS, "SELECT 1 FROM tokens WHERE id = ?1")                                 \
    X(SQ_REPORT_EXISTS, "SELECT 1 FROM reports WHERE id = ?1")                               \
    X(SQ_VM_FIND, "SELECT id, last_report_ms, last_report_at FROM vms WHERE identity = ?1")  \
    X(SQ_VM_INSERT, "INSERT INTO vms(identity, name, resource_id, subscription_id, "         \
                    "resource_group, location, vm_size, tags, last_report_id, last_report_at, " \
                    "last_report_ms, power_state, power_state_at, power_state_ms) "          \
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, "            \
                    "CASE WHEN ?12 IS NULL THEN NULL ELSE ?10 END, "                          \
                    "CASE WHEN ?12 IS NULL THEN NULL ELSE ?11 END)")                          \
    /* What a report does not know (its VM's resource id, group,                            \
     * subscription) stays as ARM gave it; a power state observed later                    \
     * (by ARM) stands. */                                                                  \
    X(SQ_VM_UPDATE, "UPDATE vms SET name = ?2, resource_id = coalesce(nullif(?3, ''), "      \
                    "resource_id), subscription_id = coalesce(nullif(?4, ''), "              \
                    "subscription_id), resource_group = coalesce(nullif(?5, ''), "           \
                    "resource_group), location = ?6, vm_size = ?7, tags = ?8, "              \
                    "last_report_id = ?9, last_report_at = ?10, last_report_ms = ?11, "      \
                    "power_state = CASE WHEN ?12 IS NOT NULL AND (power_state_ms IS NULL OR " \
                    "power_state_ms <= ?11) THEN ?12 ELSE power_state END, "                  \
                    "power_state_at = CASE WHEN ?12 IS NOT NULL AND (power_state_ms IS NULL " \
                    "OR power_state_ms <= ?11) THEN ?10 ELSE power_state_at END, "            \
                    "power_state_ms = CASE WHEN ?12 IS NOT NULL AND (power_state_ms IS NULL " \
                    "OR power_state_ms <= ?11) THEN ?11 ELSE power_state_ms END "             \
                    "WHERE id = ?1")                                                         \
    X(SQ_VM_POWER, "UPDATE vms SET power_state = ?2, power_state_at = ?3, power_state_ms = ?4 " \
                   "WHERE id = ?1 AND (power_state_ms IS NULL OR power_state_ms <= ?4)")     \
    X(SQ_REPORT_INSERT, "INSERT INTO reports(id, created_at, created_ms, received_at, vm_id, " \
                        "agent_version, agent_hostname, power_state, body, ahead_ms) "       \
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")                       \
    X(SQ_DISK_FIND, "SELECT d.id, d.vm_id, d.detached_ms, v.last_report_ms, d.name, d.role, " \
                    "d.lun, d.sku, d.size_gib, d.tier, d.caching, d.managed_disk_id, "       \
                    "d.write_accelerator, d.device, NULL, d.position FROM disks d "           \
                    "JOIN vms v ON v.id = d.vm_id WHERE d.identity = ?1")                                                 \
    X(SQ_DISK_INSERT, "INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, "  \
                      "tier, caching, managed_disk_id, write_accelerator, device, "          \
                      "last_seen_at, last_seen_ms, detached_at, detached_ms, position) "     \
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, " \
                      "?15, ?16, ?17)")                                                           \
    X(SQ_DISK_UPDATE, "UPDATE disks SET vm_id = ?2, name = ?3, role = ?4, lun = ?5, "        \
                      "sku = ?6, size_gib = ?7, tier = ?8, caching = ?9, "                   \
                      "managed_disk_id = coalesce(nullif(?10, ''), managed_disk_id), "        \
                      "write_accelerator = ?11, device = ?12, "                              \
                      "last_seen_at = ?13, last_seen_ms = ?14, detached_at = NULL, "         \
                      "detached_ms = NULL, position = ?17 WHERE id = ?1")                                    \
    X(SQ_VM_DISKS_ALL, "SELECT id, vm_id, detached_ms, NULL, name, role, lun, sku, size_gib, " \
                       "tier, caching, managed_disk_id, write_accelerator, device, identity, " \
                       "position FROM disks WHERE vm_id = ?1")                                          \
    X(SQ_DISK_DETACH, "UPDATE disks SET detached_at = ?2, detached_ms = ?3, "                \
                      "last_seen_at = ?4, last_seen_ms = ?5 WHERE id = ?1")                  \
    X(SQ_HIST_INSERT, "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, " \
                      "tier, size_gib, report_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")      \
    X(SQ_HIST_PREV, "SELECT sku, tier, size_gib FROM disk_sku_history WHERE disk_id = ?1 "   \
                    "AND observed_ms <= ?2 ORDER BY observed_ms DESC, id DESC LIMIT 1")      \
    X(SQ_HIST_NEXT, "SELECT id, sku, tier, size_gib FROM disk_sku_history WHERE disk_id = ?1 " \
                    "AND observed_ms > ?2 ORDER BY observed_ms, id LIMIT 1")                 \
    X(SQ_HIST_DELETE, "DELETE FROM disk_sku_history WHERE id = ?1")                          \
    X(SQ_RESULT_INSERT, "INSERT INTO results(report_id, vm_id, result_uuid, profile, target, " \
                        "target_path, target_device, started_at, started_ms, source, engine, " \
                        "pattern, block_size_bytes, queue_depth, jobs, direct, runtime_ms, "  \
                        "read_iops, read_mbps, read_lat_mean_ns, write_iops, write_mbps, "    \
                        "write_lat_mean_ns, errors, record, record_at, record_len) VALUES " \
                        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, " \
                        "?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)")         \
    X(SQ_RESULT_DISK, "INSERT OR IGNORE INTO result_disks(disk_id, result_id) VALUES (?1, ?2)") \
    X(SQ_POWER_INSERT, "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, "   \
                       "report_id) VALUES (?1, ?2, ?3, ?4, ?5)")                             \
    X(SQ_VMS, "SELECT v.id, v.name, v.resource_id, v.subscription_id, v.resource_group, "    \
              "v.location, v.vm_size, v.tags, v.power_state, v.power_state_at, "             \
              "v.last_report_at, (SELECT count(*) FROM disks d WHERE d.vm_id = v.id AND "    \
              "d.detached_ms IS NULL) FROM vms v WHERE ?1 IS NULL OR v.id = ?1 "             \
              "ORDER BY v.name, v.id")                                                       \
    X(SQ_DISKS, "SELECT d.id, d.vm_id, v.name, d.name, d.role, d.lun, d.sku, d.size_gib, "   \
                "d.tier, d.caching, d.managed_disk_id, d.write_accelerator, d.device, "      \
                TW_SQ_LAST_SEEN ", d.detached_at FROM disks d JOIN vms v ON v.id = d.vm_id " \
                "WHERE (?1 IS NULL AND d.detached_ms IS NULL) OR d.id = ?1 "                 \
                "ORDER BY v.name, v.id, d.lun, d.name")                                      \
    X(SQ_VM_DISKS, "SELECT d.id, d.vm_id, v.name, d.name, d.role, d.lun, d.sku, d.size_gib, " \
                   "d.tier, d.caching, d.managed_disk_id, d.write_accelerator, d.device, "   \
                   TW_SQ_LAST_SEEN ", d.detached_at FROM disks d JOIN vms v ON v.id = d.vm_id " \
                   "WHERE d.vm_id = ?1 AND d.detached_ms IS NULL ORDER BY d.lun, d.name")    \
    X(SQ_DISK_HISTORY, "SELECT observed_at, sku, tier, size_gib FROM disk_sku_history "      \
                       "WHERE disk_id = ?1 ORDER BY observed_ms, id")                        \
    X(SQ_DISK_RESULTS, "SELECT r.id, r.profile, " TW_SQ_RECORD " FROM (SELECT r.id, r.profile, row_number() " \
                       "OVER (PARTITION BY r.profile ORDER BY r.started_ms DESC, r.id DESC) " \
                       "AS n FROM result_disks rd JOIN results r ON r.id = rd.result_id "    \
                       "WHERE rd.disk_id = ?1) x JOIN results r ON r.id = x.id "             \
                       "WHERE x.n = 1 ORDER BY x.profile")                                  \
    X(SQ_VM_INV, "SELECT id, name, resource_id, subscription_id, resource_group, location, " \
                 "vm_size, tags, NULL, NULL, NULL, NULL FROM vms WHERE id = ?1")              \
    X(SQ_VM_INV_DISKS, "SELECT d.id, d.vm_id, v.name, d.name, d.role, d.lun, d.sku, "        \
                       "d.size_gib, d.tier, d.caching, d.managed_disk_id, d.write_accelerator, " \
                       "d.device, NULL, NULL FROM disks d JOIN vms v ON v.id = d.vm_id "     \
                       "WHERE d.vm_id = ?1 AND d.detached_ms IS NULL "                       \
                       "ORDER BY d.position, d.lun, d.name, d.id")                           \
    X(SQ_VM_LATEST_RESULTS, "SELECT " TW_SQ_RECORD " FROM result_latest l JOIN results r "   \
                            "ON r.id = l.result_id WHERE l.vm_id = ?1 "                       \
                            "ORDER BY l.target, l.profile")                                  \
    X(SQ_FLEET_VMS, "SELECT id, name, resource_id, subscription_id, resource_group, "         \
                    "location, vm_size, tags, NULL, NULL, NULL, NULL FROM vms ORDER BY id")   \
    X(SQ_FLEET_DISKS, "SELECT d.id, d.vm_id, NULL, d.name, d.role, d.lun, d.sku, d.size_gib, " \
                      "d.tier, d.caching, d.managed_disk_id, d.write_accelerator, d.device, "  \
                      "NULL, NULL FROM disks d WHERE d.detached_ms IS NULL "                   \
                      "ORDER BY d.vm_id, d.position, d.lun, d.name, d.id")                     \
    /* In the order of result_latest's key, so that no sort holds the                     \
     * fleet's records. */                                                                  \
    X(SQ_FLEET_RESULTS, "SELECT l.vm_id, " TW_SQ_RECORD " FROM result_latest l JOIN "        \
                        "results r ON r.id = l.result_id ORDER BY l.vm_id, l.target, "       \
                        "l.profile")                                                         \
    X(SQ_VM_IDS, "SELECT id FROM vms ORDER BY id")                                           \
    X(SQ_VMS_PAGE, "SELECT v.id, v.name, v.resource_id, v.subscription_id, v.resource_group, " \
                   "v.location, v.vm_size, v.tags, v.power_state, v.power_state_at, "        \
                   "v.last_report_at, (SELECT count(*) FROM disks d WHERE d.vm_id = v.id AND " \
                   "d.detached_ms IS NULL) FROM vms v WHERE " TW_SQ_VM_FILTER               \
                   " ORDER BY v.name, v.id LIMIT ?5 OFFSET ?6")                              \
    X(SQ_DISKS_PAGE, "SELECT d.id, d.vm_id, v.name, d.name, d.role, d.lun, d.sku, d.size_gib, " \
                     "d.tier, d.caching, d.managed_disk_id, d.write_accelerator, d.device, "  \
                     TW_SQ_LAST_SEEN ", d.detached_at FROM disks d JOIN vms v ON v.id = "     \
                     "d.vm_id WHERE d.detached_ms IS NULL AND " TW_SQ_VM_FILTER              \
                     " AND (?3 IS NULL OR d.sku = ?3 COLLATE NOCASE OR d.tier = ?3 COLLATE "   \
                     "NOCASE) ORDER BY v.name, v.id, d.lun, d.name LIMIT ?5 OFFSET ?6")       \
    X(SQ_VM_IDS_PAGE, "SELECT v.id FROM vms v WHERE " TW_SQ_VM_FILTER                        \
                      " AND (?3 IS NULL OR EXISTS (SELECT 1 FROM disks d WHERE d.vm_id = v.id " \
                      "AND d.detached_ms IS NULL AND (d.sku = ?3 COLLATE NOCASE OR d.tier = ?3 " \
                      "COLLATE NOCASE))) ORDER BY v.id LIMIT ?5 OFFSET ?6")                   \
    X(SQ_STATS, "SELECT (SELECT count(*) FROM reports), (SELECT count(*) FROM vms), "        \
                "(SELECT count(*) FROM disks WHERE detached_ms IS NULL), "                   \
                "(SELECT count(*) FROM results), "                                           \
                "(SELECT page_count FROM pragma_page_count()) * "                            \
                "(SELECT page_size FROM pragma_page_size())")                                \
    X(SQ_PRICE_PUT, "INSERT INTO price_books(region, currency, source, fetched_at, "         \
                    "fetched_ms, items) VALUES (?1, ?2, ?3, ?4, ?6, ?5)")                             \
    X(SQ_PRICE_GET, "SELECT source, fetched_at, items FROM price_books "                     \
                    "WHERE region = ?1 AND currency = ?2 ORDER BY id DESC LIMIT 1")          \
    X(SQ_PRICE_GET_AT, "SELECT source, fetched_at, items FROM price_books "                  \
                       "WHERE region = ?1 AND currency = ?2 AND fetched_ms <= ?3 "            \
                       "ORDER BY fetched_ms DESC, id DESC LIMIT 1")                          \
    X(SQ_ACTION_ADD, "INSERT INTO actions(plan_id, disk_id, kind, from_sku, to_sku, due_at, "  \
                     "due_ms, requested_at, dry_run, idempotency_key, vm_id, policy, reason, " \
                     "saving, currency, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?9, "     \
                     "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?7, ?8, coalesce(?10, "         \
                     "(SELECT vm_id FROM disks WHERE id = ?2)), ?11, ?12, ?13, ?14, "         \
                     "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))")                               \
    X(SQ_ACTION_GET, "SELECT state, attempts, claim_owner, version FROM actions WHERE id = ?1") \
    X(SQ_ACTION_CAS, "UPDATE actions SET state = ?3, version = version + 1, "                 \
                     "claim_owner = nullif(?4, ''), "                                         \
                     "attempts = attempts + (?3 = 'sent'), "                                  \
                     "last_error = CASE WHEN ?3 = 'failed' THEN ?5 ELSE last_error END, "     \
                     "detail = coalesce(?5, detail), "                                        \
                     "reason = CASE WHEN ?3 IN ('skipped', 'failed') AND ?5 IS NOT NULL "     \
                     "THEN ?5 ELSE reason END, "                                              \
                     "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), "                   \
                     "finished_at = CASE WHEN ?3 IN ('done', 'skipped', 'failed') "           \
                     "THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') ELSE finished_at END "       \
                     "WHERE id = ?1 AND state = ?2 AND (claim_owner IS NULL OR "              \
                     "claim_owner = ?4 OR claim_until_ms IS NULL OR claim_until_ms <= ?6)")    \
    X(SQ_ACTION_CLAIM, "UPDATE actions SET claim_owner = ?2, claim_until_ms = ?3 + ?4, "      \
                       "version = version + 1 WHERE id = ?1 AND state NOT IN ('done', "      \
                       "'skipped', 'failed') AND (claim_owner IS NULL OR claim_owner = ?2 OR "   \
                       "claim_until_ms IS NULL OR claim_until_ms <= ?3)")                    \
    X(SQ_ACTION_RELEASE, "UPDATE actions SET claim_owner = NULL, claim_until_ms = NULL, "     \
                         "version = version + 1 WHERE id = ?1 AND claim_owner = ?2 AND "       \
                         "claim_until_ms IS NOT NULL")                                         \
    X(SQ_ACTION_CLAIMED, "SELECT state, claim_owner, claim_until_ms FROM actions WHERE id = ?1") \
    X(SQ_TRANSITION_ADD, "INSERT INTO action_transitions(action_id, from_state, to_state, at, " \
                         "owner, detail) VALUES (?1, ?2, ?3, "                                 \
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?4, ?5)")                     \
    X(SQ_TRANSITIONS, "SELECT from_state, to_state, at, owner, detail FROM action_transitions " \
                      "WHERE action_id = ?1 ORDER BY id")                                     \
    X(SQ_TRANSITION_COUNT, "SELECT count(*) FROM action_transitions WHERE action_id = ?1")    \
    X(SQ_POWER_OBS, "INSERT INTO power_states(vm_id, observed_at, observed_ms, state, source) " \
                    "VALUES (?1, ?2, ?3, ?4, ?5)")                                           \
    X(SQ_VM_EXISTS, "SELECT 1 FROM vms WHERE id = ?1")                                       \
    X(SQ_DISK_EXISTS, "SELECT 1 FROM disks WHERE id = ?1")                                   \
    X(SQ_HIST_OBS, "INSERT INTO disk_sku_history(disk_id, observed_at, observed_ms, sku, tier, " \
                   "size_gib, source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")                   \
    X(SQ_POLICY_PUT, "INSERT INTO policies(name, body, created_at, updated_at) VALUES (?1, ?2, " \
                     "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', " \
                     "'now')) ON CONFLICT(name) DO UPDATE SET body = excluded.body, "         \
                     "updated_at = excluded.updated_at")                                     \
    X(SQ_POLICY_GET, "SELECT body FROM policies WHERE name = ?1")                            \
    X(SQ_PLAN_ADD, "INSERT INTO plans(policy, created_at, body, period_from, period_to) "     \
                   "VALUES (?1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?2, ?3, ?4)")          \
    X(SQ_CHECK, "PRAGMA integrity_check(1)")                                                 \
    /* The latest result of a VM, target and profile, with its verdict: a                   \
     * newer one (later start, or the same start stored later) takes the row. */            \
    X(SQ_LATEST_UPSERT, "INSERT INTO result_latest(vm_id, target, profile, result_id, "      \
                        "order_ms, report_id, verdict, verdict_skus, verdict_basis, "       \
                        "verdict_report) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "  \
                        "ON CONFLICT(vm_id, target, "                                        \
                        "profile) DO UPDATE SET result_id = excluded.result_id, order_ms = " \
                        "excluded.order_ms, report_id = excluded.report_id, verdict = "      \
                        "excluded.verdict, verdict_skus = excluded.verdict_skus, "           \
                        "verdict_basis = excluded.verdict_basis, verdict_report = "         \
                        "excluded.verdict_report WHERE excluded.order_ms > "                 \
                        "result_latest.order_ms OR (excluded.order_ms = "                    \
                        "result_latest.order_ms AND excluded.result_id > "                   \
                        "result_latest.result_id)")                                          \
    X(SQ_LATEST_UNKEEP, "UPDATE result_latest SET verdict_report = NULL WHERE vm_id IN "     \
                        "(?1, ?2)")                                                          \
    X(SQ_VM_COUNT, "SELECT count(*) FROM vms")                                               \
    X(SQ_FLEET_VERDICTS, "SELECT l.vm_id, l.verdict, l.verdict_skus, l.verdict IS NOT NULL " \
                         "AND l.verdict_basis = ?1 AND l.verdict_report = v.last_report_id " \
                         "FROM result_latest l JOIN vms v ON v.id = l.vm_id "                \
                         "ORDER BY l.vm_id, l.target, l.profile")                            \
    /* The page's rows are read from result_latest's key alone: the VM and                \
     * disk filters are looked up only when asked for, and the record's id                  \
     * and whether the row is its VM's first only for the rows kept (not                    \
     * for those OFFSET skips), so a page deep in the fleet costs little. */                \
    X(SQ_LATEST_PAGE, "SELECT l.vm_id, (SELECT r.result_uuid FROM results r WHERE r.id = "   \
                      "l.result_id), NOT EXISTS (SELECT 1 FROM result_latest f WHERE "      \
                      "f.vm_id = l.vm_id AND (f.target < l.target OR (f.target = l.target " \
                      "AND f.profile < l.profile))) FROM result_latest l WHERE ((?2 IS NULL " \
                      "AND ?4 IS NULL) OR EXISTS (SELECT 1 FROM vms v WHERE v.id = l.vm_id " \
                      "AND " TW_SQ_VM_FILTER ")) AND (?3 IS NULL OR EXISTS (SELECT 1 FROM "  \
                      "disks d WHERE d.vm_id = l.vm_id AND d.detached_ms IS NULL AND (d.sku " \
                      "= ?3 COLLATE NOCASE OR d.tier = ?3 COLLATE NOCASE))) "                \
                      "ORDER BY l.vm_id, l.target, l.profile LIMIT ?5 OFFSET ?6")            \
    X(SQ_VERDICTS_STALE, "SELECT l.vm_id, v.last_report_id FROM result_latest l JOIN vms v " \
                         "ON v.id = l.vm_id WHERE l.vm_id > ?3 AND (l.verdict_basis IS "    \
                         "NOT ?1 OR l.verdict_report IS NOT v.last_report_id) GROUP BY "   \
                         "l.vm_id "                                                          \
                         "ORDER BY l.vm_id LIMIT ?2")                                        \
    X(SQ_VERDICT_KEEP, "UPDATE result_latest SET verdict = ?5, verdict_skus = ?6, "          \
                       "verdict_basis = ?7, verdict_report = ?2 WHERE vm_id = ?1 AND "       \
                       "(?3 IS NULL OR ((?3 = '' OR target = ?3) AND profile = ?4 AND "    \
                       "result_id IN "                                                       \
                       "(SELECT id FROM results WHERE vm_id = ?1 AND result_uuid = ?8))) "   \
                       "AND (SELECT last_report_id FROM vms WHERE id = ?1) = ?2")            \
    X(SQ_VM_SIZES_DELETE, "DELETE FROM vm_sizes WHERE region = ?1")                          \
    X(SQ_VM_SIZES_INSERT, "INSERT OR REPLACE INTO vm_sizes(region, name, caps, source, "     \
                          "fetched_at, fetched_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")         \
    X(SQ_VM_SIZES_GET, "SELECT name, caps, source, fetched_at FROM vm_sizes WHERE region = " \
                       "?1 ORDER BY name")                                                   \
    /* ---- schema 5: the audit log, the executor's queue, originals ---- */                 \
    X(SQ_ACTION_LOG_ADD, "INSERT INTO action_transitions(action_id, from_state, to_state, at, " \
                         "owner, detail) VALUES (?1, NULL, 'planned', "                        \
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?2, ?3)")                     \
    X(SQ_ACTIONS_LIST, TW_SQ_ACTION_ROW " WHERE (?1 IS NULL OR v.name = ?1 COLLATE NOCASE) " \
                       "AND (?2 IS NULL OR a.disk_id = ?2) AND (?3 IS NULL OR a.state = ?3) " \
                       "AND (?4 IS NULL OR a.due_ms >= ?4) AND (?5 IS NULL OR a.due_ms < ?5) " \
                       "AND a.id > ?6 ORDER BY a.id LIMIT ?7")                                \
    X(SQ_ACTION_ROW_GET, TW_SQ_ACTION_ROW " WHERE a.id = ?1")                               \
    X(SQ_ACTIONS_DUE, "SELECT id FROM actions WHERE (state IN ('planned', 'checked') AND "    \
                      "coalesce(due_ms, 0) <= ?1 AND (?2 OR dry_run = 0)) OR state IN "       \
                      "('sent', 'verified') ORDER BY coalesce(due_ms, 0), id LIMIT ?3")      \
    X(SQ_ACTION_SET_OP, "UPDATE actions SET arm_operation_url = ?3, updated_at = "           \
                        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1 AND "            \
                        "claim_owner = ?2 AND claim_until_ms IS NOT NULL")                    \
    X(SQ_ACTION_ATTEMPT, "UPDATE actions SET attempts = attempts + 1, updated_at = "         \
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1 AND "           \
                         "claim_owner = ?2 AND claim_until_ms IS NOT NULL")                   \
    X(SQ_ACTION_SET_DUE, "UPDATE actions SET due_at = ?2, due_ms = ?3, updated_at = "        \
                         "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?1 AND state IN "  \
                         "('planned', 'checked')")                                            \
    X(SQ_ORIGINAL_SET, "INSERT INTO disk_originals(disk_id, sku, tier, action_id, set_at) "   \
                       "VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(disk_id) DO NOTHING")         \
    X(SQ_ORIGINAL_GET, "SELECT sku, tier FROM disk_originals WHERE disk_id = ?1")            \
    X(SQ_ORIGINAL_CLEAR, "DELETE FROM disk_originals WHERE disk_id = ?1")                    \
    /* ---- schema 5: the fleet from ARM (store_arm.c) ---- */                                \
    X(SQ_ARM_VM_FIND, TW_SQ_ARM_VM " WHERE identity = ?1")                                   \
    X(SQ_ARM_VM_FIND_PLACE, TW_SQ_ARM_VM " WHERE " TW_SQ_VM_PLACE                            \
                            " AND (resource_id = '' OR resource_id = ?4 COLLATE NOCASE) "      \
                            "ORDER BY id LIMIT 1")                                          \
    X(SQ_ARM_VM_INSERT, "INSERT INTO vms(identity, name, resource_id, subscription_id, "     \
                        "resource_group, location, vm_size, tags, last_report_id, "          \
                        "last_report_at, last_report_ms, arm_seen_at, arm_seen_ms) VALUES "  \
                        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '', '', 0, ?9, ?10)")              \
    X(SQ_ARM_VM_UPDATE, "UPDATE vms SET identity = ?2, resource_id = ?3, name = ?4, "        \
                        "location = ?5, vm_size = ?6, tags = ?7, arm_seen_at = ?8, "        \
                        "arm_seen_ms = ?9 WHERE id = ?1")                                    \
    X(SQ_ARM_VM_DISKS, TW_SQ_ARM_DISK " WHERE vm_id = ?1 ORDER BY id")                       \
    X(SQ_ARM_DISK_FIND, TW_SQ_ARM_DISK " WHERE identity = ?1")                               \
    X(SQ_ARM_DISK_INSERT, "INSERT INTO disks(identity, vm_id, name, role, lun, sku, size_gib, " \
                          "tier, caching, managed_disk_id, write_accelerator, last_seen_at, " \
                          "last_seen_ms, position, last_ownership_update) VALUES (?1, ?2, ?3, " \
                          "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)")            \
    X(SQ_ARM_DISK_UPDATE, "UPDATE disks SET identity = ?2, vm_id = ?3, name = ?4, role = ?5, " \
                          "lun = ?6, sku = ?7, size_gib = ?8, tier = ?9, caching = ?10, "     \
                          "managed_disk_id = ?11, write_accelerator = ?12, "                  \
                          "last_ownership_update = ?13, last_seen_at = ?14, last_seen_ms = ?15, " \
                          "position = CASE WHEN vm_id = ?3 THEN coalesce(position, ?16) ELSE " \
                          "?16 END, detached_at = NULL, detached_ms = NULL WHERE id = ?1")     \
    X(SQ_VM_BY_IDENTITY, "SELECT id FROM vms WHERE identity = ?1")                           \
    X(SQ_VM_SET_IDENTITY, "UPDATE vms SET identity = ?2 WHERE id = ?1")                      \
    X(SQ_VM_BY_NAME, "SELECT id, resource_group, subscription_id FROM vms WHERE name = ?1 "  \
                     "COLLATE NOCASE ORDER BY id")                                           \
    X(SQ_VM_FIND_PLACE, "SELECT id, last_report_ms, last_report_at FROM vms WHERE "          \
                        TW_SQ_VM_PLACE " AND (resource_id = '' OR ?4 = '' OR resource_id = " \
                        "?4 COLLATE NOCASE) ORDER BY id LIMIT 1")                           \
    X(SQ_SAVEPOINT_OP, "SAVEPOINT op")                                                       \
    X(SQ_RELEASE_OP, "RELEASE op")                                                           \
    X(SQ_ROLLBACK_TO_OP, "ROLLBACK TO op")

#define TW_SQ_ENUM(id, sql) id,
enum tw_sq_id { TW_SQ_STATEMENTS(TW_SQ_ENUM) SQ_COUNT };
#undef TW_SQ_ENUM

struct tw_sqlite {
    struct tw_store base;
    sqlite3 *db;
    char path[4096];
    sqlite3_stmt *stmt[SQ_COUNT];

    /* A writer's checkpointer (tw_store_open_opts.writer): a thread with a
     * connection of its own that copies the committed log into the
     * database every TW_SQ_CHECKPOINT_EVERY_MS, beside the writer. */
    sqlite3 *ckpt_db;           /* the checkpointer's connection; NULL: none */
    pthread_t ckpt_thread;
    bool ckpt_running;          /* the thread was started (join it) */
    bool ckpt_stop;             /* under ckpt_lock: the thread is to end */
    pthread_mutex_t ckpt_lock;
    pthread_cond_t ckpt_wake;
};

/* The prepared statement ID (reset, ready to bind), or NULL with ERR set. */
sqlite3_stmt *tw_sq_stmt(struct tw_sqlite *s, enum tw_sq_id id, struct tw_error *err);

/* Turns the handle's last SQLite error into a tw_err with a message naming
 * the database and WHAT was being done; resets STMT (NULL allowed). */
enum tw_err tw_sq_fail(struct tw_sqlite *s, sqlite3_stmt *stmt, struct tw_error *err,
                       const char *what);

/* A VM's stored tags (the vms.tags JSON object) into OUT (room for
 * TW_INV_MAX_TAGS); returns how many (store_savings_sqlite.c; the savings
 * walk and the monthly report's walk read them so). */
size_t tw_sq_tags_parse(const char *text, struct tw_tag *out);

/* Binds S as text (static: it must outlive the step); "" binds as NULL
 * when EMPTY_NULL. */
int tw_sq_text(sqlite3_stmt *st, int i, const char *s, bool empty_null);
/* Binds an RFC 3339 TEXT as milliseconds since 1970 (NULL when TEXT is NULL
 * or empty); TW_EPARSE naming WHAT when it is no such time (ST then reset
 * and unbound). */
enum tw_err tw_sq_bind_instant(sqlite3_stmt *st, int i, const char *text, const char *what,
                               struct tw_error *err);

/* Copies column COL's text into OUT (LEN bytes, truncated); NULL is "". */
void tw_sq_copy(sqlite3_stmt *st, int col, char *out, size_t len);

/* Operations of store_ingest.c and store_query.c. */
enum tw_err tw_sq_put_reports(struct tw_store *st, const struct tw_report *const *reps,
                              const char *const *raw, const size_t *raw_len,
                              const struct tw_store_judged *const *judged, size_t n,
                              const char *received_at, enum tw_put_status *status,
                              struct tw_error *errs, struct tw_error *err);
enum tw_err tw_sq_vms(struct tw_store *st, struct tw_store_vm_row **rows, size_t *n,
                      struct tw_error *err);
enum tw_err tw_sq_vm(struct tw_store *st, int64_t id, struct tw_store_vm_row *row,
                     struct tw_error *err);
enum tw_err tw_sq_vm_disks(struct tw_store *st, int64_t vm_id, struct tw_store_disk_row **rows,
                           size_t *n, struct tw_error *err);
enum tw_err tw_sq_disks(struct tw_store *st, struct tw_store_disk_row **rows, size_t *n,
                        struct tw_error *err);
enum tw_err tw_sq_disk(struct tw_store *st, int64_t id, struct tw_store_disk_row *row,
                       struct tw_error *err);
enum tw_err tw_sq_disk_history(struct tw_store *st, int64_t disk_id,
                               struct tw_store_sku_hist_row **rows, size_t *n,
                               struct tw_error *err);
enum tw_err tw_sq_disk_results(struct tw_store *st, int64_t disk_id,
                               struct tw_store_result_rec **recs, size_t *n,
                               struct tw_error *err);
enum tw_err tw_sq_vm_latest(struct tw_store *st, int64_t vm_id, struct tw_inventory *inv,
                            struct tw_result **results, size_t *n_results,
                            struct tw_error *err);
enum tw_err tw_sq_vm_ids(struct tw_store *st, int64_t **ids, size_t *n, struct tw_error *err);
enum tw_err tw_sq_fleet_latest(struct tw_store *st, tw_store_latest_fn fn, void *arg,
                               struct tw_error *err);

enum tw_err tw_sq_fleet_verdicts(struct tw_store *st, const char *basis, tw_store_verdict_fn fn,
                                 void *arg, size_t *n_vms, struct tw_error *err);
enum tw_err tw_sq_verdicts_stale(struct tw_store *st, const char *basis, int64_t after,
                                 size_t max,
                                 struct tw_store_stale **rows, size_t *n, struct tw_error *err);
enum tw_err tw_sq_verdicts_keep(struct tw_store *st, const char *basis,
                                const struct tw_store_kept *rows, size_t n, struct tw_error *err);
enum tw_err tw_sq_latest_page(struct tw_store *st, const struct tw_store_page *pg,
                              struct tw_store_latest_ref **rows, size_t *n, bool *more,
                              struct tw_error *err);
/* store_vmsizes.c */
enum tw_err tw_sq_vm_sizes_put(struct tw_store *st, const char *region, const char *source,
                               const char *fetched_at, const struct tw_store_vm_size *rows,
                               size_t n, struct tw_error *err);
enum tw_err tw_sq_vm_sizes_get(struct tw_store *st, const char *region,
                               struct tw_store_vm_size **rows, size_t *n, char *source,
                               size_t source_len, char *fetched_at, size_t fetched_len,
                               struct tw_error *err);

enum tw_err tw_sq_vms_page(struct tw_store *st, const struct tw_store_page *pg,
                           struct tw_store_vm_row **rows, size_t *n, bool *more,
                           struct tw_error *err);
enum tw_err tw_sq_disks_page(struct tw_store *st, const struct tw_store_page *pg,
                             struct tw_store_disk_row **rows, size_t *n, bool *more,
                             struct tw_error *err);
enum tw_err tw_sq_vm_ids_page(struct tw_store *st, const struct tw_store_page *pg, int64_t **ids,
                              size_t *n, bool *more, struct tw_error *err);

/* Operations of store_actions.c (with observations, policies, plans). */
enum tw_err tw_sq_power_observe(struct tw_store *st, int64_t vm_id, const char *state,
                                const char *observed_at, int64_t observed_ms,
                                enum tw_obs_source source, struct tw_error *err);
enum tw_err tw_sq_sku_observe(struct tw_store *st, int64_t disk_id, const char *sku,
                              const char *tier, int64_t size_gib, const char *observed_at,
                              int64_t observed_ms, enum tw_obs_source source, bool *added,
                              struct tw_error *err);
enum tw_err tw_sq_policy_put(struct tw_store *st, const char *name, const char *body,
                             struct tw_error *err);
enum tw_err tw_sq_policy_get(struct tw_store *st, const char *name, char **body,
                             struct tw_error *err);
enum tw_err tw_sq_plan_add(struct tw_store *st, const char *policy, const char *from,
                           const char *to, const char *body, int64_t *id, struct tw_error *err);
enum tw_err tw_sq_action_add(struct tw_store *st, const struct tw_store_action_new *a,
                             int64_t *id, struct tw_error *err);
enum tw_err tw_sq_action_move(struct tw_store *st, int64_t id, enum tw_action_state from,
                              enum tw_action_state to, const char *owner, const char *detail,
                              struct tw_error *err);
enum tw_err tw_sq_action_state(struct tw_store *st, int64_t id, enum tw_action_state *state,
                               int *attempts, struct tw_error *err);
enum tw_err tw_sq_action_claim(struct tw_store *st, int64_t id, const char *owner, int64_t now_ms,
                               int64_t lease_ms, int64_t *until_ms, struct tw_error *err);
enum tw_err tw_sq_action_release(struct tw_store *st, int64_t id, const char *owner,
                                 struct tw_error *err);
enum tw_err tw_sq_action_log_count(struct tw_store *st, int64_t id, size_t *n,
                                   struct tw_error *err);
/* Schema 5 (store_actions.c): the audit log, the queue, originals. */
enum tw_err tw_sq_actions_list(struct tw_store *st, const struct tw_store_action_filter *f,
                               struct tw_store_action_row **rows, size_t *n, bool *more,
                               struct tw_error *err);
enum tw_err tw_sq_action_get(struct tw_store *st, int64_t id, struct tw_store_action_row *row,
                             struct tw_error *err);
enum tw_err tw_sq_action_moves(struct tw_store *st, int64_t id,
                               struct tw_store_action_move_row **rows, size_t *n,
                               struct tw_error *err);
enum tw_err tw_sq_actions_due(struct tw_store *st, int64_t now_ms, bool dry_run, size_t max,
                              int64_t **ids, size_t *n, struct tw_error *err);
enum tw_err tw_sq_action_set_operation(struct tw_store *st, int64_t id, const char *owner,
                                       const char *url, struct tw_error *err);
enum tw_err tw_sq_action_count_attempt(struct tw_store *st, int64_t id, const char *owner,
                                       struct tw_error *err);
enum tw_err tw_sq_action_set_due(struct tw_store *st, int64_t id, const char *due_at,
                                 struct tw_error *err);
enum tw_err tw_sq_disk_original_set(struct tw_store *st, int64_t disk_id, const char *sku,
                                    const char *tier, int64_t action_id, const char *at,
                                    bool *kept, struct tw_error *err);
enum tw_err tw_sq_disk_original_get(struct tw_store *st, int64_t disk_id, char *sku, char *tier,
                                    bool *found, struct tw_error *err);
enum tw_err tw_sq_disk_original_clear(struct tw_store *st, int64_t disk_id,
                                      struct tw_error *err);
/* Schema 5 (store_arm.c): the fleet from ARM. */
enum tw_err tw_sq_arm_vm_put(struct tw_store *st, const struct tw_store_arm_vm *v,
                             const char *observed_at, int64_t observed_ms,
                             void (*fn)(void *arg, const struct tw_store_arm_change *c),
                             void *arg, int64_t *vm_id, struct tw_error *err);
enum tw_err tw_sq_vm_by_resource_id(struct tw_store *st, const char *id, int64_t *vm_id,
                                    struct tw_error *err);
enum tw_err tw_sq_vm_by_name(struct tw_store *st, const char *name, int64_t *vm_id,
                             struct tw_error *err);

/* Operation of store_stats.c. */
enum tw_err tw_sq_fleet_counts(struct tw_store *st, int64_t silent_before_ms,
                               struct tw_store_fleet_counts *out, struct tw_error *err);

/* Operations of store_savings_sqlite.c. */
enum tw_err tw_sq_disk_attrs_observe(struct tw_store *st, int64_t disk_id,
                                     const struct tw_store_disk_attrs *a,
                                     const char *observed_at, int64_t observed_ms,
                                     enum tw_obs_source source, bool *applied,
                                     struct tw_error *err);
enum tw_err tw_sq_savings_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                               struct tw_store_sv_cursor **out, struct tw_error *err);
enum tw_err tw_sq_savings_next(struct tw_store_sv_cursor *c, struct tw_store_sv_vm *vm,
                               bool *done, struct tw_error *err);
void tw_sq_savings_close(struct tw_store_sv_cursor *c);
enum tw_err tw_sq_pricebook_currencies(struct tw_store *st, char (*out)[4], size_t max,
                                       size_t *n, struct tw_error *err);

/* Operations of store_drift.c. */
enum tw_err tw_sq_drift_open(struct tw_store *st, const struct tw_store_drift_row *d,
                             int64_t since_ms, bool *started, struct tw_error *err);
enum tw_err tw_sq_drift_close(struct tw_store *st, int64_t disk_id, const char *at, int64_t at_ms,
                              bool *ended, struct tw_error *err);
enum tw_err tw_sq_drift_list(struct tw_store *st, bool open_only,
                             struct tw_store_drift_row **rows, size_t *n, struct tw_error *err);
enum tw_err tw_sq_vm_power_before(struct tw_store *st, int64_t vm_id, int64_t before_ms,
                                  size_t max, struct tw_store_sv_power **out, size_t *n,
                                  struct tw_error *err);
enum tw_err tw_sq_policy_names(struct tw_store *st, char ***names, size_t *n,
                               struct tw_error *err);
enum tw_err tw_sq_drift_sync(struct tw_store *st, const struct tw_store_drift_row *rows,
                             const int64_t *since_ms, size_t n, const char *at, int64_t at_ms,
                             bool *started, struct tw_store_drift_row **ended, size_t *n_ended,
                             struct tw_error *err);

/* store_report_sqlite.c: the monthly report's reads */
enum tw_err tw_sq_report_read(struct tw_store *st, int64_t from_ns, int64_t to_ns,
                              int64_t mark_from_ns, int64_t mark_to_ns, const char *currency,
                              struct tw_store_report *out, struct tw_error *err);
enum tw_err tw_sq_report_book_items(struct tw_store *st, int64_t id, char **items, size_t *len,
                                    struct tw_error *err);
enum tw_err tw_sq_report_begin(struct tw_store *st, struct tw_error *err);
void tw_sq_report_end(struct tw_store *st);
enum tw_err tw_sq_report_fleet_open(struct tw_store *st, int64_t from_ms, int64_t to_ms,
                                    int64_t vm_id, struct tw_store_rp_cursor **out,
                                    struct tw_error *err);
enum tw_err tw_sq_report_fleet_next(struct tw_store_rp_cursor *c, struct tw_store_rp_vm *vm,
                                    bool *done, struct tw_error *err);
void tw_sq_report_fleet_close(struct tw_store_rp_cursor *c);
enum tw_err tw_sq_report_attached(struct tw_store *st, int64_t from_ms, int64_t *n,
                                  struct tw_error *err);

#endif

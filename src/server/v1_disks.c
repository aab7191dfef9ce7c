/*
 * v1_disks.c - GET /api/v1/disks (with each disk's verdicts) and
 * /api/v1/disks/{id} (with its SKU history, latest results and verdicts).
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/json_shape.h"

void tw_v1_disks(struct tw_req *rq)
{
    struct tw_store_page pg;
    if (!tw_req_page(rq, &pg, NULL))
        return;
    WITH_STORE(rq, st, err);
    json_t *disks = NULL;
    struct tw_store_disk_row *rows = NULL;
    size_t n = 0;
    bool more = false;
    enum tw_err rc = tw_store_disks_page(st, &pg, &rows, &n, &more, &err);
    if (rc == TW_OK && !(disks = tw_shape_disks(rows, n)))
        rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
    /* The verdicts of the page's VMs only, each VM's given to its own
     * disks (rows come grouped by VM): a disk is matched against its VM's
     * verdicts, not the page's. */
    for (size_t i = 0, j; rc == TW_OK && i < n; i = j) {
        for (j = i + 1; j < n && rows[j].vm_id == rows[i].vm_id;)
            j++;
        json_t *verdicts = json_array(), *errors = json_array(), *mine = json_array();
        rc = tw_v1_vm_verdicts(rq->srv, st, rows[i].vm_id, verdicts, errors, &err);
        if (rc == TW_ENOENT) { /* gone since the page was read */
            tw_error_clear(&err);
            rc = TW_OK;
        }
        for (size_t k = i; rc == TW_OK && mine && k < j; k++)
            if (json_array_append(mine, json_array_get(disks, k)) != 0)
                rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
        if (rc == TW_OK && !mine)
            rc = tw_error_set(&err, TW_ENOMEM, "out of memory");
        if (rc == TW_OK)
            tw_v1_attach_disk_verdicts(mine, verdicts);
        json_decref(mine);
        json_decref(verdicts);
        json_decref(errors);
    }
    free(rows);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(disks);
        tw_req_store_error(rq, rc == TW_ENOENT ? TW_EIO : rc, &err);
        return;
    }
    tw_req_json(rq, 200, json_pack("{s:o, s:o}", "disks", disks, "next_cursor",
                                   tw_page_next_cursor(&pg, more)));
}

/* Disk ROW with its SKU history and latest results, as GET /disks/{id}
 * shows it. */
static enum tw_err disk_object(struct tw_store *st, const struct tw_store_disk_row *row,
                               json_t **out, struct tw_error *err)
{
    struct tw_store_sku_hist_row *hist = NULL;
    struct tw_store_result_rec *recs = NULL;
    size_t nh = 0, nr = 0;
    *out = NULL;
    enum tw_err rc = tw_store_disk_history(st, row->id, &hist, &nh, err);
    if (rc == TW_OK)
        rc = tw_store_disk_results(st, row->id, &recs, &nr, err);
    if (rc == TW_OK) {
        /* The _new setters take their value even when they fail. */
        json_t *d = tw_shape_disk(row, true);
        bool ok = d &&
                  json_object_set_new(d, "sku_history", tw_shape_sku_history(hist, nh)) == 0 &&
                  json_object_set_new(d, "results", tw_shape_results(recs, nr)) == 0;
        if (!ok) {
            json_decref(d);
            rc = tw_error_set(err, TW_ENOMEM, "out of memory reading a disk's results");
        } else {
            *out = d;
        }
    }
    free(hist);
    tw_store_result_recs_free(recs, nr);
    return rc;
}

void tw_v1_disk(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *disk = NULL, *verdicts = json_array(), *errors = json_array();
    struct tw_store_disk_row row;
    enum tw_err rc = tw_store_disk(st, rq->id, &row, &err);
    if (rc == TW_OK)
        rc = disk_object(st, &row, &disk, &err);
    if (rc == TW_OK)
        rc = tw_v1_vm_verdicts(rq->srv, st, row.vm_id, verdicts, errors, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(disk);
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_t *one = json_array();
    json_array_append(one, disk);
    tw_v1_attach_disk_verdicts(one, verdicts);
    json_decref(one);
    json_decref(verdicts);
    json_decref(errors);
    tw_req_json(rq, 200, disk);
}


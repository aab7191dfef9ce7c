/*
 * v1_vms.c - GET /api/v1/vms and /api/v1/vms/{id} (with the VM's disks and
 * verdicts).
 */
#include "server/server_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/json_shape.h"

void tw_v1_vms(struct tw_req *rq)
{
    struct tw_store_page pg;
    if (!tw_req_page(rq, &pg, NULL))
        return;
    WITH_STORE(rq, st, err);
    struct tw_store_vm_row *rows = NULL;
    size_t n = 0;
    bool more = false;
    enum tw_err rc = tw_store_vms_page(st, &pg, &rows, &n, &more, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_t *vms = json_array();
    for (size_t i = 0; vms && i < n; i++)
        if (json_array_append_new(vms, tw_shape_vm(&rows[i])) != 0) {
            json_decref(vms);
            vms = NULL;
        }
    tw_store_vm_rows_free(rows, n);
    tw_req_json(rq, 200,
                vms ? json_pack("{s:o, s:o}", "vms", vms, "next_cursor",
                                tw_page_next_cursor(&pg, more))
                    : NULL);
}

/* VM ID with its attached disks as GET /vms/{id} shows it. */
static enum tw_err vm_object(struct tw_store *st, int64_t id, json_t **out, struct tw_error *err)
{
    struct tw_store_vm_row row;
    struct tw_store_disk_row *disks = NULL;
    size_t n = 0;
    *out = NULL;
    enum tw_err rc = tw_store_vm(st, id, &row, err);
    if (rc != TW_OK)
        return rc;
    rc = tw_store_vm_disks(st, id, &disks, &n, err);
    if (rc == TW_OK) {
        json_t *vm = tw_shape_vm(&row);
        json_t *list = tw_shape_disks(disks, n);
        if (!vm || !list || json_object_set_new(vm, "disks", list) != 0) {
            json_decref(vm);
            rc = tw_error_set(err, TW_ENOMEM, "out of memory");
        } else {
            *out = vm;
        }
    }
    free(disks);
    free(row.tags);
    return rc;
}

void tw_v1_vm(struct tw_req *rq)
{
    WITH_STORE(rq, st, err);
    json_t *vm = NULL, *verdicts = json_array(), *errors = json_array();
    enum tw_err rc = vm_object(st, rq->id, &vm, &err);
    if (rc == TW_OK)
        rc = tw_v1_vm_verdicts(rq->srv, st, rq->id, verdicts, errors, &err);
    tw_srv_store_put(rq->srv, st);
    if (rc != TW_OK) {
        json_decref(vm);
        json_decref(verdicts);
        json_decref(errors);
        tw_req_store_error(rq, rc, &err);
        return;
    }
    json_object_set_new(vm, "verdicts", verdicts);
    json_object_set_new(vm, "verdict_errors", errors);
    tw_req_json(rq, 200, vm);
}


/*
 * pool.c - the read handles of the store: opened on demand up to the
 * pool's size, each used by one request thread at a time.
 */
#include "server/server_int.h"


/* ---- the store pool ---- */

struct tw_store *tw_srv_store_get(struct tw_server *srv, struct tw_error *err)
{
    pthread_mutex_lock(&srv->pool_lock);
    for (;;) {
        if (srv->pool_free) {
            struct tw_store *st = srv->pool[--srv->pool_free];
            pthread_mutex_unlock(&srv->pool_lock);
            return st;
        }
        if (srv->pool_open < srv->pool_max)
            break;
        pthread_cond_wait(&srv->pool_cond, &srv->pool_lock);
    }
    srv->pool_open++;
    pthread_mutex_unlock(&srv->pool_lock);
    struct tw_store *st = NULL;
    if (tw_store_open(srv->db_path, &st, err) != TW_OK) {
        pthread_mutex_lock(&srv->pool_lock);
        srv->pool_open--;
        pthread_cond_signal(&srv->pool_cond);
        pthread_mutex_unlock(&srv->pool_lock);
        return NULL;
    }
    return st;
}

void tw_srv_store_put(struct tw_server *srv, struct tw_store *st)
{
    if (!st)
        return;
    pthread_mutex_lock(&srv->pool_lock);
    srv->pool[srv->pool_free++] = st;
    pthread_cond_signal(&srv->pool_cond);
    pthread_mutex_unlock(&srv->pool_lock);
}


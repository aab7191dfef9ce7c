/*
 * reqctx.h - the libmicrohttpd request skeleton the server and the
 * simulator share.
 *
 * Lifecycle (as libmicrohttpd's post_example.c): the first call of the
 * access handler for a request allocates its context (on_request's
 * *con_cls is NULL); later calls append the body's chunks to a buffer with
 * a ceiling; the last call (no more data) answers; the completion callback
 * frees the context.  tw_httpd_take is the "append until done" step; a
 * caller whose context is no more than the body uses struct tw_httpd_req,
 * one whose context holds more (the server's) keeps its own and calls
 * tw_httpd_take on its body.
 */
#ifndef TW_HTTPD_REQCTX_H
#define TW_HTTPD_REQCTX_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/err.h"

/* What a later call of the access handler is to do. */
enum tw_httpd_step {
    TW_HTTPD_MORE,     /* a chunk was taken: return MHD_YES, more calls follow */
    TW_HTTPD_DISPATCH, /* the whole body is in: answer the request */
    TW_HTTPD_TOO_BIG,  /* the whole body is in and went over the ceiling: answer 413 */
};

/* One later call's data (*SIZE bytes at DATA).  With *SIZE > 0 the chunk is
 * appended to BODY (or dropped when BODY is NULL: a body the caller does
 * not keep), *SIZE is set to 0 and the answer is TW_HTTPD_MORE.  A chunk
 * that does not fit sets *TOO_BIG and frees BODY's contents: the rest of
 * the body is read and dropped, never held.  With *SIZE == 0 (the last
 * call) the answer is TW_HTTPD_TOO_BIG if *TOO_BIG, else
 * TW_HTTPD_DISPATCH. */
enum tw_httpd_step tw_httpd_take(struct tw_buf *body, bool *too_big, const char *data,
                                 size_t *size);

/* A request's context that is its body and nothing else. */
struct tw_httpd_req {
    struct tw_buf body; /* capped; body.data is NULL while empty */
    bool too_big;       /* a chunk did not fit: answer 413 */
};

/* The first call: a new context whose body holds at most MAX bytes, or
 * NULL when out of memory (return MHD_NO). */
struct tw_httpd_req *tw_httpd_req_new(size_t max);

/* tw_httpd_take on RQ's body. */
enum tw_httpd_step tw_httpd_req_step(struct tw_httpd_req *rq, const char *data, size_t *size);

/* The completion callback's part: frees the context *CON_CLS points at
 * (if any) and clears it. */
void tw_httpd_req_completed(void **con_cls);

/* Binds and listens on HOST (a numeric IPv4 or IPv6 address) at PORT (0
 * picks a free one) with BACKLOG, for MHD_OPTION_LISTEN_SOCKET: *FD the
 * socket, *BOUND the port it got, *V6 (if not NULL) whether it is IPv6.
 * Binding here, rather than in libmicrohttpd, says exactly why it failed
 * and reads back the port the kernel chose. */
enum tw_err tw_httpd_listen(const char *host, unsigned port, int backlog, int *fd, unsigned *bound,
                            bool *v6, struct tw_error *err);

#endif

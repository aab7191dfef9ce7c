/*
 * reqctx.c - the libmicrohttpd request skeleton the server and the
 * simulator share (reqctx.h).
 */
#include "httpd/reqctx.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum tw_httpd_step tw_httpd_take(struct tw_buf *body, bool *too_big, const char *data, size_t *size)
{
    if (!*size)
        return *too_big ? TW_HTTPD_TOO_BIG : TW_HTTPD_DISPATCH;
    if (body && !*too_big && tw_buf_append(body, data, *size) != TW_OK) {
        *too_big = true;
        tw_buf_cleanup(body);
    }
    *size = 0;
    return TW_HTTPD_MORE;
}

struct tw_httpd_req *tw_httpd_req_new(size_t max)
{
    struct tw_httpd_req *rq = calloc(1, sizeof(*rq));
    if (rq)
        tw_buf_init(&rq->body, max);
    return rq;
}

enum tw_httpd_step tw_httpd_req_step(struct tw_httpd_req *rq, const char *data, size_t *size)
{
    return tw_httpd_take(&rq->body, &rq->too_big, data, size);
}

void tw_httpd_req_completed(void **con_cls)
{
    struct tw_httpd_req *rq = *con_cls;
    if (!rq)
        return;
    tw_buf_cleanup(&rq->body);
    free(rq);
    *con_cls = NULL;
}

enum tw_err tw_httpd_listen(const char *host, unsigned port, int backlog, int *fd_out,
                            unsigned *bound, bool *v6_out, struct tw_error *err)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t sl;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    bool v6;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        sl = sizeof(*s4);
        v6 = false;
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        sl = sizeof(*s6);
        v6 = true;
    } else {
        return tw_error_set(err, TW_EINVAL,
                            "can't listen on %s: not a numeric IPv4 or IPv6 address", host);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return tw_error_set(err, TW_EIO, "can't create a socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (v6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, backlog) != 0) {
        int e = errno;
        close(fd);
        return tw_error_set(err, TW_EIO, "can't listen on %s port %u: %s%s", host, port,
                            strerror(e),
                            e == EADDRINUSE ? " (give another port, or 0 for a free one)" : "");
    }
    sl = sizeof(ss);
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    *bound = ntohs(v6 ? s6->sin6_port : s4->sin_port);
    *fd_out = fd;
    if (v6_out)
        *v6_out = v6;
    return TW_OK;
}

/*
 * gate.h - the server's front door (gate.c): one thread accepts every
 * connection, counts it against a limit per client address and one in
 * all, holds it until its request head is in (for at most the header
 * deadline), checks the head and hands it to a libmicrohttpd daemon, or
 * answers it with the API's JSON error.
 */
#ifndef TW_SERVER_GATE_H
#define TW_SERVER_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "core/err.h"

#define TW_GATE_KEY_LEN 17 /* a client address: family, then 4 or 16 bytes */

struct tw_gate_opts {
    bool tls;                 /* heads are encrypted: count and hand over at once */
    unsigned max_conns;       /* open connections in all (held here or by a daemon) */
    unsigned max_per_client;  /* ... from one client address */
    unsigned head_timeout_ms; /* the request head's deadline from the accept */
    size_t head_max;          /* the request line and headers, bytes */
    size_t target_max;        /* the request target, bytes */
    size_t params_max;        /* query parameters */
    size_t headers_max;       /* header lines */
    size_t body_max;          /* the largest body: a chunk announced above it is refused */
    struct MHD_Daemon **daemons; /* handed over to, round robin */
    size_t n_daemons;
};

/* What the checks say of a head: STATUS 0 passes it on. */
struct tw_gate_verdict {
    unsigned status;
    const char *reason, *code; /* "URI Too Long", "uri_too_long" */
    char msg[256];
    bool chunked;                     /* passed with Transfer-Encoding: chunked */
    bool has_length;                  /* passed with a Content-Length ... */
    unsigned long long content_length; /* ... of this many bytes */
};

/* The checks of one request head: B holds N bytes that end with the empty
 * line ending the head (LF or CRLF line ends).  Refused: a request line
 * that is not METHOD TARGET HTTP/1.x (400), another HTTP version (505), a
 * target over TARGET_MAX bytes or with more than PARAMS_MAX query
 * parameters (414), more than HEADERS_MAX header lines (431), a header
 * line that is not Name: value or is folded, a Content-Length that is not
 * one number or two that differ, a Transfer-Encoding other than chunked,
 * both of them (400). */
void tw_gate_check_head(const char *b, size_t n, const struct tw_gate_opts *o,
                        struct tw_gate_verdict *v);

/* The offset just past the empty line ending the head in B (N bytes), or 0
 * when it is not in yet. */
size_t tw_gate_head_end(const char *b, size_t n, size_t from);

/* The framing of a chunked body, read as it passes (the relay checks it,
 * so that a malformed one is answered with JSON, not libmicrohttpd's
 * HTML).  Zeroed to start. */
struct tw_gate_chunks {
    int state;
    uint64_t left;   /* bytes of the chunk, or digits of its size, still to come */
    size_t line;     /* bytes of the size line or trailer line so far */
    size_t trailers; /* bytes of the trailer section so far */
    bool colon;      /* the trailer line has its "Name:" */
};

/* Reads N bytes of a chunked body at B.  Returns how many belong to the
 * body (all, or fewer when it ended inside B: *DONE is then set), or
 * stops at an error with *STATUS set: 400 for bad framing, 413 for a chunk
 * announced over MAX bytes, MSG (256 bytes) saying what. */
size_t tw_gate_chunks_feed(struct tw_gate_chunks *ck, const char *b, size_t n, uint64_t max,
                           bool *done, unsigned *status, char msg[256]);

struct tw_gate;

/* Starts the accepting thread on the listening socket LFD (taken: closed by
 * tw_gate_stop, or by the caller when this fails). */
enum tw_err tw_gate_start(const struct tw_gate_opts *o, int lfd, struct tw_gate **out,
                          struct tw_error *err);
/* Stops accepting (the listening socket closes, heads still held are
 * dropped); the daemons keep the connections they have, and the bodies
 * being relayed go on until tw_gate_free.  NULL allowed. */
void tw_gate_stop(struct tw_gate *g);
/* Ends the gate's thread (relays still under way are cut) and returns
 * once it is gone: from then on the gate hands no connection to a daemon,
 * so the daemons may stop.  The counts stay usable (the daemons' close
 * callbacks) until tw_gate_free.  NULL allowed. */
void tw_gate_join(struct tw_gate *g);
void tw_gate_free(struct tw_gate *g); /* ends it first; NULL allowed */

/* The client address of SA as a key of the counts. */
void tw_gate_key(const struct sockaddr *sa, uint8_t key[TW_GATE_KEY_LEN]);
/* A daemon closed a connection of KEY (its close callback; not for a
 * relayed one, whose daemon side is a local socket). */
void tw_gate_closed(struct tw_gate *g, const uint8_t key[TW_GATE_KEY_LEN]);
/* A daemon closed its end of a relayed connection: the descriptor counted
 * for it in the limit is free again. */
void tw_gate_relay_closed(struct tw_gate *g);
/* Connections open now (held here or by a daemon); refused so far. */
unsigned tw_gate_open_connections(struct tw_gate *g);
uint64_t tw_gate_refused(struct tw_gate *g);

#endif

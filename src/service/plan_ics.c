/*
 * plan_ics.c - the plan as an iCalendar file (RFC 5545) an operations team
 * subscribes to: one VEVENT per action, a quarter-hour from its due time,
 * every time in UTC ("...Z"); TEXT values escaped (backslash, semicolon,
 * comma, newline); CRLF line ends; content lines folded at 75 octets, a
 * fold never inside a UTF-8 sequence.
 */
#include "service/plan.h"

#include "core/buf.h"
#include "core/time.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLUSH_AT (64 * 1024)
#define ICS_LINE_MAX 75         /* octets of a content line, CRLF aside */
#define EVENT_NS (15 * TW_NS_PER_MIN)

/* The octets of the UTF-8 sequence that starts with byte C (1 for a byte
 * that starts none: it is written alone). */
static size_t seq_len(unsigned char c)
{
    return c >= 0xf0 && c < 0xf8 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

/* LINE (LEN octets, no line end) folded: a CRLF and a space before the
 * octet that would make a line longer than 75, never inside a sequence. */
static enum tw_err put_line(struct tw_buf *b, const char *line, size_t len)
{
    size_t col = 0;
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < len;) {
        size_t n = seq_len((unsigned char)line[i]);
        if (n > len - i)
            n = len - i;
        for (size_t k = 1; k < n; k++)
            if (((unsigned char)line[i + k] & 0xc0) != 0x80) {
                n = k; /* a broken sequence: its bytes alone */
                break;
            }
        if (col + n > ICS_LINE_MAX) {
            rc = tw_buf_append(b, "\r\n ", 3);
            col = 1;
        }
        if (rc == TW_OK)
            rc = tw_buf_append(b, line + i, n);
        col += n;
        i += n;
    }
    return rc == TW_OK ? tw_buf_append(b, "\r\n", 2) : rc;
}

/* S as a TEXT value appended to L: \\ \; \, and \n escaped; a CR (alone or
 * before a LF) read as a line end; other control bytes as a space. */
static enum tw_err put_text(struct tw_buf *l, const char *s)
{
    enum tw_err rc = TW_OK;
    for (const char *p = s; rc == TW_OK && *p; p++) {
        switch (*p) {
        case '\\': rc = tw_buf_append(l, "\\\\", 2); break;
        case ';': rc = tw_buf_append(l, "\\;", 2); break;
        case ',': rc = tw_buf_append(l, "\\,", 2); break;
        case '\r':
            if (p[1] == '\n')
                p++;
            rc = tw_buf_append(l, "\\n", 2);
            break;
        case '\n': rc = tw_buf_append(l, "\\n", 2); break;
        default:
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                rc = tw_buf_append(l, " ", 1);
            else
                rc = tw_buf_append(l, p, 1);
        }
    }
    return rc;
}

/* NAME:VALUE with VALUE as TEXT, folded, into B (L the scratch line). */
static enum tw_err prop_text(struct tw_buf *b, struct tw_buf *l, const char *name,
                             const char *value)
{
    l->len = 0;
    enum tw_err rc = tw_buf_printf(l, "%s:", name);
    if (rc == TW_OK)
        rc = put_text(l, value);
    return rc == TW_OK ? put_line(b, l->data, l->len) : rc;
}

/* "20261204T201000Z" of NS. */
static bool utc_basic(int64_t ns, char *buf, size_t cap)
{
    struct tw_civil c;
    tw_civil_from_ns(ns, &c);
    if (c.year < 0 || c.year > 9999)
        return false;
    int k = snprintf(buf, cap, "%04d%02d%02dT%02d%02d%02dZ", (int)c.year, c.month % 100,
                     c.day % 100, c.hour % 100, c.minute % 100, c.second % 100);
    return k > 0 && (size_t)k < cap;
}

struct iw {
    tw_opp_write_fn write;
    void *arg;
    struct tw_buf b, l, t;
    const struct tw_plan_summary *live; /* the run's header fields */
    bool head;
    char stamp[24];
    char domain[40];             /* the UIDs' right-hand side */
};

/* The UIDs' domain: "tierwise" alone, or "<16 hex digits>.tierwise", the
 * 64-bit FNV-1a hash of the installation (database path and host), so that
 * two installations planning the same policy, disk id and instant give
 * two events, not one a calendar would merge. */
static void domain_of(const char *inst, char *buf, size_t cap)
{
    if (!inst || !inst[0]) {
        snprintf(buf, cap, "tierwise");
        return;
    }
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)inst; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    snprintf(buf, cap, "%016llx.tierwise", (unsigned long long)h);
}

static enum tw_err flush(struct iw *w, bool all)
{
    if (!all && w->b.len < FLUSH_AT)
        return TW_OK;
    enum tw_err rc = w->b.len ? w->write(w->arg, w->b.data, w->b.len) : TW_OK;
    w->b.len = 0;
    return rc;
}

static enum tw_err head(struct iw *w)
{
    w->head = true;
    static const char *const lines[] = {"BEGIN:VCALENDAR", "VERSION:2.0",
                                        "PRODID:-//tierwise//tierwise plan//EN",
                                        "CALSCALE:GREGORIAN", "METHOD:PUBLISH"};
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < sizeof(lines) / sizeof(lines[0]); i++)
        rc = put_line(&w->b, lines[i], strlen(lines[i]));
    w->t.len = 0;
    if (rc == TW_OK)
        rc = tw_buf_printf(&w->t, "tierwise plan of %s", w->live->policy);
    if (rc == TW_OK)
        rc = prop_text(&w->b, &w->l, "X-WR-CALNAME", w->t.data);
    return rc;
}

static enum tw_err on_action(void *arg, const struct tw_plan_action *a)
{
    struct iw *w = arg;
    enum tw_err rc = TW_OK;
    if (!w->head && (rc = head(w)) != TW_OK)
        return rc;
    char start[24], end[24];
    int64_t end_ns;
    if (!tw_time_add(a->due_ns, EVENT_NS, &end_ns) || !utc_basic(a->due_ns, start, sizeof(start)) ||
        !utc_basic(end_ns, end, sizeof(end)))
        return TW_ERANGE;
    bool down = a->kind == TW_PLAN_DOWNGRADE;
    char saving[64];
    struct tw_error e = {0};
    if (tw_amount_format(a->saving, w->live->currency, saving, sizeof(saving), &e) != TW_OK)
        return e.code ? e.code : TW_EINVAL;
    if ((rc = put_line(&w->b, "BEGIN:VEVENT", 12)) != TW_OK)
        return rc;
    w->t.len = 0;
    if ((rc = tw_buf_printf(&w->t, "%s@%s", a->idempotency_key, w->domain)) != TW_OK ||
        (rc = prop_text(&w->b, &w->l, "UID", w->t.data)) != TW_OK)
        return rc;
    w->l.len = 0;
    if ((rc = tw_buf_printf(&w->l, "DTSTAMP:%s", w->stamp)) != TW_OK ||
        (rc = put_line(&w->b, w->l.data, w->l.len)) != TW_OK)
        return rc;
    w->l.len = 0;
    if ((rc = tw_buf_printf(&w->l, "DTSTART:%s", start)) != TW_OK ||
        (rc = put_line(&w->b, w->l.data, w->l.len)) != TW_OK)
        return rc;
    w->l.len = 0;
    if ((rc = tw_buf_printf(&w->l, "DTEND:%s", end)) != TW_OK ||
        (rc = put_line(&w->b, w->l.data, w->l.len)) != TW_OK)
        return rc;
    w->t.len = 0;
    if ((rc = tw_buf_printf(&w->t, "%s disk %s of VM %s to %s", down ? "Downgrade" : "Upgrade",
                            a->disk, a->vm, a->to_sku)) != TW_OK ||
        (rc = prop_text(&w->b, &w->l, "SUMMARY", w->t.data)) != TW_OK)
        return rc;
    w->t.len = 0;
    if (down)
        rc = tw_buf_printf(&w->t,
                           "%s.\nFrom %s to %s, due %s (%s).\nExpected saving: %s %s "
                           "(the whole window).\nKey: %s",
                           a->reason, a->from_sku, a->to_sku, a->due_local, w->live->timezone,
                           saving, w->live->currency, a->idempotency_key);
    else
        rc = tw_buf_printf(&w->t,
                           "%s.\nFrom %s back to %s, due %s (%s), before the VM is due to "
                           "start.\nKey: %s",
                           a->reason, a->from_sku, a->to_sku, a->due_local, w->live->timezone,
                           a->idempotency_key);
    if (rc != TW_OK || (rc = prop_text(&w->b, &w->l, "DESCRIPTION", w->t.data)) != TW_OK)
        return rc;
    if ((rc = put_line(&w->b, "END:VEVENT", 10)) != TW_OK)
        return rc;
    return flush(w, false);
}

/* An empty plan's calendar still holds a component: RFC 5545's icalbody
 * is "1*component", and a VCALENDAR with none is refused by strict
 * readers.  A VTIMEZONE is a component readers never show as an entry
 * (an empty VEVENT would appear in the subscribers' calendars, a VTODO in
 * their task lists); the one for UTC (the zone every time here is in) has
 * its required STANDARD sub-component with DTSTART and both offsets. */
static enum tw_err empty_body(struct iw *w)
{
    static const char *const lines[] = {"BEGIN:VTIMEZONE",  "TZID:UTC",
                                        "BEGIN:STANDARD",   "DTSTART:19700101T000000",
                                        "TZOFFSETFROM:+0000", "TZOFFSETTO:+0000",
                                        "TZNAME:UTC",       "END:STANDARD",
                                        "END:VTIMEZONE"};
    enum tw_err rc = TW_OK;
    for (size_t i = 0; rc == TW_OK && i < sizeof(lines) / sizeof(lines[0]); i++)
        rc = put_line(&w->b, lines[i], strlen(lines[i]));
    return rc;
}

enum tw_err tw_svc_plan_ics(struct tw_store *st, const struct tw_plan_opts *o,
                            tw_opp_write_fn write, void *arg, struct tw_error *err)
{
    struct tw_plan_summary sum;
    return tw_svc_plan_ics_sum(st, o, write, arg, &sum, err);
}

enum tw_err tw_svc_plan_ics_sum(struct tw_store *st, const struct tw_plan_opts *o,
                                tw_opp_write_fn write, void *arg, struct tw_plan_summary *out,
                                struct tw_error *err)
{
    struct iw w = {.write = write, .arg = arg};
    domain_of(o ? o->installation : NULL, w.domain, sizeof(w.domain));
    tw_buf_init(&w.b, (size_t)1 << 30);
    tw_buf_init(&w.l, 1 << 20);
    tw_buf_init(&w.t, 1 << 20);
    struct tw_plan_summary sum;
    memset(&sum, 0, sizeof(sum));
    w.live = &sum;
    int64_t now = o ? o->now_ns : 0;
    if (!now) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        now = (int64_t)ts.tv_sec * TW_NS_PER_S + ts.tv_nsec;
    }
    enum tw_err rc = TW_OK;
    if (!utc_basic(now, w.stamp, sizeof(w.stamp)))
        rc = tw_error_set(err, TW_ERANGE, "the clock is outside the years 0000..9999");
    struct tw_plan_sink sink = {on_action, &w};
    if (rc == TW_OK)
        rc = tw_svc_plan_run(st, o, &sink, &sum, err);
    bool none = !w.head;
    if (rc == TW_OK && !w.head)
        rc = head(&w);
    if (rc == TW_OK && none)
        rc = empty_body(&w);
    if (rc == TW_OK)
        rc = put_line(&w.b, "END:VCALENDAR", 13);
    if (rc == TW_OK && (rc = flush(&w, true)) != TW_OK)
        tw_error_set(err, rc, "writing the calendar failed");
    tw_buf_cleanup(&w.b);
    tw_buf_cleanup(&w.l);
    tw_buf_cleanup(&w.t);
    *out = sum;
    return rc;
}

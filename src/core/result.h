/*
 * result.h - one benchmark result: the method next to the figures.
 *
 * The same record comes from tierwise's own engine (src/bench) and from an
 * imported fio output, so the two can be compared and judged alike.  Its
 * JSON form is tierwise.bench-result/1 (pricing-independent, see
 * README "Result record"); keys carry their units.  Bandwidth is also given
 * in mbps, 10^6 bytes per second, the unit of Azure's disk ratings.
 */
#ifndef TW_CORE_RESULT_H
#define TW_CORE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#include "core/err.h"

/* jansson's json_t, declared so this header needs no jansson include. */
struct json_t;

#define TW_RESULT_SCHEMA "tierwise.bench-result/1"
#define TW_RESULT_MAX_PCT 32      /* percentiles one direction can carry */
#define TW_RESULT_MAX_MEMBERS 64  /* member disks behind a stripe */

/* The percentiles tierwise's own engine reports, in this order. */
extern const double tw_result_std_pct[];
extern const size_t tw_result_std_pct_count;

enum tw_source { TW_SRC_TIERWISE, TW_SRC_FIO_JSON, TW_SRC_FIO_TEXT };
enum tw_target_kind { TW_TARGET_FILE, TW_TARGET_BLOCK, TW_TARGET_UNKNOWN };
enum tw_pattern {
    TW_PAT_RANDREAD, TW_PAT_RANDWRITE, TW_PAT_RANDRW,
    TW_PAT_READ, TW_PAT_WRITE, TW_PAT_RW
};

/*
 * Whether I/O bypassed the page cache (O_DIRECT).  An enum, not a bool: a
 * pasted fio text does not say, and "not shown" must not read as
 * "buffered".  The values are what the store keeps in results.direct.
 */
enum tw_direct { TW_DIRECT_NO = 0, TW_DIRECT_YES = 1, TW_DIRECT_UNKNOWN = 2 };

/* How method.direct was decided (JSON "direct_basis"). */
enum tw_direct_basis {
    TW_DIRECT_BY_ENGINE = 0,     /* tierwise's engine opened the target itself */
    TW_DIRECT_BY_FIO_JSON,       /* fio's JSON job options (absent: fio's default, buffered) */
    TW_DIRECT_BY_JOB_FILE,       /* the job file given to import-fio (--job-file) */
    TW_DIRECT_BY_FIO_ARGS,       /* the command line given to import-fio (--fio-args) */
    TW_DIRECT_BY_DISK_DEPTH,     /* libaio with far more I/Os in flight at the disk than
                                    buffered I/O can keep there (fio text's disk stats) */
    TW_DIRECT_BY_NONE            /* nothing said: direct is unknown */
};

/*
 * Which latency a figure measures.  fio's "lat" (tierwise's own) runs from
 * submission to completion; fio's "clat", its default percentiles, leaves
 * the submission out.
 */
enum tw_lat_kind { TW_LAT_TOTAL = 0, TW_LAT_COMPLETION = 1, TW_LAT_UNKNOWN = 2 };

struct tw_pct {
    double pct;    /* e.g. 99.9 */
    double ns;     /* latency at that percentile, nanoseconds */
};

struct tw_lat {
    double min_ns, max_ns, mean_ns, stdev_ns;
    enum tw_lat_kind kind;               /* of min/max/mean/stdev */
    enum tw_lat_kind pct_kind;           /* of the percentiles */
    size_t n_pct;                        /* entries used in pct[] */
    struct tw_pct pct[TW_RESULT_MAX_PCT]; /* ascending by pct */
};

struct tw_iops_series {
    bool present;      /* false when the source had no per-second samples */
    double min, mean, max, stdev;
    int64_t samples;   /* number of one-second samples */
};

/* Figures of one direction (reads or writes). */
struct tw_dir {
    bool present;            /* false: no I/O of this direction (JSON null) */
    int64_t ios;             /* completed I/Os in the measured phase */
    int64_t bytes;           /* bytes they moved */
    double iops;
    double bw_bytes_per_s;
    double mbps;             /* bw_bytes_per_s / 10^6 */
    struct tw_lat lat;       /* submission-to-completion latency */
    struct tw_iops_series iops_per_s;
};

struct tw_method {
    char engine[32];             /* libaio, psync, null, or fio's name */
    enum tw_direct direct;       /* O_DIRECT: no page cache in the way */
    enum tw_direct_basis direct_basis; /* how direct was decided */
    enum tw_pattern pattern;
    int64_t block_size_bytes;
    int queue_depth;             /* as requested */
    int effective_queue_depth;   /* what the engine keeps in flight per job */
    int jobs;
    int read_pct;                /* share of reads in a mixed pattern */
    int64_t runtime_ms;          /* measured phase only */
    int64_t ramp_ms;             /* excluded warm-up */
};

struct tw_result {
    char id[40];               /* UUID */
    char started_at[32];       /* RFC 3339 UTC, start of the measured phase */
    enum tw_source source;
    char tool_version[64];     /* "tierwise 0.1.0", "fio-3.33" */
    char profile[64];          /* named profile, "custom", or "" for null */
    struct {
        char path[4096];
        enum tw_target_kind kind;
        int64_t size_bytes;    /* -1 when unknown */
        char device[64];       /* kernel name under the target, "" if unknown */
        size_t n_members;
        char members[TW_RESULT_MAX_MEMBERS][32]; /* leaf disks, e.g. sdg */
    } target;
    struct tw_method method;
    struct tw_dir read, write;
    struct {
        double usr_s, sys_s;   /* CPU seconds of the measured phase */
    } cpu;
    struct {
        int64_t count;         /* I/O errors; the run goes on after them */
        char first[256];       /* the first one described, "" if none */
    } errors;
};

/* Fills R with empty values (size -1, profile null, no directions). */
void tw_result_init(struct tw_result *r);

const char *tw_pattern_name(enum tw_pattern p);
/* Parses "randread", "read", ...; TW_EINVAL for anything else. */
enum tw_err tw_pattern_parse(const char *s, enum tw_pattern *out);
bool tw_pattern_is_random(enum tw_pattern p);
/* Whether a pattern reads, writes (mixed patterns do both). */
bool tw_pattern_reads(enum tw_pattern p);
bool tw_pattern_writes(enum tw_pattern p);

const char *tw_source_name(enum tw_source s);
/* "tierwise engine", "fio JSON job options", ... "unknown" (JSON direct_basis). */
const char *tw_direct_basis_name(enum tw_direct_basis b);
/* "total", "completion"; NULL for unknown (JSON null). */
const char *tw_lat_kind_name(enum tw_lat_kind k);

/* Adds one percentile to a latency record (ignored when full). */
void tw_lat_add_pct(struct tw_lat *lat, double pct, double ns);

/*
 * Serialises R as a tierwise.bench-result/1 JSON document.  Returns a new
 * NUL-terminated string (caller frees with free()) or NULL when out of
 * memory.  FLAGS are jansson's json_dumps flags (0 for compact).
 */
char *tw_result_to_json(const struct tw_result *r, size_t flags);

/*
 * Parses a tierwise.bench-result/1 document of LEN bytes at BUF into R.
 * Unknown keys are ignored; broken JSON, missing required keys, wrong
 * types and a wrong schema_version fail with TW_EPARSE and the place in
 * ERR ("method.queue_depth ..."), and leave R as tw_result_init makes it.
 * Read by tw_result_read (core/jsonread.h), the reader the report uses
 * too.
 */
enum tw_err tw_result_from_json(const char *buf, size_t len,
                                struct tw_result *r, struct tw_error *err);

/* As above, as a jansson value (new reference; NULL when out of memory). */
struct json_t *tw_result_to_value(const struct tw_result *r);

/* Formats a percentile as its JSON key ("p50", "p99.9"); returns OUT. */
char *tw_pct_key(double pct, char *out, size_t outlen);

#endif

/*
 * sim_scenario.h - what the Azure simulator pretends exists: VMs and their
 * disks, unattached disks, Resource SKU entries, Retail Prices items, the
 * VM that IMDS answers for, settings and faults.
 *
 * A scenario is a JSON file (format: README "tierwise-azsim", example in
 * tests/fixtures/sim/scenario-basic.json).  The parser takes a buffer and a
 * length and does no I/O, so tests/fuzz/fuzz_scenario.c can run it on any
 * bytes; every refusal says what is wrong and where ("vms[0].disks[2].sku
 * ...", or the line and column of a JSON syntax error).
 *
 * The simulator takes ownership of a parsed scenario and uses its VM and
 * disk arrays as its ARM state: tw_sim_start keeps them and changes power
 * states, SKUs and tiers in place.
 */
#ifndef TW_SIM_SCENARIO_H
#define TW_SIM_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/err.h"

#define TW_SIM_SCENARIO_SCHEMA "tierwise.azsim-scenario/1"

#define TW_SIM_MAX_VMS 1024         /* VMs in one scenario */
#define TW_SIM_MAX_DISKS 8192       /* disks, attached or not */
#define TW_SIM_MAX_VM_DISKS 65      /* OS disk + the largest VM's 64 data disks */
#define TW_SIM_MAX_TAGS 50          /* Azure's limit per resource */
#define TW_SIM_MAX_SKUS 4096        /* Resource SKU entries */
#define TW_SIM_MAX_PRICES 500000    /* Retail Prices items, all files together */
#define TW_SIM_MAX_FAULTS 64        /* faults active at once */
#define TW_SIM_MAX_DAILY_CHANGES 16 /* ceiling of settings.sku_changes_per_day */
#define TW_SIM_MAX_DISK_GIB 32767   /* the largest P/E/S tier (P80, E80, S80) */
#define TW_SIM_MAX_VM_ACTIONS 64    /* ceiling of arm_limits.vm_actions_per_min */

/* VM power states, as ARM's PowerState/<name> codes. */
enum tw_sim_power {
    TW_SIM_POWER_STARTING,
    TW_SIM_POWER_RUNNING,
    TW_SIM_POWER_STOPPING,
    TW_SIM_POWER_STOPPED,
    TW_SIM_POWER_DEALLOCATING,
    TW_SIM_POWER_DEALLOCATED
};

struct tw_sim_vm {
    char subscription_id[64];
    char resource_group[91]; /* Azure allows 90 characters */
    char name[65];           /* Azure allows 64 (Linux) */
    char vm_size[64];        /* Standard_D8s_v3 */
    char location[64];       /* westeurope (ARM region name) */
    char zone[8];            /* "1", or "" when not zonal */
    char vm_id[37];          /* IMDS vmId; a stable UUID from the name when not given */
    char os_type[16];        /* Linux | Windows */
    char computer_name[65];  /* IMDS osProfile.computerName; the name when not given */
    char admin_username[65];
    char image_publisher[64], image_offer[64], image_sku[64], image_version[32];
    char private_ip[46];     /* IMDS network.interface[0] */
    char mac[13];            /* 12 hex digits, no separators, as IMDS */
    json_t *tags;            /* object of strings (owned); insertion order kept */
    enum tw_sim_power power; /* changed in place by the simulator */
    bool hibernated;         /* deallocated with hibernation: its disks are Frozen */
};

struct tw_sim_disk {
    char subscription_id[64];
    char resource_group[91];
    char name[81]; /* Azure allows 80 */
    char location[64];
    char zone[8];
    long vm;      /* index into vms, -1 when unattached */
    bool os;      /* the VM's OS disk */
    int lun;      /* 0..63 for data disks, -1 for the OS disk or unattached */
    char sku[24]; /* Premium_LRS, StandardSSD_LRS, ... (changed in place) */
    char tier[8]; /* P10, E10, S10; "" for UltraSSD_LRS / PremiumV2_LRS */
    int64_t size_gib;
    char caching[10]; /* None | ReadOnly | ReadWrite */
    bool write_accelerator;
    char create_option[12]; /* FromImage (OS) | Attach | Empty */
    int64_t max_shares;     /* maxShares (a shared disk when above 1); 0: absent */
    int bursting;           /* burstingEnabled (on-demand bursting): -1 absent, 0, 1 */
    int64_t iops, mbps;     /* provisioned (Ultra, Premium SSD v2); 0: from the tier */
};

/* ARM's request limits (settings.arm_limits, --arm-limits): token buckets
 * per region and a budget of VM actions per VM; a rate of 0 is no limit. */
struct tw_sim_arm_limits {
    double reads_per_s;     /* GETs a second, per region */
    double writes_per_s;    /* PATCH/POST/PUT/DELETE a second, per region */
    double burst;           /* bucket depth in seconds of rate (1 when not given) */
    int vm_actions_per_min; /* start/deallocate/powerOff per VM in any 60 s */
};

struct tw_sim_settings {
    long operation_delay_ms;             /* how long a PATCH/start/deallocate stays InProgress */
    long retry_after_s;                  /* Retry-After on 202 answers */
    int sku_changes_per_day;             /* SKU changes allowed per disk in any 24 h */
    long prices_page_size;               /* Retail Prices items per page */
    long token_lifetime_s;               /* managed-identity and login tokens */
    int64_t clock_start_ms;              /* the sim clock's start (Unix ms); 0 = the real time */
    long arm_page_size;                  /* VMs and disks per ARM list page (nextLink beyond) */
    struct tw_sim_arm_limits arm_limits; /* all 0: no limits */
};

enum tw_sim_fault_kind {
    TW_SIM_FAULT_LATENCY,       /* wait MS before answering (combines with the others) */
    TW_SIM_FAULT_THROTTLE,      /* 429 with Retry-After, the surface's own body */
    TW_SIM_FAULT_ERROR,         /* STATUS (default 500) with the surface's own body */
    TW_SIM_FAULT_TRUNCATE,      /* the real answer with its body cut short */
    TW_SIM_FAULT_DROP,          /* close the connection without an answer */
    TW_SIM_FAULT_NO_NEXT_LINK,  /* Retail Prices: NextPageLink null on a full page */
    TW_SIM_FAULT_FAIL_OPERATION /* ARM: the operation the request starts ends Failed */
};

struct tw_sim_fault {
    enum tw_sim_fault_kind kind;
    char path[256];     /* applies to request paths starting with this */
    char method[8];     /* "" = any method */
    int status;         /* ERROR: the status, 400..599 */
    long retry_after_s; /* THROTTLE: Retry-After */
    long ms;            /* LATENCY: milliseconds, at most 60000 */
    long bytes;         /* TRUNCATE: bytes kept; -1 = half the body */
    long skip;          /* let this many matching requests through first */
    long count;         /* fire this many times, then stop; -1 = always */
    double probability; /* of firing on an eligible request (1 = always) */
    uint64_t rng;       /* xorshift state: a seeded, repeatable draw */
    long matched;       /* matching requests seen (runtime) */
    long fired;         /* times it fired (runtime) */
};

struct tw_sim_scenario {
    struct tw_sim_settings settings;
    size_t n_vms;
    struct tw_sim_vm *vms; /* heap array */
    size_t n_disks;
    struct tw_sim_disk *disks; /* heap array: each VM's disks, then unattached ones */
    long self;                 /* index of the VM IMDS answers for; -1 when none */
    json_t *resource_skus;     /* array of Resource SKU objects, served as given */
    json_t *prices;            /* array of Retail Prices items, "_"-keys removed */
    json_t *principals;        /* array of {tenant_id, client_id, client_secret}; may be empty */
    size_t n_faults;
    struct tw_sim_fault faults[TW_SIM_MAX_FAULTS];
};

/*
 * Parses LEN bytes of scenario JSON into a new scenario (*OUT, free with
 * tw_sim_scenario_free).  TW_EPARSE with the line and column for bad JSON,
 * or a message naming the field; TW_ENOMEM when out of memory.  *OUT is
 * NULL on failure.
 */
enum tw_err tw_sim_scenario_parse(const char *buf, size_t len, struct tw_sim_scenario **out,
                                  struct tw_error *err);

/*
 * Appends Retail Prices items from LEN bytes of JSON: an array of items, an
 * API page ({"Items": [...]}) or a pricing-data file ({"items": [...]}).
 * Keys starting with "_" (provenance) are dropped.  On failure nothing is
 * added.
 */
enum tw_err tw_sim_scenario_add_prices(struct tw_sim_scenario *sc, const char *buf, size_t len,
                                       struct tw_error *err);

/* Frees SC and everything it owns; NULL is allowed. */
void tw_sim_scenario_free(struct tw_sim_scenario *sc);

/*
 * A fault from a --fault flag: comma-separated key=value pairs, e.g.
 * "kind=error,path=/metadata/instance,status=503,count=2".  Keys: kind
 * (latency|throttle|error|truncate|drop|no-next-link|fail-operation), path, method,
 * status, retry_after, ms, bytes, skip, count, probability, seed.
 */
enum tw_err tw_sim_fault_parse(const char *spec, struct tw_sim_fault *f, struct tw_error *err);

/* The same from a JSON object (a scenario's faults[i], or the admin API);
 * WHERE names it in messages. */
enum tw_err tw_sim_fault_from_value(const json_t *v, const char *where, struct tw_sim_fault *f,
                                    struct tw_error *err);

/* A fault (with its runtime counters) as a new JSON object; NULL when out
 * of memory. */
json_t *tw_sim_fault_to_value(const struct tw_sim_fault *f);

const char *tw_sim_fault_kind_name(enum tw_sim_fault_kind k);

/* "running", "deallocated", ...; TW_EINVAL for other words. */
const char *tw_sim_power_name(enum tw_sim_power p);
enum tw_err tw_sim_power_parse(const char *s, enum tw_sim_power *out);

/* Whether SKU is a managed-disk SKU name (DiskStorageAccountTypes). */
bool tw_sim_sku_known(const char *sku);

/*
 * The tier a disk of SKU and SIZE_GIB is billed at: the smallest offered
 * size not below SIZE_GIB (Standard HDD starts at S4).  "" for UltraSSD_LRS
 * and PremiumV2_LRS, which have no tiers.  TW_ERANGE past 32,767 GiB or
 * below 1; TW_EINVAL for an unknown SKU.
 */
enum tw_err tw_sim_tier_for(const char *sku, int64_t size_gib, char *tier, size_t tierlen);

/* The size of TIER's step (P10 -> 128); -1 when TIER is not a tier name. */
int64_t tw_sim_tier_size(const char *tier);

/* TIER's rated IOPS and MB/s (../shared/catalog/azure-disk-tiers.json:
 * P10 -> 500, 100); false when TIER is not a tier name. */
bool tw_sim_tier_rating(const char *tier, int64_t *iops, int64_t *mbps);

/* --arm-limits "READS,WRITES[,BURST[,VM_ACTIONS_PER_MIN]]" (e.g. "25,10"),
 * or "off"; TW_EPARSE saying what is wrong. */
enum tw_err tw_sim_arm_limits_parse(const char *spec, struct tw_sim_arm_limits *out,
                                    struct tw_error *err);

#endif

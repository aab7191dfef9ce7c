/*
 * observed.h - a VM's power states over time, and the weekly windows
 * learned from them (a policy's "windows": "observed").  Pure.
 *
 * The rule (README "Policies"): the week is cut into quarter-hours of the
 * zone's wall clock (672 of them, Monday 00:00 first).  Over the WEEKS whole
 * weeks before UNTIL (each week a local Monday 00:00 to the next), a
 * quarter-hour counts in a week when the VM was deallocated throughout it
 * (the last state observed before its start was "deallocated" and no other
 * state was observed until its end).  A quarter-hour is in the learned
 * windows when it counts in at least MIN_WEEKS of those weeks.  The
 * windows are the runs of such quarter-hours (a run may wrap from Sunday
 * into Monday).  Before the first observation the state is unknown and
 * counts as not deallocated.  A quarter-hour is the instants from its local
 * start to its local end, each read by tz.h's rule, so the one over the
 * autumn change is 75 minutes long; a quarter-hour whose local start the
 * spring change skips does not occur that week and counts in no week's
 * tally (Europe/London's Sun 01:00-01:45 on the last Sunday of March; its
 * 02:00 is the instant the clocks change).
 */
#ifndef TW_CORE_OBSERVED_H
#define TW_CORE_OBSERVED_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/tz.h"
#include "core/window.h"

#define TW_OBSERVED_SLOT_MIN 15
#define TW_OBSERVED_WEEKS_MAX 52

enum tw_power {
    TW_POWER_UNKNOWN = 0,
    TW_POWER_RUNNING,
    TW_POWER_STARTING,
    TW_POWER_STOPPING,
    TW_POWER_STOPPED,        /* stopped but allocated: compute still billed, disks can't change */
    TW_POWER_DEALLOCATING,
    TW_POWER_DEALLOCATED,
    TW_POWER_HIBERNATED
};

/* The state called NAME ("running", "deallocated", "PowerState/deallocated",
 * "hibernated", any case); TW_POWER_UNKNOWN for anything else. */
enum tw_power tw_power_parse(const char *name);
const char *tw_power_name(enum tw_power p);

/* One observation: from AT_NS on the VM was in STATE (until the next). */
struct tw_power_obs {
    int64_t at_ns;
    enum tw_power state;
};

/*
 * The windows learned (the rule above) from the N observations OBS (sorted
 * by time) over the WEEKS (1..TW_OBSERVED_WEEKS_MAX) whole weeks in zone Z
 * before the local Monday 00:00 at or before UNTIL_NS, with threshold
 * MIN_WEEKS (1..WEEKS), into *OUT (tz set to Z's name; n 0 when nothing
 * recurs).  TW_EINVAL for bad arguments, TW_ERANGE when the runs are more
 * than TW_WINDOWS_MAX.
 */
enum tw_err tw_observed_windows(const struct tw_power_obs *obs, size_t n, int64_t until_ns,
                                int weeks, int min_weeks, const struct tw_tz *z,
                                struct tw_windows *out, struct tw_error *err);

/* Whether the VM was hibernated at any time in [FROM_NS, TO_NS) (the state
 * in force at FROM_NS included). */
bool tw_power_hibernated_in(const struct tw_power_obs *obs, size_t n, int64_t from_ns,
                            int64_t to_ns);

#endif

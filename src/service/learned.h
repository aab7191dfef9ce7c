/*
 * learned.h - core/observed.h's learned windows for a whole fleet: the
 * rule is the same (tw_observed_windows), worked in two steps so that the
 * part every VM shares is done once.  The quarter-hours of the looked-back
 * weeks as instants depend only on the zone, the instant looked back from
 * and the number of weeks; a plan holds them, and each VM's history is then
 * one pass over them.  tests/unit/service/test_learned.c holds the two to
 * the same answers.
 */
#ifndef TW_SERVICE_LEARNED_H
#define TW_SERVICE_LEARNED_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/observed.h"
#include "core/tz.h"
#include "core/window.h"

struct tw_learn_plan;

/* A plan for WEEKS (1..TW_OBSERVED_WEEKS_MAX) weeks in Z before the local
 * Monday 00:00 at or before UNTIL_NS, threshold MIN_WEEKS (1..WEEKS), into
 * *OUT (free with tw_learn_plan_free).  Errors as tw_observed_windows. */
enum tw_err tw_learn_plan_make(const struct tw_tz *z, int64_t until_ns, int weeks,
                               int min_weeks, struct tw_learn_plan **out, struct tw_error *err);

/* The learned windows of the N observations OBS (sorted by time) under
 * plan P, into *OUT: what tw_observed_windows answers for them.  TW_EINVAL
 * for unsorted observations, TW_ERANGE past TW_WINDOWS_MAX runs. */
enum tw_err tw_learn_windows(const struct tw_learn_plan *p, const struct tw_power_obs *obs,
                             size_t n, struct tw_windows *out, struct tw_error *err);

void tw_learn_plan_free(struct tw_learn_plan *p); /* NULL allowed */

#endif

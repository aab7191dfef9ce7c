/*
 * sim.h - tierwise-azsim, an Azure simulator on loopback for the demo and
 * the tests.
 *
 * It serves, in the wire formats of ../shared/azure-api/: IMDS
 * (/metadata/instance, /metadata/identity/oauth2/token), Azure Resource
 * Manager (disks GET/PATCH/list with long-running operations, VMs GET/list
 * with their instance view, start/deallocate/powerOff, Resource SKUs; each
 * provider's api-versions, ARM's request limits when set), the Entra ID
 * client-credentials token endpoint, the Retail Prices API, and a small
 * admin surface under /_sim/ (state, clock, faults, power, requests,
 * counters).  Its ARM state (power states, SKUs, tiers) lives in memory and
 * starts from a scenario (sim_scenario.h).  Faults (latency, 429, 5xx,
 * truncated bodies, dropped connections) come from the scenario, from
 * tw_sim_add_fault, or from POST /_sim/faults.
 *
 * It binds to a 127.0.0.0/8 address only: any other address is refused, so
 * nothing a test does can be reached from, or answer as, a real network.
 */
#ifndef TW_SIM_SIM_H
#define TW_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>

#include "core/err.h"
#include "sim/sim_scenario.h"

struct tw_sim;

struct tw_sim_options {
    const char *host;  /* a 127.0.0.0/8 address or "localhost"; NULL: 127.0.0.1 */
    unsigned port;     /* 0: a free port chosen by the kernel (tw_sim_port tells) */
    bool log_requests; /* one line per request on stderr */
};

/*
 * Splits a --listen value ("127.0.0.1:8080", "127.0.0.1", "localhost:0")
 * into HOST (HOSTLEN bytes) and *PORT (0 when not given), and refuses any
 * address outside 127.0.0.0/8 with TW_EPERM and a message saying why.
 */
enum tw_err tw_sim_parse_listen(const char *spec, char *host, size_t hostlen, unsigned *port,
                                struct tw_error *err);

/*
 * Starts serving SC on OPT's address (NULL: 127.0.0.1, any port).  Takes
 * ownership of SC, also on failure.  *OUT gets the running simulator;
 * TW_EPERM for a non-loopback address, TW_EIO when the address can't be
 * bound (in use), TW_ENOMEM.
 */
enum tw_err tw_sim_start(struct tw_sim_scenario *sc, const struct tw_sim_options *opt,
                         struct tw_sim **out, struct tw_error *err);

/* The port it listens on. */
unsigned tw_sim_port(const struct tw_sim *sim);

/* Its base URL, "http://127.0.0.1:PORT" (what every tierwise client takes
 * as --imds-url, --arm-url, --login-url and --prices-url). */
const char *tw_sim_url(const struct tw_sim *sim);

/* Adds a fault (copied) after those already active; TW_ERANGE when
 * TW_SIM_MAX_FAULTS are active. */
enum tw_err tw_sim_add_fault(struct tw_sim *sim, const struct tw_sim_fault *f,
                             struct tw_error *err);

/* Stops serving (open connections are closed, threads joined) and frees
 * everything, the scenario included.  NULL is allowed. */
void tw_sim_stop(struct tw_sim *sim);

#endif

/*
 * main.c - tierwise-azsim: runs the Azure simulator on loopback until
 * SIGTERM or SIGINT.
 *
 *   tierwise-azsim --scenario F [--prices F]... [--listen 127.0.0.1:PORT]
 *                  [--port-file F] [--fault SPEC]... [--arm-limits R,W[,B[,V]]]
 *                  [--log-requests] [-q | -v]
 *
 * The chosen port goes to stdout (one line) and, atomically, to
 * --port-file, so a script can start it on port 0 and read where it is.
 * Exit status: 0 stopped by a signal, 1 could not listen, 2 bad usage or a
 * bad scenario.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "sim/sim.h"

#define PROG "tierwise-azsim"
#define MAX_FILE (256u << 20) /* a scenario or prices file; prices-real.json is 4.5 MB */
#define MAX_PRICE_FILES 16

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: %s --scenario FILE [OPTIONS]\n\n"
        "Serves Azure's IMDS, managed-identity and Entra ID tokens, Resource Manager (disks,\n"
        "VMs and their power, Resource SKUs) and the Retail Prices API on 127.0.0.1, from a\n"
        "scenario.\n\n"
        "Options:\n"
        "  --scenario FILE     the scenario (JSON; README \"tierwise-azsim\")\n"
        "  --prices FILE       more Retail Prices items: an array, an API page or a\n"
        "                      pricing-data file (repeatable)\n"
        "  --listen HOST:PORT  a 127.0.0.0/8 address; port 0 (default) picks a free one\n"
        "  --port-file FILE    also write the port there (atomically)\n"
        "  --fault SPEC        inject a fault, e.g. kind=error,path=/metadata/instance,"
        "status=503,count=2\n"
        "                      kinds: latency (ms=), throttle (retry_after=), error (status=),\n"
        "                      truncate (bytes=), drop, no-next-link, fail-operation (the\n"
        "                      ARM operation the request starts ends Failed); also skip=, count=,\n"
        "                      probability=, seed=, method= (repeatable)\n"
        "  --arm-limits R,W[,BURST[,VM_ACTIONS]]\n"
        "                      ARM's request limits: R reads and W writes a second per\n"
        "                      region (token buckets BURST seconds deep, default 1), at\n"
        "                      most VM_ACTIONS start/deallocate per VM a minute; 429 with\n"
        "                      Retry-After beyond (e.g. 25,10,1,4); \"off\" for none.\n"
        "                      Overrides the scenario's settings.arm_limits\n"
        "  --log-requests      one line per request on stderr\n"
        "  -q, --quiet         nothing on stderr but errors (no line when it starts or\n"
        "                      stops)\n"
        "  -v, --verbose       also one line per request, as --log-requests\n"
        "  --help, --version\n\n"
        "The port is printed on stdout.  SIGTERM or SIGINT stops it.\n"
        "Exit status: 0 stopped by a signal, 1 could not listen, 2 bad usage or scenario.\n",
        PROG);
}

static int read_file(const char *path, struct tw_buf *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: can't open %s: %s\n", PROG, path, strerror(errno));
        return -1;
    }
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (tw_buf_append(out, chunk, n) != TW_OK) {
            fprintf(stderr, "%s: %s is larger than %u MiB\n", PROG, path, MAX_FILE >> 20);
            fclose(f);
            return -1;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: can't read %s\n", PROG, path);
        return -1;
    }
    return 0;
}

static int write_port_file(const char *path, unsigned port)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%u\n", port) < 0 || fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "%s: can't write the port to %s: %s\n", PROG, path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *scenario = NULL, *listen_spec = "127.0.0.1:0", *port_file = NULL;
    const char *prices[MAX_PRICE_FILES];
    size_t n_prices = 0;
    struct tw_sim_fault faults[TW_SIM_MAX_FAULTS];
    size_t n_faults = 0;
    bool log = false, quiet = false, limits_given = false;
    struct tw_sim_arm_limits limits;
    struct tw_error err = {0};

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s\n", PROG, TW_VERSION);
            return 0;
        } else if (strcmp(a, "--log-requests") == 0) {
            log = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = true;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            log = true;
        } else if (strcmp(a, "--scenario") == 0 || strcmp(a, "--prices") == 0 ||
                   strcmp(a, "--listen") == 0 || strcmp(a, "--port-file") == 0 ||
                   strcmp(a, "--fault") == 0 || strcmp(a, "--arm-limits") == 0) {
            if (!has_value) {
                fprintf(stderr, "%s: %s needs a value; %s --help shows the options\n", PROG, a,
                        PROG);
                return 2;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--scenario") == 0) {
                scenario = v;
            } else if (strcmp(a, "--listen") == 0) {
                listen_spec = v;
            } else if (strcmp(a, "--port-file") == 0) {
                port_file = v;
            } else if (strcmp(a, "--arm-limits") == 0) {
                if (tw_sim_arm_limits_parse(v, &limits, &err) != TW_OK) {
                    fprintf(stderr, "%s: %s\n", PROG, err.msg);
                    return 2;
                }
                limits_given = true;
            } else if (strcmp(a, "--prices") == 0) {
                if (n_prices == MAX_PRICE_FILES) {
                    fprintf(stderr, "%s: at most %d --prices files\n", PROG, MAX_PRICE_FILES);
                    return 2;
                }
                prices[n_prices++] = v;
            } else {
                if (n_faults == TW_SIM_MAX_FAULTS) {
                    fprintf(stderr, "%s: at most %d --fault flags\n", PROG, TW_SIM_MAX_FAULTS);
                    return 2;
                }
                if (tw_sim_fault_parse(v, &faults[n_faults++], &err) != TW_OK) {
                    fprintf(stderr, "%s: %s\n", PROG, err.msg);
                    return 2;
                }
            }
        } else {
            fprintf(stderr, "%s: unknown option \"%s\"; %s --help shows the options\n", PROG, a,
                    PROG);
            return 2;
        }
    }
    if (!scenario) {
        fprintf(stderr,
                "%s: --scenario FILE is required (an example: "
                "tests/fixtures/sim/scenario-basic.json)\n",
                PROG);
        return 2;
    }
    char host[64];
    unsigned port;
    if (tw_sim_parse_listen(listen_spec, host, sizeof(host), &port, &err) != TW_OK) {
        fprintf(stderr, "%s: %s\n", PROG, err.msg);
        return 2;
    }

    struct tw_buf buf;
    tw_buf_init(&buf, MAX_FILE);
    if (read_file(scenario, &buf) != 0) {
        tw_buf_cleanup(&buf);
        return 2;
    }
    struct tw_sim_scenario *sc;
    if (tw_sim_scenario_parse(buf.data ? buf.data : "", buf.len, &sc, &err) != TW_OK) {
        fprintf(stderr, "%s: %s: %s\n", PROG, scenario, err.msg);
        tw_buf_cleanup(&buf);
        return 2;
    }
    for (size_t i = 0; i < n_prices; i++) {
        tw_buf_cleanup(&buf);
        if (read_file(prices[i], &buf) != 0 ||
            tw_sim_scenario_add_prices(sc, buf.data ? buf.data : "", buf.len, &err) != TW_OK) {
            if (err.msg[0])
                fprintf(stderr, "%s: %s: %s\n", PROG, prices[i], err.msg);
            tw_buf_cleanup(&buf);
            tw_sim_scenario_free(sc);
            return 2;
        }
    }
    tw_buf_cleanup(&buf);
    if (limits_given)
        sc->settings.arm_limits = limits;
    size_t n_vms = sc->n_vms, n_disks = sc->n_disks, n_items = json_array_size(sc->prices);

    /* Block the stop signals before libmicrohttpd starts its threads, so
     * they inherit the mask and only sigwait below sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct tw_sim *sim;
    struct tw_sim_options opt = {.host = host, .port = port, .log_requests = log};
    if (tw_sim_start(sc, &opt, &sim, &err) != TW_OK) {
        fprintf(stderr, "%s: %s\n", PROG, err.msg);
        return err.code == TW_EPERM ? 2 : 1;
    }
    for (size_t i = 0; i < n_faults; i++) {
        if (tw_sim_add_fault(sim, &faults[i], &err) != TW_OK) {
            fprintf(stderr, "%s: %s\n", PROG, err.msg);
            tw_sim_stop(sim);
            return 2;
        }
    }
    if (port_file && write_port_file(port_file, tw_sim_port(sim)) != 0) {
        tw_sim_stop(sim);
        return 1;
    }
    printf("%u\n", tw_sim_port(sim));
    fflush(stdout);
    if (!quiet)
        fprintf(stderr,
                "%s: serving %s (%zu VMs, %zu disks, %zu prices) on %s; SIGTERM stops it\n", PROG,
                scenario, n_vms, n_disks, n_items, tw_sim_url(sim));

    int sig = 0;
    while (sigwait(&stop, &sig) != 0)
        ;
    tw_sim_stop(sim);
    if (!quiet)
        fprintf(stderr, "%s: stopped by %s\n", PROG, sig == SIGTERM ? "SIGTERM" : "SIGINT");
    return 0;
}

/* agent.h - the subcommands of tierwise-agent. */
#ifndef TW_AGENT_H
#define TW_AGENT_H

#define TW_AGENT_PROG "tierwise-agent"

int tw_agent_cmd_bench(int argc, char **argv);
int tw_agent_cmd_import_fio(int argc, char **argv);
int tw_agent_cmd_inventory(int argc, char **argv);
int tw_agent_cmd_run(int argc, char **argv);

#define TW_AGENT_EXIT_OFF_AZURE 3 /* IMDS unreachable: not an Azure VM */

struct tw_inventory;

/* The VM's inventory from IMDS (URL from IMDS_FLAG, the environment or
 * CONFIG) / from an inventory file, into INV (initialised by the caller).
 * Each says what went wrong on stderr and returns an exit status: 0, 1
 * (IMDS failed), 2 (bad URL, config or file), TW_AGENT_EXIT_OFF_AZURE. */
int tw_agent_inventory_imds(const char *imds_flag, const char *config, struct tw_inventory *inv);
int tw_agent_inventory_file(const char *path, struct tw_inventory *inv);

/* Fills ID with a fresh random UUID. */
void tw_agent_new_id(char *id, unsigned long idlen);

#endif

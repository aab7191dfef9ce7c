/* agent.h - the subcommands of tierwise-agent. */
#ifndef TW_AGENT_H
#define TW_AGENT_H

#define TW_AGENT_PROG "tierwise-agent"

int tw_agent_cmd_bench(int argc, char **argv);
int tw_agent_cmd_import_fio(int argc, char **argv);
int tw_agent_cmd_inventory(int argc, char **argv);
int tw_agent_cmd_run(int argc, char **argv);

/* Fills ID with a fresh random UUID. */
void tw_agent_new_id(char *id, unsigned long idlen);

#endif

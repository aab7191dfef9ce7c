/* cli.h - the subcommands of tierwise. */
#ifndef TW_CLI_H
#define TW_CLI_H

#define TW_CLI_PROG "tierwise"

int tw_cli_cmd_result(int argc, char **argv);
int tw_cli_cmd_compliance(int argc, char **argv);
int tw_cli_cmd_serve(int argc, char **argv);
int tw_cli_cmd_token(int argc, char **argv);
int tw_cli_cmd_prices(int argc, char **argv);

#endif

/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the command line. The input is `nvtape`'s arguments, one a line; the commands
 * run parse-only (cli_parse_only: they stop once the arguments are parsed and checked, before
 * any file or device is opened). Whatever the arguments, the exit code is 0 or 64 (usage), and
 * a command that refuses its arguments says why (the message --json reports). */
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "fuzz.h"

#define MAX_ARGS 48

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cli_parse_only = true;
	/* help texts and lists are not what is checked */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

/* getopt keeps a pointer into the last argument vector; start it afresh */
static void reset_getopt(void)
{
	static char prog[] = "nvtape";
	char *none[] = {prog, NULL};

	optind = 0;
	while (getopt(1, none, "") != -1)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2];
	static char prog[] = "nvtape";
	int argc = 0, rc;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = 0;
	argv[argc++] = prog;
	for (char *p = copy, *nl; argc <= MAX_ARGS; p = nl + 1) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		argv[argc++] = p;
		if (!nl)
			break;
	}
	argv[argc] = NULL;
	cli_json = cli_json_done = false;
	cli_last_error[0] = 0;
	cli_cmd = "";
	cli_json_out = stdout;
	reset_getopt();
	rc = cli_main(argc, argv);
	FUZZ_CHECK(rc == NVT_EXIT_OK || rc == NVT_EXIT_USAGE, "exit %d", rc);
	if (rc == NVT_EXIT_USAGE && cli_cmd[0])
		FUZZ_CHECK(cli_last_error[0], "nvtape %s refused its arguments without a message",
			   cli_cmd);
	reset_getopt();
	free(copy);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* nvtape: command dispatcher, and the hidden `nvtape list` that shell completion asks for the
 * names the program accepts. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nvtape/engines.h"
#include "nvtape/sink.h"
#include "nvtape/source.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{"record", cmd_record, "record a stream (device, UDP, packets, shm, stdin, ...) to a file"},
	{"play", cmd_play, "play a recording into a checker, a pipe or nothing at a rate"},
	{"verify", cmd_verify, "check a recording: its data, gaps, drop index and checksums"},
	{"info", cmd_info, "print the header, drop index and metadata"},
	{"meta", cmd_meta, "read or change what a recording's data is (sample rate, type...)"},
	{"export", cmd_export, "write a byte or time range out: raw, SigMF, pcapng or pcap"},
	{"setup", cmd_setup, "prepare a recording volume: md RAID0 or one drive, fs, mount"},
	{"recover", cmd_recover, "finalize a recording whose writer died"},
	{"bench", cmd_bench, "find the highest rate a drive sustains (record or play)"},
	{"speedtest", cmd_speedtest, "write and read one or several drives at once, checked"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"nvtape %s: record a stream that cannot be stalled to NVMe storage, "
		"and prove nothing was lost\n\nUsage: nvtape COMMAND [options] ...\n\n",
		NVT_VERSION);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\nnvtape COMMAND --help shows the options of a command. Every command takes\n"
		   "--json (one JSON object on stdout, also on errors) and -q (only the "
		   "result).\n\n" EXIT_CODES_HELP);
}

/* --json anywhere before "--" (getopt also takes a unique prefix such as --js) */
static bool wants_json(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (!strcmp(argv[i], "--"))
			break;
		if (n >= 3 && !strncmp(argv[i], "--json", n))
			return true;
	}
	return false;
}

/* `nvtape list engines|sources|sinks|commands`: one name a line, for shell completion. The
 * names come from the library's registries (engines the --engine option takes, the sources and
 * sinks it can run by name) and from the command table above. */
static int cli_list(const char *what)
{
	if (what && !strcmp(what, "commands")) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			printf("%s\n", cmds[i].name);
	} else if (what && !strcmp(what, "engines")) {
		struct nvt_engine_info e;
		for (unsigned i = 0; nvt_engine_info_at(i, &e) == 0; i++)
			if (cli_engine_ok(e.name, true))
				printf("%s\n", e.name);
	} else if (what && !strcmp(what, "sources")) {
		for (unsigned i = 0; nvt_source_at(i); i++)
			printf("%s\n", nvt_source_at(i)->name);
	} else if (what && !strcmp(what, "sinks")) {
		for (unsigned i = 0; nvt_sink_at(i); i++)
			printf("%s\n", nvt_sink_at(i)->name);
	} else {
		fprintf(stderr, "nvtape list: give engines, sources, sinks or commands\n");
		return NVT_EXIT_USAGE;
	}
	return fflush(stdout) ? NVT_EXIT_RUNTIME : NVT_EXIT_OK;
}

int cli_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NVT_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return NVT_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("nvtape %s\n", NVT_VERSION);
		return NVT_EXIT_OK;
	}
	if (!strcmp(argv[1], "list"))
		return cli_list(argc > 2 ? argv[2] : NULL);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			int rc;
			cli_cmd = cmds[i].name;
			cli_json = wants_json(argc, argv);
			cli_json_out = stdout;
			rc = cmds[i].fn(argc - 1, argv + 1);
			if (cli_json && !cli_json_done && rc != NVT_EXIT_OK)
				cli_json_error(rc);
			return rc;
		}
	}
	fprintf(stderr, "nvtape: unknown command \"%s\" (see nvtape --help)\n", argv[1]);
	return NVT_EXIT_USAGE;
}

/* SPDX-License-Identifier: MIT */
/* nvtape info: the header and the drop index, human or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static const char info_help[] =
	"Usage: nvtape info [--json] [--stripe B] FILE...\n"
	"Print the header and the drop index of a recording (nvtape or "
	"FPGA Drive Recorder v1).\n\n"
	"  --json       JSON on stdout\n" CLI_LAYOUT_HELP "  -h, --help\n\n" EXIT_CODES_HELP;

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {{"json", no_argument, 0, 'j'},
					   CLI_LAYOUT_OPTIONS,
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	struct nvt_layout L;
	uint64_t stripe = 0, member_off = 0;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct nvt_drop_event *ev = NULL;
	uint64_t n = 0;
	bool json = false;
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'Z' || opt == 'O') {
			if (cli_layout_option(opt, optarg, &stripe, &member_off))
				return NVT_EXIT_USAGE;
		} else if (opt == 'h') {
			fputs(info_help, stdout);
			return NVT_EXIT_OK;
		} else
			return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
	if (cli_layout(&L, argc, argv, optind, stripe, member_off))
		return NVT_EXIT_USAGE;
	if (nvt_recording_open(&L, &rec, &err) ||
	    (rec.complete && nvt_recording_read_index(&L, &rec, &ev, &n, &err))) {
		cli_error("%s", cli_err_msg(&err));
		return NVT_EXIT_RUNTIME;
	}
	if (json) {
		printf("{\"path\":");
		cli_json_str(stdout, argv[optind]);
		printf(",\"header\":");
		cli_json_recording(stdout, &rec);
		printf(",\"drop_events\":[");
		for (uint64_t i = 0; i < n; i++)
			printf("%s{\"data_offset\":%" PRIu64 ",\"beats\":%" PRIu64
			       ",\"time_ns\":%" PRIu64 "}",
			       i ? "," : "", ev[i].data_offset, ev[i].beats, ev[i].time_ns);
		printf("]}\n");
	} else {
		char name[512];
		cli_print_recording(stdout, nvt_layout_name(&L, name, sizeof(name)), &rec);
		if (n)
			printf("  drop events     (data offset, beats, time since start)\n");
		for (uint64_t i = 0; i < n; i++)
			printf("    %14" PRIu64 "  %12" PRIu64 "  %10.6f s\n", ev[i].data_offset,
			       ev[i].beats, ev[i].time_ns / 1e9);
	}
	free(ev);
	return NVT_EXIT_OK;
}

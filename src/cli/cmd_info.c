/* nvtape info: the header and the drop index, human or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"

static const char info_help[] = "Usage: nvtape info [--json] FILE\n"
				"Print the header and the drop index of a recording (nvtape or "
				"FPGA Drive Recorder v1).\n\n"
				"  --json       JSON on stdout\n"
				"  -h, --help\n\n" EXIT_CODES_HELP;

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct nvt_drop_event *ev = NULL;
	uint64_t n = 0;
	bool json = false;
	int opt, fd;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'h') {
			fputs(info_help, stdout);
			return NVT_EXIT_OK;
		} else
			return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
	if (argc - optind != 1)
		return cli_usage_error("exactly one FILE is required");
	fd = nvt_recording_open(argv[optind], &rec, &err);
	if (fd < 0) {
		cli_error("%s", err.msg);
		return NVT_EXIT_RUNTIME;
	}
	if (rec.complete && nvt_recording_read_index(fd, &rec, &ev, &n, &err)) {
		close(fd);
		cli_error("%s", err.msg);
		return NVT_EXIT_RUNTIME;
	}
	close(fd);
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
		cli_print_recording(stdout, argv[optind], &rec);
		if (n)
			printf("  drop events     (data offset, beats, time since start)\n");
		for (uint64_t i = 0; i < n; i++)
			printf("    %14" PRIu64 "  %12" PRIu64 "  %10.6f s\n", ev[i].data_offset,
			       ev[i].beats, ev[i].time_ns / 1e9);
	}
	free(ev);
	return NVT_EXIT_OK;
}

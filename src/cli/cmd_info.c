/* SPDX-License-Identifier: MIT */
/* nvtape info: the header, the drop index and the metadata, human or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/meta.h"

static const char info_help[] =
	"Usage: nvtape info [--json] [-q] [--stripe B] FILE...\n"
	"Print the header, the drop index and the metadata of a recording (nvtape or "
	"FPGA Drive Recorder v1).\n\n"
	"  --json       one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet  the header without the drop index list\n" CLI_LAYOUT_HELP
	"  -h, --help\n\n" EXIT_CODES_HELP;

/* The JSON object of info; without the header and index when they could not be read. */
static void info_json(const char *path, const struct nvt_recording *rec,
		      const struct nvt_drop_event *ev, uint64_t n, const char *meta, int rc,
		      FILE *f)
{
	struct json j;

	cli_json_begin(&j, f, rc, NULL);
	json_str(&j, "path", path);
	if (rec) {
		cli_json_recording(&j, "header", rec);
		json_arr(&j, "drop_events");
		for (uint64_t i = 0; i < n; i++) {
			json_obj(&j, NULL);
			json_uint(&j, "data_offset", ev[i].data_offset);
			json_uint(&j, "beats", ev[i].beats);
			json_uint(&j, "time_ns", ev[i].time_ns);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		cli_json_meta(&j, meta);
	}
	json_end(&j);
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {{"json", no_argument, 0, 'j'},
					   {"quiet", no_argument, 0, 'q'},
					   CLI_LAYOUT_OPTIONS,
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	struct nvt_layout L;
	uint64_t stripe = 0, member_off = 0;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	struct nvt_drop_event *ev = NULL;
	uint64_t n = 0;
	bool json = false, quiet = false;
	int opt;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
		if (opt == 'j')
			json = true;
		else if (opt == 'q')
			quiet = true;
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
	if (cli_parse_only)
		return NVT_EXIT_OK;
	if (nvt_recording_open(&L, &rec, &err) ||
	    (rec.complete && nvt_recording_read_index(&L, &rec, &ev, &n, &err))) {
		cli_error("%s", cli_err_msg(&err));
		if (json)
			info_json(argv[optind], NULL, NULL, 0, NULL, NVT_EXIT_RUNTIME, stdout);
		free(ev);
		return NVT_EXIT_RUNTIME;
	}
	if (!rec.complete && rec.index_bytes && nvt_recording_read_index(&L, &rec, &ev, &n, &err)) {
		/* a recording being written moves its checkpoint's index on while it is read */
		char msg[700];
		snprintf(msg, sizeof(msg),
			 "the checkpoint's drop index could not be read (%s): drop positions not "
			 "shown (a recording being written moves it on: try again)",
			 cli_err_msg(&err));
		cli_note(msg, NULL);
	}
	char *meta = NULL;
	if (rec.format == NVT_FMT_NVTAPE && (rec.complete || rec.index_bytes) &&
	    nvt_meta_read(&L, NULL, &meta, &err) && rec.complete) {
		cli_error("%s", cli_err_msg(&err));
		if (json)
			info_json(argv[optind], NULL, NULL, 0, NULL, NVT_EXIT_RUNTIME, stdout);
		free(ev);
		return NVT_EXIT_RUNTIME;
	}
	if (json) {
		info_json(argv[optind], &rec, ev, n, meta, NVT_EXIT_OK, stdout);
	} else {
		char name[512];
		cli_print_recording(stdout, nvt_layout_name(&L, name, sizeof(name)), &rec);
		if (n && !quiet)
			printf("  drop events     (data offset, %s, time since start)\n",
			       cli_units(&rec));
		for (uint64_t i = 0; i < n && !quiet; i++)
			printf("    %14" PRIu64 "  %12" PRIu64 "  %10.6f s\n", ev[i].data_offset,
			       ev[i].beats, ev[i].time_ns / 1e9);
		if (meta && *meta && !quiet)
			cli_print_meta(stdout, meta);
	}
	free(ev);
	free(meta);
	return NVT_EXIT_OK;
}

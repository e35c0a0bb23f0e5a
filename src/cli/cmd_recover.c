/* SPDX-License-Identifier: MIT */
/* nvtape recover: finalize a recording whose writer died. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "nvtape/recover.h"

static const char recover_help[] =
	"Usage: nvtape recover [--json] [-q] [--stripe B] FILE...\n"
	"Finalize a recording whose writer died (crash, kill -9, power loss): keep the data\n"
	"the last checkpoint made durable (nvtape writes one every second), plus test-pattern\n"
	"blocks that continue it exactly; rebuild the drop index from the pattern's gaps;\n"
	"trim the rest; mark the header complete and recovered. FPGA Drive Recorder files keep\n"
	"everything up to their last non-zero 4 KiB block. A complete file is left as it "
	"is.\n\n"
	"  --json       one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet  no progress: the result only\n" CLI_LAYOUT_HELP
	"  -h, --help\n\n" EXIT_CODES_HELP;

/* The JSON object of recover; without the headers when the file could not be finalized. */
static void recover_json(const struct nvt_recover_opts *o, const struct nvt_recover_result *r,
			 int rc, FILE *f)
{
	struct json j;

	cli_json_begin(&j, f, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "path", o->path);
	if (rc == NVT_EXIT_OK) {
		json_str(&j, "action", r->already_complete ? "none" : "recovered");
		json_uint(&j, "data_bytes", r->after.data_bytes);
		json_uint(&j, "checkpoint_bytes", r->checkpoint_bytes);
		json_uint(&j, "extended_bytes", r->extended_bytes);
		json_uint(&j, "cut_bytes", r->dropped_tail_bytes);
		json_uint(&j, "drops", r->after.drop_count);
		json_uint(&j, "drop_events", r->after.drop_events);
		cli_json_recording(&j, "before", &r->before);
		cli_json_recording(&j, "header", &r->after);
	} else {
		json_null(&j, "action");
	}
	json_end(&j);
}

int cmd_recover(int argc, char **argv)
{
	static const struct option lo[] = {{"json", no_argument, 0, 'j'},
					   {"quiet", no_argument, 0, 'q'},
					   CLI_LAYOUT_OPTIONS,
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	uint64_t stripe = 0, member_off = 0;
	struct nvt_recover_opts o;
	struct nvt_recover_result r;
	bool json = false, quiet = false;
	int opt, rc;

	nvt_recover_opts_default(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
		if (opt == 'j' || opt == 'q') {
			*(opt == 'j' ? &json : &quiet) = true;
			continue;
		}
		if (opt == 'h') {
			fputs(recover_help, stdout);
			return NVT_EXIT_OK;
		}
		if (opt == 'Z' || opt == 'O') {
			if (cli_layout_option(opt, optarg, &stripe, &member_off))
				return NVT_EXIT_USAGE;
			continue;
		}
		return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
	if (cli_layout(&o.layout, argc, argv, optind, stripe, member_off))
		return NVT_EXIT_USAGE;
	if (cli_parse_only)
		return NVT_EXIT_OK;
	o.path = argv[optind];
	o.notice = cli_note;
	o.progress = json || quiet ? NULL : cli_progress_bytes;
	rc = cli_exit_of(nvt_recover(&o, &r), &r.err, false);
	if (rc)
		cli_error("%s", cli_err_msg(&r.err));
	if (json) {
		recover_json(&o, &r, rc, stdout);
		return rc;
	}
	if (rc) {
		printf("RESULT result=error exit=%d\n", rc);
		return rc;
	}
	if (r.already_complete) {
		printf("nvtape recover: %s is complete already; nothing to do\n", o.path);
	} else {
		printf("nvtape recover: %s: kept %" PRIu64 " data bytes (%" PRIu64
		       " vouched for by the last checkpoint, %" PRIu64
		       " more found intact), cut %" PRIu64 " bytes\n",
		       o.path, r.after.data_bytes, r.checkpoint_bytes, r.extended_bytes,
		       r.dropped_tail_bytes);
		printf("nvtape recover: drops %" PRIu64 " beats in %" PRIu64
		       " events; header marked complete and recovered\n",
		       r.after.drop_count, r.after.drop_events);
	}
	printf("RESULT result=pass action=%s data_bytes=%" PRIu64 " checkpoint_bytes=%" PRIu64
	       " extended_bytes=%" PRIu64 " cut_bytes=%" PRIu64 " drops=%" PRIu64 " exit=0\n",
	       r.already_complete ? "none" : "recovered", r.after.data_bytes, r.checkpoint_bytes,
	       r.extended_bytes, r.dropped_tail_bytes, r.after.drop_count);
	return NVT_EXIT_OK;
}

/* SPDX-License-Identifier: MIT */
/* nvtape info: the header, the drop index and the metadata, human or JSON; a recording being
 * written is said to be live (its writer holds the lock recover finds), and --follow watches
 * its checkpoints until it is complete. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/meta.h"

static const char info_help[] =
	"Usage: nvtape info [--json] [-q] [--follow] [--stripe B] FILE...\n"
	"Print the header, the drop index and the metadata of a recording (nvtape or "
	"FPGA Drive Recorder v1).\n"
	"A recording being written is LIVE (its writer, named by PID, holds its lock): what\n"
	"it holds so far is its last checkpoint, and info exits 0. One whose writer died\n"
	"is INCOMPLETE: nvtape recover finalizes it.\n\n"
	"  --follow     a live recording: re-read its header every second and print a line\n"
	"               of its durable bytes, checkpoints and drops until it is complete,\n"
	"               then the final state (exit 0); exit 2 if its writer dies first,\n"
	"               0 at Ctrl-C (the lines go to stderr with --json)\n"
	"  --json       one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet  the header without the drop index list (and no --follow lines)\n"
	"" CLI_LAYOUT_HELP "  -h, --help\n\n" EXIT_CODES_HELP;

struct info_cli {
	bool json, quiet, follow;
	const char *path;
	struct nvt_layout L;
};

/* The JSON object of info; without the header and index when they could not be read. */
static void info_json(const struct info_cli *c, const struct nvt_recording *rec, int live,
		      const struct nvt_drop_event *ev, uint64_t n, const char *meta, int rc)
{
	struct json j;

	cli_json_begin(&j, stdout, rc, NULL);
	json_str(&j, "path", c->path);
	if (rec) {
		json_bool(&j, "live", live >= 0);
		if (live > 0)
			json_int(&j, "writer_pid", live);
		else
			json_null(&j, "writer_pid");
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

/* The header as it is now and whether its writer is alive (cli_writer). A writer that
 * finalizes the header and lets go between the two looks dead: the header is read again. */
static int state_now(const struct info_cli *c, struct nvt_recording *rec, int *live,
		     struct nvt_err *err)
{
	*live = -1;
	if (nvt_recording_open(&c->L, rec, err))
		return -1;
	if (rec->complete || (*live = cli_writer(&c->L, rec)) >= 0)
		return 0;
	return nvt_recording_open(&c->L, rec, err);
}

/* Print everything info knows of the recording: rc (the exit code it has earned), or
 * NVT_EXIT_RUNTIME (said). */
static int show(const struct info_cli *c, const struct nvt_recording *rec, int live, int rc)
{
	struct nvt_err err = {0};
	struct nvt_drop_event *ev = NULL;
	uint64_t n = 0;
	char *meta = NULL;

	if (rec->complete && nvt_recording_read_index(&c->L, rec, &ev, &n, &err))
		goto fail;
	if (!rec->complete && rec->index_bytes &&
	    nvt_recording_read_index(&c->L, rec, &ev, &n, &err)) {
		/* a recording being written moves its checkpoint's index on while it is read */
		char msg[700];
		snprintf(msg, sizeof(msg),
			 "the checkpoint's drop index could not be read (%s): drop positions not "
			 "shown (a recording being written moves it on: try again)",
			 cli_err_msg(&err));
		cli_note(msg, NULL);
	}
	if (rec->format == NVT_FMT_NVTAPE && (rec->complete || rec->index_bytes) &&
	    nvt_meta_read(&c->L, NULL, &meta, &err) && rec->complete)
		goto fail;
	if (c->json) {
		info_json(c, rec, live, ev, n, meta, rc);
	} else {
		char name[512];
		cli_print_recording(stdout, nvt_layout_name(&c->L, name, sizeof(name)), rec, live);
		if (n && !c->quiet)
			printf("  drop events     (data offset, %s, time since start)\n",
			       cli_units(rec));
		for (uint64_t i = 0; i < n && !c->quiet; i++)
			printf("    %14" PRIu64 "  %12" PRIu64 "  %10.6f s\n", ev[i].data_offset,
			       ev[i].beats, ev[i].time_ns / 1e9);
		if (meta && *meta && !c->quiet)
			cli_print_meta(stdout, meta);
	}
	free(ev);
	free(meta);
	return rc;
fail:
	cli_error("%s", cli_err_msg(&err));
	if (c->json)
		info_json(c, NULL, -1, NULL, 0, NULL, NVT_EXIT_RUNTIME);
	free(ev);
	free(meta);
	return NVT_EXIT_RUNTIME;
}

/* --follow: a line a second while the writer lives; the final state once it is complete. */
static int follow(const struct info_cli *c, struct nvt_recording *rec, int live)
{
	FILE *out = c->json ? stderr : stdout;
	struct timespec t0, now;
	struct nvt_err err = {0};

	cli_install_signals();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!rec->complete && live >= 0 && !cli_interrupted) {
		struct timespec sec = {1, 0};
		if (!c->quiet) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			fprintf(out,
				"%8.1fs  %" PRIu64
				" bytes durable after %u checkpoints  drops %" PRIu64
				" %s in %" PRIu64 " events\n",
				(double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9,
				rec->durable_bytes, rec->checkpoints, rec->drop_count,
				cli_units(rec), rec->drop_events);
			fflush(out);
		}
		nanosleep(&sec, NULL); /* a signal ends it early */
		if (state_now(c, rec, &live, &err)) {
			cli_error("%s", cli_err_msg(&err));
			if (c->json)
				info_json(c, NULL, -1, NULL, 0, NULL, NVT_EXIT_RUNTIME);
			return NVT_EXIT_RUNTIME;
		}
	}
	if (!rec->complete && live < 0) {
		cli_error("%s: its writer died before finishing it: nvtape recover finalizes it",
			  c->path);
		return show(c, rec, live, NVT_EXIT_DATA);
	}
	return show(c, rec, live, NVT_EXIT_OK);
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", no_argument, 0, 'j'},   {"quiet", no_argument, 0, 'q'},
		{"follow", no_argument, 0, 'f'}, CLI_LAYOUT_OPTIONS,
		{"help", no_argument, 0, 'h'},   {0, 0, 0, 0}};
	struct info_cli c = {0};
	uint64_t stripe = 0, member_off = 0;
	struct nvt_recording rec;
	struct nvt_err err = {0};
	int opt, live;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", lo, NULL)) != -1) {
		if (opt == 'j')
			c.json = true;
		else if (opt == 'q')
			c.quiet = true;
		else if (opt == 'f')
			c.follow = true;
		else if (opt == 'Z' || opt == 'O') {
			if (cli_layout_option(opt, optarg, &stripe, &member_off))
				return NVT_EXIT_USAGE;
		} else if (opt == 'h') {
			fputs(info_help, stdout);
			return NVT_EXIT_OK;
		} else
			return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
	if (cli_layout(&c.L, argc, argv, optind, stripe, member_off))
		return NVT_EXIT_USAGE;
	c.path = argv[optind];
	if (cli_parse_only)
		return NVT_EXIT_OK;
	if (state_now(&c, &rec, &live, &err)) {
		cli_error("%s", cli_err_msg(&err));
		if (c.json)
			info_json(&c, NULL, -1, NULL, 0, NULL, NVT_EXIT_RUNTIME);
		return NVT_EXIT_RUNTIME;
	}
	if (c.follow && !rec.complete)
		return follow(&c, &rec, live);
	return show(&c, &rec, live, NVT_EXIT_OK);
}

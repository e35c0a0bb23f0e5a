/* SPDX-License-Identifier: MIT */
/* nvtape speedtest: sequential write and read of one or several targets at once, every beat
 * checked on read-back; table, RESULT, JSON and the HTML report. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_scratch.h"
#include "nvtape/report.h"
#include "nvtape/speedtest.h"
#include <math.h>

static const char speedtest_help[] =
	"Usage: nvtape speedtest [--write|--read] [options] TARGET [TARGET...]\n"
	"Sequential write and read speed of each TARGET (a file or a block device), all targets\n"
	"at once: the test pattern is written unthrottled, then read back and every beat\n"
	"checked. Per target and aggregate rates, and the PCIe link of every NVMe controller\n"
	"behind a target (from sysfs). Writing overwrites TARGET; a file the speedtest created\n"
	"is removed at the end (not with --write, or with --keep), one that was there is kept.\n\n"
	"  --write              only write (leaves a recording to --read later)\n"
	"  --read               only read and check what a --write left\n"
	"  --size S             bytes per target (default 8G)\n"
	"  --engine file|nvme, --chunk B, --chunks N, --qd Q, --force   as for record\n"
	"  --keep               keep the target files the speedtest created\n"
	"  --report FILE        write a self-contained HTML report\n"
	"  --json               one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet          no banner: the table and RESULT only\n"
	"  -h, --help\n\n"
	"Exit codes: 0 clean; 2 the read-back found corrupt or missing data; 1 a target failed;\n"
	"            64 usage error.\n";

static void link_str(const struct nvt_speed_target *t, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	if (!t->nlinks)
		snprintf(buf, cap, "not NVMe (%s)", t->on);
	for (unsigned k = 0; k < t->nlinks && n < cap; k++) {
		const struct nvt_link *l = &t->link[k];
		if (l->cur_width)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s %s x%u (max %s x%u)",
					      k ? "; " : "", l->ctrl, l->cur_speed, l->cur_width,
					      l->max_speed, l->max_width);
		else
			n += (size_t)snprintf(buf + n, cap - n, "%s%s: PCIe link not reported",
					      k ? "; " : "", l->ctrl);
	}
}

/* A phase of a target as an exit code: -1 not run, 1 failed, 2 a data problem, 0 clean. */
static int phase_exit(bool ran, int rc, unsigned problems)
{
	if (!ran)
		return -1;
	return rc ? NVT_EXIT_RUNTIME : problems ? NVT_EXIT_DATA : NVT_EXIT_OK;
}

static int write_exit(const struct nvt_speed_target *t)
{
	return phase_exit(t->wrote, t->write_rc, t->problems & NVT_SPP_DROPS);
}

static int read_exit(const struct nvt_speed_target *t)
{
	return phase_exit(t->read, t->read_rc, t->problems & ~NVT_SPP_DROPS);
}

static void json_phase(struct json *j, const char *key, int exit_code, uint64_t bytes, double sec,
		       double cpu_s, const struct nvt_speed_target *t)
{
	if (exit_code < 0) {
		json_null(j, key);
		return;
	}
	json_obj(j, key);
	json_int(j, "exit", exit_code);
	json_uint(j, "bytes", bytes);
	json_num(j, "seconds", sec, 6);
	json_num(j, "mbps", bytes / sec / 1e6, 3);
	json_num(j, "cpu_s", cpu_s, 4);
	if (t) {
		json_uint(j, "corrupt", t->corrupt);
		json_uint(j, "gaps", t->gaps);
		json_uint(j, "backward", t->backward);
		json_uint(j, "first_bad_offset", t->first_bad_offset);
	}
	json_obj_end(j);
}

static void speedtest_json(const struct nvt_speedtest_opts *o, const struct nvt_speedtest_result *r,
			   int rc, FILE *f)
{
	struct json j;

	cli_json_begin(&j, f, rc, NULL);
	json_num(&j, "write_mbps", o->write ? r->agg_write_mbps : NAN, 3);
	json_num(&j, "read_mbps", o->read ? r->agg_read_mbps : NAN, 3);
	json_bool(&j, "interrupted", r->interrupted);
	json_arr(&j, "targets");
	for (unsigned i = 0; i < r->n; i++) {
		const struct nvt_speed_target *t = &r->t[i];
		int worst = write_exit(t) == NVT_EXIT_DATA || read_exit(t) == NVT_EXIT_DATA
				    ? NVT_EXIT_DATA
				    : NVT_EXIT_OK;
		if ((write_exit(t) > 0 && write_exit(t) != NVT_EXIT_DATA) ||
		    (read_exit(t) > 0 && read_exit(t) != NVT_EXIT_DATA))
			worst = NVT_EXIT_RUNTIME;
		json_obj(&j, NULL);
		json_str(&j, "path", t->path);
		json_str(&j, "on", t->on);
		json_str(&j, "result", cli_result_name(worst));
		json_str(&j, "error", t->error[0] ? t->error : NULL);
		json_phase(&j, "write", write_exit(t), t->write_bytes, t->write_s, t->write_cpu_s,
			   NULL);
		json_phase(&j, "read", read_exit(t), t->read_bytes, t->read_s, t->read_cpu_s, t);
		json_arr(&j, "links");
		for (unsigned k = 0; k < t->nlinks; k++) {
			const struct nvt_link *l = &t->link[k];
			json_obj(&j, NULL);
			json_str(&j, "ctrl", l->ctrl);
			json_str(&j, "model", l->model);
			json_str(&j, "speed", l->cur_speed);
			json_uint(&j, "width", l->cur_width);
			json_str(&j, "max_speed", l->max_speed);
			json_uint(&j, "max_width", l->max_width);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_end(&j);
}

static void table(const struct nvt_speedtest_result *r, int rc)
{
	char link[512];

	printf("%-28s %10s %10s  %-22s %s\n", "target", "write MB/s", "read MB/s", "read-back",
	       "PCIe link");
	for (unsigned i = 0; i < r->n; i++) {
		const struct nvt_speed_target *t = &r->t[i];
		char check[64] = "not read";
		if (read_exit(t) >= 0)
			snprintf(check, sizeof(check), "%s",
				 t->corrupt || t->gaps || t->backward ? "BAD DATA"
				 : read_exit(t) == 0                  ? "every beat ok"
								      : "FAILED");
		link_str(t, link, sizeof(link));
		printf("%-28s %10.1f %10.1f  %-22s %s\n", t->path, t->write_mbps, t->read_mbps,
		       check, link);
		if (t->corrupt || t->gaps || t->backward)
			printf("  %llu corrupt beats, %llu gaps, %llu backward jumps; first bad "
			       "byte "
			       "at offset %llu\n",
			       (unsigned long long)t->corrupt, (unsigned long long)t->gaps,
			       (unsigned long long)t->backward,
			       (unsigned long long)t->first_bad_offset);
		if (t->error[0]) /* a target that holds data: the way past the refusal, as record */
			printf("  %s%s\n", t->error,
			       t->write_rc == -EEXIST ? "; give --force to overwrite it" : "");
	}
	if (r->n > 1)
		printf("%-28s %10.1f %10.1f\n", "all at once", r->agg_write_mbps, r->agg_read_mbps);
	printf("RESULT targets=%u write_mbps=%.1f read_mbps=%.1f", r->n, r->agg_write_mbps,
	       r->agg_read_mbps);
	for (unsigned i = 0; i < r->n; i++)
		printf(" t%u_write_mbps=%.1f t%u_read_mbps=%.1f t%u_corrupt=%llu t%u_gaps=%llu", i,
		       r->t[i].write_mbps, i, r->t[i].read_mbps, i,
		       (unsigned long long)r->t[i].corrupt, i, (unsigned long long)r->t[i].gaps);
	printf(" result=%s exit=%d\n", cli_result_name(rc), rc);
}

static const struct option speed_lo[] = {
	{"write", no_argument, 0, 'W'},        {"read", no_argument, 0, 'r'},
	{"size", required_argument, 0, 's'},   {"engine", required_argument, 0, 'e'},
	{"chunk", required_argument, 0, 'c'},  {"chunks", required_argument, 0, 'n'},
	{"qd", required_argument, 0, 'Q'},     {"force", no_argument, 0, 'F'},
	{"report", required_argument, 0, 'R'}, {"keep", no_argument, 0, 'K'},
	{"json", no_argument, 0, 'j'},         {"quiet", no_argument, 0, 'q'},
	{"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};

struct speed_cli {
	const char *report;
	bool json, quiet, only_w, only_r, qd_given, keep;
};

/* One option; -1 when --help was shown. */
static int speed_option(int opt, char **argv, struct nvt_speedtest_opts *o, struct speed_cli *c)
{
	switch (opt) {
	case 'W':
		c->only_w = true;
		return 0;
	case 'r':
		c->only_r = true;
		return 0;
	case 's':
		if (cli_size("--size", optarg, &o->size_bytes))
			return NVT_EXIT_USAGE;
		return o->size_bytes ? 0 : cli_usage_error("--size must be > 0");
	case 'e':
		return cli_engine(optarg, false, &o->engine) ? NVT_EXIT_USAGE : 0;
	case 'c':
		return cli_chunk(optarg, &o->chunk_bytes) ? NVT_EXIT_USAGE : 0;
	case 'n':
		return cli_count("--chunks", optarg, 2, 65536, &o->chunks) ? NVT_EXIT_USAGE : 0;
	case 'Q':
		c->qd_given = true;
		return cli_count("--qd", optarg, 1, 1024, &o->qd) ? NVT_EXIT_USAGE : 0;
	case 'F':
		o->force = true;
		return 0;
	case 'R':
		c->report = optarg;
		return 0;
	case 'K':
		c->keep = true;
		return 0;
	case 'j':
		c->json = true;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	case 'h':
		fputs(speedtest_help, stdout);
		return -1;
	case ':':
		return cli_usage_error("%s needs a value", argv[optind - 1]);
	default:
		return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
}

/* The targets and what follows from the options. */
static int speed_targets(int argc, char **argv, struct nvt_speedtest_opts *o,
			 const struct speed_cli *c)
{
	if (c->only_w && c->only_r)
		return cli_usage_error("--write and --read together are the default: give neither");
	if (optind >= argc)
		return cli_usage_error("give one or more targets");
	if (argc - optind > NVT_SPEED_MAX_TARGETS)
		return cli_usage_error("at most %d targets", NVT_SPEED_MAX_TARGETS);
	if (cli_engine_qd(o->engine, c->qd_given, &o->qd))
		return NVT_EXIT_USAGE;
	o->write = !c->only_r;
	o->read = !c->only_w;
	o->ntargets = (unsigned)(argc - optind);
	for (unsigned i = 0; i < o->ntargets; i++)
		o->target[i] = argv[optind + (int)i];
	for (unsigned i = 0; i < o->ntargets; i++)
		for (unsigned k = 0; k < i; k++)
			if (!strcmp(o->target[i], o->target[k]))
				return cli_usage_error("%s is given twice", o->target[i]);
	return 0;
}

static void banner(const struct nvt_speedtest_opts *o)
{
	char each[48] = "";

	if (o->write)
		snprintf(each, sizeof(each), ", %.2f GB each", o->size_bytes / 1e9);
	fprintf(stderr, "nvtape speedtest: %s%s%s %u target%s at once%s\n",
		o->write ? "writing" : "", o->write && o->read ? " then " : "",
		o->read ? "reading and checking" : "", o->ntargets, o->ntargets > 1 ? "s" : "",
		each);
}

/* The library's outcome as the exit code. */
static int speed_exit(int rc, const struct nvt_speedtest_result *r)
{
	if (rc < 0)
		return r->err.flags & NVT_ERR_PARAM ? NVT_EXIT_USAGE : NVT_EXIT_RUNTIME;
	if (r->failed || r->interrupted)
		return NVT_EXIT_RUNTIME;
	return r->problems ? NVT_EXIT_DATA : NVT_EXIT_OK;
}

int cmd_speedtest(int argc, char **argv)
{
	struct nvt_speedtest_opts o;
	struct nvt_speedtest_result *r;
	struct speed_cli c = {0};
	struct cli_scratch made = {0};
	char cmdline[1024];
	int opt, rc;

	cli_cmdline(cmdline, sizeof(cmdline), "nvtape", argc, argv);
	nvt_speedtest_opts_default(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", speed_lo, NULL)) != -1)
		if ((rc = speed_option(opt, argv, &o, &c)))
			return rc < 0 ? NVT_EXIT_OK : rc;
	if ((rc = speed_targets(argc, argv, &o, &c)) || cli_parse_only)
		return rc;
	o.interrupt = &cli_interrupted;
	o.notice = cli_note;
	r = calloc(1, sizeof(*r));
	if (!r) {
		cli_error("out of memory");
		return NVT_EXIT_RUNTIME;
	}
	cli_install_signals();
	if (!c.json && !c.quiet)
		banner(&o);
	if (o.write)
		cli_scratch_make(&made, o.target, o.ntargets);
	rc = nvt_speedtest(&o, r);
	if (rc < 0)
		cli_error("%s", cli_err_msg(&r->err));
	rc = speed_exit(rc, r);
	for (unsigned i = 0; i < r->n; i++)
		if (r->t[i].error[0] && c.json)
			cli_error("%s: %s", r->t[i].path, r->t[i].error);
	if (c.report) {
		struct nvt_report rep = {
			.title = "nvtape speedtest", .command = cmdline, .speed = r};
		if (cli_report(c.report, &rep, c.json || c.quiet))
			rc = NVT_EXIT_RUNTIME;
	}
	if (c.json)
		speedtest_json(&o, r, rc, stdout);
	else
		table(r, rc);
	cli_scratch_finish(&made, c.keep || !o.read,
			   c.keep ? "--keep was given"
				  : "left for nvtape speedtest --read; rm it after");
	nvt_speedtest_result_free(r);
	free(r);
	return rc;
}

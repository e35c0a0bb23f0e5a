/* SPDX-License-Identifier: MIT */
/* nvtape bench record|play: the search for the highest sustained rate, a line per run, the
 * summary table, RESULT, JSON (with every time series) and the HTML report. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_scratch.h"
#include "nvtape/bench.h"
#include "nvtape/report.h"
#include <math.h>

static const char bench_help[] =
	"Usage: nvtape bench record|play [options] TARGET...\n"
	"Find the highest rate a target sustains: an unthrottled run (burst rate, cache size,\n"
	"sustained rate), then a coarse sweep down from the top of the range and a bisection.\n"
	"A rate passes when K of K runs pass: record: zero drops and a clean verify of every\n"
	"run; play: zero underflows and a clean checker. TARGET: a file, a block device or\n"
	"several members of a stripe, as for record. Every run overwrites TARGET; a file the\n"
	"bench created is removed at the end (--keep keeps it), one that was there is kept.\n\n"
	"  --size S             bytes every run writes or plays (default 16G; more than the\n"
	"                       drive's cache to see its sustained rate)\n"
	"  --from R, --to R     search range, rates per second as for record (bytes 1500MB\n"
	"                       or 1G, bits 12Gbps or 800Mbit/s); default: an eighth of the\n"
	"                       unthrottled average up to 1.05x it\n"
	"  --runs K             runs that must all pass at a rate (default 3)\n"
	"  --tolerance P        stop when the failing rate is within P of the passing one\n"
	"                       (default 3%)\n"
	"  --no-sweep           only the unthrottled run: burst, cache, sustained\n"
	"  --max-write B        write at most B bytes in all (drive endurance): the search\n"
	"                       stops before the run that would pass it, with the best rate\n"
	"                       so far; B must hold one run (--size)\n"
	"  --sample T           time series interval (default 100ms)\n"
	"  --engine file|nvme, --chunk B, --chunks N, --qd Q, --timeout T, --force\n"
	"                       as for record (play: the read side)\n"
	"  --keep               keep the target files the bench created\n"
	"  --report FILE        write a self-contained HTML report with the plots\n"
	"  --json               one JSON object on stdout with every run's time series, also\n"
	"                       on errors (docs/json.md)\n"
	"  -q, --quiet          no line per run\n" CLI_LAYOUT_HELP "  -h, --help\n\n"
	"The plan (runs, bytes written at most, time) is printed before the first run.\n\n"
	"Exit codes: 0 a rate was found; 2 not even the lowest rate passed (or none had passed\n"
	"            when --max-write stopped the search); 1 runtime error; 64 usage error.\n";

struct bench_cli {
	bool quiet, json, qd_given, keep;
	enum nvt_bench_mode mode;
	const char *report, *engine;
	uint64_t stripe, member_off;
};

/* A run as an exit code: 1 its call failed, 2 it did not pass, 0 it passed. */
static int run_exit(const struct nvt_bench_run *r)
{
	return r->rc ? NVT_EXIT_RUNTIME : r->pass ? NVT_EXIT_OK : NVT_EXIT_DATA;
}

static void print_duration(char *buf, size_t cap, double s)
{
	if (s < 120)
		snprintf(buf, cap, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, cap, "%.0f min", s / 60);
	else
		snprintf(buf, cap, "%.1f h", s / 3600);
}

/* The plan before the first run; the range and a time estimate after the unthrottled run. */
static void on_plan(const struct nvt_bench_plan *p, void *arg)
{
	const struct bench_cli *c = arg;
	char runs[96] = "", budget[96] = "", t[32];

	if (c->quiet || c->json)
		return;
	if (p->budget)
		snprintf(budget, sizeof(budget),
			 "; --max-write %.2f GB: the search stops before exceeding it",
			 p->budget / 1e9);
	if (p->seconds > 0) {
		print_duration(t, sizeof(t), p->seconds);
		fprintf(stderr,
			"nvtape bench: range %.1f to %.1f MB/s: at most %u rates, %u runs in all, "
			"%.2f GB written, about %s more at most%s\n",
			p->from_bps / 1e6, p->to_bps / 1e6, p->rates_max, p->runs_max,
			p->write_bytes / 1e9, t, budget);
		return;
	}
	if (p->runs_max)
		snprintf(runs, sizeof(runs), "at most %u runs (%u rates)", p->runs_max,
			 p->rates_max);
	else
		snprintf(runs, sizeof(runs), "runs as the unthrottled run sets the range");
	fprintf(stderr, "nvtape bench: plan: %s; %.2f GB per run%s", runs, p->run_bytes / 1e9,
		c->mode == NVT_BENCH_PLAY ? " (written once, then read)" : "");
	if (p->write_bytes)
		fprintf(stderr, ", %.2f GB written at most (drive endurance)",
			p->write_bytes / 1e9);
	fprintf(stderr, "%s; a time estimate follows the unthrottled run\n",
		budget[0] ? budget : "; --max-write caps the bytes written");
}

static void on_run(const struct nvt_bench_run *r, void *arg)
{
	const struct bench_cli *c = arg;
	char rate[32] = "unthrottled";

	if (c->quiet || c->json)
		return;
	if (r->rate_bps)
		snprintf(rate, sizeof(rate), "%.0f MB/s", r->rate_bps / 1e6);
	fprintf(stderr, "nvtape bench: %-12s run %u: %s  %8.1f MB/s %s  %7.3f GB%s%s\n", rate,
		r->index ? r->index : 1, r->pass ? "pass" : "FAIL", r->mbps,
		c->mode == NVT_BENCH_PLAY ? "read" : "written", r->bytes / 1e9, r->pass ? "" : "  ",
		r->why);
}

static void json_series(struct json *j, const char *key, const struct nvt_series *s)
{
	json_obj(j, key);
	json_uint(j, "ring_chunks", s->ring_chunks);
	json_arr(j, "t_s");
	for (size_t i = 0; i < s->n; i++)
		json_num(j, NULL, s->s[i].t_ns / 1e9, 3);
	json_arr_end(j);
	json_arr(j, "bytes");
	for (size_t i = 0; i < s->n; i++)
		json_uint(j, NULL, s->s[i].bytes);
	json_arr_end(j);
	json_arr(j, "ring_fill");
	for (size_t i = 0; i < s->n; i++)
		json_uint(j, NULL, s->s[i].ring_fill);
	json_arr_end(j);
	json_arr(j, "drops");
	for (size_t i = 0; i < s->n; i++)
		json_uint(j, NULL, s->s[i].drops);
	json_arr_end(j);
	json_obj_end(j);
}

static void json_run(struct json *j, const char *key, const struct nvt_bench_run *r)
{
	json_obj(j, key);
	json_uint(j, "rate_bps", r->rate_bps);
	json_uint(j, "run", r->index);
	json_str(j, "result", r->pass ? "pass" : "fail");
	json_int(j, "exit", run_exit(r));
	json_uint(j, "bytes", r->bytes);
	json_num(j, "seconds", r->mbps > 0 ? r->bytes / (r->mbps * 1e6) : NAN, 6);
	json_num(j, "mbps", r->mbps, 3);
	json_uint(j, "drops", r->drops);
	json_uint(j, "errors", r->errors);
	json_num(j, "io_cpu_s", r->io_cpu_s, 4);
	json_str(j, "why", r->why[0] ? r->why : NULL);
	json_series(j, "series", &r->series);
	json_obj_end(j);
}

static void bench_json(const struct nvt_bench_opts *o, const struct nvt_bench_result *r, int rc,
		       FILE *f)
{
	const struct nvt_cliff *c = &r->cliff;
	struct json j;

	cli_json_begin(&j, f, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "mode", o->mode == NVT_BENCH_PLAY ? "play" : "record");
	json_str(&j, "path", o->rec.path);
	json_str(&j, "engine", r->engine_desc);
	json_uint(&j, "size", o->rec.size_bytes);
	json_uint(&j, "runs_per_rate", o->runs);
	json_uint(&j, "ring_bytes", r->ring_bytes);
	json_uint(&j, "best_bps", r->best_bps);
	json_uint(&j, "fail_bps", r->fail_bps);
	json_bool(&j, "limited_by_to", r->limited_by_to);
	json_bool(&j, "interrupted", r->interrupted);
	json_obj(&j, "cliff");
	json_bool(&j, "found", c->found);
	json_bool(&j, "steady", c->steady);
	json_num(&j, "avg_bps", c->avg_bps, 0);
	json_num(&j, "burst_bps", c->burst_bps, 0);
	json_num(&j, "sustained_bps", c->sustained_bps, 0);
	json_uint(&j, "cliff_bytes", c->cliff_bytes);
	json_num(&j, "cliff_s", c->cliff_s, 3);
	json_str(&j, "warning", c->warning[0] ? c->warning : NULL);
	json_obj_end(&j);
	json_run(&j, "unthrottled", &r->max);
	json_arr(&j, "sweep");
	for (size_t i = 0; i < r->nruns; i++)
		json_run(&j, NULL, &r->runs[i]);
	json_arr_end(&j);
	json_end(&j);
}

static void summary(const struct nvt_bench_opts *o, const struct nvt_bench_result *r, int rc)
{
	const struct nvt_cliff *c = &r->cliff;
	const char *what = o->mode == NVT_BENCH_PLAY ? "playback" : "recording";

	printf("nvtape bench %s on %s\n", o->mode == NVT_BENCH_PLAY ? "play" : "record",
	       o->rec.path);
	printf("  engine           %s\n", r->engine_desc);
	printf("  unthrottled      %.1f MB/s average over %.3f GB\n", r->max.mbps,
	       r->max.bytes / 1e9);
	if (c->found)
		printf("  burst / cache    %.1f MB/s for the first %.3f GB (%.1f s), then\n"
		       "  sustained        %.1f MB/s\n",
		       c->burst_bps / 1e6, c->cliff_bytes / 1e9, c->cliff_s,
		       c->sustained_bps / 1e6);
	else
		printf("  cache cliff      none within %.3f GB (last third %.1f MB/s)\n",
		       r->max.bytes / 1e9, c->sustained_bps / 1e6);
	if (c->warning[0])
		printf("  WARNING          %s\n", c->warning);
	if (!o->no_sweep) {
		printf("  runs             %zu in the sweep, %u of %u must pass at a rate\n",
		       r->nruns, o->runs, o->runs);
		if (r->best_bps)
			printf("  HIGHEST RATE     %.1f MB/s %s passed %u of %u%s\n",
			       r->best_bps / 1e6, what, o->runs, o->runs,
			       r->limited_by_to ? " (the top of the range: raise --to)" : "");
		else
			printf("  HIGHEST RATE     none: %.1f MB/s failed (lower --from)\n",
			       r->fail_bps / 1e6);
		if (r->fail_bps && r->best_bps)
			printf("  lowest failure   %.1f MB/s\n", r->fail_bps / 1e6);
		printf("  ring             %.0f MB absorbs slower moments: a rate passes for "
		       "--size "
		       "S if the drive keeps up to within ring/(S/rate)\n",
		       r->ring_bytes / 1e6);
	}
	printf("RESULT mode=%s best_bps=%llu fail_bps=%llu unthrottled_mbps=%.1f cliff=%d "
	       "burst_bps=%.0f cliff_bytes=%llu sustained_bps=%.0f steady=%d runs=%zu result=%s "
	       "exit=%d\n",
	       o->mode == NVT_BENCH_PLAY ? "play" : "record", (unsigned long long)r->best_bps,
	       (unsigned long long)r->fail_bps, r->max.mbps, c->found, c->burst_bps,
	       (unsigned long long)c->cliff_bytes, c->sustained_bps, c->steady, r->nruns,
	       cli_result_name(rc), rc);
}

static const struct option bench_lo[] = {{"size", required_argument, 0, 's'},
					 {"from", required_argument, 0, 'f'},
					 {"to", required_argument, 0, 'T'},
					 {"runs", required_argument, 0, 'k'},
					 {"tolerance", required_argument, 0, 'p'},
					 {"no-sweep", no_argument, 0, 'N'},
					 {"max-write", required_argument, 0, 'M'},
					 {"sample", required_argument, 0, 'S'},
					 {"engine", required_argument, 0, 'e'},
					 {"chunk", required_argument, 0, 'c'},
					 {"chunks", required_argument, 0, 'n'},
					 {"qd", required_argument, 0, 'Q'},
					 {"timeout", required_argument, 0, 't'},
					 {"force", no_argument, 0, 'F'},
					 {"report", required_argument, 0, 'R'},
					 {"keep", no_argument, 0, 'K'},
					 {"json", no_argument, 0, 'j'},
					 {"quiet", no_argument, 0, 'q'},
					 CLI_LAYOUT_OPTIONS,
					 {"help", no_argument, 0, 'h'},
					 {0, 0, 0, 0}};

static int parse_tolerance(const char *val, double *tol)
{
	char *end;
	double p = strtod(val, &end);

	if (end == val || (*end && strcmp(end, "%")) || !(p >= 0.1 && p <= 50))
		return cli_usage_error("--tolerance: a percentage from 0.1 to 50, e.g. 3%%");
	*tol = p / 100;
	return 0;
}

/* The search and its budget: --size, --from, --to, --runs, --tolerance, --no-sweep,
 * --max-write, --sample. 0, NVT_EXIT_USAGE, or 1 when opt is not one of them. */
static int search_option(int opt, const char *val, struct nvt_bench_opts *o)
{
	switch (opt) {
	case 's':
		if (cli_size("--size", val, &o->rec.size_bytes))
			return NVT_EXIT_USAGE;
		return o->rec.size_bytes ? 0 : cli_usage_error("--size must be > 0");
	case 'f':
	case 'T':
		return cli_rate(opt == 'f' ? "--from" : "--to", val,
				opt == 'f' ? &o->from_bps : &o->to_bps)
			       ? NVT_EXIT_USAGE
			       : 0;
	case 'k':
		return cli_count("--runs", val, 1, 100, &o->runs) ? NVT_EXIT_USAGE : 0;
	case 'p':
		return parse_tolerance(val, &o->tolerance) ? NVT_EXIT_USAGE : 0;
	case 'N':
		o->no_sweep = true;
		return 0;
	case 'M':
		if (cli_size("--max-write", val, &o->max_write_bytes))
			return NVT_EXIT_USAGE;
		return o->max_write_bytes ? 0 : cli_usage_error("--max-write must be > 0");
	case 'S':
		if (cli_duration("--sample", val, &o->sample_ns))
			return NVT_EXIT_USAGE;
		return o->sample_ns >= 10000000ull
			       ? 0
			       : cli_usage_error("--sample must be at least 10ms");
	default:
		return 1;
	}
}

/* The I/O options shared with record and play. */
static int io_option(int opt, const char *val, struct nvt_bench_opts *o, struct bench_cli *c)
{
	uint64_t v;

	switch (opt) {
	case 'e':
		return cli_engine(val, false, &c->engine) ? NVT_EXIT_USAGE : 0;
	case 'c':
		if (cli_chunk(val, &v))
			return NVT_EXIT_USAGE;
		o->rec.chunk_bytes = o->play.chunk_bytes = v;
		return 0;
	case 'n':
		if (cli_count("--chunks", val, 2, 65536, &o->rec.chunks))
			return NVT_EXIT_USAGE;
		o->play.chunks = o->rec.chunks;
		return 0;
	case 'Q':
		c->qd_given = true;
		return cli_count("--qd", val, 1, 1024, &o->rec.qd) ? NVT_EXIT_USAGE : 0;
	case 't':
		if (cli_duration("--timeout", val, &o->rec.timeout_ns))
			return NVT_EXIT_USAGE;
		if (!o->rec.timeout_ns)
			return cli_usage_error("--timeout must be > 0");
		o->play.timeout_ns = o->rec.timeout_ns;
		return 0;
	case 'F':
		o->rec.force = true;
		return 0;
	case 'Z':
	case 'O':
		return cli_layout_option(opt, val, &c->stripe, &c->member_off) ? NVT_EXIT_USAGE : 0;
	default:
		return 1;
	}
}

/* The options after the mode; -1 when --help was shown. */
static int parse_bench(int argc, char **argv, struct nvt_bench_opts *o, struct bench_cli *c)
{
	int opt, rc;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", bench_lo, NULL)) != -1) {
		if ((rc = search_option(opt, optarg, o)) != 1 ||
		    (rc = io_option(opt, optarg, o, c)) != 1) {
			if (rc)
				return rc;
			continue;
		}
		switch (opt) {
		case 'R':
			c->report = optarg;
			break;
		case 'K':
			c->keep = true;
			break;
		case 'j':
			c->json = true;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			fputs(bench_help, stdout);
			return -1;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	return 0;
}

/* What parsing leaves to check and to derive: targets, engine and qd, the budget. */
static int finish_opts(int argc, char **argv, struct nvt_bench_opts *o, struct bench_cli *c)
{
	struct nvt_bench_plan plan;
	struct nvt_err err = {0};

	if (cli_layout(&o->rec.layout, argc, argv, optind, c->stripe, c->member_off) ||
	    cli_engine_qd(c->engine, c->qd_given, &o->rec.qd))
		return NVT_EXIT_USAGE;
	if (o->to_bps && o->from_bps >= o->to_bps)
		return cli_usage_error("--from must be below --to");
	if (o->max_write_bytes && o->max_write_bytes < o->rec.size_bytes)
		return cli_usage_error("--max-write %.2f GB is smaller than one run (--size "
				       "%.2f GB): nothing could run",
				       o->max_write_bytes / 1e9, o->rec.size_bytes / 1e9);
	o->rec.path = argv[optind];
	o->rec.engine = o->play.engine = c->engine;
	o->play.qd = o->rec.qd;
	if (o->rec.qd > o->rec.chunks && strcmp(c->engine, "nvme"))
		o->rec.qd = o->play.qd = o->rec.chunks;
	if (nvt_bench_plan(o, &plan, &err))
		return cli_usage_error("%s", err.msg);
	return 0;
}

/* The library's outcome as the exit code. */
static int bench_exit(int rc, const struct nvt_bench_opts *o, const struct nvt_bench_result *r)
{
	if (rc < 0)
		return r->err.flags & NVT_ERR_PARAM ? NVT_EXIT_USAGE : NVT_EXIT_RUNTIME;
	if (o->no_sweep)
		return NVT_EXIT_OK;
	return r->found ? NVT_EXIT_OK : NVT_EXIT_DATA;
}

static int run_bench(struct nvt_bench_opts *o, struct bench_cli *c, const char *cmdline)
{
	struct nvt_bench_result *r = calloc(1, sizeof(*r));
	struct cli_scratch made;
	int rc;

	if (!r) {
		cli_error("out of memory");
		return NVT_EXIT_RUNTIME;
	}
	cli_install_signals();
	cli_scratch_make(&made, o->rec.layout.path, o->rec.layout.n);
	if (!c->quiet && !c->json)
		fprintf(stderr,
			"nvtape bench: %s on %s, %.2f GB per run, %u of %u runs must pass at a "
			"rate -- Ctrl-C to stop\n",
			c->mode == NVT_BENCH_PLAY ? "playback" : "recording", o->rec.path,
			o->rec.size_bytes / 1e9, o->runs, o->runs);
	rc = bench_exit(nvt_bench(o, r), o, r);
	if (rc == NVT_EXIT_USAGE) {
		rc = cli_usage_error("%s", cli_err_msg(&r->err));
		goto out;
	}
	if (r->err.code)
		cli_error("%s", cli_err_msg(&r->err));
	if (r->interrupted)
		cli_error("interrupted: the results so far are below");
	if (c->report) {
		struct nvt_report rep = {.title = c->mode == NVT_BENCH_PLAY ? "nvtape bench play"
									    : "nvtape bench record",
					 .command = cmdline,
					 .bench_opts = o,
					 .bench = r};
		if (cli_report(c->report, &rep, c->json))
			rc = NVT_EXIT_RUNTIME;
	}
	if (c->json)
		bench_json(o, r, rc, stdout);
	else
		summary(o, r, rc);
out:
	cli_scratch_finish(&made, c->keep, "--keep was given");
	nvt_bench_result_free(r);
	free(r);
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct nvt_bench_opts o;
	struct bench_cli c = {.engine = "file"};
	char cmdline[1024];
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(bench_help, stdout);
		return NVT_EXIT_OK;
	}
	if (argc < 2 || (strcmp(argv[1], "record") && strcmp(argv[1], "play")))
		return cli_usage_error("bench needs record or play (nvtape bench --help)");
	cli_cmdline(cmdline, sizeof(cmdline), "nvtape", argc, argv);
	nvt_bench_opts_default(&o);
	c.mode = o.mode = strcmp(argv[1], "play") ? NVT_BENCH_RECORD : NVT_BENCH_PLAY;
	rc = parse_bench(argc - 1, argv + 1, &o, &c);
	if (rc)
		return rc < 0 ? NVT_EXIT_OK : rc;
	rc = finish_opts(argc - 1, argv + 1, &o, &c);
	if (rc || cli_parse_only)
		return rc;
	o.interrupt = &cli_interrupted;
	o.on_run = on_run;
	o.on_plan = on_plan;
	o.notice = cli_note;
	o.arg = &c;
	return run_bench(&o, &c, cmdline);
}

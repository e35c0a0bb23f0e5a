/* SPDX-License-Identifier: MIT */
/* nvtape play: options, live stats line, summary, RESULT line and JSON. With --sink stdout the
 * data owns standard output and every report goes to standard error. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/play.h"
#include "nvtape/sink.h"

static const char play_help[] =
	"Usage: nvtape play [options] FILE...\n"
	"Play a recording into a sink at a programmed rate: O_DIRECT reads, several in flight,\n"
	"in file order into the ring, which is full before the sink starts.\n\n"
	"  --sink NAME          where the data goes (default checker, for test-pattern\n"
	"                       recordings; Sinks below)\n"
	"  --rate R             sink rate per second: bytes 1500MB (10^6) or 1G (2^30), bits\n"
	"                       12Gbps or 800Mbit/s; max = as fast as the reads go (default)\n"
	"  --check counter:TYPE[@OFFSET][/STRIDE][+INC][%WRAP]\n"
	"                       the checker sink on other data than the test pattern: check\n"
	"                       the counter every record carries (docs/checks.md), instead\n"
	"                       of the one the recording names\n"
	"  --loop N             play the file N times seamlessly (0 = until Ctrl-C; default 1)\n"
	"  --timing original|fast\n"
	"                       packet sinks (udp, packet) on a packet recording: each packet\n"
	"                       at its capture time relative to the first, on absolute\n"
	"                       deadlines (original, default), or as fast as it goes (fast);\n"
	"                       --rate (bytes of packets) and --pps imply fast\n"
	"  --speed X            original timing X times as fast (0.5 = half speed)\n"
	"  --pps N              packet sinks: packets a second\n"
	"  --late T             a packet sent more than T after its deadline is late, an\n"
	"                       underflow (default 200us)\n"
	"  --chunk B            read size (default 8M)\n"
	"  --chunks N           ring chunks (default 32)\n"
	"  --qd Q               reads in flight (default 8)\n"
	"  --timeout T          stall watchdog for the reads (default 10 s)\n"
	"  --stats T            live stats interval on stderr (default 1 s, 0 = off), with the\n"
	"                       % done and the ETA unless --loop 0\n"
	"  --json               one JSON object instead of the human summary, also on errors\n"
	"                       (on stderr with --sink stdout; docs/json.md)\n"
	"  -q, --quiet          no banner, no live stats, no event lines\n" CLI_ENGINE_HELP
		CLI_LAYOUT_HELP "  -h, --help\n\n"
	"When the sink is due to take data and none is there, that is an underflow: counted,\n"
	"never hidden; the sink keeps its schedule. A stdout reader slower than --rate shows up\n"
	"as late events.\n\n"
	"Exit codes: 0 complete and clean; 2 complete with a problem (corrupt beats, underflows,\n"
	"            gap beats != the recording's drop count, wrong first beat, late reader,\n"
	"            a recording not finalized);\n"
	"            1 runtime error or incomplete playback (read error, stall, Ctrl-C);\n"
	"            64 usage error.\n";

struct play_cli {
	FILE *rep;
	bool quiet, tty, json, qd_given;
	uint64_t stripe, member_off;
	uint64_t total_bytes; /* data bytes x loops, 0 when not known (--loop 0) */
	uint64_t max_errors, printed[3];
	struct cli_meter meter;
	struct nvt_play_result res; /* the one being made (on_event: is it checking records?) */
	const struct nvt_play_opts *opts; /* for the banner */
};

static void progress(const struct nvt_play_stats *st, void *arg)
{
	struct play_cli *c = arg;
	double inst, avg, frac = -1, left = -1;
	char eta[64];

	cli_meter_update(&c->meter, st->bytes_played, st->elapsed_ns, &inst, &avg);
	if (c->quiet)
		return;
	if (c->total_bytes) {
		uint64_t done =
			st->bytes_played < c->total_bytes ? st->bytes_played : c->total_bytes;
		frac = (double)done / c->total_bytes;
		if (avg > 0)
			left = (c->total_bytes - done) / (avg * 1e6);
	}
	fprintf(stderr,
		"%s%8.1fs %9.1f MB/s (avg %9.1f) %10.3f GB  reads %2u  ring %3" PRIu64 "/%" PRIu64
		" (low %" PRIu64 ")  underflows %" PRIu64 "%s%s",
		c->tty ? "\r" : "", st->elapsed_ns / 1e9, inst, avg, st->bytes_played / 1e9,
		st->reads_inflight, st->ring_fill, st->ring_chunks, st->ring_low,
		st->underflow_beats, cli_eta_str(frac, left, eta, sizeof(eta)),
		c->tty ? "   " : "\n");
}

static void on_event(const struct nvt_check_event *e, void *arg)
{
	struct play_cli *c = arg;

	if (c->quiet || c->printed[e->kind] >= c->max_errors)
		return;
	c->printed[e->kind]++;
	cli_print_check_event(c->rep, e, c->res.counter_checked);
}

/* end: every pass played; signal: Ctrl-C / SIGTERM; error: a read error or stall */
static const char *stop_reason(const struct nvt_play_result *r)
{
	return r->complete ? "end" : r->interrupted ? "signal" : "error";
}

static double pct(uint64_t ns, double s)
{
	return s > 0 ? 100.0 * ns / 1e9 / s : 0;
}

static void summary(FILE *f, const struct nvt_play_opts *o, const struct nvt_play_result *r, int rc)
{
	const struct nvt_play_stats *st = &r->st;
	double mbps = r->seconds > 0 ? st->bytes_played / r->seconds / 1e6 : 0;
	double gb = st->bytes_played / 1e9;
	bool packets = nvt_source_kind_is_packets(r->rec.source_kind);
	char late_max[48];

	snprintf(late_max, sizeof(late_max), " (up to %.1f us late)", r->late_max_ns / 1e3);

	fprintf(f,
		"nvtape play: %s: %" PRIu64 " bytes (%" PRIu64 " passes) in %.3f s, %.1f MB/s%s\n",
		o->path, st->bytes_played, st->passes, r->seconds, mbps,
		r->complete ? "" : " -- INCOMPLETE");
	if (r->checked)
		fprintf(f,
			"nvtape play: checker: beats %" PRIu64 ", errors %" PRIu64 ", gaps %" PRIu64
			", gap beats %" PRIu64 " (expected %" PRIu64 ": drop count %" PRIu64
			" per pass), backward %" PRIu64 ", first seq %" PRIu64 "\n",
			r->chk.beats, r->chk.corrupt, r->chk.gaps, r->chk.gap_beats,
			r->expected_gap_beats * st->passes, r->rec.drop_count, r->chk.backward,
			r->chk.first_seen);
	if (r->counter_checked) {
		char spec[NVT_CHECK_SPEC_MAX];
		nvt_counter_format(&r->counter, spec, sizeof(spec));
		fprintf(f, "nvtape play: checker: the beats above are records of %s\n", spec);
	}
	if (packets) /* a packet sink's underflows are its late packets, each with its cause */
		fprintf(f,
			"nvtape play: late packets %" PRIu64 " in %" PRIu64 " runs (%" PRIu64
			" sent late with their data in the ring: the sender was held back; %" PRIu64
			" due before their data was read: the stream ran dry); ring low-water "
			"%" PRIu64 " of %" PRIu64 "; max reads in flight %u\n",
			r->packets_late, st->underflow_events,
			r->packets_late - r->packets_late_dry, r->packets_late_dry, st->ring_low,
			st->ring_chunks, r->max_inflight);
	else
		fprintf(f,
			"nvtape play: underflows %" PRIu64 " %s in %" PRIu64
			" events%s; late events %" PRIu64 "; ring low-water %" PRIu64 " of %" PRIu64
			"; max reads in flight %u\n",
			st->underflow_beats, cli_units(&r->rec), st->underflow_events,
			st->underflow_events ? " (the stream ran dry)" : "", st->late_events,
			st->ring_low, st->ring_chunks, r->max_inflight);
	fprintf(f,
		"nvtape play: CPU: read thread %.1f %% of a core (%.4f core-s/GB), sink thread "
		"%.1f %% (%.4f core-s/GB)\n",
		pct(r->read_cpu_ns, r->seconds), gb > 0 ? r->read_cpu_ns / 1e9 / gb : 0,
		pct(r->sink_cpu_ns, r->seconds), gb > 0 ? r->sink_cpu_ns / 1e9 / gb : 0);
	if (r->problems & NVT_PP_ERRORS)
		fprintf(f, "PROBLEM: %" PRIu64 " beats failed the pattern check\n", r->chk.corrupt);
	if ((r->problems & NVT_PP_UNDERFLOW) && r->packets_late > r->packets_late_dry)
		fprintf(f,
			"PROBLEM: %" PRIu64 " packets went out more than %.0f us after their "
			"deadline with their data in the ring%s: the sender was held back (a busy "
			"CPU or a slow link; --late sets the bound)\n",
			r->packets_late - r->packets_late_dry, o->late_ns / 1e3,
			r->packets_late_dry ? "" : late_max);
	if ((r->problems & NVT_PP_UNDERFLOW) && r->packets_late_dry)
		fprintf(f,
			"PROBLEM: %" PRIu64 " packets were due before their data was read (the "
			"ring was empty): the stream ran dry (the storage reads slower than the "
			"replay)\n",
			r->packets_late_dry);
	if ((r->problems & NVT_PP_UNDERFLOW) && st->underflow_beats > r->packets_late)
		fprintf(f,
			"PROBLEM: %" PRIu64 " underflows (%s due at the sink and not there), first "
			"after %.3f s: the stream ran dry (reads slower than --rate?)\n",
			st->underflow_beats - r->packets_late, cli_units(&r->rec),
			r->first_underflow_ns / 1e9);
	if (r->problems & NVT_PP_GAPS)
		fprintf(f,
			"PROBLEM: gap beats %" PRIu64 " != %" PRIu64 " dropped in the recording\n",
			r->chk.gap_beats, r->expected_gap_beats * st->passes);
	if (r->problems & NVT_PP_FIRST)
		fprintf(f,
			"PROBLEM: first beat at the sink %" PRIu64 " != header first_seq %" PRIu64
			"\n",
			r->chk.first_seen, r->rec.first_seq);
	if (r->problems & NVT_PP_BACKWARD)
		fprintf(f, "PROBLEM: %" PRIu64 " backward jumps\n", r->chk.backward);
	if (r->problems & NVT_PP_INCOMPLETE)
		fprintf(f,
			"PROBLEM: recording not finalized (writer died?): the %" PRIu64
			" bytes its last checkpoint vouched for were played; run nvtape recover\n",
			r->rec.valid_bytes);
	if (r->problems & NVT_PP_CHECKSUM)
		fprintf(f,
			"PROBLEM: %" PRIu64
			" chunks read do not match their CRC32C, the first at data "
			"offset %" PRIu64 ": the data changed after it was recorded (nvtape verify "
			"lists them)\n",
			r->sums_bad, r->first_bad_offset);
	if (r->problems & NVT_PP_LATE)
		fprintf(f,
			"PROBLEM: the reader of the output held the stream back %" PRIu64
			" times (up to %.1f ms late)\n",
			st->late_events, r->max_late_ns / 1e6);
	if (packets)
		fprintf(f,
			"nvtape play: %" PRIu64 " packets sent, %" PRIu64 " skipped (not sendable "
			"there), %" PRIu64 " late by more than %.0f us (latest %.1f us; %" PRIu64
			" of them for want of data)\n",
			r->packets, r->packets_skipped, r->packets_late, o->late_ns / 1e3,
			r->late_max_ns / 1e3, r->packets_late_dry);
	fprintf(f,
		"RESULT bytes=%" PRIu64 " seconds=%.3f sink_rate_bps=%" PRIu64
		" mbps=%.1f beats=%" PRIu64 " corrupt=%" PRIu64 " gaps=%" PRIu64
		" gap_beats=%" PRIu64 " expected_gap_beats=%" PRIu64 " drop_count=%" PRIu64
		" underflows=%" PRIu64 " underflow_events=%" PRIu64 " late_events=%" PRIu64
		" passes=%" PRIu64 " ring_low=%" PRIu64 " max_reads=%u chunks_good=%" PRIu64
		" chunks_bad=%" PRIu64 " packets=%" PRIu64 " packets_skipped=%" PRIu64
		" packets_late=%" PRIu64 " packets_late_dry=%" PRIu64 " "
		"read_mbps=%.1f read_cpu_s=%.4f sink_cpu_s=%.4f stop_reason=%s result=%s exit=%d\n",
		st->bytes_played, r->seconds, o->rate_bps, mbps, r->chk.beats, r->chk.corrupt,
		r->chk.gaps, r->chk.gap_beats, r->expected_gap_beats * st->passes,
		r->rec.drop_count, st->underflow_beats, st->underflow_events, st->late_events,
		st->passes, st->ring_low, r->max_inflight, r->sums_good, r->sums_bad, r->packets,
		r->packets_skipped, r->packets_late, r->packets_late_dry,
		r->read_seconds > 0 ? r->st.bytes_read / r->read_seconds / 1e6 : 0.0,
		r->read_cpu_ns / 1e9, r->sink_cpu_ns / 1e9, stop_reason(r), cli_result_name(rc),
		rc);
}

static void play_json(const struct nvt_play_opts *o, const struct nvt_play_result *r, int rc,
		      FILE *f)
{
	static const char *const names[] = {"corrupt",  "underflow", "gaps",       "first_seq",
					    "backward", "late",      "incomplete", "checksum"};
	const struct nvt_play_stats *st = &r->st;
	struct json j;

	cli_json_begin(&j, f, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "path", o->path);
	json_str(&j, "stop_reason", stop_reason(r));
	json_uint(&j, "bytes", st->bytes_played);
	json_num(&j, "seconds", r->seconds, 6);
	json_num(&j, "mbps", st->bytes_played / r->seconds / 1e6, 3);
	json_str(&j, "sink", r->checked ? "checker" : o->sink ? o->sink : "checker");
	json_uint(&j, "sink_rate_bps", o->rate_bps);
	json_uint(&j, "loops", o->loops);
	json_uint(&j, "passes", st->passes);
	json_bool(&j, "checked", r->checked);
	json_bool(&j, "counter_checked", r->counter_checked);
	json_uint(&j, "beats", r->chk.beats);
	json_uint(&j, "corrupt", r->chk.corrupt);
	json_uint(&j, "gaps", r->chk.gaps);
	json_uint(&j, "gap_beats", r->chk.gap_beats);
	json_uint(&j, "expected_gap_beats", r->expected_gap_beats * st->passes);
	json_uint(&j, "backward", r->chk.backward);
	json_uint(&j, "first_seq_seen", r->chk.first_seen);
	json_uint(&j, "underflows", st->underflow_beats);
	json_uint(&j, "underflow_events", st->underflow_events);
	json_num(&j, "first_underflow_s", r->first_underflow_ns / 1e9, 6);
	json_uint(&j, "late_events", st->late_events);
	json_num(&j, "max_late_s", r->max_late_ns / 1e9, 6);
	json_uint(&j, "ring_low", st->ring_low);
	json_uint(&j, "ring_chunks", st->ring_chunks);
	json_uint(&j, "max_reads", r->max_inflight);
	json_uint(&j, "read_bytes", st->bytes_read);
	json_num(&j, "read_seconds", r->read_seconds, 6);
	json_num(&j, "read_mbps", st->bytes_read / r->read_seconds / 1e6, 3);
	json_num(&j, "read_cpu_s", r->read_cpu_ns / 1e9, 6);
	json_num(&j, "sink_cpu_s", r->sink_cpu_ns / 1e9, 6);
	json_bool(&j, "sums_checked", r->sums_checked);
	json_uint(&j, "chunks_good", r->sums_good);
	json_uint(&j, "chunks_bad", r->sums_bad);
	json_uint(&j, "packets", r->packets);
	json_uint(&j, "packets_skipped", r->packets_skipped);
	json_uint(&j, "packets_late", r->packets_late);
	json_uint(&j, "packets_late_dry", r->packets_late_dry);
	json_num(&j, "late_max_s", r->late_max_ns / 1e9, 9);
	cli_json_flags(&j, "problems", r->problems, names, sizeof(names) / sizeof(names[0]));
	if (r->rec.beat_bytes)
		cli_json_recording(&j, "header", &r->rec);
	json_end(&j);
}

/* Where the reports go is known before the options are parsed, so that even a usage error's
 * JSON object stays off the data's standard output. */
static bool sink_is_stdout(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--sink=stdout") ||
		    (!strcmp(argv[i], "--sink") && i + 1 < argc && !strcmp(argv[i + 1], "stdout")))
			return true;
	}
	return false;
}

static const struct option play_lo[] = {
	{"sink", required_argument, 0, 'k'},   {"rate", required_argument, 0, 'r'},
	{"loop", required_argument, 0, 'l'},   {"chunk", required_argument, 0, 'c'},
	{"chunks", required_argument, 0, 'n'}, {"qd", required_argument, 0, 'Q'},
	{"engine", required_argument, 0, 'e'}, {"timeout", required_argument, 0, 't'},
	{"stats", required_argument, 0, 'i'},  {"max-errors", required_argument, 0, 'm'},
	{"check", required_argument, 0, 'K'},  {"json", no_argument, 0, 'j'},
	{"timing", required_argument, 0, 'T'}, {"speed", required_argument, 0, 'S'},
	{"pps", required_argument, 0, 'P'},    {"late", required_argument, 0, 'L'},
	{"quiet", no_argument, 0, 'q'},        CLI_LAYOUT_OPTIONS,
	{"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};

/* The options with a value: 0, NVT_EXIT_USAGE, or 1 when opt is not one of them. */
static int play_option(int opt, const char *val, struct play_cli *c, struct nvt_play_opts *o)
{
	switch (opt) {
	case 'k':
		if (!nvt_sink_find(val))
			return cli_usage_error("--sink must be one of: %s", nvt_sink_names());
		o->sink = val;
		return 0;
	case 'r':
		return cli_rate("--rate", val, &o->rate_bps) ? NVT_EXIT_USAGE : 0;
	case 'K':
		return cli_check(val, &o->check) ? NVT_EXIT_USAGE : 0;
	case 'T':
		if (!strcmp(val, "original"))
			o->timing = NVT_TIMING_ORIGINAL;
		else if (!strcmp(val, "fast"))
			o->timing = NVT_TIMING_FAST;
		else
			return cli_usage_error("--timing must be original or fast");
		return 0;
	case 'S': {
		char *end;
		o->speed = strtod(val, &end);
		if (*end || !(o->speed > 0 && o->speed < 1e6))
			return cli_usage_error("--speed is a factor above 0 (2 = twice as fast)");
		return 0;
	}
	case 'P':
		o->timing = NVT_TIMING_FAST;
		return cli_uint("--pps", val, 1, UINT32_MAX, &o->pps) ? NVT_EXIT_USAGE : 0;
	case 'L':
		return cli_duration("--late", val, &o->late_ns) ? NVT_EXIT_USAGE : 0;
	case 'l':
		return cli_uint("--loop", val, 0, UINT32_MAX, &o->loops) ? NVT_EXIT_USAGE : 0;
	case 'c':
		return cli_chunk(val, &o->chunk_bytes) ? NVT_EXIT_USAGE : 0;
	case 'n':
		return cli_count("--chunks", val, 2, 65536, &o->chunks) ? NVT_EXIT_USAGE : 0;
	case 'Q':
		c->qd_given = true;
		return cli_count("--qd", val, 1, 1024, &o->qd) ? NVT_EXIT_USAGE : 0;
	case 'e':
		return cli_engine(val, false, &o->engine) ? NVT_EXIT_USAGE : 0;
	case 't':
		if (cli_duration("--timeout", val, &o->timeout_ns))
			return NVT_EXIT_USAGE;
		return o->timeout_ns ? 0 : cli_usage_error("--timeout must be > 0");
	case 'i':
		return cli_duration("--stats", val, &o->stats_ns) ? NVT_EXIT_USAGE : 0;
	case 'm':
		return cli_uint("--max-errors", val, 0, UINT64_MAX, &c->max_errors) ? NVT_EXIT_USAGE
										    : 0;
	case 'Z':
	case 'O':
		return cli_layout_option(opt, val, &c->stripe, &c->member_off) ? NVT_EXIT_USAGE : 0;
	default:
		return 1;
	}
}

/* The options; -1 when --help was shown. */
static int parse_play(int argc, char **argv, struct nvt_play_opts *o, struct play_cli *c)
{
	int opt, rc;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", play_lo, NULL)) != -1) {
		if ((rc = play_option(opt, optarg, c, o)) != 1) {
			if (rc)
				return rc;
			continue;
		}
		switch (opt) {
		case 'j':
			c->json = true;
			break;
		case 'q':
			c->quiet = true;
			break;
		case 'h':
			fputs(play_help, stdout);
			fputs("\nSinks:\n", stdout);
			cli_list_registry(stdout, "sinks");
			return -1;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	return 0;
}

/* The targets, and where the reports go: standard output unless the data owns it. */
static int check_args(int argc, char **argv, struct nvt_play_opts *o, struct play_cli *c)
{
	if (cli_layout(&o->layout, argc, argv, optind, c->stripe, c->member_off) ||
	    cli_engine_qd(o->engine, c->qd_given, &o->qd))
		return NVT_EXIT_USAGE;
	o->path = argv[optind];
	c->rep = o->sink && !strcmp(o->sink, "stdout") ? stderr : stdout;
	if (c->rep == stderr && isatty(1))
		return cli_usage_error("--sink stdout writes the data to standard output, which is "
				       "a terminal: pipe or redirect it");
	return 0;
}

/* The total for the % done: what play will read of the recording, every pass; 0 when not
 * known. */
static uint64_t total_bytes(const struct nvt_play_opts *o)
{
	struct nvt_recording rec;
	struct nvt_err err = {0};

	if (!nvt_recording_open(&o->layout, &rec, &err) && rec.beat_bytes &&
	    rec.valid_bytes / rec.beat_bytes <= UINT64_MAX / rec.beat_bytes / o->loops)
		return (rec.valid_bytes - rec.valid_bytes % rec.beat_bytes) * o->loops;
	return 0;
}

static void banner(const struct nvt_play_opts *o)
{
	char rate[64] = "max";

	if (o->rate_bps)
		snprintf(rate, sizeof(rate), "%.1f MB/s", o->rate_bps / 1e6);
	fprintf(stderr,
		"nvtape play: playing %s (%u x %llu KiB ring, qd %u, sink %s at %s) -- "
		"Ctrl-C "
		"to stop\n",
		o->path, o->chunks, (unsigned long long)(o->chunk_bytes >> 10), o->qd,
		o->sink ? o->sink : "checker", rate);
}

static void opened(void *arg)
{
	struct play_cli *c = arg;

	if (!c->quiet)
		banner(c->opts);
}

static int run_play(struct nvt_play_opts *o, struct play_cli *c)
{
	struct nvt_play_result *r = &c->res;
	int rc;

	c->tty = isatty(2);
	o->interrupt = &cli_interrupted;
	o->progress = progress;
	o->notice = cli_note;
	o->on_event = on_event;
	o->arg = c;
	if (c->quiet)
		o->stats_ns = 0;
	if (o->stats_ns && o->loops)
		c->total_bytes = total_bytes(o);
	cli_install_signals();
	c->opts = o;
	o->opened = opened;
	rc = nvt_play(o, r);
	if (!c->quiet && c->tty && o->stats_ns)
		fputc('\n', stderr);
	rc = cli_exit_of(rc, &r->err, r->problems != 0);
	if (rc == NVT_EXIT_USAGE)
		return cli_usage_error("%s", cli_err_msg(&r->err));
	if (r->err.code)
		cli_error("%s", cli_err_msg(&r->err));
	if (c->json)
		play_json(o, r, rc, c->rep);
	else
		summary(c->rep, o, r, rc);
	return rc;
}

int cmd_play(int argc, char **argv)
{
	struct nvt_play_opts o;
	struct play_cli c = {.max_errors = 20};
	int rc;

	nvt_play_opts_init(&o);
	if (sink_is_stdout(argc, argv))
		cli_json_out = stderr;
	rc = parse_play(argc, argv, &o, &c);
	if (rc)
		return rc < 0 ? NVT_EXIT_OK : rc;
	rc = check_args(argc, argv, &o, &c);
	if (rc || cli_parse_only)
		return rc;
	return run_play(&o, &c);
}

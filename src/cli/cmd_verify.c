/* SPDX-License-Identifier: MIT */
/* nvtape verify: every beat, every gap against the drop index, summary, RESULT and JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "nvtape/verify.h"

static const char verify_help[] =
	"Usage: nvtape verify [options] FILE...\n"
	"Check a recording: header, sizes, drop index, and for test-pattern recordings every\n"
	"beat (gaps, corrupt beats, backward jumps), for other data the counter every record\n"
	"carries (--check, or the one given to record), and that the gaps equal the header's\n"
	"drop count at exactly the indexed positions. Reads with O_DIRECT, several in flight.\n"
	"Also reads FPGA Drive Recorder v1 files.\n\n"
	"  --check counter:TYPE[@OFFSET][/STRIDE][+INC][%WRAP]\n"
	"                   check the frame or packet counter each record of the data carries\n"
	"                   (TYPE u8, u16le/be, u32le/be, u64le/be; e.g. counter:u32le@0/4096;\n"
	"                   docs/checks.md), instead of the one the header names\n"
	"  --max-errors N   print at most N events of each kind (default 20); all are counted\n"
	"  --qd Q           reads in flight (default 8)\n"
	"  --chunk B        read size (default 8M)\n"
	"  --engine file|nvme  file: O_DIRECT through the block layer (default); nvme: NVMe\n"
	"                   Read commands built by nvtape, io_uring passthrough (--qd =\n"
	"                   commands per drive, default 32, at most 63)\n"
	"  --json           one JSON object on stdout, also on errors (docs/json.md)\n"
	"  -q, --quiet      no header, progress or event lines: the problems and "
	"RESULT\n" CLI_LAYOUT_HELP "  -h, --help\n\n" EXIT_CODES_HELP;

struct ver_cli {
	uint64_t max_errors;
	uint64_t printed[3];
	bool quiet, json, qd_given;
	struct nvt_verify_result res; /* the one being made (on_event: is it checking records?) */
	uint64_t bad_printed;         /* bad chunks listed */
	struct nvt_chunk_crc bad[16]; /* the first ones, for --json */
	uint32_t bad_found[16];
	unsigned nbad;
	uint64_t stripe, member_off;
	int live; /* cli_writer(): the writer's PID (0: unknown) while it records; -1 */
};

static void on_event(const struct nvt_check_event *e, void *arg)
{
	struct ver_cli *c = arg;

	if (c->quiet || c->printed[e->kind] >= c->max_errors)
		return;
	c->printed[e->kind]++;
	cli_print_check_event(stdout, e, c->res.counter_checked);
}

static void on_bad_chunk(const struct nvt_chunk_crc *span, uint32_t found, void *arg)
{
	struct ver_cli *c = arg;

	if (c->nbad < sizeof(c->bad) / sizeof(c->bad[0]) && c->nbad < c->max_errors) {
		c->bad[c->nbad] = *span;
		c->bad_found[c->nbad++] = found;
	}
	if (c->quiet || c->bad_printed >= c->max_errors)
		return;
	c->bad_printed++;
	printf("BAD CHUNK at data offset %" PRIu64 " (file offset %" PRIu64 "), %" PRIu64
	       " bytes: CRC32C %08x recorded, %08x read\n",
	       (uint64_t)span->data_offset, (uint64_t)span->data_offset + c->res.rec.data_offset,
	       (uint64_t)span->length, span->crc32c, found);
}

static void problems(const struct nvt_verify_result *r, int live)
{
	const struct nvt_recording *rec = &r->rec;
	unsigned p = r->problems;

	if (live >= 0) {
		char who[48] = "";
		if (live > 0)
			snprintf(who, sizeof(who), " by PID %d", live);
		printf("LIVE: the recording is being written%s: the %" PRIu64
		       " bytes of its last checkpoint were checked (not a problem); verify it "
		       "again once it has ended\n",
		       who, rec->valid_bytes);
	} else if (p & NVT_VP_INCOMPLETE)
		printf("PROBLEM: recording not finalized, and no writer holds it (its writer "
		       "died): %" PRIu64 " checkpointed bytes checked; run nvtape recover\n",
		       rec->valid_bytes);
	if (rec->flags & NVT_FLAG_STOP_ERROR)
		printf("note: the recording ended early on an error (no space, I/O error or "
		       "stall); "
		       "what it holds is checked above\n");
	if ((p & NVT_VP_DROPS) && r->isb_seen && nvt_source_kind_is_packets(rec->source_kind) &&
	    rec->source_kind != NVT_SRC_PCAP) {
		uint64_t own = r->isb_drop < rec->drop_count ? r->isb_drop : rec->drop_count;
		printf("PROBLEM: %" PRIu64 " packets were not recorded, in %" PRIu64
		       " events: %" PRIu64 " lost in the kernel or for want of a free ring chunk "
		       "(the recorder's count), %" PRIu64
		       " seen only as sequence gaps: lost upstream, before nvtape (the sender or "
		       "the network)\n",
		       rec->drop_count, rec->drop_events, own, rec->drop_count - own);
	} else if (p & NVT_VP_DROPS) {
		printf("PROBLEM: %" PRIu64 " %s were not recorded, in %" PRIu64 " events: %s\n",
		       rec->drop_count, cli_units(rec), rec->drop_events, cli_drop_cause(rec));
	}
	if (p & NVT_VP_CORRUPT)
		printf("PROBLEM: %" PRIu64 " corrupt %s\n", r->chk.corrupt,
		       r->counter_checked ? "records (counter at or above its wrap)" : "beats");
	if (p & NVT_VP_BACKWARD)
		printf("PROBLEM: %" PRIu64 " backward jumps\n", r->chk.backward);
	if ((p & NVT_VP_MISMATCH) && r->counter_checked)
		printf("PROBLEM: %" PRIu64 " records missing (%" PRIu64
		       " bytes) do not match the header's drop count %" PRIu64 " (%" PRIu64
		       " gaps without a drop event, %" PRIu64
		       " drop events without a gap): data was lost before nvtape, or the counter "
		       "is not what --check says\n",
		       r->chk.gap_beats, r->chk.gap_beats * r->counter.stride, rec->drop_count,
		       r->gaps_unmatched, r->events_unmatched);
	else if ((p & NVT_VP_MISMATCH) && r->packet_checked)
		printf("PROBLEM: %" PRIu64 " packets missing in %" PRIu64
		       " sequence gaps do not match the header's drop count %" PRIu64 " (+%" PRIu64
		       " dropped after the last packet): %" PRIu64
		       " gaps without a drop event were lost upstream, before nvtape (the sender, "
		       "the network), or the data's counter is not what the check says; %" PRIu64
		       " drop events without a gap\n",
		       r->chk.gap_beats, r->chk.gaps, rec->drop_count, r->drops_after_end,
		       r->gaps_unmatched, r->events_unmatched);
	else if (p & NVT_VP_MISMATCH)
		printf("PROBLEM: gap beats %" PRIu64 " (+%" PRIu64
		       " dropped after the last beat) do not match the header's drop count %" PRIu64
		       " (%" PRIu64 " gaps without a drop event, %" PRIu64
		       " drop events without a gap)\n",
		       r->chk.gap_beats, r->drops_after_end, rec->drop_count, r->gaps_unmatched,
		       r->events_unmatched);
	if (p & NVT_VP_FIRST_SEQ)
		printf("PROBLEM: first beat %" PRIu64 " != header first_seq %" PRIu64 "\n",
		       r->chk.first_seen, rec->first_seq);
	if (p & NVT_VP_NO_DATA)
		printf("PROBLEM: no data\n");
	if ((p & NVT_VP_CHECKSUM) && r->sums_bad)
		printf("PROBLEM: %" PRIu64 " chunks (%" PRIu64
		       " bytes) do not match their CRC32C: the data changed after it was "
		       "recorded (the drive, the filesystem or a writer)\n",
		       r->sums_bad, r->sums_bad_bytes);
	if (p & NVT_VP_INDEX)
		printf("PROBLEM: the index is damaged (its CRC32C does not match): drop positions "
		       "and chunk checksums could not be checked\n");
	if ((p & NVT_VP_CHECKSUM) && r->sums_damaged)
		printf("PROBLEM: the index's chunk checksums do not cover the data in order: the "
		       "index is damaged\n");
	if (p & NVT_VP_KIND)
		printf("PROBLEM: the header says the data is not the test pattern (an FPGA Drive "
		       "Recorder file with its TPG flag clear), but it is: its beats were checked "
		       "as the pattern; the header was altered\n");
	if (p & NVT_VP_TAIL)
		printf("PROBLEM: data length %" PRIu64 " is not a whole number of %u-byte beats\n",
		       rec->valid_bytes, rec->beat_bytes);
}

/* The JSON object of a verification; without the header when it could not be read. */
static void verify_json(const struct nvt_verify_opts *o, const struct ver_cli *c, int rc, FILE *f)
{
	const struct nvt_verify_result *r = &c->res;
	static const char *const names[] = {"incomplete", "drops",    "gaps",      "corrupt",
					    "backward",   "mismatch", "first_seq", "no_data",
					    "tail",       "checksum", "index",     "kind"};
	struct json j;

	cli_json_begin(&j, f, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "path", o->path);
	json_uint(&j, "bytes", r->checked_bytes);
	json_num(&j, "seconds", r->seconds, 6);
	json_num(&j, "mbps",
		 cli_ratio(r->checked_bytes / r->seconds / 1e6,
			   r->checked_bytes >= CLI_MIN_BYTES && r->seconds >= CLI_MIN_S),
		 3);
	json_num(&j, "cpu_s", r->cpu_ns / 1e9, 6);
	json_bool(&j, "pattern_checked", r->pattern_checked);
	json_bool(&j, "counter_checked", r->counter_checked);
	if (r->counter_checked) {
		char spec[NVT_CHECK_SPEC_MAX];
		nvt_counter_format(&r->counter, spec, sizeof(spec));
		json_str(&j, "check", spec);
	}
	json_bool(&j, "packet_checked", r->packet_checked);
	json_uint(&j, "packets", r->packets);
	json_uint(&j, "beats", r->chk.beats);
	json_uint(&j, "gaps", r->chk.gaps);
	json_uint(&j, "gap_beats", r->chk.gap_beats);
	json_uint(&j, "corrupt", r->chk.corrupt);
	json_uint(&j, "backward", r->chk.backward);
	json_uint(&j, "first_seq_seen", r->chk.first_seen);
	json_uint(&j, "last_seq_seen", r->chk.last_seen);
	json_uint(&j, "drops_after_end", r->drops_after_end);
	json_uint(&j, "gaps_matched", r->gaps_matched);
	json_uint(&j, "gaps_unmatched", r->gaps_unmatched);
	json_uint(&j, "events_unmatched", r->events_unmatched);
	json_bool(&j, "drops_match", r->drops_match);
	json_bool(&j, "sums_checked", r->sums_checked);
	json_uint(&j, "chunks_good", r->sums_good);
	json_uint(&j, "chunks_bad", r->sums_bad);
	json_uint(&j, "chunks_bad_bytes", r->sums_bad_bytes);
	json_uint(&j, "sums_unchecked_bytes", r->sums_unchecked_bytes);
	json_bool(&j, "sums_damaged", r->sums_damaged);
	if (c->nbad) {
		json_arr(&j, "bad_chunks");
		for (unsigned i = 0; i < c->nbad; i++) {
			char x[9];
			json_obj(&j, NULL);
			json_uint(&j, "data_offset", c->bad[i].data_offset);
			json_uint(&j, "length", c->bad[i].length);
			snprintf(x, sizeof(x), "%08x", c->bad[i].crc32c);
			json_str(&j, "expected", x);
			snprintf(x, sizeof(x), "%08x", c->bad_found[i]);
			json_str(&j, "found", x);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	}
	cli_json_flags(&j, "problems", r->problems, names, sizeof(names) / sizeof(names[0]));
	json_bool(&j, "live", c->live >= 0);
	if (c->live > 0)
		json_int(&j, "writer_pid", c->live);
	else
		json_null(&j, "writer_pid");
	if (rc != NVT_EXIT_RUNTIME)
		cli_json_recording(&j, "header", &r->rec);
	json_end(&j);
}

static const struct option verify_lo[] = {{"max-errors", required_argument, 0, 'm'},
					  {"check", required_argument, 0, 'k'},
					  {"qd", required_argument, 0, 'Q'},
					  {"chunk", required_argument, 0, 'c'},
					  {"engine", required_argument, 0, 'e'},
					  {"json", no_argument, 0, 'j'},
					  {"quiet", no_argument, 0, 'q'},
					  CLI_LAYOUT_OPTIONS,
					  {"help", no_argument, 0, 'h'},
					  {0, 0, 0, 0}};

/* One option: 0, NVT_EXIT_USAGE, or -1 when --help was shown. */
static int verify_option(int opt, char **argv, struct ver_cli *c, struct nvt_verify_opts *o)
{
	switch (opt) {
	case 'm':
		return cli_uint("--max-errors", optarg, 0, UINT64_MAX, &c->max_errors)
			       ? NVT_EXIT_USAGE
			       : 0;
	case 'k':
		return cli_check(optarg, &o->check) ? NVT_EXIT_USAGE : 0;
	case 'Q':
		c->qd_given = true;
		return cli_count("--qd", optarg, 1, 256, &o->qd) ? NVT_EXIT_USAGE : 0;
	case 'e':
		return cli_engine(optarg, false, &o->engine) ? NVT_EXIT_USAGE : 0;
	case 'c':
		return cli_chunk(optarg, &o->chunk_bytes) ? NVT_EXIT_USAGE : 0;
	case 'j':
		c->json = true;
		return 0;
	case 'q':
		c->quiet = true;
		return 0;
	case 'Z':
	case 'O':
		return cli_layout_option(opt, optarg, &c->stripe, &c->member_off) ? NVT_EXIT_USAGE
										  : 0;
	case 'h':
		fputs(verify_help, stdout);
		fputs("\nEngines:\n", stdout);
		cli_list_registry(stdout, "read-engines");
		return -1;
	case ':':
		return cli_usage_error("%s needs a value", argv[optind - 1]);
	default:
		return cli_usage_error("unknown option %s", argv[optind - 1]);
	}
}

/* The targets, and a ring of at least two chunks per read in flight. */
static int check_args(int argc, char **argv, struct nvt_verify_opts *o, const struct ver_cli *c)
{
	if (cli_layout(&o->layout, argc, argv, optind, c->stripe, c->member_off) ||
	    cli_engine_qd(o->engine, c->qd_given, &o->qd))
		return NVT_EXIT_USAGE;
	if (o->qd * 2 > o->chunks)
		o->chunks = o->qd * 2;
	o->path = argv[optind];
	return 0;
}

static void pattern_summary(const struct nvt_verify_result *r, const struct ver_cli *c,
			    const char *mbps)
{
	printf("  beats checked   %" PRIu64 " (%" PRIu64 " bytes)\n", r->chk.beats,
	       r->checked_bytes);
	printf("  sequence        first %" PRIu64 ", last %" PRIu64 "\n", r->chk.first_seen,
	       r->chk.last_seen);
	printf("  gaps            %" PRIu64 ", %" PRIu64 " beats missing; %" PRIu64
	       " dropped after the last beat; header drop count %" PRIu64 " (%s)\n",
	       r->chk.gaps, r->chk.gap_beats, r->drops_after_end, r->rec.drop_count,
	       r->drops_match ? "match" : "MISMATCH");
	if (r->rec.format == NVT_FMT_NVTAPE && r->rec.complete)
		printf("  drop index      %" PRIu64 " of %" PRIu64
		       " gaps at their indexed position\n",
		       r->gaps_matched, r->chk.gaps);
	printf("  corrupt beats   %" PRIu64 "%s\n", r->chk.corrupt,
	       r->chk.corrupt > c->max_errors ? " (list capped)" : "");
	printf("  backward jumps  %" PRIu64 "\n", r->chk.backward);
	printf("  read            %s MB/s, checker CPU %.3f s\n", mbps, r->cpu_ns / 1e9);
}

static void counter_summary(const struct nvt_verify_result *r, const struct ver_cli *c,
			    const char *mbps)
{
	char spec[NVT_CHECK_SPEC_MAX];

	nvt_counter_format(&r->counter, spec, sizeof(spec));
	printf("  checked with    %s\n", spec);
	printf("  records checked %" PRIu64 " (%" PRIu64 " bytes)\n", r->chk.beats,
	       r->checked_bytes);
	printf("  counter values  first %" PRIu64 ", last %" PRIu64 "\n", r->chk.first_seen,
	       r->chk.last_seen);
	printf("  gaps            %" PRIu64 ", %" PRIu64 " records missing (%" PRIu64
	       " bytes); header drop count %" PRIu64 " %s (%s)\n",
	       r->chk.gaps, r->chk.gap_beats, r->chk.gap_beats * r->counter.stride,
	       r->rec.drop_count, r->rec.beat_bytes == 1 ? "bytes" : "units",
	       r->drops_match ? "match" : "MISMATCH");
	if (r->rec.format == NVT_FMT_NVTAPE && r->rec.complete)
		printf("  drop index      %" PRIu64 " of %" PRIu64
		       " gaps at their indexed position\n",
		       r->gaps_matched, r->chk.gaps);
	printf("  bad values      %" PRIu64 "%s\n", r->chk.corrupt,
	       r->chk.corrupt > c->max_errors ? " (list capped)" : "");
	printf("  backward jumps  %" PRIu64 "\n", r->chk.backward);
	printf("  read            %s MB/s, checker CPU %.3f s\n", mbps, r->cpu_ns / 1e9);
}

static void summary(const struct nvt_verify_opts *o, const struct nvt_verify_result *r,
		    const struct ver_cli *c, int rc)
{
	char mbps[32];

	cli_ratio_str(mbps, sizeof(mbps), "%.1f", r->checked_bytes / r->seconds / 1e6,
		      r->checked_bytes >= CLI_MIN_BYTES && r->seconds >= CLI_MIN_S);

	if (!c->quiet)
		cli_print_recording(stdout, o->path, &r->rec, c->live);
	if (r->pattern_checked)
		pattern_summary(r, c, mbps);
	else if (r->counter_checked)
		counter_summary(r, c, mbps);
	else if (r->packets_walked)
		printf("  packets         %" PRIu64 " in whole pcapng blocks%s; %" PRIu64
		       " gaps (%" PRIu64 " packets missing), %" PRIu64 " matched by the drop "
		       "index, %" PRIu64 " not; %" PRIu64 " drop events without a gap, %" PRIu64
		       " packets dropped after the last\n",
		       r->packets, r->packet_checked ? ", sequence checked" : " (no packet check)",
		       r->chk.gaps, r->chk.gap_beats, r->gaps_matched, r->gaps_unmatched,
		       r->events_unmatched, r->drops_after_end);
	else if (!r->sums_checked)
		printf("  data            not a test-pattern recording: header, sizes and index "
		       "checked, content is up to its consumer\n");
	if (r->sums_checked)
		printf("  chunk CRC32C    %" PRIu64 " chunks match, %" PRIu64 " do not (%" PRIu64
		       " bytes)%s; %" PRIu64 " bytes not covered%s\n",
		       r->sums_good, r->sums_bad, r->sums_bad_bytes,
		       r->sums_bad > c->max_errors ? " (list capped)" : "", r->sums_unchecked_bytes,
		       r->pattern_checked || r->counter_checked || r->packet_checked
			       ? ""
			       : "; content checked by them only");
	else if (r->rec.format == NVT_FMT_NVTAPE && r->rec.valid_bytes)
		printf("  chunk CRC32C    none in this recording (written before nvtape kept them, "
		       "or with --checksum none)\n");
	problems(r, c->live);
	printf("RESULT result=%s bytes=%" PRIu64 " beats=%" PRIu64 " gaps=%" PRIu64
	       " gap_beats=%" PRIu64 " drop_count=%" PRIu64 " drops_match=%d corrupt=%" PRIu64
	       " backward=%" PRIu64 " chunks_good=%" PRIu64 " chunks_bad=%" PRIu64
	       " complete=%d live=%d packets=%" PRIu64 " seconds=%.3f mbps=%s cpu_s=%.4f "
	       "exit=%d\n",
	       cli_result_name(rc), r->checked_bytes, r->chk.beats, r->chk.gaps, r->chk.gap_beats,
	       r->rec.drop_count, r->drops_match, r->chk.corrupt, r->chk.backward, r->sums_good,
	       r->sums_bad, r->rec.complete, c->live >= 0, r->packets, r->seconds, mbps,
	       r->cpu_ns / 1e9, rc);
}

static int run_verify(struct nvt_verify_opts *o, struct ver_cli *c)
{
	struct nvt_verify_result *r = &c->res;
	int rc;

	o->on_event = on_event;
	o->on_bad_chunk = on_bad_chunk;
	o->progress = c->quiet || c->json ? NULL : cli_progress_bytes;
	o->notice = cli_note;
	o->arg = c;
	if (c->json)
		c->quiet = true;
	c->live = -1;
	if (nvt_recording_open(&o->layout, &r->rec, &r->err) == 0)
		c->live = cli_writer(&o->layout, &r->rec);
	rc = nvt_verify(o, r);
	if (c->live >= 0 && r->rec.complete) /* it ended meanwhile: checked as it ended */
		c->live = -1;
	if (c->live >= 0) /* a recording being written is not a data problem, nor one with no
			   * checkpointed data yet */
		r->problems &= ~(unsigned)(NVT_VP_INCOMPLETE | NVT_VP_NO_DATA);
	rc = cli_exit_of(rc, &r->err, r->problems != 0);
	if (rc == NVT_EXIT_RUNTIME || rc == NVT_EXIT_USAGE)
		cli_error("%s", cli_err_msg(&r->err));
	if (c->json) {
		verify_json(o, c, rc, stdout);
		return rc;
	}
	if (rc == NVT_EXIT_RUNTIME) {
		printf("RESULT result=error exit=1\n");
		return rc;
	}
	summary(o, r, c, rc);
	return rc;
}

int cmd_verify(int argc, char **argv)
{
	struct nvt_verify_opts o;
	struct ver_cli c = {.max_errors = 20};
	int opt, rc;

	nvt_verify_opts_default(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", verify_lo, NULL)) != -1)
		if ((rc = verify_option(opt, argv, &c, &o)))
			return rc < 0 ? NVT_EXIT_OK : rc;
	rc = check_args(argc, argv, &o, &c);
	if (rc || cli_parse_only)
		return rc;
	return run_verify(&o, &c);
}

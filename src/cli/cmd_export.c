/* SPDX-License-Identifier: MIT */
/* nvtape export: a byte or time range of a recording, raw (to a file or stdout) or as SigMF;
 * the packets of a packet recording as pcapng or pcap. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/export.h"

static const char export_help[] =
	"Usage: nvtape export [options] FILE...\n"
	"Write a range of a recording's data out: raw bytes (to -o FILE, or standard output),\n"
	"or SigMF (-o BASE: BASE.sigmf-data and BASE.sigmf-meta). Every drop event inside the\n"
	"range starts a new SigMF capture whose core:global_index jumps by the samples lost;\n"
	"drops the recording counts without their places (an fdrec file) are exit 2 and a\n"
	"\"drops unplaced\" annotation over the range.\n"
	"A packet recording (udp, packet, pcap sources) goes out as pcapng or pcap: the packets\n"
	"whose blocks start inside the byte range, or whose capture times lie inside the time\n"
	"range (relative times from the first packet); in pcapng each drop event becomes the\n"
	"next packet's epb_dropcount.\n"
	"The chunks read are checked against their checksums (exit 2 when one does not match).\n"
	"A file output is written as OUT.part-XXXXXX beside it and renamed once whole: an\n"
	"existing OUT is replaced only then, and an export that fails or is interrupted\n"
	"(Ctrl-C, SIGTERM: exit 1) leaves nothing behind. The output is never the recording\n"
	"itself (through any link or member) nor any other recording.\n\n"
	"  --offset B          the range's first data byte (default 0)\n"
	"  --length B          its bytes, > 0 (default: to the end)\n"
	"  --from T, --to T    a time range instead, through the chunks' capture times: T in\n"
	"                      seconds from the first chunk (2.5, 500ms, 3m), or absolute as\n"
	"                      2026-12-04T10:39:18.25Z or @UNIX-SECONDS; from the first chunk\n"
	"                      captured at or after --from to the first at or after --to\n"
	"                      (--to after --from)\n"
	"  --format raw|sigmf|sigmf-meta|pcapng|pcap\n"
	"                      raw (default); sigmf: a copy with its metadata; sigmf-meta: only\n"
	"                      BASE.sigmf-meta, describing the recording file in place\n"
	"                      (core:dataset, core:header_bytes, core:trailing_bytes: nothing\n"
	"                      copied; BASE in the recording's directory); pcapng, pcap "
	"(nanosecond\n"
	"                      timestamps): packet recordings, to -o FILE or standard output\n"
	"  -o, --output PATH   the raw file, or the SigMF base name\n"
	"  --json              one JSON object on stdout (not with raw to stdout)\n"
	"  -q, --quiet         only the RESULT line (on stderr with raw to "
	"stdout)\n" CLI_LAYOUT_HELP "  -h, --help\n\n" EXIT_CODES_HELP;

/* T: seconds from the first chunk (a duration), or an absolute time. */
static int parse_time(const char *opt, const char *val, uint64_t *ns, bool *relative)
{
	struct tm tm = {0};
	char *end;

	if (val[0] == '@') { /* exact to the nanosecond: no floating point */
		uint64_t sec = strtoull(val + 1, &end, 10), frac = 0, scale = 100000000;
		if (end == val + 1 || val[1] == '-' || sec > 10000000000ull)
			return cli_usage_error("%s @SECONDS: a UNIX time, not \"%s\"", opt, val);
		if (*end == '.')
			for (end++; *end >= '0' && *end <= '9'; end++, scale /= 10)
				frac += (uint64_t)(*end - '0') * scale;
		if (*end)
			return cli_usage_error("%s @SECONDS: a UNIX time, not \"%s\"", opt, val);
		*ns = sec * 1000000000u + frac;
		*relative = false;
		return 0;
	}
	end = strptime(val, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end) {
		uint64_t frac = 0, scale = 100000000;
		if (*end == '.')
			for (end++; *end >= '0' && *end <= '9'; end++, scale /= 10)
				frac += (uint64_t)(*end - '0') * scale;
		if (strcmp(end, "Z"))
			return cli_usage_error("%s: an absolute time is UTC, ending in Z "
					       "(2026-12-04T10:39:18.25Z), not \"%s\"",
					       opt, val);
		*ns = (uint64_t)timegm(&tm) * 1000000000u + frac;
		*relative = false;
		return 0;
	}
	*relative = true;
	return cli_duration(opt, val, ns) ? NVT_EXIT_USAGE : 0;
}

static void export_json(const struct nvt_export_opts *o, const struct nvt_export_result *r, int rc)
{
	static const char *const fmt[] = {"raw", "sigmf", "sigmf-meta", "pcapng", "pcap"};
	struct json j;

	cli_json_begin(&j, stdout, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "path", o->path);
	json_str(&j, "format", fmt[o->format]);
	if (rc == NVT_EXIT_OK || rc == NVT_EXIT_DATA) {
		json_uint(&j, "offset", r->offset);
		json_uint(&j, "length", r->length);
		json_uint(&j, "sample_bytes", r->sample_bytes);
		json_uint(&j, "captures", r->captures);
		json_uint(&j, "dropped_samples", r->dropped_samples);
		json_uint(&j, "unplaced_samples", r->unplaced_samples);
		json_uint(&j, "chunks_good", r->sums_good);
		json_uint(&j, "chunks_bad", r->sums_bad);
		json_uint(&j, "packets", r->packets);
		json_uint(&j, "packets_dropped", r->packets_dropped);
		json_uint(&j, "first_ns", r->first_ns);
		json_uint(&j, "last_ns", r->last_ns);
		json_str(&j, "meta_path", r->meta_path[0] ? r->meta_path : NULL);
		json_str(&j, "data_path", r->data_path[0] ? r->data_path : NULL);
	}
	json_end(&j);
}

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {{"offset", required_argument, 0, 'f'},
					   {"length", required_argument, 0, 'l'},
					   {"from", required_argument, 0, 'F'},
					   {"to", required_argument, 0, 'T'},
					   {"format", required_argument, 0, 'm'},
					   {"output", required_argument, 0, 'o'},
					   {"json", no_argument, 0, 'j'},
					   {"quiet", no_argument, 0, 'q'},
					   CLI_LAYOUT_OPTIONS,
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	struct nvt_export_opts o;
	struct nvt_export_result r;
	uint64_t stripe = 0, member_off = 0;
	bool json = false, quiet = false, rel = false, bytes_given = false;
	int opt, rc;
	FILE *report;

	nvt_export_opts_init(&o);
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qho:", lo, NULL)) != -1) {
		switch (opt) {
		case 'f':
		case 'l':
			bytes_given = true;
			if (cli_size(opt == 'f' ? "--offset" : "--length", optarg,
				     opt == 'f' ? &o.offset : &o.length))
				return NVT_EXIT_USAGE;
			if (opt == 'l' && !o.length)
				return cli_usage_error(
					"--length 0 exports nothing: give a length, or "
					"leave --length out to export to the end");
			break;
		case 'F':
		case 'T':
			if (parse_time(opt == 'F' ? "--from" : "--to", optarg,
				       opt == 'F' ? &o.from_ns : &o.to_ns, &rel))
				return NVT_EXIT_USAGE;
			o.time |= opt == 'F' ? NVT_EXPORT_FROM | (rel ? NVT_EXPORT_FROM_REL : 0)
					     : NVT_EXPORT_TO | (rel ? NVT_EXPORT_TO_REL : 0);
			break;
		case 'm':
			if (!strcmp(optarg, "raw"))
				o.format = NVT_EXPORT_RAW;
			else if (!strcmp(optarg, "sigmf"))
				o.format = NVT_EXPORT_SIGMF;
			else if (!strcmp(optarg, "sigmf-meta"))
				o.format = NVT_EXPORT_SIGMF_META;
			else if (!strcmp(optarg, "pcapng"))
				o.format = NVT_EXPORT_PCAPNG;
			else if (!strcmp(optarg, "pcap"))
				o.format = NVT_EXPORT_PCAP;
			else
				return cli_usage_error(
					"--format must be raw, sigmf, sigmf-meta, pcapng or pcap");
			break;
		case 'o':
			if (!*optarg)
				return cli_usage_error("-o needs a path");
			o.out = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'Z':
		case 'O':
			if (cli_layout_option(opt, optarg, &stripe, &member_off))
				return NVT_EXIT_USAGE;
			break;
		case 'h':
			fputs(export_help, stdout);
			return NVT_EXIT_OK;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (bytes_given && o.time)
		return cli_usage_error("give a byte range (--offset, --length) or a time range "
				       "(--from, --to), not both");
	/* both relative or both absolute: comparable now (mixed ones once the start is known) */
	if ((o.time & NVT_EXPORT_FROM) && (o.time & NVT_EXPORT_TO) &&
	    !(o.time & NVT_EXPORT_FROM_REL) == !(o.time & NVT_EXPORT_TO_REL) &&
	    o.from_ns >= o.to_ns)
		return cli_usage_error("--to must lie after --from: the range is empty");
	bool stream = o.format == NVT_EXPORT_RAW || o.format == NVT_EXPORT_PCAPNG ||
		      o.format == NVT_EXPORT_PCAP;
	if (!stream && !o.out)
		return cli_usage_error("SigMF needs -o BASE for BASE.sigmf-meta%s",
				       o.format == NVT_EXPORT_SIGMF ? " and BASE.sigmf-data" : "");
	if (stream && !o.out) {
		if (json)
			return cli_usage_error(
				"--json goes with -o: standard output carries the data");
		if (isatty(1))
			return cli_usage_error("the data would go to a terminal: give -o FILE or "
					       "redirect standard output");
		o.out_fd = 1;
	}
	if (cli_layout(&o.layout, argc, argv, optind, stripe, member_off))
		return NVT_EXIT_USAGE;
	o.path = argv[optind];
	if (cli_parse_only)
		return NVT_EXIT_OK;
	o.notice = cli_note;
	o.interrupt = &cli_interrupted;
	cli_install_signals();
	rc = nvt_export(&o, &r);
	rc = cli_exit_of(rc, &r.err, r.sums_bad || r.unplaced_samples);
	if (rc == NVT_EXIT_USAGE)
		return cli_usage_error("%s", cli_err_msg(&r.err));
	if (rc == NVT_EXIT_RUNTIME)
		cli_error("%s", cli_err_msg(&r.err));
	if (json) {
		export_json(&o, &r, rc);
		return rc;
	}
	report = o.out_fd == 1 ? stderr : stdout;
	if (rc == NVT_EXIT_RUNTIME) {
		fprintf(report, "RESULT result=error exit=1\n");
		return rc;
	}
	if (!quiet)
		fprintf(report,
			"nvtape export: %" PRIu64 " bytes from data offset %" PRIu64 "%s%s%s\n",
			r.length, r.offset, r.meta_path[0] ? " -> " : "", r.meta_path,
			r.data_path[0] ? (r.meta_path[0] ? " + data" : " -> file") : "");
	if (r.packets || o.format == NVT_EXPORT_PCAPNG || o.format == NVT_EXPORT_PCAP)
		fprintf(report,
			"nvtape export: %" PRIu64 " packets (%" PRIu64
			" lost among them, as the drop index says), first %" PRIu64
			".%09u, last %" PRIu64 ".%09u\n",
			r.packets, r.packets_dropped, r.first_ns / 1000000000u,
			(unsigned)(r.first_ns % 1000000000u), r.last_ns / 1000000000u,
			(unsigned)(r.last_ns % 1000000000u));
	if (r.sums_bad)
		fprintf(report,
			"PROBLEM: %" PRIu64 " chunks do not match their CRC32C (exported as they "
			"are; nvtape verify lists them)\n",
			r.sums_bad);
	if (r.unplaced_samples && rc != NVT_EXIT_RUNTIME)
		fprintf(report,
			"PROBLEM: the recording counts %" PRIu64 " samples lost but does not keep "
			"where (%s): the SigMF captures run on as if nothing were missing, so "
			"every "
			"sample after the first loss is later than its time says (the metadata "
			"says so in a \"drops unplaced\" annotation); %s\n",
			r.unplaced_samples,
			r.rec.format == NVT_FMT_FDREC ? "an FPGA Drive Recorder file keeps only "
							"its drop count"
						      : "its drop index is missing",
			nvt_source_kind_is_pattern(r.rec.source_kind)
				? "for test-pattern data nvtape verify lists where the gaps are"
				: "only the samples before the first loss have a trusted time");
	fprintf(report,
		"RESULT result=%s bytes=%" PRIu64 " offset=%" PRIu64 " captures=%" PRIu64
		" dropped_samples=%" PRIu64 " unplaced_samples=%" PRIu64 " chunks_good=%" PRIu64
		" chunks_bad=%" PRIu64 " packets=%" PRIu64 " packets_dropped=%" PRIu64 " exit=%d\n",
		cli_result_name(rc), r.length, r.offset, r.captures, r.dropped_samples,
		r.unplaced_samples, r.sums_good, r.sums_bad, r.packets, r.packets_dropped, rc);
	return rc;
}

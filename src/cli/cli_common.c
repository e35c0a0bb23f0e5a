/* SPDX-License-Identifier: MIT */
/* nvtape CLI: shared helpers for argument parsing and output. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/counter.h"
#include "nvtape/engines.h"
#include "nvtape/meta.h"
#include "nvtape/sink.h"
#include "nvtape/source.h"
#include "nvtape/report.h"
#include "nvtape/units.h"

volatile sig_atomic_t cli_interrupted;
const char *cli_cmd = "";
bool cli_json, cli_json_done;
FILE *cli_json_out;
char cli_last_error[512];
bool cli_parse_only;

static void keep_error(const char *fmt, va_list ap)
{
	vsnprintf(cli_last_error, sizeof(cli_last_error), fmt, ap);
}

static void on_signal(int sig)
{
	(void)sig;
	/* read by the library's threads: an atomic store (lock-free, async-signal-safe) */
	__atomic_store_n(&cli_interrupted, 1, __ATOMIC_RELAXED);
}

void cli_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvtape %s: ", cli_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	keep_error(fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see nvtape %s --help)\n", cli_cmd);
	return NVT_EXIT_USAGE;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nvtape %s: error: ", cli_cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	keep_error(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_note(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "nvtape %s: note: %s\n", cli_cmd, msg);
}

/* "0x10": strtod would read hexadecimal; the parsers refuse it, the message says why */
static bool hex_number(const char *val)
{
	while (isspace((unsigned char)*val))
		val++;
	return val[0] == '0' && (val[1] == 'x' || val[1] == 'X');
}

int cli_size(const char *opt, const char *val, uint64_t *out)
{
	if (hex_number(val))
		return cli_usage_error("%s %s: hexadecimal is not taken; write the size in decimal "
				       "(examples: 4096, 8M, 1.5G, 500MB)",
				       opt, val);
	if (nvt_parse_size(val, out))
		return cli_usage_error("%s: \"%s\" is not a size (examples: 4096, 8M, 1.5G, 500MB)",
				       opt, val);
	return 0;
}

int cli_uint(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out)
{
	int rc = nvt_parse_uint(val, min, max, out);

	if (rc == -ERANGE)
		return cli_usage_error("%s %s is out of range (%llu..%llu)", opt, val,
				       (unsigned long long)min, (unsigned long long)max);
	if (rc)
		return cli_usage_error("%s: \"%s\" is not a whole number", opt, val);
	return 0;
}

int cli_duration(const char *opt, const char *val, uint64_t *ns)
{
	if (nvt_parse_duration_ns(val, ns))
		return cli_usage_error(
			"%s: \"%s\" is not a duration (examples: 10, 2.5, 500ms, 3m)", opt, val);
	return 0;
}

int cli_chunk(const char *val, uint64_t *out)
{
	if (cli_size("--chunk", val, out))
		return NVT_EXIT_USAGE;
	if (*out < 4096 || *out % 4096 || *out > (1u << 30))
		return cli_usage_error("--chunk %s: a multiple of 4K from 4K to 1G", val);
	return 0;
}

/* The two readings of a rate whose unit ends in a lowercase b ("12Gb", "100mb/s"): bytes
 * ("12GB") and bits ("12Gbps"); a binary prefix ("8kib") has only the bytes reading. */
static int rate_ambiguous(const char *opt, const char *val)
{
	char base[64], bytes[72], bits[72];
	size_t n = strlen(val);

	if (n >= 2 && !strcmp(val + n - 2, "/s"))
		n -= 2;
	if (n < 1 || n >= sizeof(base))
		return cli_usage_error("%s %s: ambiguous unit", opt, val);
	memcpy(base, val, n - 1); /* without the b */
	base[n - 1] = 0;
	n--;
	if (n && strchr("kmgtKMGT", base[n - 1]))
		base[n - 1] = (char)toupper((unsigned char)base[n - 1]);
	snprintf(bytes, sizeof(bytes), "%sB", base);
	if (n && (base[n - 1] == 'i' || base[n - 1] == 'I'))
		return cli_usage_error("%s %s is ambiguous: a lowercase b means bits; for bytes/s "
				       "write %s",
				       opt, val, bytes);
	snprintf(bits, sizeof(bits), "%sbps", base);
	return cli_usage_error("%s %s is ambiguous: %s (bytes/s) or %s (bits/s)?", opt, val, bytes,
			       bits);
}

int cli_rate(const char *opt, const char *val, uint64_t *out)
{
	int rc;

	if (!strcmp(val, "max")) {
		*out = 0;
		return 0;
	}
	if (hex_number(val))
		return cli_usage_error("%s %s: hexadecimal is not taken; write the rate in decimal "
				       "with a unit (" CLI_RATE_UNITS ", or max)",
				       opt, val);
	if (val[0] && strspn(val, "0123456789.") == strlen(val))
		/* 1500 was 1500 bytes/s: a rate a thousand times off said nothing */
		return cli_usage_error("%s %s: a rate needs a unit (" CLI_RATE_UNITS
				       "; or max): %sB is %s bytes/s",
				       opt, val, val, val);
	rc = nvt_parse_rate(val, out);
	if (rc == -EDOM)
		return rate_ambiguous(opt, val);
	if (rc == -ERANGE)
		return cli_usage_error("%s %s is out of range", opt, val);
	if (rc)
		return cli_usage_error("%s: \"%s\" is not a rate (" CLI_RATE_UNITS ", or max)", opt,
				       val);
	if (*out < 16)
		return cli_usage_error("%s %s: at least 16 bytes/s, or max", opt, val);
	return 0;
}

const char *cli_rate_str(uint64_t bps, char *buf, size_t cap)
{
	if (bps < 10000)
		snprintf(buf, cap, "%llu B/s", (unsigned long long)bps);
	else if (bps < 10000000)
		snprintf(buf, cap, "%.1f kB/s", bps / 1e3);
	else
		snprintf(buf, cap, "%.1f MB/s", bps / 1e6);
	return buf;
}

int cli_count(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out)
{
	uint64_t v;

	if (cli_uint(opt, val, min, max, &v))
		return NVT_EXIT_USAGE;
	*out = (unsigned)v;
	return 0;
}

bool cli_engine_ok(const char *val, bool writer)
{
	struct nvt_engine_info e;

	return nvt_engine_info_find(val, &e) == 0 && !(e.caps & NVT_ENGINE_INTERNAL) &&
	       (writer || !(e.caps & NVT_ENGINE_DISKLESS));
}

int cli_engine(const char *val, bool writer, const char **out)
{
	if (cli_engine_ok(val, writer)) {
		*out = val;
		return 0;
	}
	return cli_usage_error("--engine must be one of: %s%s", nvt_engine_names(),
			       writer ? "" : " (reading needs one that stores data)");
}

const char *cli_units(const struct nvt_recording *rec)
{
	if (nvt_source_kind_is_packets(rec->source_kind))
		return "packets";
	return rec->beat_bytes == 1 ? "bytes" : "beats";
}

const char *cli_drop_cause(const struct nvt_recording *rec)
{
	static char tpg[160];
	char r[48];

	switch (rec->source_kind) {
	case NVT_SRC_TPG:
		snprintf(tpg, sizeof(tpg),
			 "no ring chunk was free when the test pattern was due: the storage fell "
			 "behind %s%s",
			 rec->rate_bps ? "its rate of " : "the unpaced pattern",
			 rec->rate_bps ? cli_rate_str(rec->rate_bps, r, sizeof(r)) : "");
		return tpg;
	case NVT_SRC_DEV:
		return "lost by the device (as its --drops-from counter said) or for want of a "
		       "free "
		       "ring chunk (the storage fell behind the device)";
	case NVT_SRC_FDREC:
		return "lost in the FPGA Drive Recorder's FIFO, which overflows when no ring chunk "
		       "is free (the storage fell behind the device)";
	case NVT_SRC_SHM:
		return "counted by the shm producer in its drop log: data it did not hand over";
	case NVT_SRC_API:
		return "counted by the program that recorded through the push API";
	case NVT_SRC_PCAP:
		return "counted as lost in the capture that was imported (before nvtape)";
	case NVT_SRC_UDP:
	case NVT_SRC_PACKET:
		return "lost before they were stored: in the kernel (a socket's or capture ring's "
		       "overflow), for want of a free ring chunk, or upstream (sequence gaps of "
		       "the packet check)";
	default:
		return "counted as lost by the source";
	}
}

int cli_check(const char *val, const char **out)
{
	struct nvt_counter_spec spec;
	struct nvt_err err = {0};

	/* the packet presets (a packet source checks them; other sources refuse them) */
	if (!strcmp(val, "vita49") || !strncmp(val, "vdif", 4)) {
		*out = val;
		return 0;
	}
	if (nvt_counter_parse(val, &spec, &err))
		return cli_usage_error("--check: %s", err.msg);
	*out = val;
	return 0;
}

int cli_engine_qd(const char *engine, bool qd_given, unsigned *qd)
{
	struct nvt_engine_info e;

	if (!engine || nvt_engine_info_find(engine, &e))
		return 0;
	if (!qd_given && e.default_qd)
		*qd = e.default_qd;
	if (e.max_qd && *qd > e.max_qd)
		return cli_usage_error("--qd with --engine %s counts %s in flight: 1 to %u", e.name,
				       e.caps & NVT_ENGINE_QD_PER_DRIVE ? "NVMe commands per drive"
									: "I/Os",
				       e.max_qd);
	return 0;
}

const char *cli_err_msg(const struct nvt_err *e)
{
	static char buf[1024];
	char hint[200] = "";

	switch (e->hint) {
	case NVT_HINT_FORCE:
		snprintf(hint, sizeof(hint), "; give --force to overwrite it");
		break;
	case NVT_HINT_LESS_DATA:
		snprintf(hint, sizeof(hint), "; free space or lower --size");
		break;
	case NVT_HINT_SMALLER_RING:
		snprintf(hint, sizeof(hint), " (lower --chunks or --chunk)");
		break;
	case NVT_HINT_LAYOUT:
		snprintf(hint, sizeof(hint),
			 ": give all %llu members with --stripe %lluK --member-offset %llu",
			 (unsigned long long)e->hint_val[0],
			 (unsigned long long)(e->hint_val[1] >> 10),
			 (unsigned long long)e->hint_val[2]);
		break;
	case NVT_HINT_GIVE_SIZE:
		snprintf(hint, sizeof(hint), " (give --size, or --duration with --rate)");
		break;
	case NVT_HINT_OTHER_SINK:
		snprintf(hint, sizeof(hint), ": --sink stdout or --sink null");
		break;
	default:
		break;
	}
	snprintf(buf, sizeof(buf), "%s%s", e->msg, hint);
	return buf;
}

int cli_exit_of(int rc, const struct nvt_err *err, bool data_problem)
{
	if (rc == 0)
		return data_problem ? NVT_EXIT_DATA : NVT_EXIT_OK;
	return err->flags & NVT_ERR_PARAM ? NVT_EXIT_USAGE : NVT_EXIT_RUNTIME;
}

/* "  name     help", the help wrapped at 80 columns under itself. */
static void list_line(FILE *f, const char *name, const char *help)
{
	const int indent = 11, width = 80 - indent;
	const char *p = help;

	fprintf(f, "  %-8s ", name);
	while (*p) {
		int n = (int)strlen(p);
		if (n > width) {
			n = width;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)
				n = width;
		}
		fprintf(f, "%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "%*s", indent, "");
	}
}

void cli_list_registry(FILE *f, const char *what)
{
	struct nvt_engine_info e;

	if (!strcmp(what, "engines") || !strcmp(what, "read-engines")) {
		for (unsigned i = 0; nvt_engine_info_at(i, &e) == 0; i++)
			if (cli_engine_ok(e.name, strcmp(what, "engines") == 0))
				list_line(f, e.name, e.help);
	} else if (!strcmp(what, "sources")) {
		for (unsigned i = 0; nvt_source_at(i); i++)
			list_line(f, nvt_source_at(i)->name, nvt_source_at(i)->help);
	} else if (!strcmp(what, "sinks")) {
		for (unsigned i = 0; nvt_sink_at(i); i++)
			list_line(f, nvt_sink_at(i)->name, nvt_sink_at(i)->help);
	}
}

int cli_layout_option(int opt, const char *val, uint64_t *stripe, uint64_t *member_offset)
{
	return opt == 'Z' ? cli_size("--stripe", val, stripe)
			  : cli_size("--member-offset", val, member_offset);
}

int cli_layout(struct nvt_layout *l, int argc, char **argv, int first, uint64_t stripe,
	       uint64_t member_offset)
{
	struct nvt_err err = {0};
	int n = argc - first;

	memset(l, 0, sizeof(*l));
	if (n < 1)
		return cli_usage_error("a FILE (or several striped members) is required");
	if (n > NVT_MAX_MEMBERS)
		return cli_usage_error("%d files: at most %d striped members", n, NVT_MAX_MEMBERS);
	if (n == 1 && stripe)
		return cli_usage_error("--stripe needs two or more members");
	if (stripe && (stripe % 4096 || stripe > (1u << 30)))
		return cli_usage_error("--stripe must be a multiple of 4 KiB from 4K to 1G");
	if (member_offset % 4096)
		return cli_usage_error("--member-offset must be a multiple of 4 KiB");
	l->n = (unsigned)n;
	for (int i = 0; i < n; i++) {
		unsigned c, ns;
		char tail;
		/* an NVMe namespace's char device: the recording is read and checked through its
		 * block device, the nvme engine finds the char device itself */
		if (sscanf(argv[first + i], "/dev/ng%un%u%c", &c, &ns, &tail) == 2) {
			static char names[NVT_MAX_MEMBERS][32];
			snprintf(names[i], sizeof(names[i]), "/dev/nvme%un%u", c, ns);
			argv[first + i] = names[i];
		}
		l->path[i] = argv[first + i];
	}
	l->stripe = n > 1 ? (stripe ? stripe : 512u << 10) : 0;
	l->member_offset = member_offset;
	if (nvt_layout_check(l, &err))
		return cli_usage_error("%s", cli_err_msg(&err));
	return 0;
}

double cli_ratio(double v, bool ok)
{
	return ok && isfinite(v) ? v : NAN;
}

const char *cli_ratio_str(char *buf, size_t cap, const char *fmt, double v, bool ok)
{
	if (ok && isfinite(v))
		snprintf(buf, cap, fmt, v);
	else
		snprintf(buf, cap, "-");
	return buf;
}

void cli_meter_update(struct cli_meter *m, uint64_t bytes, uint64_t elapsed_ns, double *inst,
		      double *avg)
{
	double dt = (elapsed_ns - m->last_ns) / 1e9;

	*inst = dt > 0 ? (bytes - m->last_bytes) / dt / 1e6 : 0;
	*avg = elapsed_ns ? bytes / (elapsed_ns / 1e9) / 1e6 : 0;
	m->last_bytes = bytes;
	m->last_ns = elapsed_ns;
}

void cli_print_check_event(FILE *f, const struct nvt_check_event *e, bool records)
{
	const char *u = records ? "record" : "beat";

	switch (e->kind) {
	case NVT_CHK_GAP:
		fprintf(f,
			"GAP at %s %" PRIu64 " (file offset %" PRIu64 "): expected %" PRIu64
			", found %" PRIu64 ", %" PRIu64 " %ss missing\n",
			u, e->beat, e->offset, e->expected, e->lo, e->missing, u);
		break;
	case NVT_CHK_CORRUPT:
		if (records)
			fprintf(f,
				"CORRUPT record %" PRIu64 " at file offset %" PRIu64
				": expected %" PRIu64 ", found %" PRIu64
				" (at or above the counter's wrap)\n",
				e->beat, e->offset, e->expected, e->lo);
		else
			fprintf(f,
				"CORRUPT beat %" PRIu64 " at file offset %" PRIu64
				": expected %" PRIu64 ", lower 0x%016" PRIx64 " upper 0x%016" PRIx64
				"\n",
				e->beat, e->offset, e->expected, e->lo, e->hi);
		break;
	case NVT_CHK_BACKWARD:
		fprintf(f,
			"BACKWARD at %s %" PRIu64 " (file offset %" PRIu64 "): expected %" PRIu64
			", found %" PRIu64 "\n",
			u, e->beat, e->offset, e->expected, e->lo);
		break;
	}
}

const char *cli_result_name(int exit_code)
{
	return exit_code == NVT_EXIT_OK ? "pass" : exit_code == NVT_EXIT_DATA ? "fail" : "error";
}

void cli_json_begin(struct json *j, FILE *f, int exit_code, const char *msg)
{
	if (!msg || !*msg)
		msg = (exit_code == NVT_EXIT_RUNTIME || exit_code == NVT_EXIT_USAGE) &&
				      cli_last_error[0]
			      ? cli_last_error
			      : NULL;
	json_begin(j, f);
	json_str(j, "command", cli_cmd);
	json_str(j, "version", NVT_VERSION);
	json_int(j, "exit", exit_code);
	json_str(j, "result", cli_result_name(exit_code));
	json_str(j, "error", msg);
	cli_json_done = true;
}

void cli_json_flags(struct json *j, const char *key, unsigned bits, const char *const *names,
		    unsigned n)
{
	json_arr(j, key);
	for (unsigned i = 0; i < n; i++)
		if (bits & (1u << i))
			json_str(j, NULL, names[i]);
	json_arr_end(j);
}

void cli_json_error(int exit_code)
{
	struct json j;

	cli_json_begin(&j, cli_json_out ? cli_json_out : stdout, exit_code,
		       cli_last_error[0] ? cli_last_error : "failed");
	json_end(&j);
}

/* The next character of s as a terminal may show it: well-formed UTF-8 but for the control
 * characters (C0, DEL, C1), which with any byte that is not UTF-8 become \xNN. The bytes of s
 * it took; out gets at most 4 bytes and a NUL. */
static size_t text_char(const unsigned char *s, char out[5])
{
	int n = json_utf8_len(s);

	if (n == 1 && *s >= 0x20 && *s != 0x7f) {
		out[0] = (char)*s;
		out[1] = 0;
		return 1;
	}
	if (n > 1 && !(n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) { /* U+0080..U+009F: C1 */
		memcpy(out, s, (size_t)n);
		out[n] = 0;
		return (size_t)n;
	}
	snprintf(out, 5, "\\x%02x", *s);
	return 1;
}

void cli_put_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char c[5];

	while (*p) {
		p += text_char(p, c);
		fputs(c, f);
	}
}

const char *cli_text(const char *s, char *buf, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	char c[5];

	buf[0] = 0;
	while (*p) {
		size_t k = text_char(p, c), l = strlen(c);
		if (n + l >= cap)
			break;
		memcpy(buf + n, c, l + 1);
		n += l;
		p += k;
	}
	return buf;
}

const char *cli_time_str(uint64_t ns, char *buf, size_t cap)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!ns) {
		snprintf(buf, cap, "-");
		return buf;
	}
	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%d %H:%M:%S UTC", &tm);
	return buf;
}

int cli_writer(const struct nvt_layout *L, const struct nvt_recording *rec)
{
	struct nvt_err err = {0};
	int pid;

	if (rec->complete || nvt_recording_writer(L, &pid, &err) != 1)
		return -1;
	return pid;
}

void cli_print_recording(FILE *f, const char *path, const struct nvt_recording *r, int live_pid)
{
	char t1[64], t2[64], state[96], text[1024];

	fprintf(f, "%s:\n", path);
	if (nvt_source_kind_is_packets(r->source_kind))
		fprintf(f, "  format          nvtape v%u, packets: the data is a pcapng stream\n",
			r->version);
	else
		fprintf(f, "  format          %s v%u, %u-byte beats\n",
			r->format == NVT_FMT_FDREC ? "FPGA Drive Recorder" : "nvtape", r->version,
			r->beat_bytes);
	if (r->complete)
		snprintf(state, sizeof(state), "complete");
	else if (live_pid > 0)
		snprintf(state, sizeof(state), "LIVE: being written by PID %d", live_pid);
	else if (live_pid == 0)
		snprintf(state, sizeof(state), "LIVE: being written (its writer holds it)");
	else
		snprintf(state, sizeof(state), "INCOMPLETE (writer died; run nvtape recover)");
	fprintf(f, "  state           %s%s%s\n", state,
		(r->flags & NVT_FLAG_RECOVERED) ? ", recovered" : "",
		(r->flags & NVT_FLAG_STOP_ERROR) ? ", stopped early on an error" : "");
	if (r->header_torn)
		fprintf(f,
			"  header          copy %llu read: the newer copy is damaged (a header "
			"write was cut short; at most one checkpoint is lost)\n",
			(unsigned long long)r->generation);
	fprintf(f, "  source          %s\n", nvt_source_kind_name(r->source_kind));
	if (r->rate_bps)
		fprintf(f, "  rate            %s\n", cli_rate_str(r->rate_bps, t1, sizeof(t1)));
	else
		fprintf(f, "  rate            unpaced (max)\n");
	fprintf(f, "  start / stop    %s / %s\n", cli_time_str(r->start_ns, t1, sizeof(t1)),
		cli_time_str(r->stop_ns, t2, sizeof(t2)));
	if (r->duration_ns)
		fprintf(f, "  duration        %.3f s\n", r->duration_ns / 1e9);
	fprintf(f, "  data            %llu bytes at offset %llu\n",
		(unsigned long long)(r->complete ? r->data_bytes : r->valid_bytes),
		(unsigned long long)r->data_offset);
	if (!r->complete && r->format == NVT_FMT_NVTAPE)
		fprintf(f, "  checkpoint      %llu bytes durable after %u checkpoints\n",
			(unsigned long long)r->durable_bytes, r->checkpoints);
	fprintf(f, "  drops           %llu %s in %llu events\n", (unsigned long long)r->drop_count,
		cli_units(r), (unsigned long long)r->drop_events);
	if (!nvt_source_kind_is_packets(r->source_kind))
		fprintf(f, "  first seq       %llu\n", (unsigned long long)r->first_seq);
	if (r->chunk_bytes)
		fprintf(f, "  ring            %u x %u bytes\n", r->chunk_count, r->chunk_bytes);
	if (r->index_bytes)
		fprintf(f, "  index           %llu bytes at offset %llu\n",
			(unsigned long long)r->index_bytes, (unsigned long long)r->index_offset);
	fprintf(f, "  host / writer   %s / ", cli_text(r->hostname, text, sizeof(text)));
	fprintf(f, "%s\n", cli_text(r->writer, text, sizeof(text)));
	if (r->source_name[0])
		fprintf(f, "  source name     %s\n", cli_text(r->source_name, text, sizeof(text)));
	if (r->check[0])
		fprintf(f, "  counter check   %s\n", cli_text(r->check, text, sizeof(text)));
	if (r->io_path == NVT_PATH_NVME)
		fprintf(f, "  written by      NVMe commands built by nvtape (passthrough)\n");
	for (uint32_t i = 0; i < r->drive_count; i++) {
		fprintf(f, "  drive %-2u        %s, ", i,
			cli_text(r->drive[i].model, text, sizeof(text)));
		fprintf(f, "serial %s, ", cli_text(r->drive[i].serial, text, sizeof(text)));
		fprintf(f, "firmware %s, nsid %u, %u-byte LBAs, commands <= %u KiB\n",
			cli_text(r->drive[i].firmware, text, sizeof(text)), r->drive[i].nsid,
			r->drive[i].lba_bytes, r->drive[i].max_cmd_kib);
	}
}

void cli_json_recording(struct json *j, const char *key, const struct nvt_recording *r)
{
	json_obj(j, key);
	json_str(j, "format", r->format == NVT_FMT_FDREC ? "fdrec" : "nvtape");
	json_uint(j, "version", r->version);
	json_uint(j, "beat_bytes", r->beat_bytes);
	json_uint(j, "flags", r->flags);
	json_bool(j, "complete", r->complete);
	json_bool(j, "recovered", r->flags & NVT_FLAG_RECOVERED);
	json_bool(j, "stop_error", r->flags & NVT_FLAG_STOP_ERROR);
	json_str(j, "source", nvt_source_kind_name(r->source_kind));
	json_uint(j, "rate_bps", r->rate_bps);
	json_uint(j, "start_ns", r->start_ns);
	json_uint(j, "stop_ns", r->stop_ns);
	json_uint(j, "duration_ns", r->duration_ns);
	json_uint(j, "data_offset", r->data_offset);
	json_uint(j, "data_bytes", r->data_bytes);
	json_uint(j, "durable_bytes", r->durable_bytes);
	json_uint(j, "valid_bytes", r->valid_bytes);
	json_uint(j, "drop_count", r->drop_count);
	json_uint(j, "drop_events", r->drop_events);
	json_uint(j, "first_seq", r->first_seq);
	json_uint(j, "index_offset", r->index_offset);
	json_uint(j, "index_bytes", r->index_bytes);
	json_uint(j, "chunk_bytes", r->chunk_bytes);
	json_uint(j, "chunk_count", r->chunk_count);
	json_uint(j, "checkpoints", r->checkpoints);
	json_uint(j, "generation", r->generation);
	json_bool(j, "header_torn", r->header_torn);
	json_uint(j, "file_bytes", r->file_bytes);
	json_str(j, "hostname", r->hostname);
	json_str(j, "writer", r->writer);
	json_str(j, "source_name", r->source_name);
	json_str(j, "check", r->check);
	json_str(j, "io_path", r->io_path == NVT_PATH_NVME ? "nvme" : "block");
	json_arr(j, "drives");
	for (uint32_t i = 0; i < r->drive_count; i++) {
		json_obj(j, NULL);
		json_str(j, "model", r->drive[i].model);
		json_str(j, "serial", r->drive[i].serial);
		json_str(j, "firmware", r->drive[i].firmware);
		json_uint(j, "nsid", r->drive[i].nsid);
		json_uint(j, "lba_bytes", r->drive[i].lba_bytes);
		json_uint(j, "max_cmd_kib", r->drive[i].max_cmd_kib);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

const char *cli_eta_str(double frac, double left_s, char *buf, size_t cap)
{
	buf[0] = 0;
	if (frac < 0)
		return buf;
	if (frac > 1)
		frac = 1;
	if (left_s < 0 || !(left_s < 360000)) { /* also NaN: not known yet */
		snprintf(buf, cap, "  %5.1f%%  ETA -", 100 * frac);
		return buf;
	}
	unsigned long s = (unsigned long)(left_s + 0.5);
	if (s >= 3600)
		snprintf(buf, cap, "  %5.1f%%  ETA %lu:%02lu:%02lu", 100 * frac, s / 3600,
			 s / 60 % 60, s % 60);
	else
		snprintf(buf, cap, "  %5.1f%%  ETA %lu:%02lu", 100 * frac, s / 60, s % 60);
	return buf;
}

void cli_progress_bytes(uint64_t done, uint64_t total, void *arg)
{
	static uint64_t first_ns, last_ns;
	struct timespec ts;
	uint64_t now;
	char eta[64];

	(void)arg;
	if (!isatty(2))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!first_ns)
		first_ns = now;
	if (now - last_ns < 1000000000ull && done != total)
		return;
	last_ns = now;
	double el = (now - first_ns) / 1e9;
	double frac = total ? (double)done / total : 1.0;
	double left = done && el > 0 && total >= done ? (total - done) / (done / el) : -1;
	fprintf(stderr, "\r%s  %.3f of %.3f GB   ", cli_eta_str(frac, left, eta, sizeof(eta)),
		done / 1e9, total / 1e9);
	if (done == total)
		fputc('\n', stderr);
}

void cli_cmdline(char *buf, size_t cap, const char *first, int argc, char **argv)
{
	size_t n = (size_t)snprintf(buf, cap, "%s", first);
	for (int i = 0; i < argc && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, " %s", argv[i]);
}

int cli_report(const char *path, const struct nvt_report *rep, bool quiet)
{
	struct nvt_err e = {0};

	if (nvt_report_write(path, rep, &e)) {
		cli_error("%s", e.msg);
		return NVT_EXIT_RUNTIME;
	}
	if (!quiet)
		fprintf(stderr, "nvtape %s: report written to %s\n", cli_cmd, path);
	return 0;
}

/* Calls fn for each "key=value" line of meta, the key NUL-terminated in a buffer. */
static void each_meta(const char *meta, void (*fn)(void *arg, const char *key, const char *value),
		      void *arg)
{
	const char *pos = meta, *k, *v;
	size_t kn, vn;

	while (nvt_meta_next(&pos, &k, &kn, &v, &vn)) {
		char key[65], value[NVT_META_MAX + 1];
		if (kn >= sizeof(key) || vn >= sizeof(value))
			continue; /* not a line nvt_meta_check() lets in */
		memcpy(key, k, kn);
		key[kn] = 0;
		memcpy(value, v, vn);
		value[vn] = 0;
		fn(arg, key, value);
	}
}

static void print_meta_line(void *arg, const char *key, const char *value)
{
	char k[4 * 65];

	fprintf(arg, "    %-22s ", cli_text(key, k, sizeof(k)));
	cli_put_text(arg, value);
	fputc('\n', arg);
}

void cli_print_meta(FILE *f, const char *meta)
{
	fprintf(f, "  metadata\n");
	each_meta(meta, print_meta_line, f);
}

static void json_meta_line(void *arg, const char *key, const char *value)
{
	json_str(arg, key, value);
}

void cli_json_meta(struct json *j, const char *meta)
{
	json_obj(j, "meta");
	each_meta(meta, json_meta_line, j);
	json_obj_end(j);
}

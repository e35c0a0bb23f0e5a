/* SPDX-License-Identifier: MIT */
/* nvtape record: options, live stats line, summary, RESULT line and JSON. */
#include <stdlib.h>
#include <math.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "nvtape/engines.h"
#include "nvtape/meta.h"
#include "nvtape/record.h"
#include "nvtape/source.h"

static const char record_help[] =
	"Usage: nvtape record [options] FILE...\n"
	"Record a stream to FILE, a file or a raw block device (O_DIRECT, zero-copy from a\n"
	"hugepage ring).\n\n"
	"  --source NAME        where the data comes from (default tpg; Sources below);\n"
	"                       dev:PATH reads a character device or FIFO\n"
	"  --drops-from FILE    with --source dev: FILE holds the count of bytes the device\n"
	"                       lost (a sysfs counter, or one the producer keeps; decimal or\n"
	"                       0x hex), read at the start, after every read and every 100 ms\n"
	"                       of silence: each increase is a drop at the position reached\n"
	"                       when it was seen\n"
	"  --rate R             test-pattern rate per second, with its unit: bytes 1500MB\n"
	"                       (10^6), 1G (2^30) or 64B, bits 12Gbps or 800Mbit/s (10^3\n"
	"                       steps, to the nearest byte); max = unpaced, as fast as the\n"
	"                       storage takes it (default)\n"
	"  --size S             stop after S data bytes (rounded up to 4 KiB for tpg);\n"
	"                       space is reserved and checked before starting\n"
	"  --duration T         stop after T seconds (10, 2.5, 500ms, 3m)\n"
	"                       (neither: record until Ctrl-C, SIGTERM or a full disk)\n"
	"  --chunk B            ring chunk = write size (default 8M, multiple of 4K)\n"
	"  --chunks N           ring chunks (default 32)\n"
	"  --qd Q               writes in flight (default 8; nvme: commands in flight per\n"
	"                       drive, default 32, at most 63)\n"
	"  --engine NAME        how the data reaches the drives (default file; Engines below);\n"
	"                       nvme takes namespaces /dev/nvmeXnY or /dev/ngXnY, or a file on\n"
	"                       an XFS/exFAT volume over them (give --size)\n"
	"  --format nvtape|fdrec  file format (fdrec: FPGA Drive Recorder v1, byte for byte)\n"
	"  --check counter:TYPE[@OFFSET][/STRIDE][+INC][%WRAP]\n"
	"                       the frame or packet counter every record of the data carries\n"
	"                       (not for tpg): gaps counted live, and kept in the header for\n"
	"                       verify and play (docs/checks.md; e.g. counter:u32le@0/4096);\n"
	"                       the udp source checks each datagram: counter:TYPE@OFFSET in\n"
	"                       its payload, vita49 (packet count) or vdif[:FPS] (frame number)\n"
	"  --sample-rate HZ     what the data is, kept in the index (nvtape info, nvtape meta,\n"
	"  --datatype TYPE      SigMF's names: core:sample_rate, core:datatype such as ci16_le,\n"
	"  --center-freq HZ     cf32_le, ri8, cu8; core:frequency, core:num_channels,\n"
	"  --channels N         core:description, core:author)\n"
	"  --description TEXT\n"
	"  --author TEXT\n"
	"  --meta KEY=VALUE     any other fact (repeat it); KEY of [A-Za-z0-9_:-]\n"
	"  --checksum crc32c|none  the CRC32C of every chunk, kept in the index for verify,\n"
	"                       play and recover to check any data against (default crc32c)\n"
	"  --timeout T          stall watchdog (default 10 s)\n"
	"  --force              record over a file that is not empty (a recording or any\n"
	"                       other; with --engine nvme, reuse its blocks), or onto a block\n"
	"                       device that carries a filesystem, RAID superblock, partition\n"
	"                       table or recording (never a mounted or held one, nor a file\n"
	"                       being recorded to); FILE is never written through a symlink\n"
	"  --stats T            live stats interval on stderr (default 1 s, 0 = off); with\n"
	"                       --size or --duration they show the % done and the ETA\n"
	"  --json               one JSON object on stdout instead of the human summary, also\n"
	"                       on errors (docs/json.md)\n"
	"  -q, --quiet          no banner and no live stats\n" CLI_LAYOUT_HELP "  -h, --help\n\n";

static const char record_help_tail[] =
	"A source that cannot be stalled (tpg at a --rate, dev, fdrec) drops beats or bytes when\n"
	"the storage falls behind: they are counted, their positions indexed, and the exit\n"
	"code is 2; so are the losses a --drops-from counter reports. dev:PATH must be a "
	"character\n"
	"device or FIFO (a regular file or directory is a usage error, 64: record a file with\n"
	"--source stdin <FILE); a missing device, a counter file that does not hold a number\n"
	"or a counter that goes back is a runtime error, 1. The device's end of input (a FIFO's\n"
	"writer closing) ends the recording. shm:NAME listens on DIR/nvtape-NAME.sock (DIR:\n"
	"/run/nvtape for root, else $XDG_RUNTIME_DIR or /tmp/nvtape-UID, writable by its owner\n"
	"alone) or the path NAME holding a /, for one producer of the same user or root\n"
	"(docs/shm.md): its close ends the recording; a producer that dies ends it with what\n"
	"it committed, exit 1; a name another recording listens on is refused, exit 1;\n"
	"--timeout also bounds the wait for it.\n\n" EXIT_CODES_HELP;

/* The help, with the sources and engines the library has registered. */
static void record_usage(FILE *f)
{
	fputs(record_help, f);
	fputs("Sources:\n", f);
	cli_list_registry(f, "sources");
	fputs("Engines:\n", f);
	cli_list_registry(f, "engines");
	fputc('\n', f);
	fputs(record_help_tail, f);
}

struct rec_cli {
	bool json, quiet, tty, rate_given, qd_given, checking;
	char *meta; /* the metadata options as "key=value" lines */
	char check_line[128];
	uint64_t size_bytes, duration_ns; /* the totals the % done and the ETA come from */
	uint64_t chunk_bytes;
	uint64_t stripe, member_off;
	const struct nvt_record_opts *opts; /* for the banner */
	struct cli_meter meter;
};

/* the % done and the seconds left: whichever of --size and --duration ends the recording first */
static const char *eta(const struct rec_cli *c, const struct nvt_record_stats *st, double avg_mbps,
		       char *buf, size_t cap)
{
	double frac = -1, left = -1;

	if (c->size_bytes) {
		uint64_t done =
			st->bytes_written < c->size_bytes ? st->bytes_written : c->size_bytes;
		frac = (double)done / c->size_bytes;
		if (avg_mbps > 0)
			left = (c->size_bytes - done) / (avg_mbps * 1e6);
	}
	if (c->duration_ns) {
		uint64_t el = st->elapsed_ns < c->duration_ns ? st->elapsed_ns : c->duration_ns;
		double f = (double)el / c->duration_ns, l = (c->duration_ns - el) / 1e9;
		if (f > frac)
			frac = f;
		if (left < 0 || l < left)
			left = l;
	}
	return cli_eta_str(frac, left, buf, cap);
}

/* "  check 2 gaps (10 missing), 1 back" while a counter check runs */
static const char *check_str(struct rec_cli *c, const struct nvt_record_stats *st)
{
	if (!c->checking)
		return "";
	snprintf(c->check_line, sizeof(c->check_line),
		 "  check %llu gaps (%llu missing) %llu back %llu bad",
		 (unsigned long long)st->check_gaps, (unsigned long long)st->check_missing,
		 (unsigned long long)st->check_backward, (unsigned long long)st->check_bad);
	return c->check_line;
}

/* bytes in kB under a GB, in GB from there */
static const char *kb_gb(char *buf, size_t cap, uint64_t b)
{
	if (b >= 1000000000u)
		snprintf(buf, cap, "%.3f GB", b / 1e9);
	else
		snprintf(buf, cap, "%.1f kB", b / 1e3);
	return buf;
}

static void progress(const struct nvt_record_stats *st, const struct nvt_record_input *in,
		     void *arg)
{
	struct rec_cli *c = arg;
	double inst, avg;
	char e[64], fifo[96], rate[96], got[96], b[32];

	cli_meter_update(&c->meter, st->bytes_written, st->elapsed_ns, &inst, &avg);
	if (c->quiet)
		return;
	fifo[0] = 0;
	if (st->src_fifo_depth) /* the device's own FIFO ahead of the ring */
		snprintf(fifo, sizeof(fifo), "  fifo %llu/%llu (hwm %llu)",
			 (unsigned long long)st->src_fifo_level,
			 (unsigned long long)st->src_fifo_depth,
			 (unsigned long long)st->src_fifo_hwm);
	/* a slow stream: what arrived is written at the next checkpoint (once a second), in
	 * kB until a GB is reached; 0.0 MB/s and 0.000 GB said nothing */
	if (st->bytes_written >= 1000000000u)
		snprintf(rate, sizeof(rate), "%9.1f MB/s (avg %9.1f) %10.3f GB", inst, avg,
			 st->bytes_written / 1e9);
	else if (st->bytes_written)
		snprintf(rate, sizeof(rate), "%9.1f MB/s (avg %9.1f) %10.1f kB", inst, avg,
			 st->bytes_written / 1e3);
	else
		snprintf(rate, sizeof(rate),
			 "nothing written yet (the next checkpoint writes what arrived)");
	/* what the source handed over: a slow stream's packets before any is written */
	if (in->records)
		snprintf(got, sizeof(got), "  received %llu packets, %s",
			 (unsigned long long)in->records, kb_gb(b, sizeof(b), in->bytes));
	else
		snprintf(got, sizeof(got), "  received %s", kb_gb(b, sizeof(b), in->bytes));
	fprintf(stderr,
		"%s%8.1fs %s%s  inflight %2u  ring %3llu/%llu "
		"(hwm %llu)%s  drops %llu%s%s%s",
		c->tty ? "\r" : "", st->elapsed_ns / 1e9, rate, got, st->inflight,
		(unsigned long long)st->ring_fill, (unsigned long long)st->ring_chunks,
		(unsigned long long)st->ring_hwm, fifo, (unsigned long long)st->drops,
		eta(c, st, avg, e, sizeof(e)), check_str(c, st), c->tty ? "   " : "\n");
}

/* CPU seconds per GB: "-" under CLI_MIN_BYTES */
static const char *per_gb(char *buf, size_t cap, const char *fmt, uint64_t cpu_ns, uint64_t bytes)
{
	return cli_ratio_str(buf, cap, fmt, (cpu_ns / 1e9) / (bytes / 1e9), bytes >= CLI_MIN_BYTES);
}

/* what drops count: beats of the test pattern, bytes of a byte stream */
static void summary(const struct nvt_record_opts *o, const struct nvt_record_result *r, int rc)
{
	uint64_t b = r->rec.data_bytes;
	bool timed = r->seconds >= CLI_MIN_S;
	char mbps[32], io_pc[32], src_pc[32], io_gb[32], src_gb[32], proc_gb[32];
	char io_gb_r[32], src_gb_r[32];

	cli_ratio_str(mbps, sizeof(mbps), "%.1f", b / r->seconds / 1e6,
		      timed && b >= CLI_MIN_BYTES);
	cli_ratio_str(io_pc, sizeof(io_pc), "%.1f %%", 100.0 * r->io_cpu_ns / 1e9 / r->seconds,
		      timed);
	cli_ratio_str(src_pc, sizeof(src_pc), "%.1f %%", 100.0 * r->src_cpu_ns / 1e9 / r->seconds,
		      timed);
	printf("nvtape record: %s: %llu bytes in %.3f s, %s MB/s (stopped: %s)\n", o->path,
	       (unsigned long long)b, r->seconds, mbps, nvt_stop_reason_name(r->reason));
	printf("nvtape record: drops %llu %s in %llu events; ring high-water %llu of %llu "
	       "chunks; max writes in flight %u; %u checkpoints (latency median %.1f ms, "
	       "99th %.1f ms, max %.1f ms)\n",
	       (unsigned long long)r->rec.drop_count, cli_units(&r->rec),
	       (unsigned long long)r->rec.drop_events, (unsigned long long)r->st.ring_hwm,
	       (unsigned long long)r->st.ring_chunks, r->st.max_inflight, r->rec.checkpoints,
	       r->ckpt_p50_ns / 1e6, r->ckpt_p99_ns / 1e6, r->ckpt_max_ns / 1e6);
	if (r->part_writes && b)
		printf("nvtape record: %llu checkpoints wrote the chunk being filled (a stream "
		       "slower than a chunk a second): %llu bytes written for %llu of data, write "
		       "amplification %.2f\n",
		       (unsigned long long)r->part_writes, (unsigned long long)r->data_io_bytes,
		       (unsigned long long)b, (double)r->data_io_bytes / (double)b);
	if (r->st.src_fifo_depth)
		printf("nvtape record: source FIFO high-water %llu of %llu\n",
		       (unsigned long long)r->st.src_fifo_hwm,
		       (unsigned long long)r->st.src_fifo_depth);
	if (nvt_source_kind_is_packets(r->rec.source_kind))
		printf("nvtape record: %llu packets kept; the kernel lost %llu%s\n",
		       (unsigned long long)r->packets, (unsigned long long)r->kernel_drops,
		       r->rec.drop_count > r->kernel_drops
			       ? " (the rest of the drops: no free ring chunk, or sequence gaps "
				 "upstream)"
			       : "");
	if (o->check && o->check[0] && nvt_source_kind_is_packets(r->rec.source_kind))
		printf("nvtape record: packet check %s: %llu packets, %llu gaps (%llu packets "
		       "missing), %llu backward jumps, %llu bad values\n",
		       o->check, (unsigned long long)r->st.check_records,
		       (unsigned long long)r->st.check_gaps,
		       (unsigned long long)r->st.check_missing,
		       (unsigned long long)r->st.check_backward,
		       (unsigned long long)r->st.check_bad);
	else if (o->check && o->check[0])
		printf("nvtape record: counter %s: %llu records, %llu gaps (%llu records missing), "
		       "%llu backward jumps, %llu bad values%s\n",
		       r->rec.check, (unsigned long long)r->st.check_records,
		       (unsigned long long)r->st.check_gaps,
		       (unsigned long long)r->st.check_missing,
		       (unsigned long long)r->st.check_backward,
		       (unsigned long long)r->st.check_bad,
		       r->st.check_gaps > r->rec.drop_events
			       ? ": more gaps than nvtape's own drops, data was lost before nvtape"
			       : "");
	printf("nvtape record: CPU: I/O thread %s of a core (%s core-s/GB), source thread "
	       "%s (%s core-s/GB), whole process %s core-s/GB\n",
	       io_pc, per_gb(io_gb, sizeof(io_gb), "%.4f", r->io_cpu_ns, b), src_pc,
	       per_gb(src_gb, sizeof(src_gb), "%.4f", r->src_cpu_ns, b),
	       per_gb(proc_gb, sizeof(proc_gb), "%.4f", r->proc_cpu_ns, b));
	printf("RESULT bytes=%llu source_bytes=%llu seconds=%.3f rate_bps=%llu mbps=%s "
	       "drops=%llu drop_events=%llu "
	       "lost_unwritten=%llu ring_hwm=%llu ring_chunks=%llu src_fifo_hwm=%llu "
	       "src_fifo_depth=%llu packets=%llu kernel_drops=%llu max_inflight=%u checkpoints=%u "
	       "io_cpu_s=%.4f "
	       "src_cpu_s=%.4f proc_cpu_s=%.4f io_cpu_s_per_gb=%s src_cpu_s_per_gb=%s "
	       "pace_steps=%llu pace_long_steps=%llu pace_max_step_bytes=%llu hugepages=%d "
	       "fixed_bufs=%d ckpt_p50_ms=%.3f ckpt_p99_ms=%.3f ckpt_max_ms=%.3f "
	       "part_writes=%llu data_io_bytes=%llu "
	       "check_records=%llu "
	       "check_gaps=%llu check_missing=%llu check_backward=%llu check_bad=%llu "
	       "stop_reason=%s result=%s exit=%d\n",
	       (unsigned long long)b, (unsigned long long)r->source_bytes, r->seconds,
	       (unsigned long long)o->rate_bps, mbps, (unsigned long long)r->rec.drop_count,
	       (unsigned long long)r->rec.drop_events, (unsigned long long)r->lost_unwritten,
	       (unsigned long long)r->st.ring_hwm, (unsigned long long)r->st.ring_chunks,
	       (unsigned long long)r->st.src_fifo_hwm, (unsigned long long)r->st.src_fifo_depth,
	       (unsigned long long)r->packets, (unsigned long long)r->kernel_drops,
	       r->st.max_inflight, r->rec.checkpoints, r->io_cpu_ns / 1e9, r->src_cpu_ns / 1e9,
	       r->proc_cpu_ns / 1e9, per_gb(io_gb_r, sizeof(io_gb_r), "%.5f", r->io_cpu_ns, b),
	       per_gb(src_gb_r, sizeof(src_gb_r), "%.5f", r->src_cpu_ns, b),
	       (unsigned long long)r->pace_steps, (unsigned long long)r->pace_steps_long,
	       (unsigned long long)r->pace_max_step_bytes, r->hugetlb, r->fixed_bufs,
	       r->ckpt_p50_ns / 1e6, r->ckpt_p99_ns / 1e6, r->ckpt_max_ns / 1e6,
	       (unsigned long long)r->part_writes, (unsigned long long)r->data_io_bytes,
	       (unsigned long long)r->st.check_records, (unsigned long long)r->st.check_gaps,
	       (unsigned long long)r->st.check_missing, (unsigned long long)r->st.check_backward,
	       (unsigned long long)r->st.check_bad, nvt_stop_reason_name(r->reason),
	       cli_result_name(rc), rc);
}

/* The JSON object of a recording: also when it failed before it started (then without the
 * stop reason and the header). */
static void record_json(const struct nvt_record_opts *o, const struct nvt_record_result *r, int rc,
			FILE *f)
{
	bool ran = rc != NVT_EXIT_RUNTIME || r->rec.data_bytes || r->rec.flags;
	uint64_t b = r->rec.data_bytes;
	struct json j;

	cli_json_begin(&j, f, rc, r->err.code ? r->err.msg : NULL);
	json_str(&j, "path", o->path);
	json_str(&j, "stop_reason", ran ? nvt_stop_reason_name(r->reason) : NULL);
	json_uint(&j, "bytes", b);
	json_num(&j, "seconds", r->seconds, 6);
	json_num(&j, "mbps",
		 cli_ratio(b / r->seconds / 1e6, r->seconds >= CLI_MIN_S && b >= CLI_MIN_BYTES), 3);
	json_uint(&j, "source_bytes", r->source_bytes);
	json_uint(&j, "rate_bps", o->rate_bps);
	json_uint(&j, "drops", r->rec.drop_count);
	json_uint(&j, "drop_events", r->rec.drop_events);
	json_uint(&j, "lost_unwritten", r->lost_unwritten);
	json_uint(&j, "ring_hwm", r->st.ring_hwm);
	json_uint(&j, "ring_chunks", r->st.ring_chunks);
	json_uint(&j, "src_fifo_hwm", r->st.src_fifo_hwm);
	json_uint(&j, "src_fifo_depth", r->st.src_fifo_depth);
	json_uint(&j, "packets", r->packets);
	json_uint(&j, "kernel_drops", r->kernel_drops);
	json_uint(&j, "max_inflight", r->st.max_inflight);
	json_uint(&j, "checkpoints", r->rec.checkpoints);
	json_num(&j, "io_cpu_s", r->io_cpu_ns / 1e9, 6);
	json_num(&j, "src_cpu_s", r->src_cpu_ns / 1e9, 6);
	json_num(&j, "proc_cpu_s", r->proc_cpu_ns / 1e9, 6);
	json_uint(&j, "pace_steps", r->pace_steps);
	json_uint(&j, "pace_long_steps", r->pace_steps_long);
	json_uint(&j, "pace_max_step_bytes", r->pace_max_step_bytes);
	json_bool(&j, "hugepages", r->hugetlb);
	json_bool(&j, "fixed_bufs", r->fixed_bufs);
	json_num(&j, "ckpt_p50_ms", r->ckpt_p50_ns / 1e6, 3);
	json_num(&j, "ckpt_p99_ms", r->ckpt_p99_ns / 1e6, 3);
	json_num(&j, "ckpt_max_ms", r->ckpt_max_ns / 1e6, 3);
	json_uint(&j, "part_writes", r->part_writes);
	json_uint(&j, "data_io_bytes", r->data_io_bytes);
	json_uint(&j, "check_records", r->st.check_records);
	json_uint(&j, "check_gaps", r->st.check_gaps);
	json_uint(&j, "check_missing", r->st.check_missing);
	json_uint(&j, "check_backward", r->st.check_backward);
	json_uint(&j, "check_bad", r->st.check_bad);
	json_str(&j, "engine", r->engine_desc);
	if (ran)
		cli_json_recording(&j, "header", &r->rec);
	json_end(&j);
}

enum {
	OPT_SAMPLE_RATE = 1000,
	OPT_DATATYPE,
	OPT_CENTER_FREQ,
	OPT_CHANNELS,
	OPT_DESCRIPTION,
	OPT_AUTHOR,
	OPT_META,
};

/* key=value into c->meta; 0 or NVT_EXIT_USAGE */
static int put_meta(struct rec_cli *c, const char *opt, const char *key, const char *value)
{
	char *m = nvt_meta_set(c->meta, key, value);

	if (!m)
		return cli_usage_error("%s: a value of one line of UTF-8 text (and a key of 1-64 "
				       "characters [A-Za-z0-9_:-])",
				       opt);
	free(c->meta);
	c->meta = m;
	return 0;
}

/* A number for a metadata option: finite, and > 0 when positive is set. */
static int meta_number(struct rec_cli *c, const char *opt, const char *key, const char *val,
		       bool positive)
{
	char *end, norm[40];
	double v = strtod(val, &end);

	if (!*val || *end || !isfinite(v) || (positive && v <= 0))
		return cli_usage_error("%s takes a %snumber in Hz (1e6, 2400000, 433.92e6), not "
				       "\"%s\"",
				       opt, positive ? "positive " : "", val);
	snprintf(norm, sizeof(norm), "%.17g", v);
	return put_meta(c, opt, key, norm);
}

/* The metadata options; 1 when opt is not one of them. */
static int meta_option(int opt, const char *val, struct rec_cli *c)
{
	const char *eq;
	uint64_t n;

	switch (opt) {
	case OPT_SAMPLE_RATE:
		return meta_number(c, "--sample-rate", "core:sample_rate", val, true);
	case OPT_CENTER_FREQ:
		return meta_number(c, "--center-freq", "core:frequency", val, false);
	case OPT_DATATYPE:
		if (!nvt_meta_datatype_ok(val))
			return cli_usage_error(
				"--datatype takes a SigMF type: r or c, then f32, "
				"f64, i32, i16, u32 or u16 with _le or _be, or i8 or "
				"u8 (ci16_le, cf32_le, ri8, cu8), not \"%s\"",
				val);
		return put_meta(c, "--datatype", "core:datatype", val);
	case OPT_CHANNELS:
		if (cli_uint("--channels", val, 1, 65535, &n))
			return NVT_EXIT_USAGE;
		return put_meta(c, "--channels", "core:num_channels", val);
	case OPT_DESCRIPTION:
		return put_meta(c, "--description", "core:description", val);
	case OPT_AUTHOR:
		return put_meta(c, "--author", "core:author", val);
	case OPT_META:
		eq = strchr(val, '=');
		if (!eq || !nvt_meta_key_ok(val, (size_t)(eq - val)) || !eq[1])
			return cli_usage_error("--meta takes KEY=VALUE, KEY of 1-64 characters "
					       "[A-Za-z0-9_:-], not \"%s\"",
					       val);
		char key[65];
		memcpy(key, val, (size_t)(eq - val));
		key[eq - val] = 0;
		return put_meta(c, "--meta", key, eq + 1);
	default:
		return 1;
	}
}

static const struct option record_lo[] = {{"source", required_argument, 0, 's'},
					  {"rate", required_argument, 0, 'r'},
					  {"drops-from", required_argument, 0, 'D'},
					  {"size", required_argument, 0, 'S'},
					  {"duration", required_argument, 0, 'd'},
					  {"chunk", required_argument, 0, 'c'},
					  {"chunks", required_argument, 0, 'n'},
					  {"qd", required_argument, 0, 'Q'},
					  {"engine", required_argument, 0, 'e'},
					  {"format", required_argument, 0, 'f'},
					  {"timeout", required_argument, 0, 't'},
					  {"check", required_argument, 0, 'k'},
					  {"checksum", required_argument, 0, 'C'},
					  {"sample-rate", required_argument, 0, OPT_SAMPLE_RATE},
					  {"datatype", required_argument, 0, OPT_DATATYPE},
					  {"center-freq", required_argument, 0, OPT_CENTER_FREQ},
					  {"channels", required_argument, 0, OPT_CHANNELS},
					  {"description", required_argument, 0, OPT_DESCRIPTION},
					  {"author", required_argument, 0, OPT_AUTHOR},
					  {"meta", required_argument, 0, OPT_META},
					  {"stats", required_argument, 0, 'i'},
					  {"force", no_argument, 0, 'F'},
					  {"json", no_argument, 0, 'j'},
					  {"quiet", no_argument, 0, 'q'},
					  CLI_LAYOUT_OPTIONS,
					  {"help", no_argument, 0, 'h'},
					  {0, 0, 0, 0}};

static int parse_format(const char *val, struct nvt_record_opts *o)
{
	if (!strcmp(val, "nvtape"))
		o->format = NVT_FMT_NVTAPE;
	else if (!strcmp(val, "fdrec"))
		o->format = NVT_FMT_FDREC;
	else
		return cli_usage_error("--format must be nvtape or fdrec");
	return 0;
}

/* The options with a value and --force: 0, NVT_EXIT_USAGE, or 1 when opt is not one of them. */
static int record_option(int opt, const char *val, struct rec_cli *c, struct nvt_record_opts *o)
{
	switch (opt) {
	case 's':
		o->source = val;
		return 0;
	case 'C':
		if (strcmp(val, "crc32c") && strcmp(val, "none"))
			return cli_usage_error("--checksum must be crc32c or none");
		o->no_checksums = !strcmp(val, "none");
		return 0;
	case 'D':
		if (!*val)
			return cli_usage_error(
				"--drops-from needs the path of a loss counter file");
		o->drops_from = val;
		return 0;
	case 'r':
		c->rate_given = true;
		return cli_rate("--rate", val, &o->rate_bps) ? NVT_EXIT_USAGE : 0;
	case 'S':
		if (cli_size("--size", val, &o->size_bytes))
			return NVT_EXIT_USAGE;
		return o->size_bytes ? 0 : cli_usage_error("--size must be > 0");
	case 'd':
		if (cli_duration("--duration", val, &o->duration_ns))
			return NVT_EXIT_USAGE;
		return o->duration_ns ? 0 : cli_usage_error("--duration must be > 0");
	case 'c':
		return cli_chunk(val, &o->chunk_bytes) ? NVT_EXIT_USAGE : 0;
	case 'n':
		return cli_count("--chunks", val, 2, 65536, &o->chunks) ? NVT_EXIT_USAGE : 0;
	case 'Q':
		c->qd_given = true;
		return cli_count("--qd", val, 1, 1024, &o->qd) ? NVT_EXIT_USAGE : 0;
	case 'e':
		return cli_engine(val, true, &o->engine) ? NVT_EXIT_USAGE : 0;
	case 'f':
		return parse_format(val, o);
	case 't':
		if (cli_duration("--timeout", val, &o->timeout_ns))
			return NVT_EXIT_USAGE;
		return o->timeout_ns ? 0 : cli_usage_error("--timeout must be > 0");
	case 'i':
		return cli_duration("--stats", val, &o->stats_ns) ? NVT_EXIT_USAGE : 0;
	case 'F':
		o->force = true;
		return 0;
	case 'k':
		c->checking = true;
		return cli_check(val, &o->check) ? NVT_EXIT_USAGE : 0;
	case 'Z':
	case 'O':
		return cli_layout_option(opt, val, &c->stripe, &c->member_off) ? NVT_EXIT_USAGE : 0;
	default:
		return 1;
	}
}

/* The options; -1 when --help was shown. */
static int parse_record(int argc, char **argv, struct nvt_record_opts *o, struct rec_cli *c)
{
	int opt, rc;

	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":qh", record_lo, NULL)) != -1) {
		if ((rc = record_option(opt, optarg, c, o)) != 1 ||
		    (rc = meta_option(opt, optarg, c)) != 1) {
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
			record_usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("%s needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	return 0;
}

/* The targets, the source against --rate, --format and the terminal, and qd within the ring. */
static int check_args(int argc, char **argv, struct nvt_record_opts *o, const struct rec_cli *c)
{
	const struct nvt_source_ops *src;
	struct nvt_engine_info einfo;

	if (cli_layout(&o->layout, argc, argv, optind, c->stripe, c->member_off) ||
	    cli_engine_qd(o->engine, c->qd_given, &o->qd))
		return NVT_EXIT_USAGE;
	o->path = argv[optind];
	src = nvt_source_find(o->source);
	if (!src)
		return cli_usage_error("--source must be one of: %s", nvt_source_names());
	if (!(src->caps & NVT_SOURCE_PACED) && c->rate_given && o->rate_bps)
		return cli_usage_error("--rate paces the test pattern; the %s source runs at "
				       "the rate its producer feeds it",
				       src->name);
	if (o->drops_from && !(src->caps & NVT_SOURCE_DROPS_FROM))
		return cli_usage_error("--drops-from reads a device's loss counter: it goes with "
				       "--source dev:PATH, not with the %s source",
				       src->name);
	if (o->format == NVT_FMT_FDREC && !(src->caps & NVT_SOURCE_PATTERN))
		return cli_usage_error("--format fdrec holds 16-byte beats only: use --source tpg");
	if (!strcmp(src->name, "stdin") && isatty(0))
		return cli_usage_error("--source stdin reads standard input, which is a terminal: "
				       "pipe data in");
	if (o->qd > o->chunks && !(nvt_engine_info_find(o->engine, &einfo) == 0 &&
				   (einfo.caps & NVT_ENGINE_QD_PER_DRIVE)))
		o->qd = o->chunks;
	return 0;
}

/* Once the recording is open: after every refusal of the arguments. */
static void banner(void *arg)
{
	const struct nvt_record_opts *o = ((const struct rec_cli *)arg)->opts;
	char rate[64] = "unpaced", r[48];

	if (o->rate_bps)
		snprintf(rate, sizeof(rate), "at %s", cli_rate_str(o->rate_bps, r, sizeof(r)));
	fprintf(stderr,
		"nvtape record: recording to %s (%u x %llu KiB ring, qd %u, source %s %s, "
		"engine %s) -- Ctrl-C to stop\n",
		o->path, o->chunks, (unsigned long long)(o->chunk_bytes >> 10), o->qd, o->source,
		rate, o->engine);
}

/* The lines on stderr about how the recording ended, then the human summary. */
static void report(const struct nvt_record_opts *o, const struct nvt_record_result *r,
		   const struct rec_cli *c, int rc)
{
	if (r->reason == NVT_STOP_SIGNAL && !c->quiet)
		fprintf(stderr, "nvtape record: interrupted: every filled chunk was written "
				"and the header finalized\n");
	if (r->rec.drop_count > r->lost_unwritten && o->drops_from)
		fprintf(stderr,
			"nvtape record: WARNING: %llu bytes were lost by the device (%s) or "
			"dropped while the storage fell behind -- the recording has gaps "
			"(nvtape info lists where)\n",
			(unsigned long long)(r->rec.drop_count - r->lost_unwritten), o->drops_from);
	else if (r->rec.drop_count > r->lost_unwritten &&
		 nvt_source_kind_is_packets(r->rec.source_kind))
		fprintf(stderr,
			"nvtape record: WARNING: %llu packets were lost (%llu in the kernel: a "
			"receive buffer or capture ring too small, or a reader too slow; the rest "
			"upstream or with no free ring chunk) -- the recording has gaps (nvtape "
			"info lists where)\n",
			(unsigned long long)(r->rec.drop_count - r->lost_unwritten),
			(unsigned long long)r->kernel_drops);
	else if (r->rec.drop_count > r->lost_unwritten && r->rec.source_kind == NVT_SRC_SHM)
		fprintf(stderr,
			"nvtape record: WARNING: the shm producer dropped %llu %s (its own drop "
			"log) -- the recording has gaps (nvtape info lists where); the ring %s "
			"(high-water %llu of %llu chunks)\n",
			(unsigned long long)(r->rec.drop_count - r->lost_unwritten),
			cli_units(&r->rec),
			r->st.ring_hwm >= r->st.ring_chunks
				? "was full at times: the storage fell behind the producer"
				: "never filled: the producer's losses are its own",
			(unsigned long long)r->st.ring_hwm, (unsigned long long)r->st.ring_chunks);
	else if (r->rec.drop_count > r->lost_unwritten)
		fprintf(stderr,
			"nvtape record: WARNING: %llu %s were dropped -- the recording has gaps "
			"(nvtape info lists where): %s\n",
			(unsigned long long)(r->rec.drop_count - r->lost_unwritten),
			cli_units(&r->rec), cli_drop_cause(&r->rec));
	if (r->lost_unwritten)
		fprintf(stderr,
			"nvtape record: %llu %s were captured but never written (the "
			"storage failed); they are counted as dropped after the last one "
			"written\n",
			(unsigned long long)r->lost_unwritten, cli_units(&r->rec));
	if (!c->json)
		summary(o, r, rc);
}

static int run_record(struct nvt_record_opts *o, struct rec_cli *c)
{
	struct nvt_record_result r;
	int rc;

	c->tty = isatty(2);
	c->size_bytes = o->size_bytes;
	c->chunk_bytes = o->chunk_bytes;
	c->duration_ns = o->duration_ns;
	o->interrupt = &cli_interrupted;
	o->progress_input = progress;
	o->notice = cli_note;
	o->arg = c;
	if (c->quiet)
		o->stats_ns = c->json ? 0 : o->stats_ns;
	cli_install_signals();
	if (!c->quiet)
		o->opened = banner;
	c->opts = o;
	rc = nvt_record(o, &r);
	if (!c->quiet && c->tty && o->stats_ns)
		fputc('\n', stderr);
	rc = cli_exit_of(rc, &r.err,
			 r.rec.drop_count != 0 || r.st.check_gaps || r.st.check_backward ||
				 r.st.check_bad);
	if (rc == NVT_EXIT_USAGE)
		return cli_usage_error("%s", cli_err_msg(&r.err));
	if (r.err.code)
		cli_error("%s", cli_err_msg(&r.err));
	if (c->json)
		record_json(o, &r, rc, stdout);
	if (rc != NVT_EXIT_RUNTIME || r.rec.data_bytes || r.rec.flags)
		report(o, &r, c, rc);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct nvt_record_opts o;
	struct rec_cli c = {0};
	int rc;

	nvt_record_opts_init(&o);
	rc = parse_record(argc, argv, &o, &c);
	if (!rc)
		rc = check_args(argc, argv, &o, &c);
	o.meta = c.meta;
	if (!rc && !cli_parse_only)
		rc = run_record(&o, &c);
	free(c.meta);
	return rc < 0 ? NVT_EXIT_OK : rc;
}

/* SPDX-License-Identifier: MIT */
/* nvtape CLI: shared helpers for argument parsing and output. The CLI only parses and prints;
 * all work is done by libnvtape. */
#ifndef NVT_CLI_H
#define NVT_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nvtape/format.h"
#include "nvtape/layout.h"
#include "nvtape/nvtape.h"
#include "nvtape/pattern.h"
#include "json.h"

/* Exit codes shared by every subcommand: the library returns 0 / -errno and problem flags; the
 * CLI maps them here. */
enum nvt_exit {
	NVT_EXIT_OK = 0,      /* clean */
	NVT_EXIT_RUNTIME = 1, /* I/O error, stall, no space, bad file */
	NVT_EXIT_DATA = 2,    /* completed, but drops / gaps / corrupt beats / underflows */
	NVT_EXIT_USAGE = 64,  /* bad command line */
};

#define EXIT_CODES_HELP                                                                            \
	"Exit codes: 0 clean; 2 completed with a data problem (drops, gaps, corrupt beats);\n"     \
	"            1 runtime error (I/O error, stall, no space, bad file); 64 usage error.\n"

extern volatile sig_atomic_t cli_interrupted;
extern const char *cli_cmd; /* "record", "verify", ... for messages */

/* --json: every run prints exactly one object. main() sets cli_json when --json is among the
 * arguments; a command that prints its object marks cli_json_done (cli_json_begin does); when a
 * command fails before that (a usage error, a file it cannot open), main() prints the error
 * object with the last message said on stderr. */
extern bool cli_json, cli_json_done;
extern FILE *cli_json_out; /* stdout, or stderr when the data owns stdout (play --sink stdout) */
extern char cli_last_error[512];
/* "pass" (exit 0), "fail" (2: completed with a data problem) or "error" (1, 64) */
const char *cli_result_name(int exit_code);
/* Open the object and write what every command's object starts with: command, version, exit,
 * result, error (msg when it is not empty, else the last error said for exit 1 or 64, else
 * null). */
void cli_json_begin(struct json *j, FILE *f, int exit_code, const char *msg);
/* key: an array of the names of the bits set in bits (names[i] for bit i) */
void cli_json_flags(struct json *j, const char *key, unsigned bits, const char *const *names,
		    unsigned n);
/* The object of a command that failed before it had anything else to say. */
void cli_json_error(int exit_code);

void cli_install_signals(void);
/* A library error's message with the flag that gets past it (nvt_err.hint) appended. */
const char *cli_err_msg(const struct nvt_err *e);
/* Exit code of a library call's result: rc 0 -> clean or data problem; refused options -> 64. */
int cli_exit_of(int rc, const struct nvt_err *err, bool data_problem);
/* "  name  help" lines of the engines ("read-engines": those that store data), sources or
 * sinks the library has registered. */
void cli_list_registry(FILE *f, const char *what);
/* Print "nvtape CMD: msg (see --help)" and return NVT_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_note(const char *msg, void *arg);

int cli_size(const char *opt, const char *val, uint64_t *out);
int cli_uint(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out);
int cli_duration(const char *opt, const char *val, uint64_t *ns);
/* --chunk: a multiple of 4 KiB from 4 KiB to 1 GiB */
int cli_chunk(const char *val, uint64_t *out);
/* --rate (opt names the flag): "max" (0) or at least 16 bytes/s; bytes (1500MB, 1.5G, 64B)
 * or bits (12Gbps, 800Mbit/s); a number without a unit, hexadecimal and an ambiguous
 * lowercase b (12Gb) are refused */
int cli_rate(const char *opt, const char *val, uint64_t *out);
#define CLI_RATE_UNITS "bytes/s: 1500MB, 1.5GB, 200M (2^20), 64B; bits/s: 12Gbps, 800Mbit/s"
/* a rate for people: "1500 B/s", "12.0 kB/s", "1500.0 MB/s" (never 0.0 for a slow one) */
const char *cli_rate_str(uint64_t bps, char *buf, size_t cap);
/* a count option (--chunks, --qd) within [min, max] */
int cli_count(const char *opt, const char *val, unsigned min, unsigned max, unsigned *out);
/* --engine: file or nvme (and null for a writer) */
bool cli_engine_ok(const char *val, bool writer);
int cli_engine(const char *val, bool writer, const char **out);
/* what a recording's drops count: "bytes" (1-byte units) or "beats" */
const char *cli_units(const struct nvt_recording *rec);
/* why a recording's drops were lost, as far as its source tells: "no ring chunk was free...",
 * "counted by the shm producer...", "lost before they were stored: in the kernel..." */
const char *cli_drop_cause(const struct nvt_recording *rec);
/* --check: a counter check (docs/checks.md) the library will accept */
int cli_check(const char *val, const char **out);
/* --qd for the nvme engine: commands in flight per drive, default 32, at most 63 */
int cli_engine_qd(const char *engine, bool qd_given, unsigned *qd);
#define CLI_ENGINE_HELP                                                                            \
	"  --engine file|nvme   file: io_uring O_DIRECT through the block layer (default);\n"      \
	"                       nvme: NVMe Read commands built by nvtape, io_uring\n"              \
	"                       passthrough on /dev/ngXnY (qd = commands per drive,\n"             \
	"                       default 32, at most 63)\n"
/* The FILE arguments: one file or device, or several members striped in the md RAID0 layout
 * (--stripe, default 512K; --member-offset). Returns 0 or NVT_EXIT_USAGE. */
int cli_layout(struct nvt_layout *l, int argc, char **argv, int first, uint64_t stripe,
	       uint64_t member_offset);
/* --stripe ('Z') or --member-offset ('O'): parse into *stripe / *member_offset. */
int cli_layout_option(int opt, const char *val, uint64_t *stripe, uint64_t *member_offset);
#define CLI_LAYOUT_OPTIONS                                                                         \
	{"stripe", required_argument, 0, 'Z'},                                                     \
	{                                                                                          \
		"member-offset", required_argument, 0, 'O'                                         \
	}
#define CLI_LAYOUT_HELP                                                                            \
	"  --stripe B           FILE... are members striped in the md RAID0 layout with\n"         \
	"                       B-byte chunks (default 512K when several are given)\n"             \
	"  --member-offset B    the stripe starts B bytes into every member (the md data\n"        \
	"                       offset that mdadm --examine reports, when writing the\n"           \
	"                       members of an md array directly)\n"

/* A ratio over too little to mean anything (under 1 MiB, or under 10 ms) is not printed:
 * "-" for people, null in JSON (an empty stdin gave -nan MB/s, 4 KiB inf MB/s and 72609
 * core-s/GB). cli_ratio: v, or NAN when not ok (json_num writes null); cli_ratio_str: v as fmt
 * prints it, or "-". */
#define CLI_MIN_BYTES (1u << 20)
#define CLI_MIN_S     0.01
double cli_ratio(double v, bool ok);
const char *cli_ratio_str(char *buf, size_t cap, const char *fmt, double v, bool ok);
/* instant (since the last call) and average MB/s for the live stats lines */
struct cli_meter {
	uint64_t last_bytes, last_ns;
};
void cli_meter_update(struct cli_meter *m, uint64_t bytes, uint64_t elapsed_ns, double *inst,
		      double *avg);
/* "  42.0%  ETA 1:05" for a live stats line: the fraction done (0..1) and the seconds left
 * (negative: unknown); "" when frac is negative (the total is not known). */
const char *cli_eta_str(double frac, double left_s, char *buf, size_t cap);
/* GAP / CORRUPT / BACKWARD line of the pattern checker */
/* a checker's event; records: a counter check's (records, not beats) */
void cli_print_check_event(FILE *f, const struct nvt_check_event *e, bool records);

const char *cli_time_str(uint64_t realtime_ns, char *buf, size_t cap);
/* Text read from a recording as a terminal may show it: control characters (an escape
 * sequence's ESC, C1) and bytes that are not UTF-8 as \xNN, so that a recording cannot drive
 * the terminal of whoever looks at it. cli_text: into buf (cut at cap). */
void cli_put_text(FILE *f, const char *s);
const char *cli_text(const char *s, char *buf, size_t cap);
/* The writer of an interrupted recording when it is alive (it holds the lock recover and meta
 * find): its PID, 0 when the system does not say; -1 for a complete recording or a writer that
 * died. */
int cli_writer(const struct nvt_layout *L, const struct nvt_recording *rec);
/* live_pid: what cli_writer() said (-1: not being written) */
void cli_print_recording(FILE *f, const char *path, const struct nvt_recording *rec, int live_pid);
/* Metadata ("key=value" lines): a "metadata" block for humans, a "meta" object of strings. */
void cli_print_meta(FILE *f, const char *meta);
void cli_json_meta(struct json *j, const char *meta);
void cli_json_recording(struct json *j, const char *key, const struct nvt_recording *rec);
void cli_progress_bytes(uint64_t done, uint64_t total, void *arg);
/* "first argv[0] argv[1] ..." for reports */
void cli_cmdline(char *buf, size_t cap, const char *first, int argc, char **argv);
struct nvt_report;
/* Write the HTML report to path; 0 or NVT_EXIT_RUNTIME (said on stderr). */
int cli_report(const char *path, const struct nvt_report *rep, bool quiet);

/* The whole command line as `nvtape ARGS...` runs it (argv[0] is the program): the exit code. */
int cli_main(int argc, char **argv);
/* Set by the command-line fuzz harness: a command returns NVT_EXIT_OK once its arguments are
 * parsed and checked, before it opens any file or device or starts any work. */
extern bool cli_parse_only;

int cmd_record(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_meta(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_recover(int argc, char **argv);
int cmd_play(int argc, char **argv);
int cmd_setup(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_speedtest(int argc, char **argv);

#endif

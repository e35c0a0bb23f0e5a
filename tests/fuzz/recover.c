/* SPDX-License-Identifier: MIT */
/* Fuzz harness: verify and recover over arbitrary bytes. The input is a recording file (its
 * header CRCs made right, so that mutations reach the checks behind them). verify either
 * refuses it or checks exactly what the header vouches for; recover either refuses it and
 * leaves the file byte for byte as it was, or finalizes it: the result opens, keeps at least
 * what the checkpoint vouched for, verifies (for the test pattern, with the drop index it
 * rebuilt matching the gaps exactly), and a second recover finds nothing to do. */
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "nvtape/recover.h"
#include "nvtape/verify.h"

#define MAX_INPUT (256u << 10)
#define CHUNK     (64u << 10)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	FUZZ_CHECK(stat(path, &st) == 0, "stat %s", path);
	return (uint64_t)st.st_size;
}

static int verify(const char *path, struct nvt_verify_result *r)
{
	struct nvt_verify_opts o;
	int rc;

	nvt_verify_opts_default(&o);
	o.path = path;
	o.chunk_bytes = CHUNK;
	o.chunks = 4;
	o.qd = 2;
	rc = nvt_verify(&o, r);
	if (rc) {
		FUZZ_CHECK(rc < 0 && r->err.code && r->err.msg[0], "a refused verify says why");
		return rc;
	}
	fuzz_check_open(&r->rec, file_size(path));
	if (r->pattern_checked) {
		FUZZ_CHECK(r->checked_bytes == r->rec.valid_bytes,
			   "checked %llu bytes of %llu vouched for",
			   (unsigned long long)r->checked_bytes,
			   (unsigned long long)r->rec.valid_bytes);
		FUZZ_CHECK(
			r->chk.beats == r->rec.valid_bytes / 16 && r->chk.corrupt <= r->chk.beats,
			"%llu beats (%llu corrupt) in %llu bytes", (unsigned long long)r->chk.beats,
			(unsigned long long)r->chk.corrupt, (unsigned long long)r->rec.valid_bytes);
	} else if (r->packets_walked) { /* a packet recording: its pcapng blocks are walked */
		FUZZ_CHECK(r->checked_bytes == r->rec.valid_bytes,
			   "walked %llu bytes of packets of %llu vouched for",
			   (unsigned long long)r->checked_bytes,
			   (unsigned long long)r->rec.valid_bytes);
	} else {
		FUZZ_CHECK(r->checked_bytes == 0, "checked a recording that is not the pattern");
	}
	return 0;
}

static int recover(const char *path, struct nvt_recover_result *r)
{
	struct nvt_recover_opts o;

	nvt_recover_opts_default(&o);
	o.path = path;
	o.chunk_bytes = CHUNK;
	o.chunks = 4;
	o.qd = 2;
	return nvt_recover(&o, r);
}

static void same_file(const char *path, const uint8_t *want, size_t size)
{
	uint8_t *got = malloc(size ? size : 1);
	FILE *f = fopen(path, "rb");

	FUZZ_CHECK(got && f, "read back %s", path);
	FUZZ_CHECK(fread(got, 1, size, f) == size && fgetc(f) == EOF &&
			   memcmp(got, want, size) == 0,
		   "a recover that failed changed the file");
	fclose(f);
	free(got);
}

static void recovered(const char *path, const struct nvt_recover_result *r)
{
	struct nvt_verify_result *v = calloc(1, sizeof(*v));
	struct nvt_recover_result *again = calloc(1, sizeof(*again));
	const struct nvt_recording *a = &r->after;

	FUZZ_CHECK(v && again, "out of memory");
	FUZZ_CHECK(a->complete && (a->flags & NVT_FLAG_COMPLETE), "recovered but not complete");
	if (!r->already_complete) {
		FUZZ_CHECK(a->flags & NVT_FLAG_RECOVERED, "not marked recovered");
		FUZZ_CHECK(a->data_bytes >= r->checkpoint_bytes,
			   "kept %llu bytes of the %llu the checkpoint vouched for",
			   (unsigned long long)a->data_bytes,
			   (unsigned long long)r->checkpoint_bytes);
	}
	FUZZ_CHECK(verify(path, v) == 0, "the recovered file does not verify: %s", v->err.msg);
	FUZZ_CHECK(v->rec.complete, "the recovered file is incomplete");
	if (!r->already_complete) {
		FUZZ_CHECK(v->rec.data_bytes == a->data_bytes,
			   "recover kept %llu, verify sees %llu", (unsigned long long)a->data_bytes,
			   (unsigned long long)v->rec.data_bytes);
		/* a header that does not say its data is the pattern (an fdrec file with its
		 * TPG flag cleared: verify checks the beats and reports the altered kind) gets no
		 * rebuilt drop index: its gaps are the header's problem, not recover's */
		if (v->pattern_checked && !(v->problems & NVT_VP_KIND))
			FUZZ_CHECK(!(v->problems & NVT_VP_MISMATCH),
				   "the rebuilt drop index does not match the gaps (%llu gaps, "
				   "%llu gap beats, %llu dropped; %llu unmatched gaps, %llu "
				   "unmatched events)",
				   (unsigned long long)v->chk.gaps,
				   (unsigned long long)v->chk.gap_beats,
				   (unsigned long long)v->rec.drop_count,
				   (unsigned long long)v->gaps_unmatched,
				   (unsigned long long)v->events_unmatched);
	}
	FUZZ_CHECK(recover(path, again) == 0 && again->already_complete, "a second recover: %s",
		   again->err.msg);
	free(again);
	free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_verify_result *v;
	struct nvt_recover_result *r;
	const char *path;
	uint8_t *buf;

	if (size > MAX_INPUT)
		return -1;
	buf = malloc(size ? size : 1);
	v = calloc(1, sizeof(*v));
	r = calloc(1, sizeof(*r));
	FUZZ_CHECK(buf && v && r, "out of memory");
	memcpy(buf, data, size);
	fuzz_fix_crcs(buf, size);
	path = fuzz_file(buf, size);
	verify(path, v);
	if (recover(path, r) == 0) {
		fuzz_check_open(&r->before, size);
		recovered(path, r);
	} else {
		FUZZ_CHECK(r->err.code && r->err.msg[0], "a refused recover says why");
		same_file(path, buf, size);
	}
	free(r);
	free(v);
	free(buf);
	return 0;
}

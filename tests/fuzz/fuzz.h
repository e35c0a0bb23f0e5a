/* SPDX-License-Identifier: MIT */
/* What every fuzz harness shares: the libFuzzer entry points, the invariant check that aborts
 * (libFuzzer keeps the input as a reproducer; the replay program fails), and a scratch file
 * holding the input for harnesses that go through files. */
#ifndef NVT_FUZZ_H
#define NVT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nvtape/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* An invariant the code under test must keep, whatever the input. */
#define FUZZ_CHECK(cond, ...)                                                                      \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: invariant violated: %s: ", __FILE__, __LINE__,     \
				#cond);                                                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The path of a scratch file holding exactly the given bytes (rewritten on every call), in a
 * private directory under $NVT_FUZZ_DIR, $TMPDIR or /tmp that is removed at exit. The
 * directory must allow O_DIRECT (recover and verify read with it): not tmpfs before Linux 6.6. */
const char *fuzz_file(const uint8_t *data, size_t size);
/* A second scratch path in the same directory, for a copy. */
const char *fuzz_file2(const uint8_t *data, size_t size);

/* A scratch path dir/name in the same directory (removed at exit; at most 16 names). */
const char *fuzz_path(const char *name);
/* That directory. */
const char *fuzz_dir(void);
/* A whole file, malloc'ed (*size bytes), or NULL when it cannot be opened. */
uint8_t *fuzz_read_file(const char *path, size_t *size);

/* Strict JSON (RFC 8259): one value, UTF-8 without overlong forms or surrogates, escapes whole
 * (surrogate escapes only in pairs), no key twice in one object, nesting at most 32 deep. 0, or -1
 * with why (cap bytes) saying where it broke. on_scalar (may be NULL) sees every string,
 * number, true, false and null with its path: keys and indices as "global.core:datatype" or
 * "captures[2].core:sample_start" (keys raw, without their quotes), and the value's text
 * (strings with their quotes). */
int fuzz_json_check(const char *s, size_t n,
		    void (*on_scalar)(void *arg, const char *path, const char *v, size_t len),
		    void *arg, char *why, size_t cap);

/* The sum of the drop events' counts of an index read with the recording (each event inside the
 * data, in order, the sum not wrapping: an invariant violated otherwise). */
struct nvt_index;
uint64_t fuzz_drop_events_sum(const struct nvt_index *ix, uint64_t data_bytes);

/* Append the elem-byte item to the growing array *v of *n items (room for *cap). */
void fuzz_push(void *v, size_t *n, size_t *cap, size_t elem, const void *item);

/* Give the nvtape header at the start of buf (len bytes) a correct CRC, so that mutations get
 * past the CRC check to the field checks. No-op unless it starts with the nvtape magic and holds
 * a whole header. */
void fuzz_fix_header_crc(uint8_t *buf, size_t len);
/* The same for the index the header points at (when it lies inside buf), then the header CRC. */
void fuzz_fix_crcs(uint8_t *buf, size_t len);

/* The invariants of a recording nvt_recording_open accepted from a file of file_bytes bytes:
 * nothing it claims lies beyond the file, nothing wraps. */
void fuzz_check_open(const struct nvt_recording *rec, uint64_t file_bytes);

#endif

/* SPDX-License-Identifier: MIT */
/* Fuzz harness: the drop index decoder over arbitrary bytes. A decoded index holds no more
 * events than its bytes can carry; encoded again it decodes to the same events; a refused one
 * returns nothing (and frees what it had: LeakSanitizer watches). */
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_drop_event *ev = NULL, *ev2 = NULL;
	uint64_t n = 0, n2 = 0, used = 0;
	struct nvt_err err = {0};
	uint32_t crc = 0;
	size_t cap;
	void *img;
	long len;

	if (nvt_index_decode(data, size, &ev, &n, &err)) {
		FUZZ_CHECK(!ev && n == 0, "a refused index returns no events");
		FUZZ_CHECK(err.code && err.msg[0], "a refused index says why");
		return 0;
	}
	FUZZ_CHECK(n <= size / sizeof(*ev), "%llu events from %zu bytes", (unsigned long long)n,
		   size);
	FUZZ_CHECK(n == 0 || ev, "events without an array");
	cap = (sizeof(struct nvt_index_header) + sizeof(struct nvt_index_record) + n * sizeof(*ev) +
	       NVT_BLOCK - 1) /
	      NVT_BLOCK * NVT_BLOCK;
	img = malloc(cap);
	FUZZ_CHECK(img != NULL, "out of memory");
	len = nvt_index_encode(ev, n, img, cap, &used, &crc);
	FUZZ_CHECK(len > 0 && (size_t)len == cap && used <= cap, "encode: %ld", len);
	FUZZ_CHECK(crc == nvt_crc32c(0, img, used), "index CRC");
	FUZZ_CHECK(nvt_index_decode(img, used, &ev2, &n2, &err) == 0, "re-decode: %s", err.msg);
	FUZZ_CHECK(n2 == n && (n == 0 || memcmp(ev, ev2, n * sizeof(*ev)) == 0),
		   "round trip changed the events");
	/* the padding after the used bytes is zero: readers given the padded length agree */
	free(ev2);
	ev2 = NULL;
	FUZZ_CHECK(nvt_index_decode(img, cap, &ev2, &n2, &err) == 0 && n2 == n, "padded index: %s",
		   err.msg);
	free(ev2);
	free(img);
	free(ev);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* Shared by the fuzz harnesses: scratch files, CRC fix-ups that let mutations reach the checks
 * behind a CRC, and the invariants of an opened recording. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/index.h"
#include "fuzz.h"

static char dir[512], path1[600], path2[600];
static char extra[16][600]; /* fuzz_path's names */
static unsigned nextra;

static void remove_dir(void)
{
	unlink(path1);
	unlink(path2);
	for (unsigned i = 0; i < nextra; i++)
		unlink(extra[i]);
	rmdir(dir);
}

static void make_dir(void)
{
	if (!dir[0]) {
		const char *base = getenv("NVT_FUZZ_DIR");
		if (!base || !*base)
			base = getenv("TMPDIR");
		if (!base || !*base)
			base = "/tmp";
		snprintf(dir, sizeof(dir), "%s/nvtape-fuzz.XXXXXX", base);
		if (!mkdtemp(dir)) {
			perror(dir);
			abort();
		}
		snprintf(path1, sizeof(path1), "%s/a.nvt", dir);
		snprintf(path2, sizeof(path2), "%s/b.nvt", dir);
		atexit(remove_dir);
	}
}

static const char *write_file(char *path, const uint8_t *data, size_t size)
{
	int fd;

	make_dir();
	/* rewritten in place and cut to size: truncating to zero first would make ext4 flush the
	 * file at every close (auto_da_alloc), a hundred times slower */
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(path);
		abort();
	}
	for (size_t done = 0; done < size;) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
		if (n <= 0) {
			perror(path);
			abort();
		}
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)size)) {
		perror(path);
		abort();
	}
	close(fd);
	return path;
}

const char *fuzz_file(const uint8_t *data, size_t size)
{
	return write_file(path1, data, size);
}

const char *fuzz_file2(const uint8_t *data, size_t size)
{
	return write_file(path2, data, size);
}

const char *fuzz_path(const char *name)
{
	make_dir();
	for (unsigned i = 0; i < nextra; i++)
		if (!strcmp(strrchr(extra[i], '/') + 1, name))
			return extra[i];
	if (nextra == sizeof(extra) / sizeof(extra[0]) || strchr(name, '/')) {
		fprintf(stderr, "fuzz_path: %s: too many names, or not a name\n", name);
		abort();
	}
	snprintf(extra[nextra], sizeof(extra[0]), "%s/%s", dir, name);
	return extra[nextra++];
}

const char *fuzz_dir(void)
{
	make_dir();
	return dir;
}

uint8_t *fuzz_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n;

	*size = 0;
	if (!f)
		return NULL;
	do {
		if (*size == cap) {
			uint8_t *b = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!b) {
				fprintf(stderr, "%s: out of memory\n", path);
				abort();
			}
			buf = b;
		}
		n = fread(buf + *size, 1, cap - *size, f);
		*size += n;
	} while (n);
	fclose(f);
	return buf;
}

/* The CRC of each header copy that has nvtape's magic: both 2048-byte slots of version 2, or
 * the single version 1 header. */
void fuzz_fix_header_crc(uint8_t *buf, size_t len)
{
	struct nvt_header *h = (struct nvt_header *)buf;
	uint32_t crc;

	if (len < NVT_HEADER_SIZE || memcmp(h->magic, NVT_MAGIC, 8))
		return;
	if (h->version == 1) {
		crc = nvt_crc32c(0, buf, NVT_HEADER_V1_CRC_OFF);
		memcpy(buf + NVT_HEADER_V1_CRC_OFF, &crc, sizeof(crc));
		return;
	}
	for (int i = 0; i < 2; i++)
		if (!memcmp(h[i].magic, NVT_MAGIC, 8))
			h[i].header_crc =
				nvt_crc32c(0, &h[i], offsetof(struct nvt_header, header_crc));
}

void fuzz_fix_crcs(uint8_t *buf, size_t len)
{
	struct nvt_header *h = (struct nvt_header *)buf;

	if (len < NVT_HEADER_SIZE || memcmp(h->magic, NVT_MAGIC, 8))
		return;
	for (int i = 0; i < (h->version == 1 ? 1 : 2); i++)
		if (h[i].index_bytes && h[i].index_offset <= len &&
		    h[i].index_bytes <= len - h[i].index_offset)
			h[i].index_crc = nvt_crc32c(0, buf + h[i].index_offset, h[i].index_bytes);
	fuzz_fix_header_crc(buf, len);
}

/* a + b <= limit, without a wrap */
static int within(uint64_t a, uint64_t b, uint64_t limit)
{
	return a <= limit && b <= limit - a;
}

void fuzz_check_open(const struct nvt_recording *rec, uint64_t file_bytes)
{
	FUZZ_CHECK(rec->file_bytes == file_bytes, "file_bytes %llu, the file holds %llu",
		   (unsigned long long)rec->file_bytes, (unsigned long long)file_bytes);
	FUZZ_CHECK(rec->format == NVT_FMT_NVTAPE || rec->format == NVT_FMT_FDREC, "format %d",
		   (int)rec->format);
	FUZZ_CHECK(rec->beat_bytes >= 1 && rec->beat_bytes <= NVT_HEADER_SIZE, "beat %u",
		   rec->beat_bytes);
	FUZZ_CHECK(within(rec->data_offset, rec->valid_bytes, file_bytes),
		   "valid data %llu at %llu beyond the file (%llu)",
		   (unsigned long long)rec->valid_bytes, (unsigned long long)rec->data_offset,
		   (unsigned long long)file_bytes);
	FUZZ_CHECK(within(rec->data_offset, rec->durable_bytes, file_bytes),
		   "durable %llu at %llu beyond the file (%llu)",
		   (unsigned long long)rec->durable_bytes, (unsigned long long)rec->data_offset,
		   (unsigned long long)file_bytes);
	FUZZ_CHECK(rec->complete == ((rec->flags & NVT_FLAG_COMPLETE) != 0), "complete flag");
	if (rec->complete) {
		FUZZ_CHECK(within(rec->data_offset, rec->data_bytes, file_bytes),
			   "data %llu at %llu beyond the file (%llu)",
			   (unsigned long long)rec->data_bytes,
			   (unsigned long long)rec->data_offset, (unsigned long long)file_bytes);
		FUZZ_CHECK(rec->valid_bytes == rec->data_bytes, "valid %llu, data %llu",
			   (unsigned long long)rec->valid_bytes,
			   (unsigned long long)rec->data_bytes);
	}
	if (rec->index_bytes) {
		FUZZ_CHECK(within(rec->index_offset, rec->index_bytes, file_bytes),
			   "index %llu at %llu beyond the file (%llu)",
			   (unsigned long long)rec->index_bytes,
			   (unsigned long long)rec->index_offset, (unsigned long long)file_bytes);
		FUZZ_CHECK(rec->index_offset >= rec->data_offset + rec->valid_bytes,
			   "index at %llu inside the data (%llu at %llu)",
			   (unsigned long long)rec->index_offset,
			   (unsigned long long)rec->valid_bytes,
			   (unsigned long long)rec->data_offset);
	}
}

uint64_t fuzz_drop_events_sum(const struct nvt_index *ix, uint64_t data_bytes)
{
	uint64_t sum = 0;

	for (uint64_t i = 0; i < ix->nev; i++) {
		FUZZ_CHECK(ix->ev[i].data_offset <= data_bytes &&
				   (!i || ix->ev[i].data_offset >= ix->ev[i - 1].data_offset),
			   "drop event %llu at %llu (data %llu)", (unsigned long long)i,
			   (unsigned long long)ix->ev[i].data_offset,
			   (unsigned long long)data_bytes);
		FUZZ_CHECK(sum + ix->ev[i].beats >= sum, "the drop events' sum wraps");
		sum += ix->ev[i].beats;
	}
	return sum;
}

void fuzz_push(void *v, size_t *n, size_t *cap, size_t elem, const void *item)
{
	void **a = v;

	if (*n == *cap) {
		void *g = realloc(*a, (*cap = *cap ? *cap * 2 : 64) * elem);
		FUZZ_CHECK(g, "out of memory");
		*a = g;
	}
	memcpy((char *)*a + *n * elem, item, elem);
	(*n)++;
}

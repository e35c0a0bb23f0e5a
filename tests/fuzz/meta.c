/* SPDX-License-Identifier: MIT */
/* Fuzz harness: editing a recording's metadata (nvtape meta). The input is a mode byte, a
 * 16-bit length, an edit of that many bytes and then a recording file (its CRCs made right).
 * The edit is either KEY=VALUE lines applied one by one as `nvtape meta FILE KEY=VALUE...`
 * does (KEY= removes), or the whole new text. nvt_meta_write either refuses, saying why, and
 * leaves the file byte for byte as it was, or succeeds: the file opens complete, its data, drop
 * events, checksums and chunk times are those of before, and its metadata reads back as exactly
 * the text written. */
#include <string.h>

#include "format/index.h"
#include "fuzz.h"
#include "nvtape/meta.h"

#define MAX_INPUT (256u << 10)
#define MAX_SETS  256

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* The metadata after the KEY=VALUE lines of edit (n bytes), applied to cur as the command
 * does; NULL for an assignment it refuses (the command stops before writing). */
static char *apply(const char *cur, const char *edit, size_t n)
{
	char *text = strdup(cur), *line = malloc(n + 1);
	int sets = 0;

	FUZZ_CHECK(text && line, "out of memory");
	for (size_t at = 0; at < n && sets < MAX_SETS;) {
		const char *nl = memchr(edit + at, '\n', n - at);
		size_t k = nl ? (size_t)(nl - (edit + at)) : n - at;
		memcpy(line, edit + at, k);
		line[k] = 0;
		at += k + 1;
		char *eq = strchr(line, '=');
		if (!eq || strlen(line) != k || !nvt_meta_key_ok(line, (size_t)(eq - line)))
			continue; /* the command would take it for a file name */
		*eq = 0;
		char *next = nvt_meta_set(text, line, eq + 1);
		free(text);
		text = next;
		if (!text)
			break;
		sets++;
	}
	free(line);
	return text;
}

static void same_index(const struct nvt_index *a, const struct nvt_index *b)
{
	FUZZ_CHECK(a->nev == b->nev && (!a->nev || !memcmp(a->ev, b->ev, a->nev * sizeof(*a->ev))),
		   "the drop events changed (%llu, now %llu)", (unsigned long long)a->nev,
		   (unsigned long long)b->nev);
	FUZZ_CHECK(a->ncrc == b->ncrc &&
			   (!a->ncrc || !memcmp(a->crc, b->crc, a->ncrc * sizeof(*a->crc))),
		   "the chunk checksums changed (%llu, now %llu)", (unsigned long long)a->ncrc,
		   (unsigned long long)b->ncrc);
	FUZZ_CHECK(a->ntm == b->ntm && (!a->ntm || !memcmp(a->tm, b->tm, a->ntm * sizeof(*a->tm))),
		   "the chunk times changed (%llu, now %llu)", (unsigned long long)a->ntm,
		   (unsigned long long)b->ntm);
}

#define SAME(f) FUZZ_CHECK(a->f == b->f, "the edit changed " #f)

static void same_recording(const struct nvt_recording *a, const struct nvt_recording *b)
{
	SAME(format);
	SAME(beat_bytes);
	SAME(flags);
	SAME(source_kind);
	SAME(rate_bps);
	SAME(start_ns);
	SAME(stop_ns);
	SAME(data_offset);
	SAME(data_bytes);
	SAME(valid_bytes);
	SAME(drop_count);
	SAME(first_seq);
	SAME(chunk_bytes);
	SAME(drop_events);
	FUZZ_CHECK(!strcmp(a->hostname, b->hostname) && !strcmp(a->source_name, b->source_name),
		   "the edit changed the header's names");
}

/* The edit was written: the recording is the one of before with the new text. */
static void written(const struct nvt_layout *l, const uint8_t *before, const char *text,
		    const struct nvt_recording *rec0, const struct nvt_index *ix0)
{
	struct nvt_recording rec;
	struct nvt_index ix;
	struct nvt_err err = {0};
	char *back = NULL;
	size_t n;
	uint8_t *now = fuzz_read_file(l->path[0], &n);

	FUZZ_CHECK(now, "the edited file is gone");
	FUZZ_CHECK(nvt_meta_check(text, &err) == 0, "a text nvt_meta_check refuses was written: %s",
		   err.msg);
	FUZZ_CHECK(nvt_recording_open(l, &rec, &err) == 0, "the edited recording does not open: %s",
		   err.msg);
	fuzz_check_open(&rec, n);
	FUZZ_CHECK(rec.complete && rec.format == NVT_FMT_NVTAPE, "the edited recording is %s",
		   rec.complete ? "not nvtape" : "incomplete");
	same_recording(rec0, &rec);
	FUZZ_CHECK(!memcmp(now + rec.data_offset, before + rec.data_offset, rec.data_bytes),
		   "the edit changed the data");
	FUZZ_CHECK(nvt_recording_read_index_all(l, &rec, &ix, &err) == 0,
		   "the edited index does not read: %s", err.msg);
	same_index(ix0, &ix);
	FUZZ_CHECK(nvt_meta_read(l, NULL, &back, &err) == 0,
		   "the edited metadata does not read: %s", err.msg);
	FUZZ_CHECK(!strcmp(back, text), "the metadata reads back as %zu bytes, %zu were written",
		   strlen(back), strlen(text));
	free(back);
	nvt_index_clear(&ix);
	free(now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nvt_recording rec0;
	struct nvt_index ix0 = {0};
	struct nvt_layout l;
	struct nvt_err err = {0};
	char *text = NULL, *cur = NULL;
	const char *edit;
	uint16_t elen;
	uint8_t *buf;
	size_t n;
	bool opened;

	if (size < 3)
		return 0;
	memcpy(&elen, data + 1, 2);
	if (elen > size - 3)
		elen = (uint16_t)(size - 3);
	edit = (const char *)data + 3;
	n = size - 3 - elen;
	if (n > MAX_INPUT)
		return -1;
	buf = malloc(n ? n : 1);
	FUZZ_CHECK(buf, "out of memory");
	memcpy(buf, data + 3 + elen, n);
	fuzz_fix_crcs(buf, n);
	nvt_layout_single(&l, fuzz_file(buf, n));
	opened = nvt_recording_open(&l, &rec0, &err) == 0 && rec0.format == NVT_FMT_NVTAPE &&
		 nvt_recording_read_index_all(&l, &rec0, &ix0, &err) == 0;
	if (data[0] & 1) { /* the whole text, up to its first NUL */
		text = strndup(edit, elen);
	} else {
		if (nvt_meta_read(&l, NULL, &cur, &err))
			cur = strdup("");
		FUZZ_CHECK(cur, "out of memory");
		text = apply(cur, edit, elen);
	}
	if (text) {
		memset(&err, 0, sizeof(err));
		if (nvt_meta_write(&l, NULL, text, &err) == 0) {
			FUZZ_CHECK(opened && rec0.complete,
				   "metadata written into a recording that is not complete nvtape");
			written(&l, buf, text, &rec0, &ix0);
		} else {
			size_t k;
			uint8_t *now = fuzz_read_file(l.path[0], &k);
			FUZZ_CHECK(err.code && err.msg[0], "a refused edit says why");
			FUZZ_CHECK(now && k == n && !memcmp(now, buf, n),
				   "a refused edit changed the file (%s)", err.msg);
			free(now);
		}
	}
	nvt_index_clear(&ix0);
	free(text);
	free(cur);
	free(buf);
	return 0;
}

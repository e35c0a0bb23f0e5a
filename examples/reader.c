/* SPDX-License-Identifier: MIT */
/* Reading a recording through the pull API: its header, its drop index, and every chunk of its
 * data straight from the ring the drive read into. Prints the drop events and the byte count,
 * and writes the data to OUT when given (to compare it with another reader).
 *
 *   reader FILE [OUT]
 *
 * Build against the installed library: cc reader.c $(pkg-config --cflags --libs nvtape) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include <nvtape/player.h>

int main(int argc, char **argv)
{
	struct nvt_play_opts o;
	struct nvt_play_result res = {0};
	struct nvt_player *p;
	struct nvt_err err = {0};
	const struct nvt_drop_event *ev;
	struct nvt_chunk c;
	uint64_t nev, bytes = 0;
	FILE *out = NULL;
	int rc;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s FILE [OUT]\n", argv[0]);
		return 64;
	}
	if (argc == 3 && !(out = fopen(argv[2], "wb"))) {
		perror(argv[2]);
		return 1;
	}
	nvt_play_opts_init(&o);
	o.path = argv[1];
	if (nvt_player_open(&o, &p, &err) < 0) {
		fprintf(stderr, "reader: %s\n", err.msg);
		return 1;
	}
	const struct nvt_recording *rec = nvt_player_recording(p);
	printf("source %s, %" PRIu64 " data bytes, %" PRIu64 " units dropped\n",
	       rec->source_name[0] ? rec->source_name : nvt_source_kind_name(rec->source_kind),
	       rec->valid_bytes, rec->drop_count);
	nvt_player_drops(p, &ev, &nev);
	for (uint64_t i = 0; i < nev; i++)
		printf("DROP offset=%" PRIu64 " units=%" PRIu64 " time_ns=%" PRIu64 "\n",
		       ev[i].data_offset, ev[i].beats, ev[i].time_ns);
	while ((rc = nvt_player_next(p, &c, 0)) == 0) {
		if (out && fwrite(c.data, 1, c.bytes, out) != c.bytes) {
			perror(argv[2]);
			break;
		}
		bytes += c.bytes;
		nvt_player_release(p);
	}
	if (nvt_player_close(p, &res) < 0 || rc != -ENODATA) {
		fprintf(stderr, "reader: %s\n", res.err.msg[0] ? res.err.msg : "read failed");
		return 1;
	}
	if (out && fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	printf("RESULT bytes=%" PRIu64 "\n", bytes);
	return 0;
}

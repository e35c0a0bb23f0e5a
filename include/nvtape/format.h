/* SPDX-License-Identifier: MIT */
/* On-disk structures: the nvtape recording header and index, and the FPGA Drive Recorder v1
 * header read and written for compatibility. All little-endian and packed; see
 * docs/file-format.md. Sizes are checked at compile time. */
#ifndef NVTAPE_FORMAT_H
#define NVTAPE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nvtape.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NVT_HEADER_SIZE    4096u /* the header block before the data */
#define NVT_HEADER_SLOT    2048u /* version 2: the block holds two header copies (slots) */
#define NVT_BLOCK          4096u /* O_DIRECT alignment of offsets, lengths and buffers */
#define NVT_BEAT_BYTES     16u   /* test-pattern beat: {seq, ~seq} */
#define NVT_MAGIC          "NVTAPE\0\0"
#define NVT_FORMAT_VERSION 2u
#define NVT_INDEX_MAGIC    "NVTINDEX"
#define NVT_INDEX_VERSION  1u

/* header.flags: COMPLETE = rewritten at stop, data_bytes and index final; RECOVERED = finalized
 * by `nvtape recover` after the writer died; STOP_ERROR = ended early on an error (I/O, no
 * space, stall) */
#define NVT_FLAG_COMPLETE   (1u << 0)
#define NVT_FLAG_RECOVERED  (1u << 1)
#define NVT_FLAG_STOP_ERROR (1u << 2)

/* header.source_kind */
enum nvt_source_kind {
	NVT_SRC_UNKNOWN = 0,
	NVT_SRC_TPG = 1,    /* test pattern; never stalled: drops counted */
	NVT_SRC_STDIN = 2,  /* pipe / fd; back-pressured: never drops */
	NVT_SRC_API = 3,    /* a program through the push API (recorder.h) */
	NVT_SRC_DEV = 4,    /* a character device or FIFO read(); never stalled: drops counted */
	NVT_SRC_FDREC = 6,  /* the FPGA Drive Recorder driver's test pattern: drops counted */
	NVT_SRC_SHM = 7,    /* a producer process writing into the shared ring: drops counted */
	NVT_SRC_UDP = 8,    /* UDP datagrams as pcapng (docs/packets.md): drops count packets */
	NVT_SRC_PACKET = 9, /* frames captured on an interface, as pcapng */
	NVT_SRC_PCAP = 10,  /* a pcap or pcapng file imported, as pcapng */
};

/* sources whose data is a pcapng stream of packets (docs/packets.md) */
static inline int nvt_source_kind_is_packets(uint32_t kind)
{
	return kind == NVT_SRC_UDP || kind == NVT_SRC_PACKET || kind == NVT_SRC_PCAP;
}

/* sources whose data is the {seq, ~seq} test pattern: verify and play check every beat */
static inline int nvt_source_kind_is_pattern(uint32_t kind)
{
	return kind == NVT_SRC_TPG || kind == NVT_SRC_FDREC;
}

#define NVT_MAX_DRIVES 16

/* header.io_path: how the data reached the drives */
enum nvt_io_path {
	NVT_PATH_BLOCK = 0, /* files or block devices through the kernel's block layer */
	NVT_PATH_NVME = 1,  /* NVMe commands built by nvtape (io_uring passthrough) */
};

/* One NVMe namespace a recording was written to (Identify Controller / Namespace). */
struct __attribute__((packed)) nvt_drive_id {
	char model[40];       /*  0 MN, space-padded as the drive reports it */
	char serial[20];      /* 40 SN */
	char firmware[8];     /* 60 FR */
	uint32_t nsid;        /* 68 namespace id */
	uint32_t lba_bytes;   /* 72 logical block size */
	uint32_t max_cmd_kib; /* 76 largest command nvtape sent, KiB */
};
_Static_assert(sizeof(struct nvt_drive_id) == 80, "nvt_drive_id must be 80 bytes");

/* One header slot. The 4096-byte header block holds two (version 2): every rewrite goes to
 * slot generation % 2 and leaves the other one as it is on disk, so a write torn at any
 * sector boundary spoils at most the newest copy and the reader takes the other (one
 * checkpoint older). Version 1 had one copy: these fields at the same offsets, reserved zeros
 * up to 4092 and the CRC of bytes 0..4091 there. */
struct __attribute__((packed)) nvt_header {
	char magic[8];          /*   0 "NVTAPE\0\0" */
	uint32_t version;       /*   8 NVT_FORMAT_VERSION */
	uint32_t header_size;   /*  12 4096 (the whole header block) */
	uint32_t beat_bytes;    /*  16 16 for the test pattern, 1 for a byte stream */
	uint32_t flags;         /*  20 NVT_FLAG_* */
	uint32_t source_kind;   /*  24 enum nvt_source_kind */
	uint32_t chunk_bytes;   /*  28 ring chunk size used */
	uint32_t chunk_count;   /*  32 ring chunks used */
	uint32_t checkpoints;   /*  36 header checkpoints written while recording */
	uint64_t rate_bps;      /*  40 programmed source rate, bytes/s; 0 = unpaced (max) */
	uint64_t start_ns;      /*  48 CLOCK_REALTIME at the first beat */
	uint64_t stop_ns;       /*  56 CLOCK_REALTIME at stop (or at the last checkpoint) */
	uint64_t data_offset;   /*  64 4096 */
	uint64_t data_bytes;    /*  72 final data length (valid with COMPLETE) */
	uint64_t durable_bytes; /*  80 data known durable at the last checkpoint */
	uint64_t drop_count;    /*  88 beats the source dropped */
	uint64_t drop_events;   /*  96 number of drop events (index DROP records) */
	uint64_t first_seq;     /* 104 seq of the first beat (test pattern) */
	uint64_t index_offset;  /* 112 file offset of the index, 0 = none */
	uint64_t index_bytes;   /* 120 index length */
	uint32_t index_crc;     /* 128 CRC32C of the index bytes */
	uint32_t members;       /* 132 striped members (0 or 1 = one file or device) */
	uint64_t duration_ns;   /* 136 CLOCK_MONOTONIC recording time */
	char hostname[64];      /* 144 NUL-padded */
	char writer[32];        /* 208 "nvtape X.Y.Z", NUL-padded */
	uint64_t stripe_bytes;  /* 240 RAID0 chunk of a striped recording */
	uint64_t member_offset; /* 248 where the stripe starts on every member */
	uint32_t drive_count;   /* 256 drives identified below (0: not written by passthrough) */
	uint32_t io_path;       /* 260 enum nvt_io_path */
	struct nvt_drive_id drive[NVT_MAX_DRIVES]; /* 264 the namespaces written, in order */
	char source_name[16]; /* 1544 the source's registered name ("tpg", "stdin", ...), NUL-padded
			       */
	uint64_t generation;  /* 1560 header writes of this recording so far, from 1; the first is
			       * written to both slots */
	char check[48];       /* 1568 counter-check specification the data carries
			       * (docs/checks.md), NUL-padded; "" none */
	uint8_t reserved[428]; /* 1616 zero */
	uint32_t header_crc;   /* 2044 CRC32C of the slot's bytes 0..2043 */
};
_Static_assert(sizeof(struct nvt_header) == NVT_HEADER_SLOT, "nvt_header must be 2048 bytes");
_Static_assert(offsetof(struct nvt_header, hostname) == 144, "nvt_header layout");
_Static_assert(offsetof(struct nvt_header, drive) == 264, "nvt_header layout");
_Static_assert(offsetof(struct nvt_header, source_name) == 1544, "nvt_header layout");
_Static_assert(offsetof(struct nvt_header, generation) == 1560, "nvt_header layout");
_Static_assert(offsetof(struct nvt_header, check) == 1568, "nvt_header layout");
_Static_assert(offsetof(struct nvt_header, header_crc) == 2044, "nvt_header layout");
#define NVT_HEADER_V1_CRC_OFF 4092u              /* version 1: CRC32C of bytes 0..4091 */
#define NVT_GENERATION_MAX    ((1ull << 62) - 1) /* beyond it the count starts again at 1 */

/* The index: a small header followed by typed records; readers skip types they do not know. */
struct __attribute__((packed)) nvt_index_header {
	char magic[8];         /* "NVTINDEX" */
	uint32_t version;      /* NVT_INDEX_VERSION */
	uint32_t record_count; /* records that follow */
};
_Static_assert(sizeof(struct nvt_index_header) == 16, "nvt_index_header must be 16 bytes");

enum nvt_index_type {
	NVT_IDX_DROPS = 1,      /* payload: nvt_drop_event[] */
	NVT_IDX_CHUNK_CRC = 2,  /* payload: nvt_chunk_crc[] */
	NVT_IDX_META = 3,       /* payload: UTF-8 text, a "key=value" line each (entry_bytes 1) */
	NVT_IDX_CHUNK_TIME = 4, /* payload: nvt_chunk_time[] */
};

struct __attribute__((packed)) nvt_index_record {
	uint32_t type;          /* enum nvt_index_type */
	uint32_t entry_bytes;   /* size of one entry (lets later versions grow entries) */
	uint64_t payload_bytes; /* bytes that follow, multiple of 8 */
};
_Static_assert(sizeof(struct nvt_index_record) == 16, "nvt_index_record must be 16 bytes");

struct __attribute__((packed)) nvt_drop_event {
	uint64_t data_offset; /* data byte offset where the missing beats belong */
	uint64_t beats;       /* beats dropped there */
	uint64_t time_ns;     /* CLOCK_MONOTONIC ns since the start of the recording */
};
_Static_assert(sizeof(struct nvt_drop_event) == 24, "nvt_drop_event must be 24 bytes");

/* The CRC32C of a span of data (one ring chunk as it was written, or neighbouring chunks
 * merged): the spans follow each other from data offset 0. */
struct __attribute__((packed)) nvt_chunk_crc {
	uint64_t data_offset; /* where the span starts in the data */
	uint64_t length;      /* its bytes */
	uint32_t crc32c;      /* CRC32C of those bytes */
	uint32_t chunks;      /* ring chunks it covers (more than 1 once merged) */
};
_Static_assert(sizeof(struct nvt_chunk_crc) == 24, "nvt_chunk_crc must be 24 bytes");

/* When the first byte at a data offset was captured: one entry a chunk (or a merged span),
 * CLOCK_REALTIME ns, so that time maps to offset and back. */
struct __attribute__((packed)) nvt_chunk_time {
	uint64_t data_offset;
	uint64_t time_ns;
};
_Static_assert(sizeof(struct nvt_chunk_time) == 16, "nvt_chunk_time must be 16 bytes");

#define NVT_META_MAX (64u << 10) /* bytes of metadata text a recording keeps at most */

/* FPGA Drive Recorder v1 header (fdrec_file.h), for reading and `record --format fdrec`. */
#define FDREC_MAGIC         "FDREC\0\0\0"
#define FDREC_FLAG_TPG      (1u << 0)
#define FDREC_FLAG_COMPLETE (1u << 1)

struct __attribute__((packed)) fdrec_header {
	char magic[8];           /*   0 */
	uint32_t header_version; /*   8 1 */
	uint32_t header_size;    /*  12 4096 */
	uint32_t beat_bytes;     /*  16 16 */
	uint32_t flags;          /*  20 */
	uint32_t design_version; /*  24 */
	uint64_t src_clk_hz;     /*  28 */
	uint64_t rate_bps;       /*  36 */
	uint64_t start_time_ns;  /*  44 */
	uint64_t stop_time_ns;   /*  52 */
	uint64_t data_bytes;     /*  60 */
	uint64_t drop_count;     /*  68 */
	uint64_t first_seq;      /*  76 */
	char target[32];         /*  84 */
	char hostname[64];       /* 116 */
	uint8_t reserved[3916];  /* 180 */
};
_Static_assert(sizeof(struct fdrec_header) == NVT_HEADER_SIZE, "fdrec_header must be 4096 bytes");
_Static_assert(offsetof(struct fdrec_header, target) == 84, "fdrec_header layout");

enum nvt_file_format { NVT_FMT_NVTAPE = 0, NVT_FMT_FDREC = 1 };

/* A recording's description, whichever format it is in (host byte order). */
struct nvt_recording {
	enum nvt_file_format format;
	uint32_t version;
	uint32_t beat_bytes;
	uint32_t flags; /* NVT_FLAG_* (fdrec COMPLETE mapped to NVT_FLAG_COMPLETE) */
	uint32_t source_kind;
	uint32_t chunk_bytes, chunk_count, checkpoints;
	uint64_t rate_bps, start_ns, stop_ns, duration_ns;
	uint64_t data_offset, data_bytes, durable_bytes;
	uint64_t drop_count, drop_events, first_seq;
	uint64_t index_offset, index_bytes;
	uint32_t index_crc;
	uint32_t members; /* striped over this many members (0/1: one) */
	uint64_t stripe_bytes, member_offset;
	uint32_t io_path;     /* enum nvt_io_path */
	uint32_t drive_count; /* entries of drive[] */
	struct nvt_drive {
		char model[41], serial[21], firmware[9]; /* trimmed, NUL-terminated */
		uint32_t nsid, lba_bytes, max_cmd_kib;
	} drive[NVT_MAX_DRIVES];
	char hostname[65];
	char writer[33];      /* nvtape writer or fdrec target */
	char source_name[17]; /* registered source name ("" when the writer did not store one) */
	uint64_t generation;  /* header writes so far (version 2; 0 for older versions) */
	bool header_torn;     /* one header copy failed its check: the other one was used */
	/* derived by nvt_recording_open() */
	uint64_t file_bytes;  /* size of the file or device */
	uint64_t valid_bytes; /* data bytes a reader may trust: data_bytes, or the checkpoint */
	bool complete;
	char check[48]; /* counter-check specification stored with the data ("" none) */
	/* an interrupted recording whose header places its index outside the file (the drive
	 * lost the writes after it): the index is not used, the data up to the checkpoint is */
	bool index_dropped;
};

NVT_API uint32_t nvt_crc32c(uint32_t crc, const void *buf, size_t len);

/* Encode / decode. nvt_header_encode fills one slot with rec (rec->generation as it is);
 * nvt_header_block_encode counts a new generation in rec and writes it into its slot of the
 * header block blk4096, which must hold the block as it is on disk (the other slot stays);
 * the first generation goes to both. decode takes a header block (nvtape version 2 or 1,
 * FPGA Drive Recorder v1), validates magic, version, sizes and CRCs, takes the newest
 * valid slot and says what is wrong. */
NVT_API void nvt_header_encode(const struct nvt_recording *rec, struct nvt_header *slot);
NVT_API void nvt_header_block_encode(struct nvt_recording *rec, void *blk4096);
NVT_API void fdrec_header_encode(const struct nvt_recording *rec, struct fdrec_header *out);
NVT_API int nvt_header_decode(const void *blk4096, size_t len, struct nvt_recording *rec,
			      struct nvt_err *err);

/* Build the index holding the given drop events into buf (capacity cap, zero-padded to
 * NVT_BLOCK). Returns the padded length or -ENOSPC. *crc gets the CRC32C of the bytes. */
NVT_API long nvt_index_encode(const struct nvt_drop_event *ev, uint64_t n, void *buf, size_t cap,
			      uint64_t *used_bytes, uint32_t *crc);
/* Parse an index; drop events go to a malloc'ed array (*ev, *n). Unknown records are skipped. */
NVT_API int nvt_index_decode(const void *buf, size_t len, struct nvt_drop_event **ev, uint64_t *n,
			     struct nvt_err *err);

struct nvt_layout;
/* Read and check a recording's header: derived lengths, consistency with the file or member
 * sizes. Returns 0, or -1 with err set. */
NVT_API int nvt_recording_open(const struct nvt_layout *l, struct nvt_recording *rec,
			       struct nvt_err *err);
/* Is a writer alive on the recording? It holds each member file's lock (or each device
 * exclusively), as recover and meta find before they refuse. 1 when it is, with *pid the
 * writer's process (0 when the system does not say: a device held exclusively), 0 when no live
 * process holds it (an interrupted recording's writer died; a lock still held a moment after its
 * holder ended is waited for, up to two seconds), or -errno with err set. */
NVT_API int nvt_recording_writer(const struct nvt_layout *l, int *pid, struct nvt_err *err);
/* Read the index of a recording (no index: *n = 0). */
NVT_API int nvt_recording_read_index(const struct nvt_layout *l, const struct nvt_recording *rec,
				     struct nvt_drop_event **ev, uint64_t *n, struct nvt_err *err);
NVT_API const char *nvt_source_kind_name(uint32_t kind);

#ifdef __cplusplus
}
#endif

#endif

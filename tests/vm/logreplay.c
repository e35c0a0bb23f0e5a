/* SPDX-License-Identifier: MIT */
/* Replayer for device-mapper's log-writes target (the log format of
 * Documentation/admin-guide/device-mapper/log-writes.rst): lists the logged writes, flushes and
 * marks, and rebuilds the device state at any point of the log, including states a power cut can
 * leave behind a volatile write cache (writes after the last flush lost, reordered or partly
 * written). The guest's crash-consistency suite replays every flush point of a recording with it
 * and checks nvtape's recovery on each state; the pattern command gives that suite its ground
 * truth (how much test-pattern data a state really holds), independent of nvtape's own reader.
 *
 * Log layout: block 0 holds the super (magic, version, entry count, block size); the entries
 * follow from block 1, each one block with {sector, nr_sectors, flags, data_len}, followed by
 * nr_sectors blocks of data for a write (none for a flush, a discard or a mark; a mark's name
 * sits in its entry block after the 32-byte entry). Sectors count the target's logical blocks.
 * The kernel logs a write when a flush that was issued after it completes (FUA writes at once),
 * so the writes before a FLUSH entry are those the flush made durable. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MAGIC    0x6a736677736872ull
#define LOG_VERSION  1
#define F_FLUSH      (1u << 0)
#define F_FUA        (1u << 1)
#define F_DISCARD    (1u << 2)
#define F_MARK       (1u << 3)
#define F_META       (1u << 4)
#define MAX_COPY     (1u << 20)
#define BLOCK        4096u
#define BEATS_IN_BLK (BLOCK / 16)

struct entry {
	uint64_t sector, nr, flags, data_len;
	uint64_t data_pos; /* byte offset of the data in the log */
	char mark[64];
};

struct log {
	int fd;
	uint32_t bs; /* block size: the target's logical block size */
	uint64_t n;
	struct entry *e;
};

static void die(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "logreplay: ");
	fprintf(stderr, fmt, arg);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
	exit(1);
}

static uint64_t le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void pread_all(int fd, void *buf, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("short read of %s", what, n < 0 ? errno : EIO);
		done += (size_t)n;
	}
}

static void pwrite_all(int fd, const void *buf, size_t len, uint64_t off, const char *what)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write to %s failed", what, n < 0 ? errno : EIO);
		done += (size_t)n;
	}
}

static uint64_t dev_size(int fd, const char *path)
{
	struct stat st;
	uint64_t sz = 0;

	if (fstat(fd, &st))
		die("%s: stat", path, errno);
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &sz))
			die("%s: BLKGETSIZE64", path, errno);
		return sz;
	}
	return (uint64_t)st.st_size;
}

/* Every entry's position, checked against the log's length before anything is replayed. */
static void log_open(struct log *L, const char *path)
{
	unsigned char sb[512];
	uint64_t size, pos;

	L->fd = open(path, O_RDONLY);
	if (L->fd < 0)
		die("%s", path, errno);
	size = dev_size(L->fd, path);
	pread_all(L->fd, sb, sizeof(sb), 0, "the super block");
	if (le64(sb) != LOG_MAGIC || le64(sb + 8) != LOG_VERSION)
		die("%s: not a log-writes log (magic or version)", path, 0);
	L->n = le64(sb + 16);
	L->bs = (uint32_t)sb[24] | (uint32_t)sb[25] << 8 | (uint32_t)sb[26] << 16 |
		(uint32_t)sb[27] << 24;
	if (L->bs < 512 || L->bs > 65536 || (L->bs & (L->bs - 1)))
		die("%s: bad block size in the super block", path, 0);
	if (L->n > size / L->bs)
		die("%s: entry count larger than the log", path, 0);
	L->e = calloc(L->n ? L->n : 1, sizeof(*L->e));
	if (!L->e)
		die("%s", "out of memory", ENOMEM);
	pos = L->bs;
	for (uint64_t i = 0; i < L->n; i++) {
		struct entry *e = &L->e[i];
		unsigned char *blk = malloc(L->bs);
		if (!blk)
			die("%s", "out of memory", ENOMEM);
		if (pos > size - L->bs)
			die("%s: an entry lies past the end of the log", path, 0);
		pread_all(L->fd, blk, L->bs, pos, "an entry");
		e->sector = le64(blk);
		e->nr = le64(blk + 8);
		e->flags = le64(blk + 16);
		e->data_len = le64(blk + 24);
		if (e->flags & F_MARK) {
			size_t len = e->data_len < sizeof(e->mark) - 1 ? e->data_len
								       : sizeof(e->mark) - 1;
			if (e->data_len > L->bs - 32)
				die("%s: a mark longer than its block", path, 0);
			memcpy(e->mark, blk + 32, len);
		}
		free(blk);
		pos += L->bs;
		e->data_pos = pos;
		if (!(e->flags & (F_DISCARD | F_MARK))) {
			if (e->nr > (size - pos) / L->bs)
				die("%s: an entry's data lies past the end of the log", path, 0);
			pos += e->nr * L->bs;
		}
		if (e->sector > UINT64_MAX / L->bs - e->nr)
			die("%s: an entry's sector range overflows", path, 0);
	}
}

static void flag_names(uint64_t f, char *out)
{
	static const char *const names[] = {"FLUSH", "FUA", "DISCARD", "MARK", "META"};
	out[0] = 0;
	for (unsigned i = 0; i < 5; i++)
		if (f & (1u << i))
			strcat(strcat(out, out[0] ? "|" : ""), names[i]);
	if (!out[0])
		strcpy(out, "WRITE");
}

static void cmd_list(const struct log *L)
{
	char fl[64];

	printf("# %" PRIu64 " entries, %u-byte blocks\n", L->n, L->bs);
	for (uint64_t i = 0; i < L->n; i++) {
		const struct entry *e = &L->e[i];
		flag_names(e->flags, fl);
		printf("%" PRIu64 " %s off=%" PRIu64 " len=%" PRIu64 "%s%s\n", i, fl,
		       e->sector * L->bs, (e->flags & F_MARK) ? 0 : e->nr * L->bs,
		       e->mark[0] ? " mark=" : "", e->mark);
	}
}

/* Entries after which the device state is durable: a flush, or a FUA write. */
static void cmd_flushes(const struct log *L)
{
	for (uint64_t i = 0; i < L->n; i++)
		if (L->e[i].flags & (F_FLUSH | F_FUA))
			printf("%" PRIu64 "\n", i);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		die("bad %s", what, 0);
	return v;
}

static void *xalloc(size_t len)
{
	void *p = NULL;
	if (posix_memalign(&p, BLOCK, len))
		die("%s", "out of memory", ENOMEM);
	return p;
}

static void zero_range(int fd, bool blk, uint64_t off, uint64_t len, const char *what)
{
	static void *zero;
	uint64_t r[2] = {off, len};

	if (blk && ioctl(fd, BLKZEROOUT, r) == 0)
		return;
	if (!zero) {
		zero = xalloc(MAX_COPY);
		memset(zero, 0, MAX_COPY);
	}
	while (len) {
		size_t n = len < MAX_COPY ? (size_t)len : MAX_COPY;
		pwrite_all(fd, zero, n, off, what);
		off += n;
		len -= n;
	}
}

/* Write blocks [first, first + count) of entry e onto the target. */
static void apply(const struct log *L, const struct entry *e, int fd, bool blk, uint64_t first,
		  uint64_t count, const char *what)
{
	static void *buf;
	uint64_t off = (e->sector + first) * L->bs, len = count * L->bs;
	uint64_t src = e->data_pos + first * L->bs;

	if (e->flags & F_MARK)
		return;
	if (e->flags & F_DISCARD) { /* what a discard leaves is undefined: zeros */
		zero_range(fd, blk, off, len, what);
		return;
	}
	if (!buf)
		buf = xalloc(MAX_COPY);
	while (len) {
		size_t n = len < MAX_COPY ? (size_t)len : MAX_COPY;
		pread_all(L->fd, buf, n, src, "the log's data");
		pwrite_all(fd, buf, n, off, what);
		off += n;
		src += n;
		len -= n;
	}
}

static uint64_t rng_state;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int open_target(const char *path, bool *blk)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_DIRECT);

	if (fd < 0)
		die("%s", path, errno);
	if (fstat(fd, &st))
		die("%s: stat", path, errno);
	*blk = S_ISBLK(st.st_mode);
	return fd;
}

static void sync_target(int fd, const char *path)
{
	if (fsync(fd))
		die("%s: fsync", path, errno);
	close(fd);
}

/* replay LOG DEV FROM TO [--keep N | --random SEED [--atomic B]]: entries FROM..TO-1 onto DEV.
 * The entries after the last FLUSH in that range (all of them if it has none: DEV is taken to be
 * at a durable state already) sat in a volatile cache at TO: --keep N applies the first N of them
 * in order (a cache that wrote in order and lost the rest); --random SEED applies a random subset,
 * some partly (a random run of B-byte units, B = --atomic, default 4096), in log order so that
 * no older data lands over newer (a cache that reached the media in any order). FUA writes and
 * everything before the flush are applied in full. Without either option, everything is. */
static void cmd_replay(const struct log *L, int argc, char **argv)
{
	uint64_t from, to, keep = UINT64_MAX, atomic = BLOCK, last_flush, vol = 0, kept = 0,
			   partial = 0;
	bool random = false, blk;
	int fd;

	if (argc < 4)
		die("%s", "usage: replay LOG DEV FROM TO [--keep N | --random SEED [--atomic B]]",
		    0);
	from = parse_u64(argv[2], "FROM");
	to = parse_u64(argv[3], "TO");
	if (from > to || to > L->n)
		die("%s", "FROM..TO outside the log", 0);
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--keep") && i + 1 < argc) {
			keep = parse_u64(argv[++i], "--keep");
		} else if (!strcmp(argv[i], "--random") && i + 1 < argc) {
			rng_state = parse_u64(argv[++i], "--random") * 0x9e3779b97f4a7c15ull + 1;
			random = true;
		} else if (!strcmp(argv[i], "--atomic") && i + 1 < argc) {
			atomic = parse_u64(argv[++i], "--atomic");
		} else
			die("unknown option %s", argv[i], 0);
	}
	if (atomic < L->bs || atomic % L->bs)
		die("%s", "--atomic must be a multiple of the log's block size", 0);
	last_flush = from;
	for (uint64_t i = from; i < to; i++)
		if (L->e[i].flags & F_FLUSH)
			last_flush = i + 1;
	fd = open_target(argv[1], &blk);
	for (uint64_t i = from; i < to; i++) {
		const struct entry *e = &L->e[i];
		uint64_t units = atomic / L->bs, n = (e->nr + units - 1) / units;
		if (i < last_flush || (e->flags & (F_FUA | F_MARK)) || e->nr == 0) {
			apply(L, e, fd, blk, 0, e->nr, argv[1]);
			continue;
		}
		vol++;
		if (!random) {
			if (vol <= keep) {
				apply(L, e, fd, blk, 0, e->nr, argv[1]);
				kept++;
			}
			continue;
		}
		switch (rnd() % 4) {
		case 0: /* lost */
			break;
		case 3: { /* a run of its units reached the media */
			uint64_t s = rnd() % n, c = 1 + rnd() % (n - s);
			uint64_t first = s * units, cnt = c * units;
			if (first + cnt > e->nr)
				cnt = e->nr - first;
			apply(L, e, fd, blk, first, cnt, argv[1]);
			partial++;
			break;
		}
		default:
			apply(L, e, fd, blk, 0, e->nr, argv[1]);
			kept++;
		}
	}
	sync_target(fd, argv[1]);
	printf("replayed %" PRIu64 "..%" PRIu64 ": %" PRIu64 " volatile writes after the last "
	       "flush, %" PRIu64 " applied whole, %" PRIu64 " in part\n",
	       from, to, vol, kept, partial);
}

/* copy SRC DST BYTES | zero DEV BYTES: a fresh or a saved device state. */
static void cmd_copy(int argc, char **argv, bool zero)
{
	uint64_t len, off = 0;
	void *buf;
	bool blk;
	int in = -1, out;

	if (argc < (zero ? 2 : 3))
		die("%s", zero ? "usage: zero DEV BYTES" : "usage: copy SRC DST BYTES", 0);
	len = parse_u64(argv[zero ? 1 : 2], "BYTES");
	out = open_target(argv[zero ? 0 : 1], &blk);
	if (zero) {
		zero_range(out, blk, 0, len, argv[0]);
		sync_target(out, argv[0]);
		return;
	}
	in = open(argv[0], O_RDONLY | O_DIRECT);
	if (in < 0)
		die("%s", argv[0], errno);
	buf = xalloc(MAX_COPY);
	while (off < len) {
		size_t n = len - off < MAX_COPY ? (size_t)(len - off) : MAX_COPY;
		pread_all(in, buf, n, off, argv[0]);
		pwrite_all(out, buf, n, off, argv[1]);
		off += n;
	}
	close(in);
	sync_target(out, argv[1]);
}

/* pattern [--stripe B] [--upto U] OFFSET FILE...: the test-pattern data a state holds from OFFSET
 * (the data start), in 4 KiB blocks, through the md RAID0 layout when several members are given.
 * A block is pattern when its 256 beats are {seq, ~seq} with seq rising by one; valid= is the
 * length of the prefix of pattern blocks whose sequence only moves forward (drops are forward
 * jumps), with the leading pattern beats of a last partial block (the data's end), next= the
 * sequence number after it, upto_next= the one after the first U bytes of that prefix (so next -
 * upto_next beats of stream time lie between U and the prefix's end); last_nonzero= is the end of
 * the last block that is not all zeros, and zero_blocks= counts the all-zero blocks before it. */
static void cmd_pattern(int argc, char **argv)
{
	uint64_t stripe = 512 * 1024, off, size = UINT64_MAX, valid = 0, last_nz = 0, zeros = 0,
		 next = 0, pending = 0, upto = 0, upto_next = 0, pos;
	int fd[16], n, i = 0;
	bool in_prefix = true;
	uint64_t *b = xalloc(BLOCK);

	for (;;) {
		if (argc - i > 2 && !strcmp(argv[i], "--stripe"))
			stripe = parse_u64(argv[i + 1], "--stripe");
		else if (argc - i > 2 && !strcmp(argv[i], "--upto"))
			upto = parse_u64(argv[i + 1], "--upto");
		else
			break;
		i += 2;
	}
	if (argc - i < 2 || argc - i - 1 > 16 || stripe % BLOCK || !stripe)
		die("%s", "usage: pattern [--stripe B] [--upto U] OFFSET FILE...", 0);
	off = parse_u64(argv[i], "OFFSET");
	n = argc - i - 1;
	for (int m = 0; m < n; m++) {
		uint64_t sz;
		fd[m] = open(argv[i + 1 + m], O_RDONLY);
		if (fd[m] < 0)
			die("%s", argv[i + 1 + m], errno);
		sz = dev_size(fd[m], argv[i + 1 + m]);
		if (n > 1)
			sz -= sz % stripe;
		if (sz < size)
			size = sz;
	}
	if (n > 1 && size > UINT64_MAX / (uint64_t)n)
		die("%s", "members too large", 0);
	size *= (uint64_t)n;
	for (pos = off; pos <= size && size - pos >= BLOCK; pos += BLOCK) {
		uint64_t member = (pos / stripe) % (uint64_t)n;
		uint64_t moff = pos / (stripe * (uint64_t)n) * stripe + pos % stripe;
		uint64_t acc = 0;
		bool pat = true;
		pread_all(fd[member], b, BLOCK, moff, argv[i + 1 + member]);
		for (unsigned k = 0; k < BLOCK / 8; k++)
			acc |= b[k];
		if (!acc) {
			pending++;
			in_prefix = false;
			continue;
		}
		for (unsigned k = 0; k < BEATS_IN_BLK; k++)
			if (b[2 * k + 1] != ~b[2 * k] || b[2 * k] != b[0] + k)
				pat = false;
		if (in_prefix && pat && (valid == 0 || b[0] >= next)) {
			valid = pos + BLOCK - off;
			next = b[0] + BEATS_IN_BLK;
			if (valid <= upto)
				upto_next = next;
		} else if (in_prefix && (valid == 0 || b[0] >= next)) {
			/* the data's last, partial block: pattern beats that continue, then what
			 * the write's padding held (zeros, or older beats of the ring, which do not
			 * continue the sequence) */
			unsigned k = 0;
			while (k < BEATS_IN_BLK && b[2 * k + 1] == ~b[2 * k] &&
			       b[2 * k] == b[0] + k)
				k++;
			if (k) {
				valid = pos + k * 16 - off;
				next = b[0] + k;
				if (valid <= upto)
					upto_next = next;
			}
			in_prefix = false;
		} else
			in_prefix = false;
		last_nz = pos + BLOCK - off;
		zeros += pending; /* only zero blocks below a non-zero one count */
		pending = 0;
	}
	printf("valid=%" PRIu64 " next=%" PRIu64 " upto_next=%" PRIu64 " last_nonzero=%" PRIu64
	       " zero_blocks=%" PRIu64 "\n",
	       valid, next, upto_next, last_nz, zeros);
	for (int m = 0; m < n; m++)
		close(fd[m]);
	free(b);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: logreplay list LOG | flushes LOG | mark LOG NAME\n"
		"       logreplay replay LOG DEV FROM TO [--keep N | --random SEED [--atomic B]]\n"
		"       logreplay copy SRC DST BYTES | zero DEV BYTES\n"
		"       logreplay pattern [--stripe B] [--upto U] OFFSET FILE...\n");
	return 64;
}

int main(int argc, char **argv)
{
	struct log L;

	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "copy") || !strcmp(argv[1], "zero")) {
		cmd_copy(argc - 2, argv + 2, argv[1][0] == 'z');
		return 0;
	}
	if (!strcmp(argv[1], "pattern")) {
		cmd_pattern(argc - 2, argv + 2);
		return 0;
	}
	if (strcmp(argv[1], "list") && strcmp(argv[1], "flushes") && strcmp(argv[1], "mark") &&
	    strcmp(argv[1], "replay"))
		return usage();
	log_open(&L, argv[2]);
	if (!strcmp(argv[1], "list"))
		cmd_list(&L);
	else if (!strcmp(argv[1], "flushes"))
		cmd_flushes(&L);
	else if (!strcmp(argv[1], "mark")) {
		if (argc < 4)
			return usage();
		for (uint64_t i = 0; i < L.n; i++)
			if (!strcmp(L.e[i].mark, argv[3])) {
				printf("%" PRIu64 "\n", i);
				return 0;
			}
		die("no mark %s in the log", argv[3], 0);
	} else
		cmd_replay(&L, argc - 2, argv + 2);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/* Unit tests of the header-only producer client (include/nvtape/producer.h) against a fake
 * nvtape on a socket in a temporary directory: where names' sockets live, the reasons nvtape
 * gives for a refusal reach p.error, close() returns nvtape's verdict (a failure, success, or
 * nvtape gone without one), and, as root, a socket another user listens on is refused before
 * anything is sent to it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "nvtape/producer.h"

static char dir[64], path[96];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/nvt-producer.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

static int listen_at(const char *p)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
	unlink(p);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* What the fake nvtape does with its one connection. */
enum act { REFUSE_BUSY, REFUSE_ERROR, VERDICT_FAIL, VERDICT_OK, VANISH };

struct fake {
	int lsock;
	enum act act;
	char hello[64]; /* what the producer said */
};

static void send_ring(int fd)
{
	const char hello[] = NVT_SHM_HELLO;
	int fds[4];
	struct nvt_shm_ctl *c;
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {(void *)hello, sizeof(hello)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	fds[0] = memfd_create("ctl", MFD_CLOEXEC);
	fds[1] = memfd_create("ring", MFD_CLOEXEC);
	fds[2] = eventfd(0, EFD_CLOEXEC);
	fds[3] = eventfd(0, EFD_CLOEXEC);
	assert_int_equal(ftruncate(fds[0], 4096), 0);
	assert_int_equal(ftruncate(fds[1], 65536), 0);
	c = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	assert_true(c != MAP_FAILED);
	c->magic = NVT_SHM_MAGIC;
	c->version = NVT_SHM_VERSION;
	c->features = NVT_SHM_F_END;
	c->unit_bytes = 1;
	c->chunk_bytes = 16384;
	c->nchunks = 4;
	c->ring_bytes = c->map_bytes = 65536;
	c->limit = 65536;
	munmap(c, 4096);
	memset(&u, 0, sizeof(u));
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&m);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	assert_int_equal(sendmsg(fd, &m, MSG_NOSIGNAL), (ssize_t)sizeof(hello));
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}

static void *fake_nvtape(void *arg)
{
	struct fake *f = arg;
	int fd = accept4(f->lsock, NULL, NULL, SOCK_CLOEXEC);
	static const char busy[] = "busy\0shm X: busy: another producer (pid 7) is attached";
	static const char error[] = "error\0shm X: expected the hello";
	static const char fail[] = "nvtape-end 28 4096\0no space left on the device: kept 4096";
	static const char ok[] = "nvtape-end 0 4096\0";
	char end[8];

	assert_true(fd >= 0);
	assert_true(recv(fd, f->hello, sizeof(f->hello) - 1, 0) > 0);
	switch (f->act) {
	case REFUSE_BUSY:
		send(fd, busy, sizeof(busy), MSG_NOSIGNAL);
		break;
	case REFUSE_ERROR:
		send(fd, error, sizeof(error), MSG_NOSIGNAL);
		break;
	default:
		send_ring(fd);
		/* the verdict comes a moment after the attach: close() waits for it */
		usleep(100000);
		if (f->act == VERDICT_FAIL)
			send(fd, fail, sizeof(fail), MSG_NOSIGNAL);
		else if (f->act == VERDICT_OK)
			send(fd, ok, sizeof(ok), MSG_NOSIGNAL);
		if (f->act != VANISH) /* (gone without a verdict at once) */
			assert_int_equal(recv(fd, end, sizeof(end), 0),
					 0); /* the producer closed */
		break;
	}
	close(fd);
	return NULL;
}

static int run(enum act act, struct nvt_producer *p, int *close_rc)
{
	struct fake f = {.lsock = listen_at(path), .act = act};
	pthread_t th;
	int rc;

	assert_int_equal(pthread_create(&th, NULL, fake_nvtape, &f), 0);
	rc = nvt_producer_connect(p, path);
	if (!rc)
		*close_rc = nvt_producer_close(p);
	pthread_join(th, NULL);
	close(f.lsock);
	assert_string_equal(f.hello, NVT_SHM_ATTACH);
	return rc;
}

static void test_address(void **state)
{
	struct sockaddr_un a;
	char d[108], want[160];
	char long_name[200];

	(void)state;
	assert_int_equal(nvt_shm_address("/x/y.sock", &a), 0);
	assert_string_equal(a.sun_path, "/x/y.sock");
	assert_int_equal(nvt_shm_address("", &a), -EINVAL);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = 0;
	assert_int_equal(nvt_shm_address(long_name, &a), -ENAMETOOLONG);
	setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
	assert_int_equal(nvt_shm_dir(d, sizeof(d)), 0);
	if (geteuid() == 0) {
		assert_string_equal(d, "/run/nvtape"); /* root never in a user's directory */
	} else {
		assert_string_equal(d, "/run/user/4242");
		setenv("XDG_RUNTIME_DIR", "relative", 1);
		assert_int_equal(nvt_shm_dir(d, sizeof(d)), 0);
		snprintf(want, sizeof(want), "/tmp/nvtape-%u", (unsigned)geteuid());
		assert_string_equal(d, want);
	}
	unsetenv("XDG_RUNTIME_DIR");
	assert_int_equal(nvt_shm_dir(d, sizeof(d)), 0);
	snprintf(want, sizeof(want), "%s", geteuid() ? "/tmp/nvtape-" : "/run/nvtape");
	assert_memory_equal(d, want, strlen(want));
	assert_int_equal(nvt_shm_address("run1", &a), 0);
	snprintf(want, sizeof(want), "%s/nvtape-run1.sock", d);
	assert_string_equal(a.sun_path, want);
}

static void test_refusals_say_why(void **state)
{
	struct nvt_producer p;
	int crc = 0;

	(void)state;
	assert_int_equal(run(REFUSE_BUSY, &p, &crc), -EBUSY);
	assert_string_equal(p.error, "shm X: busy: another producer (pid 7) is attached");
	assert_int_equal(run(REFUSE_ERROR, &p, &crc), -EPROTO);
	assert_string_equal(p.error, "shm X: expected the hello");
	unlink(path);
	assert_int_equal(nvt_producer_connect(&p, path), -ENOENT);
	assert_non_null(strstr(p.error, "nobody listens there"));
	assert_non_null(strstr(p.error, path));
}

static void test_verdict(void **state)
{
	struct nvt_producer p;
	int crc = 1;

	(void)state;
	assert_int_equal(run(VERDICT_FAIL, &p, &crc), 0);
	assert_int_equal(crc, -ENOSPC);
	assert_string_equal(p.error,
			    "the recording failed: no space left on the device: kept 4096");
	assert_int_equal(p.sock, -1);
	assert_int_equal(run(VERDICT_OK, &p, &crc), 0);
	assert_int_equal(crc, 0);
	assert_string_equal(p.error, "");
	assert_int_equal(run(VANISH, &p, &crc), 0);
	assert_int_equal(crc, -EPIPE);
	assert_non_null(strstr(p.error, "went away before saying"));
}

/* As root: a child of another uid listens; the producer refuses it before sending a byte. */
static void test_other_user_refused(void **state)
{
	struct nvt_producer p;
	int sync[2], st;
	char got = 0;
	pid_t child;

	(void)state;
	if (geteuid() != 0)
		skip(); /* needs another uid */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(pipe(sync), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char b[64];
		int l, c;
		ssize_t n;
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		l = listen_at(path);
		n = write(sync[1], "L", 1);
		(void)n;
		c = accept(l, NULL, NULL);
		n = recv(c, b, sizeof(b), 0); /* 0: it closed without a word */
		_exit(n == 0 ? 0 : 1);
	}
	assert_int_equal(read(sync[0], &got, 1), 1);
	assert_int_equal(nvt_producer_connect(&p, path), -EACCES);
	assert_non_null(strstr(p.error, "answered by uid 65534"));
	assert_non_null(strstr(p.error, path));
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0); /* it received nothing */
	close(sync[0]);
	close(sync[1]);
	chmod(dir, 0700);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_say_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_user_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

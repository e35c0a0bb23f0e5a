/* SPDX-License-Identifier: MIT */
/* Unit tests: size, rate, duration and integer parsing; the dev source's loss counter; the
 * latency histogram. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nvtape/units.h"
#include "stream/source_dev.h"
#include "util/hist.h"
#include "util/mul.h"

static void test_sizes(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(nvt_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(nvt_parse_size("8M", &v), 0);
	assert_int_equal(v, 8u << 20);
	assert_int_equal(nvt_parse_size("8MiB", &v), 0);
	assert_int_equal(v, 8u << 20);
	assert_int_equal(nvt_parse_size("1500MB", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(nvt_parse_size("1500MB/s", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(nvt_parse_size("1.5G", &v), 0);
	assert_int_equal(v, 1610612736ull);
	assert_int_equal(nvt_parse_size("2T", &v), 0);
	assert_int_equal(v, 2ull << 40);
	assert_int_equal(nvt_parse_size("3kb", &v), 0);
	assert_int_equal(v, 3000);
	assert_int_equal(nvt_parse_size("1TB", &v), 0);
	assert_int_equal(v, 1000000000000ull);
}

static void test_bad_sizes(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_not_equal(nvt_parse_size("", &v), 0);
	assert_int_not_equal(nvt_parse_size("-1", &v), 0);
	assert_int_not_equal(nvt_parse_size("abc", &v), 0);
	assert_int_not_equal(nvt_parse_size("8X", &v), 0);
	assert_int_not_equal(nvt_parse_size("8 M M", &v), 0);
	assert_int_not_equal(nvt_parse_size("inf", &v), 0);
	assert_int_not_equal(nvt_parse_size("nan", &v), 0);
	assert_int_equal(nvt_parse_size("100000000T", &v), -ERANGE);
	/* strtod reads hexadecimal: 0x10 was 16 */
	assert_int_not_equal(nvt_parse_size("0x10", &v), 0);
	assert_int_not_equal(nvt_parse_size("0X1p4", &v), 0);
	assert_int_not_equal(nvt_parse_size(" 0x10M", &v), 0);
	assert_int_not_equal(nvt_parse_rate("0x10", &v), 0);
	assert_int_not_equal(nvt_parse_rate("0x10Mbps", &v), 0);
	assert_int_not_equal(nvt_parse_duration_ns("0x10", &v), 0);
}

static void test_rates_bytes(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(nvt_parse_rate("1500MB", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(nvt_parse_rate("1500MB/s", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(nvt_parse_rate("1.5G", &v), 0);
	assert_int_equal(v, 1610612736ull);
	assert_int_equal(nvt_parse_rate("12GB", &v), 0);
	assert_int_equal(v, 12000000000ull);
	assert_int_equal(nvt_parse_rate("8MiB/s", &v), 0);
	assert_int_equal(v, 8u << 20);
	assert_int_equal(nvt_parse_rate("200MBps", &v), 0);
	assert_int_equal(v, 200000000ull);
	assert_int_equal(nvt_parse_rate("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(nvt_parse_rate("64B", &v), 0);
	assert_int_equal(v, 64);
}

static void test_rates_bits(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(nvt_parse_rate("12Gbps", &v), 0);
	assert_int_equal(v, 1500000000ull);
	assert_int_equal(nvt_parse_rate("100Mbps", &v), 0);
	assert_int_equal(v, 12500000ull);
	assert_int_equal(nvt_parse_rate("100mbps", &v), 0);
	assert_int_equal(v, 12500000ull);
	assert_int_equal(nvt_parse_rate("800Kbps", &v), 0);
	assert_int_equal(v, 100000ull);
	assert_int_equal(nvt_parse_rate("800kbps", &v), 0);
	assert_int_equal(v, 100000ull);
	assert_int_equal(nvt_parse_rate("2.5Gbit/s", &v), 0);
	assert_int_equal(v, 312500000ull);
	assert_int_equal(nvt_parse_rate("800Mbit/s", &v), 0);
	assert_int_equal(v, 100000000ull);
	assert_int_equal(nvt_parse_rate("64kbit/s", &v), 0);
	assert_int_equal(v, 8000ull);
	assert_int_equal(nvt_parse_rate("64kbit", &v), 0);
	assert_int_equal(v, 8000ull);
	assert_int_equal(nvt_parse_rate("1Tbps", &v), 0);
	assert_int_equal(v, 125000000000ull);
	assert_int_equal(nvt_parse_rate("8000bps", &v), 0);
	assert_int_equal(v, 1000);
	/* not a whole number of bytes: the nearest byte per second */
	assert_int_equal(nvt_parse_rate("1001bps", &v), 0);
	assert_int_equal(v, 125);
	assert_int_equal(nvt_parse_rate("1005bps", &v), 0);
	assert_int_equal(v, 126);
}

static void test_rates_refused(void **state)
{
	uint64_t v = 7;
	(void)state;
	/* a lowercase b reads as bytes or bits */
	assert_int_equal(nvt_parse_rate("12Gb", &v), -EDOM);
	assert_int_equal(nvt_parse_rate("100mb", &v), -EDOM);
	assert_int_equal(nvt_parse_rate("100mb/s", &v), -EDOM);
	assert_int_equal(nvt_parse_rate("3kb", &v), -EDOM);
	assert_int_equal(nvt_parse_rate("8kib", &v), -EDOM);
	assert_int_equal(nvt_parse_rate("16b", &v), -EDOM);
	assert_int_equal(v, 7);
	/* sizes keep reading a lowercase b as bytes */
	assert_int_equal(nvt_parse_size("100mb", &v), 0);
	assert_int_equal(v, 100000000ull);
	assert_int_equal(nvt_parse_rate("12Gbps/s", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("12Gbits", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("fast", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("-1Gbps", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("12Xbps", &v), -EINVAL);
	assert_int_equal(nvt_parse_rate("1e30Tbps", &v), -ERANGE);
	assert_int_equal(nvt_parse_rate("100000000T", &v), -ERANGE);
}

static void test_durations(void **state)
{
	uint64_t ns;
	(void)state;
	assert_int_equal(nvt_parse_duration_ns("10", &ns), 0);
	assert_int_equal(ns, 10000000000ull);
	assert_int_equal(nvt_parse_duration_ns("2.5", &ns), 0);
	assert_int_equal(ns, 2500000000ull);
	assert_int_equal(nvt_parse_duration_ns("500ms", &ns), 0);
	assert_int_equal(ns, 500000000ull);
	assert_int_equal(nvt_parse_duration_ns("3m", &ns), 0);
	assert_int_equal(ns, 180000000000ull);
	assert_int_not_equal(nvt_parse_duration_ns("3x", &ns), 0);
	assert_int_not_equal(nvt_parse_duration_ns("-3", &ns), 0);
}

static void test_uint(void **state)
{
	uint64_t v;
	(void)state;
	assert_int_equal(nvt_parse_uint("32", 2, 64, &v), 0);
	assert_int_equal(v, 32);
	assert_int_equal(nvt_parse_uint("1", 2, 64, &v), -ERANGE);
	assert_int_equal(nvt_parse_uint("65", 2, 64, &v), -ERANGE);
	assert_int_equal(nvt_parse_uint("3k", 2, 64, &v), -EINVAL);
	assert_int_equal(nvt_parse_uint("-3", 0, 64, &v), -EINVAL);
}

static void test_hist(void **state)
{
	static struct nvt_hist h;
	(void)state;
	assert_int_equal(nvt_hist_pct(&h, 50), 0);
	for (uint64_t ms = 1; ms <= 100; ms++) /* 1 ms .. 100 ms */
		nvt_hist_add(&h, ms * 1000000u);
	uint64_t p50 = nvt_hist_pct(&h, 50), p99 = nvt_hist_pct(&h, 99);
	assert_true(p50 >= 50000000u && p50 <= 50000000u / 8u * 9u);
	assert_true(p99 >= 99000000u && p99 <= 100000000u);
	assert_int_equal(nvt_hist_pct(&h, 100), 100000000u);
	nvt_hist_add(&h, 3u); /* below a microsecond */
	nvt_hist_add(&h, UINT64_MAX);
	assert_int_equal(nvt_hist_pct(&h, 100), UINT64_MAX);
	assert_true(nvt_hist_pct(&h, 0.5) < 1000u); /* the smallest of 102 */
}

/* --drops-from: decimal or 0x hex, whitespace around, every overflow refused */
static void test_dev_counter(void **state)
{
	uint64_t v = 7;
	(void)state;
	assert_int_equal(nvt_dev_parse_counter("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(nvt_dev_parse_counter("  1234\n", &v), 0);
	assert_int_equal(v, 1234);
	assert_int_equal(nvt_dev_parse_counter("\t0x1F\r\n", &v), 0);
	assert_int_equal(v, 31);
	assert_int_equal(nvt_dev_parse_counter("0Xff", &v), 0);
	assert_int_equal(v, 255);
	assert_int_equal(nvt_dev_parse_counter("0012", &v), 0); /* decimal, not octal */
	assert_int_equal(v, 12);
	assert_int_equal(nvt_dev_parse_counter("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(nvt_dev_parse_counter("0xffffffffffffffff\n", &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(nvt_dev_parse_counter("18446744073709551616", &v), -ERANGE);
	assert_int_equal(nvt_dev_parse_counter("99999999999999999999", &v), -ERANGE);
	assert_int_equal(nvt_dev_parse_counter("0x10000000000000000", &v), -ERANGE);
	assert_int_equal(nvt_dev_parse_counter("", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter(" \n", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("0x", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("-1", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("+1", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("12 apples", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("1 2", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("12a", &v), -EINVAL);
	assert_int_equal(nvt_dev_parse_counter("0x1g", &v), -EINVAL);
	assert_int_equal(v, 7);
}

/* products of counts and unit sizes compared exactly, far beyond 64 bits */
static void test_mul_cmp(void **state)
{
	uint64_t hi, lo;
	(void)state;
	nvt_mul128(UINT64_MAX, UINT64_MAX, &hi, &lo); /* (2^64 - 1)^2 = 2^128 - 2^65 + 1 */
	assert_true(hi == UINT64_MAX - 1 && lo == 1);
	nvt_mul128(1ull << 63, 16, &hi, &lo);
	assert_true(hi == 8 && lo == 0);
	assert_int_equal(nvt_mul_cmp(10, 4096, 40960, 1), 0);
	assert_int_equal(nvt_mul_cmp(10, 4096, 40961, 1), -1);
	assert_int_equal(nvt_mul_cmp(1ull << 63, 16, (1ull << 63) + 1, 16), -1); /* no saturation */
	assert_int_equal(nvt_mul_cmp(UINT64_MAX, 16, UINT64_MAX / 2, 32), 1);
	assert_int_equal(nvt_mul_cmp(0, 16, 0, 1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),         cmocka_unit_test(test_bad_sizes),
		cmocka_unit_test(test_rates_bytes),   cmocka_unit_test(test_rates_bits),
		cmocka_unit_test(test_rates_refused), cmocka_unit_test(test_durations),
		cmocka_unit_test(test_uint),          cmocka_unit_test(test_dev_counter),
		cmocka_unit_test(test_hist),          cmocka_unit_test(test_mul_cmp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* Unit tests: NVMe completion status decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "storage/nvme/nvme_status.h"

static void test_decode(void **state)
{
	char buf[128];
	(void)state;
	assert_string_equal(nvt_nvme_status_str(0x0080, buf, sizeof(buf)),
			    "NVMe Generic: LBA Out of Range (SCT 0, SC 0x80)");
	assert_string_equal(
		nvt_nvme_status_str(0x0281, buf, sizeof(buf)),
		"NVMe Media and Data Integrity: Unrecovered Read Error (SCT 2, SC 0x81)");
	assert_string_equal(nvt_nvme_status_str(0x0002, buf, sizeof(buf)),
			    "NVMe Generic: Invalid Field in Command (SCT 0, SC 0x02)");
	assert_non_null(strstr(nvt_nvme_status_str(0x07ff, buf, sizeof(buf)), "Vendor Specific"));
	assert_non_null(strstr(nvt_nvme_status_str(0x0033, buf, sizeof(buf)), "unknown status"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_decode)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/gtest_skip_main.cpp — the main() of every GoogleTest binary: runs all tests and
// exits 77 (ctest SKIP_RETURN_CODE: reported "Skipped") when none passed, none failed
// and at least one called GTEST_SKIP; otherwise RUN_ALL_TESTS's status (0 or 1).
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const testing::UnitTest& u = *testing::UnitTest::GetInstance();
  if (rc == 0 && u.successful_test_count() == 0 && u.failed_test_count() == 0 && u.skipped_test_count() > 0)
    return 77;
  return rc;
}

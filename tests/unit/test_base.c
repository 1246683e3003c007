/* Unit tests of src/base: size and boolean parsing, environment scanning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/env.h"
#include "base/size.h"

static void parse_size_accepts_bytes_and_suffixes(void **state) {
  (void)state;
  size_t v;
  assert_int_equal(hh__parse_size("0", &v), 0), assert_int_equal(v, 0);
  assert_int_equal(hh__parse_size("1000000", &v), 0), assert_int_equal(v, 1000000);
  assert_int_equal(hh__parse_size("64K", &v), 0), assert_int_equal(v, 64 * 1024);
  assert_int_equal(hh__parse_size("64k", &v), 0), assert_int_equal(v, 64 * 1024);
  assert_int_equal(hh__parse_size("512M", &v), 0), assert_int_equal(v, 512u << 20);
  assert_int_equal(hh__parse_size("1G", &v), 0), assert_int_equal(v, 1u << 30);
  assert_int_equal(hh__parse_size("6GiB", &v), 0), assert_int_equal(v, (size_t)6 << 30);
  assert_int_equal(hh__parse_size("2MB", &v), 0), assert_int_equal(v, 2u << 20);
  assert_int_equal(hh__parse_size("1T", &v), 0), assert_int_equal(v, (size_t)1 << 40);
  assert_int_equal(hh__parse_size("100B", &v), 0), assert_int_equal(v, 100);
}

static void parse_size_rejects_what_is_not_a_size(void **state) {
  (void)state;
  size_t v = 7;
  const char *bad[] = {
      "", "abc", "-1", "12X", "1.5G", "10 M", "0x100", "1KK", "18446744073709551616", "17179869184G", " 1"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(hh__parse_size(bad[i], &v), -1);
  }
  assert_int_equal(hh__parse_size(NULL, &v), -1);
  assert_int_equal(v, 7);
}

static void parse_bool_words(void **state) {
  (void)state;
  bool b;
  const char *yes[] = {"1", "true", "TRUE", "yes", "On"};
  const char *no[] = {"0", "false", "No", "off"};
  for (size_t i = 0; i < 5; i++) assert_true(hh__parse_bool(yes[i], &b) == 0 && b);
  for (size_t i = 0; i < 4; i++) assert_true(hh__parse_bool(no[i], &b) == 0 && !b);
  assert_int_equal(hh__parse_bool("2", &b), -1);
  assert_int_equal(hh__parse_bool("yess", &b), -1);
  assert_int_equal(hh__parse_bool("", &b), -1);
}

static void env_get_matches_whole_names(void **state) {
  (void)state;
  setenv("HH_TEST_VAR", "value", 1);
  setenv("HH_TEST_VARX", "other", 1);
  assert_true(hh__env_ready());
  assert_string_equal(hh__env_get("HH_TEST_VAR"), "value");
  assert_string_equal(hh__env_get("HH_TEST_VARX"), "other");
  assert_null(hh__env_get("HH_TEST_VA"));
  assert_null(hh__env_get("HH_TEST_UNSET"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parse_size_accepts_bytes_and_suffixes),
      cmocka_unit_test(parse_size_rejects_what_is_not_a_size),
      cmocka_unit_test(parse_bool_words),
      cmocka_unit_test(env_get_matches_whole_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

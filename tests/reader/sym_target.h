#ifndef HH_TESTS_SYM_TARGET_H
#define HH_TESTS_SYM_TARGET_H
#ifdef __cplusplus
extern "C" {
#endif
extern int sym_plain_line, sym_inline_line, sym_outer_line, sym_alloc_line, sym_cxx_line, sym_lambda_line;
void *hh_test_capture(void);
void *sym_plain_caller(void);
void *sym_outer_with_inline(void);
void *hh__test_fake_alloc(void);
void *sym_cxx_caller(void);
void *sym_cxx_lambda_caller(void);
#ifdef __cplusplus
}
#endif
#endif

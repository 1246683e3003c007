/* The counts recorder's query for the public API. */
#ifndef HH_RECORD_COUNTS_H
#define HH_RECORD_COUNTS_H
/* Copies this thread's per-function call counts (hh_fn order) into out;
 * returns how many, or -1 when the counts recorder is not enabled. */
int hh__counts_thread(unsigned long long *out, int n);
#endif

/* libpreloaded_heaptrack.so records a trace unless HEAPHOOK_RECORD says
 * otherwise (see hh__default_record in hook/runtime.c). */
extern const char hh__default_record[];
const char hh__default_record[] = "trace";

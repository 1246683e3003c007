/* The tracer recorder (HEAPHOOK_RECORD=trace): every malloc-family event
 * with its time, thread and call stack, written to a trace file
 * (docs/trace-format.md). The hook layer calls hh__trace_marker for the
 * public hh_marker(). */
#ifndef HH_RECORD_TRACE_TRACE_H
#define HH_RECORD_TRACE_TRACE_H

#include "record/recorder.h"

extern const hh_recorder hh__trace_recorder;

/* Writes a MARKER record (nothing when the tracer is not recording). */
void hh__trace_marker(const char *name);

#endif

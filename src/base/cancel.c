/* The flag of base/cancel.h's gated stretches. */
#include "base/cancel.h"

_Atomic(bool) hh__unwind_seen;

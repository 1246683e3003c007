/* The per-thread recursion guard.
 *
 * Set while the hook runs its own code that may allocate (start-up, recorder
 * callbacks). An allocation made while it is set is served without being
 * recorded (or from the bootstrap arena during start-up), so nothing recurses.
 * initial-exec TLS: a dynamic-TLS access would itself call into malloc
 * through __tls_get_addr the first time a thread touches it. */
#ifndef HH_HOOK_GUARD_H
#define HH_HOOK_GUARD_H

#include <stdbool.h>

extern __thread bool hh__in_hook __attribute__((tls_model("initial-exec")));

#endif

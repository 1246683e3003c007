/* Forks and the recorders' stop at exit take turns.
 *
 * The stop at exit (src/hook/entry.c) holds stdio's list lock while it
 * takes the locks of the tracer and of the TLSF allocator; glibc's fork
 * takes those in the hook's fork handlers first and stdio's list lock
 * after them. A thread that forked while another exited waited for the
 * list lock holding the hook's locks, which the exiting thread waited for:
 * the process hung, for good (a thread pool that spawns a child while
 * main returns). The gate puts both in one order: a fork passes it before
 * the hook's other fork handlers take anything, and the stop closes it
 * before it takes the list lock, once the forks under way are through;
 * a fork that comes later waits until the stop is done. */
#ifndef HH_HOOK_FORK_GATE_H
#define HH_HOOK_FORK_GATE_H

/* Registers the gate's fork handlers: at the end of the start-up, after
 * every fork handler of the hook that takes a lock, so that its own runs
 * before them (glibc runs prepare handlers last registered first). */
void hh__fork_gate_register(void);

/* Closes the gate: waits for the forks that have passed it to finish (at
 * most about HH_FORK_GATE_WAIT_MS), and keeps new ones out until
 * hh__fork_gate_open. A fork from a signal handler on the closing thread
 * passes, and the closing thread does not wait for a fork of its own that
 * a signal handler interrupted (either would wait for itself). */
#define HH_FORK_GATE_WAIT_MS 2000u
void hh__fork_gate_close(void);
void hh__fork_gate_open(void);

#endif

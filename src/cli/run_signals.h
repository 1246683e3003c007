/* What `heaphook run` does with the signals sent to it while its program
 * runs (run_signals.c): a signal a process sends it (a supervisor's
 * SIGTERM, ROS 2 launch's SIGINT, kill -HUP) is passed on to the program,
 * whose end heaphook then reports as usual; one the terminal sends (Ctrl-C,
 * Ctrl-\, a hang-up) reaches the program by itself, as it does every
 * process of the foreground group, and heaphook ignores it, as system(3)
 * does. A signal heaphook was started ignoring (nohup's SIGHUP, a
 * background job's SIGINT) stays ignored, as the program inherits it. A
 * signal a process sends to the whole process group (timeout's kill(0),
 * kill -- -PGID) reaches the program twice: directly, and passed on. */
#ifndef HH_CLI_RUN_SIGNALS_H
#define HH_CLI_RUN_SIGNALS_H

#include <sys/types.h>

/* Before the fork: the signals passed on are held (blocked) until the
 * program's pid is known. */
void hh_run_signals_hold(void);
/* In the child, before exec: the actions and mask heaphook found. */
void hh_run_signals_child(void);
/* In the parent: pass the signals on to pid from now on. */
void hh_run_signals_forward(pid_t pid);
/* After the program ended: the actions and mask heaphook found. */
void hh_run_signals_restore(void);

#endif

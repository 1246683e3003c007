/* The trace recorder: HEAPHOOK_RECORD=trace, libpreloaded_heaptrack.so.
 *
 * Each thread encodes its events into its own buffer (mmap'd, 256 KiB) with
 * no lock: a record is a type byte and varints, times and addresses as
 * deltas from the previous record of the chunk. A full buffer (or one whose
 * first event is older than about a second) is handed to the writer thread
 * and its helpers (below), which transcode, compress and write it as one
 * chunk; in sampled mode, or when no writer could be started, the thread
 * does so itself. Stacks come from stacks.c (a per-thread cache
 * in front of libunwind) as ids whose definitions go to the process buffer,
 * which is written before any thread's chunk.
 *
 * Options (read at start, see docs/trace-format.md "Writing a trace"):
 *   HEAPHOOK_OUTPUT         trace path, "%p" = pid (default heaplog.%p.hhtrace)
 *   HEAPHOOK_TRACE_SAMPLE   bytes: Poisson sampling, one sample per that many
 *                           bytes on average (0 or unset: every event); the
 *                           hook's sampler draws the samples (sample_period)
 *   HEAPHOOK_TRACE_STACKS   0: no call stacks (stack id 0)
 *   HEAPHOOK_TRACE_CHILDREN 0: forked children and exec'd programs do not trace
 *   HEAPHOOK_TRACE_WRITERS  threads that compress and write full buffers,
 *                           1-8 (default: a quarter of the processors the
 *                           process may run on, 1 to 4)
 *
 * At exit every thread's buffer is written, those of threads that ended
 * included, then END.
 *
 * Thread states are never unmapped (a late free of an ending thread, or of
 * a thread that outlives the exit, must not touch freed memory) but they are
 * reused: once a thread has ended in the kernel and its last chunk is
 * written, its state goes on a free list for the next new thread (with a
 * new thread index and its model emptied), so that a program that starts a
 * thread per request keeps as many states as it has threads at once
 * (reclaim_ended_locked). */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/backoff.h"
#include "base/cancel.h"
#include "base/env.h"
#include "base/handlers.h"
#include "base/log.h"
#include "base/size.h"
#include "event_clock.h"
#include "internal.h"
#include "trace.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define IE __attribute__((tls_model("initial-exec")))

#define BUF_CAP HH_TR_BUF_CAP
#define BUF_ROOM 96    /* the most one event appends: SAMPLE_WEIGHT + REALLOC */
#define THREAD_ROOM 40 /* a THREAD record, kept free at the end of a buffer (handover_begin) */

/* A state's life (tstate.life). A state never leaves the list of all
 * states, so the walkers of that list (the writer's idle scan, exec's
 * provisional chunks, the exit's flush) need no more than its lock: a free
 * state holds no event (committed 0), and it becomes a new thread's under
 * its lock, before that thread commits any. */
enum {
  LIFE_LIVE,  /* its thread runs (and records in it) */
  LIFE_ENDED, /* on_thread_exit has run: the thread may still record late frees until the kernel ends it */
  LIFE_FREE,  /* on free_states, its last chunk written: the next new thread takes it */
};

typedef struct tstate {
  struct tstate *next;      /* all threads' states, newest first; never freed, never unlinked */
  struct tstate *free_next; /* on free_states */
  atomic_int life;          /* LIFE_* */
  uint32_t index;           /* thread index in the trace, from 1; new at each reuse */
  int tid;
  char name[16];
  bool need_thread; /* THREAD record due at the next chunk's start */
  bool closed;      /* written at exit: later flushes drop the buffer */
  bool dead;        /* closed and full: events are dropped */
  atomic_int lock;  /* owner's flush vs. the exit's */
  uint8_t *buf;     /* the buffer being filled: buf_a or buf_b */
  uint8_t *buf_a, *buf_b;
  _Atomic(uint8_t *) spare; /* the other one; NULL while the writer has it */
  atomic_int spare_given;   /* bumped by the writer when it gives spare back (a futex) */
  atomic_int spare_waiting; /* the owner sleeps on spare_given */
  size_t len;
  uint32_t nevents;
  _Atomic uint64_t committed; /* nevents << 32 | len, for the exit's flush */
  uint64_t chunk_time, prev_time, prev_addr;
  hh_tr_event_clock clock;      /* its events' times */
  uint64_t rt_stack, rt_weight; /* realloc begun */
  bool rt_old, rt_new;
  hh_tr_stack_cache *cache;
  hh_tr_model *model; /* its chunks' version-2 encoding (transcode.c) */
  /* the writer's look at an idle thread (write_idle_buffers) */
  uint64_t idle_seen, idle_since, prov_written;
  uint64_t exec_prov; /* at an exec: the events of its provisional chunk, while they are the latest */
  int ended_tid;      /* gettid() in on_thread_exit: the kernel thread reclaim_ended_locked waits for */
} tstate;

static __thread tstate *tls_ts IE;
static __thread bool tls_failed IE;
__thread unsigned hh__tr_busy IE;
/* Set while this thread holds the tracer's locks outside the hook (between
 * the fork handlers, in its exit's flush): an exec from a signal handler
 * there must not wait for them (hh__trace_before_exec), and what the thread
 * allocates meanwhile (another library's fork handler, which runs after
 * ours when it was registered before) is not recorded: it waited for the
 * locks this thread held, and the fork hung (trace.atfork_malloc). */
static __thread bool t_locked_outside_hook IE;
static _Atomic(tstate *) threads;
static atomic_uint next_index = 1;
/* States whose threads have ended, ready for new threads, under free_lock
 * (a spin lock: a lock-free stack popped by several threads could take a
 * state twice, ABA). Pushed by reclaim_ended_locked, popped by new threads. */
static tstate *free_states;
static atomic_int free_lock;
/* States in LIFE_ENDED: reclaim_ended_locked has nothing to look for at 0. */
static atomic_uint ended_count;
static pthread_key_t exit_key;
static bool have_key;
/* The process the tracer's state belongs to: a vfork child (which shares
 * the parent's memory, runs no atfork handler and may call exec) must leave
 * that state alone. */
static pid_t owner_pid;

static uint64_t flush_after; /* ticks: a chunk older than this is written */
static uint64_t rss_every;   /* ticks between RSS samples */
static _Atomic uint64_t next_rss;

/* ---- thread states -------------------------------------------------------- */

static void spin_lock(atomic_int *l) {
  unsigned turns = 0;
  while (atomic_exchange_explicit(l, 1, memory_order_acquire) != 0) hh__backoff(&turns);
}
static void spin_unlock(atomic_int *l) { atomic_store_explicit(l, 0, memory_order_release); }

static void thread_name(char out[16]) {
  memset(out, 0, 16);
  prctl(PR_GET_NAME, out, 0, 0, 0);
  out[15] = '\0';
}

static void on_thread_exit(void *arg);
static bool reclaim_here(void);

static tstate *take_free_state(void) {
  spin_lock(&free_lock);
  tstate *ts = free_states;
  if (ts != NULL) free_states = ts->free_next;
  spin_unlock(&free_lock);
  return ts;
}

/* A state for this thread: an ended thread's (reclaim_ended_locked) if
 * there is one, else a new one. A reused state gets a new thread index
 * (the reader keeps a model per index, which a new index starts from
 * nothing, as the emptied writer's model does) and a THREAD record at its
 * first chunk. */
static tstate *thread_state_slow_blocked(void);

/* With the signals that can unwind a thread blocked: a reused state is
 * taken under free_lock, then its own lock, and reclaim_here takes
 * write_lock (base/cancel.h, trace.unwound_threads). */
static tstate *thread_state_slow(void) {
  if (tls_failed) return NULL;
  hh_unwind_off mask = hh__unwind_off();
  tstate *ts = thread_state_slow_blocked();
  hh__unwind_restore(mask);
  return ts;
}

static tstate *thread_state_slow_blocked(void) {
  /* Busy until the state is this thread's (tls_ts): an exit or a fork from
   * a signal handler in between would wait for a lock this thread holds
   * (the state's, write_lock in reclaim_here), or fork a child whose
   * thread has a state no longer on its list of states. They leave the
   * tracer alone instead (trace_stop, at_prepare). */
  hh__tr_busy++;
  tstate *ts = take_free_state();
  if (ts == NULL && reclaim_here()) ts = take_free_state();
  if (ts != NULL) {
    char name[16];
    thread_name(name);
    /* Under its lock: a walker of the states (the exit's flush, exec's
     * provisional chunks, the writer's idle scan) that finds events in it
     * reads them with this index. Not `closed`: one the exit's flush
     * closed while it was free stays closed (the trace is ending). */
    spin_lock(&ts->lock);
    ts->index = atomic_fetch_add(&next_index, 1);
    ts->tid = (int)syscall(SYS_gettid);
    memcpy(ts->name, name, 16);
    hh__tr_event_clock_init(&ts->clock);
    ts->need_thread = true;
    atomic_store(&ts->life, LIFE_LIVE);
    spin_unlock(&ts->lock);
    tls_ts = ts;
    hh__tr_busy--;
    if (have_key) pthread_setspecific(exit_key, ts);
    return ts;
  }
  hh__tr_busy--;
  size_t head = (sizeof(tstate) + 4095) & ~(size_t)4095;
  size_t cache = hh__tr_opt.stacks ? (hh__tr_stack_cache_bytes() + 4095) & ~(size_t)4095 : 0;
  uint8_t *mem = hh__tr_map(head + 2 * BUF_CAP + cache);
  hh_tr_model *model = mem != NULL ? hh__tr_model_new() : NULL;
  if (model == NULL) {
    if (mem != NULL) munmap(mem, head + 2 * BUF_CAP + cache);
    tls_failed = true;
    return NULL;
  }
  ts = (tstate *)mem;
  ts->model = model;
  ts->buf = ts->buf_a = mem + head;
  ts->buf_b = mem + head + BUF_CAP;
  atomic_store(&ts->spare, ts->buf_b);
  ts->cache = cache ? (hh_tr_stack_cache *)(mem + head + 2 * BUF_CAP) : NULL;
  ts->index = atomic_fetch_add(&next_index, 1);
  ts->tid = (int)syscall(SYS_gettid);
  hh__tr_event_clock_init(&ts->clock);
  thread_name(ts->name);
  ts->need_thread = true;
  ts->next = atomic_load(&threads);
  while (!atomic_compare_exchange_weak(&threads, &ts->next, ts)) {
  }
  tls_ts = ts;
  if (have_key) pthread_setspecific(exit_key, ts);
  return ts;
}

static inline tstate *thread_state(void) {
  if (unlikely(t_locked_outside_hook)) return NULL;
  tstate *ts = tls_ts;
  if (likely(ts != NULL)) return unlikely(ts->dead) ? NULL : ts;
  return thread_state_slow();
}

/* ---- chunks --------------------------------------------------------------------- */

static uint8_t *put_thread(const tstate *ts, uint8_t *p) {
  *p++ = HH_REC_THREAD;
  p = hh__tr_varint(p, ts->index);
  p = hh__tr_varint(p, (uint64_t)ts->tid);
  return hh__tr_string(p, ts->name, strnlen(ts->name, 16));
}

static void begin_chunk(tstate *ts, uint64_t now) {
  uint8_t *p = ts->buf;
  *p++ = HH_REC_CHUNK_TIME;
  p = hh__tr_varint(p, now);
  if (ts->need_thread) {
    ts->need_thread = false;
    p = put_thread(ts, p);
  }
  ts->len = (size_t)(p - ts->buf);
  ts->chunk_time = ts->prev_time = now;
  ts->prev_addr = 0;
}

/* ---- the writer thread ------------------------------------------------------
 * Full buffers are handed to a thread of ours that compresses and writes
 * them, so that the program's threads only encode: each thread has two
 * buffers and fills one while the writer empties the other. The writer is
 * started at the first full buffer (not inside the hook's start-up), with
 * every signal blocked; if it cannot be started, threads write their chunks
 * themselves. Its queue is FIFO, and a thread has at most one chunk queued
 * or being written (it waits for its spare buffer), so a thread's chunks
 * stay in order.
 *
 * One writer transcodes and compresses ~30M events a second: four threads
 * allocating without pause outran it and waited for it, so with 16 each
 * took 8 times as long as one alone (docs/benchmarks.md, "The tracer as
 * threads are added"). So the writer has helpers (HEAPHOOK_TRACE_WRITERS - 1
 * of them, started with it) that take queued chunks too: chunks of
 * different threads are written at once, each with one write(2) to a file
 * opened with O_APPEND (writer.c). They write under write_lock held shared;
 * what needs no chunk under way (the idle scan, reclaiming states, a fork,
 * an exec, the exit's flush) holds it exclusively. */

typedef struct job {
  tstate *ts;
  uint8_t *data;
  size_t len;
  uint32_t nevents;
} job;

#define QUEUE 256
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static job queue[QUEUE];
static unsigned q_head, q_count;
/* Held shared by whoever writes a queued chunk (the writer, its helpers);
 * exclusively by what needs no chunk under way: the exit's flush, a fork
 * (so that the child inherits no chunk half written), an exec, the idle
 * scan, reclaiming states. Writers that always have work (threads
 * allocating without pause) would retake it at once, every time, and a
 * fork could wait for the whole queue: the lock prefers those that want
 * it exclusively (new shared holders wait for them), and the writers also
 * let them go first (write_lock_wanted), so they wait for the chunks under
 * way at most. */
#define WRITE_LOCK_INIT PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP
static pthread_rwlock_t write_lock = WRITE_LOCK_INIT;
static atomic_int write_lock_wanted; /* threads in write_lock_take */

static void write_lock_take(void) {
  atomic_fetch_add(&write_lock_wanted, 1);
  pthread_rwlock_wrlock(&write_lock);
  atomic_fetch_sub(&write_lock_wanted, 1);
}
static void write_lock_give(void) { pthread_rwlock_unlock(&write_lock); }
/* Shared, to write one queued chunk: after whoever wants it exclusively. */
static void write_lock_share(void) {
  for (unsigned turns = 0; atomic_load(&write_lock_wanted) != 0;) hh__backoff(&turns);
  pthread_rwlock_rdlock(&write_lock);
}
static atomic_int writer_state; /* 0 none, 1 starting, 2 running, 3 failed */
static atomic_int writer_sleeping;
static atomic_bool writer_stop;
/* The writer's helpers: how many to start (HEAPHOOK_TRACE_WRITERS - 1), how
 * many live (read by hh__tr_only_tracer_left), and how many sleep on
 * q_pushed, which each push bumps. */
#define WRITERS_MAX 8
static int helpers_wanted;
static atomic_int helpers_alive, helpers_sleeping, q_pushed;
/* Joinable, so that the writer can wait for their end (end_helpers). */
static pthread_t helper_threads[WRITERS_MAX];
static int helpers_made;
static atomic_bool helpers_quit;
/* Set by the thread that finishes the trace (trace_stop); cleared in a
 * forked child. */
static atomic_bool stopping;

static void futex(atomic_int *addr, int op, int val, const struct timespec *timeout) {
  syscall(SYS_futex, addr, op, val, timeout, NULL, 0);
}

/* Bumped at each pop, under q_lock, for the threads that wait for room in
 * the queue (a futex; q_room_waiting of them sleep on it). */
static atomic_int q_popped, q_room_waiting;

static bool pop(job *out) {
  pthread_mutex_lock(&q_lock);
  bool any = q_count > 0;
  if (any) {
    *out = queue[q_head];
    q_head = (q_head + 1) % QUEUE;
    q_count--;
  }
  if (any) atomic_fetch_add(&q_popped, 1);
  pthread_mutex_unlock(&q_lock);
  if (any && atomic_load(&q_room_waiting) > 0) futex(&q_popped, FUTEX_WAKE_PRIVATE, 1, NULL);
  return any;
}

/* False when the queue is full: *popped is then the pops so far, read with
 * the queue found full, for wait_for_writer. */
static bool push(const job *j, int *popped) {
  pthread_mutex_lock(&q_lock);
  bool room = q_count < QUEUE;
  if (room) {
    queue[(q_head + q_count) % QUEUE] = *j;
    q_count++;
    atomic_fetch_add(&q_pushed, 1);
  } else {
    *popped = atomic_load(&q_popped);
  }
  pthread_mutex_unlock(&q_lock);
  if (room && atomic_load(&writer_sleeping)) {
    atomic_store(&writer_sleeping, 0);
    futex(&writer_sleeping, FUTEX_WAKE_PRIVATE, 1, NULL);
  } else if (room && atomic_load(&helpers_sleeping) > 0) {
    futex(&q_pushed, FUTEX_WAKE_PRIVATE, 1, NULL); /* the writer is busy: a helper takes it */
  }
  return room;
}

static void write_job(const job *j) {
  hh__tr_proc_flush();
  hh__tr_write_chunk(j->data, j->len, j->ts->index, j->nevents, j->ts->model);
  atomic_store(&j->ts->spare, j->data);
  atomic_fetch_add(&j->ts->spare_given, 1);
  if (atomic_load(&j->ts->spare_waiting)) futex(&j->ts->spare_given, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* The owner waits for the writer: yields at first, then sleeps until the
 * writer gives its buffer back, at most 1 ms at a time. It slept 50 us at a
 * time, woken by nothing: with a few hundred threads waiting, their
 * wake-ups took the processors from the one writer they waited for (250
 * busy threads: 35-150 s for what 50 threads traced in 5). When the queue
 * is full it sleeps at once until a pop wakes it (one sleeper a pop), at
 * most 20 ms: 2,000 threads ending at once, each with a chunk to queue,
 * yielded and woke every 1 ms, and from a count of pops read before their
 * try, which each pop made stale; they took the processors from the
 * writer, and the threads took 8-80 s to end, not 0.1 s
 * (trace.many_threads_exit). */
static void wait_for_writer(tstate *ts, int given, int popped, bool full, unsigned *turns) {
  if (!full && *turns < HH_BACKOFF_YIELDS) {
    hh__backoff(turns);
    return;
  }
  struct timespec t = {0, 1000 * 1000};
  int saved = errno;
  if (full) {
    t.tv_nsec = 20 * 1000 * 1000;
    atomic_fetch_add(&q_room_waiting, 1);
    futex(&q_popped, FUTEX_WAIT_PRIVATE, popped, &t);
    atomic_fetch_sub(&q_room_waiting, 1);
  } else {
    atomic_store(&ts->spare_waiting, 1);
    if (atomic_load(&ts->spare) == NULL) futex(&ts->spare_given, FUTEX_WAIT_PRIVATE, given, &t);
    atomic_store(&ts->spare_waiting, 0);
  }
  errno = saved;
}

static void periodic(uint64_t now, bool may_start);

static bool queue_empty(void) {
  pthread_mutex_lock(&q_lock);
  bool empty = q_count == 0;
  pthread_mutex_unlock(&q_lock);
  return empty;
}

/* With write_lock, the queue found empty: a thread whose buffer has held the
 * same events for longer than a chunk may wait (it has been idle since)
 * gets them written as a provisional chunk (format.h), so that a kill
 * does not take them. The thread writes its buffer itself at its next
 * event, as always; the reader then drops the provisional copy. Once per
 * idle spell: not again while the buffer has not changed. Under the
 * thread's lock (its buffer cannot be handed over meanwhile) and with no
 * chunk of the thread waiting in the queue, so that the provisional chunk
 * is always the thread's latest. */
static void write_idle_buffers(uint64_t now) {
  for (tstate *ts = atomic_load(&threads); ts != NULL; ts = ts->next) {
    uint64_t c = atomic_load_explicit(&ts->committed, memory_order_acquire);
    if (c != ts->idle_seen) {
      ts->idle_seen = c;
      ts->idle_since = now;
      continue;
    }
    if ((c >> 32) == 0 || c == ts->prov_written || now - ts->idle_since < flush_after) continue;
    spin_lock(&ts->lock);
    if (ts->closed || atomic_load_explicit(&ts->committed, memory_order_acquire) != c) {
      ts->prov_written = c; /* written by the exit, or the thread went on: nothing to do */
    } else if (queue_empty()) {
      hh__tr_proc_flush();
      hh__tr_write_provisional(ts->buf, (size_t)(c & 0xffffffffu), ts->index);
      ts->prov_written = c;
    } /* else a chunk was queued meanwhile: again at the next look */
    spin_unlock(&ts->lock);
  }
}

/* At exec, with write_lock: the events ts has committed in its buffer
 * (exec is about to end the thread with them) written as a provisional
 * chunk, after every chunk of the thread waiting in the queue, so that it
 * is the thread's latest. When the exec succeeds it is the thread's last
 * chunk and the reader keeps it; when it fails the thread goes on, writes
 * its buffer itself, and the reader drops the provisional copy. *counted:
 * the events of this exec's provisional chunks that no later chunk of
 * their thread holds (a chunk a thread hands over after its provisional
 * one, written here from the queue, holds those events and more). */
static void write_provisional_at_exec(tstate *ts, uint64_t *counted) {
  spin_lock(&ts->lock);
  uint64_t c = atomic_load_explicit(&ts->committed, memory_order_acquire);
  if (!ts->closed && !ts->dead && (c >> 32) != 0) {
    job j;
    while (pop(&j)) {
      *counted -= j.ts->exec_prov;
      j.ts->exec_prov = 0;
      write_job(&j);
    }
    hh__tr_proc_flush();
    hh__tr_write_provisional(ts->buf, (size_t)(c & 0xffffffffu), ts->index);
    ts->prov_written = c;
    ts->exec_prov = c >> 32;
    *counted += ts->exec_prov;
  }
  spin_unlock(&ts->lock);
}

static void reset_buffer(tstate *ts);

/* With write_lock, so that nothing else walks the states' buffers (the
 * idle scan, exec, the exit's flush, a fork: all hold it) and no queued
 * chunk is being written: the states of ended threads that nothing will
 * touch again go on the free list, for new threads. Without this a program
 * that starts a thread per request grew by ~22 KB per thread it had ever
 * started (the state's page, its model, page tables): 20,000 short threads
 * took 432 MiB. A state in LIFE_ENDED is taken once
 * - its thread is gone from the kernel (tgkill says ESRCH): after
 *   on_thread_exit come the other keys' destructors and glibc's own frees,
 *   whose events still land in the state, until the thread ends;
 * - no chunk of it waits in the queue: its spare buffer is back (the owner
 *   takes the spare when it queues a chunk, and the writer gives it back
 *   under write_lock once the chunk is written), so no job names it;
 * - the exit's flush has not closed it (the trace is ending: it writes
 *   what the state holds).
 * The events the thread recorded after its exit's flush are written here
 * as its last chunk, under its index, after all its others; a provisional
 * copy of them (the idle scan, an exec) comes before it in the file, so the
 * reader drops that copy. Then the state is emptied as a new thread's: no
 * events (committed 0, which every walker skips), the idle scan's marks
 * cleared (a new thread's first commit could equal the old prov_written),
 * the model emptied (the next thread's first chunk is told against
 * nothing), the buffers and stack cache given back to the kernel (zero
 * pages are an empty cache). */
static void reclaim_ended_locked(void) {
  if (atomic_load(&ended_count) == 0) return;
  int saved = errno;
  for (tstate *ts = atomic_load(&threads); ts != NULL; ts = ts->next) {
    if (atomic_load(&ts->life) != LIFE_ENDED) continue;
    /* (A tid the kernel gave to a new thread meanwhile reads as alive:
     * the state waits for that thread too, which is safe.) */
    if (syscall(SYS_tgkill, owner_pid, ts->ended_tid, 0) == 0 || errno != ESRCH) continue;
    /* The spare looked at once the thread is gone: before, the thread
     * could still queue a chunk (late frees that filled its buffer). */
    if (atomic_load(&ts->spare) == NULL) continue;
    spin_lock(&ts->lock);
    if (!ts->closed) {
      uint64_t c = atomic_load_explicit(&ts->committed, memory_order_acquire);
      if ((c >> 32) != 0) {
        hh__tr_proc_flush();
        hh__tr_write_chunk(ts->buf, (size_t)(c & 0xffffffffu), ts->index, c >> 32, ts->model);
      }
      reset_buffer(ts);
      hh__tr_model_reset(ts->model);
      madvise(ts->buf_a, BUF_CAP, MADV_DONTNEED);
      madvise(ts->buf_b, BUF_CAP, MADV_DONTNEED);
      if (ts->cache != NULL) madvise(ts->cache, hh__tr_stack_cache_bytes(), MADV_DONTNEED);
      ts->idle_seen = ts->idle_since = ts->prov_written = ts->exec_prov = 0;
      atomic_store(&ts->spare_waiting, 0);
      atomic_store(&ts->life, LIFE_FREE);
      atomic_fetch_sub(&ended_count, 1);
      spin_lock(&free_lock);
      ts->free_next = free_states;
      free_states = ts;
      spin_unlock(&free_lock);
    }
    spin_unlock(&ts->lock);
  }
  errno = saved;
}

/* A new thread found no free state, and there is no writer thread to
 * reclaim ended threads' states (sampled mode, before the writer starts,
 * or when it could not start): it does so itself. It waits for write_lock
 * (it holds none of the tracer's locks here, and the holders, an exit, an
 * exec, a fork or another new thread's reclaim, wait for no new thread):
 * with a try-lock, each new thread that found it taken made a state of its
 * own, and four threads starting threads in turn, with a late free each,
 * kept ~350 states after 96,000 threads, and more the longer they ran.
 * Never in a vfork child, which shares the parent's states. */
static bool reclaim_here(void) {
  if (atomic_load(&ended_count) == 0 || atomic_load(&writer_state) == 2) return false;
  if ((pid_t)syscall(SYS_getpid) != owner_pid) return false;
  write_lock_take(); /* (the caller is busy: an exit or fork from a signal handler leaves our locks alone) */
  reclaim_ended_locked();
  write_lock_give();
  return true;
}

/* The signal mask of the thread that started the writer. */
static sigset_t creator_mask;

/* A helper of the writer: writes queued chunks, sleeps on q_pushed when
 * there are none (push wakes one when the writer is busy), and ends with
 * the writer's stop. It holds none of the writer's other duties. */
static void *helper_main(void *arg) {
  (void)arg;
  tls_failed = true; /* never records itself */
  prctl(PR_SET_NAME, "heaphook-trace", 0, 0, 0);
  for (;;) {
    job j;
    int seen = atomic_load(&q_pushed);
    write_lock_share();
    if (atomic_load(&writer_stop) || atomic_load(&helpers_quit)) {
      write_lock_give();
      break;
    }
    bool any = pop(&j);
    if (any) write_job(&j);
    write_lock_give();
    if (any) continue;
    atomic_fetch_add(&helpers_sleeping, 1);
    if (!atomic_load(&writer_stop) && !atomic_load(&helpers_quit))
      futex(&q_pushed, FUTEX_WAIT_PRIVATE, seen, NULL);
    atomic_fetch_sub(&helpers_sleeping, 1);
  }
  atomic_fetch_sub(&helpers_alive, 1);
  return NULL;
}

/* By the writer, as it starts (every signal blocked, which the helpers
 * inherit), under the hook's recursion guard (hh__unrecorded): what
 * pthread_create allocates is the tracer's, told to no recorder (counts
 * had 3 callocs more than the trace with HEAPHOOK_TRACE_WRITERS=4). A
 * helper that cannot be started is done without. Counted until it is about
 * to end: hh__tr_only_tracer_left, which the writer alone asks (never while
 * it makes them), then never takes a thread of the program for one of
 * ours. */
static void start_helpers(void *unused) {
  (void)unused;
  pthread_attr_t attr;
  helpers_made = 0;
  if (helpers_wanted <= 0 || pthread_attr_init(&attr) != 0) return;
  for (int i = 0; i < helpers_wanted && i < WRITERS_MAX; i++) {
    atomic_fetch_add(&helpers_alive, 1);
    if (pthread_create(&helper_threads[i], &attr, helper_main, NULL) != 0) {
      atomic_fetch_sub(&helpers_alive, 1);
      break;
    }
    helpers_made++;
  }
  pthread_attr_destroy(&attr);
}

/* The helpers' wake-up for the stop, the writer's flag raised. */
static void stop_helpers(void) {
  atomic_fetch_add(&q_pushed, 1);
  futex(&q_pushed, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

/* By the writer, when the program's threads have all ended: the helpers end
 * and are joined before the writer returns, so that the writer is the
 * process's last thread, the one in which glibc calls exit (a helper ending
 * last would run the program's exit handlers, its signals all blocked). */
static void end_helpers(void) {
  atomic_store(&helpers_quit, true);
  stop_helpers();
  for (int i = 0; i < helpers_made; i++) pthread_join(helper_threads[i], NULL);
  helpers_made = 0;
}

static void *writer_main(void *arg) {
  (void)arg;
  tls_failed = true; /* never records itself */
  prctl(PR_SET_NAME, "heaphook-trace", 0, 0, 0);
  hh__unrecorded(start_helpers, NULL);
  for (;;) {
    job j;
    write_lock_share();
    if (atomic_load(&writer_stop)) {
      write_lock_give();
      return NULL;
    }
    bool any = pop(&j);
    if (any) write_job(&j);
    write_lock_give();
    /* What needs no chunk under way: with the queue empty, the idle
     * threads' buffers; ended threads' states. */
    if (atomic_load_explicit(&hh__tr_active, memory_order_relaxed) &&
        (!any || atomic_load(&ended_count) != 0)) {
      write_lock_take();
      if (atomic_load(&writer_stop)) {
        write_lock_give();
        return NULL;
      }
      if (!any && queue_empty()) write_idle_buffers(hh__tr_now());
      reclaim_ended_locked();
      write_lock_give();
    }
    /* RSS (and the module list) also while the program does not allocate:
     * the writer wakes at least every 20 ms. */
    if (atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) periodic(hh__tr_now(), true);
    if (any) continue;
    /* The program's threads have all ended (main by pthread_exit): the
     * writer ends too, and glibc then calls exit(0) in it, whose handlers
     * finish the trace as always. They are the program's (atexit, static
     * destructors): they run as one of its threads would, with the signal
     * mask of the thread that started the writer, the program's name,
     * recorded, and with no writer (a thread they start writes its own
     * chunks). */
    char name[16];
    if (hh__tr_only_tracer_left(name, 1 + atomic_load(&helpers_alive))) {
      end_helpers();
      atomic_store(&writer_state, 3);
      prctl(PR_SET_NAME, name, 0, 0, 0);
      tls_failed = false;
      pthread_sigmask(SIG_SETMASK, &creator_mask, NULL);
      return NULL;
    }
    atomic_store(&writer_sleeping, 1);
    pthread_mutex_lock(&q_lock);
    bool empty = q_count == 0;
    pthread_mutex_unlock(&q_lock);
    if (empty) {
      struct timespec t = {0, 20 * 1000 * 1000};
      hh__tr_clock_check_arm();
      bool slept =
          syscall(SYS_futex, &writer_sleeping, FUTEX_WAIT_PRIVATE, 1, &t, NULL, 0) != 0 && errno == ETIMEDOUT;
      hh__tr_clock_check_look(slept);
    }
    atomic_store(&writer_sleeping, 0);
  }
}

/* The writer thread made (*made: whether it was), under the hook's
 * recursion guard (hh__unrecorded): what pthread_create allocates (the new
 * thread's DTV) is the tracer's own, not the program's. Before, only the
 * tracer left it out, and a writer started at a thread's exit (no guard
 * there) gave HEAPHOOK_RECORD=counts,trace one calloc more than the trace
 * (preload.counts_match_trace). */
static void make_writer(void *made) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  /* The default stack (virtual memory): the program's exit handlers may
   * run on this thread (writer_main). */
  *(bool *)made = pthread_create(&t, &attr, writer_main, NULL) == 0;
  pthread_attr_destroy(&attr);
}

/* program_mask: the calling thread's signal mask before the tracer held
 * its signals back (hh__unwind_off), the writer's if it becomes one of
 * the program's threads. */
static void start_writer(uint64_t program_mask) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&writer_state, &expected, 1)) return;
  /* Every signal held back while the thread is made (it starts with this
   * mask), but glibc's 33 (setuid's, base/cancel.h). Through the system
   * call: glibc's pthread_sigmask never blocks its cancel signal, and
   * restoring the mask unblocked it inside the caller's stretch that holds
   * it back (flush_thread): an asynchronous cancel could then unwind the
   * thread there, its state's lock held. */
  uint64_t all = ~((uint64_t)1 << (33 - 1)), old;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof all);
  sigemptyset(&creator_mask);
  memcpy(&creator_mask, &program_mask, sizeof program_mask);
  bool ok = false;
  hh__unrecorded(make_writer, &ok);
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof old);
  atomic_store(&writer_state, ok ? 2 : 3);
}

static void reset_buffer(tstate *ts) {
  ts->len = 0;
  ts->nevents = 0;
  atomic_store_explicit(&ts->committed, 0, memory_order_release);
}

/* By the owner: the thread's name, if it changed, said at the end of the
 * chunk being filled (ev_begin keeps the room), or else at the start of the
 * next. A thread that renamed itself during its last chunk kept its old
 * name in the trace when it was said at the next chunk's start only
 * (trace.thread_rename). */
static void note_rename(tstate *ts) {
  char name[16];
  thread_name(name);
  if (memcmp(name, ts->name, 16) == 0) return;
  memcpy(ts->name, name, 16);
  if (ts->nevents > 0 && ts->len + THREAD_ROOM <= BUF_CAP) {
    ts->len = (size_t)(put_thread(ts, ts->buf + ts->len) - ts->buf);
    atomic_store_explicit(&ts->committed, ((uint64_t)ts->nevents << 32) | ts->len, memory_order_release);
  } else {
    ts->need_thread = true;
  }
}

/* Before the owner hands its buffer over: the thread's name brought up to
 * date (the module list was, by the caller: scan_open). False (and the
 * buffer emptied) when it holds no event. */
static bool handover_begin(tstate *ts) {
  note_rename(ts);
  if (ts->nevents > 0) return true;
  if (ts->len > 0) ts->need_thread = true; /* its THREAD record was not written */
  reset_buffer(ts);
  return false;
}

/* The owner hands its buffer over (full, old, or the thread ends). */
static void flush_thread_locked(tstate *ts, hh_unwind_off mask);

/* The module list brought up to date before a stretch that holds the
 * signals back, with them open: the scan calls dl_iterate_phdr, which
 * waits for glibc's loader lock, and a thread that a stop-the-world
 * collector had stopped inside dl_iterate_phdr (its handler says it
 * stopped and waits) holds that lock. Waiting for it with the signals
 * held back, this thread never took the collector's signal, and the
 * collector, and so the stopped thread, waited for it for good
 * (trace.gc_stop, free: the RSS sample due at a free; the same at a
 * buffer's hand-over). Busy meanwhile, as in a new stack's capture, which
 * scans the same way. */
static void scan_open(void) {
  hh__tr_busy++;
  hh__tr_modules_scan(true);
  hh__tr_busy--;
}

/* With the signals that can unwind a thread blocked while it holds
 * ts->lock (and q_lock, or the file's locks, in it), not while it waits
 * for the writer (base/cancel.h, trace.unwound_threads). */
static void flush_thread(tstate *ts) {
  scan_open();
  hh_unwind_off mask = hh__unwind_off();
  hh__tr_busy++;
  flush_thread_locked(ts, mask);
  hh__tr_busy--;
  hh__unwind_restore(mask);
}

static void flush_thread_locked(tstate *ts, hh_unwind_off mask) {
  if (!handover_begin(ts)) return;
  /* Sampled mode writes few chunks: the thread compresses its own rather
   * than start a writer thread, whose mere existence turns glibc's
   * single-thread fast paths off for the whole process (2-4 ns a call).
   * Never from a vfork child (as in periodic_records): the writer would be
   * the child's and end with it, while the parent, which shares this
   * state, took it to be running, and its threads waited for it for good
   * (trace.vfork_flush). The child writes the chunk itself. */
  if (hh__tr_opt.sample == 0 && atomic_load(&writer_state) == 0 && (pid_t)syscall(SYS_getpid) == owner_pid)
    start_writer(mask.mask);
  for (unsigned turns = 0;;) {
    spin_lock(&ts->lock);
    if (ts->closed) {
      /* Written at exit: what follows is not recorded. */
      ts->dead = true;
      spin_unlock(&ts->lock);
      return;
    }
    if (atomic_load(&writer_state) != 2) {
      hh__tr_proc_flush();
      hh__tr_write_chunk(ts->buf, ts->len, ts->index, ts->nevents, ts->model);
      break;
    }
    int given = atomic_load(&ts->spare_given), popped = 0;
    uint8_t *spare = atomic_exchange_explicit(&ts->spare, NULL, memory_order_acquire);
    if (spare != NULL) {
      job j = {ts, ts->buf, ts->len, ts->nevents};
      if (push(&j, &popped)) {
        ts->buf = spare;
        break;
      }
      atomic_store(&ts->spare, spare);
    }
    /* The writer is behind: wait for it. No lock of the tracer's is held
     * meanwhile (nor by flush_thread's callers, unless they said so with
     * hh__tr_busy of their own), and the buffer is whole: an exit from a
     * signal handler that interrupts the wait may finish the trace, this
     * buffer included. Before, the wait counted as busy, and such an exit
     * lost the trace's end in about half the runs of a program that
     * allocates without pause (the writer is behind then). */
    spin_unlock(&ts->lock);
    hh__tr_busy--;
    hh__unwind_restore(mask);
    wait_for_writer(ts, given, popped, spare != NULL, &turns);
    mask = hh__unwind_off();
    hh__tr_busy++;
  }
  reset_buffer(ts);
  spin_unlock(&ts->lock);
}

static void periodic_records(uint64_t now, uint64_t program_mask, bool may_start);

static void periodic(uint64_t now, bool may_start) {
  uint64_t due = atomic_load_explicit(&next_rss, memory_order_relaxed);
  if (now < due || !atomic_compare_exchange_strong(&next_rss, &due, now + rss_every)) return;
  scan_open();
  hh_unwind_off mask = hh__unwind_off(); /* (base/cancel.h: the meta lock, statm's) */
  hh__tr_busy++;
  periodic_records(now, mask.mask, may_start);
  hh__tr_busy--;
  hh__unwind_restore(mask);
}

static void periodic_records(uint64_t now, uint64_t program_mask, bool may_start) {
  hh__tr_rss_record(now);
  /* Full mode: the writer thread also from ~0.1 s into the run, not only at
   * the first full buffer, so that the events of a process that then goes
   * idle and is killed reach the file (write_idle_buffers). Never from a
   * vfork child, which shares this state with its parent. */
  if (may_start && hh__tr_opt.sample == 0 && atomic_load(&writer_state) == 0 && now >= flush_after / 10 &&
      (pid_t)syscall(SYS_getpid) == owner_pid)
    start_writer(program_mask);
}

/* Room for one event at the end of the buffer, a chunk begun.
 * may_start: whether the writer thread may be started here by the clock
 * (~0.1 s into the run). Never in a free: glibc frees ended threads' DTVs
 * holding the lock of its cache of thread stacks (pthread_join, a
 * detached thread's end: __nptl_free_stacks), which pthread_create takes,
 * and the writer started there waited for that lock for good
 * (trace.stack_cache); the next allocation starts it. (A first full
 * buffer still starts it, in a free too: the thread would otherwise write
 * its chunk itself, which an exec in another thread may cut.) */
static inline uint8_t *ev_begin(tstate *ts, uint64_t now, bool may_start) {
  if (unlikely(ts->len + BUF_ROOM + THREAD_ROOM > BUF_CAP) ||
      unlikely(ts->len != 0 && now - ts->chunk_time > flush_after)) {
    flush_thread(ts);
    if (ts->dead) return NULL;
  }
  if (unlikely(ts->len == 0)) begin_chunk(ts, now);
  if (unlikely(now >= atomic_load_explicit(&next_rss, memory_order_relaxed))) periodic(now, may_start);
  return ts->buf + ts->len;
}

static inline void ev_end(tstate *ts, uint8_t *p) {
  ts->len = (size_t)(p - ts->buf);
  ts->nevents++;
  atomic_store_explicit(&ts->committed, ((uint64_t)ts->nevents << 32) | ts->len, memory_order_release);
}

static inline uint8_t *put_time(tstate *ts, uint8_t *p, uint64_t t) {
  if (unlikely(t < ts->prev_time)) t = ts->prev_time; /* a migration between unsynchronised TSCs */
  p = hh__tr_varint(p, t - ts->prev_time);
  ts->prev_time = t;
  return p;
}

static inline uint8_t *put_addr(tstate *ts, uint8_t *p, uintptr_t a) {
  p = hh__tr_svarint(p, (int64_t)(a - ts->prev_addr));
  ts->prev_addr = a;
  return p;
}

/* ---- events ----------------------------------------------------------------------- */

__thread unsigned hh__trace_in_dl_callback IE;

static inline uint64_t stack_here(tstate *ts) {
  return hh__tr_opt.stacks && likely(hh__trace_in_dl_callback == 0)
             ? hh__tr_stack_capture(ts->cache, hh__call_cfa)
             : 0;
}

static void write_alloc(tstate *ts, const hh_event *ev, uint64_t now, uint64_t stack, uint64_t weight) {
  uint8_t *p = ev_begin(ts, now, true);
  if (p == NULL) return;
  if (weight != 0) {
    *p++ = HH_REC_SAMPLE_WEIGHT;
    p = hh__tr_varint(p, weight);
  }
  *p++ = (uint8_t)(HH_REC_ALLOC + ev->fn);
  p = put_time(ts, p, now);
  p = put_addr(ts, p, (uintptr_t)ev->ptr);
  p = hh__tr_varint(p, ev->size);
  p = hh__tr_varint(p, stack);
  if (hh_trace_fn_has_align(ev->fn)) p = hh__tr_varint(p, ev->align);
  ev_end(ts, p);
}

static void write_free(tstate *ts, hh_fn fn, const void *ptr, uint64_t now) {
  uint8_t *p = ev_begin(ts, now, false);
  if (p == NULL) return;
  *p++ = (uint8_t)(HH_REC_FREE + fn);
  p = put_time(ts, p, now);
  p = put_addr(ts, p, (uintptr_t)ptr);
  ev_end(ts, p);
}

static void trace_on_alloc(const hh_event *ev, void *slot) {
  (void)slot;
  if (!atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) return;
  tstate *ts = thread_state();
  if (ts == NULL) return;
  /* Sampled mode: the hook calls this for the sampled blocks only, with
   * their weight (0 when every event is recorded). */
  uint64_t stack = stack_here(ts);
  write_alloc(ts, ev, hh__tr_event_time(&ts->clock, ev->size), stack, ev->weight);
}

static void trace_on_free(const hh_event *ev, void *slot) {
  (void)slot;
  if (!atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) return;
  /* Sampled mode: the hook calls this for the sampled blocks only. */
  tstate *ts = thread_state();
  if (ts == NULL) return;
  write_free(ts, ev->fn, ev->ptr, hh__tr_event_time(&ts->clock, 0));
}

static void trace_on_realloc_begin(const hh_event *ev, void *slot) {
  (void)slot;
  if (!atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) return;
  tstate *ts = thread_state();
  if (ts == NULL) return;
  ts->rt_weight = ev->weight;
  ts->rt_old = ts->rt_new = true;
  if (hh__tr_opt.sample != 0) {
    /* The hook calls this when the old block was sampled or the new one is. */
    ts->rt_old = ev->old_sampled;
    ts->rt_new = ev->new_sampled;
  }
  ts->rt_stack = ts->rt_new ? stack_here(ts) : 0;
}

static void trace_on_realloc(const hh_event *ev, void *slot) {
  (void)slot;
  if (!atomic_load_explicit(&hh__tr_active, memory_order_relaxed)) return;
  tstate *ts = thread_state();
  if (ts == NULL) return;
  bool was = ts->rt_old, is = ts->rt_new;
  /* Sampled mode draws a realloc's new block on its own, as a new block's
   * (each block is sampled at its birth): the REALLOC record then says
   * which of the two blocks the trace follows. The old one is unknown to
   * the trace when it was not sampled; a weight of 0 says the new one is
   * not followed. Until 2026-11-24 these were an ALLOC and a FREE, which
   * the reports counted as calls to malloc and free (docs/report-json.md). */
  if (was || is) {
    /* Timed when the call returns, as an allocation is: the block it
     * received may have been freed by another thread while it waited for
     * the allocator's lock (timed at the call's start until 2026-11-25:
     * 5% of the reallocs of 4 consumers reallocating what 4 producers
     * handed them came before that free). The block it gave up can be
     * reused by another thread only once the allocator has let go of it,
     * right before the return: docs/trace-format.md, "Order". */
    uint64_t now = hh__tr_event_time(&ts->clock, ev->size);
    uint8_t *p = ev_begin(ts, now, true);
    if (p == NULL) return;
    if (hh__tr_opt.sample != 0) {
      *p++ = HH_REC_SAMPLE_WEIGHT;
      p = hh__tr_varint(p, is ? ts->rt_weight : 0);
    }
    *p++ = (uint8_t)(HH_REC_REALLOC + ev->fn);
    p = put_time(ts, p, now);
    uintptr_t old = (uintptr_t)ev->old_ptr;
    p = put_addr(ts, p, old);
    p = hh__tr_svarint(p, (int64_t)((uintptr_t)ev->ptr - old));
    ts->prev_addr = (uintptr_t)ev->ptr;
    p = hh__tr_varint(p, ev->size);
    p = hh__tr_varint(p, ts->rt_stack);
    ev_end(ts, p);
  }
}

/* ---- thread exit, fork, stop ------------------------------------------------------ */

/* Its value before at_prepare (a signal handler may fork while the thread's
 * exit flush runs), given back by at_parent and at_child. */
static __thread bool t_locked_before_fork __attribute__((tls_model("initial-exec")));

/* The thread's buffer as its last committed event left it. A thread
 * unwound part-way through an event (cancelled asynchronously, or by
 * pthread_exit in a signal handler) may have stored the event's length
 * and not yet its count, or the other way round: its last chunk then
 * held one event more than it said, and the trace read as damaged ("its
 * end record counts N events, the file holds N + 1",
 * trace.unwound_threads). committed is stored last, in one store: with
 * events in it, it is believed; with none, the chunk has no event (what
 * follows the chunk's start is dropped). The delta bases the lost event
 * may have moved start again with the next chunk. */
static void back_to_committed(tstate *ts) {
  uint64_t c = atomic_load_explicit(&ts->committed, memory_order_relaxed);
  ts->nevents = (uint32_t)(c >> 32);
  if (ts->nevents != 0) ts->len = (size_t)(c & 0xffffffffu);
}

bool hh__trace_abandoned(void) {
  if (hh__tr_busy > 0) return false;
  tstate *ts = tls_ts;
  if (ts == NULL || t_locked_outside_hook) return true;
  back_to_committed(ts);
  ts->chunk_time = 0; /* handed over at the next event (ev_begin), when it holds any */
  return true;
}

static void on_thread_exit(void *arg) {
  tstate *ts = arg;
  if (ts == NULL || ts != tls_ts) return;
  bool was = t_locked_outside_hook;
  t_locked_outside_hook = true;
  back_to_committed(ts);
  if (atomic_load(&hh__tr_active)) flush_thread(ts);
  t_locked_outside_hook = was;
  /* The state stays the thread's until the kernel has ended it (late
   * frees of this thread, in the destructors after this one and glibc's
   * own, land in it), then goes to a new thread (reclaim_ended_locked);
   * its buffers' memory goes back until then. Not once the exit's flush
   * has closed it: that flush, in the thread that called exit, may be
   * encoding this buffer right now (it read zeros: "cannot write the trace
   * file (Invalid argument)" and no END, trace.thread_ends). */
  spin_lock(&ts->lock);
  if (!ts->closed) {
    madvise(ts->buf, BUF_CAP, MADV_DONTNEED);
    uint8_t *spare = atomic_load(&ts->spare);
    if (spare != NULL) madvise(spare, BUF_CAP, MADV_DONTNEED);
    if (ts->cache != NULL) madvise(ts->cache, hh__tr_stack_cache_bytes(), MADV_DONTNEED);
  }
  spin_unlock(&ts->lock);
  /* The thread that runs this is the state's (ts == tls_ts), whatever made
   * the state: its tid is the one to wait for. The count first, so that it
   * is never below the states in LIFE_ENDED (reclaim's shortcut at 0).
   * Not the main thread's (a pthread_exit from main): the kernel keeps it
   * as long as the process, so its state could never be taken, and kept
   * the count above 0: every new thread of a sampled run took write_lock
   * and walked the states at its first event, for nothing. */
  ts->ended_tid = (int)syscall(SYS_gettid);
  if (ts->ended_tid == (int)syscall(SYS_getpid)) return;
  atomic_fetch_add(&ended_count, 1);
  atomic_store(&ts->life, LIFE_ENDED);
}

/* With write_lock held: the queue (older) and then this thread's buffer
 * written by this thread, so that the file is whole up to now without
 * waiting on the writer. */
static void write_all_own_locked(tstate *ts) {
  job j;
  while (pop(&j)) write_job(&j);
  hh__tr_modules_scan(true);
  if (ts != NULL && !ts->dead && handover_begin(ts)) {
    spin_lock(&ts->lock);
    if (!ts->closed) {
      hh__tr_proc_flush();
      hh__tr_write_chunk(ts->buf, ts->len, ts->index, ts->nevents, ts->model);
      reset_buffer(ts);
    }
    spin_unlock(&ts->lock);
  }
  hh__tr_proc_flush();
}

/* The locks the child needs, taken so that it inherits them free: no chunk
 * is half written at the fork. What the parent has buffered or queued stays
 * the parent's to write (the child drops it): writing it here made a fork
 * wait for the whole queue, up to 64 MiB of rows to encode and compress
 * while the program's other threads waited too (~0.1-0.7 s per fork with
 * four threads allocating, trace.fork_threads). */
/* The process that forks, the child's parent: the child may run its fork
 * handler only after its parent has exited (a daemon's double fork). */
static pid_t forking_pid;

/* A fork from a signal handler that interrupted this thread where it takes
 * the tracer's locks (hh__tr_busy): they are left alone, since waiting for
 * them would hang the fork (trace.signal_fork), and the child is not
 * traced (its copy of the tracer's state may be half changed). */
static __thread bool t_fork_untouched IE;

static void at_prepare(void) {
  if (hh__tr_busy > 0) {
    t_fork_untouched = true;
    return;
  }
  forking_pid = (pid_t)syscall(SYS_getpid);
  t_locked_before_fork = t_locked_outside_hook;
  t_locked_outside_hook = true; /* until at_parent or at_child */
  /* First, before the locks that the calls under way may need: no thread
   * of the tracer is in the dynamic linker or the unwinder at the fork. */
  hh__tr_loader_fork_prepare();
  write_lock_take();
  pthread_mutex_lock(&q_lock);
  hh__tr_writer_prepare();
}
static void at_parent(void) {
  if (t_fork_untouched) {
    t_fork_untouched = false;
    return;
  }
  hh__tr_writer_parent();
  pthread_mutex_unlock(&q_lock);
  write_lock_give();
  hh__tr_loader_fork_parent();
  t_locked_outside_hook = t_locked_before_fork;
}

static void child_restart(void) {
  hh__tr_loader_fork_child();
  hh__tr_writer_child();
  hh__tr_procfs_reset();
  /* No writer here (threads do not survive fork); the parent's queue is
   * the parent's to write. */
  pthread_mutex_init(&q_lock, NULL);
  static const pthread_rwlock_t fresh_lock = WRITE_LOCK_INIT;
  memcpy(&write_lock, &fresh_lock, sizeof fresh_lock);
  atomic_store(&write_lock_wanted, 0); /* those threads are gone */
  atomic_store(&helpers_alive, 0);
  atomic_store(&helpers_sleeping, 0);
  atomic_store(&helpers_quit, false);
  helpers_made = 0;
  atomic_store(&q_room_waiting, 0);
  q_head = q_count = 0;
  atomic_store(&writer_state, 0);
  atomic_store(&writer_sleeping, 0);
  /* A fork between the stop's first writes and its END: the child traces
   * on, with a writer of its own that must not find itself told to stop
   * (it returned at once, and the child's buffers queued up unwritten
   * until the queue was full, then the child waited for good: found by
   * review; the window is a few instructions wide, no test reaches it). */
  atomic_store(&stopping, false);
  atomic_store(&writer_stop, false);
  bool was = atomic_load(&hh__tr_active);
  hh__tr_file_forget();
  /* Only this thread lives on: the others' states are dropped, and so is
   * what the parent had buffered (the parent writes it). */
  tstate *me = tls_ts;
  atomic_store(&threads, NULL);
  atomic_store(&next_index, 1);
  /* The free and ended states were the parent's threads' too (and a new
   * thread may have held free_lock at the fork). */
  free_states = NULL;
  atomic_store(&free_lock, 0);
  atomic_store(&ended_count, 0);
  if (!was || !hh__tr_opt.children) return;
  owner_pid = (pid_t)syscall(SYS_getpid);
  hh__tr_clock_start();
  hh__tr_event_clock_fork_child();
  hh__tr_stacks_reset();
  hh__tr_modules_reset();
  atomic_store(&next_rss, 0);
  if (me != NULL) {
    me->index = atomic_fetch_add(&next_index, 1);
    me->tid = (int)syscall(SYS_gettid);
    hh__tr_event_clock_init(&me->clock);
    me->need_thread = true;
    me->closed = false;
    me->dead = false;
    /* (a fork from a destructor after on_thread_exit: here the thread is
     * the process's only one, never to be reclaimed) */
    atomic_store(&me->life, LIFE_LIVE);
    me->buf = me->buf_a;
    hh__tr_model_reset(me->model); /* a new trace: the reader starts from nothing */
    atomic_store(&me->spare, me->buf_b);
    atomic_store(&me->spare_waiting, 0);
    me->len = 0;
    me->nevents = 0;
    atomic_store(&me->committed, 0);
    atomic_store(&me->lock, 0);
    /* The list was newest first: states made after this one are the
     * parent's other threads' (their buffers are the parent's to write). */
    me->next = NULL;
    atomic_store(&threads, me);
  }
  if (hh__tr_file_open(forking_pid) == 0) {
    hh__tr_command_record();
    hh__tr_modules_scan(false);
    hh__tr_procfs_open();
  }
}

static void at_child(void) {
  if (t_fork_untouched) {
    t_fork_untouched = false;
    atomic_store(&hh__tr_active, false); /* (the parent's file stays open here, unwritten) */
    return;
  }
  child_restart();
  t_locked_outside_hook = t_locked_before_fork; /* the fork handlers' locks are made anew by now */
}

/* Exec replaces the image and ends every thread: the queue (older) and then
 * this thread's buffer are written here, by this thread, before exec returns
 * control to the kernel - no waiting on the writer, no writer started in a
 * forked child that is about to exec. The other threads' events, which exec
 * ends with them, as provisional chunks (write_provisional_at_exec). Then
 * an EXEC record (time, the events the trace holds if the exec succeeds,
 * the program), so that the reader knows the program went on as
 * another rather than died; a failed exec is followed by more records and,
 * at exit, END. Skipped (the buffer lost rather than the program hung) when
 * the exec comes from a signal handler that interrupted this thread while
 * it held the tracer's locks: inside the hook (the caller checks), between
 * the fork handlers, in its exit's flush. */
void hh__trace_before_exec(const char *path) {
  if (!atomic_load(&hh__tr_active) || (pid_t)syscall(SYS_getpid) != owner_pid || t_locked_outside_hook)
    return;
  write_lock_take();
  write_all_own_locked(tls_ts);
  uint64_t provisional = 0;
  for (tstate *ts = atomic_load(&threads); ts != NULL; ts = ts->next) ts->exec_prov = 0;
  for (tstate *ts = atomic_load(&threads); ts != NULL; ts = ts->next)
    if (ts != tls_ts) write_provisional_at_exec(ts, &provisional);
  size_t n = path != NULL ? strnlen(path, 4096) : 0;
  hh__tr_meta_lock();
  uint8_t *p = hh__tr_proc_reserve(1 + 3 * HH_VARINT_MAX + n);
  if (p != NULL) {
    *p++ = HH_REC_EXEC;
    p = hh__tr_varint(p, hh__tr_now());
    p = hh__tr_varint(p, hh__tr_events_written() + provisional);
    p = hh__tr_string(p, path != NULL ? path : "", n);
    hh__tr_proc_commit(p);
  }
  hh__tr_proc_flush_locked();
  hh__tr_meta_unlock();
  /* From here on only this thread writes (the writer thread waits at the
   * gate or for write_lock). Raised last, because the threads it stops may
   * hold what the writing above needs (their own lock, the process
   * buffer's): one that wrote a chunk of its own since its provisional one
   * (a program thread without a writer, in the moments between) makes the
   * EXEC's count short of what the file holds; none is left half written. */
  hh__tr_exec_begin();
  write_lock_give();
}

void hh__trace_exec_failed(void) { hh__tr_exec_end(); }

static void trace_stop(int fd);

/* Before _exit (src/hook/exit.c): the trace is finished as at exit, all
 * threads' buffers and END, since _exit runs no destructors. Not in a
 * vfork child (the parent's trace), nor in a signal handler that
 * interrupted this thread's own flush. */
bool hh__trace_recording(void) { return atomic_load_explicit(&hh__tr_active, memory_order_relaxed); }

void hh__trace_before_exit(void) {
  if (!atomic_load(&hh__tr_active) || (pid_t)syscall(SYS_getpid) != owner_pid || t_locked_outside_hook)
    return;
  trace_stop(-1);
}

/* Set on the thread that finishes the trace, while it does. */
static __thread bool t_stopping IE;

static void trace_stop(int fd) {
  (void)fd;
  if (!atomic_load(&hh__tr_active)) return;
  /* exit from a signal handler that interrupted this thread where it holds
   * the tracer's locks: finishing the trace would wait for them for good
   * (trace.signal_exit). The trace then ends as a killed program's. So
   * too where the handler interrupted this thread's own finishing of the
   * trace (at abort, kill, raise or _exit: a timer's handler that calls
   * exit): it waited for itself to finish, and the program hung
   * (trace.self_kill, stopped). */
  if (hh__tr_busy > 0 || t_locked_outside_hook || t_stopping) {
    atomic_store(&hh__tr_active, false);
    hh__log(
        "the program ended in a signal handler that interrupted the tracer: the trace's last events are "
        "lost, and it has no end record");
    return;
  }
  /* Two threads that end the process at once (exit and _exit, or _exit in
   * both): the second waits for the first to finish the trace, then ends
   * the process. Both finished it, and every thread's buffer was written
   * twice: the reports counted each event twice (trace.thread_ends,
   * _exit_both). It holds nothing the first needs: it is outside the
   * tracer (checked above). */
  if (atomic_exchange(&stopping, true)) {
    for (unsigned turns = 0; atomic_load(&hh__tr_active);) hh__backoff(&turns);
    return;
  }
  t_stopping = true;
  uint64_t now = hh__tr_now();
  hh__tr_rss_record(now);
  hh__tr_modules_scan(true);
  /* The thread that ends the process: its latest name (the others' can
   * only be read by themselves). */
  tstate *own = tls_ts;
  if (own != NULL && !own->dead) note_rename(own);
  /* The writer finishes its chunk and stops; no thread hands over another
   * once closed; then the queue, older, goes before the buffers being
   * filled, so that each thread's chunks stay in order. */
  atomic_store(&writer_stop, true);
  stop_helpers();
  write_lock_take();
  tstate *all = atomic_load(&threads);
  for (tstate *ts = all; ts != NULL; ts = ts->next) {
    spin_lock(&ts->lock);
    ts->closed = true;
    spin_unlock(&ts->lock);
  }
  job j;
  while (pop(&j)) write_job(&j);
  for (tstate *ts = all; ts != NULL; ts = ts->next) {
    spin_lock(&ts->lock);
    uint64_t c = atomic_load_explicit(&ts->committed, memory_order_acquire);
    size_t len = (size_t)(c & 0xffffffffu);
    uint32_t n = (uint32_t)(c >> 32);
    if (n > 0) {
      hh__tr_proc_flush();
      hh__tr_write_chunk(ts->buf, len, ts->index, n, ts->model);
    }
    spin_unlock(&ts->lock);
  }
  write_lock_give();
  hh__tr_meta_lock();
  uint8_t *p = hh__tr_proc_reserve(1 + 2 * HH_VARINT_MAX);
  if (p != NULL) {
    *p++ = HH_REC_END;
    p = hh__tr_varint(p, hh__tr_now());
    p = hh__tr_varint(p, hh__tr_events_written());
    hh__tr_proc_commit(p);
  }
  hh__tr_proc_flush_locked();
  hh__tr_meta_unlock();
  atomic_store(&hh__tr_active, false);
  t_stopping = false;
}

void hh__trace_after_dlclose(void) {
  if (!atomic_load(&hh__tr_active) || (pid_t)syscall(SYS_getpid) != owner_pid) return;
  hh__tr_busy++;
  hh__tr_modules_scan(true);
  hh__tr_busy--;
}

/* From a signal handler that interrupted this thread where it holds the
 * process buffer's lock (a new call stack's records), the marker waited for
 * it for good, and the program hung: there (interrupted, or inside the
 * tracer outside the hook) it is written only if the lock is free and the
 * buffer has room, as a flush may wait for what the interrupted code holds;
 * else it is left out, as that handler's allocations are. */
void hh__trace_marker(const char *name, bool interrupted) {
  if (name == NULL || !atomic_load(&hh__tr_active)) return;
  bool wait = !interrupted && hh__tr_busy == 0 && !t_locked_outside_hook;
  size_t n = strnlen(name, 4096);
  size_t room = 1 + 2 * HH_VARINT_MAX + n;
  hh__tr_busy++;
  uint8_t *p;
  if (wait) {
    hh__tr_meta_lock();
    p = hh__tr_proc_reserve(room);
  } else if ((p = hh__tr_proc_try_reserve(room)) == NULL) {
    hh__tr_busy--;
    return;
  }
  if (p != NULL) {
    /* Timed under the lock, which orders the records in the process
     * buffer: two threads' markers timed before it were written in the
     * order they took the lock, a later time first now and then ("events
     * came too late" on a program marking its phases in several threads,
     * trace.markers). Published: an event after it in any thread does not
     * precede it. */
    *p++ = HH_REC_MARKER;
    p = hh__tr_varint(p, hh__tr_clock_now_published());
    p = hh__tr_string(p, name, n);
    hh__tr_proc_commit(p);
  }
  hh__tr_meta_unlock();
  hh__tr_busy--;
}

/* ---- start ------------------------------------------------------------------------- */

/* HEAPHOOK_TRACE_CHILDREN as an earlier process marked it: a false value
 * ("0", "false", "no", "off") with its first character made '-'. Another
 * value starting with '-' ("-1") is the user's, and checked as a boolean
 * (before, it silently turned tracing off in every process). */
static bool marked_off(const char *v) {
  if (v[0] != '-') return false;
  return v[1] == '\0' || strcasecmp(v + 1, "alse") == 0 || strcasecmp(v + 1, "o") == 0 ||
         strcasecmp(v + 1, "ff") == 0;
}

static int bool_option(const char *name, bool *out) {
  const char *v = hh__env_get(name);
  if (v == NULL || *v == '\0') return 0;
  if (hh__parse_bool(v, out) == 0) return 0;
  hh__log("%s=%s: expected 1 or 0 (also true/false, yes/no, on/off)", name, v);
  return -1;
}

/* HEAPHOOK_TRACE_WRITERS: the writer and its helpers (*helpers: one less).
 * By default a quarter of the processors this process may run on, 1 to 4:
 * one writer keeps up with about four busy threads, and the program keeps
 * the other processors. */
static int writers_option(int *helpers) {
  cpu_set_t cpus;
  int n = sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) / 4 : 1;
  n = n < 1 ? 1 : n > 4 ? 4 : n;
  const char *v = hh__env_get("HEAPHOOK_TRACE_WRITERS");
  if (v != NULL && *v != '\0') {
    n = 0;
    for (const char *c = v; *c != '\0' && n >= 0 && n <= WRITERS_MAX; c++)
      n = *c >= '0' && *c <= '9' ? n * 10 + (*c - '0') : -1; /* (-1: not a number) */
    if (n < 1 || n > WRITERS_MAX) {
      hh__log("HEAPHOOK_TRACE_WRITERS=%s: expected a number of threads from 1 to %d", v, WRITERS_MAX);
      return -1;
    }
  }
  *helpers = n - 1;
  return 0;
}

static int trace_start(void) {
  hh_tr_options *o = &hh__tr_opt;
  o->output = hh__env_get("HEAPHOOK_OUTPUT");
  o->stacks = true;
  o->children = true;
  o->sample = 0;
  const char *s = hh__env_get("HEAPHOOK_TRACE_SAMPLE");
  if (s != NULL && *s != '\0') {
    size_t bytes;
    if (hh__parse_size(s, &bytes) != 0) {
      hh__log(
          "HEAPHOOK_TRACE_SAMPLE=%s: expected a size in bytes such as 524288 or 512K (0: every allocation)",
          s);
      return -1;
    }
    if (bytes > HH_SAMPLE_PERIOD_MAX) {
      hh__log("HEAPHOOK_TRACE_SAMPLE=%s: a period of at most 65536T (2^56 bytes)", s);
      return -1;
    }
    o->sample = bytes;
  }
  if (bool_option("HEAPHOOK_TRACE_STACKS", &o->stacks) != 0) return -1;
  if (writers_option(&helpers_wanted) != 0) return -1;
  /* HEAPHOOK_TRACE_CHILDREN=0: the first process traces and marks the
   * variable (its value's first character becomes '-', in place: no
   * allocation) so that programs it execs, which inherit it, do not. */
  char *children = (char *)hh__env_get("HEAPHOOK_TRACE_CHILDREN");
  if (children != NULL && marked_off(children)) return 0;
  if (children != NULL && bool_option("HEAPHOOK_TRACE_CHILDREN", &o->children) != 0) return -1;
  if (!o->children && children != NULL) children[0] = '-';

  owner_pid = (pid_t)syscall(SYS_getpid);
  hh__tr_clock_start();
  hh__tr_self_init();
  if (o->stacks) hh__tr_stacks_init();
  /* About 1 s and 10 ms at 2-4 GHz. */
  flush_after = (hh__tr_use_tsc ? 1ull << 31 : 1000000000ull) >> hh__tr_tick_shift;
  rss_every = (hh__tr_use_tsc ? 1ull << 25 : 10000000ull) >> hh__tr_tick_shift;
  static bool once;
  if (!once) {
    once = true;
    have_key = pthread_key_create(&exit_key, on_thread_exit) == 0;
    hh__atfork(at_prepare, at_parent, at_child);
  }
  if (hh__tr_file_open(getppid()) != 0) return 0; /* warned; the program runs on */
  hh__tr_command_record();
  hh__tr_modules_scan(false);
  hh__tr_procfs_open();
  atomic_store(&next_rss, 0);
  return 0;
}

/* Sampled mode is the hook's sampler's (recorder.h): the tracer is told of
 * the sampled blocks only. */
static size_t trace_sample_period(void) { return hh__tr_opt.sample; }

const hh_recorder hh__trace_recorder = {
    .name = "trace",
    .summary = "every allocation with time, thread and call stack, to a trace file (HEAPHOOK_OUTPUT)",
    .start = trace_start,
    .sample_period = trace_sample_period,
    .on_alloc = trace_on_alloc,
    .on_free = trace_on_free,
    .on_realloc_begin = trace_on_realloc_begin,
    .on_realloc = trace_on_realloc,
    .stop = trace_stop,
};

/* runner: start one command without a shell and measure that run alone.
 *
 * The command is started (PATH search as execvp does) in a process group of
 * its own, with the standard streams it is given and a parent-death signal
 * (PR_SET_PDEATHSIG: if gpuopt dies, even of SIGKILL, the kernel kills it);
 * its
 * wall time is taken on the monotonic clock from just before the spawn to
 * just after wait4 reaps it, and its user / system CPU time and peak
 * resident set come from wait4's rusage for that child alone (not the
 * lifetime maximum over all children that getrusage(RUSAGE_CHILDREN)
 * gives). A run that outlives its timeout is killed with its whole process
 * group. Nothing a run starts outlives it: when it ends, what is left in its
 * group is killed, and so is what left the group (setsid, a daemon's double
 * fork), which the kernel hands to gpuopt (PR_SET_CHILD_SUBREAPER) when its
 * parent ends; run_result.strays counts them.
 *
 * One caveat stays with the kernel: Linux starts a new program's peak RSS
 * at the spawning process's own resident size, so a peak below
 * runner_floor_rss_kib() cannot be seen; the caller records that floor.
 *
 * runner_install_signals() makes the signals that would end gpuopt (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM) reach the
 * running command's process group instead — the first four as they are, the
 * others as SIGTERM — and kills the group 2 s later if it is still there
 * (at once once its leader has gone); runner_interrupted() then says so.
 * It also starts a watchdog process that kills the running command's group
 * when gpuopt dies without a word (SIGKILL), so no command, nor what it
 * started, is left running behind gpuopt. */
#ifndef GPUOPT_RUNNER_H
#define GPUOPT_RUNNER_H

#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>

#include "util.h"

struct caplog;

struct runner_stdio {
	int in, out, err;   /* descriptors the command gets as 0, 1 and 2 */
	const char *cwd;    /* the directory it starts in (NULL: gpuopt's own); a
			     * relative program path is taken from there */
	/* When set, that stream (out or err is then unused) goes to a pipe
	 * that the runner drains into the log (core/caplog.h) while the
	 * command runs and until what it started has ended; the caller
	 * finishes the log (caplog_finish). */
	struct caplog *out_log, *err_log;
};

struct run_result {
	double wall_s;        /* monotonic: just before spawn to just after reaping */
	double user_s, sys_s; /* CPU time of the child and the descendants it waited for */
	long peak_rss_kib;    /* ru_maxrss of the child */
	int exit_code;        /* exit status, or -1 when ended by a signal */
	int signal;           /* the signal that ended it, else 0 */
	bool timed_out;       /* killed by the runner at the timeout, or at a watch's deadline */
	bool deadline_hit;    /* ... at the watch's deadline, before the timeout (runner_run_watched) */
	int spawn_errno;      /* nonzero when it could not be started (then nothing ran) */
	unsigned strays;      /* processes it started that outlived it, killed (see runner_run) */
};

/* Runs argv (argv[0] looked up in PATH unless it has a '/') with the
 * environment of gpuopt and the given streams, killing it after timeout_s
 * seconds when timeout_s > 0. Returns true when the command ran, whatever
 * its exit status; false when it could not be started (r->spawn_errno says
 * why: ENOENT not found, EACCES not executable, ...). Never exits. */
bool runner_run(char *const argv[], const struct runner_stdio *io, double timeout_s,
		struct run_result *r);

/* A descriptor the runner reads while the command runs (a pipe or a socket
 * the command reports on as it goes), and a deadline the reading moves: a
 * command that reports each step can be given a time limit per step. */
struct runner_watch {
	int fd; /* the caller's; read with read(2), never closed here */
	/* Called with what each read() returned, as it came (on a SOCK_SEQPACKET
	 * socket: one whole message; a message over 256 KiB is cut there),
	 * elapsed_s the seconds since the command started. Returns when the
	 * command is to be killed, in seconds since its start; 0: only at the
	 * run's own timeout. Each answer replaces the one before. */
	double (*on_data)(void *arg, const char *data, size_t len, double elapsed_s);
	void *arg;
};

/* runner_run, reading w->fd while the command runs and what is left in it
 * once the command and all it started have ended, and killing the command
 * (r->timed_out and r->deadline_hit) at the deadline on_data last gave
 * when that comes before timeout_s. w NULL: runner_run. */
bool runner_run_watched(char *const argv[], const struct runner_stdio *io, double timeout_s,
			const struct runner_watch *w, struct run_result *r);

/* True when the run succeeded: exit status 0, no signal, no timeout. */
bool run_ok(const struct run_result *r);

/* Describes how a run ended ("exit status 3", "killed by signal 9 (Killed)",
 * "timed out after 2 s"); owned by the caller. */
char *run_describe(const struct run_result *r, double timeout_s);

/* The resident size of this process now, in KiB (0 when unknown); after
 * runner_reset_peak() this is also the lowest peak RSS a child can report. */
long runner_floor_rss_kib(void);

/* Lowers this process's recorded peak RSS to its current size
 * (/proc/self/clear_refs), so a child's peak starts from gpuopt's current
 * size, not from its largest ever. Best effort: silently does nothing where
 * not allowed. */
void runner_reset_peak(void);

/* The signals above: passed on to the running command's group, the flag
 * set; and the watchdog. Once per process; call it before any thread. */
void runner_install_signals(void);
bool runner_interrupted(void);
/* Adds the signals above (those passed on to a command) to set: a command
 * started elsewhere gets them back at their defaults. */
void runner_passed_signals(sigset_t *set);

/* For a command started elsewhere in a process group of its own (gpuopt
 * trace's program): the signals above go to group pgid, and if gpuopt dies
 * without a word the watchdog kills the group and removes dir (a directory
 * of files, or NULL) that it writes to. pgid 0 ends the watch. */
void runner_watch(pid_t pgid, const char *dir);
int runner_interrupt_signal(void); /* the first such signal, or 0 */

/* Finds a command name as posix_spawnp would: a name with '/' as is, else
 * each PATH entry. Returns true when an executable regular file is found. */
bool runner_find_program(const char *name);

/* How a child of runner_fork_read ended. */
struct fork_result {
	int status;      /* waitpid's status */
	bool timed_out;  /* killed after timeout_s */
};

/* Runs fn(arg, fd) in a child process (fork; it should _exit, and is made
 * to when it returns), which writes its answer to fd; the parent reads it
 * into out (appended, NUL-terminated) until the child closes fd or exits,
 * for at most timeout_s seconds, then kills it (SIGKILL) and reaps it. For
 * work whose memory, threads or crashes must stay out of gpuopt (the NVIDIA
 * libraries). False (errno set) when no child could be made. */
bool runner_fork_read(void (*fn)(void *arg, int fd), void *arg, double timeout_s, struct buf *out,
		      struct fork_result *res);

/* Opens path for reading / writing (truncating) with O_CLOEXEC; -1 and errno
 * on failure. "/dev/null" works for both. For reading, a pipe (a FIFO, or
 * bash's <(...)) is read to its end into an anonymous file (memory) first,
 * so the descriptor can be rewound for every run: more than pipe_max bytes
 * in it is -1 with errno EFBIG. */
int runner_open_in(const char *path, uint64_t pipe_max);
/* For writing, a FIFO is opened as open_direct opens it (core/fileio.h):
 * waited on for a reader at most FIFO_WAIT_S, never past a caught signal;
 * direct_error says its errno. */
int runner_open_out(const char *path);

#endif

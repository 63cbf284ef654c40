/* runner: see runner.h. */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "caplog.h"
#include "fileio.h"
#include "util.h"

extern char **environ;

/* The signals that end gpuopt by default and are caught while a command
 * runs: each is passed on to the command's process group (those a terminal
 * or a parent sends to stop a job as they are, the others as SIGTERM), and
 * the group is killed outright GRACE_S later, or once its leader exits. */
static const int caught[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM};
#define GRACE_S 2.0

static volatile sig_atomic_t running_pgid;
static volatile sig_atomic_t interrupted;
/* Shared with the watchdog process (see start_watchdog): the group to kill
 * if gpuopt dies without a word, and a directory of files to remove then. */
struct watched {
	volatile sig_atomic_t pgid;
	char dir[4096];
};
static struct watched *watched;
static volatile sig_atomic_t *watched_pgid;
static pid_t watchdog_pid;

static int forwarded(int sig)
{
	return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ? sig : SIGTERM;
}

static void on_signal(int sig)
{
	if (!interrupted)
		interrupted = sig;
	pid_t g = (pid_t)running_pgid;
	if (g > 0)
		kill(-g, forwarded(sig));
}

/* A process that outlives a gpuopt killed by SIGKILL (or any death): it
 * waits for the end of a pipe only gpuopt holds, then kills the group of
 * the command that was running, grandchildren included (PR_SET_PDEATHSIG
 * reaches only the direct child). It holds no other file, ignores the
 * signals a terminal sends the whole job, and exits with gpuopt. */
static void start_watchdog(void)
{
	struct watched *page = mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fds[2];
	if (page == MAP_FAILED)
		return;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		munmap(page, sizeof *page);
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		munmap(page, sizeof *page);
		return;
	}
	if (pid == 0) {
		for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
			signal(caught[i], SIG_IGN);
		int null = open("/dev/null", O_RDWR);
		for (int fd = 0; fd < 3; fd++)
			if (null >= 0 && null != fd)
				dup2(null, fd);
		if (fds[0] != 3)
			dup2(fds[0], 3);
		if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
			for (int fd = 4; fd < 4096; fd++)
				close(fd);
		char b;
		while (read(3, &b, 1) < 0 && errno == EINTR)
			;
		pid_t g = (pid_t)page->pgid;
		if (g > 0)
			kill(-g, SIGKILL);
		if (page->dir[0]) {
			/* what the group was writing there: its files, then the directory */
			nanosleep(&(struct timespec){0, 100000000}, NULL);
			DIR *d = opendir(page->dir);
			struct dirent *de;
			char path[sizeof page->dir + 256];
			while (d && (de = readdir(d)))
				if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
				    snprintf(path, sizeof path, "%s/%s", page->dir, de->d_name) < (int)sizeof path)
					unlink(path);
			if (d)
				closedir(d);
			rmdir(page->dir);
		}
		_exit(0);
	}
	close(fds[0]); /* fds[1] stays open, unused, until gpuopt ends */
	watched = page;
	watched_pgid = &page->pgid;
	watchdog_pid = pid;
}

void runner_install_signals(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++) {
		struct sigaction old;
		if (sigaction(caught[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN && caught[i] != SIGPIPE)
			continue; /* nohup's SIGHUP stays ignored */
		sigaction(caught[i], &sa, NULL);
	}
	start_watchdog();
}

void runner_passed_signals(sigset_t *set)
{
	for (size_t i = 0; i < sizeof caught / sizeof *caught; i++)
		sigaddset(set, caught[i]);
}

bool runner_interrupted(void)
{
	return interrupted != 0;
}

int runner_interrupt_signal(void)
{
	return (int)interrupted;
}

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static double tv_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static void kill_group(pid_t pid)
{
	if (kill(-pid, SIGKILL) != 0)
		kill(pid, SIGKILL);
}

static void set_running(pid_t pid)
{
	running_pgid = pid;
	if (watched_pgid)
		*watched_pgid = pid;
}

void runner_watch(pid_t pgid, const char *dir)
{
	if (watched) {
		watched->dir[0] = '\0';
		if (dir && strlen(dir) < sizeof watched->dir)
			memcpy(watched->dir, dir, strlen(dir) + 1);
	}
	set_running(pgid);
	if (pgid > 0 && interrupted)
		kill(-pgid, forwarded((int)interrupted));
}

/* The reading of a watched run: the descriptor, its buffer, the deadline
 * its reader set last (seconds since the start; 0 none). */
struct watching {
	const struct runner_watch *w;
	char *buf;
	bool open;       /* still worth polling: no end of file or error yet */
	double deadline;
};

#define WATCH_BUF (256u * 1024)

/* One read of the watched descriptor, handed to its reader. False at its
 * end or on an error (then it is not polled again). */
static bool watch_read(struct watching *wt, const struct timespec *start)
{
	ssize_t n = read(wt->w->fd, wt->buf, WATCH_BUF);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		wt->open = false;
		return false;
	}
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	wt->deadline = wt->w->on_data(wt->w->arg, wt->buf, (size_t)n, seconds_between(start, &now));
	return true;
}

/* What is left in the watched descriptor once nothing writes to it any more:
 * read while poll says there is something, without waiting. */
static void watch_drain(struct watching *wt, const struct timespec *start)
{
	for (int i = 0; wt->open && i < 1 << 20; i++) {
		struct pollfd p = {.fd = wt->w->fd, .events = POLLIN};
		int n = poll(&p, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || !(p.revents & (POLLIN | POLLHUP)) || !watch_read(wt, start))
			break;
	}
}

/* The pipes of the streams kept in caplogs (runner_stdio's out_log and
 * err_log), read ends; -1 when not piped or at their end. */
struct capture {
	int fd[2];
	struct caplog *log[2];
};

/* Reads what one pipe has into its log; closes it at its end. */
static void capture_read(struct capture *cp, int i)
{
	char chunk[65536];
	ssize_t n = read(cp->fd[i], chunk, sizeof chunk);
	if (n > 0) {
		caplog_write(cp->log[i], chunk, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(cp->fd[i]);
		cp->fd[i] = -1;
	}
}

/* Adds the open pipes to p (from index n); returns the new count. */
static int capture_poll_set(const struct capture *cp, struct pollfd *p, int n, int *which)
{
	for (int i = 0; i < 2; i++)
		if (cp->fd[i] >= 0) {
			p[n].fd = cp->fd[i];
			p[n].events = POLLIN;
			p[n].revents = 0;
			which[n++] = i;
		}
	return n;
}

/* Drains the pipes for up to ms milliseconds (0: what is there now); at
 * most until both have ended. */
static void capture_drain(struct capture *cp, int ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p[2];
		int which[2];
		int n = capture_poll_set(cp, p, 0, which);
		if (!n)
			return;
		clock_gettime(CLOCK_MONOTONIC, &now);
		int left = ms - (int)(seconds_between(&t0, &now) * 1000);
		int got = poll(p, (nfds_t)n, left > 0 ? left : 0);
		if (got < 0 && errno == EINTR && left > 0)
			continue;
		if (got <= 0)
			return;
		for (int k = 0; k < n; k++)
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				capture_read(cp, which[k]);
	}
}

/* Waits until pid has exited (leaving the zombie for wait4), killing its
 * group at the timeout (timeout_s > 0), at the watch's deadline (wt not
 * NULL) or GRACE_S after an interrupting signal was passed on, reading the
 * watched descriptor and draining the captured streams meanwhile. Returns
 * true when it timed out; *deadline_hit when the watch's deadline came
 * first. */
static bool wait_until(pid_t pid, const struct timespec *start, double timeout_s, struct watching *wt,
		       struct capture *cp, bool *deadline_hit)
{
	struct timespec now, since = {0, 0};
	bool killed = false;
#ifdef SYS_pidfd_open
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
#else
	int pfd = -1;
#endif
	bool timed_out = false;
	*deadline_hit = false;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double elapsed = seconds_between(start, &now);
		bool by_watch = wt && wt->deadline > 0 && (timeout_s <= 0 || wt->deadline < timeout_s);
		double limit = by_watch ? wt->deadline : timeout_s;
		double left = limit > 0 ? limit - elapsed : -1;
		if (limit > 0 && left <= 0 && !killed) {
			kill_group(pid);
			timed_out = killed = true;
			*deadline_hit = by_watch;
		}
		if (interrupted && !killed) {
			if (!since.tv_sec && !since.tv_nsec)
				since = now;
			double grace = GRACE_S - seconds_between(&since, &now);
			if (grace <= 0) {
				kill_group(pid);
				killed = true;
			} else if (left < 0 || grace < left) {
				left = grace;
			}
		}
		if (killed)
			left = -1; /* SIGKILL: it goes now */
		struct pollfd p[4];
		int which[4];
		nfds_t np = 0;
		int at_pid = -1, at_watch = -1;
		if (pfd >= 0) {
			p[np] = (struct pollfd){.fd = pfd, .events = POLLIN};
			at_pid = (int)np++;
		}
		if (wt && wt->open && !killed) {
			p[np] = (struct pollfd){.fd = wt->w->fd, .events = POLLIN};
			at_watch = (int)np++;
		}
		int first_cap = (int)np;
		np = (nfds_t)capture_poll_set(cp, p, first_cap, which);
		bool capturing = (int)np > first_cap;
		/* without a pidfd (Linux before 5.3), look every 200 us without reaping */
		int ms = pfd < 0 ? 0 : left < 0 ? -1 : (int)(left * 1000) + 1;
		if (pfd < 0 && (at_watch >= 0 || capturing))
			ms = 1;
		int n = np ? poll(p, np, ms) : 0;
		if (n < 0 && errno != EINTR) {
			if (pfd >= 0)
				break; /* cannot wait here: wait4 will block instead */
		}
		if (n > 0 && at_watch >= 0 && (p[at_watch].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
			if (p[at_watch].revents & (POLLERR | POLLNVAL))
				wt->open = false;
			else
				watch_read(wt, start);
		}
		for (int k = first_cap; k < (int)np && n > 0; k++)
			if (p[k].revents & (POLLIN | POLLHUP | POLLERR))
				capture_read(cp, which[k]);
		if (n > 0 && at_pid >= 0 && p[at_pid].revents)
			break;
		if (pfd < 0) {
			siginfo_t si;
			memset(&si, 0, sizeof si);
			if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
				break;
			if (at_watch < 0 && !capturing) {
				struct timespec nap = {0, 200000};
				nanosleep(&nap, NULL);
			}
		}
	}
	if (pfd >= 0)
		close(pfd);
	return timed_out;
}

/* The program argv[0] names, looked up as execvp would: a name with '/' as
 * it is, else the first executable regular file of that name in PATH.
 * Owned; NULL and errno (ENOENT, EACCES) when there is none. */
static char *find_program(const char *name);

/* Starts argv in a process group of its own, on the given streams, with
 * the default signal dispositions and an empty mask, and with a parent-death
 * signal: if gpuopt dies, the kernel kills the command (SIGKILL). vfork, so
 * the time from the call to the program's start stays that of posix_spawn;
 * all signals are blocked around it, so no handler runs in the child. */
static pid_t spawn(const char *path, char *const argv[], const struct runner_stdio *io, int *err)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	volatile int child_errno = 0;
	pid_t parent = getpid();
	const int from[3] = {io->in, io->out, io->err};
	pid_t pid = vfork();
	if (pid == 0) {
		/* the child: system calls only, on what was prepared above */
		setpgid(0, 0);
		for (int fd = 0; fd < 3; fd++)
			if (from[fd] != fd && dup2(from[fd], fd) < 0) {
				child_errno = errno;
				_exit(127);
			}
		if (io->cwd && chdir(io->cwd) != 0) {
			child_errno = errno;
			_exit(127);
		}
		/* handlers would run here, in gpuopt's memory, until the exec:
		 * back to the default; ignored signals stay ignored (as exec
		 * keeps them), but for SIGINT, SIGTERM and SIGPIPE */
		struct sigaction dfl, cur;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP && sigaction(sig, NULL, &cur) == 0 &&
			    (cur.sa_handler != SIG_IGN || sig == SIGINT || sig == SIGTERM || sig == SIGPIPE) &&
			    cur.sa_handler != SIG_DFL)
				sigaction(sig, &dfl, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127); /* gpuopt died already */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(path, argv, environ);
		child_errno = errno;
		_exit(127);
	}
	int e = pid < 0 ? errno : child_errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid > 0 && e) { /* it never ran: reap it */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		pid = -1;
	}
	*err = e;
	return pid;
}

/* The start time of pid (clock ticks since boot, /proc/PID/stat's 22nd
 * field), or 0 when it is gone; *ppid its parent. */
static unsigned long long proc_start(pid_t pid, pid_t *ppid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the name may hold anything */
	if (!p)
		return 0;
	/* after ") ": state(3) ppid(4) ... starttime(22) */
	int field = 2;
	unsigned long long start = 0;
	for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
		field++;
		if (field == 4 && ppid)
			*ppid = (pid_t)atoi(tok);
		if (field == 22) {
			start = strtoull(tok, NULL, 10);
			break;
		}
	}
	return start;
}

/* Kills and reaps gpuopt's children that started no earlier than since
 * (the run's own start) other than the watchdog: processes a run left,
 * handed to gpuopt as their subreaper. Repeats while killing them hands
 * over more. Returns how many. */
static unsigned reap_strays(unsigned long long since)
{
	unsigned n = 0;
	for (int pass = 0; pass < 64; pass++) {
		DIR *d = opendir("/proc");
		if (!d)
			return n;
		unsigned found = 0;
		struct dirent *de;
		pid_t self = getpid();
		while ((de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (*end || pid <= 0 || (pid_t)pid == watchdog_pid)
				continue;
			pid_t ppid = 0;
			unsigned long long start = proc_start((pid_t)pid, &ppid);
			if (ppid != self || !start || start < since)
				continue;
			kill((pid_t)pid, SIGKILL);
			while (waitpid((pid_t)pid, NULL, 0) < 0 && errno == EINTR)
				;
			found++;
		}
		closedir(d);
		n += found;
		if (!found)
			break;
	}
	return n;
}

bool runner_run(char *const argv[], const struct runner_stdio *io, double timeout_s,
		struct run_result *r)
{
	return runner_run_watched(argv, io, timeout_s, NULL, r);
}

bool runner_run_watched(char *const argv[], const struct runner_stdio *io, double timeout_s,
			const struct runner_watch *w, struct run_result *r)
{
	static bool subreaper;
	if (!subreaper) {
		/* what a run's processes leave behind comes to gpuopt, to be ended */
		prctl(PR_SET_CHILD_SUBREAPER, 1);
		subreaper = true;
	}
	memset(r, 0, sizeof *r);
	/* a relative program path is taken from the directory it starts in */
	char *rel = io->cwd && strchr(argv[0], '/') && argv[0][0] != '/' ? xasprintf("%s/%s", io->cwd, argv[0]) : NULL;
	char *path = find_program(rel ? rel : argv[0]);
	free(rel);
	if (!path) {
		r->spawn_errno = errno ? errno : ENOENT;
		return false;
	}
	/* the streams kept in logs go through pipes */
	struct capture cp = {{-1, -1}, {io->out_log, io->err_log}};
	struct runner_stdio pio = *io;
	int wr[2] = {-1, -1};
	for (int i = 0; i < 2; i++) {
		int fds[2];
		if (!cp.log[i])
			continue;
		if (pipe2(fds, O_CLOEXEC) != 0) {
			r->spawn_errno = errno;
			for (int k = 0; k < i; k++)
				if (cp.fd[k] >= 0) {
					close(cp.fd[k]);
					close(wr[k]);
				}
			free(path);
			return false;
		}
		cp.fd[i] = fds[0];
		wr[i] = fds[1];
		*(i ? &pio.err : &pio.out) = fds[1];
	}
	struct timespec t0, t1;
	int e = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = spawn(path, argv, &pio, &e);
	free(path);
	for (int i = 0; i < 2; i++)
		if (wr[i] >= 0)
			close(wr[i]); /* the command holds them now */
	if (pid < 0) {
		for (int i = 0; i < 2; i++)
			if (cp.fd[i] >= 0)
				close(cp.fd[i]);
		r->spawn_errno = e ? e : EAGAIN;
		return false;
	}
	set_running(pid);
	unsigned long long started = proc_start(pid, NULL);
	if (interrupted)
		kill(-pid, forwarded((int)interrupted));
	struct watching wt = {w, w ? xmalloc(WATCH_BUF) : NULL, w && w->fd >= 0, 0};
	r->timed_out = wait_until(pid, &t0, timeout_s, w ? &wt : NULL, &cp, &r->deadline_hit);
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* nothing it started outlives it: its group (given up to 1 s to end on
	 * its own, as workers finishing their files do), then what left it */
	for (int i = 0; i < 100 && !interrupted; i++) {
		while (waitpid(-pid, NULL, WNOHANG) > 0)
			;
		if (kill(-pid, 0) != 0)
			break;
		if (cp.fd[0] >= 0 || cp.fd[1] >= 0)
			capture_drain(&cp, 10); /* they may be writing still */
		else
			nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	kill(-pid, SIGKILL);
	if (started)
		r->strays = reap_strays(started);
	/* what is left in the pipes: all their writers are gone, unless one
	 * escaped both the group and gpuopt (then at most 100 ms more) */
	capture_drain(&cp, 100);
	for (int i = 0; i < 2; i++)
		if (cp.fd[i] >= 0)
			close(cp.fd[i]);
	set_running(0);
	if (w)
		watch_drain(&wt, &t0); /* what it said last, now that nothing writes any more */
	free(wt.buf);
	r->wall_s = seconds_between(&t0, &t1);
	r->user_s = tv_seconds(&ru.ru_utime);
	r->sys_s = tv_seconds(&ru.ru_stime);
	r->peak_rss_kib = ru.ru_maxrss;
	if (WIFEXITED(status)) {
		r->exit_code = WEXITSTATUS(status);
	} else {
		r->exit_code = -1;
		r->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	return true;
}

bool run_ok(const struct run_result *r)
{
	return r->spawn_errno == 0 && !r->timed_out && r->signal == 0 && r->exit_code == 0;
}

char *run_describe(const struct run_result *r, double timeout_s)
{
	if (r->spawn_errno)
		return xasprintf("could not be started: %s", strerror(r->spawn_errno));
	if (r->timed_out)
		return xasprintf("timed out after %g s and was killed", timeout_s);
	if (r->signal)
		return xasprintf("was killed by signal %d (%s)", r->signal, strsignal(r->signal));
	return xasprintf("exited with status %d", r->exit_code);
}

long runner_floor_rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "re");
	if (!f)
		return 0;
	unsigned long size = 0, resident = 0;
	int n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	if (n != 2)
		return 0;
	return (long)(resident * (unsigned long)sysconf(_SC_PAGESIZE) / 1024);
}

void runner_reset_peak(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "5", 1) < 0) {
		/* best effort: not allowed here */
	}
	close(fd);
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static char *find_program(const char *name)
{
	errno = ENOENT;
	if (!*name)
		return NULL;
	if (strchr(name, '/')) {
		if (is_executable_file(name))
			return xstrdup(name);
		errno = access(name, F_OK) == 0 ? EACCES : ENOENT;
		return NULL;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	bool denied = false;
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *full = len ? xasprintf("%.*s/%s", (int)len, p, name) : xstrdup(name);
		if (is_executable_file(full))
			return full;
		denied |= access(full, F_OK) == 0;
		free(full);
		if (!colon)
			break;
		p = colon + 1;
	}
	errno = denied ? EACCES : ENOENT;
	return NULL;
}

bool runner_find_program(const char *name)
{
	char *p = find_program(name);
	free(p);
	return p != NULL;
}

/* Copies what is left to read of `from` into `to`, at most max bytes;
 * false and errno on an error, EFBIG past max. */
static bool copy_fd(int from, int to, uint64_t max)
{
	char buf[65536];
	uint64_t done = 0;
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0;
		if ((uint64_t)n > max - done) {
			errno = EFBIG;
			return false;
		}
		done += (uint64_t)n;
		if (!write_all(to, buf, (size_t)n))
			return false;
	}
}

int runner_open_in(const char *path, uint64_t pipe_max)
{
	int fd = open_read(path, FIFO_WAIT_S);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return fd;
	/* a pipe is read once, to its end, into an anonymous file */
	int copy = memfd_create("gpuopt-input", MFD_CLOEXEC);
	if (copy < 0 || !copy_fd(fd, copy, pipe_max) || lseek(copy, 0, SEEK_SET) != 0) {
		int err = errno;
		close(fd);
		if (copy >= 0)
			close(copy);
		errno = err;
		return -1;
	}
	close(fd);
	return copy;
}

int runner_open_out(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISFIFO(st.st_mode))
		return open_direct(path); /* never hung on a FIFO nobody reads */
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

bool runner_fork_read(void (*fn)(void *arg, int fd), void *arg, double timeout_s, struct buf *out,
		      struct fork_result *res)
{
	res->status = 0;
	res->timed_out = false;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0)
		return false;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		errno = e;
		return false;
	}
	if (pid == 0) {
		close(fds[0]);
		fn(arg, fds[1]);
		_exit(0);
	}
	close(fds[1]);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	buf_reserve(out, 1);
	out->data[out->len] = '\0';
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		double left = timeout_s - ((double)(now.tv_sec - t0.tv_sec) +
					   (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
		if (left <= 0) {
			res->timed_out = true;
			break;
		}
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r <= 0)
			continue; /* EINTR, or time to look at the clock */
		buf_reserve(out, 65536);
		ssize_t n = read(fds[0], out->data + out->len, out->cap - out->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		out->len += (size_t)n;
		out->data[out->len] = '\0';
	}
	close(fds[0]);
	if (res->timed_out)
		kill(pid, SIGKILL);
	while (waitpid(pid, &res->status, 0) < 0 && errno == EINTR)
		;
	return true;
}

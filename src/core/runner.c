/* runner: see runner.h. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

extern char **environ;

static volatile sig_atomic_t running_pgid;
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
	pid_t g = (pid_t)running_pgid;
	if (g > 0)
		kill(-g, SIGKILL);
}

void runner_install_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool runner_interrupted(void)
{
	return interrupted != 0;
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

/* Waits until pid has exited or the deadline passes (then kills its group);
 * leaves the zombie for wait4. Returns true when it timed out. */
static bool wait_until(pid_t pid, const struct timespec *start, double timeout_s)
{
	struct timespec now;
#ifdef SYS_pidfd_open
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		bool timed_out = false;
		for (;;) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			double left = timeout_s - seconds_between(start, &now);
			if (left <= 0) {
				kill_group(pid);
				timed_out = true;
				break;
			}
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			int ms = (int)(left * 1000) + 1;
			int n = poll(&p, 1, ms);
			if (n > 0)
				break;
			if (n < 0 && errno != EINTR)
				break; /* cannot wait here: wait4 will block instead */
		}
		close(pfd);
		return timed_out;
	}
#endif
	/* No pidfd (Linux before 5.3): look every 200 us without reaping. */
	for (;;) {
		siginfo_t si;
		memset(&si, 0, sizeof si);
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
			return false;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds_between(start, &now) >= timeout_s) {
			kill_group(pid);
			return true;
		}
		struct timespec nap = {0, 200000};
		nanosleep(&nap, NULL);
	}
}

bool runner_run(char *const argv[], const struct runner_stdio *io, double timeout_s,
		struct run_result *r)
{
	memset(r, 0, sizeof *r);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	const int from[3] = {io->in, io->out, io->err};
	for (int fd = 0; fd < 3; fd++)
		if (from[fd] != fd)
			posix_spawn_file_actions_adddup2(&fa, from[fd], fd);
	if (io->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, io->cwd);
	posix_spawnattr_init(&at);
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGPIPE);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					      POSIX_SPAWN_SETSIGDEF);

	struct timespec t0, t1;
	pid_t pid;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int e = posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (e != 0) {
		r->spawn_errno = e;
		return false;
	}
	running_pgid = pid;
	if (interrupted)
		kill_group(pid);
	if (timeout_s > 0)
		r->timed_out = wait_until(pid, &t0, timeout_s);
	int status = 0;
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	running_pgid = 0;
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

bool runner_find_program(const char *name)
{
	if (!*name)
		return false;
	if (strchr(name, '/'))
		return is_executable_file(name);
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; ) {
		const char *colon = strchr(p, ':');
		size_t len = colon ? (size_t)(colon - p) : strlen(p);
		char *full = len ? xasprintf("%.*s/%s", (int)len, p, name) : xstrdup(name);
		bool found = is_executable_file(full);
		free(full);
		if (found)
			return true;
		if (!colon)
			return false;
		p = colon + 1;
	}
}

/* Copies what is left to read of `from` into `to`; false and errno on an error. */
static bool copy_fd(int from, int to)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0;
		if (!write_all(to, buf, (size_t)n))
			return false;
	}
}

int runner_open_in(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return fd;
	/* a pipe is read once, to its end, into an anonymous file */
	int copy = memfd_create("gpuopt-input", MFD_CLOEXEC);
	if (copy < 0 || !copy_fd(fd, copy) || lseek(copy, 0, SEEK_SET) != 0) {
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

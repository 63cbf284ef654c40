/* run: trace_run — start the program with the tracer injected, pass its
 * output through (reading it for the log lines that say an accelerator
 * mode fell back to the CPU), wait for it, and collect every process's
 * summary and events from the trace directory (see trace.h).
 *
 * The program runs in gpuopt's process group, so the terminal's Ctrl-C
 * reaches it directly (Python turns it into KeyboardInterrupt and exits
 * normally, and the tracer flushes); gpuopt ignores SIGINT meanwhile and
 * passes SIGTERM on. --timeout sends SIGTERM, then SIGKILL 5 s later. */
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/fileio.h"
#include "core/runner.h"
#include "core/util.h"
#include "gpu/gpuinfo.h"

extern char **environ;

#define TRACER_NAME "libgpuopt_trace.so"

static bool readable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

char *trace_find_tracer(const char *override, char **looked)
{
	*looked = NULL;
	if (override) {
		if (readable(override))
			return realpath(override, NULL);
		*looked = xstrdup(override);
		return NULL;
	}
	const char *env = getenv("GPUOPT_TRACER");
	if (env && *env) {
		if (readable(env))
			return realpath(env, NULL);
		*looked = xasprintf("%s ($GPUOPT_TRACER)", env);
		return NULL;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	struct buf where = {0};
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		const char *const rel[] = {TRACER_NAME, "trace/" TRACER_NAME, "lib/" TRACER_NAME,
					   "../lib/gpuopt/" TRACER_NAME, "../lib64/gpuopt/" TRACER_NAME,
					   "../lib/x86_64-linux-gnu/gpuopt/" TRACER_NAME};
		for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
			char *p = xasprintf("%s/%s", exe, rel[i]);
			if (readable(p)) {
				char *real = realpath(p, NULL);
				free(p);
				buf_free(&where);
				return real;
			}
			buf_printf(&where, "%s%s", where.len ? ", " : "", p);
			free(p);
		}
	}
#ifdef GPUOPT_LIBDIR
	char *p = xasprintf("%s/gpuopt/%s", GPUOPT_LIBDIR, TRACER_NAME);
	if (readable(p)) {
		buf_free(&where);
		return p;
	}
	buf_printf(&where, "%s%s", where.len ? ", " : "", p);
	free(p);
#endif
	*looked = buf_steal(&where);
	return NULL;
}

/* ---- the program's output ---- */

struct pipe_state {
	int fd, to;
	struct caplog *log; /* where it goes instead of to, when set */
	char line[4096];
	size_t len;
	bool open;
};

struct logscan {
	const struct trace_config *cfg;
	json_t *entries; /* [{library, kind, name, reason, count}] */
};

static char *group(const char *line, const regmatch_t *m, int g)
{
	if (g <= 0 || m[g].rm_so < 0)
		return NULL;
	int len = (int)(m[g].rm_eo - m[g].rm_so);
	if (len > 200)
		len = 200;
	return xstrndup(line + m[g].rm_so, (size_t)len);
}

static void scan_line(struct logscan *ls, const char *line)
{
	for (size_t i = 0; i < ls->cfg->npatterns; i++) {
		const struct trace_log_pattern *p = &ls->cfg->patterns[i];
		regmatch_t m[10];
		if (regexec(&p->re, line, 10, m, 0) != 0)
			continue;
		char *name = group(line, m, p->name_group), *reason = group(line, m, p->reason_group);
		size_t k;
		json_t *e = NULL;
		json_array_foreach(ls->entries, k, e) {
			const char *en = json_string_value(json_object_get(e, "name"));
			const char *er = json_string_value(json_object_get(e, "reason"));
			if (!strcmp(json_string_value(json_object_get(e, "library")), p->library) &&
			    !strcmp(json_string_value(json_object_get(e, "kind")), p->kind) &&
			    !strcmp(en ? en : "", name ? name : "") && !strcmp(er ? er : "", reason ? reason : ""))
				break;
		}
		if (k < json_array_size(ls->entries)) {
			json_t *c = json_object_get(e, "count");
			json_integer_set(c, json_integer_value(c) + 1);
		} else if (json_array_size(ls->entries) < 512) {
			json_array_append_new(ls->entries,
				json_pack("{s:s, s:s, s:s?, s:s?, s:I}", "library", p->library, "kind", p->kind,
					  "name", name, "reason", reason, "count", (json_int_t)1));
		}
		free(name);
		free(reason);
		return;
	}
}

/* Forwards what the pipe has and scans complete lines; false at EOF. */
static bool pump(struct pipe_state *ps, struct logscan *ls)
{
	char chunk[16384];
	ssize_t n = read(ps->fd, chunk, sizeof chunk);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0) {
		if (ps->len) {
			ps->line[ps->len] = '\0';
			scan_line(ls, ps->line);
			ps->len = 0;
		}
		return false;
	}
	if (ps->log)
		caplog_write(ps->log, chunk, (size_t)n);
	else
		write_all(ps->to, chunk, (size_t)n);
	for (ssize_t i = 0; i < n; i++) {
		char c = chunk[i];
		if (c == '\n' || ps->len == sizeof ps->line - 1) {
			ps->line[ps->len] = '\0';
			scan_line(ls, ps->line);
			ps->len = 0;
			if (c == '\n')
				continue;
		}
		ps->line[ps->len++] = c;
	}
	return true;
}

/* ---- starting and waiting ---- */


static double since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

/* The environment for the program: gpuopt's, with `extra` NAME=VALUE
 * entries replacing any of the same name. The array is owned; its strings
 * are environ's or extra's. */
static char **make_env(char **extra, size_t nextra)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + nextra + 1, sizeof *env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < nextra && !replaced; j++) {
			size_t len = (size_t)(strchr(extra[j], '=') - extra[j]);
			replaced = strncmp(environ[i], extra[j], len + 1) == 0;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < nextra; j++)
		env[k++] = extra[j];
	return env;
}

/* Runs argv with env; fills exit status and wall time. False when it could
 * not be started (*why owned). */
static bool spawn_and_wait(const struct trace_settings *s, char **env, const char *dir, struct trace *t,
			   struct logscan *ls, char **why)
{
	int out[2], err[2];
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
		*why = xasprintf("cannot make a pipe: %s", strerror(errno));
		return false;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	if (s->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, s->cwd);
	fflush(NULL);
	/* bench's process handling (core/runner.h): the signals that would end
	 * gpuopt go to the program's group (HUP, INT, QUIT and TERM as they are,
	 * the others as TERM), and a watchdog kills the group and removes the
	 * trace directory if gpuopt is killed outright */
	runner_install_signals();
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	sigset_t dflt;
	sigemptyset(&dflt);
	runner_passed_signals(&dflt);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pid_t pid;
	int rc = posix_spawnp(&pid, s->argv[0], &fa, &at, s->argv, env);
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	if (rc != 0) {
		close(out[0]);
		close(err[0]);
		*why = xasprintf("cannot start '%s': %s", s->argv[0], strerror(rc));
		return false;
	}
	runner_watch(pid, dir);
	bool logs = s->output == TRACE_OUT_LOGS;
	struct pipe_state ps[2] = {{.fd = out[0], .to = s->output == TRACE_OUT_STDERR ? 2 : 1,
				    .log = logs ? s->out_log : NULL, .open = true},
				   {.fd = err[0], .to = 2, .log = logs ? s->err_log : NULL, .open = true}};
	int status = 0;
	bool reaped = false, termed = false;
	double reaped_at = 0, term_at = 0, signalled_at = -1;
	while (!reaped || ps[0].open || ps[1].open) {
		struct pollfd p[2];
		int np = 0, map[2];
		for (int i = 0; i < 2; i++)
			if (ps[i].open) {
				p[np].fd = ps[i].fd;
				p[np].events = POLLIN;
				map[np++] = i;
			}
		int n = np ? poll(p, (nfds_t)np, 100) : (nanosleep(&(struct timespec){0, 100000000}, NULL), 0);
		for (int i = 0; i < np && n > 0; i++)
			if (p[i].revents & (POLLIN | POLLHUP | POLLERR))
				if (!pump(&ps[map[i]], ls)) {
					ps[map[i]].open = false;
					close(ps[map[i]].fd);
				}
		if (!reaped) {
			struct rusage ru;
			pid_t w = wait4(pid, &status, WNOHANG, &ru);
			if (w == pid) {
				reaped = true;
				reaped_at = since(&start);
				t->wall_s = reaped_at;
			} else if (runner_interrupted() && signalled_at < 0) {
				signalled_at = since(&start); /* passed on by the runner's handler */
			} else if (signalled_at >= 0 && since(&start) > signalled_at + 5) {
				kill(-pid, SIGKILL); /* it had 5 s to save its trace and end */
			} else if (s->timeout_s > 0 && since(&start) > s->timeout_s) {
				if (!termed) {
					kill(-pid, SIGTERM);
					termed = true;
					term_at = since(&start);
					t->timed_out = true;
				} else if (since(&start) > term_at + 5) {
					kill(-pid, SIGKILL);
				}
			}
		} else if (since(&start) > reaped_at + 2) {
			/* Something the program started still holds its output open:
			 * it had 2 s to finish (pool workers saving their traces) */
			for (int i = 0; i < 2; i++)
				if (ps[i].open) {
					ps[i].open = false;
					close(ps[i].fd);
				}
		}
	}
	/* what it left in its group ends with it */
	kill(-pid, SIGKILL);
	runner_watch(0, dir);
	if (WIFEXITED(status)) {
		t->exit_code = WEXITSTATUS(status);
		t->signal = 0;
	} else {
		t->exit_code = -1;
		t->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	}
	return true;
}

/* ---- collecting ---- */

static int cmp_proc(const void *a, const void *b)
{
	const struct trace_process *x = a, *y = b;
	if (x->t_start != y->t_start)
		return x->t_start < y->t_start ? -1 : 1;
	return x->pid - y->pid;
}

static void collect(const char *dir, struct trace *t)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct ptrvec names = {0};
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && str_ends_with(de->d_name, ".json"))
			ptrvec_push(&names, xstrdup(de->d_name));
	closedir(d);
	t->procs = xcalloc(names.len + 1, sizeof *t->procs);
	for (size_t i = 0; i < names.len; i++) {
		char *path = xasprintf("%s/%s", dir, (char *)names.items[i]);
		json_error_t err;
		json_t *o = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
		char *why = NULL;
		struct trace_process *p = &t->procs[t->nprocs];
		if (!o) {
			diag_error("trace: process summary %s: %s (line %d); skipped", (char *)names.items[i],
				   err.text, err.line);
		} else if (!trace_process_parse(o, p, &why)) {
			diag_error("trace: process summary %s: %s; skipped", (char *)names.items[i], why);
			free(why);
		} else {
			t->nprocs++;
			if (p->timeline) {
				char *ev = xasprintf("%s/%d.events", dir, p->pid);
				struct buf b = {0};
				char *w = NULL;
				if (read_file(ev, (size_t)16 << 30, &b, &w)) {
					if (!trace_events_decode((const unsigned char *)b.data, b.len, p->events_written, p, &w))
						diag_error("trace: events of process %d: %s; the timeline is left out", p->pid, w);
				}
				free(w);
				buf_free(&b);
				free(ev);
			}
		}
		json_decref(o);
		free(path);
	}
	qsort(t->procs, t->nprocs, sizeof *t->procs, cmp_proc);
	for (size_t i = 0; i < names.len; i++)
		free(names.items[i]);
	ptrvec_free(&names);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
				char *p = xasprintf("%s/%s", dir, de->d_name);
				unlink(p);
				free(p);
			}
		closedir(d);
	}
	rmdir(dir);
}

/* The tool that holds an injection already set in gpuopt's environment. */
static char *injection_conflict(const struct trace_config *cfg)
{
	const char *inj = getenv("CUDA_INJECTION64_PATH");
	if (!inj || !*inj)
		return NULL;
	const char *tool = trace_config_subscriber(cfg, inj);
	return xasprintf("%s's injection is already set (CUDA_INJECTION64_PATH=%s), and CUDA allows one "
			 "CUPTI subscriber per process", tool ? tool : "another tool", inj);
}

void trace_free(struct trace *t)
{
	if (!t)
		return;
	trace_clear(t);
	free(t);
}

static char *argv_display(char *const *argv)
{
	struct buf b = {0};
	for (size_t i = 0; argv[i]; i++)
		buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
	return buf_steal(&b);
}

struct trace *trace_run(const struct trace_settings *s, char **why)
{
	*why = NULL;
	if (!s->argv || !s->argv[0]) {
		*why = xstrdup("no command to trace");
		return NULL;
	}
	if (!runner_find_program(s->argv[0])) {
		*why = xasprintf("command not found: '%s'", s->argv[0]);
		return NULL;
	}
	if (s->cupti && !readable(s->cupti)) {
		*why = xasprintf("--cupti '%s': %s", s->cupti, access(s->cupti, F_OK) == 0 ? "not a readable file"
											      : strerror(errno));
		return NULL;
	}
	struct trace *t = xcalloc(1, sizeof *t);
	size_t argc = 0;
	while (s->argv[argc])
		argc++;
	t->argv = xcalloc(argc + 1, sizeof *t->argv);
	for (size_t i = 0; i < argc; i++)
		t->argv[i] = xstrdup(s->argv[i]);
	char here[PATH_MAX];
	if (getcwd(here, sizeof here))
		t->cwd = xstrdup(here);

	char *looked = NULL;
	char *tracer = trace_find_tracer(s->tracer, &looked);
	/* block: why the tracer cannot be injected at all; note: why CUDA
	 * cannot be traced (without a GPU the tracer still records NVTX ranges). */
	char *block = NULL, *note = NULL;
	if (!tracer)
		block = xasprintf("the tracer library " TRACER_NAME " is not installed (looked in %s)", looked);
	free(looked);
	if (!block)
		block = injection_conflict(s->config);
	if (!block) {
		t->gpu = gpuinfo_query(10);
		if (!json_is_true(json_object_get(t->gpu, "found"))) {
			const char *r = json_string_value(json_object_get(t->gpu, "reason"));
			note = xasprintf("no NVIDIA GPU: %s", r ? r : "none found");
		}
	}
	const char *why_not = block ? block : note;
	if (why_not && s->strict) {
		*why = xasprintf("%s; --strict: not running the program untraced", why_not);
		free(block);
		free(note);
		free(tracer);
		trace_free(t);
		return NULL;
	}
	char *cmd = argv_display(s->argv);
	if (block)
		diag_error("trace: %s; running `%s` untraced", block, cmd);
	else if (note)
		diag_error("trace: %s; running `%s` without CUDA tracing (NVTX ranges and log lines are still read)",
			   note, cmd);
	else if (!s->quiet)
		diag_error("tracing `%s` (tracer %s)", cmd, tracer);
	free(cmd);
	if (block)
		note = block;

	const char *tmpdir = getenv("TMPDIR");
	char *dirpath = xasprintf("%s/gpuopt-trace-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	bool have_dir = !block && mkdtemp(dirpath) != NULL;
	if (!block && !have_dir) {
		free(note);
		note = xasprintf("cannot make a directory for the trace in %s: %s", tmpdir ? tmpdir : "/tmp",
				 strerror(errno));
		diag_error("trace: %s; running the program untraced", note);
	}
	char *extra[8];
	size_t nextra = 0;
	if (have_dir) {
		extra[nextra++] = xasprintf("CUDA_INJECTION64_PATH=%s", tracer);
		const char *nvtx = getenv("NVTX_INJECTION64_PATH");
		if (!nvtx || !*nvtx)
			extra[nextra++] = xasprintf("NVTX_INJECTION64_PATH=%s", tracer);
		extra[nextra++] = xasprintf("GPUOPT_TRACE_DIR=%s", dirpath);
		extra[nextra++] = xasprintf("GPUOPT_TRACE_OPTS=timeline=%d,max_events=%llu,full=%d,strict=%d,"
					    "kernel_wait_ns=%llu,starved_gap_ns=%llu,sample=%d,sample_rate=%llu,"
					    "sample_on_ms=%llu,sample_period_ms=%llu",
					    s->timeline, (unsigned long long)(s->max_events ? s->max_events : 1000000),
					    s->full, s->strict,
					    (unsigned long long)(s->config->th[TH_KERNEL_WAIT_GAP_US] * 1000),
					    (unsigned long long)(s->config->th[TH_STARVED_MIN_GAP_US] * 1000),
					    s->sample, (unsigned long long)s->config->th[TH_SAMPLE_LAUNCH_RATE],
					    (unsigned long long)s->config->th[TH_SAMPLE_WINDOW_MS],
					    (unsigned long long)s->config->th[TH_SAMPLE_PERIOD_MS]);
		if (s->cupti) {
			char *real = realpath(s->cupti, NULL);
			extra[nextra++] = xasprintf("GPUOPT_TRACE_CUPTI=%s", real ? real : s->cupti);
			free(real);
		}
	}
	char **env = make_env(extra, nextra);
	struct logscan ls = {s->config, json_array()};
	bool ran = spawn_and_wait(s, env, have_dir ? dirpath : NULL, t, &ls, why);
	free(env);
	for (size_t i = 0; i < nextra; i++)
		free(extra[i]);
	if (have_dir) {
		collect(dirpath, t);
		remove_dir(dirpath);
	}
	free(dirpath);
	free(tracer);
	if (!ran) {
		json_decref(ls.entries);
		free(note);
		trace_free(t);
		return NULL;
	}
	/* The log lines' strings live in t->json. */
	t->json = json_pack("{s:o}", "log", ls.entries);
	t->log = xcalloc(json_array_size(ls.entries) + 1, sizeof *t->log);
	size_t k;
	json_t *e;
	json_array_foreach(ls.entries, k, e) {
		struct trace_logline *l = &t->log[t->nlog++];
		l->library = json_string_value(json_object_get(e, "library"));
		l->kind = json_string_value(json_object_get(e, "kind"));
		l->name = json_string_value(json_object_get(e, "name"));
		l->reason = json_string_value(json_object_get(e, "reason"));
		l->n = (uint64_t)json_integer_value(json_object_get(e, "count"));
	}
	for (size_t i = 0; i < t->nprocs; i++)
		if (!strcmp(t->procs[i].status, "traced") && t->procs[i].cupti_path)
			t->traced = true;
	if (!note && !t->traced) {
		const char *reason = NULL;
		for (size_t i = 0; i < t->nprocs && !reason; i++)
			reason = t->procs[i].reason;
		if (reason)
			note = xstrdup(reason);
		else if (t->nprocs)
			note = xstrdup("no process of the program initialised CUDA (only NVTX was recorded)");
		else
			note = xstrdup("no process of the program initialised CUDA or NVTX (nothing to trace), "
				       "or it was killed before the tracer could write");
	}
	t->note = note;
	return t;
}

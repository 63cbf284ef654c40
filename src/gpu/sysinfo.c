/* sysinfo: see sysinfo.h. Linux only: reads /proc, /sys and /etc/os-release.
 *
 * The import probe's channel (sysinfo_python_probe): the interpreter imports
 * packages that may print anything and write to any descriptor they find,
 * so its answers cannot come on its standard output, nor on a descriptor
 * whose number is the only secret. They come on a SOCK_SEQPACKET socket
 * given as its standard input, which data/probes/channel.py moves off
 * descriptor 0 before anything is imported, and each message must begin
 * with a token drawn here for that run and sent on the socket (never put in
 * argv or the environment, which every package can read): a message
 * without it is dropped, and the kernel keeps messages whole and apart, so
 * a stray write can neither forge an answer nor corrupt one. The same
 * channel carries each package's "begin", which starts that package's own
 * time limit (runner_run_watched's deadline). */
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/data.h"
#include "core/fileio.h"
#include "core/runner.h"
#include "core/shellsplit.h"
#include "core/util.h"

/* The whole small text file at path, or NULL. Owned by the caller. */
static char *slurp(const char *path)
{
	struct buf b = {0};
	char *why = NULL;
	if (!read_file(path, 1 << 22, &b, &why)) {
		free(why);
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

/* The value after "key<spaces>:<spaces>" on the first line that starts with
 * key, up to the end of the line; owned, or NULL. */
static char *field(const char *text, const char *key)
{
	size_t klen = strlen(key);
	for (const char *line = text; line && *line; ) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		if (len > klen && strncmp(line, key, klen) == 0) {
			const char *p = line + klen;
			while (p < line + len && (*p == ' ' || *p == '\t'))
				p++;
			if (p < line + len && *p == ':') {
				p++;
				while (p < line + len && (*p == ' ' || *p == '\t'))
					p++;
				return xstrndup(p, (size_t)(line + len - p));
			}
		}
		line = end ? end + 1 : NULL;
	}
	return NULL;
}

static json_t *string_or_null_owned(char *s)
{
	json_t *v = s && *s ? json_string(s) : json_null();
	free(s);
	return v;
}

/* Physical cores: distinct (physical id, core id) pairs; 0 when unknown. */
static long physical_cores(const char *cpuinfo)
{
	struct ptrvec seen = {0};
	long phys = -1;
	for (const char *line = cpuinfo; line && *line; ) {
		const char *end = strchr(line, '\n');
		if (strncmp(line, "physical id", 11) == 0) {
			const char *c = strchr(line, ':');
			phys = c ? strtol(c + 1, NULL, 10) : -1;
		} else if (strncmp(line, "core id", 7) == 0) {
			const char *c = strchr(line, ':');
			long core = c ? strtol(c + 1, NULL, 10) : -1;
			char *key = xasprintf("%ld/%ld", phys, core);
			bool dup = false;
			for (size_t i = 0; i < seen.len && !dup; i++)
				dup = strcmp(seen.items[i], key) == 0;
			if (dup)
				free(key);
			else
				ptrvec_push(&seen, key);
		}
		line = end ? end + 1 : NULL;
	}
	long n = (long)seen.len;
	for (size_t i = 0; i < seen.len; i++)
		free(seen.items[i]);
	ptrvec_free(&seen);
	return n;
}

/* "MemTotal:  16384 kB" -> bytes, or -1. */
static long long meminfo_bytes(const char *meminfo, const char *key)
{
	char *v = field(meminfo, key);
	if (!v)
		return -1;
	long long kib = strtoll(v, NULL, 10);
	free(v);
	return kib * 1024;
}

static char *os_name(void)
{
	char *text = slurp("/etc/os-release");
	if (!text)
		text = slurp("/usr/lib/os-release");
	if (!text)
		return NULL;
	char *name = NULL;
	for (char *line = text; line && *line; ) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
			char *v = line + 12;
			size_t len = strlen(v);
			if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
				v++;
				len -= 2;
			}
			name = xstrndup(v, len);
			break;
		}
		line = end ? end + 1 : NULL;
	}
	free(text);
	return name;
}

json_t *sysinfo_host(void)
{
	json_t *o = json_object();
	char *cpuinfo = slurp("/proc/cpuinfo");
	char *model = NULL;
	if (cpuinfo) {
		model = field(cpuinfo, "model name");
		if (!model)
			model = field(cpuinfo, "Hardware");
		if (!model)
			model = field(cpuinfo, "cpu model");
	}
	json_object_set_new(o, "cpu_model", string_or_null_owned(model));
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	json_object_set_new(o, "logical_cpus", online > 0 ? json_integer(online) : json_null());
	long cores = cpuinfo ? physical_cores(cpuinfo) : 0;
	json_object_set_new(o, "physical_cores", cores > 0 ? json_integer(cores) : json_null());
	free(cpuinfo);

	char *gov = slurp("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
	if (gov)
		gov[strcspn(gov, "\n")] = '\0';
	json_object_set_new(o, "governor", string_or_null_owned(gov));

	char *meminfo = slurp("/proc/meminfo");
	long long total = meminfo ? meminfo_bytes(meminfo, "MemTotal") : -1;
	long long avail = meminfo ? meminfo_bytes(meminfo, "MemAvailable") : -1;
	free(meminfo);
	json_object_set_new(o, "memory_total_bytes", total >= 0 ? json_integer(total) : json_null());
	json_object_set_new(o, "memory_available_bytes", avail >= 0 ? json_integer(avail) : json_null());

	json_object_set_new(o, "os", string_or_null_owned(os_name()));
	struct utsname u;
	if (uname(&u) == 0) {
		char *k = xasprintf("%s %s", u.sysname, u.release);
		json_object_set_new(o, "kernel", json_string(k));
		free(k);
		json_object_set_new(o, "arch", json_string(u.machine));
	} else {
		json_object_set_new(o, "kernel", json_null());
		json_object_set_new(o, "arch", json_null());
	}
	double load[3];
	if (getloadavg(load, 3) == 3)
		json_object_set_new(o, "load_average", json_pack("[f, f, f]", load[0], load[1], load[2]));
	else
		json_object_set_new(o, "load_average", json_null());
	return o;
}

const char *const sysinfo_python_packages[] = {
	"numpy", "scipy", "pandas", "scikit-learn", "cupy", "torch", "cudf", "cuml", NULL,
};

/* Distribution names per package, tried in order (CUDA builds carry a
 * suffix). importlib.metadata reads the installed metadata without
 * importing the package, so this stays fast even with torch installed. */
static const char python_probe[] =
	"import json, sys\n"
	"try:\n"
	"    from importlib import metadata\n"
	"except ImportError:\n"
	"    metadata = None\n"
	"names = {'numpy': ['numpy'], 'scipy': ['scipy'], 'pandas': ['pandas'],\n"
	"         'scikit-learn': ['scikit-learn'],\n"
	"         'cupy': ['cupy', 'cupy-cuda13x', 'cupy-cuda12x', 'cupy-cuda11x'],\n"
	"         'torch': ['torch'], 'cudf': ['cudf', 'cudf-cu13', 'cudf-cu12'],\n"
	"         'cuml': ['cuml', 'cuml-cu13', 'cuml-cu12']}\n"
	"def version(dists):\n"
	"    for d in dists:\n"
	"        try:\n"
	"            return metadata.version(d)\n"
	"        except Exception:\n"
	"            pass\n"
	"    return None\n"
	"out = {'version': '%d.%d.%d' % tuple(sys.version_info[:3]), 'executable': sys.executable,\n"
	"       'packages': {k: version(v) for k, v in names.items()} if metadata else None}\n"
	"sys.stdout.write(json.dumps(out))\n";

static json_t *python_record(const char *python, bool found, const char *error)
{
	json_t *o = json_object();
	json_object_set_new(o, "interpreter", json_string(python));
	json_object_set_new(o, "found", json_boolean(found));
	json_object_set_new(o, "executable", json_null());
	json_object_set_new(o, "version", json_null());
	json_t *pk = json_object();
	for (size_t i = 0; sysinfo_python_packages[i]; i++)
		json_object_set_new(pk, sysinfo_python_packages[i], json_null());
	json_object_set_new(o, "packages", pk);
	json_object_set_new(o, "error", error ? json_string(error) : json_null());
	return o;
}

json_t *sysinfo_python(const char *python, double timeout_s)
{
	char *why = NULL;
	size_t n = 0;
	char **words = shell_split(python, &n, &why);
	if (!words) {
		char *msg = xasprintf("cannot split the interpreter command: %s", why);
		json_t *o = python_record(python, false, msg);
		free(msg);
		free(why);
		return o;
	}
	if (!runner_find_program(words[0])) {
		shell_words_free(words);
		return python_record(python, false, "command not found");
	}
	char **argv = xcalloc(n + 3, sizeof *argv);
	for (size_t i = 0; i < n; i++)
		argv[i] = words[i];
	argv[n] = "-c";
	argv[n + 1] = (char *)python_probe;
	int in = runner_open_in("/dev/null", 0), out = temp_fd(), err = temp_fd();
	json_t *result = NULL;
	if (in < 0 || out < 0 || err < 0) {
		result = python_record(python, false, "cannot open temporary files");
		goto done;
	}
	struct runner_stdio io = {in, out, err};
	struct run_result r;
	if (!runner_run(argv, &io, timeout_s, &r)) {
		result = python_record(python, false, strerror(r.spawn_errno));
		goto done;
	}
	char *text = temp_fd_text(out, 1u << 20);
	json_error_t jerr;
	json_t *doc = run_ok(&r) ? json_loads(text, 0, &jerr) : NULL;
	free(text);
	if (!doc || !json_is_object(doc)) {
		char *how = run_describe(&r, timeout_s);
		char *errtext = temp_fd_text(err, 1u << 20);
		size_t elen = strlen(errtext);
		const char *tail = elen > 300 ? errtext + elen - 300 : errtext;
		char *msg = xasprintf("the interpreter %s%s%s", how, *tail ? ": " : "", tail);
		for (char *c = msg; *c; c++)
			if (*c == '\n')
				*c = ' ';
		result = python_record(python, true, msg);
		free(msg);
		free(errtext);
		free(how);
		json_decref(doc);
		goto done;
	}
	result = python_record(python, true, NULL);
	json_t *exe = json_object_get(doc, "executable"), *ver = json_object_get(doc, "version");
	if (json_is_string(exe))
		json_object_set(result, "executable", exe);
	if (json_is_string(ver))
		json_object_set(result, "version", ver);
	json_t *pk = json_object_get(doc, "packages");
	if (json_is_object(pk)) {
		json_t *dst = json_object_get(result, "packages");
		for (size_t i = 0; sysinfo_python_packages[i]; i++) {
			json_t *v = json_object_get(pk, sysinfo_python_packages[i]);
			if (json_is_string(v))
				json_object_set(dst, sysinfo_python_packages[i], v);
		}
	} else {
		json_object_set_new(result, "error",
				    json_string("importlib.metadata is missing (Python older than 3.8): "
						"package versions unknown"));
	}
	json_decref(doc);
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	if (err >= 0)
		close(err);
	free(argv);
	shell_words_free(words);
	return result;
}

/* ---- the import probe (gpuopt doctor, gpuopt fit --python) ---- */

/* The time a stopped package is given beyond its limit, for the probe's own
 * alarm to stop it first and say so (no second run needed then). */
#define PROBE_GRACE_S 2.0

static json_t *probe_record(const char *python, double timeout_s, double package_s)
{
	json_t *o = json_pack("{s:s, s:b, s:n, s:n, s:n, s:n, s:n, s:n, s:[], s:[], s:[], s:[], s:[], s:i, "
			      "s:f, s:f}",
			      "interpreter", python, "found", false, "error", "version", "executable",
			      "prefix", "virtualenv", "conda", "cuda_dists", "plan", "packages", "failures",
			      "cudart", "runs", 0, "elapsed_s", 0.0, "timeout_s", timeout_s);
	json_object_set_new(o, "package_timeout_s", package_s > 0 ? json_real(package_s) : json_null());
	return o;
}

static void add_cudart(json_t *rec, json_t *lib)
{
	json_t *all = json_object_get(rec, "cudart");
	const char *path = json_string_value(json_object_get(lib, "path"));
	json_t *major = json_object_get(lib, "major");
	if (!path || !json_is_integer(major))
		return;
	size_t i;
	json_t *v;
	json_array_foreach(all, i, v)
		if (strcmp(json_string_value(json_object_get(v, "path")), path) == 0)
			return;
	json_array_append_new(all, json_pack("{s:s, s:I}", "path", path, "major",
					     json_integer_value(major)));
}

static const char *const python_keys[] = {"version", "executable", "prefix", "virtualenv", "conda",
					   NULL};

/* The CUDA runtimes that a "package" event says its import loaded. */
static void add_loaded(json_t *rec, const json_t *pkg)
{
	size_t k;
	json_t *path;
	json_array_foreach(json_object_get(pkg, "cudart_loaded"), k, path) {
		const char *p = json_string_value(path);
		const char *so = p ? strstr(p, ".so.") : NULL;
		if (so) {
			json_t *lib = json_pack("{s:s, s:i}", "path", p, "major", atoi(so + 4));
			add_cudart(rec, lib);
			json_decref(lib);
		}
	}
}

bool sysinfo_probe_collect(json_t *rec, const char *text, size_t len, struct sysinfo_pending *p)
{
	bool done = false;
	json_t *packages = json_object_get(rec, "packages");
	for (const char *line = text, *end = text + len; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		json_error_t err;
		json_t *ev = n && line[0] == '{' ? json_loadb(line, n, JSON_REJECT_DUPLICATES, &err) : NULL;
		line += n + (nl != NULL);
		const char *kind = json_string_value(json_object_get(ev, "event"));
		const char *name = json_string_value(json_object_get(ev, "name"));
		if (!kind) {
			json_decref(ev); /* not an event: ignored */
			continue;
		}
		if (strcmp(kind, "python") == 0) {
			for (size_t k = 0; python_keys[k]; k++) {
				json_t *v = json_object_get(ev, python_keys[k]);
				if (json_is_string(v) || json_is_boolean(v))
					json_object_set(rec, python_keys[k], v);
			}
			json_t *meta = json_object_get(ev, "metadata");
			if (json_is_false(meta) && json_is_null(json_object_get(rec, "error")))
				json_object_set_new(rec, "error",
						    json_string("importlib.metadata is missing (Python older "
								"than 3.8): package versions unknown"));
		} else if (strcmp(kind, "dists") == 0) {
			json_t *cuda = json_object_get(ev, "cuda");
			if (json_is_array(cuda) && json_array_size(json_object_get(rec, "cuda_dists")) == 0)
				json_object_set(rec, "cuda_dists", cuda);
		} else if (strcmp(kind, "plan") == 0) {
			json_t *plan = json_object_get(ev, "packages");
			if (json_is_array(plan))
				json_object_set(rec, "plan", plan);
		} else if (strcmp(kind, "begin") == 0 && name) {
			free(p->name);
			p->name = xstrdup(name);
			p->step = "import";
			p->begun++;
		} else if (strcmp(kind, "check") == 0 && name) {
			if (p->name && strcmp(p->name, name) == 0)
				p->step = "device check";
		} else if (strcmp(kind, "package") == 0 && name) {
			if (p->name && strcmp(p->name, name) == 0) {
				free(p->name);
				p->name = NULL;
				p->step = NULL;
			}
			json_object_del(ev, "event");
			json_array_append(packages, ev);
			add_loaded(rec, ev); /* also from runs that end early */
		} else if (strcmp(kind, "libs") == 0) {
			size_t i;
			json_t *lib;
			json_array_foreach(json_object_get(ev, "cudart"), i, lib)
				add_cudart(rec, lib);
		} else if (strcmp(kind, "done") == 0) {
			done = true;
		} else {
			json_t *other = json_object_get(rec, "other");
			if (!json_is_array(other)) {
				other = json_array();
				json_object_set_new(rec, "other", other);
			}
			json_array_append(other, ev);
		}
		json_decref(ev);
	}
	return done;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Replaces what is not UTF-8 in s with '?' (JSON strings must be). */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		int n = *p < 0x80 ? 1 : (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3
			: (*p & 0xF8) == 0xF0 ? 4 : 0;
		bool ok = n > 0 && !(n == 2 && *p < 0xC2);
		for (int i = 1; ok && i < n; i++)
			ok = (p[i] & 0xC0) == 0x80;
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

/* The last 300 bytes of the run's standard error, on one line. */
static char *stderr_tail(int fd)
{
	char *text = temp_fd_text(fd, 1u << 20);
	size_t len = strlen(text);
	char *tail = xstrdup(len > 300 ? text + len - 300 : text);
	free(text);
	utf8_scrub(tail);
	for (char *c = tail; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	size_t n = strlen(tail);
	while (n && tail[n - 1] == ' ')
		tail[--n] = '\0';
	return tail;
}

/* A token new for each run: 32 hex digits from getrandom(2) (else
 * /dev/urandom). False when neither gives 16 bytes. */
static bool run_token(char out[33])
{
	unsigned char raw[16];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof raw) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
		struct buf b = {0};
		char *why = NULL;
		bool ok = fd >= 0 && read_fd(fd, sizeof raw, &b, &why) && b.len == sizeof raw;
		if (ok)
			memcpy(raw, b.data, sizeof raw);
		free(why);
		buf_free(&b);
		if (fd >= 0)
			close(fd);
		if (!ok)
			return false;
	}
	for (size_t i = 0; i < sizeof raw; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
	return true;
}

/* One run of the probe as its channel reports it. */
struct probe_run {
	json_t *rec;
	char token[33];
	struct sysinfo_pending pending;
	unsigned begun;       /* pending.begun when pending_since was taken */
	double pending_since; /* seconds from the run's start to its package's "begin" */
	double package_s;     /* 0: no limit per package */
	bool done;
};

/* runner_watch's reader: each message of the channel; those that do not
 * begin with the run's token are dropped. Returns the deadline of the
 * package under way. */
static double on_message(void *arg, const char *data, size_t len, double elapsed_s)
{
	struct probe_run *pr = arg;
	if (len > 33 && memcmp(data, pr->token, 32) == 0 && data[32] == ' ')
		pr->done |= sysinfo_probe_collect(pr->rec, data + 33, len - 33, &pr->pending);
	if (pr->pending.begun != pr->begun) {
		pr->begun = pr->pending.begun;
		pr->pending_since = elapsed_s;
	}
	return pr->pending.name && pr->package_s > 0 ? pr->pending_since + pr->package_s + PROBE_GRACE_S
						      : 0;
}

/* Seconds as said to a person: whole from 10 up, else to a tenth. */
static double said_seconds(double s)
{
	return s >= 10 ? (double)(long)(s + 0.5) : (double)(long)(s * 10 + 0.5) / 10;
}

/* Records how a run that ended before its "done" event ended: a failure of
 * the package under way (added to skip), or the record's error. */
static void run_ended(json_t *rec, const struct probe_run *pr, const struct run_result *r, double limit,
		      int err, struct buf *skip)
{
	char *tail = stderr_tail(err);
	const char *name = pr->pending.name;
	if (name && r->timed_out) {
		double given = r->deadline_hit ? pr->package_s : said_seconds(r->wall_s - pr->pending_since);
		json_array_append_new(json_object_get(rec, "failures"),
				      json_pack("{s:s, s:s, s:s, s:s, s:f}", "name", name, "how",
						"did not finish in time and was stopped", "stderr", tail,
						"timed_out", pr->pending.step ? pr->pending.step : "import",
						"time_limit_s", given));
	} else if (name) {
		char *how = run_describe(r, limit);
		json_array_append_new(json_object_get(rec, "failures"),
				      json_pack("{s:s, s:s, s:s}", "name", name, "how", how, "stderr", tail));
		free(how);
	} else {
		char *how = run_describe(r, limit);
		char *msg = xasprintf("the interpreter %s%s%s", how, *tail ? ": " : "", tail);
		json_object_set_new(rec, "error", json_string(msg));
		free(msg);
		free(how);
	}
	if (name)
		buf_printf(skip, "%s%s", skip->len ? "," : "", name);
	free(tail);
}

json_t *sysinfo_python_probe(const char *python, const char *script, const char *arg,
			     double timeout_s, double package_s)
{
	json_t *rec = probe_record(python, timeout_s, package_s);
	char *why = NULL;
	size_t nwords = 0;
	char **words = shell_split(python, &nwords, &why);
	if (!words || nwords == 0) {
		char *msg = xasprintf("cannot split the interpreter command: %s", why ? why : "empty");
		json_object_set_new(rec, "error", json_string(msg));
		free(msg);
		free(why);
		shell_words_free(words);
		return rec;
	}
	if (!runner_find_program(words[0])) {
		json_object_set_new(rec, "error", json_string("command not found"));
		shell_words_free(words);
		return rec;
	}
	struct buf code = {0};
	if (!data_read("probes/channel.py", &code, &why)) {
		json_object_set_new(rec, "error", json_string(why));
		free(why);
		buf_free(&code);
		shell_words_free(words);
		return rec;
	}
	buf_printf(&code, "\n%s", script);
	char limit_arg[32];
	snprintf(limit_arg, sizeof limit_arg, "%g", package_s > 0 ? package_s : 0);
	struct buf skip = {0};
	buf_puts(&skip, "");
	double start = now_s();
	int runs = 0;
	for (;;) {
		double left = timeout_s - (now_s() - start);
		if (left < 1)
			left = 1;
		char **argv = xcalloc(nwords + 6, sizeof *argv);
		for (size_t i = 0; i < nwords; i++)
			argv[i] = words[i];
		argv[nwords] = "-c";
		argv[nwords + 1] = code.data;
		argv[nwords + 2] = (char *)arg;
		argv[nwords + 3] = skip.data;
		argv[nwords + 4] = limit_arg;
		struct probe_run pr = {.rec = rec, .package_s = package_s};
		int sv[2] = {-1, -1}, err = temp_fd();
		const char *fail = NULL;
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 || err < 0)
			fail = "cannot make the probe's channel or its temporary file";
		else if (!run_token(pr.token))
			fail = "no random token for the probe's channel (getrandom and /dev/urandom fail)";
		else if (send(sv[0], pr.token, 32, MSG_NOSIGNAL) != 32)
			fail = "cannot write to the probe's channel";
		struct run_result r;
		struct runner_watch w = {sv[0], on_message, &pr};
		bool ran = !fail && runner_run_watched(argv, &(struct runner_stdio){sv[1], err, err}, left, &w,
						       &r);
		free(argv);
		runs++;
		if (fail)
			json_object_set_new(rec, "error", json_string(fail));
		else if (!ran)
			json_object_set_new(rec, "error", json_string(strerror(r.spawn_errno)));
		else {
			json_object_set_new(rec, "found", json_true());
			if (!pr.done)
				run_ended(rec, &pr, &r, left, err, &skip);
		}
		for (int i = 0; i < 2; i++)
			if (sv[i] >= 0)
				close(sv[i]);
		if (err >= 0)
			close(err);
		bool again = ran && !pr.done && pr.pending.name && timeout_s - (now_s() - start) > 1 &&
			     runs < 16;
		free(pr.pending.name);
		if (!again)
			break;
	}
	json_object_set_new(rec, "runs", json_integer(runs));
	json_object_set_new(rec, "elapsed_s", json_real(now_s() - start));
	buf_free(&skip);
	buf_free(&code);
	shell_words_free(words);
	return rec;
}

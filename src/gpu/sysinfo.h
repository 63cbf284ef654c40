/* sysinfo: the host and Python environment recorded with every benchmark
 * result — CPU model and cores, frequency governor, memory, OS and kernel,
 * load average, and the Python interpreter with the versions of the
 * scientific and GPU packages it sees. (The GPU part is gpuinfo.h.)
 *
 * Each function returns a new JSON object (never NULL): what cannot be read
 * is null, and nothing here fails the benchmark. */
#ifndef GPUOPT_SYSINFO_H
#define GPUOPT_SYSINFO_H

#include <jansson.h>
#include <stdbool.h>

/* {cpu_model, logical_cpus, physical_cores, governor, memory_total_bytes,
 *  memory_available_bytes, os, kernel, arch, load_average: [1, 5, 15 min]} */
json_t *sysinfo_host(void);

/* The packages looked up, in the order they are reported. */
extern const char *const sysinfo_python_packages[];

/* Runs `python` (a command line, split like a shell would, e.g. "python3" or
 * "conda run -n env python") once, with a timeout, and asks it through
 * importlib.metadata — without importing anything — for its version and the
 * versions of numpy, scipy, pandas, scikit-learn, cupy, torch, cudf and cuml:
 * {interpreter, found, executable, version, packages: {name: version|null},
 *  error}. A package that is not installed is null ("absent"). */
json_t *sysinfo_python(const char *python, double timeout_s);

/* Runs `script` (Python source, e.g. data/probes/doctor.py) in `python` as
 * `python -c <data/probes/channel.py, then script> arg SKIP PACKAGE_S`, with
 * a time limit for all runs together (timeout_s) and one for each package
 * (package_s; 0 none). The script answers with one JSON event per message
 * on gpuopt's channel (channel.py says how it works and why: a socket given
 * as the interpreter's standard input, each message beginning with a token
 * new for each run); its standard output and error are kept apart, and only
 * their tail is used, to say how a run ended. The protocol is at the top of
 * data/probes/doctor.py. A package whose "begin" is not followed by its
 * "package" event within package_s (and a grace of 2 s, for the script's
 * own alarm to answer first) is stopped there: the run is killed, and so is
 * a run that crashes, or runs out of the total time, in a package; that
 * package is recorded under failures, and while time is left the script
 * runs again with it in SKIP (comma-separated). Returns a new object (never
 * NULL):
 *   {interpreter, found, error (null, or why no run finished), version,
 *    executable, prefix, virtualenv, conda, cuda_dists: [{name, version,
 *    cuda_major}], plan: [every package's installation, before any import],
 *    packages: [the "package" events], failures: [{name, how, stderr, and
 *    for one that ran out of time: timed_out ("import" or "device check"),
 *    time_limit_s}], cudart: [{path, major}] (CUDA runtimes the imports
 *    loaded), runs, elapsed_s, timeout_s, package_timeout_s, other: [events
 *    of any other kind, when there are]}. */
json_t *sysinfo_python_probe(const char *python, const char *script, const char *arg,
			     double timeout_s, double package_s);

/* The package a run has begun and not yet reported; carried from one call
 * of sysinfo_probe_collect to the next within a run (zeroed before it; the
 * caller frees name after). */
struct sysinfo_pending {
	char *name;        /* owned; NULL: none */
	const char *step;  /* static: "import", or "device check" after its "check" event */
	unsigned begun;    /* "begin" events so far */
};

/* Adds the events in text[0..len) (what the channel carried, its token
 * taken off: one JSON object per line) to rec, a record as
 * sysinfo_python_probe returns, and follows the package under way in *p.
 * True when the "done" event is among them. Any bytes are accepted: what
 * is not an event is skipped. */
bool sysinfo_probe_collect(json_t *rec, const char *text, size_t len, struct sysinfo_pending *p);

#endif

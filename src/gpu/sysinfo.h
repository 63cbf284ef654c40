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
 * `python -c script arg SKIP`, with a time limit for all runs together. The
 * script writes one JSON event per line (the protocol is described at the
 * top of data/probes/doctor.py); lines that are not events are ignored. When
 * a run ends before its "done" event while a package's "begin" has no
 * "package" event (an import that crashed or hung), that package is recorded
 * under failures and the script runs again with it in SKIP (comma-separated),
 * while time is left. Returns a new object (never NULL):
 *   {interpreter, found, error (null, or why no run finished), version,
 *    executable, prefix, virtualenv, conda, cuda_dists: [{name, version,
 *    cuda_major}], packages: [the "package" events], failures: [{name, how,
 *    stderr}], cudart: [{path, major}] (CUDA runtimes the imports loaded),
 *    runs, elapsed_s, other: [events of any other kind, when there are]}. */
json_t *sysinfo_python_probe(const char *python, const char *script, const char *arg,
			     double timeout_s);

/* Adds the events in text[0..len) (one run's standard output) to rec, a
 * record as sysinfo_python_probe returns. True when the "done" event is
 * there; *pending (owned, or NULL) is the package begun and not finished.
 * Any bytes are accepted: what is not an event is skipped. */
bool sysinfo_probe_collect(json_t *rec, const char *text, size_t len, char **pending);

#endif

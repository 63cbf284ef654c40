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

#endif

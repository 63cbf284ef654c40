/* doctor: step 2 of the method's caution, "fail early with a clear hardware
 * and dependency error" — can GPU work start on this machine, and if not,
 * exactly what to do. Facts in (the GPU record of gpu/gpuinfo.h and what
 * the Python interpreter says about its packages, gpu/sysinfo.h), a list of
 * problems out, each with its fix: the exact command, with the right -cu12 /
 * -cu13 suffix, from data/doctor/ (install commands, known conflicts,
 * driver minimums), never from C.
 *
 * The face for code: a struct doctor_settings, doctor_run, and a struct
 * doctor_result the caller frees with doctor_result_free. doctor_check is
 * the rules alone, on facts the caller has (tests give it recorded ones).
 * Nothing here prints or picks an exit code. */
#ifndef GPUOPT_DOCTOR_H
#define GPUOPT_DOCTOR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define DOCTOR_SCHEMA "gpuopt-doctor/1"

enum doctor_severity { DOCTOR_BLOCKER, DOCTOR_WARNING, DOCTOR_NOTE };
const char *doctor_severity_name(enum doctor_severity s); /* "blocker", "warning", "note" */

struct doctor_problem {
	enum doctor_severity severity;
	const char *id;   /* stable, static: "no-driver", "driver-too-old", ... */
	char *title;      /* one line: what is wrong */
	char *detail;     /* why, or NULL */
	char **fixes;     /* nfixes commands or instructions, in the order to try them */
	size_t nfixes;
	char *source;     /* what the fact was read from, or NULL */
};

/* One package as the interpreter reported it, with the knowledge added. */
struct doctor_package {
	char *name;             /* the table's name: "cupy", "scikit-learn" */
	bool gpu, rapids;       /* a GPU package; one of RAPIDS */
	bool installed;
	char *dist, *version;   /* the distribution found: "cupy-cuda13x", "14.2.0" */
	int cuda_major;         /* the CUDA it was built for; 0 unknown or none */
	char *cuda_from;        /* how that was found out */
	char *runtime_version;  /* the CUDA runtime it reports ("13.2"), or NULL */
	bool importable;
	char *import_error;
	bool device_checked, device_ok;
	int device_count;       /* -1 unknown */
	char *device_error;
	char *crashed;          /* importing it ended the interpreter: how */
	char *timed_out;        /* what did not finish in time: "import" or "device check"; NULL */
	double time_limit_s;    /* the time it was given then (0 unknown) */
	bool asked;             /* false: installed, but the probe's time ran out before it */
	json_t *submodules;     /* {"warp.sim": null (imports) or "the error"}, or NULL; owned */
};

struct doctor_settings {
	const char *python;       /* the interpreter command; NULL: "python3" */
	bool no_python;           /* leave the Python side out */
	double timeout_s;         /* the Python probe's limit, all packages together; 0: 180 */
	double package_timeout_s; /* the limit of one package's import and device check; 0: 60 */
	const json_t *gpu_facts;  /* use this GPU record instead of asking the driver (borrowed) */
	const json_t *python_facts; /* use this probe record instead of running the probe (borrowed) */
};

struct doctor_result {
	char *error;              /* doctor's own data could not be loaded: nothing else is set */
	json_t *gpu;              /* the GPU record, owned */
	json_t *python;           /* the probe record, owned; NULL with no_python */
	size_t npackages;
	struct doctor_package *packages;
	size_t nproblems;         /* blockers first, then warnings, then notes */
	struct doctor_problem *problems;
	size_t blockers, warnings, notes;
	bool ready;               /* no blocker: GPU work can start */
	int driver_cuda_major;    /* the highest CUDA major the driver serves; 0 without one */
};

struct doctor_result *doctor_run(const struct doctor_settings *s);

/* The rules on given facts (python_facts may be NULL); never NULL. */
struct doctor_result *doctor_check(const json_t *gpu_facts, const json_t *python_facts);

void doctor_result_free(struct doctor_result *r);

/* The result as JSON (schema DOCTOR_SCHEMA), a new object. Its "gpu" and
 * "python" members are facts doctor_check takes again (the packages in
 * their normalized form carry the same fields as the probe's events), so a
 * saved report can be checked anew, on another gpuopt version too. */
json_t *doctor_result_json(const struct doctor_result *r);

/* The command that installs package ("cudf", "cuml", "nx-cugraph", "cupy": the
 * names of data/doctor/install.json) with pip for a driver serving CUDA
 * cuda_major; 0 (unknown, no driver) gives the CUDA 13 command and says so.
 * Owned; NULL with *why (owned) when the package or the data is unknown. */
char *doctor_install_fix(const char *package, int cuda_major, char **why);

/* Compares dotted versions by their numbers ("26.10.02" > "26.8"; a
 * missing part counts as 0; text after the numbers is ignored): <0, 0, >0. */
int doctor_version_cmp(const char *a, const char *b);

#endif

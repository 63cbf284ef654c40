/* doctor_int: what doctor.c and checks.c share — the loaded knowledge
 * (the files of data/doctor/) and the helpers that add problems and make fix
 * commands from it. Not for other parts. */
#ifndef GPUOPT_DOCTOR_INT_H
#define GPUOPT_DOCTOR_INT_H

#include "core/util.h"
#include "doctor.h"

struct doctor_kb {
	json_t *packages;  /* data/doctor/packages.json */
	json_t *install;   /* data/doctor/install.json */
	json_t *conflicts; /* data/doctor/conflicts.json */
};

/* Loads the three files; false with *why owned. */
bool doctor_kb_load(struct doctor_kb *kb, char **why);
void doctor_kb_free(struct doctor_kb *kb);

/* Adds a problem to r (title owned by r from now on). Returns it, so that
 * the caller can add detail, fixes and a source. */
struct doctor_problem *problem_add(struct doctor_result *r, enum doctor_severity sev, const char *id,
				   char *title);
void problem_fix(struct doctor_problem *p, char *fix); /* fix owned by p */

/* The pip / conda command that installs package `name` built for CUDA
 * `major` (install.json's templates filled in), or NULL when the table has
 * no such command. Owned. */
char *install_command(const struct doctor_kb *kb, const char *name, int major, const char *tool);
/* The distribution name that a CUDA `major` build of `name` has
 * ("cupy-cuda13x"), or NULL. Owned. */
char *install_dist(const struct doctor_kb *kb, const char *name, int major);

/* The package called name in r->packages, or NULL. */
const struct doctor_package *package_get(const struct doctor_result *r, const char *name);

/* doctor_check with the knowledge already loaded (the fuzz target loads it
 * once). */
struct doctor_result *doctor_check_with(const struct doctor_kb *kb, const json_t *gpu_facts,
					 const json_t *python_facts);

/* Runs every rule, adding its problems to r (r->gpu, r->python and
 * r->packages are set). */
void doctor_rules(const struct doctor_kb *kb, struct doctor_result *r);

#endif

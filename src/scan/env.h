/* env: the names of one scope of the flow model (flow.c) and their abstract
 * values, as a persistent map: a copy costs nothing and shares everything
 * with its original, a change copies only the path to the name it changes,
 * and a join or comparison of two envs that share most of their names
 * visits only what differs. The model copies the state at every branch,
 * loop and comprehension and joins the copies after; with a copy of every
 * name each time, a file's analysis was quadratic in its distinct names.
 *
 * An env keeps the order its names were first bound in (a join appends the
 * names only the other side has, in that side's order), as the flat arrays
 * before it did: the passes that walk names see them in that order.
 *
 * Ownership: an env owns its share of the map; env_free releases it (and
 * accepts a zeroed env). Entries returned by env_find and env_changed are
 * borrowed: valid until that env is changed or freed. Allocation failure
 * exits (xmalloc). */
#ifndef GPUOPT_ENV_H
#define GPUOPT_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow.h"

struct env_ent {
	const char *name; /* interned (compared by address) */
	struct val v;
	uint64_t seq;     /* when the name was bound in this env's history: its order */
	uint32_t rc;      /* envs (map nodes) sharing this entry */
};

struct env_node;

struct env {
	struct env_node *root; /* NULL: no names */
	uint32_t n;            /* names */
};

/* The entry of name, or NULL. */
const struct env_ent *env_find(const struct env *e, const char *name);
/* Binds name to v: a name already bound keeps its place in the order. */
void env_set(struct env *e, const char *name, struct val v);
/* Another env with the same names and values (shared, not copied). */
struct env env_copy(const struct env *e);
void env_free(struct env *e);

/* dst = dst joined with src: each name of both gets join(ctx, dst's value,
 * src's value) (skipped where the two share the entry: the same value), a
 * name only src binds is added with src's value, after dst's own names and
 * in src's order. */
typedef struct val (*env_join_fn)(void *ctx, struct val a, struct val b);
void env_join(struct env *dst, const struct env *src, env_join_fn join, void *ctx);

/* The same names, each with an equal value (val_eq)? */
bool env_same(const struct env *a, const struct env *b);

/* The entries of a that it does not share with b (names bound in a, or
 * changed, since a and b were one env), in a's order: an owned array of
 * borrowed entries (*n of them; NULL when none). */
const struct env_ent **env_changed(const struct env *a, const struct env *b, size_t *n);

#endif

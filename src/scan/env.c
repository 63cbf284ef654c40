/* env: see env.h. A hash trie of 16-way nodes over the names' addresses
 * (multiplied by an odd constant: distinct addresses, distinct 64-bit
 * hashes, so two names part at some level of the sixteen), nodes and
 * entries reference-counted. A node or entry used by one env only (count 1,
 * reached through nodes used by it only) is changed in place; a shared one
 * is copied first (path copying). With no removal, the shape of a trie
 * depends only on its names: two envs that share a subtree (the same
 * pointer) hold the same names and values there, which is what env_join,
 * env_same and env_changed skip. */
#include "env.h"

#include <stdlib.h>
#include <string.h>

#include "core/util.h"

#define FAN 16
#define LEVELS 16 /* 64 bits of hash, 4 a level */

struct env_node {
	uint32_t rc;
	uint16_t leaves;      /* bit i: slot[i] is an entry (else a node, or nothing when NULL) */
	void *slot[FAN];
};

/* The order of bindings: one count per thread (a flow model runs on one),
 * only ever compared within one model's envs. */
static _Thread_local uint64_t next_seq;

static uint64_t hash_of(const char *name)
{
	return (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull;
}

static unsigned slot_at(uint64_t h, int level)
{
	return (unsigned)(h >> (60 - 4 * level)) & (FAN - 1);
}

static bool is_leaf(const struct env_node *n, unsigned i)
{
	return (n->leaves >> i) & 1u;
}

static void ent_release(struct env_ent *x)
{
	if (--x->rc == 0)
		free(x);
}

static void node_release(struct env_node *n)
{
	if (!n || --n->rc > 0)
		return;
	for (unsigned i = 0; i < FAN; i++) {
		if (!n->slot[i])
			continue;
		if (is_leaf(n, i))
			ent_release(n->slot[i]);
		else
			node_release(n->slot[i]);
	}
	free(n);
}

/* A node of this env's own in place of the shared node n (whose count
 * drops by this env's reference): the same slots, each shared once more. */
static struct env_node *node_unshare(struct env_node *n)
{
	struct env_node *c = xmalloc(sizeof *c);
	*c = *n;
	c->rc = 1;
	for (unsigned i = 0; i < FAN; i++) {
		if (!c->slot[i])
			continue;
		if (is_leaf(c, i))
			((struct env_ent *)c->slot[i])->rc++;
		else
			((struct env_node *)c->slot[i])->rc++;
	}
	n->rc--;
	return c;
}

const struct env_ent *env_find(const struct env *e, const char *name)
{
	uint64_t h = hash_of(name);
	const struct env_node *n = e->root;
	for (int level = 0; n && level < LEVELS; level++) {
		unsigned i = slot_at(h, level);
		if (!n->slot[i])
			return NULL;
		if (is_leaf(n, i)) {
			const struct env_ent *x = n->slot[i];
			return x->name == name ? x : NULL;
		}
		n = n->slot[i];
	}
	return NULL;
}

static struct env_ent *ent_new(const char *name, struct val v, uint64_t seq)
{
	struct env_ent *x = xmalloc(sizeof *x);
	*x = (struct env_ent){.name = name, .v = v, .seq = seq, .rc = 1};
	return x;
}

void env_set(struct env *e, const char *name, struct val v)
{
	if (!e->root) {
		e->root = xcalloc(1, sizeof *e->root);
		e->root->rc = 1;
	} else if (e->root->rc > 1) {
		e->root = node_unshare(e->root);
	}
	uint64_t h = hash_of(name);
	struct env_node *n = e->root;
	for (int level = 0; level < LEVELS; level++) {
		unsigned i = slot_at(h, level);
		if (!n->slot[i]) {
			n->slot[i] = ent_new(name, v, ++next_seq);
			n->leaves |= (uint16_t)(1u << i);
			e->n++;
			return;
		}
		if (is_leaf(n, i)) {
			struct env_ent *x = n->slot[i];
			if (x->name == name) {
				if (x->rc == 1) {
					x->v = v;
				} else {
					n->slot[i] = ent_new(name, v, x->seq);
					x->rc--;
				}
				return;
			}
			/* another name here: it moves one level down, where the two
			 * may part (the loop goes on there) */
			struct env_node *down = xcalloc(1, sizeof *down);
			down->rc = 1;
			unsigned j = slot_at(hash_of(x->name), level + 1);
			down->slot[j] = x;
			down->leaves = (uint16_t)(1u << j);
			n->slot[i] = down;
			n->leaves &= (uint16_t)~(1u << i);
			n = down;
			continue;
		}
		struct env_node *down = n->slot[i];
		if (down->rc > 1)
			n->slot[i] = down = node_unshare(down);
		n = down;
	}
	abort(); /* distinct addresses have distinct hashes: unreachable */
}

struct env env_copy(const struct env *e)
{
	if (e->root)
		e->root->rc++;
	return *e;
}

void env_free(struct env *e)
{
	node_release(e->root);
	memset(e, 0, sizeof *e);
}

/* ---- what differs ---- */

/* Every entry under slot s (an entry when leaf), appended to out. */
static void all_entries(void *s, bool leaf, struct ptrvec *out)
{
	if (leaf) {
		ptrvec_push(out, s);
		return;
	}
	const struct env_node *n = s;
	for (unsigned i = 0; i < FAN; i++)
		if (n->slot[i])
			all_entries(n->slot[i], is_leaf(n, i), out);
}

/* The entries under a (a node) that b (a node, or NULL) does not share,
 * appended to out; shared subtrees are skipped whole. */
static void differing(const struct env_node *a, const struct env_node *b, struct ptrvec *out)
{
	for (unsigned i = 0; i < FAN; i++) {
		void *sa = a->slot[i], *sb = b ? b->slot[i] : NULL;
		if (!sa || sa == sb)
			continue;
		if (!is_leaf(a, i) && sb && !is_leaf(b, i))
			differing(sa, sb, out);
		else
			all_entries(sa, is_leaf(a, i), out);
	}
}

static int by_seq(const void *p, const void *q)
{
	const struct env_ent *x = *(const struct env_ent *const *)p, *y = *(const struct env_ent *const *)q;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const struct env_ent **env_changed(const struct env *a, const struct env *b, size_t *n)
{
	struct ptrvec v = {0};
	if (a->root && a->root != b->root)
		differing(a->root, b->root, &v);
	if (v.len > 1)
		qsort(v.items, v.len, sizeof *v.items, by_seq);
	*n = v.len;
	return (const struct env_ent **)v.items;
}

/* Every field, not only those val_eq compares: a join that changes nothing
 * leaves the entry shared. */
static bool val_identical(const struct val *a, const struct val *b)
{
	return val_eq(a, b) && a->line == b->line && a->ival == b->ival;
}

void env_join(struct env *dst, const struct env *src, env_join_fn join, void *ctx)
{
	size_t n;
	const struct env_ent **diff = env_changed(src, dst, &n);
	for (size_t k = 0; k < n; k++) { /* names of both: joined in place */
		const struct env_ent *d = env_find(dst, diff[k]->name);
		if (!d)
			continue;
		struct val v = join(ctx, d->v, diff[k]->v);
		if (!val_identical(&v, &d->v))
			env_set(dst, diff[k]->name, v);
	}
	for (size_t k = 0; k < n; k++) /* src's own: after dst's, in src's order */
		if (!env_find(dst, diff[k]->name))
			env_set(dst, diff[k]->name, diff[k]->v);
	free(diff);
}

bool env_same(const struct env *a, const struct env *b)
{
	if (a->n != b->n)
		return false;
	size_t n;
	const struct env_ent **diff = env_changed(a, b, &n);
	bool same = true;
	for (size_t k = 0; k < n && same; k++) {
		const struct env_ent *x = env_find(b, diff[k]->name);
		same = x && val_eq(&x->v, &diff[k]->v);
	}
	free(diff);
	return same;
}

/* stepkey: what a step of `gpuopt try` ran, as a key, so that a saved step
 * is taken again only when nothing it depends on changed: the files of the
 * project its command reads (by content) and the interpreter that runs it
 * with its installed packages. The contract and gpuopt's version are in
 * try's own key; these are folded into it per step.
 *
 * The interpreter's fingerprint is its sys.executable, its version and, for
 * every directory on its sys.path, the directory's time of change: installing,
 * removing or upgrading a package changes the entries (the .dist-info
 * folders) of its site-packages. */
#ifndef GPUOPT_TRY_STEPKEY_H
#define GPUOPT_TRY_STEPKEY_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a: its offset basis, the n bytes at p folded into h, and a string
 * folded in with an end mark (so "ab"+"c" and "a"+"bc" differ). */
#define STEPKEY_BASIS 0xcbf29ce484222325ULL
uint64_t stepkey_bytes(const void *p, size_t n, uint64_t h);
uint64_t stepkey_str(const char *p, uint64_t h);

/* Folds in each file of files (NULL-terminated, relative to dir): its name
 * and its content (a file over 64 MiB by size and time of change; a
 * missing one as missing). */
uint64_t stepkey_files(const char *dir, char *const *files, uint64_t h);

/* Folds in the interpreter python (a command name or path) as above; one
 * that cannot be run folds in as such. Runs it once per distinct name per
 * process (the answer is kept). */
uint64_t stepkey_python(const char *python, uint64_t h);

#endif

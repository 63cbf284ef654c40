/* readonly: makes a directory tree read-only for this process and every
 * process it starts afterwards, leaving chosen directories inside it
 * writable, through a private mount namespace (Linux): a read-only bind
 * mount of the tree over itself, and writable bind mounts of the
 * exceptions. Nothing changes for any other process, and nothing is left
 * behind: the namespace ends with the last process in it.
 *
 * As root (or with CAP_SYS_ADMIN) only the mount namespace is new; otherwise
 * a user namespace maps the caller's own user and group to themselves
 * (programs see the same ids), where the kernel allows unprivileged user
 * namespaces. Where neither is allowed (some containers, seccomp), the call
 * fails and says why; the caller decides what to do then.
 *
 * Call it before any thread is started (a user namespace needs a process
 * of one thread). The current directory is entered again afterwards, so
 * relative paths see the new mounts. */
#ifndef GPUOPT_CORE_READONLY_H
#define GPUOPT_CORE_READONLY_H

#include <stdbool.h>

/* Makes root (an existing directory) read-only, except the existing
 * directories in writable (NULL-terminated; those not inside root are
 * ignored), and with it what its symbolic links lead to outside it (a
 * file or directory there, unless it holds root or a writable directory:
 * a link to / or to $HOME above the project stays as it is). False with *why (owned) when it could not be done; then
 * nothing was changed unless the namespace was made (still harmless). */
bool readonly_tree(const char *root, char *const *writable, char **why);

/* Returns the process to the mount namespace it had before readonly_tree,
 * so an engine that protected a project for its runs leaves its caller's
 * view of the files as it was (true; also when readonly_tree was never
 * called). Not possible after a user namespace was entered (unprivileged):
 * false, and the tree stays read-only to this process. Single-threaded
 * callers only (setns). */
bool readonly_leave(void);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A path looked up as if a directory were "/": what a container's process means by a path, read
 * by tprofd from the host through /proc/PID/root. The container chose every name and link on the
 * way, so an absolute symbolic link, and ".." at the top, lead to the directory again, never
 * above it.
 *
 * The kernel does this itself from 5.6 on (openat2() with RESOLVE_IN_ROOT); before that, and
 * where a seccomp filter or valgrind refuses openat2(), a walk one name at a time does the same:
 * each step relative to the descriptor of the last (a name renamed meanwhile cannot send the walk
 * elsewhere), every link read as text and resolved again within the directory (a link of /proc,
 * which the kernel would follow to its target whatever its text, is then only its text), and ".."
 * taken only to the directory the walk came down from, and the way up from where it ends checked
 * at the end (a directory's own ".." leads out of the top once a rename has moved it, or one
 * above it, out: a walk that finds its way changed fails with -EAGAIN, as openat2() does; so does
 * a top that something was mounted over since root_fd was opened, whose ".." is the mount's). It
 * goes at most 256 directories deep and looks up 8192 names at most.
 */
#pragma once

/*
 * An O_PATH descriptor of path (absolute or not, both relative to root_fd) resolved within
 * root_fd, a directory: openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), else
 * open_in_root_walk() (also where openat2() gave -EAGAIN twice; the walk once more after its own
 * -EAGAIN). -errno on failure (-ELOOP for more than 40 links on the way).
 */
int open_in_root(int root_fd, const char *path);

/* The same by a walk of the names, without openat2(). */
int open_in_root_walk(int root_fd, const char *path);

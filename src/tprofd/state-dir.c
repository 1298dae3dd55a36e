/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/macro.h"
#include "bundle/bundle-format.h"
#include "control/control-server.h"
#include "tprofd/state-dir.h"

/*
 * Bundles and windows are for root and group tprof (docs/design.md). Under the shipped unit tprofd runs
 * with Group=tprof and everything it creates has that group; started by hand it runs as root:root,
 * so the state directories get group tprof and the setgid bit, and what is created below them
 * inherits the group either way.
 */
static void set_state_group(const char *path, gid_t gid) {
        struct stat st;

        if (stat(path, &st) < 0)
                return;
        if (st.st_gid != gid && chown(path, (uid_t) -1, gid) < 0) {
                log_debug_errno(errno, "Failed to give '%s' group " CONTROL_GROUP ", ignoring: %m", path);
                return;
        }
        if ((st.st_mode & 07777) != (BUNDLE_DIR_MODE | S_ISGID))
                (void) chmod(path, BUNDLE_DIR_MODE | S_ISGID);
}

int state_dir_open_locked(const char *path) {
        static const char *const subdirs[] = { "ring", "incidents", "state" };
        const struct group *g = getgrnam(CONTROL_GROUP);
        gid_t gid = g ? g->gr_gid : (gid_t) -1;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (!g)
                log_notice("No group " CONTROL_GROUP " on this host: bundles and the control socket are for root only "
                           "(systemd-sysusers makes the group from tprof's sysusers.d file).");
        r = mkdir_p(path, BUNDLE_DIR_MODE);
        if (r < 0)
                return log_error_errno(r, "Failed to create state directory '%s': %m", path);
        /* A second daemon on the same ring would finalize the first one's open window and rotate
         * and vacuum under it. */
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open state directory '%s': %m", path);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return log_error_errno(errno, errno == EWOULDBLOCK ?
                                                      "State directory '%s' is in use by another tprofd; not starting a second one on it." :
                                                      "Failed to lock state directory '%s': %m", path);
        if (gid != (gid_t) -1)
                set_state_group(path, gid);
        for (size_t i = 0; i < ELEMENTSOF(subdirs); i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", path, subdirs[i]) < 0)
                        return log_oom();
                if (mkdir(p, BUNDLE_DIR_MODE) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Failed to create '%s': %m", p);
                if (gid != (gid_t) -1)
                        set_state_group(p, gid);
        }
        return TAKE_FD(fd);
}

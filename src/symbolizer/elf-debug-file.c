/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/macro.h"
#include "basic/open-in-root.h"
#include "basic/string-util.h"
#include "symbolizer/elf-debug-file.h"
#include "symbolizer/elf-util.h"

const char *elf_debuglink_name(Elf *elf) {
        Elf_Scn *scn = elf_section_by_name(elf, ".gnu_debuglink", /* with_contents= */ true);
        Elf_Data *data;
        size_t l;

        if (!scn)
                return NULL;
        data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf || data->d_size < 2)
                return NULL;
        /* The name, NUL-padded to 4 bytes, then a CRC32 of the debug file. */
        l = strnlen(data->d_buf, data->d_size);
        if (l == 0 || l == data->d_size || memchr(data->d_buf, '/', l))
                return NULL;
        return data->d_buf;
}

bool elf_debug_file_path(ElfDebugWay way, const uint8_t *build_id, size_t build_id_len, const char *link,
                         const char *path, char *buf, size_t size) {
        const char *slash;
        int n;

        switch (way) {
        case ELF_DEBUG_BY_BUILD_ID: {
                char hex[2 * 64 + 1], *q = hex;

                if (build_id_len < 2 || build_id_len > 64)
                        return false;
                for (size_t i = 1; i < build_id_len; i++)
                        q += sprintf(q, "%02x", build_id[i]);
                n = snprintf(buf, size, "/usr/lib/debug/.build-id/%02x/%s.debug", build_id[0], hex);
                break;
        }
        case ELF_DEBUG_BY_LINK:
        case ELF_DEBUG_BY_LINK_BESIDE:
        case ELF_DEBUG_BY_LINK_DOT_DEBUG:
                if (!link || !path || path[0] != '/')
                        return false;
                slash = strrchr(path, '/');
                if (way == ELF_DEBUG_BY_LINK)
                        n = snprintf(buf, size, "/usr/lib/debug%.*s/%s", (int) (slash - path), path, link);
                else if (way == ELF_DEBUG_BY_LINK_DOT_DEBUG)
                        n = snprintf(buf, size, "%.*s/.debug/%s", (int) (slash - path), path, link);
                else if (streq(slash + 1, link))
                        return false; /* the file's own name: not a debug file of it */
                else
                        n = snprintf(buf, size, "%.*s/%s", (int) (slash - path), path, link);
                break;
        default:
                return false;
        }
        return n > 0 && (size_t) n < size;
}

int elf_debug_file_open(const char *root, const char *path) {
        _cleanup_close_ int root_fd = -EBADF, path_fd = -EBADF;
        char self[64];
        struct stat st;
        int fd;

        /* First a descriptor that names the file without opening it (O_PATH: no driver is asked),
         * then, for a regular file only, one that reads it. */
        if (root && root[0]) {
                root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (root_fd < 0)
                        return -errno;
                path_fd = open_in_root(root_fd, path);
                if (path_fd < 0)
                        return path_fd;
        } else {
                /* The host's paths, without /proc's magic links (a .gnu_debuglink name is the
                 * file's to choose); by a plain open() where openat2() is refused. */
                struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };

                path_fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
                if (path_fd < 0 && (errno == ENOSYS || errno == EPERM))
                        path_fd = open(path, O_PATH | O_CLOEXEC);
        }
        if (path_fd < 0)
                return -errno;
        if (fstat(path_fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
        fd = open(self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -errno : fd;
}

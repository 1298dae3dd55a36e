/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a file's separate debug file may be, the places gdb, perf and elfutils look: by build id,
 * /usr/lib/debug/.build-id/xx/yyyy.debug (the first byte's two hex digits name the directory);
 * by the name in the file's .gnu_debuglink section, /usr/lib/debug + the file's own directory +
 * that name, then that name in the file's own directory and in its .debug/ (where a vendor's
 * build leaves it beside the program). Each under a root: "/proc/PID/root" for a process's files in a container of its own,
 * "" for the host's. The symbolizer reads a debug file's .symtab, the unwinder its .debug_frame.
 *
 * A container's files are its own to plant: its paths are resolved within its root (an absolute
 * symbolic link there leads to its own /, not the host's), and nothing but a regular file is ever
 * opened for reading (a device's driver never sees an open).
 */
#pragma once

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ElfDebugWay {
        ELF_DEBUG_BY_BUILD_ID,
        ELF_DEBUG_BY_LINK,
        ELF_DEBUG_BY_LINK_BESIDE,
        ELF_DEBUG_BY_LINK_DOT_DEBUG,
        _ELF_DEBUG_WAY_MAX,
} ElfDebugWay;

/* The file name in elf's .gnu_debuglink (NUL-terminated within the section, no '/', not empty);
 * NULL if there is none. It lives as long as elf. */
const char *elf_debuglink_name(Elf *elf);

/*
 * The path (within a root) of the debug file found the given way, into buf. build_id: the file's
 * (at least 2 bytes for a path); link: elf_debuglink_name()'s; path: the file's name as mapped
 * (absolute, for the link's directory). False if the way does not apply to the file or the path
 * does not fit, or would be the file itself.
 */
bool elf_debug_file_path(ElfDebugWay way, const uint8_t *build_id, size_t build_id_len, const char *link,
                         const char *path, char *buf, size_t size);

/*
 * Opens path for reading, resolved within root (a directory; "" or NULL: the host's own /) by
 * open_in_root(): a descriptor of a regular file, or -errno (-EBADFD for anything but a regular
 * file).
 */
int elf_debug_file_open(const char *root, const char *path);

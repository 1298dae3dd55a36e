/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "basic/macro.h"
#include "symbolizer/elf-util.h"

Elf_Scn *elf_section_by_name(Elf *elf, const char *name, bool with_contents) {
        Elf_Scn *scn = NULL;
        size_t shstrndx;

        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                return NULL;
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;
                const char *n;

                if (!gelf_getshdr(scn, &sh) || (with_contents && sh.sh_type == SHT_NOBITS))
                        continue;
                n = elf_strptr(elf, shstrndx, sh.sh_name);
                if (n && streq(n, name))
                        return scn;
        }
        return NULL;
}

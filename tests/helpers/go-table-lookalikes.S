/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A hostile "Go program" for test-symbolizer-go-pies.c: its .data.rel.ro is LOOKALIKES headers of a
 * Go 1.2 function table back to back, each claiming LOOKALIKES / 2 functions, so that every
 * functab entry of each is another header and each _func record it points at is too: every one
 * parses a long way before it fails. Searched one by one without a bound, that is quadratic in
 * the section's size (seconds for a megabyte); the search shares one budget of entries.
 * With RELOCS defined, each header claims no function and is followed by an address, a
 * relocation: refused at once, but a search that put the relocations in for each header anew
 * would read them all each time (quadratic again); they are put in once.
 */
        .text
        .globl  _start
_start:
        movl    $60, %eax
        xorl    %edi, %edi
        syscall

        .section .note.go.buildid, "a", @note
        .balign 4
        .long   4, 16, 4
        .asciz  "Go"
        .balign 4
        .ascii  "tprof-lookalikes"

        .section .data.rel.ro, "aw"
        .balign 8
        .rept   LOOKALIKES
        .long   0xfffffffb
        .byte   0, 0, 1, 8
#ifndef RELOCS
        .quad   LOOKALIKES / 2
#else
        .quad   0                       /* no functions: refused at once */
        .quad   _start                  /* and an address, a relocation each */
#endif
        .endr
        .quad   _start

        .section .note.GNU-stack, "", @progbits

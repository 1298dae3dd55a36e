/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for a stripped Go PIE whose function table takes relocations (before Go 1.18 each of
 * its addresses, from 1.18 on its textStart): three functions, _rt0_amd64_linux (the entry) calls
 * main.main, which calls main.spin, which spins for some seconds, then the process exits. No
 * libc: built with -nostdlib -pie -s, loaded by the dynamic loader, which applies the relocations.
 *
 * The table is laid out as Go's linker lays it out (src/runtime/symtab.go and
 * src/cmd/link/internal/ld/pcln.go of the releases named; src/debug/gosym/pclntab.go reads both):
 *   (neither)         Go 1.2-1.15, magic 0xfffffffb: nfunc, the functab, the filetab offset,
 *                     then names and _func records at offsets from the table's start
 *   GO116             Go 1.16-1.17, magic 0xfffffffa: nfunc, nfiles, then the offsets of the
 *                     names, cu, file, pc and functab tables; _func offsets from the functab
 *   GO118             Go 1.18 on, magic 0xfffffff0: as 1.16 with textStart after nfiles, the one
 *                     address (its functab and _func entries are uint32 offsets from it)
 * and put, as a host linker does with Go's object (-linkmode=external), inside .data.rel.ro after
 * other data, not at its start, and after 8 bytes that start like a table and are none. ld.bfd
 * writes each relocated address in place as well; lld leaves 0 there and the address in the
 * relocation alone: the meson build links it both ways.
 *
 * The functions keep frame pointers and have .eh_frame (the .cfi directives); the table alone
 * names them once -s removed .symtab.
 */
        .text
        .globl  _start
_start:
fn_rt0:
        .cfi_startproc
        .cfi_undefined rip
        xorl    %ebp, %ebp
        call    fn_main
        movl    $60, %eax               /* exit(0) */
        xorl    %edi, %edi
        syscall
        ud2
        .cfi_endproc

        .balign 16
fn_main:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register rbp
        call    fn_spin
        popq    %rbp
        .cfi_def_cfa rsp, 8
        ret
        .cfi_endproc

        .balign 16
fn_spin:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register rbp
        movabsq $40000000000, %rcx      /* some 10 s of a CPU: the test stops it sooner */
1:      decq    %rcx
        jnz     1b
        popq    %rbp
        .cfi_def_cfa rsp, 8
        ret
        .cfi_endproc
        .balign 16
fn_end:

/* A Go program by its build id note (name "Go", type 4), as the symbolizer tells one. */
        .section .note.go.buildid, "a", @note
        .balign 4
        .long   4, 16, 4
        .asciz  "Go"
        .balign 4
        .ascii  "tprof-go-fixture"

/* _func: entry uintptr, nameOff int32, then the rest of Go 1.15's 40 bytes, zero here; Go 1.16
 * and 1.17 add cuOffset (44 bytes: src/runtime/runtime2.go), whose funcID and flag bytes follow. */
#ifdef GO116
#define FUNC(fn, name, base) \
        .quad fn; .long name - base; .fill 32, 1, 0
#else
#define FUNC(fn, name, base) \
        .quad fn; .long name - base; .fill 28, 1, 0
#endif

        .section .data.rel.ro, "aw"
        .balign 8
other_data:                             /* what a host linker merges in before the table */
        .quad   fn_main, 0x2a, fn_spin, 0
lookalike:                              /* starts like a table and is none: its one _func record */
        .long   0xfffffffb              /* (at offset 0, the header itself) does not start with */
        .byte   0, 0, 1, 8              /* its functab entry */
        .quad   1
        .quad   fn_main, 0
        .quad   fn_spin

        .balign 8
#if !defined(GO116) && !defined(GO118)
tab:
        .long   0xfffffffb
        .byte   0, 0, 1, 8              /* pads, instruction size quantum, pointer size */
        .quad   3                       /* nfunc */
        .quad   fn_rt0, f_rt0 - tab
        .quad   fn_main, f_main - tab
        .quad   fn_spin, f_spin - tab
        .quad   fn_end                  /* the end of the last function */
        .long   filetab - tab
n_rt0:  .asciz  "_rt0_amd64_linux"
n_main: .asciz  "main.main"
n_spin: .asciz  "main.spin"
filetab:
        .long   0
        .balign 8
f_rt0:  FUNC(fn_rt0, n_rt0, tab)
f_main: FUNC(fn_main, n_main, tab)
f_spin: FUNC(fn_spin, n_spin, tab)
#else /* GO116, GO118 */
tab:
#ifdef GO118
        .long   0xfffffff0
#else
        .long   0xfffffffa
#endif
        .byte   0, 0, 1, 8
        .quad   3                       /* nfunc */
        .quad   1                       /* nfiles */
#ifdef GO118
        .quad   fn_rt0                  /* textStart: runtime.text, the one address (relocated) */
#endif
        .quad   names - tab             /* funcnameOffset */
        .quad   cutab - tab             /* cuOffset */
        .quad   filetab - tab           /* filetabOffset */
        .quad   pctab - tab             /* pctabOffset */
        .quad   functab - tab           /* pclnOffset */
names:                                  /* then the cu, file and pc tables: one entry each, unread */
n_rt0:  .asciz  "_rt0_amd64_linux"
n_main: .asciz  "main.main"
n_spin: .asciz  "main.spin"
cutab:  .long   0
filetab:
        .asciz  "fixture.go"
pctab:  .byte   0
#ifndef GO118
        .balign 8
functab:
        .quad   fn_rt0, f_rt0 - functab
        .quad   fn_main, f_main - functab
        .quad   fn_spin, f_spin - functab
        .quad   fn_end
f_rt0:  FUNC(fn_rt0, n_rt0, names)
f_main: FUNC(fn_main, n_main, names)
f_spin: FUNC(fn_spin, n_spin, names)
#else
        .balign 4
functab:                                /* { entry - textStart, func offset }, uint32 each */
        .long   0, f_rt0 - functab
        .long   fn_main - fn_rt0, f_main - functab
        .long   fn_spin - fn_rt0, f_spin - functab
        .long   fn_end - fn_rt0
/* _func: entryOff uint32, nameOff int32, then the rest of Go 1.18's 40 bytes */
f_rt0:  .long 0, n_rt0 - names; .fill 32, 1, 0
f_main: .long fn_main - fn_rt0, n_main - names; .fill 32, 1, 0
f_spin: .long fn_spin - fn_rt0, n_spin - names; .fill 32, 1, 0
#endif
#endif
        .quad   fn_rt0                  /* more of .data.rel.ro after it */

        .section .note.GNU-stack, "", @progbits

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An i386 shared object calling two functions it leaves to others, through its PLT (jmp *slot(%ebx)):
 * built with no libc, as a machine without a 32-bit one can. Never loaded.
 */
int plt32_first(int x);
int plt32_second(int x);

int plt32_caller(int x);
int plt32_caller(int x) {
        return plt32_first(x) + plt32_second(x + 1);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one place that decides how names appear in exports, so that the perf-script export, when
 * folded by stackcollapse-perf.pl, gives byte for byte our folded export (VIEWERS.md):
 *
 *  - comm: blanks and control bytes become '_' (so do the Unicode blanks JavaScript's \s matches,
 *    and C1 controls), ';' becomes ':', a leading '#' becomes '_' (every perf script reader skips
 *    a line that starts with it), an empty comm is "[unknown]", and a one-character comm gets a
 *    trailing '_' (the viewers' event-line regexes need two). Other UTF-8 is kept; bytes that are
 *    not UTF-8 become "\xNN" and '\' "\\", as in symbols. Cut between characters.
 *  - DSO: blanks and parentheses are dropped and a trailing " (deleted)" is cut
 *    ("/usr/bin/x (deleted)" -> "/usr/bin/x"); an empty DSO is "[unknown]".
 *  - symbol: what stackcollapse-perf.pl's tidy step would make of it, done up front: ';' -> ':',
 *    quotes removed, everything from the first '(' dropped (unless the name looks like a Go
 *    method "pkg.(*T).M" or the paren opens "(anonymous namespace)"), "->" broken up so it is
 *    not read as an inline marker, control bytes and invalid UTF-8 escaped, leading blanks
 *    dropped (also the Unicode ones: speedscope's frame-line regex skips them), a trailing
 *    "+0x<hex>" removed, a leading '(' (stackcollapse would take the frame for a process
 *    name) made '_', and so is a blank before "<digits and dots>: " (Flamescope's heatmap reads
 *    its event regex in frame lines too). A name longer than the buffer is cut between characters, never inside a
 *    UTF-8 sequence or an escape. An empty result is "[unknown]".
 *  - folded frame: the tidied symbol, or "[basename-of-dso]" when the symbol is "[unknown]" and
 *    the DSO is known, as stackcollapse-perf.pl does; for comms starting with "java" a leading 'L' is dropped
 *    from names containing '/', as its Java tidy step does.
 *
 * Each function writes a NUL-terminated result of at most l-1 bytes into buf and returns buf.
 */
#pragma once

#include <stddef.h>

const char *profile_comm_tidy(const char *comm, char *buf, size_t l);
const char *profile_dso_tidy(const char *dso, char *buf, size_t l);
const char *profile_symbol_tidy(const char *symbol, char *buf, size_t l);
/* Takes an already tidied symbol and DSO. */
const char *profile_folded_frame(const char *tidy_comm, const char *tidy_symbol, const char *tidy_dso, char *buf,
                                 size_t l);

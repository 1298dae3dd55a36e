/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A standalone SVG flame graph from folded stacks: one rectangle per frame, widths proportional to
 * samples, labels clipped to their box, a tooltip per frame, and a little embedded script for
 * click-to-zoom and search that the graph does without when scripts are off. With a baseline it
 * is a differential graph: widths are the slice's, red where a frame's share of samples is higher
 * than in the baseline, blue where lower.
 */
#pragma once

#include <stdio.h>

#include "bundle/bundle-analyze.h"
#include "bundle/bundle-read.h"

/* baseline may be NULL. title is untrusted text (escaped here). Returns 0 or a negative errno. */
int flamegraph_write_svg(FILE *out, const Folded *slice, const Folded *baseline, const char *title);

/* The flame graph of a bundle's stacks.folded (against baseline.folded if diff) to out; logs errors.
 * Used by export and open. */
int bundle_write_svg(const BundleEntry *e, bool diff, FILE *out);

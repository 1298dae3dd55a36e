/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sections of tprof-bundle show that say what rose: the slice against the baseline, the
 * event's own seconds against the rest of the bundle, the services by share of the slice, and
 * the CPU a rule captured on its own. Every name from the bundle is escaped before it is printed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/string-util.h"
#include "bundle/bundle-analyze.h"
#include "tprof-bundle/bundle-output.h"
#include "tprof-bundle/bundle-show.h"

static void print_rise(const Show *s, const Rise *r, bool process, size_t name_width, const char *against) {
        _cleanup_free_ char *name = NULL, *fn = NULL;
        char z[32], b1[16], b2[16];

        snprintf(z, sizeof z, "z=%.1f", r->z);
        show_share(b1, sizeof b1, r->slice_share);
        show_share(b2, sizeof b2, r->baseline_share);
        if (process) {
                char where[3 * BUNDLE_SERVICE_NAME_BYTES], pbuf[256];
                const char *of = bundle_thread_process(s->m, r->name, pbuf, sizeof pbuf);
                _cleanup_free_ char *w = NULL, *p = of ? text_for_terminal(of, 24) : NULL,
                                    *t = r->thread ? text_for_terminal(r->thread, 24) : NULL;
                name = show_process_name(s, r->name, 24);
                fn = text_for_terminal(r->top_function, s->columns > 60 ? s->columns - 60 : 0);
                /* the around-the-event table compares with the rest of the bundle */
                (void) bundle_process_cgroup(s->m, r->name, +1, streq(against, "rest"), where, sizeof where);
                w = text_for_terminal(where, s->columns > 20 ? s->columns - 8 : 0);
                printf("  %s%-*s %6s (%s %5s)  %s  %s%s\n", s->color ? ANSI_RED : "",
                       (int) (name_width + strlen(name ?: "") - utf8_width(name ?: "")), name ?: "?", b1, against, b2,
                       fn ?: "-", z, s->color ? ANSI_NORMAL : "");
                /* Whose thread it is (a group of them: "wrk-*", and the one that carried its rise) and
                 * where it ran, on a line of their own. */
                if (of || where[0])
                        printf("  %*s %s%s%s%s%s%s%s\n", (int) name_width, "",
                               !of ? "" : strchr(r->name, '*') ? "threads of " : "thread of ", of ? p ?: "?" : "",
                               of && r->thread ? ", carried by " : "", of && r->thread ? t ?: "?" : "",
                               of && where[0] ? ", " : "", where[0] ? "in " : "", where[0] ? w ?: "?" : "");
        } else {
                /* "comm;function" -> "function (comm)" */
                const char *semi = strchr(r->name, ';');
                _cleanup_free_ char *comm = text_for_terminal_n(r->name, semi ? (size_t) (semi - r->name) : strlen(r->name), 24);
                fn = text_for_terminal(semi ? semi + 1 : "-", s->columns > 60 ? s->columns - 50 : 0);
                printf("  %s%6s (%s %5s)  %s  %s in %s%s\n", s->color ? ANSI_RED : "", b1, against, b2, z, fn ?: "?",
                       comm ?: "?", s->color ? ANSI_NORMAL : "");
        }
}

/* The column the names take, each cut to cut columns as they are printed. */
#define SERVICE_NAME_COLUMNS 48

/* With s, a process's name as show_process_name() gives it. */
static size_t rise_name_width(const Show *s, const Rise *r, size_t n, size_t cut) {
        size_t w = 8;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *e = s ? show_process_name(s, r[i].name, cut) : text_for_terminal(r[i].name, cut);
                w = MAX(w, e ? utf8_width(e) : 0);
        }
        return w;
}

static void print_rises(const Show *s, const Rise *procs, size_t n_procs, const Rise *funcs, size_t n_funcs,
                        const char *against) {
        size_t w = rise_name_width(s, procs, n_procs, 24);

        printf("  Processes (with their function that rose most):\n");
        for (size_t i = 0; i < n_procs; i++)
                print_rise(s, &procs[i], true, w, against);
        if (n_procs == 0)
                printf("  (none)\n");
        printf("  Functions (as the leaf):\n");
        for (size_t i = 0; i < n_funcs; i++)
                print_rise(s, &funcs[i], false, 0, against);
        if (n_funcs == 0)
                printf("  (none)\n");
}

/* The seconds around the event against the rest of the bundle (event.folded). */
static void print_near(const Show *s) {
        char title[160];

        snprintf(title, sizeof title,
                 "Around the event (%gs before .. %gs after) against the rest of the slice and the baseline",
                 (double) s->near_from_ns / 1e9, (double) s->near_to_ns / 1e9);
        show_section(s, title);
        if (s->near_error == -ENOENT) {
                printf("  (no %s in this bundle: written before tprof kept the event's seconds apart, or not yet)\n",
                       BUNDLE_NEAR_EVENT_FOLDED);
                return;
        }
        if (show_print_unreadable(s, BUNDLE_NEAR_EVENT_FOLDED ", " BUNDLE_FOLDED " and " BUNDLE_BASELINE_FOLDED,
                                  BUNDLE_NEAR_EVENT_FOLDED, BUNDLE_FOLDED, BUNDLE_BASELINE_FOLDED, NULL))
                return;
        if (s->near_error < 0 || s->slice_error < 0 || s->baseline_error < 0) {
                printf("  (needs %s, %s and %s: %s)\n", BUNDLE_NEAR_EVENT_FOLDED, BUNDLE_FOLDED, BUNDLE_BASELINE_FOLDED,
                       strerror(-(s->near_error < 0 ? s->near_error : s->slice_error < 0 ? s->slice_error
                                                                                        : s->baseline_error)));
                return;
        }
        if (s->near.total == 0 || s->near_rest.total == 0) {
                printf("  (no samples %s to compare)\n", s->near.total == 0 ? "around the event" : "outside it");
                return;
        }
        if (s->near_rest.total < SHOW_BASELINE_SAMPLES_MIN) {
                /* As the slice's baseline: the event's seconds are all of a short slice. */
                printf("  Nothing to tell: the rest has %" PRIu64 " samples, too few to compare with.\n",
                       s->near_rest.total);
                return;
        }
        if (s->n_near_proc_rises == 0 && s->n_near_func_rises == 0) {
                printf("  Nothing rose significantly (z >= %.0f): the event's seconds look like the rest.\n", RISE_Z_MIN);
                return;
        }
        print_rises(s, s->near_proc_rises, s->n_near_proc_rises, s->near_func_rises, s->n_near_func_rises, "rest");
}

void show_print_unusual(const Show *s) {
        show_section(s, "Unusual in the slice (share of samples against the baseline; z: two-proportion z-score)");
        if (s->slice_error < 0 || s->baseline_error < 0) {
                if (!show_print_unreadable(s, BUNDLE_FOLDED " and " BUNDLE_BASELINE_FOLDED, BUNDLE_FOLDED,
                                           BUNDLE_BASELINE_FOLDED, NULL))
                        printf("  (needs %s and %s: %s)\n", BUNDLE_FOLDED, BUNDLE_BASELINE_FOLDED,
                               strerror(-(s->slice_error < 0 ? s->slice_error : s->baseline_error)));
        } else if (s->slice.total == 0 || s->baseline.total == 0)
                printf("  (no %s samples to compare)\n", s->slice.total == 0 ? "slice" : "baseline");
        else if (s->baseline.total < SHOW_BASELINE_SAMPLES_MIN)
                /* Against a few samples a rise is noise and no rise says nothing of the slice. */
                printf("  Nothing to tell: the baseline has %" PRIu64 " samples, too few to compare with.\n",
                       s->baseline.total);
        else if (s->n_proc_rises == 0 && s->n_func_rises == 0)
                printf("  Nothing rose significantly (z >= %.0f): the slice looks like the baseline.\n", RISE_Z_MIN);
        else
                print_rises(s, s->proc_rises, s->n_proc_rises, s->func_rises, s->n_func_rises, "baseline");
        print_near(s);
}

/* Units, containers and pods by their share of the slice, against the baseline, as processes are
 * above; with the process that had most of each one's samples. */
void show_print_services(const Show *s) {
        static const char *const titles[] = { "Units", "Containers", "Pods" };

        show_section(s, "Services (share of the slice against the baseline; the process with most of it)");
        if (!s->has_services) {
                printf("  (the manifest lists no cgroups: a bundle written before tprof recorded them)\n");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(titles); i++) {
                size_t w = rise_name_width(NULL, s->services[i], s->n_services[i], SERVICE_NAME_COLUMNS);
                bool any = false;

                /* a kind no sample ran in (no containers, no pods) is left out */
                for (size_t k = 0; k < s->n_services[i]; k++)
                        any = any || s->services[i][k].name[0] != '[';
                if (!any && i > 0)
                        continue;
                printf("  %s:\n", titles[i]);
                for (size_t k = 0; k < s->n_services[i]; k++) {
                        const Rise *r = &s->services[i][k];
                        _cleanup_free_ char *name = text_for_terminal(r->name, SERVICE_NAME_COLUMNS),
                                            *p = text_for_terminal(r->top_function, 24);
                        char z[32], b1[16], b2[16];
                        bool rose = r->z >= RISE_Z_MIN && r->slice >= RISE_SAMPLES_MIN;

                        snprintf(z, sizeof z, "z=%.1f", r->z);
                        printf("  %s%-*s %6s (baseline %5s)  %s  %s%s\n", rose && s->color ? ANSI_RED : "",
                               (int) (MAX(w, (size_t) 8) + strlen(name ?: "") - utf8_width(name ?: "")), name ?: "?",
                               show_share(b1, sizeof b1, r->slice_share),
                               show_share(b2, sizeof b2, r->baseline_share), z, p ?: "-",
                               rose && s->color ? ANSI_NORMAL : "");
                }
        }
}

void show_print_cpu(const Show *s) {
        char title[128];

        if (!s->has_cpu)
                return;
        snprintf(title, sizeof title, "CPU %u alone (the rule captured it: the starved CPU is where the cause runs)",
                 s->cpu);
        show_section(s, title);
        if (s->cpu_error < 0) {
                char n1[64], n2[64];
                snprintf(n1, sizeof n1, BUNDLE_CPU_FOLDED_FMT, s->cpu);
                snprintf(n2, sizeof n2, BUNDLE_CPU_BASELINE_FOLDED_FMT, s->cpu);
                if (!show_print_unreadable(s, NULL, n1, n2, NULL))
                        printf("  (no cpu%u.folded/cpu%u-baseline.folded: %s)\n", s->cpu, s->cpu,
                               strerror(-s->cpu_error));
                return;
        }
        if (s->n_cpu_rises == 0) {
                printf("  Nothing rose significantly on CPU %u (%" PRIu64 " samples in the slice).\n", s->cpu,
                       s->cpu_slice.total);
                return;
        }
        size_t w = rise_name_width(s, s->cpu_rises, s->n_cpu_rises, 24);
        for (size_t i = 0; i < s->n_cpu_rises; i++)
                print_rise(s, &s->cpu_rises[i], true, w, "baseline");
}

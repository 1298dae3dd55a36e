/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's settings: defaults, then the configuration file, then the command line. Everything
 * the manager needs to know about how it was asked to run is in TprofdConfig.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf-yaml.h"
#include "rules/rules.h"

#define FREQ_HZ_DEFAULT 97U
#define FREQ_HZ_MAX 10000U
#define WINDOW_USEC_DEFAULT (UINT64_C(120) * UINT64_C(1000000))
#define WINDOW_USEC_MIN (UINT64_C(2) * UINT64_C(1000000))
#define WINDOW_USEC_MAX (UINT64_C(3600) * UINT64_C(1000000))
/* Journal entries kept as context for bundles by default: info and more urgent. */
#define JOURNAL_CONTEXT_DEFAULT 6
#define MAX_BUNDLES_DEFAULT 100U
#define MAX_BUNDLE_BYTES_DEFAULT (UINT64_C(2) << 30)
#define ON_BUNDLE_TIMEOUT_USEC_DEFAULT (UINT64_C(60) * UINT64_C(1000000))
#define ON_BUNDLE_TIMEOUT_USEC_MAX (UINT64_C(3600) * UINT64_C(1000000))
#define RETENTION_AGE_USEC_DEFAULT (UINT64_C(12) * UINT64_C(3600) * UINT64_C(1000000))

#define TPROFD_CONFIG_FILE TPROF_CONFIG_DIR "/tprofd.yaml"
#define TPROFD_CONFIG_BYTES_MAX (UINT64_C(64) << 10)

typedef struct TprofdConfig {
        char *config_path; /* the file these settings came from, or NULL */
        int log_level;     /* -1: not set */
        char *rules_path;
        char *state_dir;
        char *kmsg_path; /* /dev/kmsg, or a recorded file of raw records */
        char *control_socket; /* where tprof-bundle capture/status reach us; "" to not listen */
        bool kmsg_from_start; /* on first start, read the whole buffer instead of starting at its end */
        bool journal;
        int journal_context; /* journal entries kept for bundles: priority 0-7 and more urgent; -1: none */
        char *journal_namespace; /* follow this journal namespace instead of the system journal */
        uint32_t freq_hz;
        uint64_t window_usec;
        bool exact;                /* detail: exact (instruction addresses, microseconds) instead of compact */
        int unwind;                /* UnwindMode: how user stacks are walked (fp, dwarf, auto) */
        uint32_t unwind_stack_bytes; /* user stack copied per sample for dwarf/auto */
        uint64_t retention_age_usec;
        uint64_t retention_bytes;  /* 0: no limit by size */
        uint64_t keep_free_bytes;  /* free space to leave on the state filesystem */
        uint32_t max_bundles;      /* complete bundles kept; the oldest go first */
        uint64_t max_bundle_bytes; /* total bytes of the bundles kept, pinned windows included */
        char **on_bundle;          /* incidents.on_bundle: the hook's argv (NULL-terminated), or NULL */
        uint64_t on_bundle_timeout_usec; /* incidents.on_bundle_timeout */
        uint64_t symbol_cache_bytes; /* caches.symbols: the symbolizer's limit */
        uint64_t unwind_cache_bytes; /* caches.unwind_tables: the unwinder's CFI limit */
} TprofdConfig;

/* Sample times the ring keeps in compact detail: a tenth of the sampling interval rounded down to a
 * power of ten, at most a millisecond (1 ms at 97 Hz, 100 µs at 997 Hz). Exact detail keeps 1 µs. */
uint32_t tprofd_time_resolution_usec(const TprofdConfig *c);

int tprofd_detail_from_string(const char *s, bool *ret_exact);
/* "off" (-1) or a syslog priority name, emerg ... debug (0-7). Returns it, or -EINVAL. */
int tprofd_journal_context_from_string(const char *s);
const char *tprofd_journal_context_to_string(int v);
/* -ERANGE unless bytes is a stack copy size the sampler accepts. */
int tprofd_unwind_stack_valid(uint64_t bytes);

/* 0 when incidents.on_bundle is unset or this process may run its command, else -errno (a hook
 * installed later, a path copied from the wrong place, a file nobody may execute). */
int tprofd_config_hook_check(const TprofdConfig *c);

/* Warns of the enabled rule that asks for the most time before its events, if retention.max_age
 * keeps less (a window goes once its last sample is that old, so the seconds such a rule's
 * bundles start with, and their baseline, may be gone before its event comes), naming where the
 * retention comes from; nothing when every rule fits, or rules is NULL. */
void tprofd_config_warn_retention(const TprofdConfig *c, const RuleSet *rules);

void tprofd_config_init(TprofdConfig *c);
void tprofd_config_done(TprofdConfig *c);

/*
 * Reads a configuration file (YAML; every key optional) over the settings in c. A missing file is
 * -ENOENT, left for the caller to judge (the default file is optional, --config's is not); any
 * other problem is -EBADMSG with file:line:column in *reterr. c is changed only on success.
 */
int tprofd_config_load(TprofdConfig *c, const char *path, ConfError *reterr);

/* Settings SIGHUP can change in a running daemon; the others need a restart. Lists what differs in
 * the latter into *ret_restart_needed ("freq, window"), or sets it to NULL. */
int tprofd_config_diff_static(const TprofdConfig *old, const TprofdConfig *fresh, char **ret_restart_needed);

/* The rules file or folder used when --rules is not given: /etc/tprof/rules.yaml, then
 * /etc/tprof/rules.d, then the shipped rules. Returns a static string. */
const char *tprofd_default_rules_path(void);

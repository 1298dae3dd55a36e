/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TprofdConfig defaults and the default rules path; see tprofd-config.h.
 */
#include <stdlib.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "tprofd/tprofd-config.h"

void tprofd_config_init(TprofdConfig *c) {
        *c = (TprofdConfig) {
                .freq_hz = FREQ_HZ_DEFAULT,
                .window_usec = WINDOW_USEC_DEFAULT,
                .retention_age_usec = RETENTION_AGE_USEC_DEFAULT,
                .keep_free_bytes = UINT64_C(1) << 30,
                .journal = true,
                .max_bundles = MAX_BUNDLES_DEFAULT,
                .max_bundle_bytes = MAX_BUNDLE_BYTES_DEFAULT,
        };
}

void tprofd_config_done(TprofdConfig *c) {
        c->rules_path = mfree(c->rules_path);
        c->state_dir = mfree(c->state_dir);
        c->kmsg_path = mfree(c->kmsg_path);
        c->control_socket = mfree(c->control_socket);
        c->journal_namespace = mfree(c->journal_namespace);
}

const char *tprofd_default_rules_path(void) {
        if (access(TPROF_CONFIG_DIR "/rules.yaml", F_OK) == 0)
                return TPROF_CONFIG_DIR "/rules.yaml";
        if (access(TPROF_CONFIG_DIR "/rules.d", F_OK) == 0)
                return TPROF_CONFIG_DIR "/rules.d";
        if (access(TPROF_RULES_DIR, F_OK) == 0)
                return TPROF_RULES_DIR;
        /* Not installed: running from a build tree, use the rules next to the sources. */
        return TPROF_SOURCE_RULES_DIR;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * TprofdConfig: defaults, the configuration file (tprofd.yaml) and what a reload may change; see
 * tprofd-config.h. The command line is applied on top by tprofd.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "basic/cleanup.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "basic/parse-util.h"
#include "basic/string-util.h"
#include "basic/time-util.h"
#include "rules/rules.h"
#include "sampler/sampler-unwind.h"
#include "sampler/sampler.h"
#include "symbolizer/symbolizer.h"
#include "tprofd/tprofd-config.h"

int tprofd_detail_from_string(const char *s, bool *ret_exact) {
        if (streq(s, "compact"))
                *ret_exact = false;
        else if (streq(s, "exact"))
                *ret_exact = true;
        else
                return -EINVAL;
        return 0;
}

int tprofd_unwind_stack_valid(uint64_t bytes) {
        if (bytes < SAMPLER_UNWIND_STACK_BYTES_MIN || bytes > SAMPLER_UNWIND_STACK_BYTES_MAX || bytes % 8 != 0)
                return -ERANGE;
        return 0;
}

uint32_t tprofd_time_resolution_usec(const TprofdConfig *c) {
        uint64_t tenth = USEC_PER_SEC / MAX(c->freq_hz, 1U) / 10;
        uint32_t r = 1;

        if (c->exact)
                return 1;
        while (r < 1000 && (uint64_t) r * 10 <= tenth)
                r *= 10;
        return r;
}

static const char *const priority_table[] = {
        "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

int tprofd_journal_context_from_string(const char *s) {
        if (!s)
                return -EINVAL;
        if (streq(s, "off"))
                return -1;
        for (size_t i = 0; i < ELEMENTSOF(priority_table); i++)
                if (streq(s, priority_table[i]))
                        return (int) i;
        return -EINVAL;
}

const char *tprofd_journal_context_to_string(int v) {
        return v >= 0 && v < (int) ELEMENTSOF(priority_table) ? priority_table[v] : "off";
}

/* retention.max_age as the ring applies it: 0 is the default. */
static uint64_t retention_age_usec(const TprofdConfig *c) {
        return c->retention_age_usec > 0 ? c->retention_age_usec : RETENTION_AGE_USEC_DEFAULT;
}

/* The enabled rule that asks for the most time before its events, if the retention by age keeps
 * less: the ring deletes a window once its last sample is that old, so the seconds such a rule's
 * bundles start with may be gone before its event comes, with the baseline before them. NULL when
 * every rule fits. */
static const Rule *rule_past_retention(const TprofdConfig *c, const RuleSet *rules) {
        uint64_t keep = retention_age_usec(c);
        const Rule *worst = NULL;

        for (size_t i = 0; rules && i < rule_set_size(rules); i++) {
                const Rule *r = rule_set_get(rules, i);

                /* a journal rule where the journal is not followed never fires */
                if (r->enabled && (r->source != RULE_SOURCE_JOURNAL || c->journal) && r->before_usec > keep &&
                    (!worst || r->before_usec > worst->before_usec))
                        worst = r;
        }
        return worst;
}

void tprofd_config_warn_retention(const TprofdConfig *c, const RuleSet *rules) {
        const Rule *r = rule_past_retention(c, rules);

        if (r)
                log_warning("%s:%u: rule '%s' asks for %s before its events, but retention.max_age%s%s keeps "
                            "windows for %s: the seconds its bundles start with, and their baseline, may be "
                            "deleted before an event comes. Raise max_age or lower before.",
                            r->file, r->line, r->name, FORMAT_TIMESPAN(r->before_usec),
                            c->config_path ? " in " : "", c->config_path ?: "",
                            FORMAT_TIMESPAN(retention_age_usec(c)));
}

int tprofd_config_hook_check(const TprofdConfig *c) {
        if (!c->on_bundle || !c->on_bundle[0])
                return 0;
        return access(c->on_bundle[0], X_OK) < 0 ? -errno : 0;
}

void tprofd_config_init(TprofdConfig *c) {
        *c = (TprofdConfig) {
                .log_level = -1,
                .freq_hz = FREQ_HZ_DEFAULT,
                .unwind = UNWIND_MODE_AUTO,
                .unwind_stack_bytes = SAMPLER_UNWIND_STACK_BYTES_DEFAULT,
                .window_usec = WINDOW_USEC_DEFAULT,
                .retention_age_usec = RETENTION_AGE_USEC_DEFAULT,
                .keep_free_bytes = UINT64_C(1) << 30,
                .journal = true,
                .journal_context = JOURNAL_CONTEXT_DEFAULT,
                .max_bundles = MAX_BUNDLES_DEFAULT,
                .max_bundle_bytes = MAX_BUNDLE_BYTES_DEFAULT,
                .on_bundle_timeout_usec = ON_BUNDLE_TIMEOUT_USEC_DEFAULT,
                .symbol_cache_bytes = SYMBOLIZER_CACHE_BYTES_DEFAULT,
                .unwind_cache_bytes = UNWIND_CACHE_BYTES_MAX,
        };
}

void tprofd_config_done(TprofdConfig *c) {
        c->config_path = mfree(c->config_path);
        c->rules_path = mfree(c->rules_path);
        c->state_dir = mfree(c->state_dir);
        c->kmsg_path = mfree(c->kmsg_path);
        c->control_socket = mfree(c->control_socket);
        c->journal_namespace = mfree(c->journal_namespace);
        c->on_bundle = strv_free(c->on_bundle);
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

#define PATH_BYTES_MAX 4096U
#define CACHE_BYTES_MIN (UINT64_C(64) << 10)
#define CACHE_BYTES_MAX (UINT64_C(64) << 30)

static const char *const top_keys[] = {
        "state_dir", "rules", "freq", "window", "detail", "unwind", "unwind_stack", "log_level", "control_socket",
        "retention", "incidents", "sources", "caches",
};
static const char *const retention_keys[] = { "max_age", "max_bytes", "keep_free" };
static const char *const incidents_keys[] = { "max_bundles", "max_bytes", "on_bundle", "on_bundle_timeout" };

#define ON_BUNDLE_ARGS_MAX 64U
#define ON_BUNDLE_ARG_BYTES_MAX 4096U

/* incidents.on_bundle: a list of strings, the command and its arguments, run without a shell. */
static int get_argv(ConfContext *cc, yaml_document_t *doc, const yaml_node_t *v, const char *key, char ***ret) {
        _cleanup_strv_ char **argv = NULL;
        size_t n = 0;

        if (v->type != YAML_SEQUENCE_NODE)
                return conf_error(cc, v->start_mark,
                                  "'%s' must be a list: the command and its arguments, e.g. [/usr/local/bin/ship, --fast]",
                                  key);
        for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top; it++) {
                yaml_node_t *item = yaml_document_get_node(doc, *it);
                const char *s;
                int r;

                if (n >= ON_BUNDLE_ARGS_MAX)
                        return conf_error(cc, item->start_mark, "'%s' has more than %u arguments", key, ON_BUNDLE_ARGS_MAX);
                r = conf_get_string(cc, item, key, ON_BUNDLE_ARG_BYTES_MAX, &s);
                if (r < 0)
                        return r;
                if (n == 0 && s[0] != '/')
                        return conf_error(cc, item->start_mark,
                                          "the command of '%s' must be an absolute path (it runs without a shell)", key);
                char **grown = realloc(argv, (n + 2) * sizeof(char *));
                if (!grown)
                        return -ENOMEM;
                argv = grown;
                argv[n + 1] = NULL;
                argv[n] = strdup(s);
                if (!argv[n])
                        return -ENOMEM;
                n++;
        }
        strv_free(*ret);
        *ret = n > 0 ? TAKE_PTR(argv) : NULL; /* an empty list: no hook */
        return 0;
}
static const char *const sources_keys[] = { "kmsg", "journal", "journal_context", "journal_namespace" };
static const char *const caches_keys[] = { "symbols", "unwind_tables" };

static int get_size(ConfContext *cc, const yaml_node_t *v, const char *key, uint64_t *ret) {
        const char *s;
        int r = conf_get_string(cc, v, key, 32, &s);

        if (r < 0)
                return r;
        if (parse_size(s, ret) < 0)
                return conf_error(cc, v->start_mark, "invalid size '%s' for '%s': expected bytes or a size like 500M or 2G",
                                  s, key);
        return 0;
}

static int get_u32(ConfContext *cc, const yaml_node_t *v, const char *key, uint32_t lo, uint32_t hi, uint32_t *ret) {
        const char *s;
        uint32_t u;
        int r = conf_get_string(cc, v, key, 16, &s);

        if (r < 0)
                return r;
        if (safe_atou32(s, &u) < 0 || u < lo || u > hi)
                return conf_error(cc, v->start_mark, "invalid value '%s' for '%s': expected a number from %u to %u", s,
                                  key, lo, hi);
        *ret = u;
        return 0;
}

/* Reads the keys of one mapping; each recognized key is applied to c. */
static int load_section(ConfContext *cc, yaml_document_t *doc, yaml_node_t *map, const char *section, TprofdConfig *c) {
        int r = 0;

        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; r >= 0 && p < map->data.mapping.pairs.top; p++) {
                const char *key = conf_scalar(yaml_document_get_node(doc, p->key));
                yaml_node_t *v = yaml_document_get_node(doc, p->value);
                const char *s;
                uint64_t u;

                if (!section) {
                        if (streq(key, "state_dir"))
                                r = conf_set_string(cc, v, key, PATH_BYTES_MAX, &c->state_dir);
                        else if (streq(key, "rules"))
                                r = conf_set_string(cc, v, key, PATH_BYTES_MAX, &c->rules_path);
                        else if (streq(key, "control_socket"))
                                r = conf_set_string(cc, v, key, PATH_BYTES_MAX, &c->control_socket);
                        else if (streq(key, "freq"))
                                r = get_u32(cc, v, key, 1, FREQ_HZ_MAX, &c->freq_hz);
                        else if (streq(key, "window")) {
                                r = conf_get_duration(cc, v, key, WINDOW_USEC_MAX, &u);
                                if (r >= 0 && u < WINDOW_USEC_MIN)
                                        r = conf_error(cc, v->start_mark, "'window' must be at least %llus",
                                                       (unsigned long long) (WINDOW_USEC_MIN / USEC_PER_SEC));
                                if (r >= 0)
                                        c->window_usec = u;
                        } else if (streq(key, "detail")) {
                                r = conf_get_string(cc, v, key, 16, &s);
                                if (r >= 0 && tprofd_detail_from_string(s, &c->exact) < 0)
                                        r = conf_error(cc, v->start_mark,
                                                       "invalid detail '%s': expected compact or exact", s);
                        } else if (streq(key, "unwind")) {
                                r = conf_get_string(cc, v, key, 16, &s);
                                if (r >= 0 && (c->unwind = unwind_mode_from_string(s)) < 0)
                                        r = conf_error(cc, v->start_mark,
                                                       "invalid unwind '%s': expected fp, dwarf or auto", s);
                        } else if (streq(key, "unwind_stack")) {
                                r = get_size(cc, v, key, &u);
                                if (r >= 0 && tprofd_unwind_stack_valid(u) < 0)
                                        r = conf_error(cc, v->start_mark,
                                                       "invalid unwind_stack: expected a multiple of 8 from %u to %u bytes",
                                                       SAMPLER_UNWIND_STACK_BYTES_MIN, SAMPLER_UNWIND_STACK_BYTES_MAX);
                                if (r >= 0)
                                        c->unwind_stack_bytes = (uint32_t) u;
                        } else if (streq(key, "log_level")) {
                                r = conf_get_string(cc, v, key, 16, &s);
                                if (r >= 0 && (c->log_level = log_level_from_string(s)) < 0)
                                        r = conf_error(cc, v->start_mark,
                                                       "invalid log_level '%s': expected debug, info, notice, warning or err "
                                                       "(or another syslog level name or number 0-7)",
                                                       s);
                        } else {
                                /* check_mapping at the top level admitted only known keys. */
                                const char *const *sub = streq(key, "retention") ? retention_keys
                                                         : streq(key, "incidents") ? incidents_keys
                                                         : streq(key, "caches")    ? caches_keys
                                                                                   : sources_keys;
                                size_t n_sub = streq(key, "retention") ? ELEMENTSOF(retention_keys)
                                               : streq(key, "incidents") ? ELEMENTSOF(incidents_keys)
                                               : streq(key, "caches")    ? ELEMENTSOF(caches_keys)
                                                                         : ELEMENTSOF(sources_keys);
                                char must[64];
                                snprintf(must, sizeof must, "'%s' must be a mapping", key);
                                r = conf_check_mapping(cc, doc, v, must, key, sub, n_sub);
                                if (r >= 0)
                                        r = load_section(cc, doc, v, key, c);
                        }
                } else if (streq(section, "retention")) {
                        if (streq(key, "max_age"))
                                r = conf_get_duration(cc, v, key, UINT64_C(365) * USEC_PER_DAY, &c->retention_age_usec);
                        else if (streq(key, "max_bytes"))
                                r = get_size(cc, v, key, &c->retention_bytes);
                        else
                                r = get_size(cc, v, key, &c->keep_free_bytes);
                } else if (streq(section, "caches")) {
                        r = get_size(cc, v, key, &u);
                        if (r >= 0 && (u < CACHE_BYTES_MIN || u > CACHE_BYTES_MAX))
                                r = conf_error(cc, v->start_mark, "'%s' must be from 64K to 64G", key);
                        else if (r >= 0)
                                *(streq(key, "symbols") ? &c->symbol_cache_bytes : &c->unwind_cache_bytes) = u;
                } else if (streq(section, "incidents")) {
                        if (streq(key, "max_bundles"))
                                r = get_u32(cc, v, key, 1, 100000, &c->max_bundles);
                        else if (streq(key, "on_bundle"))
                                r = get_argv(cc, doc, v, key, &c->on_bundle);
                        else if (streq(key, "on_bundle_timeout")) {
                                r = conf_get_duration(cc, v, key, ON_BUNDLE_TIMEOUT_USEC_MAX, &c->on_bundle_timeout_usec);
                                if (r >= 0 && c->on_bundle_timeout_usec == 0)
                                        r = conf_error(cc, v->start_mark, "'on_bundle_timeout' must be above 0");
                        } else {
                                r = get_size(cc, v, key, &c->max_bundle_bytes);
                                if (r >= 0 && c->max_bundle_bytes == 0)
                                        r = conf_error(cc, v->start_mark, "'max_bytes' must be above 0");
                        }
                } else {
                        if (streq(key, "kmsg"))
                                r = conf_set_string(cc, v, key, PATH_BYTES_MAX, &c->kmsg_path);
                        else if (streq(key, "journal"))
                                r = conf_get_bool(cc, v, key, &c->journal);
                        else if (streq(key, "journal_context")) {
                                const char *jc;
                                int prio;

                                r = conf_get_string(cc, v, key, 16, &jc);
                                if (r >= 0 && (prio = tprofd_journal_context_from_string(jc)) == -EINVAL)
                                        r = conf_error(cc, v->start_mark,
                                                       "invalid journal_context '%s': expected off or a priority, "
                                                       "emerg, alert, crit, err, warning, notice, info or debug",
                                                       jc);
                                else if (r >= 0)
                                        c->journal_context = prio;
                        } else
                                r = conf_set_string(cc, v, key, 256, &c->journal_namespace);
                }
        }
        return r;
}

static int config_copy(const TprofdConfig *src, TprofdConfig *dst) {
        *dst = *src;
        dst->config_path = dst->rules_path = dst->state_dir = dst->kmsg_path = NULL;
        dst->control_socket = dst->journal_namespace = NULL;
        dst->on_bundle = NULL;
#define DUP(f)                                                                                               \
        if (src->f && !(dst->f = strdup(src->f)))                                                            \
                goto oom;
        DUP(config_path);
        DUP(rules_path);
        DUP(state_dir);
        DUP(kmsg_path);
        DUP(control_socket);
        DUP(journal_namespace);
#undef DUP
        if (src->on_bundle) {
                size_t n = strv_length(src->on_bundle);
                dst->on_bundle = calloc(n + 1, sizeof(char *));
                if (!dst->on_bundle)
                        goto oom;
                for (size_t i = 0; i < n; i++)
                        if (!(dst->on_bundle[i] = strdup(src->on_bundle[i])))
                                goto oom;
        }
        return 0;
oom:
        tprofd_config_done(dst);
        return -ENOMEM;
}

int tprofd_config_load(TprofdConfig *c, const char *path, ConfError *reterr) {
        _cleanup_(conf_yaml_parser_deletep) yaml_parser_t parser = {};
        _cleanup_(conf_yaml_document_deletep) yaml_document_t *docp = NULL;
        _cleanup_free_ char *data = NULL;
        ConfContext cc = { .file = path, .reterr = reterr };
        TprofdConfig fresh;
        yaml_document_t doc;
        yaml_node_t *root;
        size_t size;
        int r;

        r = read_full_file(path, TPROFD_CONFIG_BYTES_MAX, &data, &size);
        if (r == -ENOENT)
                return r;
        if (r == -EFBIG)
                return conf_error_at(&cc, 0, 0, -EBADMSG, "file is too large (at most %llu bytes)",
                                     (unsigned long long) TPROFD_CONFIG_BYTES_MAX);
        if (r < 0)
                return conf_error_at(&cc, 0, 0, -EBADMSG, "cannot read: %s", strerror(-r));
        cc.data = data;
        cc.size = size;

        if (!yaml_parser_initialize(&parser))
                return -ENOMEM;
        yaml_parser_set_input_string(&parser, (const unsigned char *) data, size);
        if (!yaml_parser_load(&parser, &doc))
                return conf_yaml_failure(&cc, &parser);
        docp = &doc;
        root = yaml_document_get_root_node(&doc);
        if (!root) /* an empty file: every setting keeps its default */
                goto done;

        r = conf_check_mapping(&cc, &doc, root, "the configuration must be a mapping of settings", "the configuration",
                               top_keys, ELEMENTSOF(top_keys));
        if (r < 0)
                return r;
        r = config_copy(c, &fresh);
        if (r < 0)
                return r;
        r = load_section(&cc, &doc, root, NULL, &fresh);
        if (r < 0) {
                tprofd_config_done(&fresh);
                return r;
        }
        tprofd_config_done(c);
        *c = fresh;
done:
        free(c->config_path);
        c->config_path = strdup(path);
        return c->config_path ? 0 : -ENOMEM;
}

int tprofd_config_diff_static(const TprofdConfig *old, const TprofdConfig *fresh, char **ret_restart_needed) {
        _cleanup_strbuf_ StrBuf b = STRBUF_NULL;
        int r = 0;

#define DIFF_STR(f, name)                                                                                    \
        if (r >= 0 && !streq(old->f ?: "", fresh->f ?: ""))                                                  \
                r = strbuf_appendf(&b, "%s%s", b.len ? ", " : "", name);
#define DIFF_VAL(f, name)                                                                                    \
        if (r >= 0 && old->f != fresh->f)                                                                    \
                r = strbuf_appendf(&b, "%s%s", b.len ? ", " : "", name);
        DIFF_STR(state_dir, "state_dir");
        DIFF_STR(kmsg_path, "sources.kmsg");
        DIFF_STR(journal_namespace, "sources.journal_namespace");
        DIFF_STR(control_socket, "control_socket");
        DIFF_VAL(journal, "sources.journal");
        DIFF_VAL(journal_context, "sources.journal_context");
        DIFF_VAL(freq_hz, "freq");
        DIFF_VAL(window_usec, "window");
        DIFF_VAL(exact, "detail");
        DIFF_VAL(unwind, "unwind");
        DIFF_VAL(unwind_stack_bytes, "unwind_stack");
        DIFF_VAL(retention_age_usec, "retention.max_age");
        DIFF_VAL(retention_bytes, "retention.max_bytes");
        DIFF_VAL(keep_free_bytes, "retention.keep_free");
        DIFF_VAL(symbol_cache_bytes, "caches.symbols");
        DIFF_VAL(unwind_cache_bytes, "caches.unwind_tables");
#undef DIFF_STR
#undef DIFF_VAL
        if (r < 0)
                return r;
        *ret_restart_needed = b.len ? strbuf_steal(&b) : NULL;
        return 0;
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for bundle manifests (docs/bundle-format.md): tprof-bundle lists and shows bundles
 * copied from other machines, so manifest.json is untrusted. The input is one manifest for
 * bundle_manifest_parse(), which runs the strict JSON reader and maps the document onto its
 * typed fields. A manifest that parses is walked in full through the JsonValue accessors and
 * matched against a few FIELD=VALUE filters, as `tprof-bundle ls FILTER` does.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic/cleanup.h"
#include "bundle/bundle-cgroups.h"
#include "bundle/bundle-read.h"
#include "fuzz-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void walk(const JsonValue *v, unsigned depth) {
        double d;
        bool b;

        assert(v && depth <= JSON_READER_DEPTH_DEFAULT + 1);
        assert(json_type_to_string(v->type));
        switch (v->type) {
        case JSON_TYPE_STRING:
                assert(json_string_value(v) && v->string.s[v->string.len] == '\0');
                assert(strlen(v->string.s) <= v->string.len);
                break;
        case JSON_TYPE_ARRAY:
                for (size_t i = 0; i < json_length(v); i++)
                        walk(json_array_get(v, i), depth + 1);
                break;
        case JSON_TYPE_OBJECT:
                for (size_t i = 0; i < json_length(v); i++) {
                        const char *key = v->container.keys[i];
                        assert(key);
                        /* Lookups find the last member of that name. */
                        assert(json_object_get(v, key));
                        walk(v->container.items[i], depth + 1);
                }
                break;
        case JSON_TYPE_INTEGER:
        case JSON_TYPE_UNSIGNED:
        case JSON_TYPE_REAL:
                assert(json_double_value(v, &d));
                break;
        case JSON_TYPE_BOOLEAN:
                assert(json_bool_value(v, &b));
                break;
        case JSON_TYPE_NULL:
                assert(json_is_null(v));
                break;
        default:
                assert(false);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const filters[] = {
                "kubelet-pleg", "rule=ena-reset", "status=complete", "event.priority=3", "cpu=3",
                "host=web-1", "format=1", "event.captures.cpu=3", "=x", "x=", "repeats=0",
        };
        _cleanup_(bundle_manifest_freep) BundleManifest *m = NULL;
        size_t offset = SIZE_MAX;
        unsigned cpu;
        int r;

        _cleanup_free_ char *buf = fuzz_copy(data, size);
        if (!buf)
                return 0;

        r = bundle_manifest_parse(buf, size, &m, &offset);
        if (r == -EBADMSG || r == -ELOOP || r == -ERANGE) {
                assert(offset <= size);
                return 0;
        }
        if (r < 0) {
                /* a newer format; not an object, or a field of the wrong type */
                assert(r == -EPROTO || r == -EUCLEAN || r == -ENOMEM);
                return 0;
        }

        walk(m->json, 0);
        assert(m->json->type == JSON_TYPE_OBJECT);
        if (bundle_manifest_capture_cpu(m, &cpu))
                assert(cpu < 65536);

        {
                BundleEntry e = {
                        .id = (char *) (m->id ?: "20261121T000000Z-x"),
                        .dirname = (char *) "20261121T000000Z-x",
                        .path = (char *) "/nonexistent",
                        .rule = (char *) m->rule_name,
                        .state = BUNDLE_ENTRY_COMPLETE,
                        .manifest = m,
                };
                for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
                        sink += bundle_entry_matches(&e, filters[i]);
                sink += bundle_entry_has_field(&e, "event.priority") + bundle_entry_has_field(&e, "statsu");
        }
        /* the manifest's attribution: threads and cgroups, looked up by a tidied comm */
        {
                static const char *const comms[] = { "VM_Thread", "java", "", "x_y" };
                char pbuf[256], where[1024];
                for (size_t i = 0; i < sizeof comms / sizeof comms[0]; i++) {
                        const char *p = bundle_thread_process(m, comms[i], pbuf, sizeof pbuf);
                        if (p)
                                assert(strlen(p) < sizeof pbuf);
                        sink += bundle_process_cgroup(m, comms[i], +1, false, where, sizeof where) != NULL;
                        sink += bundle_process_cgroup(m, comms[i], -1, true, where, sizeof where) != NULL;
                }
        }
        return 0;
}

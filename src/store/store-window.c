/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Window files: the file header, its encoding and decoding; see store-window.h and
 * docs/window-format.md. The chunk writer is in store-window-writer.c, the reader in
 * store-window-reader.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "basic/macro.h"
#include "store/store-window.h"

/* ---------------------------------------------------------------- file header */

void window_header_done(WindowHeader *h) {
        free(h->strings);
        *h = (WindowHeader) {};
}

static int put_string16(ByteBuf *b, const char *s) {
        size_t n = s ? strnlen(s, WINDOW_HEADER_STRING_BYTES_MAX) : 0;
        uint8_t len[2];
        int r;

        put_le16(len, (uint16_t) n);
        r = byte_buf_put(b, len, 2);
        if (r < 0)
                return r;
        return byte_buf_put(b, s, n);
}

int window_header_encode(const WindowHeaderInfo *info, uint64_t start_realtime_usec, uint64_t span_usec,
                         ByteBuf *out) {
        uint8_t fixed[WINDOW_HEADER_FIXED_BYTES] = {}, crc[4];
        int r;

        out->len = 0;
        memcpy(fixed, WINDOW_MAGIC, 8);
        put_le16(fixed + 8, WINDOW_FORMAT_VERSION);
        put_le16(fixed + 10, info->function_frames ? WINDOW_FLAG_FUNCTION_FRAMES : 0);
        /* header_len at 12 is filled in below */
        put_le64(fixed + 16, start_realtime_usec);
        put_le64(fixed + 24, span_usec);
        put_le32(fixed + 32, info->freq_hz);
        put_le32(fixed + 36, info->n_cpus);
        put_le32(fixed + 40, (uint32_t) info->clock.method);
        put_le32(fixed + 44, MAX(info->time_resolution_usec, 1U));
        put_le64(fixed + 48, (uint64_t) info->clock.perf_minus_mono_ns);
        put_le64(fixed + 56, (uint64_t) info->clock.realtime_minus_mono_ns);
        put_le64(fixed + 64, info->clock.error_ns);
        put_le64(fixed + 72, info->clock.measured_mono_ns);
        r = byte_buf_put(out, fixed, sizeof fixed);
        if (r >= 0)
                r = put_string16(out, info->host);
        if (r >= 0)
                r = put_string16(out, info->boot_id);
        if (r >= 0)
                r = put_string16(out, info->kernel_release);
        if (r >= 0)
                r = put_string16(out, info->event);
        if (r < 0)
                return r;
        put_le32(out->data + 12, (uint32_t) (out->len + 4));
        put_le32(crc, crc32c(0, out->data, out->len));
        return byte_buf_put(out, crc, 4);
}

int window_header_decode(const uint8_t *p, size_t n, WindowHeader *ret) {
        WindowHeader h = {};
        uint32_t len, method, flags, res;
        ByteCursor c;
        size_t pool = 0;
        const char **fields[4];

        if (n < WINDOW_HEADER_FIXED_BYTES + 8 + 4 || memcmp(p, WINDOW_MAGIC, 8) != 0)
                return -EBADMSG;
        if (get_le16(p + 8) != WINDOW_FORMAT_VERSION && get_le16(p + 8) != WINDOW_FORMAT_VERSION_NO_BUILD_IDS &&
            get_le16(p + 8) != WINDOW_FORMAT_VERSION_NO_CGROUPS)
                return -EPROTONOSUPPORT;
        len = get_le32(p + 12);
        if (len < WINDOW_HEADER_FIXED_BYTES + 8 + 4 || len > n ||
            len > WINDOW_HEADER_FIXED_BYTES + 4 * (2 + WINDOW_HEADER_STRING_BYTES_MAX) + 4)
                return -EBADMSG;
        if (crc32c(0, p, len - 4) != get_le32(p + len - 4))
                return -EBADMSG;
        flags = get_le16(p + 10);
        if (flags & ~WINDOW_FLAGS_KNOWN)
                return -EPROTONOSUPPORT;
        res = get_le32(p + 44);
        if (res > WINDOW_TIME_RESOLUTION_USEC_MAX)
                return -EBADMSG;

        h.header_bytes = len;
        h.version = get_le16(p + 8);
        h.start_realtime_usec = get_le64(p + 16);
        h.span_usec = get_le64(p + 24);
        h.info.freq_hz = get_le32(p + 32);
        h.info.n_cpus = get_le32(p + 36);
        h.info.time_resolution_usec = MAX(res, 1U);
        h.info.function_frames = flags & WINDOW_FLAG_FUNCTION_FRAMES;
        method = get_le32(p + 40);
        h.info.clock = (ClockMap) {
                .method = method < _CLOCK_MAP_METHOD_MAX ? (ClockMapMethod) method : CLOCK_MAP_RECORDED,
                .perf_minus_mono_ns = (int64_t) get_le64(p + 48),
                .realtime_minus_mono_ns = (int64_t) get_le64(p + 56),
                .error_ns = get_le64(p + 64),
                .measured_mono_ns = get_le64(p + 72),
        };

        h.strings = malloc(len); /* the strings plus their NULs fit in the header's own size */
        if (!h.strings)
                return -ENOMEM;
        fields[0] = &h.info.host;
        fields[1] = &h.info.boot_id;
        fields[2] = &h.info.kernel_release;
        fields[3] = &h.info.event;
        c = (ByteCursor) { .p = p + WINDOW_HEADER_FIXED_BYTES, .end = p + len - 4 };
        for (size_t i = 0; i < 4; i++) {
                const uint8_t *l = cursor_bytes(&c, 2), *s;
                uint16_t sl = l ? get_le16(l) : 0;
                s = cursor_bytes(&c, sl);
                if (c.error || sl > WINDOW_HEADER_STRING_BYTES_MAX || memchr(s, 0, sl)) {
                        free(h.strings);
                        return -EBADMSG;
                }
                memcpy(h.strings + pool, s, sl);
                h.strings[pool + sl] = '\0';
                *fields[i] = h.strings + pool;
                pool += sl + 1;
        }
        *ret = h;
        return 0;
}

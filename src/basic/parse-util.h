/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strict number parsing: the whole string must be a number in range, no sign surprises, no
 * trailing garbage. Returns 0, -EINVAL (syntax) or -ERANGE.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int safe_atou64(const char *s, uint64_t *ret);
int safe_atou32(const char *s, uint32_t *ret);
int safe_atoi64(const char *s, int64_t *ret);
int safe_atoi(const char *s, int *ret);
/* "64K", "10M", "2G", "1T" or plain bytes, binary multiples. */
int parse_size(const char *s, uint64_t *ret_bytes);

/* Formats bytes for people: "512B", "7.5K", "12M" (binary multiples). */
#define FORMAT_BYTES_MAX 16
const char *format_bytes(char *buf, size_t l, uint64_t bytes);
#define FORMAT_BYTES(b) format_bytes((char[FORMAT_BYTES_MAX]) {}, FORMAT_BYTES_MAX, (b))

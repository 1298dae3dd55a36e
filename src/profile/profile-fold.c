/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Folds samples into counted stack strings; see profile-fold.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/string-util.h"
#include "profile/profile-fold.h"
#include "profile/profile-names.h"

typedef struct FoldedEntry {
        uint64_t count;
        char comm[64]; /* the tidy comm that starts its key, for the memo's check */
} FoldedEntry;

struct Folder {
        Hashmap *stacks; /* key -> index into entries */
        FoldedEntry *entries;
        size_t n_entries, entries_allocated;
        uint64_t tag; /* ours in SampleStackSlot.tag: slot.stack is then an index into entries */
        uint64_t total;
        StrBuf key;
        FoldedStack *sorted;
        char *keys; /* NUL-separated copy of every key, for sorted */
};

Folder *folder_new(void) {
        Folder *f = calloc(1, sizeof(Folder));
        if (!f)
                return NULL;
        f->stacks = hashmap_new();
        if (!f->stacks)
                return mfree(f);
        f->tag = sample_stack_tag_new();
        return f;
}

Folder *folder_free(Folder *f) {
        if (!f)
                return NULL;
        hashmap_free(f->stacks);
        free(f->entries);
        strbuf_done(&f->key);
        free(f->sorted);
        free(f->keys);
        free(f);
        return NULL;
}

uint64_t folder_total(const Folder *f) {
        return f->total;
}

size_t folder_n_stacks(const Folder *f) {
        return hashmap_size(f->stacks);
}

int profile_fold_key(const Sample *s, StrBuf *key) {
        char comm[320] /* a comm, or the cgroup unit or container an export roots stacks by */, sym[PROFILE_NAME_BYTES_MAX], dso[PROFILE_NAME_BYTES_MAX], frame[PROFILE_NAME_BYTES_MAX + 2];
        int r;

        strbuf_reset(key);
        profile_comm_tidy(s->comm, comm, sizeof comm);
        r = strbuf_append(key, comm);
        for (uint32_t i = s->n_frames; r >= 0 && i > 0; i--) {
                const Frame *fr = &s->frames[i - 1];
                profile_symbol_tidy(fr->symbol, sym, sizeof sym);
                profile_dso_tidy(fr->dso, dso, sizeof dso);
                profile_folded_frame(comm, sym, dso, frame, sizeof frame);
                r = strbuf_putc(key, ';');
                if (r >= 0)
                        r = strbuf_append(key, frame);
        }
        return r < 0 ? r : 0;
}

int folder_add(Folder *f, const Sample *s, uint64_t count) {
        char comm[64];
        uint64_t *slot;
        bool added;
        int r;

        profile_comm_tidy(s->comm, comm, sizeof comm);
        /* The same stack (its producer's slot says so) with the same comm: the key is known. */
        if (s->stack_slot && s->stack_slot->tag == f->tag && s->stack_slot->stack < f->n_entries &&
            streq(f->entries[s->stack_slot->stack].comm, comm)) {
                f->entries[s->stack_slot->stack].count += count;
                f->total += count;
                f->sorted = mfree(f->sorted);
                return 0;
        }

        r = profile_fold_key(s, &f->key);
        if (r < 0)
                return r;

        if (!GREEDY_REALLOC(f->entries, f->entries_allocated, f->n_entries + 1))
                return -ENOMEM;
        slot = hashmap_slot(f->stacks, f->key.data, f->key.len, f->n_entries, &added);
        if (!slot)
                return -ENOMEM;
        if (added) {
                f->entries[f->n_entries] = (FoldedEntry) {};
                snprintf(f->entries[f->n_entries].comm, sizeof f->entries[f->n_entries].comm, "%s", comm);
                f->n_entries++;
        }
        f->entries[*slot].count += count;
        if (s->stack_slot)
                *s->stack_slot = (SampleStackSlot) { .tag = f->tag, .stack = (uint32_t) *slot };
        f->total += count;
        f->sorted = mfree(f->sorted);
        return 0;
}

static int cmp_stack(const void *a, const void *b) {
        /* Bytewise, as Perl's "cmp" sorts without a locale. */
        return strcmp(((const FoldedStack *) a)->key, ((const FoldedStack *) b)->key);
}

int folder_sorted(Folder *f, const FoldedStack **ret_stacks, size_t *ret_n) {
        size_t n = hashmap_size(f->stacks), bytes = 0, off = 0, i = 0;
        const void *k;
        size_t kl;
        uint64_t v;

        if (!f->sorted) {
                for (size_t it = 0; hashmap_iterate(f->stacks, &it, &k, &kl, &v);)
                        bytes += kl + 1;
                free(f->keys);
                f->keys = malloc(bytes ?: 1);
                f->sorted = new(FoldedStack, n ?: 1);
                if (!f->keys || !f->sorted)
                        return -ENOMEM;
                for (size_t it = 0; hashmap_iterate(f->stacks, &it, &k, &kl, &v);) {
                        memcpy(f->keys + off, k, kl);
                        f->keys[off + kl] = '\0';
                        f->sorted[i++] = (FoldedStack) { .key = f->keys + off, .count = f->entries[v].count };
                        off += kl + 1;
                }
                qsort(f->sorted, n, sizeof(FoldedStack), cmp_stack);
        }
        *ret_stacks = f->sorted;
        *ret_n = n;
        return 0;
}

int folder_write(Folder *f, FILE *out) {
        const FoldedStack *st;
        size_t n;
        int r;

        r = folder_sorted(f, &st, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                fprintf(out, "%s %llu\n", st[i].key, (unsigned long long) st[i].count);
        return ferror(out) ? -EIO : 0;
}

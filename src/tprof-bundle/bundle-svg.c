/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The flame graph writer of bundle-svg.h. Stacks are merged into a tree (children keyed by parent
 * and name through one hash map), then drawn depth first, root at the bottom, children in name
 * order so that two graphs of similar profiles look alike. Frames narrower than a tenth of a pixel
 * are not drawn, which bounds the output for any input. Names are untrusted: they are escaped for
 * the terminal rules first (no control bytes, valid UTF-8) and then for XML.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basic/alloc-util.h"
#include "basic/hashmap.h"
#include "basic/string-util.h"
#include "tprof-bundle/bundle-svg.h"

#define SVG_WIDTH 1200.0
#define SVG_PAD 10.0
#define FRAME_HEIGHT 16.0
#define FONT_SIZE 12.0
#define FONT_WIDTH 0.59
#define MIN_WIDTH_PX 0.1
#define HEADER_HEIGHT 50.0
#define FOOTER_HEIGHT 30.0
#define DEPTH_MAX 2048u

typedef struct Node {
        char *name;
        uint64_t count, base;
        size_t first_child, next_sibling; /* index + 1, 0 = none */
} Node;

typedef struct Tree {
        Node *nodes;
        size_t n, allocated;
        Hashmap *index; /* (parent index, name) -> node index */
        unsigned max_depth;
} Tree;

static void tree_done(Tree *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->nodes[i].name);
        free(t->nodes);
        hashmap_free(t->index);
}

static int tree_child(Tree *t, size_t parent, const char *name, size_t len, size_t *ret) {
        _cleanup_free_ char *key = malloc(sizeof(size_t) + len);
        uint64_t v;

        if (!key)
                return -ENOMEM;
        memcpy(key, &parent, sizeof parent);
        memcpy(key + sizeof parent, name, len);
        if (hashmap_get(t->index, key, sizeof parent + len, &v)) {
                *ret = (size_t) v;
                return 0;
        }
        if (!GREEDY_REALLOC(t->nodes, t->allocated, t->n + 1))
                return -ENOMEM;
        t->nodes[t->n] = (Node) { .name = strndup(name, len) };
        if (!t->nodes[t->n].name)
                return -ENOMEM;
        t->nodes[t->n].next_sibling = t->nodes[parent].first_child;
        t->nodes[parent].first_child = t->n + 1;
        if (hashmap_put(t->index, key, sizeof parent + len, t->n) < 0)
                return -ENOMEM;
        *ret = t->n++;
        return 0;
}

static int tree_add(Tree *t, const Folded *f, bool base) {
        for (size_t i = 0; i < f->n; i++) {
                const char *p = f->lines[i].stack;
                uint64_t c = f->lines[i].count;
                size_t node = 0;
                unsigned depth = 0;

                if (base)
                        t->nodes[0].base += c;
                else
                        t->nodes[0].count += c;
                while (*p && depth < DEPTH_MAX) {
                        const char *e = strchr(p, ';');
                        size_t len = e ? (size_t) (e - p) : strlen(p);
                        int r = tree_child(t, node, p, len, &node);
                        if (r < 0)
                                return r;
                        if (base)
                                t->nodes[node].base += c;
                        else
                                t->nodes[node].count += c;
                        depth++;
                        if (!base && depth > t->max_depth)
                                t->max_depth = depth;
                        if (!e)
                                break;
                        p = e + 1;
                }
        }
        return 0;
}

/* Bytes of the first max_chars code points of a valid UTF-8 string. */
static size_t utf8_width_bytes_fit(const char *s, size_t max_chars) {
        size_t i = 0, w = 0;
        for (; s[i]; i++)
                if (((unsigned char) s[i] & 0xc0) != 0x80) {
                        if (w == max_chars)
                                break;
                        w++;
                }
        return i;
}

/* Writes e, already escaped by escape_text(), as XML character data or attribute text. */
static void put_xml_escaped(FILE *out, const char *e) {
        for (const unsigned char *p = (const unsigned char *) e; *p; p++) {
                /* U+FFFE and U+FFFF are valid UTF-8 but not XML characters. */
                if (p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf)) {
                        fputs("\\xef\\xbf", out);
                        fprintf(out, "\\x%02x", p[2]);
                        p += 2;
                        continue;
                }
                switch (*p) {
                case '&': fputs("&amp;", out); break;
                case '<': fputs("&lt;", out); break;
                case '>': fputs("&gt;", out); break;
                case '"': fputs("&quot;", out); break;
                case '\'': fputs("&apos;", out); break;
                default: fputc(*p, out);
                }
        }
}

static void put_xml(FILE *out, const char *s) {
        _cleanup_free_ char *e = escape_text(s, strlen(s));
        if (e)
                put_xml_escaped(out, e);
}

/* A warm colour from the name, stable across runs (flame graphs traditionally hash names). */
static void color_normal(const char *name, char *buf, size_t l) {
        uint64_t h = hash_bytes(name, strlen(name));
        unsigned r = 205 + (unsigned) (h % 50), g = 80 + (unsigned) ((h >> 8) % 150), b = (unsigned) ((h >> 16) % 55);
        snprintf(buf, l, "rgb(%u,%u,%u)", r, g, b);
}

/* delta in [-1, 1]: red for positive, blue for negative, white at 0. */
static void color_diff(double delta, char *buf, size_t l) {
        unsigned v = (unsigned) lround(255 - 200 * fmin(fabs(delta), 1.0));
        if (delta > 0)
                snprintf(buf, l, "rgb(255,%u,%u)", v, v);
        else if (delta < 0)
                snprintf(buf, l, "rgb(%u,%u,255)", v, v);
        else
                snprintf(buf, l, "rgb(250,250,250)");
}

typedef struct Draw {
        FILE *out;
        const Tree *t;
        double scale; /* px per sample */
        double height;
        bool diff;
        double total, base_total, max_delta;
} Draw;

static int child_cmp(const void *a, const void *b) {
        const Node *x = *(const Node *const *) a, *y = *(const Node *const *) b;
        return strcmp(x->name, y->name);
}

static double node_delta(const Draw *d, const Node *n) {
        double s = d->total > 0 ? (double) n->count / d->total : 0;
        double b = d->base_total > 0 ? (double) n->base / d->base_total : 0;
        return s - b;
}

static void max_delta_walk(Draw *d, size_t i, unsigned depth) {
        const Node *n = &d->t->nodes[i];
        d->max_delta = fmax(d->max_delta, fabs(node_delta(d, n)));
        if (depth >= DEPTH_MAX)
                return;
        for (size_t c = n->first_child; c; c = d->t->nodes[c - 1].next_sibling)
                max_delta_walk(d, c - 1, depth + 1);
}

static int draw_node(Draw *d, size_t i, double x, unsigned depth) {
        const Node *n = &d->t->nodes[i];
        double w = (double) n->count * d->scale;
        double y = d->height - FOOTER_HEIGHT - (depth + 1) * FRAME_HEIGHT;
        char color[32];
        size_t nc = 0;

        if (w < MIN_WIDTH_PX || n->count == 0)
                return 0;
        if (d->diff)
                color_diff(d->max_delta > 0 ? node_delta(d, n) / d->max_delta : 0, color, sizeof color);
        else
                color_normal(n->name, color, sizeof color);

        fprintf(d->out, "<g class=\"f\"><title>");
        put_xml(d->out, n->name);
        fprintf(d->out, " (%" PRIu64 " samples, %.2f%%", n->count, 100.0 * (double) n->count / d->total);
        if (d->diff)
                fprintf(d->out, "; baseline %.2f%%", d->base_total > 0 ? 100.0 * (double) n->base / d->base_total : 0);
        fprintf(d->out, ")</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" rx=\"2\"/>",
                x, y, w, FRAME_HEIGHT - 1, color);
        size_t fit = (size_t) ((w - 6) / (FONT_SIZE * FONT_WIDTH));
        fprintf(d->out, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + FRAME_HEIGHT - 4);
        if (fit >= 3) {
                _cleanup_free_ char *e = escape_text(n->name, strlen(n->name));
                if (e && utf8_width_bytes_fit(e, fit) < strlen(e)) {
                        size_t cut = utf8_width_bytes_fit(e, fit - 2);
                        e[cut] = '\0';
                        put_xml_escaped(d->out, e);
                        fputs("..", d->out);
                } else if (e)
                        put_xml_escaped(d->out, e);
        }
        fprintf(d->out, "</text></g>\n");

        if (depth + 1 >= DEPTH_MAX)
                return 0;
        for (size_t c = n->first_child; c; c = d->t->nodes[c - 1].next_sibling)
                nc++;
        if (nc == 0)
                return 0;
        _cleanup_free_ const Node **children = new(const Node *, nc);
        if (!children)
                return -ENOMEM;
        nc = 0;
        for (size_t c = n->first_child; c; c = d->t->nodes[c - 1].next_sibling)
                children[nc++] = &d->t->nodes[c - 1];
        qsort(children, nc, sizeof(Node *), child_cmp);
        for (size_t k = 0; k < nc; k++) {
                int r = draw_node(d, (size_t) (children[k] - d->t->nodes), x, depth + 1);
                if (r < 0)
                        return r;
                x += (double) children[k]->count * d->scale;
        }
        return 0;
}

/*
 * Click a frame to zoom to it: its descendants are stretched to the full width, its ancestors are
 * kept (faded) below it, everything else is hidden; clicking the root frame resets. Ctrl-F asks
 * for a regular expression and outlines the frames whose names match.
 */
static const char script[] =
        "<script type=\"text/ecmascript\"><![CDATA[\n"
        "var W = 1200, P = 10;\n"
        "function frames() { return document.querySelectorAll('g.f'); }\n"
        "function box(g) { var r = g.querySelector('rect'); return [parseFloat(r.getAttribute('x')),\n"
        "  parseFloat(r.getAttribute('width')), parseFloat(r.getAttribute('y'))]; }\n"
        "function orig(g) { if (!g.o) g.o = box(g); return g.o; }\n"
        "function label(g) { var t = g.querySelector('title').textContent; return t.replace(/ \\([^(]*$/, ''); }\n"
        "function fit(g, w) { var t = g.querySelector('text'), n = label(g), c = Math.floor((w - 6) / 7.08);\n"
        "  t.textContent = c < 3 ? '' : (n.length <= c ? n : n.substr(0, c - 2) + '..'); }\n"
        "function zoom(g) { var z = orig(g), s = (W - 2 * P) / z[1];\n"
        "  frames().forEach(function (f) { var b = orig(f), r = f.querySelector('rect'), t = f.querySelector('text');\n"
        "    var inside = b[2] <= z[2] && b[0] + 1e-6 >= z[0] && b[0] + b[1] <= z[0] + z[1] + 1e-6;\n"
        "    var below = b[2] > z[2] && b[0] <= z[0] + 1e-6 && b[0] + b[1] + 1e-6 >= z[0] + z[1];\n"
        "    if (!inside && !below) { f.style.display = 'none'; return; }\n"
        "    f.style.display = ''; var x = below ? P : P + (b[0] - z[0]) * s, w = below ? W - 2 * P : b[1] * s;\n"
        "    r.setAttribute('x', x); r.setAttribute('width', w); t.setAttribute('x', x + 3); fit(f, w);\n"
        "    f.style.opacity = below ? 0.5 : 1; }); }\n"
        "function search() { var q = prompt('Search (regular expression)'); if (q === null) return;\n"
        "  var re; try { re = new RegExp(q); } catch (e) { return; }\n"
        "  frames().forEach(function (f) { f.querySelector('rect').style.stroke = q && re.test(label(f)) ? 'rgb(230,0,230)' : '';\n"
        "    f.querySelector('rect').style.strokeWidth = 2; }); }\n"
        "document.addEventListener('click', function (e) { var g = e.target.closest ? e.target.closest('g.f') : null;\n"
        "  if (g) zoom(g); });\n"
        "document.addEventListener('keydown', function (e) { if (e.ctrlKey && e.key === 'f') { e.preventDefault(); search(); } });\n"
        "]]></script>\n";

int flamegraph_write_svg(FILE *out, const Folded *slice, const Folded *baseline, const char *title) {
        Tree t = {};
        Draw d = { .out = out, .diff = baseline != NULL };
        int r;

        t.index = hashmap_new();
        if (!t.index || !GREEDY_REALLOC(t.nodes, t.allocated, 1)) {
                tree_done(&t);
                return -ENOMEM;
        }
        t.nodes[0] = (Node) { .name = strdup("all") };
        t.n = 1;
        if (!t.nodes[0].name) {
                tree_done(&t);
                return -ENOMEM;
        }
        r = tree_add(&t, slice, false);
        if (r >= 0 && baseline)
                r = tree_add(&t, baseline, true);
        if (r < 0) {
                tree_done(&t);
                return r;
        }

        d.t = &t;
        d.total = (double) t.nodes[0].count;
        d.base_total = (double) t.nodes[0].base;
        d.height = HEADER_HEIGHT + FOOTER_HEIGHT + (t.max_depth + 1) * FRAME_HEIGHT;
        d.scale = d.total > 0 ? (SVG_WIDTH - 2 * SVG_PAD) / d.total : 0;
        if (d.diff)
                max_delta_walk(&d, 0, 0);

        fprintf(out,
                "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                "xmlns=\"http://www.w3.org/2000/svg\">\n"
                "<style>text { font-family: Verdana, sans-serif; font-size: %.0fpx; fill: #000; pointer-events: none; }\n"
                "g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
                ".h { font-size: 17px; } .s { fill: #555; }</style>\n",
                SVG_WIDTH, d.height, SVG_WIDTH, d.height, FONT_SIZE);
        fputs(script, out);
        fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f8\"/>\n", SVG_WIDTH, d.height);
        fprintf(out, "<text class=\"h\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">", SVG_WIDTH / 2);
        put_xml(out, title ?: "Flame graph");
        fprintf(out, "</text>\n<text class=\"s\" x=\"%.0f\" y=\"42\" text-anchor=\"middle\">", SVG_WIDTH / 2);
        if (d.diff)
                fprintf(out, "%" PRIu64 " samples; red: larger share than in the baseline (%" PRIu64
                             " samples), blue: smaller. Click to zoom, Ctrl-F to search.",
                        t.nodes[0].count, t.nodes[0].base);
        else
                fprintf(out, "%" PRIu64 " samples. Click to zoom, Ctrl-F to search.", t.nodes[0].count);
        fprintf(out, "</text>\n");
        if (d.total > 0)
                r = draw_node(&d, 0, SVG_PAD, 0);
        else
                fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">No samples.</text>\n", SVG_PAD, d.height - FOOTER_HEIGHT);
        fprintf(out, "</svg>\n");
        tree_done(&t);
        if (r < 0)
                return r;
        return ferror(out) ? -EIO : 0;
}

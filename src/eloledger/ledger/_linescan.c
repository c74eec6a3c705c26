/* A strict one-pass scanner of JSON Lines into columns, for the ledger's fast path.

   Why: the msgspec path builds a struct and several Python objects per row and compares
   every key it does not need against every field; for `tokens` on a million 770-byte rows
   that was most of the time. This scanner validates each line as JSON (RFC 8259, UTF-8
   checked) and writes only the fields asked for straight into column buffers.

   It is a pre-filter, never a judge: whatever is not plain (a key with an escape, a needed
   key twice, a value of an unexpected type, a guard field set, a surrogate escape, deep
   nesting, a long number, a blank line, bad JSON) makes it return None, and the caller
   decodes the batch the msgspec way, which has every rule. So a batch it accepts gives the
   columns the msgspec tight decoder would give (tests/test_native_scan.py checks this).

   Field kinds (one byte each):
     'f' factor  : a string (no escapes) or null -> int32 code into first-seen levels, -1
     'l' literal : as 'f', and every level must be one of the allowed values
     'n' number  : a number or null -> float64 (NaN for null or absent)
     'p' present : any valid JSON -> uint8, 1 when present and not null
     't' truthy  : any valid JSON -> uint8, Python's bool() of it (numbers read as below)
     'b' passed  : null, a boolean, or a number equal to 0 or 1 -> float64 (NaN, 1.0, 0.0)
     'g' guard   : must be null or absent
*/
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_FIELDS 64
#define MAX_DEPTH 64
#define MAX_NUMBER 40

typedef struct {
    const char *ptr;
    Py_ssize_t len;
} Span;

/* A string's first 16 bytes as two words, zero-padded: short keys and levels compare in two
   word compares instead of a memcmp call. */
typedef struct {
    uint64_t w[2];
} Words;

/* One factor column of a batch: an open-addressing table of the distinct strings, grown
   with them (few levels keep it in the CPU cache). */
typedef struct {
    uint32_t *slots; /* code + 1, 0 = empty */
    Span *levels;
    Words *words;
    uint64_t *hashes;
    Py_ssize_t count, mask;
} Table;

typedef struct {
    const char *key;
    Py_ssize_t key_len;
    Words words;
    char kind;
    void *out; /* int32 codes, float64 values or uint8 flags */
    Table table;
} Field;

typedef struct {
    Field fields[MAX_FIELDS];
    int nfields;
    int16_t lookup[256]; /* key hash -> field index, -1 empty (linear probing) */
    const char *limit;   /* the batch's end: words are read up to it, never past it */
} Spec;

/* ------------------------------------------------------------------ JSON grammar */

/* [p, p + len) as Words. Two fixed loads when 16 bytes lie before limit (little endian). */
static inline Words words_of(const char *p, Py_ssize_t len, const char *limit) {
    Words out = {{0, 0}};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (limit - p >= 16) {
        memcpy(out.w, p, 16);
        if (len < 8) {
            out.w[0] &= len ? ~0ULL >> (64 - 8 * len) : 0;
            out.w[1] = 0;
        } else if (len < 16) {
            out.w[1] &= len > 8 ? ~0ULL >> (64 - 8 * (len - 8)) : 0;
        }
        return out;
    }
#endif
    (void)limit;
    memcpy(out.w, p, len < 16 ? len : 16);
    return out;
}

static inline int same_words(Words a, Words b) {
    return a.w[0] == b.w[0] && a.w[1] == b.w[1];
}

/* Bytes that end the plain run of a string: the quote, the backslash, controls, non-ASCII. */
static unsigned char STOP[256];

static inline const char *ws(const char *p, const char *end) {
    while (p < end && (unsigned char)*p <= ' ' && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* The first byte of [p, end) that ends a string's plain run (a quote, a backslash, a control
   or a non-ASCII byte). On little-endian machines eight bytes at a time: in each test the
   lowest flagged byte is a true match (a borrow only runs upward, to later bytes), so the
   lowest flag of all four is the first stop. Elsewhere a byte at a time. */
static inline const char *plain_run(const char *p, const char *end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (end - p >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        uint64_t quote = v ^ (ONES * '"'), slash = v ^ (ONES * '\\');
        uint64_t stop = ((quote - ONES) & ~quote) | ((slash - ONES) & ~slash) |
                        ((v - ONES * 0x20) & ~v) | v;
        stop &= HIGHS;
        if (stop)
            return p + (__builtin_ctzll(stop) >> 3);
        p += 8;
    }
#endif
    while (p < end && !STOP[(unsigned char)*p])
        p++;
    return p;
}

static void init_stop(void) {
    for (int c = 0; c < 256; c++)
        STOP[c] = (c < 0x20 || c == '"' || c == '\\' || c >= 0x80);
}

/* One UTF-8 sequence at p (first byte >= 0x80), strictly: no overlongs, no surrogates,
   nothing above U+10FFFF. Returns the byte after it, or NULL. */
static const char *utf8(const char *p, const char *end) {
    const unsigned char *s = (const unsigned char *)p;
    Py_ssize_t left = end - p;
    unsigned char c = s[0];
    if (c >= 0xC2 && c <= 0xDF) {
        if (left < 2 || (s[1] & 0xC0) != 0x80)
            return NULL;
        return p + 2;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return NULL;
        if (c == 0xE0 && s[1] < 0xA0)
            return NULL; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return NULL; /* a surrogate */
        return p + 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
            (s[3] & 0xC0) != 0x80)
            return NULL;
        if (c == 0xF0 && s[1] < 0x90)
            return NULL; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return NULL; /* above U+10FFFF */
        return p + 4;
    }
    return NULL;
}

static inline int hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The rest of a string from p, a byte that ended a plain run: escapes, UTF-8, controls.
   Returns the byte after the closing quote, or NULL; a \u escape of a surrogate must be
   half of a pair. */
static const char *string_rest(const char *p, const char *end, int *escaped) {
    for (;;) {
        if (p >= end)
            return NULL;
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c == '\\') {
            *escaped = 1;
            if (p + 1 >= end)
                return NULL;
            char e = p[1];
            if (e == 'u') {
                if (end - p < 6 || !hex(p[2]) || !hex(p[3]) || !hex(p[4]) || !hex(p[5]))
                    return NULL;
                if ((p[2] == 'd' || p[2] == 'D') && strchr("89abAB", p[3])) {
                    /* a high surrogate: only with a low one right after it */
                    if (end - p < 12 || p[6] != '\\' || p[7] != 'u' ||
                        (p[8] != 'd' && p[8] != 'D') || !strchr("cdefCDEF", p[9]) ||
                        !hex(p[10]) || !hex(p[11]))
                        return NULL;
                    p += 6;
                } else if ((p[2] == 'd' || p[2] == 'D') && strchr("cdefCDEF", p[3])) {
                    return NULL; /* a low surrogate alone */
                }
                p += 6;
            } else if (e && strchr("\"\\/bfnrt", e)) {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else {
            p = utf8(p, end);
            if (!p)
                return NULL;
        }
        p = plain_run(p, end);
    }
}

/* A string starting at the quote at p. Returns the byte after the closing quote, or NULL;
   *escaped tells whether it held a backslash. */
static inline const char *string(const char *p, const char *end, int *escaped) {
    *escaped = 0;
    p = plain_run(p + 1, end);
    if (p < end && *p == '"')
        return p + 1;
    return string_rest(p, end, escaped);
}

/* A number at p, by JSON's grammar. Returns the byte after it, or NULL; *plain is 1 for an
   integer (no fraction, no exponent). */
static const char *number(const char *p, const char *end, int *plain) {
    const char *s = p;
    *plain = 1;
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    } else {
        return NULL;
    }
    if (p < end && *p == '.') {
        *plain = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *plain = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || *p < '0' || *p > '9')
            return NULL;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p - s > MAX_NUMBER)
        return NULL; /* long numbers: the msgspec path knows their rules */
    return p;
}

static const char *value(const char *p, const char *end, int depth);
static const char *members(const char *p, const char *end, int depth, Spec *spec,
                           Py_ssize_t r);

static const char *word(const char *p, const char *end, const char *text, Py_ssize_t n) {
    if (end - p < n || memcmp(p, text, n) != 0)
        return NULL;
    return p + n;
}

/* Just past the byte c, after any whitespace; NULL when c is not there. */
static inline const char *expect(const char *p, const char *end, char c) {
    if (p < end && *p == c)
        return p + 1; /* compact JSON first: 2% of the scan's instructions, measured */
    p = ws(p, end);
    return p < end && *p == c ? p + 1 : NULL;
}

/* After an item of an object or an array: a comma (*more = 1, at the next item) or the
   closing byte (*more = 0, just past it); NULL for anything else. */
static inline const char *next_item(const char *p, const char *end, char close, int *more) {
    if (p < end && *p == ',') { /* compact JSON first, as in expect() */
        *more = 1;
        return ws(p + 1, end);
    }
    p = ws(p, end);
    *more = p < end && *p == ',';
    if (*more)
        return ws(p + 1, end);
    return p < end && *p == close ? p + 1 : NULL;
}

static const char *array(const char *p, const char *end, int depth) {
    int more = 1;
    p = ws(p + 1, end);
    if (p < end && *p == ']')
        return p + 1;
    while (more) {
        p = value(p, end, depth);
        if (!p || !(p = next_item(p, end, ']', &more)))
            return NULL;
    }
    return p;
}

/* Any JSON value at p, checked and skipped. Returns the byte after it, or NULL. */
static const char *value(const char *p, const char *end, int depth) {
    int flag;
    if (p >= end)
        return NULL;
    switch (*p) {
    case '"':
        return string(p, end, &flag);
    case '{':
        return depth >= MAX_DEPTH ? NULL : members(p + 1, end, depth + 1, NULL, 0);
    case '[':
        return depth >= MAX_DEPTH ? NULL : array(p, end, depth + 1);
    case 't':
        return word(p, end, "true", 4);
    case 'f':
        return word(p, end, "false", 5);
    case 'n':
        return word(p, end, "null", 4);
    default:
        return number(p, end, &flag);
    }
}

/* ------------------------------------------------------------------ field values */

static inline uint64_t mix(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return h;
}

static uint64_t fnv(const char *p, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
    return h;
}

static int table_init(Table *t, Py_ssize_t rows) {
    Py_ssize_t size = 64;
    t->slots = PyMem_Calloc(size, sizeof(uint32_t));
    t->levels = PyMem_Malloc((rows + 1) * sizeof(Span));
    t->words = PyMem_Malloc((rows + 1) * sizeof(Words));
    t->hashes = PyMem_Malloc((rows + 1) * sizeof(uint64_t));
    t->count = 0;
    t->mask = size - 1;
    return t->slots && t->levels && t->words && t->hashes;
}

/* Double the slots and put every level back at its hash. 0 when out of memory. */
static int table_grow(Table *t) {
    Py_ssize_t mask = 2 * (t->mask + 1) - 1;
    uint32_t *slots = PyMem_Calloc(mask + 1, sizeof(uint32_t));
    if (!slots)
        return 0;
    for (Py_ssize_t c = 0; c < t->count; c++) {
        Py_ssize_t i = (Py_ssize_t)(t->hashes[c] & mask);
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (uint32_t)(c + 1);
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 1;
}

static void table_free(Table *t) {
    PyMem_Free(t->slots);
    PyMem_Free(t->levels);
    PyMem_Free(t->words);
    PyMem_Free(t->hashes);
    t->slots = NULL;
    t->levels = NULL;
    t->words = NULL;
    t->hashes = NULL;
}

/* The code of the string [ptr, ptr+len), added in first-seen order when new; -2 when out of
   memory. */
static int32_t table_code(Table *t, const char *ptr, Py_ssize_t len, const char *limit) {
    Words w = words_of(ptr, len, limit);
    uint64_t h = len <= 16 ? mix(w.w[0] ^ (w.w[1] * 0x9E3779B97F4A7C15ULL) ^ (uint64_t)len)
                           : fnv(ptr, len);
    Py_ssize_t i = (Py_ssize_t)(h & t->mask);
    for (;;) {
        uint32_t slot = t->slots[i];
        if (slot == 0) {
            Py_ssize_t code = t->count++;
            t->levels[code].ptr = ptr;
            t->levels[code].len = len;
            t->words[code] = w;
            t->hashes[code] = h;
            t->slots[i] = (uint32_t)(code + 1);
            if (2 * t->count > t->mask && !table_grow(t))
                return -2;
            return (int32_t)code;
        }
        Py_ssize_t code = slot - 1;
        if (t->hashes[code] == h && t->levels[code].len == len && same_words(t->words[code], w) &&
            (len <= 16 || memcmp(t->levels[code].ptr, ptr, len) == 0))
            return (int32_t)code;
        i = (i + 1) & t->mask;
    }
}

#if FLT_EVAL_METHOD == 0
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Clinger's fast path: at most 15 significant digits times a power of ten up to 10^22 is
   one exact double divided or multiplied by another, so one correctly rounded operation,
   as Python's float() is. 0 when the number is outside it. */
static int fast_decimal(const char *p, const char *stop, double *out) {
    int negative = *p == '-', digits = 0, scale = 0;
    uint64_t m = 0;
    p += negative;
    for (int fraction = 0; p < stop; p++) {
        if (*p == '.') {
            fraction = 1;
            continue;
        }
        if (*p == 'e' || *p == 'E')
            break;
        digits += m != 0 || *p != '0';
        if (digits > 15)
            return 0;
        m = m * 10 + (uint64_t)(*p - '0');
        scale -= fraction;
    }
    if (p < stop) { /* the exponent, its digits checked by number() */
        int sign = 1, e = 0;
        p++;
        if (*p == '+' || *p == '-')
            sign = *p++ == '-' ? -1 : 1;
        for (; p < stop; p++) {
            e = e * 10 + (*p - '0');
            if (e > 400)
                return 0;
        }
        scale += sign * e;
    }
    if (scale < -22 || scale > 22)
        return 0;
    double v = (double)m;
    v = scale < 0 ? v / POW10[-scale] : v * POW10[scale];
    *out = negative ? -v : v;
    return 1;
}
#else
static int fast_decimal(const char *p, const char *stop, double *out) {
    (void)p, (void)stop, (void)out;
    return 0; /* extended precision arithmetic would round twice */
}
#endif

/* A number's text as a float64 the way msgspec and Python read it: integers exactly (as
   int -> float does, so "-0" is 0.0), others correctly rounded. 0: not representable here. */
static int to_double(const char *p, const char *stop, int plain, double *out) {
    char buf[MAX_NUMBER + 1];
    Py_ssize_t n = stop - p;
    if (n > MAX_NUMBER)
        return 0;
    if (plain) {
        int negative = (*p == '-');
        const char *d = p + negative;
        if (stop - d > 18)
            return 0;
        int64_t v = 0;
        for (; d < stop; d++)
            v = v * 10 + (*d - '0');
        *out = (double)(negative ? -v : v);
        return 1;
    }
    if (fast_decimal(p, stop, out))
        return 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    char *endp = NULL;
    double v = PyOS_string_to_double(buf, &endp, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (endp != buf + n || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* Python's bool() of a value that is not null (false, 0, "", [] and {} are false). */
static const char *truthy(const char *p, const char *end, uint8_t *out) {
    int flag;
    double v;
    const char *stop, *inside;
    switch (*p) {
    case 'f':
        return word(p, end, "false", 5);
    case 't':
        *out = 1;
        return word(p, end, "true", 4);
    case '"':
        stop = string(p, end, &flag);
        *out = stop && stop - p > 2;
        return stop;
    case '[':
    case '{':
        inside = ws(p + 1, end);
        *out = !(inside < end && *inside == (*p == '[' ? ']' : '}'));
        return value(p, end, 0);
    default:
        stop = number(p, end, &flag);
        if (!stop || !to_double(p, stop, flag, &v))
            return NULL;
        *out = v != 0.0;
        return stop;
    }
}

/* A "passed" value that is not null as canonical.check_passed reads it: a boolean, or a
   number equal to 0 or 1; anything else is for the exact path to name. */
static const char *passed(const char *p, const char *end, double *out) {
    int flag;
    double v;
    const char *stop;
    switch (*p) {
    case 't':
        *out = 1.0;
        return word(p, end, "true", 4);
    case 'f':
        *out = 0.0;
        return word(p, end, "false", 5);
    default:
        stop = number(p, end, &flag);
        if (!stop || !to_double(p, stop, flag, &v) || (v != 0.0 && v != 1.0))
            return NULL;
        *out = v == 1.0 ? 1.0 : 0.0; /* -0.0 passes as false */
        return stop;
    }
}

/* The value of a wanted field for row r. Returns the byte after it, or NULL (not plain). */
static const char *field_value(Field *f, Py_ssize_t r, const char *p, const char *end,
                               const char *limit) {
    int flag;
    int32_t code;
    const char *stop;
    if (*p == 'n') /* null, for every kind: the cell keeps its start (-1, NaN or 0) */
        return word(p, end, "null", 4);
    switch (f->kind) {
    case 'f':
    case 'l':
        if (*p != '"')
            return NULL;
        stop = string(p, end, &flag);
        if (!stop || flag)
            return NULL;
        code = table_code(&f->table, p + 1, stop - p - 2, limit);
        if (code < 0)
            return NULL; /* out of memory: the msgspec path */
        ((int32_t *)f->out)[r] = code;
        return stop;
    case 'n':
        stop = number(p, end, &flag);
        if (!stop || !to_double(p, stop, flag, &((double *)f->out)[r]))
            return NULL;
        return stop;
    case 'p':
        ((uint8_t *)f->out)[r] = 1;
        return value(p, end, 0);
    case 't':
        return truthy(p, end, &((uint8_t *)f->out)[r]);
    case 'b':
        return passed(p, end, &((double *)f->out)[r]);
    default: /* 'g': set, so the tight decoder would refuse the row */
        return NULL;
    }
}

/* Where a key starts looking in the spec's table: cheap, for the many keys not wanted. */
static inline int key_slot(const char *key, Py_ssize_t len) {
    if (len == 0)
        return 0;
    unsigned h = (unsigned)len * 31u + (unsigned char)key[0] * 7u +
                 (unsigned char)key[len - 1] * 131u + (unsigned char)key[len >> 1];
    return (int)(h & 255);
}

static inline int find_field(const Spec *spec, const char *key, Py_ssize_t len) {
    int slot = key_slot(key, len);
    if (spec->lookup[slot] < 0)
        return -1; /* most keys not wanted stop here */
    Words w = words_of(key, len, spec->limit);
    for (int i = slot, tries = 0; tries < 256; i = (i + 1) & 255, tries++) {
        int j = spec->lookup[i];
        if (j < 0)
            return -1;
        const Field *f = &spec->fields[j];
        if (f->key_len == len && same_words(f->words, w) &&
            (len <= 16 || memcmp(f->key + 16, key + 16, len - 16) == 0))
            return j;
    }
    return -1;
}

/* An object's members, from just past its '{': every value checked and skipped, or, with a
   spec (a line's top-level object), each wanted one written to row r. Returns the byte after
   the closing '}', or NULL. */
static const char *members(const char *p, const char *end, int depth, Spec *spec,
                           Py_ssize_t r) {
    uint64_t seen = 0;
    int escaped, more = 1;
    p = ws(p, end);
    if (p < end && *p == '}')
        return p + 1;
    while (more) {
        if (p >= end || *p != '"')
            return NULL;
        const char *key = p + 1;
        p = string(p, end, &escaped);
        if (!p || (spec && escaped))
            return NULL; /* an escaped top-level key might spell a wanted one */
        Py_ssize_t key_len = p - key - 1;
        p = expect(p, end, ':');
        if (!p || (p = ws(p, end)) >= end)
            return NULL;
        int j = spec ? find_field(spec, key, key_len) : -1;
        if (j >= 0) {
            if (seen & (1ULL << j))
                return NULL; /* a wanted key twice */
            seen |= 1ULL << j;
            p = field_value(&spec->fields[j], r, p, end, spec->limit);
        } else {
            p = value(p, end, depth);
        }
        if (!p || !(p = next_item(p, end, '}', &more)))
            return NULL;
    }
    return p;
}

/* One line [p, end) as row r (its cells start at -1, NaN and 0). Returns 1 when plain. */
static int line(Spec *spec, Py_ssize_t r, const char *p, const char *end) {
    p = ws(p, end);
    if (p >= end || *p != '{')
        return 0;
    p = members(p + 1, end, 0, spec, r);
    return p && ws(p, end) == end;
}

/* ------------------------------------------------------------------ Python face */

static int levels_allowed(const Table *t, PyObject *allowed) {
    if (allowed == Py_None)
        return 1;
    for (Py_ssize_t i = 0; i < t->count; i++) {
        int found = 0;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(allowed) && !found; k++) {
            PyObject *word = PyTuple_GET_ITEM(allowed, k);
            found = PyBytes_GET_SIZE(word) == t->levels[i].len &&
                    memcmp(PyBytes_AS_STRING(word), t->levels[i].ptr, t->levels[i].len) == 0;
        }
        if (!found)
            return 0;
    }
    return 1;
}

static PyObject *levels_list(const Table *t) {
    PyObject *list = PyList_New(t->count);
    if (!list)
        return NULL;
    for (Py_ssize_t i = 0; i < t->count; i++) {
        PyObject *text = PyUnicode_DecodeUTF8(t->levels[i].ptr, t->levels[i].len, "strict");
        if (!text) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, text);
    }
    return list;
}

static Py_ssize_t count_lines(const char *p, const char *end) {
    Py_ssize_t n = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        n++;
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

static int spec_init(Spec *spec, PyObject *keys, const char *kinds, Py_ssize_t nkinds) {
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (n > MAX_FIELDS || n != nkinds) {
        PyErr_SetString(PyExc_ValueError, "one kind per key, at most 64 keys");
        return 0;
    }
    memset(spec->lookup, 0xff, sizeof(spec->lookup));
    spec->nfields = (int)n;
    for (int i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        if (!PyBytes_Check(key) || !strchr("flnpgtb", kinds[i])) {
            PyErr_SetString(PyExc_TypeError, "keys are bytes, kinds are f, l, n, p, g, t or b");
            return 0;
        }
        Field *f = &spec->fields[i];
        memset(f, 0, sizeof(*f));
        f->key = PyBytes_AS_STRING(key);
        f->key_len = PyBytes_GET_SIZE(key);
        f->words = words_of(f->key, f->key_len, f->key);
        f->kind = kinds[i];
        if (find_field(spec, f->key, f->key_len) >= 0) {
            PyErr_SetString(PyExc_ValueError, "a key is given twice");
            return 0;
        }
        int slot = key_slot(f->key, f->key_len);
        while (spec->lookup[slot] >= 0)
            slot = (slot + 1) & 255;
        spec->lookup[slot] = (int16_t)i;
    }
    return 1;
}

/* scan(data, keys, kinds, allowed) -> (rows, columns) or None when the batch is not plain.

   data: the batch's whole lines (a buffer); keys: the JSON keys wanted (bytes); kinds: one
   kind byte per key; allowed: per key, a tuple of the allowed values (bytes) of a literal,
   or None. columns: per key, (codes bytearray, levels) for 'f'/'l', a float64 bytearray for
   'n'/'b', a uint8 bytearray for 'p'/'t', None for 'g'. */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer data;
    PyObject *keys, *allowed, *result = NULL, *outs[MAX_FIELDS] = {0};
    const char *kinds;
    Py_ssize_t nkinds;
    Spec *spec = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*O!y#O!", &data, &PyTuple_Type, &keys, &kinds, &nkinds,
                          &PyTuple_Type, &allowed))
        return NULL;
    spec = PyMem_Calloc(1, sizeof(Spec));
    if (!spec) {
        PyErr_NoMemory();
        goto done;
    }
    if (!spec_init(spec, keys, kinds, nkinds))
        goto done;
    if (PyTuple_GET_SIZE(allowed) != nkinds) {
        PyErr_SetString(PyExc_ValueError, "one allowed entry per key");
        goto done;
    }
    const char *p = data.buf, *end = p + data.len;
    spec->limit = end;
    Py_ssize_t rows = count_lines(p, end);
    if (rows == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (int i = 0; i < spec->nfields; i++) {
        Field *f = &spec->fields[i];
        char k = f->kind;
        Py_ssize_t width = strchr("nb", k) ? 8 : strchr("pt", k) ? 1 : k == 'g' ? 0 : 4;
        if (!width)
            continue;
        outs[i] = PyByteArray_FromStringAndSize(NULL, rows * width);
        if (!outs[i])
            goto done;
        f->out = PyByteArray_AS_STRING(outs[i]);
        if (width == 8) {
            for (Py_ssize_t r = 0; r < rows; r++)
                ((double *)f->out)[r] = Py_NAN;
        } else {
            memset(f->out, width == 1 ? 0 : 0xff, rows * width); /* codes -1, flags 0 */
        }
        if ((f->kind == 'f' || f->kind == 'l') && !table_init(&f->table, rows)) {
            PyErr_NoMemory();
            goto done;
        }
    }
    for (Py_ssize_t r = 0; r < rows; r++) {
        const char *nl = memchr(p, '\n', end - p);
        const char *stop = nl ? nl : end;
        if (!line(spec, r, p, stop)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        p = stop + 1;
    }
    PyObject *columns = PyTuple_New(spec->nfields);
    if (!columns)
        goto done;
    for (int i = 0; i < spec->nfields; i++) {
        Field *f = &spec->fields[i];
        PyObject *item;
        if (f->kind == 'f' || f->kind == 'l') {
            if (!levels_allowed(&f->table, PyTuple_GET_ITEM(allowed, i))) {
                Py_DECREF(columns);
                result = Py_NewRef(Py_None);
                goto done;
            }
            PyObject *levels = levels_list(&f->table);
            if (!levels) {
                Py_DECREF(columns);
                PyErr_Clear(); /* not UTF-8 after all: the msgspec path says where */
                result = Py_NewRef(Py_None);
                goto done;
            }
            item = Py_BuildValue("(ON)", outs[i], levels);
        } else {
            item = Py_NewRef(outs[i] ? outs[i] : Py_None);
        }
        if (!item) {
            Py_DECREF(columns);
            goto done;
        }
        PyTuple_SET_ITEM(columns, i, item);
    }
    result = Py_BuildValue("(nN)", rows, columns);
done:
    if (spec) {
        for (int i = 0; i < spec->nfields; i++)
            table_free(&spec->fields[i].table);
        PyMem_Free(spec);
    }
    for (int i = 0; i < MAX_FIELDS; i++)
        Py_XDECREF(outs[i]);
    PyBuffer_Release(&data);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Columns of plain JSON Lines, or None (see the module)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_linescan",
    .m_doc = "A strict JSON Lines scanner into columns.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__linescan(void) {
    init_stop();
    return PyModule_Create(&module);
}

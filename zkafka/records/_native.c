/* zkafka.records._native: the per-message loops of both lines' message sets, compiled.
 *
 * Every function here handles only the common case, "plain" entries: a whole entry in the buffer, the line's
 * current magic, no compression codec, a CRC that matches (and, on the 0.8 line when decoding, key and value
 * lengths that fit). At the first entry that is anything else a run stops and returns where: the Python
 * walker (zkafka/records/entries.py) then reads that one entry with its own rules, so errors, wrappers and
 * partial tails behave exactly as on the pure-Python path. The plain CPython C API; no other dependency.
 */
#include "_native.h"
#include <string.h>
#include <structmember.h>

/* -- CRC-32 (the zlib / IEEE 802.3 polynomial, reflected), table-driven, eight bytes a step ------------ */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

/* -- CRC-32 by carry-less multiplication (x86-64 with PCLMULQDQ, checked at run time) -------------------
 *
 * The data is folded 64 bytes a step into four 128-bit lanes: a lane times x^k mod P (k the distance it
 * moves, constants below, bit-reflected like the CRC) is congruent to the lane moved k bits on. The four
 * lanes then fold into one, one lane into 64 and 32 bits, and a Barrett reduction gives the remainder.
 * Several times the table's speed on the sets a producer builds and a broker checks. */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_CLMUL 1
static int has_clmul;

#define CLMUL_TARGET __attribute__((target("pclmul,sse4.1")))

/* Fold the lane x onto the next 16 bytes d by the pair (k_lo for x's low half, k_hi for its high half). */
static inline CLMUL_TARGET __m128i fold16(__m128i x, __m128i k, __m128i d) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), d);
}

/* The CRC state (not inverted) after n bytes, n a multiple of 16 and at least 64. */
static CLMUL_TARGET uint32_t crc32_clmul(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    const __m128i k_by4 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL); /* x^(512+32), x^(512-32) mod P */
    const __m128i k_by1 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL); /* x^(128+32), x^(128-32) mod P */
    const __m128i k_64 = _mm_set_epi64x(0, 0x163cd6124LL);             /* x^64 mod P */
    const __m128i k_barrett = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL); /* floor(x^64 / P), P */
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
    __m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
    __m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
    p += 64;
    n -= 64;
    for (; n >= 64; p += 64, n -= 64) {
        x0 = fold16(x0, k_by4, _mm_loadu_si128((const __m128i *)p));
        x1 = fold16(x1, k_by4, _mm_loadu_si128((const __m128i *)(p + 16)));
        x2 = fold16(x2, k_by4, _mm_loadu_si128((const __m128i *)(p + 32)));
        x3 = fold16(x3, k_by4, _mm_loadu_si128((const __m128i *)(p + 48)));
    }
    x0 = fold16(fold16(fold16(x0, k_by1, x1), k_by1, x2), k_by1, x3);
    for (; n >= 16; p += 16, n -= 16)
        x0 = fold16(x0, k_by1, _mm_loadu_si128((const __m128i *)p));
    /* 128 -> 64 bits */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k_by1, 0x10), _mm_srli_si128(x0, 8));
    /* 64 -> 32 bits */
    x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), k_64, 0x00), _mm_srli_si128(x0, 4));
    /* Barrett reduction */
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), k_barrett, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), k_barrett, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(t, x0), 1);
}
#endif

uint32_t crc32_update(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    crc = ~crc;
#ifdef HAVE_CLMUL
    if (n >= 64 && has_clmul) {
        Py_ssize_t m = n & ~(Py_ssize_t)15;
        crc = crc32_clmul(crc, p, m);
        p += m;
        n -= m;
    }
#endif
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^ crc_table[5][(lo >> 16) & 0xff] ^
              crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
              crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    if (n >= 4) { /* the tail in at most three dependent steps instead of up to seven */
        uint32_t v = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = crc_table[3][v & 0xff] ^ crc_table[2][(v >> 8) & 0xff] ^ crc_table[1][(v >> 16) & 0xff] ^
              crc_table[0][v >> 24];
        p += 4;
        n -= 4;
    }
    if (n >= 2) {
        uint32_t v = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8);
        crc = (crc >> 16) ^ crc_table[1][v & 0xff] ^ crc_table[0][(v >> 8) & 0xff];
        p += 2;
        n -= 2;
    }
    if (n)
        crc = crc_table[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* -- the two lines' entry layouts (positions counted from the entry's start) --------------------------- */

typedef struct {
    Py_ssize_t overhead; /* bytes before the message: [int64 offset] int32 N */
    Py_ssize_t size_at, crc_at, magic_at, attr_at;
    Py_ssize_t crc_from; /* where the CRC-covered bytes start */
    Py_ssize_t head;     /* bytes the fast header spans */
    int32_t fast_min;    /* the smallest N of a message of the current magic */
    int fast_magic, codec_mask, has_offsets;
} line_t;

static const line_t LINE07 = {4, 0, 6, 4, 5, 10, 10, 6, 1, 0x03, 0};
static const line_t LINE08 = {12, 8, 12, 16, 17, 16, 18, 14, 0, 0x07, 1};

static const line_t *line_of(int line) {
    if (line == 7) return &LINE07;
    if (line == 8) return &LINE08;
    PyErr_Format(PyExc_ValueError, "unknown line %d (7 or 8)", line);
    return NULL;
}

/* One plain entry as read: where it is, its header fields, its key and value (0.8; payload on 0.7). */
typedef struct {
    Py_ssize_t pos, after;
    int64_t offset;
    int magic, attributes, codec;
    uint32_t crc;
    Py_ssize_t key_at, key_len, value_at, value_len; /* len -1: null */
} entry_t;

/* Where the plain, CRC-valid entry at pos ends; -1 when the Python walker must read it. */
static Py_ssize_t plain_entry(const line_t *L, const unsigned char *d, Py_ssize_t pos, Py_ssize_t end) {
    if (end - pos < L->head) return -1;
    int32_t size = rd_i32(d + pos + L->size_at);
    if (size < L->fast_min) return -1;
    Py_ssize_t after = pos + L->overhead + size;
    if (after > end) return -1;
    if (d[pos + L->magic_at] != L->fast_magic || (d[pos + L->attr_at] & L->codec_mask)) return -1;
    if (crc32_update(0, d + pos + L->crc_from, after - pos - L->crc_from) != rd_u32(d + pos + L->crc_at))
        return -1;
    return after;
}

/* Fill e for the plain entry [pos, after); 0 when its key or value length does not fit (0.8). */
static int read_entry(const line_t *L, const unsigned char *d, Py_ssize_t pos, Py_ssize_t after, entry_t *e) {
    e->pos = pos;
    e->after = after;
    e->magic = d[pos + L->magic_at];
    e->attributes = d[pos + L->attr_at];
    e->codec = e->attributes & L->codec_mask;
    e->crc = rd_u32(d + pos + L->crc_at);
    if (!L->has_offsets) {
        e->offset = -1;
        e->key_at = 0;
        e->key_len = -1;
        e->value_at = pos + L->crc_from;
        e->value_len = after - e->value_at;
        return 1;
    }
    e->offset = rd_i64(d + pos);
    Py_ssize_t at = pos + 18;
    Py_ssize_t *starts[2] = {&e->key_at, &e->value_at}, *lens[2] = {&e->key_len, &e->value_len};
    for (int i = 0; i < 2; i++) {
        if (after - at < 4) return 0;
        int32_t len = rd_i32(d + at);
        at += 4;
        *starts[i] = at;
        *lens[i] = len < 0 ? -1 : len;
        if (len > 0) {
            if (len > after - at) return 0;
            at += len;
        }
    }
    return 1;
}

/* -- Layout: how one decoded message becomes a Python object ------------------------------------------- */

enum { F_OFFSET, F_KEY, F_VALUE, F_MAGIC, F_ATTRIBUTES, F_CODEC, F_CRC, F_CONST, F_NESTED };

typedef struct {
    int kind;
    Py_ssize_t slot;  /* byte offset of the slot in the object (slotted classes) */
    Py_ssize_t index; /* F_CONST: index into the call's constants */
    PyObject *nested; /* F_NESTED: a Layout */
} field_t;

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    int is_tuple;
    Py_ssize_t n, max_const; /* max_const: the highest constant index used, here or nested; -1: none */
    field_t *fields;
} LayoutObject;

static PyTypeObject LayoutType;

static int parse_source(PyObject *source, field_t *f, Py_ssize_t *max_const) {
    static const char *names[] = {"offset", "key", "value", "magic", "attributes", "codec", "crc", NULL};
    memset(f, 0, sizeof(*f));
    if (PyUnicode_Check(source)) {
        const char *name = PyUnicode_AsUTF8(source);
        if (name == NULL) return -1;
        if (strcmp(name, "payload") == 0) name = "value";
        if (strcmp(name, "checksum") == 0) name = "crc";
        for (int i = 0; names[i]; i++)
            if (strcmp(name, names[i]) == 0) {
                f->kind = i;
                return 0;
            }
        PyErr_Format(PyExc_ValueError, "unknown message field %R", source);
        return -1;
    }
    if (PyLong_Check(source)) {
        f->kind = F_CONST;
        f->index = PyLong_AsSsize_t(source);
        if (f->index < 0) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a constant's index must be >= 0");
            return -1;
        }
        if (f->index > *max_const) *max_const = f->index;
        return 0;
    }
    if (PyObject_TypeCheck(source, &LayoutType)) {
        f->kind = F_NESTED;
        f->nested = Py_NewRef(source);
        if (((LayoutObject *)source)->max_const > *max_const) *max_const = ((LayoutObject *)source)->max_const;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a field source is a name, a constant's index or a Layout, not %R", source);
    return -1;
}

/* The byte offset of a writable object slot named name in cls. */
static int slot_offset(PyTypeObject *cls, PyObject *name, Py_ssize_t *slot) {
    PyObject *descr = PyObject_GetAttr((PyObject *)cls, name);
    if (descr == NULL) return -1;
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type);
    if (ok) {
        PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
        ok = m->type == T_OBJECT_EX && !(m->flags & READONLY);
        *slot = m->offset;
    }
    Py_DECREF(descr);
    if (!ok) PyErr_Format(PyExc_TypeError, "%R is not a writable slot of %R", name, cls);
    return ok ? 0 : -1;
}

static PyObject *Layout_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *cls, *fields;
    if (!PyArg_ParseTuple(args, "O!O!:Layout", &PyType_Type, &cls, &PyTuple_Type, &fields)) return NULL;
    LayoutObject *self = (LayoutObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    PyTypeObject *t = (PyTypeObject *)cls;
    self->cls = (PyTypeObject *)Py_NewRef(cls);
    self->is_tuple = PyType_IsSubtype(t, &PyTuple_Type);
    self->n = PyTuple_GET_SIZE(fields);
    self->max_const = -1;
    self->fields = PyMem_Calloc(self->n ? self->n : 1, sizeof(field_t));
    if (self->fields == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    if (!self->is_tuple && t->tp_itemsize != 0) {
        PyErr_Format(PyExc_TypeError, "%R is neither a tuple nor a class of slots", cls);
        goto fail;
    }
    for (Py_ssize_t i = 0; i < self->n; i++) {
        PyObject *item = PyTuple_GET_ITEM(fields, i), *source = item;
        if (!self->is_tuple) {
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
                PyErr_SetString(PyExc_TypeError, "a slotted class's fields are (slot name, source) pairs");
                goto fail;
            }
            source = PyTuple_GET_ITEM(item, 1);
        }
        if (parse_source(source, &self->fields[i], &self->max_const) < 0) goto fail;
        if (!self->is_tuple && slot_offset(t, PyTuple_GET_ITEM(item, 0), &self->fields[i].slot) < 0) goto fail;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static void Layout_dealloc(LayoutObject *self) {
    if (self->fields) {
        for (Py_ssize_t i = 0; i < self->n; i++) Py_XDECREF(self->fields[i].nested);
        PyMem_Free(self->fields);
    }
    Py_XDECREF(self->cls);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject LayoutType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "zkafka.records._native.Layout",
    .tp_basicsize = sizeof(LayoutObject),
    .tp_dealloc = (destructor)Layout_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Layout(cls, fields): how decode() builds one message's object: a tuple (sub)class filled with "
              "the fields' sources in order, or a class of slots with (slot name, source) pairs. A source is "
              "a field name (offset, key, value/payload, magic, attributes, codec, crc/checksum), the index of "
              "one of the call's constants, or a nested Layout.",
    .tp_new = Layout_new,
};

static PyObject *bytes_or_none(const unsigned char *d, Py_ssize_t at, Py_ssize_t len) {
    if (len < 0) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)d + at, len);
}

static PyObject *make_object(LayoutObject *L, const unsigned char *d, const entry_t *e, PyObject *consts);

static PyObject *field_value(const field_t *f, const unsigned char *d, const entry_t *e, PyObject *consts) {
    switch (f->kind) {
    case F_OFFSET: return PyLong_FromLongLong(e->offset);
    case F_KEY: return bytes_or_none(d, e->key_at, e->key_len);
    case F_VALUE: return bytes_or_none(d, e->value_at, e->value_len);
    case F_MAGIC: return PyLong_FromLong(e->magic);
    case F_ATTRIBUTES: return PyLong_FromLong(e->attributes);
    case F_CODEC: return PyLong_FromLong(e->codec);
    case F_CRC: return PyLong_FromUnsignedLong(e->crc);
    case F_CONST: return Py_NewRef(PyTuple_GET_ITEM(consts, f->index));
    default: return make_object((LayoutObject *)f->nested, d, e, consts);
    }
}

static PyObject *make_object(LayoutObject *L, const unsigned char *d, const entry_t *e, PyObject *consts) {
    PyObject *obj;
    if (L->is_tuple)
        obj = L->cls == &PyTuple_Type ? PyTuple_New(L->n) : L->cls->tp_alloc(L->cls, L->n);
    else
        obj = L->cls->tp_alloc(L->cls, 0);
    if (obj == NULL) return NULL;
    for (Py_ssize_t i = 0; i < L->n; i++) {
        PyObject *v = field_value(&L->fields[i], d, e, consts);
        if (v == NULL) {
            Py_DECREF(obj);
            return NULL;
        }
        if (L->is_tuple)
            PyTuple_SET_ITEM(obj, i, v);
        else
            Py_XSETREF(*(PyObject **)((char *)obj + L->fields[i].slot), v);
    }
    /* Every field is a leaf (bytes, int, None) or one of the call's constants, none of which can refer back
     * to the object: the cyclic GC need not track it (as it untracks such tuples itself on its next pass).
     * Left tracked, each chunk's thousands of objects are walked by the next young-generation collection. */
    if (PyObject_GC_IsTracked(obj)) PyObject_GC_UnTrack(obj);
    return obj;
}

/* -- the module's functions ---------------------------------------------------------------------------- */

static PyObject *native_crc32(PyObject *mod, PyObject *args) {
    Py_buffer b;
    unsigned int value = 0;
    if (!PyArg_ParseTuple(args, "y*|I:crc32", &b, &value)) return NULL;
    uint32_t crc = crc32_update(value, b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(crc);
}

static int check_start(Py_ssize_t start, Py_ssize_t len) {
    if (start < 0 || start > len) {
        PyErr_Format(PyExc_ValueError, "start %zd is outside the %zd bytes", start, len);
        return -1;
    }
    return 0;
}

static PyObject *native_scan(PyObject *mod, PyObject *args) {
    Py_buffer b;
    int line;
    Py_ssize_t pos, limit, count = 0;
    if (!PyArg_ParseTuple(args, "y*inn:scan", &b, &line, &pos, &limit)) return NULL;
    const line_t *L = line_of(line);
    if (L == NULL || check_start(pos, b.len) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    const unsigned char *d = b.buf;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        Py_ssize_t after = plain_entry(L, d, pos, b.len);
        if (after < 0 || (limit >= 0 && after - pos > limit)) break;
        count++;
        pos = after;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return Py_BuildValue("nn", pos, count);
}

static PyObject *native_decode(PyObject *mod, PyObject *args) {
    Py_buffer b;
    int line;
    Py_ssize_t pos, limit = -1, made = 0;
    long long base, min_offset, last = -1;
    PyObject *layout, *consts, *out;
    if (!PyArg_ParseTuple(args, "y*inLLO!O!O!|n:decode", &b, &line, &pos, &base, &min_offset, &LayoutType, &layout,
                          &PyTuple_Type, &consts, &PyList_Type, &out, &limit))
        return NULL;
    const line_t *L = line_of(line);
    if (L == NULL || check_start(pos, b.len) < 0) goto fail;
    if (((LayoutObject *)layout)->max_const >= PyTuple_GET_SIZE(consts)) {
        PyErr_Format(PyExc_ValueError, "the layout uses %zd constants, %zd given",
                     ((LayoutObject *)layout)->max_const + 1, PyTuple_GET_SIZE(consts));
        goto fail;
    }
    const unsigned char *d = b.buf;
    int collecting = PyGC_Disable(); /* one object per message, no cycles: skip the young-generation passes */
    entry_t e;
    while (made != limit) {
        Py_ssize_t after = plain_entry(L, d, pos, b.len);
        if (after < 0 || !read_entry(L, d, pos, after, &e)) break;
        if (!L->has_offsets) e.offset = base + after;
        if (e.offset >= min_offset) {
            made++;
            PyObject *obj = make_object((LayoutObject *)layout, d, &e, consts);
            if (obj == NULL || PyList_Append(out, obj) < 0) {
                Py_XDECREF(obj);
                if (collecting) PyGC_Enable();
                goto fail;
            }
            Py_DECREF(obj);
        }
        if (e.offset > last) last = e.offset;
        pos = after;
    }
    if (collecting) PyGC_Enable();
    /* Neither does out need tracking (it holds messages, nothing that can refer back to it): left tracked,
     * the young-generation collection that follows a decode walks its thousands of items. */
    if (PyObject_GC_IsTracked(out)) PyObject_GC_UnTrack(out);
    PyBuffer_Release(&b);
    return Py_BuildValue("nL", pos, last);
fail:
    PyBuffer_Release(&b);
    return NULL;
}

/* -- the 0.8 consumer's column batches: message sets and record batches, decoded in one call ---------- */

/* The columns decode_columns fills: keys, values, and the offsets as (first, spread) (see below). */
typedef struct {
    PyObject *keys, *values;
    Py_ssize_t made, cap;
    long long first;
    int64_t *spread; /* every offset, once they stop being first + index; cap of them allocated */
} columns_t;

/* Append one message (key and value: bytes, or None for a length of -1) at offset; -1 on an error. */
static inline __attribute__((always_inline)) int add_message(columns_t *c, long long offset, const unsigned char *d, Py_ssize_t key_at,
                       Py_ssize_t key_len, Py_ssize_t value_at, Py_ssize_t value_len) {
    if (c->made == 0) c->first = offset;
    if (c->spread == NULL && offset != c->first + c->made) {
        c->cap = 2 * c->made + 64;
        c->spread = PyMem_Malloc(c->cap * sizeof(int64_t));
        if (c->spread == NULL) return PyErr_NoMemory(), -1;
        for (Py_ssize_t i = 0; i < c->made; i++) c->spread[i] = c->first + i;
    }
    if (c->spread != NULL) {
        if (c->made == c->cap) {
            int64_t *more = PyMem_Realloc(c->spread, 2 * c->cap * sizeof(int64_t));
            if (more == NULL) return PyErr_NoMemory(), -1;
            c->spread = more;
            c->cap *= 2;
        }
        c->spread[c->made] = offset;
    }
    PyObject *key = bytes_or_none(d, key_at, key_len);
    if (key == NULL || PyList_Append(c->keys, key) < 0) {
        Py_XDECREF(key);
        return -1;
    }
    Py_DECREF(key);
    PyObject *value = bytes_or_none(d, value_at, value_len);
    if (value == NULL || PyList_Append(c->values, value) < 0) {
        Py_XDECREF(value);
        return -1;
    }
    Py_DECREF(value);
    c->made++;
    return 0;
}

/* Where the whole record batch at pos ends when it is plain (not a control batch, no codec unless compressed
 * ones are taken, its CRC-32C matching, a count of at least 0); -1 when the Python path must read it. */
static Py_ssize_t plain_batch(const unsigned char *d, Py_ssize_t pos, Py_ssize_t end, int compressed_ok) {
    if (end - pos < 61 || d[pos + 16] != 2) return -1;
    int32_t length = rd_i32(d + pos + 8);
    if (length < 49 || length > end - pos - 12) return -1;
    if (d[pos + 22] & (compressed_ok ? 0x20 : 0x07 | 0x20) || rd_i32(d + pos + 57) < 0) return -1; /* control */
    Py_ssize_t after = pos + 12 + length;
    if (crc32c(d + pos + 21, after - pos - 21) != rd_u32(d + pos + 17)) return -1;
    return after;
}

/* The count records in d[at:end] appended to c, those at or past min_offset when take: 1; 0 when they are not
 * exactly count well-formed records (the Python path then says what is wrong); -1 on an error. Headers are
 * read past (a 0.8 message has none). */
static int batch_messages(columns_t *c, const unsigned char *d, Py_ssize_t at, Py_ssize_t end, long long base,
                          int32_t count, int take, long long min_offset) {
    record_t r;
    for (int32_t i = 0; i < count; i++) {
        if (read_record(d, &at, end, 1, &r) < 0) return 0;
        long long offset = base + r.offset_delta;
        if (take && offset >= min_offset && add_message(c, offset, d, r.key_at, r.key_len, r.value_at, r.value_len) < 0)
            return -1;
    }
    return count == 0 || at == end; /* a batch of count 0 holds no records, whatever follows its header */
}

/* The records of the plain batch [pos, after) appended to c (batch_messages), a compressed batch's inflated by
 * inflate(codec, payload) -> bytes, or None where the Python path must read the batch. */
static int batch_columns(columns_t *c, const unsigned char *d, Py_ssize_t pos, Py_ssize_t after, PyObject *inflate,
                         int take, long long min_offset) {
    long long base = rd_i64(d + pos);
    int32_t count = rd_i32(d + pos + 57);
    int codec = d[pos + 22] & 0x07;
    if (codec == 0 || count == 0) return batch_messages(c, d, pos + 61, after, base, count, take, min_offset);
    PyObject *inflated = PyObject_CallFunction(inflate, "iy#", codec, (const char *)d + pos + 61, after - pos - 61);
    if (inflated == NULL) return -1;
    int read = 0;
    if (PyBytes_Check(inflated)) {
        const unsigned char *records = (const unsigned char *)PyBytes_AS_STRING(inflated);
        read = batch_messages(c, records, 0, PyBytes_GET_SIZE(inflated), base, count, take, min_offset);
    }
    Py_DECREF(inflated); /* the messages' keys and values are bytes of their own */
    return read;
}

/* Take back what a batch appended before it turned out not to be plain. */
static int drop_from(columns_t *c, Py_ssize_t made, long long first) {
    Py_ssize_t base = PyList_GET_SIZE(c->keys) - c->made;
    c->made = made;
    c->first = first;
    return PyList_SetSlice(c->keys, base + made, PY_SSIZE_T_MAX, NULL) < 0 ||
                   PyList_SetSlice(c->values, base + made, PY_SSIZE_T_MAX, NULL) < 0
               ? -1
               : 0;
}

/* decode's loop with each plain 0.8 entry's key and value appended to two lists instead of one object per
 * message made; a plain record batch (plain_batch) gives its records' keys and values, from min_offset on.
 * The offsets come back as (first, None) when they run first, first + 1, ... (what a leader's log holds),
 * else as the bytes of native int64s. */
static PyObject *native_decode_columns(PyObject *mod, PyObject *args) {
    Py_buffer b;
    Py_ssize_t pos, limit = -1;
    long long min_offset, last = -1;
    columns_t c = {NULL, NULL, 0, 0, -1, NULL};
    PyObject *spread_bytes = NULL, *inflate = Py_None;
    if (!PyArg_ParseTuple(args, "y*nLO!O!|nO:decode_columns", &b, &pos, &min_offset, &PyList_Type, &c.keys,
                          &PyList_Type, &c.values, &limit, &inflate))
        return NULL;
    if (check_start(pos, b.len) < 0) goto fail;
    const unsigned char *d = b.buf;
    entry_t e;
    while (limit < 0 || c.made < limit) {
        if (b.len - pos > 16 && d[pos + 16] == 2) { /* a record batch */
            Py_ssize_t after = plain_batch(d, pos, b.len, inflate != Py_None), made = c.made;
            if (after < 0) break;
            long long first = c.first, batch_last = rd_i64(d + pos) + rd_i32(d + pos + 23);
            int read = batch_columns(&c, d, pos, after, inflate, batch_last >= min_offset, min_offset);
            if (read < 0) goto fail;
            if (read == 0) {
                if (drop_from(&c, made, first) < 0) goto fail;
                break;
            }
            if (batch_last > last) last = batch_last;
            pos = after;
            continue;
        }
        Py_ssize_t after = plain_entry(&LINE08, d, pos, b.len);
        if (after < 0 || !read_entry(&LINE08, d, pos, after, &e)) break;
        if (e.offset >= min_offset && add_message(&c, e.offset, d, e.key_at, e.key_len, e.value_at, e.value_len) < 0)
            goto fail;
        if (e.offset > last) last = e.offset;
        pos = after;
    }
    /* They hold bytes and None only: no collection need walk them (as decode leaves its out list). */
    if (PyObject_GC_IsTracked(c.keys)) PyObject_GC_UnTrack(c.keys);
    if (PyObject_GC_IsTracked(c.values)) PyObject_GC_UnTrack(c.values);
    if (c.spread != NULL) {
        spread_bytes = PyBytes_FromStringAndSize((const char *)c.spread, c.made * (Py_ssize_t)sizeof(int64_t));
        PyMem_Free(c.spread);
        c.spread = NULL;
        if (spread_bytes == NULL) goto fail;
    } else {
        spread_bytes = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&b);
    return Py_BuildValue("nLLN", pos, last, c.made ? c.first : -1, spread_bytes);
fail:
    PyMem_Free(c.spread);
    PyBuffer_Release(&b);
    return NULL;
}

/* Where a 0.8 fetch answer's whole entries end, the offset of the last of them (a record batch's: its last
 * one) and whether any is a record batch, from the entries' lengths, offsets and magics only (as entries.spans
 * reads them): what a consumer asks for next, known before decoding. */
static PyObject *native_extent08(PyObject *mod, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*:extent08", &b)) return NULL;
    const unsigned char *d = b.buf;
    Py_ssize_t pos = 0;
    long long last = -1;
    int any = 0, batches = 0;
    while (b.len - pos >= LINE08.overhead) {
        int32_t size = rd_i32(d + pos + LINE08.size_at);
        if (size < LINE08.fast_min || size > b.len - pos - LINE08.overhead) break;
        last = rd_i64(d + pos);
        if (d[pos + 16] == 2) {
            batches = 1;
            if (size >= 49) last += rd_i32(d + pos + 23); /* lastOffsetDelta */
        }
        any = 1;
        pos += LINE08.overhead + size;
    }
    PyBuffer_Release(&b);
    if (!any) return Py_BuildValue("OnO", Py_None, pos, Py_False);
    return Py_BuildValue("LnO", last, pos, batches ? Py_True : Py_False);
}

/* The log's search after an index lookup (format08.find_offset): (offset, position) of the first whole 0.8
 * entry in data[start:end] whose offset is at or past target, reading headers only; None if there is none. */
static PyObject *native_find_offset08(PyObject *mod, PyObject *args) {
    Py_buffer b;
    long long target;
    Py_ssize_t pos, end = -1;
    if (!PyArg_ParseTuple(args, "y*Ln|n:find_offset08", &b, &target, &pos, &end)) return NULL;
    if (end < 0 || end > b.len) end = b.len;
    const unsigned char *d = b.buf;
    long long found = -1;
    Py_ssize_t at = -1;
    while (pos >= 0 && end - pos >= LINE08.overhead) {
        int32_t size = rd_i32(d + pos + LINE08.size_at);
        if (size < LINE08.fast_min || size > end - pos - LINE08.overhead) break;
        long long offset = rd_i64(d + pos);
        if (d[pos + 16] == 2 && size >= 49) offset += rd_i32(d + pos + 23); /* a batch: its last offset */
        if (offset >= target) {
            found = offset;
            at = pos;
            break;
        }
        pos += LINE08.overhead + size;
    }
    PyBuffer_Release(&b);
    if (at < 0) Py_RETURN_NONE;
    return Py_BuildValue("Ln", found, at);
}

/* A follower's fetched 0.8 entries, already validated (format08.check_follower_offsets): the first and the last
 * top-level offset of the whole entries and whether each offset is above the one before; None when there is
 * no whole entry. */
static PyObject *native_top_offsets08(PyObject *mod, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*:top_offsets08", &b)) return NULL;
    const unsigned char *d = b.buf;
    Py_ssize_t pos = 0;
    long long first = 0, last = 0;
    int any = 0, ordered = 1;
    while (b.len - pos >= 12) {
        int32_t size = rd_i32(d + pos + 8);
        if (size < 0 || size > b.len - pos - 12) break;
        long long offset = rd_i64(d + pos);
        if (!any) first = offset;
        else if (offset <= last) ordered = 0;
        last = offset;
        any = 1;
        pos += 12 + size;
    }
    PyBuffer_Release(&b);
    if (!any) Py_RETURN_NONE;
    return Py_BuildValue("LLO", first, last, ordered ? Py_True : Py_False);
}

/* record_batch.stamped_epochs as a list: (partitionLeaderEpoch, baseOffset) of each whole record batch stamped
 * with an epoch, reading the entries' prefixes only. */
static PyObject *native_stamped_epochs(PyObject *mod, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*:stamped_epochs", &b)) return NULL;
    PyObject *out = PyList_New(0);
    const unsigned char *d = b.buf;
    Py_ssize_t pos = 0;
    while (out != NULL && b.len - pos >= 17) {
        int32_t length = rd_i32(d + pos + 8);
        if (length < 0 || length > b.len - pos - 12) break;
        int32_t epoch = rd_i32(d + pos + 12);
        if (d[pos + 16] == 2 && epoch >= 0) {
            PyObject *item = Py_BuildValue("iL", epoch, (long long)rd_i64(d + pos));
            if (item == NULL || PyList_Append(out, item) < 0) Py_CLEAR(out);
            Py_XDECREF(item);
        }
        pos += 12 + length;
    }
    PyBuffer_Release(&b);
    return out;
}

static PyObject *struct_error; /* struct.error: what the pure path's struct.pack raises for a huge length */

static int too_long(Py_ssize_t len, Py_ssize_t header) {
    if (len > INT32_MAX - header) {
        PyErr_Format(struct_error, "a message of %zd bytes does not fit an int32 size", len);
        return 1;
    }
    return 0;
}

static PyObject *native_build_set07(PyObject *mod, PyObject *payloads) {
    PyObject *seq = PySequence_Fast(payloads, "build_set07 takes a sequence of payloads");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), got = 0, total = 0;
    PyObject *result = NULL;
    Py_buffer *views = PyMem_Calloc(n ? n : 1, sizeof(Py_buffer));
    if (views == NULL) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (; got < n; got++) {
        if (PyObject_GetBuffer(PySequence_Fast_GET_ITEM(seq, got), &views[got], PyBUF_SIMPLE) < 0) goto done;
        if (too_long(views[got].len, 6)) {
            got++;
            goto done;
        }
        total += 10 + views[got].len;
    }
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) goto done;
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = views[i].len;
        wr_u32(out, (uint32_t)(len + 6));
        out[4] = 1; /* magic */
        out[5] = 0; /* attributes */
        wr_u32(out + 6, crc32_update(0, views[i].buf, len));
        memcpy(out + 10, views[i].buf, len);
        out += 10 + len;
    }
done:
    for (Py_ssize_t i = 0; i < got; i++) PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    Py_DECREF(seq);
    return result;
}

/* Write one plain 0.8 entry (key, value: .obj NULL for null) at out; returns where it ends. */
static unsigned char *write_entry08(unsigned char *out, int64_t offset, const Py_buffer *key, const Py_buffer *value) {
    unsigned char *entry = out;
    const Py_buffer *fields[2] = {key, value};
    wr_i64(out, offset);
    out[16] = 0; /* magic */
    out[17] = 0; /* attributes */
    out += 18;
    for (int k = 0; k < 2; k++) {
        const Py_buffer *v = fields[k];
        wr_u32(out, v->obj ? (uint32_t)v->len : 0xFFFFFFFFu);
        if (v->obj) memcpy(out + 4, v->buf, v->len);
        out += 4 + (v->obj ? v->len : 0);
    }
    wr_u32(entry + 8, (uint32_t)(out - entry - 12));
    wr_u32(entry + 12, crc32_update(0, entry + 16, out - entry - 16));
    return out;
}

/* A varint (zig-zag, as message format v2 writes lengths and deltas) at p; returns where it ends. */
static unsigned char *put_varint(unsigned char *p, int64_t v) {
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    while (u >= 0x80) {
        *p++ = (unsigned char)(u | 0x80);
        u >>= 7;
    }
    *p++ = (unsigned char)u;
    return p;
}

static Py_ssize_t varint_size(int64_t v) {
    unsigned char scratch[10];
    return put_varint(scratch, v) - scratch;
}

/* Write one record of a v2 batch (no headers, timestamp delta 0, offset delta delta) at out. */
static unsigned char *write_record(unsigned char *out, int64_t delta, const Py_buffer *key, const Py_buffer *value) {
    const Py_buffer *fields[2] = {key, value};
    Py_ssize_t body = 3 + varint_size(delta); /* attributes, timestamp delta 0, header count 0 */
    for (int k = 0; k < 2; k++)
        body += fields[k]->obj ? varint_size(fields[k]->len) + fields[k]->len : 1;
    out = put_varint(out, body);
    *out++ = 0; /* attributes */
    *out++ = 0; /* timestamp delta */
    out = put_varint(out, delta);
    for (int k = 0; k < 2; k++) {
        const Py_buffer *v = fields[k];
        out = put_varint(out, v->obj ? v->len : -1);
        if (v->obj) memcpy(out, v->buf, v->len);
        out += v->obj ? v->len : 0;
    }
    *out++ = 0; /* header count */
    return out;
}

/* A 0.8 set from seq, offsets base, +1, ...: of (key, value) tuples, or (shared_key not NULL) of values each
 * with that key (.obj NULL: null). Keys and values are bytes-like or None. With records, the records of a v2
 * batch instead (offset deltas base, +1, ...; see write_record). */
static PyObject *build08(PyObject *seq, const Py_buffer *shared_key, long long base, int records) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), got = 0, total = 0;
    Py_ssize_t key_size = shared_key && shared_key->obj ? shared_key->len : 0;
    PyObject *result = NULL;
    Py_buffer *views = PyMem_Calloc(2 * n + 1, sizeof(Py_buffer)); /* .obj NULL: a null key or value */
    if (views == NULL) return PyErr_NoMemory();
    for (; got < n; got++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, got), *fields[2] = {Py_None, item};
        if (shared_key == NULL) {
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
                PyErr_SetString(PyExc_TypeError, "build_set08 takes (key, value) tuples");
                goto done;
            }
            fields[0] = PyTuple_GET_ITEM(item, 0);
            fields[1] = PyTuple_GET_ITEM(item, 1);
        }
        Py_ssize_t size = (records ? 32 : 26) + key_size; /* records: at most 5 varints and 3 bytes */
        for (int k = 0; k < 2; k++) {
            if (fields[k] == Py_None) continue;
            if (PyObject_GetBuffer(fields[k], &views[2 * got + k], PyBUF_SIMPLE) < 0) {
                got++;
                goto done;
            }
            size += views[2 * got + k].len;
        }
        if (too_long(size - 12, 0)) {
            got++;
            goto done;
        }
        total += size;
    }
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) goto done;
    unsigned char *start = (unsigned char *)PyBytes_AS_STRING(result), *out = start;
    for (Py_ssize_t i = 0; i < n; i++) {
        const Py_buffer *key = shared_key ? shared_key : &views[2 * i];
        out = records ? write_record(out, base + i, key, &views[2 * i + 1])
                      : write_entry08(out, base + i, key, &views[2 * i + 1]);
    }
    if (records && _PyBytes_Resize(&result, out - start) < 0) result = NULL;
done:
    for (Py_ssize_t i = 0; i < 2 * got; i++)
        if (views[i].obj) PyBuffer_Release(&views[i]);
    PyMem_Free(views);
    if (result == NULL) return NULL;
    return Py_BuildValue("Nn", result, n);
}

static PyObject *build_pairs(PyObject *args, int records) {
    PyObject *pairs, *seq, *result;
    long long base;
    if (!PyArg_ParseTuple(args, "OL", &pairs, &base)) return NULL;
    seq = PySequence_Fast(pairs, "build_set08 takes a sequence of (key, value) pairs");
    if (seq == NULL) return NULL;
    result = build08(seq, NULL, base, records);
    Py_DECREF(seq);
    return result;
}

static PyObject *native_build_set08(PyObject *mod, PyObject *args) { return build_pairs(args, 0); }

/* build_records(pairs, base): the records of a v2 batch, as build_set08 takes them. */
static PyObject *native_build_records(PyObject *mod, PyObject *args) { return build_pairs(args, 1); }

static PyObject *build_values(PyObject *args, int records) {
    PyObject *values, *key, *seq, *result;
    long long base;
    Py_buffer key_view = {0};
    if (!PyArg_ParseTuple(args, "OOL", &values, &key, &base)) return NULL;
    seq = PySequence_Fast(values, "build_values08 takes a sequence of values");
    if (seq == NULL) return NULL;
    if (key != Py_None && PyObject_GetBuffer(key, &key_view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    result = build08(seq, &key_view, base, records);
    if (key_view.obj) PyBuffer_Release(&key_view);
    Py_DECREF(seq);
    return result;
}

/* build_values08(values, key, base): the producer's batch: every value (bytes-like or None) with one key. */
static PyObject *native_build_values08(PyObject *mod, PyObject *args) { return build_values(args, 0); }

/* build_value_records(values, key, base): build_values08's as the records of a v2 batch. */
static PyObject *native_build_value_records(PyObject *mod, PyObject *args) { return build_values(args, 1); }

/* A length-prefixed field: a new bytes, Py_None (-1), or NULL with no exception (not plain) / with one. */
static PyObject *get_field(const unsigned char *d, Py_ssize_t *at, Py_ssize_t stop) {
    int64_t len;
    if (get_varint32(d, at, stop, &len) < 0 || len < -1 || len > stop - *at) return NULL;
    if (len == -1) Py_RETURN_NONE;
    PyObject *v = PyBytes_FromStringAndSize((const char *)d + *at, len);
    *at += len;
    return v;
}

/* decode_records(data, pos, end, count, base_offset, base_timestamp, log_append_time, record_type): the count
 * records of a v2 batch in data[pos:end] as record_type(offset, timestamp, key, value, ()), or None when they
 * are not plain ones (headers, anything malformed): the pure path then reads them and says what is wrong. */
static PyObject *native_decode_records(PyObject *mod, PyObject *args) {
    Py_buffer b;
    Py_ssize_t pos, end, count;
    long long base_offset, base_timestamp;
    PyObject *append_time, *cls, *list = NULL, *no_headers = NULL;
    if (!PyArg_ParseTuple(args, "y*nnnLLOO:decode_records", &b, &pos, &end, &count, &base_offset,
                          &base_timestamp, &append_time, &cls))
        return NULL;
    long long fixed = 0;
    int stamped = append_time != Py_None;
    if (stamped && (fixed = PyLong_AsLongLong(append_time)) == -1 && PyErr_Occurred()) goto fail;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &PyTuple_Type) || count < 0 || pos < 0 || count > b.len ||
        end > b.len || pos > end)
        goto plain_not;
    const unsigned char *d = b.buf;
    list = PyList_New(count);
    no_headers = PyTuple_New(0);
    if (list == NULL || no_headers == NULL) goto fail;
    Py_ssize_t at = pos;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t size, ts_delta, off_delta, headers;
        if (get_varint32(d, &at, end, &size) < 0 || size < 1 || size > end - at) goto plain_not;
        Py_ssize_t stop = at + size;
        at++; /* attributes */
        if (get_varint(d, &at, stop, 10, &ts_delta) < 0 || get_varint32(d, &at, stop, &off_delta) < 0)
            goto plain_not;
        PyObject *key = get_field(d, &at, stop);
        if (key == NULL) goto not_or_fail;
        PyObject *value = get_field(d, &at, stop);
        if (value == NULL) {
            Py_DECREF(key);
            goto not_or_fail;
        }
        if (get_varint32(d, &at, stop, &headers) < 0 || headers != 0 || at != stop) {
            Py_DECREF(key);
            Py_DECREF(value);
            goto plain_not;
        }
        PyTypeObject *type = (PyTypeObject *)cls;
        PyObject *record = type->tp_alloc(type, 5);
        PyObject *offset = PyLong_FromLongLong(base_offset + off_delta);
        PyObject *stamp = PyLong_FromLongLong(stamped ? fixed : base_timestamp + ts_delta);
        if (record == NULL || offset == NULL || stamp == NULL) {
            Py_XDECREF(record);
            Py_XDECREF(offset);
            Py_XDECREF(stamp);
            Py_DECREF(key);
            Py_DECREF(value);
            goto fail;
        }
        Py_INCREF(no_headers);
        PyTuple_SET_ITEM(record, 0, offset);
        PyTuple_SET_ITEM(record, 1, stamp);
        PyTuple_SET_ITEM(record, 2, key);
        PyTuple_SET_ITEM(record, 3, value);
        PyTuple_SET_ITEM(record, 4, no_headers);
        PyList_SET_ITEM(list, i, record);
    }
    if (at != end) goto plain_not;
    Py_DECREF(no_headers);
    PyBuffer_Release(&b);
    return list;
not_or_fail:
    if (PyErr_Occurred()) goto fail;
plain_not:
    Py_XDECREF(list);
    Py_XDECREF(no_headers);
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(list);
    Py_XDECREF(no_headers);
    PyBuffer_Release(&b);
    return NULL;
}

/* raw_values(values): whether every item of a list or tuple is exactly bytes or None (what a producer batch
 * sends without its encoder); False for any other sequence. */
static PyObject *native_raw_values(PyObject *mod, PyObject *values) {
    if (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)) Py_RETURN_FALSE;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(values);
    PyObject **items = PySequence_Fast_ITEMS(values);
    for (Py_ssize_t i = 0; i < n; i++)
        if (items[i] != Py_None && !PyBytes_CheckExact(items[i])) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* assign08(data, next_offset, limit): the leader's append of a set of plain entries only, in one call. */
static PyObject *native_assign08(PyObject *mod, PyObject *args) {
    Py_buffer b;
    long long offset;
    Py_ssize_t limit, pos = 0, count = 0;
    if (!PyArg_ParseTuple(args, "y*Ln:assign08", &b, &offset, &limit)) return NULL;
    PyObject *result = PyBytes_FromStringAndSize(b.buf, b.len);
    PyBuffer_Release(&b);
    if (result == NULL) return NULL;
    unsigned char *d = (unsigned char *)PyBytes_AS_STRING(result);
    Py_ssize_t len = PyBytes_GET_SIZE(result);
    while (pos < len) {
        Py_ssize_t after = plain_entry(&LINE08, d, pos, len);
        if (after < 0 || (limit >= 0 && after - pos > limit)) {
            Py_DECREF(result);
            Py_RETURN_NONE;
        }
        wr_i64(d + pos, offset + count++);
        pos = after;
    }
    return Py_BuildValue("Nn", result, count);
}

static PyObject *native_stamp_offsets(PyObject *mod, PyObject *args) {
    Py_buffer b;
    long long offset;
    int codec = 0;
    if (!PyArg_ParseTuple(args, "w*L:stamp_offsets", &b, &offset)) return NULL;
    unsigned char *d = b.buf;
    Py_ssize_t pos = 0;
    while (b.len - pos >= LINE08.overhead) {
        int32_t size = rd_i32(d + pos + 8);
        if (size < LINE08.fast_min || size > b.len - pos - LINE08.overhead) break;
        wr_i64(d + pos, offset++);
        if (d[pos + 17] & 0x07) codec = d[pos + 17] & 0x07;
        pos += LINE08.overhead + size;
    }
    PyBuffer_Release(&b);
    return Py_BuildValue("Li", offset, codec);
}

static PyMethodDef native_methods[] = {
    {"crc32", native_crc32, METH_VARARGS, "crc32(data, value=0): CRC-32 as zlib.crc32 computes it."},
    {"scan", native_scan, METH_VARARGS,
     "scan(data, line, start, limit) -> (stop, count): checks the run of plain entries from start (CRC, and "
     "an entry size at most limit unless limit < 0); stops at the first entry the Python walker must read."},
    {"decode", native_decode, METH_VARARGS,
     "decode(data, line, start, base, min_offset, layout, constants, out, limit=-1) -> (stop, last_offset): "
     "appends an object (layout) per plain entry from start to out (0.8: those at or past min_offset; 0.7: "
     "offset base + entry end), at most limit of them (-1: no limit); last_offset is the highest offset read "
     "(-1: none). The objects and out are left "
     "untracked by the cyclic GC: out must hold nothing that refers back to it."},
    {"decode_columns", native_decode_columns, METH_VARARGS,
     "decode_columns(data, start, min_offset, keys, values, limit=-1, inflate=None) -> (stop, last_offset, "
     "first, spread): appends the key and the value of each plain 0.8 message at or past min_offset from start "
     "to the two lists, and of each record of a plain record batch (not control, CRC-32C matching, its records "
     "well formed, headers read past; a compressed one's records inflated by inflate(codec, payload) -> bytes, "
     "or None to leave the batch to the Python path; without inflate none is taken), stopping at any other "
     "entry (at most limit messages; a batch is taken whole or not at all). The lists are left untracked by the cyclic GC. Their offsets are first, first + 1, "
     "... when spread is None, else spread holds them all as native int64s; last_offset is the highest offset "
     "read (a batch's: its last; -1: none)."},
    {"extent08", native_extent08, METH_VARARGS,
     "extent08(data) -> (last_offset, end, batches): the offset of the last whole 0.8 entry (a record batch's: "
     "its last; None: none), where the whole entries end and whether any is a record batch, reading lengths, "
     "offsets and magics only (entries.spans' rules)."},
    {"find_offset08", native_find_offset08, METH_VARARGS,
     "find_offset08(data, target, start, end=-1) -> (offset, position) | None: the first whole 0.8 entry from "
     "start (before end; -1: the data's end) whose offset (a record batch's: its last) is at or past target, "
     "reading headers only."},
    {"top_offsets08", native_top_offsets08, METH_VARARGS,
     "top_offsets08(data) -> (first, last, ordered) | None: the first and last top-level offsets of the whole "
     "0.8 entries and whether each is above the one before (a follower's validated fetch); None: no entry."},
    {"stamped_epochs", native_stamped_epochs, METH_VARARGS,
     "stamped_epochs(data) -> [(epoch, base_offset)]: each whole record batch stamped with a leader epoch."},
    {"build_set07", native_build_set07, METH_O,
     "build_set07(payloads) -> bytes: a 0.7 message set with one magic-1 entry per payload."},
    {"decode_records", native_decode_records, METH_VARARGS,
     "decode_records(data, pos, end, count, base_offset, base_timestamp, log_append_time, record_type): a v2"
     " batch's plain records (no headers), or None for the pure path to read."},
    {"build_records", native_build_records, METH_VARARGS,
     "build_records(pairs, base): the records of a v2 batch (no headers, timestamp delta 0) and their count."},
    {"build_value_records", native_build_value_records, METH_VARARGS,
     "build_value_records(values, key, base): build_records of (key, value) for each value."},
    {"build_set08", native_build_set08, METH_VARARGS,
     "build_set08(pairs, base_offset) -> (bytes, count): a 0.8 message set of (key, value) pairs, offsets "
     "base_offset, +1, ..."},
    {"raw_values", native_raw_values, METH_O,
     "raw_values(values) -> bool: every item of a list or tuple is exactly bytes or None."},
    {"build_values08", native_build_values08, METH_VARARGS,
     "build_values08(values, key, base_offset) -> (bytes, count): a 0.8 message set of the values (bytes-like "
     "or None) each with key (bytes-like or None), offsets base_offset, +1, ..."},
    {"assign08", native_assign08, METH_VARARGS,
     "assign08(data, next_offset, limit) -> (bytes, count) | None: a copy of a 0.8 set with offsets "
     "next_offset, +1, ... when every entry is whole, plain, CRC-valid and (limit >= 0) at most limit bytes "
     "with its offset and size; None for anything else (the Python path decides)."},
    {"stamp_offsets", native_stamp_offsets, METH_VARARGS,
     "stamp_offsets(buffer, next_offset) -> (offset after, codec): writes offsets into each whole 0.8 entry "
     "in place; codec is the last compressed entry's (0: none)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "zkafka.records._native",
    "The per-message loops of zkafka's message-set codec, compiled (see zkafka.records.native).", -1,
    native_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    crc_init();
#ifdef HAVE_CLMUL
    __builtin_cpu_init();
    has_clmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
#endif
    if (PyType_Ready(&LayoutType) < 0) return NULL;
    PyObject *structmod = PyImport_ImportModule("struct");
    if (structmod == NULL) return NULL;
    struct_error = PyObject_GetAttrString(structmod, "error");
    Py_DECREF(structmod);
    if (struct_error == NULL) return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Layout", (PyObject *)&LayoutType) < 0 || add_stream_core(m) < 0 || add_batch_core(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

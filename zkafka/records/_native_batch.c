/* zkafka.records._native: the leader's append of a produced set of record batches (message format v2), in
 * one pass with no per-record Python object, as Kafka's LogValidator does it.
 *
 * assign_batches: for a log of magic 2, the batches kept as they are (in place): each checked (CRC-32C, count,
 * records), given its base offset and the leader's epoch, its maxTimestamp corrected (LogAppendTime: the
 * append time and the timestamp-type bit), the CRC written again only when the attributes or maxTimestamp
 * change. batches_to_set08: for a log of magic 0, each record becomes one 0.8 message (key and value; the
 * timestamp dropped) numbered from the log end.
 *
 * Only the common case is taken: a set of whole batches, uncompressed, neither transactional nor control,
 * whose count agrees with its offsets and records, CRC-32C valid, every record well formed (and, towards
 * magic 0, without headers or a producer id), every entry within the size limit. Anything else returns None
 * and zkafka/log/log_validator.py reads the set with the pure path's rules, so errors are the pure path's.
 */
#include "_native.h"
#include <string.h>

/* -- CRC-32C (Castagnoli, reflected): SSE4.2's instruction when the CPU has it, else a table ----------
 *
 * The instruction takes three cycles to give its result but can start one every cycle: the data goes in
 * blocks of three STRIDE-byte lanes, each lane's register computed from zero side by side, then joined. The
 * register is linear in its start value, so a lane's register after the next lane's bytes is the next lane's
 * register xor its own moved through STRIDE zero bytes: a linear map, kept as four byte tables (shift_ops). */

enum { STRIDE = 256 };
static uint32_t crc32c_table[256];
static uint32_t shift_ops[4][256]; /* the register after STRIDE zero bytes, by each byte of the register before */

static uint32_t zero_bytes(uint32_t reg, Py_ssize_t n) {
    for (; n > 0; n--) reg = crc32c_table[reg & 0xff] ^ (reg >> 8);
    return reg;
}

static void crc32c_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c & 1) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
        crc32c_table[i] = c;
    }
    uint32_t bit_op[32];
    for (int i = 0; i < 32; i++) bit_op[i] = zero_bytes(1u << i, STRIDE);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++)
                if (b & (1u << i)) v ^= bit_op[8 * k + i];
            shift_ops[k][b] = v;
        }
}

static inline uint32_t shift_stride(uint32_t reg) {
    return shift_ops[0][reg & 0xff] ^ shift_ops[1][(reg >> 8) & 0xff] ^ shift_ops[2][(reg >> 16) & 0xff] ^
           shift_ops[3][reg >> 24];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define HAVE_SSE42 1
static int has_sse42;

static __attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t reg, const unsigned char *p, Py_ssize_t n) {
    uint64_t c0 = reg, c1, c2, v;
    for (; n >= 3 * STRIDE; n -= 3 * STRIDE, p += 3 * STRIDE) {
        c1 = c2 = 0;
        for (const unsigned char *lane = p; lane < p + STRIDE; lane += 8) {
            memcpy(&v, lane, 8);
            c0 = _mm_crc32_u64(c0, v);
            memcpy(&v, lane + STRIDE, 8);
            c1 = _mm_crc32_u64(c1, v);
            memcpy(&v, lane + 2 * STRIDE, 8);
            c2 = _mm_crc32_u64(c2, v);
        }
        c0 = shift_stride(shift_stride((uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
    }
    for (; n >= 8; n -= 8, p += 8) {
        memcpy(&v, p, 8);
        c0 = _mm_crc32_u64(c0, v);
    }
    reg = (uint32_t)c0;
    for (; n > 0; p++, n--) reg = _mm_crc32_u8(reg, *p);
    return reg;
}
#endif

uint32_t crc32c(const unsigned char *p, Py_ssize_t n) {
    uint32_t reg = 0xFFFFFFFFu;
#ifdef HAVE_SSE42
    if (has_sse42) return ~crc32c_sse42(reg, p, n);
#endif
    for (; n > 0; p++, n--) reg = crc32c_table[(reg ^ *p) & 0xff] ^ (reg >> 8);
    return ~reg;
}

static PyObject *native_crc32c(PyObject *mod, PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*:crc32c", &b)) return NULL;
    uint32_t crc = crc32c(b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(crc);
}

/* -- one batch and its records -------------------------------------------------------------------------- */

enum {
    LOG_OVERHEAD = 12, /* baseOffset, batchLength */
    EPOCH_AT = 12,
    MAGIC_AT = 16,
    CRC_AT = 17,
    ATTRIBUTES_AT = 21, /* where the CRC-32C's bytes start */
    LAST_DELTA_AT = 23,
    BASE_TIMESTAMP_AT = 27,
    MAX_TIMESTAMP_AT = 35,
    PRODUCER_ID_AT = 43,
    COUNT_AT = 57,
    BATCH_OVERHEAD = 61,
    NOT_PLAIN = 0x07 | 0x10 | 0x20, /* a codec, transactional, control */
    LOG_APPEND_TIME = 0x08,
    MESSAGE08_OVERHEAD = 12 + 14, /* offset, size; crc, magic, attributes, key and value lengths */
};

/* A length-prefixed field at d[*at:stop]: its start and length (-1: null, when null_ok). */
static int get_field(const unsigned char *d, Py_ssize_t *at, Py_ssize_t stop, int null_ok, Py_ssize_t *start,
                     Py_ssize_t *len) {
    int64_t n;
    if (get_varint32(d, at, stop, &n) < 0 || n < (null_ok ? -1 : 0) || n > stop - *at) return -1;
    *start = *at;
    *len = (Py_ssize_t)n;
    if (n > 0) *at += n;
    return 0;
}

/* The well-formed record at d[*at:end] (headers walked when headers_ok, else refused); -1: not plain. */
int read_record(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int headers_ok, record_t *r) {
    int64_t size, headers;
    Py_ssize_t ignored_at, ignored_len;
    if (get_varint32(d, at, end, &size) < 0 || size < 1 || size > end - *at) return -1;
    Py_ssize_t stop = *at + size;
    (*at)++; /* attributes, unused */
    if (get_varint(d, at, stop, 10, &r->timestamp_delta) < 0 || get_varint32(d, at, stop, &r->offset_delta) < 0 ||
        get_field(d, at, stop, 1, &r->key_at, &r->key_len) < 0 ||
        get_field(d, at, stop, 1, &r->value_at, &r->value_len) < 0 || get_varint32(d, at, stop, &headers) < 0 ||
        headers < 0 || (headers && !headers_ok))
        return -1;
    for (int64_t i = 0; i < headers; i++)
        if (get_field(d, at, stop, 0, &ignored_at, &ignored_len) < 0 ||
            get_field(d, at, stop, 1, &ignored_at, &ignored_len) < 0)
            return -1;
    return *at == stop ? 0 : -1;
}

typedef struct {
    Py_ssize_t end; /* where the batch ends */
    int32_t count;
    int attributes; /* the low byte */
    int64_t base_timestamp;
} batch_t;

enum { MIN_RECORD = 7 }; /* length, attributes, timestamp and offset deltas, key and value lengths, headers */

/* The batch at pos up to its records: whole, magic 2, no codec nor transaction nor control, a count that
 * agrees with its offsets and could fit, its CRC-32C; to_magic0: no producer id. -1: the Python path's. */
static int check_batch(const unsigned char *d, Py_ssize_t pos, Py_ssize_t len, int to_magic0, batch_t *b) {
    if (len - pos < BATCH_OVERHEAD) return -1;
    int32_t length = rd_i32(d + pos + 8);
    if (length < BATCH_OVERHEAD - LOG_OVERHEAD || length > len - pos - LOG_OVERHEAD) return -1;
    b->end = pos + LOG_OVERHEAD + length;
    b->count = rd_i32(d + pos + COUNT_AT);
    b->attributes = d[pos + ATTRIBUTES_AT + 1];
    b->base_timestamp = rd_i64(d + pos + BASE_TIMESTAMP_AT);
    if (d[pos + MAGIC_AT] != 2 || (b->attributes & NOT_PLAIN) || b->count <= 0 ||
        b->count > (b->end - pos - BATCH_OVERHEAD) / MIN_RECORD || (int64_t)rd_i32(d + pos + LAST_DELTA_AT) + 1 != b->count)
        return -1;
    if (to_magic0 && rd_i64(d + pos + PRODUCER_ID_AT) != -1) return -1;
    return crc32c(d + pos + ATTRIBUTES_AT, b->end - pos - ATTRIBUTES_AT) == rd_u32(d + pos + CRC_AT) ? 0 : -1;
}

/* -- the two appends --------------------------------------------------------------------------------- */

/* The batch's records walked (headers too) for their largest timestamp (a LogAppendTime batch's: its header's). */
static int max_timestamp(const unsigned char *d, Py_ssize_t pos, const batch_t *b, int64_t *max) {
    Py_ssize_t at = pos + BATCH_OVERHEAD;
    int append_time = b->attributes & LOG_APPEND_TIME;
    record_t r;
    *max = append_time ? rd_i64(d + pos + MAX_TIMESTAMP_AT) : INT64_MIN;
    for (int32_t i = 0; i < b->count; i++) {
        int64_t timestamp;
        if (read_record(d, &at, b->end, 1, &r) < 0) return -1;
        if (append_time) continue;
        if (__builtin_add_overflow(b->base_timestamp, r.timestamp_delta, &timestamp)) return -1;
        if (timestamp > *max) *max = timestamp;
    }
    return at == b->end ? 0 : -1;
}

static PyObject *native_assign_batches(PyObject *mod, PyObject *args) {
    Py_buffer in;
    long long next_offset, append_time = 0;
    Py_ssize_t limit, pos = 0;
    int leader_epoch;
    PyObject *append_time_obj;
    if (!PyArg_ParseTuple(args, "y*LniO:assign_batches", &in, &next_offset, &limit, &leader_epoch, &append_time_obj))
        return NULL;
    int stamp = append_time_obj != Py_None;
    if (stamp && (append_time = PyLong_AsLongLong(append_time_obj)) == -1 && PyErr_Occurred()) {
        PyBuffer_Release(&in);
        return NULL;
    }
    PyObject *result = in.len ? PyBytes_FromStringAndSize(in.buf, in.len) : NULL;
    PyBuffer_Release(&in);
    if (result == NULL) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    unsigned char *d = (unsigned char *)PyBytes_AS_STRING(result);
    Py_ssize_t len = PyBytes_GET_SIZE(result);
    int64_t offset = next_offset, max;
    batch_t b;
    while (pos < len) {
        if (check_batch(d, pos, len, 0, &b) < 0 || (limit >= 0 && b.end - pos > limit) ||
            max_timestamp(d, pos, &b, &max) < 0) {
            Py_DECREF(result);
            Py_RETURN_NONE;
        }
        unsigned char *batch = d + pos;
        wr_i64(batch, offset);
        wr_u32(batch + EPOCH_AT, (uint32_t)leader_epoch);
        int attributes = stamp ? b.attributes | LOG_APPEND_TIME : b.attributes;
        if (stamp) max = append_time;
        if (attributes != b.attributes || max != rd_i64(batch + MAX_TIMESTAMP_AT)) {
            batch[ATTRIBUTES_AT + 1] = (unsigned char)attributes;
            wr_i64(batch + MAX_TIMESTAMP_AT, max);
            wr_u32(batch + CRC_AT, crc32c(batch + ATTRIBUTES_AT, b.end - pos - ATTRIBUTES_AT));
        }
        offset += b.count;
        pos = b.end;
    }
    return Py_BuildValue("NL", result, (long long)(offset - next_offset));
}

/* One 0.8 message of the record r (magic 0, no codec) at out, numbered offset; returns where it ends. */
static unsigned char *write_message08(unsigned char *out, int64_t offset, const unsigned char *d, const record_t *r) {
    unsigned char *entry = out;
    Py_ssize_t starts[2] = {r->key_at, r->value_at}, lens[2] = {r->key_len, r->value_len};
    wr_i64(out, offset);
    out[16] = 0; /* magic */
    out[17] = 0; /* attributes */
    out += 18;
    for (int k = 0; k < 2; k++) {
        wr_u32(out, lens[k] < 0 ? 0xFFFFFFFFu : (uint32_t)lens[k]);
        if (lens[k] > 0) memcpy(out + 4, d + starts[k], lens[k]);
        out += 4 + (lens[k] > 0 ? lens[k] : 0);
    }
    wr_u32(entry + 8, (uint32_t)(out - entry - LOG_OVERHEAD));
    wr_u32(entry + 12, crc32_update(0, entry + 16, out - entry - 16));
    return out;
}

/* The batch's records (no headers) as 0.8 messages at *out, each at most limit bytes (< 0: no limit). */
static int write_messages08(const unsigned char *d, Py_ssize_t pos, const batch_t *b, Py_ssize_t limit,
                            int64_t *offset, unsigned char **out) {
    Py_ssize_t at = pos + BATCH_OVERHEAD;
    record_t r;
    for (int32_t i = 0; i < b->count; i++) {
        if (read_record(d, &at, b->end, 0, &r) < 0) return -1;
        unsigned char *after = write_message08(*out, (*offset)++, d, &r);
        if (limit >= 0 && after - *out > limit) return -1;
        *out = after;
    }
    return at == b->end ? 0 : -1;
}

static PyObject *native_batches_to_set08(PyObject *mod, PyObject *args) {
    Py_buffer in;
    long long next_offset;
    Py_ssize_t limit, pos, bound = 0;
    if (!PyArg_ParseTuple(args, "y*Ln:batches_to_set08", &in, &next_offset, &limit)) return NULL;
    const unsigned char *d = in.buf;
    PyObject *result = NULL;
    batch_t b;
    /* A record takes at least MIN_RECORD bytes beside its key and value, a 0.8 message MESSAGE08_OVERHEAD. */
    for (pos = 0; pos + BATCH_OVERHEAD <= in.len && rd_i32(d + pos + 8) > 0; pos += LOG_OVERHEAD + rd_i32(d + pos + 8))
        bound += (Py_ssize_t)LOG_OVERHEAD + rd_i32(d + pos + 8) +
                 (Py_ssize_t)(MESSAGE08_OVERHEAD - MIN_RECORD) * ((rd_i32(d + pos + 8) + LOG_OVERHEAD) / MIN_RECORD);
    if (pos != in.len || bound == 0 || (result = PyBytes_FromStringAndSize(NULL, bound)) == NULL) goto done;
    unsigned char *start = (unsigned char *)PyBytes_AS_STRING(result), *out = start;
    int64_t offset = next_offset;
    for (pos = 0; pos < in.len; pos = b.end)
        if (check_batch(d, pos, in.len, 1, &b) < 0 || write_messages08(d, pos, &b, limit, &offset, &out) < 0) {
            Py_CLEAR(result);
            goto done;
        }
    if (_PyBytes_Resize(&result, out - start) < 0) result = NULL;
    else result = Py_BuildValue("NL", result, (long long)(offset - next_offset));
done:
    PyBuffer_Release(&in);
    if (result == NULL && !PyErr_Occurred()) Py_RETURN_NONE;
    return result;
}

static PyMethodDef batch_methods[] = {
    {"crc32c", native_crc32c, METH_VARARGS, "crc32c(data): CRC-32C (Castagnoli) as record batches carry it."},
    {"assign_batches", native_assign_batches, METH_VARARGS,
     "assign_batches(data, next_offset, limit, leader_epoch, log_append_time) -> (bytes, count) | None: a set "
     "of plain record batches for a log of magic 2, offsets from next_offset (see _native_batch.c); None for "
     "anything else."},
    {"batches_to_set08", native_batches_to_set08, METH_VARARGS,
     "batches_to_set08(data, next_offset, limit) -> (bytes, count) | None: a set of plain record batches as "
     "0.8 messages numbered from next_offset, each at most limit bytes (< 0: no limit); None for anything else."},
    {NULL, NULL, 0, NULL},
};

int add_batch_core(PyObject *module) {
    crc32c_init();
#ifdef HAVE_SSE42
    __builtin_cpu_init();
    has_sse42 = __builtin_cpu_supports("sse4.2");
#endif
    return PyModule_AddFunctions(module, batch_methods);
}

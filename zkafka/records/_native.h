/* What the _native extension's C files share: big-endian fields, the zig-zag varint readers, the CRC-32
 * (defined in _native.c), and each file's registration. */
#ifndef ZKAFKA_NATIVE_H
#define ZKAFKA_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static inline uint32_t rd_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static inline int32_t rd_i32(const unsigned char *p) { return (int32_t)rd_u32(p); }
static inline int64_t rd_i64(const unsigned char *p) { return (int64_t)((uint64_t)rd_u32(p) << 32 | rd_u32(p + 4)); }
static inline void wr_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}
static inline void wr_i64(unsigned char *p, int64_t v) {
    wr_u32(p, (uint32_t)((uint64_t)v >> 32));
    wr_u32(p + 4, (uint32_t)v);
}

/* One zig-zag varint of at most max_bytes bytes from d[*at:end]; -1 when it runs past end or is longer. */
static inline int get_varint(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int max_bytes, int64_t *out) {
    uint64_t u = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (*at >= end) return -1;
        unsigned char b = d[(*at)++];
        u |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
            return 0;
        }
    }
    return -1;
}

/* An int32 varint (5 bytes at most, in range): what the pure path reads without complaint. */
static inline int get_varint32(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int64_t *out) {
    return get_varint(d, at, end, 5, out) < 0 || *out < INT32_MIN || *out > INT32_MAX ? -1 : 0;
}

/* CRC-32 (zlib's) of n bytes continuing crc. */
uint32_t crc32_update(uint32_t crc, const unsigned char *p, Py_ssize_t n);

/* CRC-32C (Castagnoli) of n bytes: a record batch's checksum (_native_batch.c). */
uint32_t crc32c(const unsigned char *p, Py_ssize_t n);

/* One record of a batch as read_record finds it: its fields' places and its deltas (_native_batch.c). */
typedef struct {
    Py_ssize_t key_at, key_len, value_at, value_len; /* len -1: null */
    int64_t timestamp_delta, offset_delta;
} record_t;

/* The well-formed record at d[*at:end] (headers walked when headers_ok, else refused); -1: not plain. */
int read_record(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int headers_ok, record_t *r);

int add_stream_core(PyObject *module); /* _native_stream.c: the consumer stream's next() */
int add_batch_core(PyObject *module);  /* _native_batch.c: a produced set of record batches appended */

#endif

/* What the _native extension's C files share: big-endian fields, the CRC-32 and the zig-zag varint readers
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

/* CRC-32 (zlib's) of n bytes continuing crc. */
uint32_t crc32_update(uint32_t crc, const unsigned char *p, Py_ssize_t n);
/* A zig-zag varint of at most max_bytes bytes from d[*at:end] (-1: past end or longer); an int32 one. */
int get_varint(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int max_bytes, int64_t *out);
int get_varint32(const unsigned char *d, Py_ssize_t *at, Py_ssize_t end, int64_t *out);

int add_stream_core(PyObject *module); /* _native_stream.c: the consumer stream's next() */
int add_batch_core(PyObject *module);  /* _native_batch.c: a produced set of record batches appended */

#endif

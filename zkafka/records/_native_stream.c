/* zkafka.records._native.StreamCore: the per-message step of the high-level consumer's streams, compiled.
 *
 * A KafkaStream (zkafka/consumer/stream.py) hands out the messages of the chunk it holds one by one; all the
 * common case needs is "is the chunk's partition still active? then its next message". Done here, next() costs
 * no Python frame; everything else (no chunk, a chunk used up, a paused or revoked partition, waiting, timing
 * out, the end) is the stream's _next_slow(0), in Python. Part of the _native extension (registered by
 * _native.c); without the extension the stream's Python base class does the same.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *info; /* _info: the chunk's PartitionTopicInfo (or the stream's no-chunk stand-in) */
    PyObject *it;   /* _it: the iterator over the chunk's messages not yet handed out */
} StreamCoreObject;

static PyObject *str_active, *str_next_slow, *zero;

static PyObject *StreamCore_iternext(StreamCoreObject *self) {
    PyObject *info = self->info, *it = self->it;
    if (info != NULL && it != NULL && Py_TYPE(it)->tp_iternext != NULL) {
        PyObject *active = PyObject_GetAttr(info, str_active);
        if (active == NULL) return NULL;
        int on = PyObject_IsTrue(active);
        Py_DECREF(active);
        if (on < 0) return NULL;
        if (on) {
            Py_INCREF(it);
            PyObject *item = Py_TYPE(it)->tp_iternext(it);
            Py_DECREF(it);
            if (item != NULL) return item;
            if (PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_StopIteration)) return NULL;
                PyErr_Clear();
            }
        }
    }
    return PyObject_CallMethodOneArg((PyObject *)self, str_next_slow, zero);
}

static int StreamCore_traverse(StreamCoreObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->info);
    Py_VISIT(self->it);
    return 0;
}

static int StreamCore_clear(StreamCoreObject *self) {
    Py_CLEAR(self->info);
    Py_CLEAR(self->it);
    return 0;
}

static void StreamCore_dealloc(StreamCoreObject *self) {
    PyObject_GC_UnTrack(self);
    StreamCore_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef StreamCore_members[] = {
    {"_info", T_OBJECT_EX, offsetof(StreamCoreObject, info), 0, "the PartitionTopicInfo of the chunk held"},
    {"_it", T_OBJECT_EX, offsetof(StreamCoreObject, it), 0, "the chunk's messages not yet handed out"},
    {NULL},
};

static PyTypeObject StreamCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "zkafka.records._native.StreamCore",
    .tp_basicsize = sizeof(StreamCoreObject),
    .tp_dealloc = (destructor)StreamCore_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Base of KafkaStream: next() hands out the held chunk's next message while its partition is "
              "active, else returns self._next_slow(0).",
    .tp_traverse = (traverseproc)StreamCore_traverse,
    .tp_clear = (inquiry)StreamCore_clear,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)StreamCore_iternext,
    .tp_members = StreamCore_members,
    .tp_new = PyType_GenericNew,
};

int add_stream_core(PyObject *module) {
    str_active = PyUnicode_InternFromString("active");
    str_next_slow = PyUnicode_InternFromString("_next_slow");
    zero = PyLong_FromLong(0);
    if (str_active == NULL || str_next_slow == NULL || zero == NULL) return -1;
    if (PyType_Ready(&StreamCoreType) < 0) return -1;
    return PyModule_AddObjectRef(module, "StreamCore", (PyObject *)&StreamCoreType);
}

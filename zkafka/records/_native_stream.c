/* zkafka.records._native.StreamCore and ColumnItems: the per-message step of the high-level consumer's
 * streams, compiled.
 *
 * A KafkaStream (zkafka/consumer/stream.py) hands out the messages of the chunk it holds one by one; all the
 * common case needs is "is the chunk's partition still active? then its next message". Done here, next() costs
 * no Python frame; everything else (no chunk, a chunk used up, a paused or revoked partition, waiting, timing
 * out, the end) is the stream's _next_slow(0), in Python. Part of the _native extension (registered by
 * _native.c); without the extension the stream's Python base class does the same. ColumnItems, below, is the
 * iterator over a 0.8 column batch that such a stream holds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
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

/* -- ColumnItems: a 0.8 column batch's messages, each made when it is handed out ------------------------
 *
 * A MessageBatch08 (zkafka/consumer/stream08.py) holds one fetch piece as columns: keys, values (lists),
 * topic and partition, offsets first, first + 1, ... or an int64 array. Iterating it makes each message's
 * (key, value, topic, partition, offset) tuple of the given class as it goes; like a list's iterator it
 * tells how many are left (__length_hint__) and can be moved on (__setstate__), which the stream uses. */

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    PyObject *keys, *values, *topic, *partition;
    PyObject *offsets; /* NULL: first + index; else an object exporting int64s, held in view */
    Py_buffer view;
    long long first;
    Py_ssize_t index, end;
} ColumnItemsObject;

static PyObject *ColumnItems_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyTypeObject *cls;
    PyObject *keys, *values, *topic, *partition, *offsets;
    long long first;
    if (!PyArg_ParseTuple(args, "O!O!O!OOLO:ColumnItems", &PyType_Type, &cls, &PyList_Type, &keys, &PyList_Type,
                          &values, &topic, &partition, &first, &offsets))
        return NULL;
    if (!PyType_IsSubtype(cls, &PyTuple_Type)) {
        PyErr_Format(PyExc_TypeError, "%R is not a tuple class", cls);
        return NULL;
    }
    ColumnItemsObject *self = (ColumnItemsObject *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->end = PyList_GET_SIZE(values);
    if (offsets != Py_None) {
        if (PyObject_GetBuffer(offsets, &self->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
            Py_DECREF(self);
            return NULL;
        }
        self->offsets = Py_NewRef(offsets);
        if (self->view.itemsize != 8 || self->view.format == NULL || strcmp(self->view.format, "q") != 0) {
            PyErr_SetString(PyExc_TypeError, "the offsets are an array('q') or None");
            Py_DECREF(self);
            return NULL;
        }
        if (self->view.len / 8 < self->end) self->end = self->view.len / 8;
    }
    if (PyList_GET_SIZE(keys) < self->end) self->end = PyList_GET_SIZE(keys);
    self->cls = (PyTypeObject *)Py_NewRef(cls);
    self->keys = Py_NewRef(keys);
    self->values = Py_NewRef(values);
    self->topic = Py_NewRef(topic);
    self->partition = Py_NewRef(partition);
    self->first = first;
    return (PyObject *)self;
}

static PyObject *ColumnItems_next(ColumnItemsObject *self) {
    Py_ssize_t i = self->index;
    /* the lists are the batch's own, but a caller could shrink them: never read past their ends */
    if (i >= self->end || i >= PyList_GET_SIZE(self->values) || i >= PyList_GET_SIZE(self->keys)) return NULL;
    long long offset = self->offsets == NULL ? self->first + i : ((const int64_t *)self->view.buf)[i];
    PyObject *number = PyLong_FromLongLong(offset);
    if (number == NULL) return NULL;
    PyObject *item = self->cls == &PyTuple_Type ? PyTuple_New(5) : self->cls->tp_alloc(self->cls, 5);
    if (item == NULL) {
        Py_DECREF(number);
        return NULL;
    }
    PyTuple_SET_ITEM(item, 0, Py_NewRef(PyList_GET_ITEM(self->keys, i)));
    PyTuple_SET_ITEM(item, 1, Py_NewRef(PyList_GET_ITEM(self->values, i)));
    PyTuple_SET_ITEM(item, 2, Py_NewRef(self->topic));
    PyTuple_SET_ITEM(item, 3, Py_NewRef(self->partition));
    PyTuple_SET_ITEM(item, 4, number);
    self->index = i + 1;
    /* leaves and constants only, as decode's objects: no need for the cyclic GC to track it */
    if (PyObject_GC_IsTracked(item)) PyObject_GC_UnTrack(item);
    return item;
}

static PyObject *ColumnItems_length_hint(ColumnItemsObject *self, PyObject *unused) {
    return PyLong_FromSsize_t(self->index < self->end ? self->end - self->index : 0);
}

static PyObject *ColumnItems_setstate(ColumnItemsObject *self, PyObject *state) {
    Py_ssize_t index = PyLong_AsSsize_t(state);
    if (index == -1 && PyErr_Occurred()) return NULL;
    self->index = index < 0 ? 0 : index > self->end ? self->end : index;
    Py_RETURN_NONE;
}

static int ColumnItems_traverse(ColumnItemsObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->cls);
    Py_VISIT(self->keys);
    Py_VISIT(self->values);
    Py_VISIT(self->topic);
    Py_VISIT(self->partition);
    Py_VISIT(self->offsets);
    return 0;
}

static void ColumnItems_dealloc(ColumnItemsObject *self) {
    PyObject_GC_UnTrack(self);
    if (self->offsets != NULL) PyBuffer_Release(&self->view);
    Py_XDECREF(self->offsets);
    Py_XDECREF(self->cls);
    Py_XDECREF(self->keys);
    Py_XDECREF(self->values);
    Py_XDECREF(self->topic);
    Py_XDECREF(self->partition);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef ColumnItems_methods[] = {
    {"__length_hint__", (PyCFunction)ColumnItems_length_hint, METH_NOARGS, "How many messages are left."},
    {"__setstate__", (PyCFunction)ColumnItems_setstate, METH_O, "Go on from the message at this index."},
    {NULL},
};

static PyTypeObject ColumnItemsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "zkafka.records._native.ColumnItems",
    .tp_basicsize = sizeof(ColumnItemsObject),
    .tp_dealloc = (destructor)ColumnItems_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "ColumnItems(cls, keys, values, topic, partition, first, offsets): an iterator of cls((key, value, "
              "topic, partition, offset)) over the columns; offsets None means first, first + 1, ..., else an "
              "array('q').",
    .tp_traverse = (traverseproc)ColumnItems_traverse,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)ColumnItems_next,
    .tp_methods = ColumnItems_methods,
    .tp_new = ColumnItems_new,
};

int add_stream_core(PyObject *module) {
    str_active = PyUnicode_InternFromString("active");
    str_next_slow = PyUnicode_InternFromString("_next_slow");
    zero = PyLong_FromLong(0);
    if (str_active == NULL || str_next_slow == NULL || zero == NULL) return -1;
    if (PyType_Ready(&StreamCoreType) < 0 || PyType_Ready(&ColumnItemsType) < 0) return -1;
    if (PyModule_AddObjectRef(module, "ColumnItems", (PyObject *)&ColumnItemsType) < 0) return -1;
    return PyModule_AddObjectRef(module, "StreamCore", (PyObject *)&StreamCoreType);
}

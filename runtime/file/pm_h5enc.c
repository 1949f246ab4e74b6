/* pm_h5enc — perfmark's own HDF5 encoder (pm_h5enc.h).
 *
 * The structures and their fields are those of the HDF5 File Format
 * Specification, version 3.0 (superblock version 2, object header versions
 * 2 and 1, link info, group info, link, attribute info and attribute messages,
 * dataspace version 2, datatype messages, fill value version 3, layout
 * version 3, global heap collections), little-endian, 8-byte offsets and
 * lengths. Tests read every file this writes back through the HDF5 library
 * and compare it with the library's own rendering of the same model
 * (tests/unit/test_h5enc.c, tests/schema).
 *
 * The file is laid out in one pass per part, each part's addresses known
 * before it is written:
 *   superblock (48 bytes, filled in last)
 *   global heap collections: every variable-length string
 *   dataset elements, one contiguous block per dataset
 *   object headers: datasets, then groups deepest first, the root last
 *   (a group's header names its children's addresses). */
#include "pm_h5enc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PM_UNDEF UINT64_MAX
#define PM_SUPERBLOCK_SIZE 48
/* Global heap collections are at least this big (HDF5's H5HG_MINSIZE), and
 * an object's index is 16 bits (0 is the free space). */
#define PM_HEAP_MIN 4096
#define PM_HEAP_MAX_OBJECTS 65000
/* HDF5's defaults for compact storage: an object of more attributes gets a
 * version-1 header (pm_header_version); a group of more links says so in its
 * group info message. */
#define PM_COMPACT_MAX 8
#define PM_DENSE_MIN 6

/* Object header message types. */
enum {
    PM_MSG_DATASPACE = 0x01, PM_MSG_LINK_INFO = 0x02, PM_MSG_DATATYPE = 0x03,
    PM_MSG_FILL = 0x05, PM_MSG_LINK = 0x06, PM_MSG_LAYOUT = 0x08, PM_MSG_GROUP_INFO = 0x0a,
    PM_MSG_ATTR = 0x0c, PM_MSG_ATTR_INFO = 0x15
};
#define PM_MSG_CONSTANT 0x01

/* ---- bytes ------------------------------------------------------------------------- */

struct pm_out {
    unsigned char *p;
    size_t len, cap;
    int failed; /* PM_OUT_NOMEM, or PM_OUT_TOO_BIG: a message over 64 KiB */
};
enum { PM_OUT_NOMEM = 1, PM_OUT_TOO_BIG = 2 };

/* Room for `n` bytes in all (one allocation when the estimate holds). */
static void pm_reserve(struct pm_out *o, size_t n)
{
    if (o->failed || n <= o->cap)
        return;
    unsigned char *grown = realloc(o->p, n);
    if (!grown) {
        o->failed = PM_OUT_NOMEM;
        return;
    }
    o->p = grown;
    o->cap = n;
}

static void pm_put(struct pm_out *o, const void *v, size_t n)
{
    if (o->failed)
        return;
    if (n > SIZE_MAX - o->len) {
        o->failed = PM_OUT_NOMEM;
        return;
    }
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n && cap <= SIZE_MAX / 2)
            cap *= 2;
        pm_reserve(o, cap < o->len + n ? o->len + n : cap);
        if (o->failed)
            return;
    }
    if (v)
        memcpy(o->p + o->len, v, n);
    else
        memset(o->p + o->len, 0, n);
    o->len += n;
}

static void pm_fail_as(struct pm_out *o, int failed)
{
    if (failed && !o->failed)
        o->failed = failed;
}

static void pm_put8(struct pm_out *o, unsigned v)
{
    unsigned char b = (unsigned char)v;
    pm_put(o, &b, 1);
}

static void pm_putn(struct pm_out *o, uint64_t v, int bytes)
{
    unsigned char b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    pm_put(o, b, (size_t)bytes);
}

static void pm_put16(struct pm_out *o, unsigned v) { pm_putn(o, v, 2); }
static void pm_put32(struct pm_out *o, uint32_t v) { pm_putn(o, v, 4); }
static void pm_put64(struct pm_out *o, uint64_t v) { pm_putn(o, v, 8); }

static void pm_set32(struct pm_out *o, size_t at, uint32_t v)
{
    for (int i = 0; !o->failed && i < 4; i++)
        o->p[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

static void pm_set64(struct pm_out *o, size_t at, uint64_t v)
{
    for (int i = 0; !o->failed && i < 8; i++)
        o->p[at + (size_t)i] = (unsigned char)(v >> (8 * i));
}

/* ---- lookup3 ----------------------------------------------------------------------- */

#define PM_ROT(x, k) (((x) << (k)) | ((x) >> (32 - (k))))

static uint32_t pm_le32(const unsigned char *k, size_t n)
{
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint32_t)k[i] << (8 * i);
    return v;
}

uint32_t pm_h5enc_checksum(const void *data, size_t len)
{
    const unsigned char *k = data;
    uint32_t a, b, c;
    a = b = c = 0xdeadbeefu + (uint32_t)len;
    while (len > 12) {
        a += pm_le32(k, 4);
        b += pm_le32(k + 4, 4);
        c += pm_le32(k + 8, 4);
        a -= c, a ^= PM_ROT(c, 4), c += b;
        b -= a, b ^= PM_ROT(a, 6), a += c;
        c -= b, c ^= PM_ROT(b, 8), b += a;
        a -= c, a ^= PM_ROT(c, 16), c += b;
        b -= a, b ^= PM_ROT(a, 19), a += c;
        c -= b, c ^= PM_ROT(b, 4), b += a;
        len -= 12, k += 12;
    }
    if (len == 0)
        return c;
    a += pm_le32(k, len < 4 ? len : 4);
    if (len > 4)
        b += pm_le32(k + 4, len < 8 ? len - 4 : 4);
    if (len > 8)
        c += pm_le32(k + 8, len - 8);
    c ^= b, c -= PM_ROT(b, 14);
    a ^= c, a -= PM_ROT(c, 11);
    b ^= a, b -= PM_ROT(a, 25);
    c ^= b, c -= PM_ROT(b, 16);
    a ^= c, a -= PM_ROT(c, 4);
    b ^= a, b -= PM_ROT(a, 14);
    c ^= b, c -= PM_ROT(b, 24);
    return c;
}

/* ---- types ------------------------------------------------------------------------- */

/* Bytes of an element of a schema type in the file: strings are a
 * variable-length reference (length, collection address, index). */
static size_t pm_disk_size(enum pm_schema_type t)
{
    return t == PM_ST_STR ? 16 : pm_schema_type_size(t);
}

static size_t pm_disk_elem(const struct pm_h5m_type *t)
{
    if (t->type != PM_ST_COMPOUND)
        return pm_disk_size(t->type);
    size_t n = 0;
    for (size_t f = 0; f < t->nfields; f++)
        n += pm_disk_size(pm_schema[t->fields[f].id].type);
    return n;
}

/* Datatype message of a number or string schema type. */
static void pm_put_dtype(struct pm_out *o, enum pm_schema_type t)
{
    switch (t) {
    case PM_ST_F64:
        /* IEEE little-endian: mantissa normalised (bit 5), sign at bit 63 */
        pm_put8(o, 0x11), pm_put8(o, 0x20), pm_put8(o, 63), pm_put8(o, 0);
        pm_put32(o, 8);
        pm_put16(o, 0), pm_put16(o, 64);         /* bit offset, precision */
        pm_put8(o, 52), pm_put8(o, 11);          /* exponent location, size */
        pm_put8(o, 0), pm_put8(o, 52);           /* mantissa location, size */
        pm_put32(o, 1023);                       /* exponent bias */
        return;
    case PM_ST_STR64:
        pm_put8(o, 0x13), pm_put8(o, 0x10), pm_put8(o, 0), pm_put8(o, 0); /* NUL-terminated, UTF-8 */
        pm_put32(o, PM_SCHEMA_STR64);
        return;
    case PM_ST_STR:
        /* variable-length string, NUL-terminated, UTF-8, of 1-byte characters */
        pm_put8(o, 0x19), pm_put8(o, 0x01), pm_put8(o, 0x01), pm_put8(o, 0);
        pm_put32(o, 16);
        pm_put8(o, 0x10), pm_put8(o, 0), pm_put8(o, 0), pm_put8(o, 0);
        pm_put32(o, 1);
        pm_put16(o, 0), pm_put16(o, 8);
        return;
    default: {
        size_t size = pm_schema_type_size(t);
        int is_signed = t == PM_ST_I32 || t == PM_ST_I64;
        pm_put8(o, 0x10), pm_put8(o, is_signed ? 0x08 : 0), pm_put8(o, 0), pm_put8(o, 0);
        pm_put32(o, (uint32_t)size);
        pm_put16(o, 0), pm_put16(o, (unsigned)(8 * size));
    }
    }
}

/* A compound as a version-3 datatype: members packed in order. */
static void pm_put_type(struct pm_out *o, const struct pm_h5m_type *t)
{
    if (t->type != PM_ST_COMPOUND) {
        pm_put_dtype(o, t->type);
        return;
    }
    size_t size = pm_disk_elem(t);
    int width = size < 256 ? 1 : size < 65536 ? 2 : size < (1u << 24) ? 3 : 4;
    pm_put8(o, 0x36);
    pm_put16(o, (unsigned)t->nfields), pm_put8(o, 0);
    pm_put32(o, (uint32_t)size);
    size_t at = 0;
    for (size_t f = 0; f < t->nfields; f++) {
        const char *name = pm_schema_name(t->fields[f].id);
        enum pm_schema_type ft = pm_schema[t->fields[f].id].type;
        pm_put(o, name, strlen(name) + 1);
        pm_putn(o, at, width);
        pm_put_dtype(o, ft);
        at += pm_disk_size(ft);
    }
}

static void pm_put_space(struct pm_out *o, int ndims, const uint64_t *dims)
{
    pm_put8(o, 2), pm_put8(o, (unsigned)ndims), pm_put8(o, 0), pm_put8(o, ndims ? 1 : 0);
    for (int i = 0; i < ndims; i++)
        pm_put64(o, dims[i]);
}

/* ---- the global heap --------------------------------------------------------------- */

struct pm_ref {
    uint32_t len;
    uint64_t addr;
    uint32_t index;
};

struct pm_heap {
    struct pm_out *file; /* the collections go straight into the file */
    size_t start;        /* the open collection's address */
    uint32_t count;      /* objects in it */
    struct pm_ref *refs; /* one per string, in the order they were added */
    size_t nrefs, cap;
};

static void pm_heap_close(struct pm_heap *h)
{
    if (!h->count)
        return;
    size_t used = h->file->len - h->start;
    size_t size = used + 16 < PM_HEAP_MIN ? PM_HEAP_MIN : used + 16;
    /* the free space: an object of index 0 over what is left */
    pm_put16(h->file, 0), pm_put16(h->file, 0), pm_put32(h->file, 0);
    pm_put64(h->file, size - used);
    pm_put(h->file, NULL, size - used - 16);
    pm_set64(h->file, h->start + 8, size);
    h->count = 0;
}

/* A string's reference, its bytes added to the heap. NULL: a null reference. */
static void pm_heap_add(struct pm_heap *h, const char *s)
{
    if (h->file->failed)
        return;
    if (h->nrefs == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        struct pm_ref *grown = realloc(h->refs, cap * sizeof *grown);
        if (!grown) {
            h->file->failed = PM_OUT_NOMEM;
            return;
        }
        h->refs = grown;
        h->cap = cap;
    }
    if (!s) {
        h->refs[h->nrefs++] = (struct pm_ref){0, 0, 0};
        return;
    }
    if (h->count == PM_HEAP_MAX_OBJECTS)
        pm_heap_close(h);
    if (!h->count) {
        h->start = h->file->len;
        pm_put(h->file, "GCOL", 4);
        pm_put8(h->file, 1), pm_put(h->file, NULL, 3);
        pm_put64(h->file, 0); /* the collection's size, set when closed */
    }
    size_t len = strlen(s), padded = (len + 7) & ~(size_t)7;
    uint32_t index = ++h->count;
    pm_put16(h->file, index), pm_put16(h->file, 0), pm_put32(h->file, 0);
    pm_put64(h->file, len);
    pm_put(h->file, s, len);
    pm_put(h->file, NULL, padded - len);
    h->refs[h->nrefs++] = (struct pm_ref){(uint32_t)len, h->start, index};
}

static void pm_put_ref(struct pm_out *o, const struct pm_ref *r)
{
    if (o->failed)
        return;
    pm_put32(o, r->len), pm_put64(o, r->addr), pm_put32(o, r->index);
}

/* ---- the encoder ------------------------------------------------------------------- */

struct pm_enc {
    const struct pm_h5model *m;
    struct pm_out file;
    struct pm_heap heap;
    size_t *dset_ref0, *group_ref0; /* each item's first string reference */
    uint64_t *dset_data;            /* address of each dataset's elements */
    uint64_t *dset_addr, *group_addr;
};

static const char *pm_elem_str(const struct pm_h5m_dset *d, size_t e, size_t f)
{
    const unsigned char *el = (const unsigned char *)d->data + e * d->type.size;
    const char *s;
    memcpy(&s, el + (d->type.type == PM_ST_COMPOUND ? d->type.fields[f].offset : 0), sizeof s);
    return s;
}

static size_t pm_elements(const struct pm_h5m_dset *d)
{
    size_t n = 1;
    for (int i = 0; i < d->ndims; i++)
        n *= (size_t)d->dims[i];
    return n;
}

static int pm_field_is_str(const struct pm_h5m_type *t, size_t f)
{
    return t->type == PM_ST_COMPOUND ? pm_schema[t->fields[f].id].type == PM_ST_STR
                                     : t->type == PM_ST_STR;
}

/* Every string into the heap: each item's attributes, then a dataset's
 * elements in element and member order. */
static void pm_collect_strings(struct pm_enc *x)
{
    const struct pm_h5model *m = x->m;
    for (size_t i = 0; i < m->ndsets; i++) {
        const struct pm_h5m_dset *d = &m->dsets[i];
        x->dset_ref0[i] = x->heap.nrefs;
        for (size_t a = 0; a < d->attrs.n; a++)
            if (d->attrs.a[a].str)
                pm_heap_add(&x->heap, d->attrs.a[a].str);
        size_t nf = d->type.type == PM_ST_COMPOUND ? d->type.nfields : 1;
        for (size_t e = 0, n = pm_elements(d); e < n; e++)
            for (size_t f = 0; f < nf; f++)
                if (pm_field_is_str(&d->type, f))
                    pm_heap_add(&x->heap, pm_elem_str(d, e, f));
    }
    for (size_t g = 0; g < m->ngroups; g++) {
        x->group_ref0[g] = x->heap.nrefs;
        for (size_t a = 0; a < m->groups[g].attrs.n; a++)
            if (m->groups[g].attrs.a[a].str)
                pm_heap_add(&x->heap, m->groups[g].attrs.a[a].str);
    }
    pm_heap_close(&x->heap);
}

/* A dataset's elements as the file holds them; *ref walks its strings. */
static void pm_put_elements(struct pm_out *o, const struct pm_h5m_dset *d,
                            const struct pm_ref **ref)
{
    const struct pm_h5m_type *t = &d->type;
    size_t n = pm_elements(d);
    if (t->type != PM_ST_COMPOUND && t->type != PM_ST_STR) {
        pm_put(o, d->data, n * t->size);
        return;
    }
    for (size_t e = 0; e < n; e++) {
        const unsigned char *el = (const unsigned char *)d->data + e * t->size;
        size_t nf = t->type == PM_ST_COMPOUND ? t->nfields : 1;
        for (size_t f = 0; f < nf; f++) {
            if (pm_field_is_str(t, f))
                pm_put_ref(o, (*ref)++);
            else
                pm_put(o, el + t->fields[f].offset, t->fields[f].size);
        }
    }
}

/* An object header's messages as they are built, in the envelope of the
 * header's version. Version 2 (the default): type (1 byte), size (2), flags
 * (1), data. Version 1, for an object of more attributes than a version-2
 * header keeps compact by default (pm_header_version): type (2), size (2),
 * flags (1), reserved (3), data padded to a multiple of 8 bytes, the size
 * counting the padding. */
struct pm_msgs {
    struct pm_out out;
    int version;
    unsigned count;
};

/* One message: type, size of its data, flags, data. */
static void pm_put_msg(struct pm_msgs *h, unsigned type, unsigned flags, const struct pm_out *data)
{
    struct pm_out *o = &h->out;
    size_t size = h->version == 1 ? (data->len + 7) & ~(size_t)7 : data->len;
    if (data->failed || size > 0xffff) {
        o->failed = data->failed ? data->failed : PM_OUT_TOO_BIG;
        return;
    }
    if (h->version == 1) {
        pm_put16(o, type), pm_put16(o, (unsigned)size), pm_put8(o, flags), pm_put(o, NULL, 3);
        pm_put(o, data->p, data->len);
        pm_put(o, NULL, size - data->len);
    } else {
        pm_put8(o, type), pm_put16(o, (unsigned)size), pm_put8(o, flags);
        pm_put(o, data->p, data->len);
    }
    h->count++;
}

/* The object header's version for an object of `nattrs` attributes: 2,
 * unless they are more than a version-2 header holds in the header by
 * default (PM_COMPACT_MAX; the HDF5 library would move them to dense
 * storage, a fractal heap and a B-tree). A version-1 header keeps any number
 * of attributes in the header and has no phase-change values, as the HDF5
 * library writes every object by default (H5F_LIBVER_EARLIEST). */
static int pm_header_version(size_t nattrs)
{
    return nattrs > PM_COMPACT_MAX ? 1 : 2;
}

/* Attribute info (none dense; version-2 headers only, as the HDF5 library
 * writes it) and one attribute message per attribute. */
static void pm_put_attrs(struct pm_msgs *o, const struct pm_h5m_attrs *attrs,
                         const struct pm_ref **ref)
{
    if (!attrs->n)
        return;
    struct pm_out d = {0};
    if (o->version != 1) {
        pm_put8(&d, 0), pm_put8(&d, 0), pm_put64(&d, PM_UNDEF), pm_put64(&d, PM_UNDEF);
        pm_put_msg(o, PM_MSG_ATTR_INFO, 0, &d);
    }
    for (size_t a = 0; a < attrs->n; a++) {
        const struct pm_h5m_attr *at = &attrs->a[a];
        enum pm_schema_type t = pm_schema[at->id].type;
        struct pm_out type = {0}, space = {0};
        pm_put_dtype(&type, t);
        pm_put_space(&space, 0, NULL);
        d.len = 0;
        pm_put8(&d, 3), pm_put8(&d, 0);
        pm_put16(&d, (unsigned)strlen(at->name) + 1);
        pm_put16(&d, (unsigned)type.len), pm_put16(&d, (unsigned)space.len);
        pm_put8(&d, 0); /* the name is ASCII */
        pm_put(&d, at->name, strlen(at->name) + 1);
        pm_put(&d, type.p, type.len);
        pm_put(&d, space.p, space.len);
        if (t == PM_ST_STR)
            pm_put_ref(&d, (*ref)++);
        else
            pm_put(&d, at->num, pm_schema_type_size(t));
        pm_fail_as(&d, type.failed), pm_fail_as(&d, space.failed);
        pm_put_msg(o, PM_MSG_ATTR, 0, &d);
        free(type.p), free(space.p);
    }
    pm_fail_as(&o->out, d.failed);
    free(d.p);
}

/* An object header around its messages, appended to the file: its address.
 * Version 2: flags 0x02 (a 4-byte chunk size) and nothing else, as the HDF5
 * library writes by default less the times (no creation order, no
 * phase-change values), then the checksum. Version 1: a 16-byte prefix
 * (version, reserved, message count, reference count 1, chunk size, 4 bytes
 * of padding), no checksum. */
static uint64_t pm_put_header(struct pm_out *file, const struct pm_msgs *h)
{
    size_t start = file->len;
    const struct pm_out *msgs = &h->out;
    if (msgs->len > UINT32_MAX || (h->version == 1 && h->count > 0xffff))
        pm_fail_as(file, PM_OUT_TOO_BIG);
    if (h->version == 1) {
        pm_put8(file, 1), pm_put8(file, 0);
        pm_put16(file, h->count);
        pm_put32(file, 1);
        pm_put32(file, (uint32_t)msgs->len);
        pm_put32(file, 0);
        pm_put(file, msgs->p, msgs->len);
        pm_fail_as(file, msgs->failed);
        return start;
    }
    pm_put(file, "OHDR", 4);
    pm_put8(file, 2);
    pm_put8(file, 0x02);
    pm_put32(file, (uint32_t)msgs->len);
    pm_put(file, msgs->p, msgs->len);
    pm_fail_as(file, msgs->failed);
    if (!file->failed)
        pm_put32(file, pm_h5enc_checksum(file->p + start, file->len - start));
    return start;
}

static uint64_t pm_dataset_header(struct pm_enc *x, size_t i)
{
    const struct pm_h5m_dset *d = &x->m->dsets[i];
    struct pm_msgs msgs = {.version = pm_header_version(d->attrs.n)};
    struct pm_out data = {0};
    pm_put_space(&data, d->ndims, d->dims);
    pm_put_msg(&msgs, PM_MSG_DATASPACE, 0, &data);
    data.len = 0;
    pm_put_type(&data, &d->type);
    pm_put_msg(&msgs, PM_MSG_DATATYPE, PM_MSG_CONSTANT, &data);
    data.len = 0;
    pm_put8(&data, 3), pm_put8(&data, 0x02); /* fill value: allocated late, default */
    pm_put_msg(&msgs, PM_MSG_FILL, PM_MSG_CONSTANT, &data);
    data.len = 0;
    uint64_t bytes = (uint64_t)pm_elements(d) * pm_disk_elem(&d->type);
    pm_put8(&data, 3), pm_put8(&data, 1); /* contiguous */
    pm_put64(&data, bytes ? x->dset_data[i] : PM_UNDEF);
    pm_put64(&data, bytes);
    pm_put_msg(&msgs, PM_MSG_LAYOUT, 0, &data);
    const struct pm_ref *ref = x->heap.refs + x->dset_ref0[i];
    pm_put_attrs(&msgs, &d->attrs, &ref);
    pm_fail_as(&msgs.out, data.failed);
    uint64_t at = pm_put_header(&x->file, &msgs);
    free(msgs.out.p), free(data.p);
    return at;
}

static int pm_depth(enum pm_schema_id id)
{
    int n = 0;
    for (const char *p = pm_schema_path(id); *p; p++)
        n += *p == '/';
    return id == PM_S_ROOT ? 0 : n;
}

static int pm_child_of(enum pm_schema_id child, enum pm_schema_id group)
{
    const char *path = pm_schema_path(child), *gpath = pm_schema_path(group);
    const char *slash = strrchr(path, '/');
    size_t plen = slash ? (size_t)(slash - path) : 0;
    if (group == PM_S_ROOT)
        return plen == 0 && child != PM_S_ROOT;
    return strlen(gpath) == plen && strncmp(path, gpath, plen) == 0;
}

static void pm_put_link(struct pm_msgs *msgs, enum pm_schema_id child, uint64_t addr)
{
    const char *name = pm_schema_name(child);
    size_t len = strlen(name);
    struct pm_out d = {0};
    pm_put8(&d, 1);
    pm_put8(&d, len > 255 ? 1 : 0); /* size of the length field; hard link, ASCII */
    pm_putn(&d, len, len > 255 ? 2 : 1);
    pm_put(&d, name, len);
    pm_put64(&d, addr);
    pm_put_msg(msgs, PM_MSG_LINK, 0, &d);
    free(d.p);
}

static uint64_t pm_group_header(struct pm_enc *x, size_t g)
{
    const struct pm_h5model *m = x->m;
    enum pm_schema_id id = m->groups[g].id;
    size_t nlinks = 0;
    for (size_t i = 0; i < m->ndsets; i++)
        nlinks += pm_child_of(m->dsets[i].id, id);
    for (size_t k = 0; k < m->ngroups; k++)
        nlinks += pm_child_of(m->groups[k].id, id);
    struct pm_msgs msgs = {.version = pm_header_version(m->groups[g].attrs.n)};
    struct pm_out data = {0};
    pm_put8(&data, 0), pm_put8(&data, 0), pm_put64(&data, PM_UNDEF), pm_put64(&data, PM_UNDEF);
    pm_put_msg(&msgs, PM_MSG_LINK_INFO, 0, &data);
    data.len = 0;
    pm_put8(&data, 0);
    if (nlinks > PM_COMPACT_MAX) { /* the links stay in the header: say that is the limit */
        pm_put8(&data, 0x01);
        pm_put16(&data, (unsigned)(nlinks > 0xffff ? 0xffff : nlinks)), pm_put16(&data, PM_DENSE_MIN);
    } else {
        pm_put8(&data, 0);
    }
    pm_put_msg(&msgs, PM_MSG_GROUP_INFO, PM_MSG_CONSTANT, &data);
    for (size_t i = 0; i < m->ndsets; i++)
        if (pm_child_of(m->dsets[i].id, id))
            pm_put_link(&msgs, m->dsets[i].id, x->dset_addr[i]);
    for (size_t k = 0; k < m->ngroups; k++)
        if (pm_child_of(m->groups[k].id, id))
            pm_put_link(&msgs, m->groups[k].id, x->group_addr[k]);
    const struct pm_ref *ref = x->heap.refs + x->group_ref0[g];
    pm_put_attrs(&msgs, &m->groups[g].attrs, &ref);
    pm_fail_as(&msgs.out, data.failed);
    uint64_t at = pm_put_header(&x->file, &msgs);
    free(msgs.out.p), free(data.p);
    return at;
}

/* Bytes the file will take, near enough to allocate it once: the data
 * exactly, strings with their object headers, and room for the collections
 * and object headers. */
static size_t pm_estimate(const struct pm_h5model *m)
{
    size_t bytes = PM_SUPERBLOCK_SIZE + 2 * PM_HEAP_MIN, strings = 0;
    for (size_t i = 0; i < m->ndsets; i++) {
        const struct pm_h5m_dset *d = &m->dsets[i];
        bytes += pm_elements(d) * pm_disk_elem(&d->type) + 512 + 96 * d->attrs.n;
    }
    for (size_t g = 0; g < m->ngroups; g++)
        bytes += 256 + 96 * m->groups[g].attrs.n + 48 * m->ndsets;
    for (size_t i = 0; i < m->nstrs; i++)
        strings += 24 + strlen(m->strs[i]);
    return bytes + strings + strings / PM_HEAP_MAX_OBJECTS * PM_HEAP_MIN;
}

int pm_h5enc_available(void)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return 1;
#else
    return 0; /* numbers are copied as they are in memory */
#endif
}

int pm_h5enc_fits(const struct pm_h5model *m)
{
    if (!pm_h5enc_available() || !pm_h5model_ok(m))
        return 0;
    for (size_t i = 0; i < m->ndsets; i++)
        if (m->dsets[i].row0 != 0 || m->dsets[i].nrows != m->dsets[i].dims[0])
            return 0;
    return pm_h5model_max_elements(m) <= PM_H5ENC_MAX_ELEMENTS;
}

int pm_h5enc_image(const struct pm_h5model *m, void **image, size_t *len)
{
    *image = NULL;
    *len = 0;
    if (!pm_h5enc_available() || !pm_h5model_ok(m) || m->ngroups == 0 ||
        m->groups[0].id != PM_S_ROOT) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < m->ndsets; i++)
        if (m->dsets[i].row0 != 0 || m->dsets[i].nrows != m->dsets[i].dims[0]) {
            errno = EINVAL;
            return -1;
        }
    struct pm_enc x = {.m = m};
    size_t items = m->ndsets + m->ngroups + 1;
    x.dset_ref0 = calloc(items, sizeof *x.dset_ref0);
    x.group_ref0 = calloc(items, sizeof *x.group_ref0);
    x.dset_data = calloc(items, sizeof *x.dset_data);
    x.dset_addr = calloc(items, sizeof *x.dset_addr);
    x.group_addr = calloc(items, sizeof *x.group_addr);
    int rc = -1;
    if (!x.dset_ref0 || !x.group_ref0 || !x.dset_data || !x.dset_addr || !x.group_addr) {
        x.file.failed = PM_OUT_NOMEM;
        goto out;
    }

    pm_reserve(&x.file, pm_estimate(m));
    pm_put(&x.file, NULL, PM_SUPERBLOCK_SIZE);
    x.heap.file = &x.file;
    pm_collect_strings(&x);
    if (x.file.failed)
        goto out; /* the string references are not all there */

    for (size_t i = 0; i < m->ndsets; i++) {
        const struct pm_ref *ref = x.heap.refs + x.dset_ref0[i];
        for (size_t a = 0; a < m->dsets[i].attrs.n; a++)
            ref += m->dsets[i].attrs.a[a].str != NULL;
        x.dset_data[i] = x.file.len;
        pm_put_elements(&x.file, &m->dsets[i], &ref);
    }
    for (size_t i = 0; i < m->ndsets; i++)
        x.dset_addr[i] = pm_dataset_header(&x, i);
    int deepest = 0;
    for (size_t g = 0; g < m->ngroups; g++)
        deepest = pm_depth(m->groups[g].id) > deepest ? pm_depth(m->groups[g].id) : deepest;
    for (int depth = deepest; depth >= 0; depth--)
        for (size_t g = 0; g < m->ngroups; g++)
            if (pm_depth(m->groups[g].id) == depth)
                x.group_addr[g] = pm_group_header(&x, g);

    /* the superblock: where the file ends and the root group is */
    if (!x.file.failed) {
        struct pm_out *f = &x.file;
        memcpy(f->p, "\211HDF\r\n\032\n", 8);
        f->p[8] = 2;  /* version */
        f->p[9] = 8;  /* size of offsets */
        f->p[10] = 8; /* size of lengths */
        f->p[11] = 0; /* file consistency flags */
        pm_set64(f, 12, 0);         /* base address */
        pm_set64(f, 20, PM_UNDEF);  /* superblock extension */
        pm_set64(f, 28, f->len);    /* end of file */
        pm_set64(f, 36, x.group_addr[0]);
        pm_set32(f, 44, pm_h5enc_checksum(f->p, 44));
        *image = f->p;
        *len = f->len;
        x.file.p = NULL;
        rc = 0;
    }
out:
    if (rc != 0)
        errno = x.file.failed == PM_OUT_TOO_BIG ? EFBIG : ENOMEM;
    free(x.file.p), free(x.heap.refs);
    free(x.dset_ref0), free(x.group_ref0), free(x.dset_data), free(x.dset_addr), free(x.group_addr);
    return rc;
}

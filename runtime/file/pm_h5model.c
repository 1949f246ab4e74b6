/* pm_h5model — a perfmark file as plain data (pm_h5model.h). */
#define _GNU_SOURCE
#include "pm_h5model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int pm_fail(struct pm_h5model *m)
{
    m->failed = 1;
    return -1;
}

/* Grow *p (an array of `size`-byte items with *cap slots) to hold need. */
static int pm_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 8;
    while (cap2 < need)
        cap2 *= 2;
    void *grown = realloc(*p, cap2 * size);
    if (!grown)
        return -1;
    *p = grown;
    *cap = cap2;
    return 0;
}

void pm_h5model_init(struct pm_h5model *m)
{
    memset(m, 0, sizeof *m);
    if (pm_grow((void **)&m->groups, &m->groups_cap, 1, sizeof *m->groups) != 0) {
        m->failed = 1;
        return;
    }
    m->groups[0] = (struct pm_h5m_group){.id = PM_S_ROOT};
    m->ngroups = 1;
}

static void pm_attrs_free(struct pm_h5m_attrs *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->a[i].name), free(a->a[i].str);
    free(a->a);
}

void pm_h5model_free(struct pm_h5model *m)
{
    for (size_t i = 0; i < m->ngroups; i++)
        pm_attrs_free(&m->groups[i].attrs);
    for (size_t i = 0; i < m->ndsets; i++) {
        free(m->dsets[i].type.fields);
        free(m->dsets[i].data);
        pm_attrs_free(&m->dsets[i].attrs);
    }
    for (size_t i = 0; i < m->nstrs; i++)
        free(m->strs[i]);
    free(m->groups), free(m->dsets), free(m->strs);
    memset(m, 0, sizeof *m);
}

const char *pm_h5model_path(enum pm_schema_id id) { return pm_schema_path(id); }

/* The group a path belongs to: "/region/visits" → the row of "/region". */
static int pm_parent_is(enum pm_schema_id id, enum pm_schema_id group)
{
    const char *path = pm_schema_path(id), *gpath = pm_schema_path(group);
    const char *slash = strrchr(path, '/');
    size_t plen = slash ? (size_t)(slash - path) : 0;
    if (group == PM_S_ROOT)
        return plen == 0;
    return strlen(gpath) == plen && strncmp(path, gpath, plen) == 0;
}

static int pm_has_parent(const struct pm_h5model *m, enum pm_schema_id id)
{
    for (size_t i = 0; i < m->ngroups; i++)
        if (pm_parent_is(id, m->groups[i].id))
            return 1;
    return 0;
}

int pm_h5model_group(struct pm_h5model *m, enum pm_schema_id id)
{
    if (m->failed)
        return -1;
    for (size_t i = 0; i < m->ngroups; i++)
        if (m->groups[i].id == id)
            return 0;
    if (pm_schema[id].kind != PM_SK_GROUP || !pm_has_parent(m, id) ||
        pm_grow((void **)&m->groups, &m->groups_cap, m->ngroups + 1, sizeof *m->groups) != 0)
        return pm_fail(m);
    m->groups[m->ngroups++] = (struct pm_h5m_group){.id = id};
    return 0;
}

static size_t pm_prod(const uint64_t *dims, int from, int to)
{
    size_t n = 1;
    for (int i = from; i < to; i++)
        n *= (size_t)dims[i];
    return n;
}

/* a × b into *out, or -1 when it does not fit a size_t. */
static int pm_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out) || *out > SIZE_MAX ? -1 : 0;
}

/* Elements of the whole shape and of `rows` rows of it, and the bytes of
 * those rows for `size`-byte elements; -1 when any does not fit. */
static int pm_sizes(const uint64_t *dims, int ndims, uint64_t rows, uint64_t size,
                    uint64_t *bytes)
{
    uint64_t all = 1, inner = 1, elements;
    for (int i = 0; i < ndims; i++)
        if (pm_mul(all, dims[i], &all) != 0 || (i > 0 && pm_mul(inner, dims[i], &inner) != 0))
            return -1;
    return pm_mul(all, size, &all) == 0 && pm_mul(inner, rows, &elements) == 0 &&
                   pm_mul(elements, size, bytes) == 0
               ? 0
               : -1;
}

size_t pm_h5model_row_bytes(const struct pm_h5m_dset *d)
{
    return d->type.size * pm_prod(d->dims, 1, d->ndims);
}

uint64_t pm_h5model_max_elements(const struct pm_h5model *m)
{
    uint64_t most = 0;
    for (size_t i = 0; i < m->ndsets; i++) {
        uint64_t n = pm_prod(m->dsets[i].dims, 0, m->dsets[i].ndims);
        most = n > most ? n : most;
    }
    return most;
}

/* A copy of `s` that the model keeps, or NULL for NULL. */
static int pm_keep_str(struct pm_h5model *m, const char *s, const char **out)
{
    *out = NULL;
    if (!s)
        return 0;
    char *copy = strdup(s);
    if (!copy || pm_grow((void **)&m->strs, &m->strs_cap, m->nstrs + 1, sizeof *m->strs) != 0) {
        free(copy);
        return -1;
    }
    m->strs[m->nstrs++] = copy;
    *out = copy;
    return 0;
}

/* The element type of dataset `id`, checked against its schema row. */
static int pm_type_of(enum pm_schema_id id, const struct pm_field *fields, size_t nfields,
                      size_t row_size, struct pm_h5m_type *t)
{
    enum pm_schema_type st = pm_schema[id].type;
    *t = (struct pm_h5m_type){.type = st};
    if (st != PM_ST_COMPOUND) {
        t->size = pm_schema_type_size(st);
        return fields || t->size == 0 ? -1 : 0;
    }
    if (!fields || !nfields)
        return -1;
    for (size_t i = 0; i < nfields; i++) {
        enum pm_schema_type ft = pm_schema[fields[i].id].type;
        if (pm_schema[fields[i].id].kind != PM_SK_FIELD || ft == PM_ST_COMPOUND ||
            fields[i].size != pm_schema_type_size(ft) || fields[i].size > row_size ||
            fields[i].offset > row_size - fields[i].size)
            return -1; /* a row struct out of step with the table */
    }
    if (!(t->fields = malloc(nfields * sizeof *t->fields)))
        return -1;
    memcpy(t->fields, fields, nfields * sizeof *fields);
    t->nfields = nfields;
    t->size = row_size;
    return 0;
}

/* Copy the STR elements of `n` elements of type t at `data` into the model
 * and point them there. */
static int pm_keep_strs(struct pm_h5model *m, const struct pm_h5m_type *t, unsigned char *data,
                        size_t n)
{
    for (size_t e = 0; e < n; e++) {
        unsigned char *el = data + e * t->size;
        size_t nf = t->type == PM_ST_COMPOUND ? t->nfields : 1;
        for (size_t f = 0; f < nf; f++) {
            int is_str = t->type == PM_ST_COMPOUND ? pm_schema[t->fields[f].id].type == PM_ST_STR
                                                   : t->type == PM_ST_STR;
            if (!is_str)
                continue;
            unsigned char *slot = el + (t->type == PM_ST_COMPOUND ? t->fields[f].offset : 0);
            const char *s, *kept;
            memcpy(&s, slot, sizeof s);
            if (pm_keep_str(m, s, &kept) != 0)
                return -1;
            memcpy(slot, &kept, sizeof kept);
        }
    }
    return 0;
}

int pm_h5model_rows(struct pm_h5model *m, enum pm_schema_id id, const struct pm_field *fields,
                    size_t nfields, size_t row_size, const uint64_t *dims, uint64_t row0,
                    uint64_t nrows, const void *data)
{
    if (m->failed)
        return -1;
    struct pm_h5m_dset d = {.id = id, .ndims = pm_schema_ndims(id), .row0 = row0, .nrows = nrows};
    for (size_t i = 0; i < m->ndsets; i++)
        if (m->dsets[i].id == id)
            return pm_fail(m); /* one dataset per row of the table */
    uint64_t bytes64 = 0;
    if (pm_schema[id].kind != PM_SK_DATASET || d.ndims < 1 || d.ndims > 3 ||
        !pm_has_parent(m, id) || nrows > dims[0] || row0 > dims[0] - nrows ||
        pm_type_of(id, fields, nfields, row_size, &d.type) != 0)
        return pm_fail(m);
    memcpy(d.dims, dims, (size_t)d.ndims * sizeof *dims);
    if (pm_sizes(d.dims, d.ndims, nrows, d.type.size, &bytes64) != 0) {
        free(d.type.fields);
        return pm_fail(m);
    }
    size_t bytes = (size_t)bytes64, elements = d.type.size ? bytes / d.type.size : 0;
    d.data = malloc(bytes ? bytes : 1);
    if (!d.data || (bytes && !data))
        goto fail;
    if (bytes)
        memcpy(d.data, data, bytes);
    if (pm_keep_strs(m, &d.type, d.data, elements) != 0 ||
        pm_grow((void **)&m->dsets, &m->dsets_cap, m->ndsets + 1, sizeof *m->dsets) != 0)
        goto fail;
    m->dsets[m->ndsets++] = d;
    return 0;
fail:
    free(d.data), free(d.type.fields);
    return pm_fail(m);
}

/* The attributes of group or dataset `owner`. */
static struct pm_h5m_attrs *pm_owner(struct pm_h5model *m, enum pm_schema_id owner)
{
    for (size_t i = m->ndsets; i-- > 0;)
        if (m->dsets[i].id == owner)
            return &m->dsets[i].attrs;
    for (size_t i = 0; i < m->ngroups; i++)
        if (m->groups[i].id == owner)
            return &m->groups[i].attrs;
    return NULL;
}

static struct pm_h5m_attr *pm_attr_new(struct pm_h5model *m, enum pm_schema_id owner,
                                       enum pm_schema_id id, const char *name)
{
    struct pm_h5m_attrs *a = m->failed ? NULL : pm_owner(m, owner);
    if (!name)
        name = pm_schema_name(id);
    for (size_t i = 0; a && i < a->n; i++)
        if (strcmp(a->a[i].name, name) == 0)
            return NULL; /* one attribute of a name per object */
    if (!a || pm_schema[id].kind != PM_SK_ATTR ||
        pm_grow((void **)&a->a, &a->cap, a->n + 1, sizeof *a->a) != 0)
        return NULL;
    struct pm_h5m_attr *at = &a->a[a->n];
    *at = (struct pm_h5m_attr){.id = id, .name = strdup(name)};
    if (!at->name)
        return NULL;
    a->n++;
    return at;
}

int pm_h5model_attr_num(struct pm_h5model *m, enum pm_schema_id owner, enum pm_schema_id id,
                        const char *name, const void *value)
{
    size_t size = pm_schema_type_size(pm_schema[id].type);
    if (pm_schema[id].type == PM_ST_STR || pm_schema[id].type == PM_ST_STR64 || size == 0 ||
        size > 8)
        return pm_fail(m);
    struct pm_h5m_attr *at = pm_attr_new(m, owner, id, name);
    if (!at)
        return pm_fail(m);
    memcpy(at->num, value, size);
    return 0;
}

int pm_h5model_attr_str(struct pm_h5model *m, enum pm_schema_id owner, enum pm_schema_id id,
                        const char *value)
{
    if (pm_schema[id].type != PM_ST_STR)
        return pm_fail(m);
    struct pm_h5m_attr *at = pm_attr_new(m, owner, id, NULL);
    if (!at || !(at->str = strdup(value ? value : "")))
        return pm_fail(m);
    return 0;
}

/* ---- packing rows ------------------------------------------------------------ */

/* The packed form, all little-endian as in memory:
 *   "PMRW" u32 version, u32 ngroups, u32 ndsets
 *   per group: u32 id
 *   per dataset: u32 id, u32 ndims, u64 dims[3], u64 nrows, u64 row_size,
 *                u32 nfields, per field (u32 id, u64 offset, u64 size),
 *                u32 nattrs, per attribute (u32 id, u32 name length, name, u8 num[8]),
 *                nrows * row_size bytes of rows */
#define PM_PACK_MAGIC 0x57524d50u /* "PMRW" */
#define PM_PACK_VERSION 1u

struct pm_packer {
    unsigned char *p;
    size_t len, cap;
    int failed;
};

static void pm_put(struct pm_packer *k, const void *v, size_t n)
{
    if (k->failed || pm_grow((void **)&k->p, &k->cap, k->len + n, 1) != 0) {
        k->failed = 1;
        return;
    }
    memcpy(k->p + k->len, v, n);
    k->len += n;
}

static void pm_put32(struct pm_packer *k, uint32_t v) { pm_put(k, &v, 4); }
static void pm_put64(struct pm_packer *k, uint64_t v) { pm_put(k, &v, 8); }

static int pm_has_strs(const struct pm_h5m_type *t)
{
    if (t->type == PM_ST_STR)
        return 1;
    for (size_t f = 0; f < t->nfields; f++)
        if (pm_schema[t->fields[f].id].type == PM_ST_STR)
            return 1;
    return 0;
}

int pm_h5model_pack(const struct pm_h5model *m, void **buf, size_t *len)
{
    struct pm_packer k = {0};
    *buf = NULL;
    *len = 0;
    if (m->failed)
        return -1;
    pm_put32(&k, PM_PACK_MAGIC);
    pm_put32(&k, PM_PACK_VERSION);
    pm_put32(&k, (uint32_t)m->ngroups);
    pm_put32(&k, (uint32_t)m->ndsets);
    for (size_t g = 0; g < m->ngroups; g++) {
        if (m->groups[g].attrs.n)
            k.failed = 1; /* rows carry no group attributes: the tables do */
        pm_put32(&k, (uint32_t)m->groups[g].id);
    }
    for (size_t i = 0; i < m->ndsets && !k.failed; i++) {
        const struct pm_h5m_dset *d = &m->dsets[i];
        if (pm_has_strs(&d->type) || d->attrs.n > UINT32_MAX)
            k.failed = 1;
        pm_put32(&k, (uint32_t)d->id);
        pm_put32(&k, (uint32_t)d->ndims);
        for (int j = 0; j < 3; j++)
            pm_put64(&k, j < d->ndims ? d->dims[j] : 0);
        pm_put64(&k, d->nrows);
        pm_put64(&k, d->type.size);
        pm_put32(&k, (uint32_t)d->type.nfields);
        for (size_t f = 0; f < d->type.nfields; f++) {
            pm_put32(&k, (uint32_t)d->type.fields[f].id);
            pm_put64(&k, d->type.fields[f].offset);
            pm_put64(&k, d->type.fields[f].size);
        }
        pm_put32(&k, (uint32_t)d->attrs.n);
        for (size_t a = 0; a < d->attrs.n; a++) {
            const struct pm_h5m_attr *at = &d->attrs.a[a];
            if (at->str)
                k.failed = 1;
            pm_put32(&k, (uint32_t)at->id);
            pm_put32(&k, (uint32_t)strlen(at->name));
            pm_put(&k, at->name, strlen(at->name));
            pm_put(&k, at->num, 8);
        }
        pm_put(&k, d->data, (size_t)d->nrows * pm_h5model_row_bytes(d));
    }
    if (k.failed) {
        free(k.p);
        return -1;
    }
    *buf = k.p;
    *len = k.len;
    return 0;
}

struct pm_reader {
    const unsigned char *p;
    size_t left;
    int failed;
};

static const void *pm_take(struct pm_reader *r, size_t n)
{
    if (r->failed || n > r->left) {
        r->failed = 1;
        return NULL;
    }
    const void *at = r->p;
    r->p += n;
    r->left -= n;
    return at;
}

static uint32_t pm_take32(struct pm_reader *r)
{
    const void *v = pm_take(r, 4);
    uint32_t x = 0;
    if (v)
        memcpy(&x, v, 4);
    return x;
}

static uint64_t pm_take64(struct pm_reader *r)
{
    const void *v = pm_take(r, 8);
    uint64_t x = 0;
    if (v)
        memcpy(&x, v, 8);
    return x;
}

static int pm_valid_id(uint32_t id) { return id < (uint32_t)PM_S_COUNT; }

static int pm_unpack_dset(struct pm_h5model *m, struct pm_reader *r)
{
    uint32_t id = pm_take32(r), ndims = pm_take32(r);
    uint64_t dims[3];
    for (int j = 0; j < 3; j++)
        dims[j] = pm_take64(r);
    uint64_t nrows = pm_take64(r), row_size = pm_take64(r);
    uint32_t nfields = pm_take32(r);
    if (r->failed || !pm_valid_id(id) || ndims != (uint32_t)pm_schema_ndims((enum pm_schema_id)id) ||
        nfields > 64 || nrows > dims[0])
        return -1;
    struct pm_field fields[64];
    int strings = pm_schema[id].type == PM_ST_STR;
    for (uint32_t f = 0; f < nfields; f++) {
        uint32_t fid = pm_take32(r);
        fields[f] = (struct pm_field){pm_valid_id(fid) ? (enum pm_schema_id)fid : PM_S_ROOT,
                                      (size_t)pm_take64(r), (size_t)pm_take64(r)};
        strings |= pm_schema[fields[f].id].type == PM_ST_STR;
    }
    if (r->failed || strings)  /* pointers never travel */
        return -1;
    /* The rows come after the attributes: find them first, then add. */
    struct pm_reader at = *r;
    uint32_t nattrs = pm_take32(r);
    for (uint32_t a = 0; a < nattrs && !r->failed; a++) {
        pm_take32(r);
        pm_take(r, pm_take32(r));
        pm_take(r, 8);
    }
    uint64_t bytes = 0;
    if (pm_sizes(dims, (int)ndims, nrows, row_size, &bytes) != 0 || bytes > r->left)
        return -1;
    const void *rows = pm_take(r, (size_t)bytes);
    if (r->failed ||
        pm_h5model_rows(m, (enum pm_schema_id)id, nfields ? fields : NULL, nfields,
                        (size_t)row_size, dims, 0, nrows, rows) != 0 ||
        m->dsets[m->ndsets - 1].type.size != row_size)
        return -1;
    nattrs = pm_take32(&at);
    for (uint32_t a = 0; a < nattrs; a++) {
        uint32_t aid = pm_take32(&at), nlen = pm_take32(&at);
        const char *name = pm_take(&at, nlen);
        const void *num = pm_take(&at, 8);
        char copy[256];
        if (at.failed || !pm_valid_id(aid) || nlen >= sizeof copy)
            return -1;
        memcpy(copy, name, nlen);
        copy[nlen] = '\0';
        if (pm_h5model_attr_num(m, (enum pm_schema_id)id, (enum pm_schema_id)aid, copy, num) != 0)
            return -1;
    }
    return 0;
}

int pm_h5model_unpack(struct pm_h5model *m, const void *buf, size_t len)
{
    pm_h5model_init(m);
    struct pm_reader r = {buf, len, 0};
    uint32_t magic = pm_take32(&r), version = pm_take32(&r);
    uint32_t ngroups = pm_take32(&r), ndsets = pm_take32(&r);
    if (r.failed || magic != PM_PACK_MAGIC || version != PM_PACK_VERSION)
        return pm_fail(m);
    for (uint32_t g = 0; g < ngroups; g++) {
        uint32_t id = pm_take32(&r);
        if (r.failed || !pm_valid_id(id) || pm_h5model_group(m, (enum pm_schema_id)id) != 0)
            return pm_fail(m);
    }
    for (uint32_t i = 0; i < ndsets; i++)
        if (pm_unpack_dset(m, &r) != 0)
            return pm_fail(m);
    return r.left == 0 ? 0 : pm_fail(m);
}

/* ---- joining the ranks' rows ---------------------------------------------------- */

static const struct pm_h5m_dset *pm_find(const struct pm_h5model *m, enum pm_schema_id id)
{
    for (size_t i = 0; i < m->ndsets; i++)
        if (m->dsets[i].id == id)
            return &m->dsets[i];
    return NULL;
}

static int pm_same_shape(const struct pm_h5m_dset *a, const struct pm_h5m_dset *b)
{
    if (a->ndims != b->ndims || a->type.type != b->type.type || a->type.size != b->type.size ||
        a->type.nfields != b->type.nfields)
        return 0;
    for (int j = 1; j < a->ndims; j++)
        if (a->dims[j] != b->dims[j])
            return 0;
    for (size_t f = 0; f < a->type.nfields; f++)
        if (a->type.fields[f].id != b->type.fields[f].id ||
            a->type.fields[f].offset != b->type.fields[f].offset)
            return 0;
    return 1;
}

int pm_h5model_join(struct pm_h5model *out, const struct pm_h5model *parts, size_t nparts)
{
    errno = ENOMEM;
    if (out->failed || nparts == 0)
        return pm_fail(out);
    const struct pm_h5model *first = &parts[0];
    for (size_t g = 0; g < first->ngroups; g++)
        if (pm_h5model_group(out, first->groups[g].id) != 0)
            return -1;
    for (size_t i = 0; i < first->ndsets; i++) {
        const struct pm_h5m_dset *d0 = &first->dsets[i];
        uint64_t total = 0;
        for (size_t p = 0; p < nparts; p++) {
            const struct pm_h5m_dset *d = pm_find(&parts[p], d0->id);
            if (!d || !pm_same_shape(d0, d)) {
                errno = EINVAL;
                return pm_fail(out);
            }
            total += d->nrows;
        }
        size_t row = pm_h5model_row_bytes(d0);
        uint64_t bytes = 0;
        unsigned char *rows = pm_mul(total, row, &bytes) == 0 ? malloc(bytes + 1) : NULL;
        if (!rows) {
            errno = ENOMEM;
            return pm_fail(out);
        }
        size_t at = 0;
        for (size_t p = 0; p < nparts; p++) {
            const struct pm_h5m_dset *d = pm_find(&parts[p], d0->id);
            memcpy(rows + at, d->data, (size_t)d->nrows * row);
            at += (size_t)d->nrows * row;
        }
        uint64_t dims[3] = {total, d0->dims[1], d0->dims[2]};
        int rc = pm_h5model_rows(out, d0->id, d0->type.fields, d0->type.nfields, d0->type.size,
                                 dims, 0, total, rows);
        free(rows);
        for (size_t a = 0; rc == 0 && a < d0->attrs.n; a++)
            rc = pm_h5model_attr_num(out, d0->id, d0->attrs.a[a].id, d0->attrs.a[a].name,
                                     d0->attrs.a[a].num);
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* perfmark's own HDF5 encoder (runtime/file/pm_h5enc.c) against the HDF5 library.
 *
 * Every group, dataset, attribute and compound member of the schema table
 * is filled with random contents of random shapes (empty ones included),
 * encoded by perfmark, and read back through the HDF5 library: every value
 * must be what went in. The same model written by the HDF5 library
 * (pm_h5lib_image) must hold the same content: h5diff, an HDF5 tool of its
 * own, compares the two files object by object. The object headers, walked
 * byte by byte from the superblock, must be the kinds other readers than
 * the HDF5 library expect (jsfive, for one, refuses any other): version 2
 * with flags 0x02 alone (no phase-change values, creation order or times)
 * for an object of at most 8 attributes, version 1 (no attribute info
 * message, messages padded to 8 bytes) for one of more, at 8 and 9
 * attributes too. Also: strings in several
 * global heap collections, a model the encoder must refuse, the packed
 * rows that travel between ranks (pack, unpack, join; buffers that lie),
 * and every allocation of the encoder failing in turn (linked with
 * --wrap=realloc --wrap=calloc). */
#define _GNU_SOURCE
#include "check.h"
#include "pm_h5enc.h"
#include "pm_h5lib.h"
#include "pm_schema_h5.h"

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>

#define EXPECT(c) CHECK(c, "%s", "")

/* Allocation failures on demand: the n-th realloc or calloc from now fails. */
void *__real_realloc(void *p, size_t n);
void *__real_calloc(size_t k, size_t n);
static long fail_in = -1;
static int count_down(void)
{
    return fail_in >= 0 && fail_in-- == 0;
}
void *__wrap_realloc(void *p, size_t n) { return count_down() ? NULL : __real_realloc(p, n); }
void *__wrap_calloc(size_t k, size_t n) { return count_down() ? NULL : __real_calloc(k, n); }

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

/* Strings of every kind a file holds: empty, NULL, UTF-8, long. */
static const char *const samples[] = {"", "task-clock", "MPI_Allreduce", "omp parallel main.c:38",
                                      "Grüße, 測定", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/" "0123456789012345678901234567890123456789012345678901234567890123456789"};
static const char *some_string(void)
{
    uint64_t k = next() % (sizeof samples / sizeof *samples + 1);
    return k == sizeof samples / sizeof *samples ? NULL : samples[k];
}

static void fill(void *p, enum pm_schema_type t)
{
    if (t == PM_ST_STR) {
        const char *s = some_string();
        memcpy(p, &s, sizeof s);
    } else if (t == PM_ST_STR64) {
        const char *s = some_string();
        memset(p, 0, PM_SCHEMA_STR64);
        snprintf(p, PM_SCHEMA_STR64, "%s", s ? s : "");
    } else if (t == PM_ST_F64) {
        double d = (double)(int64_t)next() / 1e6;
        memcpy(p, &d, 8);
    } else {
        uint64_t v = next();
        memcpy(p, &v, pm_schema_type_size(t));
    }
}

/* The FIELD rows of compound dataset `id`, laid out as a C struct would be. */
static size_t members(enum pm_schema_id id, struct pm_field *f, size_t *row_size)
{
    size_t n = 0, at = 0, plen = strlen(pm_schema_path(id));
    for (int k = 0; k < PM_S_COUNT; k++) {
        const char *p = pm_schema_path((enum pm_schema_id)k);
        if (pm_schema[k].kind != PM_SK_FIELD || strncmp(p, pm_schema_path(id), plen) != 0 ||
            p[plen] != '.')
            continue;
        size_t size = pm_schema_type_size(pm_schema[k].type);
        size_t align = size >= 8 ? 8 : size;
        at = (at + align - 1) / align * align;
        f[n++] = (struct pm_field){(enum pm_schema_id)k, at, size};
        at += size;
    }
    *row_size = (at + 7) / 8 * 8;
    return n;
}

/* The whole schema, random contents; `big`: dims up to 40, else up to 4. */
static void build(struct pm_h5model *m, int big)
{
    pm_h5model_init(m);
    for (int k = 0; k < PM_S_COUNT; k++)
        if (pm_schema[k].kind == PM_SK_GROUP && k != PM_S_ROOT)
            EXPECT(pm_h5model_group(m, (enum pm_schema_id)k) == 0);
    for (int k = 0; k < PM_S_COUNT; k++) {
        enum pm_schema_id id = (enum pm_schema_id)k;
        if (pm_schema[k].kind != PM_SK_DATASET)
            continue;
        struct pm_field f[32];
        size_t row = 0, nf = pm_schema[k].type == PM_ST_COMPOUND ? members(id, f, &row) : 0;
        size_t elem = nf ? row : pm_schema_type_size(pm_schema[k].type);
        uint64_t dims[3] = {0, 0, 0}, n = 1;
        for (int d = 0; d < pm_schema_ndims(id); d++)
            n *= dims[d] = next() % (big ? 41 : 5);
        unsigned char *data = calloc(n * elem + 1, 1);
        for (uint64_t e = 0; e < n; e++) {
            if (!nf)
                fill(data + e * elem, pm_schema[k].type);
            for (size_t i = 0; i < nf; i++)
                fill(data + e * elem + f[i].offset, pm_schema[f[i].id].type);
        }
        EXPECT(pm_h5model_dataset(m, id, nf ? f : NULL, nf, row, dims, data) == 0);
        free(data);
    }
    for (int k = 0; k < PM_S_COUNT; k++) {
        if (pm_schema[k].kind != PM_SK_ATTR)
            continue;
        enum pm_schema_id id = (enum pm_schema_id)k, owner = PM_S_COUNT;
        const char *path = pm_schema_path(id), *at = strchr(path, '@');
        for (int o = 0; o < PM_S_COUNT; o++)
            if (pm_schema[o].kind != PM_SK_ATTR && pm_schema[o].kind != PM_SK_FIELD &&
                strlen(pm_schema_path((enum pm_schema_id)o)) == (size_t)(at - path) &&
                strncmp(pm_schema_path((enum pm_schema_id)o), path, (size_t)(at - path)) == 0)
                owner = (enum pm_schema_id)o;
        EXPECT(owner != PM_S_COUNT);
        int copies = strcmp(at, "@*") == 0 ? 11 : 1;  /* the flag names: more than 8 */
        for (int c = 0; c < copies; c++) {
            char name[32];
            snprintf(name, sizeof name, "FLAG_%02d", c);
            if (pm_schema[k].type == PM_ST_STR) {
                const char *s = some_string();
                EXPECT(pm_h5model_attr_str(m, owner, id, s ? s : "") == 0);
            } else {
                unsigned char v[8];
                fill(v, pm_schema[k].type);
                EXPECT(pm_h5model_attr_num(m, owner, id, copies > 1 ? name : NULL, v) == 0);
            }
        }
    }
    EXPECT(pm_h5model_ok(m));
}

static void write_file(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    EXPECT(f && fwrite(p, 1, len, f) == len);
    fclose(f);
}

/* Each element of dataset d as read back through the library, against the model. */
static void check_dset(hid_t file, const struct pm_h5m_dset *d)
{
    hid_t ds = H5Dopen2(file, pm_schema_path(d->id), H5P_DEFAULT);
    EXPECT(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    hsize_t dims[3] = {0, 0, 0};
    EXPECT(H5Sget_simple_extent_ndims(sp) == d->ndims);
    H5Sget_simple_extent_dims(sp, dims, NULL);
    size_t n = 1;
    for (int i = 0; i < d->ndims; i++) {
        EXPECT(dims[i] == d->dims[i]);
        n *= (size_t)dims[i];
    }
    /* The memory type the model's data has. */
    hid_t mt;
    if (d->type.type == PM_ST_COMPOUND) {
        mt = H5Tcreate(H5T_COMPOUND, d->type.size);
        for (size_t i = 0; i < d->type.nfields; i++) {
            enum pm_schema_type ft = pm_schema[d->type.fields[i].id].type;
            hid_t t = ft == PM_ST_STR ? H5Tcopy(H5T_C_S1) : ft == PM_ST_STR64 ? H5Tcopy(H5T_C_S1)
                                                                               : H5Tcopy(pm_schema_native(ft));
            if (ft == PM_ST_STR)
                H5Tset_size(t, H5T_VARIABLE), H5Tset_cset(t, H5T_CSET_UTF8);
            if (ft == PM_ST_STR64)
                H5Tset_size(t, PM_SCHEMA_STR64), H5Tset_cset(t, H5T_CSET_UTF8);
            EXPECT(H5Tinsert(mt, pm_schema_name(d->type.fields[i].id), d->type.fields[i].offset, t) >= 0);
            H5Tclose(t);
        }
    } else if (d->type.type == PM_ST_STR || d->type.type == PM_ST_STR64) {
        mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, d->type.type == PM_ST_STR ? H5T_VARIABLE : PM_SCHEMA_STR64);
        H5Tset_cset(mt, H5T_CSET_UTF8);
    } else {
        mt = H5Tcopy(pm_schema_native(d->type.type));
    }
    unsigned char *got = calloc(n * d->type.size + 1, 1);
    if (n)
        EXPECT(H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    const unsigned char *want = d->data;
    for (size_t e = 0; e < n; e++) {
        size_t nf = d->type.type == PM_ST_COMPOUND ? d->type.nfields : 1;
        for (size_t i = 0; i < nf; i++) {
            enum pm_schema_type ft = d->type.type == PM_ST_COMPOUND
                                         ? pm_schema[d->type.fields[i].id].type
                                         : d->type.type;
            size_t off = e * d->type.size + (d->type.type == PM_ST_COMPOUND ? d->type.fields[i].offset : 0);
            if (ft == PM_ST_STR) {
                const char *a, *b;
                memcpy(&a, want + off, sizeof a), memcpy(&b, got + off, sizeof b);
                EXPECT((a == NULL) == (b == NULL));
                EXPECT(!a || strcmp(a, b) == 0);
            } else {
                EXPECT(memcmp(want + off, got + off, pm_schema_type_size(ft)) == 0);
            }
        }
    }
    if (n)
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, got);
    free(got);
    H5Tclose(mt), H5Sclose(sp), H5Dclose(ds);
}

static void check_attrs(hid_t loc, const struct pm_h5m_attrs *attrs)
{
    for (size_t i = 0; i < attrs->n; i++) {
        const struct pm_h5m_attr *at = &attrs->a[i];
        hid_t a = H5Aopen(loc, at->name, H5P_DEFAULT);
        EXPECT(a >= 0);
        enum pm_schema_type t = pm_schema[at->id].type;
        if (t == PM_ST_STR) {
            hid_t st = H5Tcopy(H5T_C_S1);
            H5Tset_size(st, H5T_VARIABLE), H5Tset_cset(st, H5T_CSET_UTF8);
            char *s = NULL;
            EXPECT(H5Aread(a, st, &s) >= 0 && s && strcmp(s, at->str) == 0);
            free(s);
            H5Tclose(st);
        } else {
            unsigned char v[8] = {0};
            EXPECT(H5Aread(a, pm_schema_native(t), v) >= 0);
            EXPECT(memcmp(v, at->num, pm_schema_type_size(t)) == 0);
        }
        H5Aclose(a);
    }
}

static void check_file(const char *path, const struct pm_h5model *m)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    EXPECT(f >= 0);
    for (size_t i = 0; i < m->ndsets; i++) {
        check_dset(f, &m->dsets[i]);
        hid_t ds = H5Dopen2(f, pm_schema_path(m->dsets[i].id), H5P_DEFAULT);
        check_attrs(ds, &m->dsets[i].attrs);
        H5Dclose(ds);
    }
    for (size_t g = 0; g < m->ngroups; g++) {
        hid_t grp = H5Gopen2(f, m->groups[g].id == PM_S_ROOT ? "/" : pm_schema_path(m->groups[g].id), H5P_DEFAULT);
        EXPECT(grp >= 0);
        H5G_info_t info;
        EXPECT(H5Gget_info(grp, &info) >= 0);
        check_attrs(grp, &m->groups[g].attrs);
        H5Gclose(grp);
    }
    H5Fclose(f);
}

static int h5diff_same(const char *a, const char *b)
{
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", 1);
        if (null >= 0)
            dup2(null, 1);
        execlp("h5diff", "h5diff", a, b, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        printf("h5diff not installed (hdf5-tools): the library comparison is skipped\n");
        return 1;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ---- object headers, byte by byte ---- */

struct hdr_count {
    size_t v1, v2, objects;
};

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* The object header at `addr` and, through its link messages, every object
 * below it: each of a kind other readers take (see the top of this file). */
static void walk_header(const unsigned char *img, size_t len, uint64_t addr, struct hdr_count *c,
                        int depth)
{
    EXPECT(depth < 8 && addr < len && len - addr >= 16);
    if (depth >= 8 || addr >= len || len - addr < 16)
        return;
    const unsigned char *h = img + addr, *msg, *end;
    int version;
    size_t nattrs = 0, nainfo = 0, nmsgs = 0, want_msgs = 0;
    if (memcmp(h, "OHDR", 4) == 0) {
        version = 2;
        EXPECT(h[4] == 2);
        CHECK(h[5] == 0x02, "object header at %llu: flags 0x%02x, not 0x02 alone",
              (unsigned long long)addr, h[5]);
        /* what other flags would add: times, phase-change values, a wider size */
        size_t at = 6 + (h[5] & 0x20 ? 16 : 0) + (h[5] & 0x10 ? 4 : 0), width = (size_t)1 << (h[5] & 3);
        size_t chunk = (size_t)le(h + at, (int)width);
        at += width;
        EXPECT(chunk + at + 4 <= len - addr && !(h[5] & 0x04));
        if (chunk + at + 4 > len - addr || (h[5] & 0x04))
            return;
        EXPECT(le(h + at + chunk, 4) == pm_h5enc_checksum(h, at + chunk));
        msg = h + at, end = msg + chunk;
        c->v2++;
    } else {
        version = 1;
        CHECK(h[0] == 1 && h[1] == 0, "object header at %llu: neither OHDR nor version 1",
              (unsigned long long)addr);
        want_msgs = (size_t)le(h + 2, 2);
        EXPECT(le(h + 4, 4) == 1 && le(h + 12, 4) == 0);
        size_t chunk = (size_t)le(h + 8, 4);
        EXPECT(chunk <= len - addr - 16);
        if (chunk > len - addr - 16)
            return;
        msg = h + 16, end = msg + chunk;
        c->v1++;
    }
    c->objects++;
    while (msg < end) {
        unsigned type = version == 2 ? msg[0] : (unsigned)le(msg, 2);
        size_t size = (size_t)le(msg + (version == 2 ? 1 : 2), 2);
        const unsigned char *data = msg + (version == 2 ? 4 : 8);
        EXPECT(size <= (size_t)(end - data));
        if (size > (size_t)(end - data))
            return;
        if (version == 1)
            EXPECT(size % 8 == 0 && msg[5] == 0 && msg[6] == 0 && msg[7] == 0);
        nmsgs++;
        nattrs += type == 0x0c;
        nainfo += type == 0x15;
        if (type == 0x06) { /* a link: version 1, flags, name, hard link address */
            unsigned flags = data[1];
            const unsigned char *p = data + 2;
            EXPECT(data[0] == 1 && !(flags & 0x08)); /* hard links only */
            if (flags & 0x04)
                p += 8;
            if (flags & 0x10)
                p++;
            size_t lenbytes = (size_t)1 << (flags & 3), name = (size_t)le(p, (int)lenbytes);
            p += lenbytes + name;
            EXPECT(p + 8 <= data + size);
            if (p + 8 <= data + size)
                walk_header(img, len, le(p, 8), c, depth + 1);
        }
        msg = data + size;
    }
    if (version == 2) {
        CHECK(nattrs <= 8, "a version-2 object header of %zu attributes", nattrs);
        EXPECT(nainfo == (nattrs > 0));
    } else {
        CHECK(nattrs > 8, "a version-1 object header of %zu attributes", nattrs);
        EXPECT(nainfo == 0 && nmsgs == want_msgs);
    }
}

static struct hdr_count check_headers(const void *image, size_t len, const struct pm_h5model *m)
{
    const unsigned char *img = image;
    struct hdr_count c = {0, 0, 0};
    EXPECT(len >= 48 && memcmp(img, "\211HDF\r\n\032\n", 8) == 0 && img[8] == 2);
    if (len >= 48)
        walk_header(img, len, le(img + 36, 8), &c, 0);
    EXPECT(c.objects == m->ndsets + m->ngroups);
    return c;
}

static void round_trip(const char *dir, int seed, int big)
{
    rng = 88172645463325252ull + (uint64_t)seed * 7919;
    struct pm_h5model m;
    build(&m, big);
    void *own = NULL, *lib = NULL;
    size_t own_len = 0, lib_len = 0;
    char err[256] = "", a[512], b[512];
    EXPECT(pm_h5enc_image(&m, &own, &own_len) == 0);
    EXPECT(pm_h5lib_image(&m, &lib, &lib_len, err, sizeof err) == 0);
    snprintf(a, sizeof a, "%s/own-%d.h5", dir, seed);
    snprintf(b, sizeof b, "%s/lib-%d.h5", dir, seed);
    write_file(a, own, own_len);
    write_file(b, lib, lib_len);
    check_file(a, &m);
    check_file(b, &m);
    EXPECT(h5diff_same(a, b));
    struct hdr_count c = check_headers(own, own_len, &m);
    EXPECT(c.v1 >= 2); /* the root group's attributes and the flag names: more than 8 */
    printf("seed %d%s: %zu datasets, perfmark %zu bytes, HDF5 %zu bytes: same content; "
           "object headers: %zu of version 2, %zu of version 1\n", seed,
           big ? " (large dims)" : "", m.ndsets, own_len, lib_len, c.v2, c.v1);
    free(own), free(lib);
    pm_h5model_free(&m);
}

/* An object of 0 to 12 attributes: a version-2 header up to 8, version 1
 * above, read back and the same as the library's file either way. */
static void attribute_counts(const char *dir)
{
    for (int n = 0; n <= 12; n++) {
        struct pm_h5model m;
        pm_h5model_init(&m);
        EXPECT(pm_h5model_group(&m, PM_S_REGION) == 0);
        uint64_t dims[2] = {1, 1};
        uint32_t bits = 5;
        EXPECT(pm_h5model_dataset(&m, PM_S_REGION_FLAGS, NULL, 0, 0, dims, &bits) == 0);
        for (int k = 0; k < n; k++) {
            char name[32];
            uint32_t bit = 1u << k;
            snprintf(name, sizeof name, "FLAG_%02d", k);
            EXPECT(pm_h5model_attr_num(&m, PM_S_REGION_FLAGS, PM_S_REGION_FLAG_NAME, name, &bit) == 0);
        }
        void *own = NULL, *lib = NULL;
        size_t own_len = 0, lib_len = 0;
        char err[256] = "", a[512], b[512];
        EXPECT(pm_h5enc_image(&m, &own, &own_len) == 0);
        EXPECT(pm_h5lib_image(&m, &lib, &lib_len, err, sizeof err) == 0);
        struct hdr_count c = check_headers(own, own_len, &m);
        CHECK(c.v1 == (n > 8) && c.v2 == 3 - c.v1, "%d attributes: %zu version-1 headers", n, c.v1);
        snprintf(a, sizeof a, "%s/attrs-own-%d.h5", dir, n);
        snprintf(b, sizeof b, "%s/attrs-lib-%d.h5", dir, n);
        write_file(a, own, own_len);
        write_file(b, lib, lib_len);
        check_file(a, &m);
        EXPECT(h5diff_same(a, b));
        free(own), free(lib);
        pm_h5model_free(&m);
    }
    printf("a dataset of 0 to 12 attributes: version-2 header up to 8, version 1 above\n");
}

/* More strings than one heap collection holds (65000 objects each). */
static void many_strings(const char *dir)
{
    struct pm_h5model m;
    pm_h5model_init(&m);
    enum { N = 140000 };
    char **s = malloc(N * sizeof *s), *buf = malloc((size_t)N * 16);
    for (int i = 0; i < N; i++) {
        s[i] = buf + (size_t)i * 16;
        snprintf(s[i], 16, "m%d", i);
    }
    uint64_t dims[1] = {N};
    EXPECT(pm_h5model_dataset(&m, PM_S_MESSAGES, NULL, 0, 0, dims, s) == 0);
    free(s), free(buf);
    void *img = NULL;
    size_t len = 0;
    EXPECT(pm_h5enc_image(&m, &img, &len) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/strings.h5", dir);
    write_file(path, img, len);
    check_file(path, &m);
    printf("%d strings in 3 heap collections: read back\n", N);
    free(img);
    pm_h5model_free(&m);
}

/* Rows split into parts, packed, unpacked and joined: the original back. */
static void pack_join(void)
{
    rng = 424242;
    struct pm_h5model whole;
    build(&whole, 0);
    enum { PARTS = 3 };
    struct pm_h5model part[PARTS], back[PARTS], joined;
    for (int p = 0; p < PARTS; p++)
        pm_h5model_init(&part[p]);
    int rows_only = 0;
    for (size_t i = 0; i < whole.ndsets; i++) {
        const struct pm_h5m_dset *d = &whole.dsets[i];
        if (d->type.type == PM_ST_STR || (d->type.type == PM_ST_COMPOUND &&
                                          strstr(pm_schema_path(d->id), "events")))
            continue;  /* only fixed-size rows travel */
        int has_str = 0;
        for (size_t f = 0; f < d->type.nfields; f++)
            has_str |= pm_schema[d->type.fields[f].id].type == PM_ST_STR;
        if (has_str)
            continue;
        uint64_t at = 0;
        for (int p = 0; p < PARTS; p++) {
            uint64_t n = p == PARTS - 1 ? d->dims[0] - at : d->dims[0] / PARTS;
            for (size_t g = 0; g < whole.ngroups; g++)
                pm_h5model_group(&part[p], whole.groups[g].id);
            EXPECT(pm_h5model_rows(&part[p], d->id, d->type.fields, d->type.nfields, d->type.size,
                                  d->dims, at, n,
                                  (const unsigned char *)d->data + at * pm_h5model_row_bytes(d)) == 0);
            for (size_t a = 0; a < d->attrs.n; a++)
                EXPECT(pm_h5model_attr_num(&part[p], d->id, d->attrs.a[a].id, d->attrs.a[a].name,
                                          d->attrs.a[a].num) == 0);
            at += n;
        }
        rows_only++;
    }
    for (int p = 0; p < PARTS; p++) {
        void *buf = NULL;
        size_t len = 0;
        EXPECT(pm_h5model_pack(&part[p], &buf, &len) == 0);
        EXPECT(pm_h5model_unpack(&back[p], buf, len) == 0);
        EXPECT(pm_h5model_unpack(&joined, buf, len / 2) != 0);  /* cut short: refused */
        pm_h5model_free(&joined);
        free(buf);
    }
    pm_h5model_init(&joined);
    EXPECT(pm_h5model_join(&joined, back, PARTS) == 0);
    EXPECT(joined.ndsets == (size_t)rows_only);
    for (size_t i = 0; i < joined.ndsets; i++) {
        const struct pm_h5m_dset *j = &joined.dsets[i], *w = NULL;
        for (size_t k = 0; k < whole.ndsets; k++)
            if (whole.dsets[k].id == j->id)
                w = &whole.dsets[k];
        EXPECT(w && j->dims[0] == w->dims[0] && j->nrows == w->nrows);
        EXPECT(memcmp(j->data, w->data, (size_t)w->nrows * pm_h5model_row_bytes(w)) == 0);
        EXPECT(j->attrs.n == w->attrs.n);
    }
    printf("%d row datasets in %d parts: packed, unpacked, joined back\n", rows_only, PARTS);
    /* A dataset of strings does not travel. */
    struct pm_h5model s;
    pm_h5model_init(&s);
    const char *one[1] = {"x"};
    uint64_t d1[1] = {1};
    EXPECT(pm_h5model_dataset(&s, PM_S_MESSAGES, NULL, 0, 0, d1, one) == 0);
    void *buf = NULL;
    size_t len = 0;
    EXPECT(pm_h5model_pack(&s, &buf, &len) != 0);
    pm_h5model_free(&s);
    for (int p = 0; p < PARTS; p++)
        pm_h5model_free(&part[p]), pm_h5model_free(&back[p]);
    pm_h5model_free(&joined);
    pm_h5model_free(&whole);
}

/* What the model and the encoder refuse. */
static void refusals(void)
{
    struct pm_h5model m;
    pm_h5model_init(&m);
    uint64_t d2[2] = {2, 2}, v[4] = {1, 2, 3, 4};
    /* no /region group yet */
    EXPECT(pm_h5model_dataset(&m, PM_S_REGION_VISITS, NULL, 0, 0, d2, v) != 0);
    EXPECT(!pm_h5model_ok(&m));
    void *img = NULL;
    size_t len = 0;
    EXPECT(pm_h5enc_image(&m, &img, &len) != 0 && img == NULL);
    pm_h5model_free(&m);
    /* partial rows: only the HDF5 library writes slabs */
    pm_h5model_init(&m);
    EXPECT(pm_h5model_group(&m, PM_S_REGION) == 0);
    EXPECT(pm_h5model_rows(&m, PM_S_REGION_VISITS, NULL, 0, 0, d2, 1, 1, v) == 0);
    EXPECT(!pm_h5enc_fits(&m));
    EXPECT(pm_h5enc_image(&m, &img, &len) != 0);
    pm_h5model_free(&m);
    /* too large for the encoder by choice, not by ability */
    pm_h5model_init(&m);
    EXPECT(pm_h5model_group(&m, PM_S_REGION) == 0);
    uint64_t big[2] = {300, 300};
    uint64_t *zeros = calloc(300 * 300, 8);
    EXPECT(pm_h5model_dataset(&m, PM_S_REGION_VISITS, NULL, 0, 0, big, zeros) == 0);
    EXPECT(!pm_h5enc_fits(&m));
    EXPECT(pm_h5enc_image(&m, &img, &len) == 0);
    free(img), free(zeros);
    pm_h5model_free(&m);
    /* a compound member out of step with the table */
    pm_h5model_init(&m);
    struct pm_field bad[1] = {{PM_S_EVENTS_GROUP, 0, 8}};
    uint64_t d1[1] = {1};
    EXPECT(pm_h5model_dataset(&m, PM_S_EVENTS, bad, 1, 8, d1, v) != 0);
    pm_h5model_free(&m);
    printf("refusals: a dataset without its group, partial rows, a member of the wrong size\n");
}

/* Packed buffers that say what is not so: each refused, none read past. */
static void lying_packs(void)
{
    struct pm_h5model m, back;
    pm_h5model_init(&m);
    EXPECT(pm_h5model_group(&m, PM_S_REGION) == 0);
    uint64_t d2[2] = {2, 3}, v[6] = {1, 2, 3, 4, 5, 6};
    EXPECT(pm_h5model_dataset(&m, PM_S_REGION_VISITS, NULL, 0, 0, d2, v) == 0);
    void *buf = NULL;
    size_t len = 0;
    EXPECT(pm_h5model_pack(&m, &buf, &len) == 0);
    unsigned char *b = buf;
    /* layout: 16 header bytes, 2 group ids, then the dataset: id, ndims,
     * dims[3], nrows, row_size, nfields, nattrs, rows */
    size_t ds = 16 + 8, dims0 = ds + 8, rowsize = dims0 + 32;
    struct { size_t at; uint64_t value; const char *what; } lies[] = {
        {dims0 + 8, UINT64_MAX / 2, "inner dims overflowing"},
        {dims0, UINT64_MAX, "rows overflowing"},
        {rowsize, UINT64_MAX / 4, "a row size overflowing"},
        {rowsize, 4096, "more bytes than the buffer"},
        {ds, PM_S_MESSAGES, "a dataset of strings"},
    };
    for (size_t i = 0; i < sizeof lies / sizeof *lies; i++) {
        unsigned char *copy = malloc(len);
        memcpy(copy, b, len);
        if (lies[i].value == PM_S_MESSAGES) {
            uint32_t id = PM_S_MESSAGES, one = 1;
            memcpy(copy + ds, &id, 4), memcpy(copy + ds + 4, &one, 4);
            uint64_t rows = 2, dims[3] = {2, 0, 0}, size = 8;
            memcpy(copy + dims0, dims, 24), memcpy(copy + dims0 + 24, &rows, 8);
            memcpy(copy + rowsize, &size, 8);
        } else if (lies[i].at == dims0) {
            memcpy(copy + dims0, &lies[i].value, 8);
            memcpy(copy + dims0 + 24, &lies[i].value, 8); /* nrows as many */
        } else {
            memcpy(copy + lies[i].at, &lies[i].value, 8);
        }
        int rc = pm_h5model_unpack(&back, copy, len);
        CHECK(rc != 0, "a packed buffer with %s accepted", lies[i].what);
        pm_h5model_free(&back);
        free(copy);
    }
    free(buf);
    /* what does not travel: group attributes */
    int32_t v32 = 1;
    EXPECT(pm_h5model_attr_num(&m, PM_S_ROOT, PM_S_RANKS, NULL, &v32) == 0);
    EXPECT(pm_h5model_pack(&m, &buf, &len) != 0);
    pm_h5model_free(&m);
    printf("packed buffers with overflowing sizes, short rows or strings: refused\n");
}

/* Names once: a second attribute of a name, a second dataset of a row. */
static void duplicates(void)
{
    struct pm_h5model m;
    pm_h5model_init(&m);
    int32_t one = 1;
    EXPECT(pm_h5model_attr_num(&m, PM_S_ROOT, PM_S_RANKS, NULL, &one) == 0);
    EXPECT(pm_h5model_attr_num(&m, PM_S_ROOT, PM_S_RANKS, NULL, &one) != 0);
    pm_h5model_free(&m);
    pm_h5model_init(&m);
    const char *msg[1] = {"x"};
    uint64_t d1[1] = {1};
    EXPECT(pm_h5model_dataset(&m, PM_S_MESSAGES, NULL, 0, 0, d1, msg) == 0);
    EXPECT(pm_h5model_dataset(&m, PM_S_MESSAGES, NULL, 0, 0, d1, msg) != 0);
    EXPECT(!pm_h5model_ok(&m));
    pm_h5model_free(&m);
    printf("a second attribute of a name, a second dataset of a row: refused\n");
}

/* Every allocation of the encoder failing in turn: -1 and ENOMEM, never a
 * crash or a file. */
static void out_of_memory(void)
{
    rng = 5150;
    struct pm_h5model m;
    build(&m, 0);
    long step = 0;
    for (;; step++) {
        void *img = NULL;
        size_t len = 0;
        fail_in = step;
        int rc = pm_h5enc_image(&m, &img, &len);
        int failed = fail_in < 0;  /* the countdown reached its allocation */
        fail_in = -1;
        if (!failed) {
            EXPECT(rc == 0);
            free(img);
            break;
        }
        EXPECT(rc != 0 && errno == ENOMEM && img == NULL && len == 0);
        free(img);
    }
    pm_h5model_free(&m);
    printf("each of the encoder's %ld allocations failing: refused cleanly\n", step);
}

int main(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    char dir[] = "/tmp/perfmark-h5enc.XXXXXX";
    EXPECT(mkdtemp(dir) != NULL);
    /* lookup3's own check value ("Four score and seven years ago", 0) */
    const char *fs = "Four score and seven years ago";
    EXPECT(pm_h5enc_checksum(fs, strlen(fs)) == 0x17770551u);
    for (int seed = 1; seed <= 12; seed++)
        round_trip(dir, seed, seed > 9);
    attribute_counts(dir);
    many_strings(dir);
    pack_join();
    refusals();
    lying_packs();
    duplicates();
    out_of_memory();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        printf("could not remove %s\n", dir);
    return TEST_DONE("unit_h5enc");
}

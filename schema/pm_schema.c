#include "pm_schema.h"

#include <string.h>

const struct pm_schema_entry pm_schema[PM_S_COUNT] = {
#define PM_SCHEMA(id, kind, path, dims, type, since, rule, meaning) \
    [PM_S_##id] = {#id, PM_SK_##kind, path, dims, PM_ST_##type, since, PM_SR_##rule, meaning},
#include "pm_schema.def"
#undef PM_SCHEMA
};

const char *pm_schema_name(enum pm_schema_id id)
{
    const char *p = pm_schema[id].path;
    const char *cut = strrchr(p, pm_schema[id].kind == PM_SK_ATTR    ? '@'
                                 : pm_schema[id].kind == PM_SK_FIELD ? '.'
                                                                     : '/');
    return cut && cut[1] ? cut + 1 : p;
}

int pm_schema_ndims(enum pm_schema_id id)
{
    const char *d = pm_schema[id].dims;
    int n = *d ? 1 : 0;
    for (; *d; d++)
        n += *d == ',';
    return n;
}

size_t pm_schema_type_size(enum pm_schema_type type)
{
    switch (type) {
    case PM_ST_U8: return 1;
    case PM_ST_I32: case PM_ST_U32: return 4;
    case PM_ST_I64: case PM_ST_U64: case PM_ST_F64: return 8;
    case PM_ST_STR: return sizeof(char *);
    case PM_ST_STR64: return PM_SCHEMA_STR64;
    default: return 0;
    }
}

const char *pm_schema_kind_name(enum pm_schema_kind kind)
{
    static const char *const names[] = {"group", "dataset", "attribute", "field"};
    return names[kind];
}

const char *pm_schema_type_name(enum pm_schema_type type)
{
    static const char *const names[] = {"none", "compound", "int32", "uint8", "uint32",
                                        "int64", "uint64", "float64", "string", "string64"};
    return names[type];
}

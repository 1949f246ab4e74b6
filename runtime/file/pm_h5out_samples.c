#include "pm_h5out_samples.h"
#include "pm_flags.h"

#include <stdlib.h>
#include <string.h>

/* ---- this process's sparse rows ---------------------------------------------- */

struct pm_rows_builder {
    struct pm_sample_rows *r;
    const struct pm_modules *mods;
    int32_t *local;  /* per snapshot module: local index + 1, 0 unused */
    size_t hits_cap, chains_cap, frames_cap;
    int failed;
};

static int pm_grow_rows(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 256;
    while (cap2 < need)
        cap2 *= 2;
    void *grown = realloc(*p, cap2 * size);
    if (!grown)
        return -1;
    *p = grown;
    *cap = cap2;
    return 0;
}

/* (module, offset) of an instruction address; the module numbered in
 * first-use order. */
static void pm_locate(struct pm_rows_builder *b, uint64_t ip, int32_t *module, uint64_t *offset)
{
    int k = ip == PM_SAMPLE_OTHER_IP || !b->mods ? -1 : pm_modules_find(b->mods, ip);
    *module = -1;
    *offset = ip;
    if (k < 0)
        return;
    if (!b->local[k]) {
        struct pm_sample_rows *r = b->r;
        const struct pm_module *m = &b->mods->m[k];
        struct pm_module_desc *grown =
            realloc(r->modules, ((size_t)r->nmodules + 1) * sizeof *grown);
        if (!grown) {
            b->failed = 1;
            return;
        }
        r->modules = grown;
        r->modules[r->nmodules] = (struct pm_module_desc){m->build_id, m->path};
        b->local[k] = ++r->nmodules;
    }
    *module = b->local[k] - 1;
    *offset = ip - b->mods->m[k].base;
}

/* Thread t's chains as rows; first chain's row returned in *chain0. */
static void pm_add_chains(struct pm_rows_builder *b, const struct pm_sampler *s, size_t *chain0)
{
    struct pm_sample_rows *r = b->r;
    *chain0 = r->nchains;
    if (pm_grow_rows((void **)&r->chains, &b->chains_cap, r->nchains + s->nchains,
                     sizeof *r->chains) != 0 ||
        pm_grow_rows((void **)&r->frames, &b->frames_cap, r->nframes + s->chain_ips_used,
                     sizeof *r->frames) != 0) {
        b->failed = 1;
        return;
    }
    for (uint32_t k = 0; k < s->nchains; k++) {
        r->chains[r->nchains++] = (struct pm_h5_chain){r->nframes, (int32_t)s->chain_len[k]};
        for (uint32_t i = 0; i < s->chain_len[k]; i++) {
            struct pm_h5_frame *f = &r->frames[r->nframes++];
            pm_locate(b, s->chain_ips[s->chain_start[k] + i], &f->module, &f->offset);
        }
    }
}

int pm_sample_rows_build(const struct pm_output *o, int32_t *const *map,
                         struct pm_sample_rows *r)
{
    memset(r, 0, sizeof *r);
    if (!o->sample || !o->sample->n)
        return 0;
    const struct pm_modules *mods = o->modules;
    struct pm_rows_builder b = {.r = r, .mods = mods};
    b.local = calloc(mods && mods->n ? (size_t)mods->n : 1, sizeof *b.local);
    if (!b.local)
        return -1;
    for (int32_t t = 0; t < o->nthreads && !b.failed; t++) {
        const struct pm_sampler *s = &o->threads[t]->smp;
        size_t chain0 = 0;
        pm_add_chains(&b, s, &chain0);
        if (pm_grow_rows((void **)&r->hits, &b.hits_cap, r->nhits + s->nsites, sizeof *r->hits))
            b.failed = 1;
        for (uint32_t i = 0; s->sites && i <= s->mask && !b.failed; i++) {
            const struct pm_sample_site *site = &s->sites[i];
            if (site->event == UINT32_MAX || !site->count)
                continue;
            struct pm_h5_hit *h = &r->hits[r->nhits++];
            h->thread = t;
            h->region = site->node < 0 ? -1 : map[t][site->node];
            h->event = (int32_t)site->event;
            h->count = site->count;
            h->chain = site->chain ? (int64_t)(chain0 + site->chain - 1) : -1;
            pm_locate(&b, site->ip, &h->module, &h->offset);
        }
    }
    free(b.local);
    if (b.failed) {
        pm_sample_rows_free(r);
        return -1;
    }
    return 0;
}

void pm_sample_rows_remap(struct pm_sample_rows *r, const int32_t *to)
{
    for (size_t i = 0; i < r->nhits; i++)
        if (r->hits[i].module >= 0)
            r->hits[i].module = to[r->hits[i].module];
    for (size_t i = 0; i < r->nframes; i++)
        if (r->frames[i].module >= 0)
            r->frames[i].module = to[r->frames[i].module];
}

void pm_sample_rows_free(struct pm_sample_rows *r)
{
    free(r->hits), free(r->chains), free(r->frames), free(r->modules);
    memset(r, 0, sizeof *r);
}

/* ---- the rows phase ------------------------------------------------------------ */

static int pm_write_sample_cells(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                                 const struct pm_slab *s)
{
    const uint64_t T = (uint64_t)o->nthreads, R = s->regions;
    const uint64_t S = o->sample ? (uint64_t)o->sample->n : 0;
    static const enum pm_schema_id region_ids[PM_SN_WORDS] = {
        PM_S_REGION_SAMPLES, PM_S_REGION_SAMPLES_LOST, PM_S_REGION_SAMPLES_THROTTLED};
    static const enum pm_schema_id thread_ids[PM_SN_WORDS] = {
        PM_S_THREAD_SAMPLES, PM_S_THREAD_SAMPLES_LOST, PM_S_THREAD_SAMPLES_THROTTLED};
    uint64_t *cells = calloc(T * R * S + 1, 8), *roots = calloc(T * S + 1, 8);
    int rc = cells && roots && pm_h5model_group(m, PM_S_REGION) == 0 &&
                     pm_h5model_group(m, PM_S_THREAD) == 0
                 ? 0
                 : -1;
    for (int w = 0; w < PM_SN_WORDS && rc == 0; w++) {
        memset(cells, 0, (T * R * S + 1) * 8);
        memset(roots, 0, (T * S + 1) * 8);
        for (uint64_t t = 0; t < T; t++) {
            const struct pm_thread *th = o->threads[t];
            for (uint64_t e = 0; e < S; e++) {
                roots[t * S + e] = pm_sampler_nodestat(&th->smp, -1, (int)e, w);
                for (int32_t n = 0; n < th->nnodes; n++)
                    cells[(t * R + (uint64_t)map[t][n]) * S + e] +=
                        pm_sampler_nodestat(&th->smp, n, (int)e, w);
            }
        }
        const uint64_t d3[3] = {s->thread_total, R, S}, d2[2] = {s->thread_total, S};
        rc |= pm_h5model_rows(m, region_ids[w], NULL, 0, 0, d3, s->thread_offset, T, cells);
        rc |= pm_h5model_rows(m, thread_ids[w], NULL, 0, 0, d2, s->thread_offset, T, roots);
    }
    free(cells), free(roots);
    return rc ? -1 : 0;
}

static int pm_write_hits(struct pm_h5model *m, const struct pm_slab *s)
{
    static const struct pm_field fields[] = {
        PM_FIELD(pm_h5_hit, thread, SAMPLES_HITS_THREAD),
        PM_FIELD(pm_h5_hit, region, SAMPLES_HITS_REGION),
        PM_FIELD(pm_h5_hit, event, SAMPLES_HITS_EVENT),
        PM_FIELD(pm_h5_hit, module, SAMPLES_HITS_MODULE),
        PM_FIELD(pm_h5_hit, offset, SAMPLES_HITS_OFFSET),
        PM_FIELD(pm_h5_hit, count, SAMPLES_HITS_COUNT),
        PM_FIELD(pm_h5_hit, chain, SAMPLES_HITS_CHAIN),
    };
    const struct pm_sample_rows *r = s->samples;
    size_t n = r ? r->nhits : 0;
    struct pm_h5_hit *rows = malloc((n + 1) * sizeof *rows);
    if (!rows)
        return -1;
    for (size_t i = 0; i < n; i++) {
        rows[i] = r->hits[i];
        rows[i].thread += (int32_t)s->thread_base;
        if (rows[i].chain >= 0)
            rows[i].chain += (int64_t)s->sparse_base[PM_SPARSE_CHAINS];
    }
    uint64_t dims[1] = {s->sparse_total[PM_SPARSE_HITS]};
    int rc = pm_h5model_rows(m, PM_S_SAMPLES_HITS, fields, PM_NFIELDS(fields), sizeof *rows, dims,
                             s->sparse_offset[PM_SPARSE_HITS], n, rows);
    free(rows);
    return rc;
}

static int pm_write_chains(struct pm_h5model *m, const struct pm_slab *s)
{
    static const struct pm_field chain_fields[] = {
        PM_FIELD(pm_h5_chain, first, SAMPLES_CHAINS_FIRST),
        PM_FIELD(pm_h5_chain, length, SAMPLES_CHAINS_LENGTH),
    };
    static const struct pm_field frame_fields[] = {
        PM_FIELD(pm_h5_frame, module, SAMPLES_FRAMES_MODULE),
        PM_FIELD(pm_h5_frame, offset, SAMPLES_FRAMES_OFFSET),
    };
    const struct pm_sample_rows *r = s->samples;
    size_t nc = r ? r->nchains : 0, nf = r ? r->nframes : 0;
    struct pm_h5_chain *chains = malloc((nc + 1) * sizeof *chains);
    if (!chains)
        return -1;
    for (size_t i = 0; i < nc; i++) {
        chains[i] = r->chains[i];
        chains[i].first += s->sparse_base[PM_SPARSE_FRAMES];
    }
    uint64_t dc[1] = {s->sparse_total[PM_SPARSE_CHAINS]}, df[1] = {s->sparse_total[PM_SPARSE_FRAMES]};
    int rc = pm_h5model_rows(m, PM_S_SAMPLES_CHAINS, chain_fields, PM_NFIELDS(chain_fields),
                             sizeof *chains, dc, s->sparse_offset[PM_SPARSE_CHAINS], nc, chains);
    rc |= pm_h5model_rows(m, PM_S_SAMPLES_FRAMES, frame_fields, PM_NFIELDS(frame_fields),
                          sizeof(struct pm_h5_frame), df, s->sparse_offset[PM_SPARSE_FRAMES], nf,
                          r ? r->frames : NULL);
    free(chains);
    return rc ? -1 : 0;
}

int pm_h5out_sample_rows(struct pm_h5model *m, const struct pm_output *o, int32_t *const *map,
                         const struct pm_slab *slab)
{
    int rc = pm_write_sample_cells(m, o, map, slab);
    if (pm_h5model_group(m, PM_S_SAMPLES) != 0)
        return -1;
    rc |= pm_write_hits(m, slab);
    rc |= pm_write_chains(m, slab);
    return rc ? -1 : 0;
}

/* ---- the tables phase ---------------------------------------------------------------- */

struct pm_h5_sample_event {
    const char *name, *requested;
    uint32_t type;
    uint64_t config, period;
    const char *unit;
};

struct pm_h5_module {
    const char *build_id, *path;
};

int pm_h5out_sample_tables(struct pm_h5model *m, const struct pm_output *o,
                           const struct pm_module_desc *modules, int32_t nmodules)
{
    static const struct pm_field event_fields[] = {
        PM_FIELD(pm_h5_sample_event, name, SAMPLES_EVENTS_NAME),
        PM_FIELD(pm_h5_sample_event, requested, SAMPLES_EVENTS_REQUESTED),
        PM_FIELD(pm_h5_sample_event, type, SAMPLES_EVENTS_TYPE),
        PM_FIELD(pm_h5_sample_event, config, SAMPLES_EVENTS_CONFIG),
        PM_FIELD(pm_h5_sample_event, period, SAMPLES_EVENTS_PERIOD),
        PM_FIELD(pm_h5_sample_event, unit, SAMPLES_EVENTS_UNIT),
    };
    static const struct pm_field module_fields[] = {
        PM_FIELD(pm_h5_module, build_id, SAMPLES_MODULES_BUILD_ID),
        PM_FIELD(pm_h5_module, path, SAMPLES_MODULES_PATH),
    };
    _Static_assert(sizeof(struct pm_h5_module) == sizeof(struct pm_module_desc),
                   "/samples/modules rows are the descriptions as they are");
    const struct pm_sample_spec *spec = o->sample;
    int n = spec ? spec->n : 0;
    struct pm_h5_sample_event rows[PM_MAX_SAMPLE_EVENTS + 1];
    for (int i = 0; i < n; i++) {
        const struct pm_sample_event *e = &spec->ev[i];
        rows[i] = (struct pm_h5_sample_event){e->name, e->requested, e->attr.type, e->attr.config,
                                              e->period, e->time_event ? "ns" : "events"};
    }
    if (pm_h5model_group(m, PM_S_SAMPLES) != 0)
        return -1;
    int rc = pm_h5model_attr_str(m, PM_S_SAMPLES, PM_S_SAMPLES_REQUESTED,
                                 spec ? spec->requested : "");
    uint8_t counting = (uint8_t)(spec && spec->counting);
    rc |= pm_h5model_attr_num(m, PM_S_SAMPLES, PM_S_SAMPLES_COUNTING, NULL, &counting);
    int mode = spec && spec->n ? spec->callchain : PM_CHAIN_NONE;
    uint32_t stack = mode == PM_CHAIN_DWARF ? spec->stack_bytes : 0;
    rc |= pm_h5model_attr_str(m, PM_S_SAMPLES, PM_S_SAMPLES_CALLCHAIN, pm_chain_mode_name(mode));
    rc |= pm_h5model_attr_num(m, PM_S_SAMPLES, PM_S_SAMPLES_STACK_BYTES, NULL, &stack);
    uint64_t de[1] = {(uint64_t)n}, dm[1] = {(uint64_t)nmodules};
    rc |= pm_h5model_dataset(m, PM_S_SAMPLES_EVENTS, event_fields, PM_NFIELDS(event_fields),
                             sizeof *rows, de, rows);
    rc |= pm_h5model_dataset(m, PM_S_SAMPLES_MODULES, module_fields, PM_NFIELDS(module_fields),
                             sizeof(struct pm_h5_module), dm, modules);
    return rc ? -1 : 0;
}

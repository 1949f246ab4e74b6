/*
 * read_samples.c — the sampling part of a file (schema revision 7,
 * docs/hdf5-schema.md "/samples"): the sampled events and objects, the
 * losses summed per (region, event) over threads, and the hits, whole
 * (pm_file_load) or a block of rows at a time (pm_file_open, pm_file_hits).
 * Files without /samples read as no sampling.
 */
#include "read_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PM_SE(f) offsetof(struct pm_file_sample_event, f)
static const struct pm_field pm_rd_sample_event_fields[] = {
    {PM_S_SAMPLES_EVENTS_NAME, PM_SE(name)},
    {PM_S_SAMPLES_EVENTS_REQUESTED, PM_SE(requested)},
    {PM_S_SAMPLES_EVENTS_TYPE, PM_SE(type)},
    {PM_S_SAMPLES_EVENTS_CONFIG, PM_SE(config)},
    {PM_S_SAMPLES_EVENTS_PERIOD, PM_SE(period)},
    {PM_S_SAMPLES_EVENTS_UNIT, PM_SE(unit)},
};

#define PM_MD(f) offsetof(struct pm_file_module, f)
static const struct pm_field pm_rd_module_fields[] = {
    {PM_S_SAMPLES_MODULES_BUILD_ID, PM_MD(build_id)},
    {PM_S_SAMPLES_MODULES_PATH, PM_MD(path)},
};

#define PM_HT(f) offsetof(struct pm_file_hit, f)
static const struct pm_field pm_rd_hit_fields[] = {
    {PM_S_SAMPLES_HITS_THREAD, PM_HT(thread)},
    {PM_S_SAMPLES_HITS_REGION, PM_HT(region)},
    {PM_S_SAMPLES_HITS_EVENT, PM_HT(event)},
    {PM_S_SAMPLES_HITS_MODULE, PM_HT(module)},
    {PM_S_SAMPLES_HITS_OFFSET, PM_HT(offset)},
    {PM_S_SAMPLES_HITS_COUNT, PM_HT(count)},
    {PM_S_SAMPLES_HITS_CHAIN, PM_HT(chain)},
};

#define PM_LOSS_BLOCK 4096 /* thread rows of the loss cells read at once */

/* Σ over threads of a [T,R,S] (or [T,S]) dataset of the sampling, into
 * sum[R*S] (sum[S]), a block of thread rows at a time; zeros when the
 * file lacks it. */
static int pm_sum_over_threads(struct pm_rd *rd, const struct pm_file *d, enum pm_schema_id id,
                               size_t cols, uint64_t *sum)
{
    const char *name = pm_schema_path(id);
    int ndims = pm_schema_ndims(id);
    hsize_t dims[3] = {d->T, ndims == 3 ? d->R : d->S, d->S};
    if (!pm_rd_link_exists(rd, name) || !cols || !d->T)
        return 0;
    pm_read_begin("dataset '%s'", name);
    hid_t dset = H5Dopen2(rd->file, name, H5P_DEFAULT);
    hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
    int rc = -1;
    uint64_t *buf = NULL;
    if (space < 0)
        pm_rd_fail(rd, "cannot open %s", name);
    else if (pm_rd_check_shape(rd, name, pm_schema_dims(id), space, ndims, dims) == 0 &&
             (buf = malloc(PM_LOSS_BLOCK * cols * sizeof *buf)) != NULL) {
        rc = 0;
        for (size_t t0 = 0; t0 < d->T && rc == 0; t0 += PM_LOSS_BLOCK) {
            size_t nt = d->T - t0 < PM_LOSS_BLOCK ? d->T - t0 : PM_LOSS_BLOCK;
            hsize_t start[3] = {t0, 0, 0}, count[3] = {nt, dims[1], dims[2]};
            hid_t mspace = H5Screate_simple(ndims, count, NULL);
            struct pm_reason why;
            pm_read_begin("rows %zu-%zu of dataset '%s'", t0, t0 + nt - 1, name);
            if (mspace < 0 ||
                H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                H5Dread(dset, H5T_NATIVE_UINT64, mspace, space, H5P_DEFAULT, buf) < 0)
                rc = pm_rd_fail(rd, "cannot read %s (%s)", name, pm_rd_hdf5_reason(&why));
            for (size_t i = 0; rc == 0 && i < nt * cols; i++)
                sum[i % cols] += buf[i];
            if (mspace >= 0)
                H5Sclose(mspace);
        }
    } else if (!rd->failed) {
        pm_rd_oom(rd);
    }
    free(buf);
    if (space >= 0)
        H5Sclose(space);
    if (dset >= 0)
        H5Dclose(dset);
    return rc;
}

int pm_rd_load_samples(struct pm_rd *rd, struct pm_file *d, int stream)
{
    if (!(d->sample_requested = strdup("")))
        return pm_rd_oom(rd);
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_SAMPLES)))
        return 0;
    /* /samples@requested: the attribute readers look on the group */
    hid_t grp = H5Gopen2(rd->file, pm_schema_path(PM_S_SAMPLES), H5P_DEFAULT);
    if (grp < 0)
        return pm_rd_fail(rd, "cannot open %s", pm_schema_path(PM_S_SAMPLES));
    struct pm_rd on_group = *rd;
    on_group.root = grp;
    char *requested = NULL;
    uint8_t counting = 0;
    int rc = pm_rd_attr_str(&on_group, pm_schema_name(PM_S_SAMPLES_REQUESTED), &requested);
    if (rc == 0 && H5Aexists(grp, pm_schema_name(PM_S_SAMPLES_COUNTING)) > 0)
        rc = pm_rd_attr_int(&on_group, pm_schema_name(PM_S_SAMPLES_COUNTING), H5T_NATIVE_UINT8,
                            &counting);
    d->sample_counting = counting != 0;
    char *mode = NULL;  /* both absent before revision 10 */
    if (rc >= 0 && pm_rd_attr_str(&on_group, pm_schema_name(PM_S_SAMPLES_CALLCHAIN), &mode) < 0)
        rc = -1;
    if (mode)
        snprintf(d->sample_callchain, sizeof d->sample_callchain, "%s", mode);
    free(mode);
    if (rc >= 0 && pm_rd_attr_int(&on_group, pm_schema_name(PM_S_SAMPLES_STACK_BYTES),
                                  H5T_NATIVE_UINT32, &d->sample_stack_bytes) < 0)
        rc = -1;
    H5Gclose(grp);
    if (rc < 0) {
        rd->failed = on_group.failed;
        return -1;
    }
    free(d->sample_requested);
    d->sample_requested = requested;
    if (pm_rd_read_table_opt(rd, PM_S_SAMPLES_EVENTS, pm_rd_sample_event_fields,
                             PM_NFIELDS(pm_rd_sample_event_fields),
                             sizeof(struct pm_file_sample_event), (void **)&d->sample_events,
                             &d->S) < 0 ||
        pm_rd_read_table_opt(rd, PM_S_SAMPLES_MODULES, pm_rd_module_fields,
                             PM_NFIELDS(pm_rd_module_fields), sizeof(struct pm_file_module),
                             (void **)&d->sample_modules, &d->K) < 0)
        return -1;
    size_t RS = d->R * d->S;
    d->sample_lost = calloc(RS + 1, sizeof *d->sample_lost);
    d->sample_throttled = calloc(RS + 1, sizeof *d->sample_throttled);
    d->sample_root_lost = calloc(d->S + 1, sizeof *d->sample_root_lost);
    d->sample_root_throttled = calloc(d->S + 1, sizeof *d->sample_root_throttled);
    if (!d->sample_lost || !d->sample_throttled || !d->sample_root_lost ||
        !d->sample_root_throttled)
        return pm_rd_oom(rd);
    if (pm_sum_over_threads(rd, d, PM_S_REGION_SAMPLES_LOST, RS, d->sample_lost) < 0 ||
        pm_sum_over_threads(rd, d, PM_S_REGION_SAMPLES_THROTTLED, RS, d->sample_throttled) < 0 ||
        pm_sum_over_threads(rd, d, PM_S_THREAD_SAMPLES_LOST, d->S, d->sample_root_lost) < 0 ||
        pm_sum_over_threads(rd, d, PM_S_THREAD_SAMPLES_THROTTLED, d->S,
                            d->sample_root_throttled) < 0)
        return -1;
    if (!pm_rd_link_exists(rd, pm_schema_path(PM_S_SAMPLES_HITS)))
        return 0;
    if (stream) {
        hid_t dset = H5Dopen2(rd->file, pm_schema_path(PM_S_SAMPLES_HITS), H5P_DEFAULT);
        hid_t space = dset >= 0 ? H5Dget_space(dset) : -1;
        hsize_t dims[1] = {PM_ANY};
        int rc = space < 0 ? pm_rd_fail(rd, "cannot open %s", pm_schema_path(PM_S_SAMPLES_HITS))
                           : pm_rd_check_shape(rd, pm_schema_path(PM_S_SAMPLES_HITS), "rows",
                                               space, 1, dims);
        if (rc == 0)
            d->H = (size_t)dims[0];
        if (space >= 0)
            H5Sclose(space);
        if (dset >= 0)
            H5Dclose(dset);
        return rc;
    }
    return pm_rd_read_table_opt(rd, PM_S_SAMPLES_HITS, pm_rd_hit_fields,
                                PM_NFIELDS(pm_rd_hit_fields), sizeof(struct pm_file_hit),
                                (void **)&d->sample_hits, &d->H);
}

#define PM_CH(f) offsetof(struct pm_file_chain, f)
static const struct pm_field pm_rd_chain_fields[] = {
    {PM_S_SAMPLES_CHAINS_FIRST, PM_CH(first)},
    {PM_S_SAMPLES_CHAINS_LENGTH, PM_CH(length)},
};

#define PM_FR(f) offsetof(struct pm_file_frame, f)
static const struct pm_field pm_rd_frame_fields[] = {
    {PM_S_SAMPLES_FRAMES_MODULE, PM_FR(module)},
    {PM_S_SAMPLES_FRAMES_OFFSET, PM_FR(offset)},
};

int pm_file_call_chains(const struct pm_file *d, struct pm_file_chain **chains, size_t *nc,
                        struct pm_file_frame **frames, size_t *nf, char *err, size_t errlen)
{
    *chains = NULL, *frames = NULL, *nc = *nf = 0;
    if (!d->stream) {
        snprintf(err, errlen, "samples: the file is not open");
        return -1;
    }
    struct pm_rd rd = {d->stream->path, err, errlen, 0, d->stream->file, -1, 0};
    if (pm_rd_read_table_opt(&rd, PM_S_SAMPLES_CHAINS, pm_rd_chain_fields,
                             PM_NFIELDS(pm_rd_chain_fields), sizeof **chains, (void **)chains,
                             nc) < 0 ||
        pm_rd_read_table_opt(&rd, PM_S_SAMPLES_FRAMES, pm_rd_frame_fields,
                             PM_NFIELDS(pm_rd_frame_fields), sizeof **frames, (void **)frames,
                             nf) < 0) {
        free(*chains), free(*frames);
        *chains = NULL, *frames = NULL, *nc = *nf = 0;
        return -1;
    }
    return 0;
}

void pm_rd_free_samples(struct pm_file *d)
{
    pm_rd_table_free(d->sample_events, d->S, pm_rd_sample_event_fields,
                     PM_NFIELDS(pm_rd_sample_event_fields), sizeof(struct pm_file_sample_event));
    pm_rd_table_free(d->sample_modules, d->K, pm_rd_module_fields,
                     PM_NFIELDS(pm_rd_module_fields), sizeof(struct pm_file_module));
    free(d->sample_requested);
    free(d->sample_lost), free(d->sample_throttled);
    free(d->sample_root_lost), free(d->sample_root_throttled);
    free(d->sample_hits);
}

int pm_file_hits(const struct pm_file *d, size_t h0, size_t nh, struct pm_file_hit *out,
                 char *err, size_t errlen)
{
    if (h0 > d->H || nh > d->H - h0) {
        snprintf(err, errlen, "samples: rows %zu..%zu asked of %zu", h0, h0 + nh, d->H);
        return -1;
    }
    if (d->sample_hits) {
        memcpy(out, d->sample_hits + h0, nh * sizeof *out);
        return 0;
    }
    if (!d->stream) {
        snprintf(err, errlen, "samples: the file is not open");
        return -1;
    }
    struct pm_rd rd = {d->stream->path, err, errlen, 0, d->stream->file, -1, 0};
    return pm_rd_table_block(&rd, PM_S_SAMPLES_HITS, pm_rd_hit_fields, PM_NFIELDS(pm_rd_hit_fields),
                             sizeof *out, h0, nh, out);
}

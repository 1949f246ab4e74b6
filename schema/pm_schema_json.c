/*
 * pm_schema_json — write the schema table as JSON (build time): what a
 * reader in another language (the Python package) loads instead of keeping
 * its own copy of the paths. usage: pm_schema_json OUT.json
 */
#include "pm_schema.h"

#include "pm_json_str.h"

#include <stdio.h>

static void pm_json_dims(FILE *f, const char *dims)
{
    fputc('[', f);
    for (const char *d = dims; *d; d++)
        if (*d != ',')
            fprintf(f, "%s\"%c\"", d == dims ? "" : ", ", *d);
    fputc(']', f);
}

int main(int argc, char **argv)
{
    FILE *f = argc == 2 ? fopen(argv[1], "w") : NULL;
    if (!f) {
        fprintf(stderr, "usage: pm_schema_json OUT.json\n");
        return 2;
    }
    fprintf(f, "{\n  \"schema_version\": %d,\n  \"revision\": %d,\n", PM_SCHEMA_VERSION,
            PM_SCHEMA_REVISION);
    fprintf(f, "  \"dims\": {\"T\": \"thread rows\", \"R\": \"regions\", \"E\": \"events\", "
               "\"G\": \"kernel counter groups\", \"N\": \"rank rows\", \"M\": \"messages\", "
               "\"S\": \"sampled events\", \"K\": \"sampled objects\", \"H\": \"sample sites\", "
               "\"C\": \"call chains\", \"F\": \"call-chain frames\", "
               "\"I\": \"interval rows of threads\", \"J\": \"interval rows of processes\", "
               "\"P\": \"watched CPUs\", \"Q\": \"other processes\", "
               "\"V\": \"interval rows of CPUs\", \"B\": \"bytes of the summary state\", "
               "\"X\": \"kept ranks\", \"Y\": \"thread rows the summary names\", "
               "\"A\": \"summary rows of region and quantity\", \"D\": \"summary region rows\", "
               "\"W\": \"summary rows of MPI function and quantity\", "
               "\"O\": \"ranks of the summary's MPI shares\", \"z\": \"columns of region_stat and mpi_stat\", "
               "\"l\": \"columns of region_more\", \"u\": \"values of run_stat\", "
               "\"o\": \"columns of rank_share\", \"L\": \"summary TopDown rows\", "
               "\"x\": \"columns of topdown\", \"y\": \"columns of topdown_slots\", "
               "\"k\": \"columns of region_count\", \"j\": \"values of run_count\"},\n");
    fprintf(f, "  \"entries\": [\n");
    for (int i = 0; i < PM_S_COUNT; i++) {
        const struct pm_schema_entry *e = &pm_schema[i];
        fprintf(f, "    {\"id\": ");
        pm_json_put_str(f, e->id);
        fprintf(f, ", \"kind\": \"%s\", \"path\": ", pm_schema_kind_name(e->kind));
        pm_json_put_str(f, e->path);
        fprintf(f, ", \"name\": ");
        pm_json_put_str(f, pm_schema_name((enum pm_schema_id)i));
        fprintf(f, ", \"dims\": ");
        pm_json_dims(f, e->dims);
        fprintf(f, ", \"type\": \"%s\", \"since\": %d, \"rule\": \"%s\", \"meaning\": ",
                pm_schema_type_name(e->type), e->since,
                e->rule == PM_SR_NEEDED ? "needed" : "default");
        pm_json_put_str(f, e->meaning);
        fprintf(f, "}%s\n", i + 1 < PM_S_COUNT ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : 1;
}

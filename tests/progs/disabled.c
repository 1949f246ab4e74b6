/* Built with -DPERFMARK_DISABLE and NOT linked with libperfmark: every form
 * of the API must compile to an inline no-op with the documented results
 * (functions -1, a negative handle, perfmark_active() 0). */
#include <perfmark.h>
#include <stdio.h>

int main(void)
{
    int bad = 0;
    PERFMARK_REGION_BEGIN("gone");
    PERFMARK_REGION_END("gone");
    bad += perfmark_region_begin("gone") != -1;
    bad += perfmark_region_end("gone") != -1;
    perfmark_region_t h = perfmark_region("gone");
    bad += h >= 0;
    bad += perfmark_region_enter(h) != -1;
    bad += perfmark_region_exit(h) != -1;
    bad += perfmark_active() != 0;
    printf("disabled markers: %s\n", bad ? "WRONG RESULTS" : "ok");
    return bad;
}

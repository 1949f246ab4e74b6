/* Built with -DPERFMARK_DISABLE and NOT linked with libperfmark: it only
 * links if the macros compile to nothing. */
#include <perfmark.h>
#include <stdio.h>

int main(void)
{
    PERFMARK_REGION_BEGIN("gone");
    PERFMARK_REGION_END("gone");
    puts("disabled markers: ok");
    return 0;
}

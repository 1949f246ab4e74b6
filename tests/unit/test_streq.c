/* pm_streq against strcmp semantics, with the caller's string placed so that
 * it ends right before an unmapped page (any read past a page would crash),
 * at every alignment, for every length up to 40 and every mismatch position. */
#include "check.h"
#include "pm_streq.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char *interned_copy(const char *s)
{
    size_t len = strlen(s);
    char *p = calloc(1, (len + 8) & ~(size_t)7);
    memcpy(p, s, len);
    return p;
}

int main(void)
{
    /* two pages; the second is made inaccessible */
    char *pages = mmap(NULL, 2 * PM_PAGE_SIZE, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(pages + PM_PAGE_SIZE, PM_PAGE_SIZE, PROT_NONE);
    char *page_end = pages + PM_PAGE_SIZE;
    char ref[64];
    for (int len = 0; len <= 40; len++) {
        for (int i = 0; i < len; i++)
            ref[i] = (char)('a' + (i * 7) % 26);
        ref[len] = '\0';
        char *interned = interned_copy(ref);
        /* the caller's copy ends exactly at the guard page */
        char *name = page_end - (len + 1);
        memcpy(name, ref, (size_t)len + 1);
        CHECK(pm_streq(name, interned, 1024), "len %d: equal strings differ", len);
        for (int pos = 0; pos <= len; pos++) {   /* differ at pos (or longer/shorter) */
            char saved = name[pos];
            name[pos] = pos < len ? 'Z' : 'Z';
            if (pos == len) {          /* name longer than interned: cannot extend at page end */
                name[pos] = saved;
                char other[64];
                memcpy(other, ref, (size_t)len + 1);
                other[len] = 'x';
                other[len + 1] = '\0';
                CHECK(!pm_streq(other, interned, 1024), "len %d: longer name equal", len);
                continue;
            }
            CHECK(!pm_streq(name, interned, 1024), "len %d: differs at %d but equal", len, pos);
            name[pos] = saved;
            /* shorter name: terminate early */
            name[pos] = '\0';
            CHECK(!pm_streq(name, interned, 1024), "len %d: prefix of %d equal", len, pos);
            name[pos] = saved;
        }
        /* garbage after the terminator must not matter */
        char buf[80];
        memset(buf, 'Q', sizeof buf);
        for (int off = 0; off < 8; off++) {
            memcpy(buf + off, ref, (size_t)len + 1);
            CHECK(pm_streq(buf + off, interned, 1024), "len %d off %d: garbage after NUL", len, off);
            memset(buf, 'Q', sizeof buf);
        }
        free(interned);
    }
    /* truncation: a name longer than max equals its truncated interned copy */
    char longname[2100];
    memset(longname, 'L', 2000);
    longname[2000] = '\0';
    char *trunc = calloc(1, 1024 + 8);
    memset(trunc, 'L', 1024);
    CHECK(pm_streq(longname, trunc, 1024), "long name vs its truncation");
    free(trunc);
    return TEST_DONE("test_streq");
}

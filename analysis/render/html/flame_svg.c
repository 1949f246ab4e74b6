/*
 * flame_svg.c — flame graphs (icicles: the whole run on top, the region
 * paths below it, then the call paths) drawn as SVG, so that the page
 * shows them as they are without any script; hovering a frame shows its
 * <title>: its name, samples and share.
 *
 * One small script, allowed by its hash in the page's
 * Content-Security-Policy and nothing else, adds the rest: a click zooms on
 * a frame (its ancestors span the width, what is not under it hides; a
 * click on the top frame or "reset" zooms out), and the search box marks
 * the frames whose name holds the text and says the share of samples under
 * them. It reads names from the <title> elements' text and writes only
 * attributes and textContent: a name is never parsed as markup.
 */
#include "render/html/flame_svg.h"
#include "render/common/render_common.h"
#include "render/common/sha256.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PM_FG_W 1200        /* the graph's width in px */
#define PM_FG_ROW 17        /* a frame's height */
#define PM_FG_MAX_NODES 3000 /* frames drawn at most per graph */
#define PM_FG_CHAR_W 7.0    /* px per character of the 11px labels */

static const char pm_fg_script[] =
    "(function(){'use strict';var W=1200;"
    "function name(g){return g.firstElementChild.textContent.split('\\n')[0];}"
    "function fit(g,w){var t=g.querySelector('text');if(!t)return;var n=name(g),"
    "c=Math.floor((w-6)/7);t.textContent=c<3?'':n.length<=c?n:n.slice(0,c-1)+'\\u2026';}"
    "function nodes(svg){return Array.prototype.slice.call(svg.querySelectorAll('g.fg'));}"
    "function zoom(svg,z){var zs=+z.getAttribute('data-s'),zn=+z.getAttribute('data-n'),"
    "zd=+z.getAttribute('data-d');nodes(svg).forEach(function(g){var s=+g.getAttribute('data-s'),"
    "n=+g.getAttribute('data-n'),d=+g.getAttribute('data-d'),r=g.querySelector('rect'),"
    "t=g.querySelector('text'),x,w;if(d<zd){if(s<=zs&&s+n>=zs+zn){x=0;w=W;}else{w=-1;}}"
    "else if(s>=zs&&s+n<=zs+zn){x=(s-zs)/zn*W;w=n/zn*W;}else{w=-1;}"
    "if(w<0){g.setAttribute('display','none');return;}g.removeAttribute('display');"
    "r.setAttribute('x',x.toFixed(2));r.setAttribute('width',Math.max(w-0.5,0.1).toFixed(2));"
    "if(t)t.setAttribute('x',(x+3).toFixed(2));fit(g,w);});"
    "svg.setAttribute('data-zoom',z.getAttribute('data-i'));}"
    "function search(svg,q,info){q=q.toLowerCase();var end=-1,hit=0,total=0;"
    "nodes(svg).forEach(function(g){var s=+g.getAttribute('data-s'),n=+g.getAttribute('data-n');"
    "if(g.getAttribute('data-d')==='0')total=n;var m=q!==''&&name(g).toLowerCase().indexOf(q)>=0;"
    "g.setAttribute('class',m?'fg fg-hit':'fg');if(m&&s>=end){hit+=n;end=s+n;}});"
    "info.textContent=q===''?'':'\"'+q+'\": '+(total?(100*hit/total).toFixed(1):'0')+"
    "' % of the samples';}"
    "Array.prototype.forEach.call(document.querySelectorAll('svg.flame'),function(svg){"
    "var box=document.getElementById(svg.id+'-search'),info=document.getElementById(svg.id+'-info'),"
    "reset=document.getElementById(svg.id+'-reset'),all=nodes(svg);"
    "all.forEach(function(g){g.addEventListener('click',function(){zoom(svg,g);});});"
    "if(reset)reset.addEventListener('click',function(){zoom(svg,all[0]);});"
    "if(box)box.addEventListener('input',function(){search(svg,box.value,info);});});})();";

const char *pm_flame_script_hash(void)
{
    static char csp[64];
    if (!csp[0]) {
        char b64[45];
        pm_sha256_base64(pm_fg_script, strlen(pm_fg_script), b64);
        snprintf(csp, sizeof csp, "'sha256-%s'", b64);
    }
    return csp;
}

/* A warm color from the name, the same for a name everywhere. */
static void pm_fg_color(char *buf, size_t len, const char *name)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 120, 40 + (h >> 16) % 50);
}

static void pm_fg_graph(FILE *out, const struct pm_flame *fl, const struct pm_prof_event *ev,
                        size_t id)
{
    if (!fl->n || !fl->node[0].samples)
        return;
    uint64_t total = fl->node[0].samples, min = pm_flame_min_samples(fl, PM_FG_MAX_NODES);
    int h = (int)(fl->depth + 1) * PM_FG_ROW + 4;
    size_t drawn = 0, hidden = 0;
    fprintf(out, "<div class=\"fg-bar\"><input type=\"search\" id=\"flame-%zu-search\" "
            "placeholder=\"search frames\" aria-label=\"search frames\"> <button type=\"button\" "
            "id=\"flame-%zu-reset\">reset zoom</button> <span class=\"note\" "
            "id=\"flame-%zu-info\"></span></div>\n", id, id, id);
    fprintf(out, "<svg id=\"flame-%zu\" class=\"chart flame\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"Flame graph\">\n<title>Flame graph "
            "of ", id, PM_FG_W, h, PM_FG_W, h);
    pm_html_esc(out, ev->requested, 200, 1);
    fputs("</title>\n", out);
    for (size_t i = 0; i < fl->n; i++) {
        const struct pm_flame_node *nd = &fl->node[i];
        if (nd->samples < min && i) {
            hidden++;
            continue;
        }
        const char *name = fl->name[nd->name];
        double x = (double)nd->start / (double)total * PM_FG_W;
        double w = (double)nd->samples / (double)total * PM_FG_W;
        int y = (int)nd->depth * PM_FG_ROW;
        char color[32], pct[32];
        pm_fg_color(color, sizeof color, name);
        pm_html_pct(pct, sizeof pct, (double)nd->samples / (double)total);
        fprintf(out, "<g class=\"fg\" data-i=\"%zu\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
                "\" data-d=\"%" PRIu32 "\"><title>", i, nd->start, nd->samples, nd->depth);
        pm_html_esc(out, name, PM_HTML_MAX_CHARS, 1);
        fprintf(out, "\n%" PRIu64 " samples, %s of all (%" PRIu64 " its own)</title>"
                "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
                nd->samples, pct, nd->self, x, y, w > 0.6 ? w - 0.5 : 0.1, PM_FG_ROW - 1,
                i ? color : "#bdbdbd");
        size_t chars = w > 6 ? (size_t)((w - 6) / PM_FG_CHAR_W) : 0;
        if (chars >= 3) {
            fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + 12);
            pm_html_esc(out, name, chars, 1);
            fputs("</text>", out);
        }
        fputs("</g>\n", out);
        drawn++;
    }
    fputs("</svg>\n", out);
    if (hidden)
        fprintf(out, "<p class=\"note\">%zu frames narrower than %" PRIu64 " samples are not "
                "drawn (%zu are).</p>\n", hidden, min, drawn);
}

void pm_svg_flames(FILE *out, const struct pm_report *rep)
{
    if (!rep->flame || !rep->profile)
        return;
    const struct pm_profile *p = rep->profile;
    fputs("<section id=\"flames\">\n<h2>Flame graphs</h2>\n<p class=\"note\">Every sample's "
          "stack, the whole run on top: the region paths, then the callers (with "
          "<code>perfmark run --sample-callchain</code>), then the function it fell in. A "
          "frame's width is its share of the samples; hover for its counts, click to zoom on "
          "it (a region's frame is that region's flame graph), search to mark frames by "
          "name.</p>\n", out);
    for (size_t e = 0; e < p->S && e < rep->nflame; e++) {
        fputs("<h3>", out);
        pm_html_esc(out, p->ev[e].requested, 200, 1);
        fputs("</h3>\n", out);
        pm_fg_graph(out, &rep->flame[e], &p->ev[e], e);
    }
    fprintf(out, "<script>%s</script>\n</section>\n", pm_fg_script);
}

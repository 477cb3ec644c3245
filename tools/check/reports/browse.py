#!/usr/bin/env python3
"""Opens a Mixdown report page in a real browser (Debian's headless Chromium, driven by
Selenium through Debian's chromedriver: nothing downloaded) and prints, as one JSON object,
what a reader would meet there, for the tests to assert on:

- console: the browser's console messages of level WARNING or SEVERE (a page error, a
  failed request); external: every resource the page would load (a src, a stylesheet link:
  it must be self-contained); links: every a href that is not an anchor, as written and as
  resolved against the page;
- title, headings (tag and text), and data: the JSON embedded in #mixdown-data;
- charts: for each svg, its id, role, the text of what aria-labelledby names, its axes
  (data-left ... data-y1), and per data-series the values at the topmost and bottommost
  points the browser draws (getBBox of its polylines, mapped back through the axes) and the
  polylines' count;
  levels: the drawn reference lines (data-level) and their values read back from their y;
  marks: the status of each window's mark (a circle data-status, or a dot of a path
  data-status), in the order of their x; mark_points: each mark's status, time and value
  read back through the axes; jumps: each
  line data-jump's time and x; bars: each rect data-recording's recording, piece, start,
  end and drawn x and width (SVG units); items: each li data-recording's recording and text;
- contrast: the lowest WCAG contrast ratio of any visible text against the page's white, and
  the element it belongs to;
- rows: each table row with data-line, its class and whether it shows, then, when the page
  has a checkbox #only-unfinished, the same after ticking it (filtered);
- schema_errors: where the embedded data departs from docs/report.schema.json (each with its
  path in the data), and page_kind: which of the schema's pages it matched;
- a screenshot of the whole page, when a path is given.

Usage: browse.py PAGE [SCREENSHOT]
"""
import json
import os
import sys

import jsonschema
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

page = sys.argv[1]
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,1400", "--hide-scrollbars"):
    options.add_argument(a)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
try:
    driver.get("file://" + page)
    found = driver.execute_script(r"""
    const out = {title: document.title, headings: [], charts: [], external: [], links: []};
    for (const h of document.querySelectorAll('h1,h2,h3')) out.headings.push([h.tagName.toLowerCase(), h.textContent.trim()]);
    for (const e of document.querySelectorAll('[src],link[href]')) out.external.push(e.getAttribute('src') || e.getAttribute('href'));
    for (const a of document.querySelectorAll('a[href]'))
        if (!a.getAttribute('href').startsWith('#')) out.links.push([a.getAttribute('href'), decodeURIComponent(new URL(a.getAttribute('href'), document.baseURI).pathname)]);
    out.items = [...document.querySelectorAll('li[data-recording]')].map(li => [li.dataset.recording, li.textContent.trim()]);
    const rows = () => [...document.querySelectorAll('tr[data-line]')].map(r => ({line: +r.dataset.line, classes: r.className, visible: r.getClientRects().length > 0}));
    out.rows = rows();
    const box = document.getElementById('only-unfinished');
    if (box) { box.click(); out.filtered = rows(); box.click(); }
    out.data = JSON.parse(document.getElementById('mixdown-data').textContent);
    for (const svg of document.querySelectorAll('svg')) {
        const a = {}; for (const k of ['left','right','top','bottom','x0','x1','y0','y1']) a[k] = parseFloat(svg.dataset[k]);
        const value = y => a.y0 + (a.bottom - y) / (a.bottom - a.top) * (a.y1 - a.y0);
        const label = (svg.getAttribute('aria-labelledby') || '').split(' ').filter(Boolean)
            .map(id => (document.getElementById(id) || {textContent: ''}).textContent.trim());
        const series = {};
        // From an element's own coordinates (a scaled group's) to the svg's.
        const toSvg = el => svg.getScreenCTM().inverse().multiply(el.getScreenCTM());
        const at = (el, x, y) => new DOMPoint(x, y).matrixTransform(toSvg(el));
        for (const p of svg.querySelectorAll('polyline[data-series], path[data-series]')) {
            const b = p.getBBox(), key = p.dataset.series;
            const corner = at(p, b.x, b.y), far = at(p, b.x + b.width, b.y + b.height);
            const box = {x: corner.x, y: corner.y, width: far.x - corner.x, height: far.y - corner.y};
            const s = series[key] || (series[key] = {top: -Infinity, bottom: Infinity, polylines: 0, points: 0});
            s.top = Math.max(s.top, value(box.y)); s.bottom = Math.min(s.bottom, value(box.y + box.height));
            s.polylines++; s.points += p.points ? p.points.numberOfItems : (p.getAttribute('d').match(/-?\d+/g) || []).length / 2;
        }
        const levels = [...svg.querySelectorAll('line[data-level]')].map(l => [l.dataset.level, value(l.y1.baseVal.value)]);
        // Marks: circles, and the dots of paths (each "h0" a dot after an M or relative m).
        const found = [...svg.querySelectorAll('circle[data-status]')].map(c => [c.cx.baseVal.value, c.dataset.status, c.cy.baseVal.value]);
        for (const p of svg.querySelectorAll('path[data-status]')) {
            const t = p.getAttribute('d').match(/[Mmh]|-?(?:\d+\.?\d*|\.\d+)/g) || [];
            let x = 0, y = 0;
            for (let i = 0; i < t.length;) {
                const c = t[i++];
                if (c === 'M') { x = +t[i++]; y = +t[i++]; }
                else if (c === 'm') { x += +t[i++]; y += +t[i++]; }
                else if (c === 'h') { i++; const q = at(p, x, y); found.push([q.x, p.dataset.status, q.y]); }
            }
        }
        found.sort((a, b) => a[0] - b[0]);
        const time = x => a.x0 + (x - a.left) / (a.right - a.left) * (a.x1 - a.x0);
        const marks = found.map(m => m[1]);
        const markPoints = found.map(m => [m[1], time(m[0]), value(m[2])]);
        const jumps = [...svg.querySelectorAll('line[data-jump]')].map(l => [+l.dataset.time, l.x1.baseVal.value]);
        const bars = [...svg.querySelectorAll('rect[data-recording]')].map(r => ({recording: r.dataset.recording, piece: +r.dataset.piece,
            start: +r.dataset.start, end: +r.dataset.end, x: r.getBBox().x, width: r.getBBox().width}));
        const r = svg.getBoundingClientRect();
        out.charts.push({id: svg.id, role: svg.getAttribute('role'), label, axes: a, series, levels, marks, mark_points: markPoints, jumps, bars, width: r.width, height: r.height});
    }
    // WCAG 2 relative luminance and contrast against the white page.
    const lum = c => { const m = c.match(/[\d.]+/g).map(Number).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
                       return 0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]; };
    let worst = {ratio: Infinity, element: ''};
    for (const e of document.querySelectorAll('body *')) {
        if (!e.childNodes.length || ![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
        if (e.closest('script,style,title,desc')) continue;
        const st = getComputedStyle(e); if (st.display === 'none' || st.visibility === 'hidden') continue;
        const colour = e instanceof SVGElement ? st.fill : st.color;
        if (!colour || !colour.startsWith('rgb')) continue;
        const ratio = (1.05) / (lum(colour) + 0.05);
        if (ratio < worst.ratio) worst = {ratio, element: e.tagName.toLowerCase() + ': ' + e.textContent.trim().slice(0, 40)};
    }
    out.contrast = worst;
    return out;
    """)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../docs/report.schema.json")) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    found["schema_errors"] = [f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in validator.iter_errors(found["data"])]
    found["page_kind"] = next((k for k in ("loudnessPage", "outputPage", "syncPage", "batchPage")
                               if jsonschema.Draft202012Validator({**schema, "oneOf": [{"$ref": f"#/$defs/{k}"}]}).is_valid(found["data"])), None)
    found["console"] = [f"{e['level']}: {e['message']}" for e in driver.get_log("browser") if e["level"] in ("WARNING", "SEVERE")]
    if len(sys.argv) > 2:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1100, height + 160)
        driver.save_screenshot(sys.argv[2])
    print(json.dumps(found))
finally:
    driver.quit()

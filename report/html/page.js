// weave's HTML report: draws the JSON in #weave-data (report/html.go).
// No libraries, no network. window.weave exposes the flame graph's state
// for tests: drawn (bars drawn), zoomed, zoom(node), reset(), search(text),
// setQuantity(q), find(label), rect(node).
'use strict';
(function () {
  const D = JSON.parse(document.getElementById('weave-data').textContent);
  const T = D.tree;
  const N = T.parent.length;
  const $ = (id) => document.getElementById(id);

  // ---- numbers
  const group = (n) => Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  // A value that rounds up to 1024 of a unit (1000 of a time unit) is
  // written in the next one: 1,048,575 bytes is 1.00 MiB, not 1024.0 KiB.
  function bytes(n) {
    if (n < 1024) return group(n) + ' B';
    const u = ['KiB', 'MiB', 'GiB', 'TiB'];
    const digits = (v) => +v.toFixed(2) < 10 ? 2 : 1;
    let i = 0;
    n /= 1024;
    while (+n.toFixed(digits(n)) >= 1024 && i < u.length - 1) { n /= 1024; i++; }
    return n.toFixed(digits(n)) + ' ' + u[i];
  }
  function ns(n) {
    if (+n.toFixed(0) < 1e3) return n.toFixed(0) + ' ns';
    if (+(n / 1e3).toFixed(1) < 1e3) return (n / 1e3).toFixed(1) + ' µs';
    if (+(n / 1e6).toFixed(2) < 1e3) return (n / 1e6).toFixed(2) + ' ms';
    return (n / 1e9).toFixed(3) + ' s';
  }
  const qKind = { bytes_allocated: 'bytes', bytes_in_use: 'bytes', allocs: 'count', time: 'ns', calls: 'count' };
  const qName = { bytes_allocated: 'bytes allocated', bytes_in_use: 'bytes in use at exit', allocs: 'allocations', time: 'time (self + callees)', calls: 'calls' };
  function fmt(kind, v) {
    if (typeof v === 'string') return v;
    switch (kind) {
      case 'bytes': return bytes(v);
      case 'ns': return ns(v);
      case 'pct': return v.toFixed(1);
      case 'size': return v === 1025 ? '>1024' : String(v);
      case 'count': return group(v);
    }
    return String(v);
  }

  // ---- header
  (function header() {
    const f = $('facts');
    const t = D.totals;
    const lines = [];
    if (D.runs) lines.push('The sum of ' + D.runs + ' profiles: ' + D.sources.join('; ') + (D.runs > D.sources.length ? '; ... and ' + (D.runs - D.sources.length) + ' more' : ''));
    for (const n of D.notes || []) lines.push(n); // a checkpoint's, a crash's, what the totals leave out
    if (D.time_mode) lines.push('Time: ' + D.time_mode + ' mode.');
    for (const l of lines) { const p = document.createElement('div'); p.textContent = l; f.appendChild(p); }
    const tab = document.createElement('table');
    for (const [k, b, n] of [['allocated', t.allocs, t.bytes_allocated], ['freed', t.frees, t.bytes_freed], ['in use at exit', t.blocks_in_use, t.bytes_in_use]]) {
      const tr = tab.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = group(b) + ' blocks';
      tr.insertCell().textContent = bytes(n);
    }
    f.appendChild(tab);
  })();

  // ---- flame graph (an icicle: callers above callees)
  const kids = Array.from({ length: N }, () => []);
  const depth = new Int32Array(N);
  for (let i = 1; i < N; i++) { kids[T.parent[i]].push(i); depth[i] = depth[T.parent[i]] + 1; }
  const canvas = $('flame'), ctx = canvas.getContext('2d'), tip = $('tip');
  const ROW = 18;
  const state = { q: D.quantity, zoom: 0, match: null, drawn: 0, total: new Float64Array(N), rects: [] };

  function totals(q) {
    const t = new Float64Array(N), self = T.self[q] || [];
    for (let i = N - 1; i >= 0; i--) {
      t[i] += self[i] || 0;
      if (i > 0) t[T.parent[i]] += t[i];
    }
    for (const k of kids) k.sort((a, b) => t[b] - t[a]);
    return t;
  }
  function label(i) { return T.labels[T.label[i]]; }
  function hue(s) {
    let h = 0;
    for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
    return h;
  }
  function color(i) {
    const s = label(i);
    if (state.match && state.match[i]) return '#e040fb';
    if (i === 0) return '#bbb';
    if (s.endsWith(' (hidden)')) return '#9e9e9e';
    if (s.startsWith('(')) return '#b0bec5';
    const h = hue(s);
    return 'hsl(' + (10 + h % 45) + ',' + (70 + (h >> 8) % 25) + '%,' + (55 + (h >> 16) % 12) + '%)';
  }

  function draw() {
    const t = state.total, W = canvas.clientWidth || 800;
    const z = state.zoom;
    const anc = [];
    for (let a = z; a > 0; a = T.parent[a]) anc.unshift(a);
    anc.unshift(0);
    anc.pop(); // z itself is drawn with its subtree
    let maxDepth = depth[z];
    (function deepest(i) { // iterative would be longer; depth is bounded by the tree's
      const stack = [i];
      while (stack.length) {
        const n = stack.pop();
        if (depth[n] > maxDepth) maxDepth = depth[n];
        for (const c of kids[n]) if (t[c] > 0) stack.push(c);
      }
    })(z);
    const dpr = window.devicePixelRatio || 1, H = (maxDepth + 1) * ROW;
    canvas.width = W * dpr; canvas.height = H * dpr; canvas.style.height = H + 'px';
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    state.rects = []; state.drawn = 0;
    const bar = (i, x, w) => {
      const y = depth[i] * ROW;
      ctx.fillStyle = color(i);
      ctx.fillRect(x, y, Math.max(w - 0.5, 0.5), ROW - 1);
      if (w > 24) {
        ctx.fillStyle = '#000';
        let s = label(i);
        const room = w - 6;
        if (ctx.measureText(s).width > room) {
          let n = Math.floor(s.length * room / ctx.measureText(s).width);
          while (n > 1 && ctx.measureText(s.slice(0, n) + '…').width > room) n--;
          s = n > 1 ? s.slice(0, n) + '…' : '';
        }
        ctx.fillText(s, x + 3, y + ROW / 2);
      }
      state.rects.push([i, x, depth[i] * ROW, w]);
      state.drawn++;
    };
    for (const a of anc) bar(a, 0, W);
    if (t[z] <= 0) return;
    const scale = W / t[z];
    const stack = [[z, 0]];
    while (stack.length) {
      const [i, x] = stack.pop();
      const w = t[i] * scale;
      if (w < 0.3) continue; // too thin to see or click
      bar(i, x, w);
      let cx = x;
      for (const c of kids[i]) {
        if (t[c] <= 0) break;
        stack.push([c, cx]);
        cx += t[c] * scale;
      }
    }
    status();
  }

  function hit(ev) {
    const r = canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
    for (const [i, rx, ry, w] of state.rects) if (x >= rx && x < rx + w && y >= ry && y < ry + ROW) return i;
    return -1;
  }
  function describe(i) {
    const t = state.total, q = state.q, k = qKind[q];
    const self = (T.self[q] || [])[i] || 0;
    let s = label(i);
    if (T.files[T.label[i]]) s += '  (' + T.files[T.label[i]] + ')';
    s += '\n' + qName[q] + ': ' + fmt(k, t[i]) + ' (' + (100 * t[i] / (t[0] || 1)).toFixed(2) + '% of all';
    if (state.zoom) s += ', ' + (100 * t[i] / (t[state.zoom] || 1)).toFixed(2) + '% of the zoomed bar';
    s += ')\nself: ' + fmt(k, self);
    const path = [];
    for (let a = i; a > 0; a = T.parent[a]) path.push(label(a));
    if (path.length > 1) s += '\nchain: ' + path.slice(0, 12).join(' <- ') + (path.length > 12 ? ' <- …' : '');
    return s;
  }
  canvas.addEventListener('mousemove', (ev) => {
    const i = hit(ev);
    if (i < 0) { tip.hidden = true; return; }
    tip.textContent = describe(i);
    tip.hidden = false;
    const box = $('flame-box').getBoundingClientRect();
    let x = ev.clientX - box.left + 12;
    if (x + tip.offsetWidth > box.width) x = Math.max(0, ev.clientX - box.left - tip.offsetWidth - 12);
    tip.style.left = x + 'px';
    tip.style.top = (ev.clientY - box.top + 14) + 'px';
  });
  canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
  canvas.addEventListener('click', (ev) => { const i = hit(ev); if (i >= 0) zoom(i); });

  function zoom(i) { state.zoom = i; draw(); }
  function setQuantity(q) {
    state.q = q;
    state.total = totals(q);
    if (state.total[state.zoom] <= 0) state.zoom = 0;
    draw();
  }
  function search(text) {
    state.match = null;
    if (text) {
      let re;
      if (text.length > 2 && text.startsWith('/') && text.endsWith('/')) {
        try { re = new RegExp(text.slice(1, -1)); } catch (e) { re = null; }
      }
      const low = text.toLowerCase();
      state.match = new Uint8Array(N);
      for (let i = 1; i < N; i++) {
        const s = label(i);
        if (re ? re.test(s) : s.toLowerCase().includes(low)) state.match[i] = 1;
      }
    }
    draw();
  }
  function status() {
    const el = $('status'), t = state.total;
    let s = qName[state.q] + ': ' + fmt(qKind[state.q], t[0]);
    if (state.match) {
      // A match's value counts once, not again for matches below it.
      let sum = 0, count = 0;
      const stack = [[0, false]];
      while (stack.length) {
        const [i, under] = stack.pop();
        const m = state.match[i] === 1;
        if (m) count++;
        if (m && !under) sum += t[i];
        for (const c of kids[i]) stack.push([c, under || m]);
      }
      s += ' · ' + count + ' contexts match: ' + fmt(qKind[state.q], sum) + ' (' + (100 * sum / (t[0] || 1)).toFixed(1) + '%)';
    }
    if (T.folded) s += ' · ' + group(T.folded) + ' tiny contexts folded into their callers';
    el.textContent = s;
  }

  const sel = $('quantity');
  for (const q of D.quantities) {
    const o = document.createElement('option');
    o.value = q; o.textContent = qName[q];
    sel.appendChild(o);
  }
  sel.value = D.quantity;
  sel.addEventListener('change', () => setQuantity(sel.value));
  $('search').addEventListener('input', (ev) => search(ev.target.value));
  $('reset').addEventListener('click', () => zoom(0));
  document.addEventListener('keydown', (ev) => { if (ev.key === 'Escape') zoom(0); });
  window.addEventListener('resize', () => draw());
  if (D.quantities.length === 0) {
    $('flame-section').appendChild(document.createTextNode('The profile has nothing to draw: no allocations, calls or time.'));
  }
  setQuantity(D.quantity);

  // ---- heap over time
  function timeline(tl) {
    const sec = $('timeline-section');
    sec.hidden = false;
    // The regions' lanes (one per label) above the chart, then room for
    // the marks' labels above the curve.
    const lanes = [];
    for (const r of tl.regions || []) if (!lanes.includes(r.label)) lanes.push(r.label);
    const nl = Math.min(lanes.length, 8);
    const W = 900, H = 260 + 14 * nl + (tl.user ? 24 : 0), L = 70, R = 70, TOP = 20 + 14 * nl + (tl.user ? 24 : 0), B = 30;
    let maxNS = Math.max(1, tl.ns[tl.ns.length - 1]);
    for (const m of tl.user || []) maxNS = Math.max(maxNS, m.ns);
    for (const r of tl.regions || []) maxNS = Math.max(maxNS, r.t1);
    // The heap on the left axis, scaled to itself; the resident set, often
    // ten times larger, on its own axis on the right.
    let maxB = 1, maxR = 1;
    for (const b of tl.bytes) maxB = Math.max(maxB, b);
    for (const m of tl.marks) maxB = Math.max(maxB, m.bytes);
    for (const r of tl.rss) maxR = Math.max(maxR, r);
    const hasRSS = tl.rss.some((r) => r >= 0);
    const X = (t) => L + (W - L - R) * t / maxNS, Y = (b) => TOP + (H - TOP - B) * (1 - b / maxB);
    const YR = (b) => TOP + (H - TOP - B) * (1 - b / maxR);
    const NS = 'http://www.w3.org/2000/svg';
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', W); svg.setAttribute('height', H);
    const el = (name, attrs, text) => {
      const e = document.createElementNS(NS, name);
      for (const k in attrs) e.setAttribute(k, attrs[k]);
      if (text !== undefined) e.textContent = text;
      svg.appendChild(e);
      return e;
    };
    const line = (vals, cls, y) => {
      const pts = [];
      for (let i = 0; i < tl.ns.length; i++) if (vals[i] >= 0) pts.push(X(tl.ns[i]).toFixed(1) + ',' + y(vals[i]).toFixed(1));
      if (pts.length) el('polyline', { points: pts.join(' '), class: cls });
    };
    el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#999' });
    el('line', { x1: L, y1: TOP, x2: L, y2: H - B, stroke: '#999' });
    el('text', { x: L - 4, y: TOP + 4, 'text-anchor': 'end' }, bytes(maxB));
    el('text', { x: L - 4, y: H - B, 'text-anchor': 'end' }, '0');
    el('text', { x: W - R, y: H - 8, 'text-anchor': 'end' }, ns(maxNS));
    if (hasRSS) {
      el('line', { x1: W - R, y1: TOP, x2: W - R, y2: H - B, class: 'rss-axis' });
      el('text', { x: W - R + 4, y: TOP + 4, class: 'rss-label' }, bytes(maxR));
      el('text', { x: W - R + 4, y: H - B, class: 'rss-label' }, '0');
      line(tl.rss, 'rss', YR);
    }
    line(tl.bytes, 'heap', Y);
    for (const m of tl.marks) {
      el('line', { x1: X(m.ns), y1: TOP, x2: X(m.ns), y2: H - B, class: 'mark' });
      if (m.label === 'peak') el('circle', { cx: X(m.ns), cy: Y(m.bytes), r: 4, class: 'peak' });
      const right = X(m.ns) > W - 200; // label on the left of the mark near the right edge
      el('text', { x: X(m.ns) + (right ? -4 : 4), y: m.label === 'peak' ? Y(m.bytes) - 6 : TOP + 10, 'text-anchor': right ? 'end' : 'start', class: 'mark-label' },
        m.label + ' ' + bytes(m.bytes) + ' at ' + ns(m.ns));
    }
    // Regions: a bar per span in its label's lane.
    for (const r of tl.regions || []) {
      const lane = lanes.indexOf(r.label);
      if (lane >= nl) continue;
      const y = 14 + 14 * lane, x0 = X(r.t0), x1 = Math.max(X(r.t1), x0 + 2);
      el('rect', { x: x0, y: y - 9, width: x1 - x0, height: 10, class: 'region' }).appendChild(
        Object.assign(document.createElementNS(NS, 'title'), { textContent: r.label + ': ' + r.count + ' run' + (r.count === 1 ? '' : 's') + ', ' + ns(r.t0) + ' to ' + ns(r.t1) + ' (thread ' + r.thread + ')' }));
    }
    lanes.slice(0, nl).forEach((label, lane) => el('text', { x: L - 4, y: 14 + 14 * lane, 'text-anchor': 'end', class: 'region-label' }, label));
    // Marks: a tick on the curve, the label above it (two rows, alternating).
    (tl.user || []).forEach((m, i) => {
      const x = X(m.ns), y = Y(m.bytes);
      el('line', { x1: x, y1: y, x2: x, y2: TOP - 20 + 12 * (i % 2), class: 'user-mark' });
      el('text', { x: x, y: TOP - 22 + 12 * (i % 2), 'text-anchor': 'middle', class: 'user-mark-label' }, m.label).appendChild(
        Object.assign(document.createElementNS(NS, 'title'), { textContent: 'mark ' + (i + 1) + ' "' + m.label + '": ' + bytes(m.bytes) + ' in use at ' + ns(m.ns) }));
    });
    el('text', { x: L + 8, y: H - B - 6 }, hasRSS ? 'heap in use (solid, left axis), resident set (dashed, right axis)' : 'heap in use');
    $('timeline').appendChild(svg);
  }
  if (D.timeline) timeline(D.timeline);

  // ---- the heap picture (KBDB's): a pixel per granule of the ranges with live blocks
  const pic = { blocks: 0, regions: 0 };
  function heapPicture(P) {
    $('picture-section').hidden = false;
    const st = $('picture-status');
    if (!P.addr) { st.textContent = group(P.skipped) + ' live blocks: too many to draw.'; return; }
    const n = P.addr.length, addr = new Float64Array(n), size = P.size;
    let a = 0;
    for (let i = 0; i < n; i++) { a += P.addr[i]; addr[i] = a; }
    const COLS = 256, MAXROWS = 512, GAP = 1 << 20, PX = 2;
    const regions = [];
    let start = 0, end = addr[0] + size[0];
    for (let i = 1; i <= n; i++) {
      if (i === n || addr[i] - end > GAP) { regions.push([start, i, end]); if (i < n) start = i; }
      if (i < n) end = Math.max(i === start ? 0 : end, addr[i] + size[i]);
    }
    const palette = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#46f0f0', '#f032e6', '#bcf60c', '#008080', '#9a6324', '#800000', '#808000', '#000075', '#fabebe'];
    const keyOf = (mode, c) => {
      const x = P.ctxs[c];
      switch (mode) {
        case 'type': return x.type || '(no sizeof type)';
        case 'site': return x.site;
        case 'leak': return x.leak || '(not classified)';
      }
      return x.chain;
    };
    const leakColor = { 'definitely lost': '#d7191c', 'indirectly lost': '#fdae61', 'possibly lost': '#e6c700', 'still reachable': '#1a9641', 'mixed': '#7b3294' };
    if (P.ctxs.some((x) => x.leak)) {
      const o = document.createElement('option');
      o.value = 'leak'; o.textContent = 'leak kind';
      $('picture-color').appendChild(o);
    }
    function draw(mode) {
      const box = $('picture');
      box.replaceChildren();
      // Colours for the keys with the most bytes; the rest grey.
      const bytesBy = new Map();
      for (let i = 0; i < n; i++) { const k = keyOf(mode, P.ctx[i]); bytesBy.set(k, (bytesBy.get(k) || 0) + size[i]); }
      const keys = [...bytesBy.keys()].sort((x, y) => bytesBy.get(y) - bytesBy.get(x));
      const color = new Map(keys.map((k, i) => [k, mode === 'leak' ? leakColor[k] || '#888' : i < palette.length ? palette[i] : '#888']));
      const ctxColor = P.ctxs.map((_, c) => color.get(keyOf(mode, c)));
      pic.blocks = 0;
      pic.regions = regions.length;
      for (const [s, e, top] of regions) {
        let G = 32;
        const base = Math.floor(addr[s] / G) * G;
        while ((top - base) / G / COLS > MAXROWS) G *= 2;
        const gbase = Math.floor(addr[s] / G) * G, rows = Math.max(1, Math.ceil((top - gbase) / G / COLS));
        const label = document.createElement('div');
        label.className = 'region';
        label.textContent = '0x' + gbase.toString(16) + ' – 0x' + top.toString(16) + ': ' + group(e - s) + ' blocks, ' + G + ' bytes a pixel';
        const cv = document.createElement('canvas');
        cv.width = COLS; cv.height = rows;
        cv.style.width = COLS * PX + 'px'; cv.style.height = rows * PX + 'px';
        const c2 = cv.getContext('2d'), img = c2.createImageData(COLS, rows), d = img.data;
        const put = (g, rgb) => { const o = g * 4; d[o] = rgb[0]; d[o + 1] = rgb[1]; d[o + 2] = rgb[2]; d[o + 3] = 255; };
        const rgbOf = {};
        const rgb = (h) => rgbOf[h] || (rgbOf[h] = [1, 3, 5].map((k) => parseInt(h.slice(k, k + 2), 16)));
        for (let i = s; i < e; i++) {
          const g0 = Math.floor((addr[i] - gbase) / G), g1 = Math.floor((addr[i] + Math.max(size[i], 1) - 1 - gbase) / G);
          const c = rgb(ctxColor[P.ctx[i]]);
          for (let g = g0; g < g1; g++) put(g, c);
          put(g1, g1 > g0 ? [255, 255, 255] : c);
          pic.blocks++;
        }
        c2.putImageData(img, 0, 0);
        cv.addEventListener('mousemove', (ev) => {
          const r = cv.getBoundingClientRect();
          const g = Math.floor((ev.clientY - r.top) / PX) * COLS + Math.floor((ev.clientX - r.left) / PX);
          const x = gbase + g * G;
          let lo = s, hi = e - 1, hit = -1;
          while (lo <= hi) { const m = (lo + hi) >> 1; if (addr[m] <= x + G - 1) { hit = m; lo = m + 1; } else hi = m - 1; }
          const tip = $('picture-tip');
          if (hit < 0 || addr[hit] + size[hit] <= x) { tip.hidden = true; return; }
          const cx = P.ctxs[P.ctx[hit]];
          tip.textContent = '0x' + addr[hit].toString(16) + ', ' + bytes(size[hit]) + (cx.type ? ', ' + cx.type : '') +
            (cx.leak ? ', ' + cx.leak : '') + '\n' + cx.site + '\n' + cx.chain;
          tip.hidden = false;
          tip.style.left = (ev.clientX + 12) + 'px'; tip.style.top = (ev.clientY + 14) + 'px';
        });
        cv.addEventListener('mouseleave', () => { $('picture-tip').hidden = true; });
        box.appendChild(label);
        box.appendChild(cv);
      }
      const lg = $('picture-legend');
      lg.replaceChildren();
      keys.slice(0, palette.length + 1).forEach((k, i) => {
        const sp = document.createElement('span'), sw = document.createElement('i');
        sw.style.background = i < palette.length ? color.get(k) : '#888';
        sp.appendChild(sw);
        sp.appendChild(document.createTextNode(i < palette.length ? k + ' (' + bytes(bytesBy.get(k)) + ')' : 'the rest'));
        lg.appendChild(sp);
      });
      st.textContent = group(pic.blocks) + ' live blocks in ' + regions.length + (regions.length === 1 ? ' range' : ' ranges');
    }
    $('picture-color').addEventListener('change', (ev) => draw(ev.target.value));
    draw('type');
  }
  if (D.picture) heapPicture(D.picture);

  // ---- tables, sortable by any column
  function table(tab) {
    const sec = document.createElement('section');
    sec.id = 'table-' + tab.id;
    const h = document.createElement('h2');
    h.textContent = tab.title;
    sec.appendChild(h);
    if (tab.note) { const p = document.createElement('p'); p.className = 'note'; p.textContent = tab.note; sec.appendChild(p); }
    const rows = tab.rows || [];
    if (rows.length === 0) {
      const p = document.createElement('p'); p.textContent = 'Empty.'; sec.appendChild(p);
      $('tables').appendChild(sec);
      return;
    }
    const box = document.createElement('div'); box.className = 'scroll';
    const t = document.createElement('table'); t.className = 'data';
    const head = t.createTHead().insertRow();
    const body = t.createTBody();
    let sortCol = -1, dir = 1;
    const fill = () => {
      const frag = document.createDocumentFragment();
      for (const r of rows) {
        const tr = document.createElement('tr');
        r.forEach((v, c) => {
          const td = document.createElement('td');
          if (!tab.cols[c].kind) td.className = 'text';
          td.textContent = fmt(tab.cols[c].kind, v);
          tr.appendChild(td);
        });
        frag.appendChild(tr);
      }
      body.replaceChildren(frag);
    };
    tab.cols.forEach((col, c) => {
      const th = document.createElement('th');
      th.textContent = col.name;
      if (!col.kind) th.className = 'text';
      th.addEventListener('click', () => {
        dir = sortCol === c ? -dir : (col.kind ? -1 : 1);
        sortCol = c;
        rows.sort((a, b) => (a[c] < b[c] ? -1 : a[c] > b[c] ? 1 : 0) * dir);
        for (const o of head.cells) o.classList.remove('sorted-asc', 'sorted-desc');
        th.classList.add(dir > 0 ? 'sorted-asc' : 'sorted-desc');
        fill();
      });
      head.appendChild(th);
    });
    fill();
    box.appendChild(t);
    sec.appendChild(box);
    $('tables').appendChild(sec);
  }
  for (const tab of D.tables) table(tab);

  window.weave = {
    get drawn() { return state.drawn; },
    get zoomed() { return state.zoom; },
    nodes: N,
    label, zoom, search, setQuantity,
    reset: () => zoom(0),
    contexts: () => state.total.filter((v) => v > 0).length, // nodes with a value, drawn or too thin
    rect: (i) => { for (const [j, x, y, w] of state.rects) if (j === i) return [x, y, w]; return null; },
    picture: pic,
    ms: performance.now(), // from the start of navigation to the page drawn
    find: (name) => { for (let i = 0; i < N; i++) if (label(i) === name) return i; return -1; },
  };
})();

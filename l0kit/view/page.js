// The run page's script (l0kit.view.page.PAGE_SCRIPT): it reads the page's JSON data and draws the items; no network, no storage.

// ---- the data: the runs of the page, decoded rows and voters
const D = JSON.parse(document.getElementById('l0kit-data').textContent);
const $ = (s, r = document) => r.querySelector(s);
const esc = s => String(s ?? '').replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'}[c]));
function voterList(s) {
  const out = [];
  for (const p of String(s).split(',')) { if (!p) continue; const [a, b] = p.split('-').map(Number); for (let v = a; v <= (isNaN(b) ? a : b); v++) out.push(v); }
  return out;
}
function rowsOf(enc, tg) { const out = []; for (const x of enc) { if (typeof x === 'number') { for (let k = 0; k < x; k++) out.push(tg[out.length]); } else out.push(x); } return out; }
function status(a, L, i, tg) {
  if (i >= tg.length) return i === a.e ? 'err' : 'extra';
  if (a.e === undefined || i < a.e) return i < L.length ? 'ok' : 'missing';
  if (i === a.e) return 'err';
  if (i >= L.length) return 'missing';
  return L[i] === tg[i] ? 'same' : 'diff';
}
D.runs.forEach((run, r) => run.items.forEach((it, k) => {
  it.r = r; it.k = k; it.nv = 0; it.right = 0; it.types = new Set();
  for (const a of it.a) { a.vs = voterList(a.v); it.nv += a.vs.length; if (a.c) it.right += a.vs.length; if (a.t) it.types.add(a.t); }
  it.majOk = !!it.a[it.m].c;
}));

// ---- the filters and the state in the address
const OUTCOMES = {all: 'all items', 'maj-wrong': 'majority wrong', 'maj-right': 'majority right', 'some-wrong': 'some voter wrong',
                  'all-wrong': 'every voter wrong', 'all-right': 'every voter right'};
let lastHash = null;
const S = {run: 0, split: '', outcome: 'all', type: '', q: '', sort: 'data', page: 0, per: 25, eager: 0};
function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  for (const k of Object.keys(S)) if (h.has(k)) S[k] = typeof S[k] === 'number' ? (h.get(k) === 'all' ? 1e9 : Number(h.get(k)) || 0) : h.get(k);
  if (!(S.per > 0)) S.per = 25;
  if (!D.runs[S.run]) S.run = 0;
}
function writeHash() {
  const h = new URLSearchParams();
  for (const [k, v] of Object.entries(S)) if (v !== '' && !(k === 'run' && v === 0) && !(k === 'outcome' && v === 'all') && !(k === 'sort' && v === 'data')
    && !(k === 'page' && v === 0) && !(k === 'per' && v === 25) && !(k === 'eager' && !v)) h.set(k, v >= 1e9 ? 'all' : v);
  lastHash = '#' + h.toString();
  if (location.hash !== lastHash && !(lastHash === '#' && !location.hash)) history.replaceState(null, '', lastHash);
}
function keep(it) {
  if (S.split && it.s !== S.split) return false;
  if (S.type && !it.types.has(S.type)) return false;
  if (S.q && !it.i.toLowerCase().includes(S.q.toLowerCase())) return false;
  switch (S.outcome) {
    case 'maj-wrong': return !it.majOk; case 'maj-right': return it.majOk; case 'some-wrong': return it.right < it.nv;
    case 'all-wrong': return it.right === 0; case 'all-right': return it.right === it.nv; default: return true;
  }
}
function selected() {
  const items = D.runs[S.run].items.filter(keep);
  if (S.sort === 'right') items.sort((x, y) => x.right / x.nv - y.right / y.nv || x.k - y.k);
  return items;
}
function fillControls() {
  const run = D.runs[S.run], opt = (v, t, sel) => `<option value="${esc(v)}"${sel ? ' selected' : ''}>${esc(t)}</option>`;
  const splits = [...new Set(run.items.map(it => it.s))], types = new Map();
  for (const it of run.items) for (const a of it.a) if (a.t) types.set(a.t, (types.get(a.t) || 0) + a.vs.length);
  $('#f-run').innerHTML = D.runs.map((r, i) => opt(i, `${r.benchmark} | ${r.model}`, i === S.run)).join('');
  $('#f-run').style.display = D.runs.length > 1 ? '' : 'none';
  $('#f-split').innerHTML = opt('', 'every split', !S.split) + splits.map(s => opt(s, s, s === S.split)).join('');
  $('#f-outcome').innerHTML = Object.entries(OUTCOMES).map(([k, t]) => opt(k, t, k === S.outcome)).join('');
  $('#f-type').innerHTML = opt('', 'any first error', !S.type) + [...types].sort((a, b) => b[1] - a[1]).map(([t, n]) => opt(t, `${t} (${n} responses)`, t === S.type)).join('');
  $('#f-sort').innerHTML = opt('data', 'data order', S.sort === 'data') + opt('right', 'fewest voters right first', S.sort === 'right');
  $('#f-per').innerHTML = [10, 25, 100, 1e9].map(n => opt(n, n >= 1e9 ? 'all items' : `${n} a page`, n === S.per)).join('');
  $('#f-q').value = S.q;
}

// ---- drawing: an item's card, its voter bars and its alignment
function bar(a, n, i, it, sel) {
  let bg = '#34a853';
  if (!a.c && a.e !== undefined) { const w = 100 / Math.max(n, 1), e = Math.min(a.e, n), g = e * w, r = Math.min(100, (e + 1) * w);
    bg = `linear-gradient(90deg,#34a853 0 ${g}%,#d93025 ${g}% ${r}%,#ccc ${r}% 100%)`; }
  const who = a.vs.length === 1 ? `voter ${a.vs[0]}` : `voters ${a.v}`;
  return `<div class="bar${i === sel ? ' sel' : ''}" data-a="${i}" title="${esc(a.n || '')}"><span class="lbl">${esc(who)}${i === it.m ? ' ★' : ''}</span>` +
         `<span class="b" style="background:${bg}"></span><span class="t">${a.c ? 'correct' : esc(a.t || 'wrong')}</span></div>`;
}
function diff(t, r) {
  let p = 0, q = 0;
  while (p < Math.min(t.length, r.length) && t[p] === r[p]) p++;
  while (q < Math.min(t.length, r.length) - p && t[t.length - 1 - q] === r[r.length - 1 - q]) q++;
  const mark = x => esc(x.slice(0, p)) + '<mark>' + esc(x.slice(p, x.length - q)) + '</mark>' + esc(x.slice(x.length - q));
  return [mark(t), mark(r)];
}
function alignment(it, i) {
  const a = it.a[i], tg = it.tg, L = rowsOf(a.l, tg), n = Math.max(tg.length, L.length), rows = [];
  for (let r = 0; r < n; r++) {
    const st = status(a, L, r, tg), lab = it.rl ? (it.rl[r] ?? '+') : (r < tg.length ? r + 1 : '+');
    const resp = r < L.length ? L[r] : (st === 'err' ? (L.length ? '(nothing: the response ends here)' : '(no answer could be read: see the raw response)') : '');
    const t = r < tg.length ? tg[r] : '', [th, rh] = st === 'err' && r < L.length && t ? diff(t, L[r]) : [esc(t), esc(resp)];
    const tag = st === 'err' ? `<span class="etype" title="${esc(a.d || '')}">${esc(a.t || 'error')}</span>` : '';
    rows.push(`<tr class="${st}"><td>${esc(lab)}</td><td class="c">${th}</td><td class="c r">${rh}${tag}</td></tr>`);
  }
  const who = a.vs.length === 1 ? `voter ${a.vs[0]}` : `voters ${a.v}`;
  const verdict = a.c ? 'correct' : `first error: ${esc(a.t || 'wrong')}${a.d ? ' (' + esc(a.d) + ')' : ''}`;
  return `<div class="hint">${esc(who)}${i === it.m ? ` (the majority answer, ${it.mv} vote${it.mv === 1 ? '' : 's'})` : ''}: ${verdict}${a.n ? ' · ' + esc(a.n) : ''}${a.cut ? ' · <span class="cut">cut by the token budget</span>' : ''}</div>` +
    `<table class="al"><tr><th>row</th><th>target</th><th>response</th></tr>${rows.join('')}</table>` +
    (a.th ? `<details class="thinking"><summary>thinking (${a.th.length.toLocaleString()} characters, apart from the answer)</summary><pre>${esc(a.th)}</pre></details>` : '') +
    (a.r ? `<details><summary>raw response</summary><pre>${esc(a.r)}</pre></details>` : '') +
    (a.tu ? `<details class="turns" open><summary>${a.tu.length} model turn${a.tu.length === 1 ? '' : 's'} of voter ${a.vs[0]}: each prompt and answer</summary>` +
      a.tu.map(([p, r, t], k) => `<h4>turn ${k + 1}: prompt</h4><pre>${esc(p)}</pre><h4>turn ${k + 1}: answer${t == null ? '' : ` (${t} tokens)`}</h4><pre>${esc(r)}</pre>`).join('') +
      '</details>' : '');
}
function inputHtml(it, i) {
  const a = it.a[i], lineNo = s => { const m = /^L(\d+),/.exec(s || ''); return m ? m[1] : null; };
  let t = null, r = null;
  if (!a.c && a.e !== undefined) { t = lineNo(it.tg[a.e]); r = lineNo(rowsOf(a.l, it.tg)[a.e]); }
  const lines = it.in.split('\n').map(l => { const m = /^L(\d+) /.exec(l), n = m && m[1];
    return `<span class="pl${n && n === t ? ' hl-t' : ''}${n && n === r && r !== t ? ' hl-r' : ''}">${esc(l) || ' '}</span>`; });
  return `<pre class="input">${lines.join('')}</pre>` + (it.sec || []).map(([h, x]) => `<h4>${esc(h)}</h4><pre>${esc(x)}</pre>`).join('');
}
function drawBody(card, it, sel) {
  const n = it.tg.length;
  card.querySelector('.body').innerHTML = `<div class="cols"><div><h4>input</h4>${inputHtml(it, sel)}</div><div><h4>answers (one bar each; click to show)</h4>` +
    `<div class="bars">${it.a.map((a, i) => bar(a, n, i, it, sel)).join('')}</div>${alignment(it, sel)}</div></div>`;
  card.dataset.drawn = '1'; card.dataset.shown = sel;
}
function firstShown(it) {
  if (S.type) { const i = it.a.findIndex(a => a.t === S.type); if (i >= 0) return i; }
  if (!it.majOk) return it.m;
  const w = it.a.findIndex(a => !a.c);
  return w >= 0 ? w : it.m;
}
function card(it) {
  const chips = [...it.types].map(t => `<span class="chip e">${esc(t)} ×${it.a.filter(a => a.t === t).reduce((s, a) => s + a.vs.length, 0)}</span>`).join('');
  const cut = v => { v = String(v); return v.length > 48 ? v.slice(0, 47) + '…' : v; };
  const facts = Object.entries(it.f || {}).map(([k, v]) => `${esc(k)} <span title="${esc(v)}">${esc(cut(v))}</span>`).join(' · ');
  return `<article class="item" data-id="${esc(it.i)}" data-split="${esc(it.s)}" data-majority="${it.majOk ? 'right' : 'wrong'}" data-k="${it.k}">` +
    `<header><b>${esc(it.i)}</b><span class="meta">${esc(it.s)}${facts ? ' · ' + facts : ''}</span>` +
    `<span>${it.right} of ${it.nv} voters right</span><span class="${it.majOk ? 'maj-right' : 'maj-wrong'}">majority ${it.majOk ? 'right' : 'wrong'} (${it.mv} vote${it.mv === 1 ? '' : 's'})</span>${chips}</header>` +
    `<div class="body"><div class="hint">…</div></div></article>`;
}

// ---- putting it together: redraw on a change, draw the bodies in view
let observer = null;
function draw() {
  const items = selected(), run = D.runs[S.run], pages = Math.max(1, Math.ceil(items.length / S.per));
  S.page = Math.min(S.page, pages - 1);
  const shown = items.slice(S.page * S.per, (S.page + 1) * S.per);
  $('#count').textContent = `${items.length} of ${run.items.length} items`;
  $('#pageinfo').textContent = pages > 1 ? `page ${S.page + 1} of ${pages}` : '';
  $('#prev').disabled = S.page === 0; $('#next').disabled = S.page >= pages - 1;
  const list = $('#items'); list.innerHTML = shown.map(card).join('');
  if (observer) observer.disconnect();
  const byK = new Map(shown.map(it => [String(it.k), it]));
  const open = el => { if (!el.dataset.drawn) { const it = byK.get(el.dataset.k); drawBody(el, it, firstShown(it)); } };
  if (S.eager || !('IntersectionObserver' in window)) list.querySelectorAll('article.item').forEach(open);
  else { observer = new IntersectionObserver(es => es.forEach(e => { if (e.isIntersecting) { open(e.target); observer.unobserve(e.target); } }), {rootMargin: '600px'});
         list.querySelectorAll('article.item').forEach(el => observer.observe(el)); }
  writeHash();
}
function onChange(k, v) { S[k] = v; if (k !== 'page') S.page = 0; if (k === 'run') { S.split = ''; S.type = ''; fillControls(); } draw(); }
function init() {
  const t0 = performance.now();
  readHash(); fillControls();
  for (const [id, k, num] of [['#f-run', 'run', 1], ['#f-split', 'split'], ['#f-outcome', 'outcome'], ['#f-type', 'type'], ['#f-sort', 'sort'], ['#f-per', 'per', 1]])
    $(id).addEventListener('change', e => onChange(k, num ? Number(e.target.value) : e.target.value));
  $('#f-q').addEventListener('input', e => onChange('q', e.target.value.trim()));
  $('#prev').addEventListener('click', () => onChange('page', S.page - 1));
  $('#next').addEventListener('click', () => onChange('page', S.page + 1));
  $('#items').addEventListener('click', e => {
    const b = e.target.closest('.bar'), art = e.target.closest('article.item');
    if (b && art) { const it = D.runs[S.run].items[Number(art.dataset.k)]; drawBody(art, it, Number(b.dataset.a)); return; }
    if (art && e.target.closest('header')) art.classList.toggle('collapsed');
  });
  addEventListener('hashchange', () => { if (location.hash !== lastHash) { readHash(); fillControls(); draw(); } });
  draw();
  document.body.dataset.renderMs = (performance.now() - t0).toFixed(1);
  document.body.dataset.ready = '1';
}
init();

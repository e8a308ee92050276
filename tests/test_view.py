"""The run page and the documentation site in a real browser: headless Chromium driven over the DevTools protocol
(a pipe, standard library only). Needs Debian's `chromium` (`apt-get install -y chromium`, which `.ci/run` does).

Measure a page: `python tests/test_view.py PAGE.html [PAGE.html ...]` prints its size, load and first-draw times."""
import base64, fcntl, json, os, re, select, shutil, subprocess, sys, tempfile, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / '.cache' / 'screenshots'  # screenshots of the last run, to look at


def chromium_path() -> str:
    "The Chromium executable, or a failure saying how to install it (never a silent skip)."
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        if p := shutil.which(name): return p
    pytest.fail("Chromium is not installed: the browser tests need it. Run the set-up: "
                "`sudo apt-get update && sudo apt-get install -y chromium` (Debian's package; .ci/run installs it)")


class Browser:
    "Headless Chromium over the DevTools protocol on a pipe (fds 3 and 4): navigate, evaluate, screenshot."
    def __init__(self, width=1400, height=1000):
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        def fds():  # the child reads commands on fd 3 and writes answers on fd 4 (moved up first: they may be 3 or 4)
            r, w = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3); os.dup2(w, 4)
        self.profile = tempfile.mkdtemp(prefix='l0kit-chromium-')
        self.proc = subprocess.Popen([chromium_path(), '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
                                      '--no-first-run', f'--user-data-dir={self.profile}', '--allow-file-access-from-files',
                                      # fewer calls home (updates, hints, extensions; it still looks up two Google hosts at start, and waits for neither)
                                      '--disable-background-networking', '--disable-component-update', '--disable-sync',
                                      '--disable-default-apps', '--disable-extensions', '--disable-component-extensions-with-background-pages',
                                      '--disable-domain-reliability', '--disable-features=OptimizationHints,MediaRouter',
                                      f'--window-size={width},{height}', 'about:blank'],
                                     preexec_fn=fds, pass_fds=(3, 4, to_chrome_r, from_chrome_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r); os.close(from_chrome_w)
        self._buf, self._id, self.events = b'', 0, []
        target = self.call('Target.createTarget', url='about:blank')['targetId']
        self.session = self.call('Target.attachToTarget', targetId=target, flatten=True)['sessionId']
        self.call('Page.enable', session=True); self.call('Runtime.enable', session=True)
        self.call('Emulation.setDeviceMetricsOverride', session=True, width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self, timeout=60) -> dict:
        end = time.time() + timeout
        while b'\0' not in self._buf:
            left = end - time.time()  # a read only once there is something to read: os.read alone would wait forever
            if left <= 0 or not select.select([self._r], [], [], left)[0]: raise TimeoutError(f'Chromium did not answer in {timeout} s')
            chunk = os.read(self._r, 1 << 20)
            if not chunk: raise RuntimeError('Chromium closed the pipe')
            self._buf += chunk
        msg, _, self._buf = self._buf.partition(b'\0')
        return json.loads(msg)

    def call(self, method, session=False, timeout=60, **params):
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params}
        if session: msg['sessionId'] = self.session
        os.write(self._w, json.dumps(msg).encode() + b'\0')
        while True:
            m = self._read(timeout)
            if m.get('id') == self._id:
                if 'error' in m: raise RuntimeError(f"{method}: {m['error']}")
                return m.get('result', {})
            self.events.append(m)

    def js(self, expression, timeout=60):
        "The value of a JavaScript expression in the page (promises awaited)."
        r = self.call('Runtime.evaluate', session=True, timeout=timeout, expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r: raise RuntimeError(f"{expression[:80]}: {r['exceptionDetails']}")
        return r['result'].get('value')

    def open(self, url, ready='document.readyState === "complete"', timeout=120) -> float:
        "Navigate and wait until `ready` holds; the seconds it took."
        if url != 'about:blank': self.open('about:blank')  # a new document, even when only the #fragment differs
        t0 = time.perf_counter()
        self.call('Page.navigate', session=True, url=url)
        while time.perf_counter() - t0 < timeout:
            try:
                if self.js(f'!!({ready})'): return time.perf_counter() - t0
            except RuntimeError: pass
            time.sleep(0.02)
        raise TimeoutError(f'{url} not ready after {timeout} s')

    def screenshot(self, path, full_page=True):
        "Save a PNG of the page (the whole page when `full_page`)."
        params = {'format': 'png', 'captureBeyondViewport': full_page}
        if full_page:
            w, h = self.js('[document.documentElement.scrollWidth, document.documentElement.scrollHeight]')
            params['clip'] = {'x': 0, 'y': 0, 'width': w, 'height': min(h, 6000), 'scale': 1}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(base64.b64decode(self.call('Page.captureScreenshot', session=True, **params)['data']))
        return Path(path)

    def close(self):
        try: self.call('Browser.close', timeout=5)
        except Exception: pass
        try: self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired: self.proc.kill()
        os.close(self._r); os.close(self._w)
        shutil.rmtree(self.profile, ignore_errors=True)


def test_browser_read_ends_at_its_timeout_when_chromium_says_nothing():
    "A Chromium that is alive but silent is a TimeoutError after the read's timeout, never a wait without end (a CI run hung)."
    b, (r, w) = Browser.__new__(Browser), os.pipe()
    b._r, b._buf = r, b'{"id": 1'  # half a message, and then nothing
    t0 = time.perf_counter()
    try:
        with pytest.raises(TimeoutError, match='did not answer in 0.5 s'): b._read(timeout=0.5)
    finally: os.close(r); os.close(w)
    assert 0.4 < time.perf_counter() - t0 < 10


@pytest.fixture(scope='module')
def browser():
    b = Browser()
    yield b
    b.close()


@pytest.fixture(scope='module')
def l0_run(tmp_path_factory):
    "A small L0 run of the simulated model (6 programs x 5 voters, short split), its page and its views."
    from l0kit.l0.benchmark import L0Benchmark
    from l0kit.runs.runner import run_eval, RunConfig
    from l0kit.view.page import write_page
    d = tmp_path_factory.mktemp('l0view')
    bench = L0Benchmark()
    bench.generate(d / 'data', limit=6, seed=0)
    items = bench.load(d / 'data', 'short')
    run_eval(bench, bench.simulated_model('rate=0.06,seed=3'), items, d / 'run', RunConfig(voters=5), data=str(d / 'data'),
             split='short', progress=False)
    path, rvs = write_page([d / 'run'], d / 'view.html')
    return path, rvs[0].views()


ITEMS_JS = "[...document.querySelectorAll('article.item')].map(a => a.dataset.id)"


def test_page_every_item_and_first_error(browser, l0_run):
    "Every item is on the page; each wrong answer shown has its first error marked with its type."
    path, views = l0_run
    text = path.read_text()
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', text), 'the page loads something from the network'
    browser.open(path.as_uri() + '#per=all&eager=1', 'document.body.dataset.ready')
    assert browser.js(ITEMS_JS) == [v.id for v in views]
    marked = browser.js("""[...document.querySelectorAll('article.item')].map(a => {
        const e = a.querySelector('tr.err'); return [a.dataset.id, e ? e.querySelector('.etype').textContent : null,
        e ? [...e.parentNode.children].indexOf(e) : null]; })""")
    for (i, etype, row), v in zip(marked, views):
        a = v.answers[v.shown]
        assert i == v.id
        if a.correct: assert etype is None
        else: assert (etype, row) == (a.error_type, a.first_error + 1)  # + 1: the header row
    assert any(e for _, e, _ in marked), 'the simulated run should have wrong answers'
    browser.screenshot(SHOTS / 'run_page_all.png')


def wait_for(browser, expression, timeout=15):
    "Poll a JS expression until it is truthy (items are drawn lazily, after the page's observers fire): its last value."
    deadline = time.time() + timeout
    while not (v := browser.js(expression)) and time.time() < deadline: time.sleep(0.1)
    return v


def test_page_filters_change_what_is_shown(browser, l0_run):
    "The outcome, type and id filters (through the controls, as a user changes them) show the items they should."
    path, views = l0_run
    browser.open(path.as_uri() + '#per=all', 'document.body.dataset.ready')
    assert len(browser.js(ITEMS_JS)) == len(views)
    def choose(sel, value):
        browser.js(f"(() => {{ const s = document.querySelector('{sel}'); s.value = {json.dumps(value)};"
                   "s.dispatchEvent(new Event('change')); })()")
        return browser.js(ITEMS_JS)
    want = [v.id for v in views if not v.answers[v.majority].correct]
    assert choose('#f-outcome', 'maj-wrong') == want
    assert browser.js("document.querySelector('#count').textContent") == f"{len(want)} of {len(views)} items"
    assert 'outcome=maj-wrong' in browser.js('location.hash')
    assert choose('#f-outcome', 'all-right') == [v.id for v in views if v.right == v.voters]
    choose('#f-outcome', 'all')
    etype = next(a.error_type for v in views for a in v.answers if a.error_type)
    assert choose('#f-type', etype) == [v.id for v in views if any(a.error_type == etype for a in v.answers)]
    wait_for(browser, "[...document.querySelectorAll('article.item')].every(a => a.dataset.drawn !== undefined)")
    shown = browser.js("[...document.querySelectorAll('article.item')].map(a => a.querySelector('tr.err .etype')?.textContent)")
    assert set(shown) == {etype}, 'with a type chosen, each item shows an answer of that type'
    choose('#f-type', '')
    browser.js("(() => { const q = document.querySelector('#f-q'); q.value = '0003'; q.dispatchEvent(new Event('input')); })()")
    assert browser.js(ITEMS_JS) == ['short-0003']
    browser.screenshot(SHOTS / 'run_page_search.png')


def test_page_click_a_voter(browser, l0_run):
    "Clicking an answer's bar shows that answer aligned."
    path, views = l0_run
    v = next(v for v in views if len(v.answers) > 1)
    browser.open(path.as_uri() + f'#q={v.id}&eager=1', 'document.body.dataset.ready')
    other = next(i for i in range(len(v.answers)) if i != v.shown)
    browser.js(f"document.querySelector('article.item .bar[data-a=\"{other}\"]').click()")
    assert browser.js("document.querySelector('article.item').dataset.shown") == str(other)
    hint = browser.js("document.querySelector('article.item .hint').textContent")
    who = v.answers[other].voters
    assert hint.startswith(f"voter {who[0]}" if len(who) == 1 else 'voters ')
    browser.screenshot(SHOTS / 'run_page_item.png', full_page=False)


def test_page_lazy_on_a_large_run(browser, tmp_path):
    "Only the filtered page of items is drawn: 2,000 items, 25 cards, bodies only near the screen."
    from l0kit.view.page import page_html
    item = {'i': '', 's': 'short', 'f': {}, 'in': 'L1 def function(x):', 'tg': ['L2,x:1', 'L3,'], 'm': 0, 'mv': 3,
            'a': [{'v': '0-2', 'l': [2], 'c': 1}, {'v': '3', 'l': [1, 'L4,'], 'c': 0, 'e': 1, 't': 'skipped_step'}]}
    items = [dict(item, i=f'short-{k:04d}') for k in range(2000)]
    page = tmp_path / 'big.html'
    page.write_text(page_html([{'benchmark': 'l0', 'paper': '', 'model': 'm', 'simulated': True, 'responses': 8000,
                                'settings': {}, 'notes': [], 'tables': [], 'figures': [], 'items': items}]))
    browser.open(page.as_uri(), 'document.body.dataset.ready')
    assert browser.js("document.querySelectorAll('article.item').length") == 25
    drawn = wait_for(browser, "document.querySelectorAll('article.item[data-drawn]').length")
    assert 0 < drawn < 25
    browser.js("document.querySelector('#next').click()")
    assert browser.js(ITEMS_JS)[0] == 'short-0025' and 'page=1' in browser.js('location.hash')


def test_item_repr_html_in_browser(browser, tmp_path, l0_run):
    "The notebook view of one item (no script) shows the alignment with the first error marked."
    _, views = l0_run
    v = next(v for v in views if not v.answers[v.shown].correct)
    page = tmp_path / 'item.html'
    page.write_text(f'<!DOCTYPE html><html><body>{v._repr_html_()}</body></html>')
    browser.open(page.as_uri())
    assert browser.js("document.querySelector('tr.err .etype').textContent") == v.answers[v.shown].error_type
    browser.screenshot(SHOTS / 'item_repr_html.png')


def test_docs_front_page(browser, docs_site):
    "The front page is the README, the navigation follows the subpackages, every notebook has a page, search works offline."
    browser.open((docs_site / 'index.html').as_uri())
    assert browser.js("document.querySelector('article h1').textContent.trim()").startswith('l0kit')
    sections = browser.js("[...document.querySelectorAll('nav.md-nav--primary > ul > li > label, nav.md-nav--primary > ul > li > a')].map(e => e.textContent.trim())")
    for s in ('Home', 'Harness', 'L0-Bench', 'ProcBench', 'SX', 'CoRE', 'Tutorials', 'Experiments'):
        assert s in sections, (s, sections)
    notebooks = {p.stem for p in (ROOT / 'nbs').glob('*.ipynb')} - {'index'}
    assert notebooks <= {p.stem for p in docs_site.glob('*.html')}
    browser.screenshot(SHOTS / 'docs_front_page.png', full_page=False)
    type_query = ("(() => { const q = document.querySelector('input.md-search__input'); q.focus(); q.value = 'steps to error';"
                  "q.dispatchEvent(new Event('input', {bubbles: true})); q.dispatchEvent(new KeyboardEvent('keyup', {bubbles: true})); })()")
    # the search index is built in a web worker after the page loads (seconds on a busy machine), and a query typed
    # before it is ready finds nothing: typed again every 2 s, as a reader would, until results show
    # (it also guards the index itself: on 2026-11-30 the text `(1.24` in one page of performance.md made every
    # search that matched that page find nothing at all, `steps` among them)
    deadline, typed = time.time() + 60, 0.0
    while time.time() < deadline and not browser.js("document.querySelectorAll('.md-search-result__item').length"):
        if time.time() - typed > 2: browser.js(type_query); typed = time.time()
        time.sleep(0.2)
    assert browser.js("document.querySelectorAll('.md-search-result__item').length") > 0, 'search found nothing from file://'
    browser.screenshot(SHOTS / 'docs_search.png', full_page=False)


def test_docs_notebook_page(browser, docs_site):
    "A notebook page shows its code and stored outputs, without nbdev's directives."
    browser.open((docs_site / '08a_viewer.html').as_uri())
    text = browser.js('document.body.innerText')
    assert 'The run viewer' in text and '#| export' not in text and 'def encode_rows' in text
    # the notebooks' style sheet is one shared file (scripts/docs_hooks.py), not inline in each page, and it applies
    assert '.jupyter-wrapper{--md-red-50' not in (docs_site / '08a_viewer.html').read_text()
    assert browser.js("getComputedStyle(document.querySelector('.jupyter-wrapper')).getPropertyValue('--md-red-50').trim()") == '#ffebee'
    browser.screenshot(SHOTS / 'docs_viewer_page.png', full_page=False)


def measure(pages: list) -> None:
    "Print each page's size, the seconds until its first draw, and the draw's own milliseconds."
    b = Browser()
    try:
        b.open('about:blank')
        for p in pages:
            p = Path(p).resolve()
            runs = []
            for _ in range(3):
                wall = b.open(p.as_uri(), 'document.body && document.body.dataset.ready')
                nav = b.js("(() => { const t = performance.getEntriesByType('navigation')[0]; return [t.responseEnd, t.domContentLoadedEventEnd, t.loadEventEnd]; })()")
                runs.append((wall, float(b.js('document.body.dataset.renderMs')), nav))
            wall, draw, nav = min(runs)
            print(f"{p.name}: {p.stat().st_size / 1e6:.1f} MB; until drawn {wall:.2f} s (best of 3; DOMContentLoaded {nav[1] / 1000:.2f} s, "
                  f"load {nav[2] / 1000:.2f} s); first draw {draw:.0f} ms")
    finally: b.close()


if __name__ == '__main__':
    measure(sys.argv[1:])

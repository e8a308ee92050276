"""The documentation site as built by scripts/docs.sh: every internal link of every page leads to a page that exists and,
with a fragment, to an element of that page; every entry of a page's table of contents says what its heading says
(code in headings included: `<think>`, `l0kit export`); the front page names notebooks by their names."""
import html, re
from pathlib import Path
from urllib.parse import unquote, urlsplit
import pytest

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope='module')
def site(docs_site) -> Path:
    "The site conftest's `docs_site` built (once for the session, shared with tests/test_view.py)."
    return docs_site

def ids_of(page: Path, cache={}) -> set:
    if page not in cache: cache[page] = set(re.findall(r'\s(?:id|name)="([^"]+)"', page.read_text(encoding='utf-8', errors='replace')))
    return cache[page]

def broken_links(site: Path) -> list:
    "(page, href, why) of every internal link that leads nowhere."
    bad = []
    for page in sorted(site.rglob('*.html')):
        if page.name == '404.html': continue  # served by a web server for any path; its links are absolute from the site root
        for href in re.findall(r'<a\s[^>]*?href="([^"]*)"', page.read_text(encoding='utf-8', errors='replace')):
            u = urlsplit(html.unescape(href))
            if u.scheme or href.startswith('//'): continue
            target = page.parent / unquote(u.path) if u.path else page
            if target.is_dir(): target = target / 'index.html'
            if not target.is_file(): bad.append((page.name, href, 'no such page'))
            elif u.fragment and target.suffix == '.html' and unquote(u.fragment) not in ids_of(target): bad.append((page.name, href, 'no such anchor'))
    return bad

def text(h: str) -> str: return re.sub(r'\s+', ' ', html.unescape(re.sub(r'<[^>]+>', '', h))).replace('¶', '').strip()

def test_every_internal_link_leads_somewhere(site):
    assert len(list(site.glob('*.html'))) > 70
    assert broken_links(site) == []

def test_table_of_contents_keeps_the_headings_words(site):
    lost = []
    for page in sorted(site.glob('*.html')):
        t = page.read_text(encoding='utf-8', errors='replace')
        heads = {i: text(h) for i, h in re.findall(r'<h[1-3] id="([^"]+)"[^>]*>(.*?)</h[1-3]>', t, re.S)}
        for i, entry in re.findall(r'<a href="#([^"]+)" class="md-nav__link">(.*?)</a>', t, re.S):
            if i in heads and text(entry) != heads[i]: lost.append((page.name, text(entry), heads[i]))
    assert lost == []
    runner = (site / '06_runner.html').read_text(encoding='utf-8')
    assert re.search(r'href="#budgets-and-think" class="md-nav__link">\s*<span class="md-ellipsis">\s*Budgets and &lt;think&gt;', runner)

def test_front_pages_name_notebooks(site):
    for name in ('index.html', 'contributing.html'):
        t = (site / name).read_text(encoding='utf-8')
        assert not re.search(r'>None\w', t), f"{name} names a notebook None..."
    t = (site / 'contributing.html').read_text(encoding='utf-8')
    assert '<a href="00_config.html"><code>00_config</code></a>' in t or '<code>nbs/00_config</code>' in t

def test_the_front_page_leads_to_every_guide_page(site):
    "Each page of docs/ is a page of the site, linked from the front page (the README's `docs/NAME.md` links)."
    page = (site / 'index.html').read_text(encoding='utf-8')
    index = re.search(r'<article class="md-content__inner[^"]*">(.*?)</article>', page, re.S).group(1)   # the page's text, not the navigation
    pages = sorted(p.stem for p in (ROOT / 'docs').glob('*.md'))
    assert len(pages) >= 8 and [p for p in pages if f'href="{p}.html"' not in index or not (site / f'{p}.html').is_file()] == []

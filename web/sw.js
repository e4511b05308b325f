// The page's service worker: on the first visit it caches the page, the WebAssembly module
// and the shipped translators (the default first; not those web/app.js marks `later`), so
// that a reload without a network translates; the `later` translators (the whole-corpus word
// model), the language model and the Vision Transformer are cached when first used (the page
// fetches them only then). Everything is answered from the cache of this build first.
//
// VERSION is a hash of every file of the page and of the shipped models
// (tools/web_version.mjs writes it and the list below; the web test stage checks both):
// another build is another sw.js, which the browser installs into a new cache, and the old
// cache goes when it takes over.

// ---- written by tools/web_version.mjs ----
const VERSION = '57fbbed816618192';
const SHELL = [
  'api/checks.mjs',
  'api/classifier.mjs',
  'api/core.mjs',
  'api/figures.mjs',
  'api/generator.mjs',
  'api/model.mjs',
  'app.js',
  'attnlite-api.mjs',
  'attnlite-figures.mjs',
  'attnlite-figures.wasm',
  'attnlite.mjs',
  'attnlite.wasm',
  'draw-pad.js',
  'icon.svg',
  'index.html',
  'lm-map.js',
  'lm-options.js',
  'lm.js',
  'manifest.webmanifest',
  'nw.js',
  'style.css',
  'translate-worker.js',
  'translation-view.js',
  'translator-client.js',
  'ui.js',
  'vit-figures.js',
  'vit.js'
];
const MODELS = [
  'models/transformer-fra-bpe.safetensors',
  'models/transformer-d2l.safetensors',
  'models/bahdanau-d2l.safetensors'
];
// ---- end ----

const CACHE = `attnlite-${VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(['./', ...SHELL]);  // all or nothing: the page works offline whole or not at all
    // The translators this server has (a checkout may lack the whole-corpus model).
    await Promise.all(MODELS.map((m) => cache.add(m).catch(() => {})));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) if (key.startsWith('attnlite-') && key !== CACHE) await caches.delete(key);
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if ((req.method !== 'GET' && req.method !== 'HEAD') || new URL(req.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    // A HEAD request (the page asks which models exist) gets the cached GET's headers.
    const hit = await caches.match(req, { cacheName: CACHE, ignoreMethod: true, ignoreSearch: true });
    if (hit) return hit;
    const res = await fetch(req);
    // Kept for offline (the language model, the ViT), unless a newer build took over: this
    // worker is then redundant, its cache deleted, and caches.open() would bring it back.
    const current = !self.serviceWorker || self.serviceWorker.state === 'activated';
    // The copy is stored while the page reads the response (its download progress shows).
    if (req.method === 'GET' && res.status === 200 && current && await caches.has(CACHE)) {
      const copy = res.clone();
      event.waitUntil(caches.open(CACHE).then((c) => c.put(req, copy)));
    }
    return res;
  })());
});

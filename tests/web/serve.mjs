// A static file server for the page and its tests: 127.0.0.1, a free port, links followed
// (web/models points at ../models), the MIME types modules and WebAssembly need.
//   node tests/web/serve.mjs [DIR=web] [PORT=8000]
// serve(dir, port, { files }): files maps URL paths ('/models/x.safetensors') to a file
// served in their place, or to null for a 404, whatever dir holds (the browser test
// shows the page with and without a model that may or may not be in the checkout).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.png': 'image/png', '.json': 'application/json',
  '.safetensors': 'application/octet-stream', '.svg': 'image/svg+xml', '.webmanifest': 'application/manifest+json',
};

export function serve(dir, port = 0, { files = {} } = {}) {
  const base = resolve(dir);
  const server = createServer(async (req, res) => {
    try {
      let path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (path.endsWith('/')) path += 'index.html';
      const missing = () => Object.assign(new Error('not here'), { code: 'ENOENT' });
      if (Object.hasOwn(files, path) && files[path] === null) throw missing();
      const file = Object.hasOwn(files, path) ? resolve(files[path]) : normalize(join(base, path));
      if (!Object.hasOwn(files, path) && file !== base && !file.startsWith(base + sep)) throw missing();
      const st = await stat(file);
      if (!st.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOENT' });
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'content-length': st.size,
        'cache-control': 'no-store' });
      if (req.method === 'HEAD') return res.end();
      createReadStream(file).pipe(res);
    } catch (e) {
      res.writeHead(e.code === 'ENOENT' ? 404 : 500, { 'content-type': 'text/plain' });
      res.end(e.code === 'ENOENT' ? 'not found\n' : 'error\n');
    }
  });
  return new Promise((ok, fail) => {
    server.on('error', fail);
    server.listen(port, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${server.address().port}/` }));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await serve(process.argv[2] ?? 'web', Number(process.argv[3] ?? 8000));
  console.log(`serving ${process.argv[2] ?? 'web'} at ${url}`);
}

// Writes the service worker's file list and VERSION (web/sw.js, between its "written by"
// markers): every file of the page under web/ (the models folder and editor leftovers
// aside) and the shipped translators, and a SHA-256 over their names and bytes, the shipped
// models' and sw.js's own code, so that any change to the page, the module, a model or the
// worker makes a new cache.
//   node tools/web_version.mjs           rewrite web/sw.js
//   node tools/web_version.mjs --check   exit 1 if web/sw.js is not current
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const web = join(root, 'web');
// The page's translators, as web/app.js lists them (MODELS, one entry a line, and
// DEFAULT_MODEL): the default first, then the others but those marked `later`. The service
// worker caches those the server has on the first visit; the `later` ones when first used.
function translators() {
  const app = readFileSync(join(web, 'app.js'), 'utf8');
  const list = app.match(/^const MODELS = \[\n([\s\S]*?)\n\];$/m);
  const def = app.match(/^const DEFAULT_MODEL = '([^']+)';$/m);
  if (!list || !def) throw new Error('web/app.js: MODELS or DEFAULT_MODEL not found');
  const entries = list[1].split('\n').filter((l) => l.trim() && !l.trim().startsWith('//')).map((l) => {
    const name = l.match(/\{ name: '([^']+)'/);
    if (!name) throw new Error(`web/app.js: a MODELS entry without a name: ${l.trim()}`);
    return { name: name[1], later: /\blater: true\b/.test(l) };
  });
  if (!entries.some((e) => e.name === def[1])) throw new Error(`web/app.js: DEFAULT_MODEL ${def[1]} is not in MODELS`);
  return {
    first: [def[1], ...entries.filter((e) => !e.later && e.name !== def[1]).map((e) => e.name)],
    later: entries.filter((e) => e.later && e.name !== def[1]).map((e) => e.name),
  };
}
const { first: TRANSLATORS, later: LATER_TRANSLATORS } = translators();
// hashed too: a new model is a new version
const CACHED_LATER = [...LATER_TRANSLATORS, 'lm-fra', 'vit-digits'];

function pageFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (name === 'models' || name === 'sw.js' || name.startsWith('.') || name.endsWith('~')) continue;
    if (statSync(path).isDirectory()) out.push(...pageFiles(path));
    else out.push(relative(web, path).split('\\').join('/'));
  }
  return out;
}

const shell = pageFiles(web);
const models = TRANSLATORS.map((m) => `models/${m}.safetensors`);
const hash = createHash('sha256');
for (const f of [...shell, ...models, ...CACHED_LATER.map((m) => `models/${m}.safetensors`)]) {
  const path = join(web, f);
  hash.update(`${f}\n`);
  hash.update(existsSync(path) ? readFileSync(path) : 'missing');
}
// The service worker's own code too (its written block aside): a new worker, a new cache.
const swText = readFileSync(join(web, 'sw.js'), 'utf8');
hash.update(swText.replace(/\/\/ ---- written by tools\/web_version\.mjs ----[\s\S]*\/\/ ---- end ----/, ''));
const version = hash.digest('hex').slice(0, 16);
const block = `// ---- written by tools/web_version.mjs ----
const VERSION = '${version}';
const SHELL = ${JSON.stringify(shell, null, 2).replace(/"/g, "'")};
const MODELS = ${JSON.stringify(models, null, 2).replace(/"/g, "'")};
// ---- end ----`;
const swPath = join(web, 'sw.js');
const sw = readFileSync(swPath, 'utf8');
const start = sw.indexOf('// ---- written by tools/web_version.mjs ----');
const endMark = '// ---- end ----';
const end = sw.indexOf(endMark);
if (start < 0 || end < 0) throw new Error('web/sw.js has lost its "written by" markers');
const next = sw.slice(0, start) + block + sw.slice(end + endMark.length);
if (process.argv.includes('--check')) {
  if (next !== sw) {
    console.error(`web/sw.js is not current (version ${version}): run node tools/web_version.mjs and commit web/sw.js`);
    process.exit(1);
  }
  console.log(`web/sw.js is current (version ${version}, ${shell.length} files, ${models.length} translators)`);
} else {
  writeFileSync(swPath, next);
  console.log(`web/sw.js: version ${version}, ${shell.length} files, ${models.length} translators`);
}

// Shared helpers of the WASM tests: paths, the shipped models, the test sentences and the
// native CLI's output to compare with.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The node build (wasm/build.sh node); ATTNLITE_WASM_DIR points elsewhere (tools/test.sh also
// runs the tests against build/wasm-node-asan, the sanitized build).
export const wasmDir = resolve(process.env.ATTNLITE_WASM_DIR ?? join(root, 'build', 'wasm-node'));
export const nativeCli = process.env.ATTNLITE_NATIVE_CLI ?? join(root, 'build', 'native', 'attnlite');

// The shipped models present in this checkout: the book's two, and the whole-corpus int8
// Transformer.
export const models = ['transformer-d2l', 'bahdanau-d2l', 'transformer-fra']
  .map((name) => ({ name, path: join(root, 'models', `${name}.safetensors`) }))
  .filter((m) => existsSync(m.path));

// The book's four sentences, then 50 English sentences from the first 600 pairs of the
// Tatoeba fra-eng corpus (every 12th line; CC-BY 2.0 France, tatoeba.org).
export const bookSentences = ['go .', 'i lost .', "he's calm .", "i'm home ."];
export const corpusSentences = readFileSync(join(root, 'tests', 'web', 'corpus50.txt'), 'utf8')
  .split('\n').filter((l) => l.length > 0);
export const sentences = [...bookSentences, ...corpusSentences];

// The JavaScript API of a build (its module: Attnlite, Model, Generator, Classifier ...).
export async function loadApi(dir = wasmDir) {
  return import(pathToFileURL(join(resolve(dir), 'attnlite-api.mjs')).href);
}

export async function loadAttnlite(dir = wasmDir) {
  const { Attnlite } = await loadApi(dir);
  return Attnlite.create();
}

// `attnlite translate --whole --json --weights` over stdin: one parsed object per line, each
// translated as one sentence (uncut), as Model.translate translates its sentence.
export function nativeTranslate(modelPath, lines, extra = []) {
  if (!existsSync(nativeCli)) throw new Error(`${nativeCli} is missing: build the native CLI first`);
  const p = spawnSync(nativeCli, ['translate', '--whole', '--json', '--weights', '--model', modelPath, ...extra],
    { input: lines.join('\n') + '\n', encoding: 'utf8', maxBuffer: 256 << 20 });
  if (p.status !== 0) throw new Error(`native CLI failed (${p.status}): ${p.stderr}`);
  return p.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

// Two RGBA images of one size, pixel by pixel: how many pixels differ inside and outside the
// given rects (a figure's panels; none: every pixel is outside), and by how many levels at
// most in any channel.
export function figureDiff(a, b, panels = []) {
  const inCell = new Uint8Array(a.width * a.height);
  for (const P of panels)
    for (let y = P.y; y < P.y + P.h; ++y) inCell.fill(1, y * a.width + P.x, y * a.width + P.x + P.w);
  const r = { inside: 0, outside: 0, maxInside: 0, maxOutside: 0 };
  for (let i = 0; i < a.width * a.height; ++i) {
    let d = 0;
    for (let c = 0; c < 4; ++c) d = Math.max(d, Math.abs(a.data[4 * i + c] - b.data[4 * i + c]));
    if (d === 0) continue;
    if (inCell[i]) {
      r.inside += 1;
      r.maxInside = Math.max(r.maxInside, d);
    } else {
      r.outside += 1;
      r.maxOutside = Math.max(r.maxOutside, d);
    }
  }
  return r;
}

// A minimal safetensors reader for the fixtures (F32 and I64 only, which is all they use):
// { tensors: { name: { shape, data } }, meta } with F32 as Float32Array, I64 as numbers.
export function readSafetensors(path) {
  const b = readFileSync(path);
  const n = Number(b.readBigUInt64LE(0));
  const header = JSON.parse(b.subarray(8, 8 + n).toString('utf8'));
  const meta = header.__metadata__ ?? {};
  delete header.__metadata__;
  const data = b.subarray(8 + n);
  const tensors = {};
  for (const [name, { dtype, shape, data_offsets: [s, e] }] of Object.entries(header)) {
    const bytes = Uint8Array.prototype.slice.call(data, s, e);  // aligned copy
    if (dtype === 'F32') tensors[name] = { shape, data: new Float32Array(bytes.buffer) };
    else if (dtype === 'I64') tensors[name] = { shape, data: Array.from(new BigInt64Array(bytes.buffer), Number) };
    else throw new Error(`${name}: dtype ${dtype}`);
  }
  return { tensors, meta };
}

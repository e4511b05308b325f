// The SIMD128 kernel table of the WebAssembly build against the scalar reference, kernel by
// kernel at every tail size (tests/wasm/kernel_parity.cpp). The program is built by
// `wasm/build.sh kernel-test` into the node build's folder (build/wasm-node/kernel_parity.mjs),
// never here: without it this file skips, unless ATTNLITE_REQUIRE_KERNEL_TEST=1 (tools/test.sh)
// makes that a failure. It does not load the build under ATTNLITE_WASM_DIR (the sanitized run
// of tools/test.sh runs it all the same).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { root } from './common.mjs';

const program = join(root, 'build', 'wasm-node', 'kernel_parity.mjs');
const required = process.env.ATTNLITE_REQUIRE_KERNEL_TEST === '1';
const missing = !existsSync(program);

test('kernels: every SIMD128 kernel agrees with the scalar reference at every tail size',
  { skip: missing && !required ? `${program} is missing: run wasm/build.sh kernel-test` : false }, () => {
    assert.ok(!missing, `${program} is missing: run wasm/build.sh kernel-test`);
    const p = spawnSync(process.execPath, [program], { encoding: 'utf8', timeout: 120_000 });
    const out = `${p.stdout}${p.stderr}`;
    assert.equal(p.status, 0, out);
    assert.match(out, /table 'simd128' against 'scalar'/);
    for (const k of ['linear', 'linear_i8', 'gemm_nt', 'gemm_nn', 'softmax_rows', 'layer_norm',
      'add', 'relu', 'tanh', 'sigmoid', 'gelu', 'exp_sum'])
      assert.match(out, new RegExp(`^${k} +\\d+ cases .* ok$`, 'm'), `${k} missing or failed:\n${out}`);
    assert.match(out, /all kernels agree/);
  });

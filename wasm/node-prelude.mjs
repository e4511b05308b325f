// Prepended to the node build (--extern-pre-js): Emscripten 3.1.6's node glue calls
// require() and reads __dirname, which an ES module lacks.
import { createRequire } from 'module';
import { dirname } from 'path';
import { fileURLToPath } from 'url';
const require = createRequire(import.meta.url);
const __dirname = dirname(fileURLToPath(import.meta.url));

// Appended to kernel_parity.mjs (--extern-post-js): Emscripten 3.1.6 modularizes every ES
// module it writes, so the factory is called here; `node kernel_parity.mjs` then runs main()
// and exits with its status. The .wasm is named by path: the glue's own file: URL is not one
// that its node file reader opens.
Module({ locateFile: (name) => `${__dirname}/${name}` });

'use strict'
// Loaded with `node -r` by scripts/fuzz-js.mjs on Linux systems older than glibc 2.38 (e.g. Debian 12):
// the fuzzer addon that @jazzer.js/fuzzer ships is built against glibc 2.38 and libstdc++ 13, yet uses
// only three symbols from them (`__isoc23_strtol`, `__isoc23_strtoul`, `std::ios_base_library_init`).
// The runner makes a copy of the addon whose requirement on those two versions is weak and a small
// library defining the three symbols (LD_PRELOAD); this hook loads that copy in place of the original.
const compat = process.env.PRISM_FUZZ_JS_ADDON
if (compat) {
  const dlopen = process.dlopen
  process.dlopen = function (module, filename, ...rest) {
    if (typeof filename === 'string' && /[\\/]fuzzer-linux-x64\.node$/.test(filename)) filename = compat
    return dlopen.call(this, module, filename, ...rest)
  }
}

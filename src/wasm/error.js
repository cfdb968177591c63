// The class of every error chunkwise's functions throw and its promises reject with
// (declared in the .d.ts from src/error.rs ERROR_CODES_TS). The package's entry points
// re-export this module's class (scripts/build-pkg.sh), so `err instanceof ChunkwiseError`
// holds for the errors the wasm module makes: there is one copy of this module per build.

/** An `Error` whose `code` says what failed (one of the `ErrorCode` union). */
export class ChunkwiseError extends Error {
  constructor(message, code, field) {
    super(message);
    this.name = "ChunkwiseError";
    this.code = code;
    // The partition functions name the input field at fault.
    if (field !== undefined) this.field = field;
  }
}

/** A ChunkwiseError, made for the Rust side (src/wasm/mod.rs). */
export function chunkwiseError(message, code, field) {
  return new ChunkwiseError(message, code, field);
}

// The tests that run the TypeScript compiler over the sources, in one test
// file so that they run in one process and parse the sources, the Node types
// and the peers' declarations once between them (test/helpers/compiler.ts):
// the snippets of the docs, the names the conventions retired, the options
// of every public function, the entry points, and the declarations without
// optional peers. Each file below is a suite of its own.
import './docs.compile.js';
import './conventions.compile.js';
import './options/coverage.compile.js';
import './package/entry-points.compile.js';
import './package/peer-free-types.compile.js';

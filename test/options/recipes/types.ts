// A recipe calls one public function or constructor that takes an options
// object, with the least it needs to be valid, plus `extra` merged into its
// options. test/options/unknown-keys.test.ts calls each with an unknown key.

/** Calls the function with valid arguments and `extra` in its options; may return a promise. */
export type Recipe = (extra: Record<string, unknown>) => unknown;

/** Recipes by exported name (one function exported from several entry points is one recipe). */
export type Recipes = Record<string, Recipe>;

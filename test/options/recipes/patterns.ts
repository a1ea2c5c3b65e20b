// Recipes of the patterns layer's functions (see ./types.ts).
import type { Recipes } from './types.js';

export const patternsRecipes: Recipes = {};

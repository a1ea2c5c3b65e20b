// Recipes of the edges layer's functions (see ./types.ts).
import type { Recipes } from './types.js';

export const edgesRecipes: Recipes = {};

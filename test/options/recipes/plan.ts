// Recipes of the plan layer's functions (see ./types.ts).
import type { Recipes } from './types.js';

export const planRecipes: Recipes = {};

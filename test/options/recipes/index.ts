// Every recipe, from each layer's file.
import { kernelRecipes } from './kernel.js';
import type { Recipes } from './types.js';

export const recipes: Recipes = { ...kernelRecipes };

// Every recipe, from each layer's file.
import { adaptersRecipes } from './adapters.js';
import { agentsRecipes } from './agents.js';
import { edgesRecipes } from './edges.js';
import { guardrailsRecipes } from './guardrails.js';
import { kernelRecipes } from './kernel.js';
import { patternsRecipes } from './patterns.js';
import { planRecipes } from './plan.js';
import type { Recipes } from './types.js';

export const recipes: Recipes = { ...kernelRecipes, ...patternsRecipes, ...guardrailsRecipes, ...planRecipes, ...adaptersRecipes, ...agentsRecipes, ...edgesRecipes };

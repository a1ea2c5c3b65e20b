/**
 * The template registry: named plan templates kept in a {@link Store}, one
 * versioned document each under `templates/<name>`.
 * @module
 */
import { ConfigurationError, StoreError, describeValue } from '../../core/errors.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { TemplateError, checkPlanTemplate, formatTemplateIssues, type PlanTemplate } from './template.js';

/** The store key prefix of templates: `templates/<name>`. */
export const TEMPLATE_KEY_PREFIX = 'templates/';

/** The schema version of a stored template document. */
export const TEMPLATE_DOCUMENT_VERSION = 1;

/** Named plan templates in a store. */
export interface TemplateRegistry {
  /** Check a template ({@link checkPlanTemplate}) and save it under its name, replacing one of the same name. */
  save(template: unknown, options?: StoreCallOptions): Promise<PlanTemplate>;
  /** The template named `name`, or `undefined`. A stored document that is not a valid template is a `StoreError`. */
  get(name: string, options?: StoreCallOptions): Promise<PlanTemplate | undefined>;
  /** The names of the stored templates, sorted. */
  list(options?: StoreCallOptions): Promise<string[]>;
  /** Remove a template; true when there was one. */
  delete(name: string, options?: StoreCallOptions): Promise<boolean>;
}

/**
 * The template registry in `store`.
 *
 * @example
 * ```ts
 * const templates = templateRegistry(fileStore('.troupe'));
 * await templates.save(template);
 * const { plan } = instantiatePlanTemplate((await templates.get('fix-module'))!, { module: 'cache' });
 * ```
 */
export function templateRegistry(store: Store): TemplateRegistry {
  if (!store || typeof store.get !== 'function' || typeof store.set !== 'function') {
    throw new ConfigurationError(`Expected \`store\` to be a Store, got ${describeValue(store)}`);
  }
  const keyOf = (name: unknown): string => {
    if (typeof name !== 'string' || !/^[a-z0-9][a-z0-9-]{0,99}$/.test(name)) {
      throw new ConfigurationError(`Expected a template name (lower-case letters, digits and "-"), got ${describeValue(name)}`, { code: 'invalid_argument' });
    }
    return `${TEMPLATE_KEY_PREFIX}${name}`;
  };
  return {
    async save(template, options = {}) {
      const check = checkPlanTemplate(template);
      if (!check.valid) throw new TemplateError(`Invalid plan template: ${formatTemplateIssues(check.errors)}`, 'invalid_template', check.errors);
      await store.set(keyOf(check.template.name), { version: TEMPLATE_DOCUMENT_VERSION, template: check.template }, options);
      return check.template;
    },
    async get(name, options = {}) {
      const key = keyOf(name);
      const doc = (await store.get(key, options)) as { version?: unknown; template?: unknown } | undefined;
      if (doc === undefined) return undefined;
      if (typeof doc !== 'object' || doc === null || typeof doc.version !== 'number') throw new StoreError(`Stored template ${key} is not a template document`, { details: { key } });
      if (doc.version > TEMPLATE_DOCUMENT_VERSION) {
        throw new StoreError(`Stored template ${key} has schema version ${doc.version}; this troupe reads up to ${TEMPLATE_DOCUMENT_VERSION}`, { details: { key, version: doc.version } });
      }
      const check = checkPlanTemplate(doc.template);
      if (!check.valid) throw new StoreError(`Stored template ${key} is invalid: ${formatTemplateIssues(check.errors)}`, { details: { key, issues: check.errors } });
      return check.template;
    },
    async list(options = {}) {
      const keys = await store.list(TEMPLATE_KEY_PREFIX, options);
      return keys.map((k) => k.slice(TEMPLATE_KEY_PREFIX.length)).filter((n) => !n.includes('/')).sort();
    },
    delete(name, options = {}) {
      return store.delete(keyOf(name), options);
    },
  };
}

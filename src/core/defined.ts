/**
 * `defined(fields)`: the fields whose value is not `undefined`, for building
 * objects with optional fields (options, events, records) in one step,
 * rather than one `...(x === undefined ? {} : { x })` spread per field.
 * @module
 */

/** The fields of `T` that may be `undefined`, made optional (and never `undefined`); the others as they are. */
export type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
};

/**
 * A copy of `fields` without the fields whose value is `undefined`, so that a
 * spread sets only what is known (an `undefined` would hide a default, show
 * up in `'key' in object` and in strict equality, and break a caller's
 * `exactOptionalPropertyTypes`).
 *
 * @example
 * ```ts
 * ctx.emit('agent.failed', { agent, error: message, ...defined({ code }) });
 * ```
 */
export function defined<T extends object>(fields: T): Defined<T> {
  const out: Record<string, unknown> = {};
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) out[key] = value;
  }
  return out as Defined<T>;
}

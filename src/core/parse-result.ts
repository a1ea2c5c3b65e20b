/**
 * The result of a non-throwing parser, in zod's `safeParse` shape. Every
 * parser in troupe comes in a pair: one that throws a typed error, one that
 * returns a {@link SafeParseResult}.
 * @module
 */

/** One reason a parser refused its input; `code` names the rule that failed. */
export interface ParseIssue {
  /** Which rule failed (`no_score`, `no_assignments`, `unknown_key`, ...). */
  code: string;
  /** A readable explanation. */
  message: string;
}

/** `{ success: true, data }` or `{ success: false, issues }`. */
export type SafeParseResult<T, I extends ParseIssue = ParseIssue> = { success: true; data: T } | { success: false; issues: I[] };

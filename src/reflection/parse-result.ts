/**
 * The result of a non-throwing parser, in zod's `safeParse` shape.
 * @module
 */

/** One reason a parser refused its input; `code` names the rule that failed. */
export interface ParseIssue {
  /** Which rule failed (`no_score`, `no_assignments`, ...). */
  code: string;
  /** A readable explanation. */
  message: string;
}

/** `{ success: true, data }` or `{ success: false, issues }`. */
export type SafeParseResult<T> = { success: true; data: T } | { success: false; issues: ParseIssue[] };

/**
 * What a worker may trust of a job: its signature (an HMAC-SHA256 of the
 * job with a key coordinators and workers share), its size, and, for the
 * chunk's checkpoint, the grant its coordinator wrote to the store before
 * adding it. Shared by both sides of the queue.
 * @module
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigurationError, describeValue, errorMessage } from '../../core/errors.js';
import type { Store, StoreCallOptions } from '../../core/store.js';
import { JobRefusedError } from './errors.js';

/** The shortest signing key accepted, in bytes. */
export const MIN_SIGNING_KEY_BYTES = 16;

/** How many bytes a job's JSON may have by default: 2 MiB. */
export const DEFAULT_MAX_JOB_BYTES = 2 * 1024 * 1024;

/** How many bytes (UTF-8) a job's prompt (a chunk's prompt, a run's input) may have by default: 1 MiB. */
export const DEFAULT_MAX_PROMPT_BYTES = 1024 * 1024;

/** The field of a job's data that holds its signature. */
export const SIGNATURE_FIELD = 'sig';

/** The version tag of a signature (`v1=<hex>`). */
const SIGNATURE_PREFIX = 'v1=';

/** Deepest nesting of a job's data that is serialised (troupe's jobs are a few levels deep). */
const MAX_DEPTH = 64;

/** A job's limits and key, checked: what both sides of the queue apply. */
export interface JobTrust {
  /** The shared key; `undefined` when jobs are not signed. */
  readonly key: Buffer | undefined;
  readonly maxJobBytes: number;
  readonly maxPromptBytes: number;
}

/** The options {@link jobTrust} reads. */
export interface JobTrustOptions {
  signingKey?: string | Uint8Array | undefined;
  maxJobBytes?: number | undefined;
  maxPromptBytes?: number | undefined;
}

/** Check the signing key and the size limits; a `ConfigurationError` names a bad one. */
export function jobTrust(options: JobTrustOptions): JobTrust {
  return {
    key: signingKeyOf(options.signingKey),
    maxJobBytes: positiveInteger('maxJobBytes', options.maxJobBytes) ?? DEFAULT_MAX_JOB_BYTES,
    maxPromptBytes: positiveInteger('maxPromptBytes', options.maxPromptBytes) ?? DEFAULT_MAX_PROMPT_BYTES,
  };
}

function positiveInteger(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
  throw new ConfigurationError(`Expected \`${name}\` to be a positive integer (bytes), got ${describeValue(value)}`);
}

function signingKeyOf(value: unknown): Buffer | undefined {
  if (value === undefined) return undefined;
  const key = typeof value === 'string' ? Buffer.from(value, 'utf8') : value instanceof Uint8Array ? Buffer.from(value) : undefined;
  if (key === undefined || key.length < MIN_SIGNING_KEY_BYTES) {
    const what = key === undefined ? describeValue(value) : `${key.length} bytes`;
    throw new ConfigurationError(`Expected \`signingKey\` to be a string or bytes of at least ${MIN_SIGNING_KEY_BYTES} bytes (32 random bytes are best), got ${what}`);
  }
  return key;
}

/**
 * The canonical serialisation of JSON data: object keys sorted (by UTF-16
 * code units), no whitespace, keys whose value is `undefined` left out (as
 * JSON leaves them out), so the same data gives the same text on both sides
 * of the queue, whatever order its keys were written in. One pass over the
 * data (keys sorted per object). Data nested deeper than {@link MAX_DEPTH}
 * or holding something JSON cannot carry is refused.
 */
export function canonicalJson(value: unknown): string {
  const parts: string[] = [];
  write(value, parts, 0);
  return parts.join('');
}

function write(value: unknown, out: string[], depth: number): void {
  if (depth > MAX_DEPTH) throw new TypeError(`nested deeper than ${MAX_DEPTH} levels`);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    out.push(JSON.stringify(value));
    return;
  }
  if (typeof value === 'number') {
    out.push(Number.isFinite(value) ? JSON.stringify(value) : 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      const item: unknown = value[i];
      write(item === undefined || typeof item === 'function' ? null : item, out, depth + 1);
    }
    out.push(']');
    return;
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined && typeof record[k] !== 'function')
      .sort();
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      write(record[k], out, depth + 1);
    });
    out.push('}');
    return;
  }
  throw new TypeError(`${typeof value} is not JSON`);
}

/** The job's data without its signature. */
export function unsigned(data: unknown): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data) || !(SIGNATURE_FIELD in data)) return data;
  const { [SIGNATURE_FIELD]: _sig, ...rest } = data as Record<string, unknown>;
  return rest;
}

/** What is signed: the job's id and name (BullMQ's), then its data without the signature, canonically. */
function signedText(jobId: string, name: string, data: unknown): string {
  return `troupe-job\n${jobId}\n${name}\n${canonicalJson(unsigned(data))}`;
}

/** The signature of job `jobId` named `name` with `data`: `v1=` and the hex HMAC-SHA256 with `key`. */
export function signJob(key: Buffer, jobId: string, name: string, data: unknown): string {
  return SIGNATURE_PREFIX + createHmac('sha256', key).update(signedText(jobId, name, data), 'utf8').digest('hex');
}

/**
 * Check a job's signature with `key` (compared in constant time); a
 * {@link JobRefusedError} (`unsigned` or `bad_signature`) when it is
 * missing or does not verify.
 */
export function verifyJob(key: Buffer, jobId: string, name: string, data: unknown): void {
  const given = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[SIGNATURE_FIELD] : undefined;
  if (typeof given !== 'string') {
    throw new JobRefusedError('unsigned', `Job ${jobId} is not signed, and this worker runs only jobs signed with its signingKey (was it added by a coordinator without one, or by someone else?)`, {
      details: { jobId },
    });
  }
  let expected: string;
  try {
    expected = signJob(key, jobId, name, data);
  } catch (error) {
    throw new JobRefusedError('bad_signature', `Job ${jobId} cannot be checked: its data is not plain JSON (${errorMessage(error)})`, { details: { jobId } });
  }
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new JobRefusedError('bad_signature', `Job ${jobId} has a signature that does not verify with this worker's signingKey: it was not signed by a coordinator with the same key, or was changed after`, {
      details: { jobId },
    });
  }
}

/** Bytes of `text` in UTF-8, counted without copying it. */
function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Refuse a job larger than the limits, before anything of it runs (or is
 * added): its prompt (a chunk's `prompt`, a run's `input`) over
 * `maxPromptBytes`, or its JSON over `maxJobBytes`. A
 * {@link JobRefusedError} (`too_large`) names the limit.
 */
export function checkJobSize(trust: JobTrust, jobId: string, data: unknown): void {
  const d = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const prompt = typeof d.prompt === 'string' ? d.prompt : typeof d.input === 'string' ? d.input : undefined;
  if (prompt !== undefined) {
    const bytes = utf8Bytes(prompt);
    if (bytes > trust.maxPromptBytes) {
      throw new JobRefusedError('too_large', `Job ${jobId} has a prompt of ${bytes} bytes, over the limit of ${trust.maxPromptBytes} (maxPromptBytes)`, {
        details: { jobId, bytes, limit: trust.maxPromptBytes, option: 'maxPromptBytes' },
      });
    }
  }
  let json: string;
  try {
    json = JSON.stringify(data) ?? '';
  } catch {
    json = '';
  }
  const bytes = utf8Bytes(json);
  if (bytes > trust.maxJobBytes) {
    throw new JobRefusedError('too_large', `Job ${jobId} is ${bytes} bytes of JSON, over the limit of ${trust.maxJobBytes} (maxJobBytes)`, {
      details: { jobId, bytes, limit: trust.maxJobBytes, option: 'maxJobBytes' },
    });
  }
}

/** The SHA-256 (hex) of a job's data without its signature, canonically: what a grant names. */
export function jobDigest(data: unknown): string {
  return createHash('sha256').update(canonicalJson(unsigned(data)), 'utf8').digest('hex');
}

/**
 * The store document of the grant of the chunk job whose data has digest
 * `digest` in run `runId` (under the run's keys, so `pruneRuns` removes it
 * with the run).
 */
export function grantKey(runId: string, digest: string): string {
  return `runs/${runId}/job-grants/${digest}`;
}

/** What a coordinator writes before it adds a chunk job: which job id the job with that data has. */
export interface JobGrant {
  jobId: string;
  sequenceIndex: number;
  attempt: number;
}

/** Write the grant of a chunk job: its coordinator hands out this attempt, with exactly this data, as job `grant.jobId`. */
export async function writeGrant(store: Store, runId: string, data: unknown, grant: JobGrant, options: StoreCallOptions = {}): Promise<void> {
  await store.set(grantKey(runId, jobDigest(data)), grant, options);
}

/**
 * True when the coordinator of run `runId` handed out job `jobId` with
 * exactly `data` (it wrote the grant before adding the job): the only jobs
 * whose results a worker records in the run's checkpoint.
 */
export async function isGranted(store: Store, runId: string, jobId: string, data: unknown, options: StoreCallOptions = {}): Promise<boolean> {
  const grant = await store.get(grantKey(runId, jobDigest(data)), options);
  return typeof grant === 'object' && grant !== null && (grant as { jobId?: unknown }).jobId === jobId;
}

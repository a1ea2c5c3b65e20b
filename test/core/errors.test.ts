import { describe, expect, it } from 'vitest';
import {
  CancelledError,
  ConfigurationError,
  MaxTurnsExceededError,
  SessionBusyError,
  TimeoutError,
  TroupeError,
  describeValue,
  isTroupeError,
} from '../../src/core/errors.js';

describe('errors', () => {
  it('sets name from the subclass, a literal code and the cause', () => {
    const cause = new Error('root');
    const e = new ConfigurationError('bad', { cause });
    expect(e).toBeInstanceOf(TroupeError);
    expect(e.name).toBe('ConfigurationError');
    expect(e.code).toBe('invalid_option');
    expect(e.cause).toBe(cause);
    expect(new MaxTurnsExceededError(3, 'a')).toMatchObject({ name: 'MaxTurnsExceededError', code: 'max_turns_exceeded' });
    expect(new SessionBusyError('s').code).toBe('session_busy');
    expect(new TimeoutError('t').code).toBe('timeout');
    expect(new CancelledError().code).toBe('cancelled');
    expect(isTroupeError(e, 'invalid_option')).toBe(true);
    expect(isTroupeError(new Error('x'))).toBe(false);
  });

  it('describes values for messages', () => {
    expect(describeValue(-1)).toBe('-1 (number)');
    expect(describeValue(Infinity)).toBe('Infinity (number)');
    expect(describeValue(-Infinity)).toBe('-Infinity (number)');
    expect(describeValue(Number.NaN)).toBe('NaN (number)');
    expect(describeValue('x')).toBe('"x" (string)');
    expect(describeValue(null)).toBe('null (null)');
  });
});

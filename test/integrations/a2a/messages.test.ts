// The pure parts of troupe/a2a: what a client's message answers, where a
// card is, what a remote agent is called.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cardUrlOf } from '../../../src/integrations/a2a/client.js';
import { answerOf } from '../../../src/integrations/a2a/messages.js';
import { nameFromUrl } from '../../../src/integrations/a2a/remote.js';
import { artifactText, partsText } from '../../../src/integrations/a2a/wire.js';
import { userMessage } from '../../helpers/a2a.js';

describe('answers in a message', () => {
  it('a question takes the text; an approval yes or no; a plan approve, reject or feedback; a data part is the answer as it is', () => {
    expect(answerOf('question', userMessage('the release branch'))).toEqual({ text: 'the release branch' });
    for (const yes of ['yes', 'Yes.', ' OK ', 'approve', '"go ahead"']) expect(answerOf('approval', userMessage(yes)), yes).toEqual({ approved: true });
    for (const no of ['no', 'No!', 'deny', 'reject']) expect(answerOf('approval', userMessage(no)), no).toEqual({ approved: false });
    expect(answerOf('approval', userMessage('perhaps later'))).toEqual({ approved: 'perhaps later' });
    expect(answerOf('plan-approval', userMessage('Approve'))).toEqual({ decision: 'approve' });
    expect(answerOf('plan-approval', userMessage('reject'))).toEqual({ decision: 'reject' });
    expect(answerOf('plan-approval', userMessage('Split chunk 2 first'))).toEqual({ decision: 'request-changes', feedback: 'Split chunk 2 first' });
    expect(answerOf('approval', userMessage('see data', {}, { approved: true, scope: 'session' }))).toEqual({ approved: true, scope: 'session' });
  });

  it('never throws on any text (its time: npm run bench -- parsers)', () => {
    fc.assert(
      fc.property(fc.constantFrom('question', 'approval', 'plan-approval' as const), fc.string({ maxLength: 2000 }), (kind, text) => {
        expect(answerOf(kind, userMessage(text))).toBeTypeOf('object');
      }),
    );
    const long = `${' '.repeat(200_000)}x${'!'.repeat(200_000)}`;
    expect(answerOf('approval', userMessage(long))).toBeTypeOf('object');
  });

  it('parts as text: a message\'s parts apart, an artifact\'s chunks joined', () => {
    const parts = userMessage('Looks ', {}, { ok: true }).parts;
    expect(partsText(parts)).toBe('Looks \n\n{"ok":true}');
    expect(artifactText(userMessage('Looks ').parts.concat(userMessage('good.').parts))).toBe('Looks good.');
  });
});

describe('where a remote agent is', () => {
  it('its card: the URL itself when it names a JSON file, else the well-known path under it', () => {
    expect(cardUrlOf('http://127.0.0.1:4100')).toBe('http://127.0.0.1:4100/.well-known/agent-card.json');
    expect(cardUrlOf('http://127.0.0.1:4100/review-panel/')).toBe('http://127.0.0.1:4100/review-panel/.well-known/agent-card.json');
    expect(cardUrlOf('http://127.0.0.1:4100/review-panel')).toBe('http://127.0.0.1:4100/review-panel/.well-known/agent-card.json');
    expect(cardUrlOf('https://x.example/cards/reviewer.json')).toBe('https://x.example/cards/reviewer.json');
    expect(cardUrlOf('https://x.example/a', '/agent.json')).toBe('https://x.example/a/agent.json');
  });

  it('its name: the last segment of the path, else the host', () => {
    expect(nameFromUrl('http://127.0.0.1:4100/review-panel/')).toBe('review-panel');
    expect(nameFromUrl('https://x.example/')).toBe('x.example');
    expect(nameFromUrl('https://x.example/.well-known/agent-card.json')).toBe('x.example');
  });
});

// Guards against answer links that can be forged, stretched or replayed with another key set: a
// changed character, an expired time, a dropped key, and rotation (new key signs, old verifies).
import { AnswerLinkSigner } from './answer-link';

const OLD = 'old-answer-link-key-0123456789abcdef';
const NEW = 'new-answer-link-key-0123456789abcdef';
const GRANT = {
  taskId: 'task_aaaaaaaaaaaaaaaaaaaaaaaaaa',
  keys: ['confirm', 'name'],
  expiresAt: 2000,
};

it('verifies its own token until it expires, then says expired', () => {
  const signer = new AnswerLinkSigner([OLD]);
  const token = signer.sign(GRANT);
  expect(signer.verify(token, 1999)).toEqual(GRANT);
  expect(signer.verify(token, 2000)).toBe('expired');
});

it('refuses a token changed in any one character', () => {
  const signer = new AnswerLinkSigner([OLD]);
  const token = signer.sign(GRANT);
  for (let i = 0; i < token.length; i++) {
    const other = token[i] === 'A' ? 'B' : 'A';
    const changed = token.slice(0, i) + other + token.slice(i + 1);
    expect([i, signer.verify(changed, 0)]).toEqual([i, 'invalid']);
  }
});

it('refuses tokens of other keys and malformed ones', () => {
  const token = new AnswerLinkSigner([NEW]).sign(GRANT);
  expect(new AnswerLinkSigner([OLD]).verify(token, 0)).toBe('invalid');
  for (const junk of ['', 'a1', 'a1..', `${token}.x`, 'a2' + token.slice(2), 'x'.repeat(9000)]) {
    expect(new AnswerLinkSigner([NEW]).verify(junk, 0)).toBe('invalid');
  }
});

it('rotates: the first key signs, every key verifies', () => {
  const before = new AnswerLinkSigner([OLD]).sign(GRANT);
  const rotated = new AnswerLinkSigner([NEW, OLD]);
  expect(rotated.verify(before, 0)).toEqual(GRANT);
  const after = rotated.sign(GRANT);
  expect(new AnswerLinkSigner([NEW]).verify(after, 0)).toEqual(GRANT);
  expect(new AnswerLinkSigner([OLD]).verify(after, 0)).toBe('invalid');
});

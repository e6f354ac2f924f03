import { LineBound, MessageTooLargeError, messageCounter } from './message-bound';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Feeds the chunks to one answer's counter; the text taken, or the error it would fail with. */
function through(maxBytes: number, eventStream: boolean, chunks: string[]) {
  const counter = messageCounter(maxBytes, eventStream);
  for (const chunk of chunks) {
    if (!counter.accepts(bytes(chunk))) return { error: new MessageTooLargeError(maxBytes) };
  }
  return { text: chunks.join('') };
}

describe('messageCounter', () => {
  it('passes a JSON answer up to the bound and refuses one byte more', () => {
    expect(through(10, false, ['{"a":', '"12"}'])).toEqual({ text: '{"a":"12"}' });
    const over = through(10, false, ['{"a":', '"123"}']);
    expect(over.error).toBeInstanceOf(MessageTooLargeError);
    expect(String((over.error as Error).message)).toContain('longer than 10 bytes');
  });

  it('bounds each SSE event, not the stream: many short events pass', () => {
    const event = 'data: 123456\n\n'; // 14 bytes
    expect(
      through(
        14,
        true,
        Array.from({ length: 50 }, () => event),
      ),
    ).toEqual({
      text: event.repeat(50),
    });
    // One event of 20 bytes does not.
    expect(through(14, true, ['data: 12345678901234\n\n']).error).toBeInstanceOf(
      MessageTooLargeError,
    );
  });

  it('counts an event from its first byte across chunks, and ends it at a blank line split between chunks', () => {
    // The blank line's two LFs arrive in two chunks: the next event starts fresh.
    expect(through(12, true, ['data: 1234\n', '\ndata: 5678\n\n'])).toEqual({
      text: 'data: 1234\n\ndata: 5678\n\n',
    });
    // Without a blank line, three chunks make one event of 21 bytes.
    expect(through(12, true, ['data: 1234\n', 'data: 5678\n', 'x']).error).toBeInstanceOf(
      MessageTooLargeError,
    );
  });

  it('takes CRLF line ends as one break each: only a blank line ends an event', () => {
    // CRLF lines inside one event: 24 bytes, no blank line, over a bound of 16.
    expect(through(16, true, ['data: 12\r\ndata: 34\r\nxxxx']).error).toBeInstanceOf(
      MessageTooLargeError,
    );
    // CRLF CRLF ends it, in one chunk or split in the middle.
    expect(through(16, true, ['data: 1234\r\n\r\n', 'data: 5678\r\n', '\r\n'])).toEqual({
      text: 'data: 1234\r\n\r\ndata: 5678\r\n\r\n',
    });
    expect(through(12, true, ['data: 1\r\r', 'data: 2\r\r'])).toEqual({
      text: 'data: 1\r\rdata: 2\r\r',
    });
  });
});

describe('LineBound', () => {
  it('bounds the line not yet ended, across chunks', () => {
    const bound = new LineBound(8);
    expect(bound.exceededBy(bytes('{"a":1}\n{"b"'))).toBe(false); // 4 bytes pending
    expect(bound.exceededBy(bytes(':12'))).toBe(false); // 7
    expect(bound.exceededBy(bytes('}\n'))).toBe(false); // ended: 0
    expect(bound.exceededBy(bytes('123456789'))).toBe(true); // 9 pending
    // A whole line inside one chunk is measured as well.
    expect(new LineBound(8).exceededBy(bytes('{"a":1}\n{"b":123}\n'))).toBe(true);
  });
});

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** A result whose structuredContent is the protocol answer; the text copy is for humans only. */
export function structuredResult(content: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(content) }], structuredContent: content };
}

export function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Never settles on its own: the "hang" faults. It rejects when the request is aborted (the
 * client cancelled, or the session closed) so a hung call does not leak past its connection.
 */
export function hangUntilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    const abort = (): void => reject(new Error('request aborted while hanging (demo fault)'));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  });
}

/** Exits the way a crashing upstream would: no answer, no cleanup beyond what was saved. */
export function crashNow(reason: string): never {
  process.stderr.write(`demo-server: crashing on purpose (${reason})\n`);
  process.exit(1);
}

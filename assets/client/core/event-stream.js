/**
 * @file Server-Sent Events read by hand (`/client/core/event-stream.js`):
 * the WHATWG event stream format parsed from a reader of text. The client
 * reads its stream with `fetch`, not `EventSource`, so that a reconnect
 * can send `Last-Event-ID` itself; this is the parser that takes
 * `EventSource`'s place. It knows nothing of errand's events
 * (`./notification-stream.js` does).
 */

/**
 * Reads Server-Sent Events (the WHATWG event stream format) from a reader
 * of text until the stream ends. `onEvent` gets `{type, data, id}`: `data`
 * null for a block with no data, `id` undefined when the block had none.
 * `onBytes` hears of every chunk (a keep-alive comment included).
 * @param {ReadableStreamDefaultReader<string>} reader
 * @param {{onBytes: () => void, onEvent: (event: {type: string, data: string|null, id: string|undefined}) => void}} handlers
 */
export async function readEventStream(reader, { onBytes, onEvent }) {
  let buffer = '';
  let data = [];
  let type = '';
  let id;
  let first = true;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    onBytes();
    buffer += first ? value.replace(/^\uFEFF/, '') : value;
    first = false;
    for (let end; (end = /\r\n|\r|\n/.exec(buffer)); ) {
      // A CR at the very end may be the first half of a CRLF still on its way.
      if (end[0] === '\r' && end.index === buffer.length - 1) break;
      const line = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      if (line === '') {
        if (data.length > 0 || id !== undefined) onEvent({ type: type || 'message', data: data.length ? data.join('\n') : null, id });
        [data, type, id] = [[], '', undefined];
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const fieldValue = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(fieldValue);
        else if (field === 'event') type = fieldValue;
        else if (field === 'id' && !fieldValue.includes('\0')) id = fieldValue;
      }
    }
  }
}

/**
 * Reading a body of a request or a response with a size limit: what is
 * past the limit is never read. Internal to troupe (the HTTP handler, the
 * A2A server and the A2A client's card reader).
 * @module
 */

/**
 * The body of `message` as UTF-8 text, or `undefined` when it, or the
 * length it declares, is larger than `max` bytes (the body is then
 * cancelled, not read to its end). No body reads as `''`.
 * @internal
 */
export async function readBodyText(message: Request | Response, max: number): Promise<string | undefined> {
  const declared = Number(message.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await message.body?.cancel().catch(() => undefined);
    return undefined;
  }
  if (!message.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = message.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

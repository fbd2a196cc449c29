/**
 * The bytes of the range asked for, out of what an S3 server answered to a
 * ranged GetObject. HTTP lets a server ignore Range (200 with everything), and
 * some S3 look-alikes answer a range other than the one asked for (s3rver 3
 * serves the whole object for `bytes=0-0`), so the bytes are cut out here then.
 */
import { Readable } from 'node:stream';
import type { ByteRange } from './blob-store.js';

/** `served`: the answer's Content-Range and Content-Length headers. */
export function askedRange(stream: Readable, served: { contentRange: string | undefined; contentLength: number | undefined }, range: ByteRange): Readable {
  const parsed = parseContentRange(served.contentRange);
  const servedStart = parsed?.start ?? 0;
  const servedEnd = parsed?.end ?? (served.contentLength !== undefined ? servedStart + served.contentLength - 1 : Number.POSITIVE_INFINITY);
  if (servedStart === range.start && servedEnd <= range.end) return stream;
  if (servedStart > range.start) {
    stream.destroy();
    throw new Error(`S3 answered range ${served.contentRange ?? '?'} for bytes=${range.start}-${range.end}`);
  }
  return sliceStream(stream, range.start - servedStart, range.end - range.start + 1);
}

function parseContentRange(header: string | undefined): { start: number; end: number } | undefined {
  const match = header ? /^bytes (\d+)-(\d+)\//.exec(header) : null;
  if (!match?.[1] || !match[2]) return undefined;
  return { start: Number(match[1]), end: Number(match[2]) };
}

/** `length` bytes of `source` after skipping `skip`; stops reading (and destroys `source`) once done. */
function sliceStream(source: Readable, skip: number, length: number): Readable {
  async function* slice(): AsyncGenerator<Buffer> {
    let toSkip = skip;
    let remaining = length;
    try {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        let bytes = chunk;
        if (toSkip > 0) {
          if (bytes.length <= toSkip) {
            toSkip -= bytes.length;
            continue;
          }
          bytes = bytes.subarray(toSkip);
          toSkip = 0;
        }
        if (bytes.length >= remaining) {
          yield bytes.subarray(0, remaining);
          return;
        }
        remaining -= bytes.length;
        yield bytes;
      }
    } finally {
      source.destroy();
    }
  }
  return Readable.from(slice(), { objectMode: false });
}

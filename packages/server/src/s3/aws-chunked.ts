/**
 * aws-chunked bodies (x-amz-content-sha256: STREAMING-*), decoded while they
 * stream: `<hex size>[;chunk-signature=<sig>]\r\n<bytes>\r\n` chunks, a last
 * chunk of size 0, then the trailer (`name:value\r\n` lines) and an empty
 * line. The decoded bytes pass on as they arrive, never gathered whole; each
 * chunk's signature is checked as the chunk ends (SigV4's chained
 * AWS4-HMAC-SHA256-PAYLOAD signatures seeded by the request's own), the
 * trailer's (AWS4-HMAC-SHA256-TRAILER) when it ends, and the framing and the
 * decoded length (x-amz-decoded-content-length) at the end. Any failure fails
 * the stream before it ends, so an upload reading it never commits.
 */
import { createHash, createHmac, timingSafeEqual, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { S3Error, s3Errors } from './errors.js';

export const STREAMING_SIGNED = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD';
export const STREAMING_SIGNED_TRAILER = 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER';
export const STREAMING_UNSIGNED_TRAILER = 'STREAMING-UNSIGNED-PAYLOAD-TRAILER';

const EMPTY_SHA256 = createHash('sha256').digest('hex');
/** A chunk header or trailer line longer than this is not aws-chunked. */
const MAX_LINE_BYTES = 4096;
const MAX_TRAILER_LINES = 16;
const SIGNATURE_LINE = 'x-amz-trailer-signature';

export const chunkedErrors = {
  incomplete: () => new S3Error('IncompleteBody', 400, 'You did not provide the number of bytes specified by the x-amz-decoded-content-length HTTP header.'),
  malformed: (why: string) => new S3Error('InvalidRequest', 400, `Malformed aws-chunked body: ${why}`),
  missingDecodedLength: () => new S3Error('MissingContentLength', 411, 'You must provide the x-amz-decoded-content-length HTTP header.'),
};

/** What checks chunk signatures: the key, the request's date and scope, and its header signature (the seed). */
export interface ChunkSigning {
  key: Buffer;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

export interface ChunkedOptions {
  /** Present when chunks (and the trailer) are signed. */
  signing?: ChunkSigning;
  /** x-amz-decoded-content-length. */
  decodedLength: number;
  /** The trailer lines x-amz-trailer announced (lowercase names); every one must come. */
  trailerNames: string[];
}

type State = 'header' | 'data' | 'data-end' | 'trailer' | 'done';

export class AwsChunkedDecoder extends Transform {
  /** The trailer's lines (lowercase names), once the body has ended. */
  readonly trailers = new Map<string, string>();
  private state: State = 'header';
  private line: Buffer[] = [];
  private lineBytes = 0;
  private remaining = 0;
  private decoded = 0;
  private crlfSeen = 0;
  private chunkSignature = '';
  private chunkHash: Hash | null = null;
  private previousSignature: string;
  private trailerText = '';
  private trailerSignature: string | undefined;

  constructor(private readonly options: ChunkedOptions) {
    super();
    this.previousSignature = options.signing?.seedSignature ?? '';
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      this.consume(chunk);
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    if (this.state !== 'done' || this.decoded !== this.options.decodedLength) return done(chunkedErrors.incomplete());
    for (const name of this.options.trailerNames) if (!this.trailers.has(name)) return done(chunkedErrors.incomplete());
    done();
  }

  private consume(input: Buffer): void {
    let offset = 0;
    while (offset < input.length) {
      switch (this.state) {
        case 'header':
        case 'trailer': {
          const line = this.readLine(input, offset);
          offset = line.offset;
          if (line.text !== undefined) {
            if (this.state === 'header') this.startChunk(line.text);
            else this.trailerLine(line.text);
          }
          break;
        }
        case 'data': {
          const take = Math.min(this.remaining, input.length - offset);
          const bytes = input.subarray(offset, offset + take);
          offset += take;
          this.remaining -= take;
          this.chunkHash?.update(bytes);
          this.push(bytes);
          if (this.remaining === 0) this.state = 'data-end';
          break;
        }
        case 'data-end': {
          const expected = this.crlfSeen === 0 ? 0x0d : 0x0a;
          if (input[offset] !== expected) throw chunkedErrors.malformed('a chunk does not end with CRLF where its size says');
          offset += 1;
          if (++this.crlfSeen === 2) {
            this.crlfSeen = 0;
            this.endChunk();
            this.state = 'header';
          }
          break;
        }
        case 'done':
          throw chunkedErrors.malformed('bytes after the end of the body');
      }
    }
  }

  /** Reads up to the next CRLF; `text` is the whole line once it has ended. */
  private readLine(input: Buffer, offset: number): { offset: number; text?: string } {
    const newline = input.indexOf(0x0a, offset);
    const end = newline === -1 ? input.length : newline + 1;
    this.lineBytes += end - offset;
    if (this.lineBytes > MAX_LINE_BYTES) throw chunkedErrors.malformed('a chunk header or trailer line is too long');
    this.line.push(input.subarray(offset, end));
    if (newline === -1) return { offset: end };
    const whole = Buffer.concat(this.line, this.lineBytes);
    this.line = [];
    this.lineBytes = 0;
    if (whole.length < 2 || whole[whole.length - 2] !== 0x0d) throw chunkedErrors.malformed('lines must end with CRLF');
    return { offset: end, text: whole.subarray(0, whole.length - 2).toString('latin1') };
  }

  private startChunk(header: string): void {
    const match = /^([0-9a-fA-F]{1,15})(?:;chunk-signature=([0-9a-f]{64}))?$/.exec(header);
    if (!match?.[1]) throw chunkedErrors.malformed('a chunk header must be <hex size>[;chunk-signature=<signature>]');
    if (this.options.signing !== undefined) {
      if (match[2] === undefined) throw chunkedErrors.malformed('every chunk of a signed body needs its chunk-signature');
      this.chunkSignature = match[2];
      this.chunkHash = createHash('sha256');
    } else if (match[2] !== undefined) {
      throw chunkedErrors.malformed('chunk signatures in an unsigned body');
    }
    const size = parseInt(match[1], 16);
    if (this.decoded + size > this.options.decodedLength) throw chunkedErrors.malformed('more bytes than x-amz-decoded-content-length');
    this.decoded += size;
    if (size > 0) {
      this.remaining = size;
      this.state = 'data';
      return;
    }
    // The last chunk: its signature (of no bytes) now, then the trailer up to an empty line.
    this.endChunk();
    this.state = 'trailer';
  }

  private endChunk(): void {
    const signing = this.options.signing;
    if (signing === undefined || this.chunkHash === null) return;
    const chunkSha = this.chunkHash.digest('hex');
    this.chunkHash = null;
    const stringToSign = ['AWS4-HMAC-SHA256-PAYLOAD', signing.amzDate, signing.scope, this.previousSignature, EMPTY_SHA256, chunkSha].join('\n');
    this.checkSignature(stringToSign, this.chunkSignature);
  }

  private checkSignature(stringToSign: string, claimed: string): void {
    const expected = createHmac('sha256', this.options.signing!.key).update(stringToSign).digest();
    const given = Buffer.from(claimed, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(expected, given)) throw s3Errors.signatureDoesNotMatch();
    this.previousSignature = claimed;
  }

  private trailerLine(text: string): void {
    if (text === '') return this.endTrailer();
    const colon = text.indexOf(':');
    if (colon <= 0) throw chunkedErrors.malformed('a trailer line must be name:value');
    const name = text.slice(0, colon).trim().toLowerCase();
    const value = text.slice(colon + 1).trim();
    if (name === SIGNATURE_LINE && this.options.signing !== undefined && this.options.trailerNames.length > 0) {
      if (this.trailerSignature !== undefined || !/^[0-9a-f]{64}$/.test(value)) throw chunkedErrors.malformed('a bad x-amz-trailer-signature');
      this.trailerSignature = value;
      return;
    }
    if (!this.options.trailerNames.includes(name)) throw chunkedErrors.malformed(`the trailer ${name} was not announced in x-amz-trailer`);
    if (this.trailers.has(name) || this.trailers.size >= MAX_TRAILER_LINES) throw chunkedErrors.malformed(`the trailer ${name} came twice`);
    this.trailers.set(name, value);
    // What the trailer signature covers: each line as name:value\n.
    this.trailerText += `${name}:${value}\n`;
  }

  private endTrailer(): void {
    const signing = this.options.signing;
    if (signing !== undefined && this.options.trailerNames.length > 0) {
      if (this.trailerSignature === undefined) throw s3Errors.signatureDoesNotMatch();
      const trailerSha = createHash('sha256').update(this.trailerText).digest('hex');
      const stringToSign = ['AWS4-HMAC-SHA256-TRAILER', signing.amzDate, signing.scope, this.previousSignature, trailerSha].join('\n');
      this.checkSignature(stringToSign, this.trailerSignature);
    }
    this.state = 'done';
  }
}

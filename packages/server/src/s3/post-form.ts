/**
 * A browser form's multipart body, read with @fastify/busboy (the parser
 * @fastify/multipart uses): the fields before the file part, then the file
 * as a stream, never gathered whole. As in S3 the file is the part named
 * `file` and must be the last; parts after it are read and dropped. Every
 * other part is a field, even with a filename (Python's requests sends each
 * field so when given them as `files=`).
 */
import { Busboy, type BusboyHeaders, type BusboyInstance } from '@fastify/busboy';
import type { FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { clientGone } from '../blob/joined-streams.js';
import { S3Error, s3Errors } from './errors.js';

/** S3 allows 20 KB of form fields before the file. */
const MAX_FIELD_BYTES = 20 * 1024;
const MAX_FIELDS = 100;

export interface PostForm {
  /** Field names lowercased (S3 compares them so), each once. */
  fields: Map<string, string>;
  file: { stream: Readable; filename: string };
  /** Settles once the whole body has been read (the parts after the file dropped). */
  finished: Promise<void>;
}

const malformed = () => new S3Error('MalformedPOSTRequest', 400, 'The body of your POST request is not well-formed multipart/form-data.');

/** Resolves when the file part begins; rejects for a malformed form or one without a file. */
export function readPostForm(request: FastifyRequest): Promise<PostForm> {
  return new Promise((resolve, reject) => {
    let busboy: BusboyInstance;
    try {
      busboy = Busboy({
        headers: request.headers as BusboyHeaders,
        limits: { fieldSize: MAX_FIELD_BYTES, fields: MAX_FIELDS, files: 1 },
        isPartAFile: (name) => name?.toLowerCase() === 'file',
      });
    } catch {
      reject(malformed());
      return;
    }
    const fields = new Map<string, string>();
    let file: PostForm['file'] | undefined;
    let failure: Error | undefined;
    let settleFinished: (error?: Error) => void = () => {};
    const finished = new Promise<void>((done, fail) => (settleFinished = (error) => (error ? fail(error) : done())));
    finished.catch(() => {});
    const fail = (error: Error) => {
      failure ??= error;
      reject(error);
    };
    busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (file !== undefined || failure !== undefined) return;
      const lower = name.toLowerCase();
      if (valueTruncated) fail(s3Errors.invalidArgument(`The form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`));
      else if (fields.has(lower)) fail(s3Errors.invalidArgument(`The form field ${name} is given more than once`));
      else fields.set(lower, value);
    });
    busboy.on('file', (_name, stream, filename) => {
      if (file !== undefined || failure !== undefined) {
        stream.resume();
        return;
      }
      // The form's reader meets a failure of the file (a cut, below) when it reads it, however late it starts.
      stream.on('error', () => {});
      file = { stream, filename: filename ?? '' };
      resolve({ fields, file, finished });
    });
    busboy.on('fieldsLimit', () => fail(s3Errors.invalidArgument(`A form may have at most ${MAX_FIELDS} fields`)));
    busboy.on('finish', () => {
      if (file === undefined) fail(s3Errors.invalidArgument('POST requires exactly one file upload per request.'));
      settleFinished();
    });
    busboy.on('error', () => {
      const error = malformed();
      file?.stream.destroy(error);
      fail(error);
      settleFinished(error);
      // What is left of the body is read and dropped, so the connection can carry the answer.
      request.raw.unpipe(busboy).resume();
    });
    // A client gone mid-body never ends the form: its file stream fails, so the upload reading it ends and gives back what it holds.
    const cut = (error?: Error) => {
      if (request.raw.complete) return;
      const reason = error ?? clientGone();
      file?.stream.destroy(reason);
      fail(reason);
      settleFinished(reason);
    };
    request.raw.on('error', cut);
    request.raw.on('close', () => cut());
    request.raw.pipe(busboy);
  });
}

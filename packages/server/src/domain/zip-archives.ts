/**
 * A zip of many files, streamed as it is read: no copy on disk, and memory
 * bounded by one page of rows and one file's chunk in flight, whatever the
 * number of files (the zip's central directory, a few dozen bytes per entry,
 * is the only thing that grows). yazl writes the format, ZIP64 where a
 * file, the offset or the count needs it.
 *
 * Entries are STORED, not deflated: what people keep in buckets (photos,
 * video, archives, PDFs) is mostly compressed already, deflating it would
 * cost the server's CPU for nothing, and the download runs at the speed of
 * the network, not of zlib.
 *
 * Back-pressure: yazl pipes each file's stream into its output, so a client
 * that stops reading stops the reads from the blob store. One file's stream
 * is open at a time, opened only when its turn comes; cancel() (the
 * connection cut) destroys it and stops reading pages.
 */
import { isFolderMarker } from '@pail/shared';
import { Readable, type PassThrough } from 'node:stream';
import { ZipFile } from 'yazl';
import type { ObjectRow } from '../db/schema.js';
import { errors } from './errors.js';
import { passingBody } from './object-bytes.js';
import type { StoragePorts } from './ports.js';
import { ZIP_PAGE_ROWS, type ZipPlan } from './zip-selection.js';

export interface ZipArchive {
  /** The zip's filename, for Content-Disposition. */
  name: string;
  stream: Readable;
  /** Stops the zip where it is (the client went away): the file being read is closed, no page more is read. */
  cancel: () => void;
}

const FILE_MODE = 0o100644;
const FOLDER_MODE = 0o40755;

/**
 * Starts the zip of a plan's files. The first page is read before this
 * resolves, so a selection that holds no file is refused (404) before any
 * byte is sent; a failure after that (a file replaced or deleted while the
 * zip streams, a store error) ends the stream with an error, which cuts the
 * download: a zip that ends early is unreadable, never silently short.
 */
export async function startZip(ports: Pick<StoragePorts, 'writes' | 'blobs' | 'caches'>, plan: ZipPlan): Promise<ZipArchive> {
  const pages = plan.pages();
  const first = await pages.next();
  if (first.done) throw errors.nothingToZip();

  const zip = new ZipFile();
  // yazl's output is a PassThrough (its types say only ReadableStream).
  const output = zip.outputStream as PassThrough;
  let current: Readable | null = null;
  let cancelled = false;
  // Entries added whose bytes have not been asked for yet: the next page is read when few are left.
  let waiting = 0;
  let reading = false;
  let exhausted = false;

  const fail = (error: Error) => {
    current?.destroy();
    if (!output.destroyed) output.destroy(error);
  };
  zip.on('error', fail);

  const cancel = () => {
    if (cancelled) return;
    cancelled = true;
    current?.destroy();
    void pages.return(undefined);
    if (!output.destroyed) output.destroy();
  };
  output.on('close', cancel);

  const add = (rows: ObjectRow[]) => {
    for (const row of rows) {
      const name = row.filename.slice(plan.prefix.length);
      const mtime = new Date(row.updated_at);
      if (isFolderMarker(row.filename)) {
        // An empty folder's marker keeps the folder in the zip; the folder zipped is the zip itself.
        if (name !== '') zip.addEmptyDirectory(name, { mtime, mode: FOLDER_MODE });
        continue;
      }
      waiting++;
      zip.addReadStreamLazy(name, { mtime, mode: FILE_MODE, compress: false, size: row.size }, (done) => {
        waiting--;
        if (waiting < ZIP_PAGE_ROWS / 2) readMore();
        openFile(row).then(
          (stream) => {
            if (cancelled) return void stream.destroy();
            current = stream;
            stream.once('error', fail);
            stream.once('end', () => {
              if (current === stream) current = null;
            });
            done(null, stream);
          },
          (error: unknown) => fail(error as Error),
        );
      });
    }
  };

  const openFile = async (row: ObjectRow): Promise<Readable> => {
    if (row.size === 0) return Readable.from([]);
    const body = await passingBody(ports, row);
    return Buffer.isBuffer(body) ? Readable.from([body]) : body;
  };

  const readMore = () => {
    if (reading || exhausted || cancelled) return;
    reading = true;
    pages.next().then(
      (next) => {
        reading = false;
        if (cancelled) return;
        if (next.done) {
          exhausted = true;
          zip.end();
          return;
        }
        add(next.value);
        // A page of folder markers only asks for no bytes, so nothing else would read on.
        if (waiting < ZIP_PAGE_ROWS / 2) readMore();
      },
      (error: unknown) => {
        reading = false;
        fail(error as Error);
      },
    );
  };

  add(first.value);
  readMore();
  return { name: plan.archiveName, stream: output, cancel };
}

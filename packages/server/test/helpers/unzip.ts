/** A zip's entries read back with yauzl (another implementation than the server's yazl): name, bytes' SHA-256, size, time. */
import { createHash } from 'node:crypto';
import yauzl from 'yauzl';

export interface UnzippedEntry {
  name: string;
  size: number;
  sha256: string;
  /** The entry's own bytes, when asked for (`keepBytes`). */
  bytes?: Buffer;
  modified: Date;
  directory: boolean;
}

/** Every entry of a zip (a file path or the bytes), in the zip's order; rejects on any damage yauzl finds (CRC, sizes). */
export function unzip(source: string | Buffer, keepBytes = false): Promise<UnzippedEntry[]> {
  return new Promise((resolve, reject) => {
    const opened = (error: Error | null, zip: yauzl.ZipFile | undefined) => {
      if (error || !zip) return reject(error ?? new Error('no zip'));
      const entries: UnzippedEntry[] = [];
      zip.on('error', reject);
      zip.on('end', () => resolve(entries));
      zip.on('entry', (entry: yauzl.Entry) => {
        const directory = entry.fileName.endsWith('/');
        if (directory) {
          entries.push({ name: entry.fileName, size: 0, sha256: '', modified: entry.getLastModDate(), directory });
          return zip.readEntry();
        }
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return reject(streamError ?? new Error('no stream'));
          const hash = createHash('sha256');
          const chunks: Buffer[] = [];
          let size = 0;
          stream.on('data', (chunk: Buffer) => {
            hash.update(chunk);
            size += chunk.length;
            if (keepBytes) chunks.push(chunk);
          });
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({
              name: entry.fileName,
              size,
              sha256: hash.digest('hex'),
              ...(keepBytes ? { bytes: Buffer.concat(chunks) } : {}),
              modified: entry.getLastModDate(),
              directory,
            });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    };
    const options = { lazyEntries: true, validateEntrySizes: true, strictFileNames: true };
    if (typeof source === 'string') yauzl.open(source, options, opened);
    else yauzl.fromBuffer(source, options, opened);
  });
}

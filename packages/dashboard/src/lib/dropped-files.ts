/**
 * What a pick or a drop holds, as files with the path each goes under: a
 * loose file by its own name, a file from a folder by its path inside what
 * was chosen (`album/2025/a.jpg`), so the upload keeps the folder's tree.
 */
export interface PickedFile {
  file: File;
  /** Relative to where it is uploaded: `a.jpg` or `album/2025/a.jpg`. */
  path: string;
}

/** A folder picker (`webkitdirectory`) names each file's path in `webkitRelativePath`. */
export function pickedFiles(files: Iterable<File>): PickedFile[] {
  return Array.from(files, (file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/**
 * The entries of a drop. They must be taken in the drop event itself: the
 * browser empties the DataTransfer once the handler returns. Without the
 * entries API, the dropped files alone (folders cannot be read then).
 */
export function droppedEntries(data: DataTransfer): FileSystemEntry[] | null {
  const items = Array.from(data.items ?? []).filter((item) => item.kind === 'file');
  if (items.length === 0 || typeof items[0]!.webkitGetAsEntry !== 'function') return null;
  // Typed as never null, but null for what is not a file system item.
  const entries: (FileSystemEntry | null)[] = items.map((item) => item.webkitGetAsEntry());
  return entries.every((entry) => entry !== null) ? entries : null;
}

/** Every file under the dropped entries, at any depth, with its path from the drop. */
export async function filesOfEntries(entries: FileSystemEntry[]): Promise<PickedFile[]> {
  const found: PickedFile[] = [];
  const walk = async (entry: FileSystemEntry, parent: string): Promise<void> => {
    if (isFile(entry)) {
      found.push({ file: await fileOf(entry), path: parent + entry.name });
    } else if (isDirectory(entry)) {
      for (const child of await allChildren(entry)) await walk(child, `${parent}${entry.name}/`);
    }
  };
  for (const entry of entries) await walk(entry, '');
  return found;
}

const isFile = (entry: FileSystemEntry): entry is FileSystemFileEntry => entry.isFile;
const isDirectory = (entry: FileSystemEntry): entry is FileSystemDirectoryEntry => entry.isDirectory;

const fileOf = (entry: FileSystemFileEntry) => new Promise<File>((resolve, reject) => entry.file(resolve, reject));

/** readEntries answers in batches (Chromium: 100 at a time) and an empty one at the end: read until then. */
async function allChildren(directory: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = directory.createReader();
  const children: FileSystemEntry[] = [];
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return children;
    children.push(...batch);
  }
}

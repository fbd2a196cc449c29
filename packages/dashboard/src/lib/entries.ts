/**
 * What the file list shows and selects: files and folders, each by its whole
 * name (a folder's ends in `/`), and the names they take when moved or renamed.
 */
import { filenameProblem, isFolderMarker } from '@pail/shared/names';
import { baseName, folderName } from './folders';
import { pluralize } from './format';

export interface Entry {
  kind: 'file' | 'folder';
  /** `docs/report.pdf`, or `docs/2026/` for a folder. */
  name: string;
}

export const entryOf = (name: string): Entry => ({ kind: isFolderMarker(name) ? 'folder' : 'file', name });

/** The folder an entry is in: `docs/` for `docs/report.pdf` and for `docs/2026/`. */
export function parentOf(entry: Entry): string {
  const trimmed = entry.name.replace(/\/$/, '');
  return trimmed.slice(0, trimmed.lastIndexOf('/') + 1);
}

/** Its own name, as shown in its folder: `report.pdf`, `2026`. */
export function ownName(entry: Entry): string {
  return entry.kind === 'folder' ? folderName(entry.name, parentOf(entry)) : baseName(entry.name);
}

/** The name it takes in `folder`, keeping its own. */
export function nameIn(entry: Entry, folder: string): string {
  return `${folder}${ownName(entry)}${entry.kind === 'folder' ? '/' : ''}`;
}

/** The name it takes when renamed to `newName` in its folder. */
export function renamed(entry: Entry, newName: string): string {
  return `${parentOf(entry)}${newName}${entry.kind === 'folder' ? '/' : ''}`;
}

/** What is wrong with a new name typed for an entry, or null. */
export function newNameProblem(entry: Entry, newName: string): string | null {
  const name = newName.trim();
  if (name === '') return 'Type a name.';
  if (name.includes('/')) return 'A name cannot contain /. To put it in another folder, use Move.';
  if (name === ownName(entry)) return null;
  return filenameProblem(renamed(entry, name));
}

/**
 * `report (1).pdf`, `photos (2)/`: the n-th "keep both" name for a move whose
 * target is taken. A folder is numbered whole; a file keeps its extension last.
 */
export function numberedName(to: string, n: number): string {
  if (isFolderMarker(to)) return `${to.slice(0, -1)} (${n})/`;
  const slash = to.lastIndexOf('/');
  const base = to.slice(slash + 1);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  const ext = dot > 0 ? base.slice(dot) : '';
  return `${to.slice(0, slash + 1)}${stem} (${n})${ext}`;
}

/** "2 folders and 3 files", "1 file", "1 folder". */
export function describeEntries(entries: readonly Entry[]): string {
  const folders = entries.filter((e) => e.kind === 'folder').length;
  const files = entries.length - folders;
  const parts = [folders > 0 ? pluralize(folders, 'folder') : '', files > 0 || folders === 0 ? pluralize(files, 'file') : ''];
  return parts.filter(Boolean).join(' and ');
}

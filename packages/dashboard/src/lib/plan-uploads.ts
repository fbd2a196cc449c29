/**
 * Turns a pick or a drop into what will be sent, before anything is: each
 * file's stored name (its folder, then its own name, or `name (1).ext` when
 * the user keeps both), whether it replaces a file, and whether it is refused
 * at once (a bad name, the bucket's limits, the storage cap), with the reason.
 */
import { filenameProblem } from '@pail/shared/names';
import type { ReplaceChoice } from '../components/replace-prompt';
import type { PickedFile } from './dropped-files';
import { bucketRefusal, capRefusal, keepBothName, type BucketLimitsView, type Refusal } from './upload-checks';

export interface PlannedUpload {
  file: File;
  name: string;
  refusal: Refusal | null;
}

export interface PlanInput {
  bucket: BucketLimitsView;
  /** Each file with its path under `folder` (a folder's files keep their tree). */
  files: PickedFile[];
  /** `''` for the top of the bucket, else a path ending in `/`. */
  folder: string;
  /** The files already under the folder where these go, by whole name, with their sizes. */
  existing: Map<string, number>;
  /** Names other uploads in the queue will take in this bucket. */
  queued: Set<string>;
  /** Bytes left under the storage cap, less what the queue will still add. */
  spaceLeft: number;
  /** Asks the user what to do with a name already taken; `more` clashes follow this one. */
  ask: (name: string, more: number) => Promise<{ choice: ReplaceChoice; forAll: boolean }>;
}

export async function planUploads({ bucket, files, folder, existing, queued, spaceLeft, ask }: PlanInput): Promise<PlannedUpload[]> {
  const planned: PlannedUpload[] = [];
  const taken = (name: string) => existing.has(name) || queued.has(name) || planned.some((p) => p.refusal === null && p.name === name);
  const clashes = files.filter(({ path }) => existing.has(folder + path)).length;
  let seen = 0;
  let forAll: ReplaceChoice | null = null;
  let left = spaceLeft;

  for (const { file, path } of files) {
    let name = folder + path;
    const problem = filenameProblem(name);
    if (problem) {
      planned.push({ file, name, refusal: { kind: 'name', message: problem } });
      continue;
    }
    const refused = bucketRefusal(bucket, file);
    if (refused) {
      planned.push({ file, name, refusal: refused });
      continue;
    }
    let replaces = 0;
    if (existing.has(name)) {
      seen++;
      let choice = forAll;
      if (choice === null) {
        const answer = await ask(name, clashes - seen);
        choice = answer.choice;
        if (answer.forAll) forAll = answer.choice;
      }
      if (choice === 'skip') continue;
      if (choice === 'keep-both') name = keepBothName(name, taken);
      else replaces = existing.get(name) ?? 0;
    }
    // A replacement frees the old file's bytes as it lands: only the difference must fit.
    const needed = Math.max(0, file.size - replaces);
    const overCap = capRefusal(needed, left);
    if (!overCap) left -= needed;
    planned.push({ file, name, refusal: overCap });
  }
  return planned;
}

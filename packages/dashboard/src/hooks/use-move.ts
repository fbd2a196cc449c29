import { useCallback, useRef, useState } from 'react';
import { moveFile } from '../api/file-ops';
import { ApiError } from '../api/http';
import { numberedName } from '../lib/entries';

export interface PlannedMove {
  from: string;
  to: string;
}

export interface MoveProgress {
  /** Moves finished (a folder counts once, however many files it holds). */
  done: number;
  total: number;
  /** The one being moved now. */
  current: string;
}

export type ConflictChoice = 'replace' | 'keep-both' | 'cancel';

export interface MoveConflict {
  /** The name already taken. */
  name: string;
  folder: boolean;
  /** How many moves wait after this one (the choice can be applied to them). */
  more: number;
}

export interface MoveOutcome {
  /** Files moved, each file of a folder counted. */
  moved: number;
  /** Moves left out because the user chose Cancel at a name already taken. */
  skipped: number;
}

/** A refusal part-way: what had moved stays moved, and the error says why the rest did not. */
export class MoveFailed extends Error {
  readonly outcome: MoveOutcome;
  constructor(message: string, outcome: MoveOutcome) {
    super(message);
    this.outcome = outcome;
  }
}

const KEEP_BOTH_TRIES = 100;
const isTaken = (error: unknown) => error instanceof ApiError && error.status === 409;

/**
 * Runs moves one after another through `POST …/move`, with progress. A name
 * already taken (409) asks, as an upload does: Replace (overwrite), Keep both
 * (the next free `name (n)`), or Cancel (leave this one where it is); the
 * answer may go for the rest too.
 */
export function useMove() {
  const [progress, setProgress] = useState<MoveProgress | null>(null);
  const [conflict, setConflict] = useState<MoveConflict | null>(null);
  const answer = useRef<((choice: ConflictChoice, forAll: boolean) => void) | null>(null);

  const ask = (question: MoveConflict) =>
    new Promise<{ choice: ConflictChoice; forAll: boolean }>((resolve) => {
      answer.current = (choice, forAll) => {
        answer.current = null;
        setConflict(null);
        resolve({ choice, forAll });
      };
      setConflict(question);
    });

  const run = useCallback(async (bucketId: number, moves: readonly PlannedMove[], toBucketId?: number): Promise<MoveOutcome> => {
    const outcome: MoveOutcome = { moved: 0, skipped: 0 };
    const target = toBucketId === undefined || toBucketId === bucketId ? {} : { to_bucket_id: toBucketId };
    let always: ConflictChoice | null = null;
    try {
      for (const [index, { from, to }] of moves.entries()) {
        setProgress({ done: index, total: moves.length, current: from });
        try {
          outcome.moved += (await moveFile(bucketId, { from, to, ...target })).moved;
          continue;
        } catch (error) {
          if (!isTaken(error)) throw error;
        }
        let choice: ConflictChoice | null = always;
        if (!choice) {
          const reply = await ask({ name: to, folder: to.endsWith('/'), more: moves.length - index - 1 });
          choice = reply.choice;
          if (reply.forAll) always = choice;
        }
        if (choice === 'cancel') outcome.skipped++;
        else if (choice === 'replace') outcome.moved += (await moveFile(bucketId, { from, to, ...target, overwrite: true })).moved;
        else outcome.moved += await moveKeepingBoth(bucketId, from, to, target);
      }
      return outcome;
    } catch (error) {
      throw new MoveFailed(error instanceof Error ? error.message : String(error), outcome);
    } finally {
      setProgress(null);
    }
  }, []);

  const choose = useCallback((choice: ConflictChoice, forAll: boolean) => answer.current?.(choice, forAll), []);

  return { run, progress, conflict, choose };
}

/** Tries `name (1)`, `name (2)`, … until one is free. */
async function moveKeepingBoth(bucketId: number, from: string, to: string, target: { to_bucket_id?: number }): Promise<number> {
  for (let n = 1; n <= KEEP_BOTH_TRIES; n++) {
    try {
      return (await moveFile(bucketId, { from, to: numberedName(to, n), ...target })).moved;
    } catch (error) {
      if (!isTaken(error)) throw error;
    }
  }
  throw new Error(`Could not find a free name for ${to}: ${KEEP_BOTH_TRIES} numbered names are taken.`);
}

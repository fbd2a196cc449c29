/** GetObject (signed): the object's bytes, as object-reads.ts reads them for HeadObject and anonymous reads too. */
import type { Handler } from '../handler-support.js';
import { readObject } from '../object-reads.js';

export const GetObject: Handler = readObject;

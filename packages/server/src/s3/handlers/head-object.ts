/** HeadObject (signed): GetObject's headers without its bytes (object-reads.ts). */
import type { Handler } from '../handler-support.js';
import { readObject } from '../object-reads.js';

export const HeadObject: Handler = readObject;

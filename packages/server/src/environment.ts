/**
 * The environment a Pail program reads its configuration from: the process's
 * variables, plus a .env file in the working directory for those it does not
 * set. Imported for that effect, by main.ts and by the `pail` CLI's binary, so
 * both read it alike.
 */
import 'dotenv/config';
export {};

/** Migration 0027: several events in one webhook message (domain/webhook-deliverer.ts). */
import { sql, type Kysely, type Migration } from 'kysely';
import { columns, type Dialect } from './columns.js';

/**
 * A delivery put in a message keeps the message's id (message_id, the first
 * row's) and the id of its last row (message_last_id): a message's rows are
 * fixed at its first attempt, so every retry and resend sends the same
 * records with the same webhook-id. Null until the delivery is put in one.
 *
 * Deliveries already there are each a message of their own: any of them may
 * have been sent alone under its id already (a failing endpoint's head, one
 * sent just before a crash, a delivered one resent later), and a receiver
 * that drops an id it has seen would drop the events joined to it.
 */
export function webhookBatches(dialect: Dialect): Migration {
  const c = columns(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('webhook_deliveries').addColumn('message_last_id', c.idType).execute();
      await sql`update webhook_deliveries set message_last_id = id`.execute(db);
    },
  };
}

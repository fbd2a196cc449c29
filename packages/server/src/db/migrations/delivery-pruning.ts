/** Migration 0026: delivered webhook events are pruned after a while (repositories/webhook-outbox.ts pruneDelivered). */
import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The pruning finds delivered events by when they were delivered, oldest
 * first, and their attempts by delivery: both by index, so a pass costs the
 * rows it removes, not the table.
 */
export function deliveryPruning(): Migration {
  return {
    async up(db: Kysely<any>) {
      // Partial: an event joins it when delivered, so the commit that writes it as pending pays nothing for it.
      await db.schema
        .createIndex('webhook_deliveries_delivered')
        .on('webhook_deliveries')
        .column('delivered_at')
        .where(sql.ref('state'), '=', 'delivered')
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute();
    },
  };
}

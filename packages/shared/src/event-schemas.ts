/**
 * The contract of webhooks and the audit log (issue 39): POST/GET/PATCH/DELETE
 * …/buckets/:id/webhooks, their deliveries, GET /api/audit; beside
 * schemas.ts, whose conventions they follow.
 */
import { Type, type Static } from '@sinclair/typebox';
import { NOT_AN_OBJECT } from './schemas.js';

export const WEBHOOK_EVENT_TYPES = ['object.created', 'object.removed', 'object.restored', 'bucket.visibility_changed', 'bucket.deleted'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const EventList = Type.Array(Type.Union(WEBHOOK_EVENT_TYPES.map((event) => Type.Literal(event))), {
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  description: 'The events it hears',
  examples: [['object.created', 'object.removed']],
});
const EVENT_LIST_MESSAGE = `events must be a non-empty list of: ${WEBHOOK_EVENT_TYPES.join(', ')}`;
const Filter = (what: string) => Type.Union([Type.String({ maxLength: 1024 }), Type.Null()], { description: `Only object names ${what} it (null: any)` });

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: 2048, description: 'https to a public address', examples: ['https://example.com/hooks/pail'] }),
    events: EventList,
    prefix: Type.Optional(Filter('starting with')),
    suffix: Type.Optional(Filter('ending with')),
  },
  {
    additionalProperties: true,
    errorMessage: {
      type: NOT_AN_OBJECT,
      required: { url: 'url is required', events: 'events is required' },
      properties: {
        url: 'url must be a string',
        events: EVENT_LIST_MESSAGE,
        prefix: 'prefix must be a string or null',
        suffix: 'suffix must be a string or null',
      },
    },
  },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    events: Type.Optional(EventList),
    prefix: Type.Optional(Filter('starting with')),
    suffix: Type.Optional(Filter('ending with')),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries (they wait); true resumes them and clears a disabled reason' })),
  },
  {
    additionalProperties: true,
    errorMessage: {
      type: NOT_AN_OBJECT,
      properties: {
        url: 'url must be a string',
        events: EVENT_LIST_MESSAGE,
        prefix: 'prefix must be a string or null',
        suffix: 'suffix must be a string or null',
        enabled: 'enabled must be true or false',
      },
    },
  },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookSchema = Type.Object(
  {
    id: Type.Integer(),
    bucket_id: Type.Integer(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    prefix: Type.Union([Type.String(), Type.Null()]),
    suffix: Type.Union([Type.String(), Type.Null()]),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the server disabled it (3 days of failed deliveries)' }),
    failing_since: Type.Union([Type.String(), Type.Null()]),
    pending: Type.Integer({ description: 'Deliveries waiting' }),
    secret_prefix: Type.String({ description: 'The first characters of its signing secret' }),
    previous_secret_until: Type.Union([Type.String(), Type.Null()], { description: 'Until when the secret a rotation replaced still signs too' }),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'Webhook' },
);
export type Webhook = Static<typeof WebhookSchema>;

/** A webhook just made, or its secret just rotated: the secret, shown this once. */
export const WebhookWithSecretSchema = Type.Object(
  { ...WebhookSchema.properties, secret: Type.String({ description: 'whsec_…: shown once' }) },
  { title: 'WebhookWithSecret' },
);
export type WebhookWithSecret = Static<typeof WebhookWithSecretSchema>;

export const WebhookParams = Type.Object({ id: Type.String(), wid: Type.String() });
export const DeliveryParams = Type.Object({ id: Type.String(), wid: Type.String(), did: Type.String() });

export const WebhookAttemptSchema = Type.Object({
  attempt: Type.Integer(),
  outcome: Type.String({ description: 'delivered or failed' }),
  response_code: Type.Union([Type.Integer(), Type.Null()]),
  response_excerpt: Type.Union([Type.String(), Type.Null()], { description: 'At most 1 KiB of the answer' }),
  error: Type.Union([Type.String(), Type.Null()]),
  at: Type.String(),
});

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.Integer(),
    webhook_id_header: Type.String({ description: 'The webhook-id header: the same on every attempt and resend' }),
    event: Type.String(),
    event_name: Type.String(),
    key: Type.Union([Type.String(), Type.Null()]),
    version_id: Type.Union([Type.String(), Type.Null()], { description: "The version the event is about (S3's versionId); null where it names none" }),
    status: Type.String({ description: 'pending or delivered' }),
    attempts: Type.Integer(),
    created_at: Type.String(),
    delivered_at: Type.Union([Type.String(), Type.Null()]),
    response_code: Type.Union([Type.Integer(), Type.Null()], { description: 'Of the latest attempt' }),
    attempt_log: Type.Array(WebhookAttemptSchema),
  },
  { title: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const AuditEntrySchema = Type.Object(
  {
    id: Type.Integer(),
    actor: Type.String({ description: 'key:<id>, session:<id>, operator, …' }),
    action: Type.String({ examples: ['bucket.created', 'key.revoked', 'webhook.created'] }),
    target: Type.Union([Type.String(), Type.Null()]),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    at: Type.String(),
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntrySchema>;

export const AuditPageSchema = Type.Object({ data: Type.Array(AuditEntrySchema), next_cursor: Type.Union([Type.String(), Type.Null()]) });
export const AuditQuery = Type.Object({ limit: Type.Optional(Type.String()), cursor: Type.Optional(Type.String()) });

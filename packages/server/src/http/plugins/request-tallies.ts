/**
 * Per-request counts kept as plain numbers and handed to prom-client only
 * when /metrics is scraped: prom-client's labelled `inc` and `observe` hash
 * their labels on every call, which cost small requests about 3 % of their
 * CPU (docs/performance.md).
 */
import { Counter, type Registry } from 'prom-client';

const LATENCY_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 60];

interface OperationTally {
  /** Requests answered, by status. */
  readonly statuses: Map<number, number>;
  /** Requests whose latency fell at or under each bound and above the one before (the last slot: above all bounds). */
  readonly buckets: number[];
  seconds: number;
  count: number;
}

export class RequestTallies {
  private readonly operations = new Map<string, OperationTally>();
  private bytesReceived = 0;
  private bytesSent = 0;

  /** One answered request; the byte counts are the declared lengths (0 when none). */
  record(operation: string, status: number, seconds: number, received: number, sent: number): void {
    this.bytesReceived += received;
    this.bytesSent += sent;
    let tally = this.operations.get(operation);
    if (tally === undefined) {
      tally = { statuses: new Map(), buckets: new Array<number>(LATENCY_BOUNDS.length + 1).fill(0), seconds: 0, count: 0 };
      this.operations.set(operation, tally);
    }
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
    let slot = 0;
    while (slot < LATENCY_BOUNDS.length && seconds > LATENCY_BOUNDS[slot]!) slot++;
    tally.buckets[slot]!++;
    tally.seconds += seconds;
    tally.count++;
  }

  /** The request series, read from the tallies when scraped. */
  register(registry: Registry): void {
    const operations = this.operations;
    const bytes = (): { received: number; sent: number } => ({ received: this.bytesReceived, sent: this.bytesSent });
    new Counter({
      name: 'pail_http_received_bytes_total',
      help: 'Request body bytes received (declared lengths)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(bytes().received);
      },
    });
    new Counter({
      name: 'pail_http_sent_bytes_total',
      help: 'Response body bytes sent (declared lengths)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(bytes().sent);
      },
    });
    new Counter({
      name: 'pail_http_requests_total',
      help: 'Requests answered, by operation and status',
      labelNames: ['operation', 'status'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [operation, tally] of operations) for (const [status, n] of tally.statuses) this.inc({ operation, status }, n);
      },
    });
    const name = 'pail_http_request_duration_seconds';
    // prom-client has no histogram whose buckets can be set, so this is a metric of our own in the shape its registry reads.
    registry.registerMetric({
      name,
      help: 'Time from request to response, by operation',
      type: 'histogram',
      get: () => {
        const values = [];
        for (const [operation, tally] of operations) {
          let cumulative = 0;
          for (const [slot, bound] of [...LATENCY_BOUNDS, '+Inf' as const].entries()) {
            cumulative += tally.buckets[slot]!;
            values.push({ metricName: `${name}_bucket`, labels: { le: bound, operation }, value: cumulative });
          }
          values.push({ metricName: `${name}_sum`, labels: { operation }, value: tally.seconds });
          values.push({ metricName: `${name}_count`, labels: { operation }, value: tally.count });
        }
        return { name, help: 'Time from request to response, by operation', type: 'histogram', values, aggregator: 'sum' };
      },
    } as unknown as Parameters<Registry['registerMetric']>[0]);
  }
}

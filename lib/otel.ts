/**
 * OpenTelemetry for ioredisson: `instrument(redisson)` turns the client's events into metrics and
 * spans over `@opentelemetry/api` (an optional peer dependency that only this entry imports). See the
 * OpenTelemetry guide for the instruments, their attributes and the spans.
 * @module ioredisson/otel
 */
import {
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type ObservableResult,
  type TracerProvider,
} from '@opentelemetry/api';
import { version } from '../package.json';
import type { ClientDiagnostics } from './client';
import type { RedissonEvents } from './events';

/**
 * The instrumentation scope's name: the meter's and the tracer's (their version is the library's).
 * @category OpenTelemetry
 */
export const INSTRUMENTATION_NAME = 'ioredisson';

/**
 * What {@link instrument} needs of a client: a `RedissonClient` is one.
 * @category OpenTelemetry
 */
export interface InstrumentableClient {
  /** Subscribes `handler` to the events named `type`. */
  on<K extends keyof RedissonEvents>(type: K, handler: (event: RedissonEvents[K]) => void): unknown;
  /** Unsubscribes a handler given to `on`. */
  off<K extends keyof RedissonEvents>(type: K, handler: (event: RedissonEvents[K]) => void): unknown;
  /** The calls parked on the client's channels, read by the waiters instrument. */
  diagnostics(): Pick<ClientDiagnostics, 'waiters'>;
}

/**
 * Options of {@link instrument}.
 * @category OpenTelemetry
 */
export interface InstrumentOptions {
  /**
   * Where the metrics go.
   * @default the global provider (`metrics.getMeterProvider()`)
   */
  meterProvider?: MeterProvider;
  /**
   * Where the acquisition spans go.
   * @default the global provider (`trace.getTracerProvider()`)
   */
  tracerProvider?: TracerProvider;
  /**
   * Adds the lock's name as `ioredisson.lock.name` to every metric point and span. Each name is then
   * a time series of its own: turn it on only for a small, fixed set of names.
   * @default false
   */
  lockNameAttribute?: boolean;
}

/**
 * Stops what {@link instrument} started: removes its listeners and its waiters callback. Idempotent.
 * @category OpenTelemetry
 */
export type Uninstrument = () => void;

/** Bucket bounds in seconds for the wait and hold histograms: 1 ms to 5 min. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * Every instrumented client that reports to a meter provider: one waiters callback per provider sums
 * them, since two callbacks observing the same attributes would overwrite each other.
 */
const waiterSources = new WeakMap<
  MeterProvider,
  { clients: Set<{ client: InstrumentableClient }>; stop: () => void }
>();

/** Observes the waiters of `client` through `provider`'s `ioredisson.lock.waiters`; returns the undo. */
function observeWaiters(provider: MeterProvider, client: InstrumentableClient): () => void {
  let source = waiterSources.get(provider);
  if (!source) {
    const clients = new Set<{ client: InstrumentableClient }>();
    const waiters = provider
      .getMeter(INSTRUMENTATION_NAME, version)
      .createObservableUpDownCounter('ioredisson.lock.waiters', {
        description: 'Acquisitions parked on a channel, waiting for a release message.',
        unit: '{waiter}',
      });
    const callback = (result: ObservableResult): void => {
      let sum = 0;
      for (const { client } of clients) sum += client.diagnostics().waiters;
      result.observe(sum);
    };
    waiters.addCallback(callback);
    source = { clients, stop: () => waiters.removeCallback(callback) };
    waiterSources.set(provider, source);
  }
  const { clients, stop } = source;
  // One entry per call: a client instrumented twice counts twice, as its other instruments do.
  const entry = { client };
  clients.add(entry);
  return () => {
    clients.delete(entry);
    if (clients.size > 0) return;
    stop();
    waiterSources.delete(provider);
  };
}

/**
 * Reports a client's locks, semaphores and latches to OpenTelemetry, from its events (every kind):
 *
 * | instrument | type, unit | attributes |
 * |---|---|---|
 * | `ioredisson.lock.wait.duration` | histogram, `s` | kind, outcome |
 * | `ioredisson.lock.hold.duration` | histogram, `s` | kind |
 * | `ioredisson.lock.attempts` | counter, `{attempt}` | kind, outcome |
 * | `ioredisson.lock.timeouts` | counter, `{timeout}` | kind |
 * | `ioredisson.lock.lost_holds` | counter, `{hold}` | kind |
 * | `ioredisson.lock.waiters` | observable up-down counter, `{waiter}` | none |
 *
 * and a span `acquire <kind>` per acquisition, ended when it ends, started `waitMs` before. Attributes:
 * `ioredisson.lock.kind`, `ioredisson.lock.outcome` (`acquired` or the failure's reason), and with
 * {@link InstrumentOptions.lockNameAttribute} `ioredisson.lock.name`.
 * @param redisson The client to instrument.
 * @returns A function that removes the listeners and the waiters callback.
 * @example
 * ```ts
 * import { instrument } from 'ioredisson/otel';
 *
 * const uninstrument = instrument(redisson, { meterProvider, tracerProvider });
 * // at shutdown:
 * uninstrument();
 * ```
 * @category OpenTelemetry
 */
export function instrument(redisson: InstrumentableClient, options: InstrumentOptions = {}): Uninstrument {
  const meterProvider = options.meterProvider ?? metrics.getMeterProvider();
  const meter = meterProvider.getMeter(INSTRUMENTATION_NAME, version);
  const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(INSTRUMENTATION_NAME, version);
  const advice = { explicitBucketBoundaries: DURATION_BUCKETS };
  const wait = meter.createHistogram('ioredisson.lock.wait.duration', {
    description: 'Time from an acquire call to its outcome.',
    unit: 's',
    advice,
  });
  const hold = meter.createHistogram('ioredisson.lock.hold.duration', {
    description: 'Time from an acquisition to the release of that hold.',
    unit: 's',
    advice,
  });
  const attempts = meter.createCounter('ioredisson.lock.attempts', {
    description: 'Acquire attempts sent.',
    unit: '{attempt}',
  });
  const timeouts = meter.createCounter('ioredisson.lock.timeouts', {
    description: 'Acquisitions whose wait ran out.',
    unit: '{timeout}',
  });
  const lost = meter.createCounter('ioredisson.lock.lost_holds', {
    description: 'Holds lost while held (lease gone, term ended, composite below its members).',
    unit: '{hold}',
  });

  const attributesOf = (event: { kind: string; name: string }, outcome?: string): Attributes => {
    const attributes: Attributes = { 'ioredisson.lock.kind': event.kind };
    if (outcome !== undefined) attributes['ioredisson.lock.outcome'] = outcome;
    if (options.lockNameAttribute) attributes['ioredisson.lock.name'] = event.name;
    return attributes;
  };

  /** Records an acquisition's outcome: its wait, its attempts and its span. */
  const ended = (event: RedissonEvents['acquired'], outcome: string, failed: boolean): void => {
    const attributes = attributesOf(event, outcome);
    wait.record(event.waitMs / 1_000, attributes);
    attempts.add(event.attempts, attributes);
    const now = performance.timeOrigin + performance.now();
    const span = tracer.startSpan(`acquire ${event.kind}`, {
      kind: SpanKind.INTERNAL,
      startTime: now - event.waitMs,
      attributes: {
        ...attributes,
        'ioredisson.lock.attempts': event.attempts,
        'ioredisson.lock.wake_ups': event.wakeUps,
      },
    });
    if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
    span.end(now);
  };

  const onAcquired = (event: RedissonEvents['acquired']): void => ended(event, 'acquired', false);
  const onAcquireFailed = (event: RedissonEvents['acquireFailed']): void => {
    ended(
      event,
      event.reason,
      event.reason === 'unavailable' || event.reason === 'deadlock' || event.reason === 'error',
    );
    if (event.reason === 'timeout') timeouts.add(1, attributesOf(event));
  };
  const onReleased = (event: RedissonEvents['released']): void => {
    if (event.heldMs !== undefined) hold.record(event.heldMs / 1_000, attributesOf(event));
  };
  const onHoldLost = (event: RedissonEvents['holdLost']): void => lost.add(1, attributesOf(event));

  redisson.on('acquired', onAcquired);
  redisson.on('acquireFailed', onAcquireFailed);
  redisson.on('released', onReleased);
  redisson.on('holdLost', onHoldLost);
  const unobserve = observeWaiters(meterProvider, redisson);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    redisson.off('acquired', onAcquired);
    redisson.off('acquireFailed', onAcquireFailed);
    redisson.off('released', onReleased);
    redisson.off('holdLost', onHoldLost);
    unobserve();
  };
}

import { context, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { instrument } from '../lib/otel';
import { delay, useRedis } from './helpers/fixture';
import { eventually } from './helpers/redis-server';

const { client } = useRedis();

/** The real SDK with in-memory exporters: metrics exported on demand (`read()`), spans as they end. */
function telemetry(): {
  meterProvider: MeterProvider;
  tracerProvider: BasicTracerProvider;
  read: () => Promise<MetricData[]>;
  spans: () => ReadableSpan[];
  stop: () => Promise<void>;
} {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: figures are exported only when the test flushes.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  return {
    meterProvider,
    tracerProvider,
    read: async () => {
      metricExporter.reset();
      await reader.forceFlush();
      return metricExporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    },
    spans: () => spanExporter.getFinishedSpans(),
    stop: async () => {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

/** The data points of the metric named `name`, with their attributes as given. */
function points(metrics: MetricData[], name: string): DataPoint<unknown>[] {
  return metrics
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
}

/** The point of `name` whose attributes are exactly `attributes`, or undefined. */
function point<T>(metrics: MetricData[], name: string, attributes: Attributes): T | undefined {
  const found = points(metrics, name).find(
    (p) => JSON.stringify(sorted(p.attributes)) === JSON.stringify(sorted(attributes)),
  );
  return found?.value as T | undefined;
}

const sorted = (attributes: Attributes): [string, unknown][] =>
  Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b));

const LOCK = { 'ioredisson.lock.kind': 'lock' };
const FAIR = { 'ioredisson.lock.kind': 'fair-lock' };

describe('ioredisson/otel', () => {
  it('a scripted run (a wait, holds, a time-out, a lost lease) comes out as metrics and spans', async () => {
    const otel = telemetry();
    const redisson = client({ lockWatchdogTimeout: 600 });
    const other = client();
    const uninstrument = instrument(redisson, {
      meterProvider: otel.meterProvider,
      tracerProvider: otel.tracerProvider,
    });
    try {
      // A wait: `other` holds, the instrumented client parks, then is woken by the release.
      const held = await other.getLock('otel:busy').acquire({ leaseTime: 30_000 });
      const waiting = redisson.getLock('otel:busy').acquire({ waitTime: 20_000 });
      await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'a parked waiter');
      expect(point<number>(await otel.read(), 'ioredisson.lock.waiters', {})).toBe(1);
      await delay(200);
      await held.release();
      const handle = await waiting;
      await delay(150);
      await handle.release();
      // A time-out on a fair lock.
      await other.getFairLock('otel:taken').lock({ leaseTime: 30_000 });
      expect(await redisson.getFairLock('otel:taken').tryLock({ waitTime: 100 })).toBe(false);
      // A lost lease: the key deleted under a watchdog hold.
      const doomed = await redisson.getLock('otel:lost').acquire();
      await other.getLock('otel:lost').forceUnlock();
      await eventually(() => doomed.signal.aborted, 5_000, 'the renewal to find the lock gone');

      const metrics = await otel.read();
      const acquired = { ...LOCK, 'ioredisson.lock.outcome': 'acquired' };
      const timedOut = { ...FAIR, 'ioredisson.lock.outcome': 'timeout' };
      // Only the instrumented client's acquisitions: otel:busy and otel:lost (other's are not counted).
      const waits = point<Histogram>(metrics, 'ioredisson.lock.wait.duration', acquired)!;
      expect(waits.count).toBe(2);
      expect(waits.max).toBeGreaterThanOrEqual(0.2);
      expect(waits.max).toBeLessThan(10);
      const timeoutWait = point<Histogram>(metrics, 'ioredisson.lock.wait.duration', timedOut)!;
      expect(timeoutWait.count).toBe(1);
      expect(timeoutWait.min).toBeGreaterThanOrEqual(0.09);
      const holds = point<Histogram>(metrics, 'ioredisson.lock.hold.duration', LOCK)!;
      expect(holds.count).toBe(1);
      expect(holds.min).toBeGreaterThanOrEqual(0.14);
      expect(holds.max).toBeLessThan(10);
      expect(point<number>(metrics, 'ioredisson.lock.attempts', acquired)).toBeGreaterThanOrEqual(3); // >= 2 + 1
      expect(point<number>(metrics, 'ioredisson.lock.attempts', timedOut)).toBeGreaterThanOrEqual(1);
      expect(point<number>(metrics, 'ioredisson.lock.timeouts', FAIR)).toBe(1);
      expect(points(metrics, 'ioredisson.lock.timeouts')).toHaveLength(1);
      expect(point<number>(metrics, 'ioredisson.lock.lost_holds', LOCK)).toBe(1);
      expect(point<number>(metrics, 'ioredisson.lock.waiters', {})).toBe(0);
      // Units and no lock name by default.
      const units = Object.fromEntries(metrics.map((metric) => [metric.descriptor.name, metric.descriptor.unit]));
      expect(units).toEqual({
        'ioredisson.lock.wait.duration': 's',
        'ioredisson.lock.hold.duration': 's',
        'ioredisson.lock.attempts': '{attempt}',
        'ioredisson.lock.timeouts': '{timeout}',
        'ioredisson.lock.lost_holds': '{hold}',
        'ioredisson.lock.waiters': '{waiter}',
      });
      for (const metric of metrics)
        for (const p of metric.dataPoints) expect(p.attributes).not.toHaveProperty('ioredisson.lock.name');

      // A span per acquisition, started when the call was made.
      const spans = otel.spans().map((span) => ({
        name: span.name,
        attributes: span.attributes,
        ms: span.duration[0] * 1_000 + span.duration[1] / 1e6,
        status: span.status.code,
      }));
      expect(spans.map((s) => `${s.name} ${String(s.attributes['ioredisson.lock.outcome'])}`)).toEqual([
        'acquire lock acquired',
        'acquire fair-lock timeout',
        'acquire lock acquired',
      ]);
      const [woken, timeout] = spans;
      expect(woken!.ms).toBeGreaterThanOrEqual(200);
      expect(woken!.attributes).toMatchObject({ ...acquired, 'ioredisson.lock.wake_ups': 1 });
      expect(woken!.attributes['ioredisson.lock.attempts']).toBeGreaterThanOrEqual(2);
      expect(timeout!.ms).toBeGreaterThanOrEqual(90);
      expect(timeout!.status).toBe(0); // a time-out is an outcome, not an error: UNSET
      for (const span of spans) expect(span.attributes).not.toHaveProperty('ioredisson.lock.name');
    } finally {
      uninstrument();
      await otel.stop();
    }
  });

  it("puts an acquisition's span under the caller's active span, also when a release message woke it", async () => {
    const otel = telemetry();
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const redisson = client();
    const other = client();
    const uninstrument = instrument(redisson, { tracerProvider: otel.tracerProvider });
    try {
      const tracer = otel.tracerProvider.getTracer('spec');
      const held = await other.getLock('otel:parent').acquire({ leaseTime: 30_000 });
      const request = tracer.startActiveSpan('request', async (span) => {
        await (await redisson.getLock('otel:parent').acquire({ waitTime: 20_000 })).release();
        span.end();
        return span.spanContext().spanId;
      });
      await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'a parked waiter');
      await held.release();
      const parentId = await request;
      const acquire = otel.spans().find((span) => span.name === 'acquire lock')!;
      expect(acquire.attributes['ioredisson.lock.wake_ups']).toBe(1);
      expect(acquire.parentSpanContext?.spanId).toBe(parentId);
    } finally {
      uninstrument();
      context.disable();
      await otel.stop();
    }
  });

  it('names the lock only when asked (lockNameAttribute)', async () => {
    const otel = telemetry();
    const redisson = client();
    const uninstrument = instrument(redisson, {
      meterProvider: otel.meterProvider,
      tracerProvider: otel.tracerProvider,
      lockNameAttribute: true,
    });
    try {
      await redisson.getSpinLock('otel:named').using(() => delay(20));
      const metrics = await otel.read();
      const named = { 'ioredisson.lock.kind': 'spin-lock', 'ioredisson.lock.name': 'otel:named' };
      expect(
        point<Histogram>(metrics, 'ioredisson.lock.wait.duration', { ...named, 'ioredisson.lock.outcome': 'acquired' })
          ?.count,
      ).toBe(1);
      expect(point<Histogram>(metrics, 'ioredisson.lock.hold.duration', named)?.count).toBe(1);
      expect(otel.spans().map((span) => span.attributes['ioredisson.lock.name'])).toEqual(['otel:named']);
    } finally {
      uninstrument();
      await otel.stop();
    }
  });

  it('uninstrument() stops it: no more figures, spans or waiters, and a second call does nothing', async () => {
    const otel = telemetry();
    const redisson = client();
    const other = client();
    const uninstrument = instrument(redisson, {
      meterProvider: otel.meterProvider,
      tracerProvider: otel.tracerProvider,
    });
    try {
      await redisson.getLock('otel:before').using(() => undefined);
      const before = await otel.read();
      expect(
        point<number>(before, 'ioredisson.lock.attempts', { ...LOCK, 'ioredisson.lock.outcome': 'acquired' }),
      ).toBe(1);
      uninstrument();
      uninstrument();
      await redisson.getLock('otel:after').using(() => undefined);
      expect(await redisson.getLock('otel:after').tryLock({ waitTime: 0, leaseTime: 1_000 })).toBe(true);
      await redisson.getLock('otel:after').unlock();
      // A parked waiter no longer observed.
      const held = await other.getLock('otel:parked').acquire({ leaseTime: 30_000 });
      const waiting = redisson.getLock('otel:parked').acquire({ waitTime: 20_000 });
      await eventually(() => redisson.diagnostics().waiters === 1, 10_000, 'a parked waiter');
      const after = await otel.read();
      expect(point<number>(after, 'ioredisson.lock.attempts', { ...LOCK, 'ioredisson.lock.outcome': 'acquired' })).toBe(
        1,
      );
      expect(point<Histogram>(after, 'ioredisson.lock.hold.duration', LOCK)?.count).toBe(1);
      expect(point<number>(after, 'ioredisson.lock.waiters', {})).not.toBe(1);
      expect(otel.spans()).toHaveLength(1);
      await held.release();
      await (await waiting).release();
    } finally {
      uninstrument();
      await otel.stop();
    }
  });

  it('sums the waiters of every client instrumented on one meter provider', async () => {
    const otel = telemetry();
    const [a, b, holder] = [client(), client(), client()];
    const stops = [a, b].map((redisson) => instrument(redisson, { meterProvider: otel.meterProvider }));
    try {
      const held = await holder
        .getMultiLock(holder.getLock('otel:a'), holder.getLock('otel:b'))
        .acquire({ leaseTime: 30_000 });
      const waits = [a, b].map((redisson, i) =>
        redisson.getLock(i === 0 ? 'otel:a' : 'otel:b').acquire({ waitTime: 20_000 }),
      );
      await eventually(
        () => a.diagnostics().waiters === 1 && b.diagnostics().waiters === 1,
        10_000,
        'two parked waiters',
      );
      expect(point<number>(await otel.read(), 'ioredisson.lock.waiters', {})).toBe(2);
      stops[0]!();
      expect(point<number>(await otel.read(), 'ioredisson.lock.waiters', {})).toBe(1);
      await held.release();
      for (const waiting of waits) await (await waiting).release();
    } finally {
      for (const stop of stops) stop();
      await otel.stop();
    }
  });
});

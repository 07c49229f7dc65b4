import * as grpc from '@grpc/grpc-js';
import { isAfter, toEvent, type Position } from './convert';
import { FencekeeperError } from './errors';
import { abortReason, sleep, type Nodes } from './transport';
import type { LeaseEvent, WatchOptions } from './types';
import type { WireResponse } from './wire';

const INT32_MAX = 2147483647;

/** Answers that end a watch for good: retrying cannot change them. */
const FINAL = new Set<string>(['COMPACTED', 'INVALID_ARGUMENT', 'PERMISSION_DENIED', 'INTERNAL']);

/**
 * Lease events on a resource (or every resource under a prefix), in commit order, as they commit:
 * `for await (const event of watch)`. The stream follows the cluster through leader changes and
 * restarts, resuming after the last event it delivered, so nothing is skipped or repeated. It ends
 * when `close()` is called, or with a COMPACTED FencekeeperError when the events after its position are
 * no longer kept (re-read the state and watch again from now).
 */
export class Watch implements AsyncIterable<LeaseEvent> {
  private readonly queue: LeaseEvent[] = [];
  private waiter: { resolve: () => void } | undefined;
  private failure: unknown;
  private done = false;
  private call: grpc.ClientReadableStream<WireResponse> | undefined;
  private position: Position;

  /** @internal */
  constructor(
    private readonly nodes: Nodes,
    private readonly name: string,
    private readonly options: WatchOptions,
  ) {
    this.position = { index: options.afterIndex ?? 0, seq: options.afterSeq ?? 0 };
    const signal = options.signal;
    if (signal?.aborted) {
      this.failure = abortReason(signal);
      this.done = true;
      return;
    }
    signal?.addEventListener('abort', () => {
      if (!this.done) {
        this.failure = abortReason(signal);
        this.close();
      }
    }, { once: true });
    void this.start(options.afterIndex === undefined);
  }

  /** The position of the last event delivered (or the starting one): resume a later watch from here. */
  get after(): Position {
    return { ...this.position };
  }

  close(): void {
    this.done = true;
    this.call?.cancel();
    this.wake();
  }

  /** `using watch = client.watch(...)` / `await using`: closes the watch at the end of the block. */
  [Symbol.asyncDispose](): Promise<void> {
    this.close();
    return Promise.resolve();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LeaseEvent> {
    try {
      for (;;) {
        const next = this.queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (this.failure !== undefined) {
          throw this.failure;
        }
        if (this.done) {
          return;
        }
        await new Promise<void>((resolve) => {
          this.waiter = { resolve };
        });
      }
    } finally {
      this.close();
    }
  }

  private wake(): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.resolve();
  }

  /** From now on: after what the cluster has applied when the watch starts. */
  private async start(fromNow: boolean): Promise<void> {
    if (fromNow) {
      try {
        const status = await this.nodes.call('NodeStatus', {});
        this.position = { index: Number(status.node?.lastAppliedIndex ?? 0), seq: INT32_MAX };
      } catch (e) {
        if (this.done) {
          return; // closed or aborted meanwhile: that is how it ended
        }
        this.failure = e instanceof FencekeeperError ? e : new FencekeeperError('UNAVAILABLE', String(e), {}, { cause: e });
        this.done = true;
        this.wake();
        return;
      }
    }
    await this.run();
  }

  private async run(): Promise<void> {
    for (let failures = 0; !this.done; ) {
      const address = this.nodes.target();
      const outcome = await this.stream(address);
      if (outcome === 'answered') {
        failures = 0;
      } else {
        failures++;
      }
      if (!this.done) {
        await sleep(outcome === 'redirected' ? 0 : Math.min(50 * 2 ** Math.min(failures, 4), 1000));
      }
    }
  }

  /** One stream from one node, until it ends; says how it went. */
  private stream(address: string): Promise<'answered' | 'redirected' | 'failed'> {
    return new Promise((resolve) => {
      let answered = false;
      const request = {
        resource: this.options.prefix ? '' : this.name,
        prefix: this.options.prefix ? this.name : '',
        afterIndex: String(this.position.index),
        afterSeq: this.position.seq,
      };
      const call = this.nodes.stub(address).Watch(request, new grpc.Metadata());
      this.call = call;
      let settled = false;
      const settle = (how: 'answered' | 'redirected' | 'failed'): void => {
        if (!settled) {
          settled = true;
          this.call = undefined;
          resolve(how);
        }
      };
      call.on('data', (response: WireResponse) => {
        if (response.code === 'NOT_LEADER') {
          this.nodes.redirected(address, response.leaderAddress);
          call.cancel();
          settle('redirected');
          return;
        }
        if (response.code === 'OVERLOADED') {
          call.cancel();
          settle('failed');
          return;
        }
        if (FINAL.has(response.code)) {
          this.failure = FencekeeperError.fromResponse(response);
          this.done = true;
          call.cancel();
          this.wake();
          settle('answered');
          return;
        }
        answered = true;
        for (const wire of response.events) {
          const event = toEvent(wire);
          if (isAfter(event, this.position)) {
            this.position = { index: event.index, seq: event.seq };
            this.queue.push(event);
          }
        }
        this.wake();
      });
      call.on('error', () => settle(answered ? 'answered' : 'failed'));
      call.on('end', () => settle(answered ? 'answered' : 'failed'));
    });
  }
}

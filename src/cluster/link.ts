import { hearCommit, relayCommits } from '../db/change-signal.js';
import {
  isOurs,
  type FromPrimary,
  type FromWorker,
  type MetricsAnswer,
  type RateAnswer,
} from './messages.js';

type Question = Extract<FromWorker, { id: number }>;
/** A question before it is numbered. */
type Unnumbered = Question extends infer Q ? (Q extends Question ? Omit<Q, 'id'> : never) : never;
type Answer = RateAnswer | MetricsAnswer;

/** How long a worker waits for the primary to answer before it gives up on the question. */
const ANSWER_TIMEOUT_MS = 5_000;

/**
 * A worker's line to its primary: questions answered by id (rate-limit windows, the server's
 * metrics), commits relayed both ways (SQLite), and the primary's request to stop.
 */
export class PrimaryLink {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (a: Answer) => void; timer: NodeJS.Timeout }>();
  private onStop: (drain: boolean) => void = () => undefined;

  constructor(options: { relayCommits: boolean }) {
    process.on('message', (message: unknown) => {
      if (isOurs(message)) this.heard(message as FromPrimary);
    });
    if (options.relayCommits)
      relayCommits((productionId, revision) => this.send({ prodgraph: 'commit', productionId, revision }));
  }

  /** Tells the primary this worker serves. */
  ready(): void {
    this.send({ prodgraph: 'ready' });
  }

  /** What to do when the primary asks this worker to stop (drain: as on SIGTERM, serving a while first). */
  whenStopped(stop: (drain: boolean) => void): void {
    this.onStop = stop;
  }

  ask<A extends Answer>(question: Unnumbered): Promise<A> {
    const id = this.nextId++;
    return new Promise<A>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the primary process did not answer (${question.prodgraph})`));
      }, ANSWER_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(id, { resolve: resolve as (a: Answer) => void, timer });
      this.send({ ...question, id });
    });
  }

  private send(message: FromWorker): void {
    // a worker whose primary is gone is being torn down anyway: nothing to tell
    if (process.connected) process.send?.(message);
  }

  private heard(message: FromPrimary): void {
    switch (message.prodgraph) {
      case 'commit':
        hearCommit(message.productionId, message.revision);
        return;
      case 'stop':
        this.onStop(message.drain);
        return;
      default: {
        const asked = this.waiting.get(message.id);
        if (!asked) return;
        this.waiting.delete(message.id);
        clearTimeout(asked.timer);
        asked.resolve(message);
      }
    }
  }
}

/*
 * What the primary and its workers say to each other over the cluster's IPC channel. Every
 * message carries `prodgraph` so it is never mistaken for Node's own or prom-client's. A
 * question carries an id, and its answer the same id.
 */

/** A worker has built its app and listens: the primary starts counting it as serving. */
export interface Ready {
  prodgraph: 'ready';
}

/** A rate-limit window counted once for the whole server (RateWindows). */
export interface RateAsk {
  prodgraph: 'rate';
  id: number;
  key: string;
  windowMs: number;
  /** false: read the window without counting this request. */
  increment: boolean;
}

export interface RateAnswer {
  prodgraph: 'rate';
  id: number;
  current: number;
  ttl: number;
}

/** A production's changes committed in one worker: the others wake their waiting readers (SQLite only). */
export interface Commit {
  prodgraph: 'commit';
  productionId: number;
  revision: number;
}

/** A worker's GET /metrics asks for the whole server's metrics, summed over the workers. */
export interface MetricsAsk {
  prodgraph: 'metrics';
  id: number;
}

export interface MetricsAnswer {
  prodgraph: 'metrics';
  id: number;
  text?: string;
  error?: string;
}

/** The primary asks a worker to finish its in-flight requests and exit (drain: first serve a while, as on SIGTERM). */
export interface Stop {
  prodgraph: 'stop';
  drain: boolean;
}

export type FromWorker = Ready | RateAsk | Commit | MetricsAsk;
export type FromPrimary = RateAnswer | Commit | MetricsAnswer | Stop;

export const isOurs = (message: unknown): message is { prodgraph: string } =>
  typeof message === 'object' && message !== null && 'prodgraph' in message;
